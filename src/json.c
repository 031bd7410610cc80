/*
 * json.c: the strict RFC 8259 scanner behind NDJSON records.
 *
 * One forward pass over the line validates everything (grammar, string
 * escapes, UTF-8) and, at the same time, tracks where the requested fields
 * are. The parser is a loop over an explicit stack rather than recursion,
 * so nesting depth is bounded only by memory, never by the C stack.
 *
 * Finding fields while validating: each query holds a path of tokens and
 * the number of them that the currently open containers have matched
 * ("matched"). A container at depth D is on a query's path exactly when
 * matched == D - 1; only then are its member names (or array indices)
 * compared with token D - 1. A match marks the next value as "pending";
 * if that value ends the path it is captured, and if it is a container
 * that the path continues into, matched grows by one until it closes.
 * Queries therefore cost nothing inside containers off their paths.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "cpu.h"
#include "json.h"
#include "utf8.h"
#include "utf8_avx2.h"

/* Bytes that may appear in a string as themselves and need no checking. */
#define Z4	0, 0, 0, 0
#define Z16	Z4, Z4, Z4, Z4
#define O4	1, 1, 1, 1
#define O16	O4, O4, O4, O4

static const unsigned char plain_byte[256] = {
	Z16, Z16,			/* 0x00..0x1F: control characters */
	1, 1, 0, O4, O4, 1, 1, 1, 1, 1,	/* 0x20..0x2F, but not '"' */
	O16,				/* 0x30..0x3F */
	O16,				/* 0x40..0x4F */
	O4, O4, O4, 0, 1, 1, 1,		/* 0x50..0x5F, but not '\\' */
	O16, O16,			/* 0x60..0x7F */
	Z16, Z16, Z16, Z16, Z16, Z16, Z16, Z16	/* 0x80..0xFF: UTF-8 */
};

int
nsd_json_path_parse(struct nsd_json_path *path, const char *field,
    struct nsd_error *err)
{
	const char	*p, *end;
	struct nsd_buf	 tok = { 0 };
	size_t		 i;

	if (field[0] != '/') {
		nsd_json_path_member(path, field);
		return (0);
	}
	memset(path, 0, sizeof *path);
	for (p = field; *p == '/'; p = end) {
		tok.len = 0;
		for (end = p + 1; *end != '\0' && *end != '/'; end++) {
			if (*end != '~') {
				nsd_buf_putc(&tok, *end);
				continue;
			}
			if (end[1] != '0' && end[1] != '1') {
				nsd_buf_free(&tok);
				nsd_json_path_free(path);
				return (nsd_error_set(err, NSD_EXIT_USAGE,
				    "invalid JSON Pointer '%s': "
				    "'~' must be followed by 0 or 1",
				    field));
			}
			nsd_buf_putc(&tok, end[1] == '0' ? '~' : '/');
			end++;
		}
		path->tokens = xreallocarray(path->tokens, path->ntokens + 1,
		    sizeof *path->tokens);
		path->tokens[path->ntokens].name =
		    xstrndup(tok.len ? tok.data : "", tok.len);
		path->tokens[path->ntokens].len = tok.len;
		path->tokens[path->ntokens].index = -1;
		/*
		 * RFC 6901 array indices: "0" or digits without a leading zero.
		 */
		if (tok.len > 0 && tok.len < 19 &&
		    (tok.len == 1 || tok.data[0] != '0')) {
			int64_t	 v = 0;

			for (i = 0; i < tok.len &&
			    tok.data[i] >= '0' && tok.data[i] <= '9'; i++)
				v = v * 10 + (tok.data[i] - '0');
			if (i == tok.len)
				path->tokens[path->ntokens].index = v;
		}
		path->ntokens++;
	}
	nsd_buf_free(&tok);
	return (0);
}

void
nsd_json_path_member(struct nsd_json_path *path, const char *name)
{
	memset(path, 0, sizeof *path);
	path->tokens = xcalloc(1, sizeof *path->tokens);
	path->tokens[0].name = xstrdup(name);
	path->tokens[0].len = strlen(name);
	path->tokens[0].index = -1;
	path->ntokens = 1;
}

