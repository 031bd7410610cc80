/*
 * simhash.c: SimHash fingerprints (Charikar 2002), as nsdedup defines them.
 *
 * The definition (pinned by tests/unit/simhash_test.c):
 *
 *  1. The text is normalized as for nshash (the same in versions 1 and 2:
 *     full-width ASCII folded, white space runs collapsed; version 3
 *     folds Han characters too).
 *  2. It is cut into features. Each code point is of one of three kinds:
 *     - CJK: Han (U+3400..4DBF, U+4E00..9FFF, U+F900..FAFF,
 *       U+20000..3FFFF), Kana (U+3040..30FF, U+31F0..31FF, U+FF66..FF9F)
 *       and Hangul (U+1100..11FF, U+3130..318F, U+AC00..D7AF);
 *     - word: ASCII letters and digits, and every other code point from
 *       U+00C0 up except the punctuation and symbol blocks U+2000..2BFF,
 *       U+3000..303F, U+FE30..FE4F, U+FF00..FF65 and U+FFF0..FFFF
 *       (and U+00D7, U+00F7);
 *     - other: everything else, which separates features.
 *     A run of CJK code points gives its character n-grams (ngram code
 *     points each, overlapping; a run shorter than that gives itself). A
 *     run of word code points is a word, ASCII letters lower-cased; a
 *     feature is a shingle of that many consecutive words (shingle, with
 *     words counted across the whole text; fewer words than that give
 *     one feature of them all).
 *  3. A CJK n-gram's feature hash is XXH3-64 of its UTF-8 bytes with the
 *     seed; a word's is XXH3-64 of its lower-cased bytes (the first 256)
 *     with the seed. A shingle of several words w0, w1, ... (in order) has
 *     the hash fmix64(rotl(h(w0), 0) ^ rotl(h(w1), 21) ^ rotl(h(w2), 42)
 *     ^ ...), word i rotated left by 21 * i mod 64 bits, where fmix64 is
 *     MurmurHash3's finalizer (x ^= x >> 33; x *= 0xff51afd7ed558ccd;
 *     x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53; x ^= x >> 33): order counts,
 *     and no second pass of XXH3 over the words is needed.
 *  4. Every occurrence of a feature votes once on each of the 64 bits: for
 *     if the bit of its hash is 1, against if 0. So a feature weighs as
 *     often as it occurs. A bit of the SimHash is 1 when more votes are for
 *     than against; a tie gives 0.
 *  5. A text with fewer than min_features feature occurrences has no
 *     SimHash: it has nothing to compare, and is never a duplicate, since
 *     a handful of words says too little to match on.
 *
 * Counting votes bit by bit would cost 64 additions per feature. Instead
 * the 64 counts are kept bit-sliced, as in Harley and Seal's population
 * count: four words hold each count's low four bits (bit b of ones, twos,
 * fours and eights for count b), and a tree of carry-save adders, five
 * logical operations each, adds 16 hashes at a time to them, which leaves
 * one word of carries worth 16 each. Those are spread, a byte at a time,
 * through a table whose entries hold one bit per byte lane into 8 lane
 * counters of 8 bytes each, emptied into 32-bit counts before any lane
 * can pass 255.
 * Nothing is rounded: the counts, and so the fingerprint, are those of
 * counting bit by bit.
 *
 * The text is mostly cut as it is, which saves normalizing it into a
 * copy. Of what normalization does, collapsing and trimming white space
 * changes no feature, since every white space character but U+1680
 * separates features already; nor does folding the full-width punctuation
 * of U+FF01..U+FF5E to ASCII, since U+FF00..U+FF65 separates them too.
 * What can change features are full-width letters and digits, which
 * become ASCII word characters; U+1680, a word character that becomes a
 * space; and a '\r' dropped from between two code points that are not
 * separators, which joins them. The cutter gives up when it meets one of
 * those (a '\r' when a word or a CJK run ends at one that an ASCII
 * separator does not follow), and the text is then normalized and cut
 * again: normalized text has none of them, so the same cutter reads it to
 * the end, exactly as the definition does. Han folding (version 3) leaves
 * every character CJK, and so changes features but not where they are
 * cut: the lower-cased copy is folded too, and is the text the cutter
 * reads.
 *
 * The cutter reads a copy of the text with ASCII letters lower-cased
 * (and Han characters folded), which leaves every other byte alone, so
 * that a word is hashed where it lies (its first 256 bytes) and a CJK
 * n-gram too. ASCII words are measured 16 bytes at a time.
 */
