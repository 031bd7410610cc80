/*
 * pipeline.c: the stages of a run (see pipeline.h) and the loop over inputs.
 */
#include "config.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "method.h"
#include "minhash.h"
#include "nshash.h"
#include "pipeline.h"
#include "reader.h"
#include "records.h"
#include "simhash.h"

enum record_kind {
	RECORD_OK,		/* a record to fingerprint and judge */
	RECORD_BLANK,		/* an empty or all-white-space line */
	RECORD_HEADER,		/* a TSV header line */
	RECORD_BAD		/* bad input, see reason */
};

/* What the stages learn about one line of a batch. */
struct record {
	enum record_kind kind;
	size_t		 reason;	/* bad: offset in the batch's reasons */
	size_t		 fp_off;	/* fingerprints in the batch's array */
	unsigned	 nfps;
	struct nsd_record_found found;	/* its id and members */
	uint64_t	 group;		/* decided: the record's group */
	uint64_t	 number;	/* named: the group's number */
	size_t		 name_off;	/* named: the group's id in the
					   batch's names, or SIZE_MAX: none */
	size_t		 name_len;
	int		 dup;
	unsigned	 evidence;	/* duplicate: simhash distance,
					   nshash fingerprints that matched,
					   or minhash bins that agree */
	unsigned	 usable;	/* decided: fingerprints compared */
	unsigned	 common;	/* nshash: sentences passed over as
					   boilerplate */
	int		 has_whole;	/* nshash version 2: */
	uint64_t	 whole_key;	/* the key of the whole text */
	int		 exact;		/* decided by the whole text */
};

/* A batch of lines and what the stages wrote about them. */
struct work {
	struct nsd_batch	 lines;
	struct record		*recs;
	size_t			 recs_cap;
	uint64_t		*fps;
	size_t			 nfps;
	size_t			 fps_cap;
	unsigned char		*code;		/* nshash: beside each of fps,
						   whether its sentence looks
						   like code */
	unsigned char		*sigs;		/* minhash: record i's
						   signature at i *
						   NSD_MINHASH_SIG_BYTES */
	uint64_t		*bands;		/* minhash: the bands whose
						   keys record i's group
						   holds, a bit each, at
						   2 i (a duplicate's) */
	size_t			 sigs_cap;	/* records, of both */
	struct nsd_spans	 spans;
	struct nsd_buf		 reasons;
	struct nsd_buf		 id;		/* a TSV id as a JSON token */
	struct nsd_buf		 names;		/* the ids of the groups */
};

/* The state stage 2 needs, one per thread. */
struct nsd_worker {
	struct nsd_record_scanner rs;		/* the record's text */
	struct nsd_nshash	 nshash;
	struct nsd_simhash	 simhash;	/* also minhash's features */
	unsigned		 bands;		/* minhash */
	unsigned		 rows;
};

/*
 * A text with no more letters and digits than this has nothing to compare
 * with simhash either, however many features it has: a site's slogan that
 * is all a failed crawl kept is no copy of the next failed crawl.
 */
#define NSD_SIMHASH_MIN_CHARS	30

/* The most keys a record is looked up by: nshash's, or minhash's bands. */
#define NSD_MAX_KEYS_PER_RECORD	(NSD_NSHASH_MAX_SENTENCES > \
	NSD_MINHASH_MAX_BANDS ? NSD_NSHASH_MAX_SENTENCES : \
	NSD_MINHASH_MAX_BANDS)

/* The sentences fingerprinted per one of --sentences, but with --compat. */
#define NSD_SPARE_FACTOR	3

/*
 * How many of a text's longest sentences stage_scan() fingerprints: spares
 * beyond --sentences, to stand in for the boilerplate among the longest (a
 * leaked script can fill every place). The first --sentences of them are
 * the fingerprints the definition gives.
 */
static unsigned
nshash_candidates(const struct nsd_config *cfg)
{
	unsigned	 n = cfg->sentences;

	if (!cfg->compat)
		n *= NSD_SPARE_FACTOR;
	return (n < NSD_NSHASH_MAX_SENTENCES ? n : NSD_NSHASH_MAX_SENTENCES);
}

static int
worker_init(struct nsd_worker *w, const struct nsd_config *cfg,
    const struct nsd_index *ix, struct nsd_error *err)
{
	struct nsd_nshash_params np;
	struct nsd_simhash_params sp;
	char			 joiner;

	memset(w, 0, sizeof *w);
	/* nshash from version 2 on tells the fields of its text apart. */
	joiner = cfg->method == NSD_METHOD_NSHASH && !cfg->compat &&
	    ix->params.norm_version >= 2 ? NSD_FIELD_END : '\n';
	if (nsd_record_scanner_init(&w->rs, cfg, joiner, err) == -1)
		return (-1);
	sp.ngram = cfg->ngram;
	sp.shingle = cfg->shingle;
	sp.min_features = cfg->min_features;
	sp.seed = 0;
	nsd_simhash_init(&w->simhash, &sp);
	w->bands = ix->params.bands;
	w->rows = ix->params.rows;
	np.sentences = nshash_candidates(cfg);
	np.min_length = cfg->min_length;
	np.compat = cfg->compat;
	np.seed = 0;
	np.version = ix->params.norm_version;
	return (nsd_nshash_init(&w->nshash, &np, err));
}

static void
worker_free(struct nsd_worker *w)
{
	nsd_record_scanner_free(&w->rs);
	nsd_nshash_free(&w->nshash);
	nsd_simhash_free(&w->simhash);
}

static void
work_free(struct work *wk)
{
	nsd_batch_free(&wk->lines);
	free(wk->recs);
	free(wk->fps);
	free(wk->code);
	free(wk->sigs);
	free(wk->bands);
	free(wk->spans.v);
	nsd_buf_free(&wk->reasons);
	nsd_buf_free(&wk->id);
	nsd_buf_free(&wk->names);
}

