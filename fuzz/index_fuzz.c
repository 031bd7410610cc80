/*
 * index_fuzz.c: opening an index file made of arbitrary bytes.
 *
 * The input is a flags byte, then the bytes of PATH, PATH.ids, PATH.log,
 * PATH.stage, PATH.next, PATH.filter, PATH.undo and PATH.times separated
 * by SEP (a missing part is a missing file). With flag 1 the checksums of
 * both header copies, of the stage's header, of the key filter and of
 * PATH.times's header and records are recomputed first (and in a version
 * 5 index the checks of the slots, log records and group records:
 * reseal()), so that mutated headers, slots and filters get past them
 * to the checks behind; a filter that then lacks a key of the table makes
 * lookups miss it, which is no error, but --db-verify must find it. The
 * files are written to a scratch directory, then read as nsdedup
 * --db-info, --db-verify and --db --no-update would: described,
 * verified, and opened read-only with the parameters the header names,
 * with lookups of the keys in the first slots, the names of the groups
 * found, and a claim (kept in memory).
 * Nothing may read or write out of bounds; errors are fine.
 *
 * With flag 2 the index is then also updated, as a run without
 * --no-update would: opened for writing, given 32 << (flags >> 2 & 7) new
 * fingerprints (up to 4096: enough to fill the log and fold it, sweep,
 * grow, or load in bulk, from a small index), committed and closed; with
 * flag 32 as well, the run has a window of a day (--ttl 1d), so that the
 * groups of commits that PATH.times dates a day before the clock are
 * forgotten, their records' bytes given back. When that commit succeeds,
 * every fingerprint it claimed must be found by a read-only open
 * afterwards, and an index that --db-verify passed before must pass
 * after; then the update is taken back (--db-undo), which must succeed
 * for an index that verified (unless the window gave back bytes that the
 * undo would need, which it refuses), and that must verify again. The
 * scratch files are in /dev/shm where there is one, so that the update's
 * syncs cost nothing.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "index.h"
#include "index_filter.h"
#include "index_format.h"
#include "index_times.h"
#include "simhash.h"
#include "text.h"
#include "fuzz.h"

#define SEP		"\n--nsdfuzz--\n"
#define SEP_LEN		(sizeof SEP - 1)
#define NKEYS		64

#define NPARTS		8		/* PATH, .ids, .log, .stage, .next,
					   .filter, .undo, .times */
#define NTABLES		5		/* of them, those made of slots */
#define NPATHS		13		/* and .lock, .new, .stage.new,
					   .filter.new, .times.new */
#define WINDOW		86400		/* flag 32's --ttl, seconds */

static char	 dir[64];
static char	*paths[NPATHS];

static void
cleanup(void)
{
	size_t	 i;

	for (i = 0; i < NPATHS; i++)
		unlink(paths[i]);
	rmdir(dir);
}

static void
init(void)
{
	static const char *suffix[NPATHS] = { "", ".ids", ".log", ".stage",
	    ".next", ".filter", ".undo", ".times", ".lock", ".new",
	    ".stage.new", ".filter.new", ".times.new" };
	size_t	 i;

	snprintf(dir, sizeof dir, "/dev/shm/nsd-fuzz-index.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		snprintf(dir, sizeof dir, "/tmp/nsd-fuzz-index.XXXXXX");
		if (mkdtemp(dir) == NULL)
			FUZZ_FAIL("mkdtemp");
	}
	for (i = 0; i < NPATHS; i++) {
		paths[i] = xmalloc(sizeof dir + 8 + strlen(suffix[i]));
		snprintf(paths[i], sizeof dir + 8 + strlen(suffix[i]),
		    "%s/x.nsd%s", dir, suffix[i]);
	}
	atexit(cleanup);
}

static void
write_file(const char *path, const uint8_t *p, size_t n)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1)
		FUZZ_FAIL("%s: open", path);
	if (n > 0 && write(fd, p, n) != (ssize_t)n)
		FUZZ_FAIL("%s: write", path);
	close(fd);
}

static uint64_t
get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int	 i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return (v);
}

/* Give the header at p, its checksum at offset at, the checksum it claims. */
static void
fix_checksum(uint8_t *p, size_t n, size_t at)
{
	uint64_t	 sum;
	size_t		 i;

	if (n < at + 8)
		return;
	sum = XXH3_64bits(p, at);
	for (i = 0; i < 8; i++)
		p[at + i] = sum >> (8 * i);
}

/* Where the checksum of a header copy at p is, by the version it says. */
static size_t
checksum_at(const uint8_t *p, size_t n)
{
	uint32_t	 version;

	version = n >= 12 ? nsd_le32(p + 8) : NSD_INDEX_VERSION;
	if (version < 4)
		return (NSD_INDEX_V3_CHECKSUM);
	if (version < NSD_INDEX_CHECKED)
		return (NSD_INDEX_V4_CHECKSUM);
	return (offsetof(struct nsd_index_header, checksum));
}

