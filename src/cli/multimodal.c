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
#include "cli/optimize_all.h"
#include "cli/options.h"
#include "cli/plan_spec.h"
#include "io/format.h"
#include "io/hf_config.h"
#include "io/multimodal_load.h"
#include "io/profile_path.h"
#include "io/schema.h"
#include "plan/multimodal.h"
#include "plan/numparse.h"
#include "plan/plan_attr.h"
#include "plan/search.h"
#include "plan/wave_loss.h"

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

/* ------------------------------------------------------------ --submodule */

/*
 * A --submodule spec, "NAME:KEY=VALUE,...", gives one submodule its plan:
 * its items are the plan attributes (plan/plan_attr.h), by name with
 * dashes or underscores, and gpus=G, the submodule's GPUs (dp follows, as
 * --gpus gives it to predict). A list's entries go between '/', since ','
 * separates the items. What the spec leaves out is the command line's
 * (--micro-batch, --zero, --precision, ...), except tp, pp (1) and dp:
 * each submodule has its own group. The attributes the submodules share
 * are refused, with the reason (cli_submodule_refuses).
 */

const char *
cli_submodule_refuses(enum plan_attr_id id)
{
	/* predict_rejects: a multimodal model is predicted without one. */
	if (plan_attrs[id].flags & PLAN_ATTR_COMPRESSION)
		return "it needs a compressor, which a multimodal model does not take";
	switch (id) {
	case PLAN_ATTR_GLOBAL_BATCH:
		/* The contrastive loss pairs each sample's embeddings of
		 * every submodule (multimodal_estimate checks it). */
		return "every submodule sees the same samples (give --global-batch)";
	case PLAN_ATTR_SEQ_LEN:
		return "a submodule's tokens per sample are its profile's";
	case PLAN_ATTR_DP_ALLREDUCE:
		/* An estimate option, one for the whole multimodal_estimate. */
		return "one DP all-reduce prices every submodule (give --dp-allreduce)";
	default:
		return NULL;
	}
}

/* The --submodule spec of @p: every attribute a submodule takes that is
 * not at its default (plan_attr_format, as predict_args), by its name
 * with dashes, the lists with '/' between their entries, so that predict
 * reads back the plan optimize timed. False when it does not fit in
 * @size (CLI_PLAN_SPEC_MAX holds any plan's). */
static bool
plan_spec(const char *name, const struct plan *p, char *buf, size_t size)
{
	char prefix[80];

	snprintf(prefix, sizeof(prefix), "%s:", name);
	return cli_plan_spec_format(prefix, p, cli_submodule_refuses, buf, size);
}

