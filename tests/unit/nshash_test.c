/*
 * nshash_test.c: golden vectors for normalization and nshash fingerprints.
 *
 * The hex constants are XXH3-64 (seed 0) of the sentences the definition
 * selects, computed independently with xxhsum -H3 from the sentence text
 * in the comment beside each. If a change to nshash.c or text.c alters any
 * of them, fingerprints of existing indexes change: that needs a new
 * normalization version, not a new constant here.
 */
#include "config.h"

#include <string.h>
#include <xxhash.h>

#include "nshash.h"
#include "tap.h"
#include "text.h"

static void
check_normalize(void)
{
	static const struct { const char *in, *want, *what; } cases[] = {
		{ "  a \t b  ", "a b",
		    "runs of spaces collapse, ends trimmed" },
		{ "a \r\n b", "a\nb",
		    "a run with a newline becomes one newline" },
		{ "a\r\rb", "ab", "carriage returns dropped" },
		{ "\xef\xbc\xa1\xef\xbc\xa2\xef\xbd\x83"
		    "\xef\xbc\x81\xef\xbc\x8c",
		    "ABc!,", "full-width ASCII folds to ASCII" },
		{ "x\xe3\x80\x80y", "x y", "U+3000 is a space" },
		{ "a\xc2\xa0\xe2\x80\xa8" "b", "a\nb",
		    "NBSP and U+2028 collapse to a newline" },
		{ "\xe2\x80\x83lead\xe2\x80\xaf", "lead",
		    "Unicode spaces trimmed" },
		{ "\xe4\xb8\xad\xe6\x96\x87", "\xe4\xb8\xad\xe6\x96\x87",
		    "other text unchanged" },
		{ "", "", "empty stays empty" },
	};
	struct nsd_buf	 out = { 0 };
	size_t		 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		nsd_text_normalize(cases[i].in, strlen(cases[i].in), &out,
		    NSD_NORM_VERSION);
		tap_ok(out.len == strlen(cases[i].want) &&
		    memcmp(out.data, cases[i].want, out.len) == 0,
		    "normalize: %s", cases[i].what);
	}
	nsd_buf_free(&out);
}

static struct nsd_nshash	 nh;
static unsigned			 version = 1;	/* the definition's */

static size_t
fingerprint(const char *text, unsigned n, unsigned min, int compat,
    uint64_t *fps)
{
	struct nsd_nshash_params p = { n, min, compat, 0, version };
	struct nsd_error	 err;

	nsd_nshash_free(&nh);
	if (nsd_nshash_init(&nh, &p, &err) == -1)
		return ((size_t)-1);
	return (nsd_nshash_compute(&nh, text, strlen(text), fps, NULL, NULL));
}

static void
check_golden(void)
{
	uint64_t	 fps[NSD_NSHASH_MAX_SENTENCES];
	size_t		 n;

	/*
	 * "The quick brown fox jumps over the lazy dog near the river"
	 * "Another sentence that is long enough to qualify here"
	 */
	n = fingerprint("The quick  brown fox jumps over the lazy dog "
	    "near the river. "
	    "Short one.\r\nAnother sentence that is long enough to qualify "
	    "here!  Tiny",
	    5, 30, 0, fps);
	tap_ok(n == 2 && fps[0] == 0x16349d033284e932ULL &&
	    fps[1] == 0x5723db222bf3ce22ULL,
	    "golden: English sentences, '.' and '!' before white space");

	/*
	 * "专家表示,这得益于良种推广和"
	 *     "ABC农业机械化水平的持续提高,以及 best practice"
	 * "今年全国粮食总产量再创历史新高,"
	 *     "达到一万三千亿斤以上,"
	 *     "比上年增长百分之一点三"
	 */
	n = fingerprint("据新华社报道："
	    "今年全国粮食总产量再创历史新高，"
	    "达到一万三千亿斤以上，"
	    "比上年增长百分之一点三。\xe3\x80\x80"
	    "专家表示，这得益于良种推广和"
	    "ＡＢＣ农业机械化水平"
	    "的持续提高，以及\xe3\x80\x80" "best practice！",
	    5, 30, 0, fps);
	tap_ok(n == 2 && fps[0] == 0x79f433a4f09a28dbULL &&
	    fps[1] == 0xf07cdd1386da4459ULL,
	    "golden: Chinese, full-width forms folded before splitting");

	/* "one two three\nfour five six\nseven eight nine\nten eleven" */
	n = fingerprint("one two three\n\nfour five six\n  seven eight nine\n"
	    "ten eleven",
	    5, 30, 0, fps);
	tap_ok(n == 1 && fps[0] == 0x408b865610f7e2faULL,
	    "golden: no long sentence, whole normalized text as the fallback");

	/* "" */
	n = fingerprint("tiny text", 5, 30, 1, fps);
	tap_ok(n == 1 && fps[0] == 0x2d06800538d394c2ULL,
	    "golden: compat gives short texts the empty string's hash");

	/*
	 * "  据新华社报道，"
	 *     "今年全国粮食总产量再创历史新高，"
	 *     "达到一万三千亿斤以上  "
	 */
	n = fingerprint("  据新华社报道，"
	    "今年全国粮食总产量再创历史新高，"
	    "达到一万三千亿斤以上  。短句",
	    5, 30, 1, fps);
	tap_ok(n == 1 && fps[0] == 0x6fd82d3f0569c5feULL,
	    "golden: compat neither normalizes nor trims");
}

