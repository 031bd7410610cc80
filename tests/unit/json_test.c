/*
 * json_test.c: the JSON scanner, on hand-made lines and on JSONTestSuite.
 *
 * JSONTestSuite (nst/JSONTestSuite, test_parsing/) is read from
 * $NSD_SHARED_DATA/jsontestsuite (make check points NSD_SHARED_DATA at
 * ../shared/data beside the source tree); without it those checks are
 * skipped. Every y_ file must be
 * accepted, every n_ file rejected, and the i_ files must match what
 * nsdedup(1) documents.
 */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tap.h"

static struct nsd_json_path	 paths[4];
static struct nsd_json_query	 queries[4];
static struct nsd_json_scanner	 sc;

/* Scan line with queries for the given fields (NULL-terminated, at most 4). */
static int
scan(const char *line, const char **fields, int all_from)
{
	struct nsd_error	 err;
	size_t			 i, n = 0;

	nsd_json_scanner_free(&sc);
	for (i = 0; i < 4; i++)
		nsd_json_path_free(&paths[i]);
	memset(queries, 0, sizeof queries);
	for (; fields != NULL && fields[n] != NULL; n++) {
		if (nsd_json_path_parse(&paths[n], fields[n], &err) == -1)
			return (-2);
		queries[n].path = &paths[n];
		queries[n].all = all_from >= 0 && (int)n >= all_from;
	}
	nsd_json_scanner_init(&sc, queries, n);
	return (nsd_json_scan(&sc, line, strlen(line), 1));
}

/* The text of query q's value, as raw token bytes. */
static int
found_is(int q, const char *line, const char *want)
{
	const struct nsd_json_span *f = &queries[q].found;

	return (f->type != NSD_JSON_NONE && f->len == strlen(want) &&
	    memcmp(line + f->start, want, f->len) == 0);
}

static void
check_lines(void)
{
	static const char *valid[] = {
		"{}", "{ }", "{\"a\":1}", " {\"a\":[1,2,{\"b\":null}]} \r",
		"{\"a\":\"\\u00e9\\ud83d\\ude00\\n\"}", "{\"\":0}",
		"{\"n\":-0.5e+10,\"t\":true,\"f\":false}",
		"{\"s\":\"\xe4\xb8\xad\"}",
	};
	static const struct { const char *line, *why; } invalid[] = {
		{ "", "unexpected end of line" },
		{ "[1]", "not a JSON object" },
		{ "{\"a\":1,}", "expected a member name" },
		{ "{\"a\" 1}", "expected ':'" },
		{ "{\"a\":01}", "expected ',' or '}'" },
		{ "{\"a\":1} x", "text after the JSON value" },
		{ "{\"a\":\"\\x\"}", "invalid escape in string" },
		{ "{\"a\":\"\\u12\"}", "invalid \\u escape in string" },
		{ "{\"a\":\"\t\"}", "control character in string" },
		{ "{\"a\":\"\xc3\x28\"}", "invalid UTF-8" },
		{ "{\"a\":\"\xed\xa0\x80\"}", "invalid UTF-8" },
		{ "{\"a\":tru}", "invalid literal" },
		{ "{\"a\":-}", "invalid number" },
		{ "{\"a\":[1 2]}", "expected ',' or ']'" },
		{ "{\"a\":\"x", "unterminated string" },
	};
	size_t	 i;

	for (i = 0; i < sizeof valid / sizeof valid[0]; i++)
		tap_ok(scan(valid[i], NULL, -1) == 0, "valid: %s", valid[i]);
	for (i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
		int	 rc = scan(invalid[i].line, NULL, -1);

		tap_ok(rc == -1 && strcmp(sc.error, invalid[i].why) == 0,
		    "invalid: '%s' -> %s (got %s)", invalid[i].line,
		    invalid[i].why, rc == -1 ? sc.error : "accepted");
	}
	tap_ok(scan("{\"a\":1,\0}", NULL, -1) == -1, "NUL byte rejected");
	{
		const char	 line[] = "{\"a\":\"x\0y\"}";

		nsd_json_scanner_free(&sc);
		nsd_json_scanner_init(&sc, NULL, 0);
		tap_ok(nsd_json_scan(&sc, line, sizeof line - 1, 1) == -1 &&
		    strcmp(sc.error, "NUL byte") == 0 && sc.error_at == 7,
		    "NUL byte inside a string named, at its offset");
	}
}

