/*
 * index_file.c: the persistent index, a hash table in a mapped file.
 *
 * The file's layout is in index_format.h. This is how it is used.
 *
 * Lookups. The table is open addressing with linear probing over buckets
 * of four slots, one cache line each: an entry lives in its home bucket or
 * a later one, and every bucket in between is full, so a search reads
 * whole buckets from the home one to the first that has an empty slot. At
 * 75% load that is under two cache lines for a key that is not there,
 * where probing slot by slot walks eight slots over two or three. Nothing
 * is ever deleted from a committed table, which keeps the rule true.
 *
 * The log. A run does not store into the table (unless it fills the
 * log: see log_add()). A store into a page of a mapped file costs a
 * fault, and makes the kernel write the page back, which on a large table
 * is a page for nearly every new entry (on ext4 with large folios, a
 * whole folio: a run that adds 1% of a 2 GiB table wrote most of it). A
 * writer's new fingerprints go into memory (the overlay, a memory index)
 * and are appended to PATH.log; lookups read the table, then the overlay.
 * Opening the index loads the log's committed records into the overlay.
 * When the log reaches nsd_index_log_limit() records, the table is
 * rebuilt with them (merge()): one sequential pass that copies the table
 * and puts each new entry into the first empty slot of its chain, or,
 * when the table must grow, a larger table into which every entry is
 * inserted again. The rebuilt table goes to PATH.new, is synced and
 * renamed over PATH, and the log starts empty.
 *
 * Transactions. Every slot and log record carries the generation of the
 * run that wrote it. A run takes generation G = committed + 1 and, before
 * it adds its first fingerprint, records "pending G" in a header copy and
 * syncs it. To commit, it writes out and syncs the log and PATH.ids, then
 * writes the other header copy saying "committed G", with the log's new
 * length, and syncs that. The header write is the commit: before it, the
 * current header says G is pending and counts the log records before the
 * run's; after it, G is committed with its records. The table was not
 * written, so a commit costs what the run added however large the table
 * (a run that went on in place syncs the table first).
 *
 * A rebuild during a run puts the run's entries into the table too, and
 * its header says G is pending. A slot counts only if its generation is
 * committed or is the run's own; anything else is the leftover of a run
 * that did not commit, and reads as empty. It can never hide a committed
 * entry: committed entries are placed before the run's on every chain
 * (see merge()). The next writer that finds "pending" in the header
 * clears such slots (one pass over the table, only after a failure)
 * before it starts, so generation numbers are never reused over
 * leftovers. PATH.ids and PATH.log are append-only and only their
 * committed lengths count, so a failed run's records are simply written
 * over.
 *
 * Growth. When the table and the log together pass NSD_INDEX_MAX_LOAD
 * percent of the slots, the rebuild makes a larger table.
 *
 * Locking. A writer holds an exclusive flock on PATH.lock for the whole
 * run; --no-update runs hold a shared one, and keep the run's own claims
 * in the overlay beside the log's, and write nothing.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index.h"
#include "index_format.h"

#ifdef NSD_CRASH_POINTS
#include <signal.h>

/*
 * A test build stops dead, as kill -9 would, at the point named by
 * $NSDEDUP_CRASH_AT ("name", or "name:N" for its N-th passage); or sends
 * itself the signal numbered $NSDEDUP_CRASH_SIGNAL there instead.
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
		raise(getenv("NSDEDUP_CRASH_SIGNAL") != NULL ?
		    atoi(getenv("NSDEDUP_CRASH_SIGNAL")) : SIGKILL);
}
#define CRASH_POINT(name)	crash_point(name)
#else
#define CRASH_POINT(name)	((void)0)
#endif

/*
 * What the last lookups of a fingerprint found, so that the claim which
 * follows each (nsd_index_claim() right after nsd_index_lookup() is how
 * the pipeline decides a record) need not walk the chain again. Slots are
 * only ever filled, never emptied, while a table is in use, so a memo
 * stays true until growth (a new epoch) or until its empty slot is filled.
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

struct file_index {
	struct nsd_index	 base;		/* must be first */
	char			*path;
	char			*ids_path;
	char			*new_path;
	char			*log_path;
	int			 lock_fd;
	int			 fd;
	int			 ids_fd;
	int			 log_fd;
	int			 readonly;
	int			 simhash;	/* add, not claim */
	int			 in_place;	/* into the table, not the log:
						   see log_add() */
	struct nsd_index_header	 hdr;		/* the current copy */
	int			 copy;		/* which copy that is */
	unsigned char		*map;		/* the whole file */
	size_t			 map_len;
	struct nsd_index_slot	*slots;
	uint64_t		 mask;		/* nslots - 1 */
	unsigned		 shift;		/* 64 - log2(nslots) */
	uint64_t		 entries;	/* valid slots, the run's too */
	uint64_t		 log_records;	/* the run's too */
	uint64_t		 log_written;	/* of them, out of log_buf */
	unsigned char		 log_buf[LOG_BUFFER * NSD_LOG_RECORD_SIZE];
	uint64_t		 gen;		/* the run's; 0 until it
						   writes */
	unsigned char		*ids;
	size_t			 ids_cap;	/* bytes of PATH.ids mapped */
	uint64_t		 ids_len;	/* bytes used, the run's too */
	uint64_t		 groups;
	struct nsd_index	*overlay;	/* the log's fingerprints, and
						   the run's */
	struct memo		 memo[MEMO_SIZE];
	uint64_t		 epoch;		/* of the table, from 1 */
};

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

