/*
 * sketch_test.c: the sketches of whole texts that confirm a match
 * (sketch.c).
 *
 * A reference written from sketch.h's definition (sort, drop repeats, keep
 * those up to the bound, at most the 31 least) must store the same bytes
 * as the streaming builder, in any order of the elements and with
 * repeats, with a bound set beforehand or none. Texts of up to 32 elements
 * compare exactly; larger ones by a sample whose figures stay near the
 * true containment and Jaccard similarity; a text without elements
 * compares as nothing.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "sketch.h"
#include "tap.h"

/* A stored sketch's bound. */
static uint32_t
le32_bound(const unsigned char *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t	 x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x < y ? -1 : x > y);
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8 & 0xff;
	p[2] = v >> 16 & 0xff;
	p[3] = v >> 24;
}

/*
 * The definition, all at once: the bound, then the distinct values up to
 * it, at most the 31 least (and then the largest of them is the bound).
 */
static void
ref_sketch(const uint64_t *h, size_t n, uint32_t bound, unsigned char *out)
{
	uint32_t	*v = calloc(n + 1, sizeof *v);
	size_t		 i, m = 0;

	for (i = 0; i < n; i++)
		v[i] = (uint32_t)(h[i] >> 32) | 1;
	qsort(v, n, sizeof *v, cmp_u32);
	memset(out, 0, NSD_SKETCH_BYTES);
	for (i = 0; i < n && m < 31 && v[i] <= bound; i++) {
		if (i > 0 && v[i] == v[i - 1])
			continue;
		put32(out + 4 * ++m, v[i]);
	}
	put32(out, m == 31 ? v[i - 1] : bound);
	/* No numbers: a bound, and nothing under it. */
	put32(out + NSD_SKETCH_PART(NSD_SKETCH_SLOTS), UINT32_MAX);
	free(v);
}

/* The sketch of h[0..n), of about expected elements (0: no bound). */
static void
build_expecting(const uint64_t *h, size_t n, uint64_t expected,
    unsigned char *out)
{
	struct nsd_text_sketch	 s;
	size_t			 i;

	nsd_sketch_clear(&s.elements, expected);
	for (i = 0; i < n; i++)
		nsd_sketch_add(&s.elements, h[i]);
	nsd_sketch_numbers(&s.numbers, "", 0);
	nsd_sketch_store(&s, out, NSD_SKETCH_BYTES);
}

/* The same, the elements handed over in one call as values. */
static void
build_values(const uint64_t *h, size_t n, uint64_t expected,
    unsigned char *out)
{
	struct nsd_text_sketch	 s;
	uint32_t		 v[4000];
	size_t			 i;

	for (i = 0; i < n; i++)
		v[i] = nsd_sketch_value(h[i]);
	nsd_sketch_clear(&s.elements, expected);
	nsd_sketch_add_values(&s.elements, v, n);
	nsd_sketch_numbers(&s.numbers, "", 0);
	nsd_sketch_store(&s, out, NSD_SKETCH_BYTES);
}

/* The sketch of text: its numbers, and its words as elements. */
static void
build_text(const char *text, unsigned char *out)
{
	struct nsd_text_sketch	 s;
	const char		*w = text, *end;

	nsd_sketch_clear(&s.elements, 0);
	while (*w != '\0') {
		end = w + strcspn(w, " ");
		nsd_sketch_add(&s.elements, XXH3_64bits(w, (size_t)(end - w)));
		w = *end == ' ' ? end + 1 : end;
	}
	nsd_sketch_numbers(&s.numbers, text, strlen(text));
	nsd_sketch_store(&s, out, NSD_SKETCH_BYTES);
}

/* The numbers part alone of text's sketch, into out. */
static void
numbers_part(const char *text, unsigned char *out)
{
	struct nsd_text_sketch	 s;

	nsd_sketch_numbers(&s.numbers, text, strlen(text));
	nsd_sketch_store(&s, out, NSD_SKETCH_NUMBERS_BYTES);
}

