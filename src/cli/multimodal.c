/*
 * predict and optimize on a multimodal model: DistMM's per-submodule plans
 * (Huang et al., "DistMM: Accelerating Distributed Multimodal Model
 * Training", NSDI 2024) against the monolithic plan of Megatron-LM, which
 * runs every submodule on all GPUs, one after another. The cost of each
 * submodule is the existing estimate (predict) or search (optimize) on
 * its own GPU group; plan/multimodal.h adds the slowest-group wait and the
 * batch-sync of the contrastive loss (CLIP, Radford et al. ICML 2021).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/multimodal.h"
#include "cli/options.h"
#include "io/format.h"
#include "io/hf_config.h"
#include "io/multimodal_load.h"
#include "io/profile_path.h"
#include "plan/multimodal.h"
#include "plan/numparse.h"
#include "plan/search.h"

#define GIB 1073741824.0

bool
cli_model_is_multimodal(const char *arg)
{
	struct plan_error err;
	char path[PATH_MAX];

	plan_error_clear(&err);
	return !hf_config_named(arg) && profile_resolve(PROFILE_MODEL, arg, path, sizeof(path), &err) &&
	       multimodal_profile_is(path);
}

static int
load_multimodal(const char *arg, struct multimodal *mm)
{
	struct plan_error err;
	char path[PATH_MAX];

	plan_error_clear(&err);
	if (!profile_resolve(PROFILE_MODEL, arg, path, sizeof(path), &err) || !multimodal_load_file(mm, path, &err))
		return cli_report(&err);
	return CLI_EXIT_OK;
}

/* The plan's one recompute mode, or -1 where its stages differ (a
 * per-stage mix): a search may leave a per-stage mix that is one mode on
 * every stage, a one-stage plan always. Slapo's layer counts
 * (custom_recompute_layers) come on top, said apart. */
static int
plan_one_recompute(const struct plan *p)
{
	int r = plan_stage_recompute(p, 0);

	for (int s = 1; s < p->pp; s++)
		if (plan_stage_recompute(p, s) != r)
			return -1;
	return r;
}

/* "tp 2 x pp 1 x dp 8, mb 4, recompute none, ZeRO 1" */
static void
plan_brief(const struct plan *p, char *buf, size_t size)
{
	int r = plan_one_recompute(p);
	int n = snprintf(buf, size, "tp %d x pp %d x dp %d, mb %d, %s%s%s, ", p->tp, p->pp, p->dp, p->micro_batch,
			 r >= 0 ? plan_recompute_names[r] : "per-stage", r >= 0 ? "" : " recompute",
			 p->custom_recompute_layers ? " + layers in full" : "");

	if (n < (int)size && p->mics_group > 0)
		snprintf(buf + n, size - (size_t)n, "MiCS %d%s", p->mics_group, p->mics_hierarchical ? "" : " flat");
	else if (n < (int)size)
		snprintf(buf + n, size - (size_t)n, "ZeRO %d", p->zero);
}

/* The per-stage lists of a spec: what each entry of "KEY=a/b/c" is. */
enum spec_list { SPEC_LIST_LAYERS, SPEC_LIST_RECOMPUTE, SPEC_LIST_RECOMPUTE_LAYERS };

/* ",KEY=a/b/c": one entry per stage, appended at @n. */
static int
spec_stages(const struct plan *p, enum spec_list what, const char *key, char *buf, size_t size, int n)
{
	if (n < (int)size)
		n += snprintf(buf + n, size - (size_t)n, ",%s=", key);
	for (int s = 0; s < p->pp && n < (int)size; s++) {
		const char *sep = s ? "/" : "";

		if (what == SPEC_LIST_RECOMPUTE)
			n += snprintf(buf + n, size - (size_t)n, "%s%s", sep, plan_recompute_names[plan_stage_recompute(p, s)]);
		else
			n += snprintf(buf + n, size - (size_t)n, "%s%d", sep,
				      what == SPEC_LIST_LAYERS ? p->stage_layers[s] : p->stage_recompute_layers[s]);
	}
	return n;
}

/* The --submodule spec for @p: what predict takes back, the plan's
 * choices beyond the defaults included (interleaving, sequence
 * parallelism, a MiCS group and its gather, uneven stages, recompute per
 * stage and Slapo's layers in full), so that predict times the plan
 * optimize timed. False when it does not fit in @size (SPEC_MAX holds
 * any plan's). */
static bool
plan_spec(const char *name, const struct plan *p, char *buf, size_t size)
{
	int r = plan_one_recompute(p);
	int n = snprintf(buf, size, "%s:tp=%d,pp=%d,dp=%d,micro-batch=%d", name, p->tp, p->pp, p->dp, p->micro_batch);

	if (r >= 0 && n < (int)size)
		n += snprintf(buf + n, size - (size_t)n, ",recompute=%s", plan_recompute_names[r]);
	else
		n = spec_stages(p, SPEC_LIST_RECOMPUTE, "stage-recompute", buf, size, n);
	if (p->custom_recompute_layers)
		n = spec_stages(p, SPEC_LIST_RECOMPUTE_LAYERS, "recompute-layers", buf, size, n);
	if (p->mics_group > 0 && n < (int)size)
		n += snprintf(buf + n, size - (size_t)n, ",mics=%d%s", p->mics_group,
			      p->mics_hierarchical ? "" : ",mics-flat=1");
	else if (n < (int)size)
		n += snprintf(buf + n, size - (size_t)n, ",zero=%d", p->zero);
	if (p->vpp > 1 && n < (int)size)
		n += snprintf(buf + n, size - (size_t)n, ",vpp=%d", p->vpp);
	if (p->sequence_parallel && n < (int)size)
		n += snprintf(buf + n, size - (size_t)n, ",sp=1");
	if (p->custom_layers && p->pp > 1)
		n = spec_stages(p, SPEC_LIST_LAYERS, "stage-layers", buf, size, n);
	return n < (int)size;
}

