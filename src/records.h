/*
 * records.h: the records of an input, in JSON lines or TSV: which format
 * the input is, its TSV columns, a record's text (its --key fields, joined),
 * its id and the annotation members it has already, and the record written
 * back with its annotation. Nothing here knows of fingerprints or of the
 * index: the pipeline gives the annotation.
 *
 * Memory: struct nsd_record_input and struct nsd_record_scanner own what
 * they hold until their _free; a record's spans go into the caller's
 * struct nsd_spans, its text into the scanner's buffer (valid until the
 * next scan).
 * Errors: a bad record is -1 with its reason, without file and line, in a
 * buffer of NSD_RECORD_WHY_MAX bytes; a bad TSV header, or one that differs
 * from the first input's, is -1 with err set (NSD_EXIT_INPUT, or
 * NSD_EXIT_USAGE for a column the options cannot name), as is a field that
 * no record of an input has (NSD_EXIT_INPUT, by nsd_record_judge()).
 */
#ifndef NSD_RECORDS_H
#define NSD_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "options.h"
#include "reader.h"
#include "tsv.h"
#include "util.h"
#include "writer.h"

/* The longest reason for a bad record, its NUL included. */
#define NSD_RECORD_WHY_MAX	256

/* The records of an input that judge whether it has the fields asked for. */
#define NSD_RECORD_JUDGED	1000

/* What the in-order stages know of one input. */
struct nsd_record_input {
	char			*name;		/* for messages */
	enum nsd_format		 format;	/* AUTO until the first
						   non-blank line */
	int			 header_seen;
	size_t			 ncols;		/* TSV: columns per row, 0 until
						   known */
	long			 key_cols[NSD_MAX_KEYS];
	long			 id_col;	/* -1: no id column */
	long			 id_out_col;	/* existing annotation columns,
						   or -1 */
	long			 dup_out_col;
	long			 explain_out_col;
	struct nsd_tsv_fields	 header;	/* TSV: the header's fields, in
						   header_line */
	struct nsd_buf		 header_line;	/* TSV: a copy of the header
						   line */
	int			 header_repeated; /* TSV: its header is an
						   earlier input's, written
						   once */
	int			 long_pass;	/* writing out the pieces of a
						   long line */
	/* The judgement of its fields (nsd_record_judge()). */
	int			 judged;	/* the judgement is made */
	uint64_t		 judge_records;	/* records judged */
	uint64_t		 judge_objects;	/* JSON objects among them */
	uint64_t		 keys_seen;	/* the --key fields they have */
	int			 id_seen;	/* the --id-field given */
	struct nsd_buf		 names;		/* their member names, JSON
						   strings ending in NUL */
	size_t			 named;		/* objects in names */
	int			 names_cut;	/* names has not them all */
};

/* The spans of the annotation members records have already. */
struct nsd_spans {
	struct nsd_splice_span	*v;
	size_t			 n;
	size_t			 cap;
};

/* What the scan of one record found in its line. */
struct nsd_record_found {
	size_t		 id_start;	/* the id token in the line, if
					   id_len > 0 */
	size_t		 id_len;
	size_t		 span_off;	/* JSON: members to replace, in the
					   batch's spans */
	size_t		 nspans;
	size_t		 insert_at;
	int		 has_members;
	/* For the judgement of the fields: */
	int		 object;	/* a JSON object, which has */
	uint64_t	 keys;		/* these --key fields, a bit each, */
	int		 has_id;	/* and the id field, of any type */
};

/* What one thread needs to scan records: the JSON queries, the TSV cells. */
struct nsd_record_scanner {
	struct nsd_json_path	 paths[NSD_MAX_KEYS + 3];
	struct nsd_json_query	 queries[NSD_MAX_KEYS + 3];
	size_t			 nqueries;
	size_t			 id_query;
	size_t			 explain_query;	/* or SIZE_MAX */
	size_t			 member_query;	/* first of the annotation
						   members */
	struct nsd_json_scanner	 scanner;
	struct nsd_tsv_fields	 fields;
	struct nsd_buf		 text;		/* the record's text */
	char			 joiner;	/* between the fields of text */
	uint64_t		 all_keys;	/* a bit for each --key */
};

/* An input named name, in format (AUTO: found from its first line). */
void	 nsd_record_input_init(struct nsd_record_input *, const char *,
	    enum nsd_format);
void	 nsd_record_input_free(struct nsd_record_input *);

/* The queries of cfg's --key, --id-field and annotation members. */
int	 nsd_record_scanner_init(struct nsd_record_scanner *,
	    const struct nsd_config *, char, struct nsd_error *);
void	 nsd_record_scanner_free(struct nsd_record_scanner *);

/*
 * Whether a line is blank, to be skipped, in an input of that format, and
 * the format of an input whose first non-blank line it is.
 */
int	 nsd_record_is_blank(enum nsd_format, const char *, size_t);
enum nsd_format nsd_record_format_of(const char *, size_t);

/* Check that a TSV line is UTF-8 without NUL. */
int	 nsd_record_check_tsv(const char *, size_t, char *);

/*
 * The columns of a TSV input, from its header line (or first row, -H).
 * The output is one table: with first, the earlier input whose header it
 * has, a header that names other columns is an error (NSD_EXIT_INPUT), and
 * one that names the same is not written again (header_repeated).
 */
int	 nsd_record_tsv_header(const struct nsd_config *,
	    struct nsd_record_input *, const struct nsd_record_input *,
	    const char *, size_t, uint64_t, struct nsd_error *);

/*
 * Scan a record of the input: check it, put its text into the scanner's
 * text, and say where its id and annotation members are.
 */
int	 nsd_record_scan(const struct nsd_config *, struct nsd_record_scanner *,
	    const struct nsd_record_input *, const char *, size_t,
	    struct nsd_record_found *, struct nsd_spans *, char *);

/*
 * Judge whether --key and --id-field name fields the input has, by its
 * records in order (a record that is not a JSON object with f's found
 * zeroed, s its line): -1 with err set when none of its first
 * NSD_RECORD_JUDGED records has one of them. The judgement is made, and
 * in->judged set, as soon as every field has been seen; until then each
 * record must be judged before the next.
 */
int	 nsd_record_judge(const struct nsd_config *, struct nsd_record_input *,
	    const char *, size_t, const struct nsd_record_found *,
	    struct nsd_error *);
/* The end of the input: the judgement on all its records, if not made. */
int	 nsd_record_judge_end(const struct nsd_config *,
	    struct nsd_record_input *, struct nsd_error *);

/*
 * A record's id as a group keeps it: a JSON token, whatever the format (a
 * TSV cell is encoded into buf). Empty: the record has none.
 */
void	 nsd_record_id(const struct nsd_record_input *, const char *,
	    const struct nsd_record_found *, struct nsd_buf *, const char **,
	    size_t *);

/*
 * Write record line l (data s) with annotation a, or a TSV header line
 * with a NULL found and a (its annotation columns added).
 */
int	 nsd_record_write(struct nsd_writer *,
	    const struct nsd_record_input *, const char *,
	    const struct nsd_line *, const struct nsd_record_found *,
	    const struct nsd_spans *, const struct nsd_annotation *,
	    struct nsd_error *);

#endif /* NSD_RECORDS_H */
