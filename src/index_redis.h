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

/* The keys --db-info and --db-verify look at, at most. */
#define NSD_REDIS_INSPECT_MAX	1000000

/*
 * How --db-info and --db-verify look at a namespace (index_redis_verify.c),
 * reading it and writing nothing: its keys are found by SCAN on every
 * master, max_keys of them at most.
 */
struct nsd_redis_inspect {
	const char	*url;
	const char *const *methods;	/* that this nsdedup knows, up to a
					   NULL */
	unsigned	 norm_version;	/* the newest it knows */
	uint64_t	 max_keys;
};

/* What they tell of a namespace; free with nsd_redis_report_free(). */
struct nsd_redis_report {
	char		*url;		/* as shown: without a password */
	char		 ns[72];
	struct nsd_index_report params;	/* the parameters and format, as of
					   a file; method "" when they
					   cannot be read */
	uint64_t	 next;		/* NS:next: the last group number */
	int		 cluster;
	size_t		 masters;
	char		 servers[256];	/* "HOST:PORT, ..." */
	uint64_t	 keys;		/* looked at */
	int		 partial;	/* there are more than max_keys */
	uint64_t	 fingerprints;	/* NS:f: */
	uint64_t	 blocks;	/* NS:s: */
	uint64_t	 block_entries;
	uint64_t	 groups;	/* NS:g: */
	uint64_t	 gave_way;	/* of them, given way to another */
	uint64_t	 pairs;		/* NS:a: */
	uint64_t	 stances;	/* NS:w: */
	uint64_t	 runs_running;	/* NS:run: */
	uint64_t	 runs_done;
	uint64_t	 others;	/* no key nsdedup makes */
	uint64_t	 expiring;	/* keys with a time to live */
	int64_t		 ttl_max;	/* the longest left, in seconds */
};

/*
 * Describe the namespace (--db-info). Errors: those of opening, among them
 * the refusals of its parameters, and "no such index".
 */
int	 nsd_index_redis_describe(const struct nsd_redis_inspect *,
	    struct nsd_redis_report *, struct nsd_error *);

/*
 * Check what the design promises of a namespace (--db-verify): each broken
 * promise is passed to problem (the first max of them) and counted in
 * *problems; the call fails only when the namespace cannot be read at all.
 * The report's url is set before the first problem is.
 */
int	 nsd_index_redis_verify(const struct nsd_redis_inspect *,
	    void (*)(void *, const char *), void *, size_t,
	    struct nsd_redis_report *, uint64_t *, struct nsd_error *);

void	 nsd_redis_report_free(struct nsd_redis_report *);

#endif /* NSD_INDEX_REDIS_H */
