/* Finding bundled profiles by name: models/, clusters/, compressors/, gpus/, frameworks/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "plan/error.h"

enum profile_kind {
	PROFILE_MODEL,
	PROFILE_CLUSTER,
	PROFILE_COMPRESSOR,
	PROFILE_GPU,
	PROFILE_FRAMEWORK,
};

/** Folder name of a kind: "models", "clusters", "compressors", "gpus", "frameworks". */
const char *profile_kind_dir(enum profile_kind kind);

/**
 * The profile roots searched, in order: each entry of $PLAN_CLI_PATH
 * (colon-separated), the folder above the running executable (the
 * source tree when run from a build folder inside it), the folder of the
 * executable, and the installed data directory. Call once with argv[0].
 */
void profile_path_init(const char *argv0);

/** Number of roots and the i-th root (valid after profile_path_init). */
int profile_path_count(void);
const char *profile_path_root(int i);

/**
 * Resolve @arg: a path (it contains '/' or ends in ".yaml") is used as
 * is; otherwise NAME is looked up as ROOT/KIND/NAME.yaml in each root.
 * Unknown names are errors listing the names that exist.
 */
bool profile_resolve(enum profile_kind kind, const char *arg, char *out,
		     size_t size, struct plan_error *err);

/**
 * Call @fn for each bundled profile of @kind (first root wins for a name),
 * sorted by name. Returns the number of profiles found.
 */
int profile_list(enum profile_kind kind,
		 void (*fn)(const char *name, const char *path, void *data), void *data);