static uint64_t
h(const char *s)
{
	return (XXH3_64bits(s, strlen(s)));
}

static void
check_selection(void)
{
	uint64_t	 fps[NSD_NSHASH_MAX_SENTENCES];
	const char	*a =
	    "aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa";		/* 39 */
	const char	*b =
	    "bbbb bbbb bbbb bbbb bbbb bbbb bbbb bbbb bbbb";	/* 44 */
	const char	*c =
	    "cccc cccc cccc cccc cccc cccc cccc cccc";		/* 39 */
	const char	*d =
	    "dddd dddd dddd dddd dddd dddd dddd dddd dddd";	/* 44 */
	char		 text[512];
	size_t		 n;

	snprintf(text, sizeof text, "%s. %s. %s. %s.", a, b, c, d);
	n = fingerprint(text, 2, 30, 0, fps);
	tap_ok(n == 2 && fps[0] == h(b) && fps[1] == h(d),
	    "the n longest, ties in text order");
	n = fingerprint(text, 3, 30, 0, fps);
	tap_ok(n == 3 && fps[0] == h(b) && fps[1] == h(d) && fps[2] == h(a),
	    "a tie for the last place goes to the earlier sentence");
	snprintf(text, sizeof text, "%s. %s! %s?", a, a, c);
	n = fingerprint(text, 5, 30, 0, fps);
	tap_ok(n == 2 && fps[0] == h(a) && fps[1] == h(c),
	    "a repeated sentence counts once");
	snprintf(text, sizeof text, "%s\xe3\x80\x82%s\xef\xbc\x81%s", a, a, c);
	n = fingerprint(text, 5, 30, 1, fps);
	tap_ok(n == 3 && fps[0] == h(a) && fps[1] == h(a) && fps[2] == h(c),
	    "compat keeps repeated sentences, as the reference does");
	snprintf(text, sizeof text, "%s\n%s",
	    "----------------------------------------", a);
	n = fingerprint(text, 5, 30, 0, fps);
	tap_ok(n == 1 && fps[0] == h(a),
	    "a sentence without letters or digits never qualifies");
	n = fingerprint("123456789012345678901234567890", 5, 30, 0, fps);
	tap_ok(n == 0, "exactly min-length characters: nothing to compare");
	n = fingerprint("1234567890123456789012345678901", 5, 30, 0, fps);
	tap_ok(n == 1 && fps[0] == h("1234567890123456789012345678901"),
	    "one character more qualifies");
	n = fingerprint("\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad"
	    "\xe4\xb8\xad"
	    "\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad"
	    "\xe4\xb8\xad",
	    5, 10, 0, fps);
	tap_ok(n == 1, "length is counted in code points, not bytes");
	n = fingerprint("\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad"
	    "\xe4\xb8\xad", 5, 10, 0, fps);
	tap_ok(n == 0, "15 bytes of 5 code points are not longer than 10");
}

static void
check_nothing_to_compare(void)
{
	static const char *texts[] = {
		"", "   ", "\n\n\t", "。。。！！？", "图片",
		"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
		"a b c d e f g h i j k l m n o",
	};
	uint64_t	 fps[NSD_NSHASH_MAX_SENTENCES];
	size_t		 i;

	for (i = 0; i < sizeof texts / sizeof texts[0]; i++)
		tap_ok(fingerprint(texts[i], 5, 30, 0, fps) == 0,
		    "nothing to compare: text %zu", i + 1);
}