#include "config.h"

#include <assert.h>
#include <pthread.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Features are short: XXH3 inlined hashes them in a few nanoseconds. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hanfold.h"
#include "minhash.h"
#include "simhash.h"
#include "text.h"

/*
 * KIND_NORMALIZE: normalization would change what the code point is.
 * KIND_MIXED: bmp_kind[] only, for a block of kinds that differ.
 */
enum kind { KIND_OTHER, KIND_WORD, KIND_CJK, KIND_NORMALIZE, KIND_MIXED };

/* The lower-cased copy ends with this many spaces, read by 16-byte loads. */
#define PAD	16

/* spread[b] has byte i set to bit i of b. */
static uint64_t	 spread[256];

/* The kinds of the ASCII characters, and of blocks of 16 code points. */
static unsigned char ascii_kind[128];
static unsigned char bmp_kind[0x10000 >> 4];

/*
 * The votes for bit b of the hashes number bit b of ones, plus 2 times bit
 * b of twos, 4 times that of fours and 8 times that of eights, plus 16
 * times byte b % 8 of sixteens[b / 8] and count[b].
 */
struct votes {
	uint64_t	 batch[16];	/* hashes yet to be counted */
	unsigned	 nbatch;
	uint64_t	 ones, twos, fours, eights;
	uint64_t	 sixteens[8];
	unsigned	 pending;	/* batches in sixteens, below 255 */
	int		 emptied;	/* into count, which is 0 until then */
	uint32_t	 count[64];
	size_t		 total;		/* hashes in the batches counted */
};

/* No votes; the batch and count are written before they are read. */
static void
votes_init(struct votes *v)
{
	v->nbatch = 0;
	v->ones = v->twos = v->fours = v->eights = 0;
	memset(v->sixteens, 0, sizeof v->sixteens);
	v->pending = 0;
	v->emptied = 0;
	v->total = 0;
}

/* A carry-save adder: a + b + c = 2 * *h + *l in every bit. */
static inline void
csa(uint64_t *h, uint64_t *l, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t	 u = a ^ b;

	*h = (a & b) | (u & c);
	*l = u ^ c;
}

/* Count the 16 hashes of the batch. */
static void
votes_batch(struct votes *v)
{
	const uint64_t	*d = v->batch;
	uint64_t	 twos_a, twos_b, fours_a, fours_b, eights_a, eights_b;
	uint64_t	 x;
	unsigned	 j, i;

	csa(&twos_a, &v->ones, v->ones, d[0], d[1]);
	csa(&twos_b, &v->ones, v->ones, d[2], d[3]);
	csa(&fours_a, &v->twos, v->twos, twos_a, twos_b);
	csa(&twos_a, &v->ones, v->ones, d[4], d[5]);
	csa(&twos_b, &v->ones, v->ones, d[6], d[7]);
	csa(&fours_b, &v->twos, v->twos, twos_a, twos_b);
	csa(&eights_a, &v->fours, v->fours, fours_a, fours_b);
	csa(&twos_a, &v->ones, v->ones, d[8], d[9]);
	csa(&twos_b, &v->ones, v->ones, d[10], d[11]);
	csa(&fours_a, &v->twos, v->twos, twos_a, twos_b);
	csa(&twos_a, &v->ones, v->ones, d[12], d[13]);
	csa(&twos_b, &v->ones, v->ones, d[14], d[15]);
	csa(&fours_b, &v->twos, v->twos, twos_a, twos_b);
	csa(&eights_b, &v->fours, v->fours, fours_a, fours_b);
	csa(&x, &v->eights, v->eights, eights_a, eights_b);
	/* Unrolled: the exit of a loop here is a branch mispredicted. */
	v->sixteens[0] += spread[x & 0xff];
	v->sixteens[1] += spread[(x >> 8) & 0xff];
	v->sixteens[2] += spread[(x >> 16) & 0xff];
	v->sixteens[3] += spread[(x >> 24) & 0xff];
	v->sixteens[4] += spread[(x >> 32) & 0xff];
	v->sixteens[5] += spread[(x >> 40) & 0xff];
	v->sixteens[6] += spread[(x >> 48) & 0xff];
	v->sixteens[7] += spread[x >> 56];
	v->nbatch = 0;
	v->total += 16;
	if (++v->pending < 255)
		return;
	if (!v->emptied)
		memset(v->count, 0, sizeof v->count);
	v->emptied = 1;
	for (j = 0; j < 8; j++) {
		for (i = 0; i < 8; i++)
			v->count[8 * j + i] +=
			    (v->sixteens[j] >> (8 * i)) & 0xff;
		v->sixteens[j] = 0;
	}
	v->pending = 0;
}

