/*
 * hanfold.h: Han script folding, the step that normalization version 3
 * adds (text.h): every Traditional Chinese character, and every variant
 * form of Taiwan and Hong Kong, is replaced by the one form of its class,
 * so that an article converted between the scripts is the same text.
 *
 * The classes are OpenCC's: src/gen-hanfold reads its character
 * dictionaries when nsdedup is built and writes the table
 * (src/hanfold_table.c, nsd_hanfold_pairs), which says what each folding
 * character becomes. A character never folds to one of more UTF-8 bytes,
 * and what it folds to folds to itself. Every folding character in the
 * table is Han: three or four bytes of UTF-8, and a three-byte one folds
 * to a three-byte one, so that most text folds in place.
 *
 * nsd_hanfold_init() makes the lookup tables from the pairs, once whatever
 * the threads; everything else here reads them, and must come after it.
 */
#ifndef NSD_HANFOLD_H
#define NSD_HANFOLD_H

#include <stddef.h>
#include <stdint.h>

/* What each folding code point folds to, sorted by the first. */
extern const uint32_t	 nsd_hanfold_pairs[][2];
extern const size_t	 nsd_hanfold_npairs;

/*
 * For the Basic Multilingual Plane: a bit a code point, set when it folds,
 * and what every code point folds to (itself when it does not).
 */
extern uint64_t		 nsd_hanfold_bmp_bits[0x10000 / 64];
extern uint16_t		 nsd_hanfold_bmp_to[0x10000];

void	 nsd_hanfold_init(void);

/*
 * The number of code points that fold, and a checksum of the table
 * (XXH3-64 of its pairs as little-endian 32-bit numbers): two builds fold
 * alike when these agree.
 */
size_t	 nsd_hanfold_size(void);
uint64_t nsd_hanfold_checksum(void);

/* What the code point c folds to: c itself when it does not fold. */
uint32_t nsd_hanfold(uint32_t);

/* Whether the BMP code point c folds. */
static inline unsigned
nsd_hanfold_bmp_folds(uint32_t c)
{
	return ((unsigned)(nsd_hanfold_bmp_bits[c >> 6] >> (c & 63)) & 1);
}

/* Fold the character of three UTF-8 bytes at p, in place. */
static inline void
nsd_hanfold3(unsigned char *p)
{
	uint32_t	 c = (uint32_t)(p[0] & 0x0F) << 12 |
			    (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);

	c = nsd_hanfold_bmp_to[c];
	p[0] = (unsigned char)(0xE0 | c >> 12);
	p[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
	p[2] = (unsigned char)(0x80 | (c & 0x3F));
}

/*
 * Write the fold of the character of four UTF-8 bytes at p to o (which may
 * be p or before it); returns its length, 3 or 4.
 */
size_t	 nsd_hanfold4(const unsigned char *p, unsigned char *o);

/*
 * Fold every character of s[0..len) (valid UTF-8) in place; returns the
 * new length, which is shorter only when a character of four bytes folds
 * to one of three. It calls nsd_hanfold_init() itself.
 */
size_t	 nsd_hanfold_text(char *s, size_t len);

#endif /* NSD_HANFOLD_H */
