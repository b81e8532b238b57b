/*
 * Walking the commands' option tables (cli/options.h; each command's rows
 * are beside its code): the command line into the request, --help, the
 * option list and predict_args.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/multimodal.h"
#include "cli/options.h"
#include "io/utf8.h"
#include "plan/plan_attr.h"
#include "io/schema.h"

/* Most rows of one command, its plan attributes expanded. */
#define OPT_MAX 128
/* Commands whose expanded rows are kept (main.c's table of commands and any other). */
#define MAX_COMMANDS 16
/* Most names an unknown option's "did you mean" lists. */
#define NEAR_MAX 16

/* --help wraps the sweep's list of axes at this column. */
#define AXES_WIDTH 88

const char *
cli_option_flag(const struct cli_option *o, char *buf, size_t size)
{
	snprintf(buf, size, "--%s", o->name);
	return buf;
}

/* The end of a command's own rows: NULL name and not CLI_OPT_ATTRS. */
static bool
is_end(const struct cli_option *o)
{
	return !o->name && o->kind != CLI_OPT_ATTRS;
}

/* Whether @cmd's own rows name option @name. */
static bool
has_own_row(const struct cli_option *t, const char *name)
{
	for (; !is_end(t); t++)
		if (t->name && strcmp(t->name, name) == 0)
			return true;
	return false;
}

struct expansion {
	const struct cli_command_options *cmd;
	struct cli_option rows[OPT_MAX + 1];
	char names[OPT_MAX][48];
};

/* Append the rows of plan attribute @id as marker @m says; false when full. */
static bool
expand_attr(const struct cli_option *own, const struct cli_option *m, int id, struct expansion *x, int *n)
{
	const struct plan_attr *a = &plan_attrs[id];
	/* A switch on by default is turned off; one whose default the GPU
	 * gives has both. */
	int forms = a->type == PLAN_ATTR_BOOL && (a->flags & (PLAN_ATTR_GPU_DEFAULT | PLAN_ATTR_FW_DEFAULT)) ? 2 : 1;

	if (a->flags & (unsigned)m->max)
		return true;
	for (int f = 0; f < forms; f++) {
		struct cli_option *o = &x->rows[*n];
		char *name = x->names[*n];

		/* A sweep axis: a list of values, named as in study files. */
		if (m->axis) {
			snprintf(name, sizeof(x->names[0]), "%s", a->name);
			for (char *c = name; *c; c++)
				*c = *c == '_' ? '-' : *c;
			if (has_own_row(own, name))
				return true;
			if (*n == OPT_MAX)
				return false;
			*o = (struct cli_option){ .name = name, .metavar = "LIST", .kind = CLI_OPT_AXIS,
						  .parse = m->parse, .axis = AXIS_OF(id), .attr = id + 1 };
			(*n)++;
			return true;
		}
		plan_attr_option(a, name, sizeof(x->names[0]));
		if (f == 1)
			snprintf(name, sizeof(x->names[0]), "no-%s", a->name), plan_attr_option(a, name + 3, 45);
		if (has_own_row(own, name))
			continue;
		if (*n == OPT_MAX)
			return false;
		*o = (struct cli_option){ .name = name, .kind = CLI_OPT_CUSTOM, .parse = m->parse, .write = m->write,
					  .attr = id + 1, .choices = a->choices };
		if (a->type != PLAN_ATTR_BOOL)
			o->metavar = a->metavar;
		/* A switch's row sets the value it names. */
		o->min = a->type == PLAN_ATTR_BOOL ? (forms == 2 ? f == 0 : a->def != 1) : a->min;
		o->max = a->max;
		if (!m->help && f == 0)
			o->help = a->help;
		/* The marker's one line of --help, on its first row. */
		if (m->help && (*n == 0 || x->rows[*n - 1].parse != m->parse || !x->rows[*n - 1].attr))
			o->help = m->help, o->label = m->label;
		(*n)++;
	}
	return true;
}

const struct cli_option *
cli_options_rows(const struct cli_command_options *cmd)
{
	static struct expansion cache[MAX_COMMANDS];
	struct expansion *x = NULL;
	int n = 0;

	for (int i = 0; i < MAX_COMMANDS && !x; i++)
		if (cache[i].cmd == cmd || !cache[i].cmd)
			x = &cache[i];
	if (!x)
		return cmd->options; /* more commands than kept: unexpanded */
	if (x->cmd == cmd)
		return x->rows;
	for (const struct cli_option *o = cmd->options; !is_end(o); o++) {
		if (o->kind == CLI_OPT_ATTRS) {
			for (int id = 0; id < PLAN_ATTR_COUNT; id++)
				if (!expand_attr(cmd->options, o, id, x, &n))
					return cmd->options;
		} else if (n < OPT_MAX) {
			x->rows[n++] = *o;
		}
	}
	x->rows[n] = (struct cli_option){ .name = NULL };
	x->cmd = cmd;
	return x->rows;
}

