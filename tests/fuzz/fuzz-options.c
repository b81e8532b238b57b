/*
 * The option parser on any command line: the input split at NUL bytes is
 * argv. argv[0] names the command (predict, optimize, sweep, ...); another
 * word picks one by its first byte. Usage errors and --help print (run
 * with -close_fd_mask=3 to silence them).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "fuzz.h"

#define FUZZ_MAX_ARGS 128

/*
 * The commands whose options are rows. main.c's table of commands lists
 * them for plan-cli, but its main() cannot link here (libFuzzer has its
 * own): a command added there is added here.
 */
static const struct cli_command_options *const commands[] = {
	&cli_predict_options, &cli_optimize_options, &cli_sweep_options, &cli_validate_options,
	&cli_calibrate_options, &cli_fit_logs_options, &cli_profiles_options, &cli_import_options, NULL,
};

/* Static: a sweep request holds a whole study (a quarter of a megabyte). */
static union {
	struct predict_request predict;
	struct optimize_request optimize;
	struct sweep_request sweep;
	struct validate_request validate;
	struct calibrate_request calibrate;
	struct fit_logs_request fit_logs;
} req;

void
fuzz_target_init(void)
{
}

/* The command named @name, else the one its first byte picks. */
static const struct cli_command_options *
pick_command(const char *name)
{
	int n = 0;

	for (; commands[n]; n++)
		if (strcmp(commands[n]->command, name) == 0)
			return commands[n];
	return commands[(unsigned char)name[0] % n];
}

/* The request @cmd fills, with the defaults its command starts from. */
static void
init_request(const struct cli_command_options *cmd)
{
	memset(&req, 0, sizeof(req));
	if (cmd == &cli_predict_options)
		cli_predict_request_init(&req.predict);
	else if (cmd == &cli_optimize_options)
		cli_optimize_request_init(&req.optimize);
	else if (cmd == &cli_sweep_options)
		study_init(&req.sweep.study);
	else
		req.validate = (struct validate_request){ 0, -1.0, -1.0 };
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char *argv[FUZZ_MAX_ARGS + 1];
	size_t rest;
	int argc = fuzz_split(text, size, argv, FUZZ_MAX_ARGS, &rest);
	const struct cli_command_options *cmd = pick_command(argv[0]);

	argv[argc] = NULL;
	init_request(cmd);
	/* The plan predict read is written back as optimize writes it. */
	if (cli_options_parse(cmd, argc, argv, &req) < 0 && cmd == &cli_predict_options)
		json_decref(cli_predict_args(&req.predict));
	if (cmd == &cli_sweep_options)
		study_release(&req.sweep.study);
	free(text);
	return 0;
}
