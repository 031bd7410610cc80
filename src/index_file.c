/*
 * index_file.c: the persistent index, hash tables in mapped files.
 *
 * The files' layout is in index_format.h. This is how they are used.
 *
 * Lookups. A table is open addressing with linear probing over buckets of
 * four slots, one cache line each: an entry lives in its home bucket or a
 * later one, and every bucket in between is full, so a search reads whole
 * buckets from the home one to the first that has an empty slot. At 75%
 * load that is under two cache lines for a key that is not there, where
 * probing slot by slot walks eight slots over two or three. Nothing is
 * ever deleted from a table in use, which keeps the rule true.
 *
 * Where entries are. A committed entry is in the table (PATH), in the
 * stage (PATH.stage), a second table like it but smaller, or in the log
 * (PATH.log), the runs' new entries in the order they came, which a run
 * reads into memory (the overlay) when it opens the index. A lookup reads
 * the table, the stage, then the overlay. A run adds its new entries to the
 * log only: a store into a page of a mapped table costs a fault, and makes
 * the kernel write the page back, which on a large table is a page for
 * nearly every new entry (on ext4 with large folios, a whole folio).
 *
 * Folding. When the log holds its limit (nsd_index_log_limit(): half the
 * table's slots, at least 4096 and at most NSD_LOG_MAX_ENTRIES, 2^20, which
 * bounds what a run keeps in memory), it is folded into a new stage: the
 * old stage's entries that the sweep has not yet moved into the table,
 * then the log's committed entries, then the run's own, go into a table
 * sized for them, written to PATH.stage.new, synced and renamed over
 * PATH.stage, and the log starts empty. A writer folds before its run
 * when the log is half full, and a run folds again whenever its log fills.
 *
 * Sweeping. A cursor goes round the hash space (the positions of
 * nsd_index_position(), in the same order in every table). As a run adds
 * entries, the sweep moves the stage's entries homed in the stretch ahead
 * of the cursor into the table, in place, each into the first empty slot
 * of its chain, and the cursor passes the stretch, in proportion: it goes
 * once round while a sweep period of entries comes in
 * (nsd_index_sweep_period(), an eighth of the table's slots). The table is
 * thus written a stretch at a time, each page about once for every 32
 * entries moved into it, and never whole by one run. The header keeps how
 * far the sweep went since the last fold; a fold leaves out the stage's
 * entries homed in that stretch, since they are in the table.
 *
 * The cost of an entry a run adds, in bytes written: 16 in the log; its
 * share of each fold, the stage's size over the log's limit (about
 * 360 bytes on an index of 10^8 entries, whose stage reaches 380 MB); and
 * its share of the sweep, the table's size over the sweep period (128). A
 * run that adds more than half a sweep period, or twice the log's limit
 * (a bulk load, more than a day's news), stores its further entries into
 * the table directly instead ("in place"), which costs about one write of
 * the table at its commit; it grows the table by rebuilding it whole.
 *
 * Growth. When the table, the stage and the log hold more than 5/8 of the
 * table's slots (so that the table would be 3/4 full a sweep period later),
 * the index starts to grow: the sweep copies the table's entries homed in
 * each stretch into PATH.next, a table of twice the slots, along with the
 * stage's, which go there instead of into the table. A lookup reads
 * PATH.next for a position the growth sweep has passed, and the table for
 * the others. The growth sweep copies entries with their generations, so
 * that once it has gone round, PATH.next holds every committed entry and
 * takes the table's place at once, in the middle of the run if need be.
 *
 * Transactions. Every slot and log record carries the generation of the
 * run that wrote it. A run takes generation G = committed + 1 and, before
 * it adds its first fingerprint, records "pending G" in a header copy and
 * syncs it. To commit, it writes out and syncs the log, PATH.ids and what
 * it wrote of the table (or of PATH.next), then writes the other header
 * copy saying "committed G", with the log's new length and the sweep's new
 * positions, and syncs that. The header write is the commit.
 *
 * A slot counts only if its generation is committed or is the run's own;
 * anything else is the leftover of a run that did not commit, and reads
 * as empty. The entries a sweep moves into the table (or a growth sweep
 * copies into PATH.next) carry the run's generation, so that a run that
 * does not commit leaves them as leftovers, while the stage (or the table)
 * still holds the committed entries they came from; and since the sweep's
 * positions in the header move only at the commit, the next fold keeps
 * them in the stage. Such leftovers never hide a committed entry:
 * committed entries come before a run's on every chain, since a run only
 * fills empty slots, and the one run that puts committed entries into a
 * table that holds its own (a growth, copying the table into PATH.next
 * after the stage's entries moved there) puts each in the place of the
 * first of its own it meets, which moves on (table_put()). The next
 * writer that finds "pending" in the header clears them (a pass over the
 * table and PATH.next, only after a failure) and rebuilds the stage
 * without any it holds, before it starts, so that generation numbers are
 * never reused over leftovers. PATH.ids and
 * PATH.log are append-only and only their committed lengths count, so a
 * failed run's records are simply written over.
 *
 * A fold, and the rebuild of a bulk load, move committed entries and keep
 * their generations, so the state they leave is the committed one, with
 * the run's own entries as leftovers should it not commit: the renames are
 * safe at any time. A fold's rename comes before the header that names
 * the new stage (the stage's own header says what the index header must
 * then say): a writer that finds a stage one build newer than its header
 * names finishes the fold. Likewise PATH.next: a writer that finds a
 * growth sweep gone round with PATH.next not yet in place renames it over
 * PATH before its run.
 *
 * Locking. A writer holds an exclusive flock on PATH.lock for the whole
 * run; --no-update runs hold a shared one, keep the run's own claims in
 * the overlay beside the log's, and write nothing.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index.h"
#include "index_format.h"
#include "warm.h"

#ifdef NSD_CRASH_POINTS
#include <signal.h>

/*
 * A test build stops dead, as kill -9 would, at the point named by
 * $NSDEDUP_CRASH_AT ("name", or "name:N" for its N-th passage); or sends
 * the process the signal numbered $NSDEDUP_CRASH_SIGNAL there instead, as
 * kill(1) would: to whichever of its threads does not block it.
 */
static void
crash_point(const char *name)
{
	static unsigned long	 passed;
	const char		*at = getenv("NSDEDUP_CRASH_AT"), *colon;
	size_t			 len;

	if (at == NULL)
		return;
	colon = strchr(at, ':');
	len = colon != NULL ? (size_t)(colon - at) : strlen(at);
	if (strlen(name) != len || strncmp(at, name, len) != 0)
		return;
	if (colon == NULL || ++passed == strtoul(colon + 1, NULL, 10))
		kill(getpid(), getenv("NSDEDUP_CRASH_SIGNAL") != NULL ?
		    atoi(getenv("NSDEDUP_CRASH_SIGNAL")) : SIGKILL);
}
#define CRASH_POINT(name)	crash_point(name)
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

/* Groups of a --no-update run's own, above every file group. */
#define SCRATCH_BASE	(NSD_INDEX_GROUP_MAX + 1)

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
	int			 lock_fd;
	int			 ids_fd;
	int			 log_fd;
	int			 readonly;
	int			 legacy;	/* of a version before checks:
						   read, never written */
	int			 simhash;	/* add, not claim */
	int			 in_place;	/* into the table, not the log:
						   a bulk load */
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
};

static const struct nsd_index_ops file_ops;

/* The message of every failure that leaves a run uncommitted. */
static int
commit_error(struct file_index *fi, const char *what, struct nsd_error *err)
{
	return (nsd_error_set(err, NSD_EXIT_COMMIT,
	    "%s: %s: %s; nothing of this run was committed", fi->path, what,
	    strerror(errno)));
}

static unsigned
log2_of(uint64_t n)
{
	unsigned	 k = 0;

	while ((1ULL << k) < n)
		k++;
	return (k);
}