static void
check_fields(void)
{
	const char	*f1[] = { "text", "id", NULL };
	const char	*f2[] = { "/a/b", "/a/c/1", "/x~1y", "/e~0", NULL };
	const char	*f3[] = { "similar_id", NULL };
	const char	*line;

	line = "{\"id\":\"abc\",\"text\":\"hello\",\"n\":{\"text\":\"inner\"}}";
	tap_ok(scan(line, f1, -1) == 0 && found_is(0, line, "\"hello\"") &&
	    found_is(1, line, "\"abc\""),
	    "top-level members found, nested ones ignored");
	line = "{\"te\\u0078t\":\"esc\",\"id\":42}";
	tap_ok(scan(line, f1, -1) == 0 && found_is(0, line, "\"esc\"") &&
	    found_is(1, line, "42") && queries[1].found.type == NSD_JSON_NUMBER,
	    "escaped member names match, numbers are ids");
	line = "{\"text\":\"first\",\"text\":\"last\"}";
	tap_ok(scan(line, f1, -1) == 0 && found_is(0, line, "\"last\""),
	    "the last of duplicate members wins");
	line = "{\"a\":{\"b\":\"B\",\"c\":[0,\"C1\",2]},\"x/y\":1,\"e~\":[]}";
	tap_ok(scan(line, f2, -1) == 0 && found_is(0, line, "\"B\"") &&
	    found_is(1, line, "\"C1\"") && found_is(2, line, "1") &&
	    found_is(3, line, "[]") && queries[3].found.type == NSD_JSON_ARRAY,
	    "JSON Pointers: nested members, array index, ~1 and ~0");
	line = "{\"a\":[[\"x\"],{\"b\":\"no\"}],\"a\":{\"b\":\"yes\"}}";
	tap_ok(scan(line, f2, -1) == 0 && found_is(0, line, "\"yes\""),
	    "JSON Pointer follows the last duplicate member");
	line = "{\"a\":{\"c\":{\"1\":\"obj\"}}}";
	tap_ok(scan(line, f2, -1) == 0 && found_is(1, line, "\"obj\""),
	    "a numeric pointer token also names an object member");
	line = "{\"similar_id\":1,\"x\":2,\"similar_id\":\"z\"}";
	tap_ok(scan(line, f3, 0) == 0 && queries[0].nspans == 2 &&
	    queries[0].spans[0].start == 14 && queries[0].spans[1].len == 3,
	    "every occurrence of an annotation member is kept");
	line = "{\"a\":1 ,\"b\":[] }";
	tap_ok(scan(line, NULL, -1) == 0 && sc.insert_at == 14 &&
	    sc.has_members,
	    "insertion point is right after the last value");
	line = "{  }";
	tap_ok(scan(line, NULL, -1) == 0 && sc.insert_at == 3 &&
	    !sc.has_members,
	    "insertion point of an empty object is before its brace");
}

static void
check_decode(void)
{
	static const struct {
		const char	*tok, *want;
		size_t		 wantlen;
	} cases[] = {
		{ "\"plain\"", "plain", 5 },
		{ "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"", "a\"b\\c/d\b\f\n\r\t",
		    12 },
		{ "\"\\u00e9\\u4e2d\"", "\xc3\xa9\xe4\xb8\xad", 5 },
		{ "\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4 },
		{ "\"\\ud800x\"", "\xef\xbf\xbdx", 4 },
		{ "\"\\udc00\\ud800\"", "\xef\xbf\xbd\xef\xbf\xbd", 6 },
		{ "\"a\\u0000b\"", "a\0b", 3 },
	};
	struct nsd_buf	 out = { 0 };
	size_t		 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		out.len = 0;
		nsd_json_decode_string(cases[i].tok, strlen(cases[i].tok),
		    &out);
		tap_ok(out.len == cases[i].wantlen &&
		    memcmp(out.data, cases[i].want, out.len) == 0,
		    "decode %s", cases[i].tok);
	}
	nsd_buf_free(&out);
}

/* Whether the member names of line are want, "|"-separated tokens. */
static int
names_are(const char *line, const char *want)
{
	struct nsd_json_names	 names = { 0 };
	struct nsd_buf		 got = { 0 };
	size_t			 i;
	int			 same;

	if (nsd_json_member_names(line, strlen(line), SIZE_MAX, &names) != 0) {
		nsd_json_names_free(&names);
		return (0);
	}
	for (i = 0; i < names.n; i++) {
		if (i > 0)
			nsd_buf_putc(&got, '|');
		nsd_buf_append(&got, line + names.v[i].start,
		    names.v[i].len);
	}
	same = got.len == strlen(want) && (got.len == 0 ||
	    memcmp(got.data, want, got.len) == 0);
	nsd_json_names_free(&names);
	nsd_buf_free(&got);
	return (same);
}

