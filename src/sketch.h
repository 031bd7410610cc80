/*
 * sketch.h: what a group keeps of its first record's whole text, so that
 * a match found by a few fingerprints is confirmed on the whole text
 * before a record is called a duplicate (see "Confirmation" in sketch.c
 * and CONFIRMATION in nsdedup(1)).
 *
 * An element's value is the high 32 bits of its 64-bit hash with the
 * lowest bit set (nshash's elements are 16-byte windows of its text;
 * SimHash's and MinHash's their features). A sketch holds a bound and
 * every distinct value of the text's elements up to it, at most
 * NSD_SKETCH_SLOTS: the least of them. Stored, it is NSD_SKETCH_SLOTS + 1
 * little-endian 32-bit words: the bound, then the values ascending, the
 * rest 0. Two sketches tell how much of the smaller text the other has
 * (its containment) and their Jaccard similarity: exactly for texts of up
 * to NSD_SKETCH_SLOTS elements, by a sample otherwise.
 *
 * Beside it, a sketch of the text's numbers (its runs of ASCII digits)
 * made alike, of at most NSD_SKETCH_NUMBERS values: two stories written
 * from one template (a company's results, a match report) share most of
 * their words and few of their numbers, where a copy keeps them.
 *
 * Memory: a struct nsd_sketch is a value, built on the caller's stack or
 * in a scanner; nothing is allocated.
 */
#ifndef NSD_SKETCH_H
#define NSD_SKETCH_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

#define NSD_SKETCH_SLOTS	31	/* values of elements, at most */
#define NSD_SKETCH_NUMBERS	15	/* values of numbers, at most */
/* A part of a stored sketch: its bound, then its values. */
#define NSD_SKETCH_PART(slots)	(4 * ((slots) + 1))
#define NSD_SKETCH_BYTES	(NSD_SKETCH_PART(NSD_SKETCH_SLOTS) + \
				    NSD_SKETCH_PART(NSD_SKETCH_NUMBERS))
/*
 * A sketch kept by a method whose matches are confirmed by their numbers
 * alone: the numbers part, without the elements part before it.
 */
#define NSD_SKETCH_NUMBERS_BYTES NSD_SKETCH_PART(NSD_SKETCH_NUMBERS)
/* Figures are in 1/NSD_SKETCH_SCALE, like --threshold. */
#define NSD_SKETCH_SCALE	10000
/*
 * A text of fewer elements is too short to judge by its sketch: a
 * sentence or two, which the match that found it covers anyway.
 */
#define NSD_SKETCH_MIN_ELEMENTS	8
/*
 * Two texts of at least NSD_SKETCH_MIN_NUMBERS numbers each that share
 * less than NSD_SKETCH_NUMBERS_SHARE of the smaller's are no copies: of
 * the sets of bench/QUALITY.md, none of the 6018 labelled reposts of real
 * news, and two in three stories made from another's template.
 */
#define NSD_SKETCH_MIN_NUMBERS	3
#define NSD_SKETCH_NUMBERS_SHARE 2000

/* A sketch being built: of elements, or of numbers. */
struct nsd_sketch {
	uint32_t	 v[NSD_SKETCH_SLOTS + 1]; /* ascending, n of them; the
					   rest are scratch, never less than
					   the nth, for the vector insert */
	unsigned	 n;
	unsigned	 slots;		/* at most */
	uint32_t	 bound;		/* while there is room */
	uint32_t	 below;		/* a value is kept only when it is at
					   most this: the bound while there is
					   room, then under the largest */
};

/* A text's sketch: of its elements and of its numbers. */
struct nsd_text_sketch {
	struct nsd_sketch	 elements;
	struct nsd_sketch	 numbers;
};

/* How two texts compare by their sketches. */
struct nsd_resemblance {
	int		 elements_compared; /* the sketches kept their
				   elements part, which the next four
				   are drawn from (0: they are 0) */
	unsigned	 containment;	/* of the smaller in the other */
	unsigned	 jaccard;	/* both in 1/NSD_SKETCH_SCALE */
	unsigned	 sample;	/* the elements of the smaller the
				   figures are drawn from (0: a text had
				   none, and both figures are 0) */
	int		 too_short;	/* a text has fewer than
				   NSD_SKETCH_MIN_ELEMENTS elements in
				   all */
	int		 numbers_compared; /* both texts have
				   NSD_SKETCH_MIN_NUMBERS numbers */
	unsigned	 numbers;	/* then the share of the smaller's
				   that the other has */
};

