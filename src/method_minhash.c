/*
 * method_minhash.c: MinHash-LSH, a signature a text (minhash.c) and the
 * keys of its bands, as a method (method.h). A record's candidates are
 * the groups that hold any of its band keys; it joins the oldest whose
 * first record's signature, kept with the group, agrees on enough bins
 * for --threshold.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method.h"
#include "minhash.h"
#include "pipeline.h"

/* Its scanner: the features, and the layout of the bands. */
struct minhash_scanner {
	struct nsd_method_features f;
	unsigned	 bins;
	unsigned	 bands;
	unsigned	 rows;
	size_t		 sketch_bytes;	/* the index's */
};

static const char *const minhash_options[] = {
	"threshold", "ngram", "shingle", "min-features", NULL
};

/* MinHash sees sets of features, which want other sizes than a vote. */
static void
minhash_defaults(struct nsd_config *cfg)
{
	if (!cfg->ngram_given)
		cfg->ngram = NSD_MINHASH_DEFAULT_NGRAM;
	if (!cfg->shingle_given)
		cfg->shingle = NSD_MINHASH_DEFAULT_SHINGLE;
}

static void
minhash_index_params(const struct nsd_config *cfg,
    struct nsd_index_params *ip)
{
	nsd_method_feature_params(cfg, ip);
	ip->bins = NSD_MINHASH_DEFAULT_BINS;
	ip->threshold = cfg->threshold;
	nsd_minhash_layout(cfg->threshold, ip->bins, &ip->bands, &ip->rows);
	ip->sig_bytes = 2 * (size_t)ip->bins;
	/* An index made with other bins, bands and rows keeps them. */
	ip->min_bins = NSD_MINHASH_MIN_BINS;
	ip->max_bins = NSD_MINHASH_BINS;
}

static void
minhash_describe(const struct nsd_index_report *r, char *buf, size_t size)
{
	char	 t[32];

	snprintf(buf, size, "--method minhash --threshold %s --ngram %u "
	    "--shingle %u --min-features %u (%u bins, %u bands of %u)",
	    nsd_fraction_format(r->threshold, t), r->ngram, r->shingle,
	    r->min_features, r->bins, r->bands, r->rows);
}

static unsigned
minhash_max_keys(const struct nsd_config *cfg)
{
	(void)cfg;
	return (NSD_MINHASH_MAX_BANDS);
}

static void *
minhash_scanner_new(const struct nsd_config *cfg,
    const struct nsd_index_params *ip, struct nsd_error *err)
{
	struct minhash_scanner *ms = xcalloc(1, sizeof *ms);

	if (nsd_method_features_init(&ms->f, cfg, ip, err) == -1) {
		free(ms);
		return (NULL);
	}
	ms->bins = ip->bins;
	ms->bands = ip->bands;
	ms->rows = ip->rows;
	ms->sketch_bytes = ip->sketch_bytes;
	return (ms);
}

static void
minhash_scanner_free(void *scanner)
{
	struct minhash_scanner *ms = scanner;

	if (ms == NULL)
		return;
	nsd_method_features_free(&ms->f);
	free(ms);
}

/*
 * The signature and the band keys; a record with nothing to compare keeps
 * a signature of zeros, which no band key ever leads to.
 */
static void
minhash_scan(void *scanner, const struct nsd_config *cfg, const char *text,
    size_t len, struct nsd_verdict *v)
{
	struct minhash_scanner *ms = scanner;
	uint64_t	 min[NSD_MINHASH_BINS];
	struct nsd_text_sketch sketch;
	int		 elements;

	/* An index made before it kept the numbers alone has both. */
	elements = v->sketch != NULL &&
	    ms->sketch_bytes != NSD_SKETCH_NUMBERS_BYTES;
	v->nkeys = 0;
	if (!nsd_method_comparable(cfg, &ms->f, text, len,
	    nsd_simhash_minima(&ms->f.simhash, text, len, min,
	    elements ? &sketch.elements : NULL))) {
		memset(v->sig, 0, 2 * (size_t)ms->bins);
		if (v->sketch != NULL)
			memset(v->sketch, 0, ms->sketch_bytes);
		return;
	}
	if (v->sketch != NULL) {
		nsd_sketch_numbers(&sketch.numbers, text, len);
		nsd_sketch_store(&sketch, v->sketch, ms->sketch_bytes);
	}
	nsd_minhash_compute(min, ms->bins, ms->bands, ms->rows, v->sig,
	    v->keys);
	v->nkeys = ms->bands;
}

static int
minhash_prefetch(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct nsd_verdict *v, size_t n, struct nsd_error *err)
{
	(void)cfg;
	(void)err;
	nsd_method_prefetch_keys(ix, v, n, NSD_MINHASH_MAX_BANDS);
	return (0);
}