/* Mark a record bad, keeping its reason in the batch. */
static void
set_bad(struct work *wk, struct record *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
set_bad(struct work *wk, struct record *r, const char *fmt, ...)
{
	va_list	 ap;
	char	 reason[256];
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	else if ((size_t)n >= sizeof reason)
		n = sizeof reason - 1;
	r->kind = RECORD_BAD;
	r->reason = wk->reasons.len;
	nsd_buf_append(&wk->reasons, reason, n);
	nsd_buf_putc(&wk->reasons, '\0');
}

/*
 * Stage 1, in order: blank lines, the input's format, and the TSV header.
 * Long lines are bad here already; the header errors are fatal.
 */
static int
stage_frame(const struct nsd_config *cfg, struct nsd_record_input *in,
    struct work *wk, struct nsd_error *err)
{
	char		 why[NSD_RECORD_WHY_MAX];
	size_t		 i;

	wk->reasons.len = 0;
	if (wk->recs_cap < wk->lines.nlines) {
		wk->recs_cap = wk->lines.nlines;
		wk->recs = xreallocarray(wk->recs, wk->recs_cap,
		    sizeof *wk->recs);
	}
	for (i = 0; i < wk->lines.nlines; i++) {
		const struct nsd_line	*l = &wk->lines.lines[i];
		const char		*s = nsd_line_data(&wk->lines, l);
		struct record		*r = &wk->recs[i];

		memset(r, 0, sizeof *r);
		r->kind = RECORD_OK;
		if (l->kind == NSD_LINE_LONG_MORE ||
		    l->kind == NSD_LINE_LONG_LAST) {
			r->kind = RECORD_BAD;	/* the rest of a line reported
						   already */
			continue;
		}
		if (l->kind != NSD_LINE_WHOLE) {
			/*
			 * Its first bytes still decide the format, and a
			 * TSV header too long to read leaves no columns.
			 */
			if (in->format == NSD_FORMAT_AUTO)
				in->format = nsd_record_format_of(s, l->len);
			set_bad(wk, r,
			    "line longer than %zu bytes (--max-line)",
			    cfg->max_line);
			if (in->format == NSD_FORMAT_TSV && !in->header_seen &&
			    !cfg->no_header)
				return (nsd_error_set(err, NSD_EXIT_INPUT,
				    "%s:%llu: bad header: %s",
				    in->name, (unsigned long long)l->lineno,
				    wk->reasons.data + r->reason));
			continue;
		}
		if (nsd_record_is_blank(in->format, s, l->len)) {
			r->kind = RECORD_BLANK;
			continue;
		}
		if (in->format == NSD_FORMAT_AUTO)
			in->format = nsd_record_format_of(s, l->len);
		if (in->format != NSD_FORMAT_TSV || in->header_seen)
			continue;
		in->header_seen = 1;
		if (!cfg->no_header) {
			r->kind = RECORD_HEADER;
			if (nsd_record_check_tsv(s, l->len, why) == -1)
				return (nsd_error_set(err, NSD_EXIT_INPUT,
				    "%s:%llu: bad header: %s",
				    in->name, (unsigned long long)l->lineno,
				    why));
		}
		if (nsd_record_tsv_header(cfg, in, s, l->len, l->lineno,
		    err) == -1)
			return (-1);
	}
	return (0);
}

static void
add_fps(struct work *wk, struct record *r, const uint64_t *fps,
    const unsigned char *code, size_t n)
{
	if (wk->nfps + n > wk->fps_cap) {
		wk->fps_cap = (wk->nfps + n) * 2;
		wk->fps = xreallocarray(wk->fps, wk->fps_cap, sizeof *wk->fps);
		wk->code = xreallocarray(wk->code, wk->fps_cap, 1);
	}
	r->fp_off = wk->nfps;
	r->nfps = n;
	if (n == 0)
		return;
	memcpy(wk->fps + wk->nfps, fps, n * sizeof *fps);
	memcpy(wk->code + wk->nfps, code, n);
	wk->nfps += n;
}

/*
 * Whether w's text, of n feature occurrences, has something to compare
 * with simhash or minhash: enough features, and enough letters and digits.
 */
static int
comparable(const struct nsd_config *cfg, struct nsd_worker *w, size_t n)
{
	return (n >= cfg->min_features && nsd_text_more_word_chars(
	    w->nshash.text, w->rs.text.data, w->rs.text.len,
	    NSD_SIMHASH_MIN_CHARS));
}

/*
 * MinHash: record i's signature into the batch, and its band keys into
 * keys; returns how many (0: nothing to compare).
 */
static size_t
scan_minhash(const struct nsd_config *cfg, struct nsd_worker *w,
    struct work *wk, size_t i, uint64_t *keys)
{
	uint64_t	 min[NSD_MINHASH_BINS];

	if (!comparable(cfg, w, nsd_simhash_minima(&w->simhash, w->rs.text.data,
	    w->rs.text.len, min)))
		return (0);
	nsd_minhash_compute(min, w->bands, w->rows,
	    wk->sigs + i * NSD_MINHASH_SIG_BYTES, keys);
	return (w->bands);
}

/* Stage 2: every record of the batch, independently of the others. */
static void
stage_scan(const struct nsd_config *cfg, struct nsd_worker *w,
    const struct nsd_record_input *in, struct work *wk)
{
	uint64_t	 fps[NSD_MAX_KEYS_PER_RECORD];
	unsigned char	 code[NSD_MAX_KEYS_PER_RECORD] = { 0 };
	char		 why[NSD_RECORD_WHY_MAX];
	size_t		 i, n;

	wk->nfps = 0;
	wk->spans.n = 0;
	if (cfg->method == NSD_METHOD_MINHASH &&
	    wk->sigs_cap < wk->lines.nlines) {
		wk->sigs_cap = wk->lines.nlines;
		wk->sigs = xreallocarray(wk->sigs, wk->sigs_cap,
		    NSD_MINHASH_SIG_BYTES);
		wk->bands = xreallocarray(wk->bands, wk->sigs_cap,
		    2 * sizeof wk->bands[0]);
	}
	for (i = 0; i < wk->lines.nlines; i++) {
		const struct nsd_line	*l = &wk->lines.lines[i];
		const char		*s = nsd_line_data(&wk->lines, l);
		struct record		*r = &wk->recs[i];

		if (r->kind != RECORD_OK)
			continue;
		if (nsd_record_scan(cfg, &w->rs, in, s, l->len, &r->found,
		    &wk->spans, why) == -1) {
			set_bad(wk, r, "%s", why);
			continue;
		}
		if (cfg->method == NSD_METHOD_SIMHASH)
			n = comparable(cfg, w, nsd_simhash_compute(&w->simhash,
			    w->rs.text.data, w->rs.text.len, fps));
		else if (cfg->method == NSD_METHOD_MINHASH)
			n = scan_minhash(cfg, w, wk, i, fps);
		else
			n = nsd_nshash_compute(&w->nshash, w->rs.text.data,
			    w->rs.text.len, fps, cfg->compat ? NULL : code);
		add_fps(wk, r, fps, code, n);
		r->has_whole = cfg->method == NSD_METHOD_NSHASH &&
		    w->nshash.has_whole;
		if (r->has_whole)
			r->whole_key = nsd_nshash_whole_key(w->nshash.whole);
	}
}

/*
 * Boilerplate, for nshash. A sentence that many unrelated records share
 * (a site's footer, a disclaimer, a navigation line, a leaked script) must
 * not make them duplicates. Two rules see to it; --compat turns both off.
 *
 * --min-match=M: a record joins a group only when M of its fingerprints
 * (all of them, when it has fewer than M) are the group's. One shared
 * footer is not enough, where a copy keeps most of its long sentences.
 *
 * --common=C: the index counts, for each fingerprint, the groups that
 * presented it, by marks: mark L of fingerprint f (nsd_nshash_mark()) is
 * an entry that says "at least L groups presented f", claimed by the
 * record that made it so (the fingerprint itself is mark 1). Marks are
 * inserted, never changed, so they persist and commit like any entry.
 * A fingerprint with mark C is boilerplate.
 *
 * A record passes over boilerplate, and over sentences that look like
 * code or markup (nsd_nshash_compute() flags them) unless it has no other,
 * and takes its next longest sentences instead: stage_scan() fingerprints
 * spares for that.
 */

/* Whether fingerprint fp, which a group holds, has mark common. */
static int
is_common(struct nsd_index *ix, uint64_t fp, unsigned common, int *yes,
    struct nsd_error *err)
{
	uint64_t	 g;

	if (nsd_index_lookup(ix, nsd_nshash_mark(fp, common), &g, err) == -1)
		return (-1);
	*yes = g != 0;
	return (0);
}

/* Group, new to fingerprint fp, presents it: add its next mark. */
static int
count_presenter(struct nsd_index *ix, uint64_t fp, unsigned common,
    uint64_t group, struct nsd_error *err)
{
	uint64_t	 mark, g;
	unsigned	 level;

	for (level = 2; level <= common; level++) {
		mark = nsd_nshash_mark(fp, level);
		if (nsd_index_lookup(ix, mark, &g, err) == -1)
			return (-1);
		if (g == 0)
			return (nsd_index_claim(ix, mark, group, err));
	}
	return (0);
}

/*
 * The nshash decision for r: look its fingerprints up, longest first,
 * passing over boilerplate, until it has --sentences of them; they go to
 * use[0..r->usable), and the groups that hold them to held[]. *best is the
 * oldest group that holds enough of them, or 0: --min-match, or as many
 * as r has among its first --sentences fingerprints, if fewer.
 */
static int
lookup_nshash(const struct nsd_config *cfg, struct nsd_index *ix,
    const uint64_t *fps, const unsigned char *code, struct record *r,
    uint64_t *use, uint64_t *held, uint64_t *best, struct nsd_error *err)
{
	unsigned	 k, i, j, n = 0, need, count, top = 0;
	int		 common, prose = 0;
	uint64_t	 exact = 0;

	if (r->has_whole &&
	    nsd_index_lookup(ix, r->whole_key, &exact, err) == -1)
		return (-1);

	/* A text that is all code (a program posted twice) is compared. */
	for (k = 0; k < r->nfps && !prose; k++)
		prose = !code[k];
	r->common = 0;
	for (k = 0; k < r->nfps && n < cfg->sentences; k++) {
		if (code[k] && prose) {
			r->common++;
			continue;
		}
		if (nsd_index_lookup(ix, fps[k], &held[n], err) == -1)
			return (-1);
		if (held[n] != 0 && cfg->common > 0) {
			if (is_common(ix, fps[k], cfg->common, &common,
			    err) == -1)
				return (-1);
			if (common) {
				r->common++;
				continue;
			}
		}
		use[n++] = fps[k];
		top += k < cfg->sentences;
	}
	r->usable = n;
	/*
	 * Spares were never claimed for an earlier record: count only the
	 * fingerprints that it would have had too, so that a record seen
	 * again after some of its sentences became common still matches.
	 */
	need = cfg->min_match;
	if (need > top)
		need = top > 0 ? top : 1;
	if (need > n)
		need = n;
	*best = 0;
	for (i = 0; i < n; i++) {
		if (held[i] == 0 || (*best != 0 && held[i] >= *best))
			continue;
		for (j = 0, count = 0; j < n; j++)
			count += held[j] == held[i];
		if (count >= need)
			*best = held[i], r->evidence = count;
	}
	/*
	 * A text seen before joins the group of its first record, unless
	 * it has nothing left to compare (a page of nothing but a footer).
	 */
	r->exact = exact != 0 && n > 0;
	if (r->exact) {
		for (i = 0, count = 0; i < n; i++)
			count += held[i] == exact;
		*best = exact;
		r->evidence = count;
	}
	return (0);
}

/*
 * The minhash decision for r: the groups that hold its band keys (held[k]
 * for band k, or 0) are its candidates, and *best is the oldest of them
 * whose first record's signature agrees with r's, sig, on enough bins for
 * --threshold, or 0; the bands that found it go to bands[0..2), a bit
 * each. Each candidate is compared once.
 */
static int
lookup_minhash(const struct nsd_config *cfg, struct nsd_index *ix,
    const uint64_t *keys, const unsigned char *sig, struct record *r,
    uint64_t *held, uint64_t *bands, uint64_t *best, struct nsd_stats *st,
    struct nsd_error *err)
{
	const unsigned char	*group_sig;
	uint64_t		 cand[NSD_MINHASH_MAX_BANDS];
	unsigned		 k, n = 0, i, j, agree;

	for (k = 0; k < r->nfps; k++) {
		if (nsd_index_lookup(ix, keys[k], &held[k], err) == -1)
			return (-1);
		if (held[k] == 0)
			continue;
		/* Into cand[0..n), sorted and without repeats. */
		for (i = 0; i < n && cand[i] < held[k]; i++)
			continue;
		if (i < n && cand[i] == held[k])
			continue;
		for (j = n++; j > i; j--)
			cand[j] = cand[j - 1];
		cand[i] = held[k];
	}
	st->lookups++;
	st->candidates += n;
	*best = 0;
	bands[0] = bands[1] = 0;
	for (i = 0; i < n && *best == 0; i++) {
		if (nsd_index_group_signature(ix, cand[i], &group_sig,
		    err) == -1)
			return (-1);
		agree = nsd_minhash_agree(sig, group_sig);
		if (nsd_minhash_similar(agree, cfg->threshold)) {
			*best = cand[i];
			r->evidence = agree;
			for (k = 0; k < r->nfps; k++)
				if (held[k] == *best)
					bands[k / 64] |= 1ULL << (k % 64);
		}
	}
	return (0);
}

/* r's id as a group keeps it. */
static void
record_id(const struct nsd_record_input *in, struct work *wk,
    const struct record *r, const struct nsd_line *l, const char **id,
    size_t *id_len)
{
	nsd_record_id(in, nsd_line_data(&wk->lines, l), &r->found, &wk->id, id,
	    id_len);
}

/*
 * A new group for r, named by its id, keeping sig (minhash: r's
 * signature; NULL for the other methods).
 */
static int
open_group(const struct nsd_record_input *in, struct nsd_index *ix,
    struct work *wk, const struct record *r, const struct nsd_line *l,
    const unsigned char *sig, uint64_t *group, struct nsd_error *err)
{
	const char	*id;
	size_t		 id_len;

	record_id(in, wk, r, l, &id, &id_len);
	return (nsd_index_group_new_signed(ix, id, id_len, sig, group, err));
}

/*
 * A shared index has no commit: a run that failed leaves its groups, and
 * the run again finds its records already seen. Whether r is such a
 * record, the first of group (the group's id is r's, and the run that
 * opened it failed): then it is the group's original again, so that a run
 * again writes what the failed run would have written.
 */
static int
first_again(const struct nsd_record_input *in, struct nsd_index *ix,
    struct work *wk, const struct record *r, const struct nsd_line *l,
    uint64_t group, int *yes, struct nsd_error *err)
{
	struct nsd_group_name	 name;
	const char		*id;
	size_t			 id_len;

	*yes = 0;
	record_id(in, wk, r, l, &id, &id_len);
	if (id_len == 0 ||
	    nsd_index_group_name(ix, group, &name, err) == -1)
		return (id_len == 0 ? 0 : -1);
	if (name.id_len != id_len || memcmp(name.id, id, id_len) != 0)
		return (0);
	return (nsd_index_group_adopt(ix, group, yes, err));
}

/*
 * Whether fp is among the first n of fps[] (sorted), found by bisection.
 */
static int
sorted_has(const uint64_t *fps, size_t n, uint64_t fp)
{
	size_t	 lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (fps[mid] < fp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < n && fps[lo] == fp);
}

/* qsort()'s order of 64-bit keys. */
static int
compare_u64(const void *a, const void *b)
{
	uint64_t	 x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/*
 * nshash on a shared index, where each read is a round trip: the batch's
 * reads go in three rounds, so that deciding it rarely waits for another.
 * The first takes the fingerprints that the records will compare (passing
 * over code, as lookup_nshash() does) and the whole texts; the second the
 * --common marks of those that a group holds or that another record of
 * the batch has too (it will be held by then), and the spares of the
 * records that have one (a sentence held may turn out boilerplate); the
 * third the marks of the spares held. Whatever else a decision needs is
 * read when asked for.
 */
static int
prefetch_shared(const struct nsd_config *cfg, struct nsd_index *ix,
    struct work *wk, struct nsd_error *err)
{
	const struct record	*r;
	const unsigned char	*code;
	const uint64_t		*fps;
	uint64_t		 held, *seen = NULL, *repeated = NULL;
	size_t			 i, nseen = 0, nrepeated = 0, j;
	unsigned		 k, n, level, spares;
	int			 prose, round, any, rc = -1;

	/* The fingerprints that two records of the batch share. */
	for (i = 0; i < wk->lines.nlines; i++)
		if (wk->recs[i].kind == RECORD_OK)
			nseen += wk->recs[i].nfps;
	seen = xreallocarray(NULL, nseen + 1, sizeof *seen);
	repeated = xreallocarray(NULL, nseen + 1, sizeof *repeated);
	for (i = 0, nseen = 0; i < wk->lines.nlines; i++)
		if (wk->recs[i].kind == RECORD_OK)
			for (k = 0; k < wk->recs[i].nfps; k++)
				seen[nseen++] = wk->fps[wk->recs[i].fp_off + k];
	qsort(seen, nseen, sizeof *seen, compare_u64);
	for (j = 1; j < nseen; j++)
		if (seen[j] == seen[j - 1] && (nrepeated == 0 ||
		    repeated[nrepeated - 1] != seen[j]))
			repeated[nrepeated++] = seen[j];

	for (round = 0; round < 3; round++)
		for (i = 0; i < wk->lines.nlines; i++) {
			r = &wk->recs[i];
			if (r->kind != RECORD_OK)
				continue;
			fps = wk->fps + r->fp_off;
			code = wk->code + r->fp_off;
			for (k = 0, prose = 0; k < r->nfps && !prose; k++)
				prose = !code[k];
			/* Up to --sentences, then as many spares. */
			spares = round == 0 ? 0 : cfg->sentences;
			for (k = 0, n = 0, any = 0; k < r->nfps &&
			    n < cfg->sentences + spares; k++) {
				if (code[k] && prose)
					continue;
				if (n++ >= cfg->sentences && !any)
					break;
				if (round == 0 || (round == 1 &&
				    n > cfg->sentences)) {
					nsd_index_prefetch(ix, fps[k]);
					continue;
				}
				if (nsd_index_lookup(ix, fps[k], &held,
				    err) == -1)
					goto out;
				any |= held != 0;
				/* Marks: round 1 the first's, 2 the spares'. */
				if (round != (n > cfg->sentences ? 2 : 1) ||
				    (held == 0 && !sorted_has(repeated,
				    nrepeated, fps[k])))
					continue;
				for (level = 2; level <= cfg->common; level++)
					nsd_index_prefetch(ix,
					    nsd_nshash_mark(fps[k], level));
			}
			if (round == 0 && r->has_whole)
				nsd_index_prefetch(ix, r->whole_key);
		}
	rc = 0;
out:
	free(seen);
	free(repeated);
	return (rc);
}

/* Stage 3's loop: each record of the batch in turn. */
static int
decide_records(const struct nsd_config *cfg, const struct nsd_record_input *in,
    struct nsd_index *ix, struct work *wk, struct nsd_stats *st, size_t *stop,
    struct nsd_error *err)
{
	static const unsigned char no_sig[NSD_MINHASH_SIG_BYTES];
	struct nsd_index_near near;
	uint64_t	 use[NSD_MAX_KEYS_PER_RECORD];
	uint64_t	 held[NSD_MAX_KEYS_PER_RECORD];
	uint64_t	 best;
	const unsigned char	*sig;
	size_t		 i, k;
	int		 minhash = cfg->method == NSD_METHOD_MINHASH;
	int		 shared = nsd_index_is_shared(ix), again;

	for (i = 0; i < wk->lines.nlines; i++) {
		struct record		*r = &wk->recs[i];
		const struct nsd_line	*l = &wk->lines.lines[i];

		switch (r->kind) {
		case RECORD_BLANK:
			st->blank++;
			continue;
		case RECORD_HEADER:
			continue;
		case RECORD_BAD:
			if (l->kind == NSD_LINE_LONG_MORE ||
			    l->kind == NSD_LINE_LONG_LAST)
				continue;
			st->records++;
			st->bad++;
			if (cfg->on_error == NSD_ON_ERROR_FAIL) {
				*stop = i;
				return (0);
			}
			continue;
		case RECORD_OK:
			break;
		}
		st->records++;
		best = 0;
		r->usable = r->nfps;
		if (cfg->method == NSD_METHOD_SIMHASH && r->nfps == 1) {
			if (nsd_index_near(ix, wk->fps[r->fp_off],
			    cfg->distance, &near, err) == -1)
				return (-1);
			best = near.group;
			r->evidence = near.distance;
			st->lookups++;
			st->candidates += near.candidates;
		}
		if (cfg->method == NSD_METHOD_NSHASH &&
		    lookup_nshash(cfg, ix, wk->fps + r->fp_off,
		    wk->code + r->fp_off, r, use, held, &best, err) == -1)
			return (-1);
		/*
		 * A minhash record with nothing to compare keeps a signature
		 * of zeros, which no band key ever leads to.
		 */
		sig = !minhash ? NULL : r->nfps > 0 ?
		    wk->sigs + i * NSD_MINHASH_SIG_BYTES : no_sig;
		if (minhash && r->nfps > 0 && lookup_minhash(cfg, ix,
		    wk->fps + r->fp_off, sig, r, held, wk->bands + 2 * i,
		    &best, st, err) == -1)
			return (-1);
		r->dup = best != 0;
		if (r->dup && shared && first_again(in, ix, wk, r, l, best,
		    &again, err) == -1)
			return (-1);
		if (r->dup && shared && again)
			r->dup = r->exact = 0;
		if (best == 0 &&
		    open_group(in, ix, wk, r, l, sig, &best, err) == -1)
			return (-1);
		r->group = best;
		/* An exact SimHash match adds nothing the index lacks. */
		if (cfg->method == NSD_METHOD_SIMHASH && r->nfps == 1 &&
		    !(r->dup && r->evidence == 0) &&
		    nsd_index_add(ix, wk->fps[r->fp_off], best, err) == -1)
			return (-1);
		/* Only nshash records have a whole text (stage_scan()). */
		if (r->has_whole && !r->exact && r->usable > 0 &&
		    nsd_index_claim(ix, r->whole_key, best, err) == -1)
			return (-1);
		/* First claim wins: a band key held already stays. */
		for (k = 0; minhash && k < r->nfps; k++)
			if (held[k] == 0 && nsd_index_claim(ix,
			    wk->fps[r->fp_off + k], best, err) == -1)
				return (-1);
		for (k = 0; cfg->method == NSD_METHOD_NSHASH && k < r->usable;
		    k++) {
			if (nsd_index_claim(ix, use[k], best, err) == -1)
				return (-1);
			if (cfg->common > 0 && held[k] != 0 &&
			    held[k] != best && count_presenter(ix, use[k],
			    cfg->common, best, err) == -1)
				return (-1);
		}
		if (r->dup)
			st->duplicates++;
		else {
			st->originals++;
			st->no_text += r->usable == 0;
		}
	}
	return (0);
}

/*
 * Stage 3, in order: a record joins the oldest group that holds enough of
 * its fingerprints (simhash: the nearest within --distance), or opens a
 * new one; then its fingerprints are claimed for that group (those claimed
 * before keep their group). Stops early, with *stop set, at a bad record
 * under --on-error=fail.
 */
static int
stage_decide(const struct nsd_config *cfg, const struct nsd_record_input *in,
    struct nsd_index *ix, struct work *wk, struct nsd_stats *st, size_t *stop,
    struct nsd_error *err)
{
	size_t		 i, k, nprefetch;
	int		 minhash = cfg->method == NSD_METHOD_MINHASH;
	int		 shared = nsd_index_is_shared(ix);

	*stop = wk->lines.nlines;
	nsd_index_begin_batch(ix);
	if (shared && cfg->method == NSD_METHOD_NSHASH)
		return (prefetch_shared(cfg, ix, wk, err) == -1 ? -1 :
		    decide_records(cfg, in, ix, wk, st, stop, err));
	for (i = 0; i < wk->lines.nlines; i++) {
		/* nshash looks its spares up only if it must. */
		nprefetch = wk->recs[i].nfps;
		if (!minhash && nprefetch > cfg->sentences)
			nprefetch = cfg->sentences;
		for (k = 0; k < nprefetch; k++)
			nsd_index_prefetch(ix, wk->fps[wk->recs[i].fp_off + k]);
		if (wk->recs[i].has_whole)
			nsd_index_prefetch(ix, wk->recs[i].whole_key);
	}
	return (decide_records(cfg, in, ix, wk, st, stop, err));
}

/*
 * Whether the conflict c (see nsd_index_settle()) makes r, the record
 * that opened c->ours, a near copy of c->theirs, by the rule that would
 * have judged r had c->theirs been there first; *evidence as for r.
 */
static int
near_enough(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct work *wk, const struct record *r,
    const struct nsd_index_conflict *all, size_t n,
    const struct nsd_index_conflict *c, unsigned *evidence,
    struct nsd_error *err)
{
	const unsigned char	*their_sig;
	const uint64_t		*fps = wk->fps + r->fp_off;
	uint64_t		 held;
	unsigned		 count = 0, need, k;
	size_t			 i;

	switch (cfg->method) {
	case NSD_METHOD_SIMHASH:
		*evidence = (unsigned)__builtin_popcountll(fps[0] ^ c->key);
		return (r->nfps == 1 && *evidence <= cfg->distance);
	case NSD_METHOD_MINHASH:
		if (nsd_index_group_signature(ix, c->theirs, &their_sig,
		    err) == -1)
			return (-1);
		*evidence = nsd_minhash_agree(wk->sigs +
		    (size_t)(r - wk->recs) * NSD_MINHASH_SIG_BYTES, their_sig);
		return (nsd_minhash_similar(*evidence, cfg->threshold));
	default:
		break;
	}
	/*
	 * nshash: the whole text, or enough of r's fingerprints theirs
	 * holds now: those it won from r, and those it held before.
	 */
	for (i = 0; i < n; i++)
		if (all[i].ours == c->ours && all[i].theirs == c->theirs &&
		    r->has_whole && all[i].key == r->whole_key) {
			*evidence = r->usable;
			return (1);
		}
	/* The ones lookup_nshash() looked at, about (no more are read). */
	for (k = 0; k < r->nfps && k < cfg->sentences + r->common; k++) {
		if (nsd_index_lookup(ix, fps[k], &held, err) == -1)
			return (-1);
		count += held == c->theirs;
	}
	need = cfg->min_match < r->usable ? cfg->min_match : r->usable;
	*evidence = count;
	return (count > 0 && count >= need);
}

/*
 * A shared index: write the batch's decisions (its first stop records),
 * and settle its conflicts with other processes (index_redis.c). A
 * record that opened a group while a near copy of it was being claimed
 * elsewhere gives way if the arbitration says so: it, and every record
 * of the batch that joined its group, become duplicates of the other.
 */
static int
settle_batch(const struct nsd_config *cfg, struct nsd_index *ix,
    struct work *wk, size_t stop, struct nsd_stats *st,
    struct nsd_error *err)
{
	const struct nsd_index_conflict	*c;
	struct nsd_index_conflict	*pairs = NULL;
	struct record			*r;
	uint64_t			*winners = NULL;
	unsigned			*evidence = NULL, ev;
	size_t				 n, i, j, np = 0;
	int				 near, rc = -1;

	if (nsd_index_settle(ix, &c, &n, err) == -1)
		return (-1);
	if (n == 0)
		return (0);
	pairs = xreallocarray(NULL, n, sizeof *pairs);
	evidence = xreallocarray(NULL, n, sizeof *evidence);
	winners = xreallocarray(NULL, n, sizeof *winners);
	for (i = 0; i < n; i++) {
		for (j = 0, r = NULL; j < stop && r == NULL; j++)
			if (wk->recs[j].kind == RECORD_OK && !wk->recs[j].dup &&
			    wk->recs[j].group == c[i].ours)
				r = &wk->recs[j];
		if (r == NULL)
			continue;
		if ((near = near_enough(cfg, ix, wk, r, c, n, &c[i], &ev,
		    err)) == -1)
			goto out;
		if (!near)
			continue;
		/* One arbitration per group: with the oldest it met. */
		for (j = 0; j < np && pairs[j].ours != c[i].ours; j++)
			continue;
		if (j == np || c[i].theirs < pairs[j].theirs) {
			pairs[j] = c[i];
			evidence[j] = ev;
			np += j == np;
		}
	}
	if (nsd_index_arbitrate(ix, pairs, np, winners, err) == -1)
		goto out;
	for (j = 0; j < np; j++) {
		/* Theirs, or the group theirs gave way to meanwhile. */
		if (winners[j] == pairs[j].ours)
			continue;
		for (i = 0; i < stop; i++) {
			r = &wk->recs[i];
			if (r->kind != RECORD_OK || r->group != pairs[j].ours)
				continue;
			r->group = winners[j];
			if (r->dup)
				continue;
			r->dup = 1;
			r->exact = 0;
			r->evidence = evidence[j];
			if (wk->bands != NULL)
				wk->bands[2 * i] = wk->bands[2 * i + 1] = 0;
			st->originals--;
			st->no_text -= r->usable == 0;
			st->duplicates++;
		}
	}
	rc = 0;
out:
	free(pairs);
	free(evidence);
	free(winners);
	return (rc);
}

/*
 * The end of stage 3: the names of the groups of the records stage 4
 * annotates, up to record stop, copied into the batch, so that stage 4
 * never touches the index (a name may be a fetch from a shared one).
 */
static int
name_batch(const struct nsd_config *cfg, struct nsd_index *ix,
    struct work *wk, size_t stop, struct nsd_error *err)
{
	struct nsd_group_name	 name;
	struct record		*r;
	size_t			 i;

	wk->names.len = 0;
	if (cfg->mode == NSD_MODE_DROP_DUPS)
		return (0);
	for (i = 0; i < stop; i++) {
		r = &wk->recs[i];
		if (r->kind != RECORD_OK ||
		    (cfg->mode == NSD_MODE_ONLY_DUPS && !r->dup))
			continue;
		if (nsd_index_group_name(ix, r->group, &name, err) == -1)
			return (-1);
		r->number = name.number;
		r->name_off = SIZE_MAX;
		r->name_len = name.id_len;
		if (name.id != NULL) {
			r->name_off = wk->names.len;
			nsd_buf_append(&wk->names, name.id, name.id_len);
		}
	}
	return (0);
}

/* Stage 4 for a record that was judged: annotate it, pass it, or drop it. */
static int
write_judged(const struct nsd_config *cfg, struct nsd_writer *wr,
    const struct nsd_record_input *in, const struct work *wk,
    const struct record *r, const struct nsd_line *l, struct nsd_error *err)
{
	const char		*s = nsd_line_data(&wk->lines, l);
	struct nsd_annotation	 a;
	struct nsd_evidence	 ev;
	char			 evidence[NSD_EVIDENCE_MAX];

	if (cfg->mode == NSD_MODE_DROP_DUPS)
		return (r->dup ? 0 : nsd_writer_raw(wr, s, l->len, l->eol_len,
		    err));
	if (cfg->mode == NSD_MODE_ONLY_DUPS && !r->dup)
		return (0);
	memset(&a, 0, sizeof a);
	a.id = r->name_off == SIZE_MAX ? NULL : wk->names.data + r->name_off;
	a.id_len = r->name_len;
	a.group = r->number;
	a.dup = r->dup;
	if (cfg->explain && r->dup) {
		ev.evidence = r->evidence;
		ev.usable = r->usable;
		ev.common = r->common;
		ev.exact = r->exact;
		ev.bands = wk->bands == NULL ? NULL :
		    wk->bands + 2 * (size_t)(r - wk->recs);
		nsd_method_of(cfg->method)->explain(&ev, evidence,
		    sizeof evidence);
		a.explain = evidence;
	}
	return (nsd_record_write(wr, in, s, l, &r->found, &wk->spans, &a,
	    err));
}

/* Stage 4, in order: the output, up to (not including) record stop. */
static int
stage_write(const struct nsd_config *cfg, struct nsd_writer *wr,
    struct nsd_record_input *in, const struct work *wk, size_t stop,
    struct nsd_error *err)
{
	const char	*s;
	size_t		 i;
	int		 pass = cfg->on_error == NSD_ON_ERROR_PASS;

	for (i = 0; i < stop; i++) {
		const struct record	*r = &wk->recs[i];
		const struct nsd_line	*l = &wk->lines.lines[i];

		s = nsd_line_data(&wk->lines, l);
		switch (r->kind) {
		case RECORD_BLANK:
			break;
		case RECORD_HEADER:
			if (cfg->mode == NSD_MODE_DROP_DUPS) {
				if (nsd_writer_raw(wr, s, l->len, l->eol_len,
				    err) == -1)
					return (-1);
			} else if (nsd_record_write(wr, in, s, l, NULL, NULL,
			    NULL, err) == -1)
				return (-1);
			break;
		case RECORD_BAD:
			/*
			 * Pieces of a long line: its head decided whether
			 * they are passed.
			 */
			if (l->kind == NSD_LINE_LONG_HEAD)
				in->long_pass = pass;
			if (l->kind == NSD_LINE_LONG_HEAD ||
			    l->kind == NSD_LINE_LONG_MORE) {
				if (in->long_pass && nsd_output_write(wr->out,
				    s, l->len, err) == -1)
					return (-1);
				break;
			}
			if (l->kind == NSD_LINE_LONG_LAST) {
				if (in->long_pass && nsd_writer_raw(wr, s,
				    l->len, l->eol_len, err) == -1)
					return (-1);
				in->long_pass = 0;
				break;
			}
			if (pass && nsd_writer_raw(wr, s, l->len, l->eol_len,
			    err) == -1)
				return (-1);
			break;
		case RECORD_OK:
			if (write_judged(cfg, wr, in, wk, r, l, err) == -1)
				return (-1);
			break;
		}
	}
	return (0);
}

/* Tell the hook about the batch's bad records, up to record stop included. */
static void
report_bad(const struct nsd_pipeline_hooks *hooks,
    const struct nsd_record_input *in, const struct work *wk, size_t stop)
{
	size_t	 i;

	for (i = 0; i < wk->lines.nlines && i <= stop; i++) {
		const struct record	*r = &wk->recs[i];
		const struct nsd_line	*l = &wk->lines.lines[i];

		if (r->kind != RECORD_BAD || l->kind == NSD_LINE_LONG_MORE ||
		    l->kind == NSD_LINE_LONG_LAST)
			continue;
		if (hooks->bad_record != NULL)
			hooks->bad_record(hooks->ctx, in->name, l->lineno,
			    wk->reasons.data + r->reason);
	}
}

/*
 * The run. Batches go round a ring of slots: the main thread reads and
 * frames each batch into the next free slot, the workers scan framed
 * batches (whichever is oldest not taken yet), and the main thread decides
 * and writes the oldest batch once it is scanned. So the output is in
 * input order and the index is touched by the main thread only, whatever
 * the number of threads. While the oldest batch is not scanned yet, the
 * main thread scans one itself rather than wait, so --jobs=N is N threads
 * scanning, and --jobs=1 is no worker thread at all: the main thread does
 * everything, a batch at a time, in a ring of one slot.
 *
 * The ring holds at most 2N + 2 batches (RING_MAX at most) and RING_BYTES
 * of input (more only when a single batch is larger), which bounds the
 * memory of a run whatever its input. Reading stops early when the input
 * has nothing ready (a pipe from a slow writer): what the ring holds is
 * written and the output flushed before the main thread waits for more, so
 * that records flow through a pipeline as they come.
 *
 * Scanning reads the state of the batch's input (its format and TSV
 * columns), which framing sets before the first batch with a record to
 * scan leaves it and never writes again; writing keeps the rest of that
 * state, in order.
 */
#define RING_MAX	32
#define RING_BYTES	(32 * 1024 * 1024)
#define INPUT_WAIT_MS	5

enum slot_state { SLOT_FREE, SLOT_FRAMED, SLOT_SCANNING, SLOT_SCANNED };

struct slot {
	struct work		 wk;
	struct nsd_record_input		*in;
	uint64_t		 bytes;		/* of input, that it accounts
						   for */
	enum slot_state		 state;
};

struct worker_start {
	struct run		*run;
	struct nsd_worker	*worker;
};

struct run {
	const struct nsd_config	*cfg;
	struct nsd_index	*ix;
	struct nsd_writer	*wr;
	const struct nsd_pipeline_hooks *hooks;
	struct nsd_stats	*st;

	struct slot		*ring;
	size_t			 nslots;
	uint64_t		 head;		/* the oldest batch in the
						   ring */
	uint64_t		 tail;		/* the next one to be read */
	uint64_t		 next_scan;	/* the next one to be scanned */
	size_t			 held;		/* input bytes in the ring */

	char			**files;
	size_t			 nfiles;
	size_t			 next_file;
	struct nsd_record_input		*inputs;	/* one per file */
	struct nsd_reader	 rd;
	int			 reading;	/* rd is open on the current
						   file */
	uint64_t		 rd_bytes;	/* rd's bytes at the last
						   batch */
	int			 at_end;	/* no more batches: all is
						   read, or reading failed */
	int			 read_failed;
	struct nsd_error	 read_err;

	pthread_mutex_t		 lock;
	pthread_cond_t		 framed;	/* a batch to scan, or quit */
	pthread_cond_t		 scanned;	/* a batch has been scanned */
	int			 quit;
	struct nsd_worker	*workers;	/* [0]: the main thread's */
	pthread_t		*threads;	/* for workers 1 .. njobs - 1 */
	struct worker_start	*starts;
	size_t			 njobs;
	size_t			 started;	/* threads running */
};

static struct slot *
slot_of(struct run *r, uint64_t seq)
{
	return (&r->ring[seq % r->nslots]);
}

/* The ring's lock, which a run of one thread does without. */
static void
run_lock(struct run *r)
{
	if (r->njobs > 1)
		pthread_mutex_lock(&r->lock);
}

static void
run_unlock(struct run *r)
{
	if (r->njobs > 1)
		pthread_mutex_unlock(&r->lock);
}

/*
 * Take the oldest framed batch nobody scans yet and scan it with worker w;
 * the lock is held on entry and on return, not while scanning.
 */
static void
scan_next(struct run *r, struct nsd_worker *w)
{
	struct slot	*s = slot_of(r, r->next_scan++);

	s->state = SLOT_SCANNING;
	run_unlock(r);
	stage_scan(r->cfg, w, s->in, &s->wk);
	run_lock(r);
	s->state = SLOT_SCANNED;
	if (r->njobs > 1)
		pthread_cond_signal(&r->scanned);
}

/* A worker thread: scan batches until told to quit. */
static void *
worker_main(void *arg)
{
	struct worker_start	*ws = arg;
	struct run		*r = ws->run;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->quit && r->next_scan == r->tail)
			pthread_cond_wait(&r->framed, &r->lock);
		if (r->quit)
			break;
		scan_next(r, ws->worker);
	}
	pthread_mutex_unlock(&r->lock);
	return (NULL);
}

