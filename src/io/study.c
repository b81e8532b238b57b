#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/numparse.h"
#include "io/schema.h"
#include "io/study.h"
#include "io/yamltree.h"

/* The axes that are not plan attributes, by enum study_axis_kind. */
static const char *const profile_axis_names[AXIS_ATTR] = {
	"model", "cluster", "compressor", "gpus", "nic_bandwidth", "intra_bandwidth", "framework", "reference",
	"power_limit",
};

const char *
study_axis_name(int kind)
{
	if (kind < 0 || kind >= AXIS_COUNT)
		return NULL;
	return kind < AXIS_ATTR ? profile_axis_names[kind] : plan_attrs[kind - AXIS_ATTR].name;
}

const char *const *
study_axis_names(void)
{
	/* Filled once, from the main thread before any sweep worker starts. */
	static const char *names[AXIS_COUNT + 1];

	if (!names[0])
		for (int k = 0; k < AXIS_COUNT; k++)
			names[k] = study_axis_name(k);
	return names;
}

const char *const study_metric_names[] = {
	"iteration_time", "tflops_per_gpu", "mfu", "tokens_per_s", "speedup",
	"weak_scaling_efficiency", "strong_scaling_efficiency", "memory", "fits", "plan",
	"tokens_per_s_per_gpu", "train_days", "gpu_hours", "gemm_wave_loss", NULL,
};

const char *const study_latex_fit_names[] = { "column", "page", "none", NULL };
const char *const study_plot_log_names[] = { "auto", "none", "x", "y", "xy", NULL };

void
study_init(struct study *s)
{
	memset(s, 0, sizeof(*s));
	s->mode = STUDY_PREDICT;
	s->nmetrics = 1;
	s->metrics[0] = METRIC_TIME;
	s->baseline_axis = -1;
	s->flash_attention = -1;
	snprintf(s->reference_name, sizeof(s->reference_name), "reference");
}

void
study_axis_clear(struct study_axis *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->values[i]);
	a->n = 0;
}

bool
study_axis_add(struct study_axis *a, const char *text)
{
	size_t len = strlen(text);

	if (a->n >= STUDY_MAX_VALUES || len >= STUDY_VALUE_LEN)
		return false;
	if (!(a->values[a->n] = malloc(len + 1)))
		return false;
	memcpy(a->values[a->n], text, len + 1);
	a->value_line[a->n] = a->value_column[a->n] = 0;
	a->n++;
	return true;
}

void
study_release(struct study *s)
{
	for (int i = 0; i < s->naxes && i < STUDY_MAX_AXES; i++)
		study_axis_clear(&s->axes[i]);
	study_init(s);
}

/* The i-th name of a table, NULL past its end: lets one lookup serve every table. */
typedef const char *name_fn(int i);

static const char *
axis_name(int i)
{
	return study_axis_name(i);
}

static const char *
metric_name(int i)
{
	return study_metric_names[i];
}

static int
lookup(name_fn *name, const char *key)
{
	for (int i = 0; name(i); i++)
		if (strcmp(name(i), key) == 0)
			return i;
	return -1;
}

/* "unknown key 'x'; did you mean 'y'?" or the list of choices. */
static bool
unknown(const struct ytree *t, const yaml_node_t *node, const char *what, const char *key,
	name_fn *name, struct plan_error *err)
{
	const char *best = NULL;
	int best_d = 3;
	char valid[1024] = "";

	for (int i = 0; name(i); i++) {
		int d = schema_edit_distance(key, name(i));

		if (d < best_d) {
			best_d = d;
			best = name(i);
		}
		if (strlen(valid) + strlen(name(i)) + 3 < sizeof(valid)) {
			if (valid[0])
				strcat(valid, ", ");
			strcat(valid, name(i));
		}
	}
	if (best)
		return ytree_error(t, node, err, "unknown %s '%s'; did you mean '%s'?", what, key, best);
	return ytree_error(t, node, err, "unknown %s '%s' (valid: %s)", what, key, valid);
}

static bool
copy_text(const struct ytree *t, const yaml_node_t *v, const char *key, char *dst, size_t size,
	  struct plan_error *err)
{
	const char *s = ytree_scalar(v);

	if (!s)
		return ytree_error(t, v, err, "'%s' must be a single value", key);
	if (strlen(s) >= size)
		return ytree_error(t, v, err, "'%s' is longer than %zu characters", key, size - 1);
	memcpy(dst, s, strlen(s) + 1);
	return true;
}

