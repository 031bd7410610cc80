/*
 * text.c: normalization (hand-written, one pass) and PCRE2 splitting.
 */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8

#include <pcre2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "text.h"
#include "utf8.h"

struct nsd_pattern {
	pcre2_code		*code;
	pcre2_match_data	*match;
	int			 jit;
};

struct nsd_text {
	enum nsd_split_rule	 rule;
	struct nsd_pattern	 delim;		/* sentence delimiters */
	struct nsd_pattern	 word;		/* runs of letters and digits */
	struct nsd_pattern	 word_char;	/* one letter or digit */
};

/*
 * The delimiters. The default rule runs on normalized text, where full-width
 * '：；？！' have become ASCII and all white space is ' ' or '\n'; a '.'
 * ends a sentence only before white space or at the end. The compat rule is
 * the reference nshash's character class, on the text as decoded.
 */
static const char delim_default[] =
    "[:;?!\\n\\x{3002}\\x{3011}]|\\.(?=[ \\n]|\\z)";
static const char delim_prose[] =
    "[:;?!\\x{1F}\\x{3002}\\x{3011}]|\\.(?=[ \\n]|\\z)";
static const char delim_compat[] =
    "[:\\x{FF1A}\\x{FF1B}\\x{FF1F}\\x{3002}\\x{FF01}\\x{3011}\\n]";
static const char word_run[] = "[\\p{L}\\p{N}]+";
/* Without the '+', a match ends at the first: no need to read the run. */
static const char word_char[] = "[\\p{L}\\p{N}]";

static int
pattern_compile(struct nsd_pattern *p, const char *src, struct nsd_error *err)
{
	PCRE2_UCHAR	 msg[256];
	PCRE2_SIZE	 off;
	int		 code;

	p->code = pcre2_compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED,
	    PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &code, &off, NULL);
	if (p->code == NULL) {
		pcre2_get_error_message(code, msg, sizeof msg);
		return (nsd_error_set(err, NSD_EXIT_NOMEM,
		    "cannot compile pattern at offset %zu: %s",
		    (size_t)off, msg));
	}
	p->jit = pcre2_jit_compile(p->code, PCRE2_JIT_COMPLETE) == 0;
	if ((p->match = pcre2_match_data_create_from_pattern(p->code,
	    NULL)) == NULL)
		return (nsd_error_set(err, NSD_EXIT_NOMEM, "out of memory"));
	return (0);
}

static void
pattern_free(struct nsd_pattern *p)
{
	pcre2_match_data_free(p->match);
	pcre2_code_free(p->code);
}

/* Find the next match at or after start; 1 with [*ms, *me) set, or 0. */
static int
pattern_next(struct nsd_pattern *p, const char *s, size_t len, size_t start,
    size_t *ms, size_t *me)
{
	PCRE2_SIZE	*ov;
	int		 rc;

	if (p->jit)
		rc = pcre2_jit_match(p->code, (PCRE2_SPTR)s, len, start, 0,
		    p->match, NULL);
	else
		rc = pcre2_match(p->code, (PCRE2_SPTR)s, len, start,
		    PCRE2_NO_UTF_CHECK, p->match, NULL);
	if (rc < 0)
		return (0);
	ov = pcre2_get_ovector_pointer(p->match);
	*ms = ov[0];
	*me = ov[1];
	return (1);
}

struct nsd_text *
nsd_text_new(enum nsd_split_rule rule, struct nsd_error *err)
{
	struct nsd_text	*t;

	t = xcalloc(1, sizeof *t);
	t->rule = rule;
	if (pattern_compile(&t->delim, rule == NSD_SPLIT_COMPAT ?
	    delim_compat : rule == NSD_SPLIT_PROSE ? delim_prose :
	    delim_default, err) == -1 ||
	    pattern_compile(&t->word, word_run, err) == -1 ||
	    pattern_compile(&t->word_char, word_char, err) == -1) {
		nsd_text_free(t);
		return (NULL);
	}
	return (t);
}

