#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/calib_keys.h"
#include "io/profile_load.h"

#define MAX_KEYS CALIB_MAX_KEYS

/* A fittable row: a double with a range (numbers and quantities). */
static bool
fittable(const struct schema_key *k)
{
	return k->type == SCHEMA_NUMBER || k->type == SCHEMA_QUANTITY;
}

/* The top-level blocks that hold fittable keys, and their tables. */
static int
blocks(const char *names[], const struct schema_key *tables[], size_t offsets[])
{
	int n = 0;

	for (const struct schema_key *k = cluster_schema; k->key; k++)
		if ((k->type == SCHEMA_MAP || k->type == SCHEMA_CUSTOM) && k->sub) {
			names[n] = k->key;
			tables[n] = k->sub;
			offsets[n++] = k->offset;
		}
	names[n] = "framework";
	tables[n] = framework_schema;
	offsets[n++] = 0;
	return n;
}

int
calib_key_count(void)
{
	const char *names[8];
	const struct schema_key *tables[8];
	size_t offsets[8];
	int nb = blocks(names, tables, offsets), n = 0;

	for (int b = 0; b < nb; b++)
		for (const struct schema_key *k = tables[b]; k->key; k++)
			n += fittable(k);
	return n;
}

/* A table too small once cut the 65th key (the framework's last) from
 * the list and the nearest-key search without a word. */
bool
calib_keys_check(int cap, struct plan_error *err)
{
	int n = calib_key_count();

	if (n <= cap)
		return true;
	return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
			      "calibrate's key table holds %d keys but the profile schemas have %d to fit: "
			      "raise CALIB_MAX_KEYS (src/io/calib_keys.h)", cap, n);
}

/* Every path, into @paths (NULL-terminated pointers into @store), at most
 * MAX_KEYS of them (calib_keys_check says when there are more). */
static void
all_paths(char store[][CALIB_KEY_LEN], const char *paths[])
{
	const char *names[8];
	const struct schema_key *tables[8];
	size_t offsets[8];
	int nb = blocks(names, tables, offsets), n = 0;

	for (int b = 0; b < nb; b++)
		for (const struct schema_key *k = tables[b]; k->key && n < MAX_KEYS; k++)
			if (fittable(k)) {
				snprintf(store[n], CALIB_KEY_LEN, "%s.%s", names[b], k->key);
				paths[n] = store[n];
				n++;
			}
	paths[n] = NULL;
}

void
calib_key_list(char *buf, size_t size)
{
	char store[MAX_KEYS][CALIB_KEY_LEN];
	const char *paths[MAX_KEYS + 1];

	all_paths(store, paths);
	buf[0] = '\0';
	for (int i = 0; paths[i]; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "", paths[i]);
}

/* The error names the nearest key only: a plan_error holds 768 bytes,
 * and the list of every key, which is longer, would be cut off there
 * (issue 26). The caller prints calib_key_list in full. */
static bool
unknown(const char *path, struct plan_error *err)
{
	char store[MAX_KEYS][CALIB_KEY_LEN];
	const char *paths[MAX_KEYS + 1], *near;

	all_paths(store, paths);
	near = schema_nearest(path, paths, sizeof(paths[0]), 0);
	if (near)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "unknown key '%s' for --fit; did you mean '%s'?",
				      path, near);
	return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "unknown key '%s' for --fit", path);
}

size_t
calib_key_list_size(void)
{
	char store[MAX_KEYS][CALIB_KEY_LEN];
	const char *paths[MAX_KEYS + 1];
	size_t size = 1;

	all_paths(store, paths);
	for (int i = 0; paths[i]; i++)
		size += strlen(paths[i]) + 2;
	return size;
}

/*
 * A key of the schema that is not a fittable number gets its own reason:
 * "unknown key" and a near name would send the user looking for a typo.
 */
static bool
not_fittable(const char *path, const struct schema_key *k, struct plan_error *err)
{
	if (k->type == SCHEMA_INT && strncmp(path, "gpu.", 4) == 0)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "'%s' is a whole number of the GEMM wave model: iteration times move in steps "
				      "of it, which a least-squares fit cannot follow; fit it to GEMM timings with "
				      "plan-cli fit-logs --gemm, or set it from the GPU's datasheet", path);
	if (k->type == SCHEMA_INT)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "'%s' is a whole number, not a value to fit: set it in the profile", path);
	if (k->type == SCHEMA_ENUM || k->type == SCHEMA_BOOL)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "'%s' is a choice, not a number: set it as the runs were configured "
				      "(calibrate fits numbers under it)", path);
	return unknown(path, err);
}

