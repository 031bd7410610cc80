/*
 * sketch.c: the sketch of a whole text (sketch.h), and how two compare.
 *
 * Confirmation. Each method finds candidates by a few keys: nshash by a
 * couple of long sentences, SimHash by 64 bits that a shared template can
 * sway, MinHash by bands. Different articles that share background
 * paragraphs, a quoted post, boilerplate or a template meet that way, and
 * under --drop-dups a match deletes a record for good. So every group
 * keeps a sketch of its first record, and a record joins a group only
 * when the two texts, compared by their sketches, share enough of the
 * smaller one (--confirm, nsdedup(1)).
 *
 * Why the containment of the smaller text: a copy may add a block of
 * boilerplate (an ad script, a footer, a title line) or drop a paragraph,
 * or be an excerpt, and then the larger text holds most of the smaller,
 * while its Jaccard similarity can be low; two articles that share a few
 * paragraphs share little of either. bench/QUALITY.md measures both.
 *
 * The estimate is coordinated sampling: each sketch keeps every value of
 * its text's elements up to its bound, and no more than k of them (bottom-
 * k). Take t, the smaller of the two bounds; the elements of each text up
 * to t are then a sample of that text drawn by one rule, and the figures
 * are those of the two samples. A text of at most k elements is kept
 * whole (no bound), and two such texts compare exactly.
 *
 * Why a bound set beforehand: keeping the k least of n values one by one
 * takes about k (1 + ln(n / k)) inserts, each a shift of the array and a
 * branch mispredicted; a text of thousands of features would pay that on
 * every record. A bound from the text's length that leaves about 5k / 4
 * of them costs k (1 + ln 5/4), and a text whose length misled it (one
 * that repeats a few words) is sketched again without (nsd_sketch_thin()).
 */
#include "config.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "cpu.h"

#include "index_format.h"	/* nsd_le32(), nsd_put_le32() */
#include "sketch.h"

/* Start s, of at most slots values, bounded for about expected of them. */
static void
start(struct nsd_sketch *s, unsigned slots, uint64_t expected)
{
	uint64_t	 room = slots + slots / 4;

	s->n = 0;
	s->slots = slots;
	/* No value is above the largest: the vector insert's places. */
	memset(s->v, 0xFF, sizeof s->v);
	s->bound = expected <= room ? UINT32_MAX :
	    (uint32_t)(UINT32_MAX / expected * room);
	s->below = s->bound;
}

void
nsd_sketch_clear(struct nsd_sketch *s, uint64_t expected)
{
	start(s, NSD_SKETCH_SLOTS, expected);
}

#if NSD_HAVE_AVX2
/* The value at place i (at most 31) of the sketch held in a[]. */
__attribute__((target("avx2"))) static inline uint32_t
lane_of(const __m256i *a, unsigned i)
{
	return ((uint32_t)_mm256_cvtsi256_si32(_mm256_permutevar8x32_epi32(
	    a[i / 8], _mm256_set1_epi32((int)(i % 8)))));
}

/*
 * Inserts with the 32 places of the sketch held in four registers, each
 * insert at once: the values larger than v move one place up, each taking
 * the larger of v and the value below it (v lands where the values below
 * it end), and the rest stay. The places past the n kept hold values at
 * least as large as the nth (all ones at first, then what the full sketch
 * pushed out), so that the places are ascending throughout; a value seen
 * before is looked for among the n alone, since all ones may be a value
 * too. No loop, so no exit of one is mispredicted, and no store and load
 * between one insert and the next.
 */
__attribute__((target("avx2"))) static void
add_values_avx2(struct nsd_sketch *s, const uint32_t *vals, size_t count)
{
	const __m256i	 sign = _mm256_set1_epi32((int)0x80000000);
	const __m256i	 up = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6);
	const __m256i	 last = _mm256_set1_epi32(7);
	__m256i		 a[4], x, xs, below, larger;
	uint32_t	 bound = s->below, v;
	unsigned	 k, n = s->n, same;
	size_t		 i;

	_Pragma("GCC unroll 4")
	for (k = 0; k < 4; k++)
		a[k] = _mm256_loadu_si256((const __m256i *)(s->v + 8 * k));
	for (i = 0; i < count; i++) {
		if ((v = vals[i]) > bound)
			continue;
		x = _mm256_set1_epi32((int)v);
		same = 0;
		_Pragma("GCC unroll 4")
		for (k = 0; k < 4; k++)
			same |= (unsigned)_mm256_movemask_ps(
			    _mm256_castsi256_ps(_mm256_cmpeq_epi32(a[k], x))) <<
			    (8 * k);
		if ((same & ((1u << n) - 1)) != 0)
			continue;
		xs = _mm256_xor_si256(x, sign);
		/*
		 * From the top, so that each block reads the old top value
		 * of the block below it.
		 */
		_Pragma("GCC unroll 4")
		for (k = 4; k-- > 0;) {
			below = _mm256_permutevar8x32_epi32(a[k], up);
			if (k > 0)
				below = _mm256_blend_epi32(below,
				    _mm256_permutevar8x32_epi32(a[k - 1], last),
				    1);
			else
				below = _mm256_blend_epi32(below,
				    _mm256_setzero_si256(), 1);
			larger = _mm256_cmpgt_epi32(_mm256_xor_si256(a[k],
			    sign), xs);
			a[k] = _mm256_blendv_epi8(a[k],
			    _mm256_max_epu32(below, x), larger);
		}
		if (n < s->slots)
			n++;
		/* Values are odd: under the largest is at most one less. */
		if (n == s->slots)
			bound = lane_of(a, s->slots - 1) - 1;
	}
	_Pragma("GCC unroll 4")
	for (k = 0; k < 4; k++)
		_mm256_storeu_si256((__m256i *)(s->v + 8 * k), a[k]);
	s->n = n;
	s->below = bound;
}
#endif