void
nsd_json_path_free(struct nsd_json_path *path)
{
	size_t	 i;

	for (i = 0; i < path->ntokens; i++)
		free(path->tokens[i].name);
	free(path->tokens);
	memset(path, 0, sizeof *path);
}

void
nsd_json_scanner_init(struct nsd_json_scanner *sc, struct nsd_json_query *q,
    size_t nq)
{
	size_t	 i;

	memset(sc, 0, sizeof *sc);
	sc->queries = q;
	sc->nqueries = nq;
	/*
	 * Element counts and start offsets matter only down to the deepest
	 * level a path can reach; below that one byte per level is kept.
	 */
	sc->nframes = 1;
	for (i = 0; i < nq; i++)
		if (q[i].path->ntokens + 1 > sc->nframes)
			sc->nframes = q[i].path->ntokens + 1;
	sc->frames = xcalloc(sc->nframes, sizeof *sc->frames);
}

void
nsd_json_scanner_free(struct nsd_json_scanner *sc)
{
	size_t	 i;

	for (i = 0; i < sc->nqueries; i++) {
		free(sc->queries[i].spans);
		sc->queries[i].spans = NULL;
		sc->queries[i].spans_cap = 0;
	}
	free(sc->kinds);
	free(sc->frames);
	nsd_buf_free(&sc->key);
}

const char *
nsd_json_type_name(enum nsd_json_type t)
{
	static const char *names[] = {
		"nothing", "a string", "a number", "an object", "an array",
		"true", "false", "null"
	};

	return (names[t]);
}

/*
 * Record a failure; a NUL or a bad UTF-8 byte is named as such, being the
 * likelier story.
 */
static int
fail(struct nsd_json_scanner *sc, const unsigned char *s, size_t n, size_t i,
    const char *reason)
{
	if (i < n && s[i] == '\0')
		reason = "NUL byte";
	else if (i < n && s[i] >= 0x80 && nsd_utf8_seqlen(s + i, n - i) == 0)
		reason = "invalid UTF-8";
	else if (i >= n && strcmp(reason, "unterminated string") != 0)
		reason = "unexpected end of line";
	sc->error = reason;
	sc->error_at = i;
	return (-1);
}

