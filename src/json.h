/*
 * json.h: a strict RFC 8259 scanner for one NDJSON record.
 *
 * nsd_json_scan() validates a whole line (syntax and UTF-8) in one pass and,
 * on the way, finds the values of the fields it was asked for: top-level
 * member names or RFC 6901 JSON Pointers. It reports byte spans into the
 * line, so nothing is copied; nsd_json_decode_string() turns a string
 * token into UTF-8 text when the caller needs it. It also records where a
 * new member can be spliced in before the closing brace. Nothing is ever
 * re-serialized. nsd_json_member_names() lists an object's top-level
 * member names, for messages about the fields a record does have.
 *
 * Memory: a struct nsd_json_scanner owns its stack and result arrays and is
 * reused across lines, as a struct nsd_json_names its array; the caller
 * owns the line. Errors: the scan returns -1
 * and sets a static reason string and the 0-based byte offset where the
 * input went wrong.
 */
#ifndef NSD_JSON_H
#define NSD_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

enum nsd_json_type {
	NSD_JSON_NONE = 0,	/* not present */
	NSD_JSON_STRING,
	NSD_JSON_NUMBER,
	NSD_JSON_OBJECT,
	NSD_JSON_ARRAY,
	NSD_JSON_TRUE,
	NSD_JSON_FALSE,
	NSD_JSON_NULL
};

/* One reference token of a field path, decoded. */
struct nsd_json_token {
	char	*name;
	size_t	 len;
	int64_t	 index;		/* array index it also names, or -1 */
};

/* A field to find: a top-level member ("text") or a JSON Pointer ("/a/0"). */
struct nsd_json_path {
	struct nsd_json_token	*tokens;
	size_t			 ntokens;
};

struct nsd_json_span {
	size_t			 start;	/* offset of the value's first byte */
	size_t			 len;	/* bytes of the whole value token */
	enum nsd_json_type	 type;
};

/*
 * A query: find a path's value. With all set, every occurrence is kept
 * (the annotation members, which must all be replaced); otherwise the last
 * one wins, as in jq.
 */
struct nsd_json_query {
	const struct nsd_json_path *path;
	int			 all;
	/* Results of the last scan. */
	struct nsd_json_span	 found;
	struct nsd_json_span	*spans;		/* with all: every occurrence */
	size_t			 nspans;
	size_t			 spans_cap;
	/* Scan state. */
	size_t			 matched;	/* path tokens matched by open
						   containers */
	size_t			 pending;	/* depth at which the next value
						   matches */
	size_t			 capture;	/* depth of a container being
						   captured */
};

/* What is kept of an open container at a depth some query can reach. */
struct nsd_json_frame {
	int64_t		 count;		/* index of the current element
					   (arrays) */
	size_t		 start;		/* offset of the opening bracket */
};

struct nsd_json_scanner {
	struct nsd_json_query	*queries;
	size_t			 nqueries;
	char			*kinds;		/* '{' or '[' per open
						   container */
	size_t			 kinds_cap;
	struct nsd_json_frame	*frames;	/* the first nframes depths */
	size_t			 nframes;
	struct nsd_buf		 key;		/* scratch: decoded member
						   names */
	/* Results of the last scan. */
	size_t			 insert_at;	/* where a new member goes */
	int			 has_members;	/* the object is not empty */
	enum nsd_json_type	 top;		/* type of the top-level
						   value */
	const char		*error;		/* reason, on failure */
	size_t			 error_at;	/* byte offset, on failure */
};

/*
 * Compile FIELD: a top-level name, or a JSON Pointer when it starts with
 * '/'.
 */
int	 nsd_json_path_parse(struct nsd_json_path *, const char *,
	    struct nsd_error *);
/* A path to the top-level member called name, whatever its first character. */
void	 nsd_json_path_member(struct nsd_json_path *, const char *);
void	 nsd_json_path_free(struct nsd_json_path *);

void	 nsd_json_scanner_init(struct nsd_json_scanner *,
	    struct nsd_json_query *, size_t);
void	 nsd_json_scanner_free(struct nsd_json_scanner *);

/*
 * Scan a line that must be one JSON object (with object_only) or any JSON
 * value. Returns 0, or -1 with scanner->error and scanner->error_at set.
 */
int	 nsd_json_scan(struct nsd_json_scanner *, const char *, size_t, int);

/* The top-level member names of an object: spans of their string tokens. */
struct nsd_json_names {
	struct nsd_json_span	*v;
	size_t			 n;
	size_t			 cap;
};

/*
 * The names of the top-level members of the object in line, in order, as
 * the spans of their string tokens (quotes included), into names (emptied
 * first), the first max of them. The line should be one that
 * nsd_json_scan() accepted as an object; of another, the names before the
 * first fault are given, and nothing past its end is read. Returns 0, 1
 * when there are more than max, or -1 at such a fault.
 */
int	 nsd_json_member_names(const char *, size_t, size_t,
	    struct nsd_json_names *);
void	 nsd_json_names_free(struct nsd_json_names *);

/* Append s[0..len) (valid UTF-8) to out as a JSON string token. */
void	 nsd_json_encode_string(const char *, size_t, struct nsd_buf *);

/* Append the decoded text of a valid string token (quotes included) to out. */
void	 nsd_json_decode_string(const char *, size_t, struct nsd_buf *);

const char *nsd_json_type_name(enum nsd_json_type);

#endif /* NSD_JSON_H */