/*
 * gpu.power_limit means something only below gpu.rated_power (above it
 * the clock is the rated one, gpu_clock_factor: no slope to fit) and
 * down to a fifth of it (gpu_check refuses less): those are its bounds,
 * so that the written profile loads. Its 0 (no limit) is the rated
 * power, where the fit starts (at the bound, which calibrate starts a
 * hair inside).
 */
static bool
power_limit_bounds(const struct cluster *c, struct calib_key *out, struct plan_error *err)
{
	double rated = c->gpu.rated_power_W;

	if (!(rated > 0))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "'gpu.power_limit' needs gpu.rated_power, the power the GPU's peaks hold at: "
				      "set it in the profile to fit the limit");
	out->lo = 0.2 * rated;
	out->hi = rated;
	if (!(*out->value > 0) || *out->value > rated)
		*out->value = rated;
	return true;
}

/*
 * gpu_check (gpu_load.c) refuses a profile whose peak_flops_fp8, where
 * it has one, is below peak_flops: the two peaks bound each other, so
 * that what calibrate fits it can write and read back (issue 28). Each
 * is bounded by the other's profile value; fitted together, the pair the
 * fit reaches may still cross, and the load-back check then refuses it.
 */
static void
peak_bounds(const struct cluster *c, const char *key, struct calib_key *out)
{
	if (strcmp(key, "peak_flops") == 0 && c->gpu.peak_flops_fp8 > 0)
		out->hi = fmin(out->hi, c->gpu.peak_flops_fp8);
	else if (strcmp(key, "peak_flops_fp8") == 0)
		out->lo = fmax(out->lo, c->gpu.peak_flops);
}

bool
calib_key_resolve(const char *path, struct cluster *c, struct framework *fw, struct calib_key *out,
		  struct plan_error *err)
{
	const char *names[8], *dot = strchr(path, '.');
	const struct schema_key *tables[8];
	size_t offsets[8];
	int nb = blocks(names, tables, offsets);

	memset(out, 0, sizeof(*out));
	if (!calib_keys_check(MAX_KEYS, err))
		return false;
	if (!dot || strlen(path) >= CALIB_KEY_LEN)
		return unknown(path, err);
	for (int b = 0; b < nb; b++) {
		bool is_fw = strcmp(names[b], "framework") == 0;

		if (strlen(names[b]) != (size_t)(dot - path) || strncmp(path, names[b], (size_t)(dot - path)) != 0)
			continue;
		for (const struct schema_key *k = tables[b]; k->key; k++) {
			if (strcmp(k->key, dot + 1) != 0)
				continue;
			if (!fittable(k))
				return not_fittable(path, k, err);
			if (is_fw && !fw)
				return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
						      "'%s': no framework profile to fit", path);
			snprintf(out->path, sizeof(out->path), "%s", path);
			out->value = (double *)(void *)((is_fw ? (char *)fw : (char *)c + offsets[b]) + k->offset);
			out->lo = k->min;
			out->hi = k->max;
			out->framework = is_fw;
			out->quantity = k->type == SCHEMA_QUANTITY;
			out->unit = out->quantity ? units_si_symbol(k->unit) : "";
			/* The cluster's override hides the GPU's value: a fit of
			 * it would move nothing (cluster_pcie_bandwidth_Bps). */
			if (!is_fw && strcmp(path, "gpu.pcie_bandwidth") == 0 && c->pcie_bandwidth_Bps > 0)
				return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
						      "'%s' is overridden by the cluster's pcie_bandwidth: "
						      "remove that key to fit the GPU's", path);
			if (!is_fw && strcmp(path, "gpu.power_limit") == 0)
				return power_limit_bounds(c, out, err);
			if (!is_fw && strcmp(names[b], "gpu") == 0)
				peak_bounds(c, k->key, out);
			return true;
		}
	}
	return unknown(path, err);
}

int
calib_default_keys(const struct cluster *c, char paths[][CALIB_KEY_LEN])
{
	int n = 0;

	/* The GEMM throughput: gemm_efficiency_max scales the parametric
	 * curve; a measured table (gemm_efficiency) ignores it, and then
	 * peak_flops is what scales every GEMM's time (cluster.c). */
	snprintf(paths[n++], CALIB_KEY_LEN, c->gpu.gemm_efficiency.n == 0 ? "gpu.gemm_efficiency_max" : "gpu.peak_flops");
	snprintf(paths[n++], CALIB_KEY_LEN, "gpu.memory_efficiency");
	snprintf(paths[n++], CALIB_KEY_LEN, "intra_node.efficiency");
	snprintf(paths[n++], CALIB_KEY_LEN, "inter_node.efficiency");
	return n;
}
