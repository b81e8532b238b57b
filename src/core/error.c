#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan/error.h"

void
plan_error_clear(struct plan_error *err)
{
	if (!err)
		return;
	memset(err, 0, sizeof(*err));
}

bool
plan_error_set(struct plan_error *err, enum plan_error_kind kind,
	       const char *file, int line, int column, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return false;
	err->kind = kind;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->column = column;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
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
