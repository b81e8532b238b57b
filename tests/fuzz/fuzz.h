/*
 * What the libFuzzer targets share: the set-up the tests do (GSL's abort
 * off, the bundled profiles found in the source tree) and the input cut
 * into C strings. Each target defines fuzz_target_init() and
 * LLVMFuzzerTestOneInput(); fuzz.c defines LLVMFuzzerInitialize().
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/** Called once before the first input, after the common set-up. */
void fuzz_target_init(void);

/** The input plus a terminating NUL, in a new buffer (aborts when out of memory). */
char *fuzz_text(const uint8_t *data, size_t size);

/**
 * Split @text (@size bytes and a NUL after them, as fuzz_text makes it)
 * in place at its first @max - 1 NUL bytes: parts[i] are the pieces and
 * the number of pieces is returned. The last piece runs to the end of the
 * input and may hold NULs: *rest_size receives its length.
 */
int fuzz_split(char *text, size_t size, char **parts, int max, size_t *rest_size);

/** Make an empty temporary file for the inputs of a reader that takes a
 * path (named after @tag, removed at exit); aborts when it cannot. */
const char *fuzz_temp_file(const char *tag);

/** Write @size bytes of @data to @path, replacing it (aborts on failure). */
void fuzz_write_file(const char *path, const uint8_t *data, size_t size);

/** Send what is printed on stdout to @path (replaced) until
 * fuzz_stdout_restore; for the commands that print their output. */
void fuzz_stdout_to(const char *path);
void fuzz_stdout_restore(void);

/** @path's whole text, NUL-terminated, in a new buffer; NULL when it cannot be read. */
char *fuzz_slurp(const char *path);

/** Abort, naming @target, unless every number under @v (JSON) is finite. */
void fuzz_check_json_finite(const char *target, const json_t *v);

struct cluster;
struct gpu;

/** Load the bundled dgx-h100 into @c and its GPU h100-sxm5-80gb into @g,
 * each unless NULL (aborts when one does not load). */
void fuzz_load_bundled(struct cluster *c, struct gpu *g);

/** Abort when one of the @n values is not finite (issue 15), naming its index. */
void fuzz_check_finite(const char *target, const double *v, size_t n);

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