/* The number of threads --jobs asks for: by default, the cores available. */
static size_t
jobs_of(const struct nsd_config *cfg)
{
	cpu_set_t	 set;
	long		 n;

	if (cfg->jobs > 0)
		return (cfg->jobs);
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
	else
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return (n < 1 ? 1 : n > NSD_MAX_JOBS ? NSD_MAX_JOBS : (size_t)n);
}

/*
 * Set up the ring and the workers, and start the worker threads (with the
 * signals blocked in them, as every thread: nsd_thread_start()).
 */
static int
run_start(struct run *r, const struct nsd_config *cfg, struct nsd_index *ix,
    struct nsd_error *err)
{
	size_t		 i;
	int		 rc = 0;

	r->njobs = jobs_of(cfg);
	r->nslots = r->njobs == 1 ? 1 : 2 * r->njobs + 2;
	if (r->nslots > RING_MAX)
		r->nslots = RING_MAX;
	r->ring = xcalloc(r->nslots, sizeof *r->ring);
	r->workers = xcalloc(r->njobs, sizeof *r->workers);
	for (i = 0; i < r->njobs; i++)
		if (worker_init(&r->workers[i], cfg, ix, err) == -1)
			return (-1);
	if (r->njobs == 1)
		return (0);

	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->framed, NULL);
	pthread_cond_init(&r->scanned, NULL);
	r->threads = xcalloc(r->njobs - 1, sizeof *r->threads);
	r->starts = xcalloc(r->njobs, sizeof *r->starts);
	for (i = 1; i < r->njobs && rc == 0; i++) {
		r->starts[i].run = r;
		r->starts[i].worker = &r->workers[i];
		if ((rc = nsd_thread_start(&r->threads[i - 1], worker_main,
		    &r->starts[i])) == 0)
			r->started++;
	}
	if (rc != 0)
		return (nsd_error_set(err, NSD_EXIT_NOMEM,
		    "cannot start a thread (--jobs=%zu): %s", r->njobs,
		    strerror(rc)));
	return (0);
}

