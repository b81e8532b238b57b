#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/numparse.h"
#include "plan/units.h"

struct unit_row {
	enum unit_kind kind;
	const char *name;
	double factor; /* multiply the number by this to get SI */
};

/*
 * Bits and bytes: a lower-case 'b' or "bit" is a bit (divide by 8), an
 * upper-case 'B' a byte. Decimal prefixes are powers of 1000, binary
 * ones (Ki, Mi, Gi) powers of 1024. Matching is case-sensitive on
 * purpose: "Gb/s" and "GB/s" differ by a factor of eight.
 */
static const struct unit_row unit_table[] = {
	{ UNIT_BANDWIDTH, "B/s", 1.0 },
	{ UNIT_BANDWIDTH, "kB/s", 1e3 },
	{ UNIT_BANDWIDTH, "MB/s", 1e6 },
	{ UNIT_BANDWIDTH, "GB/s", 1e9 },
	{ UNIT_BANDWIDTH, "TB/s", 1e12 },
	{ UNIT_BANDWIDTH, "KiB/s", 1024.0 },
	{ UNIT_BANDWIDTH, "MiB/s", 1048576.0 },
	{ UNIT_BANDWIDTH, "GiB/s", 1073741824.0 },
	{ UNIT_BANDWIDTH, "bit/s", 1.0 / 8 },
	{ UNIT_BANDWIDTH, "kbit/s", 1e3 / 8 },
	{ UNIT_BANDWIDTH, "Mbit/s", 1e6 / 8 },
	{ UNIT_BANDWIDTH, "Gbit/s", 1e9 / 8 },
	{ UNIT_BANDWIDTH, "Tbit/s", 1e12 / 8 },
	{ UNIT_BANDWIDTH, "Mb/s", 1e6 / 8 },
	{ UNIT_BANDWIDTH, "Gb/s", 1e9 / 8 },
	{ UNIT_BANDWIDTH, "Tb/s", 1e12 / 8 },
	{ UNIT_BANDWIDTH, "Mbps", 1e6 / 8 },
	{ UNIT_BANDWIDTH, "Gbps", 1e9 / 8 },
	{ UNIT_BANDWIDTH, "Tbps", 1e12 / 8 },
	{ UNIT_SIZE, "B", 1.0 },
	{ UNIT_SIZE, "kB", 1e3 },
	{ UNIT_SIZE, "MB", 1e6 },
	{ UNIT_SIZE, "GB", 1e9 },
	{ UNIT_SIZE, "TB", 1e12 },
	{ UNIT_SIZE, "KiB", 1024.0 },
	{ UNIT_SIZE, "MiB", 1048576.0 },
	{ UNIT_SIZE, "GiB", 1073741824.0 },
	{ UNIT_SIZE, "TiB", 1099511627776.0 },
	{ UNIT_TIME, "s", 1.0 },
	{ UNIT_TIME, "ms", 1e-3 },
	{ UNIT_TIME, "us", 1e-6 },
	{ UNIT_TIME, "\xc2\xb5s", 1e-6 }, /* µs */
	{ UNIT_TIME, "ns", 1e-9 },
	{ UNIT_COMPUTE, "FLOPS", 1.0 },
	{ UNIT_COMPUTE, "GFLOPS", 1e9 },
	{ UNIT_COMPUTE, "TFLOPS", 1e12 },
	{ UNIT_COMPUTE, "PFLOPS", 1e15 },
	{ UNIT_COMPUTE, "GFLOP/s", 1e9 },
	{ UNIT_COMPUTE, "TFLOP/s", 1e12 },
	{ UNIT_COMPUTE, "PFLOP/s", 1e15 },
	{ UNIT_POWER, "W", 1.0 },
	{ UNIT_POWER, "kW", 1e3 },
};

static const char *const unit_lists[] = {
	[UNIT_BANDWIDTH] = "B/s kB/s MB/s GB/s TB/s KiB/s MiB/s GiB/s bit/s kbit/s Mbit/s Gbit/s Tbit/s Mb/s Gb/s Tb/s Mbps Gbps Tbps",
	[UNIT_SIZE] = "B kB MB GB TB KiB MiB GiB TiB",
	[UNIT_TIME] = "s ms us \xc2\xb5s ns",
	[UNIT_COMPUTE] = "FLOPS GFLOPS TFLOPS PFLOPS GFLOP/s TFLOP/s PFLOP/s",
	[UNIT_POWER] = "W kW",
};

