/*
 * A plan written as KEY=VALUE items (cli/plan_spec.h): the parser that
 * --submodule and optimize's --baseline share. Every item is a plan
 * attribute of the one table (plan/plan_attr.h), so a new attribute is an
 * item with no code here.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/plan_spec.h"
#include "io/schema.h"
#include "plan/numparse.h"

/* The keys --submodule took before it took every attribute, kept so that
 * the command lines and predict_args written then still read. */
static const struct spec_alias {
	const char *key;
	enum plan_attr_id id;
	bool negated; /* a switch given by its opposite */
} spec_aliases[] = {
	{ "sp", PLAN_ATTR_SEQUENCE_PARALLEL, false },
	{ "mics", PLAN_ATTR_MICS_GROUP, false },
	{ "mics-flat", PLAN_ATTR_MICS_HIERARCHICAL, true },
};
#define SPEC_NALIASES ((int)(sizeof(spec_aliases) / sizeof(spec_aliases[0])))

const char *
cli_plan_spec_dashed(const char *name, char *buf, size_t size)
{
	size_t i = 0;

	for (; name[i] && i + 1 < size; i++)
		buf[i] = name[i] == '_' ? '-' : name[i];
	buf[i] = '\0';
	return buf;
}

static bool
refused(const struct cli_plan_spec *spec, int id)
{
	return spec->refuses && spec->refuses((enum plan_attr_id)id);
}

/* What item @key names: attribute *@id, or gpus=G (*@id PLAN_ATTR_COUNT);
 * *@negated for a switch given by its opposite (mics-flat). False when
 * it names nothing. */
static bool
spec_key(const struct cli_plan_spec *spec, const char *key, int *id, bool *negated)
{
	const struct plan_attr *a;
	char k[64];

	cli_plan_spec_dashed(key, k, sizeof(k));
	*negated = false;
	if (spec->takes_gpus && strcmp(k, "gpus") == 0) {
		*id = PLAN_ATTR_COUNT;
		return true;
	}
	for (int i = 0; i < SPEC_NALIASES; i++) {
		if (strcmp(k, spec_aliases[i].key) == 0) {
			*id = (int)spec_aliases[i].id;
			*negated = spec_aliases[i].negated;
			return true;
		}
	}
	if (!(a = plan_attr_find(key)))
		return false;
	*id = (int)(a - plan_attrs);
	return true;
}

/* An unknown key: the nearest the spec takes, or all of them. */
static void
spec_unknown_key(const struct cli_plan_spec *spec, const char *key)
{
	char valid[1024] = "", near[64] = "", k[64], cand[64];
	int best = 3; /* within two edits, as schema_nearest */

	cli_plan_spec_dashed(key, k, sizeof(k));
	if (spec->takes_gpus)
		snprintf(valid, sizeof(valid), "gpus");
	for (int id = -1; id < PLAN_ATTR_COUNT + SPEC_NALIASES; id++) {
		int d;

		if ((id < 0 && !spec->takes_gpus) || (id >= 0 && id < PLAN_ATTR_COUNT && refused(spec, id)))
			continue;
		cli_plan_spec_dashed(id < 0 ? "gpus" : id < PLAN_ATTR_COUNT ? plan_attrs[id].name :
				     spec_aliases[id - PLAN_ATTR_COUNT].key, cand, sizeof(cand));
		if ((d = schema_edit_distance(k, cand)) < best) {
			best = d;
			snprintf(near, sizeof(near), "%s", cand);
		}
		if (id >= 0 && id < PLAN_ATTR_COUNT)
			snprintf(valid + strlen(valid), sizeof(valid) - strlen(valid), "%s%s", valid[0] ? ", " : "", cand);
	}
	if (near[0]) {
		cli_error("%s: unknown key '%s'; did you mean '%s'?", spec->label, key, near);
		return;
	}
	snprintf(valid + strlen(valid), sizeof(valid) - strlen(valid), "; also sp, mics, mics-flat");
	cli_error("%s: unknown key '%s' (valid: %s)", spec->label, key, valid);
}

/* A list's value with ',' between its entries, as plan_attr_parse reads
 * it, into @buf; false (said) for an empty entry. */
static bool
spec_list(const char *label, const char *val, char *buf, size_t size)
{
	if (!*val || val[0] == '/' || val[strlen(val) - 1] == '/' || strstr(val, "//")) {
		cli_error("%s expects entries separated by '/', got '%s'", label, val);
		return false;
	}
	snprintf(buf, size, "%s", val);
	for (char *c = buf; *c; c++)
		if (*c == '/')
			*c = ',';
	return true;
}

/* The item's attribute, or gpus=G, given a second time: an error, not the last one winning without a word. */
static bool
spec_twice(const struct cli_plan_spec *spec, int id, const char *key)
{
	const char *before = id == PLAN_ATTR_COUNT ? spec->gpus_key : spec->given[id];

	if (!before)
		return false;
	if (strcmp(before, key) == 0)
		cli_error("%s: '%s' is given twice", spec->label, key);
	else
		cli_error("%s: '%s' is given twice (as '%s' before)", spec->label, key, before);
	return true;
}

