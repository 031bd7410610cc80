/*
 * simhash.h: 64-bit SimHash fingerprints, and the block tables that find
 * fingerprints within a Hamming distance.
 *
 * A text's SimHash is the bitwise majority vote of the XXH3-64 hashes of
 * its features: character n-grams of Han, Kana and Hangul runs, and word
 * shingles of everything else, after nsdedup's normalization (any version).
 * Texts that share most features get fingerprints a few bits apart. The
 * exact definition is the design essay at the top of simhash.c and the
 * FINGERPRINTS section of nsdedup(1); golden vectors in
 * tests/unit/simhash_test.c pin it.
 *
 * A struct nsd_simhash owns its scratch buffers: use one per thread.
 * Nothing here can fail.
 */
#ifndef NSD_SIMHASH_H
#define NSD_SIMHASH_H

#include <stddef.h>
#include <stdint.h>

#include "sketch.h"
#include "util.h"

#define NSD_SIMHASH_MAX_DISTANCE	8
#define NSD_SIMHASH_MAX_NGRAM		8
#define NSD_SIMHASH_MAX_SHINGLE		8
#define NSD_SIMHASH_MAX_TABLES		16

struct nsd_simhash_params {
	unsigned	 ngram;		/* characters per Han/Kana/Hangul
					   feature */
	unsigned	 shingle;	/* words per feature elsewhere */
	unsigned	 min_features;	/* fewer: nothing to compare */
	uint64_t	 seed;		/* XXH3 seed */
	unsigned	 version;	/* of normalization (text.h) */
};

struct nsd_simhash {
	struct nsd_simhash_params p;
	struct nsd_buf		 norm;		/* the normalized text */
	struct nsd_buf		 lower;		/* the text read, lower-cased */
};

void	 nsd_simhash_init(struct nsd_simhash *,
	    const struct nsd_simhash_params *);
void	 nsd_simhash_free(struct nsd_simhash *);

/*
 * The SimHash of text[0..len) (valid UTF-8) into *fp. Returns the number
 * of features it was made of; below p.min_features, *fp is not set and the
 * text has nothing to compare. Unless sketch is NULL, it is made the
 * sketch of the features (sketch.h).
 */
size_t	 nsd_simhash_compute(struct nsd_simhash *, const char *, size_t,
	    uint64_t *, struct nsd_sketch *);

/*
 * The features of text[0..len) (valid UTF-8), each occurrence of one the
 * hash that SimHash votes with, put into MinHash's bins min[0..
 * NSD_MINHASH_BINS) (minhash.h) instead, and into the sketch likewise.
 * Returns how many occurrences.
 */
size_t	 nsd_simhash_minima(struct nsd_simhash *, const char *, size_t,
	    uint64_t *, struct nsd_sketch *);

/*
 * The block tables for distance k: masks over the 64 bits such that two
 * fingerprints within distance k agree exactly under at least one mask.
 * Returns how many (at most NSD_SIMHASH_MAX_TABLES), written to masks.
 */
unsigned nsd_simhash_tables(unsigned, uint64_t *);

/* The Hamming distance of two fingerprints. */
static inline unsigned
nsd_simhash_distance(uint64_t a, uint64_t b)
{
	return (nsd_popcount64(a ^ b));
}

#endif /* NSD_SIMHASH_H */
