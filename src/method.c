/*
 * method.c: the registry of the fingerprint methods, and what they share
 * (see method.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method.h"
#include "pipeline.h"
#include "text.h"

/* By enum nsd_method. */
static const struct nsd_method_ops *const methods[] = {
	[NSD_METHOD_NSHASH] = &nsd_method_nshash,
	[NSD_METHOD_SIMHASH] = &nsd_method_simhash,
	[NSD_METHOD_MINHASH] = &nsd_method_minhash,
};

#define NMETHODS	(sizeof methods / sizeof methods[0])

/*
 * A text with no more letters and digits than this has nothing to compare
 * by its features, however many it has: a site's slogan that is all a
 * failed crawl kept is no copy of the next failed crawl.
 */
#define NSD_FEATURES_MIN_CHARS	30

const struct nsd_method_ops *
nsd_method_of(enum nsd_method m)
{
	if ((size_t)m >= NMETHODS || methods[m] == NULL)
		abort();
	return (methods[m]);
}

const struct nsd_method_ops *
nsd_method_named(const char *name, enum nsd_method *m)
{
	size_t	 i;

	for (i = 0; i < NMETHODS; i++)
		if (strcmp(methods[i]->name, name) == 0) {
			if (m != NULL)
				*m = (enum nsd_method)i;
			return (methods[i]);
		}
	return (NULL);
}

const struct nsd_method_ops *
nsd_method_at(size_t i)
{
	return (i < NMETHODS ? methods[i] : NULL);
}

void
nsd_method_feature_params(const struct nsd_config *cfg,
    struct nsd_index_params *ip)
{
	ip->ngram = cfg->ngram;
	ip->shingle = cfg->shingle;
	ip->min_features = cfg->min_features;
}

int
nsd_method_features_init(struct nsd_method_features *f,
    const struct nsd_config *cfg, const struct nsd_index_params *ip,
    struct nsd_error *err)
{
	struct nsd_simhash_params sp;

	sp.ngram = cfg->ngram;
	sp.shingle = cfg->shingle;
	sp.min_features = cfg->min_features;
	sp.seed = 0;
	sp.version = ip->norm_version;
	nsd_simhash_init(&f->simhash, &sp);
	/* Only its classes of characters are asked for, not its sentences. */
	f->text = nsd_text_new(NSD_SPLIT_PROSE, err);
	if (f->text == NULL) {
		nsd_simhash_free(&f->simhash);
		return (-1);
	}
	return (0);
}

void
nsd_method_features_free(struct nsd_method_features *f)
{
	nsd_simhash_free(&f->simhash);
	nsd_text_free(f->text);
}

int
nsd_method_comparable(const struct nsd_config *cfg,
    const struct nsd_method_features *f, const char *text, size_t len,
    size_t n)
{
	return (n >= cfg->min_features && nsd_text_more_word_chars(f->text,
	    text, len, NSD_FEATURES_MIN_CHARS));
}

void
nsd_method_prefetch_keys(struct nsd_index *ix, const struct nsd_verdict *v,
    size_t n, unsigned limit)
{
	size_t		 i;
	unsigned	 k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < v[i].nkeys && k < limit; k++)
			nsd_index_prefetch(ix, v[i].keys[k]);
		if (v[i].has_whole)
			nsd_index_prefetch(ix, v[i].whole_key);
	}
}

int
nsd_method_confirm(const struct nsd_config *cfg, struct nsd_index *ix,
    struct nsd_verdict *v, uint64_t group, struct nsd_stats *st,
    struct nsd_error *err)
{
	const struct nsd_resemblance *r = &v->ev.resemblance;
	const unsigned char	*kept;
	size_t			 at = ix->params.sig_bytes -
				    ix->params.sketch_bytes;

	/* Under --confirm 0, --explain still shows the figures. */
	if (v->sketch == NULL || (cfg->confirm == 0 && !cfg->explain))
		return (1);
	if (nsd_index_group_signature(ix, group, &kept, err) == -1)
		return (-1);
	nsd_sketch_compare(v->sketch, kept + at, ix->params.sketch_bytes,
	    &v->ev.resemblance);
	v->ev.confirmed = 1;
	if (cfg->confirm == 0)
		return (1);
	/*
	 * Stories from one template share their words, not their numbers.
	 * A method that measures the whole texts itself has its own bar.
	 */
	if ((r->numbers_compared && r->numbers < NSD_SKETCH_NUMBERS_SHARE) ||
	    (!r->too_short && !nsd_method_of(cfg->method)->whole_text &&
	    r->containment < cfg->confirm)) {
		st->unconfirmed++;
		return (0);
	}
	return (1);
}

void
nsd_method_explain(const struct nsd_method_ops *m,
    const struct nsd_evidence *e, char *buf, size_t size)
{
	const struct nsd_resemblance *r = &e->resemblance;
	size_t		 n;

	m->explain(e, buf, size);
	n = strlen(buf);
	if (!e->confirmed || n == 0 || buf[n - 1] != '}')
		return;
	/* Into the method's object, before its closing brace. */
	n += snprintf(buf + n - 1, size - (n - 1), ",\"confirm\":{") - 1;
	/* A sketch of the numbers alone has no figures of the words. */
	if (n < size && r->elements_compared)
		n += snprintf(buf + n, size - n, "\"containment\":%.4g,"
		    "\"jaccard\":%.4g,\"sample\":%u",
		    (double)r->containment / NSD_SKETCH_SCALE,
		    (double)r->jaccard / NSD_SKETCH_SCALE, r->sample);
	if (n < size && r->numbers_compared)
		n += snprintf(buf + n, size - n, "%s\"numbers\":%.4g",
		    buf[n - 1] == '{' ? "" : ",",
		    (double)r->numbers / NSD_SKETCH_SCALE);
	if (n < size)
		snprintf(buf + n, size - n, "}}");
}
