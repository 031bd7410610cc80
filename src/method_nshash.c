/*
 * method_nshash.c: nshash, hashes of a text's longest sentences (nshash.c
 * computes them), as a method (method.h). A record joins the oldest group
 * that holds enough of its fingerprints, passing over boilerplate, or the
 * group of its whole text when it was seen before, byte for byte.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method.h"
#include "nshash.h"
#include "pipeline.h"
#include "text.h"

static const char *const nshash_options[] = {
	"sentences", "min-length", "min-match", "common", "compat", NULL
};

/* The sentences fingerprinted per one of --sentences, but with --compat. */
#define NSD_SPARE_FACTOR	3

/* The reference has no rule against boilerplate, and no confirmation. */
static void
nshash_defaults(struct nsd_config *cfg)
{
	if (cfg->compat && !cfg->min_match_given)
		cfg->min_match = 1;
	if (cfg->compat && !cfg->common_given)
		cfg->common = 0;
	if (cfg->compat && !cfg->confirm_given)
		cfg->confirm = 0;
}

static void
nshash_index_params(const struct nsd_config *cfg, struct nsd_index_params *ip)
{
	ip->sentences = cfg->sentences;
	ip->min_length = cfg->min_length;
	ip->compat = cfg->compat;
}

static void
nshash_describe(const struct nsd_index_report *r, char *buf, size_t size)
{
	snprintf(buf, size, "--method nshash --sentences %u --min-length %u%s",
	    r->sentences, r->min_length, r->compat ? " --compat=nshash" : "");
}

/*
 * How many of a text's longest sentences are fingerprinted: spares beyond
 * --sentences, to stand in for the boilerplate among the longest (a leaked
 * script can fill every place). The first --sentences of them are the
 * fingerprints the definition gives.
 */
static unsigned
nshash_max_keys(const struct nsd_config *cfg)
{
	unsigned	 n = cfg->sentences;

	if (!cfg->compat)
		n *= NSD_SPARE_FACTOR;
	return (n < NSD_NSHASH_MAX_SENTENCES ? n : NSD_NSHASH_MAX_SENTENCES);
}

/* From normalization version 2 on, it tells the fields of its text apart. */
static char
nshash_joiner(const struct nsd_config *cfg, const struct nsd_index_params *ip)
{
	return (!cfg->compat && ip->norm_version >= 2 ? NSD_FIELD_END : '\n');
}

static void *
nshash_scanner_new(const struct nsd_config *cfg,
    const struct nsd_index_params *ip, struct nsd_error *err)
{
	struct nsd_nshash	*h = xcalloc(1, sizeof *h);
	struct nsd_nshash_params np;

	np.sentences = nshash_max_keys(cfg);
	np.min_length = cfg->min_length;
	np.compat = cfg->compat;
	np.seed = 0;
	np.version = ip->norm_version;
	if (nsd_nshash_init(h, &np, err) == -1) {
		nsd_nshash_free(h);
		free(h);
		return (NULL);
	}
	return (h);
}

static void
nshash_scanner_free(void *scanner)
{
	if (scanner == NULL)
		return;
	nsd_nshash_free(scanner);
	free(scanner);
}

static void
nshash_scan(void *scanner, const struct nsd_config *cfg, const char *text,
    size_t len, struct nsd_verdict *v)
{
	struct nsd_nshash	*h = scanner;
	struct nsd_text_sketch	 sketch;

	v->nkeys = nsd_nshash_compute(h, text, len, v->keys,
	    cfg->compat ? NULL : v->code, v->sketch == NULL ? NULL : &sketch);
	if (v->sketch != NULL)
		nsd_sketch_store(&sketch, v->sketch, NSD_SKETCH_BYTES);
	if (cfg->compat)
		memset(v->code, 0, v->nkeys);
	v->has_whole = h->has_whole;
	if (v->has_whole)
		v->whole_key = nsd_nshash_whole_key(h->whole);
}

/*
 * Boilerplate. A sentence that many unrelated records share (a site's
 * footer, a disclaimer, a navigation line, a leaked script) must not make
 * them duplicates. Two rules see to it; --compat turns both off.
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
 * and takes its next longest sentences instead: the scan fingerprints
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

/*
 * Group, new to fingerprint fp, presents it: add its next mark, unless it
 * holds one already. A group counts once however many of its records
 * present fp: on a shared index, the records of two groups that are to
 * become one (two hosts opened them at once) present each other's
 * fingerprints until they learn it, and counting every record would make
 * the story's own sentences boilerplate.
 */
static int
count_presenter(struct nsd_index *ix, uint64_t fp, unsigned common,
    uint64_t group, struct nsd_error *err)
{
	uint64_t	 holder;
	unsigned	 level;

	for (level = 2; level <= common; level++) {
		if (nsd_index_claim(ix, nsd_nshash_mark(fp, level), group,
		    &holder, err) == -1)
			return (-1);
		if (holder == 0 || holder == group)
			break;		/* the first level no group held */
	}
	return (0);
}

