/*
 * index_file.c: the persistent index, hash tables in mapped files: its
 * tables, lookups and claims, the run's new entries, and the commit.
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
 * The cost of an entry a run adds, in bytes written: 16 in the log; its
 * share of each fold, the stage's size over the log's limit (about
 * 360 bytes on an index of 10^8 entries, whose stage reaches 380 MB); and
 * its share of the sweep, the table's size over the sweep period (128). A
 * run that adds more than half a sweep period, or twice the log's limit
 * (a bulk load, more than a day's news), stores its further entries into
 * the table directly instead ("in place"), which costs about one write of
 * the table at its commit; it grows the table by rebuilding it whole.
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
 * first of its own it meets, which moves on (nsd_table_put()). The next
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
 * Undo. Before the commit's header, the run saves the header it replaces
 * in PATH.undo; making that header current again takes the run back, its
 * entries then being leftovers that recovery clears (index_undo.c).
 *
 * Folding is in index_fold.c, sweeping and growth in index_sweep.c,
 * opening, recovery and upgrades in index_open.c, and undo in
 * index_undo.c; index_file.h holds what they share.
 *
 * Locking. A writer holds an exclusive flock on PATH.lock for the whole
 * run; --no-update runs hold a shared one and write nothing: what they
 * claim and open stays in memory above the index (index_overlay.c).
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

#include "index_file.h"

#ifdef NSD_CRASH_POINTS
#include <signal.h>

/*
 * A test build stops dead, as kill -9 would, at the point named by
 * $NSDEDUP_CRASH_AT ("name", or "name:N" for its N-th passage); or sends
 * the process the signal numbered $NSDEDUP_CRASH_SIGNAL there instead, as
 * kill(1) would: to whichever of its threads does not block it.
 */
void
nsd_file_crash_point(const char *name)
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
#endif

/* The message of every failure that leaves a run uncommitted. */
int
nsd_file_commit_error(struct file_index *fi, const char *what,
    struct nsd_error *err)
{
	return (nsd_error_set(err, NSD_EXIT_COMMIT,
	    "%s: %s: %s" NSD_FILE_NOT_COMMITTED, fi->path, what,
	    strerror(errno)));
}