static int
is_hex(unsigned char c)
{
	return ((c >= '0' && c <= '9') ||
	    ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'));
}

#if NSD_HAVE_AVX2
/*
 * From s[i], a string's characters that need no more than checking, 32
 * bytes at a time: valid UTF-8, no '"', '\\' or control character. Returns
 * where the scalar loop takes over, at the start of a character: at the
 * first of those three when nothing up to it breaks UTF-8 (an escaped
 * line break comes every line or so in many texts, and the scalar loop
 * would walk up to it byte by byte), else at the block that breaks it, or
 * at the last 31 bytes.
 */
NSD_TARGET_AVX2 static size_t
skip_plain_avx2(const unsigned char *s, size_t n, size_t i)
{
	const __m256i	 quote = _mm256_set1_epi8('"');
	const __m256i	 backslash = _mm256_set1_epi8('\\');
	const __m256i	 control = _mm256_set1_epi8(0x1F);
	__m256i		 b, stop, errors, prev = _mm256_setzero_si256();
	size_t		 from = i;
	unsigned	 at, bad;

	while (n - i >= 32) {
		b = _mm256_loadu_si256((const __m256i *)(s + i));
		stop = _mm256_or_si256(_mm256_cmpeq_epi8(b, quote),
		    _mm256_cmpeq_epi8(b, backslash));
		/* Control bytes: min(b, 0x1F) == b, unsigned. */
		stop = _mm256_or_si256(stop,
		    _mm256_cmpeq_epi8(_mm256_min_epu8(b, control), b));
		errors = nsd_utf8_errors_avx2(b, prev);
		if (_mm256_testz_si256(_mm256_or_si256(stop, errors),
		    _mm256_or_si256(stop, errors))) {
			prev = b;
			i += 32;
			continue;
		}
		/*
		 * The stop is ASCII: a sequence it cuts short is an error at
		 * its own place, so none up to it means all before it is
		 * whole.
		 */
		bad = ~(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(errors,
		    _mm256_setzero_si256()));
		if ((at = (unsigned)_mm256_movemask_epi8(stop)) != 0) {
			at = (unsigned)__builtin_ctz(at);
			/* At 31, 2u << at wraps to 0: every bit is asked. */
			if ((bad & ((2u << at) - 1)) == 0)
				return (i + at);
		}
		break;
	}
	return (nsd_utf8_char_start(s, from, i));
}
#endif

/*
 * Scan the string token starting at s[*pos] == '"'. On success *pos is one
 * past the closing quote and *escaped says whether a backslash was seen.
 */
static int
scan_string(struct nsd_json_scanner *sc, const unsigned char *s, size_t n,
    size_t *pos, int *escaped)
{
	size_t		 i = *pos + 1, len;
	enum nsd_simd	 simd = nsd_simd();

	*escaped = 0;
	for (;;) {
#if NSD_HAVE_AVX2
		if (simd == NSD_SIMD_AVX2)
			i = skip_plain_avx2(s, n, i);
#endif
#ifdef __SSE2__
		/*
		 * Skip 16 plain ASCII bytes at a time: no '"', '\\', control or
		 * high byte.
		 */
		while (simd >= NSD_SIMD_SSE2 && n - i >= 16) {
			const __m128i	 b =
			    _mm_loadu_si128((const __m128i *)(s + i));
			__m128i		 hit;

			hit = _mm_cmpeq_epi8(b, _mm_set1_epi8('"'));
			hit = _mm_or_si128(hit,
			    _mm_cmpeq_epi8(b, _mm_set1_epi8('\\')));
			/*
			 * Control bytes turn negative when 0x20 is subtracted;
			 * high bytes are negative already.
			 */
			hit = _mm_or_si128(hit,
			    _mm_cmplt_epi8(_mm_sub_epi8(b, _mm_set1_epi8(0x20)),
			    _mm_setzero_si128()));
			if (_mm_movemask_epi8(_mm_or_si128(hit, b)) != 0)
				break;
			i += 16;
		}
#endif
		while (i < n && plain_byte[s[i]])
			i++;
		if (i >= n)
			return (fail(sc, s, n, i, "unterminated string"));
		switch (s[i]) {
		case '"':
			*pos = i + 1;
			return (0);
		case '\\':
			*escaped = 1;
			if (i + 1 >= n)
				return (fail(sc, s, n, i + 1,
				    "unterminated string"));
			switch (s[i + 1]) {
			case '"': case '\\': case '/': case 'b':
			case 'f': case 'n': case 'r': case 't':
				i += 2;
				break;
			case 'u':
				if (i + 5 >= n || !is_hex(s[i + 2]) ||
				    !is_hex(s[i + 3]) || !is_hex(s[i + 4]) ||
				    !is_hex(s[i + 5]))
					return (fail(sc, s, n, i,
					    "invalid \\u escape in string"));
				i += 6;
				break;
			default:
				return (fail(sc, s, n, i,
				    "invalid escape in string"));
			}
			break;
		default:
			if (s[i] < 0x20)
				return (fail(sc, s, n, i,
				    "control character in string"));
			/*
			 * Runs of CJK: three-byte sequences that cannot be
			 * overlong or surrogates.
			 */
			while (i + 2 < n && s[i] >= 0xE1 && s[i] != 0xED &&
			    s[i] <= 0xEF && (s[i + 1] & 0xC0) == 0x80 &&
			    (s[i + 2] & 0xC0) == 0x80)
				i += 3;
			if (i < n && s[i] >= 0x80) {
				if ((len = nsd_utf8_seqlen(s + i, n - i)) == 0)
					return (fail(sc, s, n, i,
					    "invalid UTF-8"));
				i += len;
			}
			break;
		}
	}
}

static size_t
scan_number(const unsigned char *s, size_t n, size_t i)
{
	size_t	 start;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9') {
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	} else
		return (0);
	if (i < n && s[i] == '.') {
		start = ++i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == start)
			return (0);
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		start = i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == start)
			return (0);
	}
	return (i);
}

static size_t
skip_space(const unsigned char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
	    s[i] == '\r'))
		i++;
	return (i);
}