/* The NAME of "NAME:key=v,...", written to @name; *@idx its submodule. */
static bool
spec_submodule(const struct multimodal *mm, const char *arg, char *name, size_t size, int *idx)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg || strlen(arg) >= CLI_PLAN_SPEC_MAX || (size_t)(colon - arg) >= size) {
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

/* The framework's rule for layers that pp x vpp do not divide (its
 * pipeline_split key), as predict takes it from --framework. */
static int
framework_split(const struct framework *fw)
{
	return fw ? fw->pipeline_split : PLAN_PP_SPLIT_EVEN;
}

/* The spec's plan completed as predict completes its own (plan_complete:
 * dp from gpus=G, flash attention from the GPU, recompute-layers=K on
 * every stage, the framework's pipeline_split @split), after what only a
 * spec can get wrong. */
static bool
spec_complete(const struct cli_plan_spec *st, const char *name, const struct model *m, const struct cluster *c,
	      int split, struct plan *p)
{
	struct plan_error err;

	if (!cli_plan_spec_mics(st, p))
		return false;
	if (!st->given[PLAN_ATTR_DP] && st->gpus == 0) {
		cli_error("submodule '%s' has no GPUs: give dp=D or gpus=G in --submodule %s:...", name, name);
		return false;
	}
	plan_error_clear(&err);
	if (!plan_complete(p, &(struct plan_fill){ st->gpus, st->flash, split }, m, c, &err)) {
		cli_error("--submodule %s: %s", name, err.message);
		return false;
	}
	return true;
}

/* Read "NAME:key=v,..." of @r's into @p (the command line's plan, but
 * tp, pp and dp), completed on @c; *@idx the submodule. */
static bool
parse_spec(const struct predict_request *r, const struct multimodal *mm, const struct cluster *c, int total,
	   const char *arg, struct plan *p, int *idx)
{
	char name[64], label[80];
	struct cli_plan_spec st = { .label = label, .key_sep = ':', .whose = "a submodule's",
				    .refuses = cli_submodule_refuses, .takes_gpus = true, .flash = r->flash };

	if (!spec_submodule(mm, arg, name, sizeof(name), idx))
		return false;
	snprintf(label, sizeof(label), "--submodule %s", name);
	*p = r->plan;
	p->tp = 1;
	p->pp = 1;
	p->dp = 0;
	if (!cli_plan_spec_parse(&st, strchr(arg, ':') + 1, arg, p))
		return false;
	/* --monolithic: every submodule on all the GPUs, unless said. */
	if (r->monolithic && !st.given[PLAN_ATTR_DP] && st.gpus == 0)
		st.gpus = total;
	return spec_complete(&st, name, &mm->sub[*idx].model, c, framework_split(r->opt.framework), p);
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
		struct estimate est = e->sub[i];
		struct plan_error err;
		json_t *s, *pred;

		p.seq_len = r->mm->sub[i].tokens;
		/* Each submodule's prediction as predict's: its GEMM wave loss too
		 * (a second estimate of the plan estimate_sub priced). */
		plan_error_clear(&err);
		rep = (struct report){ .model = &r->mm->sub[i].model, .cluster = r->cluster, .plan = &p,
				       .est = wave_loss_estimate(&r->mm->sub[i].model, r->cluster, &p, r->opt, &est, &err) ?
					      &est : &e->sub[i],
				       .opt = r->opt };
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
	/* Refused, not dropped (issue 28): neither is modelled per submodule. */
	if (r->ckpt.target != CHECKPOINT_NONE || r->seq_lengths) {
		cli_error("%s does not apply to a multimodal model (its checkpoints and variable-length data are not "
			  "modelled per submodule)", r->seq_lengths ? "--seq-lengths" : "--checkpoint-to");
		return true;
	}
	return false;
}

/* Monolithic: the usual plan, completed as predict's (plan_complete), for
 * every submodule on all the GPUs. */
static bool
monolithic_plans(const struct predict_request *r, const struct multimodal *mm, const struct cluster *c,
		 struct plan *plans)
{
	/* Completed for each submodule's own layers: the framework's
	 * pipeline_split applies where that submodule's pp x vpp do not
	 * divide them, as predict of that model alone would apply it. */
	for (int i = 0; i < mm->nsub; i++) {
		plans[i] = r->plan;
		if (!cli_plan_complete(&plans[i], &(struct plan_fill){ r->gpus, r->flash,
				       framework_split(r->opt.framework) }, &mm->sub[i].model, c))
			return false;
	}
	return true;
}

/* Per-submodule: a plan from each --submodule, every submodule given once,
 * the groups within @total GPUs. */
static bool
submodule_plans(const struct predict_request *r, const struct multimodal *mm, const struct cluster *c, int total,
		struct plan *plans)
{
	bool given[MULTIMODAL_MAX_SUBMODULES] = { false };
	int used = 0;

	for (int k = 0; k < r->nsubmodule_args; k++) {
		struct plan p;
		int i;

		if (!parse_spec(r, mm, c, total, r->submodule_args[k], &p, &i))
			return false;
		if (given[i]) {
			cli_error("--submodule %s is given twice", mm->sub[i].name);
			return false;
		}
		/* --monolithic: every submodule on the same GPUs, in turn. */
		if (r->monolithic && k > 0 && plan_gpus(&p) != used) {
			cli_error("--monolithic: submodule '%s' takes %d GPUs where the one before takes %d; "
				  "each runs on all of them, in turn", mm->sub[i].name, plan_gpus(&p), used);
			return false;
		}
		given[i] = true;
		plans[i] = p;
		used = r->monolithic ? plan_gpus(&p) : used + plan_gpus(&p);
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
		cli_output_error();
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
	total = r->gpus ? r->gpus : cluster_gpus(&cluster);
	rc = CLI_EXIT_USAGE;
	if (r->gpus > cluster_gpus(&cluster)) {
		cli_error("--gpus %d is more than cluster '%s' has (%d)", r->gpus, cluster.name, cluster_gpus(&cluster));
		goto out;
	}
	if (r->nsubmodule_args == 0 ? !monolithic_plans(r, &mm, &cluster, plans) :
				      !submodule_plans(r, &mm, &cluster, total, plans))
		goto out;
	plan_error_clear(&err);
	if (!multimodal_estimate(&mm, &cluster, plans, r->nsubmodule_args == 0 || r->monolithic, &r->opt, &est, &err)) {
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

/* The predict arguments of @plans, a --submodule each (the options the
 * submodules share as optimize was given them), with --monolithic for
 * the monolithic side (each plan on all the GPUs, in turn), that predict
 * times as optimize did; NULL when out of memory. */
static json_t *
mm_predict_args(const struct mm_search *s, const struct plan *plans, bool monolithic)
{
	static char specs[MULTIMODAL_MAX_SUBMODULES][CLI_PLAN_SPEC_MAX];
	const struct optimize_request *r = s->r;
	struct predict_request p;

	_Static_assert(MULTIMODAL_MAX_SUBMODULES <= CLI_MAX_SUBMODULE_ARGS, "a --submodule for every submodule");
	cli_predict_request_init(&p);
	p.model = r->model;
	p.cluster = r->cluster;
	p.framework = r->framework;
	p.links = r->links;
	p.plan.global_batch = r->so.global_batch;
	p.opt.dp_algo = s->opt.dp_algo;
	p.monolithic = monolithic;
	for (int i = 0; i < s->mm->nsub; i++) {
		if (!plan_spec(s->mm->sub[i].name, &plans[i], specs[i], sizeof(specs[i])))
			snprintf(specs[i], sizeof(specs[i]), "(too long)");
		p.submodule_args[p.nsubmodule_args++] = specs[i];
	}
	return cli_predict_args(&p);
}

/* One side of optimize's JSON; @args its predict_args (taken), NULL: none. */
static json_t *
opt_side_json(const struct multimodal *mm, const struct multimodal_estimate *e, const struct plan *plans,
	      json_t *args)
{
	json_t *o = json_object(), *subs = json_array();

	for (int i = 0; o && subs && i < mm->nsub; i++) {
		char spec[CLI_PLAN_SPEC_MAX];

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
		json_decref(args);
		return NULL;
	}
	json_object_set_new(o, "gpus", json_integer(e->total_gpus));
	json_object_set_new(o, "iteration_time_s", json_real(e->iteration_time_s));
	json_object_set_new(o, "batch_sync_s", json_real(e->batch_sync_s));
	json_object_set_new(o, "samples_per_s", json_real(e->samples_per_s));
	json_object_set_new(o, "memory_bytes", json_real(e->memory_bytes));
	json_object_set_new(o, "fits", json_boolean(e->fits));
	json_object_set_new(o, "submodules", subs);
	if (args)
		json_object_set_new(o, "predict_args", args);
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

/* Whether the monolithic side is the faster (issue 26: a split 0.81x as
 * fast as the monolithic plan was recommended). A tie keeps the split. */
static bool
mono_faster(const struct mm_found *f)
{
	return f->mono && f->mono->fits && f->mono->iteration_time_s < f->best->iteration_time_s;
}

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
	if (r->objective == CLI_OBJECTIVE_GOODPUT || r->ckpt.target != CHECKPOINT_NONE) {
		cli_error("--objective goodput and --checkpoint-to do not apply to a multimodal model (its "
			  "checkpoints are not modelled per submodule)");
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
		json_object_set_new(root, "per_submodule", opt_side_json(s->mm, f->best, f->best_plans,
									      mm_predict_args(s, f->best_plans, false)));
		json_object_set_new(root, "monolithic",
				    f->mono ? opt_side_json(s->mm, f->mono, f->mono_plans,
							    mm_predict_args(s, f->mono_plans, true))
					    : json_null());
		json_object_set_new(root, "best", json_string(mono_faster(f) ? "monolithic" : "per_submodule"));
		json_object_set_new(root, "speedup", f->mono ? json_real(f->mono->iteration_time_s / f->best->iteration_time_s)
							     : json_null());
		json_object_set_new(root, "splits", json_integer(s->splits));
		json_object_set_new(root, "searches", json_integer(s->searches));
		json_object_set_new(root, "seconds", json_real(f->seconds));
	}
	return write_json(root);
}

static bool
optimize_text(const struct mm_found *f)
{
	const struct mm_search *s = f->s;
	const struct multimodal *mm = s->mm;
	const struct optimize_request *r = s->r;
	json_t *args;
	char *line;

	printf("%s on %s: %d GPUs (%s), global batch %d, multimodal (%d submodules)\n\n", mm->name, s->c->name,
	       f->total, s->c->gpu.name, r->so.global_batch, mm->nsub);
	/* The faster side first; predict_args are its. */
	if (mono_faster(f))
		opt_side_text("monolithic (each submodule on all GPUs, in turn)", mm, f->mono, f->mono_plans);
	opt_side_text("per-submodule (DistMM)", mm, f->best, f->best_plans);
	if (f->mono && !mono_faster(f))
		opt_side_text("monolithic (each submodule on all GPUs, in turn)", mm, f->mono, f->mono_plans);
	if (f->mono)
		printf("speedup         %.2fx per-submodule over monolithic%s\n",
		       f->mono->iteration_time_s / f->best->iteration_time_s,
		       mono_faster(f) ? ": the monolithic plan is faster" : "");
	else
		printf("monolithic: no plan of all %d GPUs fits some submodule\n", f->total);
	if (!(args = mono_faster(f) ? mm_predict_args(s, f->mono_plans, true) : mm_predict_args(s, f->best_plans, false)))
		return false;
	line = optimize_args_line(args);
	json_decref(args);
	if (!line)
		return false;
	printf("predict_args    %s", line);
	free(line);
	printf("\nsearch          %ld splits of %d GPUs, %ld searches in %.2f s\n", s->splits, f->total, s->searches,
	       f->seconds);
	return true;
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
			cli_output_error();
			return CLI_EXIT_FAILURE;
		}
	} else if (!optimize_text(&f)) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
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
