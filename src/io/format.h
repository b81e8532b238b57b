/* Output formats of a prediction: text, JSON, CSV. Formatters never compute. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "plan/checkpoint.h"
#include "plan/cluster.h"
#include "plan/estimate.h"
#include "plan/model.h"
#include "plan/plan.h"

/** Everything a formatter shows about one prediction. */
struct report {
	const struct model *model;
	const struct cluster *cluster;
	const struct plan *plan;
	const struct estimate *est;
	const struct estimate_options *opt;
	const struct compressor *compressor; /**< NULL when none was given */
	const struct checkpoint_estimate *ckpt; /**< NULL without --checkpoint-to */
};

/** Human-readable report. Returns false on a write error. */
bool format_text(FILE *out, const struct report *r);

/**
 * The prediction as a JSON object (keys documented in plan-cli(1)).
 * Returns a new reference, or NULL when out of memory.
 */
json_t *format_json_object(const struct report *r);

/** The JSON object followed by a newline. Returns false on error. */
bool format_json(FILE *out, const struct report *r);

/** CSV header line (RFC 4180) matching format_csv_row(). */
bool format_csv_header(FILE *out);

/** One CSV record. */
bool format_csv_row(FILE *out, const struct report *r);
