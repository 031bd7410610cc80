/*
 * index_format.c: header copies to and from their bytes on disk.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "index_format.h"

/* The layout nsdedup-index(5) describes; changing it needs a new version. */
static_assert(sizeof(struct nsd_index_slot) == NSD_INDEX_SLOT_SIZE,
    "slot size");
static_assert(offsetof(struct nsd_index_header, version) == 8, "version");
static_assert(offsetof(struct nsd_index_header, byte_order) == 16, "bom");
static_assert(offsetof(struct nsd_index_header, file_id) == 24, "file id");
static_assert(offsetof(struct nsd_index_header, sequence) == 32, "sequence");
static_assert(offsetof(struct nsd_index_header, method) == 40, "method");
static_assert(offsetof(struct nsd_index_header, sentences) == 56,
    "sentences");
static_assert(offsetof(struct nsd_index_header, seed) == 72, "seed");
static_assert(offsetof(struct nsd_index_header, distance) == 80, "distance");
static_assert(offsetof(struct nsd_index_header, mask) == 88, "masks");
static_assert(offsetof(struct nsd_index_header, nslots) == 216, "nslots");
static_assert(offsetof(struct nsd_index_header, committed_gen) == 232,
    "generations");
static_assert(offsetof(struct nsd_index_header, records) == 248, "counts");
static_assert(offsetof(struct nsd_index_header, ids_length) == 272, "ids");
static_assert(offsetof(struct nsd_index_header, created) == 280, "times");
static_assert(offsetof(struct nsd_index_header, ngram) == 296, "simhash");
static_assert(offsetof(struct nsd_index_header, next_shift) == 308, "next");
static_assert(offsetof(struct nsd_index_header, log_records) == 312, "log");
static_assert(offsetof(struct nsd_index_header, stage_seq) == 320, "stage");
static_assert(offsetof(struct nsd_index_header, sweep_cursor) == 328,
    "sweep");
static_assert(offsetof(struct nsd_index_header, next_entries) == 352,
    "growth");
static_assert(offsetof(struct nsd_index_header, bins) ==
    NSD_INDEX_V3_CHECKSUM, "minhash");
static_assert(offsetof(struct nsd_index_header, log_sum) ==
    NSD_INDEX_V4_CHECKSUM, "checks");
static_assert(offsetof(struct nsd_index_header, last_group) == 384,
    "last group");
static_assert(offsetof(struct nsd_index_header, sketch_bytes) ==
    NSD_INDEX_V5_CHECKSUM, "sketches");
static_assert(offsetof(struct nsd_index_header, ttl) == 396, "window");
static_assert(offsetof(struct nsd_index_header, ids_start) ==
    NSD_INDEX_V7_CHECKSUM, "first group kept");
static_assert(offsetof(struct nsd_index_header, checksum) + 8 ==
    sizeof(struct nsd_index_header), "checksum last");
static_assert(sizeof(struct nsd_index_header) == 416, "header size");
static_assert(sizeof(struct nsd_index_header) <= NSD_INDEX_COPY_SIZE,
    "header copy room");
static_assert(offsetof(struct nsd_stage_header, seq) == 24, "stage seq");
static_assert(offsetof(struct nsd_stage_header, max_gen) == 56,
    "stage gen");
static_assert(offsetof(struct nsd_stage_header, checksum) == 96,
    "stage checksum");
static_assert(sizeof(struct nsd_stage_header) == 104, "stage header size");
static_assert(NSD_UNDO_HEAD + sizeof(struct nsd_index_header) + 8 <=
    NSD_UNDO_ENTRY_SIZE, "undo entry room");
static_assert(sizeof(struct nsd_stage_header) <= NSD_STAGE_OFFSET,
    "stage header room");

uint32_t
nsd_ids_record_sum(const unsigned char *rec, uint64_t group,
    uint64_t sig_bytes)
{
	uint64_t	 size = nsd_ids_record_bytes(nsd_le32(rec + 8),
	    sig_bytes);

	return ((uint32_t)XXH3_64bits_withSeed(rec + 8, size - 8,
	    group << 32 | nsd_le32(rec)));
}

uint64_t
nsd_log_record_sum(const unsigned char *rec, uint64_t i)
{
	return (XXH3_64bits_withSeed(rec, NSD_LOG_RECORD_SIZE, i));
}

int
nsd_ids_record_clean(const unsigned char *rec, uint32_t len)
{
	uint64_t	 i, end = nsd_ids_record_size(len);

	for (i = NSD_IDS_RECORD_HEAD; i < NSD_IDS_RECORD_HEAD + len; i++)
		if (rec[i] < 0x20 || rec[i] == 0x7f)
			return (0);
	for (; i < end; i++)
		if (rec[i] != 0)
			return (0);
	return (1);
}

