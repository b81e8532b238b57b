/* The set-up and the input helpers of every fuzz target (fuzz.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "io/profile_load.h"
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

static char temp_path[4096];

static void
remove_temp(void)
{
	unlink(temp_path);
}

const char *
fuzz_temp_file(const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(temp_path, sizeof(temp_path), "%s/plan-fuzz-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
	if ((fd = mkstemp(temp_path)) < 0) {
		perror(temp_path);
		abort();
	}
	close(fd);
	atexit(remove_temp);
	return temp_path;
}

void
fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
		perror(path);
		abort();
	}
}

void
fuzz_load_bundled(struct cluster *c, struct gpu *g)
{
	static const enum profile_kind kinds[2] = { PROFILE_CLUSTER, PROFILE_GPU };
	static const char *const names[2] = { "dgx-h100", "h100-sxm5-80gb" };
	char path[4096];
	struct plan_error err;

	for (int i = 0; i < 2; i++) {
		if (!(i ? (void *)g : (void *)c))
			continue;
		plan_error_clear(&err);
		if (!profile_resolve(kinds[i], names[i], path, sizeof(path), &err) ||
		    !(i ? gpu_load_file(g, path, &err) : cluster_load_file(c, path, &err))) {
			/* A bundled profile that does not load is a broken tree. */
			fprintf(stderr, "fuzz: cannot load %s: %s\n", names[i], err.message);
			abort();
		}
	}
}

void
fuzz_check_finite(const char *target, const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i])) {
			fprintf(stderr, "%s: value %zu = %g is not finite\n", target, i, v[i]);
			abort();
		}
}
