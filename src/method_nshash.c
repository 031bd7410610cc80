/*
 * method_nshash.c: nshash, hashes of a text's longest sentences (nshash.c
 * computes them), as a method (method.h).
 */
#include "config.h"

#include <stdio.h>

#include "method.h"

static void
nshash_index_params(const struct nsd_config *cfg, struct nsd_index_params *ip)
{
	ip->sentences = cfg->sentences;
	ip->min_length = cfg->min_length;
	ip->compat = cfg->compat;
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
	.index_params = nshash_index_params,
	.explain = nshash_explain,
};
