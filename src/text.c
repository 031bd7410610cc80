/*
 * text.c: normalization, tags, sentence splitting and flattening, each a
 * hand-written pass with vector versions (cpu.h), and the PCRE2 patterns
 * that define the delimiters and letters.
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
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "cpu.h"
#include "hanfold.h"
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
	struct nsd_buf		 blocks;	/* nsd_text_flatten()'s */
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
	nsd_buf_free(&t->blocks);
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

#if NSD_HAVE_AVX2
/* Bytes of b in [lo, hi], unsigned. */
#define IN_RANGE(b, lo, hi) _mm256_cmpeq_epi8(_mm256_min_epu8( \
	_mm256_sub_epi8((b), _mm256_set1_epi8((char)(lo))), \
	_mm256_set1_epi8((char)((hi) - (lo)))), \
	_mm256_sub_epi8((b), _mm256_set1_epi8((char)(lo))))
#define IS(b, c)	_mm256_cmpeq_epi8((b), _mm256_set1_epi8((char)(c)))

/*
 * Copy the bytes at p to o 32 at a time, up to the first that the
 * normalizer must work on, which AVX2 tells more closely than special[]:
 * white space, except a space or newline whose next byte is not special
 * (the normalizer copies those as they are, once it has written something);
 * and, of the characters whose lead byte is special, only the white space
 * and the full-width forms that fold (the rest, such as the CJK punctuation
 * U+3001 and U+3002 or the quotation marks U+201C and U+201D, are copied as
 * they are). Loads reach two bytes past the block, so 34 bytes must be
 * left; fewer are left to the caller, as is what comes first in the
 * output. Returns how far p advanced, and in *written how far o did.
 *
 * The full-width forms, which fold to one byte, are folded here too, as
 * long as nothing else in the block needs work before them: Chinese text
 * has a full-width comma every 23 characters or so, which would otherwise
 * stop the loop. After each, the rest of the block is stored again two
 * bytes further back, from a load 3 bytes past it, which must end within
 * the input; one too near the end is left to the caller.
 */