static const char *const kind_names[] = {
	[UNIT_BANDWIDTH] = "bandwidth",
	[UNIT_SIZE] = "size",
	[UNIT_TIME] = "time",
	[UNIT_COMPUTE] = "compute rate",
	[UNIT_POWER] = "power",
};

static const char *const si_symbols[] = {
	[UNIT_BANDWIDTH] = "B/s",
	[UNIT_SIZE] = "B",
	[UNIT_TIME] = "s",
	[UNIT_COMPUTE] = "FLOPS",
	[UNIT_POWER] = "W",
};

const char *
units_si_symbol(enum unit_kind kind)
{
	return si_symbols[kind];
}

const char *
units_list(enum unit_kind kind)
{
	return unit_lists[kind];
}

const char *
units_kind_name(enum unit_kind kind)
{
	return kind_names[kind];
}

/* The value in SI units into *@out; false when the number (1e400) or
 * the unit's factor took it past the largest double: '1e308 GB/s' was
 * infinity B/s, which optimize then printed ("--nic-bandwidth inf B/s").
 * Then *@out is +-HUGE_VAL, for a caller's range check (units_parse). */
static bool
scale(const char *text, double si, enum unit_kind kind, double *out, char *why, size_t why_size)
{
	*out = si;
	if (!isfinite(si)) {
		if (why)
			snprintf(why, why_size, "'%s' is too large for a %s", text, kind_names[kind]);
		return false;
	}
	return true;
}

bool
units_parse(const char *text, enum unit_kind kind, double *out,
	    char *why, size_t why_size)
{
	const char *end;
	char unit[32];
	size_t n;
	double v;

	/* An overflow (1e400) goes on to its unit, then fails in scale(). */
	if (!text || num_parse_prefix_status(text, &v, &end) == NUM_NOT_A_NUMBER) {
		if (why)
			snprintf(why, why_size, "expected a %s such as '%s', got '%s'",
				 kind_names[kind],
				 kind == UNIT_BANDWIDTH ? "200 Gbit/s" :
				 kind == UNIT_SIZE ? "80 GiB" :
				 kind == UNIT_TIME ? "5 us" :
				 kind == UNIT_POWER ? "700 W" : "312 TFLOPS",
				 text ? text : "");
		return false;
	}
	while (*end == ' ' || *end == '\t')
		end++;
	n = strlen(end);
	while (n > 0 && isspace((unsigned char)end[n - 1]))
		n--;
	if (n == 0) {
		if (why)
			snprintf(why, why_size, "missing unit in '%s' (valid units: %s)",
				 text, unit_lists[kind]);
		return false;
	}
	if (n >= sizeof(unit))
		n = sizeof(unit) - 1;
	memcpy(unit, end, n);
	unit[n] = '\0';
	for (size_t i = 0; i < sizeof(unit_table) / sizeof(unit_table[0]); i++) {
		if (unit_table[i].kind == kind && strcmp(unit_table[i].name, unit) == 0)
			return scale(text, v * unit_table[i].factor, kind, out, why, why_size);
	}
	for (size_t i = 0; i < sizeof(unit_table) / sizeof(unit_table[0]); i++) {
		if (strcmp(unit_table[i].name, unit) == 0) {
			if (why)
				snprintf(why, why_size, "'%s' is a %s unit, expected a %s (valid units: %s)",
					 unit, kind_names[unit_table[i].kind],
					 kind_names[kind], unit_lists[kind]);
			return false;
		}
	}
	if (why)
		snprintf(why, why_size, "unknown %s unit '%s' (valid units: %s)",
			 kind_names[kind], unit, unit_lists[kind]);
	return false;
}

void
units_format_size(double bytes, char *buf, size_t size)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int i = 0;
	double v = bytes;

	while (fabs(v) >= 1024.0 && i < 5) {
		v /= 1024.0;
		i++;
	}
	snprintf(buf, size, i == 0 ? "%.0f %s" : "%.2f %s", v, names[i]);
}

void
units_format_time(double seconds, char *buf, size_t size)
{
	double a = fabs(seconds);

	if (a >= 1.0 || a == 0.0)
		snprintf(buf, size, "%.3f s", seconds);
	else if (a >= 1e-3)
		snprintf(buf, size, "%.3f ms", seconds * 1e3);
	else
		snprintf(buf, size, "%.3f us", seconds * 1e6);
}