/*
 * Swap every field between host and disk order; the same function both
 * ways, since a byte swap is its own inverse (and nothing on little-endian
 * machines).
 */
static void
header_swap(struct nsd_index_header *h)
{
	size_t	 i;

	h->version = le32toh(h->version);
	h->size = le32toh(h->size);
	h->byte_order = le64toh(h->byte_order);
	h->file_id = le64toh(h->file_id);
	h->sequence = le64toh(h->sequence);
	h->sentences = le32toh(h->sentences);
	h->min_length = le32toh(h->min_length);
	h->compat = le32toh(h->compat);
	h->norm_version = le32toh(h->norm_version);
	h->seed = le64toh(h->seed);
	h->distance = le32toh(h->distance);
	h->ntables = le32toh(h->ntables);
	for (i = 0; i < NSD_INDEX_MAX_TABLES; i++)
		h->mask[i] = le64toh(h->mask[i]);
	h->nslots = le64toh(h->nslots);
	h->slot_size = le32toh(h->slot_size);
	h->max_load = le32toh(h->max_load);
	h->committed_gen = le64toh(h->committed_gen);
	h->pending_gen = le64toh(h->pending_gen);
	h->records = le64toh(h->records);
	h->groups = le64toh(h->groups);
	h->entries = le64toh(h->entries);
	h->ids_length = le64toh(h->ids_length);
	h->created = le64toh(h->created);
	h->committed_at = le64toh(h->committed_at);
	h->ngram = le32toh(h->ngram);
	h->shingle = le32toh(h->shingle);
	h->min_features = le32toh(h->min_features);
	h->next_shift = le32toh(h->next_shift);
	h->log_records = le64toh(h->log_records);
	h->stage_seq = le64toh(h->stage_seq);
	h->sweep_cursor = le64toh(h->sweep_cursor);
	h->sweep_done = le64toh(h->sweep_done);
	h->grow_done = le64toh(h->grow_done);
	h->next_entries = le64toh(h->next_entries);
	h->bins = le32toh(h->bins);
	h->bands = le32toh(h->bands);
	h->rows = le32toh(h->rows);
	h->threshold = le32toh(h->threshold);
	h->log_sum = le64toh(h->log_sum);
	h->last_group = le64toh(h->last_group);
	h->sketch_bytes = le32toh(h->sketch_bytes);
	h->ttl = le32toh(h->ttl);
	h->ids_start = le64toh(h->ids_start);
	h->checksum = le64toh(h->checksum);
}

/* The stage header between host and disk order, both ways. */
static void
stage_swap(struct nsd_stage_header *s)
{
	size_t	 i;

	s->version = le32toh(s->version);
	s->size = le32toh(s->size);
	s->file_id = le64toh(s->file_id);
	s->seq = le64toh(s->seq);
	s->nslots = le64toh(s->nslots);
	s->entries = le64toh(s->entries);
	s->fold_cursor = le64toh(s->fold_cursor);
	s->max_gen = le64toh(s->max_gen);
	for (i = 0; i < sizeof s->reserved / sizeof s->reserved[0]; i++)
		s->reserved[i] = le64toh(s->reserved[i]);
	s->checksum = le64toh(s->checksum);
}

void
nsd_stage_header_encode(const struct nsd_stage_header *s, void *page)
{
	struct nsd_stage_header	 d = *s;

	memcpy(d.magic, NSD_STAGE_MAGIC, sizeof d.magic);
	d.version = NSD_INDEX_VERSION;
	d.size = sizeof d;
	stage_swap(&d);
	d.checksum = htole64(XXH3_64bits(&d,
	    offsetof(struct nsd_stage_header, checksum)));
	memset(page, 0, NSD_STAGE_OFFSET);
	memcpy(page, &d, sizeof d);
}

int
nsd_stage_header_decode(const void *page, uint64_t file_id, unsigned version,
    struct nsd_stage_header *s)
{
	uint64_t	 sum;