NSD_TARGET_AVX2 static size_t
copy_ordinary_avx2(const unsigned char *p, const unsigned char *end, char *o,
    size_t *written)
{
	const unsigned char	*q = p;
	char			*w = o;		/* where q's byte goes */
	__m256i			 b, n1, n2, ws, lone, work, sp1, full;
	unsigned		 mask, fw, stop, k = 0, shift;

	while (end - q >= 34) {
		b = _mm256_loadu_si256((const __m256i *)q);
		n1 = _mm256_loadu_si256((const __m256i *)(q + 1));
		_mm256_storeu_si256((__m256i *)w, b);
		/* White space, and whether the next byte is special. */
		ws = _mm256_or_si256(IN_RANGE(b, 0x09, 0x0D), IS(b, ' '));
		sp1 = _mm256_or_si256(IN_RANGE(n1, 0x09, 0x0D), IS(n1, ' '));
		if (_mm256_movemask_epi8(_mm256_or_si256(b, n1)) == 0) {
			/*
			 * ASCII alone, English's every block: only white
			 * space can need work.
			 */
			lone = _mm256_andnot_si256(sp1,
			    _mm256_or_si256(IS(b, ' '), IS(b, '\n')));
			work = _mm256_andnot_si256(lone, ws);
			mask = (unsigned)_mm256_movemask_epi8(work);
			if (mask != 0) {
				*written = (w - o) + __builtin_ctz(mask);
				return ((q - p) + __builtin_ctz(mask));
			}
			q += 32;
			w += 32;
			continue;
		}
		n2 = _mm256_loadu_si256((const __m256i *)(q + 2));
		sp1 = _mm256_or_si256(sp1, IS(n1, 0xC2));
		sp1 = _mm256_or_si256(sp1, IN_RANGE(n1, 0xE1, 0xE3));
		sp1 = _mm256_or_si256(sp1, IS(n1, 0xEF));
		lone = _mm256_andnot_si256(sp1,
		    _mm256_or_si256(IS(b, ' '), IS(b, '\n')));
		work = _mm256_andnot_si256(lone, ws);
		/* U+0085 and U+00A0. */
		work = _mm256_or_si256(work, _mm256_and_si256(IS(b, 0xC2),
		    _mm256_or_si256(IS(n1, 0x85), IS(n1, 0xA0))));
		/* U+1680. */
		work = _mm256_or_si256(work, _mm256_and_si256(IS(b, 0xE1),
		    _mm256_and_si256(IS(n1, 0x9A), IS(n2, 0x80))));
		/* U+2000..U+200A, U+2028, U+2029, U+202F and U+205F. */
		work = _mm256_or_si256(work, _mm256_and_si256(IS(b, 0xE2),
		    _mm256_or_si256(_mm256_and_si256(IS(n1, 0x80),
		    _mm256_or_si256(_mm256_or_si256(IN_RANGE(n2, 0x80, 0x8A),
		    IN_RANGE(n2, 0xA8, 0xA9)), IS(n2, 0xAF))),
		    _mm256_and_si256(IS(n1, 0x81), IS(n2, 0x9F)))));
		/* U+3000. */
		work = _mm256_or_si256(work, _mm256_and_si256(IS(b, 0xE3),
		    _mm256_and_si256(IS(n1, 0x80), IS(n2, 0x80))));
		/* U+FF01..U+FF5E: EF BC 81..BF and EF BD 80..9E. */
		full = _mm256_and_si256(IS(b, 0xEF),
		    _mm256_or_si256(_mm256_and_si256(IS(n1, 0xBC),
		    IN_RANGE(n2, 0x81, 0xBF)), _mm256_and_si256(IS(n1, 0xBD),
		    IN_RANGE(n2, 0x80, 0x9E))));
		mask = (unsigned)_mm256_movemask_epi8(work);
		fw = (unsigned)_mm256_movemask_epi8(full);
		stop = mask != 0 ? (unsigned)__builtin_ctz(mask) : 32;
		if (stop < 32)
			fw &= (1u << stop) - 1;
		for (shift = 0; fw != 0; fw &= fw - 1, shift += 2) {
			k = (unsigned)__builtin_ctz(fw);
			if (end - q < (ptrdiff_t)k + 35) {
				stop = k;
				break;
			}
			/* EF BC 81..BF to 0x21..0x5F, EF BD 80..9E to 0x60. */
			w[k - shift] = (char)(q[k + 2] -
			    (q[k + 1] == 0xBC ? 0x60 : 0x20));
			_mm256_storeu_si256((__m256i *)(w + k - shift + 1),
			    _mm256_loadu_si256((const __m256i *)(q + k + 3)));
		}
		if (stop < 32 || fw != 0) {
			*written = (w - o) + stop - shift;
			return ((q - p) + stop);
		}
		/* The last full-width form may reach into the next block. */
		k = shift > 0 && k + 3 > 32 ? k + 3 : 32;
		q += k;
		w += k - shift;
	}
	*written = w - o;
	return (q - p);
}
#undef IN_RANGE
#undef IS
#endif

/* Bytes in a UTF-8 sequence, from its (valid) lead byte. */
static size_t
seq_bytes(unsigned char lead)
{
	return (lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4);
}