/* The message of a run that finds the index damaged: it stops there. */
static int
damaged(struct nsd_error *err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
damaged(struct nsd_error *err, const char *path, const char *fmt, ...)
{
	char	 what[NSD_ERROR_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return (nsd_error_set(err, NSD_EXIT_INDEX, "%s: damaged: %s "
	    NSD_DAMAGE_HINT, path, what));
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

/* The refusal of a slot that slot_read() found bad. */
static int
bad_slot(const struct file_index *fi, const struct table *tb, uint64_t i,
    struct nsd_error *err)
{
	uint64_t	 key, meta;

	if (nsd_slot_get(&tb->slots[i], tb->legacy, &key, &meta) ==
	    NSD_SLOT_DAMAGED)
		return (damaged(err, fi->path, "slot %llu of %s fails its "
		    "check", (unsigned long long)i, tb->what));
	return (damaged(err, fi->path, "slot %llu of %s has generation %llu, "
	    "after the last commit (%llu)", (unsigned long long)i, tb->what,
	    (unsigned long long)nsd_slot_gen(meta),
	    (unsigned long long)fi->hdr.committed_gen));
}

static uint64_t
nslots_of(const struct table *tb)
{
	return (tb->mask + 1);
}

/*
 * Set up tb's view of the slots of a mapped table of nslots slots, what
 * it is called in messages.
 */
static void
table_view(struct table *tb, const char *what, unsigned char *map,
    size_t map_len, size_t offset, uint64_t nslots)
{
	tb->what = what;
	tb->map = map;
	tb->map_len = map_len;
	tb->offset = offset;
	tb->slots = (struct nsd_index_slot *)(map + offset);
	tb->mask = nslots - 1;
	tb->shift = 64 - log2_of(nslots);
}

static void
table_close(struct table *tb)
{
	nsd_warm_stop(tb->warm);
	if (tb->map != NULL)
		munmap(tb->map, tb->map_len);
	if (tb->fd != -1)
		close(tb->fd);
	memset(tb, 0, sizeof *tb);
	tb->fd = -1;
}

/* The first slot of the bucket where tb's search for position pos starts. */
static uint64_t
home_bucket(const struct table *tb, uint64_t pos)
{
	return ((pos >> tb->shift) & ~(uint64_t)(NSD_INDEX_BUCKET - 1));
}

static int
damaged_table(const struct file_index *fi, const struct table *tb,
    struct nsd_error *err)
{
	return (damaged(err, fi->path, "%s has no empty slot", tb->what));
}

/*
 * The slot of tb's entry of table with key (its slot word in *meta), or
 * (not found) of the first empty slot of the first bucket that has one,
 * where it would go; *found says which. -1 when a slot on the way is
 * damaged, or tb has no empty slot, which only a damaged table lacks.
 */
static int64_t
find(const struct file_index *fi, const struct table *tb, unsigned table,
    uint64_t key, int *found, uint64_t *meta, struct nsd_error *err)
{
	uint64_t	 b, i, n, k, m;
	int64_t		 empty;

	b = home_bucket(tb, nsd_index_position(&fi->hdr, table, key));
	for (n = 0; n <= tb->mask; n += NSD_INDEX_BUCKET) {
		empty = -1;
		for (i = b; i < b + NSD_INDEX_BUCKET; i++) {
			switch (slot_read(fi, tb, i, &k, &m)) {
			case SLOT_FREE:
				if (empty == -1)
					empty = i;
				break;
			case SLOT_BAD:
				return (bad_slot(fi, tb, i, err));
			case SLOT_ENTRY:
				if (nsd_slot_table(m) == table && k == key) {
					*found = 1;
					*meta = m;
					return (i);
				}
				break;
			}
		}
		if (empty != -1) {
			*found = 0;
			return (empty);
		}
		b = (b + NSD_INDEX_BUCKET) & tb->mask;
	}
	return (damaged_table(fi, tb, err));
}

/*
 * Put an entry into the first empty slot of its chain in tb, where find()
 * would look; with once, not when the chain holds it already, for the same
 * group (a sweep that comes round again, or the stage's copy of an entry
 * of the table). 0, or -1 when a slot on the way is damaged or tb has no
 * empty slot.
 */
static int
table_put(const struct file_index *fi, struct table *tb, uint64_t key,
    uint64_t meta, int once, struct nsd_error *err)
{
	uint64_t	 i, n, k, m;
	enum slot_use	 use;

	i = home_bucket(tb, nsd_index_position(&fi->hdr, nsd_slot_table(meta),
	    key));
	for (n = 0; (use = slot_room(fi, tb, i)) != SLOT_FREE;
	    i = (i + 1) & tb->mask) {
		if (use == SLOT_BAD)
			return (bad_slot(fi, tb, i, err));
		/* A slot that may hold it already is read, checked. */
		if (once && le64toh(tb->slots[i].key) == key) {
			if (slot_read(fi, tb, i, &k, &m) == SLOT_BAD)
				return (bad_slot(fi, tb, i, err));
			if (nsd_slot_table(m) == nsd_slot_table(meta) &&
			    nsd_slot_group(m) == nsd_slot_group(meta))
				return (0);
		}
		/*
		 * A committed entry goes before the run's on every chain, so
		 * that clearing the run's leaves it reachable: one that meets
		 * an entry of the run (a growth copies the table's committed
		 * entries into PATH.next after the stage's moved there) takes
		 * its slot, and the run's entry goes on along the same chain,
		 * past slots that are all taken.
		 */
		if (fi->gen != 0 && nsd_slot_gen(meta) != fi->gen &&
		    nsd_slot_gen(le64toh(tb->slots[i].meta)) == fi->gen) {
			if (slot_read(fi, tb, i, &k, &m) == SLOT_BAD)
				return (bad_slot(fi, tb, i, err));
			nsd_slot_put(&tb->slots[i], key, meta);
			key = k;
			meta = m;
			once = 0;
		}
		if (++n > tb->mask)
			return (damaged_table(fi, tb, err));
	}
	nsd_slot_put(&tb->slots[i], key, meta);
	tb->entries++;
	return (0);
}

static int
table_insert(const struct file_index *fi, struct table *tb, uint64_t key,
    uint64_t meta, struct nsd_error *err)
{
	return (table_put(fi, tb, key, meta, 0, err));
}

/*
 * Whether the growth sweep has passed position pos: then PATH.next, not
 * the table, holds the entries homed there.
 */
static int
grown(const struct file_index *fi, uint64_t pos)
{
	if (fi->next.fd == -1)
		return (0);
	if (fi->grow_done == NSD_SWEPT_ALL)
		return (1);
	return (pos - fi->grow_from < fi->grow_done);
}

/* The table that holds, or gets, an entry of table with key. */
static struct table *
table_for(struct file_index *fi, unsigned table, uint64_t key)
{
	return (grown(fi, nsd_index_position(&fi->hdr, table, key)) ?
	    &fi->next : &fi->main);
}

/*
 * Whether tb holds an entry like key, meta (the same key, table and group)
 * where a lookup finds it; -1 with err set when it does not, or when a
 * slot on the way is damaged.
 */
static int
holds(struct file_index *fi, const struct table *tb, uint64_t key,
    uint64_t meta, struct nsd_error *err)
{
	unsigned	 t = nsd_slot_table(meta);
	uint64_t	 b, i, n, k, m;
	int		 room = 0;

	b = home_bucket(tb, nsd_index_position(&fi->hdr, t, key));
	for (n = 0; n <= tb->mask && !room; n += NSD_INDEX_BUCKET) {
		for (i = b; i < b + NSD_INDEX_BUCKET; i++)
			switch (slot_read(fi, tb, i, &k, &m)) {
			case SLOT_FREE:
				room = 1;
				break;
			case SLOT_BAD:
				return (bad_slot(fi, tb, i, err));
			case SLOT_ENTRY:
				if (k == key && nsd_slot_table(m) == t &&
				    nsd_slot_group(m) == nsd_slot_group(meta))
					return (0);
				break;
			}
		b = (b + NSD_INDEX_BUCKET) & tb->mask;
	}
	return (damaged(err, fi->path, "%s does not hold the entry of "
	    "%016llx in table %u that it should", tb->what,
	    (unsigned long long)key, t));
}

/*
 * Write one header copy, the one that is not current, and sync it; point
 * names the crash point between the two.
 */
static int
write_header_at(struct file_index *fi, struct nsd_index_header *h,
    const char *point, struct nsd_error *err)
{
	unsigned char	 old[NSD_INDEX_COPY_SIZE], copy[NSD_INDEX_COPY_SIZE];
	int		 other = !fi->copy;
	off_t		 at = (off_t)other * NSD_INDEX_COPY_SIZE;

	h->sequence = fi->hdr.sequence + 1;
	nsd_index_header_encode(h, copy);
	if (pread(fi->main.fd, old, sizeof old, at) != (ssize_t)sizeof old)
		return (commit_error(fi, "reading a header copy", err));
	/* From here on, the copy on disk may be the new one: see restore. */
	if (pwrite(fi->main.fd, copy, sizeof copy, at) !=
	    (ssize_t)sizeof copy) {
		commit_error(fi, "writing a header copy", err);
		goto restore;
	}
	CRASH_POINT(point);
	if (fdatasync(fi->main.fd) == -1) {
		commit_error(fi, "syncing a header copy", err);
		goto restore;
	}
	fi->hdr = *h;
	fi->copy = other;
	return (0);
restore:
	/*
	 * The copy may be in the page cache though the sync failed: put the
	 * old one back, so that what is read later is the state before.
	 */
	if (pwrite(fi->main.fd, old, sizeof old, at) == (ssize_t)sizeof old)
		(void)fdatasync(fi->main.fd);
	return (-1);
}

static int
write_header(struct file_index *fi, struct nsd_index_header *h,
    struct nsd_error *err)
{
	return (write_header_at(fi, h, "header-written", err));
}

/* Before the run's first write: take a generation and say it is pending. */
static int
begin(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_index_header	 h;

	if (fi->gen != 0)
		return (0);
	if (fi->hdr.committed_gen >= NSD_INDEX_GEN_MAX)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index has had its %llu runs and takes no more; "
		    "start a new one", fi->path,
		    (unsigned long long)NSD_INDEX_GEN_MAX));
	h = fi->hdr;
	h.pending_gen = h.committed_gen + 1;
	if (write_header(fi, &h, err) == -1)
		return (-1);
	fi->gen = h.pending_gen;
	CRASH_POINT("begin");
	return (0);
}

/* Make the mapped bytes of fd durable. */
static int
sync_map(struct file_index *fi, void *map, size_t len, int fd,
    const char *what, struct nsd_error *err)
{
	char	 msg[64];

	snprintf(msg, sizeof msg, "msync of %s", what);
	if (msync(map, len, MS_SYNC) == -1)
		return (commit_error(fi, msg, err));
	snprintf(msg, sizeof msg, "fdatasync of %s", what);
	if (fdatasync(fd) == -1)
		return (commit_error(fi, msg, err));
	return (0);
}

/* Open path's directory and fsync it, so that a rename in it lasts. */
static int
sync_dir(const char *path)
{
	char	*dir = xstrdup(path), *slash = strrchr(dir, '/');
	int	 fd, rc;

	if (slash == dir)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	else
		strcpy(dir, ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd == -1)
		return (-1);
	rc = fsync(fd);
	close(fd);
	return (rc);
}

/*
 * Make a new file of size bytes at path with the given mode (exactly, or
 * less the umask). On failure, errno and *what say why.
 */
static int
create_reserved(const char *path, uint64_t size, mode_t mode, int exact,
    int *fdp, const char **what)
{
	int	 fd, e;

	(void)unlink(path);
	*what = "cannot create";
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, mode)) == -1)
		return (-1);
	if (exact)
		(void)fchmod(fd, mode);
	/*
	 * Blocks are reserved now, so that a full disk is an error here and
	 * never a SIGBUS when a page of the mapping is first written.
	 */
	*what = "cannot make room for the table";
	if ((e = posix_fallocate(fd, 0, size)) != 0) {
		close(fd);
		(void)unlink(path);
		errno = e;
		return (-1);
	}
	*fdp = fd;
	return (0);
}

/* Map a file made by create_reserved(); on failure, remove it. */
static int
map_new(const char *path, uint64_t size, int fd, unsigned char **mapp,
    const char **what)
{
	int	 e;

	*what = "cannot map the new table";
	*mapp = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*mapp != MAP_FAILED)
		return (0);
	e = errno;
	close(fd);
	(void)unlink(path);
	errno = e;
	return (-1);
}

static int
create_mapped(const char *path, uint64_t size, mode_t mode, int exact,
    int *fdp, unsigned char **mapp, const char **what)
{
	if (create_reserved(path, size, mode, exact, fdp, what) == -1)
		return (-1);
	return (map_new(path, size, *fdp, mapp, what));
}

/* pwrite(2) or pread(2) all of len bytes; a short transfer is EIO. */
static int
transfer_all(int fd, void *buf, size_t len, off_t at, int writing)
{
	size_t	 done = 0;
	ssize_t	 n;

	while (done < len) {
		n = writing ? pwrite(fd, (char *)buf + done, len - done,
		    at + (off_t)done) : pread(fd, (char *)buf + done,
		    len - done, at + (off_t)done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return (-1);
		}
		done += n;
	}
	return (0);
}

/* Write the log records gathered in log_buf to PATH.log. */
static int
log_flush(struct file_index *fi, struct nsd_error *err)
{
	if (transfer_all(fi->log_fd, fi->log_buf, (fi->log_records -
	    fi->log_written) * NSD_LOG_RECORD_SIZE, NSD_LOG_HEADER_SIZE +
	    (off_t)fi->log_written * NSD_LOG_RECORD_SIZE, 1) == -1)
		return (commit_error(fi, "writing the log", err));
	fi->log_written = fi->log_records;
	return (0);
}

/* Read n records of PATH.log from the first into buf. */
static int
log_read(struct file_index *fi, uint64_t first, size_t n, unsigned char *buf)
{
	return (transfer_all(fi->log_fd, buf, n * NSD_LOG_RECORD_SIZE,
	    NSD_LOG_HEADER_SIZE + (off_t)first * NSD_LOG_RECORD_SIZE, 0));
}

/* Sync the mapped table tb, when this run wrote into it in place. */
static int
table_sync(struct file_index *fi, struct table *tb, const char *what,
    struct nsd_error *err)
{
	if (!tb->written)
		return (0);
	if (sync_map(fi, tb->map, tb->map_len, tb->fd, what, err) == -1)
		return (-1);
	tb->written = 0;
	return (0);
}

/* Add a stretch's length to a count of positions, which saturates. */
static uint64_t
positions_add(uint64_t done, uint64_t len)
{
	return (len >= NSD_SWEPT_ALL - done ? NSD_SWEPT_ALL : done + len);
}

/*
 * Read record i of the log, at rec, checked as a run reads every committed
 * record: 0, or -1 with err set when it is damaged or is not a committed
 * entry of table 0 of a group of the index.
 */
static int
log_record(const struct file_index *fi, const unsigned char *rec, uint64_t i,
    uint64_t *key, uint64_t *meta, struct nsd_error *err)
{
	uint64_t	 gen, off;

	if (nsd_slot_get(rec, fi->legacy, key, meta) == NSD_SLOT_DAMAGED)
		return (damaged(err, fi->log_path, "record %llu fails its "
		    "check", (unsigned long long)i));
	gen = nsd_slot_gen(*meta);
	off = nsd_slot_group(*meta) * 8;
	if (nsd_slot_table(*meta) != 0 || gen == 0 ||
	    (gen > fi->hdr.committed_gen && gen != fi->gen) ||
	    off < NSD_IDS_HEADER_SIZE ||
	    off + NSD_IDS_RECORD_HEAD > fi->ids_len)
		return (damaged(err, fi->log_path, "record %llu is not a "
		    "committed fingerprint", (unsigned long long)i));
	return (0);
}

/*
 * Insert the log's records [first, first + n) into tb, as entries of every
 * table, with the generations they carry (with once, only where tb does
 * not hold them already: see table_put()).
 */
static int
log_insert(struct file_index *fi, struct table *tb, uint64_t first,
    uint64_t n, int once, struct nsd_error *err)
{
	uint64_t	 i, key, meta;
	size_t		 chunk, k;
	unsigned	 t;

	if (log_flush(fi, err) == -1)
		return (-1);
	for (i = 0; i < n; i += chunk) {
		chunk = n - i < LOG_BUFFER ? n - i : LOG_BUFFER;
		if (log_read(fi, first + i, chunk, fi->log_buf) == -1)
			return (commit_error(fi, "reading the log", err));
		for (k = 0; k < chunk; k++) {
			if (log_record(fi, fi->log_buf + k *
			    NSD_LOG_RECORD_SIZE, first + i + k, &key, &meta,
			    err) == -1)
				return (-1);
			for (t = 0; t < fi->hdr.ntables; t++)
				if (table_put(fi, tb, key, meta |
				    (uint64_t)t << NSD_INDEX_TABLE_SHIFT, once,
				    err) == -1)
					return (-1);
		}
	}
	return (0);
}

