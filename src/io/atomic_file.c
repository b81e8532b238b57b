/*
 * Outputs are replaced, never rewritten in place: a reader (or a crash, or
 * Ctrl-C) sees the old file or the new one, never half of one. rename(2)
 * is atomic only within one file system, hence the temporary file in the
 * target's own folder; fsync before the rename, or a crash can leave the
 * new name on empty blocks (ext4's data=ordered notwithstanding), and
 * fsync the folder after it, or the rename itself may not survive one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/atomic_file.h"

/* Temporary files open at once: calibrate writes two, sweep one. */
#define SLOTS 8

static char slot_path[SLOTS][ATOMIC_PATH_MAX];
static volatile sig_atomic_t slot_used[SLOTS];
static volatile sig_atomic_t child_pid;
static const int handled[] = { SIGINT, SIGTERM, SIGHUP };
static bool installed;

/* Only async-signal-safe calls: kill, waitpid, unlink, signal, raise. */
static void
on_signal(int sig)
{
	pid_t pid = (pid_t)child_pid;

	if (pid > 0) {
		kill(pid, SIGTERM);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	for (int i = 0; i < SLOTS; i++)
		if (slot_used[i])
			unlink(slot_path[i]);
	signal(sig, SIG_DFL);
	raise(sig); /* delivered on return: the process ends as the signal says */
}

static void
handled_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		sigaddset(set, handled[i]);
}