void
nsd_text_normalize(const char *in, size_t len, struct nsd_buf *out,
    unsigned version)
{
	const unsigned char	*p = (const unsigned char *)in, *end = p + len;
	enum space_kind		 run, kind;
	char			*o, *start;
	size_t			 n;
	enum nsd_simd		 simd = nsd_simd();
	int			 stopped;

	out->len = 0;
	nsd_buf_reserve(out, len + 32);		/* room for a whole block */
	o = start = out->data;
	while (p < end) {
		/*
		 * Ordinary bytes are copied as they come; where AVX2 stopped
		 * short of the end, SSE2 would stop at once.
		 */
		stopped = 0;
#if NSD_HAVE_AVX2
		if (simd == NSD_SIMD_AVX2 && o > start) {
			size_t	 written;

			n = copy_ordinary_avx2(p, end, o, &written);
			o += written;
			p += n;
			stopped = end - p >= 34;
		}
#endif
		if (simd >= NSD_SIMD_SSE2 && !stopped) {
			n = copy_ordinary(p, end, o);
			o += n;
			p += n;
		}
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
	if (version >= NSD_NORM_HANFOLD)
		out->len = nsd_hanfold_text(out->data, out->len);
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
	char	*s = buf->data, *o, *p, *lt, *end = s + buf->len;
	size_t	 n;

	if (buf->len == 0 || (p = memchr(s, '<', buf->len)) == NULL)
		return;
	/*
	 * From one '<' to the next: a tag becomes a space, and the text up to
	 * the next '<' (the rest, when there is none) moves down as a block,
	 * since e-mail addresses and quotes put a '<' early in many a text.
	 */
	for (o = p; p < end; ) {
		if ((n = tag_length(p, end - p)) > 0) {
			*o++ = ' ';
			p += n;
		} else
			*o++ = *p++;
		if ((lt = memchr(p, '<', end - p)) == NULL)
			lt = end;
		if (o != p)
			memmove(o, p, lt - p);
		o += lt - p;
		p = lt;
	}
	buf->len = o - s;
}

/*
 * Flattening copies the text without its spaces and newlines in one pass,
 * sixteen bytes at a time. With SSE2, the run of a block up to its next
 * space (or the block's end) is stored with one 16-byte store, and the
 * copy advances by the run's length only, so that the next store writes
 * over what the last one put past its run; loads stay 32 bytes short of
 * the end, within the text. With AVX2, a byte shuffle packs each half of a
 * block (flatten_blocks_avx2()). The last bytes go one at a time. For
 * every block the pass keeps
 * how many bytes the copy had before it (kept[]) and which of its own it
 * kept (mask[]), so that any offset of the text maps to the copy in a step
 * (flat_offset()), and the pieces are moved onto the copy afterwards.
 */
struct flat_blocks {
	uint32_t	 kept;
	uint32_t	 mask;
};

/* Where offset x of the text is in the copy. */
static inline size_t
flat_offset(const struct flat_blocks *fb, size_t x)
{
	const struct flat_blocks *b = &fb[x >> 4];

	return (b->kept + nsd_popcount64(b->mask & ((1u << (x & 15)) - 1)));
}

#if NSD_HAVE_AVX2
/*
 * The left-packing shuffles: row m holds the positions of the bits of the
 * byte m, lowest first, then 8s, so that a byte shuffle with it gathers
 * the bytes that m keeps of 8 at the front. Written out by the
 * preprocessor: each position is that of the lowest bit left after
 * clearing the lower ones (8 once none is left).
 */
#define PACK_CLR(m)	((m) & ((m) - 1))
#define PACK_POS(m)	__builtin_ctz((m) | 0x100)
#define PACK_ROW(m)	{ PACK_POS(m), PACK_POS(PACK_CLR(m)), \
	PACK_POS(PACK_CLR(PACK_CLR(m))), \
	PACK_POS(PACK_CLR(PACK_CLR(PACK_CLR(m)))), \
	PACK_POS(PACK_CLR(PACK_CLR(PACK_CLR(PACK_CLR(m))))), \
	PACK_POS(PACK_CLR(PACK_CLR(PACK_CLR(PACK_CLR(PACK_CLR(m)))))), \
	PACK_POS(PACK_CLR(PACK_CLR(PACK_CLR(PACK_CLR(PACK_CLR(PACK_CLR( \
	    m))))))), \
	PACK_POS(PACK_CLR(PACK_CLR(PACK_CLR(PACK_CLR(PACK_CLR(PACK_CLR( \
	    PACK_CLR(m)))))))) }
#define PACK_4(m)	PACK_ROW(m), PACK_ROW((m) + 1), PACK_ROW((m) + 2), \
	PACK_ROW((m) + 3)
#define PACK_16(m)	PACK_4(m), PACK_4((m) + 4), PACK_4((m) + 8), \
	PACK_4((m) + 12)
#define PACK_64(m)	PACK_16(m), PACK_16((m) + 16), PACK_16((m) + 32), \
	PACK_16((m) + 48)
static const uint8_t pack_shuffle[256][8] __attribute__((aligned(8))) = {
	PACK_64(0), PACK_64(64), PACK_64(128), PACK_64(192)
};
#undef PACK_64
#undef PACK_16
#undef PACK_4
#undef PACK_ROW
#undef PACK_POS
#undef PACK_CLR

