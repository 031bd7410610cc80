/*
 * simhash_test.c: SimHash fingerprints, block tables and distances.
 *
 * Three kinds of check. Golden vectors pin nsd_simhash_compute() on a few
 * texts: if a change to simhash.c or text.c alters one, the fingerprints
 * of existing indexes change, and that needs a new normalization version,
 * not a new constant here. The texts of a single feature are pinned
 * independently of this code: their SimHash is the feature's hash, given
 * here as xxhsum -H3 printed it for the text in the comment beside it.
 *
 * Then a reference implementation, written from the definition at the top
 * of simhash.c and sharing nothing with it but normalization and XXH3
 * (slow and plain: decode, classify, cut, count bit by bit), must agree
 * with nsd_simhash_compute() on those texts and on random ones.
 *
 * Last, the block tables: for every distance, an exact check that no set
 * of k bit positions meets every mask (so two fingerprints within
 * distance k always agree under one), random pairs within and beyond k,
 * and the table counts that nsdedup(1) documents.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "simhash.h"
#include "tap.h"
#include "text.h"

/* --- The reference implementation --- */

enum ref_kind { REF_OTHER, REF_WORD, REF_CJK };

struct range {
	uint32_t	 lo, hi;
};

/* Han, Kana and Hangul, as the definition lists them. */
static const struct range cjk_ranges[] = {
	{ 0x3400, 0x4DBF }, { 0x4E00, 0x9FFF }, { 0xF900, 0xFAFF },
	{ 0x20000, 0x3FFFF },
	{ 0x3040, 0x30FF }, { 0x31F0, 0x31FF }, { 0xFF66, 0xFF9F },
	{ 0x1100, 0x11FF }, { 0x3130, 0x318F }, { 0xAC00, 0xD7AF },
};

/* From U+00C0 up, these separate words. */
static const struct range not_word_ranges[] = {
	{ 0xD7, 0xD7 }, { 0xF7, 0xF7 }, { 0x2000, 0x2BFF },
	{ 0x3000, 0x303F }, { 0xFE30, 0xFE4F }, { 0xFF00, 0xFF65 },
	{ 0xFFF0, 0xFFFF },
};

static int
in_ranges(uint32_t c, const struct range *r, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (c >= r[i].lo && c <= r[i].hi)
			return (1);
	return (0);
}

static enum ref_kind
ref_kind(uint32_t c)
{
	if (in_ranges(c, cjk_ranges, sizeof cjk_ranges /
	    sizeof cjk_ranges[0]))
		return (REF_CJK);
	if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
	    (c >= 'a' && c <= 'z'))
		return (REF_WORD);
	if (c >= 0xC0 && !in_ranges(c, not_word_ranges,
	    sizeof not_word_ranges / sizeof not_word_ranges[0]))
		return (REF_WORD);
	return (REF_OTHER);
}

/* The number of bytes of the UTF-8 sequence that starts with byte b. */
static size_t
utf8_len(unsigned char b)
{
	return (b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4);
}

static uint32_t
utf8_cp(const unsigned char *s, size_t n)
{
	static const unsigned char lead_mask[] = { 0, 0x7F, 0x1F, 0x0F, 0x07 };
	uint32_t	 c = s[0] & lead_mask[n];
	size_t		 i;

	for (i = 1; i < n; i++)
		c = c << 6 | (s[i] & 0x3F);
	return (c);
}

struct ref_votes {
	size_t		 total;
	uint32_t	 ones[64];
};

static void
ref_vote(struct ref_votes *v, uint64_t h)
{
	unsigned	 b;

	for (b = 0; b < 64; b++)
		v->ones[b] += (h >> b) & 1;
	v->total++;
}

static uint64_t
ref_rotl(uint64_t x, unsigned r)
{
	return (r == 0 ? x : x << r | x >> (64 - r));
}

/*
 * A shingle of n words: fmix64 of the word hashes, word i rotated left by
 * 21 * i mod 64, xored; one word is its own hash.
 */
static uint64_t
ref_shingle(const uint64_t *w, size_t n)
{
	uint64_t	 x = 0;
	size_t		 i;

	if (n == 1)
		return (w[0]);
	for (i = 0; i < n; i++)
		x ^= ref_rotl(w[i], 21 * i % 64);
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (x);
}

