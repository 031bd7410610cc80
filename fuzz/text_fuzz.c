/*
 * text_fuzz.c: normalization, tag stripping, sentence splitting and
 * nshash fingerprints.
 *
 * Everything here takes valid UTF-8 only, so the input is first cut down
 * to its valid sequences (invalid bytes dropped). Properties: normalized
 * text is valid UTF-8 and normalizing it again changes nothing; stripping
 * tags keeps it valid UTF-8 and never makes it longer; the pieces of every
 * split rule lie in order within the text, on character boundaries, and
 * (but for the compat rule) are trimmed and not empty, and are those of
 * the rule's PCRE2 pattern (nsd_text_split_reference()); whether a text
 * has a letter or digit is what the pattern says; flattening gives
 * the text and each piece without white space, byte for byte as a plain
 * loop does, and valid UTF-8; fingerprinting,
 * with versions 1 and 2 and the compat definition, returns no more
 * fingerprints than asked for.
 */
#include "config.h"

#include <string.h>

#include "nshash.h"
#include "text.h"
#include "utf8.h"
#include "fuzz.h"

#define NRULES	3

static struct nsd_text		*texts[NRULES];
static struct nsd_nshash	 hashes[3];
static struct nsd_buf		 in, norm, again, flat, plain;
static struct nsd_piece		*pieces, *reference;
static size_t			 pieces_cap, reference_cap;

static void
init(void)
{
	static const enum nsd_split_rule rules[NRULES] = {
		NSD_SPLIT_DEFAULT, NSD_SPLIT_PROSE, NSD_SPLIT_COMPAT
	};
	struct nsd_nshash_params p;
	struct nsd_error	 err;
	size_t			 i;

	for (i = 0; i < NRULES; i++)
		if ((texts[i] = nsd_text_new(rules[i], &err)) == NULL)
			FUZZ_FAIL("%s", err.msg);
	for (i = 0; i < 3; i++) {
		memset(&p, 0, sizeof p);
		p.sentences = 5;
		p.min_length = 10;
		p.version = i == 2 ? NSD_NORM_VERSION : NSD_NORM_OLDEST;
		p.compat = i == 1;
		if (nsd_nshash_init(&hashes[i], &p, &err) == -1)
			FUZZ_FAIL("%s", err.msg);
	}
	/* The text, and the oracle's, are never null, even when empty. */
	nsd_buf_reserve(&in, 1);
	nsd_buf_reserve(&plain, 1);
}

static int
valid(const char *s, size_t len)
{
	return (nsd_utf8_check(s, len) == len);
}

/* Split s with every rule and check the pieces. */
static void
check_split(const char *s, size_t len)
{
	size_t	 i, r, n, at, end;

	for (r = 0; r < NRULES; r++) {
		n = nsd_text_split(texts[r], s, len, &pieces, &pieces_cap);
		for (i = 0, at = 0; i < n; i++) {
			FUZZ_CHECK(pieces[i].start >= at);
			FUZZ_CHECK(pieces[i].start <= len &&
			    pieces[i].len <= len - pieces[i].start);
			end = pieces[i].start + pieces[i].len;
			FUZZ_CHECK(valid(s + pieces[i].start, pieces[i].len));
			FUZZ_CHECK(valid(s, pieces[i].start));
			if (r != 2) {
				FUZZ_CHECK(pieces[i].len > 0);
				FUZZ_CHECK(s[pieces[i].start] != ' ' &&
				    s[pieces[i].start] != '\n');
				FUZZ_CHECK(s[end - 1] != ' ' &&
				    s[end - 1] != '\n');
			}
			at = end;
		}
		FUZZ_CHECK(nsd_text_split_reference(texts[r], s, len,
		    &reference, &reference_cap) == n);
		FUZZ_CHECK(n == 0 ||
		    memcmp(pieces, reference, n * sizeof *pieces) == 0);
		FUZZ_CHECK(nsd_text_has_word_char(texts[r], s, len) ==
		    (nsd_text_count_word_chars(texts[r], s, len) > 0));
		(void)nsd_text_more_word_chars(texts[r], s, len, 7);
	}
}

/* s[0..len) without spaces and newlines, into plain: the oracle. */
static void
flatten_plainly(const char *s, size_t len)
{
	size_t	 i;

	plain.len = 0;
	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\n')
			nsd_buf_append(&plain, s + i, 1);
}

/* Flatten s with its prose pieces, and check both against the oracle. */
static void
check_flatten(const char *s, size_t len)
{
	struct nsd_piece	*orig;
	size_t			 i, n;

	n = nsd_text_split(texts[1], s, len, &pieces, &pieces_cap);
	orig = xreallocarray(NULL, n + 1, sizeof *orig);
	if (n > 0)
		memcpy(orig, pieces, n * sizeof *orig);
	nsd_text_flatten(texts[1], s, len, pieces, n, &flat);
	flatten_plainly(s, len);
	FUZZ_CHECK(flat.len == plain.len &&
	    memcmp(flat.data, plain.data, plain.len) == 0);
	FUZZ_CHECK(valid(flat.data, flat.len));
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(pieces[i].start <= flat.len &&
		    pieces[i].len <= flat.len - pieces[i].start);
		flatten_plainly(s + orig[i].start, orig[i].len);
		FUZZ_CHECK(pieces[i].len == plain.len &&
		    memcmp(flat.data + pieces[i].start, plain.data,
		    plain.len) == 0);
	}
	free(orig);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 ready;
	uint64_t	 fps[5];
	struct nsd_text_sketch sketch;
	unsigned char	 code[5];
	size_t		 i, k;

	if (!ready) {
		init();
		ready = 1;
	}
	in.len = 0;
	for (i = 0; i < size; i += k)
		if ((k = nsd_utf8_seqlen(data + i, size - i)) == 0)
			k = 1;
		else
			nsd_buf_append(&in, data + i, k);
	FUZZ_CHECK(valid(in.data, in.len));

	nsd_text_normalize(in.data, in.len, &norm, NSD_NORM_VERSION);
	FUZZ_CHECK(valid(norm.data, norm.len));
	nsd_text_normalize(norm.data, norm.len, &again, NSD_NORM_VERSION);
	if (again.len != norm.len ||
	    memcmp(again.data, norm.data, norm.len) != 0)
		FUZZ_FAIL("normalization is not idempotent");
	check_split(norm.data, norm.len);
	check_split(in.data, in.len);

	check_flatten(norm.data, norm.len);
	check_flatten(in.data, in.len);

	nsd_text_strip_tags(&again);
	FUZZ_CHECK(again.len <= norm.len && valid(again.data, again.len));
	check_split(again.data, again.len);

	for (i = 0; i < 3; i++)
		FUZZ_CHECK(nsd_nshash_compute(&hashes[i], in.data, in.len, fps,
		    code, &sketch) <= 5 &&
		    sketch.elements.n <= NSD_SKETCH_SLOTS &&
		    sketch.numbers.n <= NSD_SKETCH_NUMBERS);
	return (0);
}