/* What stretch_each() calls for each entry it finds. */
typedef int (*visit_fn)(struct file_index *, void *, uint64_t, uint64_t,
    struct nsd_error *);

/*
 * Call visit for every valid entry of tb homed at a position in the
 * stretch [from, from + len), which may wrap round (len NSD_SWEPT_ALL: all
 * of them). Entries homed there lie from the stretch's first home bucket
 * on: an entry past its last home bucket had every bucket from there to
 * its own full when it came, and they still are, so the walk goes on
 * while buckets are full.
 */
static int
stretch_each(struct file_index *fi, struct table *tb, uint64_t from,
    uint64_t len, visit_fn visit, void *ctx, struct nsd_error *err)
{
	uint64_t	 b, k, nb, nbuckets = nslots_of(tb) / NSD_INDEX_BUCKET;
	uint64_t	 key, meta, pos;
	unsigned	 j, full;

	if (len == 0)
		return (0);
	if (len == NSD_SWEPT_ALL) {
		b = 0;
		nb = nbuckets;
	} else {
		b = home_bucket(tb, from);
		nb = ((home_bucket(tb, from + (len - 1)) - b) & tb->mask) /
		    NSD_INDEX_BUCKET + 1;
	}
	for (k = 0; k < nbuckets; k++) {
		for (j = 0, full = 1; j < NSD_INDEX_BUCKET; j++) {
			switch (slot_read(fi, tb, b + j, &key, &meta)) {
			case SLOT_FREE:
				full = 0;
				continue;
			case SLOT_BAD:
				return (bad_slot(fi, tb, b + j, err));
			case SLOT_ENTRY:
				break;
			}
			pos = nsd_index_position(&fi->hdr, nsd_slot_table(meta),
			    key);
			if ((len == NSD_SWEPT_ALL || pos - from < len) &&
			    visit(fi, ctx, key, meta, err) == -1)
				return (-1);
		}
		b = (b + NSD_INDEX_BUCKET) & tb->mask;
		if (k + 1 >= nb && !full)
			break;
	}
	return (0);
}

/*
 * Where the sweep puts what it moves: PATH.next while the index grows,
 * the table otherwise.
 */
static struct table *
sweep_target(struct file_index *fi)
{
	return (fi->next.fd != -1 ? &fi->next : &fi->main);
}

/*
 * Copy one entry of the table into PATH.next, with its generation: PATH.next
 * then holds the committed entries the growth sweep passed, as committed,
 * and a run that does not commit leaves copies past where the committed
 * growth sweep went, which the next writer clears (recover()).
 */
static int
grow_copy(struct file_index *fi, void *ctx, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	(void)ctx;
	if (table_insert(fi, &fi->next, key, meta, err) == -1)
		return (-1);
	if (nsd_slot_gen(meta) != fi->gen)
		fi->next_committed++;
	return (0);
}

/*
 * Move one entry of the stage into the sweep's target, as this run's,
 * unless it is there already (a run that folded after sweeping sweeps
 * some of the stage again).
 */
static int
sweep_move(struct file_index *fi, void *ctx, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	struct table	*tb = sweep_target(fi);

	(void)ctx;
	tb->written = 1;
	return (table_put(fi, tb, key, nsd_slot_meta(fi->gen,
	    nsd_slot_table(meta), nsd_slot_group(meta)), 1, err));
}

/*
 * Make the table file path, of nslots slots from offset on, mapped into
 * *tb (called what in messages), for a growth, a fold, a rebuild or an
 * upgrade. Others who share the index must still open it: it gets the
 * owner and group of the table where allowed (which clears set-id bits,
 * so the mode again).
 */
static int
new_table(struct file_index *fi, const char *path, const char *what,
    size_t offset, uint64_t nslots, struct table *tb, struct nsd_error *err)
{
	struct stat	 sb;
	const char	*why;
	unsigned char	*map;
	uint64_t	 size = offset + nslots * NSD_INDEX_SLOT_SIZE;
	int		 fd;

	if (nslots > (1ULL << 40)) {
		errno = EFBIG;
		return (commit_error(fi, "making a table", err));
	}
	if (fstat(fi->main.fd, &sb) == -1)
		return (commit_error(fi, "fstat", err));
	if (create_mapped(path, size, sb.st_mode & 07777, 1, &fd, &map,
	    &why) == -1)
		return (commit_error(fi, why, err));
	if (fchown(fd, sb.st_uid, sb.st_gid) == 0)
		(void)fchmod(fd, sb.st_mode & 07777);
	memset(tb, 0, sizeof *tb);
	tb->fd = fd;
	table_view(tb, what, map, size, offset, nslots);
	return (0);
}

/*
 * Start to grow: make PATH.next, twice the table's slots, empty. The growth
 * sweep starts at the cursor.
 */
static int
grow_start(struct file_index *fi, struct nsd_error *err)
{
	if (new_table(fi, fi->next_path, "the growing table",
	    NSD_INDEX_TABLE_OFFSET, 2 * nslots_of(&fi->main), &fi->next,
	    err) == -1)
		return (-1);
	fi->next.written = 1;
	fi->next_committed = 0;
	fi->grow_done = 0;
	fi->grow_from = fi->cursor;
	fi->epoch++;
	CRASH_POINT("grow-started");
	return (0);
}

/* The steps of install(), for its crash points and for what failed. */
struct install {
	const char	*what;		/* "the new stage" ... */
	const char	*built;		/* crash point after the sync */
	const char	*renamed;	/* crash point after the rename */
	int		 done;		/* the rename happened */
};

/*
 * Put a new file in place: sync its mapping, rename it from path new over
 * path old, and sync the directory so that the rename lasts. On failure,
 * in->done says whether the rename happened.
 */
static int
install(struct file_index *fi, struct install *in, unsigned char *map,
    size_t size, int fd, const char *new, const char *old,
    struct nsd_error *err)
{
	char	 msg[96];

	in->done = 0;
	if (sync_map(fi, map, size, fd, in->what, err) == -1)
		return (-1);
	CRASH_POINT(in->built);
	if (rename(new, old) == -1) {
		snprintf(msg, sizeof msg, "renaming %s into place", in->what);
		return (commit_error(fi, msg, err));
	}
	in->done = 1;
	CRASH_POINT(in->renamed);
	if (sync_dir(old) == -1)
		return (commit_error(fi, "syncing the index's directory", err));
	return (0);
}

/*
 * Put the table nt, made whole at path from, in the table's place under
 * header h, written into both of its copies (so that it says what h says
 * whichever copy is read): install() it, then use it. On failure,
 * in->done says whether the rename happened; nt is closed when it did,
 * and left to the caller, who removes it, when it did not.
 */
static int
replace_table(struct file_index *fi, struct install *in, struct table *nt,
    const char *from, struct nsd_index_header *h, struct nsd_error *err)
{
	unsigned char	 copy[NSD_INDEX_TABLE_OFFSET];

	h->sequence = fi->hdr.sequence + 1;
	nsd_index_header_encode(h, copy);
	memcpy(copy + NSD_INDEX_COPY_SIZE, copy, NSD_INDEX_COPY_SIZE);
	memcpy(nt->map, copy, sizeof copy);
	if (install(fi, in, nt->map, nt->map_len, nt->fd, from, fi->path,
	    err) == -1) {
		if (in->done)
			table_close(nt);
		return (-1);
	}
	table_close(&fi->main);
	fi->main = *nt;
	fi->main.what = "the table";
	fi->main.written = 0;
	fi->hdr = *h;
	fi->copy = 0;
	fi->epoch++;
	return (0);
}

/*
 * Whether PATH.next holds the entry key, meta of the table, which it is
 * about to replace: a growth that a header says went round, where it did
 * not (damage its checksum cannot tell), stops the run instead of losing
 * what it had not copied. The table is walked in the order of the hash
 * space, and so is PATH.next.
 */
static int
grown_holds(struct file_index *fi, void *ctx, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	(void)ctx;
	return (holds(fi, &fi->next, key, meta, err));
}

/*
 * A growth sweep that went round: PATH.next, which holds every committed
 * entry of the table with its generation (and the run's own entries with
 * its), takes the table's place under a header that says what the current
 * one says of the committed state. Safe at any time, like a rebuild: a run
 * that does not commit leaves only its own entries there, as leftovers.
 */
static int
grow_finish(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_index_header	 h = fi->hdr;
	struct install		 in = { "the grown table", "grown-built",
	    "grown-renamed", 0 };

	if (stretch_each(fi, &fi->main, 0, NSD_SWEPT_ALL, grown_holds, NULL,
	    err) == -1)
		return (-1);
	h.nslots = nslots_of(&fi->next);
	h.entries = fi->next_committed;
	h.next_shift = 0;
	h.grow_done = 0;
	h.next_entries = 0;
	if (replace_table(fi, &in, &fi->next, fi->next_path, &h, err) == -1)
		return (-1);
	memset(&fi->next, 0, sizeof fi->next);
	fi->next.fd = -1;
	fi->grow_done = 0;
	return (0);
}

/*
 * The entries of the table, the stage and the log, against the table's
 * slots: past 5/8, the table would be 3/4 full a sweep period on.
 */
static int
should_grow(const struct file_index *fi)
{
	uint64_t	 entries = fi->main.entries + fi->stage.entries +
	    fi->log_records * fi->hdr.ntables;

	return (fi->next.fd == -1 && !fi->in_place &&
	    entries * 8 > nslots_of(&fi->main) * 5);
}

/*
 * Sweep the stretch of len positions ahead of the cursor: the stage's
 * entries homed there go into the table (or PATH.next), and while the
 * index grows, the table's are copied into PATH.next.
 */
static int
sweep(struct file_index *fi, uint64_t len, struct nsd_error *err)
{
	uint64_t	 from = fi->cursor, copy, move, done;

	if (len == 0)
		return (0);
	if (should_grow(fi) && grow_start(fi, err) == -1)
		return (-1);
	if (fi->next.fd != -1 && fi->grow_done != NSD_SWEPT_ALL) {
		/* What the growth sweep has not yet passed of this stretch. */
		copy = NSD_SWEPT_ALL - fi->grow_done;
		if (len < copy)
			copy = len;
		if (stretch_each(fi, &fi->main, from, copy, grow_copy, NULL,
		    err) == -1)
			return (-1);
		fi->next.written = 1;
		fi->grow_done = positions_add(fi->grow_done, copy);
	}
	/*
	 * The stage's entries homed where the sweep has been since the last
	 * fold are in the table already: a sweep that comes round again
	 * moves no more of them.
	 */
	done = positions_add(fi->hdr.sweep_done, fi->swept);
	move = NSD_SWEPT_ALL - done;
	if (len < move)
		move = len;
	if (fi->stage.fd != -1 && stretch_each(fi, &fi->stage, from, move,
	    sweep_move, NULL, err) == -1)
		return (-1);
	CRASH_POINT("sweep");
	if (len != NSD_SWEPT_ALL)
		fi->cursor += len;
	fi->swept = positions_add(fi->swept, len);
	fi->epoch++;
	/* Gone round: the table is the grown one from here on. */
	if (fi->next.fd != -1 && fi->grow_done == NSD_SWEPT_ALL)
		return (grow_finish(fi, err));
	return (0);
}

/*
 * The sweep owes a stretch for every entry the run added: one sweep
 * period of entries takes it once round. It moves in steps of a
 * SWEEP_STEPS-th of the period, and at the commit (all) for the rest.
 */
static int
sweep_owed(struct file_index *fi, int all, struct nsd_error *err)
{
	uint64_t	 period = nsd_index_sweep_period(nslots_of(&fi->main));
	uint64_t	 len;

	if (fi->debt == 0 || (!all && fi->debt < period / SWEEP_STEPS))
		return (0);
	if (fi->debt >= period)
		len = NSD_SWEPT_ALL;
	else
		len = fi->debt * (NSD_SWEPT_ALL / period);
	fi->debt = 0;
	return (sweep(fi, len, err));
}

/* A fold under way: the stage being made, and what goes into it. */
struct fold {
	struct table	 stage;
	uint64_t	 from;		/* the stretch swept and committed */
	uint64_t	 len;
	int		 own;		/* the pass: 0 committed, 1 the run's */
	uint64_t	 max_gen;
};

/*
 * Whether the entry key, meta of the stage, which the committed sweep has
 * passed, is in the table (or PATH.next) where a lookup reads it: a fold
 * leaves such entries out, and one that is not there would be lost. So a
 * header that says the sweep went further than it did, which its checksum
 * cannot tell, stops the run instead. The stage is walked in the order of
 * the hash space, and so are these lookups.
 */