static void
build(const uint64_t *h, size_t n, unsigned char *out)
{
	build_expecting(h, n, 0, out);
}

/*
 * Two texts: shared elements, then a only, then b only (from the same
 * stream), into a[] and b[]; returns their sizes through *na and *nb.
 */
static void
pair(uint64_t *state, size_t shared, size_t only_a, size_t only_b,
    uint64_t *a, size_t *na, uint64_t *b, size_t *nb)
{
	size_t	 i;

	for (i = 0; i < shared; i++)
		a[i] = b[i] = tap_random(state);
	for (i = 0; i < only_a; i++)
		a[shared + i] = tap_random(state);
	for (i = 0; i < only_b; i++)
		b[shared + i] = tap_random(state);
	*na = shared + only_a;
	*nb = shared + only_b;
}

int
main(void)
{
	uint64_t		 state = 42, a[4000], b[4000], x;
	unsigned char		 sa[NSD_SKETCH_BYTES], sb[NSD_SKETCH_BYTES];
	unsigned char		 ref[NSD_SKETCH_BYTES];
	unsigned char		 na_text[NSD_SKETCH_NUMBERS_BYTES];
	unsigned char		 nb_text[NSD_SKETCH_NUMBERS_BYTES];
	const char		*q3 = "Q3 revenue rose 12% to 412 million, up "
				    "from 368 million in 2017 and 2016";
	const char		*q4 = "Q4 revenue rose 3% to 97 million, up "
				    "from 94 million in 2019 and 2018";
	struct nsd_resemblance	 r, rn;
	size_t			 na, nb, i, n, trial, bad;
	double			 sum_c, sum_j;

	/* The builder stores what the definition says, repeats and all. */
	for (bad = 0, trial = 0; trial < 200; trial++) {
		n = trial * 7 % 300;
		for (i = 0; i < n; i++)
			a[i] = i > 0 && tap_random(&state) % 4 == 0 ?
			    a[tap_random(&state) % i] : tap_random(&state);
		build(a, n, sa);
		ref_sketch(a, n, UINT32_MAX, ref);
		bad += memcmp(sa, ref, sizeof sa) != 0;
		/* Bounded beforehand, as for a text of 4 n elements. */
		build_expecting(a, n, 4 * n, sb);
		ref_sketch(a, n, le32_bound(sb), ref);
		bad += memcmp(sb, ref, sizeof sb) != 0 ||
		    (n >= 100 && le32_bound(sb) > UINT32_MAX / 4);
		/* Handed over at once, as nshash does its windows. */
		build_values(a, n, 4 * n, ref);
		bad += memcmp(sb, ref, sizeof sb) != 0;
		build_values(a, n, 0, ref);
		bad += memcmp(sa, ref, sizeof sa) != 0;
		/* Backwards: the order of the elements is no matter. */
		for (i = 0; i < n / 2; i++)
			x = a[i], a[i] = a[n - 1 - i], a[n - 1 - i] = x;
		build(a, n, sb);
		bad += memcmp(sa, sb, sizeof sa) != 0;
	}
	tap_ok(bad == 0, "the builder keeps the least distinct values up to "
	    "its bound, in any order, one by one or at once (%zu of 1000 "
	    "differ)", bad);

	/* Small texts compare exactly. */
	pair(&state, 10, 0, 5, a, &na, b, &nb);
	build(a, na, sa);
	build(b, nb, sb);
	nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
	tap_ok(r.containment == 10000 && r.jaccard == 6667 && r.sample == 10,
	    "a text inside one of 5 more elements: containment 1, Jaccard "
	    "10/15 (%u, %u, sample %u)", r.containment, r.jaccard, r.sample);
	nsd_sketch_compare(sb, sa, NSD_SKETCH_BYTES, &r);
	tap_ok(r.containment == 10000 && r.jaccard == 6667,
	    "and the same either way round");
	pair(&state, 4, 16, 12, a, &na, b, &nb);
	build(a, na, sa);
	build(b, nb, sb);
	nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
	tap_ok(r.containment == 2500 && r.jaccard == 1250,
	    "4 shared of 20 and 16: containment 4/16, Jaccard 4/32 (%u, %u)",
	    r.containment, r.jaccard);
	pair(&state, 0, 20, 20, a, &na, b, &nb);
	build(a, na, sa);
	build(b, nb, sb);
	nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
	tap_ok(r.containment == 0 && r.jaccard == 0,
	    "two texts with nothing in common: 0");
	build(a, 0, sb);
	nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
	tap_ok(r.sample == 0 && r.containment == 0,
	    "a text without elements compares as nothing");
	build(a, na, sb);
	nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
	tap_ok(r.containment == 10000 && r.jaccard == 10000,
	    "a text and itself: 1");

	/*
	 * Large texts by a sample: an excerpt of a fifth of a text, and
	 * two texts sharing a third, on average over 200 pairs.
	 */
	for (sum_c = 0, trial = 0; trial < 200; trial++) {
		pair(&state, 400, 0, 1600, a, &na, b, &nb);
		build(a, na, sa);
		build(b, nb, sb);
		nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
		sum_c += r.containment;
	}
	tap_ok(sum_c / 200 > 9000, "an excerpt of 400 of 2000 elements is "
	    "contained, on average %.0f / 10000", sum_c / 200);
	for (sum_c = sum_j = 0, trial = 0; trial < 200; trial++) {
		pair(&state, 500, 1000, 1000, a, &na, b, &nb);
		build(a, na, sa);
		build(b, nb, sb);
		nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
		sum_c += r.containment;
		sum_j += r.jaccard;
	}
	tap_ok(sum_c / 200 > 2800 && sum_c / 200 < 3900 &&
	    sum_j / 200 > 1600 && sum_j / 200 < 2400,
	    "texts of 1500 sharing 500: containment near 1/3 (%.0f), "
	    "Jaccard near 1/5 (%.0f)", sum_c / 200, sum_j / 200);

	/* Numbers: runs of ASCII digits, wherever they are. */
	build_text("Q3 revenue rose 12% to 412 million, up from 368 million "
	    "in 2017 and 2016", sa);
	build_text("Q3 revenue rose 12% to 412 million, up from 368 million "
	    "in 2017 and 2016 a b c d e f", sb);
	nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
	tap_ok(r.numbers_compared && r.numbers == 10000,
	    "a copy has the numbers of its source (%u)", r.numbers);
	build_text("Q4 revenue rose 3% to 97 million, up from 94 million "
	    "in 2019 and 2018", sb);
	nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
	tap_ok(r.numbers_compared && r.numbers < NSD_SKETCH_NUMBERS_SHARE,
	    "a story from the same template has other numbers (%u)",
	    r.numbers);
	build_text("Revenue rose 12% to 412 million", sb);
	nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
	tap_ok(!r.numbers_compared, "two numbers are too few to compare");

	/* The numbers part alone: what a whole sketch keeps at its end. */
	build_text(q3, sa);
	build_text(q4, sb);
	numbers_part(q3, na_text);
	numbers_part(q4, nb_text);
	tap_ok(memcmp(na_text, sa + NSD_SKETCH_PART(NSD_SKETCH_SLOTS),
	    NSD_SKETCH_NUMBERS_BYTES) == 0, "the numbers part alone is stored "
	    "as a whole sketch ends");
	nsd_sketch_compare(sa, sb, NSD_SKETCH_BYTES, &r);
	nsd_sketch_compare(na_text, nb_text, NSD_SKETCH_NUMBERS_BYTES, &rn);
	tap_ok(rn.numbers_compared == r.numbers_compared &&
	    rn.numbers == r.numbers && !rn.elements_compared &&
	    r.elements_compared && rn.containment == 0 && rn.sample == 0 &&
	    !rn.too_short, "and compares alike by its numbers, with no "
	    "figures of the elements (%u, %u)", rn.numbers, r.numbers);
	return (tap_done());
}