/* Store @arg as @o says; prints the usage error. */
static bool
apply(const struct cli_option *o, const char *arg, void *req)
{
	char *field = (char *)req + o->offset;
	char flag[64];

	cli_option_flag(o, flag, sizeof(flag));
	switch (o->kind) {
	case CLI_OPT_FLAG:
		*(bool *)field = true;
		return true;
	case CLI_OPT_UNFLAG:
		*(bool *)field = false;
		return true;
	case CLI_OPT_SET:
		*(int *)field = (int)o->min;
		return true;
	case CLI_OPT_INT:
		return cli_int(flag, arg, o->min, o->max, (int *)field);
	case CLI_OPT_CHOICE:
		return cli_choice(flag, arg, o->choices, (int *)field);
	case CLI_OPT_STRING:
		*(const char **)field = arg;
		return true;
	default:
		return o->parse(o, arg, req);
	}
}

/* The row of @t named exactly @name's first @len characters; NULL when none.
 * Only whole names: getopt_long took any unambiguous prefix, so "--glob 8"
 * was --global-batch and a later option could silently change its meaning. */
static const struct cli_option *
find_option(const struct cli_option *t, const char *name, size_t len)
{
	for (int i = 0; t[i].name; i++)
		if (strlen(t[i].name) == len && strncmp(t[i].name, name, len) == 0)
			return &t[i];
	return NULL;
}

/* The row of @t whose one-letter alias is @c; NULL when none. */
static const struct cli_option *
find_short(const struct cli_option *t, char c)
{
	for (int i = 0; t[i].name; i++)
		if (t[i].short_name && t[i].short_name == c)
			return &t[i];
	return NULL;
}

/*
 * The options of @t that the unknown @name may have meant, best first, into
 * @out (at most @max): those it begins (an incomplete name), then those
 * within two edits (fewer edits than @name has letters, or "--xy" would
 * suggest every two-letter option). Returns how many.
 */
static int
near_options(const struct cli_option *t, const char *name, const char **out, int max)
{
	size_t len = strlen(name);
	int rank[NEAR_MAX], n = 0;

	if (max > NEAR_MAX)
		max = NEAR_MAX;
	for (int i = 0; t[i].name; i++) {
		int r = -1, j;

		if (len == 0 || strncmp(t[i].name, name, len) != 0) {
			r = schema_edit_distance(name, t[i].name);
			if (r > 2 || r >= (int)len)
				continue;
		}
		if (n == max && rank[n - 1] <= r)
			continue;
		if (n < max)
			n++;
		/* Insertion by rank, table order among equals; a full list drops its last. */
		for (j = n - 1; j > 0 && rank[j - 1] > r; j--) {
			rank[j] = rank[j - 1];
			out[j] = out[j - 1];
		}
		rank[j] = r;
		out[j] = t[i].name;
	}
	return n;
}

/* The usage error for the unknown option @arg ("--glob", "--tp=4", "-x"):
 * the names it may have meant, else the pointer to --help. */
static int
unknown_option(const struct cli_command_options *cmd, const char *arg)
{
	const char *near[NEAR_MAX];
	char name[64], list[1024] = "";
	const char *p = arg + 1 + (arg[1] == '-');
	int n;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(p, "="), p);
	n = near_options(cli_options_rows(cmd), name, near, NEAR_MAX);
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s'--%s'", i ? ", " : "", near[i]);
	if (n > 0)
		cli_error("unknown option '%s' for %s; did you mean %s%s?", arg, cmd->command,
			  n > 1 ? "one of " : "", list);
	else if (cmd->hint)
		cli_error("unknown option '%s' for %s (see 'plan-cli %s --help')", arg, cmd->command,
			  cmd->command);
	else
		cli_error("unknown option '%s' for %s", arg, cmd->command);
	return CLI_EXIT_USAGE;
}

/* cli_options_parse's walk through argv: option words move to the front, operands wait. */
struct argv_walk {
	int argc;
	char **argv;
	int i;           /* the word being read */
	int front;       /* argv[front] is where the next option word goes: never past argv[i] */
	char **operands; /* the operands met so far, in their order */
	int nops;
};