	memcpy(s, page, sizeof *s);
	if (memcmp(s->magic, NSD_STAGE_MAGIC, sizeof s->magic) != 0)
		return (-1);
	sum = XXH3_64bits(s, offsetof(struct nsd_stage_header, checksum));
	stage_swap(s);
	if (sum != s->checksum || s->version < 3 ||
	    s->version > NSD_INDEX_VERSION ||
	    (s->version >= NSD_INDEX_CHECKED) !=
	    (version >= NSD_INDEX_CHECKED) ||
	    s->size != sizeof *s || s->file_id != file_id || s->seq == 0 ||
	    s->nslots < NSD_INDEX_MIN_SLOTS || (s->nslots & (s->nslots - 1)) ||
	    s->nslots > (1ULL << 40) || s->entries > s->nslots ||
	    s->max_gen > NSD_INDEX_GEN_MAX)
		return (-1);
	return (0);
}

int
nsd_stage_is_next(const struct nsd_index_header *h,
    const struct nsd_stage_header *sh)
{
	return (sh->seq == h->stage_seq + 1 &&
	    sh->fold_cursor == h->sweep_cursor &&
	    (h->stage_seq != 0 || (sh->reserved[0] != 0 &&
	    (h->log_records != 0 || sh->max_gen > h->committed_gen))));
}

void
nsd_index_header_encode(const struct nsd_index_header *h, void *copy)
{
	struct nsd_index_header	 d = *h;

	memcpy(d.magic, NSD_INDEX_MAGIC, sizeof d.magic);
	d.version = NSD_INDEX_VERSION;
	d.size = sizeof d;
	d.byte_order = NSD_INDEX_BOM;
	header_swap(&d);
	d.checksum = htole64(XXH3_64bits(&d,
	    offsetof(struct nsd_index_header, checksum)));
	memset(copy, 0, NSD_INDEX_COPY_SIZE);
	memcpy(copy, &d, sizeof d);
}

