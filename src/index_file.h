/*
 * index_file.h: what the parts of the persistent index share, and no one
 * else: its tables, the state of an open index, the check of every slot
 * read, and the functions of one part that another calls. index_file.c
 * has the design, the tables, lookups, claims and the commit;
 * index_fold.c the files runs make anew or append to (new tables, the
 * log, folds and rebuilds); index_sweep.c the sweeps and growth;
 * index_open.c opening, recovery and upgrades; index_undo.c what undo
 * keeps (PATH.undo) and --db-undo. Functions that return int
 * return 0, or -1 with err set; one that finds damage sets status
 * NSD_EXIT_INDEX through nsd_file_damaged().
 */
#ifndef NSD_INDEX_FILE_H
#define NSD_INDEX_FILE_H

#include <sys/types.h>

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "index.h"
#include "index_filter.h"
#include "index_format.h"
#include "index_times.h"
#include "warm.h"

/*
 * A test build stops dead at the crash points of the index's protocol:
 * see nsd_file_crash_point().
 */
#ifdef NSD_CRASH_POINTS
void	 nsd_file_crash_point(const char *);
#define CRASH_POINT(name)	nsd_file_crash_point(name)
#else
#define CRASH_POINT(name)	((void)(name))
#endif

/*
 * What the last lookups of a fingerprint found, so that the claim which
 * follows each (nsd_index_claim() right after nsd_index_lookup() is how
 * the pipeline decides a record) need not walk the chain again. Slots are
 * only ever filled, never emptied, while a table is in use, so a memo
 * stays true until the tables change (a new epoch) or its empty slot is
 * filled.
 */
#define MEMO_SIZE	64

struct memo {
	uint64_t	 key;
	uint64_t	 slot;
	uint64_t	 epoch;		/* 0: unused */
	int		 found;
};

/* How nsd_file_commit_error()'s messages end. */
#define NSD_FILE_NOT_COMMITTED	"; nothing of this run was committed"

/* Log records a writer gathers before it writes them out. */
#define LOG_BUFFER	4096

/* The share of a sweep period the sweep waits for before it moves on. */
#define SWEEP_STEPS	256

/* One table: the index's, the stage or PATH.next. */
struct table {
	const char		*what;		/* for messages: "the table" */
	int			 legacy;	/* slots of a version before
						   checks */
	int			 fd;		/* -1: none */
	unsigned char		*map;		/* the whole file */
	size_t			 map_len;
	size_t			 offset;	/* of the slots in the file */
	struct nsd_index_slot	*slots;
	uint64_t		 mask;		/* nslots - 1 */
	unsigned		 shift;		/* 64 - log2(nslots) */
	uint64_t		 entries;	/* valid slots, the run's too */
	int			 written;	/* by this run, in place */
	struct nsd_warm		*warm;		/* reading it in, or NULL */
};

struct file_index {
	struct nsd_index	 base;		/* must be first */
	char			*path;
	char			*ids_path;
	char			*new_path;
	char			*log_path;
	char			*stage_path;
	char			*stage_new_path;
	char			*next_path;
	char			*filter_path;
	char			*filter_new_path;
	char			*undo_path;
	int			 lock_fd;
	int			 ids_fd;
	int			 log_fd;
	/* What opening made, for a refusal to take away again. */
	int			 made_lock;	/* PATH.lock */
	int			 made_index;	/* PATH and PATH.ids */
	int			 made_log;	/* PATH.log */
	int			 readonly;
	int			 legacy;	/* of a version before checks:
						   read, never written */
	int			 repeats;	/* add, not claim */
	int			 in_place;	/* into the table, not the log:
						   a bulk load */
	int			 undo;		/* opened for --db-undo */
	struct nsd_index_header	 hdr;		/* the current copy */
	int			 copy;		/* which copy that is */
	struct table		 main;
	struct table		 stage;		/* fd -1: no stage */
	struct table		 next;		/* fd -1: not growing */
	uint64_t		 stage_max_gen;
	/* Where the run's sweeps have got to (committed at the commit). */
	uint64_t		 cursor;
	uint64_t		 swept;		/* this run's, since the cursor
						   of the header */
	uint64_t		 grow_done;	/* the header's and the run's */
	uint64_t		 grow_from;	/* where the growth sweep
						   began */
	uint64_t		 next_committed; /* of next.entries */
	uint64_t		 debt;		/* entries added not yet swept
						   for */
	uint64_t		 added;		/* entries the run added */
	uint64_t		 log_records;	/* the run's too */
	uint64_t		 log_written;	/* of them, out of log_buf */
	uint64_t		 log_sum;	/* of the log_records, as the
						   header's log_sum */
	unsigned char		 log_buf[LOG_BUFFER * NSD_LOG_RECORD_SIZE];
	uint64_t		 gen;		/* the run's; 0 until it
						   writes */
	unsigned char		*ids;
	size_t			 ids_cap;	/* bytes of PATH.ids mapped */
	uint64_t		 ids_len;	/* bytes used, the run's too */
	uint64_t		 last_group;	/* the newest, the run's too */
	uint64_t		 groups;
	struct nsd_index	*overlay;	/* the log's fingerprints, and
						   the run's */
	struct memo		 memo[MEMO_SIZE];
	uint64_t		 epoch;		/* of the tables, from 1 */
	/*
	 * The key filter (index_filter.c): it holds every entry of the
	 * table, the stage and PATH.next, or it is NULL (a reader that found
	 * none it can use, a writer before an upgrade).
	 */
	struct nsd_filter	*filter;
	int			 filter_off;	/* a test build's run
						   without one */
	/* The window (index_window.c). */
	char			*times_path;
	struct nsd_times	 times;		/* PATH.times */
	int64_t			 now;		/* the run's clock */
	uint64_t		 ttl;		/* seconds; 0: none */
	uint64_t		 forget_below;	/* groups below it (the
						   horizon / 8) are
						   forgotten */
	uint64_t		 added_before;	/* PATH.times's count of
						   entries added, at the last
						   commit */
	uint64_t		 added_forgotten; /* the same, at the
						   horizon's commit */
	int			 horizon_known;	/* that one is known */
};