/* Where @v starts, 1-based, into @line and @column. */
static void
mark_of(const yaml_node_t *v, int *line, int *column)
{
	*line = (int)v->start_mark.line + 1;
	*column = (int)v->start_mark.column + 1;
}

/* Copy the value of @v into the next value of axis @a. */
static bool
add_value(const struct ytree *t, const yaml_node_t *v, const char *key, struct study_axis *a,
	  struct plan_error *err)
{
	char text[STUDY_VALUE_LEN];

	if (!copy_text(t, v, key, text, sizeof(text), err))
		return false;
	if (!study_axis_add(a, text))
		return ytree_error(t, v, err, "out of memory for the values of '%s'", key);
	mark_of(v, &a->value_line[a->n - 1], &a->value_column[a->n - 1]);
	return true;
}

/* What the handlers of the top-level keys share. */
struct parse {
	struct study *s;
	struct ytree *t;
	yaml_node_t *zip;   /* applied once every axis is read */
};

struct top_key;

/* Reads the value @v of top-level key @k. */
typedef bool top_fn(struct parse *p, const struct top_key *k, yaml_node_t *v, struct plan_error *err);

/* A top-level key of a study file (plan-cli-profiles(5), STUDY FILES). */
struct top_key {
	const char *name;
	top_fn *parse;
	size_t offset, size;   /* parse_text: the text field of struct study */
};

static bool
parse_text(struct parse *p, const struct top_key *k, yaml_node_t *v, struct plan_error *err)
{
	return copy_text(p->t, v, k->name, (char *)p->s + k->offset, k->size, err);
}

static bool
parse_mode(struct parse *p, const struct top_key *k, yaml_node_t *v, struct plan_error *err)
{
	const char *m = ytree_scalar(v);

	(void)k;
	if (m && strcmp(m, "predict") == 0)
		p->s->mode = STUDY_PREDICT;
	else if (m && strcmp(m, "optimize") == 0)
		p->s->mode = STUDY_OPTIMIZE;
	else
		return ytree_error(p->t, v, err, "unknown value '%s' for 'mode' (valid: predict, optimize)",
				   m ? m : "");
	return true;
}

/* The values of @a: one scalar or a list. */
static bool
axis_values(struct ytree *t, const char *key, yaml_node_t *v, struct study_axis *a, struct plan_error *err)
{
	if (v->type == YAML_SCALAR_NODE)
		return add_value(t, v, key, a, err);
	if (v->type != YAML_SEQUENCE_NODE)
		return ytree_error(t, v, err, "axis '%s' must be a value or a list of values", key);
	for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
		if (a->n == STUDY_MAX_VALUES)
			return ytree_error(t, v, err, "axis '%s' has more than %d values", key, STUDY_MAX_VALUES);
		if (!add_value(t, ytree_node(t, *i), key, a, err))
			return false;
	}
	if (a->n == 0)
		return ytree_error(t, v, err, "axis '%s' has no values", key);
	return true;
}

static bool
parse_axes(struct parse *p, const struct top_key *tk, yaml_node_t *map, struct plan_error *err)
{
	struct study *s = p->s;
	struct ytree *t = p->t;

	(void)tk;
	if (map->type != YAML_MAPPING_NODE)
		return ytree_error(t, map, err, "'axes' must be a mapping of axis names to lists of values");
	for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < map->data.mapping.pairs.top; q++) {
		yaml_node_t *k = ytree_node(t, q->key), *v = ytree_node(t, q->value);
		int kind = lookup(axis_name, ytree_scalar(k));
		struct study_axis *a;

		if (kind < 0)
			return unknown(t, k, "axis", ytree_scalar(k), axis_name, err);
		if (kind == AXIS_REFERENCE)
			return ytree_error(t, k, err, "'reference' is its own block (reference: {name, values}), not an axis");
		if (s->naxes == STUDY_MAX_AXES)
			return ytree_error(t, k, err, "more than %d axes", STUDY_MAX_AXES);
		a = &s->axes[s->naxes++];
		a->kind = kind;
		mark_of(k, &a->line, &a->column);
		if (!axis_values(t, ytree_scalar(k), v, a, err))
			return false;
	}
	return true;
}

