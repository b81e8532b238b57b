/*
 * Loading a multimodal model profile (kind: multimodal): its submodules,
 * each a bundled model name or an inline transformer, and the contrastive
 * head. Errors name FILE:LINE:COL, as every profile's.
 */
#pragma once

#include <stdbool.h>

#include "io/schema.h"
#include "plan/error.h"
#include "plan/multimodal.h"

/** The keys of a multimodal profile (printed by `plan-cli profiles --schema model`). */
extern const struct schema_key multimodal_schema[];

/** Whether the model profile @path says `kind: multimodal` (false when it cannot be read). */
bool multimodal_profile_is(const char *path);

/** Load and validate a multimodal profile from @path. */
bool multimodal_load_file(struct multimodal *mm, const char *path, struct plan_error *err);

/** Same from memory (@name for messages). */
bool multimodal_load_string(struct multimodal *mm, const char *name, const char *text,
			    struct plan_error *err);
