/*
 * simd_test.c: the hot loops that have vector versions (cpu.h), held to
 * plain reference implementations written here from their definitions, on
 * random texts made of the bytes that matter to each: normalization,
 * sentence splitting (against the PCRE2 pattern), tag stripping,
 * flattening, UTF-8 counting, the JSON scanner's strings (valid or broken
 * at every offset) and their decoding, and the code-like test of nshash.
 *
 * The program checks whichever versions this processor and $NSDEDUP_SIMD
 * select (the version in use is the first line); tests/simd.bats runs it
 * once for each, so that all of them are held to the same references.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "hanfold.h"
#include "json.h"
#include "nshash.h"
#include "tap.h"
#include "text.h"
#include "utf8.h"

#define ROUNDS	3000

static uint64_t	 rng = 0x9E3779B97F4A7C15ULL;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((unsigned)(rng % n));
}

/* Append one of the pieces to b, at random. */
static void
add_random(struct nsd_buf *b, const char *const *pieces, size_t npieces)
{
	const char	*p = pieces[rnd(npieces)];

	nsd_buf_append(b, p, strlen(p));
}

/* A random text of up to max pieces. */
static void
random_text(struct nsd_buf *b, const char *const *pieces, size_t npieces,
    unsigned max)
{
	unsigned	 i, n = rnd(max + 1);

	b->len = 0;
	for (i = 0; i < n; i++)
		add_random(b, pieces, npieces);
	nsd_buf_reserve(b, 1);
}

/* The code point at s (valid UTF-8), its length in *len. */
static uint32_t
code_point(const unsigned char *s, size_t *len)
{
	if (s[0] < 0x80)
		return (*len = 1, s[0]);
	if (s[0] < 0xE0)
		return (*len = 2, (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F));
	if (s[0] < 0xF0)
		return (*len = 3, (uint32_t)(s[0] & 0x0F) << 12 |
		    (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F));
	return (*len = 4, (uint32_t)(s[0] & 0x07) << 18 |
	    (uint32_t)(s[1] & 0x3F) << 12 | (uint32_t)(s[2] & 0x3F) << 6 |
	    (s[3] & 0x3F));
}

/* 0, or 1 for white space, 2 for a line break (nsdedup(1), Normalization). */
static int
space_kind(uint32_t c)
{
	if (c == '\n' || c == '\v' || c == '\f' || c == 0x85 ||
	    c == 0x2028 || c == 0x2029)
		return (2);
	return (c == ' ' || c == '\t' || c == 0xA0 || c == 0x1680 ||
	    (c >= 0x2000 && c <= 0x200A) || c == 0x202F || c == 0x205F ||
	    c == 0x3000);
}

/*
 * Normalization as the definition says it: '\r' dropped, full-width ASCII
 * folded, every run of white space one space, or one newline when it holds
 * a line break, and none at either end; by version 3, every code point
 * folded as nsd_hanfold() says.
 */
static void
normalize_plainly_by(const char *in, size_t len, struct nsd_buf *out,
    unsigned version)
{
	const unsigned char	*s = (const unsigned char *)in;
	size_t			 i = 0, n;
	uint32_t		 c;
	int			 run = 0, k;

	out->len = 0;
	while (i < len) {
		c = code_point(s + i, &n);
		if (c == '\r') {
			i += n;
			continue;
		}
		if ((k = space_kind(c)) != 0) {
			if (k > run)
				run = k;
			i += n;
			continue;
		}
		if (run != 0 && out->len > 0)
			nsd_buf_putc(out, run == 2 ? '\n' : ' ');
		run = 0;
		if (c >= 0xFF01 && c <= 0xFF5E)
			nsd_buf_putc(out, (char)(c - 0xFEE0));
		else if (version >= 3) {
			nsd_buf_reserve(out, out->len + 4);
			out->len += nsd_utf8_encode(nsd_hanfold(c),
			    out->data + out->len);
		} else
			nsd_buf_append(out, s + i, n);
		i += n;
	}
}

static void
normalize_plainly(const char *in, size_t len, struct nsd_buf *out)
{
	normalize_plainly_by(in, len, out, 2);
}

