/*
 * index_sweep.c: the sweeps of the persistent index, which move the
 * stage's entries into the table a stretch at a time, and its growth into
 * PATH.next. The design is in index_file.c.
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
 * Growth. When the table, the stage and the log hold more than 5/8 of the
 * table's slots (so that the table would be 3/4 full a sweep period later),
 * the index starts to grow: the sweep copies the table's entries homed in
 * each stretch into PATH.next, a table of twice the slots, along with the
 * stage's, which go there instead of into the table. A lookup reads
 * PATH.next for a position the growth sweep has passed, and the table for
 * the others. The growth sweep copies entries with their generations, so
 * that once it has gone round, PATH.next holds every committed entry and
 * takes the table's place at once, in the middle of the run if need be.
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

/*
 * Ask the kernel to read the nb buckets of tb from slot i on (which may
 * wrap round) ahead of a walk over them: a table read at random has no
 * read-ahead of its own (see the end of nsd_index_open_file()).
 */
static void
read_ahead(const struct table *tb, uint64_t i, uint64_t nb)
{
	uint64_t	 n = nb * NSD_INDEX_BUCKET, left = nslots_of(tb) - i;
	uintptr_t	 page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t	 start, end;

	start = (uintptr_t)&tb->slots[i] & ~(page - 1);
	end = (uintptr_t)&tb->slots[i + (n < left ? n : left)];
	(void)madvise((void *)start, end - start, MADV_WILLNEED);
	if (n > left)
		read_ahead(tb, 0, (n - left) / NSD_INDEX_BUCKET);
}

/*
 * Call visit for every valid entry of tb homed at a position in the
 * stretch [from, from + len), which may wrap round (len NSD_SWEPT_ALL: all
 * of them). Entries homed there lie from the stretch's first home bucket
 * on: an entry past its last home bucket had every bucket from there to
 * its own full when it came, and they still are, so the walk goes on
 * while buckets are full.
 */
int
nsd_table_stretch_each(struct file_index *fi, struct table *tb, uint64_t from,
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
	read_ahead(tb, b, nb);
	for (k = 0; k < nbuckets; k++) {
		for (j = 0, full = 1; j < NSD_INDEX_BUCKET; j++) {
			switch (slot_read(fi, tb, b + j, &key, &meta)) {
			case SLOT_FREE:
				full = 0;
				continue;
			case SLOT_BAD:
				return (nsd_table_bad_slot(fi, tb, b + j, err));
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
	if (forgotten(fi, meta))
		return (0);
	if (nsd_table_insert(fi, &fi->next, key, meta, err) == -1)
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
	if (forgotten(fi, meta))
		return (0);
	tb->written = 1;
	return (nsd_table_put(fi, tb, key, nsd_slot_meta(fi->gen,
	    nsd_slot_table(meta), nsd_slot_group(meta)), 1, err));
}

/*
 * Start to grow: make PATH.next, twice the table's slots, empty; or, when
 * the window has forgotten enough that what is left fills no more than
 * 3/8 of the table, of the same slots, to renew it without them
 * (index_window.c). The growth sweep starts at the cursor.
 */
static int
grow_start(struct file_index *fi, struct nsd_error *err)
{
	uint64_t	 nslots = nslots_of(&fi->main);

	if (nsd_file_window_live(fi) > nslots / 8 * 3)
		nslots *= 2;
	if (nsd_table_new(fi, fi->next_path, "the growing table",
	    NSD_INDEX_TABLE_OFFSET, nslots, &fi->next, err) == -1)
		return (-1);
	fi->next.written = 1;
	fi->next_committed = 0;
	fi->grow_done = 0;
	fi->grow_from = fi->cursor;
	fi->epoch++;
	CRASH_POINT("grow-started");
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
	if (forgotten(fi, meta))
		return (0);
	return (nsd_table_holds(fi, &fi->next, key, meta, err));
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

	if (nsd_table_stretch_each(fi, &fi->main, 0, NSD_SWEPT_ALL, grown_holds,
	    NULL, err) == -1)
		return (-1);
	h.nslots = nslots_of(&fi->next);
	h.entries = fi->next_committed;
	h.next_shift = 0;
	h.grow_done = 0;
	h.next_entries = 0;
	if (nsd_table_replace(fi, &in, &fi->next, fi->next_path, &h, err) == -1)
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
		if (nsd_table_stretch_each(fi, &fi->main, from, copy, grow_copy,
		    NULL, err) == -1)
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
	if (fi->stage.fd != -1 && nsd_table_stretch_each(fi, &fi->stage, from,
	    move, sweep_move, NULL, err) == -1)
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
int
nsd_file_sweep_owed(struct file_index *fi, int all, struct nsd_error *err)
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
