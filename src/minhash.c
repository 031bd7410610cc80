/*
 * minhash.c: MinHash signatures (Broder 1997) with LSH bands, as nsdedup
 * defines them.
 *
 * The definition (pinned by tests/unit/minhash_test.c):
 *
 *  1. The features are SimHash's (simhash.c, steps 1 to 3): character
 *     n-grams of Han, Kana and Hangul runs, word shingles elsewhere, each
 *     a 64-bit XXH3-based hash. MinHash sees them as a set: a feature
 *     that occurs twice counts once.
 *  2. One-permutation hashing (Li, Owen and Zhang 2012): the signature
 *     has B bins, a power of two from 16 to 128 (64 in a new index; 128
 *     in every index made before: an index says how many it has). The
 *     top log2(B) bits of a feature's hash h choose its bin, and its low
 *     57 bits are its value; a bin holds the least value of its features.
 *     (Features go into 128 bins as they come, and 2, 4 or 8 neighbours
 *     are then merged: the same thing.)
 *  3. Densification (Shrivastava 2017), for the bins no feature chose (a
 *     short text leaves some empty): empty bin i takes the value of bin j
 *     for the first t = 1, 2, ... where j, the top log2(B) bits of
 *     fmix64(i << 32 | t), was chosen by a feature. For every i the tries
 *     reach all the bins within 1350 (the unit test checks), so this ends
 *     as soon as one bin was chosen. Two texts then agree on a bin with
 *     probability their Jaccard similarity, empty bins included.
 *  4. The signature that is stored is the low 16 bits of each bin's
 *     value, 2B bytes. Two signatures' estimated Jaccard similarity is the
 *     share of the B bins on which they agree; unrelated texts agree by
 *     chance on a bin once in 65,536, which is 0.002% added to the
 *     estimate.
 *  5. The signature's first bins are cut into bands of r consecutive bins
 *     (rows) each; the bins after the last band are only compared. Band
 *     b's key is XXH3-64, seeded with b, of the full 57-bit values of its
 *     rows, each as 8 little-endian bytes.
 *  6. From a threshold t: 8 bands of the most rows r for which they find a
 *     pair of Jaccard similarity t, 1 - (1 - t^r)^8, with probability at
 *     least 0.85 (8r at most B). When not even 2 rows do (t below about
 *     0.46), the fewest bands of 2 rows that do, or else of 1 row, or
 *     else a band of 1 row a bin. With 64 bins, t = 0.5 gives 8 bands of
 *     2 rows, 0.6 8 of 3, 0.7 8 of 4, 0.8 8 of 6, 0.9 and 1 8 of 8, 0.4
 *     11 of 2. Pairs that are more alike are found more surely still;
 *     pairs much less alike rarely share a band, and the few that do are
 *     compared and turned down (nsdedup(1)).
 *
 * Why these sizes: each band key is a 16-byte slot of the index's table,
 * which is from 3/8 to 3/4 full, and each group keeps its signature, so
 * an original cost 42 slots and 256 bytes with 128 bins in 42 bands of 3
 * (1,376 to 2,272 bytes with its id and sketch). 8 bands of 2 rows find
 * a pair of Jaccard similarity 0.5 with probability 0.90 rather than
 * 0.996, 0.6 with 0.97 and 0.7 with 0.995, and 64 bins estimate as well
 * as a text's own spread allows at the thresholds in use; 32 bins would
 * save 64 bytes more, but their estimate errs enough to join texts that
 * are mostly different (as bench/quality.sh measured them).
 *
 * Why one permutation: 128 independent hash functions would cost 128
 * multiplications a feature, where a text has hundreds or thousands of
 * features; one permutation costs a shift and a compare, and estimates
 * Jaccard similarity as well once empty bins are densified.
 */
#include "config.h"

#include <assert.h>
#include <endian.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "minhash.h"
#include "util.h"

#define BIN_SHIFT	NSD_MINHASH_BIN_SHIFT
#define EMPTY		NSD_MINHASH_EMPTY
#define DENSIFY_TRIES	1350	/* every bin is reached by then */

static_assert(NSD_MINHASH_BINS == 1 << (64 - BIN_SHIFT), "bins");

/* x to the n, n a whole number: no libm for this. */
static double
power(double x, unsigned n)
{
	double	 y = 1;

	while (n-- > 0)
		y *= x;
	return (y);
}

/* How surely bands of rows find a pair of Jaccard similarity t. */
static double
found(double t, unsigned bands, unsigned rows)
{
	return (1 - power(1 - power(t, rows), bands));
}

