/*
 * index.h: where fingerprints and groups are remembered.
 *
 * The index maps a fingerprint to the group that first claimed it, and a
 * group to its number and to the id of the record that opened it. Callers
 * see only the functions below; the implementation behind them is chosen
 * when the index is opened: in memory (index_memory.c, forgotten at exit),
 * in a file (index_file.c, remembered across runs; its format and commit
 * protocol are described there and in nsdedup-index(5)), or on Redis,
 * shared by several hosts (index_redis.c, index_redis.h).
 *
 * A group is handled as an opaque 64-bit value, never 0, where a smaller
 * value is always an older group; nsd_index_group_name() gives the number
 * and id that name it in the output.
 *
 * Semantics every implementation keeps:
 *  - nsd_index_claim() is first-claim-wins: a fingerprint already present
 *    keeps its group, so nothing is ever rewritten;
 *  - group numbers start at 1, grow by one, and never repeat;
 *  - nothing is visible to a later run until nsd_index_commit() succeeds
 *    (trivially true in memory).
 *
 * Memory: the index owns the id strings it returns; they stay valid until
 * the next call that may add a group, or nsd_index_close(). Errors: calls
 * return 0, or -1 with err filled in (NSD_EXIT_INDEX, NSD_EXIT_BUSY or
 * NSD_EXIT_COMMIT for the file index).
 */
#ifndef NSD_INDEX_H
#define NSD_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

/* The parameters that change fingerprints; an index is tied to them. */
struct nsd_index_params {
	const char	*method;		/* "nshash" */
	unsigned	 sentences;
	unsigned	 min_length;
	int		 compat;
	unsigned	 norm_version;		/* a new index's; one made
						   with an older version, from
						   norm_oldest on, keeps it,
						   and after opening, params
						   says which */
	unsigned	 norm_oldest;
	uint64_t	 seed;
	unsigned	 distance;		/* SimHash; 0 for nshash */
	unsigned	 ngram;			/* SimHash; 0 for nshash */
	unsigned	 shingle;		/* SimHash; 0 for nshash */
	unsigned	 min_features;		/* SimHash; 0 for nshash */
	unsigned	 ntables;		/* 1 for nshash, minhash */
	uint64_t	 masks[16];		/* of the SimHash block
						   tables */
	unsigned	 bins;			/* MinHash; 0 otherwise */
	unsigned	 bands;			/* MinHash */
	unsigned	 rows;			/* MinHash */
	unsigned	 threshold;		/* MinHash, in 1/10000 */
	unsigned	 min_bins;		/* MinHash: an index made
						   with other bins, bands and
						   rows, its bins a power of
						   two from min_bins to
						   max_bins, is used with its
						   own (after opening, params
						   says which); 0: none */
	unsigned	 max_bins;
	size_t		 sig_bytes;		/* what each group keeps of
						   its first record: the
						   method's own (MinHash: its
						   signature), then the
						   sketch; 0: none */
	size_t		 sketch_bytes;		/* of them, the sketch that
						   confirms a match
						   (sketch.h), or 0: an index
						   made before sketches */
	size_t		 sketch_whole;		/* the bytes of a sketch of
						   every part, which a run
						   that keeps fewer reads its
						   part of */
	int		 repeats;		/* keys are added, and may
						   repeat (SimHash's blocks),
						   not claimed once */
};

/* What nsd_index_near() found. */
struct nsd_index_near {
	uint64_t	 group;		/* the oldest within the distance, or
					   0 */
	unsigned	 distance;	/* its smallest distance */
	uint64_t	 candidates;	/* entries compared */
};

struct nsd_index;

/* What an index holds, for --stats and the benchmark. */
struct nsd_index_info {
	uint64_t	 fingerprints;
	uint64_t	 groups;
	uint64_t	 memory;	/* bytes of this process's memory it
					   uses */
	uint64_t	 peak;		/* the most it used at any one time */
	uint64_t	 mapped;	/* bytes of files mapped: the index's,
					   or those the memory index spilled
					   into */
	/* Why the memory index kept in memory what outgrew it, or NULL. */
	const char	*spill_error;
	/* A shared index: its masters (else 0), and what it took. */
	uint64_t	 servers;
	uint64_t	 commands;
	uint64_t	 round_trips;
	uint64_t	 moved;
	uint64_t	 ask;
	uint64_t	 retried;	/* TRYAGAIN, CLUSTERDOWN and the like */
	uint64_t	 reconnects;
	uint64_t	 conflicts;	/* claims another process won first */
	uint64_t	 gave_way;	/* groups that arbitration made
					   another's */
};