static bool
parse_list(struct ytree *t, yaml_node_t *v, const char *key, struct plan_error *err)
{
	if (v->type != YAML_SEQUENCE_NODE)
		return ytree_error(t, v, err, "'%s' must be a list", key);
	return true;
}

static bool
parse_zip(struct parse *p, const struct top_key *k, yaml_node_t *v, struct plan_error *err)
{
	if (!parse_list(p->t, v, k->name, err))
		return false;
	p->zip = v;
	return true;
}

/* A key of the plan: block: an axis fixed for every cell, or a switch. */
struct plan_key {
	int axis;              /* enum study_axis_kind; -1: a switch */
	const char *name;      /* a switch's name (an axis is named by study_axis_name) */
	size_t flag;           /* a switch's bool in struct study */
	bool negated;          /* the bool says the opposite of the key (dp_overlap) */
	bool tristate;         /* the flag is an int, -1 until given (flash_attention) */
};

/* The switches of the plan: block (the sweep's --sequence-parallel,
 * --flash-attention, --no-dp-overlap, --tp-overlap); every other key is an
 * axis fixed for every cell: the compressor, framework, GPUs, links and
 * each plan attribute. */
static const struct plan_key plan_switches[] = {
	{ -1, "sequence_parallel", offsetof(struct study, sequence_parallel), false, false },
	{ -1, "flash_attention", offsetof(struct study, flash_attention), false, true },
	{ -1, "dp_overlap", offsetof(struct study, no_dp_overlap), true, false },
	{ -1, "tp_overlap", offsetof(struct study, tp_overlap), false, false },
};
#define NSWITCHES ((int)(sizeof(plan_switches) / sizeof(plan_switches[0])))

/* The @i-th plan: key, NULL past the last: the switches, then the axes
 * but model, cluster and reference, and the attributes the switches name. */
static const struct plan_key *
plan_key(int i, struct plan_key *buf)
{
	if (i < NSWITCHES)
		return i >= 0 ? &plan_switches[i] : NULL;
	for (int k = 0, j = NSWITCHES; k < AXIS_COUNT; k++) {
		const char *name = study_axis_name(k);
		bool taken = k == AXIS_MODEL || k == AXIS_CLUSTER || k == AXIS_REFERENCE;

		for (int w = 0; w < NSWITCHES && !taken; w++)
			taken = strcmp(plan_switches[w].name, name) == 0;
		if (!taken && j++ == i) {
			*buf = (struct plan_key){ k, NULL, 0, false, false };
			return buf;
		}
	}
	return NULL;
}

static const char *
plan_key_name(int i)
{
	struct plan_key buf;
	const struct plan_key *k = plan_key(i, &buf);

	return !k ? NULL : k->axis >= 0 ? study_axis_name(k->axis) : k->name;
}

static bool
parse_switch(struct parse *p, const struct plan_key *pk, yaml_node_t *v, const char *key, const char *val,
	     struct plan_error *err)
{
	bool b;

	if (strcmp(val, "true") == 0)
		b = true;
	else if (strcmp(val, "false") == 0)
		b = false;
	else
		return ytree_error(p->t, v, err, "'%s' must be true or false, got '%s'", key, val);
	if (pk->negated)
		b = !b;
	if (pk->tristate)
		*(int *)((char *)p->s + pk->flag) = b;
	else
		*(bool *)((char *)p->s + pk->flag) = b;
	return true;
}

static bool
parse_plan(struct parse *p, const struct top_key *tk, yaml_node_t *map, struct plan_error *err)
{
	struct ytree *t = p->t;

	(void)tk;
	if (map->type != YAML_MAPPING_NODE)
		return ytree_error(t, map, err, "'plan' must be a mapping of plan options");
	for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < map->data.mapping.pairs.top; q++) {
		yaml_node_t *k = ytree_node(t, q->key), *v = ytree_node(t, q->value);
		const char *key = ytree_scalar(k), *val = ytree_scalar(v);
		int i = lookup(plan_key_name, key);
		struct plan_key buf;
		const struct plan_key *pk = i >= 0 ? plan_key(i, &buf) : NULL;

		if (!pk)
			return unknown(t, k, "plan option", key, plan_key_name, err);
		if (!val)
			return ytree_error(t, v, err, "plan option '%s' must be a single value", key);
		if (pk->axis < 0) {
			if (!parse_switch(p, pk, v, key, val, err))
				return false;
		} else {
			int axis = pk->axis;

			if (!copy_text(t, v, key, p->s->fixed[axis], STUDY_VALUE_LEN, err))
				return false;
			mark_of(v, &p->s->fixed_line[axis], &p->s->fixed_column[axis]);
		}
	}
	return true;
}

