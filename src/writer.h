/*
 * writer.h: where records go. A buffered output and the record writers.
 *
 * struct nsd_output is standard output or a file written through a
 * temporary file in the same directory, renamed over the target only by
 * nsd_output_finish(), so a failed run never leaves a half-written file
 * behind. The temporary file is unnamed while it is written where the file
 * system allows (O_TMPFILE), and otherwise named after the process, so
 * that opening an output removes the ones of dead runs. Every write is
 * checked: a full disk or a closed pipe is an error (NSD_EXIT_OUTPUT),
 * never a silent loss.
 *
 * The record writers splice the annotation into a record's own bytes: for
 * JSON a member after the last one (or the value of an existing member
 * replaced in place), for TSV an extra column. Nothing is re-serialized.
 *
 * Memory: the output owns its buffer and paths. Errors: -1 with err set.
 */
#ifndef NSD_WRITER_H
#define NSD_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct nsd_output;

/* Open path for writing (NULL: standard output). */
int	 nsd_output_open(struct nsd_output **, const char *,
	    struct nsd_error *);
int	 nsd_output_write(struct nsd_output *, const void *, size_t,
	    struct nsd_error *);
/* Write out what is buffered. */
int	 nsd_output_flush(struct nsd_output *, struct nsd_error *);
/* Flush, sync and (for a file) rename into place; frees the output. */
int	 nsd_output_finish(struct nsd_output *, struct nsd_error *);
/*
 * Hold back what is written from now on, in memory, until
 * nsd_output_release(): the output of an input's first records, while it
 * is not known yet whether the run is to fail on them. At most
 * NSD_OUTPUT_HOLD_MAX bytes are held: past them, all is written out and
 * the hold is over. nsd_output_flush() leaves what is held; finishing or
 * discarding the output writes it, as anything written.
 */
#define NSD_OUTPUT_HOLD_MAX	(32 * 1024 * 1024)
int	 nsd_output_hold(struct nsd_output *, struct nsd_error *);
/* End the hold: what it holds is kept as written, or with drop forgotten. */
void	 nsd_output_release(struct nsd_output *, int);
/* Give up: remove the temporary file; standard output still gets what was
 * written before. Frees the output. */
void	 nsd_output_discard(struct nsd_output *);
/*
 * The temporary file's path, or NULL: for a signal handler to unlink. An
 * unnamed file has it only from the end of nsd_output_finish()'s linkat(2)
 * to its rename(2); the path stays at the same address until the output is
 * freed.
 */
const char *nsd_output_temp_path(const struct nsd_output *);

/* What a record is annotated with. */
struct nsd_annotation {
	const char	*id;		/* the group's id as a JSON token, or
					   NULL */
	size_t		 id_len;
	uint64_t	 group;		/* used when there is no id */
	int		 dup;
	const char	*explain;	/* --explain: the evidence, a JSON
					   object, or NULL */
};

/* The member or column --explain writes. */
#define NSD_EXPLAIN_NAME	"explain"

/* Which annotation member a span of an existing member's value belongs to. */
enum nsd_member {
	NSD_MEMBER_ID,		/* --field-name */
	NSD_MEMBER_DUP,		/* --dup-field */
	NSD_MEMBER_EXPLAIN	/* --explain */
};

struct nsd_splice_span {
	size_t		 start;
	size_t		 len;
	enum nsd_member	 member;
};

/* Where an annotation goes in a JSON record. */
struct nsd_splice {
	size_t			 insert_at;	/* after the last member, or
						   after '{' */
	int			 has_members;
	const struct nsd_splice_span *replace;	/* sorted by start */
	size_t			 nreplace;
};

struct nsd_writer {
	struct nsd_output	*out;
	char			*id_member;	/* "\"similar_id\":",
						   JSON-escaped */
	char			*dup_member;	/* "\"is_dup\":", or NULL when
						   omitted */
	const char		*id_column;	/* TSV header cells */
	const char		*dup_column;
	int			 explain;	/* add the explain member or
						   column */
	struct nsd_buf		 scratch;	/* decoded ids */
};

void	 nsd_writer_init(struct nsd_writer *, struct nsd_output *, const char *,
	    const char *);
void	 nsd_writer_free(struct nsd_writer *);

/* Write a line as it was read; a missing terminator becomes "\n". */
int	 nsd_writer_raw(struct nsd_writer *, const char *, size_t, unsigned,
	    struct nsd_error *);
int	 nsd_writer_json(struct nsd_writer *, const char *, size_t, unsigned,
	    const struct nsd_splice *, const struct nsd_annotation *,
	    struct nsd_error *);
/*
 * Write a TSV row (or, with a NULL annotation, the header) with the
 * annotation columns: replaced in place at id_col/dup_col when those are
 * >= 0, appended otherwise.
 */
int	 nsd_writer_tsv(struct nsd_writer *, const char *, size_t, unsigned,
	    long, long, long, const struct nsd_annotation *,
	    struct nsd_error *);

#endif /* NSD_WRITER_H */
