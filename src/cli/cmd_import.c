/*
 * plan-cli import: a Hugging Face config.json as a model profile to save
 * and edit (--model also takes the config.json itself).
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "io/hf_config.h"
#include "io/profile_load.h"

/* --------------------------------------------------- import options */

/** What import's options fill. */
struct import_request {
	const char *output;   /**< --output FILE; NULL: standard output */
};

static const struct cli_option import_rows[] = {
	{ .name = "output", .short_name = 'o', .metavar = "FILE", .kind = CLI_OPT_STRING,
	  .offset = offsetof(struct import_request, output), .label = "-o, --output FILE",
	  .help = "write it to FILE, replaced whole (default: standard output)" },
	CLI_HELP_ROW,
	{ .name = NULL },
};

const struct cli_command_options cli_import_options = {
	.command = "import",
	.synopsis = "usage: plan-cli import PATH [--output FILE]\n\n"
		    "Write the model profile equivalent to the Hugging Face config.json at PATH (or\n"
		    "hf:PATH) to standard output or FILE; --model also takes the config.json.\n\n",
	.options = import_rows,
	.width = 17,
	.hint = true,
};

int
cmd_import(int argc, char **argv)
{
	struct import_request r = { NULL };
	const char *path;
	struct plan_error err;
	struct model m;
	char *yaml;
	int rc;

	if ((rc = cli_options_parse(&cli_import_options, argc, argv, &r)) >= 0)
		return rc;
	if (optind == argc) {
		cli_error("import needs the path of a Hugging Face config.json (see 'plan-cli import --help')");
		return CLI_EXIT_USAGE;
	}
	if (optind + 1 < argc) {
		cli_error("unexpected argument '%s' for import (one config.json at a time)", argv[optind + 1]);
		return CLI_EXIT_USAGE;
	}
	path = argv[optind];
	plan_error_clear(&err);
	/* Loading it first checks what the text alone cannot (layers >= 1, heads divide hidden). */
	if (!hf_config_load(&m, hf_config_path(path), &err) ||
	    !hf_config_to_yaml(hf_config_path(path), m.name, &yaml, &err))
		return cli_report(&err);
	if (r.output) {
		rc = cli_write_file(r.output, yaml);
		free(yaml);
		return rc;
	}
	fputs(yaml, stdout);
	free(yaml);
	return cli_finish(CLI_EXIT_OK);
}