/* What names a group in the output. */
struct nsd_group_name {
	const char	*id;		/* a JSON token, or NULL */
	size_t		 id_len;
	uint64_t	 number;	/* from 1, never repeated */
};

/*
 * A claim of a batch that another process won first (a shared index
 * only): the group ours, opened by this batch, lost key to theirs.
 */
struct nsd_index_conflict {
	uint64_t	 ours;
	uint64_t	 theirs;
	uint64_t	 key;		/* SimHash: their fingerprint */
};

struct nsd_index_ops {
	void	 (*prefetch)(struct nsd_index *, uint64_t);
	int	 (*lookup)(struct nsd_index *, uint64_t, uint64_t *,
	    struct nsd_error *);
	/* Store fp for group; nsd_index_claim() found no holder of fp. */
	int	 (*put)(struct nsd_index *, uint64_t, uint64_t,
	    struct nsd_error *);
	int	 (*near)(struct nsd_index *, uint64_t, unsigned,
	    struct nsd_index_near *, struct nsd_error *);
	int	 (*add)(struct nsd_index *, uint64_t, uint64_t,
	    struct nsd_error *);
	int	 (*group_new)(struct nsd_index *, const char *, size_t,
	    const unsigned char *, uint64_t *, struct nsd_error *);
	int	 (*group_signature)(struct nsd_index *, uint64_t,
	    const unsigned char **, struct nsd_error *);
	int	 (*group_name)(struct nsd_index *, uint64_t,
	    struct nsd_group_name *, struct nsd_error *);
	int	 (*commit)(struct nsd_index *, uint64_t, struct nsd_error *);
	void	 (*info)(struct nsd_index *, struct nsd_index_info *);
	void	 (*close)(struct nsd_index *);
	/*
	 * A shared index (NULL for the others): begin a batch, write what
	 * it decided, and arbitrate its conflicts.
	 */
	void	 (*begin_batch)(struct nsd_index *);
	int	 (*settle)(struct nsd_index *,
	    const struct nsd_index_conflict **, size_t *, struct nsd_error *);
	int	 (*arbitrate)(struct nsd_index *,
	    const struct nsd_index_conflict *, size_t, uint64_t *,
	    struct nsd_error *);
	int	 (*group_adopt)(struct nsd_index *, uint64_t, int *,
	    struct nsd_error *);
	/* The number of the last group numbered (0: none yet). */
	int	 (*numbered)(struct nsd_index *, uint64_t *,
	    struct nsd_error *);
};

struct nsd_index {
	const struct nsd_index_ops *ops;
	struct nsd_index_params	 params;
	/*
	 * A file that a writer builds and renames into place (a rebuilt
	 * table), or NULL: a run that dies of a signal removes it, which
	 * is safe since only the holder of the write lock makes it.
	 */
	const char		*scratch;
};

/*
 * Whether a run with the parameters want may use an index (called name in
 * messages) made with had: the same ones, but for an older normalization
 * version from want->norm_oldest on, which the run then fingerprints by,
 * other MinHash bins, bands and rows that want->min_bins and max_bins
 * allow, which the run then uses (nsd_index_params_adopt()), and
 * had->ntables block tables, as many as want's choose (their masks are
 * the file's to compare). -1 with err (NSD_EXIT_INDEX) naming the
 * parameter that differs; every index refuses with these words.
 */
int	 nsd_index_params_check(const char *, const struct nsd_index_params *,
	    const struct nsd_index_params *, struct nsd_error *);

/*
 * What a run's parameters p become on an index made with had, which
 * nsd_index_params_check() accepted: its normalization version, its MinHash
 * layout, and its sketches (none: made before them).
 */
void	 nsd_index_params_adopt(struct nsd_index_params *,
	    const struct nsd_index_params *);

/* Open an index that lives in this process's memory only. */
int	 nsd_index_open_memory(struct nsd_index **,
	    const struct nsd_index_params *, struct nsd_error *);

/* How a file index is opened. */
struct nsd_index_open {
	const char	*path;
	int		 readonly;	/* --no-update: shared lock, and the
					   run's claims stay in memory */
	long		 wait_ms;	/* for the lock: -1 forever, 0 not */
	int		 undo;		/* for nsd_index_undo(): an index
					   that must exist, with its own
					   parameters, changed no further
					   than recovery needs */
	uint64_t	 ttl;		/* --ttl, seconds: the window, which
					   a writer stores; 0: the index's */
};

