/*
 * Variable-length data (plan/seqlen.h, io/seqlen_load.h): the expected
 * padded length, packing, the dynamic program (DynaPipe, Jiang et al.
 * ASPLOS 2024, dp_helper.cpp), the file format, and the behaviour issue 16
 * asks for: dynamic beats pack beats pad on a multi-task mix, by more the
 * wider the lengths spread.
 */
#include <math.h>

#include "plan/estimate.h"
#include "plan/seqlen.h"
#include "io/seqlen_load.h"
#include "testutil.h"

static void
build(struct seqlen_dist *d, const int *len, const double *count, int n)
{
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert_msg(seqlen_dist_build(d, len, count, n, &err), "%s", err.message);
}

/* Lengths 1, 2, 4 with probabilities 1/4, 1/4, 1/2 (4 given as two
 * entries, merged); b = 2 draws. F = 0.25, 0.5, 1, so P(max = 1) =
 * 0.25^2 = 0.0625, P(max = 2) = 0.5^2 - 0.0625 = 0.1875, P(max = 4) =
 * 1 - 0.25 = 0.75: E[max] = 0.0625 + 0.375 + 3 = 3.4375 and E[max^2] =
 * 0.0625 + 0.75 + 12 = 12.8125 (the mean is 2.75: padding 1 - 2.75 /
 * 3.4375 = 20 % of the computed tokens). */
START_TEST(test_expected_max)
{
	static const int len[] = { 4, 1, 2, 4 };
	static const double count[] = { 1, 1, 1, 1 };
	struct seqlen_dist d;
	double e, e2, pmf[3];

	build(&d, len, count, 4);
	ck_assert_int_eq(d.n, 3);
	ck_assert_double_eq_tol(seqlen_mean(&d), 2.75, 1e-12);
	seqlen_expected_max(&d, 2, &e, &e2, pmf);
	ck_assert_double_eq_tol(pmf[0], 0.0625, 1e-12);
	ck_assert_double_eq_tol(pmf[1], 0.1875, 1e-12);
	ck_assert_double_eq_tol(pmf[2], 0.75, 1e-12);
	ck_assert_double_eq_tol(e, 3.4375, 1e-12);
	ck_assert_double_eq_tol(e2, 12.8125, 1e-12);
	/* One draw: the mean itself. */
	seqlen_expected_max(&d, 1, &e, &e2, NULL);
	ck_assert_double_eq_tol(e, 2.75, 1e-12);
	seqlen_dist_release(&d);
}
END_TEST

/* Lengths 3 and 5, equally likely, packed into rows of 8. Tokens T(u)
 * from fill level u: nothing fits above 5, so T(6) = T(7) = T(8) = 0;
 * T(5) = 1/2 (3 + T(8)) = 1.5; T(3) = 1/2 (3 + T(6)) + 1/2 (5 + T(8))
 * = 4; T(0) = 1/2 (3 + T(3)) + 1/2 (5 + T(5)) = 6.75: waste 1.25 of 8
 * (15.625 %). Documents: N(5) = 0.5, N(3) = 1, N(0) = 1/2 (1 + 1) +
 * 1/2 (1 + 0.5) = 1.75. Squares: Q(5) = 4.5, Q(3) = 4.5 + 12.5 = 17,
 * Q(0) = 1/2 (9 + 17) + 1/2 (25 + 4.5) = 27.75. Full attention over the
 * row computes 8^2 = 64 pairs: waste 64 / 27.75 - 1 = 1.3063; masked
 * attention computes the 27.75 pairs of the documents alone. */
START_TEST(test_pack)
{
	static const int len[] = { 3, 5 };
	static const double count[] = { 7, 7 };
	struct seqlen_pack_row row;
	struct seqlen_dist d;
	struct plan_error err;

	build(&d, len, count, 2);
	plan_error_clear(&err);
	ck_assert(seqlen_pack(&d, 8, &row, &err));
	ck_assert_double_eq_tol(row.tokens, 6.75, 1e-12);
	ck_assert_double_eq_tol(row.waste, 1.25, 1e-12);
	ck_assert_double_eq_tol(row.documents, 1.75, 1e-12);
	ck_assert_double_eq_tol(row.sum_sq, 27.75, 1e-12);
	ck_assert_double_eq_tol(64.0 / row.sum_sq - 1.0, 1.3063063063, 1e-9);
	/* A row shorter than the longest document cannot hold it. */
	ck_assert(!seqlen_pack(&d, 4, &row, &err));
	ck_assert_int_eq(err.kind, PLAN_ERR_INPUT);
	seqlen_dist_release(&d);
}
END_TEST