/* Whether v has a sentence that does not look like code. */
static int
has_prose(const struct nsd_verdict *v)
{
	unsigned	 k;

	for (k = 0; k < v->nkeys; k++)
		if (!v->code[k])
			return (1);
	return (0);
}

/* Whether fp is among the first n of fps[] (sorted), found by bisection. */
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
 * On a shared index, where each read is a round trip, the batch's reads
 * go in three rounds, so that deciding it rarely waits for another. The
 * first takes the fingerprints that the records will compare (passing
 * over code, as nshash_lookup() does) and the whole texts; the second the
 * --common marks of those that a group holds or that another record of
 * the batch has too (it will be held by then), and the spares of the
 * records that have one (a sentence held may turn out boilerplate); the
 * third the marks of the spares held. Whatever else a decision needs is
 * read when asked for.
 */
static int
prefetch_shared(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct nsd_verdict *vs, size_t nv, struct nsd_error *err)
{
	const struct nsd_verdict *v;
	uint64_t	 held, *seen = NULL, *repeated = NULL;
	size_t		 i, nseen = 0, nrepeated = 0, j;
	unsigned	 k, n, level, spares;
	int		 prose, round, any, rc = -1;

	/* The fingerprints that two records of the batch share. */
	for (i = 0; i < nv; i++)
		nseen += vs[i].nkeys;
	seen = xreallocarray(NULL, nseen + 1, sizeof *seen);
	repeated = xreallocarray(NULL, nseen + 1, sizeof *repeated);
	for (i = 0, nseen = 0; i < nv; i++)
		for (k = 0; k < vs[i].nkeys; k++)
			seen[nseen++] = vs[i].keys[k];
	qsort(seen, nseen, sizeof *seen, compare_u64);
	for (j = 1; j < nseen; j++)
		if (seen[j] == seen[j - 1] && (nrepeated == 0 ||
		    repeated[nrepeated - 1] != seen[j]))
			repeated[nrepeated++] = seen[j];

	for (round = 0; round < 3; round++)
		for (i = 0; i < nv; i++) {
			v = &vs[i];
			prose = has_prose(v);
			/* Up to --sentences, then as many spares. */
			spares = round == 0 ? 0 : cfg->sentences;
			for (k = 0, n = 0, any = 0; k < v->nkeys &&
			    n < cfg->sentences + spares; k++) {
				if (v->code[k] && prose)
					continue;
				if (n++ >= cfg->sentences && !any)
					break;
				if (round == 0 || (round == 1 &&
				    n > cfg->sentences)) {
					nsd_index_prefetch(ix, v->keys[k]);
					continue;
				}
				if (nsd_index_lookup(ix, v->keys[k], &held,
				    err) == -1)
					goto out;
				any |= held != 0;
				/* Marks: round 1 the first's, 2 the spares'. */
				if (round != (n > cfg->sentences ? 2 : 1) ||
				    (held == 0 && !sorted_has(repeated,
				    nrepeated, v->keys[k])))
					continue;
				for (level = 2; level <= cfg->common; level++)
					nsd_index_prefetch(ix,
					    nsd_nshash_mark(v->keys[k], level));
			}
			if (round == 0 && v->has_whole)
				nsd_index_prefetch(ix, v->whole_key);
		}
	rc = 0;
out:
	free(seen);
	free(repeated);
	return (rc);
}

/* A local index answers at once: the first --sentences and whole texts. */
static int
nshash_prefetch(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct nsd_verdict *v, size_t n, struct nsd_error *err)
{
	if (nsd_index_is_shared(ix))
		return (prefetch_shared(cfg, ix, v, n, err));
	nsd_method_prefetch_keys(ix, v, n, cfg->sentences);
	return (0);
}

/*
 * The fingerprints v must share with a group: --min-match, or as many as
 * it has among its first --sentences (passing over code), if fewer.
 */
static unsigned
matches_needed(const struct nsd_config *cfg, const struct nsd_verdict *v)
{
	unsigned	 k, own = 0;
	int		 prose = has_prose(v);

	for (k = 0; k < v->nkeys && own < cfg->sentences; k++)
		own += !(v->code[k] && prose);
	if (own == 0)
		own = 1;
	return (cfg->min_match < own ? cfg->min_match : own);
}

/*
 * The oldest group, after those up to floor, that holds need of the n
 * fingerprints compared (held[]), or 0; its count into *count.
 */
static uint64_t
next_holder(const uint64_t *held, unsigned n, unsigned need, uint64_t floor,
    unsigned *count)
{
	uint64_t	 best = 0;
	unsigned	 i, j, c;

	for (i = 0; i < n; i++) {
		if (held[i] <= floor || (best != 0 && held[i] >= best))
			continue;
		for (j = 0, c = 0; j < n; j++)
			c += held[j] == held[i];
		if (c >= need)
			best = held[i], *count = c;
	}
	return (best);
}

/*
 * Look v's fingerprints up, longest first, passing over boilerplate, until
 * it has --sentences of them; they go to h->use[0..v->ev.usable), and the
 * groups that hold them to h->held[]. *best is the group of v's whole text
 * when it was seen before; else the oldest group that holds enough of them
 * and that nsd_method_confirm() confirms, or 0. Enough is --min-match, or
 * as many as v has among its first --sentences, if fewer: sentences passed
 * over as common count as v's, so that a record whose sentences are most
 * of them boilerplate needs as many matches as any other.
 */
