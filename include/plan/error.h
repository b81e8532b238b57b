/* Errors returned by the core: a message with an optional source location. */
#pragma once

#include <stdbool.h>

/** Error classes; the command layer maps them to exit codes. */
enum plan_error_kind {
	PLAN_ERR_NONE = 0,
	PLAN_ERR_INPUT,   /**< malformed or invalid input (profile, CSV, value) */
	PLAN_ERR_PLAN,    /**< a plan that cannot run (divisibility, size) */
	PLAN_ERR_IO,      /**< a file could not be read */
	PLAN_ERR_NOMEM,   /**< an allocation failed */
};

/**
 * A caller-supplied error: filled by the first failing function.
 * line and column are 1-based; 0 means "not known".
 */
/** Long enough for any path (PATH_MAX on Linux). */
#define PLAN_ERROR_FILE_LEN 4096

struct plan_error {
	enum plan_error_kind kind;
	char file[PLAN_ERROR_FILE_LEN];
	int line;
	int column;
	char message[768];
};

/** Reset @err to "no error". */
void plan_error_clear(struct plan_error *err);

/**
 * Record an error. @file may be NULL. Returns false so that callers can
 * write `return plan_error_set(...)`. Does nothing if @err is NULL.
 */
bool plan_error_set(struct plan_error *err, enum plan_error_kind kind,
		    const char *file, int line, int column,
		    const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/**
 * Copy @src into @dst (@size bytes, NUL-terminated, cut short if need
 * be) with control characters written as \n, \r, \t or \xHH, so that a
 * value quoted in a message never breaks it over lines.
 */
void plan_error_escape(char *dst, unsigned long size, const char *src);

/** Enough for what plan_error_format writes. */
#define PLAN_ERROR_TEXT_LEN (PLAN_ERROR_FILE_LEN + 800)

/** Format "FILE:LINE:COL: message" (or less when unknown) into @buf. */
void plan_error_format(const struct plan_error *err, char *buf, unsigned long size);