static void
fold_plainly(const char *in, size_t len, struct nsd_buf *out)
{
	nsd_hanfold_init();
	normalize_plainly_by(in, len, out, 3);
}

static void
normalize(const char *in, size_t len, struct nsd_buf *out)
{
	nsd_text_normalize(in, len, out, 2);
}

static void
normalize_folding(const char *in, size_t len, struct nsd_buf *out)
{
	nsd_text_normalize(in, len, out, 3);
}

/* What normalization looks at, and some characters it does not. */
static const char *const norm_pieces[] = {
	"a", "Zq", "7", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f",
	"\xc2\x85", "\xc2\xa0", "\xc2\xa9", "\xc3\xa9",
	"\xe1\x9a\x80", "\xe1\x80\x80",
	"\xe2\x80\x80", "\xe2\x80\x8a", "\xe2\x80\x8b", "\xe2\x80\x9c",
	"\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f",
	"\xe2\x81\x9e", "\xe3\x80\x80", "\xe3\x80\x81", "\xe3\x80\x82",
	"\xe4\xb8\xad", "\xe6\x96\x87", "\xef\xbc\x81", "\xef\xbc\x8c",
	"\xef\xbc\xa1", "\xef\xbd\x9e", "\xef\xbd\x9f", "\xef\xbc\x80",
	"\xef\xbf\xbd", "\xf0\x9f\x98\x80",
	"the quick brown fox ", "\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97",
	/*
	 * What folds: Traditional 體 and 發, Taiwan's 著, and in four
	 * bytes U+2B37F (to three) and U+2005E (to four); and a Traditional
	 * phrase of six.
	 */
	"\xe9\xab\x94", "\xe7\x99\xbc", "\xe8\x91\x97",
	"\xf0\xab\x8d\xbf", "\xf0\xa0\x81\x9e",
	"\xe9\x80\x99\xe5\x80\x8b\xe8\xbb\x9f\xe9\xab\x94"
	"\xe7\x9a\x84\xe9\x96\x8b",
};

/* A pass over text: in[0..len) to out. */
typedef void text_pass(const char *, size_t, struct nsd_buf *);

/*
 * The number of ROUNDS random texts of pieces (up to max of them, and up
 * to long_max every tenth text) on which pass and its reference differ.
 */
static unsigned
differ(text_pass *pass, text_pass *reference, const char *const *pieces,
    size_t npieces, unsigned max, unsigned long_max)
{
	struct nsd_buf	 text = { 0 }, got = { 0 }, want = { 0 };
	unsigned	 i, bad = 0;

	for (i = 0; i < ROUNDS; i++) {
		random_text(&text, pieces, npieces,
		    i % 10 == 0 ? long_max : max);
		pass(text.data, text.len, &got);
		reference(text.data, text.len, &want);
		bad += got.len != want.len ||
		    memcmp(got.data, want.data, want.len) != 0;
	}
	nsd_buf_free(&text);
	nsd_buf_free(&got);
	nsd_buf_free(&want);
	return (bad);
}

static void
check_normalize(void)
{
	unsigned	 bad;

	bad = differ(normalize, normalize_plainly, norm_pieces,
	    sizeof norm_pieces / sizeof norm_pieces[0], 120, 120);
	tap_ok(bad == 0, "normalize agrees with the definition on %u random "
	    "texts (%u differ)", ROUNDS, bad);
	bad = differ(normalize_folding, fold_plainly, norm_pieces,
	    sizeof norm_pieces / sizeof norm_pieces[0], 120, 120);
	tap_ok(bad == 0, "normalize by version 3 (Han folded) agrees with "
	    "the definition on %u random texts (%u differ)", ROUNDS, bad);
}

/*
 * Runs of Han characters of three bytes at every offset from the start
 * and of every length, each before one of four bytes (which folds to
 * three, or to four) and more of three: the AVX2 fold takes eight of three
 * at once, and must take none of four for one.
 */
