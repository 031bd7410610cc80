/*
 * tsv.c: splitting TSV lines and decoding their escapes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tsv.h"

void
nsd_tsv_split(const char *line, size_t len, struct nsd_tsv_fields *fs)
{
	const char	*p = line, *end = line + len, *tab;

	fs->n = 0;
	for (;;) {
		if (fs->n == fs->cap) {
			fs->cap = fs->cap ? fs->cap * 2 : 16;
			fs->f = xreallocarray(fs->f, fs->cap, sizeof *fs->f);
		}
		tab = memchr(p, '\t', end - p);
		fs->f[fs->n].start = p - line;
		fs->f[fs->n].len = (tab ? tab : end) - p;
		fs->n++;
		if (tab == NULL)
			return;
		p = tab + 1;
	}
}

void
nsd_tsv_fields_free(struct nsd_tsv_fields *fs)
{
	free(fs->f);
	memset(fs, 0, sizeof *fs);
}

long
nsd_tsv_column(const char *field, const char *header,
    const struct nsd_tsv_fields *hf)
{
	const char	*p;
	size_t		 col = 0;

	for (p = field; *p >= '0' && *p <= '9'; p++)
		if ((col = col * 10 + (*p - '0')) > hf->n)
			return (-1);
	if (p != field && *p == '\0')
		return (col >= 1 ? (long)col - 1 : -1);
	if (header == NULL)
		return (-1);
	return (nsd_tsv_header_index(field, header, hf));
}

long
nsd_tsv_header_index(const char *name, const char *header,
    const struct nsd_tsv_fields *hf)
{
	size_t	 i, len = strlen(name);

	for (i = 0; i < hf->n; i++)
		if (hf->f[i].len == len &&
		    memcmp(header + hf->f[i].start, name, len) == 0)
			return ((long)i);
	return (-1);
}

void
nsd_tsv_decode(const char *s, size_t len, struct nsd_buf *out)
{
	const char	*p = s, *end = s + len, *bs;

	while (p < end) {
		if ((bs = memchr(p, '\\', end - p)) == NULL || bs + 1 == end) {
			nsd_buf_append(out, p, end - p);
			return;
		}
		nsd_buf_append(out, p, bs - p);
		switch (bs[1]) {
		case 't': nsd_buf_putc(out, '\t'); break;
		case 'n': nsd_buf_putc(out, '\n'); break;
		case 'r': nsd_buf_putc(out, '\r'); break;
		case '\\': nsd_buf_putc(out, '\\'); break;
		default:
			nsd_buf_append(out, bs, 2);
			break;
		}
		p = bs + 2;
	}
}