/*
 * The blocks of flattening with AVX2's byte shuffle: each half of a block
 * is packed by its row of pack_shuffle and stored, 8 bytes, where the copy
 * has got to, which costs the same however many spaces a block has (where
 * the SSE2 loop stores once per word, a few times a block in English). A
 * block without white space, Chinese text's commonest, is stored whole.
 * Returns where the caller goes on: fewer than 16 bytes are left to it.
 */
__attribute__((target("avx2,popcnt"))) static size_t
flatten_blocks_avx2(const char *s, size_t len, char *o, size_t *kept,
    struct flat_blocks *fb)
{
	const __m128i	 sp = _mm_set1_epi8(' ');
	const __m128i	 nl = _mm_set1_epi8('\n');
	const __m128i	 high = _mm_set1_epi64x(0x0808080808080808LL);
	__m128i		 b, order;
	size_t		 i, n = *kept;
	unsigned	 keep, lo, hi;
	uint64_t	 lo_row, hi_row;

	for (i = 0; len - i >= 16; i += 16) {
		b = _mm_loadu_si128((const __m128i *)(s + i));
		keep = ~(unsigned)_mm_movemask_epi8(_mm_or_si128(
		    _mm_cmpeq_epi8(b, sp), _mm_cmpeq_epi8(b, nl))) & 0xFFFF;
		fb[i >> 4].kept = n;
		fb[i >> 4].mask = keep;
		if (keep == 0xFFFF) {
			_mm_storeu_si128((__m128i *)(o + n), b);
			n += 16;
			continue;
		}
		lo = keep & 0xFF;
		hi = keep >> 8;
		memcpy(&lo_row, pack_shuffle[lo], sizeof lo_row);
		memcpy(&hi_row, pack_shuffle[hi], sizeof hi_row);
		order = _mm_add_epi8(_mm_set_epi64x((long long)hi_row,
		    (long long)lo_row), _mm_unpacklo_epi64(
		    _mm_setzero_si128(), high));
		b = _mm_shuffle_epi8(b, order);
		_mm_storel_epi64((__m128i *)(o + n), b);
		n += (size_t)__builtin_popcount(lo);
		_mm_storel_epi64((__m128i *)(o + n), _mm_unpackhi_epi64(b, b));
		n += (size_t)__builtin_popcount(hi);
	}
	*kept = n;
	return (i);
}
#endif

void
nsd_text_flatten(struct nsd_text *t, const char *s, size_t len,
    struct nsd_piece *pieces, size_t npieces, struct nsd_buf *out)
{
	struct flat_blocks *fb;
	size_t		 i = 0, n = 0, blk, k;
	char		*o;
	enum nsd_simd	 simd = nsd_simd();

