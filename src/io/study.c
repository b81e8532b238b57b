#include <stdio.h>
#include <string.h>

#include "plan/numparse.h"
#include "io/schema.h"
#include "io/study.h"
#include "io/yamltree.h"

const char *const study_axis_names[] = {
	"model", "cluster", "compressor", "gpus", "nic_bandwidth", "intra_bandwidth",
	"global_batch", "seq_len", "tp", "pp", "dp", "vpp", "micro_batch", "recompute", "zero",
	"ep", "moe_routing", "mics_group", "compress", "reference", NULL,
};

const char *const study_metric_names[] = {
	"iteration_time", "tflops_per_gpu", "mfu", "tokens_per_s", "speedup",
	"weak_scaling_efficiency", "strong_scaling_efficiency", "memory", "fits", "plan", NULL,
};

static const char *const top_keys[] = {
	"name", "title", "caption", "label", "mode", "axes", "zip", "plan", "metrics", "baseline",
	"reference", NULL,
};

static const char *const plan_keys[] = {
	"tp", "pp", "dp", "vpp", "micro_batch", "recompute", "zero", "ep", "moe_routing",
	"mics_group", "compress", "global_batch", "seq_len", "gpus", "compressor",
	"sequence_parallel", "flash_attention", "dp_overlap", NULL,
};

void
study_init(struct study *s)
{
	memset(s, 0, sizeof(*s));
	s->mode = STUDY_PREDICT;
	s->nmetrics = 1;
	s->metrics[0] = METRIC_TIME;
	s->baseline_axis = -1;
	snprintf(s->reference_name, sizeof(s->reference_name), "reference");
}

static int
lookup(const char *const *names, const char *key)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], key) == 0)
			return i;
	return -1;
}

/* "unknown key 'x'; did you mean 'y'?" or the list of choices. */
static bool
unknown(struct ytree *t, yaml_node_t *node, const char *what, const char *key,
	const char *const *names, struct plan_error *err)
{
	const char *best = NULL;
	int best_d = 3;
	char valid[512] = "";

	for (int i = 0; names[i]; i++) {
		int d = schema_edit_distance(key, names[i]);

		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
		if (strlen(valid) + strlen(names[i]) + 3 < sizeof(valid)) {
			if (valid[0])
				strcat(valid, ", ");
			strcat(valid, names[i]);
		}
	}
	if (best)
		return ytree_error(t, node, err, "unknown %s '%s'; did you mean '%s'?", what, key, best);
	return ytree_error(t, node, err, "unknown %s '%s' (valid: %s)", what, key, valid);
}

static bool
copy_text(struct ytree *t, yaml_node_t *v, const char *key, char *dst, size_t size,
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

static bool
parse_axes(struct study *s, struct ytree *t, yaml_node_t *map, struct plan_error *err)
{
	if (map->type != YAML_MAPPING_NODE)
		return ytree_error(t, map, err, "'axes' must be a mapping of axis names to lists of values");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = ytree_node(t, p->key), *v = ytree_node(t, p->value);
		int kind = lookup(study_axis_names, ytree_scalar(k));
		struct study_axis *a;

		if (kind < 0 || kind == AXIS_REFERENCE)
			return kind < 0 ? unknown(t, k, "axis", ytree_scalar(k), study_axis_names, err)
					: ytree_error(t, k, err, "'reference' is its own block (reference: {name, values}), not an axis");
		if (s->naxes == STUDY_MAX_AXES)
			return ytree_error(t, k, err, "more than %d axes", STUDY_MAX_AXES);
		a = &s->axes[s->naxes++];
		a->kind = kind;
		a->line = (int)k->start_mark.line + 1;
		a->column = (int)k->start_mark.column + 1;
		if (v->type == YAML_SCALAR_NODE) {
			if (!copy_text(t, v, ytree_scalar(k), a->values[0], STUDY_VALUE_LEN, err))
				return false;
			a->n = 1;
			continue;
		}
		if (v->type != YAML_SEQUENCE_NODE)
			return ytree_error(t, v, err, "axis '%s' must be a value or a list of values", ytree_scalar(k));
		for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
			if (a->n == STUDY_MAX_VALUES)
				return ytree_error(t, v, err, "axis '%s' has more than %d values", ytree_scalar(k),
						   STUDY_MAX_VALUES);
			if (!copy_text(t, ytree_node(t, *i), ytree_scalar(k), a->values[a->n++], STUDY_VALUE_LEN, err))
				return false;
		}
		if (a->n == 0)
			return ytree_error(t, v, err, "axis '%s' has no values", ytree_scalar(k));
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
parse_plan(struct study *s, struct ytree *t, yaml_node_t *map, struct plan_error *err)
{
	if (map->type != YAML_MAPPING_NODE)
		return ytree_error(t, map, err, "'plan' must be a mapping of plan options");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = ytree_node(t, p->key), *v = ytree_node(t, p->value);
		const char *key = ytree_scalar(k), *val = ytree_scalar(v);
		int i = lookup(plan_keys, key), kind;

		if (i < 0)
			return unknown(t, k, "plan option", key, plan_keys, err);
		if (!val)
			return ytree_error(t, v, err, "plan option '%s' must be a single value", key);
		if (strcmp(key, "sequence_parallel") == 0 || strcmp(key, "flash_attention") == 0 ||
		    strcmp(key, "dp_overlap") == 0) {
			bool b;

			if (strcmp(val, "true") == 0)
				b = true;
			else if (strcmp(val, "false") == 0)
				b = false;
			else
				return ytree_error(t, v, err, "'%s' must be true or false, got '%s'", key, val);
			if (key[0] == 's')
				s->sequence_parallel = b;
			else if (key[0] == 'f')
				s->flash_attention = b;
			else
				s->no_dp_overlap = !b;
			continue;
		}
		kind = lookup(study_axis_names, key);
		if (!copy_text(t, v, key, s->fixed[kind], STUDY_VALUE_LEN, err))
			return false;
	}
	return true;
}

