/*
 * method.c: the registry of the fingerprint methods (see method.h).
 */
#include "config.h"

#include <stdlib.h>

#include "method.h"

/* By enum nsd_method. */
static const struct nsd_method_ops *const methods[] = {
	[NSD_METHOD_NSHASH] = &nsd_method_nshash,
	[NSD_METHOD_SIMHASH] = &nsd_method_simhash,
	[NSD_METHOD_MINHASH] = &nsd_method_minhash,
};

void
nsd_method_feature_params(const struct nsd_config *cfg,
    struct nsd_index_params *ip)
{
	ip->ngram = cfg->ngram;
	ip->shingle = cfg->shingle;
	ip->min_features = cfg->min_features;
}

const struct nsd_method_ops *
nsd_method_of(enum nsd_method m)
{
	if ((size_t)m >= sizeof methods / sizeof methods[0] ||
	    methods[m] == NULL)
		abort();
	return (methods[m]);
}
