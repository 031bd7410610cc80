/*
 * minhash_test.c: MinHash signatures, band keys and the bands a threshold
 * gives.
 *
 * Golden vectors pin nsd_minhash_compute() on the features of a few texts:
 * if a change to minhash.c (or to the features, simhash.c) alters one, the
 * signatures and band keys in existing indexes no longer match, and that
 * needs a new normalization version, not a new constant here.
 *
 * A reference, written from the definition at the top of minhash.c and
 * sharing nothing with it but XXH3 (bin by bin, byte by byte), must agree
 * on random feature sets, dense and sparse. Then the properties the man
 * page promises: densification ends (every bin's tries reach every bin),
 * a set's repeats change nothing, the estimate is near the true Jaccard
 * similarity, and the layout of each threshold finds a pair at the
 * threshold with probability 0.99 while one more row would not.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "minhash.h"
#include "simhash.h"
#include "tap.h"
#include "text.h"

/* --- The reference --- */

static uint64_t
ref_fmix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (x);
}

/* log2 of bins, a power of two. */
static unsigned
ref_log2(unsigned bins)
{
	unsigned	 n = 0;

	while ((1U << n) < bins)
		n++;
	return (n);
}

/* The definition, steps 2 to 5, one bin at a time, over bins bins. */
static void
ref_minhash(const uint64_t *h, size_t n, unsigned bins, unsigned bands,
    unsigned rows, unsigned char *sig, uint64_t *keys)
{
	uint64_t	 min[128], filled[128];
	unsigned char	 buf[8 * 128];
	unsigned	 i, j, t, b, r, k, shift = 64 - ref_log2(bins);
	size_t		 f;

	for (i = 0; i < bins; i++) {
		filled[i] = 0;
		min[i] = 0;
		for (f = 0; f < n; f++) {
			if ((h[f] >> shift) != i)
				continue;
			if (!filled[i] || (h[f] & ((1ULL << 57) - 1)) < min[i])
				min[i] = h[f] & ((1ULL << 57) - 1);
			filled[i] = 1;
		}
	}
	for (i = 0; i < bins; i++) {
		if (filled[i])
			continue;
		j = bins;
		for (t = 1; j == bins; t++)
			if (filled[ref_fmix64((uint64_t)i << 32 | t) >> shift])
				j = ref_fmix64((uint64_t)i << 32 | t) >> shift;
		min[i] = min[j];
	}
	for (i = 0; i < bins; i++) {
		sig[2 * i] = (unsigned char)min[i];
		sig[2 * i + 1] = (unsigned char)(min[i] >> 8);
	}
	for (b = 0; b < bands; b++) {
		for (r = 0; r < rows; r++)
			for (k = 0; k < 8; k++)
				buf[8 * r + k] = (unsigned char)(min[b * rows +
				    r] >> (8 * k));
		keys[b] = XXH3_64bits_withSeed(buf, 8 * rows, b);
	}
}

static uint64_t	 rng = 0x2545F4914F6CDD1DULL;

static uint64_t
next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng);
}

/* The signature and keys of features h[0..n), by minhash.c. */
static void
compute(const uint64_t *h, size_t n, unsigned bins, unsigned bands,
    unsigned rows, unsigned char *sig, uint64_t *keys)
{
	uint64_t	 min[NSD_MINHASH_BINS];
	size_t		 i;

	nsd_minhash_clear(min);
	for (i = 0; i < n; i++)
		nsd_minhash_bin(min, h[i]);
	nsd_minhash_compute(min, bins, bands, rows, sig, keys);
}

/* Whether compute and the reference agree on features h[0..n). */
static int
agrees(const uint64_t *h, size_t n, unsigned bins, unsigned bands,
    unsigned rows)
{
	unsigned char		 sig[NSD_MINHASH_SIG_BYTES], want[sizeof sig];
	uint64_t		 keys[128], want_keys[128];

	compute(h, n, bins, bands, rows, sig, keys);
	ref_minhash(h, n, bins, bands, rows, want, want_keys);
	return (memcmp(sig, want, 2 * bins) == 0 &&
	    memcmp(keys, want_keys, bands * sizeof keys[0]) == 0);
}

/* The estimate, as the reference would count it. */
static unsigned
ref_agree(const unsigned char *a, const unsigned char *b, unsigned bins)
{
	unsigned	 i, n = 0;

	for (i = 0; i < bins; i++)
		n += a[2 * i] == b[2 * i] && a[2 * i + 1] == b[2 * i + 1];
	return (n);
}

/* How surely bands of r rows find a pair of similarity s. */
static double
found(double s, unsigned bands, unsigned r)
{
	double		 p1 = 1, p2 = 1;
	unsigned	 i;

	for (i = 0; i < r; i++)
		p1 *= s;
	for (i = 0; i < bands; i++)
		p2 *= 1 - p1;
	return (1 - p2);
}

/*
 * Whether bands of rows over bins is the layout the man page defines for
 * threshold t.
 */
