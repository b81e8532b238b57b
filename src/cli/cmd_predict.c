#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "plan/compression.h"
#include "plan/estimate.h"
#include "io/format.h"
#include "plan/units.h"

static const char predict_usage[] =
	"usage: plan-cli predict --model NAME|FILE --cluster NAME|FILE --global-batch N [options]\n"
	"\n"
	"  --model NAME|FILE        model profile (bundled name or YAML path)\n"
	"  --cluster NAME|FILE      cluster profile (bundled name or YAML path)\n"
	"  --tp N                   tensor-parallel degree (default 1)\n"
	"  --pp N                   pipeline-parallel degree (default 1)\n"
	"  --dp N                   data-parallel degree (default: the GPUs left after tp x pp)\n"
	"  --gpus N                 GPUs to use (default: the whole cluster)\n"
	"  --vpp N                  interleaved model chunks per GPU (default 1: plain 1F1B)\n"
	"  --micro-batch N          sequences per micro-batch (default 1)\n"
	"  --global-batch N         sequences per iteration (required)\n"
	"  --seq-len N              tokens per sequence (default: the model's seq_len)\n"
	"  --recompute MODE         none|selective|full (default none)\n"
	"  --sequence-parallel      Megatron sequence parallelism with TP\n"
	"  --flash-attention        fused attention: no s^2 scores in memory\n"
	"  --zero N                 ZeRO stage 0|1|2|3 over the DP group (default 0)\n"
	"  --no-dp-overlap          do not overlap DP/ZeRO traffic with computation\n"
	"  --dp-allreduce ALGO      ring|hierarchical (default ring)\n"
	"  --ep N                   expert parallelism, out of the DP ranks (default 1)\n"
	"  --moe-routing R          flat|bilevel all-to-all (default flat; bilevel: SMILE)\n"
	"  --moe-overlap O          none|lancet: overlap the all-to-all (default none)\n"
	"  --mics-group G           MiCS: ZeRO-3 inside groups of G GPUs (needs --zero 3)\n"
	"  --no-mics-hierarchical   MiCS: flat instead of 2-hop parameter all-gather\n"
	"  --stage-layers LIST      layers per pipeline stage, e.g. 7,8,8,7 (default: even)\n"
	"  --stage-recompute LIST   recompute per stage, e.g. full,full,selective,none\n"
	"  --compressor NAME|FILE   compressor profile (bundled name or YAML path)\n"
	"  --compress LIST          where to compress: any of tp,pp,dp (default with a\n"
	"                           compressor: tp,pp, MCBench's model-parallel activations)\n"
	"  --compress-from-layer N  TP: compress layers above N (default: half the layers)\n"
	"  --compress-from-stage N  PP: stages from N on compress their sends (default 0)\n"
	"  --dp-compress-scheme S   auto|allgather|twoway|allreduce (default auto: allreduce for\n"
	"                           powersgd, else two-way push/pull as in BytePS-Compress)\n"
	"  --dp-compress-on WHERE   gpu|cpu: where DP compression runs (default gpu)\n"
	"  --nic-bandwidth BW       override the cluster's per-NIC bandwidth (\"25 Gbit/s\")\n"
	"  --intra-bandwidth BW     override the cluster's per-GPU intra-node bandwidth\n"
	"  --format FMT             text|json|csv (default text)\n"
	"  -h, --help               show this help\n";

enum {
	OPT_MODEL = 256, OPT_CLUSTER, OPT_TP, OPT_PP, OPT_DP, OPT_GPUS, OPT_VPP, OPT_MB,
	OPT_GB, OPT_SEQ, OPT_RECOMPUTE, OPT_SP, OPT_FLASH, OPT_ZERO, OPT_NO_OVERLAP,
	OPT_DP_ALGO, OPT_FORMAT, OPT_COMPRESSOR, OPT_COMPRESS, OPT_FROM_LAYER, OPT_FROM_STAGE,
	OPT_DP_SCHEME, OPT_DP_ON, OPT_NIC_BW, OPT_INTRA_BW, OPT_EP, OPT_ROUTING, OPT_MOE_OVERLAP,
	OPT_MICS, OPT_NO_MICS_HIER, OPT_STAGE_LAYERS, OPT_STAGE_RECOMPUTE,
};

