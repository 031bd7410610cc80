/*
 * method_minhash.c: MinHash-LSH, a signature a text (minhash.c) and the
 * keys of its bands, as a method (method.h).
 */
#include "config.h"

#include <stdio.h>

#include "method.h"
#include "minhash.h"

static void
minhash_index_params(const struct nsd_config *cfg,
    struct nsd_index_params *ip)
{
	nsd_method_feature_params(cfg, ip);
	ip->bins = NSD_MINHASH_BINS;
	ip->threshold = cfg->threshold;
	nsd_minhash_layout(cfg->threshold, &ip->bands, &ip->rows);
	ip->sig_bytes = NSD_MINHASH_SIG_BYTES;
}

static void
minhash_explain(const struct nsd_evidence *e, char *buf, size_t size)
{
	size_t		 n;
	unsigned	 k;

	/* The estimate, agree / 128, is exact in 7 places. */
	n = snprintf(buf, size, "{\"method\":\"minhash\",\"jaccard\":%.7g,"
	    "\"agree\":%u,\"bands\":[", (double)e->evidence /
	    NSD_MINHASH_BINS, e->evidence);
	for (k = 0; k < NSD_MINHASH_MAX_BANDS && n < size; k++)
		if (e->bands[k / 64] >> (k % 64) & 1)
			n += snprintf(buf + n, size - n, "%s%u",
			    buf[n - 1] == '[' ? "" : ",", k);
	if (n < size)
		snprintf(buf + n, size - n, "]}");
}

const struct nsd_method_ops nsd_method_minhash = {
	.name = "minhash",
	.index_params = minhash_index_params,
	.explain = minhash_explain,
};
