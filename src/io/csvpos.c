#include "io/csvpos.h"

void
csvpos_init(struct csvpos *pos, void (*on_field)(void *, size_t, void *), void (*on_record)(int, void *),
	    void *data)
{
	*pos = (struct csvpos){ .next = { 1, 1 }, .on_field = on_field, .on_record = on_record, .data = data };
}

/* libcsv calls these while it reads the byte that ends a field or record
 * (a delimiter, CR or LF), or in csv_fini; the next field starts after. */
static void
pos_field(void *s, size_t len, void *data)
{
	struct csvpos *pos = data;

	pos->on_field(s, len, pos->data);
	pos->in_field = false;
}

static void
pos_record(int c, void *data)
{
	struct csvpos *pos = data;

	pos->on_record(c, pos->data);
	pos->in_field = pos->in_record = false;
}

/*
 * Whether @c starts a field or a record. libcsv 3.0.3's csv_parse, in its
 * states ROW_NOT_BEGUN and FIELD_NOT_BEGUN, skips spaces and tabs, and
 * (between records) CR and LF, which make no empty record unless
 * CSV_REPALL_NL; any other byte, a delimiter or a quote included, is the
 * field's first.
 */
static void
pos_mark(struct csvpos *pos, unsigned char c)
{
	bool blank = c == CSV_SPACE || c == CSV_TAB;

	if (!pos->in_record) {
		if (blank || c == CSV_CR || c == CSV_LF)
			return;
		pos->record = pos->next;
		pos->in_record = true;
	}
	if (!pos->in_field && !blank) {
		pos->field = pos->next;
		pos->in_field = true;
	}
}

/* Past @c: a line ends at LF, CR or CRLF (libcsv ends a record at each). */
static void
pos_advance(struct csvpos *pos, unsigned char c)
{
	if (c == CSV_CR || (c == CSV_LF && !pos->after_cr)) {
		pos->next.line++;
		pos->next.column = 1;
	} else if (c != CSV_LF) {
		pos->next.column++;
	}
	pos->after_cr = c == CSV_CR;
}

size_t
csvpos_parse(struct csv_parser *p, struct csvpos *pos, const void *buf, size_t len)
{
	const unsigned char *b = buf;

	/* A byte at a time: the callbacks then know the byte that ended the
	 * field, and an error the byte refused. */
	for (size_t i = 0; i < len; i++) {
		pos_mark(pos, b[i]);
		if (csv_parse(p, b + i, 1, pos_field, pos_record, pos) != 1)
			return i;
		pos_advance(pos, b[i]);
	}
	return len;
}

int
csvpos_fini(struct csv_parser *p, struct csvpos *pos)
{
	return csv_fini(p, pos_field, pos_record, pos);
}