/* The key filter's checksums: of its blocks, then of its header. */
static void
fix_filter(uint8_t *p, size_t n)
{
	uint64_t	 sum;
	size_t		 i, at = offsetof(struct nsd_filter_header, bits_sum);

	if (n < NSD_FILTER_OFFSET)
		return;
	sum = XXH3_64bits(p + NSD_FILTER_OFFSET, n - NSD_FILTER_OFFSET);
	for (i = 0; i < 8; i++)
		p[at + i] = sum >> (8 * i);
	fix_checksum(p, n, offsetof(struct nsd_filter_header, checksum));
}

/* PATH.times's header and records, each encoded again as it reads. */
static void
fix_times(uint8_t *p, size_t n)
{
	struct nsd_times_record	 rec;
	uint64_t		 file_id, first;
	size_t			 at;

	if (n < NSD_TIMES_HEADER_SIZE)
		return;
	file_id = nsd_le64(p + 8);
	first = nsd_le64(p + 16);
	nsd_times_header_encode(file_id, first, p);
	for (at = NSD_TIMES_HEADER_SIZE; at + NSD_TIMES_RECORD_SIZE <= n;
	    at += NSD_TIMES_RECORD_SIZE) {
		rec.at = (int64_t)nsd_le64(p + at);
		rec.ids_length = nsd_le64(p + at + 8);
		rec.added = nsd_le64(p + at + 16);
		nsd_times_record_encode(&rec, file_id, first +
		    (at - NSD_TIMES_HEADER_SIZE) / NSD_TIMES_RECORD_SIZE,
		    p + at);
	}
}

/* Both header copies of a table, or the header of a stage. */
static void
fix_checksums(uint8_t *p, size_t n, int stage)
{
	if (stage) {
		fix_checksum(p, n, offsetof(struct nsd_stage_header, checksum));
		return;
	}
	fix_checksum(p, n, checksum_at(p, n));
	if (n > NSD_INDEX_COPY_SIZE)
		fix_checksum(p + NSD_INDEX_COPY_SIZE, n - NSD_INDEX_COPY_SIZE,
		    checksum_at(p + NSD_INDEX_COPY_SIZE,
		    n - NSD_INDEX_COPY_SIZE));
}

/*
 * Give every slot that is not empty (of PATH, PATH.stage, PATH.next) and
 * every log record the check it claims, every group record its checksum,
 * and the header (version 5) the log's sum and the newest group it claims:
 * so that mutated slots and records get past the checks to what is behind
 * them. The header copies' checksums are fixed after.
 */
static void
reseal(uint8_t **bufs, const size_t *lens)
{
	static const size_t	 offset[NTABLES] = { NSD_INDEX_TABLE_OFFSET, 0,
	    NSD_LOG_HEADER_SIZE, NSD_STAGE_OFFSET, NSD_INDEX_TABLE_OFFSET };
	uint64_t		 key, meta, sum = 0, sig, off, last = 0;
	uint64_t		 len, size, committed;
	size_t			 i, at, copy;

	if (lens[0] < NSD_INDEX_TABLE_OFFSET ||
	    nsd_le32(bufs[0] + 8) < NSD_INDEX_CHECKED)
		return;
	committed = nsd_le64(bufs[0] + offsetof(struct nsd_index_header,
	    ids_length));
	sig = 2 * (uint64_t)nsd_le32(bufs[0] +
	    offsetof(struct nsd_index_header, bins));
	for (i = 0; i < NTABLES; i++) {
		if (i == 1 || bufs[i] == NULL)
			continue;
		for (at = offset[i]; at + NSD_INDEX_SLOT_SIZE <= lens[i];
		    at += NSD_INDEX_SLOT_SIZE) {
			if (nsd_slot_get(bufs[i] + at, 0, &key, &meta) !=
			    NSD_SLOT_EMPTY)
				nsd_slot_put(bufs[i] + at, key, meta);
			if (i == 2 && (at - offset[i]) / NSD_LOG_RECORD_SIZE <
			    nsd_le64(bufs[0] + offsetof(struct nsd_index_header,
			    log_records)))
				sum += nsd_log_record_sum(bufs[i] + at,
				    (at - offset[i]) / NSD_LOG_RECORD_SIZE);
		}
	}
	for (off = NSD_IDS_HEADER_SIZE; bufs[1] != NULL &&
	    off + NSD_IDS_RECORD_HEAD <= lens[1]; off += size) {
		len = nsd_le32(bufs[1] + off + 8);
		size = nsd_ids_record_bytes(len, sig);
		if (len > lens[1] || off + size > lens[1] ||
		    off + size > committed)
			break;
		nsd_put_le32(bufs[1] + off + 4,
		    nsd_ids_record_sum(bufs[1] + off, off / 8, sig));
		last = off / 8;
	}
	for (copy = 0; copy < 2; copy++) {
		nsd_put_le64(bufs[0] + copy * NSD_INDEX_COPY_SIZE +
		    offsetof(struct nsd_index_header, log_sum), sum);
		nsd_put_le64(bufs[0] + copy * NSD_INDEX_COPY_SIZE +
		    offsetof(struct nsd_index_header, last_group), last);
	}
}

