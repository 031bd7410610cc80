/*
 * minhash.h: MinHash signatures of texts, and the LSH band keys that find
 * texts whose signatures agree.
 *
 * A text's signature is the minima of its features' hashes in a number of
 * bins, a power of two up to NSD_MINHASH_BINS (the features SimHash is
 * made of: simhash.h), by one-permutation hashing with densification; the
 * share of bins on which two signatures agree estimates the Jaccard
 * similarity of the two texts' feature sets. The first bins are cut into
 * bands of rows; a band's key is a hash of its rows,
 * so two texts of Jaccard similarity s share some band's key with
 * probability 1 - (1 - s^rows)^bands. The exact definition is the design
 * essay at the top of minhash.c and the FINGERPRINTS section of
 * nsdedup(1); golden vectors in tests/unit/minhash_test.c pin it.
 *
 * Nothing here allocates or fails.
 */
#ifndef NSD_MINHASH_H
#define NSD_MINHASH_H

#include <stddef.h>
#include <stdint.h>

/* The bins features go into, and the most a signature has. */
#define NSD_MINHASH_BINS	128
#define NSD_MINHASH_MIN_BINS	16
/* The bins of a new index's signatures. */
#define NSD_MINHASH_DEFAULT_BINS 64
/* The bands of a layout, unless a low threshold wants more. */
#define NSD_MINHASH_BANDS	8
/* How surely a layout's bands find a pair at its threshold. */
#define NSD_MINHASH_FOUND	0.85
#define NSD_MINHASH_MAX_BANDS	NSD_MINHASH_BINS
/* A stored signature: the low 16 bits of each bin, little-endian. */
#define NSD_MINHASH_SIG_BYTES	(2 * NSD_MINHASH_BINS)
/* Thresholds are in units of 1/NSD_MINHASH_SCALE. */
#define NSD_MINHASH_SCALE	10000
/* A feature's hash: its top bits choose a bin, the rest are its value. */
#define NSD_MINHASH_BIN_SHIFT	57
#define NSD_MINHASH_VALUE_MASK	((1ULL << NSD_MINHASH_BIN_SHIFT) - 1)
#define NSD_MINHASH_EMPTY	UINT64_MAX	/* above every value */

/* Bins min[0..NSD_MINHASH_BINS) with nothing in them. */
static inline void
nsd_minhash_clear(uint64_t *min)
{
	unsigned	 i;

	for (i = 0; i < NSD_MINHASH_BINS; i++)
		min[i] = NSD_MINHASH_EMPTY;
}

/* A feature of hash h into its bin, which keeps the least value. */
static inline void
nsd_minhash_bin(uint64_t *min, uint64_t h)
{
	uint64_t	*m = &min[h >> NSD_MINHASH_BIN_SHIFT];
	uint64_t	 v = h & NSD_MINHASH_VALUE_MASK;

	*m = v < *m ? v : *m;
}

/* Whether a signature may have bins bins: a power of two, 16 to 128. */
int	 nsd_minhash_bins_valid(unsigned);

/*
 * The bands and rows for a Jaccard threshold (in 1/NSD_MINHASH_SCALE,
 * from 1 to NSD_MINHASH_SCALE) over bins bins: NSD_MINHASH_BANDS bands of
 * the most rows that find a pair at the threshold with probability
 * NSD_MINHASH_FOUND or more; when not even 2 rows do, the fewest bands of
 * 2 rows, or else of 1, that do; or else a band of 1 row each bin.
 */
void	 nsd_minhash_layout(unsigned, unsigned, unsigned *, unsigned *);

/*
 * The signature over bins bins of a text whose features went into the
 * bins min (NSD_MINHASH_BINS of them, at least one feature;
 * nsd_simhash_minima()) into sig (2 * bins bytes), and the key of each of
 * its bands into keys[0..bands). min is changed.
 */
void	 nsd_minhash_compute(uint64_t *, unsigned, unsigned, unsigned,
	    unsigned char *, uint64_t *);

/* On how many of their bins two stored signatures agree. */
unsigned nsd_minhash_agree(const unsigned char *, const unsigned char *,
	    unsigned);

/* Whether agreeing on agree of bins bins reaches the threshold. */
static inline int
nsd_minhash_similar(unsigned agree, unsigned bins, unsigned threshold)
{
	return ((uint64_t)agree * NSD_MINHASH_SCALE >=
	    (uint64_t)threshold * bins);
}

#endif /* NSD_MINHASH_H */