enum nsd_header_state
nsd_index_header_decode(const void *copy, struct nsd_index_header *h)
{
	uint64_t	 sum;
	size_t		 size = sizeof *h;
	unsigned	 i;

	memcpy(h, copy, sizeof *h);
	if (memcmp(h->magic, NSD_INDEX_MAGIC, sizeof h->magic) != 0)
		return (NSD_HEADER_NOT_INDEX);
	/* The shorter copies of older versions: the fields they lack are 0. */
	if (le32toh(h->version) < 4) {
		size = NSD_INDEX_V3_SIZE;
		memcpy(&h->checksum, (const char *)copy +
		    NSD_INDEX_V3_CHECKSUM, sizeof h->checksum);
		memset(&h->bins, 0, offsetof(struct nsd_index_header,
		    checksum) - offsetof(struct nsd_index_header, bins));
	} else if (le32toh(h->version) < NSD_INDEX_CHECKED) {
		size = NSD_INDEX_V4_SIZE;
		memcpy(&h->checksum, (const char *)copy +
		    NSD_INDEX_V4_CHECKSUM, sizeof h->checksum);
		memset(&h->log_sum, 0, offsetof(struct nsd_index_header,
		    checksum) - offsetof(struct nsd_index_header, log_sum));
	} else if (le32toh(h->version) < NSD_INDEX_SKETCHED) {
		size = NSD_INDEX_V5_SIZE;
		memcpy(&h->checksum, (const char *)copy +
		    NSD_INDEX_V5_CHECKSUM, sizeof h->checksum);
		memset(&h->sketch_bytes, 0, offsetof(struct nsd_index_header,
		    checksum) - offsetof(struct nsd_index_header,
		    sketch_bytes));
	} else if (le32toh(h->version) < NSD_INDEX_WINDOWED) {
		size = NSD_INDEX_V7_SIZE;
		memcpy(&h->checksum, (const char *)copy +
		    NSD_INDEX_V7_CHECKSUM, sizeof h->checksum);
		h->ids_start = 0;
	}
	sum = XXH3_64bits(copy, size - sizeof h->checksum);
	header_swap(h);
	/*
	 * A later version that kept this checksum is surely later; without
	 * the checksum, the version field may just as well be damaged.
	 */
	if (h->version > NSD_INDEX_VERSION)
		return (sum == h->checksum ? NSD_HEADER_NEWER :
		    NSD_HEADER_UNKNOWN);
	if (sum != h->checksum || h->version < NSD_INDEX_OLDEST ||
	    (h->version == 1 && h->log_records != 0) ||
	    h->size != size || h->byte_order != NSD_INDEX_BOM ||
	    h->slot_size != NSD_INDEX_SLOT_SIZE ||
	    h->nslots < NSD_INDEX_MIN_SLOTS || (h->nslots & (h->nslots - 1)) ||
	    h->nslots > (1ULL << 40) || h->ntables == 0 ||
	    h->ntables > NSD_INDEX_MAX_TABLES || h->max_load == 0 ||
	    h->max_load >= 100 || h->pending_gen < h->committed_gen ||
	    h->pending_gen > h->committed_gen + 1 ||
	    h->pending_gen > (h->version >= NSD_INDEX_CHECKED ?
	    NSD_INDEX_GEN_MAX : NSD_INDEX_V4_GEN_MAX) ||
	    h->ids_length < NSD_IDS_HEADER_SIZE || h->ids_length % 8 != 0 ||
	    h->entries > h->nslots ||
	    h->groups > (h->ids_length - NSD_IDS_HEADER_SIZE) / 16 ||
	    memchr(h->method, '\0', sizeof h->method) == NULL ||
	    h->log_records > nsd_index_log_limit(h->nslots, h->ntables) ||
	    (h->version < 3 && (h->next_shift != 0 || h->stage_seq != 0 ||
	    h->sweep_cursor != 0 || h->sweep_done != 0 || h->grow_done != 0 ||
	    h->next_entries != 0)) ||
	    (h->next_shift != 0 && (h->next_shift > 40 ||
	    ((1ULL << h->next_shift) != 2 * h->nslots &&
	    ((1ULL << h->next_shift) != h->nslots ||
	    h->version < NSD_INDEX_WINDOWED)) ||
	    h->next_entries > 2 * h->nslots)) ||
	    (h->next_shift == 0 && (h->grow_done != 0 ||
	    h->next_entries != 0)) ||
	    h->bins > 4096 || h->bins % 4 != 0 ||
	    (h->bins == 0) != (h->bands == 0) || h->bands > h->bins ||
	    (uint64_t)h->bands * h->rows > h->bins || h->threshold > 10000 ||
	    (h->bins != 0 && (h->rows == 0 || h->threshold == 0 ||
	    h->ntables != 1)) ||
	    h->sketch_bytes > 4096 || h->sketch_bytes % 8 != 0 ||
	    h->ttl > NSD_INDEX_TTL_MAX ||
	    (h->version < NSD_INDEX_WINDOWED && h->ttl != 0) ||
	    (h->ids_start != 0 && (h->ids_start < NSD_IDS_HEADER_SIZE ||
	    h->ids_start % 8 != 0 || h->ids_start > h->ids_length)))
		return (NSD_HEADER_DAMAGED);
	for (i = 0; i < h->ntables; i++)
		if (h->mask[i] == 0)
			return (NSD_HEADER_DAMAGED);
	/*
	 * No run has committed: there is nothing in the index (but for the
	 * stage of a fold in the first run, which holds only its entries).
	 */
	if (h->committed_gen == 0 && (h->groups != 0 || h->entries != 0 ||
	    h->ids_length != NSD_IDS_HEADER_SIZE || h->log_records != 0 ||
	    (h->stage_seq != 0 && h->pending_gen == 0) || h->next_shift != 0))
		return (NSD_HEADER_DAMAGED);
	/*
	 * A growth that went round has copied every entry of the table; from
	 * version 5 on, it is never committed before PATH.next takes the
	 * table's place (older versions' writers finish it at the next run).
	 */
	if (h->next_shift != 0 && h->grow_done == NSD_SWEPT_ALL &&
	    (h->next_entries < h->entries || h->version >= NSD_INDEX_CHECKED))
		return (NSD_HEADER_DAMAGED);
	if (h->version >= NSD_INDEX_CHECKED && ((h->groups == 0) !=
	    (h->last_group == 0) || (h->groups != 0 &&
	    (h->last_group < NSD_IDS_HEADER_SIZE / 8 ||
	    h->last_group >= h->ids_length / 8))))
		return (NSD_HEADER_DAMAGED);
	return (NSD_HEADER_OK);
}

const char *
nsd_index_header_problem(enum nsd_header_state st)
{
	switch (st) {
	case NSD_HEADER_OK:
		return ("usable");
	case NSD_HEADER_NOT_INDEX:
		return ("not an nsdedup index (no magic number)");
	case NSD_HEADER_DAMAGED:
		return ("damaged (checksum or values)");
	case NSD_HEADER_NEWER:
		return ("written by a newer format version");
	case NSD_HEADER_UNKNOWN:
		return ("of an unknown format version (newer, or damaged)");
	}
	return ("?");
}

int
nsd_index_open_error(struct nsd_error *err, const char *path,
    const char *what)
{
	struct stat	 sb;
	int		 e = errno;

	if (e == ELOOP && lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode))
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: is a symbolic link, which nsdedup does not follow "
		    "there; remove it", path));
	errno = e;
	return (nsd_error_errno(err, NSD_EXIT_INDEX, path, what));
}

