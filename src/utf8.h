/*
 * utf8.h: strict UTF-8 (RFC 3629) validation and small helpers.
 *
 * "Strict" means what a JSON parser must accept: no overlong forms, no
 * UTF-16 surrogates encoded as UTF-8, nothing above U+10FFFF. Nothing here
 * allocates or fails; a negative or zero return says where input is bad.
 */
#ifndef NSD_UTF8_H
#define NSD_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Length of the valid sequence starting at p (1..4, with avail bytes
 * there), or 0 when it is not valid. Inline: scanners call it for every
 * non-ASCII character.
 */
static inline size_t
nsd_utf8_seqlen(const unsigned char *p, size_t avail)
{
	unsigned char	 c = p[0], lo = 0x80, hi = 0xBF;
	size_t		 n, i;

	if (c < 0x80)
		return (1);
	if (c < 0xC2)
		return (0);		/* continuation byte or overlong 2-byte
					   lead */
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
	if (avail < n || p[1] < lo || p[1] > hi)
		return (0);
	for (i = 2; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return (0);
	return (n);
}

/*
 * Offset of the first invalid byte in p[0..len), or len when all of it is
 * valid.
 */
size_t	 nsd_utf8_check(const char *, size_t);

/* Number of code points in valid UTF-8. */
size_t	 nsd_utf8_count(const char *, size_t);

/* Encode cp (<= 0x10FFFF) into out[0..4); returns the length. */
size_t	 nsd_utf8_encode(uint32_t, char *);

#endif /* NSD_UTF8_H */
