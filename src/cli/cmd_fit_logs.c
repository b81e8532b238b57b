/*
 * plan-cli fit-logs: link parameters from nccl-tests logs, GEMM
 * parameters from GEMM timings (fit_link.c, fit_gemm.c do the fitting).
 * cli_fit_nccl() and cli_fit_gemm() are what a calibrate command calls.
 */
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "io/profile_path.h"
#include "io/utf8.h"
#include "cli/options.h"
#include "plan/cluster.h"
#include "plan/fit_gemm.h"
#include "plan/fit_link.h"
#include "io/gemm_log.h"
#include "io/profile_load.h"
#include "io/schema.h"
#include "io/nccl_log.h"

/* ------------------------------------------------- fit-logs options */

#define FIT(field) offsetof(struct fit_logs_request, field)

static const char *const fit_format_names[] = { "text", "json", NULL };

static const struct cli_option fit_logs_rows[] = {
	{ .name = "nccl-tests", .kind = CLI_OPT_FLAG, .offset = FIT(nccl), .label = "--nccl-tests LOG...",
	  .help = "fit a link to nccl-tests logs (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
		  "alltoall_perf, sendrecv_perf output)" },
	{ .name = "level", .metavar = "intra|inter", .kind = CLI_OPT_CHOICE, .choices = fit_link_level_names,
	  .offset = FIT(level), .help = "the link the logs measured (default: one host intra, more inter)" },
	{ .name = "gpus-per-node", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = 1024,
	  .offset = FIT(gpus_per_node), .help = "GPUs per node of the runs (default: counted from the logs' hosts)" },
	{ .name = "cluster", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = FIT(cluster),
	  .help = "line rates to split bandwidth x efficiency, and the intra-node link an inter fit keeps" },
	{ .name = "gemm", .metavar = "CSV", .kind = CLI_OPT_STRING, .offset = FIT(gemm),
	  .help = "fit the GPU's GEMM efficiency, and its SM count and tile, to timings (m,n,k,dtype,seconds; "
		  "scripts/measure-gpu.py)" },
	{ .name = "gpu", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = FIT(gpu),
	  .help = "the GPU the GEMMs ran on (its peaks; required with --gemm)" },
	{ .name = "output", .metavar = "FILE", .kind = CLI_OPT_STRING, .offset = FIT(output),
	  .help = "write the fitted intra_node:/inter_node: block or GPU profile (YAML) to FILE" },
	{ .name = "format", .metavar = "text|json", .kind = CLI_OPT_CHOICE, .choices = fit_format_names,
	  .offset = FIT(format), .help = "report format (default text)" },
	CLI_HELP_ROW,
	{ .name = NULL },
};

const struct cli_command_options cli_fit_logs_options = {
	.command = "fit-logs",
	.synopsis = "usage: plan-cli fit-logs --nccl-tests LOG... [--level intra|inter] [--gpus-per-node N]\n"
		    "                         [--cluster NAME|FILE] [--output FILE] [--format text|json]\n"
		    "   or: plan-cli fit-logs --gemm CSV --gpu NAME|FILE [--output FILE] [--format text|json]\n"
		    "\n"
		    "Fit the link parameters (bandwidth x efficiency, latency, message_half_size) of\n"
		    "collective.c's model to nccl-tests logs, or the GPU's gemm_efficiency_max,\n"
		    "gemm_overhead and fp8_gemm_ratio to GEMM timings (and search its sm_count and\n"
		    "GEMM tile, the wave model); print them with standard errors and the fit's MAPE,\n"
		    "and write them as a profile snippet.\n"
		    "\n",
	.options = fit_logs_rows,
	.width = 28,
	.hint = true,
};

/* The logs of one fit and what was read from them. */
struct nccl_set {
	const char *const *files;
	struct nccl_log *logs;
	int n;
	struct fit_link_point *pts;
	int npts, cap;
};