int
nsd_index_fstat(int fd, const char *path, struct stat *sb,
    struct nsd_error *err)
{
	if (fstat(fd, sb) == -1)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, path, "fstat"));
	if (!S_ISREG(sb->st_mode))
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: not a regular file", path));
	return (0);
}

char *
nsd_index_resolve(const char *path)
{
	struct stat	 sb;
	char		*real;

	char		 target[4096], *slash;
	ssize_t		 n;
	size_t		 dir;

	if (lstat(path, &sb) == -1 || !S_ISLNK(sb.st_mode))
		return (xstrdup(path));
	if ((real = realpath(path, NULL)) != NULL)
		return (real);
	/* A dangling link: the index is to be made where it points. */
	if ((n = readlink(path, target, sizeof target - 1)) <= 0)
		return (xstrdup(path));
	target[n] = '\0';
	if (target[0] == '/' || (slash = strrchr(path, '/')) == NULL)
		return (xstrdup(target));
	dir = slash - path + 1;
	real = xmalloc(dir + n + 1);
	memcpy(real, path, dir);
	memcpy(real + dir, target, n + 1);
	return (real);
}

char *
nsd_index_path(const char *path, const char *suffix)
{
	size_t	 n = strlen(path) + strlen(suffix) + 1;
	char	*s = xmalloc(n);

	snprintf(s, n, "%s%s", path, suffix);
	return (s);
}

/*
 * Open path's lock file lock_path, making it when a writer (or a reader of
 * an index copied without one) finds none: the descriptor, *made saying
 * whether this call made it; -1 with errno.
 */
static int
lock_open(const char *path, const char *lock_path, int readonly, int *made)
{
	int	 fd;

	*made = 0;
	/* One there, or gone meanwhile (a run that made it refused). */
	while (!readonly) {
		fd = open(lock_path, O_RDWR | O_CREAT | O_EXCL |
		    NSD_WRITE_FLAGS, 0666);
		if (fd != -1 || errno != EEXIST) {
			*made = fd != -1;
			return (fd);
		}
		fd = open(lock_path, O_RDWR | NSD_WRITE_FLAGS);
		if (fd != -1 || errno != ENOENT)
			return (fd);
	}
	/*
	 * A reader makes no files: without the lock file there is no index
	 * to read, unless it was copied without one.
	 */
	fd = open(lock_path, O_RDONLY | NSD_OPEN_FLAGS);
	if (fd != -1 || errno != ENOENT ||
	    (access(path, F_OK) == -1 && errno == ENOENT))
		return (fd);
	fd = open(lock_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0666);
	if (fd != -1 || errno != EEXIST) {
		*made = fd != -1;
		return (fd);
	}
	return (open(lock_path, O_RDONLY | NSD_OPEN_FLAGS));
}

/* Whether the lock file at lock_path is still the one open at fd. */
static int
lock_in_place(const char *lock_path, int fd)
{
	struct stat	 held, there;

	return (fstat(fd, &held) == 0 && lstat(lock_path, &there) == 0 &&
	    held.st_dev == there.st_dev && held.st_ino == there.st_ino);
}

/*
 * The lock is the file at PATH.lock, which is never renamed, but which the
 * run that made it removes when it refuses the index (nothing of that run
 * stays: nsd_index_lock_drop()). So a lock taken on a file that is no
 * longer there is no lock: the file is opened and locked again.
 */