static bool
parse_metrics(struct parse *p, const struct top_key *k, yaml_node_t *v, struct plan_error *err)
{
	struct study *s = p->s;
	struct ytree *t = p->t;

	if (!parse_list(t, v, k->name, err))
		return false;
	s->nmetrics = 0;
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *n = ytree_node(t, *it);
		int mtr = ytree_scalar(n) ? lookup(metric_name, ytree_scalar(n)) : -1;

		if (mtr < 0)
			return unknown(t, n, "metric", ytree_scalar(n) ? ytree_scalar(n) : "?", metric_name, err);
		if (s->nmetrics == STUDY_MAX_METRICS)
			return ytree_error(t, n, err, "more than %d metrics", STUDY_MAX_METRICS);
		/* A metric twice was a second, identical column. */
		for (int i = 0; i < s->nmetrics; i++)
			if (s->metrics[i] == mtr)
				return ytree_error(t, n, err, "'metrics' names '%s' twice", study_metric_names[mtr]);
		s->metrics[s->nmetrics++] = mtr;
	}
	if (s->nmetrics == 0)
		return ytree_error(t, v, err, "'metrics' is empty");
	return true;
}

/* latex_fit and plot_log: one of their names. */
static bool
parse_choice_key(struct parse *p, const struct top_key *k, yaml_node_t *v, struct plan_error *err)
{
	const char *const *names = strcmp(k->name, "latex_fit") == 0 ? study_latex_fit_names : study_plot_log_names;
	int *field = (int *)((char *)p->s + k->offset);
	const char *text = ytree_scalar(v);
	char valid[128] = "";

	for (int i = 0; names[i]; i++) {
		if (text && strcmp(text, names[i]) == 0) {
			*field = i;
			return true;
		}
		snprintf(valid + strlen(valid), sizeof(valid) - strlen(valid), "%s%s", i ? ", " : "", names[i]);
	}
	return ytree_error(p->t, v, err, "unknown value '%s' for '%s' (valid: %s)", text ? text : "", k->name, valid);
}

/* train_tokens: a positive number of tokens, "2e12" or "15000000000000". */
static bool
parse_train_tokens(struct parse *p, const struct top_key *k, yaml_node_t *v, struct plan_error *err)
{
	const char *text = ytree_scalar(v);
	double d;

	(void)k;
	if (!text || !num_parse_double(text, &d) || !(d >= 1) || d > STUDY_MAX_TRAIN_TOKENS)
		return ytree_error(p->t, v, err, "'train_tokens' must be a number of tokens from 1 to %g, got '%s'",
				   STUDY_MAX_TRAIN_TOKENS, text ? text : "?");
	p->s->train_tokens = d;
	mark_of(v, &p->s->train_tokens_line, &p->s->train_tokens_column);
	return true;
}

/* max_cells: the cell cap, a whole number from 1 to STUDY_MAX_CELLS_LIMIT. */
static bool
parse_max_cells(struct parse *p, const struct top_key *k, yaml_node_t *v, struct plan_error *err)
{
	const char *text = ytree_scalar(v);
	long n;

	(void)k;
	if (!text || !num_parse_long(text, 1, STUDY_MAX_CELLS_LIMIT, &n))
		return ytree_error(p->t, v, err, "'max_cells' must be a whole number of cells from 1 to %ld, got '%s'",
				   STUDY_MAX_CELLS_LIMIT, text ? text : "?");
	p->s->max_cells = n;
	mark_of(v, &p->s->max_cells_line, &p->s->max_cells_column);
	return true;
}

/* The axis is looked up once every axis is read (resolve_baseline). */
static bool
parse_baseline(struct parse *p, const struct top_key *k, yaml_node_t *v, struct plan_error *err)
{
	struct study *s = p->s;
	struct ytree *t = p->t;
	yaml_node_pair_t *b;

	(void)k;
	if (v->type != YAML_MAPPING_NODE || v->data.mapping.pairs.top - v->data.mapping.pairs.start != 1)
		return ytree_error(t, v, err, "'baseline' must be one 'axis: value' pair, e.g. {compressor: none}");
	b = v->data.mapping.pairs.start;
	s->baseline_axis = -2 - lookup(axis_name, ytree_scalar(ytree_node(t, b->key)));
	if (s->baseline_axis == -1)
		return unknown(t, ytree_node(t, b->key), "axis", ytree_scalar(ytree_node(t, b->key)), axis_name, err);
	mark_of(ytree_node(t, b->value), &s->baseline_line, &s->baseline_column);
	return copy_text(t, ytree_node(t, b->value), "baseline", s->baseline_value, sizeof(s->baseline_value), err);
}