static void
check_fold_runs(void)
{
	static const char *const four[] = {
		"\xf0\xab\x8d\xbf", "\xf0\xa0\x81\x9e"
	};
	struct nsd_buf	 text = { 0 }, got = { 0 }, want = { 0 };
	unsigned	 off, run, k, f, bad = 0, n = 0;

	for (f = 0; f < 2; f++)
		for (off = 0; off < 36; off++)
			for (run = 0; run < 24; run++) {
				text.len = 0;
				for (k = 0; k < off; k++)
					nsd_buf_putc(&text, 'a');
				for (k = 0; k < run; k++)
					nsd_buf_append(&text, k % 2 ?
					    "\xe9\xab\x94" : "\xe4\xb8\xad", 3);
				nsd_buf_append(&text, four[f], 4);
				for (k = 0; k < 16; k++)
					nsd_buf_append(&text,
					    "\xe7\x99\xbc", 3);
				normalize_folding(text.data, text.len, &got);
				fold_plainly(text.data, text.len, &want);
				bad += got.len != want.len ||
				    memcmp(got.data, want.data, want.len) != 0;
				n++;
			}
	nsd_buf_free(&text);
	nsd_buf_free(&got);
	nsd_buf_free(&want);
	tap_ok(bad == 0, "Han folding of runs of three-byte characters before "
	    "a four-byte one, at every offset: %u of %u differ", bad, n);
}

/* What the splitter looks at: delimiters and their look-alikes. */
static const char *const split_pieces[] = {
	"a", "word ", "x", " ", "\n", "  \n ", ".", ". ", ".x", "..", ":",
	";", "?", "!", "\x1f", "\xe3\x80\x82", "\xe3\x80\x91",
	"\xe3\x80\x81", "\xe3\x80\x80", "\xe3\x80\x90", "\xe4\xb8\xad",
	"\xef\xbc\x9a", "0123456789abcdefghijklmnopqrstuv",
};

static void
check_split(void)
{
	static const enum nsd_split_rule rules[] = {
		NSD_SPLIT_DEFAULT, NSD_SPLIT_PROSE
	};
	struct nsd_buf	 text = { 0 };
	struct nsd_piece *got = NULL, *want = NULL;
	struct nsd_text	*t;
	struct nsd_error err;
	size_t		 got_cap = 0, want_cap = 0, ng, nw;
	unsigned	 r, i, bad;

	for (r = 0; r < 2; r++) {
		if ((t = nsd_text_new(rules[r], &err)) == NULL) {
			tap_ok(0, "nsd_text_new: %s", err.msg);
			continue;
		}
		for (i = 0, bad = 0; i < ROUNDS; i++) {
			random_text(&text, split_pieces,
			    sizeof split_pieces / sizeof split_pieces[0], 90);
			ng = nsd_text_split(t, text.data, text.len, &got,
			    &got_cap);
			nw = nsd_text_split_reference(t, text.data, text.len,
			    &want, &want_cap);
			if (ng != nw || (ng > 0 &&
			    memcmp(got, want, ng * sizeof *got) != 0))
				bad++;
		}
		tap_ok(bad == 0, "split (%s rule) finds the pattern's pieces "
		    "in %u random texts (%u differ)", r == 0 ? "default" :
		    "prose", ROUNDS, bad);
		nsd_text_free(t);
	}
	free(got);
	free(want);
	nsd_buf_free(&text);
}

/*
 * Tags read as spaces one byte at a time, as text.h defines them: a '<',
 * then a letter, '/' or '!', up to the next '>' within NSD_TAG_MAX bytes
 * with no '<' between.
 */