/*
 * The groups that hold v's band keys (h->held[k] for band k, or 0) are its
 * candidates, and *best is the oldest of them whose first record's
 * signature agrees with v's on enough bins for --threshold, and that
 * nsd_method_confirm() confirms, or 0; the
 * bands that found it go to v->ev.keys, a bit each. Each candidate is
 * compared once.
 */
static int
minhash_lookup(const struct nsd_config *cfg, struct nsd_index *ix,
    struct nsd_verdict *v, struct nsd_held *h, uint64_t *best,
    struct nsd_stats *st, struct nsd_error *err)
{
	const unsigned char	*group_sig;
	uint64_t		 cand[NSD_MINHASH_MAX_BANDS];
	unsigned		 k, n = 0, i, j, agree, bins = ix->params.bins;
	int			 confirmed;

	*best = 0;
	v->ev.usable = v->nkeys;
	v->ev.bins = bins;
	if (v->nkeys == 0)
		return (0);
	for (k = 0; k < v->nkeys; k++) {
		if (nsd_index_lookup(ix, v->keys[k], &h->held[k], err) == -1)
			return (-1);
		if (h->held[k] == 0)
			continue;
		/* Into cand[0..n), sorted and without repeats. */
		for (i = 0; i < n && cand[i] < h->held[k]; i++)
			continue;
		if (i < n && cand[i] == h->held[k])
			continue;
		for (j = n++; j > i; j--)
			cand[j] = cand[j - 1];
		cand[i] = h->held[k];
	}
	st->lookups++;
	st->candidates += n;
	for (i = 0; i < n && *best == 0; i++) {
		if (nsd_index_group_signature(ix, cand[i], &group_sig,
		    err) == -1)
			return (-1);
		agree = nsd_minhash_agree(v->sig, group_sig, bins);
		if (!nsd_minhash_similar(agree, bins, cfg->threshold))
			continue;
		if ((confirmed = nsd_method_confirm(cfg, ix, v, cand[i], st,
		    err)) == -1)
			return (-1);
		if (confirmed) {
			*best = cand[i];
			v->ev.evidence = agree;
			for (k = 0; k < v->nkeys; k++)
				if (h->held[k] == *best)
					v->ev.keys[k / 64] |= 1ULL << (k % 64);
		}
	}
	return (0);
}

/* First claim wins: a band key held already stays. */
static int
minhash_claim(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct nsd_verdict *v, const struct nsd_held *h, uint64_t group,
    int dup, struct nsd_error *err)
{
	unsigned	 k;

	(void)cfg;
	(void)dup;
	for (k = 0; k < v->nkeys; k++)
		if (h->held[k] == 0 &&
		    nsd_index_claim(ix, v->keys[k], group, NULL, err) == -1)
			return (-1);
	return (0);
}

static int
minhash_near(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct nsd_verdict *v, const struct nsd_index_conflict *all,
    size_t n, const struct nsd_index_conflict *c, unsigned *evidence,
    struct nsd_error *err)
{
	const unsigned char	*their_sig;

	(void)all;
	(void)n;
	if (nsd_index_group_signature(ix, c->theirs, &their_sig, err) == -1)
		return (-1);
	*evidence = nsd_minhash_agree(v->sig, their_sig, ix->params.bins);
	return (nsd_minhash_similar(*evidence, ix->params.bins,
	    cfg->threshold));
}

static void
minhash_explain(const struct nsd_evidence *e, char *buf, size_t size)
{
	size_t		 n;
	unsigned	 k;

	/* The estimate, agree / bins, is exact in 7 places. */
	n = snprintf(buf, size, "{\"method\":\"minhash\",\"jaccard\":%.7g,"
	    "\"agree\":%u,\"bands\":[", (double)e->evidence / e->bins,
	    e->evidence);
	for (k = 0; k < NSD_MINHASH_MAX_BANDS && n < size; k++)
		if (e->keys[k / 64] >> (k % 64) & 1)
			n += snprintf(buf + n, size - n, "%s%u",
			    buf[n - 1] == '[' ? "" : ",", k);
	if (n < size)
		snprintf(buf + n, size - n, "]}");
}

const struct nsd_method_ops nsd_method_minhash = {
	.name = "minhash",
	.whole_text = 1,
	.options = minhash_options,
	.defaults = minhash_defaults,
	.index_params = minhash_index_params,
	.describe = minhash_describe,
	.max_keys = minhash_max_keys,
	.scanner_new = minhash_scanner_new,
	.scanner_free = minhash_scanner_free,
	.scan = minhash_scan,
	.prefetch = minhash_prefetch,
	.lookup = minhash_lookup,
	.claim = minhash_claim,
	.near = minhash_near,
	.explain = minhash_explain,
};