static bool
parse_reference(struct parse *p, const struct top_key *k, yaml_node_t *v, struct plan_error *err)
{
	struct study *s = p->s;
	struct ytree *t = p->t;
	yaml_node_t *nm = ytree_find(t, v, "name"), *vals = ytree_find(t, v, "values");
	struct study_axis *a;

	(void)k;
	if (v->type != YAML_MAPPING_NODE || !vals || vals->type != YAML_SEQUENCE_NODE)
		return ytree_error(t, v, err, "'reference' needs 'name' and a list of 'values'");
	if (nm && !copy_text(t, nm, "reference.name", s->reference_name, sizeof(s->reference_name), err))
		return false;
	if (s->naxes == STUDY_MAX_AXES)
		return ytree_error(t, v, err, "more than %d axes", STUDY_MAX_AXES);
	a = &s->axes[s->naxes++];
	a->kind = AXIS_REFERENCE;
	a->zipped = true;
	mark_of(v, &a->line, &a->column);
	for (yaml_node_item_t *it = vals->data.sequence.items.start; it < vals->data.sequence.items.top; it++) {
		if (a->n == STUDY_MAX_VALUES)
			return ytree_error(t, vals, err, "too many reference values");
		if (!add_value(t, ytree_node(t, *it), "reference", a, err))
			return false;
	}
	return true;
}

#define TEXT_KEY(field) { #field, parse_text, offsetof(struct study, field), sizeof(((struct study *)NULL)->field) }

/* In the order the messages list them. */
static const struct top_key top_keys[] = {
	TEXT_KEY(name),
	TEXT_KEY(title),
	TEXT_KEY(caption),
	TEXT_KEY(label),
	{ "mode", parse_mode, 0, 0 },
	{ "axes", parse_axes, 0, 0 },
	{ "zip", parse_zip, 0, 0 },
	{ "plan", parse_plan, 0, 0 },
	{ "metrics", parse_metrics, 0, 0 },
	{ "train_tokens", parse_train_tokens, 0, 0 },
	{ "max_cells", parse_max_cells, 0, 0 },
	{ "latex_fit", parse_choice_key, offsetof(struct study, latex_fit), 0 },
	{ "plot_log", parse_choice_key, offsetof(struct study, plot_log), 0 },
	{ "baseline", parse_baseline, 0, 0 },
	{ "reference", parse_reference, 0, 0 },
	{ NULL, NULL, 0, 0 },
};

static const char *
top_key_name(int i)
{
	return top_keys[i].name;
}

/* Mark the axes that 'zip' names. */
static bool
apply_zip(struct parse *p, struct plan_error *err)
{
	yaml_node_t *zip = p->zip;

	for (yaml_node_item_t *it = zip->data.sequence.items.start; it < zip->data.sequence.items.top; it++) {
		yaml_node_t *n = ytree_node(p->t, *it);
		int kind = ytree_scalar(n) ? lookup(axis_name, ytree_scalar(n)) : -1;
		int a = kind >= 0 ? study_find_axis(p->s, kind) : -1;

		if (a < 0)
			return ytree_error(p->t, n, err, "'zip' names '%s', which is not an axis",
					   ytree_scalar(n) ? ytree_scalar(n) : "?");
		p->s->axes[a].zipped = true;
	}
	return true;
}

static bool
resolve_baseline(struct parse *p, struct plan_error *err)
{
	struct study *s = p->s;
	int kind = -2 - s->baseline_axis;

	s->baseline_axis = study_find_axis(s, kind);
	if (s->baseline_axis < 0)
		return ytree_error(p->t, ytree_find_path(p->t, "baseline"), err,
				   "the baseline axis '%s' is not an axis of the study", study_axis_name(kind));
	return true;
}

