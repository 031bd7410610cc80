/*
 * index_verify.c: looking into an index file without using it, for
 * --db-info and --db-verify.
 *
 * Both take the shared lock, so they see the last committed state and
 * never a writer's work in progress. They read the files directly, not
 * through index_file.c, so that a damaged index is described, not refused:
 * verification walks the header copies, PATH.ids, every slot and the
 * committed records of PATH.log, and names each broken invariant it finds.
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
#include "index_format.h"

struct verify {
	char		*path;
	char		*ids_path;
	char		*log_path;
	int		 fd;
	int		 ids_fd;
	int		 ids_errno;	/* why ids_fd is -1 */
	int		 log_fd;
	int		 log_errno;	/* why log_fd is -1 */
	int		 lock_fd;
	struct nsd_index_header hdr;
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
	r->seed = h->seed;
	r->records = h->records;
	r->groups = h->groups;
	r->fingerprints = h->entries + h->log_records * h->ntables;
	r->log_records = h->log_records;
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
verify_close(struct verify *v)
{
	if (v->fd != -1)
		close(v->fd);
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

/* Lock, open and read the current header; sizes go into r. */
static int
verify_open(struct verify *v, const char *path, long wait_ms,
    struct nsd_index_report *r, struct nsd_error *err)
{
	struct stat	 sb;
	int		 copy;

	memset(v, 0, sizeof *v);
	v->path = nsd_index_resolve(path);
	path = v->path;
	v->fd = v->ids_fd = v->log_fd = v->lock_fd = -1;
	v->ids_path = nsd_index_path(path, ".ids");
	v->log_path = nsd_index_path(path, ".log");
	if (nsd_index_lock(path, 1, wait_ms, &v->lock_fd, err) == -1)
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
	if (nsd_index_read_header(v->fd, path, &v->hdr, &copy, err) == -1)
		return (-1);
	report_fill(&v->hdr, copy, r);
	r->file_size = sb.st_size;
	v->ids_fd = open_companion(v->ids_path, &v->ids_errno,
	    &r->ids_file_size);
	v->log_fd = open_companion(v->log_path, &v->log_errno,
	    &r->log_file_size);
	return (0);
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
	struct nsd_index_header	 h;
	enum nsd_header_state	 st;
	int			 i;

	for (i = 0; i < 2; i++) {
		if (pread(v->fd, buf, sizeof buf, (off_t)i *
		    NSD_INDEX_COPY_SIZE) != (ssize_t)sizeof buf)
			st = NSD_HEADER_DAMAGED;
		else
			st = nsd_index_header_decode(buf, &h);
		if (st != NSD_HEADER_OK)
			say(v, "header copy %c is %s; copy %c is in use",
			    'A' + i, nsd_index_header_problem(st), 'B' - i);
	}
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
	uint64_t			 off, n = 0, len;

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
	for (off = NSD_IDS_HEADER_SIZE; off < h->ids_length;
	    off += nsd_ids_record_size(len)) {
		if (off + NSD_IDS_RECORD_HEAD > h->ids_length) {
			say(v, "%s: a group record is cut off at byte %llu",
			    v->ids_path, (unsigned long long)off);
			break;
		}
		len = nsd_le32(ids + off + 8);
		if (nsd_le64(ids + off) != ++n) {
			say(v, "%s: the record at byte %llu is group %llu, "
			    "not %llu", v->ids_path, (unsigned long long)off,
			    (unsigned long long)nsd_le64(ids + off),
			    (unsigned long long)n);
			break;
		}
		if (off + nsd_ids_record_size(len) > h->ids_length) {
			say(v, "%s: group %llu's id runs past the committed "
			    "end", v->ids_path, (unsigned long long)n);
			break;
		}
		if (!nsd_ids_record_clean(ids + off, len))
			say(v, "%s: group %llu's id has control characters "
			    "or its padding is not zero", v->ids_path,
			    (unsigned long long)n);
		starts[off / 64] |= 1 << (off / 8 % 8);
	}
	if (n != h->groups)
		say(v, "%s holds %llu groups; the header says %llu",
		    v->ids_path, (unsigned long long)n,
		    (unsigned long long)h->groups);
	munmap(ids, h->ids_length);
}

/*
 * Whether group is the start of a committed group record, as marked in
 * starts by verify_ids. When PATH.ids is too short for what is committed
 * (starts is NULL), that was said, and no group is blamed for it.
 */
static int
is_group(const struct nsd_index_header *h, const unsigned char *starts,
    uint64_t group)
{
	return (starts == NULL || (group * 8 >= NSD_IDS_HEADER_SIZE &&
	    group * 8 < h->ids_length &&
	    (starts[group / 8] & 1 << (group % 8))));
}

/* Whether a slot holds a committed entry. */
static int
counts(const struct nsd_index_header *h, const struct nsd_index_slot *s)
{
	uint64_t	 gen = nsd_slot_gen(le64toh(s->meta));

	return (gen != 0 && gen <= h->committed_gen);
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
bucket_full(const struct nsd_index_header *h,
    const struct nsd_index_slot *slots, uint64_t bucket)
{
	unsigned	 j;

	for (j = 0; j < NSD_INDEX_BUCKET; j++)
		if (!counts(h, &slots[bucket * NSD_INDEX_BUCKET + j]))
			return (0);
	return (1);
}

/* One slot that does not count: zeroed, or left by an interrupted run. */
static void
verify_empty(struct verify *v, const struct nsd_index_slot *s, uint64_t i,
    struct nsd_index_report *r)
{
	const struct nsd_index_header	*h = &v->hdr;
	uint64_t			 meta = le64toh(s->meta);
	uint64_t			 gen = nsd_slot_gen(meta);

	if (gen > h->pending_gen)
		say(v, "slot %llu: generation %llu is after the last commit "
		    "(%llu)", (unsigned long long)i, (unsigned long long)gen,
		    (unsigned long long)h->committed_gen);
	else if (meta != 0 || s->key != 0) {
		if (h->pending_gen > h->committed_gen)
			r->leftovers++;
		else
			say(v, "slot %llu: empty, but not zeroed",
			    (unsigned long long)i);
	}
}

/*
 * Every slot: empty ones zeroed, generations committed (or left by a run
 * that did not commit, which is no damage), tables known, groups at the
 * start of a record, and each entry in its home bucket or after a run of
 * full buckets that starts there.
 */
static void
verify_slots(struct verify *v, const struct nsd_index_slot *slots,
    const unsigned char *starts, struct nsd_index_report *r)
{
	const struct nsd_index_header	*h = &v->hdr;
	uint64_t			 nb = h->nslots / NSD_INDEX_BUCKET;
	uint64_t			 bmask = nb - 1, n, k, z, i, meta;
	uint64_t			 group, home, start, entries = 0;
	unsigned			 shift, table, j;

	shift = home_shift(h->nslots);
	for (z = 0; z < nb && bucket_full(h, slots, z); z++)
		continue;
	if (z == nb) {
		say(v, "the table has no empty slot");
		return;
	}
	/* start: the first of the full buckets that end just before k. */
	start = (z + 1) & bmask;
	for (n = 1; n <= nb; n++) {
		k = (z + n) & bmask;
		for (j = 0; j < NSD_INDEX_BUCKET; j++) {
			i = k * NSD_INDEX_BUCKET + j;
			if (!counts(h, &slots[i])) {
				verify_empty(v, &slots[i], i, r);
				continue;
			}
			entries++;
			meta = le64toh(slots[i].meta);
			table = nsd_slot_table(meta);
			group = nsd_slot_group(meta);
			if (table >= h->ntables) {
				say(v, "slot %llu: table %u, but the index "
				    "has %u", (unsigned long long)i, table,
				    h->ntables);
				continue;
			}
			if (!is_group(h, starts, group))
				say(v, "slot %llu: group %llu is not a group "
				    "record", (unsigned long long)i,
				    (unsigned long long)group);
			home = nsd_index_home(h, table,
			    le64toh(slots[i].key), shift);
			if (((k - home / NSD_INDEX_BUCKET) & bmask) >
			    ((k - start) & bmask))
				say(v, "slot %llu: cannot be found from its "
				    "home slot %llu (a bucket in between has "
				    "an empty slot)", (unsigned long long)i,
				    (unsigned long long)home);
		}
		if (!bucket_full(h, slots, k))
			start = (k + 1) & bmask;
	}
	if (entries != h->entries)
		say(v, "the table holds %llu entries; the header says %llu",
		    (unsigned long long)entries,
		    (unsigned long long)h->entries);
}

#define ANY_GROUP	UINT64_MAX	/* for chain_find: whatever the group */
#define NOT_FOUND	UINT64_MAX

/*
 * The slot of table t's entry of key for group (or for any group), walking
 * its probe chain as a lookup does: to the first bucket with a slot that
 * does not count. NOT_FOUND when there is none. A SimHash may be entered
 * twice, for two groups (a record whose nearest old group is not the one
 * that holds its exact SimHash).
 */
static uint64_t
chain_find(const struct nsd_index_header *h,
    const struct nsd_index_slot *slots, unsigned shift, unsigned t,
    uint64_t key, uint64_t group)
{
	uint64_t	 nb = h->nslots / NSD_INDEX_BUCKET, b, n, i, meta;
	int		 room;

	b = nsd_index_home(h, t, key, shift) / NSD_INDEX_BUCKET;
	for (n = 0; n < nb; n++, b = (b + 1) & (nb - 1)) {
		room = 0;
		for (i = b * NSD_INDEX_BUCKET; i < (b + 1) *
		    NSD_INDEX_BUCKET; i++) {
			meta = le64toh(slots[i].meta);
			if (!counts(h, &slots[i]))
				room = 1;
			else if (nsd_slot_table(meta) == t &&
			    le64toh(slots[i].key) == key &&
			    (group == ANY_GROUP ||
			    nsd_slot_group(meta) == group))
				return (i);
		}
		if (room)
			break;
	}
	return (NOT_FOUND);
}

/*
 * SimHash block tables: a record's SimHash is entered in every table with
 * one group, all or none, so each table holds as many entries as the
 * first, and each entry of the first is found in every other table with
 * its group. One lookup per other table and entry: a random read each.
 */
static void
verify_tables(struct verify *v, const struct nsd_index_slot *slots)
{
	const struct nsd_index_header	*h = &v->hdr;
	uint64_t			 per[NSD_INDEX_MAX_TABLES] = { 0 };
	uint64_t			 i, meta, key;
	unsigned			 shift, t;

	if (h->ntables < 2)
		return;
	shift = home_shift(h->nslots);
	for (i = 0; i < h->nslots; i++) {
		if (!counts(h, &slots[i]))
			continue;
		meta = le64toh(slots[i].meta);
		if (nsd_slot_table(meta) >= h->ntables)
			continue;	/* said by verify_slots */
		per[nsd_slot_table(meta)]++;
		if (nsd_slot_table(meta) != 0)
			continue;
		key = le64toh(slots[i].key);
		for (t = 1; t < h->ntables; t++)
			if (chain_find(h, slots, shift, t, key,
			    nsd_slot_group(meta)) == NOT_FOUND)
				say(v, "slot %llu: SimHash %016llx of group "
				    "%llu is not in block table %u",
				    (unsigned long long)i,
				    (unsigned long long)key,
				    (unsigned long long)nsd_slot_group(meta),
				    t);
	}
	for (t = 1; t < h->ntables; t++)
		if (per[t] != per[0])
			say(v, "block table %u holds %llu entries; table 0 "
			    "holds %llu", t, (unsigned long long)per[t],
			    (unsigned long long)per[0]);
}

/* An nshash fingerprint of PATH.log, and the record that holds it. */
struct logged {
	uint64_t	 key;
	uint64_t	 record;
};

static int
logged_cmp(const void *a, const void *b)
{
	const struct logged	*x = a, *y = b;

	if (x->key != y->key)
		return (x->key < y->key ? -1 : 1);
	return (x->record < y->record ? -1 : x->record > y->record);
}

#define LOG_CHUNK	4096	/* records read at a time: 64 KiB */

/*
 * Read len bytes at off of fd: the bytes read, fewer only at the end of
 * the file, or -1.
 */
static ssize_t
read_at(int fd, unsigned char *buf, size_t len, uint64_t off)
{
	size_t	 done = 0;
	ssize_t	 n;

	while (done < len) {
		n = pread(fd, buf + done, len - done, (off_t)(off + done));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (-1);
		if (n == 0)
			break;
		done += n;
	}
	return (done);
}

/* What the check of each record of PATH.log needs besides the record. */
struct log_check {
	const struct nsd_index_slot *slots;	/* NULL: not mapped */
	const unsigned char *starts;		/* of the group records */
	unsigned	 shift;			/* of the table's homes */
	struct logged	*seen;			/* nshash only, else NULL */
};

/*
 * One committed record of PATH.log, number i: its slot word is that of a
 * table 0 entry of a committed run and a group that exists. For nshash,
 * its fingerprint must not also be in the table, and it goes into seen
 * for the check of repeats.
 */
static void
verify_log_record(struct verify *v, const struct log_check *c,
    const unsigned char *rec, uint64_t i)
{
	const struct nsd_index_header	*h = &v->hdr;
	uint64_t			 key = nsd_le64(rec);
	uint64_t			 meta = nsd_le64(rec + 8);
	uint64_t			 gen = nsd_slot_gen(meta), slot;

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
	if (c->slots != NULL && (slot = chain_find(h, c->slots, c->shift, 0,
	    key, ANY_GROUP)) != NOT_FOUND)
		say(v, "%s: record %llu: fingerprint %016llx is also in "
		    "slot %llu", v->log_path, (unsigned long long)i,
		    (unsigned long long)key, (unsigned long long)slot);
}

/*
 * The committed records of PATH.log, read a chunk at a time so that memory
 * does not grow with the log. Only the nshash check that no fingerprint
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
    const struct nsd_index_slot *slots, const unsigned char *starts)
{
	const struct nsd_index_header	*h = &v->hdr;
	struct log_check		 c = { slots, starts, 0, NULL };
	unsigned char			 head[NSD_LOG_HEADER_SIZE], *buf;
	uint64_t			 n = h->log_records, i, j, want;
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
	if ((got = read_at(v->log_fd, head, sizeof head, 0)) !=
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
	c.shift = home_shift(h->nslots);
	if (strcmp(h->method, "nshash") == 0 && n > 0)
		c.seen = xreallocarray(NULL, n, sizeof *c.seen);
	buf = xmalloc(LOG_CHUNK * NSD_LOG_RECORD_SIZE);
	for (i = 0; i < n; i += len / NSD_LOG_RECORD_SIZE) {
		len = (n - i < LOG_CHUNK ? n - i : LOG_CHUNK) *
		    NSD_LOG_RECORD_SIZE;
		got = read_at(v->log_fd, buf, len, NSD_LOG_HEADER_SIZE +
		    i * NSD_LOG_RECORD_SIZE);
		if (got != (ssize_t)len) {
			say(v, "%s: cannot read record %llu: %s", v->log_path,
			    (unsigned long long)(i + (got == -1 ? 0 :
			    got / NSD_LOG_RECORD_SIZE)),
			    got == -1 ? strerror(errno) : "it was cut short");
			n = i;
			break;
		}
		for (j = 0; j < len / NSD_LOG_RECORD_SIZE; j++)
			verify_log_record(v, &c, buf + j *
			    NSD_LOG_RECORD_SIZE, i + j);
	}
	free(buf);
	if (c.seen == NULL)
		return;
	/* nshash: a fingerprint is claimed once, so it is logged once. */
	qsort(c.seen, n, sizeof *c.seen, logged_cmp);
	for (i = 1, j = 0; i < n; i++) {
		if (c.seen[i].key != c.seen[j].key) {
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

int
nsd_index_verify(const char *path, long wait_ms,
    void (*problem)(void *, const char *), void *ctx, size_t max,
    struct nsd_index_report *r, uint64_t *problems, struct nsd_error *err)
{
	struct verify	 v;
	unsigned char	*map = MAP_FAILED, *starts = NULL;
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
		map = mmap(NULL, size, PROT_READ, MAP_SHARED, v.fd, 0);
		if (map == MAP_FAILED) {
			nsd_error_errno(err, NSD_EXIT_INDEX, path,
			    "cannot map");
			goto done;
		}
		verify_slots(&v, (const struct nsd_index_slot *)(map +
		    NSD_INDEX_TABLE_OFFSET), starts, r);
		verify_tables(&v, (const struct nsd_index_slot *)(map +
		    NSD_INDEX_TABLE_OFFSET));
	}
	verify_log(&v, r, map == MAP_FAILED ? NULL :
	    (const struct nsd_index_slot *)(map + NSD_INDEX_TABLE_OFFSET),
	    starts);
	*problems = v.problems;
	rc = 0;
done:
	if (map != MAP_FAILED)
		munmap(map, size);
	free(starts);
	verify_close(&v);
	return (rc);
}
