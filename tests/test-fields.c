#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/fields.h"
#include "io/format.h"
#include "plan/estimate.h"
#include "plan/plan.h"
#include "testutil.h"
#include "plan/plan_attr.h"

/* Every row can be written: a name in at least one format, text, an accessor. */
START_TEST(test_fields_rows)
{
	const struct field *f = &field_table[_i];

	ck_assert_msg(f->key || f->csv, "row %d has neither a JSON key nor a CSV column", _i);
	ck_assert_msg(f->help && f->help[0] && f->unit, "row %d (%s) lacks a description or unit", _i,
		      f->key ? f->key : f->csv);
	if (f->source == FIELD_SRC_FUNC)
		ck_assert_msg(f->get != NULL, "%s: no accessor", f->key ? f->key : f->csv);
	if (f->csv && f->type == FIELD_NUM)
		ck_assert_msg(f->csv_format != NULL, "%s: a CSV number needs a format", f->csv);
	if (f->type == FIELD_NAME && f->source != FIELD_SRC_FUNC)
		ck_assert_msg(f->names != NULL, "%s: a name field needs its names", f->key);
	for (const char *c = f->key; c && *c; c++)
		ck_assert_msg(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_' || *c == '.',
			      "JSON key '%s' is not lower_case.dotted", f->key);
	for (size_t j = 0; j < (size_t)_i; j++) {
		const struct field *g = &field_table[j];

		ck_assert_msg(!f->key || !g->key || strcmp(f->key, g->key) != 0, "JSON key '%s' twice", f->key);
		ck_assert_msg(!f->csv || !g->csv || strcmp(f->csv, g->csv) != 0, "CSV column '%s' twice", f->csv);
	}
}
END_TEST

/* A report of GPT-3 175B on the test cluster, the plan of the golden test. */
struct fixture {
	struct model m;
	struct cluster c;
	struct plan p;
	struct estimate e;
	struct report r;
};

static void
fixture_init(struct fixture *x)
{
	struct plan_error err;

	test_load_model(&x->m, GPT3_YAML);
	test_load_cluster(&x->c, TEST_CLUSTER_YAML);
	plan_init(&x->p);
	x->p.tp = 8;
	x->p.pp = 12;
	x->p.dp = 4;
	x->p.global_batch = 64;
	x->p.seq_len = 2048;
	x->p.recompute = PLAN_RECOMPUTE_FULL;
	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(&x->m, &x->c, &x->p, NULL, &x->e, &err), "%s", err.message);
	x->r = (struct report){ .model = &x->m, .cluster = &x->c, .plan = &x->p, .est = &x->e };
}

/* The leaves of @v in document order, as dotted paths; returns the count. */
static int
json_leaves(json_t *v, const char *path, char (*out)[128], int n, int max)
{
	const char *k;
	json_t *child;

	if (!json_is_object(v)) {
		ck_assert_int_lt(n, max);
		snprintf(out[n], sizeof(out[n]), "%s", path);
		return n + 1;
	}
	json_object_foreach(v, k, child) {
		char sub[128];

		snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", k);
		n = json_leaves(child, sub, out, n, max);
	}
	return n;
}

/* The JSON object has the table's keys in the table's order, and its values. */
START_TEST(test_fields_json_order)
{
	struct fixture x;
	char keys[256][128];
	json_t *o, *layers;
	int n, k = 0;

	fixture_init(&x);
	o = format_json_object(&x.r);
	ck_assert_ptr_nonnull(o);
	n = json_leaves(o, "", keys, 0, 256);
	for (size_t i = 0; i < field_count; i++) {
		/* Fields that only some reports have (--seq-lengths) are left out. */
		if (!field_table[i].key || !field_present(&field_table[i], &x.r))
			continue;
		ck_assert_int_lt(k, n);
		ck_assert_str_eq(keys[k], field_table[i].key);
		k++;
	}
	ck_assert_int_eq(k, n);
	ck_assert_double_eq(json_real_value(json_object_get(o, "iteration_time_s")), x.e.iteration_time_s);
	/* 96 layers on 12 stages: 8 each; from_layer defaults to 96 / 2. */
	layers = json_object_get(json_object_get(o, "plan"), "stage_layers");
	ck_assert_int_eq((int)json_array_size(layers), 12);
	ck_assert_int_eq((int)json_integer_value(json_array_get(layers, 11)), 8);
	ck_assert_int_eq((int)json_integer_value(json_object_get(json_object_get(json_object_get(o, "plan"),
		"compression"), "from_layer")), 48);
	ck_assert(json_is_null(json_object_get(o, "compressor")));
	json_decref(o);
}
END_TEST

/* An array field has an element for every stage, past PLAN_MAX_STAGES too
 * (an even pipeline computes its layers, it does not store them). */
START_TEST(test_fields_all_stages)
{
	struct fixture x;
	const struct field *f = field_find("plan.stage_layers");
	struct field_value v;

	fixture_init(&x);
	x.p.pp = 2 * PLAN_MAX_STAGES;
	x.m.layers = 2 * PLAN_MAX_STAGES;
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(field_length(f, &x.r), 2 * PLAN_MAX_STAGES);
	field_get(f, &x.r, 2 * PLAN_MAX_STAGES - 1, &v);
	ck_assert_int_eq(v.type, FIELD_INT);
	ck_assert_int_eq(v.i, 1);
}
END_TEST

