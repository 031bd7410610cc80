/*
 * hanfold.c: Han script folding's lookups (hanfold.h).
 *
 * A character of the Basic Multilingual Plane is looked up by its code
 * point: a bit says whether it folds (8 KiB, which stays in the first-level
 * cache while Chinese text is read), and a table of 64 Ki entries says
 * what to, itself when it does not fold. The rest, rare characters of the
 * extension blocks, are found by binary search among the pairs.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "cpu.h"
#include "hanfold.h"
#include "utf8.h"
#include "util.h"

uint64_t	 nsd_hanfold_bmp_bits[0x10000 / 64];
uint16_t	 nsd_hanfold_bmp_to[0x10000];

static size_t	 kept;		/* pairs in the lookups */
static size_t	 astral;	/* the first pair beyond the BMP */
static uint64_t	 checksum;

static pthread_once_t	 once = PTHREAD_ONCE_INIT;

/* The length of c in UTF-8. */
static size_t
utf8_length(uint32_t c)
{
	char	 buf[4];

	return (nsd_utf8_encode(c, buf));
}

/*
 * Whether the lookups can take the pair: a fold that grows the text, or a
 * BMP fold that does not stay three bytes, cannot be done in place.
 * src/gen-hanfold makes no such pair; the unit test checks that none
 * is left out.
 */
static int
usable(const uint32_t *pair)
{
	if (utf8_length(pair[1]) > utf8_length(pair[0]))
		return (0);
	return (pair[0] >= 0x10000 || (pair[0] >= 0x800 && pair[1] >= 0x800));
}

static void
init_once(void)
{
	unsigned char	*le = xmalloc(8 * nsd_hanfold_npairs + 1);
	const uint32_t	*pair;
	size_t		 i, j;

	for (i = 0; i < 0x10000; i++)
		nsd_hanfold_bmp_to[i] = (uint16_t)i;
	astral = nsd_hanfold_npairs;
	for (i = 0; i < nsd_hanfold_npairs; i++) {
		pair = nsd_hanfold_pairs[i];
		for (j = 0; j < 4; j++) {
			le[8 * i + j] = (unsigned char)(pair[0] >> (8 * j));
			le[8 * i + 4 + j] = (unsigned char)(pair[1] >> (8 * j));
		}
		if (pair[0] >= 0x10000 && astral == nsd_hanfold_npairs)
			astral = i;
		if (!usable(pair))
			continue;
		kept++;
		if (pair[0] < 0x10000) {
			nsd_hanfold_bmp_bits[pair[0] >> 6] |=
			    (uint64_t)1 << (pair[0] & 63);
			nsd_hanfold_bmp_to[pair[0]] = (uint16_t)pair[1];
		}
	}
	checksum = XXH3_64bits(le, 8 * nsd_hanfold_npairs);
	free(le);
}

void
nsd_hanfold_init(void)
{
	pthread_once(&once, init_once);
}

size_t
nsd_hanfold_size(void)
{
	return (kept);
}

uint64_t
nsd_hanfold_checksum(void)
{
	return (checksum);
}

uint32_t
nsd_hanfold(uint32_t c)
{
	size_t	 lo = astral, hi = nsd_hanfold_npairs, mid;

	if (c < 0x10000)
		return (nsd_hanfold_bmp_to[c]);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (nsd_hanfold_pairs[mid][0] < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nsd_hanfold_npairs && nsd_hanfold_pairs[lo][0] == c &&
	    usable(nsd_hanfold_pairs[lo]))
		return (nsd_hanfold_pairs[lo][1]);
	return (c);
}

size_t
nsd_hanfold4(const unsigned char *p, unsigned char *o)
{
	uint32_t	 c = (uint32_t)(p[0] & 0x07) << 18 |
			    (uint32_t)(p[1] & 0x3F) << 12 |
			    (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);

	return (nsd_utf8_encode(nsd_hanfold(c), (char *)o));
}

/*
 * The rest of the text, from s[r] on, folded and moved to s[w], w < r:
 * after a character folded shorter, which is rare.
 */
static size_t
fold_moving(unsigned char *s, size_t w, size_t r, size_t len)
{
	while (r < len) {
		if (s[r] < 0xE0)
			s[w++] = s[r++];
		else if (s[r] < 0xF0) {
			memmove(s + w, s + r, 3);
			nsd_hanfold3(s + w);
			w += 3;
			r += 3;
		} else {
			w += nsd_hanfold4(s + r, s + w);
			r += 4;
		}
	}
	return (w);
}

/* The code point of three bytes of UTF-8 read as a little-endian word. */
static inline uint32_t
code_point3(uint32_t w)
{
	return ((w & 0x0F) << 12 | (w & 0x3F00) >> 2 | (w & 0x3F0000) >> 16);
}

#if NSD_HAVE_AVX2
/*
 * Fold the eight characters of three bytes at s[0], s[3], ... s[21]: each
 * 128-bit lane takes four (the second lane from s[12]) as 32-bit numbers,
 * which become code points; one gather reads their eight words of the
 * bitmap (as 32-bit words, little-endian), and the characters whose bit
 * is set are written again.
 */
