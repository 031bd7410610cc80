/*
 * utf8_avx2.h: strict UTF-8 checked 32 bytes at a time, with AVX2, for the
 * loops of json.c and utf8.c that take their AVX2 version (see cpu.h).
 *
 * The method is Keiser and Lemire's ("Validating UTF-8 in less than one
 * instruction per byte", Software: Practice and Experience, 2021). Every
 * error of strict UTF-8 shows in a pair of consecutive bytes, or in a
 * byte that continues a sequence no lead byte asked for, or in a missing
 * continuation. For each byte and the one before it, three table lookups
 * (the high nibble of the byte before, its low nibble, and the high nibble
 * of this byte) give a set of the errors each allows; their intersection
 * is the set that this pair commits:
 *
 *   TOO_SHORT   a lead byte, then no continuation
 *   TOO_LONG    an ASCII byte, then a continuation
 *   OVERLONG_2  C0 or C1 and a continuation
 *   OVERLONG_3  E0 and 80..9F
 *   OVERLONG_4  F0 and 80..8F
 *   SURROGATE   ED and A0..BF
 *   TOO_LARGE   F4 and 90..BF, or F5..FF and 90..BF
 *   TOO_LARGE_1000  F5..FF and 80..8F
 *   TWO_CONTS   a continuation after a continuation
 *
 * TWO_CONTS is an error unless the byte is the third or fourth of a
 * sequence, which the bytes two and three back say (E0 and up, F0 and up);
 * the last step turns that around: an expected third or fourth byte that
 * is not a continuation after a continuation is an error too.
 *
 * The check of a block needs the block before it ("prev"); a block checked
 * right after a character boundary takes zeros there. A sequence cut by the
 * end of the last block checked is not an error yet: the caller takes up
 * again from its lead byte (nsd_utf8_char_start()).
 */
#ifndef NSD_UTF8_AVX2_H
#define NSD_UTF8_AVX2_H

#include "cpu.h"

#if NSD_HAVE_AVX2
#include <immintrin.h>

#define U8_TOO_SHORT	(1 << 0)
#define U8_TOO_LONG	(1 << 1)
#define U8_OVERLONG_3	(1 << 2)
#define U8_TOO_LARGE	(1 << 3)
#define U8_SURROGATE	(1 << 4)
#define U8_OVERLONG_2	(1 << 5)
#define U8_TOO_LARGE_1000 (1 << 6)
#define U8_OVERLONG_4	(1 << 6)
#define U8_TWO_CONTS	(1 << 7)
#define U8_CARRY	(U8_TOO_SHORT | U8_TOO_LONG | U8_TWO_CONTS)

/* The 16-entry table t, in both lanes. */
#define U8_TABLE(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, ta, tb, tc, td, \
    te, tf) \
	_mm256_setr_epi8(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, ta, tb, \
	    tc, td, te, tf, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, ta, tb, \
	    tc, td, te, tf)

/* The bytes of in, each with the byte n places before it (n = 1..3). */
#define U8_PREV(in, prev, n) \
	_mm256_alignr_epi8((in), _mm256_permute2x128_si256((prev), (in), \
	    0x21), 16 - (n))

/* Non-zero bytes where in (after the block prev) breaks strict UTF-8. */
NSD_TARGET_AVX2 static inline __m256i
nsd_utf8_errors_avx2(__m256i in, __m256i prev)
{
	const __m256i	 nibble = _mm256_set1_epi8(0x0F);
	const __m256i	 byte_1_high = U8_TABLE(
	    U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG,
	    U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG,
	    U8_TWO_CONTS, U8_TWO_CONTS, U8_TWO_CONTS, U8_TWO_CONTS,
	    U8_TOO_SHORT | U8_OVERLONG_2,
	    U8_TOO_SHORT,
	    U8_TOO_SHORT | U8_OVERLONG_3 | U8_SURROGATE,
	    U8_TOO_SHORT | U8_TOO_LARGE | U8_TOO_LARGE_1000 | U8_OVERLONG_4);
	const __m256i	 byte_1_low = U8_TABLE(
	    U8_CARRY | U8_OVERLONG_3 | U8_OVERLONG_2 | U8_OVERLONG_4,
	    U8_CARRY | U8_OVERLONG_2,
	    U8_CARRY,
	    U8_CARRY,
	    U8_CARRY | U8_TOO_LARGE,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000 | U8_SURROGATE,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000,
	    U8_CARRY | U8_TOO_LARGE | U8_TOO_LARGE_1000);
	const __m256i	 byte_2_high = U8_TABLE(
	    U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT,
	    U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT,
	    U8_TOO_LONG | U8_OVERLONG_2 | U8_TWO_CONTS | U8_OVERLONG_3 |
	    U8_TOO_LARGE_1000 | U8_OVERLONG_4,
	    U8_TOO_LONG | U8_OVERLONG_2 | U8_TWO_CONTS | U8_OVERLONG_3 |
	    U8_TOO_LARGE,
	    U8_TOO_LONG | U8_OVERLONG_2 | U8_TWO_CONTS | U8_SURROGATE |
	    U8_TOO_LARGE,
	    U8_TOO_LONG | U8_OVERLONG_2 | U8_TWO_CONTS | U8_SURROGATE |
	    U8_TOO_LARGE,
	    U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT);
	__m256i	 prev1, prev2, prev3, pairs, third, fourth, must23;

	prev1 = U8_PREV(in, prev, 1);
	pairs = _mm256_and_si256(_mm256_and_si256(
	    _mm256_shuffle_epi8(byte_1_high,
	    _mm256_and_si256(_mm256_srli_epi16(prev1, 4), nibble)),
	    _mm256_shuffle_epi8(byte_1_low, _mm256_and_si256(prev1, nibble))),
	    _mm256_shuffle_epi8(byte_2_high,
	    _mm256_and_si256(_mm256_srli_epi16(in, 4), nibble)));
	/* Bytes two and three back: E0 and up, F0 and up, by saturation. */
	prev2 = U8_PREV(in, prev, 2);
	prev3 = U8_PREV(in, prev, 3);
	third = _mm256_subs_epu8(prev2, _mm256_set1_epi8(0xE0 - 0x80));
	fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8(0xF0 - 0x80));
	must23 = _mm256_and_si256(_mm256_or_si256(third, fourth),
	    _mm256_set1_epi8((char)0x80));
	return (_mm256_xor_si256(must23, pairs));
}
#endif /* NSD_HAVE_AVX2 */

/*
 * Where the character that holds s[at] begins, when s[from..at) is valid
 * UTF-8 but may end inside a character: at itself, or the lead byte of a
 * sequence that at cuts short.
 */
static inline size_t
nsd_utf8_char_start(const unsigned char *s, size_t from, size_t at)
{
	size_t	 lead = at, need;

	while (lead > from && at - lead < 3 && (s[lead - 1] & 0xC0) == 0x80)
		lead--;
	if (lead == from || s[lead - 1] < 0xC0)
		return (at);
	lead--;
	need = s[lead] < 0xE0 ? 2 : s[lead] < 0xF0 ? 3 : 4;
	return (at - lead < need ? lead : at);
}

#endif /* NSD_UTF8_AVX2_H */
