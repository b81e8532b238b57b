#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "io/multimodal_load.h"
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

int
cmd_profiles(int argc, char **argv)
{
	static const enum profile_kind kinds[] = { PROFILE_MODEL, PROFILE_CLUSTER, PROFILE_GPU, PROFILE_FRAMEWORK, PROFILE_COMPRESSOR };

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs("usage: plan-cli profiles [--schema model|cluster|gpu|framework|compressor]\n\n"
		      "List the bundled profiles and where they were found, or print a profile schema.\n"
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
		if (k == 0) {
			/* A multimodal profile (DistMM): its own keys. */
			fputs("\n# kind: multimodal (a model of submodules joined by a contrastive loss)\n", stdout);
			schema_print(multimodal_schema, stdout, 0);
		}
		return cli_finish(CLI_EXIT_OK);
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
