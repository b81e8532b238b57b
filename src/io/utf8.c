#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/utf8.h"

/*
 * The length of the valid UTF-8 sequence at @p, or 0. The table of
 * well-formed sequences of Unicode 15, section 3.9, table 3-7: the second
 * byte's range excludes overlong forms (E0, F0), surrogates (ED) and code
 * points past U+10FFFF (F4).
 */
static size_t
sequence(const unsigned char *p)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xBF) /* a NUL ends the check here too */
			return 0;
	return len;
}

bool
utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t len = sequence(p);

		if (!len)
			return false;
		p += len;
	}
	return true;
}

size_t
utf8_escape(char *dst, size_t size, const char *s, bool controls)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t out = 0, written = 0;
	bool full = size == 0;

	while (*p) {
		size_t len = sequence(p);
		bool escape = !len || (controls && len == 1 && (*p < 0x20 || *p == 0x7F));
		size_t need = escape ? 4 : len;

		/* Whole characters and escapes only: the first that does not
		 * fit ends the copy; the length still counts the rest. */
		if (!full && written + need < size) {
			if (escape)
				snprintf(dst + written, 5, "\\x%02X", *p);
			else
				memcpy(dst + written, p, need);
			written += need;
		} else {
			full = true;
		}
		out += need;
		p += escape ? 1 : len;
	}
	if (size > 0)
		dst[written] = '\0';
	return out;
}

const char *
utf8_escape_first(char *dst, size_t size, const char *s)
{
	size_t len = sequence((const unsigned char *)s);
	char one[5] = { 0 };

	memcpy(one, s, len ? len : 1);
	utf8_escape(dst, size, one, true);
	return dst;
}

json_t *
utf8_json_string(const char *s)
{
	size_t need;
	char *buf;
	json_t *j;

	if (!s || utf8_valid(s))
		return s ? json_string(s) : NULL;
	need = utf8_escape(NULL, 0, s, false) + 1;
	if (!(buf = malloc(need)))
		return NULL;
	utf8_escape(buf, need, s, false);
	j = json_string(buf);
	free(buf);
	return j;
}