/* Quantiles (k + 1/2) / n of lengths 1, 2, 4, 4: at 0.5, 1.5, 2.5, 3.5
 * of the 4 counts, lengths 1, 2, 4, 4. */
START_TEST(test_quantiles)
{
	static const int len[] = { 1, 2, 4 };
	static const double count[] = { 1, 1, 2 };
	struct seqlen_dist d;
	int q[4];

	build(&d, len, count, 3);
	seqlen_quantiles(&d, 4, q);
	ck_assert_int_eq(q[0], 1);
	ck_assert_int_eq(q[1], 2);
	ck_assert_int_eq(q[2], 4);
	ck_assert_int_eq(q[3], 4);
	seqlen_dist_release(&d);
}
END_TEST

/* A toy cost: 2 + b L / 8 ms; a micro-batch fits up to 64 tokens. */
static bool
toy_cost(void *ctx, int b, int len, double *t, bool *fits, struct plan_error *err)
{
	int *calls = ctx;

	(void)err;
	(*calls)++;
	*t = 2.0 + b * len / 8.0;
	*fits = b * len <= 64;
	return true;
}

/*
 * Six sorted lengths 8, 8, 8, 16, 16, 32 (already multiples of 8), three
 * stages, v = 1, d = 1: objective 2 t_max + sum t_i. Micro-batches that
 * fit, by the sample they end at (times in ms): ending at a length-8
 * sample, b = 1, 2, 3 cost 3, 4, 5; at a 16, b = 1..4 cost 4, 6, 8, 10;
 * at the 32, b = 1, 2 cost 6, 10. Candidates t_max: 3, 4, 5, 6, 8, 10.
 * The DP f[e] (least sum over the first e samples):
 *   t_max 10: f = 0, 3, 4, 5, 9, 11, 17 (f5 = f3 + 6; f6 = f5 + 6): 20 + 17 = 37;
 *   t_max 8: the same sums: 16 + 17 = 33;
 *   t_max 6: f4 = min(f3 + 4, f2 + 6) = 9, f5 = min(f4 + 4, f3 + 6) = 11,
 *            f6 = f5 + 6 = 17: 12 + 17 = 29;
 *   t_max 5 and below: the 32 alone costs 6, no split.
 * Best 29: [8 8 8] (5 ms), [16 16] (6 ms), [32] (6 ms). With d = 2 the
 * sum halves: 12 + 8.5 = 20.5 (t_max 8: 16 + 8.5); with one stage only
 * the sum counts: 17.
 */
START_TEST(test_dynamic_split)
{
	static const int len[] = { 8, 8, 8, 16, 16, 32 };
	struct seqlen_mb mbs[6];
	struct plan_error err;
	double obj;
	int n, calls = 0;

	plan_error_clear(&err);
	ck_assert_msg(seqlen_dynamic_split(len, 6, 8, 3, 1, 1, toy_cost, &calls, mbs, &n, &obj, &err), "%s",
		      err.message);
	ck_assert_double_eq_tol(obj, 29.0, 1e-12);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(mbs[0].first, 0);
	ck_assert_int_eq(mbs[0].count, 3);
	ck_assert_int_eq(mbs[0].padded_len, 8);
	ck_assert_double_eq_tol(mbs[0].time_s, 5.0, 1e-12);
	ck_assert_int_eq(mbs[1].first, 3);
	ck_assert_int_eq(mbs[1].count, 2);
	ck_assert_int_eq(mbs[1].padded_len, 16);
	ck_assert_int_eq(mbs[2].first, 5);
	ck_assert_int_eq(mbs[2].count, 1);
	ck_assert_int_eq(mbs[2].padded_len, 32);
	/* Each shape is costed once: 3 + 4 + 2 = 9 row entries, plus one
	 * probe per row that finds the first size that does not fit. */
	ck_assert_int_le(calls, 12);
	ck_assert(seqlen_dynamic_split(len, 6, 8, 3, 1, 2, toy_cost, &calls, mbs, &n, &obj, &err));
	ck_assert_double_eq_tol(obj, 20.5, 1e-12);
	ck_assert(seqlen_dynamic_split(len, 6, 8, 1, 1, 1, toy_cost, &calls, mbs, &n, &obj, &err));
	ck_assert_double_eq_tol(obj, 17.0, 1e-12);
	/* Lengths are rounded up to the multiple: 9 -> 16. */
	{
		static const int odd[] = { 9 };

		ck_assert(seqlen_dynamic_split(odd, 1, 8, 1, 1, 1, toy_cost, &calls, mbs, &n, &obj, &err));
		ck_assert_int_eq(mbs[0].padded_len, 16);
		ck_assert_double_eq_tol(obj, 4.0, 1e-12);
	}
}
END_TEST