/*
 * Open (or, unless readonly, create) the index file o->path, made with the
 * parameters p; an index made with other ones is refused.
 */
/*
 * A run that leaves the index under as it found it (--no-update): reads
 * go to under, opened as a reader; the run's own claims, entries and
 * groups stay in memory above it (index_overlay.c). *ixp owns under from
 * then on, even when this fails.
 */
int	 nsd_index_open_overlay(struct nsd_index **, struct nsd_index *,
	    struct nsd_error *);

int	 nsd_index_open_file(struct nsd_index **, const struct nsd_index_open *,
	    const struct nsd_index_params *, struct nsd_error *);

/* What --db-info and --db-verify tell of an index file. */
/* The most commits --db-undo keeps (PATH.undo's entries). */
#define NSD_INDEX_UNDO_MAX	8

/* A commit that --db-undo can take back. */
struct nsd_undo_run {
	uint64_t	 generation;	/* the index's after it */
	uint64_t	 records;	/* the index's after it */
	int64_t		 committed_at;	/* Unix time */
};

struct nsd_index_report {
	unsigned	 version;
	char		 method[16];
	unsigned	 sentences;
	unsigned	 min_length;
	unsigned	 compat;
	unsigned	 norm_version;
	unsigned	 distance;
	unsigned	 ngram;
	unsigned	 shingle;
	unsigned	 min_features;
	unsigned	 ntables;
	unsigned	 bins;		/* MinHash */
	unsigned	 sketch_bytes;	/* of each group's sketch; 0: none */
	unsigned	 bands;
	unsigned	 rows;
	unsigned	 threshold;	/* in 1/10000 */
	uint64_t	 seed;
	uint64_t	 records;
	uint64_t	 groups;
	uint64_t	 fingerprints;
	uint64_t	 slots;
	unsigned	 max_load;	/* percent */
	uint64_t	 generation;	/* of the last commit: runs so far */
	uint64_t	 pending;	/* > generation: a run did not commit */
	uint64_t	 file_size;
	uint64_t	 ids_length;	/* committed bytes of PATH.ids */
	uint64_t	 ids_file_size;
	uint64_t	 log_records;	/* committed records of PATH.log */
	uint64_t	 log_file_size;
	uint64_t	 stage_build;	/* 0: no stage */
	uint64_t	 stage_entries;
	uint64_t	 stage_slots;
	uint64_t	 stage_file_size;
	int		 stage_unfinished; /* a fold to finish */
	uint64_t	 sweep_cursor;	/* a position in the hash space */
	uint64_t	 sweep_done;	/* since the last fold */
	uint64_t	 next_slots;	/* growing: PATH.next's; else 0 */
	uint64_t	 grow_done;
	uint64_t	 next_entries;
	uint64_t	 next_file_size;
	int64_t		 created;	/* Unix time */
	int64_t		 committed_at;
	int		 copy;		/* the header copy in use, 0 or 1 */
	uint64_t	 leftovers;	/* slots of a run that did not commit
					   (--db-verify only) */
	int		 filter;	/* PATH.filter: NSD_REPORT_FILTER_* */
	uint64_t	 filter_file_size;
	uint64_t	 filter_blocks;
	uint64_t	 filter_keys;	/* keys that set a bit in it */
	/* The window (--ttl), at the clock of nsd_index_now(). */
	uint64_t	 ttl;		/* seconds; 0: none */
	int64_t		 now;
	int64_t		 cutoff;	/* groups opened before are
					   forgotten */
	int		 times;		/* PATH.times can be believed */
	uint64_t	 forgotten;	/* groups */
	uint64_t	 oldest_group;	/* the number of the oldest kept, or
					   0 */
	int64_t		 oldest_opened;	/* when its commit was made; 0:
					   unknown */
	uint64_t	 ids_allocated;	/* bytes PATH.ids takes on disk */
	size_t		 undo_runs;	/* commits --db-undo can take back */
	struct nsd_undo_run undo[NSD_INDEX_UNDO_MAX]; /* newest first */
	const char	*undo_why;	/* why not one more */
};