/* ------------------------------------------------------------ output */

static json_t *
plan_json(const struct plan *p)
{
	int r = plan_one_recompute(p);

	return json_pack("{s:i, s:i, s:i, s:i, s:s, s:i, s:i}", "tp", p->tp, "pp", p->pp, "dp", p->dp, "micro_batch",
			 p->micro_batch, "recompute", r >= 0 ? plan_recompute_names[r] : "per-stage", "zero", p->zero,
			 "mics_group", p->mics_group);
}

/* What the multimodal prediction prints: the profiles and the plans it priced. */
struct mm_report {
	const struct multimodal *mm;
	const struct cluster *cluster;
	const struct plan *plans;
	const struct multimodal_estimate *e;
	const struct estimate_options *opt;
};

static json_t *
mm_json(const struct mm_report *r)
{
	const struct multimodal_estimate *e = r->e;
	json_t *root = json_object(), *subs = json_array();

	if (!root || !subs) {
		json_decref(root);
		json_decref(subs);
		return NULL;
	}
	json_object_set_new(root, "model", json_string(r->mm->name));
	json_object_set_new(root, "cluster", json_string(r->cluster->name));
	json_object_set_new(root, "gpu", json_string(r->cluster->gpu.name));
	json_object_set_new(root, "kind", json_string("multimodal"));
	json_object_set_new(root, "mode", json_string(e->monolithic ? "monolithic" : "per-submodule"));
	json_object_set_new(root, "gpus", json_integer(e->total_gpus));
	json_object_set_new(root, "parameters", json_real(multimodal_params_total(r->mm)));
	json_object_set_new(root, "global_batch", json_integer(r->plans[0].global_batch));
	json_object_set_new(root, "embedding", json_integer(r->mm->embedding));
	json_object_set_new(root, "iteration_time_s", json_real(e->iteration_time_s));
	json_object_set_new(root, "compute_s", json_real(e->compute_s));
	json_object_set_new(root, "batch_sync_s", json_real(e->batch_sync_s));
	json_object_set_new(root, "batch_sync_bytes", json_real(e->batch_sync_bytes));
	json_object_set_new(root, "samples_per_s", json_real(e->samples_per_s));
	json_object_set_new(root, "slowest", e->monolithic ? json_null() : json_string(r->mm->sub[e->slowest].name));
	json_object_set_new(root, "memory_bytes", json_real(e->memory_bytes));
	json_object_set_new(root, "memory_capacity_bytes", json_real(e->memory_capacity_bytes));
	json_object_set_new(root, "fits", json_boolean(e->fits));
	for (int i = 0; i < e->nsub; i++) {
		struct plan p = r->plans[i];
		struct report rep;
		json_t *s, *pred;

		p.seq_len = r->mm->sub[i].tokens;
		rep = (struct report){ .model = &r->mm->sub[i].model, .cluster = r->cluster, .plan = &p,
				       .est = &e->sub[i], .opt = r->opt };
		pred = format_json_object(&rep);
		s = json_pack("{s:s, s:i, s:i, s:o, s:f, s:f, s:b, s:f}", "name", r->mm->sub[i].name, "tokens",
			      r->mm->sub[i].tokens, "gpus", e->gpus[i], "plan", plan_json(&p), "iteration_time_s",
			      e->sub[i].iteration_time_s, "memory_bytes", e->sub[i].memory.total, "fits", e->sub[i].fits,
			      "parameters", e->sub[i].parameters);
		if (!s || !pred || json_object_set_new(s, "prediction", pred) != 0 || json_array_append_new(subs, s) != 0) {
			json_decref(s);
			json_decref(subs);
			json_decref(root);
			return NULL;
		}
	}
	json_object_set_new(root, "submodules", subs);
	return root;
}

