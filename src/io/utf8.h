#pragma once
/*
 * Text a writer cannot take as it is: a file name is any bytes but '/'
 * and NUL, while JSON (RFC 8259, section 8.1) and YAML (1.2, section 5.2)
 * must be UTF-8, and a newline in a YAML comment ends it. Such text is
 * written escaped: every byte that is not part of a valid UTF-8 sequence
 * (and with @controls, every C0 control and DEL) as the four characters
 * \xHH, so that "a\xff.log" names the file the user gave, readably.
 */
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/** Whether @s is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF). */
bool utf8_valid(const char *s);

/**
 * @s into @dst (@size bytes, NUL-terminated), invalid bytes (and with
 * @controls, control characters) as \xHH; truncated at a whole
 * character or escape. Returns the length the whole text needs.
 */
size_t utf8_escape(char *dst, size_t size, const char *s, bool controls);

/**
 * The first character of @s into @dst as utf8_escape() with @controls
 * writes it: a whole valid UTF-8 sequence, or its first byte as \xHH when
 * it is a control or not valid UTF-8. For an error that names one symbol
 * of a pattern ('%c' of a first byte would write half a character).
 */
const char *utf8_escape_first(char *dst, size_t size, const char *s);

/** json_string(@s), escaped as above when @s is not UTF-8 (jansson refuses it); NULL: out of memory. */
json_t *utf8_json_string(const char *s);