static int
fold_swept(struct file_index *fi, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	return (holds(fi, table_for(fi, nsd_slot_table(meta), key), key, meta,
	    err));
}

/*
 * Keep an entry of the old stage in the new one: one of the pass's kind
 * that the committed sweep has not moved into the table.
 */
static int
fold_keep(struct file_index *fi, void *ctx, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	struct fold	*f = ctx;
	uint64_t	 pos, gen = nsd_slot_gen(meta);

	if ((gen == fi->gen) != f->own)
		return (0);
	pos = nsd_index_position(&fi->hdr, nsd_slot_table(meta), key);
	if (f->len == NSD_SWEPT_ALL || pos - f->from < f->len)
		return (f->own ? 0 : fold_swept(fi, key, meta, err));
	if (table_insert(fi, &f->stage, key, meta, err) == -1)
		return (-1);
	if (gen > f->max_gen)
		f->max_gen = gen;
	return (0);
}

/* Count an entry of the old stage that the new one keeps. */
static int
fold_count(struct file_index *fi, void *ctx, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	struct fold	*f = ctx;
	uint64_t	 pos;

	(void)err;
	pos = nsd_index_position(&fi->hdr, nsd_slot_table(meta), key);
	if (f->len != NSD_SWEPT_ALL && pos - f->from >= f->len)
		f->stage.entries++;
	return (0);
}

/* Open and map PATH.stage, checking that it is this index's. */
static int
stage_open(struct file_index *fi, struct nsd_stage_header *sh,
    struct nsd_error *err)
{
	unsigned char	 page[NSD_STAGE_OFFSET];
	struct stat	 sb;
	unsigned char	*map;
	int		 fd;

	fd = open(fi->stage_path, (fi->readonly ? O_RDONLY : O_RDWR) |
	    (fi->readonly ? NSD_OPEN_FLAGS : NSD_WRITE_FLAGS));
	if (fd == -1)
		return (nsd_index_open_error(err, fi->stage_path,
		    "cannot open the index's stage"));
	if (nsd_index_fstat(fd, fi->stage_path, &sb, err) == -1 ||
	    transfer_all(fd, page, sizeof page, 0, 0) == -1 ||
	    nsd_stage_header_decode(page, fi->hdr.file_id, fi->hdr.version,
	    sh) == -1 ||
	    (uint64_t)sb.st_size != NSD_STAGE_OFFSET +
	    sh->nslots * NSD_INDEX_SLOT_SIZE) {
		close(fd);
		if (err->status != 0)
			return (-1);
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: not the stage of %s, or damaged " NSD_DAMAGE_HINT,
		    fi->stage_path,
		    fi->path));
	}
	map = mmap(NULL, sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->stage_path,
		    "cannot map"));
	}
	table_close(&fi->stage);
	fi->stage.fd = fd;
	table_view(&fi->stage, "the stage", map, sb.st_size, NSD_STAGE_OFFSET,
	    sh->nslots);
	fi->stage.legacy = fi->legacy;
	fi->stage.entries = sh->entries;
	fi->stage_max_gen = sh->max_gen;
	return (0);
}

/* Start the log again empty, with an overlay to match, once it is moved. */
static int
log_restart(struct file_index *fi, struct nsd_error *err)
{
	fi->log_records = fi->log_written = 0;
	fi->log_sum = 0;
	nsd_index_close(fi->overlay);
	fi->overlay = NULL;
	return (nsd_index_open_memory(&fi->overlay, &fi->base.params, err));
}

/*
 * Fold: make a new stage of the old one's entries that the committed sweep
 * has not moved into the table (but those left by runs that did not
 * commit), and, with log, the log's records; committed entries before
 * the run's. It is written to PATH.stage.new, synced and renamed over
 * PATH.stage, and the header then names it; with log, the log starts
 * empty.
 */
static int
fold(struct file_index *fi, int log, struct nsd_error *err)
{
	struct nsd_stage_header	 sh;
	struct nsd_index_header	 h;
	struct install		 in = { "the new stage", "fold-built",
	    "fold-renamed", 0 };
	struct fold		 f;
	unsigned char		 page[NSD_STAGE_OFFSET];
	uint64_t		 count, nslots;

	memset(&f, 0, sizeof f);
	f.from = fi->hdr.sweep_cursor - fi->hdr.sweep_done;
	f.len = fi->hdr.sweep_done;
	if (fi->stage.fd != -1 && stretch_each(fi, &fi->stage, 0,
	    NSD_SWEPT_ALL, fold_count, &f, err) == -1)
		return (-1);
	count = f.stage.entries + (log ? fi->log_records *
	    fi->hdr.ntables : 0);
	for (nslots = NSD_INDEX_MIN_SLOTS; nslots / 4 * 3 < count;)
		nslots *= 2;
	if (new_table(fi, fi->stage_new_path, "the new stage",
	    NSD_STAGE_OFFSET, nslots, &f.stage, err) == -1)
		return (-1);
	for (f.own = 0; f.own <= 1; f.own++) {
		if (fi->stage.fd != -1 && stretch_each(fi, &fi->stage, 0,
		    NSD_SWEPT_ALL, fold_keep, &f, err) == -1)
			goto fail;
		if (log && (f.own ? log_insert(fi, &f.stage,
		    fi->hdr.log_records, fi->log_records - fi->hdr.log_records,
		    0, err) : log_insert(fi, &f.stage, 0, fi->hdr.log_records,
		    0, err)) == -1)
			goto fail;
	}
	if (log && fi->log_records > fi->hdr.log_records)
		f.max_gen = fi->gen;
	if (log && fi->hdr.log_records > 0 && f.max_gen < fi->hdr.committed_gen)
		f.max_gen = fi->hdr.committed_gen;
	memset(&sh, 0, sizeof sh);
	sh.file_id = fi->hdr.file_id;
	sh.seq = fi->hdr.stage_seq + 1;
	sh.nslots = nslots;
	sh.entries = f.stage.entries;
	sh.fold_cursor = fi->hdr.sweep_cursor;
	sh.max_gen = f.max_gen;
	sh.reserved[0] = log;		/* it takes the log in */
	nsd_stage_header_encode(&sh, page);
	memcpy(f.stage.map, page, sizeof page);
	if (install(fi, &in, f.stage.map, f.stage.map_len, f.stage.fd,
	    fi->stage_new_path, fi->stage_path, err) == -1) {
		if (in.done)
			goto fail_renamed;
		goto fail;
	}
	h = fi->hdr;
	h.stage_seq = sh.seq;
	h.sweep_done = 0;
	if (log)
		h.log_records = h.log_sum = 0;
	if (write_header(fi, &h, err) == -1)
		goto fail_renamed;
	table_close(&fi->stage);
	fi->stage = f.stage;
	fi->stage.what = "the stage";
	fi->stage.written = 0;
	fi->stage_max_gen = f.max_gen;
	/*
	 * What this run swept before the fold is in the new stage still
	 * (the fold dropped only what committed sweeps moved), with the log's
	 * entries that no sweep has seen: the sweep counts afresh.
	 */
	fi->swept = 0;
	fi->epoch++;
	return (log ? log_restart(fi, err) : 0);
fail_renamed:
	/* The stage in place is the new one, and the run fails. */
	table_close(&f.stage);
	return (-1);
fail:
	table_close(&f.stage);
	(void)unlink(fi->stage_new_path);
	return (-1);
}

/*
 * Rebuild the table 2^steps times larger, for a bulk load that filled it:
 * every entry of the table and the log is inserted again, committed ones
 * first, into PATH.new, which is synced and renamed over PATH; the log then
 * starts empty. The new header says what the current one does, with the
 * committed log records counted as the table's. (The stage stays.)
 */
static int
rebuild(struct file_index *fi, unsigned steps, struct nsd_error *err)
{
	struct nsd_index_header	 h = fi->hdr;
	struct install		 in = { "the rebuilt table", "rebuild-built",
	    "rebuild-renamed", 0 };
	struct table		 nt;
	uint64_t		 i, key, meta, committed;
	int			 own;

	assert(fi->next.fd == -1);
	if (log_flush(fi, err) == -1)
		return (-1);
	h.nslots = nslots_of(&fi->main) << steps;
	if (new_table(fi, fi->new_path, "the rebuilt table",
	    NSD_INDEX_TABLE_OFFSET, h.nslots, &nt, err) == -1)
		return (-1);
	for (own = 0; own <= 1; own++) {
		for (i = 0; i <= fi->main.mask; i++) {
			switch (slot_read(fi, &fi->main, i, &key, &meta)) {
			case SLOT_FREE:
				continue;
			case SLOT_BAD:
				bad_slot(fi, &fi->main, i, err);
				goto fail;
			case SLOT_ENTRY:
				break;
			}
			if ((nsd_slot_gen(meta) == fi->gen) == own &&
			    table_insert(fi, &nt, key, meta, err) == -1)
				goto fail;
		}
		if ((own ? log_insert(fi, &nt, fi->hdr.log_records,
		    fi->log_records - fi->hdr.log_records, 0, err) :
		    log_insert(fi, &nt, 0, fi->hdr.log_records, 0, err)) == -1)
			goto fail;
		if (!own)
			committed = nt.entries;
	}
	/*
	 * The committed state, and the run pending; the log is written over
	 * from here on, so the rename must last.
	 */
	h.entries = committed;
	h.log_records = h.log_sum = 0;
	if (replace_table(fi, &in, &nt, fi->new_path, &h, err) == -1) {
		if (!in.done)
			goto fail;
		return (-1);
	}
	return (log_restart(fi, err));
fail:
	table_close(&nt);
	(void)unlink(fi->new_path);
	return (-1);
}

/*
 * Whether the overlay holds nothing: a writer's holds the log's records
 * and nothing else, so a run whose log is empty (a new index, or one just
 * folded) skips it on every lookup.
 */
static int
overlay_empty(const struct file_index *fi)
{
	return (!fi->readonly && fi->log_records == 0);
}

/* Put key, for group, into the overlay, as the index's op would. */
static int
overlay_put(struct file_index *fi, uint64_t key, uint64_t group,
    struct nsd_error *err)
{
	if (fi->simhash)
		return (nsd_index_add(fi->overlay, key, group, err));
	return (nsd_index_claim(fi->overlay, key, group, err));
}

/*
 * Store key, for group, into every table's chain: a bulk load. The claim
 * that stores it has just looked it up (a memo, see struct memo): where
 * that lookup found room in table 0 is where table_insert() would put it,
 * and the chain is not walked again.
 */
static int
table_add(struct file_index *fi, uint64_t key, uint64_t group,
    struct nsd_error *err)
{
	const struct memo	*m = &fi->memo[key % MEMO_SIZE];
	uint64_t		 k, meta;
	unsigned		 t = 0;

	if (m->epoch == fi->epoch && m->key == key && !m->found &&
	    table_for(fi, 0, key) == &fi->main &&
	    slot_read(fi, &fi->main, m->slot, &k, &meta) == SLOT_FREE) {
		nsd_slot_put(&fi->main.slots[m->slot], key,
		    nsd_slot_meta(fi->gen, 0, group));
		fi->main.entries++;
		t = 1;
	}
	for (; t < fi->hdr.ntables; t++)
		if (table_insert(fi, &fi->main, key, nsd_slot_meta(fi->gen, t,
		    group), err) == -1)
			return (-1);
	fi->main.written = 1;
	return (0);
}

/*
 * Whether the run, whose log has just filled, is a bulk load (it added
 * half a sweep period, or twice what the log holds) that had better go on
 * in place; never while the index grows.
 */
static int
bulk_load(const struct file_index *fi)
{
	uint64_t	 period = nsd_index_sweep_period(nslots_of(&fi->main));
	uint64_t	 limit;

	limit = 2 * nsd_index_log_limit(nslots_of(&fi->main), 1);

	if (period / 2 < limit)
		limit = period / 2;
	return (fi->next.fd == -1 && fi->added >= limit);
}

/*
 * A writer's new fingerprint: into the overlay and the log, where a fold
 * takes the log into the stage whenever it fills; or, in a bulk load, into
 * the table, which is rebuilt twice as large when more than 3/4 full. Then
 * the sweep moves on by what it owes.
 */
static int
log_add(struct file_index *fi, uint64_t key, uint64_t group,
    struct nsd_error *err)
{
	unsigned char	*rec;
	uint64_t	 nslots;