/* The definition, step by step; returns the feature count. */
static size_t
ref_simhash(const char *text, const struct nsd_simhash_params *p,
    uint64_t *fp)
{
	struct nsd_buf		 norm = { 0 };
	struct ref_votes	 v;
	const unsigned char	*s;
	size_t			*off, ncp = 0, i, j, a, nwords = 0, total;
	enum ref_kind		*kind;
	uint64_t		*words;
	char			*lower;
	unsigned		 b;

	memset(&v, 0, sizeof v);
	nsd_text_normalize(text, strlen(text), &norm, p->version);
	s = (const unsigned char *)norm.data;
	/* Code points: their offsets (one more, the end) and kinds. */
	off = malloc((norm.len + 1) * sizeof off[0]);
	kind = malloc((norm.len + 1) * sizeof kind[0]);
	words = malloc((norm.len + 1) * sizeof words[0]);
	lower = malloc(norm.len + 1);
	for (i = 0; i < norm.len; i += utf8_len(s[i])) {
		off[ncp] = i;
		kind[ncp++] = ref_kind(utf8_cp(s + i, utf8_len(s[i])));
	}
	off[ncp] = norm.len;
	for (a = 0; a < ncp; a = j) {
		for (j = a + 1; j < ncp && kind[j] == kind[a]; j++)
			continue;
		if (kind[a] == REF_CJK && j - a >= p->ngram) {
			for (i = a; i + p->ngram <= j; i++)
				ref_vote(&v, XXH3_64bits_withSeed(s + off[i],
				    off[i + p->ngram] - off[i], p->seed));
		} else if (kind[a] == REF_CJK)
			ref_vote(&v, XXH3_64bits_withSeed(s + off[a],
			    off[j] - off[a], p->seed));
		else if (kind[a] == REF_WORD) {
			/* Lower-cased, and only the first 256 bytes. */
			for (i = off[a]; i < off[j]; i++)
				lower[i - off[a]] = (char)(s[i] >= 'A' &&
				    s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
			words[nwords++] = XXH3_64bits_withSeed(lower,
			    off[j] - off[a] > 256 ? 256 : off[j] - off[a],
			    p->seed);
		}
	}
	if (nwords >= p->shingle)
		for (i = 0; i + p->shingle <= nwords; i++)
			ref_vote(&v, ref_shingle(words + i, p->shingle));
	else if (nwords > 0)
		ref_vote(&v, ref_shingle(words, nwords));
	free(off);
	free(kind);
	free(words);
	free(lower);
	nsd_buf_free(&norm);
	total = v.total;
	if (total == 0 || total < p->min_features)
		return (total);
	*fp = 0;
	for (b = 0; b < 64; b++)
		if (2 * (size_t)v.ones[b] > total)
			*fp |= (uint64_t)1 << b;
	return (total);
}

/* --- Fingerprints --- */

static struct nsd_simhash	 sh;

#define UNSET	0x5555555555555555ULL

/* nsd_simhash_compute() with these parameters; *fp is UNSET if not set. */
static size_t
simhash(const char *text, unsigned ngram, unsigned shingle, unsigned min,
    uint64_t seed, uint64_t *fp)
{
	struct nsd_simhash_params p = { ngram, shingle, min, seed,
	    NSD_NORM_VERSION };

	nsd_simhash_free(&sh);
	nsd_simhash_init(&sh, &p);
	*fp = UNSET;
	return (nsd_simhash_compute(&sh, text, strlen(text), fp, NULL));
}

/* Whether the reference agrees with nsd_simhash_compute() on text. */
static int
agrees(const char *text, unsigned ngram, unsigned shingle, unsigned min,
    uint64_t seed)
{
	struct nsd_simhash_params p = { ngram, shingle, min, seed,
	    NSD_NORM_VERSION };
	uint64_t	 got, want = UNSET;
	size_t		 n, m;

	n = simhash(text, ngram, shingle, min, seed, &got);
	m = ref_simhash(text, &p, &want);
	if (n != m || got != want) {
		printf("# ngram %u shingle %u min %u seed %#" PRIx64 ": "
		    "%zu features, %016" PRIx64 "; the reference: %zu, %016"
		    PRIx64 "\n# text: \"", ngram, shingle, min, seed, n, got,
		    m, want);
		for (; *text != '\0'; text++)
			if (*text >= ' ' && *text <= '~' && *text != '\\' &&
			    *text != '"')
				putchar(*text);
			else
				printf("\\x%02x", (unsigned char)*text);
		printf("\"\n");
		return (0);
	}
	return (1);
}

struct golden {
	const char	*what;
	const char	*text;
	size_t		 features;
	uint64_t	 fp;
};

/*
 * With the defaults: 2-grams, shingles of 3 words, at least 8 features,
 * seed 0. The feature counts are counted by hand in the comments.
 */
static const struct golden goldens[] = {
	/* 18 words: 16 shingles. */
	{ "English", "The quick brown fox jumps over the lazy dog, and then "
	    "the fox runs away into the forest.", 16, 0x8003de8d69905400ULL },
	/* Runs of 6, 15, 10 and 11 Han characters: 5 + 14 + 9 + 10 2-grams. */
	{ "Chinese", "据新华社报道：今年全国粮食总产量再创历史新高，"
	    "达到一万三千亿斤以上，比上年增长百分之一点三。", 38,
	    0x5f945ae7c00e087bULL },
	/* Runs of 12 and 13 kana: 11 + 12 2-grams. */
	{ "Japanese kana", "きょうはいいてんきですね。"
	    "カタカナもまぜてみましょう", 23, 0xbe905e550e8c3806ULL },
	/*
	 * Runs of 5, 3, 2, 2 and 4 syllables: 4 + 2 + 1 + 1 + 3
	 * 2-grams.
	 */
	{ "Korean", "대한민국의 수도는 서울 날씨 좋습니다.", 11,
	    0x37a1466c872e5d78ULL },
	/*
	 * Words abc, best, practice, 2024, abc (full-width), ünïcödé, naïve,
	 * café: 6 shingles; Han runs of 5, 5 and 1: 4 + 4 + 1.
	 */
	{ "mixed", "ABC农业机械化 best practice 的持续提高 2024年 "
	    "\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3 Ünïcödé naïve café", 15,
	    0x9de8fda117fa59f1ULL },
	/* 11 words: 9 shingles, 8 of them the same. */
	{ "repeated words", "spam spam spam spam spam spam spam spam spam "
	    "spam eggs", 9, 0xf9c831f637794fcaULL },
};

static void
check_golden(void)
{
	const struct nsd_simhash_params p = { 2, 3, 8, 0, NSD_NORM_VERSION };
	uint64_t	 fp, want;
	size_t		 i, n;

	for (i = 0; i < sizeof goldens / sizeof goldens[0]; i++) {
		n = simhash(goldens[i].text, 2, 3, 8, 0, &fp);
		tap_ok(n == goldens[i].features && fp == goldens[i].fp,
		    "golden: %s (%zu features, %016" PRIx64 ")",
		    goldens[i].what, n, fp);
		want = UNSET;
		tap_ok(ref_simhash(goldens[i].text, &p, &want) ==
		    goldens[i].features && want == goldens[i].fp,
		    "the reference agrees: %s", goldens[i].what);
	}

	/* 3 words, one shingle: fewer than 8 features, nothing set. */
	n = simhash("too short text", 2, 3, 8, 0, &fp);
	tap_ok(n == 1 && fp == UNSET,
	    "golden: below --min-features, no fingerprint");
	n = simhash("", 2, 3, 1, 0, &fp);
	tap_ok(n == 0 && fp == UNSET, "the empty text has no fingerprint");
	n = simhash(" ,.;!? -- \xe3\x80\x82\xe2\x80\x94 \xc2\xa9 \xc3\x97",
	    2, 3, 1, 0, &fp);
	tap_ok(n == 0 && fp == UNSET,
	    "punctuation, symbols and white space have no fingerprint");
}

/* Texts of one feature: their SimHash is that feature's hash. */
static void
check_one_feature(void)
{
	uint64_t	 fp, a, b, c;
	size_t		 n;

	/* "hello" */
	n = simhash("Hello", 2, 3, 1, 0, &fp);
	tap_ok(n == 1 && fp == 0x9555e8555c62dcfdULL,
	    "one word: its hash, lower-cased (xxhsum)");
	n = simhash("\xef\xbc\xa8\xef\xbd\x85\xef\xbc\xac\xef\xbd\x8c"
	    "\xef\xbd\x8f!!", 2, 3, 1, 0, &fp);
	tap_ok(n == 1 && fp == 0x9555e8555c62dcfdULL,
	    "full-width letters fold to the same word");
	/* "中文" */
	n = simhash("\xe4\xb8\xad\xe6\x96\x87", 2, 3, 1, 0, &fp);
	tap_ok(n == 1 && fp == 0x8dbce87fe32cdda6ULL,
	    "one Han 2-gram: its hash (xxhsum)");
	/* "中" */
	n = simhash("\xe4\xb8\xad", 2, 3, 1, 0, &fp);
	tap_ok(n == 1 && fp == 0x0524b6e05bc20c62ULL,
	    "a Han run shorter than the n-gram: the run's hash (xxhsum)");
	/* "é" is not folded: a word of its own. */
	n = simhash("\xc3\x89", 2, 3, 1, 0, &fp);
	tap_ok(n == 1 && fp == XXH3_64bits("\xc3\x89", 2),
	    "only ASCII letters are lower-cased");

	/* Two features: a bit is 1 only when both vote for it (a tie is 0). */
	a = XXH3_64bits("alpha", 5);
	b = XXH3_64bits("beta", 4);
	c = XXH3_64bits("gamma", 5);
	n = simhash("alpha beta", 2, 1, 1, 0, &fp);
	tap_ok(n == 2 && fp == (a & b), "two features: a tie gives 0");
	n = simhash("alpha, beta; gamma", 2, 1, 1, 0, &fp);
	tap_ok(n == 3 && fp == ((a & b) | (a & c) | (b & c)),
	    "three features: the majority of each bit");
	n = simhash("alpha alpha beta", 2, 1, 1, 0, &fp);
	tap_ok(n == 3 && fp == a,
	    "a feature weighs as often as it occurs");
	n = simhash("alpha beta", 2, 3, 1, 0, &fp);
	tap_ok(n == 1 && fp != a && fp != b && fp != (a & b),
	    "fewer words than a shingle: one feature of them all");
	n = simhash("alpha beta", 2, 3, 1, 7, &fp);
	tap_ok(n == 1 && fp != UNSET &&
	    simhash("alpha beta", 2, 3, 1, 0, &a) == 1 && fp != a,
	    "the seed changes the hashes");
	n = simhash("alpha \xe4\xb8\xad beta gamma", 2, 2, 1, 0, &fp);
	tap_ok(n == 3 && agrees("alpha \xe4\xb8\xad beta gamma", 2, 2, 1, 0),
	    "shingles count words across CJK runs");
}

/* A piece of random text: words, CJK, punctuation, symbols, spaces. */
static const char *const pieces[] = {
	"the", "The", "QUICK", "fox", "brown", "a", "I", "dog", "42", "x9",
	"r\xc3\xa9sum\xc3\xa9", "na\xc3\xafve", "\xc3\x89T\xc3\x89",
	"stra\xc3\x9f" "e", "\xd0\xbc\xd0\xb8\xd1\x80", "\xce\xbb\xcf\x8c",
	"e\xcc\x81", "\xc3\x97", "\xc3\xb7", "\xc2\xa9", "\xc2\xbf",
	"\xe4\xb8\xad", "\xe6\x96\x87", "\xe5\x9b\xbd", "\xe4\xba\xba",
	"\xe3\x81\x82", "\xe3\x82\xab", "\xe3\x83\xbc", "\xef\xbd\xb1",
	"\xea\xb0\x80", "\xed\x9e\xa3", "\xe1\x84\x80", "\xe3\x84\xb1",
	"\xf0\xa0\x80\x80", "\xf0\x9f\x98\x80", "\xe2\x80\x94",
	"\xe3\x80\x82", "\xef\xbc\x8c", "\xef\xbc\xa1", "\xef\xbd\x9a",
	"\xef\xbe\x9f", "\xef\xbe\xa0", "\xef\xbf\xbd", "\xef\xb8\xb0",
	" ", " ", " ", "  ", "\n", "\t", "\r\n", ",", ".", "!", "-", "'",
	"\xe3\x80\x80", "\xc2\xa0",
};

static void
random_text(char *buf, size_t size, unsigned *state)
{
	size_t	 len = 0, n, k, plen;

	n = rand_r(state) % 60;
	buf[0] = '\0';
	for (k = 0; k < n; k++) {
		const char *pc = pieces[rand_r(state) %
		    (sizeof pieces / sizeof pieces[0])];

		plen = strlen(pc);
		if (len + plen + 1 > size)
			break;
		memcpy(buf + len, pc, plen + 1);
		len += plen;
	}
}

static void
check_random(void)
{
	char		 text[1024];
	unsigned	 state = 20261121, i, bad = 0, ngram, shingle, min;
	uint64_t	 seed;

	for (i = 0; i < 20000; i++) {
		random_text(text, sizeof text, &state);
		ngram = 1 + rand_r(&state) % NSD_SIMHASH_MAX_NGRAM;
		shingle = 2 + rand_r(&state) % (NSD_SIMHASH_MAX_SHINGLE - 1);
		min = 1 + rand_r(&state) % 12;
		seed = i % 4 == 0 ? 0 : (uint64_t)rand_r(&state) << 32 |
		    (unsigned)rand_r(&state);
		if (!agrees(text, ngram, shingle, min, seed) && ++bad >= 5)
			break;
	}
	tap_ok(bad == 0, "the reference agrees on 20000 random texts");

	/* More than 255 features: votes counted past a byte. */
	for (i = 0; i < 2000; i++) {
		size_t	 n = 0;

		random_text(text, sizeof text, &state);
		n = strlen(text);
		while (n + 6 < sizeof text) {
			memcpy(text + n, i % 2 ? " spam" : "\xe4\xb8\xad",
			    i % 2 ? 5 : 3);
			n += i % 2 ? 5 : 3;
		}
		text[n] = '\0';
		if (!agrees(text, 1 + i % 3, 2 + i % 4, 8, 0) && ++bad >= 5)
			break;
	}
	tap_ok(bad == 0, "the reference agrees with hundreds of features");

	/*
	 * Tens of thousands of features, most of them the same (and only
	 * that one for the first half): votes are counted 16 hashes at a
	 * time, and emptied from byte lanes every 255 batches, before a
	 * count can pass 255.
	 */
	for (i = 0; i < 8; i++) {
		static char	 big[1 << 18];
		size_t		 n = 0, plen;

		while (n < sizeof big - 64) {
			if (n > sizeof big / 2 && rand_r(&state) % 16 == 0)
				random_text(text, 32, &state);
			else
				strcpy(text, i % 2 ? " spam" : "\xe4\xb8\xad");
			plen = strlen(text);
			memcpy(big + n, text, plen);
			n += plen;
		}
		big[n] = '\0';
		if (!agrees(big, 1 + i, 1 + i % 5, 8, i) && ++bad >= 2)
			break;
	}
	tap_ok(bad == 0, "the reference agrees with tens of thousands of "
	    "features");

	/*
	 * Around 2048 and 4080 features, one word in three, two in three or
	 * every word the same: counts of a bit reach 128 in their byte lane,
	 * and then the lanes are emptied for the first time.
	 */
	for (i = 0; i < 3 * 10; i++) {
		static const size_t sizes[] = { 2047, 2048, 2049, 3000, 4079,
		    4080, 4081, 4095, 4096, 4097 };
		static char	 mid[4100 * 12];
		size_t		 n = 0, k;

		for (k = 0; k < sizes[i % 10]; k++)
			if ((unsigned)rand_r(&state) % 3 < i / 10 + 1)
				n += sprintf(mid + n, "spam ");
			else
				n += sprintf(mid + n, "w%u ",
				    (unsigned)rand_r(&state) % 1000);
		if (!agrees(mid, 2, 1, 8, 0) && ++bad >= 2)
			break;
	}
	tap_ok(bad == 0, "the reference agrees with 2048 to 4097 features");

	/*
	 * Shingles of one word, past the 8 words that the ring of word
	 * hashes holds (it once read past its end from the 9th word on).
	 */
	for (bad = 0, i = 0; i < 2000; i++) {
		random_text(text, sizeof text, &state);
		if (!agrees(text, 1 + i % 8, 1, 1, 0) && ++bad >= 2)
			break;
	}
	tap_ok(bad == 0 && agrees("one two three four five six seven "
	    "eight nine", 2, 1, 1, 0), "--shingle=1: the reference agrees "
	    "on random texts and past 8 words");
}

/*
 * Pieces that normalization changes, and some it leaves alone beside them:
 * '\r', U+1680, full-width digits, letters and punctuation (U+FF10, FF19,
 * FF21, FF3A, FF41, FF5A; FF0C, FF01, FF5E; FF5F and FF00, not folded),
 * other white space, words and CJK, and Han characters that fold.
 */
static const char *const norm_pieces[] = {
	"\r", "\r", "\r\n", "\r\r", "a", "Bc", "DEF", "x1", "9",
	"\xe1\x9a\x80", "\xef\xbc\x90", "\xef\xbc\x99", "\xef\xbc\xa1",
	"\xef\xbc\xba", "\xef\xbd\x81", "\xef\xbd\x9a", "\xef\xbc\x8c",
	"\xef\xbc\x81", "\xef\xbd\x9e", "\xef\xbd\x9f", "\xef\xbc\x80",
	"\xe2\x80\xa8", "\xc2\x85", "\xc2\xa0", "\xe3\x80\x80", " ", "\t",
	"\n", "\xe4\xb8\xad", "\xe6\x96\x87", "\xe3\x82\xab", "\xc3\xa9",
	"\xe3\x80\x82",
	/*
	 * Han folding (version 3): Traditional 體 and 發, and in four bytes
	 * U+2B37F (which folds to three) and U+2005E (to four).
	 */
	"\xe9\xab\x94", "\xe7\x99\xbc", "\xf0\xab\x8d\xbf",
	"\xf0\xa0\x81\x9e",
};

/*
 * nsd_simhash_compute() reads text without normalizing it until it meets
 * something that normalization changes, and then cuts the normalized text
 * instead: both ways must give the definition's SimHash, which is also
 * that of the normalized text.
 */
static void
check_normalization(void)
{
	struct nsd_buf	 norm = { 0 };
	char		 text[512];
	unsigned	 state = 16807, i, k, n, bad = 0, ngram, shingle;
	uint64_t	 a, b;
	size_t		 len, na, nb;

	for (i = 0; i < 20000; i++) {
		n = rand_r(&state) % 40;
		for (len = 0, k = 0; k < n; k++) {
			const char *pc = norm_pieces[rand_r(&state) %
			    (sizeof norm_pieces / sizeof norm_pieces[0])];

			memcpy(text + len, pc, strlen(pc));
			len += strlen(pc);
		}
		text[len] = '\0';
		ngram = 1 + rand_r(&state) % 3;
		shingle = 1 + rand_r(&state) % 3;
		if (!agrees(text, ngram, shingle, 1, 0)) {
			bad++;
			break;
		}
		nsd_text_normalize(text, len, &norm, NSD_NORM_VERSION);
		nsd_buf_putc(&norm, '\0');
		na = simhash(text, ngram, shingle, 1, 0, &a);
		nb = simhash(norm.data, ngram, shingle, 1, 0, &b);
		if (na != nb || a != b) {
			printf("# the normalized text differs: %zu, %016"
			    PRIx64 "; %zu, %016" PRIx64 "\n", na, a, nb, b);
			bad++;
			break;
		}
	}
	nsd_buf_free(&norm);
	tap_ok(bad == 0, "'\\r', U+1680, full-width forms, white space, Han "
	    "folding: the reference agrees, and so does the normalized text");
}

/*
 * Mostly ASCII letters, in words of every length, which are measured 16
 * bytes at a time; now and then a code point of 2, 3 or 4 bytes within a
 * word or between words.
 */
static void
check_ascii_words(void)
{
	static const char *const other[] = {
		"\xc3\xa9", "\xc3\x97", "\xe4\xb8\xad", "\xe2\x80\x94",
		"\xf0\x9f\x98\x80", "\xf0\xa0\x80\x80",
	};
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char		 text[700];
	unsigned	 state = 48271, i, bad = 0, r;
	size_t		 len, max;

	for (i = 0; i < 5000; i++) {
		max = 1 + rand_r(&state) % (sizeof text - 8);
		for (len = 0; len < max;) {
			r = rand_r(&state) % 100;
			if (r < 80)
				text[len++] = letters[rand_r(&state) %
				    (sizeof letters - 1)];
			else if (r < 95)
				text[len++] = " ,.-'_@[`{\n"[r % 11];
			else {
				const char *pc = other[rand_r(&state) %
				    (sizeof other / sizeof other[0])];

				memcpy(text + len, pc, strlen(pc));
				len += strlen(pc);
			}
		}
		text[len] = '\0';
		if (!agrees(text, 2, 1 + i % 4, 1, 0) && ++bad >= 3)
			break;
	}
	tap_ok(bad == 0, "the reference agrees on ASCII words of every "
	    "length");
}

/* Words longer than the 256 bytes of a word that are hashed. */
static void
check_long_words(void)
{
	char		 a[400], b[400];
	uint64_t	 fa, fb;

	memset(a, 'a', 300);
	a[300] = '\0';
	memcpy(b, a, 301);
	b[299] = 'b';
	tap_ok(agrees(a, 2, 3, 1, 0) && agrees(b, 2, 3, 1, 0) &&
	    simhash(a, 2, 3, 1, 0, &fa) == 1 &&
	    simhash(b, 2, 3, 1, 0, &fb) == 1 && fa == fb &&
	    fa == XXH3_64bits(a, 256),
	    "a word is hashed by its first 256 bytes");
	b[255] = 'b';
	tap_ok(simhash(b, 2, 3, 1, 0, &fb) == 1 && fa != fb,
	    "the 256th byte still counts");

	/*
	 * A code point across the 256th byte: the definition hashes the
	 * first 256 bytes; simhash.c leaves the code point out and goes on
	 * appending the ASCII letters after it.
	 */
	memset(a, 'a', 255);
	memcpy(a + 255, "\xc3\xa9xyz", 6);
	tap_ok(agrees(a, 2, 3, 1, 0), "a word's first 256 bytes, when a "
	    "code point crosses the 256th");
}

/* --- Block tables and distances --- */

static uint64_t
rand64(unsigned *state)
{
	return ((uint64_t)rand_r(state) << 62 ^ (uint64_t)rand_r(state) << 31 ^
	    (uint64_t)rand_r(state));
}

/*
 * Whether some set of at most k bit positions meets every mask, which
 * would let two fingerprints k bits apart differ under every mask. Bits
 * that lie in the same masks are alike, so it is enough to try sets of
 * such classes: there are few of them.
 */
static int
hitting_set_within(const uint64_t *masks, unsigned n, unsigned k,
    int *too_many)
{
	uint32_t	 cls[64], seen;	/* which masks hold each class */
	unsigned	 ncls = 0, b, t, c;
	uint64_t	 set;

	*too_many = 0;
	for (b = 0; b < 64; b++) {
		for (seen = 0, t = 0; t < n; t++)
			if (masks[t] >> b & 1)
				seen |= 1u << t;
		for (c = 0; c < ncls && cls[c] != seen; c++)
			continue;
		if (c == ncls)
			cls[ncls++] = seen;
	}
	if (ncls > 24) {
		*too_many = 1;
		return (1);
	}
	for (set = 0; set < (1ULL << ncls); set++) {
		if ((unsigned)__builtin_popcountll(set) > k)
			continue;
		for (seen = 0, c = 0; c < ncls; c++)
			if (set >> c & 1)
				seen |= cls[c];
		if (seen == (n == 32 ? ~0u : (1u << n) - 1))
			return (1);
	}
	return (0);
}

/* A with exactly d of its bits flipped, at random places. */
static uint64_t
flip(uint64_t a, unsigned d, unsigned *state)
{
	uint64_t	 bit;

	while (d > 0) {
		bit = (uint64_t)1 << (rand_r(state) % 64);
		if (a & bit)
			continue;
		a |= bit;
		d--;
	}
	return (a);
}

static int
agree_somewhere(const uint64_t *masks, unsigned n, uint64_t a, uint64_t b)
{
	unsigned	 t;

	for (t = 0; t < n; t++)
		if (((a ^ b) & masks[t]) == 0)
			return (1);
	return (0);
}

static void
check_tables(void)
{
	/* How many tables for k = 0..8, as nsdedup(1) says. */
	static const unsigned want[] = { 1, 2, 6, 10, 15, 6, 7, 8, 9 };
	uint64_t	 masks[NSD_SIMHASH_MAX_TABLES + 8], a, b, x;
	unsigned	 k, n, t, i, d, missed, state = 7, bits;
	int		 too_many, ok;
	double		 cand;

	for (k = 0; k <= NSD_SIMHASH_MAX_DISTANCE; k++) {
		memset(masks, 0, sizeof masks);
		n = nsd_simhash_tables(k, masks);
		tap_ok(n >= 1 && n <= NSD_SIMHASH_MAX_TABLES && n == want[k],
		    "k = %u: %u tables", k, n);
		for (ok = 1, t = 0; t < n; t++)
			ok &= masks[t] != 0;
		for (t = n; t < sizeof masks / sizeof masks[0]; t++)
			ok &= masks[t] == 0;
		tap_ok(ok, "k = %u: every mask has bits, none written past "
		    "the count", k);
		tap_ok(!hitting_set_within(masks, n, k, &too_many) &&
		    !too_many, "k = %u: no %u bits meet every mask", k, k);

		/* Random pairs within k agree under some mask. */
		for (missed = 0, i = 0; i < 20000; i++) {
			a = rand64(&state);
			d = rand_r(&state) % (k + 1);
			b = a ^ flip(0, d, &state);
			if (nsd_simhash_distance(a, b) != d ||
			    !agree_somewhere(masks, n, a, b))
				missed++;
		}
		/* k bits spread evenly, so in as many blocks as can be. */
		for (x = 0, i = 0; i < k; i++)
			x |= (uint64_t)1 << (64 * i / k);
		for (i = 0; i < 64; i++) {
			a = rand64(&state);
			b = a ^ (i == 0 ? x : x << i | x >> (64 - i));
			if (!agree_somewhere(masks, n, a, b))
				missed++;
		}
		tap_ok(missed == 0, "k = %u: pairs within %u agree under a "
		    "mask (%u missed)", k, k, missed);
		/* No bit is left out of every mask. */
		for (x = 0, t = 0; t < n; t++)
			x |= masks[t];
		tap_ok(x == ~0ULL, "k = %u: the masks cover all 64 bits", k);

		/* The expected candidates per lookup, at 10^7 entries. */
		for (cand = 0, t = 0; t < n; t++) {
			bits = (unsigned)__builtin_popcountll(masks[t]);
			cand += bits >= 63 ? 0 : 1e7 / (double)(1ULL << bits);
		}
		printf("# k = %u: %u tables, %.3g candidates per lookup "
		    "among 10^7 fingerprints\n", k, n, cand);
	}
}

static void
check_distance(void)
{
	tap_ok(nsd_simhash_distance(0, 0) == 0, "distance: equal is 0");
	tap_ok(nsd_simhash_distance(0, ~0ULL) == 64, "distance: 64 at most");
	tap_ok(nsd_simhash_distance(0x8000000000000001ULL, 1) == 1,
	    "distance: the top bit counts");
	tap_ok(nsd_simhash_distance(0xF0F0F0F0F0F0F0F0ULL,
	    0x0FF0F0F0F0F0F0F1ULL) == 9, "distance: bits that differ");
}

int
main(void)
{
	check_golden();
	check_one_feature();
	check_random();
	check_long_words();
	check_normalization();
	check_ascii_words();
	check_tables();
	check_distance();
	nsd_simhash_free(&sh);
	return (tap_done());
}