static void
push_span(struct nsd_json_query *q, size_t start, size_t len,
    enum nsd_json_type t)
{
	q->found.start = start;
	q->found.len = len;
	q->found.type = t;
	if (!q->all)
		return;
	if (q->nspans == q->spans_cap) {
		q->spans_cap = q->spans_cap ? q->spans_cap * 2 : 4;
		q->spans = xreallocarray(q->spans, q->spans_cap,
		    sizeof *q->spans);
	}
	q->spans[q->nspans++] = q->found;
}

/*
 * A member name at depth d has been read: mark the queries whose path it
 * continues.
 */
static void
match_key(struct nsd_json_scanner *sc, const unsigned char *s, size_t start,
    size_t end, int escaped, size_t d)
{
	const char	*name = (const char *)s + start + 1;
	size_t		 len = end - start - 2, i;
	int		 decoded = 0;

	for (i = 0; i < sc->nqueries; i++) {
		struct nsd_json_query	*q = &sc->queries[i];
		const struct nsd_json_token *t;

		q->pending = 0;
		if (q->matched != d - 1 || d - 1 >= q->path->ntokens)
			continue;
		if (escaped && !decoded) {
			sc->key.len = 0;
			nsd_json_decode_string((const char *)s + start,
			    end - start, &sc->key);
			name = sc->key.data;
			len = sc->key.len;
			decoded = 1;
		}
		t = &q->path->tokens[d - 1];
		if (t->len == len && memcmp(t->name, name, len) == 0)
			q->pending = d;
	}
}

/* An array element with this index starts at depth d. */
static void
match_index(struct nsd_json_scanner *sc, int64_t index, size_t d)
{
	size_t	 i;

	for (i = 0; i < sc->nqueries; i++) {
		struct nsd_json_query	*q = &sc->queries[i];

		q->pending = 0;
		if (q->matched == d - 1 && d - 1 < q->path->ntokens &&
		    q->path->tokens[d - 1].index == index)
			q->pending = d;
	}
}

/* A value at depth d starts; containers open a new frame at depth d + 1. */
static void
match_value_start(struct nsd_json_scanner *sc, size_t d, int container)
{
	size_t	 i;

	for (i = 0; i < sc->nqueries; i++) {
		struct nsd_json_query	*q = &sc->queries[i];

		if (d == 0 || q->pending != d)
			continue;
		if (container) {
			if (d == q->path->ntokens)
				q->capture = d + 1;
			else
				q->matched = d;
			q->pending = 0;
		}
	}
}

/*
 * A scalar value at depth d spans s[start..end): capture it where a path ends
 * here.
 */
static void
match_scalar(struct nsd_json_scanner *sc, size_t d, size_t start, size_t end,
    enum nsd_json_type t)
{
	size_t	 i;

	if (d == 0)
		sc->top = t;
	for (i = 0; i < sc->nqueries; i++) {
		struct nsd_json_query	*q = &sc->queries[i];

		if (d != 0 && q->pending == d) {
			if (d == q->path->ntokens)
				push_span(q, start, end - start, t);
			q->pending = 0;
		}
	}
}

/* The container at depth d, which began at start, closes at end. */
static void
match_close(struct nsd_json_scanner *sc, size_t d, size_t start, size_t end,
    enum nsd_json_type t)
{
	size_t	 i;

	for (i = 0; i < sc->nqueries; i++) {
		struct nsd_json_query	*q = &sc->queries[i];

		if (q->capture == d) {
			push_span(q, start, end - start, t);
			q->capture = 0;
		}
		if (d >= 2 && q->matched == d - 1)
			q->matched = d - 2;
	}
}

static void
push_frame(struct nsd_json_scanner *sc, size_t depth, char kind, size_t start)
{
	if (depth >= sc->kinds_cap) {
		sc->kinds_cap = sc->kinds_cap ? sc->kinds_cap * 2 : 64;
		sc->kinds = xreallocarray(sc->kinds, sc->kinds_cap, 1);
	}
	sc->kinds[depth] = kind;
	if (depth < sc->nframes) {
		sc->frames[depth].count = 0;
		sc->frames[depth].start = start;
	}
}

