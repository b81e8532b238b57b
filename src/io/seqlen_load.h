/* Reading a sequence-length distribution (predict --seq-lengths). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "plan/error.h"
#include "plan/seqlen.h"

/**
 * Where --seq-lengths @arg points: a path when it contains '/' or '.',
 * else the bundled distribution ROOT/datasets/@arg.csv of the first
 * profile root that has it. PLAN_ERR_INPUT for an unknown name.
 */
bool seqlen_resolve(const char *arg, char *out, size_t size, struct plan_error *err);

/**
 * Parse the distribution in @text (@len bytes) read from @path: lines of
 * LENGTH or LENGTH,COUNT, an optional header 'length,count' (or
 * 'length') first, '#' comments and blank lines ignored. A malformed
 * line, a length that is not in 1..SEQLEN_MAX_LENGTH, a count that is
 * not positive, a NUL byte or no lengths at all is a PLAN_ERR_INPUT
 * error at its line. @d is the caller's to release.
 */
bool seqlen_parse(const char *path, const char *text, size_t len, struct seqlen_dist *d,
		  struct plan_error *err);

/** Read and parse the file @path (a regular file, at most 64 MiB). */
bool seqlen_load_file(const char *path, struct seqlen_dist *d, struct plan_error *err);