static void
strip_tags_plainly(const char *s, size_t len, struct nsd_buf *out)
{
	size_t	 i = 0, j, max;
	char	 c;

	out->len = 0;
	while (i < len) {
		c = i + 1 < len ? s[i + 1] : '\0';
		if (s[i] == '<' && ((c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || c == '/' || c == '!')) {
			max = len - i < NSD_TAG_MAX ? len - i : NSD_TAG_MAX;
			for (j = 2; j < max && s[i + j] != '>' &&
			    s[i + j] != '<'; j++)
				;
			if (j < max && s[i + j] == '>') {
				nsd_buf_putc(out, ' ');
				i += j + 1;
				continue;
			}
		}
		nsd_buf_putc(out, s[i++]);
	}
}

static const char *const tag_pieces[] = {
	"<", ">", "<p>", "</p>", "<br/>", "<!-- x -->", "<a href=\"x\">", "a",
	"word ", "<<", "< p>", "<1>", "\xe4\xb8\xad", "/", "!",
	"0123456789abcdefghijklmnopqrstuv",
};

/* nsd_text_strip_tags() as a pass from one buffer to another. */
static void
strip_tags_copy(const char *s, size_t len, struct nsd_buf *out)
{
	out->len = 0;
	nsd_buf_append(out, s, len);
	nsd_text_strip_tags(out);
}

static void
check_strip_tags(void)
{
	unsigned	 bad;

	/* Now and then longer than a tag may be. */
	bad = differ(strip_tags_copy, strip_tags_plainly, tag_pieces,
	    sizeof tag_pieces / sizeof tag_pieces[0], 60, 400);
	tap_ok(bad == 0, "tags read as spaces as a byte-at-a-time loop reads "
	    "them, in %u random texts (%u differ)", ROUNDS, bad);
}

/* The bytes of s[from..to) that are not spaces or newlines. */
static size_t
solid(const char *s, size_t from, size_t to)
{
	size_t	 n = 0;

	for (; from < to; from++)
		n += s[from] != ' ' && s[from] != '\n';
	return (n);
}

static void
check_flatten(void)
{
	struct nsd_buf	 text = { 0 }, flat = { 0 }, plain = { 0 };
	struct nsd_piece *pieces = NULL, *orig = NULL;
	struct nsd_text	*t;
	struct nsd_error err;
	size_t		 cap = 0, n, j, k;
	unsigned	 i, bad = 0;

	if ((t = nsd_text_new(NSD_SPLIT_PROSE, &err)) == NULL) {
		tap_ok(0, "nsd_text_new: %s", err.msg);
		return;
	}
	for (i = 0; i < ROUNDS; i++) {
		random_text(&text, split_pieces,
		    sizeof split_pieces / sizeof split_pieces[0], 90);
		n = nsd_text_split(t, text.data, text.len, &pieces, &cap);
		orig = xreallocarray(orig, n + 1, sizeof *orig);
		memcpy(orig, pieces, n * sizeof *orig);
		nsd_text_flatten(t, text.data, text.len, pieces, n, &flat);
		plain.len = 0;
		for (k = 0; k < text.len; k++)
			if (text.data[k] != ' ' && text.data[k] != '\n')
				nsd_buf_putc(&plain, text.data[k]);
		if (flat.len != plain.len ||
		    memcmp(flat.data, plain.data, plain.len) != 0) {
			bad++;
			continue;
		}
		/* Each piece where the bytes before it put it. */
		for (j = 0; j < n; j++)
			if (pieces[j].start != solid(text.data, 0,
			    orig[j].start) || pieces[j].len != solid(text.data,
			    orig[j].start, orig[j].start + orig[j].len)) {
				bad++;
				break;
			}
	}
	tap_ok(bad == 0, "flatten drops white space as a plain loop does, and "
	    "moves the pieces with it, in %u random texts (%u differ)",
	    ROUNDS, bad);
	free(pieces);
	free(orig);
	nsd_text_free(t);
	nsd_buf_free(&text);
	nsd_buf_free(&flat);
	nsd_buf_free(&plain);
}

static void
check_count(void)
{
	struct nsd_buf	 text = { 0 };
	size_t		 k, want, n;
	unsigned	 i, bad = 0;

	for (i = 0; i < ROUNDS; i++) {
		random_text(&text, norm_pieces,
		    sizeof norm_pieces / sizeof norm_pieces[0], 80);
		for (k = 0, want = 0; k < text.len; k += n, want++)
			(void)code_point((const unsigned char *)text.data + k,
			    &n);
		bad += nsd_utf8_count(text.data, text.len) != want;
	}
	tap_ok(bad == 0, "code points counted in %u random texts (%u wrong)",
	    ROUNDS, bad);
	nsd_buf_free(&text);
}

/*
 * JSON strings: a long valid string, then one broken by each kind of bad
 * UTF-8 (and by a control character) at every offset around the 32-byte
 * blocks: the scanner must stop at the first bad byte, where the plain
 * check (nsd_utf8_check) does.
 */
static void
check_json_strings(void)
{
	static const char *const bad[] = {
		"\xff", "\x80", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80",
		"\xed\xa0\x80", "\xf0\x80\x80\x80", "\xf4\x90\x80\x80",
		"\xf5\x80\x80\x80", "\xe4\xb8", "\xe4\x41", "\xf0\x9f\x98",
		"\x01", "\x1f",
	};
	/* Escapes too: the vector loops stop at each. */
	static const char *const fill[] = {
		"a", "\xe4\xb8\xad", "\xc3\xa9", "\xf0\x9f\x98\x80", " ",
		"\\n", "\\u00e9",
	};
	struct nsd_json_path	 path;
	struct nsd_json_query	 q;
	struct nsd_json_scanner	 sc;
	struct nsd_error	 err;
	struct nsd_buf		 line = { 0 }, body = { 0 };
	unsigned		 b, at, wrong = 0, tried = 0;
	size_t			 want;
	int			 rc;

	memset(&q, 0, sizeof q);
	if (nsd_json_path_parse(&path, "text", &err) == -1) {
		tap_ok(0, "path: %s", err.msg);
		return;
	}
	q.path = &path;
	nsd_json_scanner_init(&sc, &q, 1);
	for (b = 0; b <= sizeof bad / sizeof bad[0]; b++) {
		for (at = 0; at < 100; at++, tried++) {
			body.len = 0;
			while (body.len < at)
				add_random(&body, fill, 7);
			if (b < sizeof bad / sizeof bad[0])
				nsd_buf_append(&body, bad[b], strlen(bad[b]));
			while (body.len < at + 70)
				add_random(&body, fill, 7);
			line.len = 0;
			nsd_buf_append(&line, "{\"text\":\"", 9);
			nsd_buf_append(&line, body.data, body.len);
			nsd_buf_append(&line, "\"}", 2);
			rc = nsd_json_scan(&sc, line.data, line.len, 1);
			want = nsd_utf8_check(body.data, body.len);
			for (size_t k = 0; k < want; k++)
				if ((unsigned char)body.data[k] < 0x20) {
					want = k;
					break;
				}
			if (want == body.len)
				wrong += rc != 0 || q.found.len != body.len + 2;
			else
				wrong += rc != -1 || sc.error_at != 9 + want;
		}
	}
	tap_ok(wrong == 0, "strings valid or broken at every offset: %u of %u "
	    "scanned wrong", wrong, tried);
	nsd_json_scanner_free(&sc);
	nsd_json_path_free(&path);
	nsd_buf_free(&line);
	nsd_buf_free(&body);
}

/*
 * Decoding: random strings of escapes and plain text, each piece with what
 * it decodes to, so that the escapes fall at every offset of the blocks.
 */
static void
check_json_decode(void)
{
	static const struct { const char *token, *text; } pieces[] = {
		{ "a", "a" },
		{ "0123456789abcdefghij", "0123456789abcdefghij" },
		{ "\xe4\xb8\xad", "\xe4\xb8\xad" }, { " ", " " },
		{ "\\n", "\n" }, { "\\t", "\t" }, { "\\\"", "\"" },
		{ "\\\\", "\\" }, { "\\/", "/" }, { "\\u00e9", "\xc3\xa9" },
		{ "\\ud83d\\ude00", "\xf0\x9f\x98\x80" },
		{ "\\ud800", "\xef\xbf\xbd" },
	};
	struct nsd_buf	 token = { 0 }, want = { 0 }, got = { 0 };
	unsigned	 i, k, n, wrong = 0;

	for (i = 0; i < ROUNDS; i++) {
		token.len = want.len = 0;
		nsd_buf_putc(&token, '"');
		for (n = rnd(60), k = 0; k < n; k++) {
			unsigned j = rnd(sizeof pieces / sizeof pieces[0]);

			nsd_buf_append(&token, pieces[j].token,
			    strlen(pieces[j].token));
			nsd_buf_append(&want, pieces[j].text,
			    strlen(pieces[j].text));
		}
		nsd_buf_putc(&token, '"');
		/* Decoding appends to what the buffer has. */
		got.len = 0;
		nsd_buf_putc(&got, 'x');
		nsd_json_decode_string(token.data, token.len, &got);
		wrong += got.len != want.len + 1 || got.data[0] != 'x' ||
		    memcmp(got.data + 1, want.data, want.len) != 0;
	}
	tap_ok(wrong == 0, "strings decoded as their pieces say, escapes at "
	    "every offset: %u of %u wrong", wrong, ROUNDS);
	nsd_buf_free(&token);
	nsd_buf_free(&want);
	nsd_buf_free(&got);
}

/* Symbols of code, as nsd_nshash_compute() counts them (nsdedup(1)). */
static int
is_symbol(unsigned char c)
{
	return (c != '\0' && strchr("{}[]()<>=;&|$\\/*+\"'_#@^~`%", c) !=
	    NULL);
}

/*
 * Sentences more or less symbolic, one at a time, about one character in
 * ten a symbol: around the ratio where they turn code-like ('<' is left
 * out, as it may start a tag).
 */
static void
check_code_like(void)
{
	static const char *const plain[] = {
		"a", "b", "q", "Z", "\xe4\xb8\xad", "\xc3\xa9", "0", ",", "-",
		".x", "\x7f",
	};
	static const char *const symbols[] = {
		"{", "}", "[", "]", "(", ")", ">", "=", "&", "|", "$",
		"\\", "/", "*", "+", "\"", "'", "_", "#", "@", "^", "~", "`",
		"%",
	};
	struct nsd_nshash_params p = { 1, 10, 0, 0, 2 };
	struct nsd_nshash	 h;
	struct nsd_error	 err;
	struct nsd_buf		 text = { 0 };
	uint64_t		 fps[NSD_NSHASH_MAX_SENTENCES];
	unsigned char		 code[NSD_NSHASH_MAX_SENTENCES];
	size_t			 k, count, cps, n;
	unsigned		 i, bad = 0, tried = 0, flagged = 0;

	if (nsd_nshash_init(&h, &p, &err) == -1) {
		tap_ok(0, "init: %s", err.msg);
		return;
	}
	for (i = 0; i < ROUNDS; i++) {
		text.len = 0;
		nsd_buf_append(&text, "w", 1);
		n = 20 + rnd(150);
		while (text.len < n) {
			if (rnd(10) == 0)
				add_random(&text, symbols, sizeof symbols /
				    sizeof symbols[0]);
			else
				add_random(&text, plain, sizeof plain /
				    sizeof plain[0]);
		}
		for (k = 0, count = 0; k < text.len; k++)
			count += is_symbol((unsigned char)text.data[k]);
		cps = nsd_utf8_count(text.data, text.len);
		if (nsd_nshash_compute(&h, text.data, text.len, fps, code,
		    NULL) != 1)
			continue;
		tried++;
		flagged += code[0];
		bad += code[0] != (count * 8 >= cps);
	}
	tap_ok(tried > ROUNDS / 2 && flagged > tried / 8 &&
	    flagged < tried - tried / 8 && bad == 0, "code-like sentences "
	    "told in %u random ones, %u of them code-like (%u wrong)", tried,
	    flagged, bad);
	nsd_nshash_free(&h);
	nsd_buf_free(&text);
}

int
main(void)
{
	static const char *const names[] = { "?", "portable", "sse2", "avx2" };

	printf("# versions in use: %s\n", names[nsd_simd()]);
	check_normalize();
	check_fold_runs();
	check_split();
	check_strip_tags();
	check_flatten();
	check_count();
	check_json_strings();
	check_json_decode();
	check_code_like();
	return (tap_done());
}
