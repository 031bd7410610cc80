/*
 * method_simhash.c: SimHash, one 64-bit fingerprint a text (simhash.c),
 * matched within a Hamming distance through block tables, as a method
 * (method.h). The index keeps each fingerprint under every block of it
 * (nsd_index_add()); a record joins the oldest group within --distance
 * bits (nsd_index_near()).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "method.h"
#include "pipeline.h"
#include "simhash.h"

static const char *const simhash_options[] = {
	"distance", "ngram", "shingle", "min-features", NULL
};

static void
simhash_index_params(const struct nsd_config *cfg,
    struct nsd_index_params *ip)
{
	nsd_method_feature_params(cfg, ip);
	ip->distance = cfg->distance;
	ip->ntables = nsd_simhash_tables(cfg->distance, ip->masks);
}

static void
simhash_describe(const struct nsd_index_report *r, char *buf, size_t size)
{
	snprintf(buf, size, "--method simhash --distance %u --ngram %u "
	    "--shingle %u --min-features %u (%u block table%s)", r->distance,
	    r->ngram, r->shingle, r->min_features, r->ntables,
	    r->ntables == 1 ? "" : "s");
}

static unsigned
simhash_max_keys(const struct nsd_config *cfg)
{
	(void)cfg;
	return (1);
}

static void *
simhash_scanner_new(const struct nsd_config *cfg,
    const struct nsd_index_params *ip, struct nsd_error *err)
{
	struct nsd_method_features *f = xcalloc(1, sizeof *f);

	if (nsd_method_features_init(f, cfg, ip, err) == -1) {
		free(f);
		return (NULL);
	}
	return (f);
}

static void
simhash_scanner_free(void *scanner)
{
	if (scanner == NULL)
		return;
	nsd_method_features_free(scanner);
	free(scanner);
}

static void
simhash_scan(void *scanner, const struct nsd_config *cfg, const char *text,
    size_t len, struct nsd_verdict *v)
{
	struct nsd_method_features *f = scanner;
	struct nsd_text_sketch	 sketch;

	v->nkeys = nsd_method_comparable(cfg, f, text, len,
	    nsd_simhash_compute(&f->simhash, text, len, &v->keys[0],
	    v->sketch == NULL ? NULL : &sketch.elements));
	if (v->sketch != NULL) {
		nsd_sketch_numbers(&sketch.numbers, text, len);
		nsd_sketch_store(&sketch, v->sketch, NSD_SKETCH_BYTES);
	}
}

static int
simhash_prefetch(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct nsd_verdict *v, size_t n, struct nsd_error *err)
{
	(void)cfg;
	(void)err;
	nsd_method_prefetch_keys(ix, v, n, 1);
	return (0);
}

static int
simhash_lookup(const struct nsd_config *cfg, struct nsd_index *ix,
    struct nsd_verdict *v, struct nsd_held *h, uint64_t *best,
    struct nsd_stats *st, struct nsd_error *err)
{
	struct nsd_index_near near;
	int		 confirmed = 1;

	(void)h;
	*best = 0;
	v->ev.usable = v->nkeys;
	if (v->nkeys == 0)
		return (0);
	if (nsd_index_near(ix, v->keys[0], cfg->distance, &near, err) == -1)
		return (-1);
	st->lookups++;
	st->candidates += near.candidates;
	/* Only the oldest within the distance is known, and confirmed. */
	if (near.group != 0 && (confirmed = nsd_method_confirm(cfg, ix, v,
	    near.group, st, err)) == -1)
		return (-1);
	*best = confirmed ? near.group : 0;
	v->ev.evidence = near.distance;
	return (0);
}

static int
simhash_claim(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct nsd_verdict *v, const struct nsd_held *h, uint64_t group,
    int dup, struct nsd_error *err)
{
	(void)cfg;
	(void)h;
	/* An exact match adds nothing the index lacks. */
	if (v->nkeys == 0 || (dup && v->ev.evidence == 0))
		return (0);
	return (nsd_index_add(ix, v->keys[0], group, err));
}

static int
simhash_near(const struct nsd_config *cfg, struct nsd_index *ix,
    const struct nsd_verdict *v, const struct nsd_index_conflict *all,
    size_t n, const struct nsd_index_conflict *c, unsigned *evidence,
    struct nsd_error *err)
{
	(void)ix;
	(void)all;
	(void)n;
	(void)err;
	if (v->nkeys == 0)
		return (0);
	*evidence = (unsigned)__builtin_popcountll(v->keys[0] ^ c->key);
	return (*evidence <= cfg->distance);
}

static void
simhash_explain(const struct nsd_evidence *e, char *buf, size_t size)
{
	snprintf(buf, size, "{\"method\":\"simhash\",\"distance\":%u}",
	    e->evidence);
}

const struct nsd_method_ops nsd_method_simhash = {
	.name = "simhash",
	.options = simhash_options,
	.keys_repeat = 1,
	.index_params = simhash_index_params,
	.describe = simhash_describe,
	.max_keys = simhash_max_keys,
	.scanner_new = simhash_scanner_new,
	.scanner_free = simhash_scanner_free,
	.scan = simhash_scan,
	.prefetch = simhash_prefetch,
	.lookup = simhash_lookup,
	.claim = simhash_claim,
	.near = simhash_near,
	.explain = simhash_explain,
};