static bool
never_fits(void *ctx, int b, int len, double *t, bool *fits, struct plan_error *err)
{
	(void)ctx, (void)b, (void)len, (void)err;
	*t = 1.0;
	*fits = false;
	return true;
}

START_TEST(test_dynamic_nothing_fits)
{
	static const int len[] = { 8, 16 };
	struct seqlen_mb mbs[2];
	struct plan_error err;
	double obj;
	int n;

	plan_error_clear(&err);
	ck_assert(!seqlen_dynamic_split(len, 2, 8, 2, 1, 1, never_fits, NULL, mbs, &n, &obj, &err));
	ck_assert_int_eq(err.kind, PLAN_ERR_PLAN);
	ck_assert_ptr_nonnull(strstr(err.message, "fits in memory"));
}
END_TEST

/* ------------------------------------------------------------- files */

static const struct {
	const char *text;
	int line;          /* 0: parses */
	const char *what;  /* in the message */
} parse_cases[] = {
	{ "length,count\n# a comment\n128,10\n256,5  # trailing\n\n", 0, NULL },
	{ "\xef\xbb\xbf" "100\n200\n200\n", 0, NULL },
	{ "Length, Count\n64,1.5\n", 0, NULL },
	{ "length,count\n128,10\nabc\n", 3, "malformed line 'abc'" },
	{ "length,count\n0,3\n", 2, "length must be positive" },
	{ "-5\n", 1, "length must be positive" },
	{ "12.5\n", 1, "whole number" },
	{ "2000000\n", 1, "above the maximum" },
	{ "128,0\n", 1, "count must be positive" },
	{ "128,x\n", 1, "malformed line" },
	{ "128,1,2\n", 1, "malformed line" },
	{ "# nothing but comments\n\n", 2, "no sequence lengths" },
	{ "", 0, "no sequence lengths" },
	{ "length,count\n", 1, "no sequence lengths" },
	{ "nan\n", 1, "malformed line" },
};

START_TEST(test_parse)
{
	const char *text = parse_cases[_i].text;
	struct seqlen_dist d;
	struct plan_error err;
	bool ok;

	plan_error_clear(&err);
	ok = seqlen_parse("x.csv", text, strlen(text), &d, &err);
	if (!parse_cases[_i].what) {
		ck_assert_msg(ok, "case %d: %s", _i, err.message);
		ck_assert_int_gt(d.n, 0);
	} else {
		ck_assert_msg(!ok, "case %d parsed", _i);
		ck_assert_int_eq(err.kind, PLAN_ERR_INPUT);
		ck_assert_int_eq(err.line, parse_cases[_i].line);
		ck_assert_str_eq(err.file, "x.csv");
		ck_assert_msg(strstr(err.message, parse_cases[_i].what), "case %d: %s", _i, err.message);
	}
	seqlen_dist_release(&d);
}
END_TEST

