/*
 * nshash.h: sentence-hash fingerprints ("nshash").
 *
 * A text's fingerprints are the hashes of its longest sentences: two
 * records that share enough of them are near-duplicates (how many is
 * method_nshash.c's rule, --min-match). The exact
 * definition (normalization, delimiters, selection, fallback) is the design
 * essay at the top of nshash.c and the FINGERPRINTS section of nsdedup(1);
 * golden vectors in tests/unit/nshash_test.c pin it.
 *
 * A struct nsd_nshash owns its scratch buffers and PCRE2 match state: use
 * one per thread. Only nsd_nshash_init() can fail.
 */
#ifndef NSD_NSHASH_H
#define NSD_NSHASH_H

#include <stddef.h>
#include <stdint.h>

#include "sketch.h"
#include "text.h"
#include "util.h"

#define NSD_NSHASH_MAX_SENTENCES 64
/*
 * The bytes of an element of the sketch of a text (nshash.c), hashed by
 * nsd_sketch_hash16().
 */
#define NSD_NSHASH_WINDOW	16

struct nsd_nshash_params {
	unsigned	 sentences;	/* how many longest sentences (1..64) */
	unsigned	 min_length;	/* sentences must be longer, in code
					   points */
	int		 compat;	/* reproduce the reference nshash */
	uint64_t	 seed;		/* XXH3 seed */
	unsigned	 version;	/* of the definition, from
					   NSD_NORM_OLDEST to NSD_NORM_VERSION
					   (the index's); not with compat */
};

struct nsd_nshash {
	struct nsd_nshash_params p;
	struct nsd_text		*text;
	struct nsd_buf		 norm;		/* the normalized text */
	struct nsd_buf		 flat;		/* version 2: the normalized
						   text without white space */
	struct nsd_piece	*pieces;
	size_t			 pieces_cap;
	int			 has_whole;	/* version 2, after compute: */
	uint64_t		 whole;		/* the hash of the whole text */
};

int	 nsd_nshash_init(struct nsd_nshash *, const struct nsd_nshash_params *,
	    struct nsd_error *);
void	 nsd_nshash_free(struct nsd_nshash *);

/*
 * Fingerprint text[0..len) (valid UTF-8) into fps, which has room for
 * p.sentences entries, longest sentence first. Returns how many were
 * written; 0 means the text has nothing to compare. With version 2, a
 * text that has something to compare also gets the hash of its whole
 * (h->has_whole, h->whole). Unless code is NULL,
 * code[i] says whether the sentence of fps[i] looks like program code or
 * markup (one in eight of its code points an ASCII symbol such as { } = ;).
 * Unless sketch is NULL, it is made the sketch of the whole text (see
 * "Confirmation" in nshash.c).
 */
size_t	 nsd_nshash_compute(struct nsd_nshash *, const char *, size_t,
	    uint64_t *, unsigned char *, struct nsd_text_sketch *);

/*
 * The key under which the index keeps the group of a whole text (version
 * 2; see "Exact repeats" in nshash.c): nsd_nshash_mark(whole, 1).
 */
uint64_t nsd_nshash_whole_key(uint64_t);

/*
 * The key of mark level (2 and up) of fingerprint fp: an index entry that
 * says at least that many groups presented fp (see --common in
 * nsdedup(1)). A bijective mix, so marks of one fingerprint never equal
 * each other, and equal another fingerprint only by a 64-bit accident.
 */
uint64_t nsd_nshash_mark(uint64_t, unsigned);

#endif /* NSD_NSHASH_H */
