/*
 * index_times.h: PATH.times, when each commit of an index file was made,
 * which its window (--ttl) reads to tell which groups it has forgotten;
 * shared by the live index (index_window.c) and its inspection
 * (index_verify.c). The layout is in index_times.c and nsdedup-index(5).
 */
#ifndef NSD_INDEX_TIMES_H
#define NSD_INDEX_TIMES_H

#include <sys/types.h>

#include <stdint.h>

#include "util.h"

#define NSD_TIMES_MAGIC		"NSDTIMES"
#define NSD_TIMES_HEADER_SIZE	32
#define NSD_TIMES_RECORD_SIZE	32

/* The record of one commit. */
struct nsd_times_record {
	int64_t		 at;		/* Unix time of the commit */
	uint64_t	 ids_length;	/* the index's after it */
	uint64_t	 added;		/* entries added by the commits from
					   the file's first on, this one's
					   included */
};

/* PATH.times, open for reading (and for a writer, writing). */
struct nsd_times {
	int		 fd;		/* -1: none that can be believed */
	uint64_t	 file_id;
	uint64_t	 first;		/* the generation of its first record */
	uint64_t	 last;		/* the committed generation: records
					   first to last count */
};

/*
 * Open path, the times of the index file_id committed up to generation
 * last (read-write with write). A file that is missing, another index's,
 * damaged, or short of a committed record cannot be believed: t->fd is
 * then -1, and the window forgets nothing more until a writer starts the
 * file again. Never fails.
 */
void	 nsd_times_open(struct nsd_times *, const char *, uint64_t, uint64_t,
	    int);
void	 nsd_times_close(struct nsd_times *);

/* The record of generation gen (first to last): 0, or -1 when damaged. */
int	 nsd_times_get(const struct nsd_times *, uint64_t,
	    struct nsd_times_record *);

/*
 * The newest commit made at or before cutoff: *gen (0 when none) and its
 * record. 0, or -1 when a record read on the way is damaged.
 */
int	 nsd_times_before(const struct nsd_times *, int64_t, uint64_t *,
	    struct nsd_times_record *);

/*
 * The commit that opened the group whose record starts at offset off of
 * PATH.ids: the first whose ids_length is above off (the file's first,
 * for a group older than the file). 0, or -1 (damage, or none).
 */
int	 nsd_times_opened(const struct nsd_times *, uint64_t, uint64_t *,
	    struct nsd_times_record *);

/* Where a window draws its line at a time, read from PATH.times. */
struct nsd_horizon {
	uint64_t	 ids;		/* groups whose records start below
					   this offset of PATH.ids are
					   forgotten */
	int		 known;		/* a commit made a window ago or
					   earlier is on record */
	uint64_t	 added_last;	/* PATH.times's count of entries added,
					   at the last commit */
	uint64_t	 added_forgotten; /* the same, at the horizon's */
};

/*
 * The horizon of a window of ttl seconds at now, for an index whose header
 * says ids_start: never below it, and past it by the commits made a window
 * or more before now. A damaged record closes t (it can no longer be
 * believed): the window then forgets nothing more.
 */
void	 nsd_times_horizon(struct nsd_times *, uint64_t, int64_t, uint64_t,
	    struct nsd_horizon *);

/* Encode the header of a file whose first record is of generation first. */
void	 nsd_times_header_encode(uint64_t, uint64_t, unsigned char *);

/* Encode the record of generation gen of the index file_id, checksummed. */
void	 nsd_times_record_encode(const struct nsd_times_record *, uint64_t,
	    uint64_t, unsigned char *);

/*
 * The time an index takes for now: $NSDEDUP_NOW (seconds since 1970), by
 * which tests drive the window's clock, or the clock's.
 */
int64_t	 nsd_index_now(void);

#endif /* NSD_INDEX_TIMES_H */