static bool
write_json(json_t *obj)
{
	int rc;

	if (!obj)
		return false;
	rc = json_dumpf(obj, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	json_decref(obj);
	if (rc != 0)
		return false;
	fputc('\n', stdout);
	return !ferror(stdout);
}

static void
mm_text(const struct mm_report *r)
{
	const struct multimodal_estimate *e = r->e;
	const struct multimodal *mm = r->mm;

	printf("%s on %s: %d of %d GPUs (%s), multimodal, %s\n", mm->name, r->cluster->name, e->total_gpus,
	       cluster_gpus(r->cluster), r->cluster->gpu.name,
	       e->monolithic ? "monolithic plan (every submodule on all GPUs, in turn: Megatron-LM)"
			     : "per-submodule plans (DistMM)");
	printf("parameters   %.2f M (", multimodal_params_total(mm) / 1e6);
	for (int i = 0; i < mm->nsub; i++)
		printf("%s%s %.2f M", i ? ", " : "", mm->sub[i].name, e->sub[i].parameters / 1e6);
	printf(", projections)\n");
	printf("batch        %d samples, contrastive embedding %d\n\n", r->plans[0].global_batch, mm->embedding);
	printf("%-12s %7s %5s  %-44s %10s %10s  %s\n", "submodule", "tokens", "GPUs", "plan", "time (s)",
	       "mem (GiB)", "fits");
	for (int i = 0; i < mm->nsub; i++) {
		char plan[128];

		plan_brief(&r->plans[i], plan, sizeof(plan));
		printf("%-12s %7d %5d  %-44s %10.4f %10.2f  %s\n", mm->sub[i].name, mm->sub[i].tokens, e->gpus[i], plan,
		       e->sub[i].iteration_time_s, e->sub[i].memory.total / GIB, e->sub[i].fits ? "yes" : "no");
	}
	printf("%-12s %7s %5d  %-44s %10.4f\n\n", "batch-sync", "", e->total_gpus,
	       "all-gather + reduce-scatter of the embeddings", e->batch_sync_s);
	if (e->monolithic)
		printf("iteration time  %.4f s (the submodules in turn %.4f s + batch-sync %.4f s)\n",
		       e->iteration_time_s, e->compute_s, e->batch_sync_s);
	else
		printf("iteration time  %.4f s (%s sets the pace %.4f s + batch-sync %.4f s)\n", e->iteration_time_s,
		       mm->sub[e->slowest].name, e->compute_s, e->batch_sync_s);
	printf("throughput      %.1f samples/s\n", e->samples_per_s);
	printf("memory per GPU  %.2f of %.2f GiB%s: %s\n", e->memory_bytes / GIB, e->memory_capacity_bytes / GIB,
	       e->monolithic ? " (every submodule's states and activations)" : " (the largest group's)",
	       e->fits ? "fits" : "does not fit");
}

/* ------------------------------------------------------------ predict */

/* The longest --submodule argument: room for three lists of PLAN_MAX_STAGES entries. */
#define SPEC_MAX 8192

/* The keys --submodule takes, in the order of the bits of spec_state.seen. */
static const char *const spec_keys[] = {
	"tp", "pp", "dp", "gpus", "micro-batch", "recompute", "zero", "vpp", "sp", "mics", "mics-flat",
	"stage-layers", "stage-recompute", "recompute-layers",
};
#define SPEC_NKEYS ((int)(sizeof(spec_keys) / sizeof(spec_keys[0])))

/* The index of @key in spec_keys[]; SPEC_NKEYS when it is not one. */
static int
spec_key_index(const char *key)
{
	int k = 0;

	while (k < SPEC_NKEYS && strcmp(spec_keys[k], key) != 0)
		k++;
	return k;
}

/* What the items of one --submodule spec have said so far. */
struct spec_state {
	const char *name; /* the submodule, for the messages */
	unsigned seen;    /* a bit per spec_keys entry given */
	int gpus;         /* gpus=G; 0: not given */
	bool dp;          /* dp=D given */
};

/* Whether the spec has given @key (one of spec_keys[]). */
static bool
spec_seen(const struct spec_state *st, const char *key)
{
	return (st->seen >> spec_key_index(key)) & 1u;
}

/* The NAME of "NAME:key=v,...", written to @name; *@idx its submodule. */
static bool
spec_submodule(const struct multimodal *mm, const char *arg, char *name, size_t size, int *idx)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg || strlen(arg) >= SPEC_MAX || (size_t)(colon - arg) >= size) {
		cli_error("--submodule expects NAME:tp=T,dp=D[,pp=P][,gpus=G][,micro-batch=B], got '%s'", arg);
		return false;
	}
	snprintf(name, size, "%.*s", (int)(colon - arg), arg);
	if ((*idx = multimodal_find(mm, name)) < 0) {
		char valid[256] = "";

		for (int i = 0; i < mm->nsub; i++)
			snprintf(valid + strlen(valid), sizeof(valid) - strlen(valid), "%s%s", i ? ", " : "", mm->sub[i].name);
		cli_error("unknown submodule '%s' of %s (valid: %s)", name, mm->name, valid);
		return false;
	}
	return true;
}

/* stage-layers=a/b/..., stage-recompute=m/m/... or recompute-layers=k/k/...:
 * one entry per stage, '/' between them (',' separates the spec's
 * items); predict checks the count against pp and the layers against the
 * model's. */
static bool
spec_stage_list(const char *key, const char *val, struct plan *p, const char *name)
{
	enum spec_list what = strcmp(key, "stage-recompute") == 0 ? SPEC_LIST_RECOMPUTE :
			      strcmp(key, "recompute-layers") == 0 ? SPEC_LIST_RECOMPUTE_LAYERS : SPEC_LIST_LAYERS;
	char buf[SPEC_MAX], opt[128];
	char *save = NULL;
	int n = 0;

	snprintf(opt, sizeof(opt), "--submodule %.63s: %.16s", name, key);
	snprintf(buf, sizeof(buf), "%s", val);
	if (!*val || val[0] == '/' || val[strlen(val) - 1] == '/' || strstr(val, "//")) {
		cli_error("%s expects entries separated by '/', got '%s'", opt, val);
		return false;
	}
	for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		int v;

		if (n >= PLAN_MAX_STAGES) {
			cli_error("%s: more than %d stages", opt, PLAN_MAX_STAGES);
			return false;
		}
		if (what == SPEC_LIST_RECOMPUTE ? !cli_choice(opt, tok, plan_recompute_names, &v)
						: !cli_int(opt, tok, what == SPEC_LIST_LAYERS ? 1 : 0, 30000, &v))
			return false;
		if (what == SPEC_LIST_RECOMPUTE)
			p->stage_recompute[n++] = (signed char)v;
		else if (what == SPEC_LIST_LAYERS)
			p->stage_layers[n++] = (short)v;
		else
			p->stage_recompute_layers[n++] = (short)v;
	}
	if (what == SPEC_LIST_RECOMPUTE)
		p->custom_recompute = true, p->stage_recompute_count = n;
	else if (what == SPEC_LIST_LAYERS)
		p->custom_layers = true, p->stage_layers_count = n;
	else
		p->custom_recompute_layers = true, p->stage_recompute_layers_count = n;
	return true;
}