/* The message of a run that finds the index damaged: it stops there. */
int
nsd_file_damaged(struct nsd_error *err, const char *path, const char *fmt, ...)
{
	char	 what[NSD_ERROR_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return (nsd_error_set(err, NSD_EXIT_INDEX, "%s: damaged: %s "
	    NSD_DAMAGE_HINT, path, what));
}

/* The refusal of a slot that slot_read() found bad. */
int
nsd_table_bad_slot(const struct file_index *fi, const struct table *tb,
    uint64_t i, struct nsd_error *err)
{
	uint64_t	 key, meta;

	if (nsd_slot_get(&tb->slots[i], tb->legacy, &key, &meta) ==
	    NSD_SLOT_DAMAGED)
		return (nsd_file_damaged(err, fi->path, "slot %llu of %s "
		    "fails its check", (unsigned long long)i, tb->what));
	return (nsd_file_damaged(err, fi->path, "slot %llu of %s has "
	    "generation %llu, after the last commit (%llu)",
	    (unsigned long long)i, tb->what,
	    (unsigned long long)nsd_slot_gen(meta),
	    (unsigned long long)fi->hdr.committed_gen));
}

/*
 * Set up tb's view of the slots of a mapped table of nslots slots, what
 * it is called in messages.
 */
void
nsd_table_view(struct table *tb, const char *what, unsigned char *map,
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

void
nsd_table_close(struct table *tb)
{
	nsd_warm_stop(tb->warm);
	if (tb->map != NULL)
		munmap(tb->map, tb->map_len);
	if (tb->fd != -1)
		close(tb->fd);
	memset(tb, 0, sizeof *tb);
	tb->fd = -1;
}

static int
damaged_table(const struct file_index *fi, const struct table *tb,
    struct nsd_error *err)
{
	return (nsd_file_damaged(err, fi->path, "%s has no empty slot",
	    tb->what));
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
				return (nsd_table_bad_slot(fi, tb, i, err));
			case SLOT_ENTRY:
				if (nsd_slot_table(m) == table && k == key &&
				    !forgotten(fi, m)) {
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
int
nsd_table_put(const struct file_index *fi, struct table *tb, uint64_t key,
    uint64_t meta, int once, struct nsd_error *err)
{
	uint64_t	 i, n, k, m;
	enum slot_use	 use;

	i = home_bucket(tb, nsd_index_position(&fi->hdr, nsd_slot_table(meta),
	    key));
	for (n = 0; (use = slot_room(fi, tb, i)) != SLOT_FREE;
	    i = (i + 1) & tb->mask) {
		if (use == SLOT_BAD)
			return (nsd_table_bad_slot(fi, tb, i, err));
		/* A slot that may hold it already is read, checked. */
		if (once && le64toh(tb->slots[i].key) == key) {
			if (slot_read(fi, tb, i, &k, &m) == SLOT_BAD)
				return (nsd_table_bad_slot(fi, tb, i, err));
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
				return (nsd_table_bad_slot(fi, tb, i, err));
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
	filter_add(fi, key, meta);
	return (0);
}

int
nsd_table_insert(const struct file_index *fi, struct table *tb, uint64_t key,
    uint64_t meta, struct nsd_error *err)
{
	return (nsd_table_put(fi, tb, key, meta, 0, err));
}

/*
 * Whether the growth sweep has passed position pos: then PATH.next, not
 * the table, holds the entries homed there.
 */
int
nsd_file_grown(const struct file_index *fi, uint64_t pos)
{
	if (fi->next.fd == -1)
		return (0);
	if (fi->grow_done == NSD_SWEPT_ALL)
		return (1);
	return (pos - fi->grow_from < fi->grow_done);
}

/* The table that holds, or gets, an entry of table with key. */
struct table *
nsd_file_table_for(struct file_index *fi, unsigned table, uint64_t key)
{
	return (nsd_file_grown(fi, nsd_index_position(&fi->hdr, table, key)) ?
	    &fi->next : &fi->main);
}

/*
 * Whether tb holds an entry like key, meta (the same key, table and group)
 * where a lookup finds it; -1 with err set when it does not, or when a
 * slot on the way is damaged.
 */
int
nsd_table_holds(struct file_index *fi, const struct table *tb, uint64_t key,
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
				return (nsd_table_bad_slot(fi, tb, i, err));
			case SLOT_ENTRY:
				if (k == key && nsd_slot_table(m) == t &&
				    nsd_slot_group(m) == nsd_slot_group(meta))
					return (0);
				break;
			}
		b = (b + NSD_INDEX_BUCKET) & tb->mask;
	}
	return (nsd_file_damaged(err, fi->path, "%s does not hold the entry of "
	    "%016llx in table %u that it should", tb->what,
	    (unsigned long long)key, t));
}

/*
 * Write h, numbered seq, as header copy which (0 or 1), and sync it; point
 * names the crash point between the two. What is current is the caller's
 * to say.
 */
static int
write_copy(struct file_index *fi, int which, struct nsd_index_header *h,
    uint64_t seq, const char *point, struct nsd_error *err)
{
	unsigned char	 old[NSD_INDEX_COPY_SIZE], copy[NSD_INDEX_COPY_SIZE];
	off_t		 at = (off_t)which * NSD_INDEX_COPY_SIZE;

	h->sequence = seq;
	nsd_index_header_encode(h, copy);
	if (pread(fi->main.fd, old, sizeof old, at) != (ssize_t)sizeof old)
		return (nsd_file_commit_error(fi, "reading a header copy",
		    err));
	/* From here on, the copy on disk may be the new one: see restore. */
	if (pwrite(fi->main.fd, copy, sizeof copy, at) !=
	    (ssize_t)sizeof copy) {
		nsd_file_commit_error(fi, "writing a header copy", err);
		goto restore;
	}
	CRASH_POINT(point);
	if (fdatasync(fi->main.fd) == -1) {
		nsd_file_commit_error(fi, "syncing a header copy", err);
		goto restore;
	}
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

/*
 * Write one header copy, the one that is not current, as the current one;
 * point names the crash point between its write and its sync.
 */
static int
write_header_at(struct file_index *fi, struct nsd_index_header *h,
    const char *point, struct nsd_error *err)
{
	if (write_copy(fi, !fi->copy, h, fi->hdr.sequence + 1, point,
	    err) == -1)
		return (-1);
	fi->hdr = *h;
	fi->copy = !fi->copy;
	return (0);
}

/*
 * Make h, a state before the current one (an undo's), current, in both
 * copies, so that a crash leaves the one or the other and the copies
 * always agree (nsd_index_copies_agree(): the newer never goes back on
 * the older). First the copy that is not current gets h under a sequence
 * number that keeps it the older (equal, when it is copy B, which loses
 * a tie; one less, when it is copy A): the current state stands. Then the
 * current copy gets h under a number one past the other's: that write is
 * the undo. Should it be torn, the other copy holds h already.
 */
int
nsd_file_write_undone(struct file_index *fi, struct nsd_index_header *h,
    struct nsd_error *err)
{
	uint64_t	 seq = fi->hdr.sequence;
	int		 cur = fi->copy;

	assert(cur == 0 || seq > 0);
	if (write_copy(fi, !cur, h, cur == 0 ? seq : seq - 1, "undo-prepared",
	    err) == -1)
		return (-1);
	if (write_copy(fi, cur, h, cur == 0 ? seq + 1 : seq, "undo-written",
	    err) == -1)
		return (-1);
	fi->hdr = *h;
	return (0);
}

int
nsd_file_write_header(struct file_index *fi, struct nsd_index_header *h,
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
	if (nsd_file_write_header(fi, &h, err) == -1)
		return (-1);
	fi->gen = h.pending_gen;
	CRASH_POINT("begin");
	return (0);
}

/*
 * Whether the overlay holds nothing: it holds the log's records and
 * nothing else, so a run whose log is empty (a new index, or one just
 * folded) skips it on every lookup.
 */
static int
overlay_empty(const struct file_index *fi)
{
	return (fi->log_records == 0);
}

/* Put key, for group, into the overlay, as the index's op would. */
int
nsd_file_overlay_put(struct file_index *fi, uint64_t key, uint64_t group,
    struct nsd_error *err)
{
	if (fi->repeats)
		return (nsd_index_add(fi->overlay, key, group, err));
	return (nsd_index_claim(fi->overlay, key, group, NULL, err));
}

/*
 * Store key, for group, into every table's chain: a bulk load. The claim
 * that stores it has just looked it up (a memo, see struct memo): where
 * that lookup found room in table 0 is where nsd_table_insert() would put it,
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
	    nsd_file_table_for(fi, 0, key) == &fi->main &&
	    slot_read(fi, &fi->main, m->slot, &k, &meta) == SLOT_FREE) {
		nsd_slot_put(&fi->main.slots[m->slot], key,
		    nsd_slot_meta(fi->gen, 0, group));
		fi->main.entries++;
		filter_add(fi, key, 0);
		t = 1;
	}
	for (; t < fi->hdr.ntables; t++)
		if (nsd_table_insert(fi, &fi->main, key, nsd_slot_meta(fi->gen,
		    t, group), err) == -1)
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
		    nsd_file_rebuild(fi, 1, err) == -1)
			return (-1);
		return (nsd_file_sweep_owed(fi, 0, err));
	}
	if (nsd_file_overlay_put(fi, key, group, err) == -1)
		return (-1);
	if (fi->log_records - fi->log_written == LOG_BUFFER &&
	    nsd_file_log_flush(fi, err) == -1)
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
			if (nsd_file_rebuild(fi, fi->main.entries +
			    fi->log_records * fi->hdr.ntables > nslots_of(
			    &fi->main) / 100 * fi->hdr.max_load, err) == -1)
				return (-1);
		} else if (nsd_file_fold(fi, 1, err) == -1)
			return (-1);
	}
	return (nsd_file_sweep_owed(fi, 0, err));
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
		if (fi->filter != NULL)
			__builtin_prefetch(nsd_filter_block(fi->filter, pos));
		tb = nsd_file_grown(fi, pos) ? &fi->next : &fi->main;
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

/*
 * The table, the stage, then the overlay. A key looked up again since
 * (a claim looks up what its record looked up) and still missing from
 * the table is not looked for there again: the memo says where it would
 * be, and that slot is still free.
 */
static int
file_lookup(struct nsd_index *ix, uint64_t fp, uint64_t *group,
    struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	struct memo		*m = &fi->memo[fp % MEMO_SIZE];
	struct table		*tb = nsd_file_table_for(fi, 0, fp);
	uint64_t		 key, meta;
	int64_t			 i;
	int			 found;

	*group = 0;
	/* A key the filter does not hold is in neither the table nor stage. */
	if (fi->filter != NULL && !nsd_filter_maybe(fi->filter,
	    nsd_index_position(&fi->hdr, 0, fp)))
		goto overlay;
	if (m->epoch == fi->epoch && m->key == fp && !m->found &&
	    slot_read(fi, tb, m->slot, &key, &meta) == SLOT_FREE)
		found = 0;
	else {
		if ((i = find(fi, tb, 0, fp, &found, &meta, err)) == -1)
			return (-1);
		m->key = fp;
		m->slot = i;
		m->found = found;
		m->epoch = fi->epoch;
	}
	if (found) {
		*group = nsd_slot_group(meta);
		return (0);
	}
	if (stage_lookup(fi, fp, group, err) == -1 || *group != 0)
		return (*group != 0 ? 0 : -1);
overlay:
	if (overlay_empty(fi))
		return (0);
	return (nsd_index_lookup(fi->overlay, fp, group, err));
}

/* A new key goes to the log (and the table, in a bulk load). */
static int
file_put(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;

	if (fi->readonly)
		return (nsd_index_refuse_write(fi->path, err));
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
	uint64_t	 b, i, n, key, meta;
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
				return (nsd_table_bad_slot(fi, tb, i, err));
			case SLOT_ENTRY:
				break;
			}
			if (nsd_slot_table(meta) != t ||
			    ((key ^ fp) & fi->hdr.mask[t]) != 0 ||
			    forgotten(fi, meta))
				continue;
			near->candidates++;
			nsd_index_near_offer(near, k, nsd_slot_group(meta),
			    (unsigned)__builtin_popcountll(key ^ fp));
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
		if (fi->filter != NULL && !nsd_filter_maybe(fi->filter,
		    nsd_index_position(&fi->hdr, t, fp)))
			continue;
		if (near_in(fi, nsd_file_table_for(fi, t, fp), t, fp, k, near,
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
	nsd_index_near_merge(near, k, &mine);
	return (0);
}

/* SimHash: enter fp for group into every block table. */
static int
file_add(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;

	if (fi->readonly)
		return (nsd_index_refuse_write(fi->path, err));
	return (log_add(fi, fp, group, err));
}

/*
 * Make room for need more bytes in PATH.ids, reserving blocks as grow():
 * past the records written, so that the holes the window punched stay.
 */
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
	if ((e = posix_fallocate(fi->ids_fd, (off_t)(fi->ids_len &
	    ~(uint64_t)4095), (off_t)(cap - (fi->ids_len & ~(uint64_t)4095))))
	    != 0) {
		errno = e;
		return (nsd_file_commit_error(fi, "making room in the id file",
		    err));
	}
	p = mremap(fi->ids, fi->ids_cap, cap, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		return (nsd_file_commit_error(fi, "mapping the id file", err));
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
	if (fi->readonly)
		return (nsd_index_refuse_write(fi->path, err));
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
const unsigned char *
nsd_file_group_record(struct file_index *fi, uint64_t group, uint64_t *size,
    struct nsd_error *err)
{
	const unsigned char	*rec;
	uint64_t		 off = group * 8, number;
	uint64_t		 sig_bytes = nsd_ids_sig_bytes(&fi->hdr);
	uint32_t		 len;

	if (off < NSD_IDS_HEADER_SIZE ||
	    off + NSD_IDS_RECORD_HEAD > fi->ids_len) {
		nsd_file_damaged(err, fi->path, "a slot names group %llu, "
		    "past the end of %s", (unsigned long long)group,
		    fi->ids_path);
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
		nsd_file_damaged(err, fi->path, "group %llu of %s is not a "
		    "good group record", (unsigned long long)group,
		    fi->ids_path);
		return (NULL);
	}
	return (rec);
}

/* The signature after the id of group's record. */
static int
file_group_signature(struct nsd_index *ix, uint64_t group,
    const unsigned char **sig, struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	const unsigned char	*rec;
	uint64_t		 size;

	if ((rec = nsd_file_group_record(fi, group, &size, err)) == NULL)
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

	if ((rec = nsd_file_group_record(fi, group, &size, err)) == NULL)
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

	struct nsd_index_header	 before;

	/* A run that added nothing commits only a new window. */
	if (fi->readonly || (fi->gen == 0 && records == 0 &&
	    fi->ttl == fi->hdr.ttl))
		return (0);
	if (fi->gen != 0) {
		/* The sweep's last stretch, for what the run added. */
		if (nsd_file_sweep_owed(fi, 1, err) == -1)
			return (-1);
		if (nsd_table_sync(fi, &fi->main, "the table", err) == -1 ||
		    nsd_table_sync(fi, &fi->next, "the growing table",
		    err) == -1)
			return (-1);
		CRASH_POINT("table-synced");
		if (nsd_file_log_flush(fi, err) == -1)
			return (-1);
		if (fi->log_records > 0 && fdatasync(fi->log_fd) == -1)
			return (nsd_file_commit_error(fi, "fdatasync of the "
			    "log", err));
		CRASH_POINT("log-synced");
		if (nsd_file_sync_map(fi, fi->ids, fi->ids_cap, fi->ids_fd,
		    "the id file", err) == -1)
			return (-1);
		CRASH_POINT("ids-synced");
	}
	if (nsd_file_filter_sync(fi, err) == -1)
		return (-1);
	/* After the run's folds, rebuilds and growth: what undo restores. */
	before = h = fi->hdr;
	if (fi->gen != 0)
		h.committed_gen = h.pending_gen = fi->gen;
	h.records += records;
	h.groups += fi->groups;
	h.entries = fi->main.entries;
	h.log_records = fi->log_records;
	h.log_sum = fi->log_sum;
	h.ids_length = fi->ids_len;
	h.last_group = fi->last_group;
	h.sweep_cursor = fi->cursor;
	h.sweep_done = positions_add(h.sweep_done, fi->swept);
	if (fi->next.fd != -1) {
		h.next_shift = 64 - fi->next.shift;
		h.grow_done = fi->grow_done;
		h.next_entries = fi->next.entries;
	}
	/* A new window alone is a setting, not a run to take back. */
	if (nsd_file_window_commit(fi, &h, err) == -1 ||
	    ((fi->gen != 0 || records != 0) &&
	    nsd_file_undo_save(fi, &before, &h, err) == -1) ||
	    write_header_at(fi, &h, "commit-written", err) == -1)
		return (-1);
	CRASH_POINT("committed");
	nsd_file_window_punch(fi);
	fi->gen = 0;
	fi->swept = 0;
	/*
	 * The other copy still holds the state before the run. Bring it up to
	 * date too, so that a copy damaged later loses no commit; should this
	 * fail, the copy just written is still the current one.
	 */
	h = fi->hdr;
	(void)nsd_file_write_header(fi, &h, NULL);
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
	if (fi->filter != NULL && fi->filter->map == NULL) {
		info->memory += fi->filter->nblocks * NSD_FILTER_BLOCK;
		info->peak += fi->filter->nblocks * NSD_FILTER_BLOCK;
	}
	info->mapped += fi->main.map_len + fi->stage.map_len +
	    fi->next.map_len + fi->ids_cap +
	    (fi->filter != NULL ? fi->filter->map_len : 0);
}

static void
file_close(struct nsd_index *ix)
{
	struct file_index	*fi = (struct file_index *)ix;

	nsd_index_close(fi->overlay);
	nsd_table_close(&fi->main);
	nsd_table_close(&fi->stage);
	nsd_table_close(&fi->next);
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
	free(fi->filter_path);
	free(fi->filter_new_path);
	nsd_filter_free(fi->filter);
	free(fi->undo_path);
	nsd_times_close(&fi->times);
	free(fi->times_path);
	free(fi);
}

static int
file_numbered(struct nsd_index *ix, uint64_t *n, struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;

	(void)err;
	*n = fi->hdr.groups + fi->groups;
	return (0);
}

const struct nsd_index_ops nsd_file_index_ops = {
	file_prefetch, file_lookup, file_put, file_near, file_add,
	file_group_new, file_group_signature, file_group_name,
	file_commit, file_info, file_close, NULL, NULL, NULL, NULL,
	file_numbered
};
