/*
 * json_fuzz.c: the NDJSON scanner against an independent strict parser.
 *
 * For one input (one line; a newline in it is white space to both sides),
 * the scanner's verdict on "this is one valid JSON object" must be the
 * oracle's. The oracle is jansson (NSD_FUZZ_JANSSON) or yajl
 * (NSD_FUZZ_YAJL), in separate binaries since their symbols clash; built
 * with neither (the replay driver without them), only the scanner's own
 * properties below are checked.
 *
 * Where the scanner differs on purpose, the input is skipped, never the
 * other way round; each exception is one of these:
 *
 *  - jansson refuses a \u escape naming a lone UTF-16 surrogate; RFC 8259
 *    (section 8.2) allows it and the scanner accepts it (decoding it as
 *    U+FFFD), as yajl does;
 *  - jansson refuses integers beyond 64 bits and reals beyond a double;
 *    RFC 8259 sets no range and the scanner checks only the grammar;
 *  - jansson stops at 2048 levels of nesting; the scanner has no limit;
 *  - jansson refuses a member name with \u0000 in it (its keys are C
 *    strings); RFC 8259 allows it, and so does the scanner.
 *
 * jansson takes a NUL byte after a number ({"a":2<NUL>}) as the end of
 * the input; since a raw NUL is never valid JSON, the oracle's verdict is
 * jansson's and "no NUL byte".
 *
 * yajl is laxer than RFC 8259 in two ways, which the oracle makes up for
 * rather than skipping: it takes \v and \f as white space, and it checks
 * only the shape of UTF-8 sequences (so it takes overlong forms,
 * surrogates and code points above U+10FFFF). The oracle's verdict is
 * therefore yajl's and strict_utf8() and "no \v or \f byte anywhere"
 * (neither may appear raw in valid JSON, in a string or out of one).
 * Third, yajl_complete_parse() takes a line whose value is followed by an
 * unterminated string ({"a":1}") as complete, the string still waiting
 * for its end; so the oracle also asks yajl where the top-level object
 * ended (the offset at its end_map callback), and wants nothing but white
 * space after that.
 *
 * The scanner's own properties, with any oracle: accepted as an object
 * means accepted as a value of type object; every span a query finds lies
 * in the line and scans alone as a value of its type; a found string
 * decodes to valid UTF-8.
 */
#include "config.h"

#include <string.h>

#include "json.h"
#include "utf8.h"
#include "fuzz.h"

#if defined(NSD_FUZZ_JANSSON)
#include <jansson.h>
#elif defined(NSD_FUZZ_YAJL)
#include <yajl/yajl_parse.h>
#endif

#define NQUERIES	3

/* Paths that reach into members, arrays and the empty name. */
static const char *fields[NQUERIES] = { "text", "/a/0/b", "/" };

static struct nsd_json_path	 paths[NQUERIES];
static struct nsd_json_query	 queries[NQUERIES];
static struct nsd_json_scanner	 sc, plain;
static struct nsd_buf		 decoded;

/* RFC 8259 white space. */
static int
is_space(unsigned char c)
{
	return (c == ' ' || c == '\t' || c == '\n' || c == '\r');
}

static void
init(void)
{
	struct nsd_error	 err;
	size_t			 i;

	for (i = 0; i < NQUERIES; i++) {
		if (nsd_json_path_parse(&paths[i], fields[i], &err) == -1)
			FUZZ_FAIL("%s", err.msg);
		queries[i].path = &paths[i];
		queries[i].all = i == 0;
	}
	nsd_json_scanner_init(&sc, queries, NQUERIES);
	nsd_json_scanner_init(&plain, NULL, 0);
}

#if defined(NSD_FUZZ_YAJL)
/*
 * RFC 3629 UTF-8, written here from the RFC's table rather than taken from
 * src/utf8.h, so that the oracle shares no code with the scanner.
 */
static int
strict_utf8(const unsigned char *s, size_t n)
{
	size_t		 i = 0, k, len;
	unsigned char	 lo, hi;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		lo = 0x80;
		hi = 0xBF;
		if (s[i] >= 0xC2 && s[i] <= 0xDF)
			len = 2;
		else if (s[i] >= 0xE0 && s[i] <= 0xEF) {
			len = 3;
			if (s[i] == 0xE0)
				lo = 0xA0;
			if (s[i] == 0xED)
				hi = 0x9F;
		} else if (s[i] >= 0xF0 && s[i] <= 0xF4) {
			len = 4;
			if (s[i] == 0xF0)
				lo = 0x90;
			if (s[i] == 0xF4)
				hi = 0x8F;
		} else
			return (0);
		if (n - i < len || s[i + 1] < lo || s[i + 1] > hi)
			return (0);
		for (k = 2; k < len; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xBF)
				return (0);
		i += len;
	}
	return (1);
}
#endif

#if defined(NSD_FUZZ_JANSSON)
#define ORACLE	"jansson"

