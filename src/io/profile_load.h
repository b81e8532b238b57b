/*
 * Loading profiles from YAML: the schema of each profile kind (a table of
 * keys, also printed by `plan-cli profiles --schema`) and its loaders.
 * Errors name FILE:LINE:COL.
 */
#pragma once

#include <stdbool.h>

#include "io/schema.h"
#include "plan/cluster.h"
#include "plan/compressor.h"
#include "plan/error.h"
#include "plan/framework.h"
#include "plan/gpu.h"
#include "plan/model.h"

/** The schema of a model profile (also printed by `plan-cli profiles --schema`). */
extern const struct schema_key model_schema[];

/** Load and validate a model profile from @path. */
bool model_load_file(struct model *m, const char *path, struct plan_error *err);

/** Load and validate a model profile from memory (@name for messages). */
bool model_load_string(struct model *m, const char *name, const char *text,
		       struct plan_error *err);

/**
 * Fill @m from the mapping @node of @t (an inline model, a multimodal
 * profile's submodule): the table and the checks of a model profile.
 */
bool model_apply_node(struct model *m, struct ytree *t, yaml_node_t *node, struct plan_error *err);

extern const struct schema_key cluster_schema[];

/** Load and validate a cluster profile from @path. */
bool cluster_load_file(struct cluster *c, const char *path, struct plan_error *err);

/** Load and validate a cluster profile from memory (@name for messages). */
bool cluster_load_string(struct cluster *c, const char *name, const char *text,
			 struct plan_error *err);

extern const struct schema_key compressor_schema[];

/** Load and validate a compressor profile; fills method-dependent defaults. */
bool compressor_load_file(struct compressor *c, const char *path, struct plan_error *err);

/** Same from memory. */
bool compressor_load_string(struct compressor *c, const char *name, const char *text,
			    struct plan_error *err);

/** The schema of a GPU profile (gpus/NAME.yaml, or a cluster's inline gpu). */
extern const struct schema_key gpu_schema[];

/** Load and validate a GPU profile; the efficiencies not given take their generation's defaults. */
bool gpu_load_file(struct gpu *g, const char *path, struct plan_error *err);

/** Same from memory. */
bool gpu_load_string(struct gpu *g, const char *name, const char *text, struct plan_error *err);

/**
 * A cluster's `gpu` key: a GPU profile's name or path, a mapping with
 * `base: NAME` whose other keys override the base's, or a full inline
 * description (the keys of gpu_schema).
 */
/**
 * The checks across a GPU's keys, after its table: reserved_memory below
 * memory, peak_flops_fp8 0 or at least UNITS_MIN_COMPUTE_FLOPS. @prefix
 * ("" or "gpu.") leads the key paths in messages, located in @t.
 */
bool gpu_check(const struct gpu *g, struct ytree *t, const char *prefix, struct plan_error *err);

bool gpu_parse_ref(const struct schema_key *k, struct ytree *t, yaml_node_t *node, void *field,
		   struct plan_error *err);

/** The schema of a framework profile (frameworks/NAME.yaml). */
extern const struct schema_key framework_schema[];

/** Load and validate a framework profile. */
bool framework_load_file(struct framework *fw, const char *path, struct plan_error *err);

/**
 * Set one key of @fw from text (--framework-set KEY=VALUE), read as the
 * profile's YAML reads it. Errors name @where. The cross-key checks are
 * framework_check's, once all the pairs are set (plan-cli ubrs: a pair
 * may need another, given after it).
 */
bool framework_set(struct framework *fw, const char *where, const char *key, const char *text,
		   struct plan_error *err);

/** The profile's cross-key checks, as after a file, on @fw; errors name @where. */
bool framework_check(struct framework *fw, const char *where, struct plan_error *err);

/** Same from memory. */
bool framework_load_string(struct framework *fw, const char *name, const char *text,
			   struct plan_error *err);