	if (begin(fi, err) == -1)
		return (-1);
	fi->added += fi->hdr.ntables;
	fi->debt += fi->hdr.ntables;
	if (fi->in_place) {
		if (table_add(fi, key, group, err) == -1)
			return (-1);
		CRASH_POINT("insert");
		nslots = nslots_of(&fi->main);
		if (fi->main.entries * 100 > nslots * fi->hdr.max_load &&
		    rebuild(fi, 1, err) == -1)
			return (-1);
		return (sweep_owed(fi, 0, err));
	}
	if (overlay_put(fi, key, group, err) == -1)
		return (-1);
	if (fi->log_records - fi->log_written == LOG_BUFFER &&
	    log_flush(fi, err) == -1)
		return (-1);
	rec = fi->log_buf + (fi->log_records - fi->log_written) *
	    NSD_LOG_RECORD_SIZE;
	nsd_slot_put(rec, key, nsd_slot_meta(fi->gen, 0, group));
	fi->log_sum += nsd_log_record_sum(rec, fi->log_records);
	fi->log_records++;
	CRASH_POINT("insert");
	if (fi->log_records >= nsd_index_log_limit(nslots_of(&fi->main),
	    fi->hdr.ntables)) {
		if (bulk_load(fi)) {
			fi->in_place = 1;
			if (rebuild(fi, fi->main.entries +
			    fi->log_records * fi->hdr.ntables > nslots_of(
			    &fi->main) / 100 * fi->hdr.max_load, err) == -1)
				return (-1);
		} else if (fold(fi, 1, err) == -1)
			return (-1);
	}
	return (sweep_owed(fi, 0, err));
}

static void
file_prefetch(struct nsd_index *ix, uint64_t fp)
{
	struct file_index	*fi = (struct file_index *)ix;
	const struct table	*tb;
	uint64_t		 home, pos;
	unsigned		 t;

	/* The home bucket, and the next one, often read too near full load. */
	for (t = 0; t < fi->hdr.ntables; t++) {
		pos = nsd_index_position(&fi->hdr, t, fp);
		tb = grown(fi, pos) ? &fi->next : &fi->main;
		home = home_bucket(tb, pos);
		__builtin_prefetch(&tb->slots[home]);
		__builtin_prefetch(&tb->slots[(home + NSD_INDEX_BUCKET) &
		    tb->mask]);
		if (fi->stage.fd != -1)
			__builtin_prefetch(&fi->stage.slots[home_bucket(
			    &fi->stage, pos)]);
	}
}

/* The group that holds fp in the stage, or 0. */
static int
stage_lookup(struct file_index *fi, uint64_t fp, uint64_t *group,
    struct nsd_error *err)
{
	uint64_t meta;
	int	 found;

	*group = 0;
	if (fi->stage.fd == -1)
		return (0);
	if (find(fi, &fi->stage, 0, fp, &found, &meta, err) == -1)
		return (-1);
	if (found)
		*group = nsd_slot_group(meta);
	return (0);
}

static int
file_lookup(struct nsd_index *ix, uint64_t fp, uint64_t *group,
    struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	struct memo		*m = &fi->memo[fp % MEMO_SIZE];
	struct table		*tb = table_for(fi, 0, fp);
	uint64_t		 meta;
	int64_t			 i;
	int			 found;

	if ((i = find(fi, tb, 0, fp, &found, &meta, err)) == -1)
		return (-1);
	m->key = fp;
	m->slot = i;
	m->found = found;
	m->epoch = fi->epoch;
	if (found) {
		*group = nsd_slot_group(meta);
		return (0);
	}
	if (stage_lookup(fi, fp, group, err) == -1 || *group != 0)
		return (*group != 0 ? 0 : -1);
	if (overlay_empty(fi))
		return (0);
	return (nsd_index_lookup(fi->overlay, fp, group, err));
}

static int
file_claim(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	const struct memo	*m = &fi->memo[fp % MEMO_SIZE];
	struct table		*tb = table_for(fi, 0, fp);
	uint64_t		 claimed, key, meta;
	int			 found;

	if (m->epoch == fi->epoch && m->key == fp && (m->found ||
	    slot_read(fi, tb, m->slot, &key, &meta) == SLOT_FREE))
		found = m->found;
	else if (find(fi, tb, 0, fp, &found, &meta, err) == -1)
		return (-1);
	if (found)
		return (0);		/* first claim wins */
	if (stage_lookup(fi, fp, &claimed, err) == -1)
		return (-1);
	if (claimed != 0)
		return (0);
	if (fi->readonly)
		return (nsd_index_claim(fi->overlay, fp, group, err));
	if (!overlay_empty(fi)) {
		if (nsd_index_lookup(fi->overlay, fp, &claimed, err) == -1)
			return (-1);
		if (claimed != 0)
			return (0);
	}
	return (log_add(fi, fp, group, err));
}

/*
 * SimHash: the candidates of table t for fp in tb, from its home bucket to
 * the first bucket with room; an entry of that table that agrees with fp
 * under its mask is a candidate, and one within distance k a match.
 */
static int
near_in(struct file_index *fi, const struct table *tb, unsigned t,
    uint64_t fp, unsigned k, struct nsd_index_near *near,
    struct nsd_error *err)
{
	uint64_t	 b, i, n, key, meta, g;
	unsigned	 d;
	int		 full;

	b = home_bucket(tb, nsd_index_position(&fi->hdr, t, fp));
	for (n = 0, full = 1; full; n += NSD_INDEX_BUCKET) {
		if (n > tb->mask)
			return (damaged_table(fi, tb, err));
		for (i = b; i < b + NSD_INDEX_BUCKET; i++) {
			switch (slot_read(fi, tb, i, &key, &meta)) {
			case SLOT_FREE:
				full = 0;
				continue;
			case SLOT_BAD:
				return (bad_slot(fi, tb, i, err));
			case SLOT_ENTRY:
				break;
			}
			if (nsd_slot_table(meta) != t ||
			    ((key ^ fp) & fi->hdr.mask[t]) != 0)
				continue;
			near->candidates++;
			d = (unsigned)__builtin_popcountll(key ^ fp);
			g = nsd_slot_group(meta);
			if (d <= k && (near->group == 0 || g < near->group ||
			    (g == near->group && d < near->distance))) {
				near->group = g;
				near->distance = d;
			}
		}
		b = (b + NSD_INDEX_BUCKET) & tb->mask;
	}
	return (0);
}

/*
 * SimHash: every table's chain for fp, in the table (or PATH.next) and the
 * stage, then the overlay.
 */
static int
file_near(struct nsd_index *ix, uint64_t fp, unsigned k,
    struct nsd_index_near *near, struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	struct nsd_index_near	 mine;
	unsigned		 t;

	memset(near, 0, sizeof *near);
	for (t = 0; t < fi->hdr.ntables; t++) {
		if (near_in(fi, table_for(fi, t, fp), t, fp, k, near,
		    err) == -1)
			return (-1);
		if (fi->stage.fd != -1 && near_in(fi, &fi->stage, t, fp, k,
		    near, err) == -1)
			return (-1);
	}
	if (overlay_empty(fi))
		return (0);
	/* The overlay's entries: newer than any in the tables. */
	if (nsd_index_near(fi->overlay, fp, k, &mine, err) == -1)
		return (-1);
	near->candidates += mine.candidates;
	/* Its entries may name groups of the file too: the oldest wins. */
	if (mine.group != 0 && (near->group == 0 || mine.group < near->group ||
	    (mine.group == near->group && mine.distance < near->distance))) {
		near->group = mine.group;
		near->distance = mine.distance;
	}
	return (0);
}

/* SimHash: enter fp for group into every block table. */
static int
file_add(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;

	if (fi->readonly)
		return (nsd_index_add(fi->overlay, fp, group, err));
	return (log_add(fi, fp, group, err));
}
/* Make room for need more bytes in PATH.ids, reserving blocks as grow(). */
static int
ids_reserve(struct file_index *fi, uint64_t need, struct nsd_error *err)
{
	size_t	 cap = fi->ids_cap;
	void	*p;
	int	 e;

	if (fi->ids_len + need <= cap)
		return (0);
	while (cap < fi->ids_len + need)
		cap = cap < (64 << 10) ? (64 << 10) :
		    cap < (64 << 20) ? cap * 2 : cap + (64 << 20);
	if ((e = posix_fallocate(fi->ids_fd, 0, cap)) != 0) {
		errno = e;
		return (commit_error(fi, "making room in the id file", err));
	}
	p = mremap(fi->ids, fi->ids_cap, cap, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		return (commit_error(fi, "mapping the id file", err));
	fi->ids = p;
	fi->ids_cap = cap;
	return (0);
}

static int
file_group_new(struct nsd_index *ix, const char *id, size_t len,
    const unsigned char *sig, uint64_t *group, struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	uint64_t		 sig_bytes = nsd_ids_sig_bytes(&fi->hdr);
	uint64_t		 size = nsd_ids_record_bytes(len, sig_bytes);
	unsigned char		*rec;

	assert((sig != NULL) == (sig_bytes > 0));
	if (fi->readonly) {
		if (nsd_index_group_new_signed(fi->overlay, id, len, sig,
		    group, err) == -1)
			return (-1);
		*group += SCRATCH_BASE;
		return (0);
	}
	if (len > UINT32_MAX || (fi->ids_len + size) / 8 > NSD_INDEX_GROUP_MAX)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the id file is full (%llu GiB)", fi->path,
		    (unsigned long long)((NSD_INDEX_GROUP_MAX + 1) >> 27)));
	if (begin(fi, err) == -1 || ids_reserve(fi, size, err) == -1)
		return (-1);
	rec = fi->ids + fi->ids_len;
	memset(rec, 0, size);
	nsd_put_le32(rec, fi->hdr.groups + ++fi->groups);
	nsd_put_le32(rec + 8, len);
	memcpy(rec + NSD_IDS_RECORD_HEAD, id, len);
	if (sig_bytes > 0)
		memcpy(rec + nsd_ids_record_size(len), sig, sig_bytes);
	*group = fi->last_group = fi->ids_len / 8;
	nsd_put_le32(rec + 4, nsd_ids_record_sum(rec, *group, sig_bytes));
	fi->ids_len += size;
	return (0);
}

/*
 * The group record of group, checked (its checksum from version 5 on);
 * NULL with err set if damaged. *size is its size in bytes.
 */
static const unsigned char *
group_record(struct file_index *fi, uint64_t group, uint64_t *size,
    struct nsd_error *err)
{
	const unsigned char	*rec;
	uint64_t		 off = group * 8, number;
	uint64_t		 sig_bytes = nsd_ids_sig_bytes(&fi->hdr);
	uint32_t		 len;

	if (off < NSD_IDS_HEADER_SIZE ||
	    off + NSD_IDS_RECORD_HEAD > fi->ids_len) {
		damaged(err, fi->path, "a slot names group %llu, past the end "
		    "of %s", (unsigned long long)group, fi->ids_path);
		return (NULL);
	}
	rec = fi->ids + off;
	number = nsd_le32(rec);
	len = nsd_le32(rec + 8);
	*size = nsd_ids_record_bytes(len, sig_bytes);
	if (off + *size > fi->ids_len || number == 0 ||
	    number > fi->hdr.groups + fi->groups ||
	    (!fi->legacy && nsd_le32(rec + 4) !=
	    nsd_ids_record_sum(rec, group, sig_bytes)) ||
	    !nsd_ids_record_clean(rec, len)) {
		damaged(err, fi->path, "group %llu of %s is not a good group "
		    "record", (unsigned long long)group, fi->ids_path);
		return (NULL);
	}
	return (rec);
}

/* The signature after the id of group's record, or the overlay's. */
static int
file_group_signature(struct nsd_index *ix, uint64_t group,
    const unsigned char **sig, struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	const unsigned char	*rec;
	uint64_t		 size;

	if (group >= SCRATCH_BASE)
		return (nsd_index_group_signature(fi->overlay,
		    group - SCRATCH_BASE, sig, err));
	if ((rec = group_record(fi, group, &size, err)) == NULL)
		return (-1);
	*sig = rec + nsd_ids_record_size(nsd_le32(rec + 8));
	return (0);
}

static int
file_group_name(struct nsd_index *ix, uint64_t group,
    struct nsd_group_name *name, struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	const unsigned char	*rec;
	uint64_t		 size;

	if (group >= SCRATCH_BASE) {
		if (nsd_index_group_name(fi->overlay, group - SCRATCH_BASE,
		    name, err) == -1)
			return (-1);
		name->number += fi->hdr.groups;
		return (0);
	}
	if ((rec = group_record(fi, group, &size, err)) == NULL)
		return (-1);
	name->number = nsd_le32(rec);
	name->id_len = nsd_le32(rec + 8);
	name->id = name->id_len > 0 ? (const char *)rec + NSD_IDS_RECORD_HEAD :
	    NULL;
	return (0);
}

