/*
 * index.h: where fingerprints and groups are remembered.
 *
 * The index maps a fingerprint to the group that first claimed it, and a
 * group to its number and to the id of the record that opened it. Callers
 * see only the functions below; the implementation behind them is chosen
 * when the index is opened. This version has the in-memory one, which
 * forgets everything at exit; a persistent file index replaces it behind
 * the same calls.
 *
 * Semantics every implementation keeps:
 *  - nsd_index_claim() is first-claim-wins: a fingerprint already present
 *    keeps its group, so nothing is ever rewritten;
 *  - group numbers start at 1, grow by one, and never repeat;
 *  - nothing is visible to a later run until nsd_index_commit() succeeds
 *    (trivially true in memory).
 *
 * Memory: the index owns the id strings it returns; they stay valid until
 * nsd_index_close(). Errors: calls return 0, or -1 with err filled in.
 */
#ifndef NSD_INDEX_H
#define NSD_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* The parameters that change fingerprints; an index is tied to them. */
struct nsd_index_params {
	const char	*method;		/* "nshash" */
	unsigned	 sentences;
	unsigned	 min_length;
	int		 compat;
	unsigned	 norm_version;
	uint64_t	 seed;
};

struct nsd_index;

/* What an index holds, for --stats and the benchmark. */
struct nsd_index_info {
	uint64_t	 fingerprints;
	uint64_t	 groups;
	uint64_t	 memory;	/* bytes of this process's memory it
					   uses */
	uint64_t	 peak;		/* the most it used at any one time */
};

struct nsd_index_ops {
	int	 (*lookup)(struct nsd_index *, uint64_t, uint64_t *,
	    struct nsd_error *);
	int	 (*claim)(struct nsd_index *, uint64_t, uint64_t,
	    struct nsd_error *);
	int	 (*group_new)(struct nsd_index *, const char *, size_t,
	    uint64_t *, struct nsd_error *);
	int	 (*group_id)(struct nsd_index *, uint64_t, const char **,
	    size_t *, struct nsd_error *);
	int	 (*commit)(struct nsd_index *, struct nsd_error *);
	void	 (*info)(struct nsd_index *, struct nsd_index_info *);
	void	 (*close)(struct nsd_index *);
};

struct nsd_index {
	const struct nsd_index_ops *ops;
	struct nsd_index_params	 params;
};

/* Open an index that lives in this process's memory only. */
int	 nsd_index_open_memory(struct nsd_index **,
	    const struct nsd_index_params *, struct nsd_error *);

/* The group that claimed fp, or 0 in *group when none has. */
static inline int
nsd_index_lookup(struct nsd_index *ix, uint64_t fp, uint64_t *group,
    struct nsd_error *err)
{
	return (ix->ops->lookup(ix, fp, group, err));
}

/* Let group claim fp unless some group already has. */
static inline int
nsd_index_claim(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	return (ix->ops->claim(ix, fp, group, err));
}

/*
 * Open a new group named by id[0..len) (len 0: no id); its number goes to
 * *group.
 */
static inline int
nsd_index_group_new(struct nsd_index *ix, const char *id, size_t len,
    uint64_t *group, struct nsd_error *err)
{
	return (ix->ops->group_new(ix, id, len, group, err));
}

/* The id that names group, or *len = 0 when its first record had none. */
static inline int
nsd_index_group_id(struct nsd_index *ix, uint64_t group, const char **id,
    size_t *len, struct nsd_error *err)
{
	return (ix->ops->group_id(ix, group, id, len, err));
}

/* Make everything claimed so far durable and visible to later runs. */
static inline int
nsd_index_commit(struct nsd_index *ix, struct nsd_error *err)
{
	return (ix->ops->commit(ix, err));
}

static inline void
nsd_index_info(struct nsd_index *ix, struct nsd_index_info *info)
{
	ix->ops->info(ix, info);
}

static inline void
nsd_index_close(struct nsd_index *ix)
{
	if (ix != NULL)
		ix->ops->close(ix);
}

#endif /* NSD_INDEX_H */