/* What nsd_index_report's filter says of PATH.filter. */
#define NSD_REPORT_FILTER_NONE		0	/* no file */
#define NSD_REPORT_FILTER_OK		1	/* believed */
#define NSD_REPORT_FILTER_DAMAGED	2	/* its header is */
#define NSD_REPORT_FILTER_OTHER		3	/* another index's */
#define NSD_REPORT_FILTER_STALE		4	/* older than the commit */
#define NSD_REPORT_FILTER_UNUSED	5	/* of a version before them */

/* What nsd_index_undo() took back, and what is left to take back. */
struct nsd_index_undone {
	struct nsd_undo_run run;	/* the commit taken back */
	uint64_t	 generation;	/* the index's now */
	uint64_t	 records;
	size_t		 left;		/* commits that can still be */
	const char	*why;		/* why not one more */
};

/*
 * Take back the last commit of the index at path (--db-undo), under the
 * writer's lock taken within wait_ms milliseconds: the index is then as
 * it was before that run, or, when it cannot be, as it is, with an error
 * that says why (NSD_EXIT_INDEX). A crash leaves it as before or as after.
 */
int	 nsd_index_undo(const char *, long, struct nsd_index_undone *,
	    struct nsd_error *);

/*
 * Describe the index at path (--db-info), under a shared lock taken within
 * wait_ms milliseconds (-1: as long as it takes).
 */
int	 nsd_index_describe(const char *, long, struct nsd_index_report *,
	    struct nsd_error *);

/*
 * Check every invariant of the index at path (--db-verify). Each broken one
 * is passed to problem (the first max of them) and counted in *problems;
 * the call fails only when the index cannot be read at all.
 */
int	 nsd_index_verify(const char *, long, void (*)(void *, const char *),
	    void *, size_t, struct nsd_index_report *, uint64_t *,
	    struct nsd_error *);

/*
 * A hint that fp will be looked up soon: start loading its slot, so that
 * the lookups of a batch wait for memory together, not one by one.
 */
static inline void
nsd_index_prefetch(struct nsd_index *ix, uint64_t fp)
{
	ix->ops->prefetch(ix, fp);
}

/*
 * The SimHash rule of every index: of the groups with an entry within k
 * bits of a fingerprint, near keeps the oldest, at its smallest distance.
 * Offer it group g (0: none), with an entry d bits from the fingerprint.
 */
static inline void
nsd_index_near_offer(struct nsd_index_near *near, unsigned k, uint64_t g,
    unsigned d)
{
	if (g != 0 && d <= k && (near->group == 0 || g < near->group ||
	    (g == near->group && d < near->distance))) {
		near->group = g;
		near->distance = d;
	}
}

/*
 * Add to near what another index in front of it found (the entries of a
 * run, newer than near's): its candidates, and its group by the rule
 * above, since its entries may name near's groups too.
 */
static inline void
nsd_index_near_merge(struct nsd_index_near *near, unsigned k,
    const struct nsd_index_near *more)
{
	near->candidates += more->candidates;
	nsd_index_near_offer(near, k, more->group, more->distance);
}

/*
 * The error of an index opened to read (under index_overlay.c) that is
 * asked to write, which nothing does; name is the index's path or URL.
 */
static inline int
nsd_index_refuse_write(const char *name, struct nsd_error *err)
{
	return (nsd_error_set(err, NSD_EXIT_INDEX, "%s: opened to read, not "
	    "to write", name));
}

/* The group that claimed fp, or 0 in *group when none has. */
static inline int
nsd_index_lookup(struct nsd_index *ix, uint64_t fp, uint64_t *group,
    struct nsd_error *err)
{
	return (ix->ops->lookup(ix, fp, group, err));
}

/*
 * Let group claim fp unless some group already has: put if absent, the
 * rule of every index, written here once. *holder (unless NULL) is the
 * group that held fp before, or 0 when group now does. A shared index
 * stores the claim with the same rule on its server (SET NX GET), where
 * another host may have won it meanwhile: nsd_index_settle() says so.
 */
static inline int
nsd_index_claim(struct nsd_index *ix, uint64_t fp, uint64_t group,
    uint64_t *holder, struct nsd_error *err)
{
	uint64_t	 held;

	if (ix->ops->lookup(ix, fp, &held, err) == -1)
		return (-1);
	if (holder != NULL)
		*holder = held;
	if (held != 0)
		return (0);		/* the first claim wins */
	return (ix->ops->put(ix, fp, group, err));
}

/*
 * SimHash: the oldest group with an entry within Hamming distance k of fp,
 * found through the block tables (every entry that agrees with fp under
 * one table's mask is a candidate), never by a scan.
 */