/* Stop the worker threads and free the ring, the workers and the inputs. */
static void
run_stop(struct run *r)
{
	size_t	 i;

	if (r->njobs > 1) {
		pthread_mutex_lock(&r->lock);
		r->quit = 1;
		pthread_cond_broadcast(&r->framed);
		pthread_mutex_unlock(&r->lock);
		for (i = 0; i < r->started; i++)
			pthread_join(r->threads[i], NULL);
		free(r->threads);
		free(r->starts);
		pthread_cond_destroy(&r->framed);
		pthread_cond_destroy(&r->scanned);
		pthread_mutex_destroy(&r->lock);
	}
	for (i = 0; r->workers != NULL && i < r->njobs; i++)
		worker_free(&r->workers[i]);
	free(r->workers);
	for (i = 0; r->ring != NULL && i < r->nslots; i++)
		work_free(&r->ring[i].wk);
	free(r->ring);
	for (i = 0; r->inputs != NULL && i < r->nfiles; i++)
		nsd_record_input_free(&r->inputs[i]);
	free(r->inputs);
	if (r->reading)
		nsd_reader_close(&r->rd);
}

/*
 * Read and frame the next batch into slot s, going on to the next input at
 * the end of one: 1, or 0 when every input is read, or -1 on error.
 */
static int
read_batch(struct run *r, struct slot *s, struct nsd_error *err)
{
	const struct nsd_config	*cfg = r->cfg;
	struct nsd_record_input		*in;
	int			 rc;

	for (;;) {
		if (!r->reading) {
			if (r->next_file == r->nfiles)
				return (0);
			if (nsd_reader_open(&r->rd, r->files[r->next_file],
			    cfg->max_line, err) == -1)
				return (-1);
			in = &r->inputs[r->next_file];
			nsd_record_input_init(in, r->rd.name, cfg->format);
			r->reading = 1;
			r->rd_bytes = 0;
			r->st->files++;
		}
		in = &r->inputs[r->next_file];
		if ((rc = nsd_reader_fill(&r->rd, &s->wk.lines, err)) == -1)
			return (-1);
		if (rc > 0)
			break;
		r->st->bytes += r->rd.bytes - r->rd_bytes;
		nsd_reader_close(&r->rd);
		r->reading = 0;
		r->next_file++;
	}
	s->in = in;
	s->bytes = r->rd.bytes - r->rd_bytes;
	r->rd_bytes = r->rd.bytes;
	return (stage_frame(cfg, in, &s->wk, err) == -1 ? -1 : 1);
}

