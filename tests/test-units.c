#include <math.h>

#include "plan/numparse.h"
#include "plan/units.h"
#include "testutil.h"

struct unit_case {
	const char *text;
	enum unit_kind kind;
	double expect; /* SI value worked out by hand */
};

static const struct unit_case good[] = {
	/* Bits vs bytes: 200 Gbit/s = 200e9 / 8 = 25e9 B/s. */
	{ "200 Gbit/s", UNIT_BANDWIDTH, 25e9 },
	{ "200 Gb/s", UNIT_BANDWIDTH, 25e9 },
	{ "200 Gbps", UNIT_BANDWIDTH, 25e9 },
	{ "200 GB/s", UNIT_BANDWIDTH, 200e9 },
	{ "100Mbit/s", UNIT_BANDWIDTH, 12.5e6 },
	{ "1 GiB/s", UNIT_BANDWIDTH, 1073741824.0 },
	{ "1.6 Tbit/s", UNIT_BANDWIDTH, 200e9 },
	/* GB vs GiB: 80 GiB = 80 * 2^30 = 85899345920 B; 80 GB = 8e10 B. */
	{ "80 GiB", UNIT_SIZE, 85899345920.0 },
	{ "80 GB", UNIT_SIZE, 80e9 },
	{ "512 KiB", UNIT_SIZE, 524288.0 },
	{ "5 us", UNIT_TIME, 5e-6 },
	{ "1.5 ms", UNIT_TIME, 1.5e-3 },
	{ "250 ns", UNIT_TIME, 250e-9 },
	{ "2 s", UNIT_TIME, 2.0 },
	{ "312 TFLOPS", UNIT_COMPUTE, 312e12 },
	{ "0.989 PFLOPS", UNIT_COMPUTE, 989e12 },
	{ "  42 GFLOPS  ", UNIT_COMPUTE, 42e9 },
	{ "700 W", UNIT_POWER, 700.0 },
	{ "1.2 kW", UNIT_POWER, 1200.0 },
};

START_TEST(test_units_good)
{
	double v = 0;
	char why[256];

	ck_assert_msg(units_parse(good[_i].text, good[_i].kind, &v, why, sizeof(why)), "%s", why);
	ck_assert_rel(v, good[_i].expect, 1e-12);
}
END_TEST

static const struct unit_case bad[] = {
	{ "200", UNIT_BANDWIDTH, 0 },          /* bare number: a unit is required */
	{ "80 GiB", UNIT_BANDWIDTH, 0 },       /* a size is not a bandwidth */
	{ "12 furlongs", UNIT_SIZE, 0 },
	{ "GB", UNIT_SIZE, 0 },
	{ "", UNIT_TIME, 0 },
	{ "nan GB", UNIT_SIZE, 0 },
	{ "inf s", UNIT_TIME, 0 },
	{ "1e999 GB", UNIT_SIZE, 0 },
	{ "0x10 GB", UNIT_SIZE, 0 },
	{ "5 gb/s", UNIT_BANDWIDTH, 0 },       /* case matters: bits and bytes differ */
	/* A finite number that its unit's factor takes past DBL_MAX
	 * (1.8e308): 1e308 x 1e9 B/s was infinity, printed by optimize. */
	{ "1e308 GB/s", UNIT_BANDWIDTH, 0 },
	{ "1e300 Tbit/s", UNIT_BANDWIDTH, 0 },
	{ "1e300 TiB", UNIT_SIZE, 0 },
	{ "1e306 PFLOPS", UNIT_COMPUTE, 0 },
};

START_TEST(test_units_bad)
{
	double v = 0;
	char why[256] = "";

	ck_assert(!units_parse(bad[_i].text, bad[_i].kind, &v, why, sizeof(why)));
	ck_assert(why[0] != '\0');
}
END_TEST

