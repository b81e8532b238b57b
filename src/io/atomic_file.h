#pragma once
/*
 * Atomic replacement of an output file: every file a command writes goes
 * through a temporary file in its target's folder, written, flushed,
 * fsync'ed, given the mode of the file it replaces, and renamed over it.
 * A symbolic link is followed: its final target is replaced, the link
 * kept. SIGINT, SIGTERM and SIGHUP remove the temporary files still open
 * (and stop a registered child first), then end the process as the
 * signal would have.
 */
#include <stdbool.h>
#include <sys/types.h>

#include "plan/error.h"

#define ATOMIC_PATH_MAX 4096

/** One output being written; filled by atomic_file_open. */
struct atomic_file {
	char target[ATOMIC_PATH_MAX]; /**< the file replaced: @path with its links followed */
	char tmp[ATOMIC_PATH_MAX];    /**< the temporary file beside it */
	int fd;                       /**< open on @tmp, or -1 once closed */
	int slot;                     /**< its entry in the signal handler's list, or -1 */
	mode_t mode;                  /**< the mode the file will have */
};

/**
 * Resolve @path's symbolic links (a dangling link names the file it would
 * create), refuse anything but a regular file or none, and create the
 * temporary file in the target's folder, registered for the signal
 * handler. On failure nothing is left behind.
 */
bool atomic_file_open(struct atomic_file *a, const char *path, struct plan_error *err);

/** Write @len bytes of @data to the temporary file. */
bool atomic_file_write(struct atomic_file *a, const void *data, size_t len, struct plan_error *err);

/** fsync, set the mode and close the temporary file (gnuplot may then write it by name). */
bool atomic_file_close(struct atomic_file *a, struct plan_error *err);

/**
 * Close if need be, rename the temporary file over the target and fsync
 * the target's folder (atomic_sync_dir). A failed folder sync is an error
 * although the file was already replaced: the message says so.
 */
bool atomic_file_commit(struct atomic_file *a, struct plan_error *err);

/**
 * fsync the folder that holds @path (the current one when @path names no
 * folder), so that a rename into it survives a crash. A folder that may
 * not be read (EACCES) or a file system that does not sync folders
 * (EINVAL, EROFS) is not an error.
 */
bool atomic_sync_dir(const char *path, struct plan_error *err);

/** Remove the temporary file (if any) and unregister it; the target is untouched. */
void atomic_file_abort(struct atomic_file *a);

/**
 * Register @pid (0: none) as a child that the signal handler stops
 * (SIGTERM, then waits for it) before it removes the temporary files, so
 * that the child cannot recreate one.
 */
void atomic_file_child(pid_t pid);

/**
 * Write @n files all or none: every temporary file is written and synced
 * before the first rename. If a rename fails after others succeeded
 * (the folder removed or made read-only meanwhile), the files already
 * renamed stay replaced and the error says which were not; rename(2)
 * cannot undo that.
 */
bool atomic_write_files(const char *const *paths, const char *const *texts, int n, struct plan_error *err);

/**
 * Whether @a and @b name one file: the same inode when both exist, else
 * the same absolute path once links are followed and "." and ".." folded.
 */
bool atomic_same_file(const char *a, const char *b);