/* A CSV record has a field for each column of the header, in its format. */
START_TEST(test_fields_csv)
{
	struct fixture x;
	char head[2048], row[2048], want[64];
	int nh = 1, nr = 1;
	bool quoted = false;
	FILE *f = tmpfile();

	fixture_init(&x);
	ck_assert_ptr_nonnull(f);
	ck_assert(format_csv_header(f) && format_csv_row(f, &x.r));
	rewind(f);
	ck_assert_ptr_nonnull(fgets(head, sizeof(head), f));
	ck_assert_ptr_nonnull(fgets(row, sizeof(row), f));
	fclose(f);
	for (const char *c = head; *c; c++)
		nh += *c == ',';
	for (const char *c = row; *c; c++) {
		quoted ^= *c == '"';
		nr += *c == ',' && !quoted;
	}
	ck_assert_int_eq(nh, 62); /* the per-micro-batch host work's four last */
	ck_assert_int_eq(nr, nh);
	ck_assert_msg(strncmp(row, "\"gpt3\",\"test-a100\",384,8,12,4,1,1,64,2048,full,", 47) == 0, "%s", row);
	snprintf(want, sizeof(want), ",%.9g,", x.e.iteration_time_s);
	ck_assert_msg(strstr(row, want) != NULL, "%s lacks %s", row, want);
}
END_TEST

/*
 * The breakdown_s rows of field_table are the terms of
 * ESTIMATE_BREAKDOWN_TERMS, in its order, each reading its term, and the
 * CSV header has every term's column. The header keeps its own order of
 * columns, so a new term fails here until format_csv.c lists its column.
 */
START_TEST(test_fields_breakdown_terms)
{
	struct fixture x;
	char head[2048], key[64], col[64];
	int k = 0;
	FILE *f = tmpfile();

	fixture_init(&x);
	for (size_t i = 0; i < field_count; i++) {
		const struct field *r = &field_table[i];

		if (!r->key || strncmp(r->key, "breakdown_s.", 12) != 0)
			continue;
		ck_assert_int_lt(k, ESTIMATE_BREAKDOWN_COUNT);
		ck_assert_str_eq(field_leaf(r), estimate_breakdown_name(k));
		k++;
	}
	ck_assert_int_eq(k, ESTIMATE_BREAKDOWN_COUNT);
	ck_assert_ptr_nonnull(f);
	ck_assert(format_csv_header(f));
	rewind(f);
	ck_assert_ptr_nonnull(fgets(head, sizeof(head), f));
	fclose(f);
	head[strcspn(head, "\r\n")] = '\0';
	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++) {
		const struct field *r;
		struct field_value v;
		char *save = NULL, copy[sizeof(head)];
		bool found = false;

		snprintf(key, sizeof(key), "breakdown_s.%s", estimate_breakdown_name(i));
		snprintf(col, sizeof(col), "%s_s", estimate_breakdown_name(i));
		r = field_find(key);
		ck_assert_msg(r != NULL && field_find_csv(col) == r, "%s is not the CSV column %s", key, col);
		field_get(r, &x.r, 0, &v);
		ck_assert_double_eq(v.d, estimate_breakdown_get(&x.e.breakdown, i));
		strcpy(copy, head);
		for (char *c = strtok_r(copy, ",", &save); c && !found; c = strtok_r(NULL, ",", &save))
			found = strcmp(c, col) == 0;
		ck_assert_msg(found, "the CSV header lacks %s", col);
	}
}
END_TEST

/* MCBench's default compresses the upper half: from L/2, rounded down. */
/*
 * Every plan attribute (plan/plan_attr.h) is in the plan object: as
 * plan.NAME, or for a compression attribute in plan.compression (which
 * kept its names: compress is its tp, pp and dp flags). A new attribute
 * without an output field fails here.
 */
START_TEST(test_fields_plan_attributes)
{
	static const struct { int id; const char *key; } renamed[] = {
		{ PLAN_ATTR_COMPRESS, "plan.compression.dp" },
		{ PLAN_ATTR_COMPRESS_FROM_LAYER, "plan.compression.from_layer" },
		{ PLAN_ATTR_COMPRESS_FROM_STAGE, "plan.compression.from_stage" },
		{ PLAN_ATTR_DP_COMPRESS_SCHEME, "plan.compression.dp_scheme" },
		{ PLAN_ATTR_DP_COMPRESS_ON, "plan.compression.dp_on" },
	};

	for (int id = 0; id < PLAN_ATTR_COUNT; id++) {
		char key[96];

		snprintf(key, sizeof(key), "plan.%s", plan_attrs[id].name);
		for (size_t r = 0; r < sizeof(renamed) / sizeof(renamed[0]); r++)
			if (renamed[r].id == id)
				snprintf(key, sizeof(key), "%s", renamed[r].key);
		ck_assert_msg(field_find(key) != NULL, "plan attribute %s has no output field %s", plan_attrs[id].name,
			      key);
	}
}
END_TEST

START_TEST(test_fields_compress_from_layer)
{
	struct model m = { .layers = 7 };
	struct plan p;

	plan_init(&p);
	ck_assert_int_eq(plan_compress_from_layer(&p, &m), 3);
	p.compress.from_layer = 0;
	ck_assert_int_eq(plan_compress_from_layer(&p, &m), 0);
	p.compress.from_layer = 5;
	ck_assert_int_eq(plan_compress_from_layer(&p, &m), 5);
}
END_TEST

static Suite *
fields_suite(void)
{
	Suite *s = suite_create("fields");
	TCase *tc = tcase_create("fields");

	tcase_add_loop_test(tc, test_fields_rows, 0, (int)field_count);
	tcase_add_test(tc, test_fields_json_order);
	tcase_add_test(tc, test_fields_all_stages);
	tcase_add_test(tc, test_fields_csv);
	tcase_add_test(tc, test_fields_breakdown_terms);
	tcase_add_test(tc, test_fields_compress_from_layer);
	tcase_add_test(tc, test_fields_plan_attributes);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(fields_suite)