/* Apply one KEY=VALUE item of the spec to @p. */
static bool
spec_item(struct cli_plan_spec *spec, const char *key, const char *val, struct plan *p)
{
	struct plan_attr_target t = { p, spec->opt };
	const struct plan_attr *a;
	char label[128], why[512], list[CLI_PLAN_SPEC_MAX];
	bool negated;
	long v;
	int id;

	if (!spec_key(spec, key, &id, &negated)) {
		spec_unknown_key(spec, key);
		return false;
	}
	if (spec_twice(spec, id, key))
		return false;
	snprintf(label, sizeof(label), "%s%c%.48s", spec->label, spec->key_sep, key);
	if (id == PLAN_ATTR_COUNT) {
		if (!num_parse_long(val, 1, CLI_PLAN_SPEC_MAX_GPUS, &v)) {
			cli_error("%s expects a whole number from 1 to %ld, got '%s'", label, CLI_PLAN_SPEC_MAX_GPUS, val);
			return false;
		}
		spec->gpus_key = key;
		spec->gpus = (int)v;
		return true;
	}
	a = &plan_attrs[id];
	if (refused(spec, id)) {
		cli_error("%s: %s is not %s own: %s", spec->label, key, spec->whose, spec->refuses((enum plan_attr_id)id));
		return false;
	}
	spec->given[id] = key;
	if (a->type == PLAN_ATTR_BOOL) {
		if (!plan_attr_parse_value(a, label, val, &v, why, sizeof(why))) {
			cli_error("%s", why);
			return false;
		}
		if (negated)
			v = !v;
		/* Flash attention's default is the GPU's: plan_complete sets it. */
		if (a->flags & PLAN_ATTR_GPU_DEFAULT)
			spec->flash = (int)v;
		else
			plan_attr_set(a, &t, v);
		return true;
	}
	if (a->type == PLAN_ATTR_LIST && !spec_list(label, val, list, sizeof(list)))
		return false;
	if (!plan_attr_parse(a, label, a->type == PLAN_ATTR_LIST ? list : val, &t, why, sizeof(why))) {
		cli_error("%s", why);
		return false;
	}
	return true;
}

bool
cli_plan_spec_parse(struct cli_plan_spec *spec, const char *items, const char *whole, struct plan *p)
{
	char buf[CLI_PLAN_SPEC_MAX];

	if (strlen(items) >= sizeof(buf)) {
		cli_error("%s: longer than %d characters", spec->label, CLI_PLAN_SPEC_MAX - 1);
		return false;
	}
	snprintf(buf, sizeof(buf), "%s", items);
	/* Split by hand, not strtok_r: that skips empty items, and 'tp=1,,dp=8'
	 * is a typo to report. */
	for (char *tok = buf, *next; tok; tok = next) {
		char *eq = strchr(tok, '='), *comma = strchr(tok, ',');

		next = comma ? comma + 1 : NULL;
		if (comma)
			*comma = '\0';
		if (comma && eq > comma)
			eq = NULL;
		if (!*tok) {
			cli_error("%s: an empty item in '%s'", spec->label, whole);
			return false;
		}
		if (!eq) {
			cli_error("%s: expected KEY=VALUE, got '%s'", spec->label, tok);
			return false;
		}
		/* '=1' was "unknown key ''; did you mean 'tp'?" (issue 25,
		 * twenty-third session). */
		if (eq == tok) {
			cli_error("%s: expected KEY=VALUE, got '%s' (no key before '=')", spec->label, tok);
			return false;
		}
		*eq = '\0';
		if (!spec_item(spec, tok, eq + 1, p))
			return false;
	}
	return true;
}

bool
cli_plan_spec_mics(const struct cli_plan_spec *spec, struct plan *p)
{
	const char *flat = spec->given[PLAN_ATTR_MICS_HIERARCHICAL];

	if (flat && p->mics_group == 0) {
		cli_error("%s: %s says how a MiCS group gathers: give mics=G too", spec->label, flat);
		return false;
	}
	/* MiCS is ZeRO-3 inside its groups (as plan_complete says): a zero
	 * the spec gives must be 3, the command line's yields. */
	if (p->mics_group > 0 && p->zero != 3) {
		if (spec->given[PLAN_ATTR_ZERO]) {
			const char *mics = spec->given[PLAN_ATTR_MICS_GROUP];

			cli_error("%s: %s=%d is ZeRO-3 in groups; it does not go with %s=%d", spec->label,
				  mics ? mics : "mics-group", p->mics_group, spec->given[PLAN_ATTR_ZERO], p->zero);
			return false;
		}
		p->zero = 3;
	}
	return true;
}

bool
cli_plan_spec_format(const char *prefix, const struct plan *p, const char *(*refuses)(enum plan_attr_id id),
		     char *buf, size_t size)
{
	struct plan_attr_target t = { (struct plan *)p, NULL };
	const char *sep = "";
	size_t n = (size_t)snprintf(buf, size, "%s", prefix);

	for (int id = 0; id < PLAN_ATTR_COUNT && n < size; id++) {
		char val[CLI_PLAN_SPEC_MAX], key[64];

		if ((refuses && refuses((enum plan_attr_id)id)) ||
		    !plan_attr_format(&plan_attrs[id], &t, false, val, sizeof(val)))
			continue;
		for (char *c = val; *c; c++)
			if (*c == ',')
				*c = '/';
		n += (size_t)snprintf(buf + n, size - n, "%s%s=%s", sep,
				      cli_plan_spec_dashed(plan_attrs[id].name, key, sizeof(key)), val);
		sep = ",";
	}
	return n < size;
}
