/*
 * index_times.c: PATH.times, when each commit of an index file was made.
 *
 * The window of an index (--ttl) forgets a group a fixed time after the
 * commit that opened it. Slots and group records hold no time; a group's
 * place in PATH.ids says when it came, since records are appended. So the
 * index keeps, for each commit, its time and the length PATH.ids had
 * after it: the groups opened by the commits made before a cutoff are
 * exactly those whose records start below that commit's length.
 *
 * The file: a header of 32 bytes, the magic "NSDTIMES", the index's file
 * id, the generation of its first record, and an XXH3-64 checksum of the
 * 24 bytes before it; then a record a commit, that of generation g at
 * 32 + 32 * (g - first): its time, PATH.ids's length after it, the entries
 * the commits from the first on added up to it, and an XXH3-64 checksum
 * of those 24 bytes seeded with the file id and g, so that a record read
 * at the wrong place fails it. A commit writes its record, synced, before
 * its header (index_window.c); records past the committed generation are
 * those of a run that did not commit, or was taken back, and are written
 * over. A commit's time is never before the one before it, so the records
 * are in order of time and of length both, and searches halve.
 *
 * A file that cannot be believed is no danger: without it the window
 * forgets nothing more, which only keeps groups longer, and the next
 * writer starts it again.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "index_format.h"
#include "index_times.h"

static uint64_t
record_seed(uint64_t file_id, uint64_t gen)
{
	return (file_id ^ gen * 0x9E3779B97F4A7C15ULL);
}

void
nsd_times_header_encode(uint64_t file_id, uint64_t first, unsigned char *buf)
{
	memcpy(buf, NSD_TIMES_MAGIC, 8);
	nsd_put_le64(buf + 8, file_id);
	nsd_put_le64(buf + 16, first);
	nsd_put_le64(buf + 24, XXH3_64bits(buf, 24));
}

void
nsd_times_record_encode(const struct nsd_times_record *r, uint64_t file_id,
    uint64_t gen, unsigned char *buf)
{
	nsd_put_le64(buf, (uint64_t)r->at);
	nsd_put_le64(buf + 8, r->ids_length);
	nsd_put_le64(buf + 16, r->added);
	nsd_put_le64(buf + 24, XXH3_64bits_withSeed(buf, 24,
	    record_seed(file_id, gen)));
}

void
nsd_times_open(struct nsd_times *t, const char *path, uint64_t file_id,
    uint64_t last, int write)
{
	unsigned char	 head[NSD_TIMES_HEADER_SIZE];
	struct stat	 sb;
	uint64_t	 first, need;

	memset(t, 0, sizeof *t);
	t->fd = open(path, (write ? O_RDWR : O_RDONLY) | NSD_OPEN_FLAGS |
	    O_NOFOLLOW);
	t->file_id = file_id;
	t->last = last;
	if (t->fd == -1)
		return;
	if (fstat(t->fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    nsd_pread_exact(t->fd, head, sizeof head, 0) == -1 ||
	    memcmp(head, NSD_TIMES_MAGIC, 8) != 0 ||
	    nsd_le64(head + 8) != file_id ||
	    nsd_le64(head + 24) != XXH3_64bits(head, 24) ||
	    (first = nsd_le64(head + 16)) == 0)
		goto unusable;
	/* Every committed record from the first on must be there. */
	need = last >= first ? (last - first + 1) : 0;
	if (need > (uint64_t)(sb.st_size - NSD_TIMES_HEADER_SIZE) /
	    NSD_TIMES_RECORD_SIZE)
		goto unusable;
	t->first = first;
	return;
unusable:
	close(t->fd);
	t->fd = -1;
}

void
nsd_times_close(struct nsd_times *t)
{
	if (t->fd != -1)
		close(t->fd);
	t->fd = -1;
}

int
nsd_times_get(const struct nsd_times *t, uint64_t gen,
    struct nsd_times_record *r)
{
	unsigned char	 buf[NSD_TIMES_RECORD_SIZE];