/* Apply one KEY=VALUE item of the spec to @p. */
static bool
spec_item(const char *key, const char *val, struct plan *p, struct spec_state *st)
{
	const char *name = st->name;
	long v;
	int k = spec_key_index(key);

	if (k < SPEC_NKEYS) {
		if (st->seen & (1u << k)) {
			cli_error("--submodule %s: '%s' is given twice", name, key);
			return false;
		}
		st->seen |= 1u << k;
	}
	if (strcmp(key, "recompute") == 0) {
		int r;

		if (!cli_choice("--submodule recompute", val, plan_recompute_names, &r))
			return false;
		p->recompute = r;
		return true;
	}
	if (strcmp(key, "stage-layers") == 0 || strcmp(key, "stage-recompute") == 0 ||
	    strcmp(key, "recompute-layers") == 0)
		return spec_stage_list(key, val, p, name);
	/* An unknown key is parsed as a number first: 'foo=x' reports the
	 * number, as it always has. */
	if (!num_parse_long(val, 0, 1L << 26, &v)) {
		cli_error("--submodule %s: %s expects a whole number, got '%s'", name, key, val);
		return false;
	}
	if (strcmp(key, "tp") == 0 && v >= 1)
		p->tp = (int)v;
	else if (strcmp(key, "pp") == 0 && v >= 1 && v <= PLAN_MAX_STAGES)
		p->pp = (int)v;
	else if (strcmp(key, "dp") == 0 && v >= 1)
		p->dp = (int)v, st->dp = true;
	else if (strcmp(key, "gpus") == 0 && v >= 1)
		st->gpus = (int)v;
	else if (strcmp(key, "micro-batch") == 0 && v >= 1)
		p->micro_batch = (int)v;
	else if (strcmp(key, "zero") == 0 && v <= 3)
		p->zero = (int)v;
	else if (strcmp(key, "vpp") == 0 && v >= 1 && v <= PLAN_MAX_STAGES)
		p->vpp = (int)v;
	else if (strcmp(key, "sp") == 0 && v <= 1)
		p->sequence_parallel = v == 1;
	else if (strcmp(key, "mics") == 0 && v >= 1)
		p->mics_group = (int)v;
	else if (strcmp(key, "mics-flat") == 0 && v <= 1)
		p->mics_hierarchical = v == 0;
	else if (k < SPEC_NKEYS) {
		bool gpus = strcmp(key, "tp") == 0 || strcmp(key, "pp") == 0 || strcmp(key, "dp") == 0 ||
			    strcmp(key, "gpus") == 0 || strcmp(key, "micro-batch") == 0;

		cli_error("--submodule %s: %s=%s is out of range%s", name, key, val,
			  gpus ? " (a submodule with no GPUs?)" : strcmp(key, "zero") == 0 ? " (0 to 3)" :
			  strcmp(key, "vpp") == 0 ? " (1 to 256)" : strcmp(key, "mics") == 0 ? " (a group of 1 GPU or more)" :
			  " (0 or 1)");
		return false;
	} else {
		char valid[256] = "";

		for (int i = 0; i < SPEC_NKEYS; i++)
			snprintf(valid + strlen(valid), sizeof(valid) - strlen(valid), "%s%s", i ? ", " : "",
				 spec_keys[i]);
		cli_error("--submodule %s: unknown key '%s' (valid: %s)", name, key, valid);
		return false;
	}
	return true;
}

/* dp from gpus=G where dp=D is not given, or the check that both agree. */
static bool
spec_dp(const struct spec_state *st, struct plan *p)
{
	const char *name = st->name;
	int gpus = st->gpus;

	if (!st->dp) {
		long share = (long)p->tp * p->cp * p->pp;

		if (gpus == 0) {
			cli_error("submodule '%s' has no GPUs: give dp=D or gpus=G in --submodule %s:...", name, name);
			return false;
		}
		if (gpus % share != 0) {
			cli_error("--submodule %s: gpus=%d is not divisible by tp x pp (%ld)", name, gpus, share);
			return false;
		}
		p->dp = (int)(gpus / share);
	} else if (gpus && plan_gpus(p) != gpus) {
		cli_error("--submodule %s: gpus=%d does not match tp x pp x dp (%d)", name, gpus, plan_gpus(p));
		return false;
	}
	return true;
}

