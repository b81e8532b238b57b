/*
 * Walking the option tables of options_table.c: getopt's array, the
 * values into the request, --help, the option list and predict_args.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "plan/plan_attr.h"
#include "io/schema.h"

/* getopt_long returns 256 + the row's index (above every short option). */
#define OPT_BASE 256
#define OPT_MAX 128
/* Commands whose expanded rows are kept (cli_all_options and any other). */
#define MAX_COMMANDS 16

/* --help wraps the sweep's list of axes at this column. */
#define AXES_WIDTH 88

const char *
cli_option_flag(const struct cli_option *o, char *buf, size_t size)
{
	snprintf(buf, size, "--%s", o->name);
	return buf;
}

static int
count(const struct cli_option *t)
{
	int n = 0;

	while (t[n].name)
		n++;
	return n;
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
	int forms = a->type == PLAN_ATTR_BOOL && (a->flags & PLAN_ATTR_GPU_DEFAULT) ? 2 : 1;

	if (a->flags & (unsigned)m->max)
		return true;
	for (int f = 0; f < forms; f++) {
		struct cli_option *o = &x->rows[*n];
		char *name = x->names[*n];

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

/* The option of @t nearest to the unknown @arg ("--modle", "--tp=4"), as
 * profile keys suggest theirs; NULL when none is within two edits. */
static const char *
nearest_option(const struct cli_option *t, const char *arg)
{
	char name[64];

	if (strncmp(arg, "--", 2) != 0)
		return NULL;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
	return schema_nearest(name, t, sizeof(*t), offsetof(struct cli_option, name));
}

int
cli_options_parse(const struct cli_command_options *cmd, int argc, char **argv, void *req)
{
	const struct cli_option *t = cli_options_rows(cmd);
	struct option longopts[OPT_MAX + 1];
	int n = count(t), c;

	if (n > OPT_MAX) {
		cli_error("%s: too many options", cmd->command);
		return CLI_EXIT_FAILURE;
	}
	for (int i = 0; i < n; i++)
		longopts[i] = (struct option){ t[i].name, t[i].metavar ? required_argument : no_argument,
					       NULL, OPT_BASE + i };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h' || (c >= OPT_BASE && t[c - OPT_BASE].kind == CLI_OPT_HELP)) {
			cli_options_usage(cmd, stdout);
			return cli_finish(CLI_EXIT_OK);
		}
		if (c == ':') {
			cli_error("option '%s' needs a value", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
		if (c < OPT_BASE) {
			const char *near = nearest_option(t, argv[optind - 1]);

			if (near)
				cli_error("unknown option '%s' for %s; did you mean '--%s'?", argv[optind - 1],
					  cmd->command, near);
			else if (cmd->hint)
				cli_error("unknown option '%s' for %s (see 'plan-cli %s --help')", argv[optind - 1],
					  cmd->command, cmd->command);
			else
				cli_error("unknown option '%s' for %s", argv[optind - 1], cmd->command);
			return CLI_EXIT_USAGE;
		}
		if (!apply(&t[c - OPT_BASE], optarg, req))
			return CLI_EXIT_USAGE;
	}
	return -1;
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
}

void
cli_options_list(FILE *out)
{
	for (int c = 0; cli_all_options[c]; c++) {
		const struct cli_command_options *cmd = cli_all_options[c];
		const struct cli_option *t = cli_options_rows(cmd);

		for (int i = 0; t[i].name; i++)
			if (t[i].kind != CLI_OPT_HELP)
				fprintf(out, "%s --%s%s%s\n", cmd->command, t[i].name,
					t[i].kind == CLI_OPT_AXIS ? " axis " : "",
					t[i].kind == CLI_OPT_AXIS ? study_axis_names[t[i].axis] : "");
	}
}

void
cli_words_add(const struct cli_option *o, const char *value, struct cli_words *out)
{
	cli_words_flag(o, out);
	if (json_array_append_new(out->args, json_string(value)) != 0)
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