static void
check_code_like(void)
{
	/* Longest first: a line of script, then two of prose. */
	static const char text[] =
	    "window.ad_slot_1=(window.ad_slot_1||[]).concat([{slot='1001'}])\n"
	    "The council met on Monday to discuss the budget for roads.\n"
	    "Prose (with a bracket or two) is not code at all.";
	struct nsd_nshash_params p = { 5, 30, 0, 0, 1 };
	struct nsd_error	 err;
	uint64_t		 fps[NSD_NSHASH_MAX_SENTENCES];
	unsigned char		 code[NSD_NSHASH_MAX_SENTENCES];
	size_t			 n;

	nsd_nshash_free(&nh);
	if (nsd_nshash_init(&nh, &p, &err) == -1) {
		tap_ok(0, "init: %s", err.msg);
		return;
	}
	memset(code, 7, sizeof code);
	n = nsd_nshash_compute(&nh, text, strlen(text), fps, code, NULL);
	tap_ok(n == 3 && code[0] == 1 && code[1] == 0 && code[2] == 0,
	    "a line of script is flagged as code, prose is not");
	tap_ok(n == 3 && fps[0] == h("window.ad_slot_1=(window.ad_slot_1||"
	    "[]).concat([{slot='1001'}])"), "the flag leaves the fingerprint "
	    "as it was");
}

static void
check_marks(void)
{
	/*
	 * The keys of marks are part of the index format (nsdedup-index(5)):
	 * computed independently, in Python, from the formula there.
	 */
	tap_ok(nsd_nshash_mark(1, 2) == 0xbeeb8da1658eec67ULL,
	    "mark 2 of fingerprint 1");
	tap_ok(nsd_nshash_mark(0x16349d033284e932ULL, 3) ==
	    0xa034ddc440443bffULL, "mark 3 of a sentence's fingerprint");
	tap_ok(nsd_nshash_mark(1, 2) != nsd_nshash_mark(1, 3) &&
	    nsd_nshash_mark(1, 2) != nsd_nshash_mark(2, 2) &&
	    nsd_nshash_mark(1, 2) != 1, "marks differ by level and by "
	    "fingerprint");
}

/* Whether two texts have the same fingerprints and whole. */
static int
same_fingerprints(const char *a, const char *b)
{
	uint64_t	 fa[NSD_NSHASH_MAX_SENTENCES];
	uint64_t	 fb[NSD_NSHASH_MAX_SENTENCES];
	uint64_t	 whole;
	size_t		 na, nb;

	na = fingerprint(a, 5, 30, 0, fa);
	whole = nh.whole;
	nb = fingerprint(b, 5, 30, 0, fb);
	return (na > 0 && na == nb && nh.has_whole && nh.whole == whole &&
	    memcmp(fa, fb, na * sizeof fa[0]) == 0);
}