/* Read "NAME:key=v,..." into @p (a copy of the shared options); *@idx the submodule. */
static bool
parse_spec(const struct multimodal *mm, const char *arg, int total_default_mb, struct plan *p, int *idx)
{
	char buf[SPEC_MAX], name[64];
	struct spec_state st = { name, 0, 0, false };

	if (!spec_submodule(mm, arg, name, sizeof(name), idx))
		return false;
	p->tp = 1;
	p->pp = 1;
	p->dp = 0;
	p->micro_batch = total_default_mb;
	snprintf(buf, sizeof(buf), "%s", strchr(arg, ':') + 1);
	/* Split by hand, not strtok_r: that skips empty items, and 'tp=1,,dp=8'
	 * is a typo to report. A key given twice (dp=8,dp=4) is an error too,
	 * not the last one winning without a word. */
	for (char *tok = buf, *next; tok; tok = next) {
		char *eq = strchr(tok, '='), *comma = strchr(tok, ',');

		next = comma ? comma + 1 : NULL;
		if (comma)
			*comma = '\0';
		if (comma && eq > comma)
			eq = NULL;
		if (!*tok) {
			cli_error("--submodule %s: an empty item in '%s'", name, arg);
			return false;
		}
		if (!eq) {
			cli_error("--submodule %s: expected KEY=VALUE, got '%s'", name, tok);
			return false;
		}
		*eq = '\0';
		if (!spec_item(tok, eq + 1, p, &st))
			return false;
	}
	/* The per-stage lists: one entry a stage (recompute-layers also one
	 * number for every stage), as --stage-layers and the others. */
	if (p->custom_recompute_layers && p->stage_recompute_layers_count == 1 && p->pp > 1)
		for (int s = 1; s < p->pp; s++)
			p->stage_recompute_layers[s] = p->stage_recompute_layers[0];
	if (p->custom_recompute_layers && p->stage_recompute_layers_count == 1)
		p->stage_recompute_layers_count = p->pp;
	if ((p->custom_layers && p->stage_layers_count != p->pp) ||
	    (p->custom_recompute && p->stage_recompute_count != p->pp) ||
	    (p->custom_recompute_layers && p->stage_recompute_layers_count != p->pp)) {
		cli_error("--submodule %s: stage-layers, stage-recompute and recompute-layers need one entry per "
			  "stage (pp %d)", name, p->pp);
		return false;
	}
	if (spec_seen(&st, "mics-flat") && p->mics_group == 0) {
		cli_error("--submodule %s: mics-flat says how a MiCS group gathers: give mics=G too", name);
		return false;
	}
	if (p->mics_group > 0) {
		/* MiCS is ZeRO-3 inside its groups, as --mics-group implies. */
		if (p->zero != 3 && spec_seen(&st, "zero")) {
			cli_error("--submodule %s: mics=%d is ZeRO-3 in groups; it does not go with zero=%d", name,
				  p->mics_group, p->zero);
			return false;
		}
		p->zero = 3;
	}
	return spec_dp(&st, p);
}

/* The options predict cannot apply to a multimodal model. */
static bool
predict_rejects(const struct predict_request *r)
{
	const struct plan *p = &r->plan;

	if (r->format == CLI_FORMAT_CSV) {
		cli_error("--format csv: a multimodal prediction is text or json");
		return true;
	}
	if (p->seq_len) {
		cli_error("--seq-len: the submodules of a multimodal model give their own tokens per sample");
		return true;
	}
	if (r->compressor || r->compress_given || p->custom_layers || p->custom_recompute ||
	    p->custom_recompute_layers) {
		cli_error("--compressor, --compress, --stage-layers, --stage-recompute and --recompute-layers "
			  "do not apply to a multimodal model");
		return true;
	}
	return false;
}

/* Monolithic: the usual plan, for every submodule on all @total GPUs. */
static bool
monolithic_plans(const struct predict_request *r, const struct multimodal *mm, int total, struct plan *plans)
{
	struct plan p = r->plan;

	if (p.dp == 0) {
		if (total % ((long)p.tp * p.cp * p.pp) != 0) {
			cli_error("%d GPUs are not divisible by tp x pp (%d x %d); give --dp or --gpus", total, p.tp, p.pp);
			return false;
		}
		p.dp = (int)(total / ((long)p.tp * p.cp * p.pp));
	} else if (r->gpus && plan_gpus(&p) != r->gpus) {
		cli_error("--gpus %d does not match tp x pp x dp (%d)", r->gpus, plan_gpus(&p));
		return false;
	}
	for (int i = 0; i < mm->nsub; i++)
		plans[i] = p;
	return true;
}

/* Per-submodule: a plan from each --submodule, every submodule given once,
 * the groups within @total GPUs. */
static bool
submodule_plans(const struct predict_request *r, const struct multimodal *mm, int total, struct plan *plans)
{
	bool given[MULTIMODAL_MAX_SUBMODULES] = { false };
	int used = 0;

	for (int k = 0; k < r->nsubmodule_args; k++) {
		struct plan p = r->plan;
		int i;

		if (!parse_spec(mm, r->submodule_args[k], r->plan.micro_batch, &p, &i))
			return false;
		if (given[i]) {
			cli_error("--submodule %s is given twice", mm->sub[i].name);
			return false;
		}
		given[i] = true;
		plans[i] = p;
		used += plan_gpus(&p);
	}
	for (int i = 0; i < mm->nsub; i++) {
		if (!given[i]) {
			cli_error("submodule '%s' has no GPUs: give --submodule %s:tp=T,dp=D (each submodule "
				  "needs its own plan)", mm->sub[i].name, mm->sub[i].name);
			return false;
		}
	}
	if (used > total) {
		cli_error("the submodules' GPU groups take %d GPUs, more than the %d there are%s", used, total,
			  r->gpus ? " (--gpus)" : "");
		return false;
	}
	return true;
}

/* Print the prediction; the exit status: it fits, or --allow-oom. */
static int
predict_output(const struct predict_request *r, const struct mm_report *rep)
{
	const struct multimodal_estimate *est = rep->e;
	bool ok;
	int rc;

	if (r->format == CLI_FORMAT_JSON) {
		ok = write_json(mm_json(rep));
	} else {
		mm_text(rep);
		ok = !ferror(stdout);
	}
	if (!ok) {
		cli_error("cannot write the output");
		return CLI_EXIT_FAILURE;
	}
	rc = est->fits || r->allow_oom ? CLI_EXIT_OK : CLI_EXIT_INFEASIBLE;
	if (!est->fits) {
		fflush(stdout);
		fprintf(stderr, "plan-cli: the plan needs %.2f GiB per GPU, more than the %.2f GiB there are\n",
			est->memory_bytes / GIB, est->memory_capacity_bytes / GIB);
	}
	return cli_finish(rc);
}