int
nsd_json_scan(struct nsd_json_scanner *sc, const char *line, size_t n,
    int object_only)
{
	const unsigned char	*s = (const unsigned char *)line;
	size_t			 i, depth = 0, start, end, q;
	int			 escaped;

	for (q = 0; q < sc->nqueries; q++) {
		memset(&sc->queries[q].found, 0, sizeof sc->queries[q].found);
		sc->queries[q].nspans = 0;
		sc->queries[q].matched = 0;
		sc->queries[q].pending = 0;
		sc->queries[q].capture = 0;
	}
	sc->has_members = 0;
	sc->insert_at = 0;
	sc->error = NULL;
	sc->error_at = 0;
	sc->top = NSD_JSON_NONE;

	i = skip_space(s, n, 0);
	if (object_only && (i >= n || s[i] != '{')) {
		/* Valid JSON of another type, or not JSON at all? */
		if (nsd_json_scan(sc, line, n, 0) == 0)
			return (fail(sc, s, n, i, "not a JSON object"));
		return (fail(sc, s, n, i, "expected a JSON object"));
	}

value:
	/* A value at depth "depth" starts at s[i]. */
	if (i >= n)
		return (fail(sc, s, n, i, "expected a value"));
	start = i;
	switch (s[i]) {
	case '{':
		if (depth == 0)
			sc->top = NSD_JSON_OBJECT;
		match_value_start(sc, depth, 1);
		push_frame(sc, depth, '{', i);
		depth++;
		i = skip_space(s, n, i + 1);
		if (i < n && s[i] == '}') {
			if (depth == 1)
				sc->insert_at = i;
			i++;
			goto close;
		}
		goto member;
	case '[':
		if (depth == 0)
			sc->top = NSD_JSON_ARRAY;
		match_value_start(sc, depth, 1);
		push_frame(sc, depth, '[', i);
		depth++;
		i = skip_space(s, n, i + 1);
		if (i < n && s[i] == ']') {
			i++;
			goto close;
		}
		match_index(sc, 0, depth);
		goto value;
	case '"':
		if (scan_string(sc, s, n, &i, &escaped) == -1)
			return (-1);
		match_scalar(sc, depth, start, i, NSD_JSON_STRING);
		goto next;
	case 't':
		if (n - i < 4 || memcmp(s + i, "true", 4) != 0)
			return (fail(sc, s, n, i, "invalid literal"));
		i += 4;
		match_scalar(sc, depth, start, i, NSD_JSON_TRUE);
		goto next;
	case 'f':
		if (n - i < 5 || memcmp(s + i, "false", 5) != 0)
			return (fail(sc, s, n, i, "invalid literal"));
		i += 5;
		match_scalar(sc, depth, start, i, NSD_JSON_FALSE);
		goto next;
	case 'n':
		if (n - i < 4 || memcmp(s + i, "null", 4) != 0)
			return (fail(sc, s, n, i, "invalid literal"));
		i += 4;
		match_scalar(sc, depth, start, i, NSD_JSON_NULL);
		goto next;
	default:
		if (s[i] != '-' && (s[i] < '0' || s[i] > '9'))
			return (fail(sc, s, n, i, "expected a value"));
		if ((end = scan_number(s, n, i)) == 0)
			return (fail(sc, s, n, i, "invalid number"));
		i = end;
		match_scalar(sc, depth, start, i, NSD_JSON_NUMBER);
		goto next;
	}

member:
	/* Inside an object at depth "depth": a member name, ':' and a value. */
	if (i >= n || s[i] != '"')
		return (fail(sc, s, n, i, "expected a member name"));
	start = i;
	if (scan_string(sc, s, n, &i, &escaped) == -1)
		return (-1);
	match_key(sc, s, start, i, escaped, depth);
	i = skip_space(s, n, i);
	if (i >= n || s[i] != ':')
		return (fail(sc, s, n, i, "expected ':'"));
	i = skip_space(s, n, i + 1);
	goto value;

close:
	/* The container at depth "depth" has just closed at s[i - 1]. */
	match_close(sc, depth,
	    depth - 1 < sc->nframes ? sc->frames[depth - 1].start : 0, i,
	    sc->kinds[depth - 1] == '{' ?
	    NSD_JSON_OBJECT : NSD_JSON_ARRAY);
	depth--;
	/* FALLTHROUGH */

next:
	/* A value at depth "depth" has ended at s[i]. */
	if (depth == 0) {
		i = skip_space(s, n, i);
		if (i < n)
			return (fail(sc, s, n, i, "text after the JSON value"));
		return (0);
	}
	if (depth == 1 && sc->kinds[0] == '{') {
		sc->insert_at = i;
		sc->has_members = 1;
	}
	i = skip_space(s, n, i);
	if (sc->kinds[depth - 1] == '{') {
		if (i < n && s[i] == ',') {
			i = skip_space(s, n, i + 1);
			goto member;
		}
		if (i < n && s[i] == '}') {
			i++;
			goto close;
		}
		return (fail(sc, s, n, i, "expected ',' or '}'"));
	}
	if (i < n && s[i] == ',') {
		i = skip_space(s, n, i + 1);
		if (depth - 1 < sc->nframes)
			match_index(sc, ++sc->frames[depth - 1].count, depth);
		goto value;
	}
	if (i < n && s[i] == ']') {
		i++;
		goto close;
	}
	return (fail(sc, s, n, i, "expected ',' or ']'"));
}

