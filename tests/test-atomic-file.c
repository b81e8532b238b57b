/*
 * Atomic output files (io/atomic_file.h, issue 28): the target replaced
 * whole or not at all, its mode kept, a symbolic link followed, several
 * files all or none, one file named twice recognised, and the signal
 * handler's cleanup: a process killed by SIGTERM while writing leaves no
 * temporary file and no child behind. The signal cases fork a child that
 * raises the signal itself, so nothing depends on timing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "testutil.h"

static char dir[256];

static void
setup(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test-atomic-XXXXXX", t && *t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Remove the folder's files (none of the tests makes a subfolder), then the folder. */
static void
teardown(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[600];

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

static int
entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int count = 0;

	while (d && (e = readdir(d)))
		count += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return count;
}

static const char *
in_dir(const char *name)
{
	static char p[4][600];
	static int next;

	next = (next + 1) % 4;
	snprintf(p[next], sizeof(p[next]), "%s/%s", dir, name);
	return p[next];
}

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static bool
holds(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t len;

	if (!f)
		return false;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	fclose(f);
	return strcmp(buf, text) == 0;
}

static bool
write_one(const char *path, const char *text)
{
	struct plan_error err;

	plan_error_clear(&err);
	return atomic_write_files(&path, &text, 1, &err);
}

START_TEST(test_new_and_mode)
{
	mode_t mask = umask(022);
	const char *p = in_dir("new.yaml");
	struct stat st;

	ck_assert(write_one(p, "one\n"));
	ck_assert(holds(p, "one\n"));
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	chmod(p, 0600);
	ck_assert(write_one(p, "two\n"));
	ck_assert(holds(p, "two\n"));
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(entries(), 1);
	umask(mask);
}
END_TEST