/* The parameters an index with report r was made with. */
static void
params_of(const struct nsd_index_report *r, struct nsd_index_params *p,
    char *method)
{
	memset(p, 0, sizeof *p);
	memcpy(method, r->method, sizeof r->method);
	method[sizeof r->method] = '\0';
	p->method = method;
	p->sentences = r->sentences;
	p->min_length = r->min_length;
	p->compat = r->compat;
	p->norm_version = NSD_NORM_VERSION;
	p->norm_oldest = NSD_NORM_OLDEST;
	p->seed = r->seed;
	p->distance = r->distance;
	p->ngram = r->ngram;
	p->shingle = r->shingle;
	p->min_features = r->min_features;
	p->ntables = 1;
	p->masks[0] = UINT64_MAX;
	if (strcmp(method, "simhash") == 0 && r->distance <= 8) {
		p->ntables = nsd_simhash_tables(r->distance, p->masks);
		p->repeats = 1;
	}
}

static void
problem(void *ctx, const char *what)
{
	(void)ctx;
	(void)what;
}

/* Look keys up in an open index, name what is found, claim one. */
static void
exercise(struct nsd_index *ix, const uint8_t *table, size_t n, int simhash,
    unsigned distance)
{
	struct nsd_index_info	 info;
	struct nsd_index_near	 near;
	struct nsd_group_name	 name;
	struct nsd_error	 err;
	uint64_t		 keys[NKEYS + 2], group, g;
	size_t			 nkeys = 0, i, k;
	volatile unsigned char	 sink = 0;

	keys[nkeys++] = 0;
	keys[nkeys++] = UINT64_MAX;
	for (i = NSD_INDEX_TABLE_OFFSET; nkeys < NKEYS + 2 &&
	    i + NSD_INDEX_SLOT_SIZE <= n; i += NSD_INDEX_SLOT_SIZE)
		keys[nkeys++] = get_le64(table + i);
	for (i = 0; i < nkeys; i++) {
		nsd_index_prefetch(ix, keys[i]);
		if (simhash) {
			if (nsd_index_near(ix, keys[i], distance, &near,
			    &err) == -1)
				return;
			group = near.group;
		} else if (nsd_index_lookup(ix, keys[i], &group, &err) == -1)
			return;
		if (group == 0)
			continue;
		if (nsd_index_group_name(ix, group, &name, &err) == -1)
			return;
		for (k = 0; name.id != NULL && k < name.id_len; k++)
			sink ^= name.id[k];
	}
	if (nsd_index_group_new(ix, "\"new\"", 5, &g, &err) == -1)
		return;
	if (simhash)
		(void)nsd_index_add(ix, 42, g, &err);
	else if (nsd_index_claim(ix, 42, g, NULL, &err) == 0) {
		FUZZ_CHECK(nsd_index_lookup(ix, 42, &group, &err) == 0);
		FUZZ_CHECK(group != 0);
	}
	nsd_index_info(ix, &info);
	(void)sink;
}

/* Whether fp is in the index (for simhash: within distance 0 of it). */
static int
holds(struct nsd_index *ix, uint64_t fp, int simhash)
{
	struct nsd_index_near	 near;
	struct nsd_error	 err;
	uint64_t		 group;

	if (simhash) {
		FUZZ_CHECK(nsd_index_near(ix, fp, 0, &near, &err) == 0);
		return (near.group != 0);
	}
	FUZZ_CHECK(nsd_index_lookup(ix, fp, &group, &err) == 0);
	return (group != 0);
}

/*
 * Update the index as a run would, with n fingerprints made from seed, a
 * new group for every 16; then, if the commit held, check that a reader
 * finds them all, and that an index which verified still does.
 */
