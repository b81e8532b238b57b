#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/fit_hint.h"

/*
 * The changes tried, cheapest in speed first as a user would reach for
 * them (Korthikanti et al. 2022 for recompute and sequence parallelism,
 * Rajbhandari et al. 2020 for the ZeRO stages): each returns false when
 * it does not apply to @p, else changes @p and names itself in @label.
 */
typedef bool (*fit_change_fn)(struct plan *p, char *label, size_t size);

static bool
change_selective(struct plan *p, char *label, size_t size)
{
	if (p->custom_recompute || p->custom_recompute_layers || p->recompute != PLAN_RECOMPUTE_NONE)
		return false;
	p->recompute = PLAN_RECOMPUTE_SELECTIVE;
	snprintf(label, size, "--recompute selective");
	return true;
}

static bool
change_full(struct plan *p, char *label, size_t size)
{
	if (p->custom_recompute || p->custom_recompute_layers || p->recompute == PLAN_RECOMPUTE_FULL)
		return false;
	p->recompute = PLAN_RECOMPUTE_FULL;
	snprintf(label, size, "--recompute full");
	return true;
}

static bool
zero_stage(struct plan *p, int stage, char *label, size_t size)
{
	if (p->dp * p->cp < 2 || p->zero >= stage || p->mics_group > 0)
		return false;
	p->zero = stage;
	snprintf(label, size, "--zero %d", stage);
	return true;
}

static bool
change_zero1(struct plan *p, char *label, size_t size)
{
	return zero_stage(p, 1, label, size);
}

static bool
change_zero2(struct plan *p, char *label, size_t size)
{
	return zero_stage(p, 2, label, size);
}

static bool
change_zero3(struct plan *p, char *label, size_t size)
{
	return zero_stage(p, 3, label, size);
}

static bool
change_flash(struct plan *p, char *label, size_t size)
{
	if (p->flash_attention)
		return false;
	p->flash_attention = true;
	snprintf(label, size, "--flash-attention");
	return true;
}

static bool
change_sp(struct plan *p, char *label, size_t size)
{
	if (p->tp < 2 || p->sequence_parallel)
		return false;
	p->sequence_parallel = true;
	snprintf(label, size, "--sequence-parallel");
	return true;
}

/* TP or PP doubled on the same GPUs: data parallelism halved. */
static bool
double_degree(struct plan *p, int *degree, const char *option, char *label, size_t size)
{
	if (p->dp % 2 != 0)
		return false;
	*degree *= 2;
	p->dp /= 2;
	snprintf(label, size, "--%s %d --dp %d", option, *degree, p->dp);
	return true;
}

static bool
change_tp(struct plan *p, char *label, size_t size)
{
	return double_degree(p, &p->tp, "tp", label, size);
}

static bool
change_pp(struct plan *p, char *label, size_t size)
{
	if (p->custom_layers || p->custom_recompute || p->custom_recompute_layers || 2 * p->pp > PLAN_MAX_STAGES)
		return false;
	return double_degree(p, &p->pp, "pp", label, size);
}

static bool
change_micro_batch(struct plan *p, char *label, size_t size)
{
	if (p->micro_batch < 2)
		return false;
	p->micro_batch /= 2;
	snprintf(label, size, "--micro-batch %d", p->micro_batch);
	return true;
}

static const fit_change_fn fit_changes[] = {
	change_flash, change_sp, change_selective, change_zero1, change_zero2, change_micro_batch,
	change_full, change_zero3, change_tp, change_pp,
};

static int
by_time(const void *a, const void *b)
{
	const struct fit_hint *x = a, *y = b;

	return (x->iteration_time_s > y->iteration_time_s) - (x->iteration_time_s < y->iteration_time_s);
}

#define FIT_CHANGES ((int)(sizeof(fit_changes) / sizeof(fit_changes[0])))

/* Change @i (and @j unless negative) applied to @p into *@h; whether it applies and fits. */
static bool
try_change(const struct model *m, const struct cluster *c, const struct plan *p,
	   const struct estimate_options *opt, int i, int j, struct fit_hint *h)
{
	char second[sizeof(h->change)];
	struct plan_error err;
	struct estimate e;
	size_t len;

	h->plan = *p;
	if (!fit_changes[i](&h->plan, h->change, sizeof(h->change)))
		return false;
	if (j >= 0) {
		if (!fit_changes[j](&h->plan, second, sizeof(second)))
			return false;
		len = strlen(h->change);
		snprintf(h->change + len, sizeof(h->change) - len, " %s", second);
	}
	plan_error_clear(&err);
	if (!estimate_plan(m, c, &h->plan, opt, &e, &err) || !e.fits)
		return false;
	h->iteration_time_s = e.iteration_time_s;
	h->memory_bytes = e.memory.total;
	return true;
}

int
fit_hints(const struct model *m, const struct cluster *c, const struct plan *p,
	  const struct estimate_options *opt, struct fit_hint *out, int max)
{
	struct fit_hint found[FIT_HINTS_MAX];
	int n = 0;

	for (int i = 0; i < FIT_CHANGES && n < FIT_HINTS_MAX; i++)
		n += try_change(m, c, p, opt, i, -1, &found[n]);
	/* None alone: two together (two ZeRO stages or two recompute modes
	 * in one pair amount to the later one, which a single tried). */
	for (int i = 0; n == 0 && i < FIT_CHANGES; i++)
		for (int j = i + 1; j < FIT_CHANGES && n < FIT_HINTS_MAX; j++)
			n += try_change(m, c, p, opt, i, j, &found[n]);
	qsort(found, (size_t)n, sizeof(found[0]), by_time);
	if (n > max)
		n = max;
	memcpy(out, found, (size_t)n * sizeof(found[0]));
	return n;
}

const char *
fit_largest_term(const struct memory_use *mu, double *bytes)
{
	const struct {
		const char *name;
		double v;
	} terms[] = {
		{ "weights", mu->weights },     { "gradients", mu->gradients },
		{ "optimizer", mu->optimizer }, { "activations", mu->activations },
		{ "other", mu->other },         { "compression", mu->compression },
		{ "userbuffers", mu->userbuffers },
	};
	size_t best = 0;

	for (size_t i = 1; i < sizeof(terms) / sizeof(terms[0]); i++)
		if (terms[i].v > terms[best].v)
			best = i;
	*bytes = terms[best].v;
	return terms[best].name;
}