static inline void
vote(struct votes *v, uint64_t h)
{
	v->batch[v->nbatch++] = h;
	if (v->nbatch == 16)
		votes_batch(v);
}

/* The number of hashes voted. */
static inline size_t
votes_total(const struct votes *v)
{
	return (v->total + v->nbatch);
}

/*
 * The high bits of the 8 bytes of x, as 8 bits: the product moves bit 7
 * of byte i to bit 56 + i, and adds nothing else to the top byte.
 */
static inline uint64_t
high_bits(uint64_t x)
{
	return (((x & 0x8080808080808080ULL) * 0x0002040810204081ULL) >> 56);
}

/*
 * The bitwise majority of counts that were never emptied from the byte
 * lanes, 64 at once. Count b is 16 s + r, with s its byte in sixteens
 * (at most 254) and r its low four bits, and passes half the hashes,
 * 16 h + l (h below 128), when s > h, or s == h and r > l. r > l is
 * decided bit-sliced, from the top bit down; the bytes s are compared
 * 8 at a time, each with room for no borrow or carry to leave it.
 */
static uint64_t
votes_majority_lanes(const struct votes *v, size_t half)
{
	const uint64_t	 ones = 0x0101010101010101ULL;
	const uint64_t	 high = 0x8080808080808080ULL, low = ~high;
	const uint64_t	 r[4] = { v->ones, v->twos, v->fours, v->eights };
	uint64_t	 above = 0, same = 0, r_above = 0, r_same = ~0ULL, s, z;
	unsigned	 j, h = half >> 4, l = half & 15;

	for (j = 4; j-- > 0;) {
		if (l >> j & 1)
			r_same &= r[j];
		else {
			r_above |= r_same & r[j];
			r_same &= ~r[j];
		}
	}
	for (j = 0; j < 8; j++) {
		s = v->sixteens[j];
		/*
		 * s > h: a byte from 0x80 up is, h being below 128; for one
		 * below, (s | 0x80) - (h + 1) keeps its high bit just when
		 * s >= h + 1, and never borrows from the next byte.
		 */
		above |= high_bits(((s | high) - (h + 1) * ones) | s) <<
		    (8 * j);
		/* s == h: the bytes of s ^ h * ones that are 0, exactly. */
		z = s ^ h * ones;
		same |= high_bits(~(((z & low) + low) | z)) << (8 * j);
	}
	return (above | (same & r_above));
}

/* The bitwise majority of the votes; a tie gives 0. */
static uint64_t
votes_majority(struct votes *v)
{
	uint64_t	 fp = 0, rest;
	size_t		 c, total = votes_total(v);
	unsigned	 j, i;

	/* Hashes of 0 vote for nothing: they fill the last batch. */
	if (v->nbatch > 0) {
		memset(v->batch + v->nbatch, 0,
		    (16 - v->nbatch) * sizeof v->batch[0]);
		votes_batch(v);
	}
	/* A bit is 1 when more than half the hashes vote for it. */
	if (!v->emptied)
		return (votes_majority_lanes(v, total / 2));
	for (j = 0; j < 8; j++) {
		rest = spread[(v->ones >> (8 * j)) & 0xff] +
		    2 * spread[(v->twos >> (8 * j)) & 0xff] +
		    4 * spread[(v->fours >> (8 * j)) & 0xff] +
		    8 * spread[(v->eights >> (8 * j)) & 0xff];
		for (i = 0; i < 8; i++) {
			c = 16 * ((size_t)v->count[8 * j + i] +
			    ((v->sixteens[j] >> (8 * i)) & 0xff)) +
			    ((rest >> (8 * i)) & 0xff);
			fp |= (uint64_t)(c > total / 2) << (8 * j + i);
		}
	}
	return (fp);
}

