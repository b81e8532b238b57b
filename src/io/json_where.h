/*
 * Where a value is in a JSON text. jansson gives the line and column of
 * a syntax error only, and keeps no position for the values it loads:
 * these walk the text itself (its structure only: brackets, strings,
 * colons and commas), so that an error about a field names its key and
 * the line and column of its value.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/** No such value. */
#define JSON_WHERE_NONE ((size_t)-1)

/**
 * The offset of the value of top-level key @key in @text (@len bytes),
 * a JSON object; JSON_WHERE_NONE when there is no such key (a key
 * written with escapes is compared as written).
 */
size_t json_where_key(const char *text, size_t len, const char *key);

/**
 * The last value that starts at or before byte @at of @text (@len bytes,
 * a JSON text read up to @at at least): its offset, and its path into
 * @path (@size bytes): keys joined by '.', array indexes as "[i]"
 * ("rope_scaling.factor", "layer_types[3]"; "" for the whole text).
 * JSON_WHERE_NONE when no value starts there.
 */
size_t json_where_path(const char *text, size_t len, size_t at, char *path, size_t size);

/** The 1-based line and byte column of byte @at of @text. */
void json_where_line(const char *text, size_t at, int *line, int *column);