/* From s[i] == '"': the offset of the string's closing quote, or n. */
static size_t
string_end(const unsigned char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return (i);
	}
	return (n);
}

/*
 * A walk over the top level only: a value is skipped by counting brackets
 * outside strings, which is enough for a line the scanner has validated.
 */
int
nsd_json_member_names(const char *line, size_t n, size_t max,
    struct nsd_json_names *names)
{
	const unsigned char	*s = (const unsigned char *)line;
	size_t			 i, end, depth;

	names->n = 0;
	i = skip_space(s, n, 0);
	if (i >= n || s[i] != '{')
		return (-1);
	i = skip_space(s, n, i + 1);
	if (i < n && s[i] == '}')
		return (0);
	for (;;) {
		if (i >= n || s[i] != '"' || (end = string_end(s, n, i)) >= n)
			return (-1);
		if (names->n == max)
			return (1);
		if (names->n == names->cap) {
			names->cap = names->cap ? names->cap * 2 : 16;
			names->v = xreallocarray(names->v, names->cap,
			    sizeof *names->v);
		}
		names->v[names->n].start = i;
		names->v[names->n].len = end + 1 - i;
		names->v[names->n].type = NSD_JSON_STRING;
		names->n++;
		i = skip_space(s, n, end + 1);
		if (i >= n || s[i] != ':')
			return (-1);
		/* Its value, up to the ',' or '}' of the top level. */
		for (depth = 0, i++; i < n; i++) {
			if (s[i] == '"') {
				if ((i = string_end(s, n, i)) >= n)
					return (-1);
			} else if (s[i] == '{' || s[i] == '[')
				depth++;
			else if (s[i] == '}' || s[i] == ']') {
				if (depth == 0)
					break;
				depth--;
			} else if (s[i] == ',' && depth == 0)
				break;
		}
		if (i >= n || s[i] == ']')
			return (-1);
		if (s[i] == '}')
			return (0);
		i = skip_space(s, n, i + 1);
	}
}

void
nsd_json_names_free(struct nsd_json_names *names)
{
	free(names->v);
	memset(names, 0, sizeof *names);
}

/* The letter of the two-character escape for c, or 0 if it has none. */
static char
short_escape(unsigned char c)
{
	switch (c) {
	case '\b':
		return ('b');
	case '\f':
		return ('f');
	case '\n':
		return ('n');
	case '\r':
		return ('r');
	case '\t':
		return ('t');
	default:
		return (0);
	}
}