static int
layout_right(unsigned t, unsigned bins, unsigned bands, unsigned rows)
{
	double		 s = t / 10000.0;
	unsigned	 r, b;

	if (bands * rows > bins)
		return (0);
	if (bands == NSD_MINHASH_BANDS && rows >= 2)
		return (found(s, bands, rows) >= NSD_MINHASH_FOUND &&
		    ((rows + 1) * bands > bins ||
		    found(s, bands, rows + 1) < NSD_MINHASH_FOUND));
	/* Not even 2 rows: the fewest bands of 2 rows, or else of 1. */
	if (found(s, NSD_MINHASH_BANDS, 2) >= NSD_MINHASH_FOUND)
		return (0);
	for (r = 2; r >= 1; r--)
		for (b = NSD_MINHASH_BANDS; b <= bins / r; b++)
			if (found(s, b, r) >= NSD_MINHASH_FOUND)
				return (bands == b && rows == r);
	return (bands == bins && rows == 1);
}

/* --- Golden vectors --- */

static const char *const golden_texts[] = {
	"The quick brown fox jumps over the lazy dog, twice a day.",
	"\xe5\x8c\x97\xe4\xba\xac\xe6\x97\xb6\xe9\x97\xb4\xe4\xbb\x8a"
	"\xe5\xa4\xa9\xe4\xb8\x8a\xe5\x8d\x88\xef\xbc\x8c\xe5\x9b\xbd"
	"\xe5\x8a\xa1\xe9\x99\xa2\xe5\x8f\x91\xe5\xb8\x83\xe6\x96\xb0"
	"\xe8\xa7\x84\xe5\xae\x9a\xe3\x80\x82",
	"Short",
};

/*
 * Each text's signature (XXH3-64 of it) and first band key in two
 * layouts: 128 bins in 42 bands of 3 rows, what indexes made before the
 * bins became 64 keep; and the default bins with the layout of 0.6.
 */
static const struct {
	uint64_t	 sig;
	uint64_t	 key0;
} goldens[][3] = {
	{
		{ 0x4579a08222c26b16ULL, 0x513d3e108454e685ULL },
		{ 0x344a05b4bd35af44ULL, 0x9d701af9f5eee2fdULL },
		{ 0xd5a611eb341ac200ULL, 0xfe4bd33c45a61761ULL },
	}, {
		{ 0x58e86399dd3469d4ULL, 0xf1436fbcc694829eULL },
		{ 0x52c62902313a16b3ULL, 0xda4f26d8d1dedff7ULL },
		{ 0xed7faa3741e37cd4ULL, 0xfe4bd33c45a61761ULL },
	},
};

