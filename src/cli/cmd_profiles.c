#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/hf_config.h"
#include "io/profile_load.h"
#include "plan/cluster.h"
#include "plan/compressor.h"
#include "plan/model.h"
#include "io/profile_path.h"

static void
show(const char *name, const char *path, void *data)
{
	fprintf(stdout, "  %-20s %s\n", name, path);
	(void)data;
}

/* Print the model profile of the Hugging Face config.json at @path, to save and edit. */
static int
from_hf(const char *path)
{
	struct plan_error err;
	struct model m;
	char *yaml;

	plan_error_clear(&err);
	/* Loading it first checks what the text alone cannot (layers >= 1, heads divide hidden). */
	if (!hf_config_load(&m, path, &err) || !hf_config_to_yaml(path, m.name, &yaml, &err))
		return cli_report(&err);
	fputs(yaml, stdout);
	free(yaml);
	return cli_finish(CLI_EXIT_OK);
}

int
cmd_profiles(int argc, char **argv)
{
	static const enum profile_kind kinds[] = { PROFILE_MODEL, PROFILE_CLUSTER, PROFILE_GPU, PROFILE_FRAMEWORK, PROFILE_COMPRESSOR };

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs("usage: plan-cli profiles [--schema model|cluster|gpu|framework|compressor | --from-hf PATH]\n\n"
		      "List the bundled profiles and where they were found, print a profile schema,\n"
		      "or print the model profile of a Hugging Face config.json (--model also takes one).\n"
		      "Search path: each folder of $PLAN_CLI_PATH, the folder above the executable\n"
		      "(the source tree when run from build/), the executable's folder, ../share/plan-cli\n"
		      "beside it, " PLAN_DATADIR ", and the source tree " PLAN_SOURCE_DIR "\n",
		      stdout);
		return cli_finish(CLI_EXIT_OK);
	}
	if (argc >= 2 && strcmp(argv[1], "--schema") == 0) {
		static const char *const kinds[] = { "model", "cluster", "gpu", "framework", "compressor", NULL };
		const struct schema_key *const tables[] = { model_schema, cluster_schema, gpu_schema, framework_schema, compressor_schema };
		int k;

		if (argc != 3 || !cli_choice("--schema", argv[2], kinds, &k)) {
			if (argc != 3)
				cli_error("--schema takes model, cluster, gpu, framework or compressor");
			return CLI_EXIT_USAGE;
		}
		schema_print(tables[k], stdout, 0);
		return cli_finish(CLI_EXIT_OK);
	}
	if (argc >= 2 && strcmp(argv[1], "--from-hf") == 0) {
		if (argc != 3) {
			cli_error("--from-hf takes the path of a Hugging Face config.json");
			return CLI_EXIT_USAGE;
		}
		return from_hf(argv[2]);
	}
	if (argc > 1) {
		cli_error("unexpected argument '%s' for profiles", argv[1]);
		return CLI_EXIT_USAGE;
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