static int
file_commit(struct nsd_index *ix, uint64_t records, struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	struct nsd_index_header	 h;

	if (fi->readonly || (fi->gen == 0 && records == 0))
		return (0);
	if (fi->gen != 0) {
		/* The sweep's last stretch, for what the run added. */
		if (sweep_owed(fi, 1, err) == -1)
			return (-1);
		if (table_sync(fi, &fi->main, "the table", err) == -1 ||
		    table_sync(fi, &fi->next, "the growing table", err) == -1)
			return (-1);
		CRASH_POINT("table-synced");
		if (log_flush(fi, err) == -1)
			return (-1);
		if (fi->log_records > 0 && fdatasync(fi->log_fd) == -1)
			return (commit_error(fi, "fdatasync of the log", err));
		CRASH_POINT("log-synced");
		if (sync_map(fi, fi->ids, fi->ids_cap, fi->ids_fd,
		    "the id file", err) == -1)
			return (-1);
		CRASH_POINT("ids-synced");
	}
	h = fi->hdr;
	if (fi->gen != 0)
		h.committed_gen = h.pending_gen = fi->gen;
	h.records += records;
	h.groups += fi->groups;
	h.entries = fi->main.entries;
	h.log_records = fi->log_records;
	h.log_sum = fi->log_sum;
	h.ids_length = fi->ids_len;
	h.last_group = fi->last_group;
	h.committed_at = time(NULL);
	h.sweep_cursor = fi->cursor;
	h.sweep_done = positions_add(h.sweep_done, fi->swept);
	if (fi->next.fd != -1) {
		h.next_shift = 64 - fi->next.shift;
		h.grow_done = fi->grow_done;
		h.next_entries = fi->next.entries;
	}
	if (write_header_at(fi, &h, "commit-written", err) == -1)
		return (-1);
	CRASH_POINT("committed");
	fi->gen = 0;
	fi->swept = 0;
	/*
	 * The other copy still holds the state before the run. Bring it up to
	 * date too, so that a copy damaged later loses no commit; should this
	 * fail, the copy just written is still the current one.
	 */
	h = fi->hdr;
	(void)write_header(fi, &h, NULL);
	fi->groups = 0;
	return (0);
}

static void
file_info(struct nsd_index *ix, struct nsd_index_info *info)
{
	struct file_index	*fi = (struct file_index *)ix;

	memset(info, 0, sizeof *info);
	if (fi->overlay != NULL)
		nsd_index_info(fi->overlay, info);
	info->fingerprints += fi->main.entries + fi->stage.entries +
	    fi->next.entries;
	info->groups += fi->hdr.groups + fi->groups;
	info->memory += sizeof *fi;
	info->peak += sizeof *fi;
	info->mapped += fi->main.map_len + fi->stage.map_len +
	    fi->next.map_len + fi->ids_cap;
}

static void
file_close(struct nsd_index *ix)
{
	struct file_index	*fi = (struct file_index *)ix;

	nsd_index_close(fi->overlay);
	table_close(&fi->main);
	table_close(&fi->stage);
	table_close(&fi->next);
	if (fi->ids != NULL)
		munmap(fi->ids, fi->ids_cap);
	if (fi->ids_fd != -1)
		close(fi->ids_fd);
	if (fi->log_fd != -1)
		close(fi->log_fd);
	if (fi->lock_fd != -1)
		close(fi->lock_fd);	/* and with it the lock */
	free(fi->path);
	free(fi->ids_path);
	free(fi->new_path);
	free(fi->log_path);
	free(fi->stage_path);
	free(fi->stage_new_path);
	free(fi->next_path);
	free(fi);
}

static const struct nsd_index_ops file_ops = {
	file_prefetch, file_lookup, file_claim, file_near, file_add,
	file_group_new, file_group_signature, file_group_name,
	file_commit, file_info, file_close, NULL, NULL, NULL, NULL
};

/* Refuse an index made with other fingerprint parameters, naming one. */
static int
check_params(const struct file_index *fi, const struct nsd_index_params *p,
    struct nsd_error *err)
{
	const struct nsd_index_header	*h = &fi->hdr;
	const char			*what = NULL;
	unsigned long long		 was = 0, now = 0;
	char				 was_text[NSD_FRACTION_MAX];
	char				 now_text[NSD_FRACTION_MAX];

	if (strcmp(h->method, p->method) != 0)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with --method %s, not %s",
		    fi->path, h->method, p->method));
	if (h->norm_version > p->norm_version)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with normalization version %u, "
		    "newer than this nsdedup knows (%u); use a newer nsdedup",
		    fi->path, h->norm_version, p->norm_version));
	if (h->sentences != p->sentences)
		what = "--sentences", was = h->sentences, now = p->sentences;
	else if (h->min_length != p->min_length)
		what = "--min-length", was = h->min_length,
		    now = p->min_length;
	else if (h->norm_version < p->norm_oldest)
		what = "normalization version", was = h->norm_version,
		    now = p->norm_version;
	else if (h->seed != p->seed)
		what = "seed", was = h->seed, now = p->seed;
	else if (h->distance != p->distance)
		what = "--distance", was = h->distance, now = p->distance;
	else if (h->ngram != p->ngram)
		what = "--ngram", was = h->ngram, now = p->ngram;
	else if (h->shingle != p->shingle)
		what = "--shingle", was = h->shingle, now = p->shingle;
	else if (h->min_features != p->min_features)
		what = "--min-features", was = h->min_features,
		    now = p->min_features;
	else if (h->threshold != p->threshold)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with --threshold %s, not %s",
		    fi->path, nsd_fraction_format(h->threshold, was_text),
		    nsd_fraction_format(p->threshold, now_text)));
	else if (h->bins != p->bins)
		what = "MinHash bins", was = h->bins, now = p->bins;
	else if (h->bands != p->bands || h->rows != p->rows)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with MinHash bands of %u x %u "
		    "rows, not %u x %u", fi->path, h->bands, h->rows,
		    p->bands, p->rows));
	if (what != NULL)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with %s %llu, not %llu", fi->path,
		    what, was, now));
	if (h->compat != (unsigned)p->compat)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made %s --compat=nshash", fi->path,
		    h->compat ? "with" : "without"));
	/* Parameters choose the tables, whatever a header says. */
	if (h->ntables != p->ntables || memcmp(h->mask, p->masks,
	    p->ntables * sizeof h->mask[0]) != 0)
		return (damaged(err, fi->path, "its header's %u table masks "
		    "are not the %u its parameters choose", h->ntables,
		    p->ntables));
	return (0);
}

/* Write a new, empty index at fi->path (through PATH.new and a rename). */
static int
create_index(struct file_index *fi, const struct nsd_index_params *p,
    struct nsd_error *err)
{
	struct nsd_index_header	 h;
	unsigned char		 copy[NSD_INDEX_COPY_SIZE];
	unsigned char		 ids[NSD_IDS_HEADER_SIZE];
	unsigned char		*map;
	const char		*what;
	uint64_t		 size;
	int			 fd;

	size = nsd_index_file_size(NSD_INDEX_MIN_SLOTS);
	memset(&h, 0, sizeof h);
	if (getentropy(&h.file_id, sizeof h.file_id) == -1)
		h.file_id = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL ^
		    (uint64_t)getpid();
	h.sequence = 1;
	snprintf(h.method, sizeof h.method, "%s", p->method);
	h.sentences = p->sentences;
	h.min_length = p->min_length;
	h.compat = p->compat;
	h.norm_version = p->norm_version;
	h.seed = p->seed;
	h.distance = p->distance;
	h.ngram = p->ngram;
	h.shingle = p->shingle;
	h.min_features = p->min_features;
	h.bins = p->bins;
	h.bands = p->bands;
	h.rows = p->rows;
	h.threshold = p->threshold;
	assert(p->sig_bytes == 2 * (size_t)p->bins);
	assert(p->ntables >= 1 && p->ntables <= NSD_INDEX_MAX_TABLES);
	h.ntables = p->ntables;
	memcpy(h.mask, p->masks, p->ntables * sizeof h.mask[0]);
	h.nslots = NSD_INDEX_MIN_SLOTS;
	h.slot_size = NSD_INDEX_SLOT_SIZE;
	h.max_load = NSD_INDEX_MAX_LOAD;
	h.ids_length = NSD_IDS_HEADER_SIZE;
	h.created = h.committed_at = time(NULL);

	memcpy(ids, NSD_IDS_MAGIC, 8);
	nsd_put_le64(ids + 8, h.file_id);
	/*
	 * There is no index, so an id file here is one a killed creation
	 * left, or something planted: it goes (unlink(2) does not follow a
	 * symbolic link), and O_EXCL makes sure that what is written is a new
	 * file of our own.
	 */
	(void)unlink(fi->ids_path);
	fd = open(fi->ids_path, O_RDWR | O_CREAT | O_EXCL | NSD_WRITE_FLAGS,
	    0666);
	if (fd == -1)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->ids_path,
		    "cannot create"));
	if (pwrite(fd, ids, sizeof ids, 0) != (ssize_t)sizeof ids) {
		commit_error(fi, "writing the new id file", err);
		goto fail_ids;
	}
	if (fdatasync(fd) == -1) {
		commit_error(fi, "syncing the new id file", err);
		goto fail_ids;
	}
	close(fd);

	if (create_mapped(fi->new_path, size, 0666, 0, &fd, &map,
	    &what) == -1) {
		if (errno == EACCES || errno == EROFS)
			nsd_error_errno(err, NSD_EXIT_INDEX, fi->new_path,
			    what);
		else
			commit_error(fi, what, err);
		(void)unlink(fi->ids_path);
		return (-1);
	}
	nsd_index_header_encode(&h, copy);
	memcpy(map, copy, sizeof copy);
	h.sequence = 0;
	nsd_index_header_encode(&h, copy);
	memcpy(map + NSD_INDEX_COPY_SIZE, copy, sizeof copy);
	if (sync_map(fi, map, size, fd, "the new table", err) == -1)
		goto fail_table;
	if (rename(fi->new_path, fi->path) == -1) {
		commit_error(fi, "renaming the new index into place", err);
		goto fail_table;
	}
	munmap(map, size);
	close(fd);
	if (sync_dir(fi->path) == -1) {
		commit_error(fi, "syncing the index's directory", err);
		/* Not known to last: better no index than a doubtful one. */
		(void)unlink(fi->path);
		(void)unlink(fi->ids_path);
		return (-1);
	}
	return (0);
fail_table:
	munmap(map, size);
	close(fd);
	(void)unlink(fi->new_path);
	(void)unlink(fi->ids_path);
	return (-1);
fail_ids:
	close(fd);
	(void)unlink(fi->ids_path);
	return (-1);
}

/*
 * Give every byte of a file a writer maps its blocks: a copy made with
 * holes would otherwise meet a full disk as a SIGBUS, mid-run.
 */
static int
reserve(struct file_index *fi, int fd, off_t size, const char *what,
    struct nsd_error *err)
{
	char	 msg[64];
	int	 e;

	if (size == 0 || (e = posix_fallocate(fd, 0, size)) == 0)
		return (0);
	errno = e;
	snprintf(msg, sizeof msg, "making room for %s", what);
	return (commit_error(fi, msg, err));
}

/*
 * The newest group record, which the header names: its number must be the
 * header's count of groups, and it must end where the committed bytes of
 * PATH.ids do. So a header whose count of groups or of bytes is wrong,
 * which its checksum cannot tell, is refused before a run numbers a group
 * twice or writes over one.
 */
static int
check_last_group(struct file_index *fi, struct nsd_error *err)
{
	const unsigned char	*rec;
	uint64_t		 size;

	if (fi->hdr.groups == 0)
		return (0);
	if ((rec = group_record(fi, fi->hdr.last_group, &size, err)) == NULL)
		return (-1);
	if (nsd_le32(rec) != fi->hdr.groups ||
	    fi->hdr.last_group * 8 + size != fi->hdr.ids_length)
		return (damaged(err, fi->path, "the header says %llu groups "
		    "in %llu bytes of %s, but its newest group record is "
		    "group %u, ending at byte %llu",
		    (unsigned long long)fi->hdr.groups,
		    (unsigned long long)fi->hdr.ids_length, fi->ids_path,
		    (unsigned)nsd_le32(rec),
		    (unsigned long long)(fi->hdr.last_group * 8 + size)));
	return (0);
}

