/*
 * plan-cli import: a Hugging Face config.json as a model profile to save
 * and edit (--model also takes the config.json itself).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/hf_config.h"
#include "io/profile_load.h"

static const char import_usage[] =
	"usage: plan-cli import PATH [--output FILE]\n\n"
	"Write the model profile equivalent to the Hugging Face config.json at PATH\n"
	"(standard output, or FILE, replaced whole); --model also takes the config.json.\n";

int
cmd_import(int argc, char **argv)
{
	const char *path = NULL, *output = NULL;
	struct plan_error err;
	struct model m;
	char *yaml;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(import_usage, stdout);
			return cli_finish(CLI_EXIT_OK);
		} else if (strcmp(argv[i], "--output") == 0 || strcmp(argv[i], "-o") == 0) {
			if (++i == argc) {
				cli_error("option '%s' needs a value", argv[i - 1]);
				return CLI_EXIT_USAGE;
			}
			output = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("unknown option '%s' for import (see 'plan-cli import --help')", argv[i]);
			return CLI_EXIT_USAGE;
		} else if (path) {
			cli_error("unexpected argument '%s' for import (one config.json at a time)", argv[i]);
			return CLI_EXIT_USAGE;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		cli_error("import needs the path of a Hugging Face config.json (see 'plan-cli import --help')");
		return CLI_EXIT_USAGE;
	}
	plan_error_clear(&err);
	/* Loading it first checks what the text alone cannot (layers >= 1, heads divide hidden). */
	if (!hf_config_load(&m, hf_config_path(path), &err) ||
	    !hf_config_to_yaml(hf_config_path(path), m.name, &yaml, &err))
		return cli_report(&err);
	if (output) {
		rc = cli_write_file(output, yaml);
		free(yaml);
		return rc;
	}
	fputs(yaml, stdout);
	free(yaml);
	return cli_finish(CLI_EXIT_OK);
}
