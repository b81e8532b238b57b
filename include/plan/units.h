/* Quantities with units: "200 Gbit/s", "80 GiB", "5 us", "312 TFLOPS", "700 W". */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/** The dimension of a quantity; each has its own unit table. */
enum unit_kind {
	UNIT_BANDWIDTH, /**< stored in bytes per second */
	UNIT_SIZE,      /**< stored in bytes */
	UNIT_TIME,      /**< stored in seconds */
	UNIT_COMPUTE,   /**< stored in FLOP per second */
	UNIT_POWER,     /**< stored in watts */
};

/*
 * The slowest rates a profile, an option or a sweep axis may give. Below
 * them an iteration's times overflow to infinity; no real link, GPU or
 * host codec is this slow. One definition for the schemas and the CLI.
 */
#define UNITS_MIN_BANDWIDTH_BPS 1e3   /**< 1 kB/s */
#define UNITS_MIN_COMPUTE_FLOPS 1e9   /**< 1 GFLOP/s */
#define UNITS_MIN_BANDWIDTH_TEXT "1 kB/s"
/* The fastest: 10^18 B/s, a million times any link (NVLink 5: 1.8e12 B/s). */
#define UNITS_MAX_BANDWIDTH_BPS 1e18
#define UNITS_MAX_BANDWIDTH_TEXT "1e+18 B/s"
#define UNITS_MIN_COMPUTE_TEXT "1 GFLOPS"
/*
 * The lowest efficiency a profile may give (a fraction of a peak: a link's,
 * a GPU's memory's or tensor cores'). No real link or kernel runs at under
 * 1 % of its peak; below it a typo such as 1e-300 gives an iteration of
 * 10^298 s instead of an error.
 */
#define UNITS_MIN_EFFICIENCY 0.01

/**
 * Parse "NUMBER UNIT" into SI (bytes, seconds, bytes/s, FLOP/s).
 * A bare number, an unknown unit or a unit of another kind is an error;
 * on error @why (if not NULL) receives a message naming the valid units.
 * Negative values are accepted here; callers range-check. A number
 * too large for a double, as written (1e400 W) or in SI ('1e308 GB/s'),
 * is an error that stores +HUGE_VAL or -HUGE_VAL in *@out, for the
 * caller to report with its range; other errors store nothing.
 */
bool units_parse(const char *text, enum unit_kind kind, double *out,
		 char *why, size_t why_size);

/** Space-separated list of the units accepted for @kind (static string). */
const char *units_list(enum unit_kind kind);

/** The SI unit that @kind is stored in ("B/s", "B", "s", "FLOPS", "W"; static string). */
const char *units_si_symbol(enum unit_kind kind);

/** Human name of the kind ("bandwidth", "size", ...). */
const char *units_kind_name(enum unit_kind kind);

/** Format @bytes as "12.3 GiB" into @buf (binary prefixes). */
void units_format_size(double bytes, char *buf, size_t size);

/** Format @seconds as "1.23 s", "45.6 ms", "7.8 us". */
void units_format_time(double seconds, char *buf, size_t size);