/* Map PATH.ids and check that it belongs to this index. */
static int
open_ids(struct file_index *fi, struct nsd_error *err)
{
	struct stat	 sb;
	void		*p;

	fi->ids_fd = fi->readonly ? open(fi->ids_path, O_RDONLY |
	    NSD_OPEN_FLAGS) : open(fi->ids_path, O_RDWR | NSD_WRITE_FLAGS);
	if (fi->ids_fd == -1)
		return (nsd_index_open_error(err, fi->ids_path,
		    "cannot open the index's id file"));
	if (nsd_index_fstat(fi->ids_fd, fi->ids_path, &sb, err) == -1)
		return (-1);
	if ((uint64_t)sb.st_size < fi->hdr.ids_length)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: truncated (%llu bytes, the index has committed %llu) "
		    NSD_DAMAGE_HINT,
		    fi->ids_path, (unsigned long long)sb.st_size,
		    (unsigned long long)fi->hdr.ids_length));
	p = mmap(NULL, sb.st_size, PROT_READ |
	    (fi->readonly ? 0 : PROT_WRITE), MAP_SHARED, fi->ids_fd, 0);
	if (p == MAP_FAILED)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->ids_path,
		    "cannot map"));
	fi->ids = p;
	fi->ids_cap = sb.st_size;
	if (memcmp(fi->ids, NSD_IDS_MAGIC, 8) != 0 ||
	    nsd_le64(fi->ids + 8) != fi->hdr.file_id)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: not the id file of %s " NSD_DAMAGE_HINT, fi->ids_path,
		    fi->path));
	if (!fi->readonly && reserve(fi, fi->ids_fd, sb.st_size,
	    "the id file", err) == -1)
		return (-1);
	fi->ids_len = fi->hdr.ids_length;
	fi->last_group = fi->hdr.last_group;
	return (fi->legacy ? 0 : check_last_group(fi, err));
}

/*
 * Clear the slots of tb that no committed run wrote, and (for PATH.next)
 * those homed past where the committed growth sweep went. A slot that is
 * damaged, or of a generation no run had, stops it before it clears
 * anything: what a header that lies about the last commit calls leftovers
 * would be committed entries.
 */
static int
clear_leftovers(const struct file_index *fi, struct table *tb, int grown,
    struct nsd_error *err)
{
	uint64_t	 i, key, meta, pos, from = fi->hdr.sweep_cursor -
	    fi->hdr.grow_done;
	enum slot_use	 use;
	int		 pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i <= tb->mask; i++) {
			use = slot_read(fi, tb, i, &key, &meta);
			if (pass == 0) {
				if (use == SLOT_BAD)
					return (bad_slot(fi, tb, i, err));
				continue;
			}
			pos = nsd_index_position(&fi->hdr,
			    nsd_slot_table(meta), key);
			if ((use == SLOT_FREE && (key != 0 || meta != 0)) ||
			    (use == SLOT_ENTRY && grown &&
			    fi->hdr.grow_done != NSD_SWEPT_ALL &&
			    pos - from >= fi->hdr.grow_done))
				memset(&tb->slots[i], 0, sizeof tb->slots[i]);
		}
	return (0);
}

/*
 * After a run that did not commit: clear the slots it left in the table
 * and in PATH.next, make the stage anew without any of its entries, so
 * that its generation number can be taken again, and say the index is
 * clean.
 */
static int
recover(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_index_header	 h;

	if (clear_leftovers(fi, &fi->main, 0, err) == -1 ||
	    sync_map(fi, fi->main.map, fi->main.map_len, fi->main.fd,
	    "the table", err) == -1)
		return (-1);
	if (fi->next.fd != -1) {
		if (clear_leftovers(fi, &fi->next, 1, err) == -1 ||
		    sync_map(fi, fi->next.map, fi->next.map_len, fi->next.fd,
		    "the growing table", err) == -1)
			return (-1);
	}
	if (fi->stage.fd != -1 && fi->stage_max_gen > fi->hdr.committed_gen &&
	    fold(fi, 0, err) == -1)
		return (-1);
	h = fi->hdr;
	h.pending_gen = h.committed_gen;
	return (write_header(fi, &h, err));
}

/* Map a table file open at fd, of size bytes, with nslots slots. */
static int
table_map(struct file_index *fi, struct table *tb, const char *what, int fd,
    const char *path, uint64_t size, uint64_t nslots, struct nsd_error *err)
{
	unsigned char	*map;

	if (!fi->readonly && reserve(fi, fd, size, "a table", err) == -1)
		return (-1);
	map = mmap(NULL, size, PROT_READ | (fi->readonly ? 0 : PROT_WRITE),
	    MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, path,
		    "cannot map"));
	tb->fd = fd;
	table_view(tb, what, map, size, NSD_INDEX_TABLE_OFFSET, nslots);
	tb->legacy = fi->legacy;
	return (0);
}

/* Open the index file itself, creating it when allowed. */
static int
open_table(struct file_index *fi, const struct nsd_index_params *p,
    struct nsd_error *err)
{
	struct stat	 sb;
	int		 fd;

	fd = open(fi->path, (fi->readonly ? O_RDONLY : O_RDWR) |
	    NSD_OPEN_FLAGS);
	if (fd == -1 && errno == ENOENT && !fi->readonly) {
		if (create_index(fi, p, err) == -1)
			return (-1);
		fd = open(fi->path, O_RDWR | NSD_OPEN_FLAGS);
	}
	if (fd == -1) {
		if (errno == ENOENT)
			return (nsd_error_set(err, NSD_EXIT_INDEX,
			    "%s: no such index (--no-update does not make one)",
			    fi->path));
		if (errno == EISDIR)
			return (nsd_error_set(err, NSD_EXIT_INDEX,
			    "%s: is a directory, not an index", fi->path));
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->path,
		    "cannot open"));
	}
	fi->main.fd = fd;
	if (nsd_index_fstat(fd, fi->path, &sb, err) == -1)
		return (-1);
	if (nsd_index_read_header(fd, fi->path, &fi->hdr, &fi->copy, 1,
	    err) == -1)
		return (-1);
	if ((uint64_t)sb.st_size != nsd_index_file_size(fi->hdr.nslots))
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: %s (%llu bytes, the header says %llu) "
		    NSD_DAMAGE_HINT, fi->path,
		    (uint64_t)sb.st_size < nsd_index_file_size(fi->hdr.nslots) ?
		    "truncated" : "has bytes past its table",
		    (unsigned long long)sb.st_size,
		    (unsigned long long)nsd_index_file_size(fi->hdr.nslots)));
	if (check_params(fi, p, err) == -1)
		return (-1);
	/*
	 * An index of a version before checks is read as it is and, by a run
	 * that writes, upgraded first; what version 5 has no room for (a
	 * generation of 21 bits or more, a group past 32 GiB of records)
	 * cannot be either.
	 */
	fi->legacy = fi->hdr.version < NSD_INDEX_CHECKED;
	if (fi->legacy && (fi->hdr.pending_gen > NSD_INDEX_GEN_MAX ||
	    fi->hdr.ids_length / 8 > NSD_INDEX_GROUP_MAX))
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: an index of format version %u with %llu runs and "
		    "%llu bytes of group records, more than version %d holds "
		    "(%llu runs, %llu GiB); keep it with the nsdedup that made "
		    "it", fi->path, fi->hdr.version,
		    (unsigned long long)fi->hdr.pending_gen,
		    (unsigned long long)fi->hdr.ids_length,
		    NSD_INDEX_VERSION, (unsigned long long)NSD_INDEX_GEN_MAX,
		    (unsigned long long)((NSD_INDEX_GROUP_MAX + 1) >> 27)));
	/* An older version is read, and the run fingerprints by it. */
	fi->base.params.norm_version = fi->hdr.norm_version;
	fi->main.fd = -1;
	if (table_map(fi, &fi->main, "the table", fd, fi->path, sb.st_size,
	    fi->hdr.nslots, err) == -1) {
		close(fd);
		return (-1);
	}
	fi->main.entries = fi->hdr.entries;
	return (0);
}

/*
 * Open PATH.stage, the one the header names. A writer that finds the next
 * build there (a fold renamed it, and was stopped before its header)
 * finishes the fold: what the stage's header says fixes what the index
 * header must say. A reader takes it as it is: it holds what the old one
 * held and what the log holds; and so does a writer of an older version,
 * which upgrade() then makes anew.
 */
static int
open_stage(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_stage_header	 sh;
	struct nsd_index_header	 h;
	int			 reader = fi->readonly || fi->legacy;

	if (fi->hdr.stage_seq == 0 && access(fi->stage_path, F_OK) == -1)
		return (0);
	if (stage_open(fi, &sh, err) == -1) {
		if (fi->hdr.stage_seq != 0)
			return (-1);
		/*
		 * With no stage named, one that is not this index's (of an
		 * index made anew at this path, or of the version before an
		 * upgrade) is of no use: a writer removes it.
		 */
		err->status = 0;
		if (!reader)
			(void)unlink(fi->stage_path);
		return (0);
	}
	if (sh.seq == fi->hdr.stage_seq)
		return (0);
	/*
	 * Any other build of this index than the next is damage, not a fold
	 * cut short: one that a header naming no stage ignored would be lost.
	 */
	if (!nsd_stage_is_next(&fi->hdr, &sh))
		return (damaged(err, fi->stage_path, "build %llu of the stage, "
		    "where the index names %llu", (unsigned long long)sh.seq,
		    (unsigned long long)fi->hdr.stage_seq));
	if (reader)
		return (0);
	h = fi->hdr;
	h.stage_seq = sh.seq;
	h.sweep_done = 0;
	if (sh.reserved[0] != 0)	/* the log it took in */
		h.log_records = h.log_sum = 0;
	return (write_header(fi, &h, err));
}

/* Open PATH.next, while the index grows. */
static int
open_next(struct file_index *fi, struct nsd_error *err)
{
	struct stat	 sb;
	uint64_t	 nslots = 1ULL << fi->hdr.next_shift;
	int		 fd;

	fd = open(fi->next_path, (fi->readonly ? O_RDONLY : O_RDWR) |
	    (fi->readonly ? NSD_OPEN_FLAGS : NSD_WRITE_FLAGS));
	if (fd == -1)
		return (nsd_index_open_error(err, fi->next_path,
		    "cannot open the index's growing table"));
	if (nsd_index_fstat(fd, fi->next_path, &sb, err) == -1) {
		close(fd);
		return (-1);
	}
	if ((uint64_t)sb.st_size != nsd_index_file_size(nslots)) {
		close(fd);
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: truncated or too long (%llu bytes, not %llu) "
		    NSD_DAMAGE_HINT,
		    fi->next_path, (unsigned long long)sb.st_size,
		    (unsigned long long)nsd_index_file_size(nslots)));
	}
	if (table_map(fi, &fi->next, "the growing table", fd,
	    fi->next_path, sb.st_size, nslots,
	    err) == -1) {
		close(fd);
		return (-1);
	}
	fi->next.entries = fi->next_committed = fi->hdr.next_entries;
	fi->grow_done = fi->hdr.grow_done;
	fi->grow_from = fi->hdr.sweep_cursor - fi->hdr.grow_done;
	return (0);
}

/*
 * Open PATH.log; a writer makes it when there is none (an index of version
 * 1 has none), with the table's owner and mode, or gives it a header when
 * nothing in it counts yet.
 */