int
nsd_index_lock(const char *path, int readonly, long wait_ms, int *fdp,
    int *made, struct nsd_error *err)
{
	char		*lock_path = nsd_index_path(path, ".lock");
	struct timespec	 pause = { 0, 20 * 1000 * 1000 }, start, now;
	long		 waited;
	int		 fd, op = readonly ? LOCK_SH : LOCK_EX;

	clock_gettime(CLOCK_MONOTONIC, &start);
again:
	fd = lock_open(path, lock_path, readonly, made);
	if (fd == -1 && readonly && errno == ENOENT) {
		free(lock_path);
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: no such index", path));
	}
	/*
	 * A reader that cannot make the lock file reads unlocked: what a
	 * writer changes meanwhile is beyond the committed state the reader
	 * took at open, which it alone uses.
	 */
	if (fd == -1 && readonly && (errno == EROFS || errno == EACCES ||
	    errno == EPERM)) {
		free(lock_path);
		*fdp = -1;
		return (0);
	}
	if (fd == -1 && errno == ENOENT) {
		free(lock_path);
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: cannot create the index: its directory does not exist",
		    path));
	}
	if (fd == -1 && errno == ELOOP) {
		nsd_index_open_error(err, lock_path, "cannot open");
		free(lock_path);
		return (-1);
	}
	if (fd == -1) {
		nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: cannot open its lock file %s: %s", path, lock_path,
		    strerror(errno));
		free(lock_path);
		return (-1);
	}
	/* flock() has no timeout: poll it, or block when told to wait. */
	for (;;) {
		if (flock(fd, op | (wait_ms < 0 ? 0 : LOCK_NB)) == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			nsd_error_errno(err, NSD_EXIT_INDEX, path,
			    "cannot lock");
			close(fd);
			free(lock_path);
			return (-1);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - start.tv_sec) * 1000 +
		    (now.tv_nsec - start.tv_nsec) / 1000000;
		if (waited >= wait_ms) {
			if (wait_ms == 0)
				nsd_error_set(err, NSD_EXIT_BUSY,
				    "%s: in use by another nsdedup run",
				    path);
			else
				nsd_error_set(err, NSD_EXIT_BUSY,
				    "%s: in use by another nsdedup run "
				    "(waited %ld s)", path, wait_ms / 1000);
			close(fd);
			free(lock_path);
			return (-1);
		}
		nanosleep(&pause, NULL);
	}
	if (!lock_in_place(lock_path, fd)) {
		close(fd);
		goto again;
	}
	free(lock_path);
	*fdp = fd;
	return (0);
}

void
nsd_index_lock_drop(const char *path, int fd)
{
	char	*lock_path;

	if (fd == -1)
		return;
	lock_path = nsd_index_path(path, ".lock");
	/*
	 * Another run that holds it keeps it; one that waits for it takes
	 * it, finds it gone, and makes it anew.
	 */
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 && lock_in_place(lock_path, fd))
		(void)unlink(lock_path);
	close(fd);
	free(lock_path);
}

int
nsd_index_copies_agree(const struct nsd_index_header *older,
    const struct nsd_index_header *newer)
{
	return (newer->sequence - older->sequence <= 1 &&
	    newer->file_id == older->file_id &&
	    newer->created == older->created &&
	    strcmp(newer->method, older->method) == 0 &&
	    newer->sentences == older->sentences &&
	    newer->min_length == older->min_length &&
	    newer->compat == older->compat &&
	    newer->seed == older->seed &&
	    newer->distance == older->distance &&
	    newer->ntables == older->ntables &&
	    memcmp(newer->mask, older->mask, sizeof newer->mask) == 0 &&
	    newer->ngram == older->ngram &&
	    newer->shingle == older->shingle &&
	    newer->min_features == older->min_features &&
	    newer->bins == older->bins && newer->bands == older->bands &&
	    newer->rows == older->rows &&
	    newer->threshold == older->threshold &&
	    newer->sketch_bytes == older->sketch_bytes &&
	    newer->norm_version == older->norm_version &&
	    newer->committed_gen >= older->committed_gen &&
	    newer->records >= older->records &&
	    newer->groups >= older->groups &&
	    newer->ids_length >= older->ids_length &&
	    newer->ids_start >= older->ids_start &&
	    newer->nslots >= older->nslots);
}

/*
 * Read both header copies of fd and choose the current one: the valid copy
 * with the higher sequence number, which must agree with the other one.
 * *copy says which it is.
 */