static void
check_version2(void)
{
	static const char wrapped[] =
	    "The quick brown fox jumps over\nthe lazy dog near the river. "
	    "Short one.\nAnother sentence that is long\n  enough to qualify "
	    "here! Tiny";
	uint64_t	 fps[NSD_NSHASH_MAX_SENTENCES];
	size_t		 n;

	version = 2;
	/*
	 * Computed with xxhsum -H3: the sentence
	 *     "今年全国粮食总产量再创历史新高,"
	 *     "达到一万三千亿斤以上,比上年增长百分之一点三"
	 * and the whole,
	 *     "据新华社报道:今年全国粮食总产量再创历史新高,"
	 *     "达到一万三千亿斤以上,比上年增长百分之一点三。"
	 */
	n = fingerprint("据新华社报道：\n"
	    "今年全国粮食总产量再创历史新高，\n"
	    "达到一万三千亿斤以上，比上年\n"
	    "增长百分之一点三。", 5, 30, 0, fps);
	tap_ok(n == 1 && fps[0] == 0xf07cdd1386da4459ULL,
	    "version 2 golden: a line break inside a sentence neither ends "
	    "it nor is part of it");
	tap_ok(nh.has_whole && nh.whole == 0xc04cda9356590623ULL,
	    "version 2 golden: the whole text without white space");
	n = fingerprint(wrapped, 5, 30, 0, fps);
	tap_ok(n == 2 && fps[0] == h("Thequickbrownfoxjumpsoverthelazydog"
	    "neartheriver") && fps[1] == h("Anothersentencethatislongenoughto"
	    "qualifyhere"), "version 2: sentences without their white space, "
	    "longest first");
	tap_ok(same_fingerprints(wrapped,
	    "  The quick brown fox jumps over the lazy dog near the river.  "
	    "Short one. Another sentence that is long enough to qualify here! "
	    "Tiny"), "version 2: a text wrapped at other places is the same");
	tap_ok(same_fingerprints(wrapped,
	    "<div class=\"post-body\"><p>The quick brown fox jumps over the "
	    "lazy dog near the river.</p>\n<p>Short one.<br>Another sentence "
	    "that is long enough to qualify here!</p> <!-- ad --> Tiny</div>"),
	    "version 2: markup tags read as spaces");
	tap_ok(!same_fingerprints(wrapped,
	    "The quick brown fox jumps over the lazy dog near the river. "
	    "Short one. Another sentence that is long enough to qualify here! "
	    "Tiny!"), "version 2: another character makes another whole");
	n = fingerprint("if a < b and c > d then the text keeps its signs of "
	    "comparison", 5, 30, 0, fps);
	tap_ok(n == 1 && fps[0] == h("ifa<bandc>dthenthetextkeepsitssignsof"
	    "comparison"), "version 2: '<' before a space starts no tag");
	n = fingerprint("<p>  </p><br>", 5, 30, 0, fps);
	tap_ok(n == 0 && !nh.has_whole,
	    "version 2: tags alone have nothing to compare, and no whole");
	n = fingerprint("tiny text", 5, 30, 0, fps);
	tap_ok(n == 0 && !nh.has_whole, "version 2: no whole for a short text");
	/* The fallback is the whole text without white space. */
	n = fingerprint("one two three\n\nfour five six\n  seven eight nine\n"
	    "ten eleven twelve", 5, 30, 0, fps);
	tap_ok(n == 1 && fps[0] == h("onetwothreefourfivesixseveneightnine"
	    "teneleventwelve") && nh.has_whole && nh.whole == fps[0],
	    "version 2: the fallback hashes the whole text without white "
	    "space");
	n = fingerprint(wrapped, 5, 30, 1, fps);
	tap_ok(n == 1 && !nh.has_whole, "compat has no version 2 and no whole");
	version = 1;
	n = fingerprint(wrapped, 5, 30, 0, fps);
	tap_ok(n == 1 && !nh.has_whole && fps[0] == h("The quick brown fox "
	    "jumps over\nthe lazy dog near the river. Short one.\nAnother "
	    "sentence that is long\nenough to qualify here! Tiny"),
	    "version 1 still ends a sentence at every line break (none "
	    "qualifies here), with no whole");
	/* mark(1, 1), computed in Python from the formula. */
	tap_ok(nsd_nshash_whole_key(1) == 0x910a2dec89025cc1ULL &&
	    nsd_nshash_whole_key(1) == nsd_nshash_mark(1, 1),
	    "the key of a whole is its mark 1");
}

/*
 * Flattening: the text and each piece without spaces and newlines, in one
 * pass; long enough that the 16-byte path runs, with a piece that starts
 * and ends inside a block and white space at a block's first and last
 * byte.
 */
static void
check_flatten(void)
{
	static const char text[] =
	    "  One two.\nthree  four five six seven eight nine ten "
	    "eleven\ntwelve: thirteen fourteen fifteen sixteen  ";
	static const char want[] =
	    "Onetwo.threefourfivesixseveneightnineteneleventwelve:"
	    "thirteenfourteenfifteensixteen";
	struct nsd_piece	 pieces[3] = {
		{ 2, 8 },	/* "One two." */
		{ 11, 55 },	/* "three ... twelve" */
		{ 68, 0 }	/* empty, at "thirteen" */
	};
	struct nsd_buf		 out = { 0 };
	struct nsd_error	 err;
	struct nsd_text		*t = nsd_text_new(NSD_SPLIT_PROSE, &err);

	nsd_text_flatten(t, text, strlen(text), pieces, 3, &out);
	tap_ok(out.len == strlen(want) && memcmp(out.data, want, out.len) == 0,
	    "flatten drops every space and newline of the whole");
	tap_ok(pieces[0].start == 0 && pieces[0].len == 7 &&
	    memcmp(out.data, "Onetwo.", 7) == 0,
	    "flatten moves the first piece onto the copy");
	tap_ok(pieces[1].start == 7 && pieces[1].len == 45 &&
	    memcmp(out.data + 7, "threefourfivesixseveneightnineteneleven"
	    "twelve", 45) == 0, "flatten moves a piece across blocks");
	tap_ok(pieces[2].start == 53 && pieces[2].len == 0,
	    "an empty piece stays empty, where it was");
	nsd_text_flatten(t, "", 0, NULL, 0, &out);
	tap_ok(out.len == 0, "flatten of nothing is nothing");
	nsd_buf_free(&out);
	nsd_text_free(t);
}

int
main(void)
{
	check_normalize();
	check_golden();
	check_selection();
	check_nothing_to_compare();
	check_code_like();
	check_marks();
	check_version2();
	check_flatten();
	nsd_nshash_free(&nh);
	return (tap_done());
}