static bool
parse_top(struct study *s, struct ytree *t, yaml_node_t *root, struct plan_error *err)
{
	struct parse p = { s, t, NULL };

	if (root->type != YAML_MAPPING_NODE)
		return ytree_error(t, root, err, "expected a mapping of keys");
	for (yaml_node_pair_t *q = root->data.mapping.pairs.start; q < root->data.mapping.pairs.top; q++) {
		yaml_node_t *k = ytree_node(t, q->key), *v = ytree_node(t, q->value);
		const char *key = ytree_scalar(k);
		int i = lookup(top_key_name, key);

		if (i < 0)
			return unknown(t, k, "key", key, top_key_name, err);
		if (!top_keys[i].parse(&p, &top_keys[i], v, err))
			return false;
	}
	if (p.zip && !apply_zip(&p, err))
		return false;
	if (s->baseline_axis <= -2 && !resolve_baseline(&p, err))
		return false;
	return true;
}

int
study_find_axis(const struct study *s, int kind)
{
	for (int i = 0; i < s->naxes; i++)
		if (s->axes[i].kind == kind)
			return i;
	return -1;
}

const char *
study_cell_value(const struct study *s, const int *index, int kind, int *line, int *column)
{
	int a = study_find_axis(s, kind), l = 0, c = 0;
	const char *v = NULL;

	if (a >= 0) {
		v = s->axes[a].values[index[a]];
		l = s->axes[a].value_line[index[a]];
		c = s->axes[a].value_column[index[a]];
	} else if (s->fixed[kind][0]) {
		v = s->fixed[kind];
		l = s->fixed_line[kind];
		c = s->fixed_column[kind];
	}
	if (line)
		*line = l;
	if (column)
		*column = c;
	return v;
}

static bool
study_from_tree(struct study *s, struct ytree *t, struct plan_error *err)
{
	bool ok;

	study_init(s);
	snprintf(s->file, sizeof(s->file), "%s", t->file);
	ok = parse_top(s, t, ytree_root(t), err);
	ytree_release(t);
	return ok;
}

bool
study_load_file(struct study *s, const char *path, struct plan_error *err)
{
	struct ytree t;

	if (!ytree_load_file(&t, path, err))
		return false;
	return study_from_tree(s, &t, err);
}

bool
study_load_string(struct study *s, const char *name, const char *text, struct plan_error *err)
{
	struct ytree t;

	if (!ytree_load_string(&t, name, text, strlen(text), err))
		return false;
	return study_from_tree(s, &t, err);
}

/*
 * The axes and their value counts, "tp 8 x pp 4 x zip(model, gpus) 10",
 * into @buf: what the cell-cap message names.
 */
