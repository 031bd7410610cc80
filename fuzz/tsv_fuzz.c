/*
 * tsv_fuzz.c: splitting and decoding TSV lines.
 *
 * Properties: the fields tile the line exactly (each starts one byte after
 * the tab ending the one before), decoding never makes a field longer,
 * and a column lookup by the first field's text stays within the fields.
 */
#include "config.h"

#include <string.h>

#include "tsv.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nsd_tsv_fields	 fs;
	static struct nsd_buf		 out;
	const char			*line = (const char *)data;
	char				*name;
	size_t				 i, at = 0;
	long				 col;

	nsd_tsv_split(line, size, &fs);
	FUZZ_CHECK(fs.n >= 1);
	for (i = 0; i < fs.n; i++) {
		FUZZ_CHECK(fs.f[i].start == at);
		FUZZ_CHECK(fs.f[i].len <= size - at);
		FUZZ_CHECK(memchr(line + at, '\t', fs.f[i].len) == NULL);
		at += fs.f[i].len;
		if (i + 1 < fs.n) {
			FUZZ_CHECK(at < size && line[at] == '\t');
			at++;
		}
		out.len = 0;
		nsd_tsv_decode(line + fs.f[i].start, fs.f[i].len, &out);
		FUZZ_CHECK(out.len <= fs.f[i].len);
	}
	FUZZ_CHECK(at == size);

	/* The first field as a column name, or number, in the line itself. */
	name = xstrndup(line, fs.f[0].len);
	col = nsd_tsv_column(name, line, &fs);
	FUZZ_CHECK(col >= -1 && col < (long)fs.n);
	col = nsd_tsv_column(name, NULL, &fs);
	FUZZ_CHECK(col >= -1 && col < (long)fs.n);
	free(name);
	return (0);
}