static void
nccl_set_release(struct nccl_set *s)
{
	for (int i = 0; s->logs && i < s->n; i++)
		nccl_log_release(&s->logs[i]);
	free(s->logs);
	free(s->pts);
}

/* Nodes of log @l: its ranks over --gpus-per-node, else its hosts. */
static int
log_nodes(const struct nccl_log *l, int gpus_per_node, const char *file)
{
	if (gpus_per_node <= 0)
		return l->nodes;
	if (l->ranks > gpus_per_node && l->ranks % gpus_per_node != 0) {
		cli_error("%s: %d ranks do not fill nodes of --gpus-per-node %d", file, l->ranks, gpus_per_node);
		return -1;
	}
	return l->ranks > gpus_per_node ? l->ranks / gpus_per_node : 1;
}

static int
read_logs(struct nccl_set *s, const struct fit_logs_request *r)
{
	struct plan_error err;

	s->logs = calloc((size_t)s->n, sizeof(*s->logs));
	if (!s->logs) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	for (int i = 0; i < s->n; i++) {
		int nodes;

		plan_error_clear(&err);
		if (!nccl_log_load(s->files[i], &s->logs[i], &err))
			return cli_report(&err);
		if ((nodes = log_nodes(&s->logs[i], r->gpus_per_node, s->files[i])) < 0)
			return CLI_EXIT_USAGE;
		if (!nccl_log_points(&s->logs[i], nodes, &s->pts, &s->npts, &s->cap, &err)) {
			if (!err.file[0])
				snprintf(err.file, sizeof(err.file), "%s", s->files[i]);
			return cli_report(&err);
		}
	}
	return CLI_EXIT_OK;
}

