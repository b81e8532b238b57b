#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/infile.h"
#include "io/profile_path.h"
#include "io/schema.h"

#define MAX_ROOTS 16
#define MAX_NAMES 256

#define ROOT_MAX 1024

static char roots[MAX_ROOTS][ROOT_MAX];
static int nroots;

const char *
profile_kind_dir(enum profile_kind kind)
{
	switch (kind) {
	case PROFILE_MODEL: return "models";
	case PROFILE_CLUSTER: return "clusters";
	case PROFILE_COMPRESSOR: return "compressors";
	case PROFILE_GPU: return "gpus";
	case PROFILE_FRAMEWORK: return "frameworks";
	}
	return "?";
}

static void
add_root(const char *dir)
{
	struct stat st;
	char real[PATH_MAX];
	size_t len;

	if (nroots >= MAX_ROOTS || !dir || !dir[0])
		return;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return;
	/* One spelling per folder: build/.. is the source tree. */
	if (realpath(dir, real))
		dir = real;
	for (int i = 0; i < nroots; i++)
		if (strcmp(roots[i], dir) == 0)
			return;
	len = strlen(dir);
	if (len >= ROOT_MAX)
		return;
	memcpy(roots[nroots++], dir, len + 1);
}

void
profile_path_init(const char *argv0)
{
	const char *env = getenv("PLAN_CLI_PATH");
	char exe[PATH_MAX];
	ssize_t n;

	nroots = 0;
	if (env) {
		char buf[4096];
		char *save = NULL;

		snprintf(buf, sizeof(buf), "%s", env);
		for (char *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
			add_root(tok);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 && argv0 && strchr(argv0, '/') && realpath(argv0, exe))
		n = (ssize_t)strlen(exe);
	if (n > 0) {
		char parent[PATH_MAX + 32];
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if (snprintf(parent, sizeof(parent), "%s/..", exe) < (int)sizeof(parent))
				add_root(parent);
			add_root(exe);
			/* A relocated or DESTDIR-staged install: PREFIX/bin/plan-cli
			 * beside PREFIX/share/plan-cli. */
			if (snprintf(parent, sizeof(parent), "%s/../share/plan-cli", exe) < (int)sizeof(parent))
				add_root(parent);
		}
	}
	add_root(PLAN_DATADIR);
	/* Last, for a build outside the source tree that is not installed:
	 * the tree it was configured from, if it is still there. */
	add_root(PLAN_SOURCE_DIR);
}

int
profile_path_count(void)
{
	return nroots;
}

const char *
profile_path_root(int i)
{
	return i >= 0 && i < nroots ? roots[i] : NULL;
}

struct name_list {
	char names[MAX_NAMES][64];
	char paths[MAX_NAMES][ROOT_MAX + 320];
	int n;
};

static int
cmp_names(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static void
collect(enum profile_kind kind, struct name_list *list)
{
	list->n = 0;
	for (int r = 0; r < nroots; r++) {
		char dir[ROOT_MAX + 32], path[ROOT_MAX + 320];
		struct dirent *e;
		DIR *d;

		if (snprintf(dir, sizeof(dir), "%s/%s", roots[r], profile_kind_dir(kind)) >= (int)sizeof(dir))
			continue;
		d = opendir(dir);
		if (!d)
			continue;
		while ((e = readdir(d)) != NULL && list->n < MAX_NAMES) {
			size_t len = strlen(e->d_name);
			bool dup = false;

			if (len <= 5 || len - 5 >= 64 || strcmp(e->d_name + len - 5, ".yaml") != 0)
				continue;
			/* A FIFO or a folder named like a profile is not one. */
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (!infile_check(path, NULL))
				continue;
			for (int i = 0; i < list->n; i++)
				if (strncmp(list->names[i], e->d_name, len - 5) == 0 &&
				    list->names[i][len - 5] == '\0')
					dup = true;
			if (dup)
				continue;
			memcpy(list->names[list->n], e->d_name, len - 5);
			list->names[list->n][len - 5] = '\0';
			snprintf(list->paths[list->n], sizeof(list->paths[0]), "%s", path);
			list->n++;
		}
		closedir(d);
	}
	/* Sort names and paths together: sort an index. */
	for (int i = 1; i < list->n; i++) {
		for (int j = i; j > 0 && cmp_names(list->names[j - 1], list->names[j]) > 0; j--) {
			char tn[64], tp[sizeof(list->paths[0])];

			memcpy(tn, list->names[j], 64);
			memcpy(list->names[j], list->names[j - 1], 64);
			memcpy(list->names[j - 1], tn, 64);
			memcpy(tp, list->paths[j], sizeof(tp));
			memcpy(list->paths[j], list->paths[j - 1], sizeof(tp));
			memcpy(list->paths[j - 1], tp, sizeof(tp));
		}
	}
}

int
profile_list(enum profile_kind kind,
	     void (*fn)(const char *name, const char *path, void *data), void *data)
{
	static struct name_list list;

	collect(kind, &list);
	for (int i = 0; i < list.n; i++)
		fn(list.names[i], list.paths[i], data);
	return list.n;
}

bool
profile_resolve(enum profile_kind kind, const char *arg, char *out,
		size_t size, struct plan_error *err)
{
	static struct name_list list;
	size_t len = strlen(arg);
	char names[1024] = "";
	const char *best = NULL;
	int best_d = 4;

	if (len == 0)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      "empty %s name", profile_kind_dir(kind));
	if (strchr(arg, '/') || (len > 5 && strcmp(arg + len - 5, ".yaml") == 0)) {
		if (!infile_check(arg, err))
			return false;
		snprintf(out, size, "%s", arg);
		return true;
	}
	collect(kind, &list);
	for (int i = 0; i < list.n; i++) {
		int d = schema_edit_distance(arg, list.names[i]);

		if (strcmp(list.names[i], arg) == 0) {
			snprintf(out, size, "%s", list.paths[i]);
			return true;
		}
		if (d < best_d) {
			best_d = d;
			best = list.names[i];
		}
		if (strlen(names) + strlen(list.names[i]) + 3 < sizeof(names)) {
			if (names[0])
				strcat(names, ", ");
			strcat(names, list.names[i]);
		}
	}
	if (best)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      "unknown %.*s '%s'; did you mean '%s'?",
				      (int)strlen(profile_kind_dir(kind)) - 1,
				      profile_kind_dir(kind), arg, best);
	return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
			      "unknown %.*s '%s' (bundled: %s)",
			      (int)strlen(profile_kind_dir(kind)) - 1,
			      profile_kind_dir(kind), arg, names[0] ? names : "none found");
}
