/*
 * The layout is nccl-tests' src/common.cu (2.x): '#' header lines, a
 * column header '#  size count type redop root time algbw busbw #wrong
 * time algbw busbw #wrong' (older versions lack 'root', and name #wrong
 * 'error'), then one row per size. algbw = size / time and busbw =
 * algbw x the collective's factor (doc/PERFORMANCE.md), both in GB/s of
 * 1e9 bytes; times are in microseconds.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/numparse.h"
#include "io/infile.h"
#include "io/nccl_log.h"

#define MAX_TOKENS 32
#define MAX_HOSTS 4096
/* A host name as kept: DNS names reach 253 characters (RFC 1035), and
 * 64 bytes took hosts that share a long prefix for one. */
#define NCCL_HOST_LEN 256

/* Where the columns are, from the table's header line. */
struct columns {
	int count;             /* tokens in a row; 0: no header seen yet */
	int size, time[2], algbw[2], busbw[2], wrong[2];
};

struct parser {
	const char *name;
	int line;
	/* The line's tokens are cut from copy, which starts at byte column
	 * skip + 1 of the line (after an mpirun prefix). */
	const char *copy;
	int skip;
	struct nccl_log *log;
	struct columns col;
	char (*hosts)[NCCL_HOST_LEN];
	int cap;
	/* The hosts by hash (index + 1; 0: empty), twice MAX_HOSTS so that
	 * probes stay short: a log of many '# Rank' lines was O(ranks x
	 * hosts) with a linear search (issue 28). */
	short slots[2 * MAX_HOSTS];
	struct plan_error *err;
};

