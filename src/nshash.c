/*
 * nshash.c: fingerprints from a text's longest sentences.
 *
 * The idea (from the reference Python nshash package): copies of a news
 * story made by other sites keep most of its long sentences intact, while
 * unrelated stories almost never share a long sentence. So hash only the n
 * longest sentences and call two texts near-duplicates when they share
 * hashes: any one, in the reference; --min-match of them (2 by default),
 * or all of a text's when it has fewer, in method_nshash.c. Lookups are
 * exact, O(1) per fingerprint, and a text yields at most n of them.
 *
 * Definition, version 2 (the default for new indexes):
 *  1. Normalize the text (text.c): drop '\r', fold full-width ASCII,
 *     collapse white space to ' ' or '\n', trim. Then read every markup
 *     tag ("<p>", "</div>", "<br>") as a space.
 *  2. Split at ': ; ? ! 。 】' and at '.' before white space or the end;
 *     drop empty pieces. A line break ends no sentence: a text wrapped at
 *     other places, or with its paragraphs run together, keeps its
 *     sentences.
 *  3. A sentence is what is left of a piece without its white space, so
 *     that hard-wrapped Chinese (a newline inside a sentence) and spaced
 *     or indented copies give the same sentences. It qualifies when it has
 *     more than min_length code points and at least one letter or digit
 *     (a row of dashes is not a sentence).
 *  4. Take the n longest distinct qualifying sentences, ties in text order;
 *     each fingerprint is XXH3-64 of the sentence's UTF-8 bytes.
 *  5. When none qualifies, a text (without white space) with more than
 *     min_length letters and digits gets one fingerprint of its whole;
 *     anything less has nothing to compare and gets no fingerprint at all.
 *
 * Exact repeats.  A text that has something to compare also gets the hash
 * of its whole (tags read as spaces, white space dropped). The pipeline
 * keeps it under a key of its own, so that a text seen again is found in
 * its group whatever --min-match and --common say of its sentences.
 *
 * The sketch (sketch.c), that confirms a match on the whole text, is of
 * windows of the text as its sentences are cut from (white space dropped
 * from version 2 on): 16 bytes from each anchor (sketch_text()), about 3
 * English words or 5 Chinese characters. Sentences would be cheaper but
 * too coarse: a reply that quotes two sentences of a short post shares a
 * third of its sentences, and a copy with a word changed in each of a
 * few sentences shares few.
 *
 * Version 1, which indexes made before version 2 keep: the same, except
 * that step 1 leaves tags as they are, step 2 also splits at every line
 * break, step 3 keeps a piece's inner spaces (the piece itself is the
 * sentence) and there is no hash of the whole.
 *
 * Beside each fingerprint, the caller may learn whether its sentence looks
 * like program code or markup (code_like()): script and CSS that a
 * crawler's text extraction let through are the same on every page of a
 * site and often longer than any sentence of the article. The pipeline
 * passes over such sentences (see "Boilerplate" in pipeline.c); they stay
 * fingerprints, so that the definition, and existing indexes, do not
 * change.
 *
 * The compat rule reproduces the reference instead: no normalization, its
 * delimiter set, pieces longer than min_length, duplicates kept, and, when
 * nothing qualifies, the hash of the empty string (so every short text
 * falls into one group, which is the reference's known defect).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "cpu.h"
#include "nshash.h"
#include "utf8.h"

int
nsd_nshash_init(struct nsd_nshash *h, const struct nsd_nshash_params *p,
    struct nsd_error *err)
{
	memset(h, 0, sizeof *h);
	h->p = *p;
	if (h->p.sentences < 1 || h->p.sentences > NSD_NSHASH_MAX_SENTENCES)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "sentences must be between 1 and %d",
		    NSD_NSHASH_MAX_SENTENCES));
	if (!p->compat && (p->version < NSD_NORM_OLDEST ||
	    p->version > NSD_NORM_VERSION))
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "no normalization version %u", p->version));
	h->text = nsd_text_new(p->compat ? NSD_SPLIT_COMPAT :
	    p->version == 1 ? NSD_SPLIT_DEFAULT : NSD_SPLIT_PROSE, err);
	return (h->text == NULL ? -1 : 0);
}

void
nsd_nshash_free(struct nsd_nshash *h)
{
	nsd_text_free(h->text);
	nsd_buf_free(&h->norm);
	nsd_buf_free(&h->flat);
	free(h->pieces);
	memset(h, 0, sizeof *h);
}

/* A sentence is code when one in this many of its code points is a symbol. */
#define NSD_CODE_RATIO	8