	if (t->fd == -1 || gen < t->first || gen > t->last ||
	    nsd_pread_exact(t->fd, buf, sizeof buf, NSD_TIMES_HEADER_SIZE +
	    (off_t)(gen - t->first) * NSD_TIMES_RECORD_SIZE) == -1 ||
	    nsd_le64(buf + 24) != XXH3_64bits_withSeed(buf, 24,
	    record_seed(t->file_id, gen)))
		return (-1);
	r->at = (int64_t)nsd_le64(buf);
	r->ids_length = nsd_le64(buf + 8);
	r->added = nsd_le64(buf + 16);
	return (0);
}

/* What a search of the records looks for: the first past a time or a length. */
struct times_bound {
	int		 by_length;
	int64_t		 at;
	uint64_t	 length;
};

/*
 * Halve the records to the first past bound b, as they are in order of
 * time and of length both: *past (last + 1 when none is) and its record,
 * and the record before it in *before (when *past is not first). 0, or
 * -1 when a record read on the way is damaged.
 */
static int
times_search(const struct nsd_times *t, const struct times_bound *b,
    uint64_t *past, struct nsd_times_record *past_rec,
    struct nsd_times_record *before)
{
	struct nsd_times_record	 m;
	uint64_t		 lo = t->first, hi = t->last + 1, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (nsd_times_get(t, mid, &m) == -1)
			return (-1);
		if (b->by_length ? m.ids_length > b->length : m.at > b->at) {
			*past_rec = m;
			hi = mid;
		} else {
			*before = m;
			lo = mid + 1;
		}
	}
	*past = lo;
	return (0);
}

int
nsd_times_before(const struct nsd_times *t, int64_t cutoff, uint64_t *gen,
    struct nsd_times_record *r)
{
	struct times_bound	 b = { 0, cutoff, 0 };
	struct nsd_times_record	 past_rec;
	uint64_t		 past;

	*gen = 0;
	if (t->fd == -1 || t->last < t->first)
		return (0);
	if (times_search(t, &b, &past, &past_rec, r) == -1)
		return (-1);
	if (past > t->first)
		*gen = past - 1;
	return (0);
}

int
nsd_times_opened(const struct nsd_times *t, uint64_t off, uint64_t *gen,
    struct nsd_times_record *r)
{
	struct times_bound	 b = { 1, 0, off };
	struct nsd_times_record	 before;

	if (t->fd == -1 || t->last < t->first ||
	    times_search(t, &b, gen, r, &before) == -1 || *gen > t->last)
		return (-1);
	return (0);
}

void
nsd_times_horizon(struct nsd_times *t, uint64_t ttl, int64_t now,
    uint64_t ids_start, struct nsd_horizon *hz)
{
	struct nsd_times_record	 r;
	uint64_t		 gen;

	memset(hz, 0, sizeof *hz);
	hz->ids = ids_start;
	if (t->fd != -1 && t->last >= t->first) {
		if (nsd_times_get(t, t->last, &r) == 0)
			hz->added_last = r.added;
		else
			nsd_times_close(t);
	}
	if (ttl == 0 || now < (int64_t)ttl)
		return;
	if (nsd_times_before(t, now - (int64_t)ttl, &gen, &r) == -1)
		nsd_times_close(t);
	else if (gen != 0) {
		if (r.ids_length > hz->ids)
			hz->ids = r.ids_length;
		hz->added_forgotten = r.added;
		hz->known = 1;
	}
}

int64_t
nsd_index_now(void)
{
	const char	*env = getenv("NSDEDUP_NOW");
	char		*end;
	long long	 v;

	if (env != NULL && *env != '\0') {
		errno = 0;
		v = strtoll(env, &end, 10);
		if (errno == 0 && *end == '\0' && v >= 0)
			return ((int64_t)v);
	}
	return ((int64_t)time(NULL));
}
