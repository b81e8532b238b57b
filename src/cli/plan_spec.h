/*
 * A plan written as KEY=VALUE items, "tp=4,pp=8,vpp=5,recompute=none":
 * the plan attributes (plan/plan_attr.h) by name, with dashes or
 * underscores, a list's entries between '/' (',' separates the items).
 * --submodule (cli/multimodal.c) and optimize's --baseline read them.
 */
#ifndef CLI_PLAN_SPEC_H
#define CLI_PLAN_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "plan/estimate.h"
#include "plan/plan.h"
#include "plan/plan_attr.h"

/* The longest spec: room for three lists of PLAN_MAX_STAGES entries. */
#define CLI_PLAN_SPEC_MAX 8192

/* gpus=G's range: predict's --gpus. */
#define CLI_PLAN_SPEC_MAX_GPUS (1L << 26)

/** How one kind of spec reads, and what its items have said. */
struct cli_plan_spec {
	/* Set by the caller. */
	const char *label;   /**< the messages' subject: "--submodule clip", "--baseline" */
	char key_sep;        /**< between label and key in a value's label: ':' gives "--submodule clip:tp" */
	const char *whose;   /**< "a submodule's", "the baseline's": for the refusals */
	/** Why attribute @id is not an item of this spec (NULL: it is one). */
	const char *(*refuses)(enum plan_attr_id id);
	bool takes_gpus;     /**< gpus=G is an item */
	struct estimate_options *opt; /**< where dp-allreduce goes; NULL: it is not an item */
	/* Filled by cli_plan_spec_parse. */
	const char *given[PLAN_ATTR_COUNT]; /**< the key each attribute was given by; NULL: not given */
	const char *gpus_key;               /**< gpus=G given */
	int gpus;                           /**< G; 0: not given */
	int flash;                          /**< flash-attention: 1 or 0; -1: not given (set it before) */
};

/**
 * Apply the items of @items ("key=v,key=v") to @p, noting in @spec what
 * was given. Prints a usage error (naming @spec->label, with valid keys
 * or the nearest one) and returns false on an unknown, refused, repeated
 * or malformed item. @whole is the argument as given, for the messages.
 */
bool cli_plan_spec_parse(struct cli_plan_spec *spec, const char *items, const char *whole, struct plan *p);

/**
 * What only a spec can get wrong about MiCS, said as a usage error: a
 * flat gather (mics-flat, mics-hierarchical) without a group, or a group
 * with a ZeRO stage other than 3 given beside it. A group with no zero
 * item makes @p ZeRO-3 (MiCS is ZeRO-3 inside its groups).
 */
bool cli_plan_spec_mics(const struct cli_plan_spec *spec, struct plan *p);

/** @name with dashes for underscores, as a spec writes it, into @buf. */
const char *cli_plan_spec_dashed(const char *name, char *buf, size_t size);

/**
 * The items of @p that are not at their default (plan_attr_format, as
 * predict_args), those @refuses refuses left out, written after @prefix
 * into @buf; false when they do not fit in @size.
 */
bool cli_plan_spec_format(const char *prefix, const struct plan *p, const char *(*refuses)(enum plan_attr_id id),
			  char *buf, size_t size);

#endif
