/*
 * index_verify.c: looking into an index file without using it, for
 * --db-info and --db-verify.
 *
 * Both take the shared lock, so they see the last committed state and
 * never a writer's work in progress. They read the files directly, not
 * through index_file.c, so that a damaged index is described, not refused:
 * verification walks the header copies, PATH.ids, every slot of the table,
 * of the stage and (while the index grows) of PATH.next, and the committed
 * records of PATH.log, and names each broken invariant it finds. Where an
 * entry is may change (folds, sweeps and growth move entries), so the
 * invariants between the places are about all of them: what the sweep has
 * passed is in the table, what the growth sweep has passed in PATH.next,
 * a key that repeats (SimHash's) is in every block table somewhere, and
 * a key claimed once has one group wherever it is; and the key filter
 * holds the key of every committed entry of them all.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index.h"
#include "index_filter.h"
#include "index_format.h"
#include "index_times.h"

/* A table of the index: its slots, where they are, what it is called. */
struct place {
	const char	*what;		/* for messages: "slot N" of it */
	const char	*name;
	const struct nsd_index_slot *slots;	/* NULL: none */
	uint64_t	 nslots;
	unsigned	 shift;
	unsigned char	*map;
	size_t		 map_len;
};

struct verify {
	char		*path;
	char		*ids_path;
	char		*log_path;
	char		*stage_path;
	char		*next_path;
	char		*filter_path;
	char		*undo_path;
	char		*times_path;
	int		 fd;
	int		 filter_fd;
	int		 filter_errno;
	int		 stage_fd;
	int		 next_fd;
	int		 ids_fd;
	int		 ids_errno;	/* why ids_fd is -1 */
	int		 log_fd;
	int		 log_errno;	/* why log_fd is -1 */
	int		 stage_errno;
	int		 next_errno;
	int		 stage_ok;	/* its header was read, and fits */
	int		 stage_ours;	/* a stage of this index */
	int		 stage_has_log;	/* a fold cut short that took the
					   log in */
	int		 legacy;	/* a version before checks */
	int		 undo_errno;	/* why PATH.undo cannot be read */
	unsigned	 undo_damaged;	/* its entries that fail checks */
	int		 lock_fd;
	int		 made_lock;	/* PATH.lock, of an index copied
					   without it */
	struct nsd_index_header hdr;
	struct nsd_stage_header stage_hdr;
	struct place	 table, stage, next;
	struct nsd_filter *filter;	/* read whole, believed */
	struct nsd_filter_header filter_hdr;
	void		(*problem)(void *, const char *);
	void		*ctx;
	size_t		 max;
	uint64_t	 problems;
};