/*
 * The option word argv[i] (and the next word when it is the option's
 * value) into @req, moved to the front. Returns -1 to go on, else the exit
 * code: --help was shown, or the usage error printed.
 */
static int
take_option(const struct cli_command_options *cmd, const struct cli_option *t, struct argv_walk *w, void *req)
{
	char *arg = w->argv[w->i];
	size_t len = strcspn(arg + 2, "=");
	const struct cli_option *o;
	const char *value = NULL;

	w->argv[w->front++] = arg;
	o = arg[1] == '-' ? find_option(t, arg + 2, len) : !arg[2] ? find_short(t, arg[1]) : NULL;
	if (strcmp(arg, "-h") == 0 || (o && o->kind == CLI_OPT_HELP && !arg[2 + len])) {
		cli_options_usage(cmd, stdout);
		return cli_finish(CLI_EXIT_OK);
	}
	if (!o)
		return unknown_option(cmd, arg);
	if (!o->metavar && arg[2 + len]) {
		cli_error("option '--%s' takes no value", o->name);
		return CLI_EXIT_USAGE;
	}
	if (o->metavar && !arg[2 + len] && (w->i + 1 == w->argc || strncmp(w->argv[w->i + 1], "--", 2) == 0)) {
		if (w->i + 1 == w->argc)
			cli_error("option '%s' needs a value", arg);
		else
			cli_error("option '%s' needs a value, not the option '%s'", arg, w->argv[w->i + 1]);
		return CLI_EXIT_USAGE;
	}
	if (arg[2 + len])
		value = arg + 3 + len;
	else if (o->metavar)
		value = w->argv[w->front++] = w->argv[++w->i];
	return apply(o, value, req) ? -1 : CLI_EXIT_USAGE;
}

/*
 * Options and operands may come in any order and "--" ends the options,
 * as with GNU getopt_long; like it, this moves the operands (in their
 * order) behind the options and sets optind to the first. A value never
 * begins with "--": "--tp --pp 2" is --tp without its value, not --tp
 * '--pp' (such a value can still be written --name=VALUE).
 */
int
cli_options_parse(const struct cli_command_options *cmd, int argc, char **argv, void *req)
{
	const struct cli_option *t = cli_options_rows(cmd);
	struct argv_walk w = { .argc = argc, .argv = argv, .front = 1,
			       .operands = malloc(sizeof(char *) * (size_t)(argc > 0 ? argc : 1)) };
	int rc = -1;

	if (!w.operands) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	for (w.i = 1; w.i < argc && rc < 0; w.i++) {
		char *arg = argv[w.i];

		if (strcmp(arg, "--") == 0) {
			argv[w.front++] = arg;
			while (++w.i < argc)
				w.operands[w.nops++] = argv[w.i];
			break;
		}
		if (arg[0] != '-' || arg[1] == '\0')
			w.operands[w.nops++] = arg;
		else
			rc = take_option(cmd, t, &w, req);
	}
	if (rc < 0) {
		memcpy(argv + w.front, w.operands, sizeof(*w.operands) * (size_t)w.nops);
		optind = w.front;
	}
	free(w.operands);
	return rc;
}

/* The sweep's axis options as a paragraph: "--model, --cluster, ...". */
static void
usage_axes(const struct cli_option *t, FILE *out)
{
	char line[256] = "";
	int last = -1;

	for (int i = 0; t[i].name; i++)
		if (t[i].kind == CLI_OPT_AXIS)
			last = i;
	for (int i = 0; i <= last; i++) {
		char item[128];

		if (t[i].kind != CLI_OPT_AXIS)
			continue;
		snprintf(item, sizeof(item), "--%s%s%s%s%s", t[i].name, t[i].help ? " (" : "",
			 t[i].help ? t[i].help : "", t[i].help ? ")" : "", i < last ? "," : "");
		if (line[0] && strlen(line) + 1 + strlen(item) > AXES_WIDTH) {
			fprintf(out, "%s\n", line);
			line[0] = '\0';
		}
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", line[0] ? " " : "  ", item);
	}
	if (line[0])
		fprintf(out, "%s\n", line);
}