/*
 * Start a sketch of a text of about expected elements: its bound leaves
 * about a quarter more than NSD_SKETCH_SLOTS of them, so that few are kept
 * only to make way for less ones (0: no bound but the least
 * NSD_SKETCH_SLOTS).
 */
void	 nsd_sketch_clear(struct nsd_sketch *, uint64_t);

/* Make s the sketch of the numbers of text[0..len). */
void	 nsd_sketch_numbers(struct nsd_sketch *, const char *, size_t);

/* The value of the element whose 64-bit hash is h: odd, never 0. */
static inline uint32_t
nsd_sketch_value(uint64_t h)
{
	return ((uint32_t)(h >> 32) | 1);
}

/*
 * Keep value v, which is at most s->below (again is no change); returns
 * s->below as it is then, for a caller that keeps it in a register.
 */
uint32_t nsd_sketch_insert(struct nsd_sketch *, uint32_t);

/*
 * Keep the values vals[0..n) that are at most the bound as it is then, in
 * order: as nsd_sketch_insert() would one by one, and faster, with AVX2.
 */
void	 nsd_sketch_add_values(struct nsd_sketch *, const uint32_t *,
	    size_t);

/*
 * The hash of the 16 bytes at s, two little-endian words a and b:
 * a K1 ^ b K2 (mod 2^64), with K1 = 2^64 / phi and K2 MurmurHash3's
 * 0xC2B2AE3D27D4EB4F. Only its high 32 bits are a value, and each of them
 * depends on every bit of a and b. For the many windows of a sketch,
 * where XXH3, or a finalizer, would cost more than the rest of their
 * work.
 */
static inline uint64_t
nsd_sketch_hash16(const char *s)
{
	uint64_t	 a, b;

	memcpy(&a, s, sizeof a);
	memcpy(&b, s + 8, sizeof b);
	return (le64toh(a) * 0x9E3779B97F4A7C15ULL ^
	    le64toh(b) * 0xC2B2AE3D27D4EB4FULL);
}

/* The positions a scan collects before it adds what starts there. */
#define NSD_SKETCH_POSITIONS	1024

/*
 * The positions of the bits of m (of the 64 bytes from base) into
 * at[n...], returning the new n. The first 8 are written whatever m holds,
 * without a branch (a bit past the block stands in for the ones m lacks,
 * and n counts only the true ones): a loop over a block's bits would end
 * in a mispredicted branch about once a block, which cost more than all
 * the rest of a sketch. at has room for n + 64.
 */
static inline size_t
nsd_sketch_flatten(uint32_t *at, size_t n, uint32_t base, uint64_t m)
{
	unsigned	 count = nsd_popcount64(m), k;

	for (k = 0; k < 8; k++) {
		at[n + k] = base + (uint32_t)__builtin_ctzll(m | 1ULL << 63);
		m &= m - 1;
	}
	for (k = 8; k < count; k++) {
		at[n + k] = base + (uint32_t)__builtin_ctzll(m);
		m &= m - 1;
	}
	return (n + count);
}

/* Add the element whose 64-bit hash is h. */
static inline void
nsd_sketch_add(struct nsd_sketch *s, uint64_t h)
{
	uint32_t	 v = nsd_sketch_value(h);

	/* Almost every element of a long text stops here. */
	if (v <= s->below)
		nsd_sketch_insert(s, v);
}

/*
 * Whether the bound set beforehand left s too few values (a text that
 * repeats a few words over and over has far fewer elements than its
 * length says): it is to be made again without one.
 */
int	 nsd_sketch_thin(const struct nsd_sketch *);

/*
 * Write a text's sketch as a group keeps it, into out[bytes]: both parts
 * (NSD_SKETCH_BYTES), or the numbers part alone (NSD_SKETCH_NUMBERS_BYTES,
 * and then the text's sketch of elements is not read).
 */
void	 nsd_sketch_store(const struct nsd_text_sketch *, unsigned char *,
	    size_t);

/* Compare two stored sketches of bytes each, as nsd_sketch_store() says. */
void	 nsd_sketch_compare(const unsigned char *, const unsigned char *,
	    size_t, struct nsd_resemblance *);

#endif /* NSD_SKETCH_H */
