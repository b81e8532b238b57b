#include <stdio.h>
#include <string.h>

#include "io/json_where.h"

/* A config.json nests 2 or 3 levels; a value deeper than this has no
 * path, and the walk stops there. */
#define WHERE_DEPTH 64

struct where_frame {
	bool object;
	const char *key; /* the key being read, as written; NULL before the first */
	size_t key_len;
	long index;      /* in an array: the element being read */
};

struct where_walk {
	const char *text;
	size_t len, i;
	struct where_frame f[WHERE_DEPTH];
	int depth;
};

/* Past the string whose opening quote is at w->i. */
static void
skip_string(struct where_walk *w)
{
	for (w->i++; w->i < w->len && w->text[w->i] != '"'; w->i++)
		if (w->text[w->i] == '\\')
			w->i++;
	w->i = w->i < w->len ? w->i + 1 : w->len;
}

/* Past a number, true, false or null (at least one byte). */
static void
skip_scalar(struct where_walk *w)
{
	size_t start = w->i;

	while (w->i < w->len && w->text[w->i] && !strchr(",:[]{}\" \t\r\n", w->text[w->i]))
		w->i++;
	if (w->i == start)
		w->i++;
}

/* After a key's string, at w->i: the key of the innermost object. */
static void
read_key(struct where_walk *w, size_t quote)
{
	struct where_frame *top = &w->f[w->depth - 1];

	skip_string(w);
	if (top->object && w->i >= quote + 2) {
		top->key = w->text + quote + 1;
		top->key_len = w->i - quote - 2;
	}
}

/* A value starts at w->i, where @visit has seen it: step over it, or into
 * it (there is room for a frame). Whether a value comes next. */
static bool
enter_value(struct where_walk *w)
{
	char c = w->text[w->i];

	if (c == '{' || c == '[') {
		w->f[w->depth++] = (struct where_frame){ .object = c == '{' };
		w->i++;
		return c == '[';
	}
	if (c == '"')
		skip_string(w);
	else
		skip_scalar(w);
	return false;
}

/*
 * Calls @visit at the first byte of each value, in the order of the text,
 * until it returns true: returns that offset, else JSON_WHERE_NONE. The
 * text is trusted to be JSON up to there (jansson read it): a byte out of
 * place is stepped over.
 */
static size_t
walk(struct where_walk *w, bool (*visit)(const struct where_walk *w, void *arg), void *arg)
{
	bool value = true; /* a value comes next */

	while (w->i < w->len) {
		char c = w->text[w->i];

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			w->i++;
		} else if (c == '}' || c == ']') {
			w->depth -= w->depth > 0;
			value = false;
			w->i++;
		} else if (value) {
			size_t at = w->i;

			if (visit(w, arg))
				return at;
			if ((c == '{' || c == '[') && w->depth == WHERE_DEPTH)
				return JSON_WHERE_NONE;
			value = enter_value(w);
		} else if (c == '"' && w->depth > 0) {
			read_key(w, w->i);
		} else {
			/* ':' in an object, ',' in an array: a value next. */
			if (c == ',' && w->depth > 0 && !w->f[w->depth - 1].object)
				w->f[w->depth - 1].index++;
			value = c == ':' || (c == ',' && w->depth > 0 && !w->f[w->depth - 1].object);
			w->i++;
		}
	}
	return JSON_WHERE_NONE;
}

struct key_query {
	const char *key;
	size_t len;
};

static bool
is_key(const struct where_walk *w, void *arg)
{
	const struct key_query *q = arg;
	const struct where_frame *f = &w->f[0];

	return w->depth == 1 && f->object && f->key && f->key_len == q->len && memcmp(f->key, q->key, q->len) == 0;
}

size_t
json_where_key(const char *text, size_t len, const char *key)
{
	struct where_walk w = { .text = text, .len = len };
	struct key_query q = { key, strlen(key) };

	return walk(&w, is_key, &q);
}

struct path_query {
	size_t at, last;
	char *path;
	size_t size;
};

/* The path of the value at w->i, as the header says. */
static void
path_of(const struct where_walk *w, char *path, size_t size)
{
	size_t n = 0;

	path[0] = '\0';
	for (int d = 0; d < w->depth && n < size; d++) {
		const struct where_frame *f = &w->f[d];
		int k = f->object ? snprintf(path + n, size - n, "%s%.*s", n ? "." : "", (int)f->key_len,
					     f->key ? f->key : "") :
			snprintf(path + n, size - n, "[%ld]", f->index);

		n += k > 0 ? (size_t)k : 0;
	}
}

static bool
past(const struct where_walk *w, void *arg)
{
	struct path_query *q = arg;

	if (w->i > q->at)
		return true;
	q->last = w->i;
	path_of(w, q->path, q->size);
	return false;
}

size_t
json_where_path(const char *text, size_t len, size_t at, char *path, size_t size)
{
	struct where_walk w = { .text = text, .len = len };
	struct path_query q = { at, JSON_WHERE_NONE, path, size };

	if (size > 0)
		path[0] = '\0';
	if (size == 0)
		return JSON_WHERE_NONE;
	walk(&w, past, &q);
	return q.last;
}

void
json_where_line(const char *text, size_t at, int *line, int *column)
{
	size_t start = 0;

	*line = 1;
	for (size_t i = 0; i < at; i++)
		if (text[i] == '\n') {
			++*line;
			start = i + 1;
		}
	*column = (int)(at - start) + 1;
}