	out->len = 0;
	nsd_buf_reserve(out, len + 16);
	o = out->data;
	t->blocks.len = 0;
	nsd_buf_reserve(&t->blocks, (len / 16 + 1) * sizeof *fb);
	fb = (struct flat_blocks *)(void *)t->blocks.data;
#if NSD_HAVE_AVX2
	if (simd == NSD_SIMD_AVX2)
		i = flatten_blocks_avx2(s, len, o, &n, fb);
#endif
#ifdef __SSE2__
	if (simd == NSD_SIMD_SSE2) {
		const __m128i	 sp = _mm_set1_epi8(' ');
		const __m128i	 nl = _mm_set1_epi8('\n');
		__m128i		 b;
		unsigned	 ws, at, bit;

		for (; len - i >= 32; i += 16) {
			b = _mm_loadu_si128((const __m128i *)(s + i));
			ws = _mm_movemask_epi8(_mm_or_si128(
			    _mm_cmpeq_epi8(b, sp), _mm_cmpeq_epi8(b, nl)));
			fb[i >> 4].kept = n;
			fb[i >> 4].mask = ~ws & 0xFFFF;
			for (at = 0; ws != 0; ws &= ws - 1) {
				bit = __builtin_ctz(ws);
				_mm_storeu_si128((__m128i *)(o + n),
				    _mm_loadu_si128((const __m128i *)
				    (s + i + at)));
				n += bit - at;
				at = bit + 1;
			}
			_mm_storeu_si128((__m128i *)(o + n),
			    _mm_loadu_si128((const __m128i *)(s + i + at)));
			n += 16 - at;
		}
	}
#endif
	/* Every byte is stored; only those that are not white space stay. */
	for (; i < len; i++) {
		blk = i >> 4;
		if ((i & 15) == 0) {
			fb[blk].kept = n;
			fb[blk].mask = 0;
		}
		o[n] = s[i];
		if (s[i] != ' ' && s[i] != '\n') {
			fb[blk].mask |= 1u << (i & 15);
			n++;
		}
	}
	if ((len & 15) == 0) {
		fb[len >> 4].kept = n;
		fb[len >> 4].mask = 0;
	}
	out->len = n;
	for (k = 0; k < npieces; k++) {
		i = pieces[k].start;
		pieces[k].start = flat_offset(fb, i);
		pieces[k].len = flat_offset(fb, i + pieces[k].len) -
		    pieces[k].start;
	}
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

/*
 * Push the piece s[a..b) trimmed of spaces and newlines, unless that leaves
 * nothing.
 */
static inline void
piece_trimmed(const char *s, size_t a, size_t b, struct nsd_piece **pieces,
    size_t *cap, size_t *n)
{
	while (a < b && (s[a] == ' ' || s[a] == '\n'))
		a++;
	while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\n'))
		b--;
	if (a < b) {
		piece_push(pieces, cap, *n, a, b - a);
		(*n)++;
	}
}

size_t
nsd_text_split_reference(struct nsd_text *t, const char *s, size_t len,
    struct nsd_piece **pieces, size_t *cap)
{
	size_t	 n = 0, pos = 0, ms, me;
	int	 more;

	do {
		more = pattern_next(&t->delim, s, len, pos, &ms, &me);
		if (!more)
			ms = me = len;
		if (t->rule != NSD_SPLIT_COMPAT)
			piece_trimmed(s, pos, ms, pieces, cap, &n);
		else
			piece_push(pieces, cap, n++, pos, ms - pos);
		pos = me;
	} while (more);
	return (n);
}

/*
 * The bytes that may start a delimiter of the default and prose rules:
 * ':' ';' '?' '!' '.', the line break (default) or NSD_FIELD_END (prose),
 * and E3, the lead byte of U+3002 and U+3011. split_fast() looks closer at
 * each: '.' must come before a space, a newline or the end, and E3 must
 * start E3 80 82 or E3 80 91.
 */
static const unsigned char delim_start[2][256] = {
	{ [':'] = 1, [';'] = 1, ['?'] = 1, ['!'] = 1, ['.'] = 1, ['\n'] = 1,
	  [0xE3] = 1 },
	{ [':'] = 1, [';'] = 1, ['?'] = 1, ['!'] = 1, ['.'] = 1,
	  [NSD_FIELD_END] = 1, [0xE3] = 1 }
};

/* The length of the delimiter at s[i], or 0 (see delim_start). */
static inline size_t
delim_at(const unsigned char *s, size_t len, size_t i)
{
	switch (s[i]) {
	case '.':
		return (i + 1 == len || s[i + 1] == ' ' || s[i + 1] == '\n');
	case 0xE3:
		return (len - i >= 3 && s[i + 1] == 0x80 &&
		    (s[i + 2] == 0x82 || s[i + 2] == 0x91) ? 3 : 0);
	default:
		return (1);
	}
}

#if NSD_HAVE_AVX2
/* The bytes of the 32 at s that may start a delimiter, a bit each. */
NSD_TARGET_AVX2 static inline unsigned
delim_mask_avx2(const unsigned char *s, int prose)
{
	const __m256i	 b = _mm256_loadu_si256((const __m256i *)s);
	__m256i		 hit;

	hit = _mm256_or_si256(_mm256_cmpeq_epi8(b, _mm256_set1_epi8(':')),
	    _mm256_cmpeq_epi8(b, _mm256_set1_epi8(';')));
	hit = _mm256_or_si256(hit, _mm256_cmpeq_epi8(b, _mm256_set1_epi8('?')));
	hit = _mm256_or_si256(hit, _mm256_cmpeq_epi8(b, _mm256_set1_epi8('!')));
	hit = _mm256_or_si256(hit, _mm256_cmpeq_epi8(b, _mm256_set1_epi8('.')));
	hit = _mm256_or_si256(hit, _mm256_cmpeq_epi8(b,
	    _mm256_set1_epi8((char)0xE3)));
	hit = _mm256_or_si256(hit, _mm256_cmpeq_epi8(b,
	    _mm256_set1_epi8(prose ? NSD_FIELD_END : '\n')));
	return ((unsigned)_mm256_movemask_epi8(hit));
}

/*
 * split_fast()'s scan of whole blocks of 32 bytes: each block is loaded
 * once, and the bytes that may start a delimiter are taken from its mask
 * one by one (a delimiter of three bytes may reach into the next block,
 * whose bits before i are then passed over). Returns where the scalar
 * scan goes on; *pos and *n as split_fast() keeps them.
 */
NSD_TARGET_AVX2 static size_t
split_blocks_avx2(int prose, const char *text, size_t len, size_t *pos,
    struct nsd_piece **pieces, size_t *cap, size_t *n)
{
	const unsigned char	*s = (const unsigned char *)text;
	size_t			 blk, i = 0, j, d;
	unsigned		 mask;

