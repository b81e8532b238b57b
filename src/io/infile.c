#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/infile.h"

/* The one wording of each kind of path that is not a readable file. */
static bool
not_regular(const char *path, mode_t mode, struct plan_error *err)
{
	if (S_ISDIR(mode))
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "is a directory");
	return plan_error_set(err, PLAN_ERR_IO, path, 0, 0,
			      "not a regular file (a FIFO, device or socket)");
}

bool
infile_check(const char *path, struct plan_error *err)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "no such file");
	if (!S_ISREG(st.st_mode))
		return not_regular(path, st.st_mode, err);
	return true;
}

bool
infile_open(const char *path, long max_bytes, FILE **out, struct plan_error *err)
{
	/* O_NONBLOCK: opening a FIFO would otherwise wait for a writer. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *f;

	*out = NULL;
	if (fd < 0)
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) != 0) {
		int e = errno;

		close(fd);
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot open: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return not_regular(path, st.st_mode, err);
	}
	if (st.st_size > max_bytes) {
		close(fd);
		return plan_error_set(err, PLAN_ERR_INPUT, path, 0, 0, "larger than %ld MiB", max_bytes >> 20);
	}
	f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return plan_error_set(err, PLAN_ERR_NOMEM, path, 0, 0, "out of memory");
	}
	*out = f;
	return true;
}

bool
infile_read(const char *path, long max_bytes, char **text, size_t *len, struct plan_error *err)
{
	size_t cap = 4096, n = 0;
	char *buf = NULL;
	FILE *f;

	*text = NULL;
	*len = 0;
	if (!infile_open(path, max_bytes, &f, err))
		return false;
	/* Grow as read, not by st_size: the file may change after fstat. */
	for (;;) {
		if (!buf || n + 1 >= cap) {
			char *grown = realloc(buf, cap *= 2);

			if (!grown) {
				free(buf);
				fclose(f);
				return plan_error_set(err, PLAN_ERR_NOMEM, path, 0, 0, "out of memory");
			}
			buf = grown;
		}
		n += fread(buf + n, 1, cap - n - 1, f);
		if (n > (size_t)max_bytes || feof(f) || ferror(f))
			break;
	}
	if (ferror(f) || n > (size_t)max_bytes) {
		bool big = !ferror(f);

		fclose(f);
		free(buf);
		return big ? plan_error_set(err, PLAN_ERR_INPUT, path, 0, 0, "larger than %ld MiB", max_bytes >> 20)
			   : plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "read error");
	}
	fclose(f);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return true;
}
