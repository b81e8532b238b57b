/*
 * --framework-set KEY=VALUE: keys set over every framework profile a
 * command loads (its --framework, a sweep's framework list, a runs CSV's
 * framework column), in the order given. Each pair is checked when the
 * option is read, against the framework schema (io/framework_load.c),
 * and written back into predict_args so that a plan reads back the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "io/profile_load.h"

/* The pairs given, as typed; far more than any recipe sets. */
#define FWSET_MAX 256

static const char *fwset_pairs[FWSET_MAX];
static int fwset_count;

/* "--framework-set 'PAIR'" into @buf: what every error names. */
static const char *
fwset_where(const char *pair, char *buf, size_t size)
{
	/* A long pair (a 4 KiB string) is cut, so that the message still shows. */
	if (strlen(pair) > 120)
		snprintf(buf, size, "--framework-set '%.120s...'", pair);
	else
		snprintf(buf, size, "--framework-set '%s'", pair);
	return buf;
}

/* Split @pair at its first '=' into @key; returns VALUE (may be ""). */
static const char *
fwset_split(const char *pair, char *key, size_t size)
{
	const char *eq = strchr(pair, '=');
	size_t len = (size_t)(eq - pair);

	if (len >= size)
		len = size - 1;
	memcpy(key, pair, len);
	key[len] = '\0';
	return eq + 1;
}

/* Set @pair (checked) on @fw; false with @err set. */
static bool
fwset_apply_one(const char *pair, struct framework *fw, struct plan_error *err)
{
	char where[PLAN_ERROR_FILE_LEN], key[128];
	const char *value = fwset_split(pair, key, sizeof(key));

	return framework_set(fw, fwset_where(pair, where, sizeof(where)), key, value, err);
}

/* A pair's form: KEY=VALUE with a KEY; false after printing why. */
static bool
fwset_check_form(const char *pair)
{
	const char *eq = strchr(pair, '=');

	if (!eq) {
		cli_error("--framework-set '%.120s': expected KEY=VALUE (no '=')", pair);
		return false;
	}
	if (eq == pair) {
		cli_error("--framework-set '%.120s': expected KEY=VALUE (no key before '=')", pair);
		return false;
	}
	if (fwset_count >= FWSET_MAX) {
		cli_error("--framework-set '%.120s': more than %d pairs", pair, FWSET_MAX);
		return false;
	}
	return true;
}

bool
cli_parse_framework_set(const struct cli_option *o, const char *arg, void *req)
{
	struct framework scratch;
	struct plan_error err;
	char buf[PLAN_ERROR_TEXT_LEN];

	(void)o;
	(void)req;
	if (!fwset_check_form(arg))
		return false;
	memset(&scratch, 0, sizeof(scratch));
	plan_error_clear(&err);
	if (!fwset_apply_one(arg, &scratch, &err)) {
		plan_error_format(&err, buf, sizeof(buf));
		cli_error("%s", buf);
		return false;
	}
	fwset_pairs[fwset_count++] = arg;
	return true;
}

void
cli_write_framework_set(const struct cli_option *o, const void *req, struct cli_words *out)
{
	(void)req;
	for (int i = 0; i < fwset_count; i++)
		cli_words_add(o, fwset_pairs[i], out);
}

int
cli_framework_set_apply(struct framework *fw)
{
	struct plan_error err;

	plan_error_clear(&err);
	for (int i = 0; i < fwset_count; i++)
		if (!fwset_apply_one(fwset_pairs[i], fw, &err))
			return cli_report(&err);
	/* The profile's cross-key checks over the pairs and the profile. */
	if (fwset_count > 0 && !framework_check(fw, "--framework-set", &err))
		return cli_report(&err);
	return CLI_EXIT_OK;
}

int
cli_framework_set_count(void)
{
	return fwset_count;
}