static int
open_log(struct file_index *fi, struct nsd_error *err)
{
	unsigned char	 head[NSD_LOG_HEADER_SIZE];
	struct stat	 sb, table;
	uint64_t	 need = NSD_LOG_HEADER_SIZE +
	    fi->hdr.log_records * NSD_LOG_RECORD_SIZE;

	if (fi->readonly && fi->hdr.log_records == 0)
		return (0);
	/* Made only while nothing in it counts: a lost log is an error. */
	fi->log_fd = fi->readonly ? open(fi->log_path, O_RDONLY |
	    NSD_OPEN_FLAGS) : open(fi->log_path, O_RDWR |
	    (fi->hdr.log_records == 0 ? O_CREAT : 0) | NSD_WRITE_FLAGS, 0666);
	if (fi->log_fd == -1)
		return (nsd_index_open_error(err, fi->log_path,
		    "cannot open the index's log"));
	if (nsd_index_fstat(fi->log_fd, fi->log_path, &sb, err) == -1)
		return (-1);
	if (fi->hdr.log_records > 0 && (uint64_t)sb.st_size < need)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: truncated (%llu bytes, the index has committed %llu) "
		    NSD_DAMAGE_HINT,
		    fi->log_path, (unsigned long long)sb.st_size,
		    (unsigned long long)need));
	if (sb.st_size >= NSD_LOG_HEADER_SIZE &&
	    pread(fi->log_fd, head, sizeof head, 0) != (ssize_t)sizeof head)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->log_path,
		    "cannot read"));
	if (sb.st_size >= NSD_LOG_HEADER_SIZE &&
	    memcmp(head, NSD_LOG_MAGIC, 8) == 0 &&
	    nsd_le64(head + 8) == fi->hdr.file_id)
		return (0);
	if (fi->readonly || fi->hdr.log_records > 0)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: not the log of %s " NSD_DAMAGE_HINT, fi->log_path,
		    fi->path));
	if (sb.st_size == 0 && fstat(fi->main.fd, &table) == 0 &&
	    fchown(fi->log_fd, table.st_uid, table.st_gid) == 0)
		(void)fchmod(fi->log_fd, table.st_mode & 0666);
	memcpy(head, NSD_LOG_MAGIC, 8);
	nsd_put_le64(head + 8, fi->hdr.file_id);
	if (pwrite(fi->log_fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    fdatasync(fi->log_fd) == -1 || sync_dir(fi->log_path) == -1)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->log_path,
		    "cannot write the index's log"));
	return (0);
}

/*
 * Load the log's committed records into the overlay, checking each, and
 * their sum against the header's: a header that counts fewer records than
 * were committed (or more) is refused, as is damage that the records' own
 * checks happen to miss. It comes before anything else a writer does to
 * the index: what the log holds tells a header that lies about the last
 * commit, which recover() would otherwise believe.
 */
static int
load_log(struct file_index *fi, struct nsd_error *err)
{
	const unsigned char	*rec;
	uint64_t		 i, n = fi->hdr.log_records, key, meta, sum = 0;
	size_t			 chunk, k;

	if (fi->overlay == NULL &&
	    nsd_index_open_memory(&fi->overlay, &fi->base.params, err) == -1)
		return (-1);
	for (i = 0; i < n; i += chunk) {
		chunk = n - i < LOG_BUFFER ? n - i : LOG_BUFFER;
		if (log_read(fi, i, chunk, fi->log_buf) == -1)
			return (nsd_error_errno(err, NSD_EXIT_INDEX,
			    fi->log_path, "cannot read"));
		for (k = 0; k < chunk; k++) {
			rec = fi->log_buf + k * NSD_LOG_RECORD_SIZE;
			if (log_record(fi, rec, i + k, &key, &meta, err) == -1)
				return (-1);
			sum += nsd_log_record_sum(rec, i + k);
			if (overlay_put(fi, key, nsd_slot_group(meta),
			    err) == -1)
				return (-1);
		}
	}
	if (!fi->legacy && sum != fi->hdr.log_sum)
		return (damaged(err, fi->log_path, "its %llu committed records "
		    "are not the ones the header sums up",
		    (unsigned long long)n));
	fi->log_records = fi->log_written = n;
	fi->log_sum = sum;
	return (0);
}

/*
 * What a writer does before its run, beyond recovery: fold a log half
 * full, so that the run starts with room for a day's news in it. (A growth
 * that went round is never committed before it takes the table's place;
 * older versions' were, and their upgrade takes them in.)
 */
static int
prepare(struct file_index *fi, struct nsd_error *err)
{
	if (fi->hdr.log_records * 2 >= nsd_index_log_limit(
	    nslots_of(&fi->main), fi->hdr.ntables) && fold(fi, 1, err) == -1)
		return (-1);
	return (0);
}

/*
 * Walk the committed group records of an index of an older version, as
 * --db-verify would (numbered 1, 2, 3, ..., ids clean, whole), and with
 * seal, write each one's checksum over the high half of its 8-byte
 * number, which is 0 there (a version 5 record's bytes 4 to 7); without,
 * put the 0 back. In place: this program reads only the low half of an
 * older version's number, but an older release reads all 8 bytes, so a
 * failed upgrade takes the checksums out again (unseal). *last gets the
 * newest record's group.
 */
static int
upgrade_ids(struct file_index *fi, int seal, uint64_t *last,
    struct nsd_error *err)
{
	uint64_t	 off, n = 0, size;
	uint64_t	 sig_bytes = nsd_ids_sig_bytes(&fi->hdr);
	unsigned char	*rec;
	uint32_t	 len, high;

	*last = 0;
	for (off = NSD_IDS_HEADER_SIZE; off < fi->ids_len; off += size) {
		rec = fi->ids + off;
		if (off + NSD_IDS_RECORD_HEAD > fi->ids_len)
			return (damaged(err, fi->ids_path, "a group record is "
			    "cut off at byte %llu", (unsigned long long)off));
		len = nsd_le32(rec + 8);
		size = nsd_ids_record_bytes(len, sig_bytes);
		high = nsd_le32(rec + 4);
		if (nsd_le32(rec) != ++n || off + size > fi->ids_len ||
		    !nsd_ids_record_clean(rec, len) ||
		    (high != 0 && high != nsd_ids_record_sum(rec, off / 8,
		    sig_bytes)))
			return (damaged(err, fi->ids_path, "the record at byte "
			    "%llu is not group %llu's", (unsigned long long)off,
			    (unsigned long long)n));
		*last = off / 8;
	}
	if (n != fi->hdr.groups)
		return (damaged(err, fi->ids_path, "%llu group records, where "
		    "the header says %llu", (unsigned long long)n,
		    (unsigned long long)fi->hdr.groups));
	for (off = NSD_IDS_HEADER_SIZE; off < fi->ids_len; off += size) {
		rec = fi->ids + off;
		size = nsd_ids_record_bytes(nsd_le32(rec + 8), sig_bytes);
		nsd_put_le32(rec + 4, seal ? nsd_ids_record_sum(rec, off / 8,
		    sig_bytes) : 0);
	}
	return (sync_map(fi, fi->ids, fi->ids_cap, fi->ids_fd, "the id file",
	    err));
}

/* Take the checksums of a failed upgrade out of the group records again. */
static void
upgrade_unseal(struct file_index *fi)
{
	struct nsd_error	 ignored;
	uint64_t		 last;

	(void)upgrade_ids(fi, 0, &last, &ignored);
}

/* Put an entry of a table of an older version into the upgrade's table. */
static int
upgrade_put(struct file_index *fi, void *ctx, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	return (table_put(fi, ctx, key, meta, 1, err));
}

/*
 * Make an index of version 1 to 4 one of version 5, before a run writes to
 * it: the checksums go into its group records (upgrade_ids()), and its
 * committed entries, wherever they are (the table, PATH.next where the
 * committed growth has been, the stage, the log), into a new table of
 * checked slots, each once, with the generation it had. The new table is
 * built at PATH.new and renamed over PATH, like a rebuild, with both header
 * copies saying version 5, with no stage, no log and no growth: so the
 * index is whole before the rename, and whole after it, whatever happens
 * in between. The old stage and PATH.next are then removed (a writer that
 * finds them there removes them too: a version 5 index takes neither).
 */
static int
upgrade(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_index_header	 h = fi->hdr;
	struct install		 in = { "the upgraded table", "upgrade-built",
	    "upgrade-renamed", 0 };
	struct table		 nt;
	uint64_t		 count, from;

	if (upgrade_ids(fi, 1, &h.last_group, err) == -1)
		return (-1);
	CRASH_POINT("upgrade-ids");
	count = fi->main.entries + fi->stage.entries + fi->next.entries +
	    fi->hdr.log_records * fi->hdr.ntables;
	h.nslots = nslots_of(&fi->main);
	if (fi->next.fd != -1)
		h.nslots = nslots_of(&fi->next);
	while (count * 8 > h.nslots * 5)
		h.nslots *= 2;
	if (new_table(fi, fi->new_path, "the upgraded table",
	    NSD_INDEX_TABLE_OFFSET, h.nslots, &nt, err) == -1) {
		upgrade_unseal(fi);
		return (-1);
	}
	/* PATH.next counts where the committed growth has been. */
	from = fi->hdr.sweep_cursor - fi->hdr.grow_done;
	if (stretch_each(fi, &fi->main, 0, NSD_SWEPT_ALL, upgrade_put, &nt,
	    err) == -1 || (fi->next.fd != -1 && stretch_each(fi, &fi->next,
	    from, fi->hdr.grow_done, upgrade_put, &nt, err) == -1) ||
	    (fi->stage.fd != -1 && stretch_each(fi, &fi->stage, 0,
	    NSD_SWEPT_ALL, upgrade_put, &nt, err) == -1))
		goto fail;
	if (log_insert(fi, &nt, 0, fi->hdr.log_records, 1, err) == -1)
		goto fail;
	h.pending_gen = h.committed_gen;
	h.entries = nt.entries;
	h.log_records = h.log_sum = 0;
	h.stage_seq = h.sweep_cursor = h.sweep_done = 0;
	h.next_shift = 0;
	h.grow_done = h.next_entries = 0;
	if (replace_table(fi, &in, &nt, fi->new_path, &h, err) == -1) {
		if (!in.done)
			goto fail;
		return (-1);
	}
	table_close(&fi->stage);
	table_close(&fi->next);
	(void)unlink(fi->stage_path);
	(void)unlink(fi->next_path);
	fi->legacy = 0;
	fi->stage_max_gen = 0;
	fi->grow_done = fi->grow_from = fi->next_committed = 0;
	fi->last_group = h.last_group;
	return (log_restart(fi, err));
fail:
	table_close(&nt);
	(void)unlink(fi->new_path);
	upgrade_unseal(fi);
	return (-1);
}

int
nsd_index_open_file(struct nsd_index **ixp, const struct nsd_index_open *o,
    const struct nsd_index_params *p, struct nsd_error *err)
{
	struct file_index	*fi;

	fi = xcalloc(1, sizeof *fi);
	fi->base.ops = &file_ops;
	fi->base.params = *p;
	fi->path = nsd_index_resolve(o->path);
	fi->ids_path = nsd_index_path(fi->path, ".ids");
	fi->new_path = nsd_index_path(fi->path, ".new");
	fi->log_path = nsd_index_path(fi->path, ".log");
	fi->stage_path = nsd_index_path(fi->path, ".stage");
	fi->stage_new_path = nsd_index_path(fi->path, ".stage.new");
	fi->next_path = nsd_index_path(fi->path, ".next");
	fi->main.fd = fi->stage.fd = fi->next.fd = -1;
	fi->ids_fd = fi->log_fd = fi->lock_fd = -1;
	fi->readonly = o->readonly;
	fi->simhash = strcmp(p->method, "simhash") == 0;
	fi->epoch = 1;
	if (nsd_index_lock(fi->path, o->readonly, o->wait_ms, &fi->lock_fd,
	    err) == -1 || open_table(fi, p, err) == -1 ||
	    open_ids(fi, err) == -1 || open_log(fi, err) == -1)
		goto fail;
	if (!fi->readonly) {
		/* What a rebuild, fold or growth cut short left. */
		(void)unlink(fi->new_path);
		(void)unlink(fi->stage_new_path);
		if (fi->hdr.next_shift == 0)
			(void)unlink(fi->next_path);
		fi->base.scratch = fi->new_path;
	}
	if (open_stage(fi, err) == -1 ||
	    (fi->hdr.next_shift != 0 && open_next(fi, err) == -1) ||
	    load_log(fi, err) == -1)
		goto fail;
	if (!fi->readonly) {
		if (fi->legacy && upgrade(fi, err) == -1)
			goto fail;
		if (fi->hdr.pending_gen > fi->hdr.committed_gen &&
		    recover(fi, err) == -1)
			goto fail;
		/*
		 * A run killed between a rename and the sync of the directory
		 * left a table, a stage or a log that must last before this
		 * run writes over what they replaced.
		 */
		if (sync_dir(fi->path) == -1) {
			nsd_error_errno(err, NSD_EXIT_INDEX, fi->path,
			    "cannot sync the index's directory");
			goto fail;
		}
		if (prepare(fi, err) == -1)
			goto fail;
	}
	/* Lookups go at random over the table and the stage: see warm.c. */
	fi->main.warm = nsd_warm_start(fi->main.map, fi->main.map_len);
	if (fi->stage.fd != -1)
		fi->stage.warm = nsd_warm_start(fi->stage.map,
		    fi->stage.map_len);
	fi->cursor = fi->hdr.sweep_cursor;
	*ixp = &fi->base;
	return (0);
fail:
	file_close(&fi->base);
	return (-1);
}