uint32_t
nsd_sketch_insert(struct nsd_sketch *s, uint32_t v)
{
	unsigned	 i, last = s->n < s->slots ? s->n : s->slots - 1;
	uint32_t	 dropped;

#if NSD_HAVE_AVX2
	if (nsd_simd() == NSD_SIMD_AVX2) {
		add_values_avx2(s, &v, 1);
		return (s->below);
	}
#endif
	dropped = s->v[last];	/* full: the largest */

	/*
	 * Up from the end, each larger value one place on (over the largest
	 * when full: v is less), then v where it stops; an element seen
	 * before puts them back, which is rare but for texts that repeat.
	 */
	for (i = last; i > 0 && s->v[i - 1] > v; i--)
		s->v[i] = s->v[i - 1];
	if (i > 0 && s->v[i - 1] == v) {
		for (; i < last; i++)
			s->v[i] = s->v[i + 1];
		s->v[last] = dropped;
		return (s->below);
	}
	s->v[i] = v;
	if (s->n < s->slots)
		s->n++;
	/* Values are odd: under the largest is at most one less. */
	if (s->n == s->slots)
		s->below = s->v[s->slots - 1] - 1;
	return (s->below);
}

void
nsd_sketch_add_values(struct nsd_sketch *s, const uint32_t *vals, size_t n)
{
	uint32_t	 below = s->below;
	size_t		 i;

#if NSD_HAVE_AVX2
	if (nsd_simd() == NSD_SIMD_AVX2) {
		add_values_avx2(s, vals, n);
		return;
	}
#endif
	for (i = 0; i < n; i++)
		if (vals[i] <= below)
			below = nsd_sketch_insert(s, vals[i]);
}

int
nsd_sketch_thin(const struct nsd_sketch *s)
{
	return (s->bound != UINT32_MAX && s->n < s->slots / 2);
}

static int
is_digit(char c)
{
	return (c >= '0' && c <= '9');
}

/*
 * The number that starts at text[i] (a digit after none) into s, hashed as
 * fmix64() of x, where each digit d makes x = 11 x + d + 1: no two runs of
 * up to 18 digits ("7" and "007" among them) give the same x. Returns
 * where it ends.
 */
static size_t
add_number(struct nsd_sketch *s, const char *text, size_t i, size_t len)
{
	uint64_t	 x = 0;
	size_t		 from = i;

	for (; i < len && is_digit(text[i]); i++)
		x = x * 11 + (uint64_t)(text[i] - '0') + 1;
	if (i - from >= 2)
		nsd_sketch_add(s, nsd_fmix64(x));
	return (i);
}

/*
 * The numbers of text are its runs of two or more ASCII digits (a single
 * digit, a day or a count, tells stories apart less and is most of them).
 * They are found 64 bytes at a time: a byte is a digit when, less '0', it
 * is at most 9 unsigned, and a run starts at a digit whose byte before is
 * none.
 */
#ifdef __SSE2__
/* The digits among the 16 bytes at s, a bit each. */
static inline uint64_t
digits16(const char *s)
{
	const __m128i	 zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
	__m128i		 d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)s),
			    zero);

	return ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d,
	    nine), d)));
}
#endif

static void
numbers(struct nsd_sketch *s, const char *text, size_t len,
    uint64_t expected)
{
	size_t		 i = 0, n = 0, k;
#ifdef __SSE2__
	uint32_t	 at[NSD_SKETCH_POSITIONS + 64];
	uint64_t	 m, before = 0;
#endif

	start(s, NSD_SKETCH_NUMBERS, expected);
#ifdef __SSE2__
	for (; i + 64 <= len; i += 64) {
		m = digits16(text + i) | digits16(text + i + 16) << 16 |
		    digits16(text + i + 32) << 32 |
		    digits16(text + i + 48) << 48;
		n = nsd_sketch_flatten(at, n, (uint32_t)i,
		    m & ~(m << 1 | before));
		before = m >> 63;
		if (n >= NSD_SKETCH_POSITIONS || i + 128 > len) {
			for (k = 0; k < n; k++)
				(void)add_number(s, text, at[k], len);
			n = 0;
		}
	}
	/* The rest starts after a run that the blocks may have ended. */
	if (i > 0 && before)
		while (i < len && is_digit(text[i]))
			i++;
#endif
	while (i < len) {
		if (is_digit(text[i]))
			i = add_number(s, text, i, len);
		else
			i++;
	}
}

