/*
 * The parse and write functions that several commands' option rows share
 * (the rows of cli/options.h's CLI_LINK_ROWS, CLI_CHECKPOINT_ROWS and
 * CLI_TEXT_JSON_ROW); each command's own are beside its code.
 */
#include <math.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "plan/numparse.h"
#include "plan/units.h"

bool
cli_parse_bandwidth(const struct cli_option *o, const char *arg, void *req)
{
	double *out = (double *)((char *)req + o->offset);
	char opt[64], why[256] = "";

	cli_option_flag(o, opt, sizeof(opt));
	*out = 0.0;
	/* '1e400 GB/s' (+-HUGE_VAL from units_parse) is out of range, as
	 * '1e30 GB/s' is: the messages below, with the bound it is past. */
	if (!units_parse(arg, UNIT_BANDWIDTH, out, why, sizeof(why)) && !isinf(*out)) {
		cli_error("%s: %s", opt, why);
		return false;
	}
	/* The profiles' range: below it times overflow to infinity. */
	if (*out < UNITS_MIN_BANDWIDTH_BPS) {
		cli_error("%s must be at least %s, got '%s'", opt, UNITS_MIN_BANDWIDTH_TEXT, arg);
		return false;
	}
	if (*out > UNITS_MAX_BANDWIDTH_BPS) {
		cli_error("%s must be at most %s, got '%s'", opt, UNITS_MAX_BANDWIDTH_TEXT, arg);
		return false;
	}
	return true;
}

/* From 1 W to 100 kW, the profiles' power_limit range checked against the
 * GPU's rated_power when the cluster is loaded (cli_load_cluster_links). */
bool
cli_parse_power(const struct cli_option *o, const char *arg, void *req)
{
	double *out = (double *)((char *)req + o->offset);
	char opt[64], why[256] = "";

	cli_option_flag(o, opt, sizeof(opt));
	*out = 0.0;
	if (!units_parse(arg, UNIT_POWER, out, why, sizeof(why)) && !isinf(*out)) {
		cli_error("%s: %s", opt, why);
		return false;
	}
	if (!(*out >= 1.0) || *out > 1e5) {
		cli_error("%s must be from 1 W to 100 kW, got '%s'", opt, arg);
		return false;
	}
	return true;
}

/* "%.17g" reads back as the same double, so predict_args reproduce the
 * prediction exactly. */
void
cli_write_real(const struct cli_option *o, const void *req, struct cli_words *out)
{
	double v = *(const double *)((const char *)req + o->offset);
	char buf[64];

	if (v <= 0)
		return;
	snprintf(buf, sizeof(buf), "%.17g%s", v,
		 o->parse == cli_parse_bandwidth ? " B/s" : o->parse == cli_parse_power ? " W" : "");
	cli_words_add(o, buf, out);
}

/* From 1e-6 to 1e12: an --gpu-mtbf-hours of 1e-300 passed and printed
 * 7.68e+302 failures a day, and 1e300 was "not a positive number". */
bool
cli_parse_positive(const struct cli_option *o, const char *arg, void *req)
{
	double *out = (double *)((char *)req + o->offset);
	char opt[64];

	if (!num_parse_double(arg, out) || !(*out >= 1e-6) || *out > 1e12) {
		cli_error("%s expects a number from 1e-6 to 1e12, got '%s'", cli_option_flag(o, opt, sizeof(opt)),
			  arg);
		return false;
	}
	return true;
}

bool
cli_parse_text_json(const struct cli_option *o, const char *arg, void *req)
{
	int v = CLI_FORMAT_TEXT;

	if (!cli_choice("--format", arg, o->choices, &v) || v == CLI_FORMAT_CSV) {
		if (v == CLI_FORMAT_CSV)
			cli_error("--format: this command writes text or json");
		return false;
	}
	*(int *)(void *)((char *)req + o->offset) = v;
	return true;
}