static void
say(struct verify *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Count a broken invariant, and pass on its description. */
static void
say(struct verify *v, const char *fmt, ...)
{
	char	 msg[NSD_ERROR_MAX];
	va_list	 ap;

	if (v->problems++ >= v->max || v->problem == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	v->problem(v->ctx, msg);
}

static void
report_fill(const struct nsd_index_header *h, int copy,
    struct nsd_index_report *r)
{
	memset(r, 0, sizeof *r);
	r->version = h->version;
	memcpy(r->method, h->method, sizeof r->method);
	r->sentences = h->sentences;
	r->min_length = h->min_length;
	r->compat = h->compat;
	r->norm_version = h->norm_version;
	r->distance = h->distance;
	r->ngram = h->ngram;
	r->shingle = h->shingle;
	r->min_features = h->min_features;
	r->ntables = h->ntables;
	r->bins = h->bins;
	r->sketch_bytes = h->sketch_bytes;
	r->bands = h->bands;
	r->rows = h->rows;
	r->threshold = h->threshold;
	r->seed = h->seed;
	r->records = h->records;
	r->groups = h->groups;
	r->fingerprints = h->entries;
	r->log_records = h->log_records;
	r->stage_build = h->stage_seq;
	r->sweep_cursor = h->sweep_cursor;
	r->sweep_done = h->sweep_done;
	r->next_slots = h->next_shift != 0 ? 1ULL << h->next_shift : 0;
	r->grow_done = h->grow_done;
	r->next_entries = h->next_entries;
	r->slots = h->nslots;
	r->max_load = h->max_load;
	r->generation = h->committed_gen;
	r->pending = h->pending_gen;
	r->ids_length = h->ids_length;
	r->created = h->created;
	r->committed_at = h->committed_at;
	r->copy = copy;
}

static void
place_close(struct place *p)
{
	if (p->map != NULL)
		munmap(p->map, p->map_len);
	memset(p, 0, sizeof *p);
}

static void
verify_close(struct verify *v)
{
	place_close(&v->table);
	place_close(&v->stage);
	place_close(&v->next);
	if (v->fd != -1)
		close(v->fd);
	if (v->stage_fd != -1)
		close(v->stage_fd);
	if (v->next_fd != -1)
		close(v->next_fd);
	if (v->filter_fd != -1)
		close(v->filter_fd);
	nsd_filter_free(v->filter);
	free(v->filter_path);
	free(v->stage_path);
	free(v->next_path);
	free(v->undo_path);
	free(v->times_path);
	if (v->ids_fd != -1)
		close(v->ids_fd);
	if (v->log_fd != -1)
		close(v->log_fd);
	if (v->lock_fd != -1)
		close(v->lock_fd);
	free(v->log_path);
	free(v->ids_path);
	free(v->path);
}

/*
 * Open a companion file read-only, as index_file.c would: -1 with the
 * reason in *e when it cannot be, EINVAL for one that is not a regular
 * file (a FIFO must not be read). Its size goes into *size.
 */
static int
open_companion(const char *path, int *e, uint64_t *size)
{
	struct stat	 sb;
	int		 fd;

	if ((fd = open(path, O_RDONLY | NSD_OPEN_FLAGS)) == -1) {
		*e = errno;
		return (-1);
	}
	if (fstat(fd, &sb) == -1)
		*e = errno;
	else if (!S_ISREG(sb.st_mode))
		*e = EINVAL;
	else {
		*size = sb.st_size;
		return (fd);
	}
	close(fd);
	return (-1);
}

#define LOG_CHUNK	4096	/* records read at a time: 64 KiB */

/* Read exactly len bytes at off of fd: 0, or -1. */
static int
read_full(int fd, unsigned char *buf, size_t len, uint64_t off)
{
	return (nsd_pread_all(fd, buf, len, off) == (ssize_t)len ? 0 : -1);
}

/*
 * The stage's header, which must be the build the index names (or the
 * next, which a fold cut short left: a writer finishes it).
 */
static void
read_stage_header(struct verify *v, struct nsd_index_report *r)
{
	unsigned char	 page[NSD_STAGE_OFFSET];
	struct nsd_stage_header *sh = &v->stage_hdr;

	if (read_full(v->stage_fd, page, sizeof page, 0) != 0 ||
	    nsd_stage_header_decode(page, v->hdr.file_id, v->hdr.version,
	    sh) == -1)
		return;
	v->stage_ours = 1;
	if ((sh->seq != v->hdr.stage_seq && !nsd_stage_is_next(&v->hdr, sh)) ||
	    r->stage_file_size != NSD_STAGE_OFFSET +
	    sh->nslots * NSD_INDEX_SLOT_SIZE)
		return;
	v->stage_ok = 1;
	v->stage_has_log = sh->seq != v->hdr.stage_seq && sh->reserved[0] != 0;
	r->stage_entries = sh->entries;
	r->stage_slots = sh->nslots;
	r->stage_unfinished = sh->seq != v->hdr.stage_seq;
}

/* What the header of the key filter says, and whether it can be used. */
static void
read_filter_header(struct verify *v, struct nsd_index_report *r)
{
	unsigned char	 page[NSD_FILTER_OFFSET];

	if (v->hdr.version < NSD_INDEX_FILTERED) {
		r->filter = NSD_REPORT_FILTER_UNUSED;
		return;
	}
	if (read_full(v->filter_fd, page, sizeof page, 0) != 0) {
		r->filter = NSD_REPORT_FILTER_DAMAGED;
		return;
	}
	switch (nsd_filter_decode_header(page, r->filter_file_size,
	    v->hdr.file_id, v->hdr.committed_gen, &v->filter_hdr)) {
	case NSD_FILTER_OK:
		r->filter = NSD_REPORT_FILTER_OK;
		r->filter_blocks = v->filter_hdr.nblocks;
		r->filter_keys = v->filter_hdr.keys;
		break;
	case NSD_FILTER_DAMAGED:
		r->filter = NSD_REPORT_FILTER_DAMAGED;
		break;
	case NSD_FILTER_OTHER:
		r->filter = NSD_REPORT_FILTER_OTHER;
		break;
	case NSD_FILTER_STALE:
		r->filter = NSD_REPORT_FILTER_STALE;
		break;
	}
}

/*
 * Read the whole key filter that its header says can be used, and check
 * its blocks against their checksum; what is wrong with it is said. A
 * filter that is missing is no problem: the next run that writes makes
 * it. One that is there but cannot be used is: no run writes one.
 */
static void
verify_filter(struct verify *v, const struct nsd_index_report *r)
{
	struct nsd_filter	*f;

	switch (r->filter) {
	case NSD_REPORT_FILTER_NONE:
	case NSD_REPORT_FILTER_UNUSED:
		return;
	case NSD_REPORT_FILTER_DAMAGED:
		say(v, "%s: damaged (runs go without it, and the next that "
		    "writes makes it anew)", v->filter_path);
		return;
	case NSD_REPORT_FILTER_OTHER:
		say(v, "%s: not this index's key filter", v->filter_path);
		return;
	case NSD_REPORT_FILTER_STALE:
		say(v, "%s: holds the entries up to run %llu, older than the "
		    "last commit (%llu)", v->filter_path,
		    (unsigned long long)v->filter_hdr.gen,
		    (unsigned long long)v->hdr.committed_gen);
		return;
	}
	f = nsd_filter_new(v->filter_hdr.nblocks);
	if (f->nblocks != v->filter_hdr.nblocks || read_full(v->filter_fd,
	    (unsigned char *)f->words, f->nblocks * NSD_FILTER_BLOCK,
	    NSD_FILTER_OFFSET) != 0 || !nsd_filter_sum_ok(f, &v->filter_hdr)) {
		say(v, "%s: its blocks fail their checksum", v->filter_path);
		nsd_filter_free(f);
		return;
	}
	nsd_filter_words_le(f);
	v->filter = f;
}

/*
 * The runs --db-undo can take back, from PATH.undo; none when it is not
 * there (the index has had no commit since nsdedup kept them), or cannot
 * be read (v->undo_errno says why).
 */
static void
read_undo(struct verify *v, struct nsd_index_report *r)
{
	struct nsd_undo_entry		 e[NSD_UNDO_RUNS];
	const struct nsd_undo_entry	*steps[NSD_UNDO_RUNS];
	uint64_t			 size, gen = 0;
	size_t				 i;
	int				 fd;

	memset(e, 0, sizeof e);
	if ((fd = open_companion(v->undo_path, &v->undo_errno, &size)) != -1) {
		if (nsd_undo_read(fd, v->hdr.file_id, e, &v->undo_damaged) ==
		    -1)
			v->undo_errno = errno;
		close(fd);
	}
	if (r->stage_unfinished) {
		/* The next writer finishes the fold: a new build. */
		r->undo_why = "the log has been folded into the stage since";
		return;
	}
	if (v->stage_ok)
		gen = v->stage_hdr.max_gen;
	r->undo_runs = nsd_undo_chain(e, NSD_UNDO_RUNS, &v->hdr, gen, steps,
	    NSD_UNDO_RUNS, &r->undo_why);
	for (i = 0; i < r->undo_runs && i < NSD_UNDO_RUNS; i++) {
		r->undo[i].generation = steps[i]->gen;
		r->undo[i].records = steps[i]->records;
		r->undo[i].committed_at = steps[i]->committed_at;
	}
}

/*
 * The window at the clock: which groups it has forgotten (those before
 * ids_start, and those opened by commits PATH.times says were made a
 * window or more ago), and the oldest it keeps, its number read from its
 * record and its time from the commit that opened it.
 */
static void
read_window(struct verify *v, struct nsd_index_report *r)
{
	const struct nsd_index_header	*h = &v->hdr;
	struct nsd_times		 t;
	struct nsd_times_record		 rec;
	struct nsd_horizon		 hz;
	unsigned char			 number[4];
	struct stat			 sb;
	uint64_t			 gen, horizon;

	r->ttl = h->ttl;
	r->now = nsd_index_now();
	if (v->ids_fd != -1 && fstat(v->ids_fd, &sb) == 0)
		r->ids_allocated = (uint64_t)sb.st_blocks * 512;
	nsd_times_open(&t, v->times_path, h->file_id, h->committed_gen, 0);
	nsd_times_horizon(&t, h->ttl, r->now, h->ids_start, &hz);
	r->times = t.fd != -1;
	if (h->ttl != 0 && r->now >= (int64_t)h->ttl)
		r->cutoff = r->now - (int64_t)h->ttl;
	horizon = hz.ids;
	if (horizon < NSD_IDS_HEADER_SIZE)
		horizon = NSD_IDS_HEADER_SIZE;
	if (horizon >= h->ids_length)
		r->forgotten = h->groups;
	else if (v->ids_fd != -1 && nsd_pread_exact(v->ids_fd, number,
	    sizeof number, (off_t)horizon) == 0 && nsd_le32(number) != 0) {
		r->oldest_group = nsd_le32(number);
		r->forgotten = r->oldest_group - 1;
		if (nsd_times_opened(&t, horizon, &gen, &rec) == 0)
			r->oldest_opened = rec.at;
	}
	nsd_times_close(&t);
}

/* Lock, open and read the current header; sizes go into r. */
static int
verify_open_files(struct verify *v, const char *path, long wait_ms,
    struct nsd_index_report *r, struct nsd_error *err)
{
	struct stat	 sb;
	int		 copy;

	memset(v, 0, sizeof *v);
	v->path = nsd_index_resolve(path);
	path = v->path;
	v->fd = v->ids_fd = v->log_fd = v->lock_fd = -1;
	v->stage_fd = v->next_fd = v->filter_fd = -1;
	v->ids_path = nsd_index_path(path, ".ids");
	v->log_path = nsd_index_path(path, ".log");
	v->stage_path = nsd_index_path(path, ".stage");
	v->next_path = nsd_index_path(path, ".next");
	v->filter_path = nsd_index_path(path, ".filter");
	v->undo_path = nsd_index_path(path, ".undo");
	v->times_path = nsd_index_path(path, ".times");
	if (nsd_index_lock(path, 1, wait_ms, &v->lock_fd, &v->made_lock,
	    err) == -1)
		return (-1);
	if ((v->fd = open(path, O_RDONLY | NSD_OPEN_FLAGS)) == -1) {
		if (errno == ENOENT)
			return (nsd_error_set(err, NSD_EXIT_INDEX,
			    "%s: no such index", path));
		return (nsd_error_errno(err, NSD_EXIT_INDEX, path,
		    "cannot open"));
	}
	if (nsd_index_fstat(v->fd, path, &sb, err) == -1)
		return (-1);
	if (nsd_index_read_header(v->fd, path, &v->hdr, &copy, 0, err) == -1)
		return (-1);
	report_fill(&v->hdr, copy, r);
	v->legacy = v->hdr.version < NSD_INDEX_CHECKED;
	r->file_size = sb.st_size;
	v->ids_fd = open_companion(v->ids_path, &v->ids_errno,
	    &r->ids_file_size);
	v->log_fd = open_companion(v->log_path, &v->log_errno,
	    &r->log_file_size);
	/* With none named, a stage there is a fold cut short, or damage. */
	v->stage_fd = open_companion(v->stage_path, &v->stage_errno,
	    &r->stage_file_size);
	if (v->hdr.next_shift != 0)
		v->next_fd = open_companion(v->next_path, &v->next_errno,
		    &r->next_file_size);
	if (v->stage_fd != -1)
		read_stage_header(v, r);
	v->filter_fd = open_companion(v->filter_path, &v->filter_errno,
	    &r->filter_file_size);
	if (v->filter_fd != -1)
		read_filter_header(v, r);
	read_undo(v, r);
	read_window(v, r);
	return (0);
}

/*
 * verify_open_files(), and when it fails, the lock file it made (of an
 * index copied without it, or of what is no index) is taken away again.
 */
static int
verify_open(struct verify *v, const char *path, long wait_ms,
    struct nsd_index_report *r, struct nsd_error *err)
{
	if (verify_open_files(v, path, wait_ms, r, err) == 0)
		return (0);
	if (v->made_lock) {
		nsd_index_lock_drop(v->path, v->lock_fd);
		v->lock_fd = -1;
	}
	return (-1);
}

int
nsd_index_describe(const char *path, long wait_ms,
    struct nsd_index_report *r, struct nsd_error *err)
{
	struct verify	 v;
	int		 rc;

	rc = verify_open(&v, path, wait_ms, r, err);
	verify_close(&v);
	return (rc);
}

/* Both header copies: each one damaged is a problem, if the other works. */
static void
verify_copies(struct verify *v)
{
	unsigned char		 buf[NSD_INDEX_COPY_SIZE];
	struct nsd_index_header	 h[2];
	enum nsd_header_state	 st[2];
	int			 i, newer;

	for (i = 0; i < 2; i++) {
		if (pread(v->fd, buf, sizeof buf, (off_t)i *
		    NSD_INDEX_COPY_SIZE) != (ssize_t)sizeof buf)
			st[i] = NSD_HEADER_DAMAGED;
		else
			st[i] = nsd_index_header_decode(buf, &h[i]);
		if (st[i] != NSD_HEADER_OK)
			say(v, "header copy %c is %s; copy %c is in use",
			    'A' + i, nsd_index_header_problem(st[i]), 'B' - i);
	}
	newer = h[1].sequence > h[0].sequence;
	if (st[0] == NSD_HEADER_OK && st[1] == NSD_HEADER_OK &&
	    !nsd_index_copies_agree(&h[!newer], &h[newer]))
		say(v, "header copy %c, in use, says what copy %c, which is "
		    "older, cannot have come before", 'A' + newer, 'B' - newer);
}

/*
 * Whether the window has forgotten group (its record lies before
 * ids_start): its entries may be missing from any copy made since, and
 * its key claimed again by a newer group.
 */
static int
forgotten_group(const struct nsd_index_header *h, uint64_t group)
{
	return (group * 8 < h->ids_start);
}

/* The first group record verify_ids() reads: the first kept, or the last. */
static uint64_t
ids_walk_start(const struct nsd_index_header *h)
{
	uint64_t	 off = h->ids_start;

	if (off < NSD_IDS_HEADER_SIZE)
		return (NSD_IDS_HEADER_SIZE);
	if (h->groups != 0 && off > h->last_group * 8)
		return (h->last_group * 8);
	return (off);
}

/*
 * Whether group is the start of a committed group record, as marked in
 * starts by verify_ids; a group before the records it read (forgotten,
 * their bytes given back) is taken for one. When PATH.ids is too short
 * for what is committed (starts is NULL), that was said, and no group is
 * blamed for it.
 */
static int
is_group(const struct nsd_index_header *h, const unsigned char *starts,
    uint64_t group)
{
	return (starts == NULL || (group * 8 >= NSD_IDS_HEADER_SIZE &&
	    group * 8 < h->ids_length && (group * 8 < ids_walk_start(h) ||
	    (starts[group / 8] & 1 << (group % 8)))));
}

/*
 * Walk the group records of PATH.ids up to its committed length, marking
 * where each starts in starts (one bit per 8-byte unit).
 */
static void
verify_ids(struct verify *v, const struct nsd_index_report *r,
    unsigned char *starts)
{
	const struct nsd_index_header	*h = &v->hdr;
	unsigned char			*ids;
	uint64_t			 off, n = 0, len, last = 0;
	uint64_t			 sig_bytes = nsd_ids_sig_bytes(h);

	if (v->ids_fd == -1 && v->ids_errno == EINVAL) {
		say(v, "%s: not a regular file", v->ids_path);
		return;
	}
	if (v->ids_fd == -1) {
		say(v, "%s: cannot open: %s", v->ids_path,
		    strerror(v->ids_errno));
		return;
	}
	if (r->ids_file_size < h->ids_length) {
		say(v, "%s: %llu bytes, but %llu are committed", v->ids_path,
		    (unsigned long long)r->ids_file_size,
		    (unsigned long long)h->ids_length);
		return;
	}
	ids = mmap(NULL, h->ids_length, PROT_READ, MAP_SHARED, v->ids_fd, 0);
	if (ids == MAP_FAILED) {
		say(v, "%s: cannot map: %s", v->ids_path, strerror(errno));
		return;
	}
	if (memcmp(ids, NSD_IDS_MAGIC, 8) != 0 ||
	    nsd_le64(ids + 8) != h->file_id)
		say(v, "%s: not the id file of this index", v->ids_path);
	/* Records before the first kept may be holes: numbered on from it. */
	off = ids_walk_start(h);
	if (off > NSD_IDS_HEADER_SIZE && off + 4 <= h->ids_length)
		n = nsd_le32(ids + off) - 1;
	for (; off < h->ids_length;
	    off += nsd_ids_record_bytes(len, nsd_ids_sig_bytes(h))) {
		if (off + NSD_IDS_RECORD_HEAD > h->ids_length) {
			say(v, "%s: a group record is cut off at byte %llu",
			    v->ids_path, (unsigned long long)off);
			break;
		}
		len = nsd_le32(ids + off + 8);
		if (nsd_le32(ids + off) != ++n) {
			say(v, "%s: the record at byte %llu is group %llu, "
			    "not %llu", v->ids_path, (unsigned long long)off,
			    (unsigned long long)nsd_le32(ids + off),
			    (unsigned long long)n);
			break;
		}
		if (off + nsd_ids_record_bytes(len, nsd_ids_sig_bytes(h)) >
		    h->ids_length) {
			say(v, "%s: group %llu's record runs past the "
			    "committed end", v->ids_path,
			    (unsigned long long)n);
			break;
		}
		if (!nsd_ids_record_clean(ids + off, len))
			say(v, "%s: group %llu's id has control characters "
			    "or its padding is not zero", v->ids_path,
			    (unsigned long long)n);
		if (!v->legacy && nsd_le32(ids + off + 4) !=
		    nsd_ids_record_sum(ids + off, off / 8, sig_bytes))
			say(v, "%s: group %llu's record fails its checksum",
			    v->ids_path, (unsigned long long)n);
		starts[off / 64] |= 1 << (off / 8 % 8);
		last = off / 8;
	}
	if (n != h->groups)
		say(v, "%s holds %llu groups; the header says %llu",
		    v->ids_path, (unsigned long long)n,
		    (unsigned long long)h->groups);
	else if (!v->legacy && last != h->last_group)
		say(v, "%s: the newest group record is at byte %llu; the "
		    "header says %llu", v->ids_path,
		    (unsigned long long)last * 8,
		    (unsigned long long)h->last_group * 8);
	munmap(ids, h->ids_length);
}

/* Whether position pos is in the stretch of len positions up to end. */
static int
in_stretch(uint64_t pos, uint64_t end, uint64_t len)
{
	return (len == NSD_SWEPT_ALL || pos - (end - len) < len);
}

/*
 * Whether a slot of place p holds a committed entry: of a committed run
 * and, in PATH.next, homed where the committed growth sweep has been (a
 * run that did not commit may have copied more there).
 */
static int
counts(const struct verify *v, const struct place *p,
    const struct nsd_index_slot *s)
{
	const struct nsd_index_header	*h = &v->hdr;
	uint64_t			 key, meta, gen;

	if (nsd_slot_get(s, v->legacy, &key, &meta) != NSD_SLOT_FULL)
		return (0);
	gen = nsd_slot_gen(meta);
	if (gen > h->committed_gen)
		return (0);
	return (p != &v->next || in_stretch(nsd_index_position(h,
	    nsd_slot_table(meta), key), h->sweep_cursor, h->grow_done));
}

/* Slot s, which counts, as its key and its slot word. */
static void
entry_of(const struct verify *v, const struct nsd_index_slot *s,
    uint64_t *key, uint64_t *meta)
{
	(void)nsd_slot_get(s, v->legacy, key, meta);
}

/* The group of slot s, which counts. */
static uint64_t
slot_group(const struct verify *v, const struct nsd_index_slot *s)
{
	uint64_t	 key, meta;

	entry_of(v, s, &key, &meta);
	return (nsd_slot_group(meta));
}

/* The bits nsd_index_home() shifts out for a table of nslots slots. */
static unsigned
home_shift(uint64_t nslots)
{
	unsigned	 shift = 64;

	while ((1ULL << (64 - shift)) < nslots)
		shift--;
	return (shift);
}

static int
bucket_full(const struct verify *v, const struct place *p, uint64_t bucket)
{
	unsigned	 j;

	for (j = 0; j < NSD_INDEX_BUCKET; j++)
		if (!counts(v, p, &p->slots[bucket * NSD_INDEX_BUCKET + j]))
			return (0);
	return (1);
}

/*
 * One slot that does not count: zeroed, or left by an interrupted run; or
 * damaged.
 */
static void
verify_empty(struct verify *v, const struct place *p,
    const struct nsd_index_slot *s, uint64_t i, struct nsd_index_report *r)
{
	const struct nsd_index_header	*h = &v->hdr;
	uint64_t			 key, meta, gen;

	if (nsd_slot_get(s, v->legacy, &key, &meta) == NSD_SLOT_DAMAGED) {
		say(v, "%sslot %llu: fails its check", p->what,
		    (unsigned long long)i);
		return;
	}
	gen = nsd_slot_gen(meta);
	if (gen > h->pending_gen)
		say(v, "%sslot %llu: generation %llu is after the last commit "
		    "(%llu)", p->what, (unsigned long long)i,
		    (unsigned long long)gen,
		    (unsigned long long)h->committed_gen);
	else if (s->meta != 0 || s->key != 0) {
		if (h->pending_gen > h->committed_gen)
			r->leftovers++;
		else
			say(v, "%sslot %llu: empty, but not zeroed", p->what,
			    (unsigned long long)i);
	}
}

/*
 * Every slot of a place: empty ones zeroed, generations committed (or left
 * by a run that did not commit, which is no damage), tables known, groups
 * at the start of a record, and each entry in its home bucket or after a
 * run of full buckets that starts there. The entries are counted against
 * what the headers say, want.
 */
static void
verify_slots(struct verify *v, const struct place *p, uint64_t want,
    int with_leftovers, const unsigned char *starts,
    struct nsd_index_report *r)
{
	const struct nsd_index_header	*h = &v->hdr;
	const struct nsd_index_slot	*slots = p->slots;
	uint64_t			 nb = p->nslots / NSD_INDEX_BUCKET;
	uint64_t			 bmask = nb - 1, n, k, z, i, key, meta;
	uint64_t			 group, home, start, entries = 0;
	unsigned			 table, j;

	for (z = 0; z < nb && bucket_full(v, p, z); z++)
		continue;
	if (z == nb) {
		say(v, "%s has no empty slot", p->name);
		return;
	}
	/* start: the first of the full buckets that end just before k. */
	start = (z + 1) & bmask;
	for (n = 1; n <= nb; n++) {
		k = (z + n) & bmask;
		for (j = 0; j < NSD_INDEX_BUCKET; j++) {
			i = k * NSD_INDEX_BUCKET + j;
			if (!counts(v, p, &slots[i])) {
				if (with_leftovers && nsd_slot_get(&slots[i],
				    v->legacy, &key, &meta) == NSD_SLOT_FULL &&
				    nsd_slot_gen(meta) <= h->pending_gen)
					entries++;
				verify_empty(v, p, &slots[i], i, r);
				continue;
			}
			entries++;
			entry_of(v, &slots[i], &key, &meta);
			table = nsd_slot_table(meta);
			group = nsd_slot_group(meta);
			if (table >= h->ntables) {
				say(v, "%sslot %llu: table %u, but the index "
				    "has %u", p->what, (unsigned long long)i,
				    table, h->ntables);
				continue;
			}
			if (v->filter != NULL && !forgotten_group(h, group) &&
			    !nsd_filter_maybe(v->filter,
			    nsd_index_position(h, table, key)))
				say(v, "%sslot %llu: the key filter does not "
				    "hold its key (%016llx, table %u)", p->what,
				    (unsigned long long)i,
				    (unsigned long long)key, table);
			if (!is_group(h, starts, group))
				say(v, "%sslot %llu: group %llu is not a "
				    "group record", p->what,
				    (unsigned long long)i,
				    (unsigned long long)group);
			home = nsd_index_home(h, table, key, p->shift);
			if (((k - home / NSD_INDEX_BUCKET) & bmask) >
			    ((k - start) & bmask))
				say(v, "%sslot %llu: cannot be found from its "
				    "home slot %llu (a bucket in between has "
				    "an empty slot)", p->what,
				    (unsigned long long)i,
				    (unsigned long long)home);
		}
		if (!bucket_full(v, p, k))
			start = (k + 1) & bmask;
	}
	if (entries != want)
		say(v, "%s holds %llu entries; %s says %llu", p->name,
		    (unsigned long long)entries, with_leftovers ?
		    "its header" : "the header", (unsigned long long)want);
}

#define ANY_GROUP	UINT64_MAX	/* for chain_find: whatever the group */
#define NOT_FOUND	UINT64_MAX

/*
 * The slot of table t's entry of key for group (or for any group) in a
 * place, walking its probe chain as a lookup does: to the first bucket
 * with a slot that does not count. NOT_FOUND when there is none. A
 * SimHash may be entered twice, for two groups (a record whose nearest old
 * group is not the one that holds its exact SimHash).
 */
static uint64_t
chain_find(const struct verify *v, const struct place *p, unsigned t,
    uint64_t key, uint64_t group)
{
	const struct nsd_index_header	*h = &v->hdr;
	uint64_t	 nb = p->nslots / NSD_INDEX_BUCKET, b, n, i, k, meta;
	int		 room;

	if (p->slots == NULL)
		return (NOT_FOUND);
	b = nsd_index_home(h, t, key, p->shift) / NSD_INDEX_BUCKET;
	for (n = 0; n < nb; n++, b = (b + 1) & (nb - 1)) {
		room = 0;
		for (i = b * NSD_INDEX_BUCKET; i < (b + 1) *
		    NSD_INDEX_BUCKET; i++) {
			if (!counts(v, p, &p->slots[i])) {
				room = 1;
				continue;
			}
			entry_of(v, &p->slots[i], &k, &meta);
			if (nsd_slot_table(meta) == t && k == key &&
			    (group == ANY_GROUP ||
			    nsd_slot_group(meta) == group))
				return (i);
		}
		if (room)
			break;
	}
	return (NOT_FOUND);
}

/* The place a lookup reads for an entry of table t with key. */
static const struct place *
place_for(const struct verify *v, unsigned t, uint64_t key)
{
	const struct nsd_index_header	*h = &v->hdr;

	if (v->next.slots != NULL && in_stretch(nsd_index_position(h, t, key),
	    h->sweep_cursor, h->grow_done))
		return (&v->next);
	return (&v->table);
}

/* Whether a lookup finds table t's entry of key for group anywhere. */
static int
found(const struct verify *v, unsigned t, uint64_t key, uint64_t group)
{
	return (chain_find(v, place_for(v, t, key), t, key, group) !=
	    NOT_FOUND || chain_find(v, &v->stage, t, key, group) !=
	    NOT_FOUND);
}

/*
 * Whether a key may be in the index more than once. Only in block tables
 * (SimHash within a distance above 0, where a near copy adds its own
 * fingerprint beside its group's); with one table a key is put once,
 * since a record whose key is there already joins its group.
 */
static int
keys_repeat(const struct nsd_index_header *h)
{
	return (h->ntables > 1);
}

/*
 * The invariants between the places, for each committed entry of place p:
 * one the sweep has passed since the last fold is in the table (or in
 * PATH.next), one of the table the growth sweep has passed is in
 * PATH.next; where keys repeat (SimHash), each table's entry of it is
 * somewhere; where a key is claimed once, it has no other group anywhere.
 * One lookup or a few per entry: a random read each.
 */
static void
verify_between(struct verify *v, const struct place *p)
{
	const struct nsd_index_header	*h = &v->hdr;
	uint64_t			 i, meta, key, group, pos, s;
	unsigned			 t, u;
	int				 once = !keys_repeat(h);

	for (i = 0; i < p->nslots; i++) {
		if (!counts(v, p, &p->slots[i]))
			continue;
		entry_of(v, &p->slots[i], &key, &meta);
		t = nsd_slot_table(meta);
		if (t >= h->ntables)
			continue;	/* said by verify_slots */
		group = nsd_slot_group(meta);
		if (forgotten_group(h, group))
			continue;
		pos = nsd_index_position(h, t, key);
		if (p == &v->stage && v->stage_ok &&
		    v->stage_hdr.seq == h->stage_seq &&
		    in_stretch(pos, h->sweep_cursor, h->sweep_done) &&
		    chain_find(v, place_for(v, t, key), t, key, group) ==
		    NOT_FOUND)
			say(v, "%sslot %llu: the sweep has passed it, but "
			    "the table does not hold it", p->what,
			    (unsigned long long)i);
		if (p == &v->table && v->next.slots != NULL &&
		    in_stretch(pos, h->sweep_cursor, h->grow_done) &&
		    chain_find(v, &v->next, t, key, group) == NOT_FOUND)
			say(v, "slot %llu: the growth sweep has passed it, but "
			    "%s does not hold it", (unsigned long long)i,
			    v->next_path);
		if (once) {
			if (p != &v->table && (s = chain_find(v, &v->table, 0,
			    key, ANY_GROUP)) != NOT_FOUND &&
			    slot_group(v, &v->table.slots[s]) != group &&
			    !forgotten_group(h, slot_group(v,
			    &v->table.slots[s])))
				say(v, "%sslot %llu: fingerprint %016llx has "
				    "group %llu, and another in slot %llu",
				    p->what, (unsigned long long)i,
				    (unsigned long long)key,
				    (unsigned long long)group,
				    (unsigned long long)s);
			continue;
		}
		if (t != 0)
			continue;
		for (u = 1; u < h->ntables; u++)
			if (!found(v, u, key, group))
				say(v, "%sslot %llu: SimHash %016llx of group "
				    "%llu is not in block table %u", p->what,
				    (unsigned long long)i,
				    (unsigned long long)key,
				    (unsigned long long)group, u);
	}
}

/* A key claimed once, of PATH.log, and the record that holds it. */
struct logged {
	uint64_t	 key;
	uint64_t	 record;
	uint64_t	 group;
};

static int
logged_cmp(const void *a, const void *b)
{
	const struct logged	*x = a, *y = b;

	if (x->key != y->key)
		return (x->key < y->key ? -1 : 1);
	return (x->record < y->record ? -1 : x->record > y->record);
}

/* What the check of each record of PATH.log needs besides the record. */
struct log_check {
	const unsigned char *starts;		/* of the group records */
	struct logged	*seen;			/* keys claimed once, else
						   NULL */
};

/*
 * One committed record of PATH.log, number i: its slot word is that of a
 * table 0 entry of a committed run and a group that exists. A key claimed
 * once must not also be in a table, and it goes into seen for
 * the check of repeats.
 */
static void
verify_log_record(struct verify *v, const struct log_check *c,
    const unsigned char *rec, uint64_t i)
{
	const struct nsd_index_header	*h = &v->hdr;
	const struct place		*p;
	uint64_t			 key, meta, gen, slot;

	if (nsd_slot_get(rec, v->legacy, &key, &meta) == NSD_SLOT_DAMAGED) {
		say(v, "%s: record %llu: fails its check", v->log_path,
		    (unsigned long long)i);
		return;
	}
	gen = nsd_slot_gen(meta);
	if (nsd_slot_table(meta) != 0)
		say(v, "%s: record %llu: table %u, not 0 (a record stands "
		    "for every table)", v->log_path, (unsigned long long)i,
		    nsd_slot_table(meta));
	if (gen == 0 || gen > h->committed_gen)
		say(v, "%s: record %llu: generation %llu, but the committed "
		    "runs are 1 to %llu", v->log_path, (unsigned long long)i,
		    (unsigned long long)gen,
		    (unsigned long long)h->committed_gen);
	if (!is_group(h, c->starts, nsd_slot_group(meta)))
		say(v, "%s: record %llu: group %llu is not a group record",
		    v->log_path, (unsigned long long)i,
		    (unsigned long long)nsd_slot_group(meta));
	if (c->seen == NULL)
		return;
	c->seen[i].key = key;
	c->seen[i].record = i;
	c->seen[i].group = nsd_slot_group(meta);
	if (forgotten_group(h, nsd_slot_group(meta)))
		return;
	/* A fold cut short took the log in, and the header counts it still. */
	p = place_for(v, 0, key);
	if ((slot = chain_find(v, p, 0, key, ANY_GROUP)) == NOT_FOUND &&
	    !v->stage_has_log) {
		p = &v->stage;
		slot = chain_find(v, p, 0, key, ANY_GROUP);
	}
	if (slot != NOT_FOUND && !forgotten_group(h, slot_group(v,
	    &p->slots[slot])))
		say(v, "%s: record %llu: fingerprint %016llx is also in "
		    "%sslot %llu", v->log_path, (unsigned long long)i,
		    (unsigned long long)key, p == &v->stage ? "stage " : "",
		    (unsigned long long)slot);
}

/*
 * The committed records of PATH.log, read a chunk at a time so that memory
 * does not grow with the log. Only the check that no key claimed once
 * repeats keeps something per record: its key and number, 16 bytes, at
 * most 16 MiB since the log never holds more than NSD_LOG_MAX_ENTRIES.
 *
 * With no committed record, nothing in the file counts: it may be missing
 * (a version 1 index), or be a log whose creation a crash cut short, or
 * hold only the records of a run that did not commit. Only what a writer
 * could not open as a file is reported then.
 */
static void
verify_log(struct verify *v, const struct nsd_index_report *r,
    const unsigned char *starts)
{
	const struct nsd_index_header	*h = &v->hdr;
	struct log_check		 c = { starts, NULL };
	unsigned char			 head[NSD_LOG_HEADER_SIZE], *buf;
	uint64_t			 n = h->log_records, i, j, want;
	uint64_t			 sum = 0;
	size_t				 len;
	ssize_t				 got;

	if (v->log_fd == -1 && v->log_errno == EINVAL) {
		say(v, "%s: not a regular file", v->log_path);
		return;
	}
	if (n == 0)
		return;
	if (v->log_fd == -1) {
		say(v, "%s: cannot open: %s", v->log_path,
		    strerror(v->log_errno));
		return;
	}
	want = NSD_LOG_HEADER_SIZE + n * NSD_LOG_RECORD_SIZE;
	if (r->log_file_size < want) {
		say(v, "%s: truncated: %llu bytes, but %llu records (%llu "
		    "bytes) are committed", v->log_path,
		    (unsigned long long)r->log_file_size,
		    (unsigned long long)n, (unsigned long long)want);
		if (r->log_file_size < NSD_LOG_HEADER_SIZE)
			return;
		/* Still check the records that are whole. */
		n = (r->log_file_size - NSD_LOG_HEADER_SIZE) /
		    NSD_LOG_RECORD_SIZE;
	}
	if ((got = nsd_pread_all(v->log_fd, head, sizeof head, 0)) !=
	    (ssize_t)sizeof head) {
		say(v, "%s: cannot read: %s", v->log_path,
		    got == -1 ? strerror(errno) : "it was cut short");
		return;
	}
	/* The records of another index would mean nothing here. */
	if (memcmp(head, NSD_LOG_MAGIC, 8) != 0 ||
	    nsd_le64(head + 8) != h->file_id) {
		say(v, "%s: not the log of this index", v->log_path);
		return;
	}
	if (!keys_repeat(h) && n > 0)
		c.seen = xreallocarray(NULL, n, sizeof *c.seen);
	buf = xmalloc(LOG_CHUNK * NSD_LOG_RECORD_SIZE);
	for (i = 0; i < n; i += len / NSD_LOG_RECORD_SIZE) {
		len = (n - i < LOG_CHUNK ? n - i : LOG_CHUNK) *
		    NSD_LOG_RECORD_SIZE;
		got = nsd_pread_all(v->log_fd, buf, len, NSD_LOG_HEADER_SIZE +
		    i * NSD_LOG_RECORD_SIZE);
		if (got != (ssize_t)len) {
			say(v, "%s: cannot read record %llu: %s", v->log_path,
			    (unsigned long long)(i + (got == -1 ? 0 :
			    got / NSD_LOG_RECORD_SIZE)),
			    got == -1 ? strerror(errno) : "it was cut short");
			n = i;
			break;
		}
		for (j = 0; j < len / NSD_LOG_RECORD_SIZE; j++) {
			verify_log_record(v, &c, buf + j *
			    NSD_LOG_RECORD_SIZE, i + j);
			sum += nsd_log_record_sum(buf + j *
			    NSD_LOG_RECORD_SIZE, i + j);
		}
	}
	free(buf);
	if (!v->legacy && n == h->log_records && sum != h->log_sum)
		say(v, "%s: its %llu committed records are not the ones the "
		    "header sums up", v->log_path, (unsigned long long)n);
	if (c.seen == NULL)
		return;
	/* A key claimed once is logged once. */
	qsort(c.seen, n, sizeof *c.seen, logged_cmp);
	for (i = 1, j = 0; i < n; i++) {
		/* Claimed again once the window forgot the first claim. */
		if (c.seen[i].key != c.seen[j].key ||
		    forgotten_group(h, c.seen[j].group)) {
			j = i;
			continue;
		}
		say(v, "%s: record %llu: fingerprint %016llx is also record "
		    "%llu", v->log_path, (unsigned long long)c.seen[i].record,
		    (unsigned long long)c.seen[i].key,
		    (unsigned long long)c.seen[j].record);
	}
	free(c.seen);
}

/*
 * Map a place of nslots slots at offset of fd, a file of size bytes that
 * must be want bytes; what is wrong with it is said.
 */
static void
place_open(struct verify *v, struct place *p, const char *what,
    const char *name, int fd, const char *path, uint64_t size,
    uint64_t want, size_t offset, uint64_t nslots)
{
	if (size != want) {
		say(v, "%s: %llu bytes, but its header says %llu", path,
		    (unsigned long long)size, (unsigned long long)want);
		return;
	}
	p->map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		say(v, "%s: cannot map: %s", path, strerror(errno));
		return;
	}
	p->map_len = size;
	p->what = what;
	p->name = name;
	p->slots = (const struct nsd_index_slot *)(p->map + offset);
	p->nslots = nslots;
	p->shift = home_shift(nslots);
}

/*
 * PATH.times, when it is there (without it the window forgets no more,
 * which is no damage): this index's, with a record for every commit from
 * its first on, each passing its checksum, none before the one before it
 * in time or in PATH.ids's length, the last that of the header's commit.
 */
static void
verify_times(struct verify *v)
{
	const struct nsd_index_header	*h = &v->hdr;
	struct nsd_times		 t;
	struct nsd_times_record		 rec, prev;
	uint64_t			 gen;

	if (access(v->times_path, F_OK) == -1)
		return;
	nsd_times_open(&t, v->times_path, h->file_id, h->committed_gen, 0);
	if (t.fd == -1) {
		say(v, "%s: not the times of this index's commits, damaged, "
		    "or short of the last", v->times_path);
		return;
	}
	memset(&prev, 0, sizeof prev);
	for (gen = t.first; gen <= h->committed_gen; gen++) {
		if (nsd_times_get(&t, gen, &rec) == -1) {
			say(v, "%s: the record of generation %llu fails its "
			    "checksum", v->times_path,
			    (unsigned long long)gen);
			continue;
		}
		if (rec.at < prev.at || rec.ids_length < prev.ids_length ||
		    rec.ids_length > h->ids_length ||
		    rec.at > (int64_t)h->committed_at)
			say(v, "%s: the record of generation %llu is out of "
			    "order with the commits", v->times_path,
			    (unsigned long long)gen);
		prev = rec;
	}
	if (h->committed_gen >= t.first && prev.ids_length != h->ids_length)
		say(v, "%s: the last commit's record says %llu bytes of "
		    "%s; the header says %llu", v->times_path,
		    (unsigned long long)prev.ids_length, v->ids_path,
		    (unsigned long long)h->ids_length);
	nsd_times_close(&t);
}

/* Open the stage and PATH.next, saying what is wrong with them. */
static void
verify_places(struct verify *v, const struct nsd_index_report *r)
{
	const struct nsd_index_header	*h = &v->hdr;
	uint64_t			 n;

	if (h->stage_seq != 0 && v->stage_fd == -1)
		say(v, "%s: cannot open: %s", v->stage_path,
		    strerror(v->stage_errno));
	else if (h->stage_seq != 0 && !v->stage_ok)
		say(v, "%s: not build %llu of this index's stage, or damaged",
		    v->stage_path, (unsigned long long)h->stage_seq);
	else if (h->stage_seq == 0 && v->stage_ours && !v->stage_ok)
		say(v, "%s: build %llu of this index's stage, where the index "
		    "names none", v->stage_path,
		    (unsigned long long)v->stage_hdr.seq);
	else if (v->stage_ok) {
		place_open(v, &v->stage, "stage ", "the stage", v->stage_fd,
		    v->stage_path,
		    r->stage_file_size, r->stage_file_size, NSD_STAGE_OFFSET,
		    v->stage_hdr.nslots);
		if (v->stage_hdr.max_gen > h->pending_gen)
			say(v, "%s: holds generation %llu, after the last "
			    "commit (%llu)", v->stage_path,
			    (unsigned long long)v->stage_hdr.max_gen,
			    (unsigned long long)h->committed_gen);
	}
	if (h->next_shift == 0)
		return;
	if (v->next_fd == -1) {
		say(v, "%s: cannot open: %s", v->next_path,
		    strerror(v->next_errno));
		return;
	}
	n = 1ULL << h->next_shift;
	place_open(v, &v->next, "growing table ", "the growing table",
	    v->next_fd, v->next_path,
	    r->next_file_size, nsd_index_file_size(n), NSD_INDEX_TABLE_OFFSET,
	    n);
}

int
nsd_index_verify(const char *path, long wait_ms,
    void (*problem)(void *, const char *), void *ctx, size_t max,
    struct nsd_index_report *r, uint64_t *problems, struct nsd_error *err)
{
	struct verify	 v;
	unsigned char	*starts = NULL;
	uint64_t	 size;
	int		 rc = -1;

	if (verify_open(&v, path, wait_ms, r, err) == -1)
		goto done;
	v.problem = problem;
	v.ctx = ctx;
	v.max = max;
	verify_copies(&v);
	size = nsd_index_file_size(v.hdr.nslots);
	if (r->file_size != size)
		say(&v, "the file is %llu bytes; the header says %llu",
		    (unsigned long long)r->file_size,
		    (unsigned long long)size);
	if (v.hdr.records < v.hdr.groups)
		say(&v, "%llu records cannot have opened %llu groups",
		    (unsigned long long)v.hdr.records,
		    (unsigned long long)v.hdr.groups);
	/* One bit per 8 bytes of PATH.ids, once its size is known good. */
	if (r->ids_file_size >= v.hdr.ids_length)
		starts = xcalloc(v.hdr.ids_length / 64 + 1, 1);
	verify_ids(&v, r, starts);
	if (r->file_size >= size) {
		place_open(&v, &v.table, "", "the table", v.fd, v.path, size,
		    size,
		    NSD_INDEX_TABLE_OFFSET, v.hdr.nslots);
		if (v.table.slots == NULL) {
			nsd_error_errno(err, NSD_EXIT_INDEX, path,
			    "cannot map");
			goto done;
		}
	}
	verify_places(&v, r);
	verify_filter(&v, r);
	if (v.table.slots != NULL)
		verify_slots(&v, &v.table, v.hdr.entries, 0, starts, r);
	if (v.stage.slots != NULL)
		verify_slots(&v, &v.stage, v.stage_hdr.entries, 1, starts, r);
	if (v.next.slots != NULL)
		verify_slots(&v, &v.next, v.hdr.next_entries, 0, starts, r);
	if (v.table.slots != NULL)
		verify_between(&v, &v.table);
	if (v.stage.slots != NULL)
		verify_between(&v, &v.stage);
	if (v.next.slots != NULL)
		verify_between(&v, &v.next);
	verify_log(&v, r, starts);
	verify_times(&v);
	if (v.undo_errno != 0 && v.undo_errno != ENOENT)
		say(&v, "%s: cannot read: %s", v.undo_path,
		    strerror(v.undo_errno));
	if (v.undo_damaged > 0)
		say(&v, "%s: %u of its entries fail their checks (their runs "
		    "cannot be undone)", v.undo_path, v.undo_damaged);
	*problems = v.problems;
	rc = 0;
done:
	free(starts);
	verify_close(&v);
	return (rc);
}