int
main(int argc, char **argv)
{
	struct nsd_simhash_params p = { 3, 2, 1, 0, NSD_NORM_VERSION };
	struct nsd_simhash	 sh;
	uint64_t		 min[NSD_MINHASH_BINS];
	unsigned char		 sig[NSD_MINHASH_SIG_BYTES], sig2[sizeof sig];
	uint64_t		 keys[128], keys2[128], h[4096];
	unsigned		 bins, bands, rows, i, j, l, bad, t, shift;
	size_t			 n;
	double			 err_sum;

	/* With an argument: print the golden values, to pin new ones. */
	nsd_simhash_init(&sh, &p);
	for (l = 0; l < 2; l++) {
		bins = l == 0 ? 128 : NSD_MINHASH_DEFAULT_BINS;
		if (l == 0)
			bands = 42, rows = 3;
		else
			nsd_minhash_layout(6000, bins, &bands, &rows);
		for (i = 0; i < 3; i++) {
			n = nsd_simhash_minima(&sh, golden_texts[i],
			    strlen(golden_texts[i]), min, NULL);
			nsd_minhash_compute(min, bins, bands, rows, sig, keys);
			if (argc > 1) {
				printf("0x%016" PRIx64 "ULL, 0x%016" PRIx64
				    "ULL\n", XXH3_64bits(sig, 2 * bins),
				    keys[0]);
				continue;
			}
			tap_ok(XXH3_64bits(sig, 2 * bins) ==
			    goldens[l][i].sig && keys[0] == goldens[l][i].key0,
			    "golden vector %u of %u bins (%zu features)", i,
			    bins, n);
		}
	}
	if (argc > 1)
		return (0);
	(void)argv;

	/* The reference, on random sets: dense, sparse, and one feature. */
	for (bad = 0, i = 0; i < 2000; i++) {
		n = i % 3 == 0 ? 1 + next_random() % 8 : i % 3 == 1 ?
		    1 + next_random() % 100 : 100 + next_random() % 3000;
		for (j = 0; j < n; j++)
			h[j] = next_random();
		bins = NSD_MINHASH_MIN_BINS << (i % 4);
		nsd_minhash_layout(100 + (unsigned)(next_random() % 9901),
		    bins, &bands, &rows);
		bad += !agrees(h, n, bins, bands, rows);
	}
	tap_ok(bad == 0, "the reference agrees on 2000 random sets of 16 to "
	    "128 bins (%u differ)", bad);
	/* A feature in one bin only: every bin is densified from it. */
	h[0] = 0x0123456789abcdefULL;
	tap_ok(agrees(h, 1, 128, 42, 3) && agrees(h, 1, 64, 8, 2),
	    "one feature fills every bin");
	/* Features in one bin: every other bin must find it. */
	for (j = 0; j < 50; j++)
		h[j] = (5ULL << 57) | next_random() >> 7;
	tap_ok(agrees(h, 50, 128, 21, 6) && agrees(h, 50, 64, 8, 3),
	    "features in one bin fill the others");
	/* What makes densification end: each bin's tries reach every bin. */
	for (bad = 0, bins = 16; bins <= 128; bins *= 2) {
		shift = 64 - ref_log2(bins);
		for (i = 0; i < bins; i++) {
			unsigned char	 seen[128] = { 0 };
			unsigned	 reached = 0;

			for (t = 1; t <= 1350; t++)
				if (!seen[ref_fmix64((uint64_t)i << 32 | t) >>
				    shift]++)
					reached++;
			bad += reached != bins;
		}
	}
	tap_ok(bad == 0, "every bin's first 1350 tries reach all bins, of "
	    "16 to 128");
	tap_ok(nsd_minhash_bins_valid(16) && nsd_minhash_bins_valid(64) &&
	    nsd_minhash_bins_valid(128) && !nsd_minhash_bins_valid(8) &&
	    !nsd_minhash_bins_valid(48) && !nsd_minhash_bins_valid(256),
	    "bins are a power of two from 16 to 128");

	/* Repeats: a set, not a multiset. */
	for (j = 0; j < 500; j++)
		h[j] = next_random();
	for (j = 500; j < 1500; j++)
		h[j] = h[j % 500];
	compute(h, 500, 64, 8, 2, sig, keys);
	compute(h, 1500, 64, 8, 2, sig2, keys2);
	tap_ok(memcmp(sig, sig2, 128) == 0 &&
	    memcmp(keys, keys2, 8 * sizeof keys[0]) == 0,
	    "a feature repeated counts once");

	/*
	 * The estimate: sets of 1000 sharing s of them, J = s / (2000 - s),
	 * within five standard deviations of bins draws (at most 0.23 for
	 * 128, 0.32 for 64).
	 */
	for (bins = 64; bins <= 128; bins *= 2) {
		double	 most = bins == 128 ? 0.23 : 0.32;

		for (t = 0, err_sum = 0, bad = 0; t < 200; t++) {
			unsigned	 shared = 200 + t * 4, agree;
			double		 jac = shared / (2000.0 - shared);

			for (j = 0; j < 2000; j++)
				h[j] = next_random();
			memcpy(h + 1000, h, shared * sizeof h[0]);
			compute(h, 1000, bins, 8, 2, sig, keys);
			compute(h + 1000, 1000, bins, 8, 2, sig2, keys2);
			agree = nsd_minhash_agree(sig, sig2, bins);
			bad += agree != ref_agree(sig, sig2, bins);
			err_sum += (double)agree / bins - jac;
			bad += (double)agree / bins - jac > most ||
			    jac - (double)agree / bins > most;
		}
		tap_ok(bad == 0 && err_sum / 200 < 0.01 &&
		    err_sum / 200 > -0.01, "%u bins: the estimate is within "
		    "%.2f of the Jaccard similarity, and unbiased (mean error "
		    "%.4f)", bins, most, err_sum / 200);
	}
	/* Whether agreeing on so many bins reaches a threshold. */
	tap_ok(nsd_minhash_similar(32, 64, 5000) &&
	    !nsd_minhash_similar(31, 64, 5000) &&
	    nsd_minhash_similar(64, 128, 5000) &&
	    !nsd_minhash_similar(63, 128, 5000), "half the bins reach 0.5");

	/* The layouts nsdedup(1) lists. */
	{
		static const unsigned want[][3] = {
			{ 5000, 8, 2 }, { 6000, 8, 3 }, { 7000, 8, 4 },
			{ 8000, 8, 6 }, { 9000, 8, 8 }, { 10000, 8, 8 },
			{ 4000, 11, 2 }, { 3000, 21, 2 }, { 2000, 9, 1 },
			{ 100, 64, 1 },
		};

		for (bad = 0, i = 0; i < sizeof want / sizeof want[0]; i++) {
			nsd_minhash_layout(want[i][0],
			    NSD_MINHASH_DEFAULT_BINS, &bands, &rows);
			bad += bands != want[i][1] || rows != want[i][2];
		}
		tap_ok(bad == 0, "the layouts of 0.5, 0.6, 0.7, 0.8, 0.9, 1, "
		    "0.4, 0.3, 0.2 and 0.01 are as documented");
	}
	/* Every threshold, for every number of bins. */
	for (bad = 0, bins = 16; bins <= 128; bins *= 2)
		for (t = 100; t <= 10000; t += 7) {
			nsd_minhash_layout(t, bins, &bands, &rows);
			bad += !layout_right(t, bins, bands, rows);
		}
	tap_ok(bad == 0, "every layout is the one its threshold gives "
	    "(%u are not)", bad);
	nsd_simhash_free(&sh);
	return (tap_done());
}