START_TEST(test_parse_values)
{
	static const char text[] = "length,count\n256,5\n128,10\n256,5\n";
	struct seqlen_dist d;
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert(seqlen_parse("x.csv", text, strlen(text), &d, &err));
	ck_assert_int_eq(d.n, 2);
	ck_assert_int_eq(d.length[0], 128);
	ck_assert_double_eq_tol(d.count[1], 10.0, 1e-12);
	ck_assert_double_eq_tol(d.total, 20.0, 1e-12);
	seqlen_dist_release(&d);
	/* A NUL byte is an error at its line and column. */
	ck_assert(!seqlen_parse("x.csv", "12\n1\0" "3\n", 6, &d, &err));
	ck_assert_int_eq(err.line, 2);
	ck_assert_int_eq(err.column, 2);
	/* At the number at fault: "  7,  0" has its count at column 7, and
	 * the byte-order mark is not counted ("\t2.5" puts 2.5 at 2). */
	ck_assert(!seqlen_parse("x.csv", "length,count\n  7,  0\n", 21, &d, &err));
	ck_assert_int_eq(err.line, 2);
	ck_assert_int_eq(err.column, 7);
	ck_assert(!seqlen_parse("x.csv", "\xef\xbb\xbf\t2.5\n", 8, &d, &err));
	ck_assert_int_eq(err.line, 1);
	ck_assert_int_eq(err.column, 2);
}
END_TEST

/* -------------------------------------------------------- behaviour */

struct setup {
	struct model m;
	struct cluster c;
	struct plan p;
};

/* Selene (A100 80 GB), 64 GPUs as pp 4 x dp 16, micro-batches of 4,
 * 2048 sequences per iteration. */
static void
setup(struct setup *s, const char *model, int seq_len)
{
	test_setup_paths();
	test_load_profile(PROFILE_MODEL, model, &s->m);
	test_load_profile(PROFILE_CLUSTER, "selene", &s->c);
	plan_init(&s->p);
	s->p.tp = 1;
	s->p.pp = 4;
	s->p.dp = 16;
	s->p.micro_batch = 4;
	s->p.global_batch = 2048;
	s->p.seq_len = seq_len;
	s->p.flash_attention = true;
}

/* Effective tokens/s of @s's plan on @d under @mode. */
static double
throughput(const struct setup *s, const struct seqlen_dist *d, int mode, int attention)
{
	struct estimate e;
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(&s->m, &s->c, &s->p, NULL, &e, &err), "%s", err.message);
	ck_assert_msg(seqlen_estimate(&s->m, &s->c, &s->p, NULL, d, mode, attention, &e, &err), "%s",
		      err.message);
	ck_assert(e.batching.on);
	ck_assert(e.batching.effective_tokens_per_s > 0);
	return e.batching.effective_tokens_per_s;
}

static const struct {
	const char *model;
	int seq_len;
} mix_cases[] = {
	{ "gpt-1.7b", 2048 },    /* a GPT (causal) */
	{ "bert-large", 512 },   /* an encoder, causal: false (T5-style) */
};

/* On the bundled FLANv2-like mix: dynamic > pack > pad. */
START_TEST(test_flan_mix_order)
{
	struct setup s;
	struct seqlen_dist d;
	struct plan_error err;
	char path[4096];
	double pad, pack, dyn, masked;

	setup(&s, mix_cases[_i].model, mix_cases[_i].seq_len);
	plan_error_clear(&err);
	ck_assert_msg(seqlen_resolve("flan-mix", path, sizeof(path), &err), "%s", err.message);
	ck_assert_msg(seqlen_load_file(path, &d, &err), "%s", err.message);
	pad = throughput(&s, &d, SEQLEN_PAD, SEQLEN_ATTN_FULL);
	pack = throughput(&s, &d, SEQLEN_PACK, SEQLEN_ATTN_FULL);
	masked = throughput(&s, &d, SEQLEN_PACK, SEQLEN_ATTN_MASKED);
	dyn = throughput(&s, &d, SEQLEN_DYNAMIC, SEQLEN_ATTN_FULL);
	ck_assert_msg(pack > pad, "%s: pack %.0f, pad %.0f", mix_cases[_i].model, pack, pad);
	ck_assert_msg(dyn > pack, "%s: dynamic %.0f, pack %.0f", mix_cases[_i].model, dyn, pack);
	/* Masking the documents only removes attention work. */
	ck_assert_msg(masked > pack, "%s: masked %.0f, full %.0f", mix_cases[_i].model, masked, pack);
	seqlen_dist_release(&d);
	cluster_release(&s.c);
}
END_TEST

/* Two mixes of similar means, one narrow (160..224 tokens, mean 192),
 * one wide (32..512, geometric; counts 2, 2, 2, 2, 1: mean 1472 / 9 =
 * 164): dynamic's gain over pad and over pack grows with the spread. */