static void
check_member_names(void)
{
	static const char *faulty[] = {
		"", "[1]", "\"a\"", "{", "{\"a\"", "{\"a\":1", "{\"a\":\"x}",
		"{\"a\":[1}", "{\"a\":1,", "{\"a\" 1}", "{1:2}",
	};
	struct nsd_json_names	 names = { 0 };
	size_t			 i;

	tap_ok(names_are("{}", "") && names_are(" { } ", ""),
	    "member names: an empty object has none");
	tap_ok(names_are("{\"id\":1,\"text\":\"a\",\"title\":null}",
	    "\"id\"|\"text\"|\"title\""),
	    "member names: in order");
	tap_ok(names_are("{ \"a\" : { \"b\" : [ 1 , { \"c\" : 2 } ] } ,"
	    " \"d\" : [ ] }", "\"a\"|\"d\""),
	    "member names: the top level only, with white space around");
	tap_ok(names_are("{\"s\":\"}],{[\\\"\",\"t\\\"\\u0078\":true}",
	    "\"s\"|\"t\\\"\\u0078\""),
	    "member names: brackets and escaped quotes in strings skipped, "
	    "names as their tokens");
	tap_ok(names_are("{\"a\":1,\"a\":2}", "\"a\"|\"a\""),
	    "member names: a repeated name twice");
	for (i = 0; i < sizeof faulty / sizeof faulty[0]; i++)
		tap_ok(nsd_json_member_names(faulty[i], strlen(faulty[i]),
		    SIZE_MAX, &names) == -1,
		    "member names: %s is not an object", faulty[i]);
	/* The names before a fault, never a byte past the end. */
	tap_ok(nsd_json_member_names("{\"a\":1,\"b\":2}", 10, SIZE_MAX,
	    &names) == -1 && names.n == 2 && names.v[1].start == 7 &&
	    names.v[1].len == 3,
	    "member names: those before a fault are given");
	tap_ok(nsd_json_member_names("{\"a\":1,\"b\":2}", 9, SIZE_MAX,
	    &names) == -1 && names.n == 1,
	    "member names: nothing past the end is read");
	tap_ok(nsd_json_member_names("{\"a\":1,\"b\":2,\"c\":3}", 19, 2,
	    &names) == 1 && names.n == 2 && names.v[1].start == 7,
	    "member names: the first max, and word of more");
	tap_ok(nsd_json_member_names("{\"a\":1,\"b\":2}", 13, 2,
	    &names) == 0 && names.n == 2, "member names: max of them, no more");
	nsd_json_names_free(&names);
}

static char *
read_file(const char *path, size_t *len)
{
	FILE	*f;
	char	*buf;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL)
		return (NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc(n + 1);
	*len = fread(buf, 1, n, f);
	fclose(f);
	return (buf);
}

static int
by_name(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/*
 * The implementation-defined files: what nsdedup(1) says it does. Numbers
 * of any size and lone surrogate escapes are accepted; bytes that are not
 * UTF-8 (and so UTF-16 input) are rejected; a BOM is accepted only at the
 * start of an input, by the reader, so the scanner itself rejects it.
 */
static int
expect_implementation_defined(const char *name)
{
	static const char *accepted[] = {
		"i_number_double_huge_neg_exp.json", "i_number_huge_exp.json",
		"i_number_neg_int_huge_exp.json",
		"i_number_pos_double_huge_exp.json",
		"i_number_real_neg_overflow.json",
		"i_number_real_pos_overflow.json",
		"i_number_real_underflow.json", "i_number_too_big_neg_int.json",
		"i_number_too_big_pos_int.json",
		"i_number_very_big_negative_int.json",
		"i_object_key_lone_2nd_surrogate.json",
		"i_string_1st_surrogate_but_2nd_missing.json",
		"i_string_1st_valid_surrogate_2nd_invalid.json",
		"i_string_incomplete_surrogate_and_escape_valid.json",
		"i_string_incomplete_surrogate_pair.json",
		"i_string_incomplete_surrogates_escape_valid.json",
		"i_string_invalid_lonely_surrogate.json",
		"i_string_invalid_surrogate.json",
		"i_string_inverted_surrogates_U+1D11E.json",
		"i_string_lone_second_surrogate.json",
		"i_structure_500_nested_arrays.json",
	};
	size_t	 i;

	for (i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
		if (strcmp(name, accepted[i]) == 0)
			return (1);
	return (0);
}

static void
check_suite(void)
{
	const char	*data = getenv("NSD_SHARED_DATA");
	char		 dir[4096], path[8192], **names = NULL;
	size_t		 n = 0, i, len;
	struct dirent	*de;
	DIR		*d;

	snprintf(dir, sizeof dir, "%s/jsontestsuite/test_parsing",
	    data != NULL ? data : "../shared/data");
	if ((d = opendir(dir)) == NULL) {
		tap_skip("JSONTestSuite not found at %s", dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != 'y' && de->d_name[0] != 'n' &&
		    de->d_name[0] != 'i')
			continue;
		names = xreallocarray(names, n + 1, sizeof *names);
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	for (i = 0; i < n; i++) {
		char	*buf;
		int	 want, got;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if ((buf = read_file(path, &len)) == NULL) {
			tap_ok(0, "%s: cannot read", names[i]);
			continue;
		}
		nsd_json_scanner_free(&sc);
		nsd_json_scanner_init(&sc, NULL, 0);
		got = nsd_json_scan(&sc, buf, len, 0) == 0;
		if (names[i][0] == 'i')
			want = expect_implementation_defined(names[i]);
		else
			want = names[i][0] == 'y';
		tap_ok(got == want, "%s %s", names[i],
		    got ? "accepted" : "rejected");
		free(buf);
		free(names[i]);
	}
	free(names);
}

int
main(void)
{
	check_lines();
	check_fields();
	check_decode();
	check_member_names();
	check_suite();
	nsd_json_scanner_free(&sc);
	return (tap_done());
}
