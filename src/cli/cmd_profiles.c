/*
 * plan-cli profiles: the bundled profiles and the search path, or the
 * schema of a kind of profile.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "io/multimodal_load.h"
#include "io/profile_load.h"
#include "plan/cluster.h"
#include "plan/compressor.h"
#include "plan/model.h"
#include "io/profile_path.h"

/* ------------------------------------------------- profiles options */

/** What profiles' options fill. */
struct profiles_request {
	int schema;   /**< --schema: an index into schema_names; -1: the list */
};

static const char *const schema_names[] = { "model", "cluster", "gpu", "framework", "compressor", NULL };

static const struct cli_option profiles_rows[] = {
	{ .name = "schema", .metavar = "KIND", .kind = CLI_OPT_CHOICE, .choices = schema_names,
	  .offset = offsetof(struct profiles_request, schema),
	  .help = "model|cluster|gpu|framework|compressor: print every key of that\n"
		  "kind of profile (its schema) instead of the list" },
	CLI_HELP_ROW,
	{ .name = NULL },
};

const struct cli_command_options cli_profiles_options = {
	.command = "profiles",
	.synopsis = "usage: plan-cli profiles [--schema model|cluster|gpu|framework|compressor]\n\n"
		    "List the bundled profiles and where they were found, or print a profile schema.\n"
		    "Search path: each folder of $PLAN_CLI_PATH, the folder above the executable\n"
		    "(the source tree when run from build/), the executable's folder, ../share/plan-cli\n"
		    "beside it, " PLAN_DATADIR ", and the source tree " PLAN_SOURCE_DIR "\n\n",
	.options = profiles_rows,
	.width = 13,
	.hint = true,
};

static void
show(const char *name, const char *path, void *data)
{
	fprintf(stdout, "  %-20s %s\n", name, path);
	(void)data;
}

int
cmd_profiles(int argc, char **argv)
{
	static const enum profile_kind kinds[] = { PROFILE_MODEL, PROFILE_CLUSTER, PROFILE_GPU, PROFILE_FRAMEWORK,
						   PROFILE_COMPRESSOR };
	static const struct schema_key *const tables[] = { model_schema, cluster_schema, gpu_schema,
							   framework_schema, compressor_schema };
	struct profiles_request r = { -1 };
	int rc;

	if ((rc = cli_options_parse(&cli_profiles_options, argc, argv, &r)) >= 0)
		return rc;
	if (optind < argc) {
		cli_error("unexpected argument '%s' for profiles", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	if (r.schema >= 0) {
		schema_print(tables[r.schema], stdout, 0);
		if (r.schema == 0) {
			/* A multimodal profile (DistMM): its own keys. */
			fputs("\n# kind: multimodal (a model of submodules joined by a contrastive loss)\n", stdout);
			schema_print(multimodal_schema, stdout, 0);
		}
		return cli_finish(CLI_EXIT_OK);
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		fprintf(stdout, "%s:\n", profile_kind_dir(kinds[i]));
		if (profile_list(kinds[i], show, NULL) == 0)
			fputs("  (none)\n", stdout);
	}
	fputs("search path:\n", stdout);
	for (int i = 0; i < profile_path_count(); i++)
		fprintf(stdout, "  %s\n", profile_path_root(i));
	return cli_finish(CLI_EXIT_OK);
}
