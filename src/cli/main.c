#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "io/profile_path.h"

/*
 * A command (tmux's cmd_entry): its function and its options are in its
 * own file (cmd_NAME.c, cli/options.h); this table only lists them.
 * Dispatch, 'plan-cli --help', --list-options and the unknown-command
 * error are made from it.
 */
struct cli_command {
	const char *name;
	int (*function)(int argc, char **argv);
	const struct cli_command_options *options; /**< its rows, beside its code */
	const char *summary;                       /**< the line of 'plan-cli --help' */
};

static const struct cli_command commands[] = {
	{ "predict", cmd_predict, &cli_predict_options,
	  "predict the iteration time, breakdown and memory of one plan" },
	{ "optimize", cmd_optimize, &cli_optimize_options,
	  "find the fastest plan that fits (GLPK mixed-integer programs)" },
	{ "sweep", cmd_sweep, &cli_sweep_options,
	  "predict or optimize a grid of cells: tables (md, csv, latex, json) and plots" },
	{ "validate", cmd_validate, &cli_validate_options, "compare predictions with measured runs from a CSV file" },
	{ "calibrate", cmd_calibrate, &cli_calibrate_options,
	  "fit profile keys to measured runs and write the calibrated profile" },
	{ "profiles", cmd_profiles, &cli_profiles_options, "list the bundled models, clusters and compressors" },
	{ "import", cmd_import, &cli_import_options, "write the model profile of a Hugging Face config.json" },
	{ "fit-logs", cmd_fit_logs, &cli_fit_logs_options,
	  "fit link or GEMM parameters to nccl-tests logs or GEMM timings" },
	{ NULL, NULL, NULL, NULL },
};

static void
usage(FILE *out)
{
	fputs("usage: plan-cli [--version] [--help] <command> [<options>]\n\n"
	      "Predict and plan the parallel training of large models.\n\ncommands:\n", out);
	for (const struct cli_command *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fputs("\nRun 'plan-cli <command> --help' for a command's options; see plan-cli(1).\n", out);
}

/* "predict, optimize, ...": the table's names, for the errors. */
static const char *
command_names(void)
{
	static char names[128];

	if (!names[0])
		for (const struct cli_command *c = commands; c->name; c++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 c == commands ? "" : ", ", c->name);
	return names;
}

int
main(int argc, char **argv)
{
	/* GSL must return errors, never abort the process. */
	gsl_set_error_handler_off();
	profile_path_init(argv[0]);

	if (argc < 2) {
		cli_error("no command given (commands: %s; see 'plan-cli --help')", command_names());
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return cli_finish(CLI_EXIT_OK);
	}
	/* Hidden: every command's options, for the test that compares them with plan-cli(1). */
	if (strcmp(argv[1], "--list-options") == 0) {
		for (const struct cli_command *c = commands; c->name; c++)
			cli_options_list(c->options, stdout);
		return cli_finish(CLI_EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("plan-cli %s\nprofile search path:\n", PLAN_VERSION);
		for (int i = 0; i < profile_path_count(); i++)
			printf("  %s\n", profile_path_root(i));
		return cli_finish(CLI_EXIT_OK);
	}
	for (const struct cli_command *c = commands; c->name; c++)
		if (strcmp(argv[1], c->name) == 0)
			return c->function(argc - 1, argv + 1);
	cli_error("unknown command '%s' (commands: %s)", argv[1], command_names());
	return CLI_EXIT_USAGE;
}