static bool
parse_top(struct study *s, struct ytree *t, yaml_node_t *root, struct plan_error *err)
{
	yaml_node_t *zip = NULL;

	if (root->type != YAML_MAPPING_NODE)
		return ytree_error(t, root, err, "expected a mapping of keys");
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = ytree_node(t, p->key), *v = ytree_node(t, p->value);
		const char *key = ytree_scalar(k);
		int i = lookup(top_keys, key);

		switch (i) {
		case 0: if (!copy_text(t, v, key, s->name, sizeof(s->name), err)) return false; break;
		case 1: if (!copy_text(t, v, key, s->title, sizeof(s->title), err)) return false; break;
		case 2: if (!copy_text(t, v, key, s->caption, sizeof(s->caption), err)) return false; break;
		case 3: if (!copy_text(t, v, key, s->label, sizeof(s->label), err)) return false; break;
		case 4: {
			const char *m = ytree_scalar(v);

			if (m && strcmp(m, "predict") == 0)
				s->mode = STUDY_PREDICT;
			else if (m && strcmp(m, "optimize") == 0)
				s->mode = STUDY_OPTIMIZE;
			else
				return ytree_error(t, v, err, "unknown value '%s' for 'mode' (valid: predict, optimize)",
						   m ? m : "");
			break;
		}
		case 5: if (!parse_axes(s, t, v, err)) return false; break;
		case 6: if (!parse_list(t, v, key, err)) return false; zip = v; break;
		case 7: if (!parse_plan(s, t, v, err)) return false; break;
		case 8:
			if (!parse_list(t, v, key, err))
				return false;
			s->nmetrics = 0;
			for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
				yaml_node_t *n = ytree_node(t, *it);
				int mtr = ytree_scalar(n) ? lookup(study_metric_names, ytree_scalar(n)) : -1;

				if (mtr < 0)
					return unknown(t, n, "metric", ytree_scalar(n) ? ytree_scalar(n) : "?",
						       study_metric_names, err);
				if (s->nmetrics == STUDY_MAX_METRICS)
					return ytree_error(t, n, err, "more than %d metrics", STUDY_MAX_METRICS);
				s->metrics[s->nmetrics++] = mtr;
			}
			if (s->nmetrics == 0)
				return ytree_error(t, v, err, "'metrics' is empty");
			break;
		case 9: {
			yaml_node_pair_t *b;

			if (v->type != YAML_MAPPING_NODE || v->data.mapping.pairs.top - v->data.mapping.pairs.start != 1)
				return ytree_error(t, v, err, "'baseline' must be one 'axis: value' pair, e.g. {compressor: none}");
			b = v->data.mapping.pairs.start;
			s->baseline_axis = -2 - lookup(study_axis_names, ytree_scalar(ytree_node(t, b->key)));
			if (s->baseline_axis == -1)
				return unknown(t, ytree_node(t, b->key), "axis", ytree_scalar(ytree_node(t, b->key)),
					       study_axis_names, err);
			if (!copy_text(t, ytree_node(t, b->value), "baseline", s->baseline_value,
				       sizeof(s->baseline_value), err))
				return false;
			break;
		}
		case 10: {
			yaml_node_t *nm = ytree_find(t, v, "name"), *vals = ytree_find(t, v, "values");
			struct study_axis *a;

			if (v->type != YAML_MAPPING_NODE || !vals || vals->type != YAML_SEQUENCE_NODE)
				return ytree_error(t, v, err, "'reference' needs 'name' and a list of 'values'");
			if (nm && !copy_text(t, nm, "reference.name", s->reference_name, sizeof(s->reference_name), err))
				return false;
			if (s->naxes == STUDY_MAX_AXES)
				return ytree_error(t, v, err, "more than %d axes", STUDY_MAX_AXES);
			a = &s->axes[s->naxes++];
			a->kind = AXIS_REFERENCE;
			a->zipped = true;
			a->line = (int)v->start_mark.line + 1;
			a->column = (int)v->start_mark.column + 1;
			for (yaml_node_item_t *it = vals->data.sequence.items.start; it < vals->data.sequence.items.top; it++) {
				if (a->n == STUDY_MAX_VALUES)
					return ytree_error(t, vals, err, "too many reference values");
				if (!copy_text(t, ytree_node(t, *it), "reference", a->values[a->n++], STUDY_VALUE_LEN, err))
					return false;
			}
			break;
		}
		default:
			return unknown(t, k, "key", key, top_keys, err);
		}
	}
	if (zip) {
		for (yaml_node_item_t *it = zip->data.sequence.items.start; it < zip->data.sequence.items.top; it++) {
			yaml_node_t *n = ytree_node(t, *it);
			int kind = ytree_scalar(n) ? lookup(study_axis_names, ytree_scalar(n)) : -1;
			int a = kind >= 0 ? study_find_axis(s, kind) : -1;

			if (a < 0)
				return ytree_error(t, n, err, "'zip' names '%s', which is not an axis",
						   ytree_scalar(n) ? ytree_scalar(n) : "?");
			s->axes[a].zipped = true;
		}
	}
	if (s->baseline_axis <= -2) {
		int kind = -2 - s->baseline_axis;

		s->baseline_axis = study_find_axis(s, kind);
		if (s->baseline_axis < 0)
			return ytree_error(t, ytree_find_path(t, "baseline"), err,
					   "the baseline axis '%s' is not an axis of the study", study_axis_names[kind]);
	}
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

