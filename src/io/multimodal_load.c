/*
 * A multimodal model profile:
 *
 *   name: clip-vit-l14
 *   kind: multimodal
 *   submodules:
 *     - name: image
 *       model: { name: vit-l14, layers: 24, ... }   # inline transformer
 *       patches: 257
 *     - name: text
 *       model: clip-text-l12                         # a bundled model
 *       seq_len: 77
 *   contrastive:
 *     embedding: 768
 *
 * The submodules and the contrastive head go through the schema tables
 * (schema_apply), so that their errors carry FILE:LINE:COL and
 * `plan-cli profiles --schema model` prints them.
 */
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "io/multimodal_load.h"
#include "io/profile_load.h"
#include "io/profile_path.h"

#define OFF(f) offsetof(struct multimodal, f)
#define SOFF(f) offsetof(struct multimodal_submodule, f)

/* The submodule's model: a bundled name (or a path), or an inline mapping. */
static bool
parse_sub_model(const struct schema_key *k, struct ytree *t, yaml_node_t *node, void *field,
		struct plan_error *err)
{
	struct model *m = field;
	const char *name = ytree_scalar(node);
	char path[PATH_MAX];
	struct plan_error sub;

	(void)k;
	if (node->type == YAML_MAPPING_NODE)
		return model_apply_node(m, t, node, err);
	if (!name || !name[0])
		return ytree_error(t, node, err, "'model' must be a bundled model's name or a transformer's keys");
	plan_error_clear(&sub);
	if (!profile_resolve(PROFILE_MODEL, name, path, sizeof(path), &sub))
		return ytree_error(t, node, err, "model '%s': %s", name, sub.message);
	if (!model_load_file(m, path, err))
		return false;
	return true;
}

static const struct schema_key submodule_schema[] = {
	{ .key = "name", .type = SCHEMA_STRING, .required = true, .offset = SOFF(name),
	  .size = sizeof(((struct multimodal_submodule *)0)->name),
	  .help = "the submodule's name (image, text), as --submodule NAME:... gives it" },
	{ .key = "model", .type = SCHEMA_CUSTOM, .required = true, .offset = SOFF(model),
	  .parse = parse_sub_model,
	  .help = "a bundled model's name or path, or an inline transformer (the keys of a model profile)" },
	{ .key = "seq_len", .type = SCHEMA_INT, .offset = SOFF(tokens), .min = 1, .max = 1e8,
	  .help = "tokens per sample (text); default the model's seq_len" },
	{ .key = "patches", .type = SCHEMA_INT, .offset = SOFF(tokens), .min = 1, .max = 1e8,
	  .help = "tokens per sample of an image encoder: patches, with the CLS token (ViT-L/14 at 224 px: 257)" },
	{ 0 },
};

static bool
parse_submodules(const struct schema_key *k, struct ytree *t, yaml_node_t *node, void *field,
		 struct plan_error *err)
{
	struct multimodal *mm = (struct multimodal *)(void *)((char *)field - OFF(nsub));

	(void)k;
	if (node->type != YAML_SEQUENCE_NODE)
		return ytree_error(t, node, err, "'submodules' must be a list of mappings (name, model, seq_len or patches)");
	mm->nsub = 0;
	for (yaml_node_item_t *i = node->data.sequence.items.start; i < node->data.sequence.items.top; i++) {
		yaml_node_t *item = ytree_node(t, *i);
		struct multimodal_submodule *s;

		if (mm->nsub == MULTIMODAL_MAX_SUBMODULES)
			return ytree_error(t, item, err, "more than %d submodules", MULTIMODAL_MAX_SUBMODULES);
		if (item->type != YAML_MAPPING_NODE)
			return ytree_error(t, item, err, "each submodule must be a mapping (name, model, seq_len or patches)");
		s = &mm->sub[mm->nsub];
		memset(s, 0, sizeof(*s));
		if (!schema_apply(submodule_schema, t, item, s, err))
			return false;
		if (ytree_find(t, item, "seq_len") && ytree_find(t, item, "patches"))
			return ytree_error(t, ytree_find(t, item, "patches"), err,
					   "submodule '%s' gives both seq_len and patches: one of them", s->name);
		for (int j = 0; j < mm->nsub; j++)
			if (strcmp(mm->sub[j].name, s->name) == 0)
				return ytree_error(t, ytree_find(t, item, "name"), err, "submodule '%s' is listed twice",
						   s->name);
		if (s->tokens == 0)
			s->tokens = s->model.seq_len;
		/* The plans read the model's seq_len: the submodule's tokens. */
		s->model.seq_len = s->tokens;
		mm->nsub++;
	}
	if (mm->nsub < 2)
		return ytree_error(t, node, err, "a multimodal model needs at least 2 submodules, got %d", mm->nsub);
	return true;
}

static bool
parse_mm_kind(const struct schema_key *k, struct ytree *t, yaml_node_t *node, void *field,
	      struct plan_error *err)
{
	const char *v = ytree_scalar(node);

	(void)k, (void)field;
	if (v && strcmp(v, "multimodal") == 0)
		return true;
	return ytree_error(t, node, err, "'kind' of a profile with submodules must be multimodal, got '%s'",
			   v ? v : "a collection");
}

static const struct schema_key contrastive_schema[] = {
	{ .key = "embedding", .type = SCHEMA_INT, .required = true, .offset = 0, .min = 1, .max = 1e6,
	  .help = "embedding size D of the contrastive head (CLIP ViT-L/14: 768)" },
	{ 0 },
};

const struct schema_key multimodal_schema[] = {
	{ .key = "name", .type = SCHEMA_STRING, .required = true, .offset = OFF(name),
	  .size = sizeof(((struct multimodal *)0)->name), .help = "profile name" },
	{ .key = "description", .type = SCHEMA_STRING, .offset = OFF(description),
	  .size = sizeof(((struct multimodal *)0)->description), .help = "free text" },
	{ .key = "kind", .type = SCHEMA_CUSTOM, .required = true, .parse = parse_mm_kind,
	  .help = "must be multimodal: submodules joined by a contrastive loss (DistMM, Huang et al. NSDI 2024)" },
	{ .key = "submodules", .type = SCHEMA_CUSTOM, .required = true, .offset = OFF(nsub),
	  .parse = parse_submodules, .sub = submodule_schema,
	  .help = "the encoders, a list of at least 2 mappings" },
	{ .key = "contrastive", .type = SCHEMA_MAP, .required = true, .offset = OFF(embedding),
	  .sub = contrastive_schema, .help = "the contrastive head joining the submodules' embeddings" },
	{ 0 },
};

static const struct schema_profile multimodal_profile = {
	multimodal_schema, sizeof(struct multimodal), NULL, NULL,
};

bool
multimodal_profile_is(const char *path)
{
	struct plan_error err;
	struct ytree t;
	yaml_node_t *kind;
	bool is;

	plan_error_clear(&err);
	if (!ytree_load_file(&t, path, &err))
		return false;
	kind = ytree_root(&t)->type == YAML_MAPPING_NODE ? ytree_find(&t, ytree_root(&t), "kind") : NULL;
	is = kind && ytree_scalar(kind) && strcmp(ytree_scalar(kind), "multimodal") == 0;
	ytree_release(&t);
	return is;
}

bool
multimodal_load_file(struct multimodal *mm, const char *path, struct plan_error *err)
{
	return schema_load(&multimodal_profile, path, NULL, mm, err);
}

bool
multimodal_load_string(struct multimodal *mm, const char *name, const char *text, struct plan_error *err)
{
	return schema_load(&multimodal_profile, name, text, mm, err);
}