static int
tokenize(char *s, char **tok)
{
	int n = 0;

	for (char *save = NULL, *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		if (n < MAX_TOKENS)
			tok[n++] = t;
		else
			return MAX_TOKENS + 1;
	return n;
}

static bool
all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* The byte column of token @t (a pointer into p->copy); NULL: 0, none. */
static int
column(const struct parser *p, const char *t)
{
	return t ? p->skip + (int)(t - p->copy) + 1 : 0;
}

/* An error at token @t of the line; a whole line's at its first token. */
static bool
fail(struct parser *p, const char *t, const char *fmt, const char *a, const char *b)
{
	return plan_error_set(p->err, PLAN_ERR_INPUT, p->name, p->line, column(p, t), fmt, a, b);
}

static bool
header_line(struct parser *p, char **tok, int n)
{
	struct columns c = { .count = n - 1, .size = -1, .time = { -1, -1 } };
	int seen[3] = { 0, 0, 0 };

	for (int i = 1; i < n; i++) {
		const char *t = tok[i];

		if (strcmp(t, "size") == 0)
			c.size = i - 1;
		else if (strcmp(t, "time") == 0 && seen[0] < 2)
			c.time[seen[0]++] = i - 1;
		else if (strcmp(t, "algbw") == 0 && seen[1] < 2)
			c.algbw[seen[1]++] = i - 1;
		else if (strcmp(t, "busbw") == 0 && seen[2] < 2)
			c.busbw[seen[2]++] = i - 1;
	}
	if (c.size < 0 || seen[0] != 2 || seen[1] != 2 || seen[2] != 2)
		return fail(p, tok[0], "the table header must name size and, out of place and in place, "
			    "time, algbw and busbw%s%s", "", "");
	for (int j = 0; j < 2; j++)
		c.wrong[j] = c.busbw[j] + 1 < c.count ? c.busbw[j] + 1 : -1;
	p->col = c;
	return true;
}

/* FNV-1a of the first NCCL_HOST_LEN - 1 bytes of @host (what a hosts entry keeps). */
static unsigned
host_hash(const char *host)
{
	unsigned h = 2166136261u;

	for (int i = 0; i < NCCL_HOST_LEN - 1 && host[i]; i++)
		h = (h ^ (unsigned char)host[i]) * 16777619u;
	return h;
}

static bool
add_host(struct parser *p, const char *host)
{
	const size_t nslots = sizeof(p->slots) / sizeof(p->slots[0]);
	size_t i = host_hash(host) % nslots;

	/* Names compare as kept: their first NCCL_HOST_LEN - 1 bytes. */
	for (; p->slots[i]; i = (i + 1) % nslots)
		if (strncmp(p->hosts[p->slots[i] - 1], host, NCCL_HOST_LEN - 1) == 0)
			return true;
	if (p->log->nodes == MAX_HOSTS)
		return fail(p, host, "more than 4096 hosts%s%s", "", "");
	if (p->log->nodes == p->cap) {
		int cap = p->cap ? 2 * p->cap : 16;
		char (*grown)[NCCL_HOST_LEN] = realloc(p->hosts, (size_t)cap * sizeof(*grown));

		if (!grown)
			return plan_error_set(p->err, PLAN_ERR_NOMEM, p->name, 0, 0, "out of memory");
		p->hosts = grown;
		p->cap = cap;
	}
	snprintf(p->hosts[p->log->nodes++], NCCL_HOST_LEN, "%s", host);
	p->slots[i] = (short)p->log->nodes;
	return true;
}

/* '#  Rank  0 Group  0 Pid  123 on HOST device  0 [0x18] NVIDIA H100 80GB HBM3' */
static bool
rank_line(struct parser *p, const char *line, char **tok, int n)
{
	const char *gpu = strchr(line, ']');

	if (n < 9 || strcmp(tok[7], "on") != 0 || !all_digits(tok[2]))
		return fail(p, tok[0], "a rank line reads '#  Rank N Group G Pid P on HOST device D [BUS] NAME'%s%s", "", "");
	if (p->log->ranks == 0 && gpu) {
		while (*++gpu == ' ')
			;
		snprintf(p->log->gpu, sizeof(p->log->gpu), "%s", gpu);
	}
	p->log->ranks++;
	return add_host(p, tok[8]);
}

static bool
number(struct parser *p, const char *what, const char *s, double min, double *out)
{
	enum num_status st = num_parse_double_status(s, out);

	if (st == NUM_NOT_A_NUMBER || *out < min)
		return fail(p, s, min > 0 ? "the %s column must be a positive number, got '%s'" :
			    "the %s column must be a non-negative number, got '%s'", what, s);
	/* 1e400: a number, past the largest double (DBL_MAX, 1.79769e+308). */
	if (st == NUM_OUT_OF_RANGE)
		return fail(p, s, "the %s column must be at most 1.79769e+308, got '%s'", what, s);
	return true;
}

/* One side (out of place or in place) of a row, in SI; its algbw must be size / time. */
static bool
row_side(struct parser *p, char **tok, int j, struct nccl_row *r)
{
	const struct columns *c = &p->col;
	const char *wrong = c->wrong[j] >= 0 ? tok[c->wrong[j]] : "0";
	double t_us, alg, bus, expect;
	char got[32];

	if (!number(p, "time", tok[c->time[j]], 1e-300, &t_us) || !number(p, "algbw", tok[c->algbw[j]], 0, &alg) ||
	    !number(p, "busbw", tok[c->busbw[j]], 0, &bus))
		return false;
	if (strcmp(wrong, "0") != 0 && strcmp(wrong, "N/A") != 0 && strcmp(wrong, "0e+00") != 0)
		return fail(p, tok[c->wrong[j]], "the collective gave wrong results in this row (#wrong '%s')%s", wrong, "");
	/* size / time in bytes per microsecond is 1e6 B/s; GB/s is 1e9 B/s. */
	expect = r->bytes / t_us / 1e3;
	if (fabs(alg - expect) > 0.011 + 0.02 * expect) {
		snprintf(got, sizeof(got), "%.4g", expect);
		return fail(p, tok[c->algbw[j]], "algbw '%s' GB/s is not size / time (%s GB/s): times must be in us",
			    tok[c->algbw[j]], got);
	}
	r->time_s[j] = t_us * 1e-6;
	r->algbw_Bps[j] = alg * 1e9;
	r->busbw_Bps[j] = bus * 1e9;
	return true;
}

static bool
data_row(struct parser *p, char **tok, int n)
{
	struct nccl_log *log = p->log;
	struct nccl_row r = { .line = p->line };
	char want[16], got[16];

	if (p->col.count == 0)
		return fail(p, tok[0], "a result row before the table's header line ('#  size count type ...')%s%s", "", "");
	if (n != p->col.count) {
		snprintf(want, sizeof(want), "%d", p->col.count);
		snprintf(got, sizeof(got), "%d", n > MAX_TOKENS ? MAX_TOKENS + 1 : n);
		return fail(p, tok[0], "a result row has %s columns as the header says, this one %s", want, got);
	}
	if (!all_digits(tok[p->col.size]) || !number(p, "size", tok[p->col.size], 0, &r.bytes))
		return fail(p, tok[p->col.size], "the size column must be a whole number of bytes, got '%s'%s", tok[p->col.size], "");
	if (!row_side(p, tok, 0, &r) || !row_side(p, tok, 1, &r))
		return false;
	if (r.bytes == 0)
		return true;
	if (log->n % 64 == 0) {
		struct nccl_row *grown = realloc(log->rows, ((size_t)log->n + 64) * sizeof(*grown));

		if (!grown)
			return plan_error_set(p->err, PLAN_ERR_NOMEM, p->name, 0, 0, "out of memory");
		log->rows = grown;
	}
	log->rows[log->n++] = r;
	return true;
}

/* The collective named by a test binary or a file name, -1 when none is. */
static int
coll_named(const char *s)
{
	for (int i = 0; fit_coll_names[i]; i++)
		if (strstr(s, fit_coll_names[i]))
			return i;
	return -1;
}

static bool
comment_line(struct parser *p, const char *line, char **tok, int n)
{
	if (n >= 5 && strcmp(tok[1], "Collective") == 0 && strcmp(tok[3], "starting:") == 0) {
		if (coll_named(tok[4]) < 0)
			return fail(p, tok[4], "unknown collective '%s' (known: all_reduce, all_gather, reduce_scatter, "
				    "alltoall, sendrecv)%s", tok[4], "");
		p->log->coll = coll_named(tok[4]);
	} else if (n >= 2 && strcmp(tok[1], "Rank") == 0) {
		return rank_line(p, line, tok, n);
	} else if (n >= 6 && strcmp(tok[1], "Avg") == 0 && strcmp(tok[3], "bandwidth") == 0) {
		if (!number(p, "Avg bus bandwidth", tok[5], 0, &p->log->avg_busbw_Bps))
			return false;
		p->log->avg_busbw_Bps *= 1e9;
	} else if (n >= 3 && p->col.count == 0) {
		for (int i = 1; i < n; i++)
			if (strcmp(tok[i], "size") == 0)
				return header_line(p, tok, n);
	}
	return true;
}

static bool
parse_line(struct parser *p, char *line)
{
	char copy[1024], *tok[MAX_TOKENS];
	const char *mpi = line[0] == '[' ? strstr(line, ">:") : NULL;
	int n;

	p->skip = 0;
	if (mpi && mpi - line < 32) {
		p->skip = (int)(mpi - line + 2);
		line += p->skip;
	}
	p->copy = line; /* until the tokens are cut from copy */
	line[strcspn(line, "\r")] = '\0';
	if (strlen(line) >= sizeof(copy))
		return line[strspn(line, " \t")] == '#' || !isdigit((unsigned char)line[strspn(line, " \t")]) ||
		       fail(p, line + strspn(line, " \t"), "a result row longer than 1023 characters%s%s", "", "");
	memcpy(copy, line, strlen(line) + 1);
	p->copy = copy;
	n = tokenize(copy, tok);
	if (n == 0)
		return true;
	if (n > MAX_TOKENS) /* tok holds the first MAX_TOKENS only */
		return tok[0][0] == '#' || !all_digits(tok[0]) ||
		       fail(p, tok[0], "a result row of more than 32 columns%s%s", "", "");
	if (tok[0][0] == '#')
		return strcmp(tok[0], "#") != 0 || comment_line(p, line, tok, n);
	/* NCCL INFO lines start with a host name; rows start with the size. */
	return !all_digits(tok[0]) || data_row(p, tok, n);
}

bool
nccl_log_parse(const char *name, const char *text, struct nccl_log *log, struct plan_error *err)
{
	struct parser p = { .name = name, .log = log, .err = err };
	const char *base = strrchr(name, '/');
	bool ok = true;

	memset(log, 0, sizeof(*log));
	log->coll = -1;
	for (const char *s = text; ok && *s;) {
		size_t len = strcspn(s, "\n");
		char *line = malloc(len + 1);

		p.line++;
		if (!line)
			return plan_error_set(err, PLAN_ERR_NOMEM, name, 0, 0, "out of memory");
		memcpy(line, s, len);
		line[len] = '\0';
		ok = parse_line(&p, line);
		free(line);
		s += len + (s[len] == '\n');
	}
	free(p.hosts);
	if (!ok)
		return false;
	if (log->coll < 0)
		log->coll = coll_named(base ? base + 1 : name);
	if (log->coll < 0)
		return plan_error_set(err, PLAN_ERR_INPUT, name, 0, 0,
				      "which collective ran is not said: keep the '# Collective test starting' "
				      "line or name the file after the test (all_reduce_perf.log, ...)");
	if (log->n == 0)
		return plan_error_set(err, PLAN_ERR_INPUT, name, 0, 0,
				      "no result table (a '#  size count type ... time algbw busbw' line "
				      "and rows of sizes under it)");
	return true;
}

/* The first NUL byte of @text, at its line and byte column. */
static bool
nul_error(const char *path, const char *text, struct plan_error *err)
{
	const char *nul = text + strlen(text), *start = text;
	int line = 1;

	for (const char *s = text; s < nul; s++)
		if (*s == '\n') {
			line++;
			start = s + 1;
		}
	return plan_error_set(err, PLAN_ERR_INPUT, path, line, (int)(nul - start) + 1,
			      "a NUL byte in the log: not nccl-tests output");
}

bool
nccl_log_load(const char *path, struct nccl_log *log, struct plan_error *err)
{
	char *text;
	size_t len;
	bool ok;

	memset(log, 0, sizeof(*log));
	if (!infile_read(path, INFILE_MAX_CSV, &text, &len, err))
		return false;
	ok = strlen(text) == len ? nccl_log_parse(path, text, log, err) : nul_error(path, text, err);
	free(text);
	return ok;
}

void
nccl_log_release(struct nccl_log *log)
{
	free(log->rows);
	log->rows = NULL;
	log->n = 0;
}

bool
nccl_log_points(const struct nccl_log *log, int nodes, struct fit_link_point **pts, int *n, int *cap,
		struct plan_error *err)
{
	if (nodes <= 0)
		nodes = log->nodes;
	if (log->ranks < 2 || nodes < 1 || log->ranks % nodes != 0)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      log->ranks < 2 ? "the log lists %d ranks ('#  Rank N ...' lines): "
				      "a collective needs 2 or more" :
				      "%d ranks do not spread evenly over the nodes", log->ranks);
	for (int i = 0; i < log->n; i++) {
		if (*n == *cap) {
			int grow = *cap ? 2 * *cap : 64;
			struct fit_link_point *g = realloc(*pts, (size_t)grow * sizeof(*g));

			if (!g)
				return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
			*pts = g;
			*cap = grow;
		}
		(*pts)[(*n)++] = (struct fit_link_point){ log->coll, log->ranks, nodes, log->rows[i].bytes,
							  log->rows[i].time_s[0] };
	}
	return true;
}