static int
slot_valid(const struct file_index *fi, uint64_t meta)
{
	uint64_t	 gen = nsd_slot_gen(meta);

	return (gen != 0 && (gen <= fi->hdr.committed_gen || gen == fi->gen));
}

/*
 * The slot of the entry of table with key, or (not found) of the first
 * empty slot of the first bucket that has one, where it would go; *found
 * says which. Only a damaged table has no empty slot: then -1.
 */
static int64_t
find(const struct file_index *fi, unsigned table, uint64_t key, int *found)
{
	uint64_t	 b, i, n, meta;
	int64_t		 empty;

	b = nsd_index_home(&fi->hdr, table, key, fi->shift) &
	    ~(uint64_t)(NSD_INDEX_BUCKET - 1);
	for (n = 0; n <= fi->mask; n += NSD_INDEX_BUCKET) {
		empty = -1;
		for (i = b; i < b + NSD_INDEX_BUCKET; i++) {
			meta = le64toh(fi->slots[i].meta);
			if (!slot_valid(fi, meta)) {
				if (empty == -1)
					empty = i;
			} else if (nsd_slot_table(meta) == table &&
			    le64toh(fi->slots[i].key) == key) {
				*found = 1;
				return (i);
			}
		}
		if (empty != -1) {
			*found = 0;
			return (empty);
		}
		b = (b + NSD_INDEX_BUCKET) & fi->mask;
	}
	return (-1);
}

static int
damaged_table(const struct file_index *fi, struct nsd_error *err)
{
	return (nsd_error_set(err, NSD_EXIT_INDEX,
	    "%s: damaged: the table has no empty slot (try --db-verify)",
	    fi->path));
}

/* Write one header copy, the one that is not current, and sync it. */
static int
write_header(struct file_index *fi, struct nsd_index_header *h,
    struct nsd_error *err)
{
	unsigned char	 old[NSD_INDEX_COPY_SIZE], copy[NSD_INDEX_COPY_SIZE];
	int		 other = !fi->copy;
	off_t		 at = (off_t)other * NSD_INDEX_COPY_SIZE;