START_TEST(test_gain_grows_with_spread)
{
	static const int narrow[] = { 160, 176, 192, 208, 224 };
	static const int wide[] = { 32, 64, 128, 256, 512 };
	static const double ones[] = { 1, 1, 1, 1, 1 };
	static const double wide_counts[] = { 2, 2, 2, 2, 1 };
	struct seqlen_dist dn, dw;
	struct setup s;
	double gn, gw, kn, kw;

	setup(&s, mix_cases[_i].model, mix_cases[_i].seq_len);
	build(&dn, narrow, ones, 5);
	build(&dw, wide, wide_counts, 5);
	gn = throughput(&s, &dn, SEQLEN_DYNAMIC, 0) / throughput(&s, &dn, SEQLEN_PAD, 0);
	gw = throughput(&s, &dw, SEQLEN_DYNAMIC, 0) / throughput(&s, &dw, SEQLEN_PAD, 0);
	kn = throughput(&s, &dn, SEQLEN_DYNAMIC, 0) / throughput(&s, &dn, SEQLEN_PACK, 0);
	kw = throughput(&s, &dw, SEQLEN_DYNAMIC, 0) / throughput(&s, &dw, SEQLEN_PACK, 0);
	ck_assert_msg(gw > gn, "%s: dynamic/pad narrow %.3f, wide %.3f", mix_cases[_i].model, gn, gw);
	ck_assert_msg(kw > kn, "%s: dynamic/pack narrow %.3f, wide %.3f", mix_cases[_i].model, kn, kw);
	seqlen_dist_release(&dn);
	seqlen_dist_release(&dw);
	cluster_release(&s.c);
}
END_TEST

/*
 * Pad's fill and drain go at the pace of the iteration's slowest
 * micro-batch (DynaPipe's (p - 1) t_max / v): two lengths, 256 and 1024
 * tokens, 3 : 1. GPT-1.7B, pp 4 x dp 8, micro-batch 1, 128 sequences: m =
 * 128 / 8 = 16 micro-batches. A micro-batch's longest is 1024 with P = 1/4
 * (b = 1), so the slot is 3/4 slot(256) + 1/4 slot(1024); the longest of
 * all 16 draws is 1024 with P = 1 - (3/4)^16 = 0.98998, so the bubble is
 * 0.01002 bubble(256) + 0.98998 bubble(1024). The iteration is tail + 16
 * slot + bubble, the tail the plan's iteration less its 16 slots and
 * bubble at full length; each term from estimate_plan at that length.
 */
START_TEST(test_pad_bubble_slowest)
{
	static const int len[] = { 256, 1024 };
	static const double cnt[] = { 3, 1 };
	struct seqlen_dist d;
	struct setup s;
	struct estimate e, e256, e1024;
	struct plan_error err;
	struct plan q;
	double tail, p_all = 1.0 - pow(0.75, 16), want;

	setup(&s, "gpt-1.7b", 2048);
	s.p.dp = 8;
	s.p.micro_batch = 1;
	s.p.global_batch = 128;
	build(&d, len, cnt, 2);
	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(&s.m, &s.c, &s.p, NULL, &e, &err), "%s", err.message);
	tail = e.iteration_time_s - 16 * e.details.slot_s - e.breakdown.pp_bubble;
	q = s.p;
	q.seq_len = 256;
	ck_assert(estimate_plan(&s.m, &s.c, &q, NULL, &e256, &err));
	q.seq_len = 1024;
	ck_assert(estimate_plan(&s.m, &s.c, &q, NULL, &e1024, &err));
	want = tail + 16 * (0.75 * e256.details.slot_s + 0.25 * e1024.details.slot_s) +
	       (1.0 - p_all) * e256.breakdown.pp_bubble + p_all * e1024.breakdown.pp_bubble;
	ck_assert_msg(seqlen_estimate(&s.m, &s.c, &s.p, NULL, &d, SEQLEN_PAD, 0, &e, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.batching.iteration_time_s, want, 1e-12 * want);
	seqlen_dist_release(&d);
	cluster_release(&s.c);
}
END_TEST

/* Issue 24 item 9: on the FLAN-like mix, 32 GPUs as pp 4 x dp 8 and a
 * small batch (16 sequences a replica), dynamic was slower than pad at
 * micro-batch 1 while pad's bubble went at a typical micro-batch's pace
 * and dynamic's at its slowest one's. With one pipeline model for both,
 * dynamic (the least of DynaPipe's objective over the sorted splits) is
 * never slower than pad or pack, at any micro-batch. */