void
cli_options_usage(const struct cli_command_options *cmd, FILE *out)
{
	const struct cli_option *t = cli_options_rows(cmd);
	bool axes = false;

	fputs(cmd->synopsis, out);
	for (int i = 0; t[i].name; i++)
		axes |= t[i].kind == CLI_OPT_AXIS;
	if (axes) {
		usage_axes(t, out);
		fputs("Options:\n", out);
	}
	for (int i = 0; t[i].name; i++) {
		char label[128];

		if (!t[i].help || t[i].kind == CLI_OPT_AXIS)
			continue;
		if (t[i].label)
			snprintf(label, sizeof(label), "%s", t[i].label);
		else
			snprintf(label, sizeof(label), "--%s%s%s", t[i].name, t[i].metavar ? " " : "",
				 t[i].metavar ? t[i].metavar : "");
		fprintf(out, "  %-*s  ", cmd->width, label);
		for (const char *h = t[i].help; *h; h++) {
			fputc(*h, out);
			if (*h == '\n')
				fprintf(out, "%*s", cmd->width + 4, "");
		}
		fputc('\n', out);
	}
	/* Every command has its man page (man/plan-cli-COMMAND.1, git's manner). */
	fprintf(out, "\nSee plan-cli-%s(1): man plan-cli-%s.\n", cmd->command, cmd->command);
}

void
cli_options_list(const struct cli_command_options *cmd, FILE *out)
{
	const struct cli_option *t = cli_options_rows(cmd);

	for (int i = 0; t[i].name; i++)
		if (t[i].kind != CLI_OPT_HELP)
			fprintf(out, "%s --%s%s%s\n", cmd->command, t[i].name, t[i].kind == CLI_OPT_AXIS ? " axis " : "",
				t[i].kind == CLI_OPT_AXIS ? study_axis_name(t[i].axis) : "");
}

void
cli_words_add(const struct cli_option *o, const char *value, struct cli_words *out)
{
	cli_words_flag(o, out);
	if (json_array_append_new(out->args, utf8_json_string(value)) != 0) /* a path: any bytes */
		out->failed = true;
}

void
cli_words_flag(const struct cli_option *o, struct cli_words *out)
{
	char flag[64];

	if (json_array_append_new(out->args, json_string(cli_option_flag(o, flag, sizeof(flag)))) != 0)
		out->failed = true;
}

/* Append what gives @req's value of @o, by its kind. */
static void
write_option(const struct cli_option *o, const void *req, struct cli_words *out)
{
	const char *field = (const char *)req + o->offset;
	char buf[32];
	int v;

	if (o->write) {
		o->write(o, req, out);
		return;
	}
	switch (o->kind) {
	case CLI_OPT_FLAG:
		if (*(const bool *)field)
			cli_words_flag(o, out);
		break;
	case CLI_OPT_SET:
		if (*(const int *)field == o->min)
			cli_words_flag(o, out);
		break;
	case CLI_OPT_UNFLAG:
		if (!*(const bool *)field)
			cli_words_flag(o, out);
		break;
	case CLI_OPT_INT:
	case CLI_OPT_CHOICE:
		v = *(const int *)field;
		if (v <= o->write_above)
			break;
		snprintf(buf, sizeof(buf), "%d", v);
		cli_words_add(o, o->kind == CLI_OPT_INT ? buf : o->choices[v], out);
		break;
	case CLI_OPT_STRING:
		if (*(const char *const *)field)
			cli_words_add(o, *(const char *const *)field, out);
		break;
	default:
		break;
	}
}

/* Append the predict rows (not attributes) written just before attribute @before - 1. */
static void
write_rows_before(const struct cli_option *t, int before, const struct predict_request *req, struct cli_words *w)
{
	for (int i = 0; t[i].name; i++)
		if (!t[i].attr && t[i].arg_before == before)
			write_option(&t[i], req, w);
}

/*
 * The attributes in the table's order, each as its predict row writes it
 * (cli_write_attr), and the profile, compressor, framework, link and
 * checkpoint options at their places among them: every attribute that
 * is not at its default is written, so that the words give the plan back.
 * A multimodal request (--submodule) writes only the attributes that its
 * submodules share (cli_submodule_refuses), then its specs, which carry
 * the rest.
 */
json_t *
cli_predict_args(const struct predict_request *req)
{
	const struct cli_option *t = cli_options_rows(&cli_predict_options);
	struct cli_words w = { json_array(), false };

	if (!w.args)
		return NULL;
	for (int id = 0; id <= PLAN_ATTR_COUNT; id++) {
		write_rows_before(t, id + 1, req, &w);
		/* With --submodule, the specs give the submodules' own attributes. */
		if (id < PLAN_ATTR_COUNT && req->nsubmodule_args > 0 && !cli_submodule_refuses(id))
			continue;
		for (int i = 0; id < PLAN_ATTR_COUNT && t[i].name; i++)
			if (t[i].attr == id + 1) {
				write_option(&t[i], req, &w);
				break; /* a switch's two rows write it once */
			}
	}
	if (w.failed) {
		json_decref(w.args);
		return NULL;
	}
	return w.args;
}