static void
update(const struct nsd_index_params *p, int simhash, uint64_t seed,
    size_t n, int windowed, int verified)
{
	struct nsd_index_open	 o = { .path = paths[0] };
	struct nsd_index_report	 r;
	struct nsd_index_undone	 u;
	struct nsd_index	*ix;
	struct nsd_error	 err;
	uint64_t		 fp, group = 0, problems = 0;
	size_t			 i;
	int			 st = 0;

	if (windowed)
		o.ttl = WINDOW;
	if (nsd_index_open_file(&ix, &o, p, &err) == -1)
		return;
	for (i = 0; i < n && st == 0; i++) {
		if (i % 16 == 0)
			st = nsd_index_group_new(ix, "\"u\"", 3, &group, &err);
		fp = XXH3_64bits_withSeed(&i, sizeof i, seed);
		if (st == 0)
			st = simhash ? nsd_index_add(ix, fp, group, &err) :
			    nsd_index_claim(ix, fp, group, NULL, &err);
	}
	if (st == 0)
		st = nsd_index_commit(ix, n, &err);
	nsd_index_close(ix);
	if (st == -1)
		return;

	o.readonly = 1;
	o.ttl = 0;
	FUZZ_CHECK(nsd_index_open_file(&ix, &o, p, &err) == 0);
	for (i = 0; i < n; i++) {
		fp = XXH3_64bits_withSeed(&i, sizeof i, seed);
		if (!holds(ix, fp, simhash))
			FUZZ_FAIL("fingerprint %zu of %zu lost by the commit",
			    i, n);
	}
	nsd_index_close(ix);
	if (verified) {
		FUZZ_CHECK(nsd_index_verify(paths[0], 0, problem, NULL, 50, &r,
		    &problems, &err) == 0);
		if (problems != 0)
			FUZZ_FAIL("a verified index has %" PRIu64
			    " problems after an update", problems);
	}
	/*
	 * Its own commit saved what it replaced: it can be taken back, unless
	 * the recovery finds damage that the update did not meet, or its
	 * window gave back group records that the index before it held.
	 */
	if (nsd_index_undo(paths[0], 0, &u, &err) == -1) {
		if (verified && !windowed)
			FUZZ_FAIL("the update cannot be taken back: %s",
			    err.msg);
		return;
	}
	if (verified) {
		FUZZ_CHECK(nsd_index_verify(paths[0], 0, problem, NULL, 50, &r,
		    &problems, &err) == 0);
		if (problems != 0)
			FUZZ_FAIL("a verified index has %" PRIu64
			    " problems after an undo", problems);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 ready;
	struct nsd_index_open	 o;
	struct nsd_index_report	 r;
	struct nsd_index_params	 p;
	struct nsd_index	*ix;
	struct nsd_error	 err;
	const uint8_t		*part, *end, *sep;
	uint8_t			*copy = NULL, *bufs[NPARTS];
	size_t			 lens[NPARTS];
	uint64_t		 problems;
	char			 method[sizeof r.method + 1];
	size_t			 i, table_len = 0;
	int			 described, verified, simhash = 0;

	if (!ready) {
		init();
		ready = 1;
	}
	if (size == 0)
		return (0);
	for (i = 0; i < NPATHS; i++)
		unlink(paths[i]);
	part = data + 1;
	end = data + size;
	for (i = 0; i < NPARTS; i++) {
		bufs[i] = NULL;
		lens[i] = 0;
		if (part == NULL)
			continue;
		sep = memmem(part, end - part, SEP, SEP_LEN);
		lens[i] = (sep ? sep : end) - part;
		bufs[i] = xmalloc(lens[i] + 1);
		memcpy(bufs[i], part, lens[i]);
		part = sep ? sep + SEP_LEN : NULL;
	}
	if (data[0] & 1) {
		reseal(bufs, lens);
		fix_checksums(bufs[0], lens[0], 0);
		if (bufs[3] != NULL)
			fix_checksums(bufs[3], lens[3], 1);
		if (bufs[5] != NULL)
			fix_filter(bufs[5], lens[5]);
		if (bufs[7] != NULL)
			fix_times(bufs[7], lens[7]);
	}
	for (i = 0; i < NPARTS; i++)
		if (bufs[i] != NULL)
			write_file(paths[i], bufs[i], lens[i]);
	copy = bufs[0];
	table_len = lens[0];
	for (i = 1; i < NPARTS; i++)
		free(bufs[i]);

	described = nsd_index_describe(paths[0], 0, &r, &err) == 0;
	if (described) {
		params_of(&r, &p, method);
		simhash = strcmp(method, "simhash") == 0;
		o.path = paths[0];
		o.readonly = 1;
		o.wait_ms = 0;
		o.undo = 0;
		o.ttl = 0;
		/* As a --no-update run reads it. */
		if (nsd_index_open_file(&ix, &o, &p, &err) == 0 &&
		    nsd_index_open_overlay(&ix, ix, &err) == 0) {
			exercise(ix, copy, table_len, simhash, r.distance);
			nsd_index_close(ix);
		}
	}
	problems = 0;
	verified = nsd_index_verify(paths[0], 0, problem, NULL, 50, &r,
	    &problems, &err) == 0 && problems == 0;
	if (described && (data[0] & 2))
		update(&p, simhash, XXH3_64bits(data, size),
		    (size_t)32 << (data[0] >> 2 & 7), (data[0] & 32) != 0,
		    verified);
	free(copy);
	return (0);
}