NSD_TARGET_AVX2 static inline void
fold8_avx2(unsigned char *s)
{
	const __m256i	 take = _mm256_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1,
	    6, 7, 8, -1, 9, 10, 11, -1, 0, 1, 2, -1, 3, 4, 5, -1,
	    6, 7, 8, -1, 9, 10, 11, -1);
	__m256i		 x, c, bits;
	unsigned	 m;

	x = _mm256_shuffle_epi8(_mm256_inserti128_si256(
	    _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)s)),
	    _mm_loadu_si128((const __m128i *)(s + 12)), 1), take);
	/* code_point3(), a lane each. */
	c = _mm256_or_si256(_mm256_or_si256(
	    _mm256_slli_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x0F)), 12),
	    _mm256_and_si256(_mm256_srli_epi32(x, 2),
	    _mm256_set1_epi32(0xFC0))),
	    _mm256_and_si256(_mm256_srli_epi32(x, 16),
	    _mm256_set1_epi32(0x3F)));
	bits = _mm256_i32gather_epi32((const int *)(const void *)
	    nsd_hanfold_bmp_bits, _mm256_srli_epi32(c, 5), 4);
	bits = _mm256_srlv_epi32(bits, _mm256_and_si256(c,
	    _mm256_set1_epi32(31)));
	for (m = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
	    _mm256_slli_epi32(bits, 31))); m != 0; m &= m - 1)
		nsd_hanfold3(s + 3 * __builtin_ctz(m));
}

/*
 * Fold s[0..len) in place 32 bytes at a time, up to the first character
 * of four bytes, or to the last 35 bytes, which are left to the caller
 * (a word of four is read at each lead byte of a block). Returns how far
 * it went. Chinese text is mostly characters of three bytes one after
 * the other: where a block starts with eight of them, fold8_avx2() folds
 * them. Elsewhere a block's characters of three bytes are found by their
 * lead bytes, 0xE0 to 0xEF; the bitmap tells which of them fold, and only
 * those are written again, so that Simplified text, of which few fold,
 * costs a few operations a character. A character that the block cuts
 * starts the next block.
 *
 * Measured on the shared corpora's texts (bench/RESULTS.md): about 0.4 ns
 * a byte of Simplified text and 0.9 of Traditional, in which a third of
 * the characters fold. Writing every character again, from the table by
 * a gather or one by one, was no faster on Traditional text and slower on
 * Simplified, and so was testing the eight bits one by one.
 */
NSD_TARGET_AVX2 static size_t
fold_blocks_avx2(unsigned char *s, size_t len)
{
	const __m256i	 e0 = _mm256_set1_epi8((char)0xE0);
	const __m256i	 span = _mm256_set1_epi8(0x0F);
	const __m256i	 f0 = _mm256_set1_epi8((char)0xF0);
	__m256i		 b, d;
	unsigned	 lead3, lead4, folds, cut;
	size_t		 i = 0;
	uint32_t	 w;

	while (len - i >= 36) {
		b = _mm256_loadu_si256((const __m256i *)(s + i));
		/* 0xE0..0xEF: b - 0xE0 <= 0x0F, unsigned. */
		d = _mm256_sub_epi8(b, e0);
		lead3 = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
		    _mm256_min_epu8(d, span), d));
		lead4 = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
		    _mm256_max_epu8(b, f0), b));
		if ((lead3 | lead4) == 0) {
			i += 32;
			continue;
		}
		/*
		 * Three-byte leads at 0, 3, ... 21: the bytes between are
		 * their continuation bytes, since the text is valid UTF-8.
		 */
		if ((lead3 & 0xFFFFFF) == 0x249249) {
			fold8_avx2(s + i);
			i += 24;
			continue;
		}
		cut = 32;
		if (lead4 != 0)
			cut = (unsigned)__builtin_ctz(lead4);
		else if ((lead3 & 0xC0000000u) != 0)
			cut = (unsigned)__builtin_ctz(lead3 & 0xC0000000u);
		if (cut < 32)
			lead3 &= (1u << cut) - 1;
		for (folds = 0; lead3 != 0; lead3 &= lead3 - 1) {
			memcpy(&w, s + i + __builtin_ctz(lead3), sizeof w);
			folds |= nsd_hanfold_bmp_folds(code_point3(w)) <<
			    __builtin_ctz(lead3);
		}
		for (; folds != 0; folds &= folds - 1)
			nsd_hanfold3(s + i + __builtin_ctz(folds));
		if (lead4 != 0)
			return (i + cut);
		i += cut;
	}
	return (i);
}
#endif

size_t
nsd_hanfold_text(char *text, size_t len)
{
	unsigned char	*s = (unsigned char *)text;
	size_t		 i = 0, n;
	enum nsd_simd	 simd = nsd_simd();
#ifdef __SSE2__
	const __m128i	 e0 = _mm_set1_epi8((char)0xE0);
	__m128i		 b;
#endif

	nsd_hanfold_init();
	while (i < len) {
#if NSD_HAVE_AVX2
		if (simd == NSD_SIMD_AVX2 && len - i >= 36 && s[i] < 0xF0)
			i += fold_blocks_avx2(s + i, len - i);
#endif
#ifdef __SSE2__
		/*
		 * Blocks of 16 with no lead byte from 0xE0 up (max(b, E0) ==
		 * b) hold nothing that folds.
		 */
		while (simd == NSD_SIMD_SSE2 && len - i >= 16) {
			b = _mm_loadu_si128((const __m128i *)(s + i));
			if (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(b,
			    e0), b)) != 0)
				break;
			i += 16;
		}
#else
		(void)simd;
#endif
		if (i >= len)
			break;
		if (s[i] < 0xE0)
			i++;
		else if (s[i] < 0xF0) {
			nsd_hanfold3(s + i);
			i += 3;
		} else {
			if ((n = nsd_hanfold4(s + i, s + i)) < 4)
				return (fold_moving(s, i + n, i + 4, len));
			i += 4;
		}
	}
	return (len);
}
