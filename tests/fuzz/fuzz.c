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

/* Each call's own path: one static buffer made the two files of
 * fuzz-fit-logs one (its unlink of the output removed the input). */
#define MAX_TEMP 8
static char temp_path[MAX_TEMP][4096];
static int ntemp;

static void
remove_temp(void)
{
	for (int i = 0; i < ntemp; i++)
		unlink(temp_path[i]);
}

const char *
fuzz_temp_file(const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	char *path;
	int fd;

	if (ntemp == MAX_TEMP) {
		fprintf(stderr, "fuzz_temp_file: more than %d files\n", MAX_TEMP);
		abort();
	}
	path = temp_path[ntemp];
	snprintf(path, sizeof(temp_path[0]), "%s/plan-fuzz-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
	if ((fd = mkstemp(path)) < 0) {
		perror(path);
		abort();
	}
	close(fd);
	if (ntemp++ == 0)
		atexit(remove_temp);
	return path;
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

/* The descriptor stdout had before fuzz_stdout_to, -1 when not redirected. */
static int saved_stdout = -1;

void
fuzz_stdout_to(const char *path)
{
	FILE *f;

	fflush(stdout);
	if (saved_stdout < 0 && (saved_stdout = dup(1)) < 0)
		abort();
	if (!(f = fopen(path, "wb")) || dup2(fileno(f), 1) < 0)
		abort();
	fclose(f);
}

void
fuzz_stdout_restore(void)
{
	fflush(stdout);
	if (saved_stdout >= 0 && dup2(saved_stdout, 1) < 0)
		abort();
}

char *
fuzz_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (text = malloc((size_t)len + 1))) {
		if (fread(text, 1, (size_t)len, f) != (size_t)len) {
			free(text);
			text = NULL;
		} else {
			text[len] = '\0';
		}
	}
	fclose(f);
	return text;
}

void
fuzz_check_json_finite(const char *target, const json_t *v)
{
	const char *key;
	const json_t *x;
	size_t i;

	if (json_is_real(v) && !isfinite(json_real_value(v))) {
		fprintf(stderr, "%s: a number in the JSON is not finite\n", target);
		abort();
	}
	if (json_is_object(v))
		json_object_foreach((json_t *)v, key, x)
			fuzz_check_json_finite(target, x);
	if (json_is_array(v))
		json_array_foreach(v, i, x)
			fuzz_check_json_finite(target, x);
}
