/* Opening input files: regular files only, never blocking, never unbounded. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "plan/error.h"

/** Largest YAML profile or study file read (bytes). */
#define INFILE_MAX_YAML (4L << 20)
/** Largest validation CSV read (bytes). */
#define INFILE_MAX_CSV (64L << 20)
/** Largest shard JSON file that sweep --merge reads (bytes). */
#define INFILE_MAX_JSON (1L << 30)

/**
 * Check that @path names a regular file without opening it: a missing
 * path ("no such file"), a directory ("is a directory"), a FIFO, device
 * or socket ("not a regular file") are PLAN_ERR_IO errors naming @path.
 */
bool infile_check(const char *path, struct plan_error *err);

/**
 * Open @path for reading: read-only and non-blocking (a FIFO never
 * waits for a writer), then fstat: anything but a regular file is a
 * PLAN_ERR_IO error as for infile_check(), and a file larger than
 * @max_bytes a PLAN_ERR_INPUT error. The stream is the caller's to fclose.
 */
bool infile_open(const char *path, long max_bytes, FILE **out, struct plan_error *err);

/**
 * Read all of @path (opened as infile_open() does) into a NUL-terminated
 * buffer @text of @len bytes, which the caller frees.
 */
bool infile_read(const char *path, long max_bytes, char **text, size_t *len, struct plan_error *err);