/* The kind of a code point of normalized text, as the definition says. */
static enum kind
kind_of(uint32_t c)
{
	if (c < 0x80)
		return ((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' &&
		    (c | 0x20) <= 'z') ? KIND_WORD : KIND_OTHER);
	if ((c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
	    (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x3FFFF) ||
	    (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||
	    (c >= 0xFF66 && c <= 0xFF9F) || (c >= 0x1100 && c <= 0x11FF) ||
	    (c >= 0x3130 && c <= 0x318F) || (c >= 0xAC00 && c <= 0xD7AF))
		return (KIND_CJK);
	if (c < 0xC0 || c == 0xD7 || c == 0xF7 ||
	    (c >= 0x2000 && c <= 0x2BFF) || (c >= 0x3000 && c <= 0x303F) ||
	    (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF65) ||
	    (c >= 0xFFF0 && c <= 0xFFFF))
		return (KIND_OTHER);
	return (KIND_WORD);
}

/* The kind of a code point of text that is not normalized. */
static enum kind
raw_kind_of(uint32_t c)
{
	if (c == 0x1680 || (c >= 0xFF10 && c <= 0xFF19) ||
	    (c >= 0xFF21 && c <= 0xFF3A) || (c >= 0xFF41 && c <= 0xFF5A))
		return (KIND_NORMALIZE);
	return (kind_of(c));
}

/*
 * Build the tables (65,536 calls of raw_kind_of(), a millisecond) when
 * they are first needed, once whatever the threads: a run of nshash sets
 * up a SimHash too.
 */
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void
tables_init(void)
{
	uint32_t	 b, c;
	enum kind	 k;

	for (c = 0; c < 128; c++)
		ascii_kind[c] = raw_kind_of(c);
	for (b = 0; b < sizeof bmp_kind; b++) {
		k = raw_kind_of(b << 4);
		for (c = b << 4; c < (b + 1) << 4; c++)
			if (raw_kind_of(c) != k)
				k = KIND_MIXED;
		bmp_kind[b] = k;
	}
	for (b = 0; b < 256; b++)
		for (c = 0; c < 8; c++)
			if (b & (1u << c))
				spread[b] |= (uint64_t)1 << (8 * c);
}

/* Decode the code point at s (valid UTF-8); *len gets its length. */
static inline uint32_t
decode(const unsigned char *s, size_t *len)
{
	if (s[0] < 0x80) {
		*len = 1;
		return (s[0]);
	}
	if (s[0] < 0xE0) {
		*len = 2;
		return ((uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F));
	}
	if (s[0] < 0xF0) {
		*len = 3;
		return ((uint32_t)(s[0] & 0x0F) << 12 |
		    (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F));
	}
	*len = 4;
	return ((uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
	    (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F));
}

/* The raw kind of the code point at s, and its length in *len. */
static inline enum kind
kind_at(const unsigned char *s, size_t *len)
{
	uint32_t	 c;
	unsigned	 k;

	if (s[0] < 0x80) {
		*len = 1;
		return (ascii_kind[s[0]]);
	}
	c = decode(s, len);
	if (c < 0x10000 && (k = bmp_kind[c >> 4]) != KIND_MIXED)
		return (k);
	return (raw_kind_of(c));
}

void
nsd_simhash_init(struct nsd_simhash *sh, const struct nsd_simhash_params *p)
{
	memset(sh, 0, sizeof *sh);
	sh->p = *p;
}

void
nsd_simhash_free(struct nsd_simhash *sh)
{
	nsd_buf_free(&sh->norm);
	nsd_buf_free(&sh->lower);
}

static inline uint64_t
rotl(uint64_t x, unsigned r)
{
	return ((x << (r & 63)) | (x >> (-r & 63)));
}

/*
 * The ring of word hashes: the oldest word of a shingle of the most words
 * is read just before the newest overwrites it.
 */
#define SHINGLE_RING	NSD_SIMHASH_MAX_SHINGLE

/* What is being cut into features as the text is read. */
struct cutter {
	struct votes	 v;		/* SimHash: the features' votes */
	uint64_t	*min;		/* or MinHash's bins (minhash.h) */
	size_t		 binned;	/* and how many went into them */
	struct nsd_sketch *sketch;	/* and the sketch, or NULL */
	uint32_t	 below;		/* after cut(): the sketch's bound
					   (0: no sketch) */
	int		 unbounded;	/* the sketch has no bound set
					   beforehand */
	uint64_t	 window[SHINGLE_RING];	/* the last word hashes */
	uint64_t	 x;		/* the last shingle, unmixed */
	size_t		 words;		/* words so far */
};

/*
 * A feature occurrence: a vote, or into MinHash's bins, and into the
 * sketch when its value is at most *below, the sketch's bound that cut()
 * keeps in a register (0 without a sketch: values are odd); never stored.
 */
static inline void
emit(struct cutter *c, uint64_t h, int binning, uint32_t *below)
{
	uint32_t	 v = nsd_sketch_value(h);

	if (v <= *below)
		*below = nsd_sketch_insert(c->sketch, v);
	if (!binning) {
		vote(&c->v, h);
		return;
	}
	nsd_minhash_bin(c->min, h);
	c->binned++;
}

/*
 * Shingles are hashed as a sliding window rather than word by word. The
 * unmixed hash of words i..i+k-1 is
 *
 *	x(i) = rotl(h(i), 0) ^ rotl(h(i+1), 21) ^ ... ^ rotl(h(i+k-1), r),
 *
 * with r = 21 (k - 1) mod 64. Rotations add up modulo 64, so taking out
 * the oldest word (which is not rotated) and rotating what is left right
 * by 21 turns every other word's rotation into that of the place before
 * it: x(i+1) = rotr(x(i) ^ h(i), 21) ^ rotl(h(i+k), r). That is three
 * operations a word whatever the shingle, and while fewer than k words
 * have come, the same x is the unmixed hash of all of them.
 */
static inline void
shingle_add(struct cutter *c, uint64_t h, unsigned k)
{
	if (c->words >= k)
		c->x = rotl(c->x ^ c->window[(c->words - k) % SHINGLE_RING],
		    64 - 21) ^ rotl(h, 21 * (k - 1));
	else
		c->x ^= rotl(h, 21 * c->words);
	c->window[c->words++ % SHINGLE_RING] = h;
}

/*
 * Copy len bytes of in to out with ASCII letters lower-cased, and Han
 * characters folded when fold is set (version 3), then PAD spaces.
 * Returns the length of the copy, before PAD.
 */
static size_t
lower_copy(const char *in, size_t len, struct nsd_buf *out, int fold)
{
	unsigned char	*o;
	size_t		 i = 0;
#ifdef __SSE2__
	const __m128i	 before_a = _mm_set1_epi8('A' - 1);
	const __m128i	 after_z = _mm_set1_epi8('Z' + 1);
	const __m128i	 bit5 = _mm_set1_epi8(0x20);
	__m128i		 b, up;
#endif

	out->len = 0;
	nsd_buf_reserve(out, len + PAD);
	o = (unsigned char *)out->data;
#ifdef __SSE2__
	/* Signed compares: bytes from 0x80 up are below 'A'. */
	for (; i + 16 <= len; i += 16) {
		b = _mm_loadu_si128((const __m128i *)(in + i));
		up = _mm_and_si128(_mm_cmpgt_epi8(b, before_a),
		    _mm_cmplt_epi8(b, after_z));
		_mm_storeu_si128((__m128i *)(o + i),
		    _mm_or_si128(b, _mm_and_si128(up, bit5)));
	}
#endif
	for (; i < len; i++)
		o[i] = in[i] >= 'A' && in[i] <= 'Z' ? in[i] | 0x20 : in[i];
	if (fold)
		len = nsd_hanfold_text(out->data, len);
	memset(o + len, ' ', PAD);
	out->len = len;
	return (len);
}

/*
 * Where the ASCII letters and digits from s[i] on end: s is lower-cased,
 * and its PAD spaces stop the last word.
 */
static inline size_t
ascii_word_end(const unsigned char *s, size_t i)
{
#ifdef __SSE2__
	const __m128i	 before_a = _mm_set1_epi8('a' - 1);
	const __m128i	 after_z = _mm_set1_epi8('z' + 1);
	const __m128i	 before_0 = _mm_set1_epi8('0' - 1);
	const __m128i	 after_9 = _mm_set1_epi8('9' + 1);
	__m128i		 b, w;
	unsigned	 end;

	for (;; i += 16) {
		b = _mm_loadu_si128((const __m128i *)(s + i));
		w = _mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(b, before_a),
		    _mm_cmplt_epi8(b, after_z)), _mm_and_si128(
		    _mm_cmpgt_epi8(b, before_0), _mm_cmplt_epi8(b, after_9)));
		if ((end = ~_mm_movemask_epi8(w) & 0xffff) != 0)
			return (i + __builtin_ctz(end));
	}
#else
	while (s[i] < 0x80 && ascii_kind[s[i]] == KIND_WORD)
		i++;
	return (i);
#endif
}

/*
 * Whether a run of features that ends at s[i] ends for good, as it does in
 * the normalized text: not at a '\r' that might join it to what follows.
 */
static inline int
run_ends(const unsigned char *s, size_t i)
{
	return (s[i] != '\r' || (s[i + 1] != '\r' && s[i + 1] < 0x80 &&
	    ascii_kind[s[i + 1]] == KIND_OTHER));
}

/*
 * Cut the lower-cased text s[0..n) (followed by PAD spaces) into features
 * and vote (or, binning, put them into MinHash's bins), in c from the
 * start. Returns 0,
 * having given up, at what normalization would change; never on
 * normalized text. Inlined into cut_voting() and cut_binning(), which are
 * flattened, so that XXH3, which GCC would otherwise call for every
 * feature, is inlined into the loops, and neither pays for the other's
 * sink.
 */
static inline __attribute__((always_inline)) int
cut(const struct nsd_simhash_params *p, struct cutter *c,
    const unsigned char *s, size_t n, int binning)
{
	size_t		 i = 0, start, cl, chars, first;
	size_t		 ring[NSD_SIMHASH_MAX_NGRAM];
	enum kind	 k;
	uint32_t	 below = 0;

	if (binning) {
		nsd_minhash_clear(c->min);
		c->binned = 0;
	} else
		votes_init(&c->v);
	/* About a feature in 3 (Han) to 6 (English) bytes: n / 4. */
	if (c->sketch != NULL) {
		nsd_sketch_clear(c->sketch, c->unbounded ? 0 : n / 4);
		below = c->sketch->below;
	}
	c->x = 0;
	c->words = 0;
	while (i < n) {
		if ((k = kind_at(s + i, &cl)) == KIND_OTHER) {
			i += cl;
			continue;
		}
		if (k == KIND_NORMALIZE)
			return (0);
		start = i;
		if (k == KIND_WORD) {
			/* ASCII 16 bytes at a time, the rest one by one. */
			i += cl;
			while ((i = ascii_word_end(s, i), s[i] >= 0x80) &&
			    kind_at(s + i, &cl) == KIND_WORD)
				i += cl;
			shingle_add(c, XXH3_64bits_withSeed(s + start,
			    i - start < 256 ? i - start : 256, p->seed),
			    p->shingle);
			if (c->words >= p->shingle)
				emit(c, p->shingle == 1 ?
				    c->window[(c->words - 1) % SHINGLE_RING] :
				    nsd_fmix64(c->x), binning, &below);
		} else {
			/* Each code point completes an n-gram. */
			chars = 0;
			do {
				ring[chars++ % NSD_SIMHASH_MAX_NGRAM] = i;
				i += cl;
				if (chars >= p->ngram) {
					first = ring[(chars - p->ngram) %
					    NSD_SIMHASH_MAX_NGRAM];
					emit(c, XXH3_64bits_withSeed(
					    s + first, i - first, p->seed),
					    binning, &below);
				}
			} while (kind_at(s + i, &cl) == KIND_CJK);
			if (chars < p->ngram)
				emit(c, XXH3_64bits_withSeed(s + start,
				    i - start, p->seed), binning, &below);
		}
		if (!run_ends(s, i))
			return (0);
	}
	c->below = below;
	return (1);
}

static int __attribute__((flatten))
cut_voting(const struct nsd_simhash_params *p, struct cutter *c,
    const unsigned char *s, size_t n)
{
	return (cut(p, c, s, n, 0));
}

static int __attribute__((flatten))
cut_binning(const struct nsd_simhash_params *p, struct cutter *c,
    const unsigned char *s, size_t n)
{
	return (cut(p, c, s, n, 1));
}

/*
 * Cut text[0..len) into c, normalizing it first only when the cutter
 * gives up on the text as it is; then the last feature of a text of fewer
 * words than a shingle: one feature of them all.
 */
static void
cut_text(struct nsd_simhash *sh, struct cutter *c, const char *text,
    size_t len, int binning)
{
	int	(*cutf)(const struct nsd_simhash_params *, struct cutter *,
		    const unsigned char *, size_t) =
		    binning ? cut_binning : cut_voting;

	size_t	 n;

	pthread_once(&tables_once, tables_init);
	c->unbounded = 0;
	n = lower_copy(text, len, &sh->lower, sh->p.version >=
	    NSD_NORM_HANFOLD);
	if (!cutf(&sh->p, c, (unsigned char *)sh->lower.data, n)) {
		/* Normalized, it is folded already. */
		nsd_text_normalize(text, len, &sh->norm, sh->p.version);
		n = lower_copy(sh->norm.data, sh->norm.len, &sh->lower, 0);
		if (!cutf(&sh->p, c, (unsigned char *)sh->lower.data, n))
			assert(!"normalized text is cut whole");
	}
	/* Rare: a text of few features for its length, cut again. */
	if (c->sketch != NULL && nsd_sketch_thin(c->sketch)) {
		c->unbounded = 1;
		if (!cutf(&sh->p, c, (unsigned char *)sh->lower.data, n))
			assert(!"a text is cut as it was");
	}
	if (c->words > 0 && c->words < sh->p.shingle)
		emit(c, c->words == 1 ? c->window[0] : nsd_fmix64(c->x),
		    binning, &c->below);
}

size_t
nsd_simhash_compute(struct nsd_simhash *sh, const char *text, size_t len,
    uint64_t *fp, struct nsd_sketch *sketch)
{
	struct cutter	 c;
	size_t		 n;

	c.sketch = sketch;
	cut_text(sh, &c, text, len, 0);
	if ((n = votes_total(&c.v)) == 0 || n < sh->p.min_features)
		return (n);
	*fp = votes_majority(&c.v);
	return (n);
}

size_t
nsd_simhash_minima(struct nsd_simhash *sh, const char *text, size_t len,
    uint64_t *min, struct nsd_sketch *sketch)
{
	struct cutter	 c;

	c.min = min;
	c.sketch = sketch;
	cut_text(sh, &c, text, len, 1);
	return (c.binned);
}

static unsigned
choose(unsigned n, unsigned k)
{
	unsigned	 r = 1, i;

	for (i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return (r);
}

/*
 * Block tables (Manku, Jain and Das Sarma 2007). Cut the 64 bits into b
 * blocks; two fingerprints within distance k differ in at most k of them,
 * so they agree on some m = b - k blocks. One table per choice of m
 * blocks, keyed by those bits, finds every such pair: C(b, m) tables, and
 * each lookup meets the entries that agree on about 64m/b bits by chance.
 * With N entries per table that is C(b, m) * N / 2^(64m/b) candidates.
 * b is chosen to minimise tables + candidates for an index of 10^7
 * records, with at most 16 tables: for k = 3, 5 blocks and 10 tables of
 * about 26 bits (2 candidates per lookup at 10^7); k = 2, 4 blocks and 6
 * tables of 32 bits; k = 4, 6 blocks and 15 tables of about 21 bits
 * (about 57 candidates at 10^7).
 */
unsigned
nsd_simhash_tables(unsigned k, uint64_t *masks)
{
	double		 best_cost = 0, cost, cand;
	unsigned	 b, m, best_b = k + 1, t = 0, i, sel[64], bits;
	uint64_t	 block[64];

	for (b = k + 1; b <= k + 8 && b <= 64; b++) {
		m = b - k;
		if (choose(b, m) > NSD_SIMHASH_MAX_TABLES)
			continue;
		bits = 64 * m / b < 63 ? 64 * m / b : 63;
		cand = choose(b, m) * 1e7 / (double)((uint64_t)1 << bits);
		cost = choose(b, m) + cand;
		if (t++ == 0 || cost < best_cost) {
			best_cost = cost;
			best_b = b;
		}
	}
	b = best_b;
	m = b - k;
	for (i = 0; i < b; i++) {
		unsigned	 lo = 64 * i / b, hi = 64 * (i + 1) / b;

		block[i] = (hi - lo == 64 ? ~0ULL :
		    (((uint64_t)1 << (hi - lo)) - 1) << lo);
	}
	/* Every choice of m blocks of b, in lexicographic order. */
	for (i = 0; i < m; i++)
		sel[i] = i;
	for (t = 0;;) {
		masks[t] = 0;
		for (i = 0; i < m; i++)
			masks[t] |= block[sel[i]];
		t++;
		for (i = m; i-- > 0;)
			if (sel[i] < b - m + i)
				break;
		if (i == (unsigned)-1)
			break;
		sel[i]++;
		for (i++; i < m; i++)
			sel[i] = sel[i - 1] + 1;
	}
	return (t);
}
