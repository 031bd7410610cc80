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
 *  2. One-permutation hashing (Li, Owen and Zhang 2012): the top 7 bits of
 *     a feature's hash h choose one of the 128 bins, and the other 57 bits
 *     are its value; a bin holds the least value of its features.
 *  3. Densification (Shrivastava 2017), for the bins no feature chose (a
 *     short text leaves some empty): empty bin i takes the value of bin j
 *     for the first t = 1, 2, ... where j, the top 7 bits of
 *     fmix64(i << 32 | t), was chosen by a feature. For every i the tries
 *     reach all 128 bins within 1350 (the unit test checks), so this ends
 *     as soon as one bin was chosen. Two texts then agree on a bin with
 *     probability their Jaccard similarity, empty bins included.
 *  4. The signature that is stored is the low 16 bits of each bin's
 *     value. Two signatures' estimated Jaccard similarity is the share of
 *     the 128 bins on which they agree; unrelated texts agree by chance on
 *     a bin once in 65,536, which is 0.002% added to the estimate.
 *  5. The bins are cut into bands of r consecutive bins (rows) each, as
 *     many as fit (128 / r, rounded down; the remaining bins are only
 *     compared). Band b's key is XXH3-64, seeded with b, of the full
 *     57-bit values of its rows, each as 8 little-endian bytes.
 *  6. From a threshold t, r is the largest number of rows for which the
 *     bands find a pair of Jaccard similarity t, 1 - (1 - t^r)^bands, with
 *     probability at least 0.99, or 1 when none does (t below about
 *     0.036): t = 0.5 gives 42 bands of 3 rows, 0.7
 *     32 of 4, 0.8 21 of 6. Pairs that are more alike are found more
 *     surely still; pairs much less alike rarely share a band, and the
 *     few that do are turned down when they are confirmed (nsdedup(1)).
 *
 * Why one permutation: 128 independent hash functions would cost 128
 * multiplications a feature, where a text has hundreds or thousands of
 * features; one permutation costs a shift and a compare, and estimates
 * Jaccard similarity as well once empty bins are densified.
 */
#include "config.h"

#include <assert.h>
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

void
nsd_minhash_layout(unsigned threshold, unsigned *bands, unsigned *rows)
{
	double		 t = (double)threshold / NSD_MINHASH_SCALE;
	unsigned	 r, b;

	*rows = 1;
	*bands = NSD_MINHASH_BINS;
	for (r = 2; r <= NSD_MINHASH_BINS; r++) {
		b = NSD_MINHASH_BINS / r;
		if (1 - power(1 - power(t, r), b) >= 0.99) {
			*rows = r;
			*bands = b;
		}
	}
}

/* Step 3: fill the empty bins of min from those a feature chose. */
static void
densify(uint64_t *min)
{
	unsigned char	 chosen[NSD_MINHASH_BINS];
	unsigned	 i, j, t;

	for (i = 0; i < NSD_MINHASH_BINS; i++)
		chosen[i] = min[i] != EMPTY;
	for (i = 0; i < NSD_MINHASH_BINS; i++) {
		if (chosen[i])
			continue;
		/* Every bin is among the first 1350 tries: it ends. */
		for (t = 1;; t++) {
			j = nsd_fmix64((uint64_t)i << 32 | t) >> BIN_SHIFT;
			if (chosen[j])
				break;
			assert(t < DENSIFY_TRIES);
		}
		min[i] = min[j];
	}
}

void
nsd_minhash_compute(uint64_t *min, unsigned bands, unsigned rows,
    unsigned char *sig, uint64_t *keys)
{
	unsigned char	 band[8 * NSD_MINHASH_BINS];
	unsigned	 i, b, r, empty = 0;

	for (i = 0; i < NSD_MINHASH_BINS; i++)
		empty += min[i] == EMPTY;
	if (empty > 0)
		densify(min);
	for (i = 0; i < NSD_MINHASH_BINS; i++) {
		sig[2 * i] = min[i] & 0xff;
		sig[2 * i + 1] = (min[i] >> 8) & 0xff;
	}
	for (b = 0; b < bands; b++) {
		for (r = 0; r < rows; r++)
			for (i = 0; i < 8; i++)
				band[8 * r + i] = min[b * rows + r] >> (8 * i);
		keys[b] = XXH3_64bits_withSeed(band, 8 * rows, b);
	}
}

unsigned
nsd_minhash_agree(const unsigned char *a, const unsigned char *b)
{
	unsigned	 agree = 0, i = 0;
#ifdef __SSE2__
	unsigned	 k;
	__m128i		 count = _mm_setzero_si128();
	uint16_t	 lane[8];

	/*
	 * Eight bins at a time: a bin that agrees compares to -1, which
	 * subtracted counts it in its lane (16 at most, far from overflow).
	 */
	for (; i < NSD_MINHASH_SIG_BYTES; i += 16)
		count = _mm_sub_epi16(count, _mm_cmpeq_epi16(
		    _mm_loadu_si128((const __m128i *)(a + i)),
		    _mm_loadu_si128((const __m128i *)(b + i))));
	_mm_storeu_si128((__m128i *)lane, count);
	for (k = 0; k < 8; k++)
		agree += lane[k];
#endif
	for (; i < NSD_MINHASH_SIG_BYTES; i += 2)
		agree += a[i] == b[i] && a[i + 1] == b[i + 1];
	return (agree);
}
