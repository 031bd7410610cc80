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

const struct nsd_method_ops *
nsd_method_of(enum nsd_method m)
{
	if ((size_t)m >= sizeof methods / sizeof methods[0] ||
	    methods[m] == NULL)
		abort();
	return (methods[m]);
}