static const struct option predict_options[] = {
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "cluster", required_argument, NULL, OPT_CLUSTER },
	{ "tp", required_argument, NULL, OPT_TP },
	{ "pp", required_argument, NULL, OPT_PP },
	{ "dp", required_argument, NULL, OPT_DP },
	{ "gpus", required_argument, NULL, OPT_GPUS },
	{ "vpp", required_argument, NULL, OPT_VPP },
	{ "micro-batch", required_argument, NULL, OPT_MB },
	{ "global-batch", required_argument, NULL, OPT_GB },
	{ "seq-len", required_argument, NULL, OPT_SEQ },
	{ "recompute", required_argument, NULL, OPT_RECOMPUTE },
	{ "sequence-parallel", no_argument, NULL, OPT_SP },
	{ "flash-attention", no_argument, NULL, OPT_FLASH },
	{ "zero", required_argument, NULL, OPT_ZERO },
	{ "no-dp-overlap", no_argument, NULL, OPT_NO_OVERLAP },
	{ "dp-allreduce", required_argument, NULL, OPT_DP_ALGO },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "compressor", required_argument, NULL, OPT_COMPRESSOR },
	{ "compress", required_argument, NULL, OPT_COMPRESS },
	{ "compress-from-layer", required_argument, NULL, OPT_FROM_LAYER },
	{ "compress-from-stage", required_argument, NULL, OPT_FROM_STAGE },
	{ "dp-compress-scheme", required_argument, NULL, OPT_DP_SCHEME },
	{ "dp-compress-on", required_argument, NULL, OPT_DP_ON },
	{ "nic-bandwidth", required_argument, NULL, OPT_NIC_BW },
	{ "ep", required_argument, NULL, OPT_EP },
	{ "moe-routing", required_argument, NULL, OPT_ROUTING },
	{ "moe-overlap", required_argument, NULL, OPT_MOE_OVERLAP },
	{ "mics-group", required_argument, NULL, OPT_MICS },
	{ "no-mics-hierarchical", no_argument, NULL, OPT_NO_MICS_HIER },
	{ "stage-layers", required_argument, NULL, OPT_STAGE_LAYERS },
	{ "stage-recompute", required_argument, NULL, OPT_STAGE_RECOMPUTE },
	{ "intra-bandwidth", required_argument, NULL, OPT_INTRA_BW },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define BIGINT 100000000L

/* Parse "tp,pp,dp" (any subset) into the compression flags. */
static bool
parse_compress_list(const char *arg, struct plan_compression *pc)
{
	char buf[64];
	char *save = NULL;

	if (strlen(arg) >= sizeof(buf) || !arg[0]) {
		cli_error("--compress expects a list of tp, pp and dp, got '%s'", arg);
		return false;
	}
	memcpy(buf, arg, strlen(arg) + 1);
	pc->tp = pc->pp = pc->dp = false;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "tp") == 0)
			pc->tp = true;
		else if (strcmp(tok, "pp") == 0)
			pc->pp = true;
		else if (strcmp(tok, "dp") == 0)
			pc->dp = true;
		else {
			cli_error("unknown value '%s' in --compress (valid: tp, pp, dp)", tok);
			return false;
		}
	}
	if (!pc->tp && !pc->pp && !pc->dp) {
		cli_error("--compress expects a list of tp, pp and dp, got '%s'", arg);
		return false;
	}
	return true;
}

static const char *const dp_on_names[] = { "gpu", "cpu", NULL };

/* "a,b,c": layers per stage, or recompute names per stage. */
static bool
parse_stage_list(const char *opt, const char *arg, struct plan *p, bool recompute)
{
	char buf[4096];
	char *save = NULL;
	int n = 0;

	if (strlen(arg) >= sizeof(buf)) {
		cli_error("%s: list too long", opt);
		return false;
	}
	memcpy(buf, arg, strlen(arg) + 1);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int v;

		if (n >= PLAN_MAX_STAGES) {
			cli_error("%s: more than %d stages", opt, PLAN_MAX_STAGES);
			return false;
		}
		if (recompute) {
			if (!cli_choice(opt, tok, plan_recompute_names, &v))
				return false;
			p->stage_recompute[n++] = (signed char)v;
		} else {
			if (!cli_int(opt, tok, 1, 30000, &v))
				return false;
			p->stage_layers[n++] = (short)v;
		}
	}
	if (n == 0) {
		cli_error("%s expects a comma-separated list, got '%s'", opt, arg);
		return false;
	}
	if (recompute) {
		p->custom_recompute = true;
		p->stage_recompute_count = n;
	} else {
		p->custom_layers = true;
		p->stage_layers_count = n;
	}
	return true;
}

