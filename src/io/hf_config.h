/* Hugging Face config.json files as plan-cli model profiles. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "plan/error.h"
#include "plan/model.h"

/** Whether a --model argument names a Hugging Face config ("hf:PATH" or "*.json"). */
bool hf_config_named(const char *arg);

/** The path of such an argument (past "hf:"). */
const char *hf_config_path(const char *arg);

/**
 * The YAML text of the model profile equivalent to the Hugging Face
 * config.json at @path, named @name, with a comment naming the source;
 * malloc'd into *@yaml (the caller frees it). What cannot be mapped (an
 * unknown model_type, a missing or mistyped field, an architecture plan-cli
 * cannot express) is an error naming the file and the field.
 */
bool hf_config_to_yaml(const char *path, const char *name, char **yaml, struct plan_error *err);

/** The same from the @len bytes of @text, read from @path (named in errors). */
bool hf_config_text_to_yaml(const char *path, const char *text, size_t len, const char *name, char **yaml,
			    struct plan_error *err);

/** Load @m from the Hugging Face config.json at @path (through hf_config_to_yaml). */
bool hf_config_load(struct model *m, const char *path, struct plan_error *err);