/* 1 valid object, 0 not, -1 a deliberate difference (skip). */
static int
oracle(const unsigned char *s, size_t n, int scanner_ok)
{
	static const char *skip[] = {
		"invalid Unicode", "too big integer",
		"too big negative integer",
		"real number overflow", "maximum parsing depth reached",
		"NUL byte in object key not supported"
	};
	json_error_t	 e;
	json_t		*v;
	size_t		 i;
	int		 ok;

	v = json_loadb((const char *)s, n, JSON_DECODE_ANY | JSON_ALLOW_NUL,
	    &e);
	if (v == NULL) {
		for (i = 0; scanner_ok && i < sizeof skip / sizeof skip[0];
		    i++)
			if (strstr(e.text, skip[i]) != NULL)
				return (-1);
		return (0);
	}
	ok = json_is_object(v);
	json_decref(v);
	/* A raw NUL is never valid, in a string or out of one. */
	return (ok && memchr(s, '\0', n) == NULL);
}
#elif defined(NSD_FUZZ_YAJL)
#define ORACLE	"yajl"

/* Where yajl says the top-level object ends. */
struct yajl_state {
	yajl_handle	 h;
	size_t		 depth;
	size_t		 end;
};

static int
open_map(void *ctx)
{
	((struct yajl_state *)ctx)->depth++;
	return (1);
}

static int
close_map(void *ctx)
{
	struct yajl_state	*y = ctx;

	if (--y->depth == 0)
		y->end = yajl_get_bytes_consumed(y->h);
	return (1);
}

static int
oracle(const unsigned char *s, size_t n, int scanner_ok)
{
	static const yajl_callbacks cb = {
		.yajl_start_map = open_map, .yajl_end_map = close_map
	};
	struct yajl_state	 y = { NULL, 0, 0 };
	size_t			 i;
	int			 ok;

	(void)scanner_ok;
	if ((y.h = yajl_alloc(&cb, NULL, &y)) == NULL)
		FUZZ_FAIL("yajl_alloc");
	ok = yajl_parse(y.h, s, n) == yajl_status_ok &&
	    yajl_complete_parse(y.h) == yajl_status_ok;
	yajl_free(y.h);
	if (!ok || !strict_utf8(s, n) || memchr(s, '\v', n) != NULL ||
	    memchr(s, '\f', n) != NULL)
		return (0);
	/* Valid: an object when its first byte that is not space is '{'. */
	for (i = 0; i < n && is_space(s[i]); i++)
		continue;
	if (i == n || s[i] != '{')
		return (0);
	/* Nothing but white space after it. */
	for (i = y.end; i < n && is_space(s[i]); i++)
		continue;
	return (y.end > 0 && i == n);
}
#endif

/* A span a query found must lie in the line and be a value of its type. */
static void
check_span(const char *line, size_t n, const struct nsd_json_span *sp)
{
	if (sp->type == NSD_JSON_NONE)
		return;
	FUZZ_CHECK(sp->start <= n && sp->len <= n - sp->start);
	FUZZ_CHECK(sp->len > 0);
	if (nsd_json_scan(&plain, line + sp->start, sp->len, 0) == -1)
		FUZZ_FAIL("span %zu+%zu does not scan alone: %s", sp->start,
		    sp->len, plain.error);
	FUZZ_CHECK(plain.top == sp->type);
	if (sp->type == NSD_JSON_STRING) {
		decoded.len = 0;
		nsd_json_decode_string(line + sp->start, sp->len, &decoded);
		FUZZ_CHECK(nsd_utf8_check(decoded.data, decoded.len) ==
		    decoded.len);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 ready;
	const char	*line = (const char *)data;
	size_t		 i, k;
	int		 ok, any;

	if (!ready) {
		init();
		ready = 1;
	}
	ok = nsd_json_scan(&sc, line, size, 1) == 0;
	if (!ok)
		FUZZ_CHECK(sc.error != NULL && sc.error_at <= size);
	any = nsd_json_scan(&plain, line, size, 0) == 0;
	if (ok && (!any || plain.top != NSD_JSON_OBJECT))
		FUZZ_FAIL("an object, but not a value of type object");
	if (ok) {
		/* The scan above reset plain's results, not sc's. */
		for (i = 0; i < NQUERIES; i++) {
			check_span(line, size, &queries[i].found);
			for (k = 0; k < queries[i].nspans; k++)
				check_span(line, size, &queries[i].spans[k]);
		}
		/* A new member goes before the closing brace. */
		for (i = sc.insert_at; i < size &&
		    is_space(line[i]); i++)
			continue;
		FUZZ_CHECK(i < size && line[i] == '}');
	}
#ifdef ORACLE
	{
		int	 want = oracle(data, size, ok);

		if (want != -1 && want != ok)
			FUZZ_FAIL("the scanner %s, %s %s (scanner: %s at %zu)",
			    ok ? "accepts" : "rejects", ORACLE,
			    want ? "accepts" : "rejects",
			    ok ? "ok" : sc.error, sc.error_at);
	}
#endif
	return (0);
}