START_TEST(test_units_messages)
{
	double v;
	char why[256];

	ck_assert(!units_parse("200", UNIT_BANDWIDTH, &v, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "missing unit"));
	ck_assert_ptr_nonnull(strstr(why, "Gbit/s"));
	ck_assert(!units_parse("80 GiB", UNIT_BANDWIDTH, &v, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "is a size unit"));
	ck_assert(!units_parse("1e308 GB/s", UNIT_BANDWIDTH, &v, why, sizeof(why)));
	ck_assert_str_eq(why, "'1e308 GB/s' is too large for a bandwidth");
	/* One that holds: 1e296 TB/s = 1e296 x 1e12 = 1e308 B/s, under
	 * DBL_MAX (1.797e308). */
	ck_assert(units_parse("1e296 TB/s", UNIT_BANDWIDTH, &v, why, sizeof(why)));
	ck_assert_rel(v, 1e308, 1e-12);
}
END_TEST

START_TEST(test_numparse)
{
	double d;
	long l;

	ck_assert(num_parse_double(" 3.25 ", &d));
	ck_assert_double_eq(d, 3.25);
	ck_assert(num_parse_double("1e3", &d));
	ck_assert_double_eq(d, 1000.0);
	ck_assert(!num_parse_double("", &d));
	ck_assert(!num_parse_double("12x", &d));
	ck_assert(!num_parse_double("nan", &d));
	ck_assert(!num_parse_double("inf", &d));
	ck_assert(!num_parse_double("1e400", &d));
	ck_assert(!num_parse_double("-1e400", &d));
	/* An underflow is a number (subnormal, or 0), for the caller's range
	 * check to refuse with the range. */
	ck_assert(num_parse_double("1e-320", &d));
	ck_assert(d > 0.0 && d < 1e-300);
	ck_assert(num_parse_double("1e-400", &d));
	ck_assert_double_eq(d, 0.0);
	ck_assert(!num_parse_double("0x1p3", &d));
	ck_assert(num_parse_long("42", 0, 100, &l));
	ck_assert_int_eq(l, 42);
	ck_assert(!num_parse_long("101", 0, 100, &l));
	ck_assert(!num_parse_long("4.5", 0, 100, &l));
	ck_assert(!num_parse_long("99999999999999999999", 0, 100, &l));
}
END_TEST

/* Why a text is refused: not a number, or a number out of range (issue
 * 25: '1e400' was "must be a number"). Each row's expected value by hand:
 * an overflow is +-HUGE_VAL by its sign; an underflow the 0 it rounds to. */
