/*
 * index_redis.h: the index shared through Redis or Redis Cluster, for
 * several hosts at once (index_redis.c; the cluster client beneath it is
 * redis_cluster.c). Built when configure finds hiredis; without it,
 * nsd_index_open_redis() fails with NSD_EXIT_USAGE and says so.
 *
 * Errors: NSD_EXIT_USAGE for a URL that cannot be one, NSD_EXIT_INDEX
 * for a server that cannot be reached or used, or an index made with
 * other parameters.
 */
#ifndef NSD_INDEX_REDIS_H
#define NSD_INDEX_REDIS_H

#include <string.h>

#include "index.h"

#define NSD_REDIS_SCHEME	"redis://"

/* How a Redis index is opened. */
struct nsd_index_redis {
	const char	*url;		/* redis://[USER:PASSWORD@]HOST:PORT
					   [,HOST:PORT...][/NAMESPACE] */
	int		 readonly;	/* --no-update: nothing is written */
	long		 ttl;		/* --ttl, seconds; 0: keys stay */
};

/* Whether --db names a Redis index rather than a file. */
static inline int
nsd_index_is_redis(const char *db)
{
	return (strncmp(db, NSD_REDIS_SCHEME, strlen(NSD_REDIS_SCHEME)) == 0);
}

int	 nsd_index_open_redis(struct nsd_index **,
	    const struct nsd_index_redis *, const struct nsd_index_params *,
	    struct nsd_error *);

#endif /* NSD_INDEX_REDIS_H */