/*
 * Decide and write a scanned batch, and report its bad records and the
 * progress; an error, or a stop at a bad record under --on-error=fail,
 * ends the run.
 */
static int
finish_batch(struct run *r, struct slot *s, struct nsd_error *err)
{
	struct work	*wk = &s->wk;
	size_t		 stop;

	if (stage_decide(r->cfg, s->in, r->ix, wk, r->st, &stop, err) == -1 ||
	    settle_batch(r->cfg, r->ix, wk, stop, r->st, err) == -1 ||
	    name_batch(r->cfg, r->ix, wk, stop, err) == -1)
		return (-1);
	report_bad(r->hooks, s->in, wk, stop);
	if (stage_write(r->cfg, r->wr, s->in, wk, stop, err) == -1)
		return (-1);
	r->st->bytes += s->bytes;
	if (r->hooks->progress != NULL)
		r->hooks->progress(r->hooks->ctx, r->st);
	if (stop < wk->lines.nlines)
		return (nsd_error_set(err, NSD_EXIT_FAILREC,
		    "%s:%llu: stopped at this bad record (--on-error=fail)",
		    s->in->name,
		    (unsigned long long)wk->lines.lines[stop].lineno));
	return (0);
}

/* Read and frame a batch into the ring; false at the end of the input. */
static int
read_into_ring(struct run *r)
{
	struct slot	*s = slot_of(r, r->tail);
	int		 rc;

	if ((rc = read_batch(r, s, &r->read_err)) <= 0) {
		r->at_end = 1;
		r->read_failed = rc == -1;
		return (0);
	}
	run_lock(r);
	s->state = SLOT_FRAMED;
	r->tail++;
	r->held += s->bytes;
	if (r->njobs > 1)
		pthread_cond_signal(&r->framed);
	run_unlock(r);
	return (1);
}