int
nsd_minhash_bins_valid(unsigned bins)
{
	return (bins >= NSD_MINHASH_MIN_BINS && bins <= NSD_MINHASH_BINS &&
	    (bins & (bins - 1)) == 0);
}

void
nsd_minhash_layout(unsigned threshold, unsigned bins, unsigned *bands,
    unsigned *rows)
{
	double		 t = (double)threshold / NSD_MINHASH_SCALE;
	unsigned	 r, b;

	/* The most rows that NSD_MINHASH_BANDS bands can have. */
	*bands = NSD_MINHASH_BANDS;
	*rows = 0;
	for (r = 2; r * NSD_MINHASH_BANDS <= bins; r++)
		if (found(t, NSD_MINHASH_BANDS, r) >= NSD_MINHASH_FOUND)
			*rows = r;
	if (*rows != 0)
		return;
	/* A low threshold: the fewest bands of 2 rows, or else of 1. */
	for (r = 2; r >= 1; r--)
		for (b = NSD_MINHASH_BANDS; b <= bins / r; b++)
			if (found(t, b, r) >= NSD_MINHASH_FOUND) {
				*bands = b;
				*rows = r;
				return;
			}
	*bands = bins;
	*rows = 1;
}

/* log2 of bins, a power of two. */
static unsigned
bits_of(unsigned bins)
{
	unsigned	 n = 0;

	while ((1U << n) < bins)
		n++;
	return (n);
}

/* Step 3: fill the empty bins of min[0..bins) from those a feature chose. */
static void
densify(uint64_t *min, unsigned bins)
{
	unsigned char	 chosen[NSD_MINHASH_BINS];
	unsigned	 i, j, t, shift = 64 - bits_of(bins);

	for (i = 0; i < bins; i++)
		chosen[i] = min[i] != EMPTY;
	for (i = 0; i < bins; i++) {
		if (chosen[i])
			continue;
		/* Every bin is among the first 1350 tries: it ends. */
		for (t = 1;; t++) {
			j = nsd_fmix64((uint64_t)i << 32 | t) >> shift;
			if (chosen[j])
				break;
			assert(t < DENSIFY_TRIES);
		}
		min[i] = min[j];
	}
}

void
nsd_minhash_compute(uint64_t *min, unsigned bins, unsigned bands,
    unsigned rows, unsigned char *sig, uint64_t *keys)
{
	uint64_t	 band[NSD_MINHASH_BINS], least;
	unsigned	 i, k, b, empty = 0, merge;

	assert(nsd_minhash_bins_valid(bins) && bands * rows <= bins);
	/*
	 * Step 2 with fewer bins: a bin is the least of the ones it merges
	 * (kept in a local, which the compiler keeps without a branch: the
	 * lesser of two random values is a coin toss).
	 */
	merge = NSD_MINHASH_BINS / bins;
	if (merge > 1)
		for (i = 0; i < bins; i++) {
			least = min[i * merge];
			for (k = 1; k < merge; k++)
				least = min[i * merge + k] < least ?
				    min[i * merge + k] : least;
			min[i] = least;
		}
	for (i = 0; i < bins; i++)
		empty += min[i] == EMPTY;
	if (empty > 0)
		densify(min, bins);
	for (i = 0; i < bins; i++) {
		sig[2 * i] = min[i] & 0xff;
		sig[2 * i + 1] = (min[i] >> 8) & 0xff;
	}
	/* A band's key is of its bins' values, 8 bytes each, little-endian. */
	for (i = 0; i < bands * rows; i++)
		band[i] = htole64(min[i]);
	for (b = 0; b < bands; b++)
		keys[b] = XXH3_64bits_withSeed(band + b * rows, 8 * rows, b);
}

unsigned
nsd_minhash_agree(const unsigned char *a, const unsigned char *b,
    unsigned bins)
{
	unsigned	 agree = 0, i = 0;
#ifdef __SSE2__
	unsigned	 k;
	__m128i		 count = _mm_setzero_si128();
	uint16_t	 lane[8];

	/*
	 * Eight bins at a time: a bin that agrees compares to -1, which
	 * subtracted counts it in its lane (16 at most, far from overflow).
	 * Bins are a power of two, 16 or more: no bin is left over.
	 */
	for (; i < 2 * bins; i += 16)
		count = _mm_sub_epi16(count, _mm_cmpeq_epi16(
		    _mm_loadu_si128((const __m128i *)(a + i)),
		    _mm_loadu_si128((const __m128i *)(b + i))));
	_mm_storeu_si128((__m128i *)lane, count);
	for (k = 0; k < 8; k++)
		agree += lane[k];
#endif
	for (; i < 2 * bins; i += 2)
		agree += a[i] == b[i] && a[i + 1] == b[i + 1];
	return (agree);
}