static void
describe_axes(const struct study *s, char *buf, size_t size)
{
	size_t len = 0;
	bool zip_done = false;

	buf[0] = '\0';
	for (int i = 0; i < s->naxes && len < size; i++) {
		const struct study_axis *a = &s->axes[i];
		int w;

		if (a->zipped && zip_done)
			continue;
		if (a->zipped) {
			w = snprintf(buf + len, size - len, "%szip(", len ? " x " : "");
			for (int j = i, first = 1; j < s->naxes && w >= 0 && len + (size_t)w < size; j++)
				if (s->axes[j].zipped) {
					int m = snprintf(buf + len + w, size - len - w, "%s%s", first ? "" : ", ",
							 study_axis_name(s->axes[j].kind));
					first = 0;
					if (m < 0)
						break;
					w += m;
				}
			if (w >= 0 && len + (size_t)w < size)
				w += snprintf(buf + len + w, size - len - w, ") %d", a->n);
			zip_done = true;
		} else {
			w = snprintf(buf + len, size - len, "%s%s %d", len ? " x " : "", study_axis_name(a->kind), a->n);
		}
		if (w < 0)
			break;
		len += (size_t)w;
	}
	if (len >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

/*
 * The study's cell count into *@n, zipped axes counted once; false with
 * @err when zipped axes differ in length. A double: 16 axes of 512 values
 * overflow a long; exact while below 2^53.
 */
static bool
count_cells(const struct study *s, double *n, struct plan_error *err)
{
	int zip_n = -1;

	*n = 1;
	for (int i = 0; i < s->naxes; i++) {
		const struct study_axis *a = &s->axes[i];

		if (a->zipped) {
			if (zip_n >= 0 && a->n != zip_n)
				return plan_error_set(err, PLAN_ERR_INPUT, s->file, a->line, a->column,
						      "zipped axis '%s' has %d values, the others %d",
						      study_axis_name(a->kind), a->n, zip_n);
			if (zip_n < 0) {
				zip_n = a->n;
				*n *= a->n;
			}
		} else {
			*n *= a->n;
		}
	}
	return true;
}

/* False with @err when the @n cells are more than max_cells, or the default of the mode. */
static bool
check_cell_cap(const struct study *s, double n, struct plan_error *err)
{
	long cap = s->max_cells > 0 ? s->max_cells :
		   s->mode == STUDY_OPTIMIZE ? STUDY_DEFAULT_MAX_CELLS_OPTIMIZE : STUDY_DEFAULT_MAX_CELLS;
	char axes[400];

	if (n <= (double)cap)
		return true;
	describe_axes(s, axes, sizeof(axes));
	if (s->max_cells > 0)
		return plan_error_set(err, PLAN_ERR_INPUT, s->file, s->max_cells_line, s->max_cells_column,
				      "the study has %.15g cells (%s), more than the max_cells of %ld%s", n, axes,
				      cap, cap < STUDY_MAX_CELLS_LIMIT ? ": raise max_cells (or --max-cells)" :
									 ", the most a sweep takes");
	return plan_error_set(err, PLAN_ERR_INPUT, s->file, 0, 0,
			      "the study has %.15g cells (%s), more than the %ld a sweep in %s mode takes "
			      "by default: give max_cells (or --max-cells) up to %ld to run it",
			      n, axes, cap, s->mode == STUDY_OPTIMIZE ? "optimize" : "predict",
			      STUDY_MAX_CELLS_LIMIT);
}

/* False with @err when 'reference' values have no zipped axes to go with. */
static bool
check_reference(const struct study *s, struct plan_error *err)
{
	int r = study_find_axis(s, AXIS_REFERENCE), zipped = 0;

	if (r < 0)
		return true;
	for (int i = 0; i < s->naxes; i++)
		zipped += s->axes[i].zipped;
	if (zipped < 2)
		return plan_error_set(err, PLAN_ERR_INPUT, s->file, s->axes[r].line, s->axes[r].column,
				      "'reference' values go with zipped axes: list the axes they "
				      "belong to in 'zip'");
	return true;
}

/* False with @err when the study lacks what it needs: the tokens its metrics train on, a model, a cluster. */
static bool
check_needs(const struct study *s, struct plan_error *err)
{
	for (int k = 0; k < s->nmetrics; k++)
		if ((s->metrics[k] == METRIC_TRAIN_DAYS || s->metrics[k] == METRIC_GPU_HOURS) && s->train_tokens <= 0)
			return plan_error_set(err, PLAN_ERR_INPUT, s->file, 0, 0,
					      "the metric '%s' needs the tokens to train on: give train_tokens "
					      "(or --train-tokens)", study_metric_names[s->metrics[k]]);
	if (study_find_axis(s, AXIS_MODEL) < 0 && !s->fixed[AXIS_MODEL][0])
		return plan_error_set(err, PLAN_ERR_INPUT, s->file, 0, 0, "the study names no model (axes: model: [...])");
	if (study_find_axis(s, AXIS_CLUSTER) < 0 && !s->fixed[AXIS_CLUSTER][0])
		return plan_error_set(err, PLAN_ERR_INPUT, s->file, 0, 0, "the study names no cluster (axes: cluster: [...])");
	return true;
}

bool
study_check(const struct study *s, long *cells, struct plan_error *err)
{
	double n;

	if (!count_cells(s, &n, err) || !check_cell_cap(s, n, err) || !check_reference(s, err) ||
	    !check_needs(s, err))
		return false;
	*cells = (long)n;
	return true;
}

void
study_cell_indices(const struct study *s, long cell, int *index)
{
	int zip_index = -1;

	/* The last axis varies fastest; zipped axes count once, at the first. */
	for (int i = s->naxes - 1; i >= 0; i--) {
		const struct study_axis *a = &s->axes[i];
		bool first_zip = a->zipped;

		if (a->zipped)
			for (int j = 0; j < i; j++)
				if (s->axes[j].zipped)
					first_zip = false;
		if (a->zipped && !first_zip)
			continue;
		index[i] = (int)(cell % a->n);
		cell /= a->n;
		if (a->zipped)
			zip_index = index[i];
	}
	for (int i = 0; i < s->naxes; i++)
		if (s->axes[i].zipped)
			index[i] = zip_index;
}