START_TEST(test_dynamic_never_slower)
{
	struct setup s;
	struct seqlen_dist d;
	struct plan_error err;
	char path[4096];

	setup(&s, mix_cases[_i].model, mix_cases[_i].seq_len);
	s.p.dp = 8;
	plan_error_clear(&err);
	ck_assert_msg(seqlen_resolve("flan-mix", path, sizeof(path), &err), "%s", err.message);
	ck_assert_msg(seqlen_load_file(path, &d, &err), "%s", err.message);
	for (int g = 128; g <= 1024; g *= 8)
		for (int b = 1; b <= 8; b *= 2) {
			double pad, pack, dyn;

			s.p.global_batch = g;
			s.p.micro_batch = b;
			pad = throughput(&s, &d, SEQLEN_PAD, SEQLEN_ATTN_FULL);
			pack = throughput(&s, &d, SEQLEN_PACK, SEQLEN_ATTN_FULL);
			dyn = throughput(&s, &d, SEQLEN_DYNAMIC, SEQLEN_ATTN_FULL);
			ck_assert_msg(dyn >= pad && dyn >= pack, "%s, batch %d, micro-batch %d: dynamic %.0f, pad %.0f, "
				      "pack %.0f", mix_cases[_i].model, g, b, dyn, pad, pack);
		}
	seqlen_dist_release(&d);
	cluster_release(&s.c);
}
END_TEST

/* Without a distribution nothing is batched; lengths above --seq-len
 * are truncated, and context parallelism is refused. */
START_TEST(test_truncation_and_limits)
{
	static const int len[] = { 100, 4000 };
	static const double count[] = { 3, 1 };
	struct seqlen_dist d;
	struct setup s;
	struct estimate e;
	struct plan_error err;

	setup(&s, "gpt-1.7b", 2048);
	build(&d, len, count, 2);
	plan_error_clear(&err);
	ck_assert(estimate_plan(&s.m, &s.c, &s.p, NULL, &e, &err));
	ck_assert(!e.batching.on);
	ck_assert(seqlen_estimate(&s.m, &s.c, &s.p, NULL, &d, SEQLEN_PAD, 0, &e, &err));
	ck_assert_double_eq_tol(e.batching.truncated_fraction, 0.25, 1e-12);
	ck_assert_int_eq(e.batching.max_length, 2048);
	ck_assert_double_eq_tol(e.batching.mean_length, (3 * 100 + 2048) / 4.0, 1e-9);
	/* More sequences per replica than the dynamic program plans. */
	s.p.dp = 1;
	s.p.pp = 1;
	s.p.global_batch = 4 * (SEQLEN_DYNAMIC_MAX_SAMPLES + 1);
	ck_assert(!seqlen_estimate(&s.m, &s.c, &s.p, NULL, &d, SEQLEN_DYNAMIC, 0, &e, &err));
	ck_assert_int_eq(err.kind, PLAN_ERR_PLAN);
	seqlen_dist_release(&d);
	cluster_release(&s.c);
}
END_TEST

static Suite *
seqlen_suite(void)
{
	Suite *s = suite_create("seqlen");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_expected_max);
	tcase_add_test(tc, test_pack);
	tcase_add_test(tc, test_quantiles);
	tcase_add_test(tc, test_dynamic_split);
	tcase_add_test(tc, test_dynamic_nothing_fits);
	tcase_add_loop_test(tc, test_parse, 0, (int)(sizeof(parse_cases) / sizeof(parse_cases[0])));
	tcase_add_test(tc, test_parse_values);
	tcase_add_loop_test(tc, test_flan_mix_order, 0, (int)(sizeof(mix_cases) / sizeof(mix_cases[0])));
	tcase_add_loop_test(tc, test_gain_grows_with_spread, 0, (int)(sizeof(mix_cases) / sizeof(mix_cases[0])));
	tcase_add_test(tc, test_truncation_and_limits);
	tcase_add_test(tc, test_pad_bubble_slowest);
	tcase_add_loop_test(tc, test_dynamic_never_slower, 0, (int)(sizeof(mix_cases) / sizeof(mix_cases[0])));
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(seqlen_suite)
