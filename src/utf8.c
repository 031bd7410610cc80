/*
 * utf8.c: strict UTF-8 validation, counting and encoding.
 */
#include "config.h"

#include <string.h>

#include "utf8.h"

size_t
nsd_utf8_seqlen(const unsigned char *p, size_t avail)
{
	unsigned char	 c = p[0], lo = 0x80, hi = 0xBF;
	size_t		 n, i;

	if (c < 0x80)
		return (1);
	if (c < 0xC2)
		return (0);		/* continuation byte or overlong 2-byte lead */
	if (c < 0xE0)
		n = 2;
	else if (c < 0xF0) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;	/* overlong */
		else if (c == 0xED)
			hi = 0x9F;	/* UTF-16 surrogates */
	} else if (c < 0xF5) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;	/* overlong */
		else if (c == 0xF4)
			hi = 0x8F;	/* above U+10FFFF */
	} else
		return (0);
	if (avail < n)
		return (0);
	if (p[1] < lo || p[1] > hi)
		return (0);
	for (i = 2; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return (0);
	return (n);
}

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

size_t
nsd_utf8_count(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i, count = 0;

	/* Every code point has exactly one byte that is not 10xxxxxx. */
	for (i = 0; i < len; i++)
		count += (p[i] & 0xC0) != 0x80;
	return (count);
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

uint32_t
nsd_utf8_decode(const unsigned char *p, size_t n)
{
	switch (n) {
	case 1:
		return (p[0]);
	case 2:
		return (((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3F));
	case 3:
		return (((uint32_t)(p[0] & 0x0F) << 12) |
		    ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F));
	default:
		return (((uint32_t)(p[0] & 0x07) << 18) |
		    ((uint32_t)(p[1] & 0x3F) << 12) |
		    ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3F));
	}
}
