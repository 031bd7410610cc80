/*
 * tsv.h: tab-separated records.
 *
 * A TSV line is split into fields at every tab; there is no quoting. The
 * text field may carry the backslash escapes that jq's @tsv and most TSV
 * writers use (\t \n \r \\), which nsd_tsv_decode() turns back into the
 * characters; every other byte is taken as it is. Columns are named by a
 * header line or numbered from 1.
 *
 * Memory: a struct nsd_tsv_fields owns its offset array and is reused.
 * Nothing here fails except by running out of memory.
 */
#ifndef NSD_TSV_H
#define NSD_TSV_H

#include <stddef.h>

#include "util.h"

struct nsd_tsv_field {
	size_t	 start;
	size_t	 len;
};

struct nsd_tsv_fields {
	struct nsd_tsv_field	*f;
	size_t			 n;
	size_t			 cap;
};

/* Split line[0..len) at tabs into fields. */
void	 nsd_tsv_split(const char *, size_t, struct nsd_tsv_fields *);
void	 nsd_tsv_fields_free(struct nsd_tsv_fields *);

/*
 * The 0-based column that FIELD names among the fields of the header (or,
 * without a header, of the first row): a 1-based number up to their count,
 * or else, when the header line is given, a name in it; -1 when there is no
 * such column. A FIELD of digits is always a number.
 */
long	 nsd_tsv_column(const char *, const char *,
	    const struct nsd_tsv_fields *);

/* The 0-based column called name in the header, or -1; numbers are names. */
long	 nsd_tsv_header_index(const char *, const char *,
	    const struct nsd_tsv_fields *);

/* Append the text of a field, with its backslash escapes decoded, to out. */
void	 nsd_tsv_decode(const char *, size_t, struct nsd_buf *);

#endif /* NSD_TSV_H */
