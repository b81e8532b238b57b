/*
 * What the libFuzzer targets share: the set-up the tests do (GSL's abort
 * off, the bundled profiles found in the source tree) and the input cut
 * into C strings. Each target defines fuzz_target_init() and
 * LLVMFuzzerTestOneInput(); fuzz.c defines LLVMFuzzerInitialize().
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

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

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