void
nsd_json_encode_string(const char *s, size_t len, struct nsd_buf *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char	*p = (const unsigned char *)s, *end = p + len;
	char			 esc[6] = { '\\', 'u', '0', '0', 0, 0 };

	nsd_buf_putc(out, '"');
	for (; p < end; p++) {
		if (*p == '"' || *p == '\\') {
			nsd_buf_putc(out, '\\');
			nsd_buf_putc(out, *p);
		} else if (short_escape(*p) != 0) {
			nsd_buf_putc(out, '\\');
			nsd_buf_putc(out, short_escape(*p));
		} else if (*p < 0x20) {
			esc[4] = hex[*p >> 4];
			esc[5] = hex[*p & 0xF];
			nsd_buf_append(out, esc, sizeof esc);
		} else
			nsd_buf_putc(out, *p);
	}
	nsd_buf_putc(out, '"');
}

/* Combine a surrogate pair, or stand in U+FFFD for an unpaired surrogate. */
static size_t
decode_u_escape(const char *p, const char *end, uint32_t *cp)
{
	uint32_t	 hi = 0, lo = 0;
	int		 k;

	for (k = 2; k < 6; k++)
		hi = hi * 16 + (p[k] <= '9' ? p[k] - '0' :
		    (p[k] | 0x20) - 'a' + 10);
	if (hi < 0xD800 || hi > 0xDFFF) {
		*cp = hi;
		return (6);
	}
	if (hi <= 0xDBFF && end - p >= 12 && p[6] == '\\' && p[7] == 'u') {
		for (k = 8; k < 12; k++) {
			if (!is_hex((unsigned char)p[k]))
				break;
			lo = lo * 16 + (p[k] <= '9' ? p[k] - '0' :
			    (p[k] | 0x20) - 'a' + 10);
		}
		if (k == 12 && lo >= 0xDC00 && lo <= 0xDFFF) {
			*cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
			return (12);
		}
	}
	*cp = 0xFFFD;
	return (6);
}

/*
 * The escape at p (a backslash, as the scanner checked) decoded to o;
 * returns the bytes of p it took and adds what it wrote to *o.
 */
static size_t
decode_escape(const char *p, const char *end, char **o)
{
	uint32_t	 cp;
	size_t		 n;

	switch (p[1]) {
	case 'b': *(*o)++ = '\b'; return (2);
	case 'f': *(*o)++ = '\f'; return (2);
	case 'n': *(*o)++ = '\n'; return (2);
	case 'r': *(*o)++ = '\r'; return (2);
	case 't': *(*o)++ = '\t'; return (2);
	case 'u':
		n = decode_u_escape(p, end, &cp);
		*o += nsd_utf8_encode(cp, *o);
		return (n);
	default:	/* '"', '\\' and '/' stand for themselves */
		*(*o)++ = p[1];
		return (2);
	}
}

/*
 * Decoded text is never longer than its token (an escape of 2, 6 or 12
 * bytes becomes 1 to 4), so the output is written in place, reserved once
 * with a block's room past the end for the stores of the copy: 16 bytes at
 * a time with SSE2, each block stored whole and the copy moved on to its
 * first backslash, since escaped line breaks come every line or so.
 */
void
nsd_json_decode_string(const char *tok, size_t len, struct nsd_buf *out)
{
	const char	*p = tok + 1, *end = tok + len - 1, *bs;
	char		*o;
#ifdef __SSE2__
	const __m128i	 backslash = _mm_set1_epi8('\\');
	__m128i		 b;
	unsigned	 mask;
	int		 sse2 = nsd_simd() >= NSD_SIMD_SSE2;
#endif

	nsd_buf_reserve(out, len + 16);
	o = out->data + out->len;
	while (p < end) {
#ifdef __SSE2__
		while (sse2 && end - p >= 16) {
			b = _mm_loadu_si128((const __m128i *)p);
			_mm_storeu_si128((__m128i *)o, b);
			mask = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b,
			    backslash));
			if (mask != 0) {
				o += __builtin_ctz(mask);
				p += __builtin_ctz(mask);
				break;
			}
			o += 16;
			p += 16;
		}
#endif
		if (*p != '\\') {
			if ((bs = memchr(p, '\\', end - p)) == NULL)
				bs = end;
			memcpy(o, p, bs - p);
			o += bs - p;
			p = bs;
			if (p == end)
				break;
		}
		p += decode_escape(p, end, &o);
	}
	out->len = o - out->data;
}
