/* The set-up and the input helpers of every fuzz target (fuzz.h). */
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "io/profile_path.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* As main() and the tests: a GSL error is a return value, not an abort. */
	gsl_set_error_handler_off();
	/* The targets sit in BUILD/tests/fuzz/, where the folder-above rule of
	 * profile_path_init does not reach the source tree: name it, unless
	 * the caller chose other roots. */
	setenv("PLAN_CLI_PATH", PLAN_SOURCE_DIR, 0);
	profile_path_init(NULL);
	fuzz_target_init();
	return 0;
}

char *
fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		abort();
	if (size)
		memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

int
fuzz_split(char *text, size_t size, char **parts, int max, size_t *rest_size)
{
	size_t start = 0;
	int n = 0;

	while (n < max - 1) {
		char *nul = memchr(text + start, '\0', size - start);

		if (!nul)
			break;
		parts[n++] = text + start;
		start = (size_t)(nul - text) + 1;
	}
	parts[n++] = text + start;
	*rest_size = size - start;
	return n;
}