/* Decide and write the oldest batch, and free its slot. */
static int
write_oldest(struct run *r, struct nsd_error *err)
{
	struct slot	*s = slot_of(r, r->head);

	if (finish_batch(r, s, err) == -1)
		return (-1);
	run_lock(r);
	s->state = SLOT_FREE;
	r->head++;
	r->held -= s->bytes;
	run_unlock(r);
	return (0);
}

/*
 * The main thread's loop. Each turn does the first of these that can be
 * done: read a batch, when the ring has room and the input has something
 * ready; write the oldest batch, when it is scanned; scan a batch that no
 * worker has taken; read, waiting for input, when the ring is empty (after
 * flushing the output); wait a little for input, when the ring has room;
 * wait for a worker.
 */
static int
run_batches(struct run *r, struct nsd_error *err)
{
	int	 room, scanned;

	for (;;) {
		room = !r->at_end && r->tail - r->head < r->nslots &&
		    (r->held < RING_BYTES || r->tail == r->head);
		if (room && (!r->reading || nsd_reader_ready(&r->rd, 0))) {
			read_into_ring(r);
			continue;
		}
		run_lock(r);
		scanned = r->head < r->tail &&
		    slot_of(r, r->head)->state == SLOT_SCANNED;
		if (!scanned && r->next_scan < r->tail) {
			scan_next(r, &r->workers[0]);
			run_unlock(r);
			continue;
		}
		run_unlock(r);
		if (scanned) {
			if (write_oldest(r, err) == -1)
				return (-1);
			continue;
		}
		if (r->head == r->tail) {
			if (r->at_end)
				break;
			/* All is written that can be before more comes. */
			if (nsd_output_flush(r->wr->out, err) == -1)
				return (-1);
			read_into_ring(r);
			continue;
		}
		if (room) {
			/* A look at the ring again every few milliseconds. */
			nsd_reader_ready(&r->rd, INPUT_WAIT_MS);
			continue;
		}
		run_lock(r);
		while (slot_of(r, r->head)->state != SLOT_SCANNED) {
			assert(r->njobs > 1);
			pthread_cond_wait(&r->scanned, &r->lock);
		}
		run_unlock(r);
	}
	if (r->read_failed) {
		*err = r->read_err;
		return (-1);
	}
	return (0);
}