int
cli_predict_multimodal(struct predict_request *r)
{
	static struct multimodal mm;
	static struct multimodal_estimate est;
	struct plan plans[MULTIMODAL_MAX_SUBMODULES];
	struct framework framework;
	struct cluster cluster;
	struct plan_error err;
	struct mm_report rep;
	int rc, total;

	if (predict_rejects(r))
		return CLI_EXIT_USAGE;
	if ((rc = load_multimodal(r->model, &mm)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_load_framework(r->framework ? r->framework : CLI_DEFAULT_FRAMEWORK, &framework)) != CLI_EXIT_OK)
		return rc;
	r->opt.framework = &framework;
	if ((rc = cli_load_cluster_links(r->cluster, &r->links, &cluster)) != CLI_EXIT_OK)
		return rc;
	r->plan.flash_attention = gpu_plan_flash_attention(&cluster.gpu, r->flash);
	if (r->plan.mics_group > 0 && r->plan.zero == 0)
		r->plan.zero = 3;
	total = r->gpus ? r->gpus : cluster_gpus(&cluster);
	rc = CLI_EXIT_USAGE;
	if (r->gpus > cluster_gpus(&cluster)) {
		cli_error("--gpus %d is more than cluster '%s' has (%d)", r->gpus, cluster.name, cluster_gpus(&cluster));
		goto out;
	}
	if (r->nsubmodule_args == 0 ? !monolithic_plans(r, &mm, total, plans) : !submodule_plans(r, &mm, total, plans))
		goto out;
	plan_error_clear(&err);
	if (!multimodal_estimate(&mm, &cluster, plans, r->nsubmodule_args == 0, &r->opt, &est, &err)) {
		rc = cli_report(&err);
		goto out;
	}
	for (int i = 0; i < mm.nsub; i++)
		plans[i].seq_len = mm.sub[i].tokens;
	rep = (struct mm_report){ &mm, &cluster, plans, &est, &r->opt };
	rc = predict_output(r, &rep);
out:
	cluster_release(&cluster);
	return rc;
}

/* ------------------------------------------------------------ optimize */

/* Most GPU-group sizes tried per submodule. */
#define MM_MAX_SIZES 64

/* The best plan of one submodule on g GPUs, searched once. */
struct mm_memo {
	int g;
	bool found;
	struct search_candidate best;
};

struct mm_search {
	const struct multimodal *mm;
	const struct cluster *c;
	const struct optimize_request *r;
	struct mm_memo memo[MULTIMODAL_MAX_SUBMODULES][MM_MAX_SIZES + 1];
	int nmemo[MULTIMODAL_MAX_SUBMODULES];
	int sizes[MM_MAX_SIZES];
	int nsizes;
	long searches, splits;
	/* the best split */
	bool have_best;
	int best_split[MULTIMODAL_MAX_SUBMODULES];
	double best_time;
	struct plan_error err;
	bool failed;
	struct search_candidate *top;
	struct estimate_options opt;
};

static const struct mm_memo *
best_on(struct mm_search *s, int i, int g)
{
	struct mm_memo *m;
	struct search_options so = s->r->so;
	struct search_stats st;
	int ntop = 0;

	for (int k = 0; k < s->nmemo[i]; k++)
		if (s->memo[i][k].g == g)
			return &s->memo[i][k];
	if (s->nmemo[i] == MM_MAX_SIZES + 1)
		return NULL;
	m = &s->memo[i][s->nmemo[i]++];
	m->g = g;
	m->found = false;
	so.gpus = g;
	so.seq_len = s->mm->sub[i].tokens;
	so.top = 1;
	/* The submodules are predicted with the one DP algorithm given
	 * (ring by default): not searched per submodule. */
	so.search_dp_algo = false;
	s->searches++;
	if (!search_run(&s->mm->sub[i].model, s->c, &so, s->top, &ntop, &st, &s->err)) {
		s->failed = true;
		return m;
	}
	if (ntop > 0) {
		m->found = true;
		m->best = s->top[0];
	}
	return m;
}

/* Every split of the GPUs left among submodules i.. (the last takes the rest). */
static void
enumerate(struct mm_search *s, int i, int left, int *split)
{
	int n = s->mm->nsub;

	if (s->failed)
		return;
	if (i == n - 1) {
		struct plan plans[MULTIMODAL_MAX_SUBMODULES];
		struct multimodal_estimate e;
		struct plan_error err;

		split[i] = left;
		for (int k = 0; k < n; k++) {
			const struct mm_memo *m = best_on(s, k, split[k]);

			if (s->failed || !m || !m->found)
				return;
			plans[k] = m->best.plan;
		}
		s->splits++;
		plan_error_clear(&err);
		if (!multimodal_estimate(s->mm, s->c, plans, false, &s->opt, &e, &err))
			return;
		if (!s->have_best || e.iteration_time_s < s->best_time) {
			s->have_best = true;
			s->best_time = e.iteration_time_s;
			memcpy(s->best_split, split, sizeof(s->best_split));
		}
		return;
	}
	for (int k = 0; k < s->nsizes; k++) {
		int g = s->sizes[k];

		if (g <= left - (n - 1 - i)) {
			split[i] = g;
			enumerate(s, i + 1, left - g, split);
		}
	}
}