static inline int
nsd_index_near(struct nsd_index *ix, uint64_t fp, unsigned k,
    struct nsd_index_near *near, struct nsd_error *err)
{
	return (ix->ops->near(ix, fp, k, near, err));
}

/* SimHash: enter fp for group into every block table. */
static inline int
nsd_index_add(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	return (ix->ops->add(ix, fp, group, err));
}

/*
 * Open a new group named by id[0..len) (len 0: no id); its number goes to
 * *group. An index whose params.sig_bytes is not 0 (MinHash) keeps that
 * many bytes of sig with the group: nsd_index_group_new_signed().
 */
static inline int
nsd_index_group_new(struct nsd_index *ix, const char *id, size_t len,
    uint64_t *group, struct nsd_error *err)
{
	return (ix->ops->group_new(ix, id, len, NULL, group, err));
}

static inline int
nsd_index_group_new_signed(struct nsd_index *ix, const char *id, size_t len,
    const unsigned char *sig, uint64_t *group, struct nsd_error *err)
{
	return (ix->ops->group_new(ix, id, len, sig, group, err));
}

/*
 * The params.sig_bytes bytes kept with group (MinHash: the signature of
 * its first record), valid until the next call that may add a group.
 */
static inline int
nsd_index_group_signature(struct nsd_index *ix, uint64_t group,
    const unsigned char **sig, struct nsd_error *err)
{
	return (ix->ops->group_signature(ix, group, sig, err));
}

/* The number and id (NULL when its first record had none) of group. */
static inline int
nsd_index_group_name(struct nsd_index *ix, uint64_t group,
    struct nsd_group_name *name, struct nsd_error *err)
{
	memset(name, 0, sizeof *name);
	return (ix->ops->group_name(ix, group, name, err));
}

/*
 * A shared index is read and written a batch at a time: begin_batch
 * before the batch's first prefetch, and settle after its last claim,
 * before any of its group names are asked for. Settle writes the batch's
 * groups and claims, and returns (in memory the index owns, until the
 * next call) the claims that another process won meanwhile. For each
 * conflict that matters (the caller knows whether the records are near
 * enough), arbitrate decides whether ours stays an original: winners[i]
 * is ours, or the group ours gave way to (theirs, or the one theirs gave
 * way to); a group that gave way is from then on named as its winner.
 * Without a shared index, all three do nothing.
 */
static inline int
nsd_index_is_shared(const struct nsd_index *ix)
{
	return (ix->ops->settle != NULL);
}

static inline void
nsd_index_begin_batch(struct nsd_index *ix)
{
	if (ix->ops->begin_batch != NULL)
		ix->ops->begin_batch(ix);
}

static inline int
nsd_index_settle(struct nsd_index *ix, const struct nsd_index_conflict **c,
    size_t *n, struct nsd_error *err)
{
	*n = 0;
	if (ix->ops->settle == NULL)
		return (0);
	return (ix->ops->settle(ix, c, n, err));
}

static inline int
nsd_index_arbitrate(struct nsd_index *ix, const struct nsd_index_conflict *c,
    size_t n, uint64_t *winners, struct nsd_error *err)
{
	if (ix->ops->arbitrate == NULL || n == 0)
		return (0);
	return (ix->ops->arbitrate(ix, c, n, winners, err));
}

/*
 * A shared index: when the run that opened group failed (it ended without
 * finishing and is not running), so that the group's first record may
 * never have been written out, make the group this run's, and say yes.
 * Always no for the others.
 */
static inline int
nsd_index_group_adopt(struct nsd_index *ix, uint64_t group, int *yes,
    struct nsd_error *err)
{
	*yes = 0;
	if (ix->ops->group_adopt == NULL)
		return (0);
	return (ix->ops->group_adopt(ix, group, yes, err));
}

/*
 * Make everything claimed so far durable and visible to later runs, adding
 * records to the count of records the index has seen.
 */
static inline int
nsd_index_commit(struct nsd_index *ix, uint64_t records, struct nsd_error *err)
{
	return (ix->ops->commit(ix, records, err));
}

static inline void
nsd_index_info(struct nsd_index *ix, struct nsd_index_info *info)
{
	memset(info, 0, sizeof *info);
	ix->ops->info(ix, info);
}

static inline void
nsd_index_close(struct nsd_index *ix)
{
	if (ix != NULL)
		ix->ops->close(ix);
}

#endif /* NSD_INDEX_H */
