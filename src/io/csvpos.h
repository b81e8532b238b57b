/*
 * Where libcsv is in its input. Its callbacks are handed a field's text
 * and a record's end, never where in the file they were: this feeds it a
 * byte at a time and keeps the line and byte column of each field's
 * start, so that an error names FILE:LINE:COLUMN as a YAML one does.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <csv.h>

/** A place in the input: 1-based line and byte column. */
struct csvpos_at {
	int line;
	int column;
};

/**
 * The parse's position. Inside the field callback, @field is where the
 * field handed over starts; inside the record callback, @record is where
 * the record starts. A field starts at its first byte as libcsv tokenises
 * it: its opening quote, or the first byte that is not a space or a tab
 * (libcsv drops those before an unquoted field); an empty field at the
 * byte that ends it. A record starts at its first field; blank lines,
 * which libcsv skips, start none.
 */
struct csvpos {
	struct csvpos_at next;   /**< the byte to be fed next */
	struct csvpos_at field;  /**< the start of the field being read */
	struct csvpos_at record; /**< the start of the record being read */
	bool in_field, in_record, after_cr;
	void (*on_field)(void *s, size_t len, void *data);
	void (*on_record)(int c, void *data);
	void *data;
};

/** Start at line 1, column 1; the callbacks and @data are csv_parse()'s. */
void csvpos_init(struct csvpos *pos, void (*on_field)(void *, size_t, void *), void (*on_record)(int, void *),
		 void *data);

/**
 * csv_parse() of @buf (@len bytes), continuing where the last call left
 * off. Returns the bytes parsed, as csv_parse() does: fewer than @len on
 * a parse error, and then @pos->next is the byte libcsv refused.
 */
size_t csvpos_parse(struct csv_parser *p, struct csvpos *pos, const void *buf, size_t len);

/** csv_fini() with the same callbacks: an unterminated quote is at @pos->field. */
int csvpos_fini(struct csv_parser *p, struct csvpos *pos);