/* A bandwidth given on the command line ("25 Gbit/s"); 0 when not given. */
static bool
parse_bandwidth(const char *opt, const char *arg, double *out)
{
	char why[256] = "";

	*out = 0.0;
	if (!units_parse(arg, UNIT_BANDWIDTH, out, why, sizeof(why)) || *out <= 0) {
		cli_error("%s: %s", opt, *out <= 0 && why[0] == '\0' ? "must be positive" : why);
		return false;
	}
	return true;
}

/* Parse one predict option into @p / @opt; false on a usage error. */
static bool
parse_option(int c, const char *arg, struct plan *p, struct estimate_options *opt,
	     int *gpus, int *format, const char **model, const char **cluster,
	     const char **compressor, bool *compress_given, double *bw)
{
	int v;

	switch (c) {
	case OPT_MODEL: *model = arg; return true;
	case OPT_CLUSTER: *cluster = arg; return true;
	case OPT_TP: return cli_int("--tp", arg, 1, 1 << 20, &p->tp);
	case OPT_PP: return cli_int("--pp", arg, 1, 1 << 20, &p->pp);
	case OPT_DP: return cli_int("--dp", arg, 1, 1 << 24, &p->dp);
	case OPT_GPUS: return cli_int("--gpus", arg, 1, 1 << 26, gpus);
	case OPT_VPP: return cli_int("--vpp", arg, 1, 1024, &p->vpp);
	case OPT_MB: return cli_int("--micro-batch", arg, 1, BIGINT, &p->micro_batch);
	case OPT_GB: return cli_int("--global-batch", arg, 1, BIGINT, &p->global_batch);
	case OPT_SEQ: return cli_int("--seq-len", arg, 1, BIGINT, &p->seq_len);
	case OPT_RECOMPUTE: return cli_choice("--recompute", arg, plan_recompute_names, &p->recompute);
	case OPT_SP: p->sequence_parallel = true; return true;
	case OPT_FLASH: p->flash_attention = true; return true;
	case OPT_ZERO: return cli_int("--zero", arg, 0, 3, &p->zero);
	case OPT_NO_OVERLAP: p->dp_overlap = false; return true;
	case OPT_DP_ALGO:
		if (!cli_choice("--dp-allreduce", arg, coll_algo_names, &v))
			return false;
		opt->dp_algo = (enum coll_algo)v;
		return true;
	case OPT_FORMAT: return cli_choice("--format", arg, cli_format_names, format);
	case OPT_COMPRESSOR: *compressor = arg; return true;
	case OPT_EP: return cli_int("--ep", arg, 1, 1 << 24, &p->ep);
	case OPT_ROUTING: return cli_choice("--moe-routing", arg, plan_moe_routing_names, &p->moe_routing);
	case OPT_MOE_OVERLAP: return cli_choice("--moe-overlap", arg, plan_moe_overlap_names, &p->moe_overlap);
	case OPT_MICS: return cli_int("--mics-group", arg, 1, 1 << 24, &p->mics_group);
	case OPT_NO_MICS_HIER: p->mics_hierarchical = false; return true;
	case OPT_STAGE_LAYERS: return parse_stage_list("--stage-layers", arg, p, false);
	case OPT_STAGE_RECOMPUTE: return parse_stage_list("--stage-recompute", arg, p, true);
	case OPT_NIC_BW: return parse_bandwidth("--nic-bandwidth", arg, &bw[0]);
	case OPT_INTRA_BW: return parse_bandwidth("--intra-bandwidth", arg, &bw[1]);
	case OPT_COMPRESS:
		*compress_given = true;
		return parse_compress_list(arg, &p->compress);
	case OPT_FROM_LAYER: return cli_int("--compress-from-layer", arg, 0, 1 << 20, &p->compress.from_layer);
	case OPT_FROM_STAGE: return cli_int("--compress-from-stage", arg, 0, 1 << 20, &p->compress.from_stage);
	case OPT_DP_SCHEME:
		return cli_choice("--dp-compress-scheme", arg, compress_dp_scheme_names, &p->compress.dp_scheme);
	case OPT_DP_ON:
		if (!cli_choice("--dp-compress-on", arg, dp_on_names, &v))
			return false;
		p->compress.dp_on_cpu = v == 1;
		return true;
	default:
		return false;
	}
}

