/*
 * utf8.c: strict UTF-8 validation, counting and encoding.
 */
#include "config.h"

#include <string.h>

#include "cpu.h"
#include "utf8.h"
#include "utf8_avx2.h"

size_t
nsd_utf8_check(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((n = nsd_utf8_seqlen(p + i, len - i)) == 0)
			return (i);
		i += n;
	}
	return (len);
}

#if NSD_HAVE_AVX2
/*
 * The continuation bytes (10xxxxxx: as signed bytes, below -64) in
 * p[0..len), 32 at a time.
 */
__attribute__((target("avx2,popcnt"))) static size_t
count_continuations_avx2(const unsigned char *p, size_t len)
{
	const __m256i	 limit = _mm256_set1_epi8(-64);
	size_t		 i = 0, cont = 0;

	for (; len - i >= 32; i += 32)
		cont += __builtin_popcount((unsigned)_mm256_movemask_epi8(
		    _mm256_cmpgt_epi8(limit, _mm256_loadu_si256(
		    (const __m256i *)(p + i)))));
	for (; i < len; i++)
		cont += (p[i] & 0xC0) == 0x80;
	return (cont);
}
#endif

size_t
nsd_utf8_count(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	const uint64_t		 ones = 0x0101010101010101ULL;
	uint64_t		 w;
	size_t			 i = 0, cont = 0;

	/*
	 * Every code point has exactly one byte that is not a continuation
	 * byte (10xxxxxx), so count the continuation bytes eight at a time:
	 * bit 7 set and bit 6 clear leaves a 1 in that byte's low bit, and
	 * multiplying by 0x0101...01 sums those bytes into the top one.
	 */
#if NSD_HAVE_AVX2
	if (nsd_simd() == NSD_SIMD_AVX2 && len >= 32)
		return (len - count_continuations_avx2(p, len));
#endif
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		cont += (((w >> 7) & ~(w >> 6) & ones) * ones) >> 56;
	}
	for (; i < len; i++)
		cont += (p[i] & 0xC0) == 0x80;
	return (len - cont);
}

size_t
nsd_utf8_encode(uint32_t cp, char *out)
{
	unsigned char	*o = (unsigned char *)out;

	if (cp < 0x80) {
		o[0] = cp;
		return (1);
	}
	if (cp < 0x800) {
		o[0] = 0xC0 | (cp >> 6);
		o[1] = 0x80 | (cp & 0x3F);
		return (2);
	}
	if (cp < 0x10000) {
		o[0] = 0xE0 | (cp >> 12);
		o[1] = 0x80 | ((cp >> 6) & 0x3F);
		o[2] = 0x80 | (cp & 0x3F);
		return (3);
	}
	o[0] = 0xF0 | (cp >> 18);
	o[1] = 0x80 | ((cp >> 12) & 0x3F);
	o[2] = 0x80 | ((cp >> 6) & 0x3F);
	o[3] = 0x80 | (cp & 0x3F);
	return (4);
}