static int
nshash_lookup(const struct nsd_config *cfg, struct nsd_index *ix,
    struct nsd_verdict *v, struct nsd_held *h, uint64_t *best,
    struct nsd_stats *st, struct nsd_error *err)
{
	unsigned	 k, i, n = 0, need, count;
	int		 common, prose, confirmed;
	uint64_t	 exact = 0, g;

	if (v->has_whole &&
	    nsd_index_lookup(ix, v->whole_key, &exact, err) == -1)
		return (-1);

	/* A text that is all code (a program posted twice) is compared. */
	prose = has_prose(v);
	v->ev.common = 0;
	for (k = 0; k < v->nkeys && n < cfg->sentences; k++) {
		if (v->code[k] && prose) {
			v->ev.common++;
			continue;
		}
		if (nsd_index_lookup(ix, v->keys[k], &h->held[n], err) == -1)
			return (-1);
		if (h->held[n] != 0 && cfg->common > 0) {
			if (is_common(ix, v->keys[k], cfg->common, &common,
			    err) == -1)
				return (-1);
			if (common) {
				v->ev.common++;
				continue;
			}
		}
		h->use[n++] = v->keys[k];
	}
	v->ev.usable = n;
	*best = 0;
	/* A text seen before joins the group of its first record. */
	v->ev.exact = exact != 0;
	if (v->ev.exact) {
		for (i = 0, count = 0; i < n; i++)
			count += h->held[i] == exact;
		*best = exact;
		v->ev.evidence = count;
		return (0);
	}
	need = matches_needed(cfg, v);
	/* A group that is not confirmed makes way for the next oldest. */
	for (g = 0; (g = next_holder(h->held, n, need, g, &count)) != 0;) {
		if ((confirmed = nsd_method_confirm(cfg, ix, v, g, st,
		    err)) == -1)
			return (-1);
		if (confirmed) {
			*best = g;
			v->ev.evidence = count;
			break;
		}
	}
	return (0);
}

/*
 * The whole text, unless it matched as such (even when nothing was left to
 * compare: a copy of it is a copy), and the fingerprints compared; a group
 * new to a fingerprint another holds presents it.
 */
static int
nshash_claim(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct nsd_verdict *v, const struct nsd_held *h, uint64_t group,
    int dup, struct nsd_error *err)
{
	unsigned	 k;

	(void)dup;
	if (v->has_whole && !v->ev.exact &&
	    nsd_index_claim(ix, v->whole_key, group, NULL, err) == -1)
		return (-1);
	for (k = 0; k < v->ev.usable; k++) {
		if (nsd_index_claim(ix, h->use[k], group, NULL, err) == -1)
			return (-1);
		if (cfg->common > 0 && h->held[k] != 0 &&
		    h->held[k] != group && count_presenter(ix, h->use[k],
		    cfg->common, group, err) == -1)
			return (-1);
	}
	return (0);
}

/*
 * The whole text, or enough of v's fingerprints theirs holds now: those it
 * won from v, and those it held before.
 */
static int
nshash_near(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct nsd_verdict *v, const struct nsd_index_conflict *all,
    size_t n, const struct nsd_index_conflict *c, unsigned *evidence,
    struct nsd_error *err)
{
	uint64_t	 held;
	unsigned	 count = 0, need, k;
	size_t		 i;

	for (i = 0; i < n; i++)
		if (all[i].ours == c->ours && all[i].theirs == c->theirs &&
		    v->has_whole && all[i].key == v->whole_key) {
			*evidence = v->ev.usable;
			return (1);
		}
	/* The ones nshash_lookup() looked at, about (no more are read). */
	for (k = 0; k < v->nkeys && k < cfg->sentences + v->ev.common; k++) {
		if (nsd_index_lookup(ix, v->keys[k], &held, err) == -1)
			return (-1);
		count += held == c->theirs;
	}
	need = matches_needed(cfg, v);
	*evidence = count;
	return (count >= need);
}

static void
nshash_explain(const struct nsd_evidence *e, char *buf, size_t size)
{
	snprintf(buf, size, "{\"method\":\"nshash\",\"matched\":%u,"
	    "\"fingerprints\":%u,\"common\":%u,\"exact\":%s}", e->evidence,
	    e->usable, e->common, e->exact ? "true" : "false");
}

const struct nsd_method_ops nsd_method_nshash = {
	.name = "nshash",
	.options = nshash_options,
	.defaults = nshash_defaults,
	.index_params = nshash_index_params,
	.describe = nshash_describe,
	.max_keys = nshash_max_keys,
	.joiner = nshash_joiner,
	.scanner_new = nshash_scanner_new,
	.scanner_free = nshash_scanner_free,
	.scan = nshash_scan,
	.prefetch = nshash_prefetch,
	.lookup = nshash_lookup,
	.claim = nshash_claim,
	.near = nshash_near,
	.explain = nshash_explain,
};
