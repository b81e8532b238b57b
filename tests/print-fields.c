/*
 * Prints the output fields for man-fields.sh, which compares them with
 * plan-cli(1): "json KEY" for each JSON key of field_table (in order), then
 * "csv COLUMN" for each column of the CSV header (in order).
 */
#include <stdio.h>
#include <string.h>

#include "io/fields.h"
#include "io/format.h"

int
main(void)
{
	char line[4096], *save = NULL;
	FILE *tmp = tmpfile();

	for (size_t i = 0; i < field_count; i++)
		if (field_table[i].key)
			printf("json %s\n", field_table[i].key);
	if (!tmp || !format_csv_header(tmp) || fseek(tmp, 0, SEEK_SET) != 0 || !fgets(line, sizeof(line), tmp))
		return 1;
	fclose(tmp);
	for (char *col = strtok_r(line, ",\r\n", &save); col; col = strtok_r(NULL, ",\r\n", &save))
		printf("csv %s\n", col);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