	h->sequence = fi->hdr.sequence + 1;
	nsd_index_header_encode(h, copy);
	if (pread(fi->fd, old, sizeof old, at) != (ssize_t)sizeof old)
		return (commit_error(fi, "reading a header copy", err));
	/* From here on, the copy on disk may be the new one: see restore. */
	if (pwrite(fi->fd, copy, sizeof copy, at) != (ssize_t)sizeof copy) {
		commit_error(fi, "writing a header copy", err);
		goto restore;
	}
	CRASH_POINT("header-written");
	if (fdatasync(fi->fd) == -1) {
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
	if (pwrite(fi->fd, old, sizeof old, at) == (ssize_t)sizeof old)
		(void)fdatasync(fi->fd);
	return (-1);
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

/* Put one entry into a table being rebuilt, where find() would look. */
static void
rebuild_insert(const struct file_index *fi, struct nsd_index_slot *slots,
    uint64_t mask, unsigned shift, uint64_t key, uint64_t meta)
{
	uint64_t	 i;

	i = nsd_index_home(&fi->hdr, nsd_slot_table(meta), key, shift) &
	    ~(uint64_t)(NSD_INDEX_BUCKET - 1);
	while (slots[i].meta != 0)
		i = (i + 1) & mask;
	slots[i].key = htole64(key);
	slots[i].meta = htole64(meta);
}

/* Move the table's entries of one kind (committed, or the run's own). */
static void
rebuild_pass(const struct file_index *fi, struct nsd_index_slot *slots,
    uint64_t mask, unsigned shift, int own)
{
	uint64_t	 i, meta;

	for (i = 0; i <= fi->mask; i++) {
		meta = le64toh(fi->slots[i].meta);
		if (slot_valid(fi, meta) &&
		    (nsd_slot_gen(meta) == fi->gen) == own)
			rebuild_insert(fi, slots, mask, shift,
			    le64toh(fi->slots[i].key), meta);
	}
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

/* An entry of the log on its way into the table, by its home bucket. */
struct log_entry {
	uint64_t	 bucket;
	uint64_t	 key;
	uint64_t	 meta;
};

static int
log_entry_cmp(const void *a, const void *b)
{
	const struct log_entry	*x = a, *y = b;

	return (x->bucket < y->bucket ? -1 : x->bucket > y->bucket);
}

/*
 * The log's records [first, first + n) as entries of every table of a
 * table with 2^(64-shift) slots, into e (n * ntables of them), in the
 * order of their home buckets.
 */
static int
log_entries(struct file_index *fi, uint64_t first, uint64_t n,
    unsigned shift, struct log_entry *e, struct nsd_error *err)
{
	unsigned char	*rec;
	uint64_t	 i, k, key, meta;
	size_t		 chunk;
	unsigned	 t;

	for (i = 0, k = 0; i < n; i += chunk) {
		chunk = n - i < LOG_BUFFER ? n - i : LOG_BUFFER;
		if (log_read(fi, first + i, chunk, fi->log_buf) == -1)
			return (commit_error(fi, "reading the log", err));
		for (rec = fi->log_buf; rec < fi->log_buf + chunk *
		    NSD_LOG_RECORD_SIZE; rec += NSD_LOG_RECORD_SIZE) {
			key = nsd_le64(rec);
			meta = nsd_le64(rec + 8);
			for (t = 0; t < fi->hdr.ntables; t++, k++) {
				e[k].key = key;
				e[k].meta = meta |
				    (uint64_t)t << NSD_INDEX_TABLE_SHIFT;
				e[k].bucket = nsd_index_home(&fi->hdr, t, key,
				    shift) / NSD_INDEX_BUCKET;
			}
		}
	}
	qsort(e, k, sizeof *e, log_entry_cmp);
	return (0);
}

/*
 * The entries waiting for a slot in a sequential merge: those of e[0..n)
 * whose home bucket has been passed (next) and that have no slot yet
 * (head).
 */
struct merge_queue {
	const struct log_entry	*e;
	size_t			 n, head, next;
};

/* Give slot s, which is empty, to the longest waiting entry of q. */
static int
merge_take(struct merge_queue *q, struct nsd_index_slot *s)
{
	if (q->head == q->next)
		return (0);
	s->key = htole64(q->e[q->head].key);
	s->meta = htole64(q->e[q->head].meta);
	q->head++;
	return (1);
}

static void
merge_fill(struct merge_queue *committed, struct merge_queue *own,
    struct nsd_index_slot *bucket)
{
	unsigned	 i;

	for (i = 0; i < NSD_INDEX_BUCKET; i++)
		if (bucket[i].meta == 0 && !merge_take(committed, &bucket[i]))
			(void)merge_take(own, &bucket[i]);
}

/*
 * The entries still waiting at the end of merge_write()'s pass wrap
 * around to the first buckets, where the run's own entries may already
 * have taken slots; a committed entry must not come after one of them on
 * its chain. So a committed entry takes an empty slot or one of the
 * run's, and the entry of the run's it displaces waits for a later slot:
 * it only moves on past full buckets, so its own chain stays whole.
 */
static int
merge_wrap(struct file_index *fi, int fd, struct merge_queue *committed,
    struct merge_queue *own, uint64_t nbuckets, struct nsd_error *err)
{
	struct nsd_index_slot	 bucket[NSD_INDEX_BUCKET], *moved = NULL;
	size_t			 nmoved = 0, cap = 0;
	uint64_t		 b, meta;
	off_t			 at;
	unsigned		 i;
	int			 rc = -1;

	committed->next = committed->n;
	own->next = own->n;
	for (b = 0; committed->head < committed->n || own->head < own->n ||
	    nmoved > 0; b++) {
		if (b == nbuckets) {
			damaged_table(fi, err);
			goto out;
		}
		at = NSD_INDEX_TABLE_OFFSET + (off_t)(b * sizeof bucket);
		if (transfer_all(fd, bucket, sizeof bucket, at, 0) == -1) {
			commit_error(fi, "reading the merged table", err);
			goto out;
		}
		for (i = 0; i < NSD_INDEX_BUCKET; i++) {
			meta = le64toh(bucket[i].meta);
			if (committed->head < committed->n) {
				if (meta != 0 && nsd_slot_gen(meta) != fi->gen)
					continue;
				if (meta != 0) {
					if (nmoved == cap) {
						cap = cap > 0 ? 2 * cap : 16;
						moved = xreallocarray(moved,
						    cap, sizeof *moved);
					}
					moved[nmoved++] = bucket[i];
				}
				bucket[i].meta = 0;
				(void)merge_take(committed, &bucket[i]);
			} else if (meta == 0 && nmoved > 0)
				bucket[i] = moved[--nmoved];
			else if (meta == 0)
				(void)merge_take(own, &bucket[i]);
		}
		if (transfer_all(fd, bucket, sizeof bucket, at, 1) == -1) {
			commit_error(fi, "writing the merged table", err);
			goto out;
		}
	}
	rc = 0;
out:
	free(moved);
	return (rc);
}

/*
 * Write the table, with the log's entries put into it, to fd (a new file
 * of the same size) in one pass. A new entry takes the first empty slot
 * from its home bucket on, exactly where inserting it would have put it,
 * so every chain stays whole. Committed entries take their slots before
 * the run's: were the run's cleared after a failure, no committed chain
 * could then have an empty slot in it. (While the log holds committed
 * records no rebuild has happened in this run, so the table holds none
 * of the run's entries.)
 */
static int
merge_write(struct file_index *fi, int fd, const struct log_entry *e,
    size_t ncommitted, size_t n, unsigned char *header,
    struct nsd_error *err)
{
	struct merge_queue	 committed = { e, ncommitted, 0, 0 };
	struct merge_queue	 own = { e + ncommitted, n - ncommitted, 0, 0 };
	struct nsd_index_slot	*out;
	uint64_t		 b, nbuckets;
	size_t			 fill = 0, cap = 1 << 16;	/* slots */
	unsigned		 i;
	off_t			 at = NSD_INDEX_TABLE_OFFSET;
	int			 rc = -1;

	nbuckets = (fi->mask + 1) / NSD_INDEX_BUCKET;
	if (transfer_all(fd, header, NSD_INDEX_TABLE_OFFSET, 0, 1) == -1)
		return (commit_error(fi, "writing the merged table", err));
	out = xcalloc(cap, sizeof *out);
	for (b = 0; b < nbuckets; b++) {
		for (i = 0; i < NSD_INDEX_BUCKET; i++) {
			out[fill + i] = fi->slots[b * NSD_INDEX_BUCKET + i];
			if (!slot_valid(fi, le64toh(out[fill + i].meta)))
				memset(&out[fill + i], 0, sizeof out[0]);
		}
		while (committed.next < committed.n &&
		    committed.e[committed.next].bucket <= b)
			committed.next++;
		while (own.next < own.n && own.e[own.next].bucket <= b)
			own.next++;
		merge_fill(&committed, &own, &out[fill]);
		if ((fill += NSD_INDEX_BUCKET) == cap || b + 1 == nbuckets) {
			if (transfer_all(fd, out, fill * sizeof *out, at,
			    1) == -1) {
				commit_error(fi, "writing the merged table",
				    err);
				goto out;
			}
			at += fill * sizeof *out;
			fill = 0;
		}
	}
	rc = merge_wrap(fi, fd, &committed, &own, nbuckets, err);
out:
	free(out);
	return (rc);
}

/*
 * Rebuild the table with the log merged in: into PATH.new, which is
 * synced and renamed over PATH; the log then starts empty. With steps 0
 * the table keeps its size and is written in one pass (merge_write());
 * otherwise it grows 2^steps-fold and every entry is inserted again,
 * committed ones first. The new header says what the current one does,
 * with the committed log records counted as the table's.
 */
static int
merge(struct file_index *fi, unsigned steps, struct nsd_error *err)
{
	struct nsd_index_header	 h = fi->hdr;
	unsigned char		 copy[NSD_INDEX_TABLE_OFFSET], *map = NULL;
	struct nsd_index_slot	*slots;
	struct log_entry	*e = NULL;
	struct stat		 sb;
	const char		*what;
	uint64_t		 size, ncommitted, n, i;
	unsigned		 shift = fi->shift - steps;
	int			 fd = -1;

	if (log_flush(fi, err) == -1)
		return (-1);
	if (fstat(fi->fd, &sb) == -1)
		return (commit_error(fi, "fstat", err));
	h.nslots = (fi->mask + 1) << steps;
	size = nsd_index_file_size(h.nslots);
	if (h.nslots > (1ULL << 40)) {
		errno = EFBIG;
		return (commit_error(fi, "growing the table", err));
	}
	/* The overlay goes: what it holds is read again from the log. */
	nsd_index_close(fi->overlay);
	fi->overlay = NULL;
	ncommitted = fi->hdr.log_records * fi->hdr.ntables;
	n = fi->log_records * fi->hdr.ntables;
	e = xcalloc(n > 0 ? n : 1, sizeof *e);
	if (log_entries(fi, 0, fi->hdr.log_records, shift, e, err) == -1 ||
	    log_entries(fi, fi->hdr.log_records, fi->log_records -
	    fi->hdr.log_records, shift, e + ncommitted, err) == -1)
		goto fail;
	h.sequence = fi->hdr.sequence + 1;
	h.entries = fi->hdr.entries + ncommitted;
	h.log_records = 0;
	/* Both copies alike: the committed state, and the run pending. */
	nsd_index_header_encode(&h, copy);
	memcpy(copy + NSD_INDEX_COPY_SIZE, copy, NSD_INDEX_COPY_SIZE);
	if (create_reserved(fi->new_path, size, sb.st_mode & 07777, 1, &fd,
	    &what) == -1) {
		commit_error(fi, what, err);
		goto fail;
	}
	/*
	 * Others who share the index must still open it: keep its owner and
	 * group where allowed (which clears set-id bits, so the mode again).
	 */
	if (fchown(fd, sb.st_uid, sb.st_gid) == 0)
		(void)fchmod(fd, sb.st_mode & 07777);
	if (steps == 0 &&
	    merge_write(fi, fd, e, ncommitted, n, copy, err) == -1)
		goto fail_new;
	if (map_new(fi->new_path, size, fd, &map, &what) == -1) {
		fd = -1;
		commit_error(fi, what, err);
		goto fail;
	}
	slots = (struct nsd_index_slot *)(map + NSD_INDEX_TABLE_OFFSET);
	if (steps > 0) {
		memcpy(map, copy, sizeof copy);
		rebuild_pass(fi, slots, h.nslots - 1, shift, 0);
		for (i = 0; i < ncommitted; i++)
			rebuild_insert(fi, slots, h.nslots - 1, shift,
			    e[i].key, e[i].meta);
		rebuild_pass(fi, slots, h.nslots - 1, shift, 1);
		for (; i < n; i++)
			rebuild_insert(fi, slots, h.nslots - 1, shift,
			    e[i].key, e[i].meta);
	}
	free(e);
	e = NULL;
	if (sync_map(fi, map, size, fd, "the new table", err) == -1)
		goto fail_new;
	CRASH_POINT(steps == 0 ? "merge-built" : "grow-built");
	if (rename(fi->new_path, fi->path) == -1) {
		commit_error(fi, "renaming the rebuilt table into place", err);
		goto fail_new;
	}
	CRASH_POINT(steps == 0 ? "merge-renamed" : "grow-renamed");
	/* The log is written over from here on: the rename must last. */
	if (sync_dir(fi->path) == -1) {
		commit_error(fi, "syncing the index's directory", err);
		munmap(map, size);
		close(fd);
		goto fail;
	}
	munmap(fi->map, fi->map_len);
	close(fi->fd);
	fi->fd = fd;
	fi->map = map;
	fi->map_len = size;
	fi->slots = slots;
	fi->mask = h.nslots - 1;
	fi->shift = shift;
	fi->hdr = h;
	fi->copy = 0;
	fi->epoch++;
	fi->entries += n;
	fi->log_records = fi->log_written = 0;
	return (nsd_index_open_memory(&fi->overlay, &fi->base.params, err));
fail_new:
	if (map != NULL)
		munmap(map, size);
	if (fd != -1)
		close(fd);
	(void)unlink(fi->new_path);
fail:
	free(e);
	/* The run fails; what it still asks must find an overlay. */
	if (fi->overlay == NULL)
		(void)nsd_index_open_memory(&fi->overlay, &fi->base.params,
		    NULL);
	return (-1);
}

/*
 * Whether the overlay holds nothing: a writer's holds the log's records
 * and nothing else, so a run that went on in place (or a new index) skips
 * it on every lookup.
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

/* Store key, for group, into every table's chain: a run in place. */
static int
table_add(struct file_index *fi, uint64_t key, uint64_t group,
    struct nsd_error *err)
{
	uint64_t	 b, i, n;
	unsigned	 t;

	for (t = 0; t < fi->hdr.ntables; t++) {
		b = nsd_index_home(&fi->hdr, t, key, fi->shift) &
		    ~(uint64_t)(NSD_INDEX_BUCKET - 1);
		for (n = 0, i = b; slot_valid(fi, le64toh(fi->slots[i].meta));
		    i = (i + 1) & fi->mask)
			if (++n > fi->mask)
				return (damaged_table(fi, err));
		fi->slots[i].key = htole64(key);
		fi->slots[i].meta = htole64(nsd_slot_meta(fi->gen, t, group));
		fi->entries++;
	}
	return (0);
}

/*
 * A writer's new fingerprint: into the overlay and the log; then, when
 * the table with the log would be too loaded, grow (a table of fewer than
 * NSD_INDEX_FAST_GROWTH slots grows eightfold, which spares a run that
 * starts small most of the rebuilds and their syncs; a larger one
 * doubles), and when the log is full, merge it into the table.
 *
 * A run that filled at least half of the log itself is a large one, a
 * bulk load more than a day's news: rebuilding the table every time the
 * log fills again would write the table over and over. After that first
 * merge, such a run goes on in place: it stores its entries into the
 * table, and its commit syncs the table, as the first version of the
 * format did. A run that only tipped the log over goes on with the log.
 */
static int
log_add(struct file_index *fi, uint64_t key, uint64_t group,
    struct nsd_error *err)
{
	unsigned char	*rec;
	uint64_t	 nslots = fi->mask + 1;

	if (begin(fi, err) == -1)
		return (-1);
	if (fi->in_place) {
		if (table_add(fi, key, group, err) == -1)
			return (-1);
		CRASH_POINT("insert");
		if (fi->entries * 100 > nslots * fi->hdr.max_load)
			return (merge(fi, nslots < NSD_INDEX_FAST_GROWTH ?
			    3 : 1, err));
		return (0);
	}
	if (overlay_put(fi, key, group, err) == -1)
		return (-1);
	if (fi->log_records - fi->log_written == LOG_BUFFER &&
	    log_flush(fi, err) == -1)
		return (-1);
	rec = fi->log_buf + (fi->log_records - fi->log_written) *
	    NSD_LOG_RECORD_SIZE;
	nsd_put_le64(rec, key);
	nsd_put_le64(rec + 8, nsd_slot_meta(fi->gen, 0, group));
	fi->log_records++;
	CRASH_POINT("insert");
	if ((fi->entries + fi->log_records * fi->hdr.ntables) * 100 >
	    nslots * fi->hdr.max_load)
		return (merge(fi, nslots < NSD_INDEX_FAST_GROWTH ? 3 : 1, err));
	if (fi->log_records >= nsd_index_log_limit(nslots, fi->hdr.ntables)) {
		fi->in_place = (fi->log_records - fi->hdr.log_records) * 2 >=
		    fi->log_records;
		return (merge(fi, 0, err));
	}
	return (0);
}

static void
file_prefetch(struct nsd_index *ix, uint64_t fp)
{
	struct file_index	*fi = (struct file_index *)ix;
	uint64_t		 home;
	unsigned		 t;

	/* The home bucket, and the next one, often read too near full load. */
	for (t = 0; t < fi->hdr.ntables; t++) {
		home = nsd_index_home(&fi->hdr, t, fp, fi->shift) &
		    ~(uint64_t)(NSD_INDEX_BUCKET - 1);
		__builtin_prefetch(&fi->slots[home]);
		__builtin_prefetch(&fi->slots[(home + NSD_INDEX_BUCKET) &
		    fi->mask]);
	}
}

static int
file_lookup(struct nsd_index *ix, uint64_t fp, uint64_t *group,
    struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	int64_t			 i;
	int			 found;

	struct memo		*m = &fi->memo[fp % MEMO_SIZE];

	if ((i = find(fi, 0, fp, &found)) == -1)
		return (damaged_table(fi, err));
	m->key = fp;
	m->slot = i;
	m->found = found;
	m->epoch = fi->epoch;
	if (found) {
		*group = nsd_slot_group(le64toh(fi->slots[i].meta));
		return (0);
	}
	if (overlay_empty(fi)) {
		*group = 0;
		return (0);
	}
	return (nsd_index_lookup(fi->overlay, fp, group, err));
}

static int
file_claim(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	const struct memo	*m = &fi->memo[fp % MEMO_SIZE];
	uint64_t		 claimed;
	int64_t			 i;
	int			 found;

	if (m->epoch == fi->epoch && m->key == fp && (m->found ||
	    !slot_valid(fi, le64toh(fi->slots[m->slot].meta)))) {
		i = m->slot;
		found = m->found;
	} else if ((i = find(fi, 0, fp, &found)) == -1)
		return (damaged_table(fi, err));
	if (found)
		return (0);		/* first claim wins */
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
 * SimHash: every table's chain for fp, up to the first bucket with room;
 * an entry of that table that agrees with fp under its mask is a
 * candidate, and one within distance k a match.
 */
static int
file_near(struct nsd_index *ix, uint64_t fp, unsigned k,
    struct nsd_index_near *near, struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	struct nsd_index_near	 mine;
	uint64_t		 b, i, n, meta, g;
	unsigned		 t, d;
	int			 full;

	memset(near, 0, sizeof *near);
	for (t = 0; t < fi->hdr.ntables; t++) {
		b = nsd_index_home(&fi->hdr, t, fp, fi->shift) &
		    ~(uint64_t)(NSD_INDEX_BUCKET - 1);
		for (n = 0, full = 1; full; n += NSD_INDEX_BUCKET) {
			if (n > fi->mask)
				return (damaged_table(fi, err));
			for (i = b; i < b + NSD_INDEX_BUCKET; i++) {
				meta = le64toh(fi->slots[i].meta);
				if (!slot_valid(fi, meta)) {
					full = 0;
					continue;
				}
				if (nsd_slot_table(meta) != t ||
				    ((le64toh(fi->slots[i].key) ^ fp) &
				    fi->hdr.mask[t]) != 0)
					continue;
				near->candidates++;
				d = (unsigned)__builtin_popcountll(
				    le64toh(fi->slots[i].key) ^ fp);
				g = nsd_slot_group(meta);
				if (d <= k && (near->group == 0 ||
				    g < near->group || (g == near->group &&
				    d < near->distance))) {
					near->group = g;
					near->distance = d;
				}
			}
			b = (b + NSD_INDEX_BUCKET) & fi->mask;
		}
	}
	if (overlay_empty(fi))
		return (0);
	/* The overlay's entries: newer than any in the table. */
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
    uint64_t *group, struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	uint64_t		 size = nsd_ids_record_size(len);
	unsigned char		*rec;

	if (fi->readonly) {
		if (nsd_index_group_new(fi->overlay, id, len, group,
		    err) == -1)
			return (-1);
		*group += SCRATCH_BASE;
		return (0);
	}
	if (len > UINT32_MAX || (fi->ids_len + size) / 8 > NSD_INDEX_GROUP_MAX)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the id file is full", fi->path));
	if (begin(fi, err) == -1 || ids_reserve(fi, size, err) == -1)
		return (-1);
	rec = fi->ids + fi->ids_len;
	memset(rec, 0, size);
	nsd_put_le64(rec, fi->hdr.groups + ++fi->groups);
	nsd_put_le32(rec + 8, len);
	memcpy(rec + NSD_IDS_RECORD_HEAD, id, len);
	*group = fi->ids_len / 8;
	fi->ids_len += size;
	return (0);
}

static int
file_group_name(struct nsd_index *ix, uint64_t group,
    struct nsd_group_name *name, struct nsd_error *err)
{
	struct file_index	*fi = (struct file_index *)ix;
	const unsigned char	*rec;
	uint64_t		 off = group * 8;

	if (group >= SCRATCH_BASE) {
		if (nsd_index_group_name(fi->overlay, group - SCRATCH_BASE,
		    name, err) == -1)
			return (-1);
		name->number += fi->hdr.groups;
		return (0);
	}
	if (off < NSD_IDS_HEADER_SIZE ||
	    off + NSD_IDS_RECORD_HEAD > fi->ids_len)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: damaged: a slot names group %llu, past the end of "
		    "%s (try --db-verify)", fi->path,
		    (unsigned long long)group, fi->ids_path));
	rec = fi->ids + off;
	name->number = nsd_le64(rec);
	name->id_len = nsd_le32(rec + 8);
	if (off + nsd_ids_record_size(name->id_len) > fi->ids_len ||
	    name->number == 0 || name->number > fi->hdr.groups + fi->groups ||
	    !nsd_ids_record_clean(rec, name->id_len))
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: damaged: group %llu of %s is not a good group record "
		    "(try --db-verify)", fi->path, (unsigned long long)group,
		    fi->ids_path));
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
		/* Unless in place, only merge() wrote the table, and synced. */
		if (fi->in_place && sync_map(fi, fi->map, fi->map_len, fi->fd,
		    "the table", err) == -1)
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
	h.entries = fi->entries;
	h.log_records = fi->log_records;
	h.ids_length = fi->ids_len;
	h.committed_at = time(NULL);
	if (write_header(fi, &h, err) == -1)
		return (-1);
	CRASH_POINT("committed");
	fi->gen = 0;
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
	info->fingerprints += fi->entries;
	info->groups += fi->hdr.groups + fi->groups;
	info->memory += sizeof *fi;
	info->peak += sizeof *fi;
	info->mapped = fi->map_len + fi->ids_cap;
}