void
nsd_text_free(struct nsd_text *t)
{
	if (t == NULL)
		return;
	pattern_free(&t->delim);
	pattern_free(&t->word);
	pattern_free(&t->word_char);
	free(t);
}

/*
 * Bytes the normalizer must look at: ASCII white space and '\r', and the
 * lead bytes of the multi-byte white space and full-width forms:
 * C2 (U+0085, U+00A0), E1 (U+1680), E2 (U+2000..U+205F), E3 (U+3000)
 * and EF (U+FF01..U+FF5E). Everything else is copied as it is.
 */
static const unsigned char special[256] = {
	['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1, [' '] = 1,
	[0xC2] = 1, [0xE1] = 1, [0xE2] = 1, [0xE3] = 1, [0xEF] = 1
};

enum space_kind { NOT_SPACE, SPACE, LINE_BREAK };

/*
 * Classify the character at p (valid UTF-8, n bytes left); *len gets its
 * length.
 */
static inline __attribute__((always_inline)) enum space_kind
space_at(const unsigned char *p, size_t n, size_t *len)
{
	*len = 1;
	switch (p[0]) {
	case ' ': case '\t':
		return (SPACE);
	case '\n': case '\v': case '\f':
		return (LINE_BREAK);
	case 0xC2:
		*len = 2;
		if (n >= 2 && p[1] == 0x85)
			return (LINE_BREAK);
		return (n >= 2 && p[1] == 0xA0 ? SPACE : NOT_SPACE);
	case 0xE1:
		*len = 3;
		return (n >= 3 && p[1] == 0x9A && p[2] == 0x80 ?
		    SPACE : NOT_SPACE);
	case 0xE2:
		*len = 3;
		if (n < 3)
			return (NOT_SPACE);
		if (p[1] == 0x80 && (p[2] <= 0x8A || p[2] == 0xAF))
			return (SPACE);		/* U+2000..U+200A, U+202F */
		if (p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9))
			return (LINE_BREAK);	/* U+2028, U+2029 */
		return (p[1] == 0x81 && p[2] == 0x9F ? SPACE : NOT_SPACE);
	case 0xE3:
		*len = 3;
		return (n >= 3 && p[1] == 0x80 && p[2] == 0x80 ?
		    SPACE : NOT_SPACE);
	default:
		return (NOT_SPACE);
	}
}

/*
 * Copy the ordinary bytes (not special) at p to o, 16 at a time: each
 * block is stored whole, and p and o then advance to the block's first
 * special byte, found from a mask of the bytes 0x09..0x0D, 0x20, 0xC2,
 * 0xE1..0xE3 and 0xEF. Output never outgrows input, so o has 16 bytes of
 * room whenever p does. Returns how far both advanced; fewer than 16 bytes
 * before the end are left to the caller.
 */
static size_t
copy_ordinary(const unsigned char *p, const unsigned char *end, char *o)
{
	const unsigned char	*q = p;
#ifdef __SSE2__
	const __m128i	 tab = _mm_set1_epi8(0x09), span = _mm_set1_epi8(0x04);
	const __m128i	 sp = _mm_set1_epi8(0x20);
	const __m128i	 c2 = _mm_set1_epi8((char)0xC2);
	const __m128i	 e1 = _mm_set1_epi8((char)0xE1);
	const __m128i	 e3 = _mm_set1_epi8((char)0xE3);
	const __m128i	 ef = _mm_set1_epi8((char)0xEF);
	__m128i		 b, hit, ctl;
	int		 mask;

	while (end - q >= 16) {
		b = _mm_loadu_si128((const __m128i *)q);
		_mm_storeu_si128((__m128i *)(o + (q - p)), b);
		/* 0x09..0x0D: b - 0x09 <= 4, unsigned: max(b - 9, 4) == 4. */
		ctl = _mm_sub_epi8(b, tab);
		hit = _mm_cmpeq_epi8(_mm_max_epu8(ctl, span), span);
		hit = _mm_or_si128(hit, _mm_cmpeq_epi8(b, sp));
		hit = _mm_or_si128(hit, _mm_cmpeq_epi8(b, c2));
		/* 0xE1..0xE3: max(min(b, E3), E1) == b. */
		hit = _mm_or_si128(hit, _mm_cmpeq_epi8(
		    _mm_max_epu8(_mm_min_epu8(b, e3), e1), b));
		hit = _mm_or_si128(hit, _mm_cmpeq_epi8(b, ef));
		if ((mask = _mm_movemask_epi8(hit)) != 0)
			return ((q - p) + __builtin_ctz(mask));
		q += 16;
	}
#else
	(void)end;
	(void)o;
#endif
	return (q - p);
}