int
nsd_index_read_header(int fd, const char *path, struct nsd_index_header *h,
    int *copy, int strict, struct nsd_error *err)
{
	unsigned char		 buf[2 * NSD_INDEX_COPY_SIZE];
	struct nsd_index_header	 c[2];
	enum nsd_header_state	 st[2];
	ssize_t			 n;
	int			 i;

	n = pread(fd, buf, sizeof buf, 0);
	if (n == -1)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, path,
		    "cannot read"));
	if (n < (ssize_t)sizeof buf) {
		if (n >= 8 && memcmp(buf, NSD_INDEX_MAGIC, 8) == 0)
			return (nsd_error_set(err, NSD_EXIT_INDEX,
			    "%s: truncated (%zd bytes) " NSD_DAMAGE_HINT, path,
			    n));
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: not an nsdedup index (too short)", path));
	}
	for (i = 0; i < 2; i++)
		st[i] = nsd_index_header_decode(buf + i * NSD_INDEX_COPY_SIZE,
		    &c[i]);
	/* A newer nsdedup wrote one copy: what it meant cannot be known. */
	if (st[0] == NSD_HEADER_NEWER || st[1] == NSD_HEADER_NEWER)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: index format version %u is newer than this nsdedup "
		    "reads (%d); use a newer nsdedup", path,
		    st[0] == NSD_HEADER_NEWER ? c[0].version : c[1].version,
		    NSD_INDEX_VERSION));
	if (st[0] == NSD_HEADER_OK && st[1] == NSD_HEADER_OK) {
		*copy = c[1].sequence > c[0].sequence;
		if (strict && !nsd_index_copies_agree(&c[!*copy], &c[*copy]))
			return (nsd_error_set(err, NSD_EXIT_INDEX,
			    "%s: damaged: header copy %c says what copy %c, "
			    "which is older, cannot have come before "
			    NSD_DAMAGE_HINT, path, 'A' + *copy, 'B' - *copy));
	} else if (st[0] == NSD_HEADER_OK || st[1] == NSD_HEADER_OK)
		*copy = st[1] == NSD_HEADER_OK;
	else if (st[0] == NSD_HEADER_UNKNOWN || st[1] == NSD_HEADER_UNKNOWN)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: index format version %u is newer than this nsdedup "
		    "reads (%d), or the index is damaged", path,
		    st[0] == NSD_HEADER_UNKNOWN ? c[0].version : c[1].version,
		    NSD_INDEX_VERSION));
	else if (st[0] == NSD_HEADER_NOT_INDEX && st[1] == NSD_HEADER_NOT_INDEX)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: not an nsdedup index", path));
	else
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: both header copies are damaged " NSD_DAMAGE_HINT,
		    path));
	*h = c[*copy];
	return (0);
}

void
nsd_undo_entry_encode(const struct nsd_undo_entry *e, unsigned i, void *buf)
{
	unsigned char	 copy[NSD_INDEX_COPY_SIZE], *p = buf;

	memset(p, 0, NSD_UNDO_ENTRY_SIZE);
	nsd_put_le64(p, e->serial);
	nsd_put_le64(p + 8, e->gen);
	nsd_put_le64(p + 16, e->records);
	nsd_put_le64(p + 24, e->groups);
	nsd_put_le64(p + 32, e->ids_length);
	nsd_put_le64(p + 40, e->committed_at);
	nsd_index_header_encode(&e->before, copy);
	memcpy(p + NSD_UNDO_HEAD, copy, sizeof e->before);
	nsd_put_le64(p + NSD_UNDO_ENTRY_SIZE - 8, XXH3_64bits_withSeed(p,
	    NSD_UNDO_ENTRY_SIZE - 8, i));
}

enum nsd_slot_state
nsd_undo_entry_decode(const void *buf, unsigned i, uint64_t file_id,
    struct nsd_undo_entry *e)
{
	unsigned char		 copy[NSD_INDEX_COPY_SIZE];
	const unsigned char	*p = buf;
	size_t			 k;

	memset(e, 0, sizeof *e);
	for (k = 0; k < NSD_UNDO_ENTRY_SIZE && p[k] == 0; k++)
		continue;
	if (k == NSD_UNDO_ENTRY_SIZE)
		return (NSD_SLOT_EMPTY);
	if (nsd_le64(p + NSD_UNDO_ENTRY_SIZE - 8) != XXH3_64bits_withSeed(p,
	    NSD_UNDO_ENTRY_SIZE - 8, i))
		return (NSD_SLOT_DAMAGED);
	memset(copy, 0, sizeof copy);
	memcpy(copy, p + NSD_UNDO_HEAD, sizeof e->before);
	if (nsd_index_header_decode(copy, &e->before) != NSD_HEADER_OK ||
	    e->before.file_id != file_id || nsd_le64(p) == 0)
		return (NSD_SLOT_DAMAGED);
	e->serial = nsd_le64(p);
	e->gen = nsd_le64(p + 8);
	e->records = nsd_le64(p + 16);
	e->groups = nsd_le64(p + 24);
	e->ids_length = nsd_le64(p + 32);
	e->committed_at = nsd_le64(p + 40);
	return (NSD_SLOT_FULL);
}

int
nsd_undo_entry_matches(const struct nsd_undo_entry *e,
    const struct nsd_index_header *h)
{
	return (e->serial != 0 && e->gen == h->committed_gen &&
	    e->records == h->records && e->groups == h->groups &&
	    e->ids_length == h->ids_length &&
	    e->committed_at == h->committed_at);
}

/*
 * Why the commit of entry e cannot be taken back from the state of header
 * h, or NULL when it can: what the header before it names must be there
 * still, and it must be a state that can have come before h's.
 */
