/*
 * text.h: text normalization, sentence splitting and character classes.
 *
 * Normalization (NSD_NORM_VERSION, with what nshash.c does after it) is
 * documented in nsdedup(1) under FINGERPRINTS; any change to it must bump
 * the version, since fingerprints, and so index files, depend on it.
 * The delimiters of each split rule and the letter-or-digit tests are
 * PCRE2 patterns with Unicode properties, compiled once (with the JIT
 * where available) by nsd_text_new(). The compat rule and the letter tests
 * run them; the default and prose rules, the ones on the path of every
 * record, find the same delimiters with a scan of their own, which the
 * unit tests and the fuzzing harness hold to the patterns
 * (nsd_text_split_reference()).
 *
 * All input must be valid UTF-8 (the record scanners guarantee it). A
 * struct nsd_text holds per-thread match state: use one per thread.
 * Errors: only nsd_text_new() can fail (a PCRE2 compile error).
 */
#ifndef NSD_TEXT_H
#define NSD_TEXT_H

#include <stddef.h>

#include "util.h"

/*
 * The newest version, which new indexes record, and the oldest one still
 * read: an index keeps the version it was made with (see nshash.c).
 */
#define NSD_NORM_VERSION	3
#define NSD_NORM_OLDEST		1

/* The first version that folds Han characters (hanfold.h). */
#define NSD_NORM_HANFOLD	3

/*
 * Version 2 joins the text fields of a record (-k) with this character,
 * which ends a sentence, since a line break no longer does. Version 1
 * joins them with a newline.
 */
#define NSD_FIELD_END	'\x1f'

enum nsd_split_rule {
	NSD_SPLIT_DEFAULT,	/* nsdedup's rule, version 1, on normalized
				   text */
	NSD_SPLIT_PROSE,	/* version 2: line breaks end no sentence */
	NSD_SPLIT_COMPAT	/* the reference nshash rule, on raw text */
};

/* A piece of text between sentence delimiters. */
struct nsd_piece {
	size_t	 start;
	size_t	 len;
};

struct nsd_text;

struct nsd_text	*nsd_text_new(enum nsd_split_rule, struct nsd_error *);
void		 nsd_text_free(struct nsd_text *);

/*
 * Replace out's contents with the normalization of in by the version:
 * versions 1 and 2 normalize alike, and from NSD_NORM_HANFOLD on Han
 * characters are then folded (hanfold.h). Output is never longer than input.
 * simhash.c cuts text without normalizing where that changes no feature,
 * knowing what normalization changes: keep the two in step.
 */
void	 nsd_text_normalize(const char *, size_t, struct nsd_buf *,
	    unsigned);

/*
 * Read every markup tag of normalized text in buf (a '<', then a letter,
 * '/' or '!', up to the next '>' within NSD_TAG_MAX bytes, with no '<'
 * between) as one space, in place: "<p>One.</p><p>Two" becomes " One.  Two".
 */
#define NSD_TAG_MAX	1024
void	 nsd_text_strip_tags(struct nsd_buf *);

/*
 * Copy normalized text s[0..len) into out without its white space (spaces
 * and newlines), and move the n pieces, which lie in s in order without
 * overlapping (as nsd_text_split() makes them), onto the copy: each
 * piece's start and len then say where it is in out, without its white
 * space. One pass over the text serves the whole and every piece.
 */
void	 nsd_text_flatten(struct nsd_text *, const char *, size_t,
	    struct nsd_piece *, size_t, struct nsd_buf *);

/*
 * Split s into pieces at the rule's delimiters (which are dropped). With
 * the default and prose rules, pieces are trimmed of white space and empty
 * ones dropped;
 * with the compat rule, every piece is kept as it is, empty ones too.
 * Returns the number of pieces, stored in *pieces (grown as needed).
 */
size_t	 nsd_text_split(struct nsd_text *, const char *, size_t,
	    struct nsd_piece **, size_t *);

/*
 * The same, with the rule's PCRE2 pattern, which is the definition:
 * nsd_text_split() finds the delimiters of the default and prose rules by
 * a scan of its own, which the tests hold to this one.
 */
size_t	 nsd_text_split_reference(struct nsd_text *, const char *, size_t,
	    struct nsd_piece **, size_t *);

/* Whether s contains a letter or a digit (Unicode L or N). */
int	 nsd_text_has_word_char(struct nsd_text *, const char *, size_t);

/* The number of letters and digits (Unicode L or N) in s. */
size_t	 nsd_text_count_word_chars(struct nsd_text *, const char *, size_t);

/* Whether s has more than n letters and digits; reads no further. */
int	 nsd_text_more_word_chars(struct nsd_text *, const char *, size_t,
	    size_t);

#endif /* NSD_TEXT_H */