static void
file_close(struct nsd_index *ix)
{
	struct file_index	*fi = (struct file_index *)ix;

	nsd_index_close(fi->overlay);
	if (fi->map != NULL)
		munmap(fi->map, fi->map_len);
	if (fi->ids != NULL)
		munmap(fi->ids, fi->ids_cap);
	if (fi->fd != -1)
		close(fi->fd);
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
	free(fi);
}

static const struct nsd_index_ops file_ops = {
	file_prefetch, file_lookup, file_claim, file_near, file_add,
	file_group_new, file_group_name,
	file_commit, file_info, file_close
};

/* Refuse an index made with other fingerprint parameters, naming one. */
static int
check_params(const struct file_index *fi, const struct nsd_index_params *p,
    struct nsd_error *err)
{
	const struct nsd_index_header	*h = &fi->hdr;
	const char			*what = NULL;
	unsigned long long		 was = 0, now = 0;

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
	if (what != NULL)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with %s %llu, not %llu", fi->path,
		    what, was, now));
	if (h->compat != (unsigned)p->compat)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made %s --compat=nshash", fi->path,
		    h->compat ? "with" : "without"));
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
		    "%s: truncated (%llu bytes, the index has committed %llu)",
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
		    "%s: not the id file of %s", fi->ids_path, fi->path));
	if (!fi->readonly && reserve(fi, fi->ids_fd, sb.st_size,
	    "the id file", err) == -1)
		return (-1);
	fi->ids_len = fi->hdr.ids_length;
	return (0);
}