/*
 * Whether the window has forgotten the entry of slot word meta: then it
 * never matches, and no copy of the entries takes it along.
 */
static inline int
forgotten(const struct file_index *fi, uint64_t meta)
{
	return (nsd_slot_group(meta) < fi->forget_below);
}

static inline unsigned
log2_of(uint64_t n)
{
	unsigned	 k = 0;

	while ((1ULL << k) < n)
		k++;
	return (k);
}

/* What a slot holds for this run. */
enum slot_use {
	SLOT_FREE,	/* empty, or left by a run that did not commit */
	SLOT_ENTRY,	/* an entry that counts: committed, or the run's */
	SLOT_BAD	/* damage: a check that fails, or a generation no
			   run has had */
};

/*
 * Read slot i of tb into *key and *meta (the slot word without its
 * check), checked: every slot a run reads goes through here, so that
 * damage stops the run before it can change an answer. A generation
 * after the last commit is a leftover when it is the run that did not
 * commit (pending), and damage beyond that.
 */
static inline enum slot_use
slot_read(const struct file_index *fi, const struct table *tb, uint64_t i,
    uint64_t *key, uint64_t *meta)
{
	uint64_t	 gen;

	switch (nsd_slot_get(&tb->slots[i], tb->legacy, key, meta)) {
	case NSD_SLOT_EMPTY:
		return (SLOT_FREE);
	case NSD_SLOT_DAMAGED:
		return (SLOT_BAD);
	case NSD_SLOT_FULL:
		break;
	}
	gen = nsd_slot_gen(*meta);
	if (gen <= fi->hdr.committed_gen || gen == fi->gen)
		return (SLOT_ENTRY);
	return (gen <= fi->hdr.pending_gen ? SLOT_FREE : SLOT_BAD);
}

/*
 * Whether slot i of tb is taken, for a writer that only looks for room in
 * it: a slot of a generation that counts is passed without its check, as
 * nothing of it is read; one that would be written over (empty, or left by
 * a run that did not commit) is checked by slot_read() first.
 */
static inline enum slot_use
slot_room(const struct file_index *fi, const struct table *tb, uint64_t i)
{
	uint64_t	 key, meta, gen;

	memcpy(&meta, (const char *)&tb->slots[i] + 8, sizeof meta);
	gen = nsd_slot_gen(le64toh(meta));
	if (!tb->legacy && gen != 0 && (gen <= fi->hdr.committed_gen ||
	    gen == fi->gen))
		return (SLOT_ENTRY);
	return (slot_read(fi, tb, i, &key, &meta));
}

static inline uint64_t
nslots_of(const struct table *tb)
{
	return (tb->mask + 1);
}

/* The first slot of the bucket where tb's search for position pos starts. */
static inline uint64_t
home_bucket(const struct table *tb, uint64_t pos)
{
	return ((pos >> tb->shift) & ~(uint64_t)(NSD_INDEX_BUCKET - 1));
}

/* Add a stretch's length to a count of positions, which saturates. */
static inline uint64_t
positions_add(uint64_t done, uint64_t len)
{
	return (len >= NSD_SWEPT_ALL - done ? NSD_SWEPT_ALL : done + len);
}

/* What nsd_table_stretch_each() calls for each entry it finds. */
typedef int (*visit_fn)(struct file_index *, void *, uint64_t, uint64_t,
    struct nsd_error *);

/* The steps of install(), for its crash points and for what failed. */
struct install {
	const char	*what;		/* "the new stage" ... */
	const char	*built;		/* crash point after the sync */
	const char	*renamed;	/* crash point after the rename */
	int		 done;		/* the rename happened */
};