/* Fill the degrees left unset from the GPU count. */
static bool
complete_plan(struct plan *p, int gpus, const struct model *m, const struct cluster *c)
{
	long total = gpus ? gpus : cluster_gpus(c);

	if (gpus > cluster_gpus(c)) {
		cli_error("--gpus %d is more than cluster '%s' has (%d)", gpus, c->name, cluster_gpus(c));
		return false;
	}
	if (p->seq_len == 0)
		p->seq_len = m->seq_len;
	if (p->dp == 0) {
		if (total % ((long)p->tp * p->pp) != 0) {
			cli_error("%ld GPUs are not divisible by tp x pp (%d x %d); give --dp or --gpus",
				  total, p->tp, p->pp);
			return false;
		}
		p->dp = (int)(total / ((long)p->tp * p->pp));
	} else if (gpus && (long)p->tp * p->pp * p->dp != gpus) {
		cli_error("--gpus %d does not match tp x pp x dp (%d x %d x %d = %ld)", gpus,
			  p->tp, p->pp, p->dp, (long)p->tp * p->pp * p->dp);
		return false;
	}
	return true;
}

int
cmd_predict(int argc, char **argv)
{
	const char *model_arg = NULL, *cluster_arg = NULL, *compressor_arg = NULL;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct compressor compressor;
	bool compress_given = false;
	double bw[2] = { 0.0, 0.0 }; /* --nic-bandwidth, --intra-bandwidth */
	struct model model;
	struct cluster cluster;
	struct estimate est;
	struct plan_error err;
	struct plan plan;
	struct report rep;
	int gpus = 0, format = CLI_FORMAT_TEXT, c, rc;
	bool ok;

	plan_init(&plan);
	plan.tp = 1;
	plan.pp = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", predict_options, NULL)) != -1) {
		if (c == 'h') {
			fputs(predict_usage, stdout);
			return cli_finish(CLI_EXIT_OK);
		}
		if (c == '?') {
			cli_error("unknown option '%s' for predict (see 'plan-cli predict --help')",
				  argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
		if (c == ':') {
			cli_error("option '%s' needs a value", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
		if (!parse_option(c, optarg, &plan, &opt, &gpus, &format, &model_arg, &cluster_arg,
				  &compressor_arg, &compress_given, bw))
			return CLI_EXIT_USAGE;
	}
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	if (!model_arg || !cluster_arg || plan.global_batch == 0) {
		cli_error("predict needs --model, --cluster and --global-batch (see 'plan-cli predict --help')");
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_load_model(model_arg, &model)) != CLI_EXIT_OK)
		return rc;
	if (compress_given && !compressor_arg) {
		cli_error("--compress needs --compressor");
		return CLI_EXIT_USAGE;
	}
	if (compressor_arg) {
		if ((rc = cli_load_compressor(compressor_arg, &compressor)) != CLI_EXIT_OK)
			return rc;
		opt.compressor = &compressor;
		if (!compress_given)
			plan.compress.tp = plan.compress.pp = true;
	}
	if ((rc = cli_load_cluster(cluster_arg, &cluster)) != CLI_EXIT_OK)
		return rc;
	if (bw[0] > 0)
		cluster.inter.nic_bandwidth_Bps = bw[0];
	if (bw[1] > 0)
		cluster.intra.bandwidth_Bps = bw[1];
	if ((plan.custom_layers && plan.stage_layers_count != plan.pp) ||
	    (plan.custom_recompute && plan.stage_recompute_count != plan.pp)) {
		cli_error("--stage-layers and --stage-recompute need one entry per stage (pp %d)", plan.pp);
		cluster_release(&cluster);
		return CLI_EXIT_USAGE;
	}
	if (!complete_plan(&plan, gpus, &model, &cluster)) {
		cluster_release(&cluster);
		return CLI_EXIT_USAGE;
	}
	plan_error_clear(&err);
	if (!estimate_plan(&model, &cluster, &plan, &opt, &est, &err)) {
		cluster_release(&cluster);
		return cli_report(&err);
	}
	rep = (struct report){ &model, &cluster, &plan, &est, &opt, opt.compressor };
	switch (format) {
	case CLI_FORMAT_JSON:
		ok = format_json(stdout, &rep);
		break;
	case CLI_FORMAT_CSV:
		ok = format_csv_header(stdout) && format_csv_row(stdout, &rep);
		break;
	default:
		ok = format_text(stdout, &rep);
	}
	cluster_release(&cluster);
	if (!ok) {
		cli_error("cannot write the output");
		return CLI_EXIT_FAILURE;
	}
	return cli_finish(CLI_EXIT_OK);
}