/* News has a number in about every 128 bytes, or fewer. */
void
nsd_sketch_numbers(struct nsd_sketch *s, const char *text, size_t len)
{
	numbers(s, text, len, len / 128);
	if (nsd_sketch_thin(s))
		numbers(s, text, len, 0);
}

/* One part of a stored sketch, of slots values, at out. */
static void
store_part(const struct nsd_sketch *s, unsigned char *out)
{
	unsigned	 i;

	memset(out, 0, NSD_SKETCH_PART(s->slots));
	/* Full, it holds every value up to its largest, and no more. */
	nsd_put_le32(out, s->n == s->slots ? s->v[s->slots - 1] : s->bound);
	for (i = 0; i < s->n; i++)
		nsd_put_le32(out + 4 * (i + 1), s->v[i]);
}

void
nsd_sketch_store(const struct nsd_text_sketch *ts, unsigned char *out,
    size_t bytes)
{
	if (bytes == NSD_SKETCH_NUMBERS_BYTES) {
		store_part(&ts->numbers, out);
		return;
	}
	store_part(&ts->elements, out);
	store_part(&ts->numbers, out + NSD_SKETCH_PART(NSD_SKETCH_SLOTS));
}

/* A part of a stored sketch: its bound, and how many values it holds. */
struct part {
	uint32_t	 v[NSD_SKETCH_SLOTS];
	unsigned	 n;
	uint32_t	 bound;
};

static void
load(const unsigned char *in, unsigned slots, struct part *p)
{
	p->bound = nsd_le32(in);
	for (p->n = 0; p->n < slots; p->n++)
		if ((p->v[p->n] = nsd_le32(in + 4 * (p->n + 1))) == 0)
			break;
}

/*
 * The samples of a and b under the smaller bound: their sizes into *sa and
 * *sb, and how many values they share.
 */
static unsigned
samples(const struct part *a, const struct part *b, unsigned *sa,
    unsigned *sb)
{
	uint32_t	 t = a->bound < b->bound ? a->bound : b->bound;
	unsigned	 na = a->n, nb = b->n, i = 0, j = 0, shared = 0;

	while (na > 0 && a->v[na - 1] > t)
		na--;
	while (nb > 0 && b->v[nb - 1] > t)
		nb--;
	while (i < na && j < nb) {
		if (a->v[i] == b->v[j])
			shared++, i++, j++;
		else if (a->v[i] < b->v[j])
			i++;
		else
			j++;
	}
	*sa = na;
	*sb = nb;
	return (shared);
}

/* shared of n, in 1/NSD_SKETCH_SCALE, rounded; 0 of 0 is 0. */
static unsigned
share(unsigned shared, unsigned n)
{
	return (n == 0 ? 0 : (shared * NSD_SKETCH_SCALE + n / 2) / n);
}

void
nsd_sketch_compare(const unsigned char *a, const unsigned char *b,
    size_t bytes, struct nsd_resemblance *r)
{
	struct part	 pa, pb;
	unsigned	 na, nb, shared;
	size_t		 at = 0;

	memset(r, 0, sizeof *r);
	if (bytes != NSD_SKETCH_NUMBERS_BYTES) {
		r->elements_compared = 1;
		load(a, NSD_SKETCH_SLOTS, &pa);
		load(b, NSD_SKETCH_SLOTS, &pb);
		/* A sketch without a bound holds its whole text. */
		r->too_short = (pa.bound == UINT32_MAX &&
		    pa.n < NSD_SKETCH_MIN_ELEMENTS) ||
		    (pb.bound == UINT32_MAX && pb.n < NSD_SKETCH_MIN_ELEMENTS);
		shared = samples(&pa, &pb, &na, &nb);
		r->sample = na < nb ? na : nb;
		r->containment = share(shared, r->sample);
		r->jaccard = share(shared, na + nb - shared);
		at = NSD_SKETCH_PART(NSD_SKETCH_SLOTS);
	}

	load(a + at, NSD_SKETCH_NUMBERS, &pa);
	load(b + at, NSD_SKETCH_NUMBERS, &pb);
	shared = samples(&pa, &pb, &na, &nb);
	r->numbers_compared = pa.n >= NSD_SKETCH_MIN_NUMBERS &&
	    pb.n >= NSD_SKETCH_MIN_NUMBERS && na > 0 && nb > 0;
	r->numbers = share(shared, na < nb ? na : nb);
}