/* index_file.c */
extern const struct nsd_index_ops nsd_file_index_ops;
int	 nsd_file_commit_error(struct file_index *, const char *,
	    struct nsd_error *);
int	 nsd_file_damaged(struct nsd_error *, const char *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
int	 nsd_file_grown(const struct file_index *, uint64_t);
struct table *nsd_file_table_for(struct file_index *, unsigned, uint64_t);
int	 nsd_file_write_header(struct file_index *, struct nsd_index_header *,
	    struct nsd_error *);
int	 nsd_file_write_undone(struct file_index *, struct nsd_index_header *,
	    struct nsd_error *);
int	 nsd_file_overlay_put(struct file_index *, uint64_t, uint64_t,
	    struct nsd_error *);
const unsigned char *nsd_file_group_record(struct file_index *, uint64_t,
	    uint64_t *, struct nsd_error *);
void	 nsd_table_view(struct table *, const char *, unsigned char *, size_t,
	    size_t, uint64_t);
void	 nsd_table_close(struct table *);
int	 nsd_table_bad_slot(const struct file_index *, const struct table *,
	    uint64_t, struct nsd_error *);
int	 nsd_table_put(const struct file_index *, struct table *, uint64_t,
	    uint64_t, int, struct nsd_error *);
int	 nsd_table_insert(const struct file_index *, struct table *, uint64_t,
	    uint64_t, struct nsd_error *);
int	 nsd_table_holds(struct file_index *, const struct table *, uint64_t,
	    uint64_t, struct nsd_error *);

/* index_fold.c */
int	 nsd_file_sync_map(struct file_index *, void *, size_t, int,
	    const char *, struct nsd_error *);
int	 nsd_file_sync_dir(const char *);
int	 nsd_file_create_mapped(const char *, uint64_t, mode_t, int, int *,
	    unsigned char **, const char **);
int	 nsd_file_log_flush(struct file_index *, struct nsd_error *);
int	 nsd_file_log_read(struct file_index *, uint64_t, size_t,
	    unsigned char *);
int	 nsd_file_log_record(const struct file_index *, const unsigned char *,
	    uint64_t, uint64_t *, uint64_t *, struct nsd_error *);
int	 nsd_file_log_insert(struct file_index *, struct table *, uint64_t,
	    uint64_t, int, struct nsd_error *);
int	 nsd_file_log_restart(struct file_index *, struct nsd_error *);
int	 nsd_file_stage_open(struct file_index *, struct nsd_stage_header *,
	    struct nsd_error *);
int	 nsd_file_fold(struct file_index *, int, struct nsd_error *);
int	 nsd_file_rebuild(struct file_index *, unsigned, struct nsd_error *);
int	 nsd_table_sync(struct file_index *, struct table *, const char *,
	    struct nsd_error *);
int	 nsd_table_new(struct file_index *, const char *, const char *, size_t,
	    uint64_t, struct table *, struct nsd_error *);
int	 nsd_table_replace(struct file_index *, struct install *,
	    struct table *, const char *, struct nsd_index_header *,
	    struct nsd_error *);

/* Put the entry key, meta of a table file into the run's filter. */
static inline void
filter_add(const struct file_index *fi, uint64_t key, uint64_t meta)
{
	if (fi->filter != NULL)
		nsd_filter_add(fi->filter, nsd_index_position(&fi->hdr,
		    nsd_slot_table(meta), key));
}

/* index_filter_file.c */
int	 nsd_file_filter_load(struct file_index *, struct nsd_error *);
int	 nsd_file_filter_build(struct file_index *, struct nsd_error *);
int	 nsd_file_filter_sync(struct file_index *, struct nsd_error *);
/* index_open.c */
int	 nsd_file_recover(struct file_index *, struct nsd_error *);
int	 nsd_file_undone(struct file_index *, struct nsd_error *);

/* index_undo.c */
int	 nsd_file_undo_save(struct file_index *,
	    const struct nsd_index_header *, const struct nsd_index_header *,
	    struct nsd_error *);
int	 nsd_file_undo_replaced(struct file_index *, struct nsd_error *);

/* index_window.c */
int	 nsd_file_window_open(struct file_index *, uint64_t,
	    struct nsd_error *);
uint64_t nsd_file_window_live(const struct file_index *);
int	 nsd_file_window_commit(struct file_index *,
	    struct nsd_index_header *, struct nsd_error *);
void	 nsd_file_window_punch(struct file_index *);
void	 nsd_file_window_clear(const struct file_index *);

/* index_sweep.c */
int	 nsd_file_sweep_owed(struct file_index *, int, struct nsd_error *);
int	 nsd_table_stretch_each(struct file_index *, struct table *, uint64_t,
	    uint64_t, visit_fn, void *, struct nsd_error *);

#endif /* NSD_INDEX_FILE_H */
