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

/* Length of the valid sequence starting at p (1..4), or 0 when it is not valid. */
size_t	 nsd_utf8_seqlen(const unsigned char *, size_t);

/* Offset of the first invalid byte in p[0..len), or len when all of it is valid. */
size_t	 nsd_utf8_check(const char *, size_t);

/* Number of code points in valid UTF-8. */
size_t	 nsd_utf8_count(const char *, size_t);

/* Encode cp (<= 0x10FFFF) into out[0..4); returns the length. */
size_t	 nsd_utf8_encode(uint32_t, char *);

/* Decode the valid sequence at p of length n (from nsd_utf8_seqlen). */
uint32_t nsd_utf8_decode(const unsigned char *, size_t);

#endif /* NSD_UTF8_H */
