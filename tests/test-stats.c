/*
 * Rank statistics (stats.c), worked by hand: Spearman's rho is the
 * Pearson correlation of the ranks, ties taking the mean of their ranks
 * (Spearman 1904; the convention of every statistics package).
 */
#include <math.h>

#include "plan/stats.h"
#include "testutil.h"

START_TEST(test_ranks_ties)
{
	/* 7 twice at positions 3 and 4 of the order: rank (3 + 4) / 2. */
	const double v[] = { 7.0, 5.0, 8.0, 7.0, 6.0 };
	double r[5];
	int work[10];

	stats_ranks(v, 5, work, r);
	ck_assert_double_eq(r[0], 3.5);
	ck_assert_double_eq(r[1], 1.0);
	ck_assert_double_eq(r[2], 5.0);
	ck_assert_double_eq(r[3], 3.5);
	ck_assert_double_eq(r[4], 2.0);
}
END_TEST

START_TEST(test_spearman)
{
	/*
	 * x ranks 1..5; y = 5, 6, 7, 8, 7 ranks 1, 2, 3.5, 5, 3.5. Around the
	 * mean rank 3: dx = -2, -1, 0, 1, 2; dy = -2, -1, 0.5, 2, 0.5.
	 * Sum dx dy = 4 + 1 + 0 + 2 + 1 = 8; sum dx^2 = 10; sum dy^2 = 4 + 1
	 * + 0.25 + 4 + 0.25 = 9.5; rho = 8 / sqrt(95) = 0.820783.
	 */
	const double x[] = { 1.0, 2.0, 3.0, 4.0, 5.0 }, y[] = { 5.0, 6.0, 7.0, 8.0, 7.0 };
	const double down[] = { 50.0, 40.0, 30.0, 20.0, 10.0 }, flat[] = { 2.0, 2.0, 2.0, 2.0, 2.0 };
	double rx[5], ry[5], rho;
	int work[10];

	ck_assert(stats_spearman(x, y, 5, work, rx, ry, &rho));
	ck_assert_double_eq_tol(rho, 8.0 / sqrt(95.0), 1e-12);
	/* Any monotone map keeps the ranks: +1 increasing, -1 decreasing. */
	ck_assert(stats_spearman(x, (const double[]){ 1.0, 10.0, 100.0, 1e3, 1e4 }, 5, work, rx, ry, &rho));
	ck_assert_double_eq_tol(rho, 1.0, 1e-12);
	ck_assert(stats_spearman(x, down, 5, work, rx, ry, &rho));
	ck_assert_double_eq_tol(rho, -1.0, 1e-12);
	/* Undefined: no spread, or fewer than 3 points. */
	ck_assert(!stats_spearman(x, flat, 5, work, rx, ry, &rho));
	ck_assert_double_eq(rho, 0.0);
	ck_assert(!stats_spearman(x, y, 2, work, rx, ry, &rho));
}
END_TEST

START_TEST(test_ranks_long)
{
	/* 1000 values in reverse with pairs tied: the merge sort and the tie
	 * ranks on more than one pass (value 999 - i/2 ... ). */
	enum { N = 1000 };
	static double v[N], r[N];
	static int work[2 * N];

	for (int i = 0; i < N; i++)
		v[i] = (double)(N - 1 - i / 2 * 2);
	stats_ranks(v, N, work, r);
	/* The last pair (v = 1) holds ranks 1 and 2: 1.5 each; the first pair
	 * (v = 999) ranks 999 and 1000: 999.5. */
	ck_assert_double_eq(r[N - 1], 1.5);
	ck_assert_double_eq(r[N - 2], 1.5);
	ck_assert_double_eq(r[0], 999.5);
	ck_assert_double_eq(r[1], 999.5);
}
END_TEST

static Suite *
stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ranks_ties);
	tcase_add_test(tc, test_spearman);
	tcase_add_test(tc, test_ranks_long);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(stats_suite)