void
nsd_pipeline_index_params(const struct nsd_config *cfg,
    struct nsd_index_params *ip)
{
	const struct nsd_method_ops	*method = nsd_method_of(cfg->method);

	memset(ip, 0, sizeof *ip);
	ip->norm_version = NSD_NORM_VERSION;
	ip->norm_oldest = NSD_NORM_OLDEST;
	/* One table, keyed by the whole key, unless the method says. */
	ip->ntables = 1;
	ip->masks[0] = UINT64_MAX;
	ip->method = method->name;
	method->index_params(cfg, ip);
}

int
nsd_pipeline_run(const struct nsd_config *cfg, struct nsd_index *ix,
    struct nsd_writer *wr, const struct nsd_pipeline_hooks *hooks,
    struct nsd_stats *st, struct nsd_error *err)
{
	static char	*stdin_only[] = { (char *)"-" };
	struct run	 r;
	int		 rc;

	memset(st, 0, sizeof *st);
	memset(&r, 0, sizeof r);
	r.cfg = cfg;
	r.ix = ix;
	r.wr = wr;
	r.hooks = hooks;
	r.st = st;
	r.files = cfg->files;
	r.nfiles = cfg->nfiles;
	if (r.nfiles == 0) {
		r.files = stdin_only;
		r.nfiles = 1;
	}
	r.inputs = xcalloc(r.nfiles, sizeof *r.inputs);
	rc = run_start(&r, cfg, ix, err);
	if (rc == 0)
		rc = run_batches(&r, err);
	run_stop(&r);
	return (rc);
}