static const char *
undo_refusal(const struct nsd_undo_entry *e, const struct nsd_index_header *h)
{
	struct nsd_index_header	 before = e->before;
	uint64_t		 hole;

	if (before.version != h->version)
		return ("the index has been upgraded since");
	if (before.nslots != h->nslots || e->replaced)
		return ("the table has grown, been renewed or been rebuilt "
		    "since");
	/*
	 * The groups the run opened are forgotten, or the record of the
	 * newest one before it, which a run numbers the next group from,
	 * may lie in the hole punched from 4096 up to ids_start
	 * (index_window.c), in whole or, when it starts in the first page,
	 * in its tail.
	 */
	hole = h->ids_start & ~(uint64_t)4095;
	if (h->ids_start > before.ids_length || (before.groups != 0 &&
	    hole > 4096 && hole > before.last_group * 8))
		return ("the window has forgotten the groups it opened since");
	if (before.stage_seq != h->stage_seq)
		return ("the log has been folded into the stage since");
	before.sequence = h->sequence;
	if (!nsd_index_copies_agree(&before, h) ||
	    before.pending_gen != h->committed_gen ||
	    before.committed_gen + 1 < h->committed_gen)
		return ("what is kept of it does not go with the index "
		    "(damaged)");
	return (NULL);
}

struct nsd_index_header
nsd_undo_state(const struct nsd_undo_entry *e,
    const struct nsd_index_header *h)
{
	struct nsd_index_header	 before = e->before;

	if (before.ids_start < h->ids_start)
		before.ids_start = h->ids_start;
	/* The window is a setting of the index, not of the run. */
	before.ttl = h->ttl;
	return (before);
}

size_t
nsd_undo_chain(const struct nsd_undo_entry *e, size_t n,
    const struct nsd_index_header *h, uint64_t stage_max_gen,
    const struct nsd_undo_entry **steps, size_t max, const char **why)
{
	struct nsd_index_header	 cur = *h;
	const struct nsd_undo_entry *best;
	uint64_t		 last_serial = 0;
	size_t			 count, i;

	for (count = 0;; count++) {
		if (cur.committed_gen == 0 && cur.records == 0) {
			*why = count == 0 ? "no run has committed to it" :
			    "there is none";
			break;
		}
		/* Each step goes to an older entry: the walk ends. */
		best = NULL;
		for (i = 0; i < n; i++)
			if (nsd_undo_entry_matches(&e[i], &cur) &&
			    (count == 0 || e[i].serial < last_serial) &&
			    (best == NULL || e[i].serial > best->serial))
				best = &e[i];
		if (best == NULL) {
			*why = "nothing of it is kept for --db-undo (only "
			    "of the last 8 commits, by an nsdedup that has it)";
			break;
		}
		if ((*why = undo_refusal(best, &cur)) != NULL)
			break;
		if (count < max)
			steps[count] = best;
		last_serial = best->serial;
		/*
		 * Entries of the run in the stage (it folded its own) make
		 * the recovery fold it again, without them: a new build.
		 */
		if (best->before.pending_gen > best->before.committed_gen &&
		    cur.stage_seq != 0 &&
		    stage_max_gen > best->before.committed_gen) {
			count++;
			*why = "the log has been folded into the stage since";
			break;
		}
		cur = nsd_undo_state(best, &cur);
		cur.pending_gen = cur.committed_gen;
	}
	return (count);
}

int
nsd_undo_read(int fd, uint64_t file_id, struct nsd_undo_entry *e,
    unsigned *damaged)
{
	unsigned char	 buf[NSD_UNDO_FILE_SIZE];
	ssize_t		 n;
	unsigned	 i;

	memset(e, 0, NSD_UNDO_RUNS * sizeof *e);
	*damaged = 0;
	if ((n = nsd_pread_all(fd, buf, sizeof buf, 0)) == -1)
		return (-1);
	if ((size_t)n < sizeof buf || memcmp(buf, NSD_UNDO_MAGIC, 8) != 0 ||
	    nsd_le64(buf + 8) != file_id)
		return (0);
	for (i = 0; i < NSD_UNDO_RUNS; i++)
		if (nsd_undo_entry_decode(buf + NSD_UNDO_HEADER_SIZE +
		    i * NSD_UNDO_ENTRY_SIZE, i, file_id, &e[i]) ==
		    NSD_SLOT_DAMAGED) {
			memset(&e[i], 0, sizeof e[i]);
			(*damaged)++;
		} else
			e[i].replaced = e[i].gen <= nsd_le64(buf + 16);
	return (0);
}