/* Once per process; a signal ignored when we started (nohup) stays ignored. */
static void
install(void)
{
	struct sigaction sa, old;

	if (installed)
		return;
	installed = true;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	handled_set(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		if (sigaction(handled[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(handled[i], &sa, NULL);
}

void
atomic_file_child(pid_t pid)
{
	child_pid = pid;
}

/* Follow @path's symbolic links into @out; a dangling one gives the name it points to. */
static bool
resolve(const char *path, char *out, struct plan_error *err)
{
	char link[ATOMIC_PATH_MAX];
	struct stat st;

	if (snprintf(out, ATOMIC_PATH_MAX, "%s", path) >= ATOMIC_PATH_MAX)
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot write: path too long");
	for (int hops = 0; lstat(out, &st) == 0 && S_ISLNK(st.st_mode); hops++) {
		ssize_t len = hops < 40 ? readlink(out, link, sizeof(link) - 1) : -1;
		const char *slash = strrchr(out, '/');
		int dir = slash ? (int)(slash - out + 1) : 0;

		if (len < 0)
			return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot write: %s",
					      hops < 40 ? strerror(errno) : strerror(ELOOP));
		link[len] = '\0';
		if (link[0] == '/' || dir == 0) {
			memcpy(out, link, (size_t)len + 1);
		} else if ((size_t)dir + (size_t)len + 1 > ATOMIC_PATH_MAX) {
			return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot write: path too long");
		} else {
			memcpy(out + dir, link, (size_t)len + 1);
		}
	}
	return true;
}

bool
atomic_file_open(struct atomic_file *a, const char *path, struct plan_error *err)
{
	const char *slash;
	struct stat st;
	sigset_t block, old;
	int dir, e;
	mode_t mask;

	a->fd = -1;
	a->slot = -1;
	a->tmp[0] = '\0';
	if (!path[0])
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot write: an empty file name");
	if (!resolve(path, a->target, err))
		return false;
	/* The rename would replace whatever is there: a device such as
	 * /dev/full or /dev/stdout would become a plain file. */
	if (stat(a->target, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot write: %s",
					      S_ISDIR(st.st_mode) ? "Is a directory" : "not a regular file");
		a->mode = st.st_mode & 07777;
	} else {
		mask = umask(0);
		umask(mask);
		a->mode = 0666 & ~mask;
	}
	slash = strrchr(a->target, '/');
	dir = slash ? (int)(slash - a->target + 1) : 0;
	if (snprintf(a->tmp, sizeof(a->tmp), "%.*s.plan-cli-XXXXXX", dir, a->target) >= (int)sizeof(a->tmp))
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot write: path too long");
	install();
	/* No signal between creating the file and registering it. */
	handled_set(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	a->fd = mkstemp(a->tmp);
	e = errno;
	for (int i = 0; a->fd >= 0 && i < SLOTS; i++)
		if (!slot_used[i]) {
			memcpy(slot_path[i], a->tmp, sizeof(a->tmp));
			slot_used[i] = 1;
			a->slot = i;
			break;
		}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (a->fd < 0) {
		a->tmp[0] = '\0';
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot write: %s", strerror(e));
	}
	if (a->slot < 0) {
		atomic_file_abort(a);
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot write: too many outputs at once");
	}
	return true;
}

bool
atomic_file_write(struct atomic_file *a, const void *data, size_t len, struct plan_error *err)
{
	const char *p = data;

	while (len > 0) {
		ssize_t w = write(a->fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return plan_error_set(err, PLAN_ERR_IO, a->target, 0, 0, "cannot write: %s", strerror(errno));
		p += w;
		len -= (size_t)w;
	}
	return true;
}

bool
atomic_file_close(struct atomic_file *a, struct plan_error *err)
{
	int fd = a->fd;

	if (fd < 0)
		return true;
	a->fd = -1;
	if (fchmod(fd, a->mode) != 0 || fsync(fd) != 0) {
		int e = errno;

		close(fd);
		return plan_error_set(err, PLAN_ERR_IO, a->target, 0, 0, "cannot write: %s", strerror(e));
	}
	if (close(fd) != 0)
		return plan_error_set(err, PLAN_ERR_IO, a->target, 0, 0, "cannot write: %s", strerror(errno));
	return true;
}

static void
unregister(struct atomic_file *a)
{
	sigset_t block, old;

	if (a->slot < 0)
		return;
	handled_set(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	slot_used[a->slot] = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	a->slot = -1;
}

bool
atomic_sync_dir(const char *path, struct plan_error *err)
{
	char dir[ATOMIC_PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, e = 0;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	do
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	/* A folder we may write but not read cannot be opened to sync:
	 * the rename stands, as it does with any tool that does not sync. */
	if (fd < 0 && errno == EACCES)
		return true;
	if (fd < 0)
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0,
				      "cannot sync the folder: %s (the file was replaced, but a crash may undo it)",
				      strerror(errno));
	/* EINVAL, EROFS: the file system does not sync folders (fsync(2):
	 * "fd is bound to a special file ... which does not support
	 * synchronization"). */
	if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
		e = errno;
	close(fd);
	if (e)
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0,
				      "cannot sync the folder: %s (the file was replaced, but a crash may undo it)",
				      strerror(e));
	return true;
}

bool
atomic_file_commit(struct atomic_file *a, struct plan_error *err)
{
	if (!atomic_file_close(a, err))
		return false;
	if (rename(a->tmp, a->target) != 0)
		return plan_error_set(err, PLAN_ERR_IO, a->target, 0, 0, "cannot write: %s", strerror(errno));
	unregister(a);
	a->tmp[0] = '\0';
	/* The rename lives in the folder's blocks: until they reach the disk
	 * a crash can bring back the old file, or none (fsync(2): "Calling
	 * fsync() does not necessarily ensure that the entry in the directory
	 * containing the file has also reached disk. For that an explicit
	 * fsync() on a file descriptor for the directory is also needed."). */
	return atomic_sync_dir(a->target, err);
}

void
atomic_file_abort(struct atomic_file *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->tmp[0])
		unlink(a->tmp);
	a->tmp[0] = '\0';
	unregister(a);
}

bool
atomic_write_files(const char *const *paths, const char *const *texts, int n, struct plan_error *err)
{
	struct atomic_file *f = calloc((size_t)(n > 0 ? n : 1), sizeof(*f));
	int opened = 0, done = 0;
	bool ok = f != NULL;

	if (!f)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	for (; ok && opened < n; opened++) {
		ok = atomic_file_open(&f[opened], paths[opened], err);
		if (!ok)
			break;
		ok = atomic_file_write(&f[opened], texts[opened], strlen(texts[opened]), err) &&
		     atomic_file_close(&f[opened], err);
	}
	if (!ok && opened < n)
		opened++; /* the one that failed may hold a temporary file */
	for (; ok && done < n; done++)
		ok = atomic_file_commit(&f[done], err);
	if (!ok && err && done > 1) {
		char first[PLAN_ERROR_TEXT_LEN];

		snprintf(first, sizeof(first), "%s", err->message);
		plan_error_set(err, PLAN_ERR_IO, paths[done - 1], 0, 0,
			       "%s (%d of the %d files before it were already replaced)", first, done - 1, n);
	}
	for (int i = 0; i < opened && i < n; i++)
		atomic_file_abort(&f[i]);
	free(f);
	return ok;
}

/* @p made absolute, with "", "." and ".." components folded away. */
static void
normalize(const char *p, char *out, size_t size)
{
	char buf[2 * ATOMIC_PATH_MAX], *save, *tok;
	size_t len = 0;

	if (p[0] == '/' || !getcwd(buf, sizeof(buf) / 2))
		snprintf(buf, sizeof(buf), "%s", p);
	else
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%s", p);
	out[0] = '\0';
	for (tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			out[len] = '\0';
			continue;
		}
		len += (size_t)snprintf(out + len, size - len, "/%s", tok);
		if (len >= size)
			len = size - 1;
	}
	if (!out[0])
		snprintf(out, size, "/");
}

/* The folder's real path (when it exists) and the file's name; false if too long. */
static bool
canonical(const char *path, char *out, size_t size)
{
	char abs[ATOMIC_PATH_MAX], real[PATH_MAX];
	char *slash;

	normalize(path, abs, sizeof(abs));
	slash = strrchr(abs, '/');
	*slash = '\0';
	if (realpath(abs[0] ? abs : "/", real))
		return snprintf(out, size, "%s/%s", strcmp(real, "/") ? real : "", slash + 1) < (int)size;
	return snprintf(out, size, "%s/%s", abs, slash + 1) < (int)size;
}

bool
atomic_same_file(const char *a, const char *b)
{
	char ra[ATOMIC_PATH_MAX], rb[ATOMIC_PATH_MAX], ca[ATOMIC_PATH_MAX], cb[ATOMIC_PATH_MAX];
	struct stat sa, sb;

	if (!resolve(a, ra, NULL) || !resolve(b, rb, NULL))
		return strcmp(a, b) == 0;
	if (stat(ra, &sa) == 0 && stat(rb, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (!canonical(ra, ca, sizeof(ca)) || !canonical(rb, cb, sizeof(cb)))
		return strcmp(ra, rb) == 0;
	return strcmp(ca, cb) == 0;
}