	for (blk = 0; len - blk >= 32; blk += 32) {
		mask = delim_mask_avx2(s + blk, prose);
		if (i > blk)
			mask &= ~0u << (i - blk);
		for (; mask != 0; mask &= mask - 1) {
			j = blk + __builtin_ctz(mask);
			if (j < i || (d = delim_at(s, len, j)) == 0)
				continue;
			piece_trimmed(text, *pos, j, pieces, cap, n);
			*pos = i = j + d;
		}
	}
	return (i > blk ? i : blk);
}
#endif

/*
 * The default and prose rules without PCRE2: the same delimiters as their
 * patterns (delim_default, delim_prose), found by a scan for the bytes that
 * may start one. nsd_text_split_reference() is the pattern itself; the
 * unit tests and the fuzzing harness hold the two to the same pieces.
 */
static size_t
split_fast(int prose, const char *text, size_t len, struct nsd_piece **pieces,
    size_t *cap)
{
	const unsigned char	*s = (const unsigned char *)text;
	const unsigned char	*start = delim_start[prose];
	size_t			 n = 0, pos = 0, i = 0, d;

#if NSD_HAVE_AVX2
	if (nsd_simd() == NSD_SIMD_AVX2)
		i = split_blocks_avx2(prose, text, len, &pos, pieces, cap, &n);
#endif
	for (;;) {
		while (i < len && !start[s[i]])
			i++;
		if (i == len)
			break;
		if ((d = delim_at(s, len, i)) == 0) {
			i++;
			continue;
		}
		piece_trimmed(text, pos, i, pieces, cap, &n);
		pos = i += d;
	}
	piece_trimmed(text, pos, len, pieces, cap, &n);
	return (n);
}

size_t
nsd_text_split(struct nsd_text *t, const char *s, size_t len,
    struct nsd_piece **pieces, size_t *cap)
{
	if (t->rule == NSD_SPLIT_COMPAT)
		return (nsd_text_split_reference(t, s, len, pieces, cap));
	return (split_fast(t->rule == NSD_SPLIT_PROSE, s, len, pieces, cap));
}

/*
 * Bytes that show a letter or digit by themselves: ASCII letters and
 * digits, and the lead bytes E5..E8 of U+5000..U+8FFF, CJK ideographs
 * (Lo) since Unicode 1.1.
 */
static const unsigned char shows_word_char[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
	['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
	['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
	['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
	['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
	['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
	['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
	[0xE5] = 1, [0xE6] = 1, [0xE7] = 1, [0xE8] = 1
};

int
nsd_text_has_word_char(struct nsd_text *t, const char *s, size_t len)
{
	size_t	 i, ms, me;

	/* Most sentences show one at once; the pattern decides the rest. */
	for (i = 0; i < len; i++)
		if (shows_word_char[(unsigned char)s[i]])
			return (1);
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
