/*
 * text.h: text normalization, sentence splitting and character classes.
 *
 * Normalization version 1 (NSD_NORM_VERSION) is documented in nsdedup(1)
 * under FINGERPRINTS; any change to it must bump the version, since
 * fingerprints (and later, index files) depend on it. Splitting and the
 * letter-or-digit tests use PCRE2 with Unicode properties, compiled once
 * (with the JIT where available) by nsd_text_new().
 *
 * All input must be valid UTF-8 (the record scanners guarantee it). A
 * struct nsd_text holds per-thread match state: use one per thread.
 * Errors: only nsd_text_new() can fail (a PCRE2 compile error).
 */
#ifndef NSD_TEXT_H
#define NSD_TEXT_H

#include <stddef.h>

#include "util.h"

#define NSD_NORM_VERSION 1

enum nsd_split_rule {
	NSD_SPLIT_DEFAULT,	/* nsdedup's rule, on normalized text */
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
 * Replace out's contents with the version-1 normalization of in.
 * simhash.c cuts text without normalizing it where that changes no
 * feature, knowing what normalization changes: keep the two in step.
 */
void	 nsd_text_normalize(const char *, size_t, struct nsd_buf *);

/*
 * Split s into pieces at the rule's delimiters (which are dropped). With
 * the default rule, pieces are trimmed of spaces and empty ones dropped;
 * with the compat rule, every piece is kept as it is, empty ones too.
 * Returns the number of pieces, stored in *pieces (grown as needed).
 */
size_t	 nsd_text_split(struct nsd_text *, const char *, size_t,
	    struct nsd_piece **, size_t *);

/* Whether s contains a letter or a digit (Unicode L or N). */
int	 nsd_text_has_word_char(struct nsd_text *, const char *, size_t);

/* The number of letters and digits (Unicode L or N) in s. */
size_t	 nsd_text_count_word_chars(struct nsd_text *, const char *, size_t);

/* Whether s has more than n letters and digits; reads no further. */
int	 nsd_text_more_word_chars(struct nsd_text *, const char *, size_t,
	    size_t);

#endif /* NSD_TEXT_H */