START_TEST(test_numparse_status)
{
	static const struct {
		const char *text;
		enum num_status want;
		double value; /* when not NUM_NOT_A_NUMBER */
	} rows[] = {
		{ "1.5", NUM_OK, 1.5 },
		{ " -0 ", NUM_OK, 0.0 },
		{ "1e-400", NUM_OK, 0.0 },
		{ "1e308", NUM_OK, 1e308 },
		{ "1e400", NUM_OUT_OF_RANGE, HUGE_VAL },
		{ "-1e400", NUM_OUT_OF_RANGE, -HUGE_VAL },
		{ " +1e999 ", NUM_OUT_OF_RANGE, HUGE_VAL },
		/* 10^394 written out (395 digits): the same overflow, no exponent. */
		{ "1" "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		  "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		  "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		  "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		  "000000", NUM_OUT_OF_RANGE, HUGE_VAL },
		{ "1e400x", NUM_NOT_A_NUMBER, 0 },
		{ "1e400 TFLOPS", NUM_NOT_A_NUMBER, 0 },
		{ "", NUM_NOT_A_NUMBER, 0 },
		{ "   ", NUM_NOT_A_NUMBER, 0 },
		{ "nan", NUM_NOT_A_NUMBER, 0 },
		{ "-nan", NUM_NOT_A_NUMBER, 0 },
		{ "inf", NUM_NOT_A_NUMBER, 0 },
		{ "-inf", NUM_NOT_A_NUMBER, 0 },
		{ "+infinity", NUM_NOT_A_NUMBER, 0 },
		{ "0x10", NUM_NOT_A_NUMBER, 0 },
		{ "-0x1p3", NUM_NOT_A_NUMBER, 0 },
		{ "12abc", NUM_NOT_A_NUMBER, 0 },
		{ "-", NUM_NOT_A_NUMBER, 0 },
		{ ".", NUM_NOT_A_NUMBER, 0 },
	};
	const char *end;
	double d;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		d = 12345.0; /* untouched when not a number */
		ck_assert_msg(num_parse_double_status(rows[i].text, &d) == rows[i].want, "'%s'", rows[i].text);
		ck_assert_msg(rows[i].want == NUM_NOT_A_NUMBER ? d == 12345.0 : d == rows[i].value, "'%s': %g",
			      rows[i].text, d);
		/* The bool form takes only NUM_OK. */
		ck_assert(num_parse_double(rows[i].text, &d) == (rows[i].want == NUM_OK));
	}
	ck_assert(num_parse_double_status(NULL, &d) == NUM_NOT_A_NUMBER);
	/* The prefix form: the number before a unit, 1e400 included. */
	ck_assert(num_parse_prefix_status("1e400 TFLOPS", &d, &end) == NUM_OUT_OF_RANGE);
	ck_assert(d == HUGE_VAL && strcmp(end, " TFLOPS") == 0);
	ck_assert(num_parse_prefix_status("-1e400 s", &d, &end) == NUM_OUT_OF_RANGE);
	ck_assert(d == -HUGE_VAL && strcmp(end, " s") == 0);
	ck_assert(!num_parse_prefix("1e400 TFLOPS", &d, &end));
	ck_assert(num_parse_prefix_status("312 TFLOPS", &d, &end) == NUM_OK);
	ck_assert(d == 312.0 && strcmp(end, " TFLOPS") == 0);
	ck_assert(num_parse_prefix_status("inf W", &d, &end) == NUM_NOT_A_NUMBER);
}
END_TEST

/* units_parse: an overflow, as written or through the unit's factor, is
 * an error that leaves +-HUGE_VAL for the caller's range check; other
 * errors leave *out alone. */
START_TEST(test_units_overflow)
{
	double d = 0.0;

	ck_assert(!units_parse("1e400 TFLOPS", UNIT_COMPUTE, &d, NULL, 0));
	ck_assert(d == HUGE_VAL);
	ck_assert(!units_parse("-1e400 GB/s", UNIT_BANDWIDTH, &d, NULL, 0));
	ck_assert(d == -HUGE_VAL);
	/* 1e306 x 1e15 = 1e321 > DBL_MAX (1.8e308): infinite in SI. */
	ck_assert(!units_parse("1e306 PFLOPS", UNIT_COMPUTE, &d, NULL, 0));
	ck_assert(d == HUGE_VAL);
	d = 7.0;
	ck_assert(!units_parse("1e400 parsecs", UNIT_TIME, &d, NULL, 0));
	ck_assert(d == 7.0);
	ck_assert(!units_parse("nan GB/s", UNIT_BANDWIDTH, &d, NULL, 0));
	ck_assert(d == 7.0);
	/* An underflow is 0 B/s, a number: the caller's minimum refuses it. */
	ck_assert(units_parse("1e-400 GB/s", UNIT_BANDWIDTH, &d, NULL, 0));
	ck_assert(d == 0.0);
}
END_TEST

START_TEST(test_format)
{
	char buf[64];

	units_format_size(80.0 * 1073741824.0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "80.00 GiB");
	units_format_time(0.0125, buf, sizeof(buf));
	ck_assert_str_eq(buf, "12.500 ms");
}
END_TEST

static Suite *
units_suite(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("units");

	tcase_add_loop_test(tc, test_units_good, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_loop_test(tc, test_units_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_units_messages);
	tcase_add_test(tc, test_numparse);
	tcase_add_test(tc, test_numparse_status);
	tcase_add_test(tc, test_units_overflow);
	tcase_add_test(tc, test_format);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(units_suite)