/* Bytes in a UTF-8 sequence, from its (valid) lead byte. */
static size_t
seq_bytes(unsigned char lead)
{
	return (lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4);
}

void
nsd_text_normalize(const char *in, size_t len, struct nsd_buf *out)
{
	const unsigned char	*p = (const unsigned char *)in, *end = p + len;
	enum space_kind		 run, kind;
	char			*o, *start;
	size_t			 n;

	out->len = 0;
	nsd_buf_reserve(out, len + 16);		/* room for a whole block */
	o = start = out->data;
	while (p < end) {
		/* Ordinary bytes are copied as they come. */
		n = copy_ordinary(p, end, o);
		o += n;
		p += n;
		while (p < end && !special[*p])
			*o++ = *p++;
		if (p >= end)
			break;
		/* One space between words is by far the commonest case. */
		if (*p == ' ' && end - p >= 2 && !special[p[1]] && o > start) {
			*o++ = ' ';
			p++;
			continue;
		}
		if (*p == '\r') {
			p++;
			continue;
		}
		if ((run = space_at(p, end - p, &n)) != NOT_SPACE) {
			/*
			 * Take the whole run of white space; emit one separator
			 * if text follows.
			 */
			for (p += n; p < end; p += n) {
				n = 1;
				if (*p == '\r')
					continue;
				if (!special[*p] || (kind = space_at(p, end - p,
				    &n)) == NOT_SPACE)
					break;
				if (kind > run)
					run = kind;
			}
			if (p < end && o > start)
				*o++ = run == LINE_BREAK ? '\n' : ' ';
			continue;
		}
		/*
		 * U+FF01..U+FF5E (EF BC 81..EF BD 9E) fold to U+0021..U+007E.
		 */
		if (p[0] == 0xEF && end - p >= 3 && p[1] == 0xBC &&
		    p[2] >= 0x81) {
			*o++ = (char)(p[2] - 0x81 + 0x21);
			p += 3;
			continue;
		}
		if (p[0] == 0xEF && end - p >= 3 && p[1] == 0xBD &&
		    p[2] <= 0x9E) {
			*o++ = (char)(p[2] - 0x80 + 0x60);
			p += 3;
			continue;
		}
		n = seq_bytes(*p);
		if (n > (size_t)(end - p))
			n = end - p;
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	out->len = o - start;
}

/* The length of the tag at s[0..len), which starts with '<', or 0. */
static size_t
tag_length(const char *s, size_t len)
{
	size_t	 i, max = len < NSD_TAG_MAX ? len : NSD_TAG_MAX;
	char	 c = len > 1 ? s[1] : '\0';

	if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '/' ||
	    c == '!'))
		return (0);
	for (i = 2; i < max; i++) {
		if (s[i] == '>')
			return (i + 1);
		if (s[i] == '<')
			return (0);
	}
	return (0);
}

void
nsd_text_strip_tags(struct nsd_buf *buf)
{
	char	*s = buf->data, *o, *p, *end = s + buf->len;
	size_t	 n;

	if (buf->len == 0 || (p = memchr(s, '<', buf->len)) == NULL)
		return;
	for (o = p; p < end; ) {
		if (*p == '<' && (n = tag_length(p, end - p)) > 0) {
			*o++ = ' ';
			p += n;
		} else
			*o++ = *p++;
	}
	buf->len = o - s;
}

/*
 * Copy s[0..len) to o without its spaces and newlines; returns the bytes
 * written, and o must have room for len + 16. Sixteen bytes at a time: the
 * run of a block up to its next space (or the block's end) is stored with
 * one 16-byte store, and o advances by the run's length only, so that the
 * next store writes over what the last one put past its run. Loads stay 32
 * bytes short of the end, within s; the last bytes go one at a time.
 */
