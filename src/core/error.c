#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan/error.h"

void
plan_error_clear(struct plan_error *err)
{
	/* Not a memset: the struct is mostly path, and predict clears one per call. */
	if (!err)
		return;
	err->kind = PLAN_ERR_NONE;
	err->file[0] = err->message[0] = '\0';
	err->line = err->column = 0;
}

void
plan_error_escape(char *dst, unsigned long size, const char *src)
{
	unsigned long n = 0;

	if (size == 0)
		return;
	for (; *src; src++) {
		unsigned char c = (unsigned char)*src;
		char esc[5] = { c, '\0' };

		if (c == '\n' || c == '\r' || c == '\t')
			snprintf(esc, sizeof(esc), "\\%c", c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
		else if (c < 0x20 || c == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", c);
		if (n + strlen(esc) >= size)
			break;
		memcpy(dst + n, esc, strlen(esc));
		n += strlen(esc);
	}
	dst[n] = '\0';
}

bool
plan_error_set(struct plan_error *err, enum plan_error_kind kind,
	       const char *file, int line, int column, const char *fmt, ...)
{
	char msg[sizeof(err->message)];
	va_list ap;

	if (!err)
		return false;
	err->kind = kind;
	plan_error_escape(err->file, sizeof(err->file), file ? file : "");
	err->line = line;
	err->column = column;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	plan_error_escape(err->message, sizeof(err->message), msg);
	return false;
}

void
plan_error_format(const struct plan_error *err, char *buf, unsigned long size)
{
	if (err->file[0] && err->line > 0 && err->column > 0)
		snprintf(buf, size, "%s:%d:%d: %s", err->file, err->line,
			 err->column, err->message);
	else if (err->file[0] && err->line > 0)
		snprintf(buf, size, "%s:%d: %s", err->file, err->line, err->message);
	else if (err->file[0])
		snprintf(buf, size, "%s: %s", err->file, err->message);
	else
		snprintf(buf, size, "%s", err->message);
}