bool
study_check(const struct study *s, long *cells, struct plan_error *err)
{
	int zip_n = -1;
	long n = 1;

	for (int i = 0; i < s->naxes; i++) {
		const struct study_axis *a = &s->axes[i];

		if (a->zipped) {
			if (zip_n >= 0 && a->n != zip_n)
				return plan_error_set(err, PLAN_ERR_INPUT, s->file, a->line, a->column,
						      "zipped axis '%s' has %d values, the others %d",
						      study_axis_names[a->kind], a->n, zip_n);
			if (zip_n < 0) {
				zip_n = a->n;
				n *= a->n;
			}
		} else {
			n *= a->n;
		}
		if (n > 100000000L)
			return plan_error_set(err, PLAN_ERR_INPUT, s->file, a->line, a->column,
					      "the study has more than 1e8 cells");
	}
	{
		int r = study_find_axis(s, AXIS_REFERENCE);

		if (r >= 0) {
			int zipped = 0;

			for (int i = 0; i < s->naxes; i++)
				zipped += s->axes[i].zipped;
			if (zipped < 2)
				return plan_error_set(err, PLAN_ERR_INPUT, s->file, s->axes[r].line, s->axes[r].column,
						      "'reference' values go with zipped axes: list the axes they "
						      "belong to in 'zip'");
		}
	}
	if (study_find_axis(s, AXIS_MODEL) < 0 && !s->fixed[AXIS_MODEL][0])
		return plan_error_set(err, PLAN_ERR_INPUT, s->file, 0, 0, "the study names no model (axes: model: [...])");
	if (study_find_axis(s, AXIS_CLUSTER) < 0 && !s->fixed[AXIS_CLUSTER][0])
		return plan_error_set(err, PLAN_ERR_INPUT, s->file, 0, 0, "the study names no cluster (axes: cluster: [...])");
	*cells = n;
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