static size_t
flatten_bytes(const char *s, size_t len, char *o)
{
	size_t	 i = 0, n = 0;
#ifdef __SSE2__
	const __m128i	 sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n');
	__m128i		 b;
	unsigned	 mask, at, k;

	for (; len - i >= 32; i += 16) {
		b = _mm_loadu_si128((const __m128i *)(s + i));
		mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(b, sp),
		    _mm_cmpeq_epi8(b, nl)));
		for (at = 0; mask != 0; mask &= mask - 1) {
			k = __builtin_ctz(mask);
			_mm_storeu_si128((__m128i *)(o + n),
			    _mm_loadu_si128((const __m128i *)(s + i + at)));
			n += k - at;
			at = k + 1;
		}
		_mm_storeu_si128((__m128i *)(o + n),
		    _mm_loadu_si128((const __m128i *)(s + i + at)));
		n += 16 - at;
	}
#endif
	/* Every byte is stored; only those that are not white space stay. */
	for (; i < len; i++) {
		o[n] = s[i];
		n += s[i] != ' ' && s[i] != '\n';
	}
	return (n);
}

void
nsd_text_flatten(const char *s, size_t len, struct nsd_piece *pieces,
    size_t npieces, struct nsd_buf *out)
{
	size_t	 i, pos = 0, n = 0, start;

	out->len = 0;
	nsd_buf_reserve(out, len + 16);
	for (i = 0; i < npieces; i++) {
		/* The bytes before the piece, then the piece. */
		start = pieces[i].start;
		n += flatten_bytes(s + pos, start - pos, out->data + n);
		pos = start + pieces[i].len;
		pieces[i].start = n;
		n += flatten_bytes(s + start, pos - start, out->data + n);
		pieces[i].len = n - pieces[i].start;
	}
	n += flatten_bytes(s + pos, len - pos, out->data + n);
	out->len = n;
}

static void
piece_push(struct nsd_piece **pieces, size_t *cap, size_t n, size_t start,
    size_t len)
{
	if (n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*pieces = xreallocarray(*pieces, *cap, sizeof **pieces);
	}
	(*pieces)[n].start = start;
	(*pieces)[n].len = len;
}

size_t
nsd_text_split(struct nsd_text *t, const char *s, size_t len,
    struct nsd_piece **pieces, size_t *cap)
{
	size_t	 n = 0, pos = 0, ms, me, a, b;
	int	 more;

	do {
		more = pattern_next(&t->delim, s, len, pos, &ms, &me);
		if (!more)
			ms = me = len;
		a = pos;
		b = ms;
		if (t->rule != NSD_SPLIT_COMPAT) {
			while (a < b && (s[a] == ' ' || s[a] == '\n'))
				a++;
			while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\n'))
				b--;
			if (a < b)
				piece_push(pieces, cap, n++, a, b - a);
		} else
			piece_push(pieces, cap, n++, a, b - a);
		pos = me;
	} while (more);
	return (n);
}

int
nsd_text_has_word_char(struct nsd_text *t, const char *s, size_t len)
{
	size_t	 ms, me;

	return (pattern_next(&t->word_char, s, len, 0, &ms, &me));
}

/* The letters and digits of s, counted until there are more than limit. */
static size_t
count_word_chars(struct nsd_text *t, const char *s, size_t len, size_t limit)
{
	size_t	 pos = 0, ms, me, count = 0;

	while (count <= limit && pos < len &&
	    pattern_next(&t->word, s, len, pos, &ms, &me)) {
		count += nsd_utf8_count(s + ms, me - ms);
		pos = me;
	}
	return (count);
}

size_t
nsd_text_count_word_chars(struct nsd_text *t, const char *s, size_t len)
{
	return (count_word_chars(t, s, len, SIZE_MAX));
}

int
nsd_text_more_word_chars(struct nsd_text *t, const char *s, size_t len,
    size_t n)
{
	return (count_word_chars(t, s, len, n) > n);
}