/*
 * The symbols of code: { } [ ] ( ) < > = ; & | $ \\ / * + " ' _ # @ ^ ~ `
 * and %, all ASCII.
 */
static const unsigned char symbol[256] = {
	['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1, ['('] = 1,
	[')'] = 1, ['<'] = 1, ['>'] = 1, ['='] = 1, [';'] = 1,
	['&'] = 1, ['|'] = 1, ['$'] = 1, ['\\'] = 1, ['/'] = 1,
	['*'] = 1, ['+'] = 1, ['"'] = 1, ['\''] = 1, ['_'] = 1,
	['#'] = 1, ['@'] = 1, ['^'] = 1, ['~'] = 1, ['`'] = 1,
	['%'] = 1
};

#if NSD_HAVE_AVX2
/*
 * The symbols among s[0..len), 32 bytes at a time. A byte is a symbol when
 * the class of its high nibble and the class of its low nibble share a
 * bit: bit 0 for high nibble 2 (" # $ % & ' ( ) * + /), bit 1 for 3 and 7
 * (; < = > { | } ~), bit 2 for 4 and 6 (@ `), bit 3 for 5 ([ \\ ] ^ _).
 * Bytes from 0x80 have high nibble classes of 0.
 */
__attribute__((target("avx2,popcnt"))) static size_t
count_symbols_avx2(const unsigned char *s, size_t len)
{
	const __m256i	 high = _mm256_setr_epi8(0, 0, 1, 2, 4, 8, 4, 2,
	    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 8, 4, 2,
	    0, 0, 0, 0, 0, 0, 0, 0);
	const __m256i	 low = _mm256_setr_epi8(4, 0, 1, 1, 1, 1, 1, 1,
	    1, 1, 1, 11, 10, 10, 10, 9, 4, 0, 1, 1, 1, 1, 1, 1,
	    1, 1, 1, 11, 10, 10, 10, 9);
	const __m256i	 nibble = _mm256_set1_epi8(0x0F);
	__m256i		 b, cls;
	size_t		 i = 0, count = 0;

	for (; len - i >= 32; i += 32) {
		b = _mm256_loadu_si256((const __m256i *)(s + i));
		cls = _mm256_and_si256(_mm256_shuffle_epi8(high,
		    _mm256_and_si256(_mm256_srli_epi16(b, 4), nibble)),
		    _mm256_shuffle_epi8(low, _mm256_and_si256(b, nibble)));
		count += 32 - __builtin_popcount((unsigned)_mm256_movemask_epi8(
		    _mm256_cmpeq_epi8(cls, _mm256_setzero_si256())));
	}
	for (; i < len; i++)
		count += symbol[s[i]];
	return (count);
}
#endif

/*
 * Whether s[0..len), of cps code points, looks like program code or
 * markup. Prose has few of these symbols: in the shared news corpora,
 * under 0.1% of the sentences of Reuters, the BBC and Sina reach the
 * ratio; 20 Newsgroups' ASCII art and hkcnews' leaked link markup do.
 */
static int
code_like(const char *s, size_t len, size_t cps)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i, count = 0;

#if NSD_HAVE_AVX2
	if (nsd_simd() == NSD_SIMD_AVX2)
		return (count_symbols_avx2(p, len) * NSD_CODE_RATIO >= cps);
#endif
	for (i = 0; i < len; i++)
		count += symbol[p[i]];
	return (count * NSD_CODE_RATIO >= cps);
}

/*
 * An anchor is an ASCII byte whose low five bits are 0x13 (s, S, 3 and a
 * control character), or a byte from 0x80 whose low four bits are 3 (one
 * UTF-8 continuation byte in 16, and the lead byte of U+3000 to U+3FFF,
 * CJK punctuation among them).
 */
static int
is_anchor(unsigned char b)
{
	return ((b & 0x9F) == 0x13 || (b & 0x8F) == 0x83);
}

#ifdef __SSE2__
/* The anchors among the 16 bytes at s, a bit each. */
static inline uint64_t
anchors16(const char *s)
{
	const __m128i	 ascii = _mm_set1_epi8((char)0x9F);
	const __m128i	 ascii_anchor = _mm_set1_epi8(0x13);
	const __m128i	 other = _mm_set1_epi8((char)0x8F);
	const __m128i	 other_anchor = _mm_set1_epi8((char)0x83);
	__m128i		 b = _mm_loadu_si128((const __m128i *)s);

	return ((unsigned)_mm_movemask_epi8(_mm_or_si128(
	    _mm_cmpeq_epi8(_mm_and_si128(b, ascii), ascii_anchor),
	    _mm_cmpeq_epi8(_mm_and_si128(b, other), other_anchor))));
}
#endif

/* The windows at s + at[0..n) into sketch; at is overwritten. */
static void
add_windows(struct nsd_sketch *sketch, const char *s, uint32_t *at,
    size_t n)
{
	size_t	 k;

	for (k = 0; k < n; k++)
		at[k] = nsd_sketch_value(nsd_sketch_hash16(s + at[k]));
	nsd_sketch_add_values(sketch, at, n);
}

/*
 * The elements of the sketch of s[0..len): the NSD_NSHASH_WINDOW bytes
 * from each anchor (is_anchor()). Anchors are about one byte in 16 of
 * English text and one in 20 to 45 of Chinese, and an edit moves none but
 * its own: two texts that share a passage share its windows, wherever it
 * starts.
 */
static void
sketch_windows(struct nsd_sketch *sketch, const char *s, size_t len,
    uint64_t expected)
{
	size_t		 i = 0, end;
#ifdef __SSE2__
	uint32_t	 at[NSD_SKETCH_POSITIONS + 64];
	size_t		 n = 0;
	uint64_t	 m;
#endif

	/* A bound for about expected anchors (0: none). */
	nsd_sketch_clear(sketch, expected);
	if (len < NSD_NSHASH_WINDOW)
		return;
	end = len - NSD_NSHASH_WINDOW + 1;	/* the anchors are before */
#ifdef __SSE2__
	/* Positions are offsets from s: a record is less than 4 GiB. */
	for (; i + 64 <= end; i += 64) {
		m = anchors16(s + i) | anchors16(s + i + 16) << 16 |
		    anchors16(s + i + 32) << 32 | anchors16(s + i + 48) << 48;
		n = nsd_sketch_flatten(at, n, (uint32_t)i, m);
		if (n >= NSD_SKETCH_POSITIONS || i + 128 > end) {
			add_windows(sketch, s, at, n);
			n = 0;
		}
	}
#endif
	for (; i < end; i++)
		if (is_anchor((unsigned char)s[i]))
			nsd_sketch_add(sketch, nsd_sketch_hash16(s + i));
}

/*
 * The sketch of s[0..len): its windows, made again without a bound when it
 * left too few values, and its numbers.
 */
static void
sketch_text(struct nsd_text_sketch *sketch, const char *s, size_t len)
{
	sketch_windows(&sketch->elements, s, len, len / 20);
	if (nsd_sketch_thin(&sketch->elements))
		sketch_windows(&sketch->elements, s, len, 0);
	nsd_sketch_numbers(&sketch->numbers, s, len);
}

/*
 * A text with fingerprints and no window (a short text, fingerprinted
 * whole) is one element: its first fingerprint. Returns n.
 */
static size_t
sketch_whole(struct nsd_text_sketch *sketch, const uint64_t *fps, size_t n)
{
	if (sketch != NULL && sketch->elements.n == 0 && n > 0)
		nsd_sketch_add(&sketch->elements, fps[0]);
	return (n);
}

struct candidate {
	const char	*s;
	size_t		 len;
	size_t		 cps;
	uint64_t	 hash;
};

size_t
nsd_nshash_compute(struct nsd_nshash *h, const char *text, size_t len,
    uint64_t *fps, unsigned char *code, struct nsd_text_sketch *sketch)
{
	struct candidate best[NSD_NSHASH_MAX_SENTENCES], c;
	const char	*s = text;
	size_t		 npieces, i, j, nbest = 0, want = h->p.sentences;
	size_t		 min = h->p.min_length;
	int		 compat = h->p.compat;
	int		 flat = !compat && h->p.version >= 2;

	h->has_whole = 0;
	if (!compat) {
		nsd_text_normalize(text, len, &h->norm, h->p.version);
		if (flat)
			nsd_text_strip_tags(&h->norm);
		s = h->norm.data;
		len = h->norm.len;
	}
	npieces = nsd_text_split(h->text, s, len, &h->pieces, &h->pieces_cap);
	if (flat) {
		/* The sentences, and the whole, without their white space. */
		nsd_text_flatten(h->text, s, len, h->pieces, npieces,
		    &h->flat);
		s = h->flat.data;
		len = h->flat.len;
	}

	/*
	 * Keep the best candidates sorted by length, longest first; a new one
	 * must be strictly longer than the last kept to displace it, so that
	 * ties go to the earlier sentence. A piece's code points are at most
	 * its bytes, which lets most short pieces be passed over uncounted.
	 */
	if (sketch != NULL)
		sketch_text(sketch, s, len);
	for (i = 0; i < npieces; i++) {
		c.s = s + h->pieces[i].start;
		c.len = h->pieces[i].len;
		if (c.len <= min ||
		    (nbest == want && c.len <= best[nbest - 1].cps))
			continue;
		c.cps = nsd_utf8_count(c.s, c.len);
		if (c.cps <= min ||
		    (nbest == want && c.cps <= best[nbest - 1].cps))
			continue;
		c.hash = XXH3_64bits_withSeed(c.s, c.len, h->p.seed);
		if (!compat) {
			for (j = 0; j < nbest && best[j].hash != c.hash; j++)
				;
			if (j < nbest)
				continue;	/* the same sentence again */
			if (!nsd_text_has_word_char(h->text, c.s, c.len))
				continue;
		}
		if (nbest < want)
			nbest++;
		for (j = nbest - 1; j > 0 && best[j - 1].cps < c.cps; j--)
			best[j] = best[j - 1];
		best[j] = c;
	}
	/* Only the chosen are looked at for code: s still holds them all. */
	for (i = 0; i < nbest; i++) {
		fps[i] = best[i].hash;
		if (code != NULL)
			code[i] = code_like(best[i].s, best[i].len,
			    best[i].cps);
	}
	if (compat && nbest == 0) {
		fps[0] = XXH3_64bits_withSeed("", 0, h->p.seed);
		nbest = 1;
	}
	if (compat)
		return (sketch_whole(sketch, fps, nbest));

	if (nbest == 0) {
		if (code != NULL)
			code[0] = 0;
		if (!nsd_text_more_word_chars(h->text, s, len, min))
			return (0);
		fps[0] = XXH3_64bits_withSeed(s, len, h->p.seed);
		nbest = 1;
	}
	if (flat) {
		h->whole = XXH3_64bits_withSeed(s, len, h->p.seed);
		h->has_whole = 1;
	}
	return (sketch_whole(sketch, fps, nbest));
}

uint64_t
nsd_nshash_mark(uint64_t fp, unsigned level)
{
	uint64_t	 x = fp + level * 0x9E3779B97F4A7C15ULL;

	/* The finalizer of SplitMix64: every bit of x moves every bit. */
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return (x ^ (x >> 31));
}

uint64_t
nsd_nshash_whole_key(uint64_t whole)
{
	return (nsd_nshash_mark(whole, 1));
}