/*
 * After a run that did not commit: clear the slots it left, so that its
 * generation number can be taken again, and say the index is clean.
 */
static int
recover(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_index_header	 h;
	uint64_t		 i, meta;

	for (i = 0; i <= fi->mask; i++) {
		meta = le64toh(fi->slots[i].meta);
		if (nsd_slot_gen(meta) == 0 ? meta != 0 ||
		    fi->slots[i].key != 0 :
		    nsd_slot_gen(meta) > fi->hdr.committed_gen)
			memset(&fi->slots[i], 0, sizeof fi->slots[i]);
	}
	if (sync_map(fi, fi->map, fi->map_len, fi->fd, "the table",
	    err) == -1)
		return (-1);
	h = fi->hdr;
	h.pending_gen = h.committed_gen;
	return (write_header(fi, &h, err));
}

/* Open the index file itself, creating it when allowed. */
static int
open_table(struct file_index *fi, const struct nsd_index_params *p,
    struct nsd_error *err)
{
	struct stat	 sb;

	fi->fd = open(fi->path, (fi->readonly ? O_RDONLY : O_RDWR) |
	    NSD_OPEN_FLAGS);
	if (fi->fd == -1 && errno == ENOENT && !fi->readonly) {
		if (create_index(fi, p, err) == -1)
			return (-1);
		fi->fd = open(fi->path, O_RDWR | NSD_OPEN_FLAGS);
	}
	if (fi->fd == -1) {
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
	if (nsd_index_fstat(fi->fd, fi->path, &sb, err) == -1)
		return (-1);
	if (nsd_index_read_header(fi->fd, fi->path, &fi->hdr, &fi->copy,
	    err) == -1)
		return (-1);
	if ((uint64_t)sb.st_size != nsd_index_file_size(fi->hdr.nslots))
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: %s (%llu bytes, the header says %llu)", fi->path,
		    (uint64_t)sb.st_size < nsd_index_file_size(fi->hdr.nslots) ?
		    "truncated" : "has bytes past its table",
		    (unsigned long long)sb.st_size,
		    (unsigned long long)nsd_index_file_size(fi->hdr.nslots)));
	if (check_params(fi, p, err) == -1)
		return (-1);
	/* An older version is read, and the run fingerprints by it. */
	fi->base.params.norm_version = fi->hdr.norm_version;
	if (!fi->readonly && reserve(fi, fi->fd, sb.st_size, "the table",
	    err) == -1)
		return (-1);
	fi->map_len = sb.st_size;
	fi->map = mmap(NULL, fi->map_len, PROT_READ |
	    (fi->readonly ? 0 : PROT_WRITE), MAP_SHARED, fi->fd, 0);
	if (fi->map == MAP_FAILED) {
		fi->map = NULL;
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->path,
		    "cannot map"));
	}
	fi->slots = (struct nsd_index_slot *)(fi->map +
	    NSD_INDEX_TABLE_OFFSET);
	fi->mask = fi->hdr.nslots - 1;
	fi->shift = 64 - log2_of(fi->hdr.nslots);
	fi->entries = fi->hdr.entries;
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
		    "%s: truncated (%llu bytes, the index has committed %llu)",
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
		    "%s: not the log of %s", fi->log_path, fi->path));
	if (sb.st_size == 0 && fstat(fi->fd, &table) == 0 &&
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

/* Load the log's committed records into the overlay, checking each. */
static int
load_log(struct file_index *fi, struct nsd_error *err)
{
	const unsigned char	*rec;
	uint64_t		 i, n = fi->hdr.log_records, meta, gen, off;
	size_t			 chunk, k;

	for (i = 0; i < n; i += chunk) {
		chunk = n - i < LOG_BUFFER ? n - i : LOG_BUFFER;
		if (log_read(fi, i, chunk, fi->log_buf) == -1)
			return (nsd_error_errno(err, NSD_EXIT_INDEX,
			    fi->log_path, "cannot read"));
		for (k = 0; k < chunk; k++) {
			rec = fi->log_buf + k * NSD_LOG_RECORD_SIZE;
			meta = nsd_le64(rec + 8);
			gen = nsd_slot_gen(meta);
			off = nsd_slot_group(meta) * 8;
			if (nsd_slot_table(meta) != 0 || gen == 0 ||
			    gen > fi->hdr.committed_gen ||
			    off < NSD_IDS_HEADER_SIZE ||
			    off + NSD_IDS_RECORD_HEAD > fi->hdr.ids_length)
				return (nsd_error_set(err, NSD_EXIT_INDEX,
				    "%s: damaged: record %llu is not a "
				    "committed fingerprint (try --db-verify)",
				    fi->log_path,
				    (unsigned long long)(i + k)));
			if (overlay_put(fi, nsd_le64(rec),
			    nsd_slot_group(meta), err) == -1)
				return (-1);
		}
	}
	fi->log_records = fi->log_written = n;
	return (0);
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
	fi->fd = fi->ids_fd = fi->log_fd = fi->lock_fd = -1;
	fi->readonly = o->readonly;
	fi->simhash = strcmp(p->method, "simhash") == 0;
	fi->epoch = 1;
	if (nsd_index_lock(fi->path, o->readonly, o->wait_ms, &fi->lock_fd,
	    err) == -1 || open_table(fi, p, err) == -1 ||
	    open_ids(fi, err) == -1 || open_log(fi, err) == -1)
		goto fail;
	if (!fi->readonly) {
		(void)unlink(fi->new_path);	/* a rebuild cut short */
		fi->base.scratch = fi->new_path;
		if (fi->hdr.pending_gen > fi->hdr.committed_gen &&
		    recover(fi, err) == -1)
			goto fail;
		/*
		 * A run killed between a rebuild's rename and the sync of the
		 * directory left a table whose log starts empty: before this
		 * run writes over the old log, that rename must last.
		 */
		if (sync_dir(fi->path) == -1) {
			nsd_error_errno(err, NSD_EXIT_INDEX, fi->path,
			    "cannot sync the index's directory");
			goto fail;
		}
	}
	if (nsd_index_open_memory(&fi->overlay, p, err) == -1 ||
	    load_log(fi, err) == -1)
		goto fail;
	*ixp = &fi->base;
	return (0);
fail:
	file_close(&fi->base);
	return (-1);
}
