/*
 * hanfold_test: Han script folding (hanfold.h) and normalization version
 * 3, which folds: the table that src/gen-hanfold made from OpenCC's
 * dictionaries keeps the promises the hot paths rely on, and sentences in
 * Simplified, Traditional, Taiwan's and Hong Kong's forms normalize to
 * the same text, and so fingerprint alike by every method.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "hanfold.h"
#include "minhash.h"
#include "nshash.h"
#include "simhash.h"
#include "tap.h"
#include "text.h"
#include "utf8.h"

/* Han as simhash.c's definition has it: its CJK kind, less Kana and Hangul. */
static int
is_han(uint32_t c)
{
	return ((c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
	    (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x3FFFF));
}

static size_t
utf8_length(uint32_t c)
{
	char	 buf[4];

	return (nsd_utf8_encode(c, buf));
}

static void
check_table(void)
{
	size_t		 i, unsorted = 0, not_han = 0, longer = 0, again = 0;
	size_t		 not_three = 0, lookup = 0, in_place = 0;
	uint32_t	 from, to;
	unsigned char	 s[4], o[4];
	uint64_t	 sum;

	nsd_hanfold_init();
	tap_ok(nsd_hanfold_npairs > 3000, "the table has %zu pairs",
	    nsd_hanfold_npairs);
	tap_ok(nsd_hanfold_size() == nsd_hanfold_npairs,
	    "the lookups take every pair (%zu of %zu)", nsd_hanfold_size(),
	    nsd_hanfold_npairs);
	for (i = 0; i < nsd_hanfold_npairs; i++) {
		from = nsd_hanfold_pairs[i][0];
		to = nsd_hanfold_pairs[i][1];
		unsorted += i > 0 && nsd_hanfold_pairs[i - 1][0] >= from;
		not_han += !is_han(from) || !is_han(to);
		longer += utf8_length(to) > utf8_length(from);
		not_three += from < 0x10000 && utf8_length(to) != 3;
		again += nsd_hanfold(to) != to;
		lookup += nsd_hanfold(from) != to;
		nsd_utf8_encode(from, (char *)s);
		if (from < 0x10000) {
			nsd_hanfold3(s);
			in_place += memcmp(s, o, nsd_utf8_encode(to,
			    (char *)o)) != 0;
		} else
			in_place += nsd_hanfold4(s, s) != utf8_length(to) ||
			    memcmp(s, o, nsd_utf8_encode(to, (char *)o)) != 0;
	}
	tap_ok(unsorted == 0, "sorted by the code point folded (%zu not)",
	    unsorted);
	tap_ok(not_han == 0, "every pair is Han to Han (%zu not)", not_han);
	tap_ok(longer == 0 && not_three == 0, "no fold is longer in UTF-8 "
	    "(%zu), and a BMP one stays three bytes (%zu not)", longer,
	    not_three);
	tap_ok(again == 0, "what a character folds to folds to itself "
	    "(%zu not)", again);
	tap_ok(lookup == 0 && in_place == 0, "nsd_hanfold() finds every pair "
	    "(%zu missed), and so do the in-place folds (%zu missed)", lookup,
	    in_place);
	tap_ok(nsd_hanfold('a') == 'a' && nsd_hanfold(0x4E2D) == 0x4E2D &&
	    nsd_hanfold(0x1F600) == 0x1F600,
	    "ASCII, a Simplified character and an emoji do not fold");
	sum = nsd_hanfold_checksum();
	tap_ok(sum != 0 && sum == nsd_hanfold_checksum(),
	    "the checksum is set and stable (%016" PRIx64 ")", sum);
}

/*
 * Characters that every OpenCC since 1.0 converts: Traditional and
 * Simplified, and the forms of Taiwan and Hong Kong.
 */
static void
check_pairs(void)
{
	static const struct {
		uint32_t	 from, to;
		const char	*what;
	} pairs[] = {
		{ 0x9AD4, 0x4F53, "體 (Traditional) to 体" },
		{ 0x767C, 0x53D1, "發 (Traditional, to send) to 发" },
		{ 0x9AEE, 0x53D1, "髮 (Traditional, hair) to 发" },
		{ 0x8457, 0x7740, "著 (Taiwan) to 着" },
		{ 0x88E1, 0x91CC, "裡 (Taiwan) to 里" },
		{ 0x88CF, 0x91CC, "裏 (Traditional) to 里" },
		{ 0x70BA, 0x4E3A, "為 (Taiwan) to 为" },
		{ 0x7232, 0x4E3A, "爲 (Traditional) to 为" },
		{ 0x8AAC, 0x8BF4, "説 (Hong Kong) to 说" },
		{ 0x6EAB, 0x6E29, "溫 (Traditional) to 温" },
		{ 0x2B37F, 0x8C2B, "U+2B37F (Simplified, four bytes) to 谫" },
	};
	size_t	 i;

	for (i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
		tap_ok(nsd_hanfold(pairs[i].from) == pairs[i].to,
		    "folds %s", pairs[i].what);
}

/*
 * The same sentences in each script; the first of each set is
 * Simplified, and what the others normalize to by version 3 (with the
 * full-width comma folded to ASCII).
 */
static const char *const sentences[][4] = {
	{ "这个软体的开发团队说,网路连线问题已经解决了。",
	  "這個軟體的開發團隊說，網路連線問題已經解決了。",	/* Taiwan */
	  NULL },
	{ "他说台湾众人的税率很温和,让人喜悦。",
	  "他説臺灣衆人的稅率很温和，讓人喜悦。",	/* Hong Kong */
	  "他說台灣眾人的稅率很溫和，讓人喜悅。",	/* Taiwan */
	  NULL },
	{ "为了这个问题,他们在里面睡着了。",
	  "爲了這個問題，他們在裏面睡着了。",	/* OpenCC's standard */
	  "為了這個問題，他們在裡面睡著了。",	/* Taiwan */
	  NULL },
	{ "谫陋 𠀾",
	  "譾陋 \xf0\xa0\x81\x9e",	/* four bytes to three, and to four */
	  NULL },
};

static int
normalizes_to(const char *in, const char *want, unsigned version)
{
	struct nsd_buf	 out = { 0 };
	int		 same;

	nsd_text_normalize(in, strlen(in), &out, version);
	same = out.len == strlen(want) && memcmp(out.data, want, out.len) == 0;
	nsd_buf_free(&out);
	return (same);
}

static void
check_normalize(void)
{
	size_t	 i, j;

	for (i = 0; i < sizeof sentences / sizeof sentences[0]; i++)
		for (j = 1; sentences[i][j] != NULL; j++) {
			tap_ok(normalizes_to(sentences[i][j], sentences[i][0],
			    3), "version 3 folds \"%s\"", sentences[i][j]);
			tap_ok(!normalizes_to(sentences[i][j],
			    sentences[i][0], 2),
			    "version 2 does not fold \"%s\"",
			    sentences[i][j]);
		}
}

/* An article: a sentence set four times over, each time numbered. */
static void
article(const char *sentence, char *buf, size_t size)
{
	snprintf(buf, size, "%s第一段。%s第二段。%s第三段。%s第四段。",
	    sentence, sentence, sentence, sentence);
}

/* nshash's fingerprints of text by version; their number. */
static size_t
nshash_of(const char *text, unsigned version, uint64_t *fps)
{
	struct nsd_nshash_params p = { 5, 10, 0, 0, version };
	struct nsd_nshash	 h;
	struct nsd_error	 err;
	size_t			 n;

	if (nsd_nshash_init(&h, &p, &err) == -1)
		return (0);
	n = nsd_nshash_compute(&h, text, strlen(text), fps, NULL, NULL);
	nsd_nshash_free(&h);
	return (n);
}

/* SimHash of text by version (2-grams, one feature at least). */
static uint64_t
simhash_of(const char *text, unsigned version)
{
	struct nsd_simhash_params p = { 2, 3, 1, 0, version };
	struct nsd_simhash	 sh;
	uint64_t		 fp = 0;

	nsd_simhash_init(&sh, &p);
	nsd_simhash_compute(&sh, text, strlen(text), &fp, NULL);
	nsd_simhash_free(&sh);
	return (fp);
}

/* Whether MinHash's minima of a and b, by version, are the same. */
static int
same_minima(const char *a, const char *b, unsigned version)
{
	struct nsd_simhash_params p = { 2, 3, 1, 0, version };
	struct nsd_simhash	 sh;
	uint64_t		 ma[NSD_MINHASH_BINS];
	uint64_t		 mb[NSD_MINHASH_BINS];

	nsd_simhash_init(&sh, &p);
	nsd_simhash_minima(&sh, a, strlen(a), ma, NULL);
	nsd_simhash_minima(&sh, b, strlen(b), mb, NULL);
	nsd_simhash_free(&sh);
	return (memcmp(ma, mb, sizeof ma) == 0);
}

static void
check_methods(void)
{
	char		 simp[1024], other[1024];
	uint64_t	 fa[NSD_NSHASH_MAX_SENTENCES];
	uint64_t	 fb[NSD_NSHASH_MAX_SENTENCES];
	size_t		 i, j, na, nb;
	unsigned	 v;

	for (i = 0; i < sizeof sentences / sizeof sentences[0] - 1; i++) {
		article(sentences[i][0], simp, sizeof simp);
		for (j = 1; sentences[i][j] != NULL; j++) {
			article(sentences[i][j], other, sizeof other);
			for (v = 2; v <= 3; v++) {
				na = nshash_of(simp, v, fa);
				nb = nshash_of(other, v, fb);
				tap_ok(na > 0 && (v == 3) == (na == nb &&
				    memcmp(fa, fb, na * sizeof fa[0]) == 0),
				    "nshash, version %u: the %s of \"%s\"", v,
				    v == 3 ? "same fingerprints" :
				    "other fingerprints", sentences[i][j]);
				tap_ok((v == 3) == (simhash_of(simp, v) ==
				    simhash_of(other, v)),
				    "simhash, version %u: the %s of \"%s\"", v,
				    v == 3 ? "same fingerprint" :
				    "another fingerprint", sentences[i][j]);
				tap_ok((v == 3) == same_minima(simp, other, v),
				    "minhash, version %u: the %s of \"%s\"", v,
				    v == 3 ? "same minima" : "other minima",
				    sentences[i][j]);
			}
		}
	}
}

/*
 * The definition, by hand: a Traditional sentence's nshash fingerprint by
 * version 3 is the XXH3-64 of its Simplified form as the definition has
 * it (full-width comma folded, the final mark dropped).
 */
static void
check_golden(void)
{
	uint64_t	 fps[NSD_NSHASH_MAX_SENTENCES];
	const char	*want = "这个软体的开发团队说,网路连线问题已经解决了,"
			    "用户不需要重新安装";
	size_t		 n;

	n = nshash_of("這個軟體的開發團隊說，網路連線問題已經解決了，"
	    "用戶不需要重新安裝。", 3, fps);
	tap_ok(n == 1 && fps[0] == XXH3_64bits_withSeed(want, strlen(want), 0),
	    "golden: nshash version 3 hashes the folded sentence");
}

int
main(void)
{
	check_table();
	check_pairs();
	check_normalize();
	check_methods();
	check_golden();
	return (tap_done());
}
