/*
 * method_simhash.c: SimHash, one 64-bit fingerprint a text (simhash.c),
 * matched within a Hamming distance through block tables, as a method
 * (method.h).
 */
#include "config.h"

#include <stdio.h>

#include "method.h"
#include "simhash.h"

static void
simhash_index_params(const struct nsd_config *cfg,
    struct nsd_index_params *ip)
{
	nsd_method_feature_params(cfg, ip);
	ip->distance = cfg->distance;
	ip->ntables = nsd_simhash_tables(cfg->distance, ip->masks);
}

static void
simhash_explain(const struct nsd_evidence *e, char *buf, size_t size)
{
	snprintf(buf, size, "{\"method\":\"simhash\",\"distance\":%u}",
	    e->evidence);
}

const struct nsd_method_ops nsd_method_simhash = {
	.name = "simhash",
	.index_params = simhash_index_params,
	.explain = simhash_explain,
};