/* --level, else intra when every run is on one node and inter when none is. */
static int
pick_level(const struct nccl_set *s, int given, int *level)
{
	int one = 0;

	for (int i = 0; i < s->npts; i++)
		one += s->pts[i].nodes == 1;
	if (given >= 0)
		*level = given;
	else if (one == s->npts || one == 0)
		*level = one ? FIT_LINK_INTRA : FIT_LINK_INTER;
	else {
		cli_error("the logs mix runs on one node and on several: fit them apart, or give --level");
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

/*
 * The links not fitted, without --cluster: no line rate (the fitted
 * bandwidth is written at efficiency 1), an intra-node link too fast to
 * bound an inter-node run, and the schema's default latencies and half
 * size, NCCL's 1 us a network post and 1.9 ring plateau (cluster_load.c); one NIC per node
 * carrying the node's traffic.
 */
static void
default_base(const struct nccl_set *s, struct cluster *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "fitted");
	c->nodes = 1;
	for (int i = 0; i < s->npts; i++)
		if (s->pts[i].ranks / s->pts[i].nodes > c->gpus_per_node)
			c->gpus_per_node = s->pts[i].ranks / s->pts[i].nodes;
	c->intra = (struct cluster_intra){ .bandwidth_Bps = 1e15, .latency_s = 3e-6, .efficiency = 1.0 };
	c->inter = (struct cluster_inter){ .nics_per_node = 1, .nic_bandwidth_Bps = 0.0, .latency_s = 5e-6,
					   .efficiency = 1.0, .half_size_bytes = 65536.0, .net_overhead_s = 1e-6,
					   .ring_plateau = 1.9 };
}

static void
print_link_text(const struct nccl_set *s, const struct fit_link_result *f)
{
	printf("%s-node link from %d log%s, %d points:\n", f->level == FIT_LINK_INTRA ? "intra" : "inter",
	       s->n, s->n == 1 ? "" : "s", f->points);
	for (int i = 0; i < s->n; i++)
		printf("  %s: %s on %d ranks, %d host%s, %d sizes%s%s\n", s->files[i],
		       fit_coll_names[s->logs[i].coll], s->logs[i].ranks, s->logs[i].nodes,
		       s->logs[i].nodes == 1 ? "" : "s", s->logs[i].n, s->logs[i].gpu[0] ? ", " : "", s->logs[i].gpu);
	if (f->bandwidth_fitted)
		printf("bandwidth x efficiency  %10.4g GB/s  +- %.3g GB/s (%.4g Gbit/s)%s\n", f->bandwidth_Bps / 1e9,
		       f->bandwidth_se / 1e9, f->bandwidth_Bps * 8 / 1e9,
		       f->level == FIT_LINK_INTER ? ", the NIC share of one GPU" : ", per GPU");
	else
		printf("bandwidth x efficiency  not fitted (all-to-all logs only): the --cluster's efficiency kept\n");
	if (f->a2a_points > 0)
		printf("all-to-all x efficiency %10.4g GB/s  +- %.3g GB/s (%.4g Gbit/s), %d points, MAPE %.2f %%\n",
		       f->a2a_bandwidth_Bps / 1e9, f->a2a_bandwidth_se / 1e9, f->a2a_bandwidth_Bps * 8 / 1e9,
		       f->a2a_points, 100 * f->a2a_mape);
	printf("latency                 %10.4g us    +- %.3g us%s\n", f->latency_s * 1e6, f->latency_se * 1e6,
	       f->latency_fitted ? "" : " (held at 0: the fit wanted it negative)");
	printf("collective_latency      %10.4g us    +- %.3g us%s\n", f->collective_latency_s * 1e6,
	       f->collective_latency_se * 1e6, f->collective_latency_fitted ? "" :
	       f->level == FIT_LINK_INTER ? " (the --cluster's, held)" : f->collective_latency_negative ?
	       " (held at 0: the fit wanted it negative)" :
	       " (held at 0: one step count cannot tell it from the latency; logs of two collectives can)");
	if (f->level == FIT_LINK_INTER)
		printf("message_half_size       %10.4g KiB   +- %.3g KiB%s\n", f->half_size_bytes / 1024,
		       f->half_size_se / 1024, f->half_size_fitted ? "" : f->half_size_negative ?
		       " (held at 0: the fit wanted it negative; the --cluster's intra-node link may not be the one "
		       "the logs ran on)" :
		       " (held: the runs cannot tell it from the latency; runs on two node counts can)");
	printf("fit                     MAPE %.2f %%, worst %.2f %% (collective.c with the fitted link)\n",
	       100 * f->mape, 100 * f->max_abs_error);
}

static json_t *
link_json(const struct nccl_set *s, const struct fit_link_result *f)
{
	json_t *logs = json_array();

	/* A log that does not go in (a failed pack) fails the whole report:
	 * print_json says so rather than print "logs": []. File names that
	 * are not UTF-8 go in escaped (utf8.h), which jansson takes. */
	for (int i = 0; logs && i < s->n; i++)
		if (json_array_append_new(logs, json_pack("{s:o, s:s, s:i, s:i, s:s, s:i, s:f}", "file",
							  utf8_json_string(s->files[i]),
						      "collective", fit_coll_names[s->logs[i].coll],
						      "ranks", s->logs[i].ranks, "hosts", s->logs[i].nodes,
						      "gpu", s->logs[i].gpu, "sizes", s->logs[i].n,
						      "avg_busbw_Bps", s->logs[i].avg_busbw_Bps)) != 0) {
			json_decref(logs);
			return NULL;
		}
	if (!logs)
		return NULL;
	/* A bandwidth not fitted is null, not 0: all-to-all logs alone do
	 * not measure the link's, and no all-to-all log not all-to-all's. */
	return json_pack("{s:s, s:s, s:o, s:i, s:i, s:o, s:o, s:b, s:i, s:o, s:o, s:o, s:f, s:f, s:b, s:f, s:f, "
			 "s:b, s:f, s:f, s:b, s:b, s:f, s:f}",
			 "kind", "nccl-tests", "level", fit_link_level_names[f->level], "logs", logs,
			 "points", f->points, "parameters", f->params,
			 "bandwidth_Bps", f->bandwidth_fitted ? json_real(f->bandwidth_Bps) : json_null(),
			 "bandwidth_se_Bps", f->bandwidth_fitted ? json_real(f->bandwidth_se) : json_null(),
			 "bandwidth_fitted", f->bandwidth_fitted, "all_to_all_points", f->a2a_points,
			 "all_to_all_bandwidth_Bps", f->a2a_points ? json_real(f->a2a_bandwidth_Bps) : json_null(),
			 "all_to_all_bandwidth_se_Bps", f->a2a_points ? json_real(f->a2a_bandwidth_se) : json_null(),
			 "all_to_all_mape", f->a2a_points ? json_real(f->a2a_mape) : json_null(),
			 "latency_s", f->latency_s, "latency_se_s", f->latency_se, "latency_fitted", f->latency_fitted,
			 "collective_latency_s", f->collective_latency_s, "collective_latency_se_s",
			 f->collective_latency_se, "collective_latency_fitted", f->collective_latency_fitted,
			 "half_size_bytes", f->half_size_bytes, "half_size_se_bytes", f->half_size_se,
			 "half_size_fitted", f->half_size_fitted, "half_size_negative", f->half_size_negative,
			 "mape", f->mape, "max_abs_error", f->max_abs_error);
}

static int
print_json(json_t *obj)
{
	int rc = obj && json_dumpf(obj, stdout, JSON_INDENT(2)) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;

	json_decref(obj);
	if (rc != CLI_EXIT_OK)
		cli_error("out of memory");
	else
		putchar('\n');
	return rc;
}

/* The fitted block, with @c's values after fit_link_apply(), units written out. */
static void
link_yaml(const struct nccl_set *s, const struct fit_link_result *f, const struct cluster *c, char *buf, size_t size)
{
	int len = snprintf(buf, size, "# plan-cli fit-logs --nccl-tests:");
	double a2a_eff;

	/* Names escaped for a comment: 4 bytes a byte at most (write_link's size). */
	for (int i = 0; i < s->n && len < (int)size; i++) {
		buf[len++] = ' ';
		len += (int)utf8_escape(buf + len, size - (size_t)len, s->files[i], true);
	}
	if (len >= (int)size)
		return;
	if (f->bandwidth_fitted)
		len += snprintf(buf + len, size - (size_t)len,
				"\n# bandwidth x efficiency %.6g GB/s +- %.3g, latency %.6g us +- %.3g, MAPE %.2f %% "
				"over %d points\n", f->bandwidth_Bps / 1e9, f->bandwidth_se / 1e9, f->latency_s * 1e6,
				f->latency_se * 1e6, 100 * f->mape, f->points);
	else
		len += snprintf(buf + len, size - (size_t)len,
				"\n# efficiency not fitted (all-to-all logs only): the --cluster's; latency %.6g us "
				"+- %.3g, MAPE %.2f %% over %d points\n", f->latency_s * 1e6, f->latency_se * 1e6,
				100 * f->mape, f->points);
	if (len < (int)size && f->a2a_points > 0)
		len += snprintf(buf + len, size - (size_t)len,
				"# all-to-all bandwidth x efficiency %.6g GB/s +- %.3g over %d points, MAPE %.2f %%\n",
				f->a2a_bandwidth_Bps / 1e9, f->a2a_bandwidth_se / 1e9, f->a2a_points,
				100 * f->a2a_mape);
	if (len >= (int)size)
		return;
	if (f->level == FIT_LINK_INTRA)
		len += snprintf(buf + len, size - (size_t)len,
				"intra_node:\n  bandwidth: %.9g GB/s\n  latency: %.9g us\n  collective_latency: %.9g us\n"
				"  efficiency: %.9g\n",
				c->intra.bandwidth_Bps / 1e9, c->intra.latency_s * 1e6,
				c->intra.collective_latency_s * 1e6, c->intra.efficiency);
	else
		len += snprintf(buf + len, size - (size_t)len,
				"# message_half_size %s (+- %.3g KiB)\n"
				"# fitted with the --cluster's intra-node link, collective_latency included\n"
				"inter_node:\n  nics_per_node: %d\n  nic_bandwidth: %.9g Gbit/s\n  latency: %.9g us\n"
				"  efficiency: %.9g\n  message_half_size: %.9g KiB\n  net_overhead: %.9g us\n"
				"  ring_plateau: %.9g\n",
				f->half_size_fitted ? "fitted" : "held, not fitted", f->half_size_se / 1024,
				c->inter.nics_per_node, c->inter.nic_bandwidth_Bps * 8 / 1e9, c->inter.latency_s * 1e6,
				c->inter.efficiency, c->inter.half_size_bytes / 1024, c->inter.net_overhead_s * 1e6,
				c->inter.ring_plateau);
	/* all_to_all_efficiency: fitted, or the --cluster's (rescaled if the
	 * line rate was raised); absent (0) it is the efficiency's. */
	a2a_eff = f->level == FIT_LINK_INTRA ? c->intra.all_to_all_efficiency : c->inter.all_to_all_efficiency;
	if (len < (int)size && a2a_eff > 0)
		snprintf(buf + len, size - (size_t)len, "  all_to_all_efficiency: %.9g\n", a2a_eff);
}

/*
 * Whatever fit-logs writes it can read back (issue 28): the fitted block
 * @text is loaded as a cluster profile, @c's other link, name, node and
 * GPU counts and a placeholder GPU (the block's checks do not involve the
 * GPU) appended after it, so that an error in the block has the line and
 * column it will have in the file. A fit outside the schema (an
 * efficiency under the 0.01 floor against a --cluster's line rate) is
 * reported and nothing is written.
 */
static bool
link_loads(const struct cluster *c, int level, const char *path, const char *text)
{
	size_t len = strlen(text), size = len + 1024;
	char *check = malloc(size);
	bool ok;

	if (!check) {
		cli_error("out of memory");
		return false;
	}
	memcpy(check, text, len);
	len += (size_t)snprintf(check + len, size - len,
				"name: fit-logs-check\nnodes: %d\ngpus_per_node: %d\n"
				"gpu: {name: check, peak_flops: 1000 TFLOPS, memory: 80 GiB, "
				"memory_bandwidth: 3000 GB/s}\n",
				c->nodes > 0 ? c->nodes : 1, c->gpus_per_node > 0 ? c->gpus_per_node : 1);
	if (level == FIT_LINK_INTRA)
		snprintf(check + len, size - len, "inter_node:\n  nics_per_node: %d\n  nic_bandwidth: %.9g Gbit/s\n",
			 c->inter.nics_per_node > 0 ? c->inter.nics_per_node : 1,
			 c->inter.nic_bandwidth_Bps > 0 ? c->inter.nic_bandwidth_Bps * 8 / 1e9 : 100.0);
	else
		snprintf(check + len, size - len,
			 "intra_node:\n  bandwidth: %.9g GB/s\n  latency: %.9g us\n  collective_latency: %.9g us\n"
			 "  efficiency: %.9g\n",
			 c->intra.bandwidth_Bps / 1e9, c->intra.latency_s * 1e6, c->intra.collective_latency_s * 1e6,
			 c->intra.efficiency);
	ok = cli_profile_loads(PROFILE_CLUSTER, path, check);
	free(check);
	return ok;
}

static int
write_link(const struct nccl_set *s, const struct fit_link_result *f, struct cluster *c, const char *path)
{
	size_t size = 1024 + 64 * (size_t)s->n;
	char *buf;
	int rc;

	for (int i = 0; i < s->n; i++)
		size += 4 * strlen(s->files[i]);
	if (!(buf = malloc(size))) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	fit_link_apply(f, c);
	link_yaml(s, f, c, buf, size);
	rc = link_loads(c, f->level, path, buf) ? cli_write_file(path, buf) : CLI_EXIT_INPUT;
	free(buf);
	return rc;
}

int
cli_fit_nccl(const char *const *files, int n, const struct fit_logs_request *r)
{
	struct nccl_set s = { .files = files, .n = n };
	struct fit_link_result f;
	struct plan_error err;
	struct cluster base;
	int level, rc;

	memset(&base, 0, sizeof(base));
	if ((rc = read_logs(&s, r)) != CLI_EXIT_OK || (rc = pick_level(&s, r->level, &level)) != CLI_EXIT_OK ||
	    (r->cluster && (rc = cli_load_cluster(r->cluster, &base)) != CLI_EXIT_OK))
		goto out;
	if (!r->cluster)
		default_base(&s, &base);
	plan_error_clear(&err);
	if (!fit_link(s.pts, s.npts, level, &base, &f, &err)) {
		rc = cli_report(&err);
		goto out;
	}
	if (r->format == CLI_FORMAT_JSON)
		rc = print_json(link_json(&s, &f));
	else
		print_link_text(&s, &f);
	/* Without --cluster the intra-node link's 1 PB/s only kept it out of
	 * an inter-node fit: it is no line rate, and the fitted bandwidth
	 * over it (an efficiency of 0.0004, under the schema's floor) would
	 * be a block that does not load. No line rate: efficiency 1. */
	if (!r->cluster && level == FIT_LINK_INTRA)
		base.intra.bandwidth_Bps = 0;
	if (rc == CLI_EXIT_OK && r->output)
		rc = write_link(&s, &f, &base, r->output);
out:
	cluster_release(&base);
	nccl_set_release(&s);
	return rc;
}

/* Whether @f's wave value differs from the base GPU's, and if not whether the log confirms it. */
static const char *
wave_status(bool changed, bool alone)
{
	return changed ? "fitted" : alone ? "the GPU's, confirmed" : "the GPU's, kept";
}

/* The wave model's values (fit_gemm.c searched them) and the wave loss they charge; @g the base GPU. */
static void
print_waves_text(const struct gpu *g, const struct fit_gemm_result *f)
{
	bool tile_changed = f->tile_m != g->gemm_tile_m || f->tile_n != g->gemm_tile_n;

	printf("sm_count             %10d     %s", f->sm_count,
	       wave_status(f->sm_count != g->sm_count, f->sm_count_lo == f->sm_count_hi));
	if (f->sm_count == 0)
		printf(": no wave loss fits best (a library that hides its waves, as stream-K kernels do)");
	else if (f->sm_count_lo < f->sm_count_hi)
		printf("; %d to %d fit as well", f->sm_count_lo, f->sm_count_hi);
	else
		printf("; no other fits as well");
	printf(" (%d tried)\n", f->candidates);
	printf("gemm_tile            %4d x %-4d    %s; %d of %d tile shapes fit as well\n", f->tile_m, f->tile_n,
	       wave_status(tile_changed, f->tiles_alike == 1), f->tiles_alike, FIT_GEMM_TILES);
	if (f->waves_changed)
		printf("                                 (the GPU's: %d SMs, tile %d x %d)\n", g->sm_count,
		       g->gemm_tile_m, g->gemm_tile_n);
	printf("wave loss            %d of %d 16-bit GEMMs in a partial last wave", f->partial_wave, f->points);
	if (f->partial_wave > 0)
		printf(", %.1f %% mean, %.1f %% worst", 100 * f->wave_loss_mean, 100 * f->wave_loss_max);
	if (f->mape_no_waves >= 0)
		printf("; MAPE %.2f %% without waves\n", 100 * f->mape_no_waves);
	else
		printf("; without waves the fit fails\n");
}

static void
print_gemm_text(const char *file, const struct gpu *g, const struct fit_gemm_result *f)
{
	printf("GEMM efficiency of %s from %s: %d 16-bit GEMMs, %d fp8, %d memory-bound left out\n", g->name,
	       file, f->points, f->fp8_points, f->memory_bound);
	printf("gemm_efficiency_max  %10.4g     +- %.3g (of %.4g TFLOPS)\n", f->efficiency_max,
	       f->efficiency_max_se, g->peak_flops / 1e12);
	printf("gemm_overhead        %10.4g us  +- %.3g us%s\n", f->overhead_s * 1e6, f->overhead_se * 1e6,
	       f->overhead_fitted ? "" : " (held at 0: the fit wanted it negative)");
	if (f->fp8_points > 0)
		printf("fp8_gemm_ratio       %10.4g     +- %.3g (at %.4g TFLOPS fp8)\n", f->fp8_ratio, f->fp8_ratio_se,
		       g->peak_flops_fp8 / 1e12);
	if (f->waves_searched)
		print_waves_text(g, f);
	printf("fit                  MAPE %.2f %%, worst %.2f %% (compute.c with the fitted GPU)\n",
	       100 * f->mape, 100 * f->max_abs_error);
}

static json_t *
waves_json(const struct fit_gemm_result *f)
{
	if (!f->waves_searched)
		return json_null();
	return json_pack("{s:b, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:f, s:o}", "changed", f->waves_changed,
			 "sm_count", f->sm_count, "gemm_tile_m", f->tile_m, "gemm_tile_n", f->tile_n, "sm_count_lo",
			 f->sm_count_lo, "sm_count_hi", f->sm_count_hi, "tiles_alike", f->tiles_alike, "candidates",
			 f->candidates, "partial_wave", f->partial_wave, "wave_loss_mean", f->wave_loss_mean,
			 "wave_loss_max", f->wave_loss_max, "mape_no_waves",
			 f->mape_no_waves >= 0 ? json_real(f->mape_no_waves) : json_null());
}

static json_t *
gemm_json(const char *file, const struct gpu *g, const struct fit_gemm_result *f)
{
	json_t *o = json_pack("{s:s, s:o, s:s, s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:b, s:f, s:f, s:f, s:f}",
			 "kind", "gemm", "file", utf8_json_string(file), "gpu", g->name, "points", f->points,
			 "fp8_points", f->fp8_points, "memory_bound", f->memory_bound,
			 "gemm_efficiency_max", f->efficiency_max, "gemm_efficiency_max_se", f->efficiency_max_se,
			 "gemm_overhead_s", f->overhead_s, "gemm_overhead_se_s", f->overhead_se,
			 "gemm_overhead_fitted", f->overhead_fitted, "fp8_gemm_ratio", f->fp8_ratio,
			 "fp8_gemm_ratio_se", f->fp8_ratio_se, "mape", f->mape, "max_abs_error", f->max_abs_error);

	if (o && json_object_set_new(o, "waves", waves_json(f)) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* @s for a YAML comment: no newline that would end it, no byte that is not UTF-8 (utf8.h). */
static void
yaml_safe(char *dst, size_t size, const char *s)
{
	utf8_escape(dst, size, s, true);
}

/*
 * A whole GPU profile: @g's values with the fitted ones and no
 * gemm_efficiency curve (the parametric model replaces it), every key of
 * gpu_schema written by schema_write, under a comment with the fit; a
 * malloc'd string, NULL when out of memory.
 */
static char *
gemm_yaml(const char *file, const struct gpu *g, const struct fit_gemm_result *f)
{
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	struct gpu out = *g;
	char *text = NULL, src[200];
	size_t size = 0;
	FILE *y = open_memstream(&text, &size);

	if (!y)
		return NULL;
	yaml_safe(src, sizeof(src), base);
	out.gemm_efficiency.n = 0;
	snprintf(out.calibration, sizeof(out.calibration), "plan-cli fit-logs --gemm %s", src);
	fprintf(y, "# plan-cli fit-logs --gemm %s: %d 16-bit GEMMs, %d fp8, MAPE %.2f %%\n"
		"# gemm_efficiency_max %.6g +- %.3g, gemm_overhead %.6g us +- %.3g, fp8_gemm_ratio %.6g +- %.3g\n",
		src, f->points, f->fp8_points, 100 * f->mape, f->efficiency_max, f->efficiency_max_se,
		f->overhead_s * 1e6, f->overhead_se * 1e6, f->fp8_ratio, f->fp8_ratio_se);
	if (f->waves_searched)
		fprintf(y, "# sm_count %d (%d to %d fit as well), gemm_tile %d x %d (%d of %d tiles fit as well), %s; "
			"wave loss on %d GEMMs, %.1f %% mean\n", f->sm_count, f->sm_count_lo, f->sm_count_hi, f->tile_m,
			f->tile_n, f->tiles_alike, FIT_GEMM_TILES,
			f->waves_changed ? "fitted" : "the GPU's, kept", f->partial_wave, 100 * f->wave_loss_mean);
	schema_write(gpu_schema, &out, y, 0);
	if (fclose(y) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

int
cli_fit_gemm(const struct fit_logs_request *r)
{
	struct fit_gemm_point *pts = NULL;
	struct fit_gemm_result f;
	struct plan_error err;
	struct gpu g;
	char *yaml;
	int n, rc;

	if ((rc = cli_load_gpu(r->gpu, &g)) != CLI_EXIT_OK)
		return rc;
	plan_error_clear(&err);
	if (!gemm_log_load(r->gemm, &pts, &n, &err) || !fit_gemm(pts, n, &g, &f, &err)) {
		free(pts);
		/* The fit's errors are about the whole file: name it. */
		if (!err.file[0])
			snprintf(err.file, sizeof(err.file), "%s", r->gemm);
		return cli_report(&err);
	}
	free(pts);
	if (r->format == CLI_FORMAT_JSON)
		rc = print_json(gemm_json(r->gemm, &g, &f));
	else
		print_gemm_text(r->gemm, &g, &f);
	fit_gemm_apply(&f, &g);
	if (rc != CLI_EXIT_OK || !r->output)
		return rc;
	if (!(yaml = gemm_yaml(r->gemm, &g, &f))) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	rc = cli_profile_loads(PROFILE_GPU, r->output, yaml) ? cli_write_file(r->output, yaml) : CLI_EXIT_INPUT;
	free(yaml);
	return rc;
}

/* The options that belong to the other kind of fit. */
static int
check_mode(const struct fit_logs_request *r, int operands)
{
	if (r->nccl == (r->gemm != NULL)) {
		cli_error("fit-logs takes --nccl-tests LOG... or --gemm CSV, one of them (see 'plan-cli fit-logs --help')");
		return CLI_EXIT_USAGE;
	}
	if (r->nccl && (operands == 0 || r->gpu)) {
		cli_error(operands == 0 ? "--nccl-tests needs one or more nccl-tests logs" :
			  "--gpu goes with --gemm; --nccl-tests takes --cluster");
		return CLI_EXIT_USAGE;
	}
	if (r->gemm && (operands > 0 || !r->gpu || r->cluster || r->level >= 0 || r->gpus_per_node > 0)) {
		cli_error(operands > 0 ? "--gemm takes one CSV file; unexpected argument" :
			  !r->gpu ? "--gemm needs --gpu NAME|FILE, the GPU the GEMMs ran on (its peak FLOP/s)" :
			  "--cluster, --level and --gpus-per-node go with --nccl-tests, not --gemm");
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

int
cmd_fit_logs(int argc, char **argv)
{
	struct fit_logs_request r = { .format = CLI_FORMAT_TEXT, .level = -1 };
	int rc;

	if ((rc = cli_options_parse(&cli_fit_logs_options, argc, argv, &r)) >= 0)
		return rc;
	if ((rc = check_mode(&r, argc - optind)) != CLI_EXIT_OK)
		return rc;
	rc = r.nccl ? cli_fit_nccl((const char *const *)argv + optind, argc - optind, &r) : cli_fit_gemm(&r);
	return cli_finish(rc);
}
