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

/* The definition, steps 2 to 5, one bin at a time. */
static void
ref_minhash(const uint64_t *h, size_t n, unsigned bands, unsigned rows,
    unsigned char *sig, uint64_t *keys)
{
	uint64_t	 min[128], filled[128];
	unsigned char	 buf[8 * 128];
	unsigned	 i, j, t, b, r, k;
	size_t		 f;

	for (i = 0; i < 128; i++) {
		filled[i] = 0;
		min[i] = 0;
		for (f = 0; f < n; f++) {
			if ((h[f] >> 57) != i)
				continue;
			if (!filled[i] || (h[f] & ((1ULL << 57) - 1)) < min[i])
				min[i] = h[f] & ((1ULL << 57) - 1);
			filled[i] = 1;
		}
	}
	for (i = 0; i < 128; i++) {
		if (filled[i])
			continue;
		j = 128;
		for (t = 1; j == 128; t++)
			if (filled[ref_fmix64((uint64_t)i << 32 | t) >> 57])
				j = ref_fmix64((uint64_t)i << 32 | t) >> 57;
		min[i] = min[j];
	}
	for (i = 0; i < 128; i++) {
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
compute(const uint64_t *h, size_t n, unsigned bands, unsigned rows,
    unsigned char *sig, uint64_t *keys)
{
	uint64_t	 min[NSD_MINHASH_BINS];
	size_t		 i;

	nsd_minhash_clear(min);
	for (i = 0; i < n; i++)
		nsd_minhash_bin(min, h[i]);
	nsd_minhash_compute(min, bands, rows, sig, keys);
}

/* Whether compute and the reference agree on features h[0..n). */
static int
agrees(const uint64_t *h, size_t n, unsigned bands, unsigned rows)
{
	unsigned char		 sig[NSD_MINHASH_SIG_BYTES], want[sizeof sig];
	uint64_t		 keys[128], want_keys[128];

	compute(h, n, bands, rows, sig, keys);
	ref_minhash(h, n, bands, rows, want, want_keys);
	return (memcmp(sig, want, sizeof sig) == 0 &&
	    memcmp(keys, want_keys, bands * sizeof keys[0]) == 0);
}

/* The estimate, as the reference would count it. */
static unsigned
ref_agree(const unsigned char *a, const unsigned char *b)
{
	unsigned	 i, n = 0;

	for (i = 0; i < 128; i++)
		n += a[2 * i] == b[2 * i] && a[2 * i + 1] == b[2 * i + 1];
	return (n);
}

/* How surely the bands of r rows that fit find a pair of similarity s. */
static double
found(double s, unsigned r)
{
	double		 p1 = 1, p2 = 1;
	unsigned	 i;

	for (i = 0; i < r; i++)
		p1 *= s;
	for (i = 0; i < 128 / r; i++)
		p2 *= 1 - p1;
	return (1 - p2);
}

/* --- Golden vectors --- */

static const struct {
	const char	*text;
	uint64_t	 sig;	/* XXH3-64 of the stored signature */
	uint64_t	 key0;	/* the first band's key, at 0.6 */
} goldens[] = {
	{ "The quick brown fox jumps over the lazy dog, twice a day.",
	    0x4579a08222c26b16ULL, 0x513d3e108454e685ULL },
	{ "\xe5\x8c\x97\xe4\xba\xac\xe6\x97\xb6\xe9\x97\xb4\xe4\xbb\x8a"
	  "\xe5\xa4\xa9\xe4\xb8\x8a\xe5\x8d\x88\xef\xbc\x8c\xe5\x9b\xbd"
	  "\xe5\x8a\xa1\xe9\x99\xa2\xe5\x8f\x91\xe5\xb8\x83\xe6\x96\xb0"
	  "\xe8\xa7\x84\xe5\xae\x9a\xe3\x80\x82",
	    0x344a05b4bd35af44ULL, 0x9d701af9f5eee2fdULL },
	{ "Short", 0xd5a611eb341ac200ULL, 0xfe4bd33c45a61761ULL },
};

int
main(int argc, char **argv)
{
	struct nsd_simhash_params p = { 3, 2, 1, 0 };
	struct nsd_simhash	 sh;
	uint64_t		 min[NSD_MINHASH_BINS];
	unsigned char		 sig[NSD_MINHASH_SIG_BYTES], sig2[sizeof sig];
	uint64_t		 keys[128], keys2[128], h[4096];
	unsigned		 bands, rows, i, j, bad, t;
	size_t			 n;
	double			 err_sum;

	/* With an argument: print the golden values, to pin new ones. */
	nsd_simhash_init(&sh, &p);
	nsd_minhash_layout(6000, &bands, &rows);
	for (i = 0; i < sizeof goldens / sizeof goldens[0]; i++) {
		n = nsd_simhash_minima(&sh, goldens[i].text,
		    strlen(goldens[i].text), min, NULL);
		nsd_minhash_compute(min, bands, rows, sig, keys);
		if (argc > 1) {
			printf("0x%016" PRIx64 "ULL, 0x%016" PRIx64 "ULL\n",
			    XXH3_64bits(sig, sizeof sig), keys[0]);
			continue;
		}
		tap_ok(XXH3_64bits(sig, sizeof sig) == goldens[i].sig &&
		    keys[0] == goldens[i].key0, "golden vector %u (%zu "
		    "features)", i, n);
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
		nsd_minhash_layout(100 + (unsigned)(next_random() % 9901),
		    &bands, &rows);
		bad += !agrees(h, n, bands, rows);
	}
	tap_ok(bad == 0, "the reference agrees on 2000 random sets (%u "
	    "differ)", bad);
	/* A feature in one bin only: every bin is densified from it. */
	h[0] = 0x0123456789abcdefULL;
	tap_ok(agrees(h, 1, 42, 3), "one feature fills every bin");
	/* Features in one bin: every other bin must find it. */
	for (j = 0; j < 50; j++)
		h[j] = (5ULL << 57) | next_random() >> 7;
	tap_ok(agrees(h, 50, 21, 6), "features in one bin fill the others");
	/* What makes densification end: each bin's tries reach every bin. */
	for (bad = 0, i = 0; i < 128; i++) {
		unsigned char	 seen[128] = { 0 };
		unsigned	 reached = 0;

		for (t = 1; t <= 1350; t++)
			if (!seen[ref_fmix64((uint64_t)i << 32 | t) >> 57]++)
				reached++;
		bad += reached != 128;
	}
	tap_ok(bad == 0, "every bin's first 1350 tries reach all 128 bins");

	/* Repeats: a set, not a multiset. */
	for (j = 0; j < 500; j++)
		h[j] = next_random();
	for (j = 500; j < 1500; j++)
		h[j] = h[j % 500];
	compute(h, 500, 42, 3, sig, keys);
	compute(h, 1500, 42, 3, sig2, keys2);
	tap_ok(memcmp(sig, sig2, sizeof sig) == 0 &&
	    memcmp(keys, keys2, 42 * sizeof keys[0]) == 0,
	    "a feature repeated counts once");

	/* The estimate: sets of 1000 sharing s of them, J = s / (2000 - s). */
	for (t = 0, err_sum = 0, bad = 0; t < 200; t++) {
		unsigned		 shared = 200 + t * 4, agree;
		double			 jac = shared / (2000.0 - shared);

		for (j = 0; j < 2000; j++)
			h[j] = next_random();
		memcpy(h + 1000, h, shared * sizeof h[0]);
		compute(h, 1000, 42, 3, sig, keys);
		compute(h + 1000, 1000, 42, 3, sig2, keys2);
		agree = nsd_minhash_agree(sig, sig2);
		bad += agree != ref_agree(sig, sig2);
		err_sum += agree / 128.0 - jac;
		/* Five standard deviations of 128 draws at most 0.23. */
		bad += agree / 128.0 - jac > 0.23 || jac - agree / 128.0 > 0.23;
	}
	tap_ok(bad == 0 && err_sum / 200 < 0.01 && err_sum / 200 > -0.01,
	    "the estimate is within 0.23 of the Jaccard similarity, and "
	    "unbiased (mean error %.4f)", err_sum / 200);

	/* The layouts nsdedup(1) lists. */
	{
		static const unsigned want[][3] = {
			{ 5000, 42, 3 }, { 6000, 42, 3 }, { 7000, 32, 4 },
			{ 8000, 21, 6 }, { 9000, 12, 10 }, { 10000, 1, 128 },
			{ 100, 128, 1 },
		};

		for (bad = 0, i = 0; i < sizeof want / sizeof want[0]; i++) {
			nsd_minhash_layout(want[i][0], &bands, &rows);
			bad += bands != want[i][1] || rows != want[i][2];
		}
		tap_ok(bad == 0, "the layouts of 0.5, 0.6, 0.7, 0.8, 0.9, 1 "
		    "and 0.01 are as documented");
	}
	/* Every threshold: 0.99 at t with r rows, not with r + 1. */
	for (bad = 0, t = 100; t <= 10000; t += 7) {
		nsd_minhash_layout(t, &bands, &rows);
		bad += bands != 128 / rows ||
		    (rows > 1 && found(t / 10000.0, rows) < 0.99) ||
		    (rows < 128 && found(t / 10000.0, rows + 1) >= 0.99);
	}
	tap_ok(bad == 0, "every layout finds a pair at its threshold with "
	    "probability 0.99");
	nsd_simhash_free(&sh);
	return (tap_done());
}