START_TEST(test_symlink)
{
	struct stat st;

	put(in_dir("target.yaml"), "old\n");
	ck_assert_int_eq(symlink("target.yaml", in_dir("link.yaml")), 0);
	ck_assert(write_one(in_dir("link.yaml"), "new\n"));
	ck_assert_int_eq(lstat(in_dir("link.yaml"), &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert(holds(in_dir("target.yaml"), "new\n"));
	/* A dangling link creates the file it names. */
	ck_assert_int_eq(symlink("later.yaml", in_dir("dangling.yaml")), 0);
	ck_assert(write_one(in_dir("dangling.yaml"), "made\n"));
	ck_assert(holds(in_dir("later.yaml"), "made\n"));
	ck_assert_int_eq(lstat(in_dir("dangling.yaml"), &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(entries(), 4);
}
END_TEST

START_TEST(test_refused)
{
	struct plan_error err;
	const char *path = in_dir("fifo");
	const char *text = "x";

	ck_assert_int_eq(mkfifo(path, 0600), 0);
	plan_error_clear(&err);
	ck_assert(!atomic_write_files(&path, &text, 1, &err));
	ck_assert_str_eq(err.message, "cannot write: not a regular file");
	path = dir;
	ck_assert(!atomic_write_files(&path, &text, 1, &err));
	ck_assert_str_eq(err.message, "cannot write: Is a directory");
	path = "";
	ck_assert(!atomic_write_files(&path, &text, 1, &err));
	ck_assert_str_eq(err.message, "cannot write: an empty file name");
	ck_assert_int_eq(entries(), 1);
}
END_TEST

/*
 * The folder sync after the rename: whether the blocks reach the disk no
 * test can see short of pulling the power, so this checks what can be
 * seen: the folder of every form of path is opened and synced, a missing
 * one is an error that names the file and says it was replaced.
 */
START_TEST(test_sync_dir)
{
	struct plan_error err;
	char cwd[4096];
	const char *p = in_dir("synced.yaml");

	plan_error_clear(&err);
	ck_assert(write_one(p, "one\n"));
	ck_assert(atomic_sync_dir(p, &err));
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert(atomic_sync_dir("synced.yaml", &err)); /* no folder: the current one */
	ck_assert(write_one("synced.yaml", "two\n"));
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert(holds(p, "two\n"));
	p = in_dir("gone/synced.yaml");
	ck_assert(!atomic_sync_dir(p, &err));
	ck_assert_str_eq(err.file, p);
	ck_assert_str_eq(err.message, "cannot sync the folder: No such file or directory "
				      "(the file was replaced, but a crash may undo it)");
	ck_assert_int_eq(entries(), 1);
}
END_TEST

/* The second file cannot be written: the first keeps its old text. */
START_TEST(test_all_or_none)
{
	struct plan_error err;
	const char *paths[2] = { in_dir("a.yaml"), in_dir("no/such/b.yaml") };
	const char *texts[2] = { "new a\n", "new b\n" };

	put(paths[0], "old a\n");
	plan_error_clear(&err);
	ck_assert(!atomic_write_files(paths, texts, 2, &err));
	ck_assert_str_eq(err.message, "cannot write: No such file or directory");
	ck_assert(holds(paths[0], "old a\n"));
	ck_assert_int_eq(entries(), 1);
	paths[1] = in_dir("b.yaml");
	ck_assert(atomic_write_files(paths, texts, 2, &err));
	ck_assert(holds(paths[0], "new a\n") && holds(paths[1], "new b\n"));
	ck_assert_int_eq(entries(), 2);
}
END_TEST

START_TEST(test_same_file)
{
	char a[600], b[600];

	put(in_dir("x.yaml"), "x\n");
	ck_assert_int_eq(symlink("x.yaml", in_dir("lx.yaml")), 0);
	ck_assert(atomic_same_file(in_dir("x.yaml"), in_dir("x.yaml")));
	ck_assert(atomic_same_file(in_dir("x.yaml"), in_dir("lx.yaml")));
	ck_assert(!atomic_same_file(in_dir("x.yaml"), in_dir("y.yaml")));
	/* Neither exists: the same absolute path once "." and ".." are folded. */
	snprintf(a, sizeof(a), "%s/new.yaml", dir);
	snprintf(b, sizeof(b), "%s/./sub/../new.yaml", dir);
	ck_assert(atomic_same_file(a, b));
	snprintf(b, sizeof(b), "%s/sub/new.yaml", dir);
	ck_assert(!atomic_same_file(a, b));
	/* A dangling link names the file it would create. */
	ck_assert_int_eq(symlink("new.yaml", in_dir("lnew.yaml")), 0);
	ck_assert(atomic_same_file(a, in_dir("lnew.yaml")));
}
END_TEST

/*
 * In a child: open the output, write half of it, start a grandchild that
 * waits for a signal (a gnuplot stand-in) and register it, then raise
 * SIGTERM. The handler must stop and reap the grandchild, remove the
 * temporary file, and end the child by SIGTERM.
 */
START_TEST(test_signal_cleanup)
{
	int fds[2], status;
	pid_t pid, gpid = 0;

	put(in_dir("out.yaml"), "old\n");
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct atomic_file f;
		int ready[2];
		char byte;
		pid_t g;

		close(fds[0]);
		if (pipe(ready) != 0)
			_exit(5);
		if (!atomic_file_open(&f, in_dir("out.yaml"), NULL) || !atomic_file_write(&f, "half", 4, NULL))
			_exit(2);
		g = fork();
		if (g == 0) {
			/* As after gnuplot's exec: the default action, then ready. */
			signal(SIGTERM, SIG_DFL);
			if (write(ready[1], "r", 1) != 1)
				_exit(6);
			for (;;)
				pause();
		}
		if (g < 0 || read(ready[0], &byte, 1) != 1)
			_exit(7);
		atomic_file_child(g);
		if (write(fds[1], &g, sizeof(g)) != (ssize_t)sizeof(g))
			_exit(3);
		raise(SIGTERM);
		_exit(4);
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &gpid, sizeof(gpid)), (ssize_t)sizeof(gpid));
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
	ck_assert(gpid > 0);
	ck_assert_msg(kill(gpid, 0) != 0 && errno == ESRCH, "the stand-in is still running");
	ck_assert(holds(in_dir("out.yaml"), "old\n"));
	ck_assert_int_eq(entries(), 1);
}
END_TEST

static Suite *
atomic_file_suite(void)
{
	Suite *s = suite_create("atomic-file");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_new_and_mode);
	tcase_add_test(tc, test_symlink);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_sync_dir);
	tcase_add_test(tc, test_all_or_none);
	tcase_add_test(tc, test_same_file);
	tcase_add_test(tc, test_signal_cleanup);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(atomic_file_suite)
