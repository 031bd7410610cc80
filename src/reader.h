/*
 * reader.h: record framing. Files in, batches of lines out.
 *
 * A reader reads one input (a file or standard input) with read(2) and
 * cuts it into lines, a batch at a time: a batch holds the bytes of whole
 * lines in its own buffer, so that batches can later be handed to other
 * threads while the reader goes on. Line numbers count every line, blank
 * ones too. A UTF-8 byte order mark at the start of the input is dropped.
 *
 * A line longer than max_line bytes is never held whole: it comes out as
 * a head piece (NSD_LINE_LONG_HEAD) and then further pieces
 * (NSD_LINE_LONG_MORE, ending with one NSD_LINE_LONG_LAST), each in a
 * batch of its own, so that it can be passed through untouched, or
 * dropped, in bounded memory.
 *
 * Memory: the batch owns its buffer and line array; a line's bytes stay
 * valid until the batch is filled again. Errors: open and fill return -1
 * with err set (status NSD_EXIT_INPUT).
 */
#ifndef NSD_READER_H
#define NSD_READER_H

#include <stddef.h>
#include <stdint.h>

#include "decompress.h"
#include "util.h"

enum nsd_line_kind {
	NSD_LINE_WHOLE,		/* a complete line of at most max_line bytes */
	NSD_LINE_TOO_LONG,	/* a complete line, but longer than max_line */
	NSD_LINE_LONG_HEAD,	/* the first bytes of a line longer than
				   max_line */
	NSD_LINE_LONG_MORE,	/* a further piece of it */
	NSD_LINE_LONG_LAST	/* its last piece, with its terminator if any */
};

struct nsd_line {
	size_t			 start;		/* offset in the batch buffer */
	size_t			 len;		/* bytes, without the
						   terminator */
	unsigned		 eol_len;	/* 0 (end of input), 1 ("\n") or
						   2 ("\r\n") */
	enum nsd_line_kind	 kind;
	uint64_t		 lineno;
};

struct nsd_batch {
	struct nsd_buf		 buf;
	struct nsd_line		*lines;
	size_t			 nlines;
	size_t			 lines_cap;
};

struct nsd_reader {
	int			 fd;
	char			*name;		/* for messages */
	size_t			 max_line;
	size_t			 chunk;		/* bytes asked of each
						   read(2) */
	struct nsd_buf		 carry;		/* an unfinished line */
	uint64_t		 lineno;
	uint64_t		 bytes;		/* read so far, BOM included */
	struct nsd_decompressor	*decompressor;	/* or NULL: not compressed,
						   or not known yet */
	enum nsd_compression	 compression;
	int			 eof;
	int			 detected;	/* the first bytes were looked
						   at */
	int			 at_start;	/* a BOM may still come */
	int			 in_long;	/* inside a line longer than
						   max_line */
	int			 regular;	/* a regular file: 1; not: -1;
						   0: not known yet */
};

/* Open path ("-" for standard input) for reading. */
int	 nsd_reader_open(struct nsd_reader *, const char *, size_t,
	    struct nsd_error *);
void	 nsd_reader_close(struct nsd_reader *);

/*
 * Fill b with the next lines: 1 when it holds some, 0 at the end, -1 on
 * error.
 */
int	 nsd_reader_fill(struct nsd_reader *, struct nsd_batch *,
	    struct nsd_error *);

/*
 * Whether the next fill can begin without waiting for input: always for a
 * regular file, and for a pipe, terminal or socket when it has data (or
 * its end) ready, waiting up to ms milliseconds for it.
 */
int	 nsd_reader_ready(struct nsd_reader *, int);

/*
 * How much of the input is read, in the bytes of the file (compressed,
 * when it is), for a progress meter.
 */
uint64_t nsd_reader_position(struct nsd_reader *);

void	 nsd_batch_free(struct nsd_batch *);

static inline const char *
nsd_line_data(const struct nsd_batch *b, const struct nsd_line *l)
{
	return (b->buf.data + l->start);
}

#endif /* NSD_READER_H */
