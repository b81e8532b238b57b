#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan/numparse.h"
#include "io/infile.h"
#include "io/profile_path.h"
#include "io/seqlen_load.h"

bool
seqlen_resolve(const char *arg, char *out, size_t size, struct plan_error *err)
{
	if (!arg[0])
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0, "empty --seq-lengths");
	if (strchr(arg, '/') || strchr(arg, '.')) {
		if (!infile_check(arg, err))
			return false;
		snprintf(out, size, "%s", arg);
		return true;
	}
	for (int i = 0; i < profile_path_count(); i++) {
		if (snprintf(out, size, "%s/datasets/%s.csv", profile_path_root(i), arg) >= (int)size)
			continue;
		if (infile_check(out, NULL))
			return true;
	}
	return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
			      "unknown dataset '%s': no datasets/%s.csv in the profile path (give a file path)",
			      arg, arg);
}

/* @s without its leading and trailing blanks, in place. */
static char *
trim(char *s)
{
	char *e;

	while (*s && isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

struct pairs {
	int *length;
	double *count;
	int n, cap;
};

static bool
pairs_add(struct pairs *p, int length, double count)
{
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 256;
		int *l = realloc(p->length, (size_t)cap * sizeof(*l));
		double *c;

		if (!l)
			return false;
		p->length = l;
		c = realloc(p->count, (size_t)cap * sizeof(*c));
		if (!c)
			return false;
		p->count = c;
		p->cap = cap;
	}
	p->length[p->n] = length;
	p->count[p->n++] = count;
	return true;
}

/*
 * One data line, @s (trimmed) in @line: LENGTH or LENGTH,COUNT. An error
 * is at the byte column of the number at fault (a UTF-8 byte-order mark
 * not counted).
 */
static bool
parse_line(const char *path, int lineno, const char *line, char *s, struct pairs *p, struct plan_error *err)
{
	char quoted[96];
	char *comma = strchr(s, ',');
	const char *cnt = comma ? comma + 1 + strspn(comma + 1, " \t\r\f\v") : NULL;
	const int len_col = (int)(s - line) + 1, cnt_col = cnt ? (int)(cnt - line) + 1 : 0;
	double len, count = 1.0;

	plan_error_escape(quoted, sizeof(quoted), s);
	if (comma) {
		*comma = '\0';
		/* 1e400 reads as HUGE_VAL, refused below as above the maximum. */
		if (num_parse_double_status(comma + 1, &count) == NUM_NOT_A_NUMBER)
			return plan_error_set(err, PLAN_ERR_INPUT, path, lineno, cnt_col,
					      "malformed line '%s': expected LENGTH or LENGTH,COUNT", quoted);
	}
	if (num_parse_double_status(s, &len) == NUM_NOT_A_NUMBER)
		return plan_error_set(err, PLAN_ERR_INPUT, path, lineno, len_col,
				      "malformed line '%s': expected LENGTH or LENGTH,COUNT", quoted);
	if (len != floor(len))
		return plan_error_set(err, PLAN_ERR_INPUT, path, lineno, len_col,
				      "length must be a whole number of tokens, got '%s'", quoted);
	if (len < 1)
		return plan_error_set(err, PLAN_ERR_INPUT, path, lineno, len_col,
				      "length must be positive, got '%s'", quoted);
	/* The numbers as written: %g of 1e400 (HUGE_VAL) printed "inf". */
	if (len > SEQLEN_MAX_LENGTH)
		return plan_error_set(err, PLAN_ERR_INPUT, path, lineno, len_col,
				      "length %s is above the maximum of %d tokens", trim(s), SEQLEN_MAX_LENGTH);
	if (!(count > 0))
		return plan_error_set(err, PLAN_ERR_INPUT, path, lineno, cnt_col,
				      "count must be positive, got '%s'", quoted);
	/* Equal lengths are merged by adding their counts: two of 1e308 made
	 * an infinite count, reported with no line. 1e15 a line keeps any
	 * sum of a 64 MiB file finite. */
	if (count > SEQLEN_MAX_COUNT)
		return plan_error_set(err, PLAN_ERR_INPUT, path, lineno, cnt_col,
				      "count %s is above the maximum of %g", trim(comma + 1), SEQLEN_MAX_COUNT);
	if (!pairs_add(p, (int)len, count))
		return plan_error_set(err, PLAN_ERR_NOMEM, path, 0, 0, "out of memory");
	return true;
}

/* A header: 'length,count' or 'length', any case. */
static bool
is_header(const char *s)
{
	char buf[64];
	char *c;

	snprintf(buf, sizeof(buf), "%s", s);
	c = strchr(buf, ',');
	if (c) {
		*c = '\0';
		return strcasecmp(trim(buf), "length") == 0 && strcasecmp(trim(c + 1), "count") == 0;
	}
	return strcasecmp(trim(buf), "length") == 0;
}

bool
seqlen_parse(const char *path, const char *text, size_t len, struct seqlen_dist *d, struct plan_error *err)
{
	struct pairs p = { NULL, NULL, 0, 0 };
	char *buf = malloc(len + 1), *line, *next;
	int lineno = 0;
	bool ok = true, first = true;

	seqlen_dist_init(d);
	if (!buf)
		return plan_error_set(err, PLAN_ERR_NOMEM, path, 0, 0, "out of memory");
	memcpy(buf, text, len);
	buf[len] = '\0';
	/* A UTF-8 byte-order mark, as a spreadsheet writes it. */
	line = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? buf + 3 : buf;
	for (; ok && line && line < buf + len; line = next) {
		char *hash, *s;
		char *nl = memchr(line, '\n', (size_t)(buf + len - line));

		lineno++;
		next = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		if (strlen(line) != (size_t)((nl ? nl : buf + len) - line)) {
			ok = plan_error_set(err, PLAN_ERR_INPUT, path, lineno, (int)strlen(line) + 1, "a NUL byte");
			break;
		}
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		s = trim(line);
		if (!*s)
			continue;
		if (first && is_header(s)) {
			first = false;
			continue;
		}
		first = false;
		ok = parse_line(path, lineno, line, s, &p, err);
	}
	free(buf);
	if (ok && p.n == 0)
		ok = plan_error_set(err, PLAN_ERR_INPUT, path, lineno > 0 ? lineno : 0, 0,
				    "no sequence lengths (an empty distribution)");
	if (ok && !seqlen_dist_build(d, p.length, p.count, p.n, err)) {
		if (err)
			snprintf(err->file, sizeof(err->file), "%s", path);
		ok = false;
	}
	free(p.length);
	free(p.count);
	return ok;
}

bool
seqlen_load_file(const char *path, struct seqlen_dist *d, struct plan_error *err)
{
	char *text;
	size_t len;
	bool ok;

	seqlen_dist_init(d);
	if (!infile_read(path, INFILE_MAX_CSV, &text, &len, err))
		return false;
	ok = seqlen_parse(path, text, len, d, err);
	free(text);
	return ok;
}