/* Group sizes: powers of two, multiples of the node, and what either leaves of @total. */
static void
split_sizes(struct mm_search *s, int total, int per_node)
{
	int cand[3 * MM_MAX_SIZES], n = 0;

	for (int g = 1; g < total && n < MM_MAX_SIZES; g *= 2)
		cand[n++] = g;
	for (int g = per_node; g < total && n < 2 * MM_MAX_SIZES; g += per_node)
		cand[n++] = g;
	for (int k = 0, m = n; k < m && n < 3 * MM_MAX_SIZES; k++)
		cand[n++] = total - cand[k];
	s->nsizes = 0;
	for (int g = 1; g < total; g++) {
		bool in = false;

		for (int k = 0; k < n; k++)
			in = in || cand[k] == g;
		if (in && s->nsizes < MM_MAX_SIZES)
			s->sizes[s->nsizes++] = g;
	}
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static json_t *
opt_side_json(const struct multimodal *mm, const struct multimodal_estimate *e, const struct plan *plans)
{
	json_t *o = json_object(), *subs = json_array();

	for (int i = 0; o && subs && i < mm->nsub; i++) {
		char spec[SPEC_MAX];

		if (!plan_spec(mm->sub[i].name, &plans[i], spec, sizeof(spec)))
			snprintf(spec, sizeof(spec), "(too long)");
		json_array_append_new(subs, json_pack("{s:s, s:i, s:o, s:f, s:f, s:s}", "name", mm->sub[i].name, "gpus",
						      e->gpus[i], "plan", plan_json(&plans[i]), "iteration_time_s",
						      e->sub[i].iteration_time_s, "memory_bytes", e->sub[i].memory.total,
						      "submodule_arg", spec));
	}
	if (!o || !subs) {
		json_decref(o);
		json_decref(subs);
		return NULL;
	}
	json_object_set_new(o, "gpus", json_integer(e->total_gpus));
	json_object_set_new(o, "iteration_time_s", json_real(e->iteration_time_s));
	json_object_set_new(o, "batch_sync_s", json_real(e->batch_sync_s));
	json_object_set_new(o, "samples_per_s", json_real(e->samples_per_s));
	json_object_set_new(o, "memory_bytes", json_real(e->memory_bytes));
	json_object_set_new(o, "fits", json_boolean(e->fits));
	json_object_set_new(o, "submodules", subs);
	return o;
}

static void
opt_side_text(const char *title, const struct multimodal *mm, const struct multimodal_estimate *e,
	      const struct plan *plans)
{
	printf("%s: %.4f s/iteration (%s %.4f s + batch-sync %.4f s), %.1f samples/s, %.2f GiB per GPU%s\n", title,
	       e->iteration_time_s, e->monolithic ? "in turn" : "slowest", e->compute_s, e->batch_sync_s,
	       e->samples_per_s, e->memory_bytes / GIB, e->fits ? "" : " (does not fit)");
	for (int i = 0; i < mm->nsub; i++) {
		char plan[128];

		plan_brief(&plans[i], plan, sizeof(plan));
		printf("  %-10s %5d GPUs  %-44s %10.4f s\n", mm->sub[i].name, e->gpus[i], plan, e->sub[i].iteration_time_s);
	}
}

/* What optimize found, to print: the best split and the monolithic plan. */
struct mm_found {
	const struct mm_search *s;
	int total;
	double seconds;
	const struct plan *best_plans, *mono_plans;
	const struct multimodal_estimate *best;
	const struct multimodal_estimate *mono; /* NULL: no monolithic plan fits */
};

/* The options optimize cannot apply to a multimodal model. */
static bool
optimize_rejects(const struct optimize_request *r)
{
	if (r->so.seq_len) {
		cli_error("--seq-len: the submodules of a multimodal model give their own tokens per sample");
		return true;
	}
	if (r->so.ncompressors > 0) {
		cli_error("--compressor does not apply to a multimodal model");
		return true;
	}
	return false;
}

/* Every split of @total GPUs, then each submodule's best plan on all of
 * them (the monolithic side; *@have_mono false where one has none); the
 * plans of the best split into @best_plans. */
static int
optimize_search(struct mm_search *s, int total, int per_node, struct plan *best_plans, struct plan *mono_plans,
		bool *have_mono, double *seconds)
{
	int split[MULTIMODAL_MAX_SUBMODULES];
	double t0;

	plan_error_clear(&s->err);
	t0 = now_s();
	split_sizes(s, total, per_node);
	enumerate(s, 0, total, split);
	*have_mono = true;
	for (int i = 0; !s->failed && i < s->mm->nsub; i++) {
		const struct mm_memo *m = best_on(s, i, total);

		if (!m || !m->found)
			*have_mono = false;
		else
			mono_plans[i] = m->best.plan;
	}
	*seconds = now_s() - t0;
	if (s->failed)
		return cli_report(&s->err);
	if (!s->have_best) {
		cli_error("no feasible plan: no split of %d GPUs between the submodules fits", total);
		return CLI_EXIT_INFEASIBLE;
	}
	for (int i = 0; i < s->mm->nsub; i++)
		best_plans[i] = best_on(s, i, s->best_split[i])->best.plan;
	return CLI_EXIT_OK;
}

static bool
optimize_json(const struct mm_found *f)
{
	const struct mm_search *s = f->s;
	json_t *root = json_object();

	if (root) {
		json_object_set_new(root, "model", json_string(s->mm->name));
		json_object_set_new(root, "cluster", json_string(s->c->name));
		json_object_set_new(root, "gpus", json_integer(f->total));
		json_object_set_new(root, "global_batch", json_integer(s->r->so.global_batch));
		json_object_set_new(root, "per_submodule", opt_side_json(s->mm, f->best, f->best_plans));
		json_object_set_new(root, "monolithic", f->mono ? opt_side_json(s->mm, f->mono, f->mono_plans) : json_null());
		json_object_set_new(root, "speedup", f->mono ? json_real(f->mono->iteration_time_s / f->best->iteration_time_s)
							     : json_null());
		json_object_set_new(root, "splits", json_integer(s->splits));
		json_object_set_new(root, "searches", json_integer(s->searches));
		json_object_set_new(root, "seconds", json_real(f->seconds));
	}
	return write_json(root);
}

static void
optimize_text(const struct mm_found *f)
{
	const struct mm_search *s = f->s;
	const struct multimodal *mm = s->mm;
	const struct optimize_request *r = s->r;

	printf("%s on %s: %d GPUs (%s), global batch %d, multimodal (%d submodules)\n\n", mm->name, s->c->name,
	       f->total, s->c->gpu.name, r->so.global_batch, mm->nsub);
	opt_side_text("per-submodule (DistMM)", mm, f->best, f->best_plans);
	if (f->mono) {
		opt_side_text("monolithic (each submodule on all GPUs, in turn)", mm, f->mono, f->mono_plans);
		printf("speedup         %.2fx per-submodule over monolithic\n",
		       f->mono->iteration_time_s / f->best->iteration_time_s);
	} else {
		printf("monolithic: no plan of all %d GPUs fits some submodule\n", f->total);
	}
	printf("predict_args    --model %s --cluster %s --global-batch %d", r->model, r->cluster, r->so.global_batch);
	for (int i = 0; i < mm->nsub; i++) {
		char spec[SPEC_MAX];

		if (!plan_spec(mm->sub[i].name, &f->best_plans[i], spec, sizeof(spec)))
			snprintf(spec, sizeof(spec), "(too long)");
		printf(" --submodule %s", spec);
	}
	printf("\nsearch          %ld splits of %d GPUs, %ld searches in %.2f s\n", s->splits, f->total, s->searches,
	       f->seconds);
}

/* Price the best split and the monolithic plans (@mono_plans NULL: none), then print them. */
static int
optimize_output(const struct mm_search *s, int total, double seconds, const struct plan *best_plans,
		const struct plan *mono_plans)
{
	static struct multimodal_estimate best, mono;
	struct mm_found f = { s, total, seconds, best_plans, mono_plans, &best, mono_plans ? &mono : NULL };
	struct plan_error err;

	plan_error_clear(&err);
	if (!multimodal_estimate(s->mm, s->c, best_plans, false, &s->opt, &best, &err) ||
	    (mono_plans && !multimodal_estimate(s->mm, s->c, mono_plans, true, &s->opt, &mono, &err)))
		return cli_report(&err);
	if (s->r->format == CLI_FORMAT_JSON) {
		if (!optimize_json(&f)) {
			cli_error("cannot write the output");
			return CLI_EXIT_FAILURE;
		}
	} else {
		optimize_text(&f);
	}
	return cli_finish(CLI_EXIT_OK);
}

int
cli_optimize_multimodal(struct optimize_request *r)
{
	static struct multimodal mm;
	static struct mm_search s;
	struct plan best_plans[MULTIMODAL_MAX_SUBMODULES], mono_plans[MULTIMODAL_MAX_SUBMODULES];
	struct framework framework;
	struct cluster cluster;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	bool have_mono;
	double seconds;
	int rc, total;

	if (optimize_rejects(r))
		return CLI_EXIT_USAGE;
	if ((rc = load_multimodal(r->model, &mm)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_load_framework(r->framework ? r->framework : CLI_DEFAULT_FRAMEWORK, &framework)) != CLI_EXIT_OK)
		return rc;
	r->so.framework = &framework;
	opt.framework = &framework;
	opt.dp_algo = r->so.dp_algo;
	if ((rc = cli_load_cluster_links(r->cluster, &r->links, &cluster)) != CLI_EXIT_OK)
		return rc;
	r->so.flash_attention = gpu_plan_flash_attention(&cluster.gpu, r->flash);
	total = r->so.gpus ? r->so.gpus : cluster_gpus(&cluster);
	rc = CLI_EXIT_USAGE;
	if (total > cluster_gpus(&cluster)) {
		cli_error("--gpus %d is more than cluster '%s' has (%d)", total, cluster.name, cluster_gpus(&cluster));
		goto out;
	}
	if (total < mm.nsub) {
		cli_error("%d GPUs cannot give each of the %d submodules a GPU group", total, mm.nsub);
		goto out;
	}
	memset(&s, 0, sizeof(s));
	s.mm = &mm;
	s.c = &cluster;
	s.r = r;
	s.top = calloc(SEARCH_MAX_TOP, sizeof(*s.top));
	if (!s.top) {
		cli_error("out of memory");
		rc = CLI_EXIT_FAILURE;
		goto out;
	}
	s.opt = opt;
	rc = optimize_search(&s, total, cluster.gpus_per_node, best_plans, mono_plans, &have_mono, &seconds);
	if (rc == CLI_EXIT_OK)
		rc = optimize_output(&s, total, seconds, best_plans, have_mono ? mono_plans : NULL);
	free(s.top);
out:
	cluster_release(&cluster);
	return rc;
}
