/*
 * index_dump.c: print the committed state of an index file, in a canonical
 * order, so that tests can say "the index is exactly as it was".
 *
 * What is printed is what a later run can see: the counts, the committed
 * generation, every group record and every committed entry (sorted, each
 * once). A committed record of PATH.log is printed as the entry in every
 * table it stands for. What a later run cannot see is left out: the
 * table's size (growth changes it), whether an entry is in the table, the
 * stage, PATH.next or the log (folds, sweeps and growth move them, and an
 * entry may be in two places until the next fold), which header copy is
 * current, times, and leftovers of runs that did not commit.
 *
 * Usage: nsd-index-dump PATH
 *        nsd-index-dump --set-u32|--set-u64 OFFSET VALUE PATH [A|B]
 *        nsd-index-dump --put-slot FILE OFFSET KEY META
 *        nsd-index-dump --absent-key PATH
 *
 * The second form writes VALUE at OFFSET of both header copies (or of the
 * one named) and gives them a valid checksum again: a header as a later
 * nsdedup might write it, or one damaged past what a checksum can tell.
 * The third writes a slot (or a log record) at byte OFFSET of FILE: KEY,
 * and META, a slot word of format version 5 whose check it computes:
 * damage that the check cannot tell. The fourth prints, in hex, a key of
 * table 0 that the index's key filter (PATH.filter) says is absent.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <endian.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "index_filter.h"
#include "index_format.h"

struct entry {
	uint64_t	 key;
	uint64_t	 table;
	uint64_t	 group;
};

static int
entry_cmp(const void *a, const void *b)
{
	const struct entry	*x = a, *y = b;

	if (x->table != y->table)
		return (x->table < y->table ? -1 : 1);
	if (x->key != y->key)
		return (x->key < y->key ? -1 : 1);
	if (x->group != y->group)
		return (x->group < y->group ? -1 : 1);
	return (0);
}

static unsigned char *
map_file(const char *path, int *fd, uint64_t *size)
{
	struct stat	 sb;
	void		*p;

	if ((*fd = open(path, O_RDONLY)) == -1 || fstat(*fd, &sb) == -1) {
		perror(path);
		exit(2);
	}
	*size = sb.st_size;
	p = mmap(NULL, *size, PROT_READ, MAP_SHARED, *fd, 0);
	if (p == MAP_FAILED) {
		perror(path);
		exit(2);
	}
	return (p);
}

/* The entries found so far, in a growing array. */
struct entries {
	struct entry	*e;
	uint64_t	 n, cap;
};

static void
entry_add(struct entries *es, uint64_t key, uint64_t table, uint64_t group)
{
	if (es->n == es->cap) {
		es->cap = es->cap ? es->cap * 2 : 1024;
		es->e = xreallocarray(es->e, es->cap, sizeof *es->e);
	}
	es->e[es->n].key = key;
	es->e[es->n].table = table;
	es->e[es->n].group = group;
	es->n++;
}

/* Add the committed entries of nslots slots at slots; return their count. */
static uint64_t
add_slots(const struct nsd_index_header *h,
    const struct nsd_index_slot *slots, uint64_t nslots, struct entries *es)
{
	uint64_t	 i, key, meta, n = 0;

	for (i = 0; i < nslots; i++) {
		switch (nsd_slot_get(&slots[i], h->version < NSD_INDEX_CHECKED,
		    &key, &meta)) {
		case NSD_SLOT_EMPTY:
			continue;
		case NSD_SLOT_DAMAGED:
			fprintf(stderr, "nsd-index-dump: slot %" PRIu64
			    " is damaged\n", i);
			exit(1);
		case NSD_SLOT_FULL:
			break;
		}
		if (nsd_slot_gen(meta) > h->committed_gen)
			continue;
		entry_add(es, key, nsd_slot_table(meta), nsd_slot_group(meta));
		n++;
	}
	return (n);
}

/*
 * Add the committed records of the log of the index at path: each as an
 * entry of every table. With none, nothing of PATH.log counts, and it is
 * not read: it may be missing, or a creation cut short.
 */
static void
read_log(const char *path, const struct nsd_index_header *h,
    struct entries *es)
{
	unsigned char	*buf;
	char		*log_path;
	size_t		 len = NSD_LOG_HEADER_SIZE + h->log_records *
	    NSD_LOG_RECORD_SIZE;
	uint64_t	 i, key, meta;
	unsigned	 t;
	int		 fd;

	if (h->log_records == 0)
		return;
	log_path = nsd_index_path(path, ".log");
	if ((fd = open(log_path, O_RDONLY)) == -1) {
		perror(log_path);
		exit(2);
	}
	buf = xmalloc(len);
	if (pread(fd, buf, len, 0) != (ssize_t)len) {
		fprintf(stderr, "nsd-index-dump: %s: shorter than its %"
		    PRIu64 " committed records\n", log_path, h->log_records);
		exit(1);
	}
	if (memcmp(buf, NSD_LOG_MAGIC, 8) != 0 ||
	    nsd_le64(buf + 8) != h->file_id) {
		fprintf(stderr, "nsd-index-dump: %s: not the log of %s\n",
		    log_path, path);
		exit(1);
	}
	for (i = 0; i < h->log_records; i++) {
		if (nsd_slot_get(buf + NSD_LOG_HEADER_SIZE + i *
		    NSD_LOG_RECORD_SIZE, h->version < NSD_INDEX_CHECKED, &key,
		    &meta) != NSD_SLOT_FULL) {
			fprintf(stderr, "nsd-index-dump: %s: record %" PRIu64
			    " is damaged\n", log_path, i);
			exit(1);
		}
		for (t = 0; t < h->ntables; t++)
			entry_add(es, key, t, nsd_slot_group(meta));
	}
	free(buf);
	close(fd);
	free(log_path);
}

/*
 * Add the committed entries of the stage (the one the header names, or
 * the next build, which a fold cut short left: it holds the same).
 */
static void
read_stage(const char *path, const struct nsd_index_header *h,
    struct entries *es)
{
	struct nsd_stage_header	 sh;
	unsigned char		*map;
	char			*stage_path;
	uint64_t		 size;
	int			 fd;

	if (h->stage_seq == 0)
		return;
	stage_path = nsd_index_path(path, ".stage");
	map = map_file(stage_path, &fd, &size);
	if (size < NSD_STAGE_OFFSET ||
	    nsd_stage_header_decode(map, h->file_id, h->version, &sh) == -1 ||
	    (sh.seq != h->stage_seq && sh.seq != h->stage_seq + 1) ||
	    size != NSD_STAGE_OFFSET + sh.nslots * NSD_INDEX_SLOT_SIZE) {
		fprintf(stderr, "nsd-index-dump: %s: not the stage of %s\n",
		    stage_path, path);
		exit(1);
	}
	add_slots(h, (const struct nsd_index_slot *)(map + NSD_STAGE_OFFSET),
	    sh.nslots, es);
	munmap(map, size);
	close(fd);
	free(stage_path);
}

/* Add the committed entries of PATH.next, while the index grows. */
static int
read_next(const char *path, const struct nsd_index_header *h,
    struct entries *es)
{
	unsigned char	*map;
	char		*next_path;
	uint64_t	 size, nslots = 1ULL << h->next_shift;
	int		 fd, ok;

	if (h->next_shift == 0)
		return (1);
	next_path = nsd_index_path(path, ".next");
	map = map_file(next_path, &fd, &size);
	if (size != nsd_index_file_size(nslots)) {
		fprintf(stderr, "nsd-index-dump: %s: not %" PRIu64 " slots\n",
		    next_path, nslots);
		exit(1);
	}
	ok = add_slots(h, (const struct nsd_index_slot *)(map +
	    NSD_INDEX_TABLE_OFFSET), nslots, es) == h->next_entries;
	munmap(map, size);
	close(fd);
	free(next_path);
	return (ok);
}

/*
 * Put a value of width bytes at off in both header copies of path (or in
 * copy only, 0 or 1, when it is not -1), with the checksum where the
 * version the copy then says has it.
 */
static int
set_field(const char *path, int width, size_t off, uint64_t value, int only)
{
	unsigned char	 copy[NSD_INDEX_COPY_SIZE];
	size_t		 sum;
	uint32_t	 version;
	int		 fd, i;

	if ((fd = open(path, O_RDWR)) == -1) {
		perror(path);
		return (2);
	}
	for (i = 0; i < 2; i++) {
		if (only != -1 && i != only)
			continue;
		if (pread(fd, copy, sizeof copy, i * sizeof copy) !=
		    (ssize_t)sizeof copy) {
			perror(path);
			return (2);
		}
		if (width == 4)
			nsd_put_le32(copy + off, value);
		else
			nsd_put_le64(copy + off, value);
		version = nsd_le32(copy + 8);
		sum = version < 4 ? NSD_INDEX_V3_CHECKSUM :
		    version < NSD_INDEX_CHECKED ? NSD_INDEX_V4_CHECKSUM :
		    version < NSD_INDEX_SKETCHED ? NSD_INDEX_V5_CHECKSUM :
		    offsetof(struct nsd_index_header, checksum);
		nsd_put_le64(copy + sum, XXH3_64bits(copy, sum));
		if (pwrite(fd, copy, sizeof copy, i * sizeof copy) !=
		    (ssize_t)sizeof copy) {
			perror(path);
			return (2);
		}
	}
	return (close(fd) == 0 ? 0 : 2);
}

/* Write key and meta, with its check, at byte off of path. */
static int
put_slot(const char *path, size_t off, uint64_t key, uint64_t meta)
{
	unsigned char	 slot[NSD_INDEX_SLOT_SIZE];
	int		 fd;

	nsd_slot_put(slot, key, meta);
	if ((fd = open(path, O_RDWR)) == -1 ||
	    pwrite(fd, slot, sizeof slot, off) != (ssize_t)sizeof slot) {
		perror(path);
		return (2);
	}
	return (close(fd) == 0 ? 0 : 2);
}

/* Print a key of table 0 that the key filter of the index at path lacks. */
static int
absent_key(const char *path)
{
	unsigned char			 head[NSD_FILTER_OFFSET];
	struct nsd_index_header		 h;
	struct nsd_filter_header	 fh;
	struct nsd_filter		*f;
	struct nsd_error		 err;
	struct stat			 sb;
	char				*fpath;
	uint64_t			 k;
	int				 fd, ffd, copy;

	fpath = nsd_index_path(path, ".filter");
	if ((fd = open(path, O_RDONLY)) == -1 ||
	    nsd_index_read_header(fd, path, &h, &copy, 0, &err) == -1 ||
	    (ffd = open(fpath, O_RDONLY)) == -1 || fstat(ffd, &sb) == -1 ||
	    pread(ffd, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    nsd_filter_decode_header(head, sb.st_size, h.file_id,
	    h.committed_gen, &fh) != NSD_FILTER_OK) {
		fprintf(stderr, "nsd-index-dump: %s: no key filter to read\n",
		    path);
		return (2);
	}
	f = nsd_filter_new(fh.nblocks);
	if (pread(ffd, f->words, f->nblocks * NSD_FILTER_BLOCK,
	    NSD_FILTER_OFFSET) != (ssize_t)(f->nblocks * NSD_FILTER_BLOCK))
		return (2);
	nsd_filter_words_le(f);
	for (k = 1; nsd_filter_maybe(f, nsd_index_position(&h, 0, k)); k++)
		continue;
	printf("%016" PRIx64 "\n", k);
	nsd_filter_free(f);
	free(fpath);
	close(ffd);
	close(fd);
	return (0);
}

int
main(int argc, char **argv)
{
	struct nsd_index_header	 h;
	struct nsd_error	 err;
	struct entries		 es = { NULL, 0, 0 };
	unsigned char		*map, *ids;
	char			*ids_path;
	uint64_t		 size, ids_size, i, n, off, len, sig;
	int			 fd, ids_fd, copy, ok;

	if ((argc == 5 || (argc == 6 && (strcmp(argv[5], "A") == 0 ||
	    strcmp(argv[5], "B") == 0))) &&
	    (strcmp(argv[1], "--set-u32") == 0 ||
	    strcmp(argv[1], "--set-u64") == 0))
		return (set_field(argv[4], argv[1][7] == '3' ? 4 : 8,
		    strtoul(argv[2], NULL, 10), strtoull(argv[3], NULL, 0),
		    argc == 6 ? argv[5][0] - 'A' : -1));
	if (argc == 6 && strcmp(argv[1], "--put-slot") == 0)
		return (put_slot(argv[2], strtoul(argv[3], NULL, 10),
		    strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0)));
	if (argc == 3 && strcmp(argv[1], "--absent-key") == 0)
		return (absent_key(argv[2]));
	if (argc != 2) {
		fputs("usage: nsd-index-dump PATH\n"
		    "       nsd-index-dump --set-u32|--set-u64 OFFSET VALUE "
		    "PATH [A|B]\n"
		    "       nsd-index-dump --put-slot FILE OFFSET KEY META\n"
		    "       nsd-index-dump --absent-key PATH\n",
		    stderr);
		return (2);
	}
	map = map_file(argv[1], &fd, &size);
	if (nsd_index_read_header(fd, argv[1], &h, &copy, 0, &err) == -1) {
		fprintf(stderr, "nsd-index-dump: %s\n", err.msg);
		return (2);
	}
	ok = size == nsd_index_file_size(h.nslots) &&
	    add_slots(&h, (const struct nsd_index_slot *)(map +
	    NSD_INDEX_TABLE_OFFSET), h.nslots, &es) == h.entries;
	ok = read_next(argv[1], &h, &es) && ok;
	read_stage(argv[1], &h, &es);
	read_log(argv[1], &h, &es);
	if (es.n > 0)
		qsort(es.e, es.n, sizeof *es.e, entry_cmp);
	/* Each entry once, wherever it is. */
	for (i = 0, n = 0; i < es.n; i++)
		if (n == 0 || entry_cmp(&es.e[n - 1], &es.e[i]) != 0)
			es.e[n++] = es.e[i];
	printf("committed %" PRIu64 " records %" PRIu64 " groups %" PRIu64
	    " entries %" PRIu64 " ids %" PRIu64 "\n", h.committed_gen,
	    h.records, h.groups, n, h.ids_length);

	ids_path = nsd_index_path(argv[1], ".ids");
	ids = map_file(ids_path, &ids_fd, &ids_size);
	for (off = NSD_IDS_HEADER_SIZE; off + NSD_IDS_RECORD_HEAD <=
	    h.ids_length && off < ids_size;
	    off += nsd_ids_record_bytes(len, nsd_ids_sig_bytes(&h))) {
		len = nsd_le32(ids + off + 8);
		printf("group %" PRIu32 " at %" PRIu64 " id %.*s",
		    nsd_le32(ids + off), off / 8, (int)len,
		    ids + off + NSD_IDS_RECORD_HEAD);
		/* A MinHash signature, by a hash of it. */
		sig = nsd_ids_sig_bytes(&h);
		if (sig > 0 && off + nsd_ids_record_bytes(len, sig) <= ids_size)
			printf(" signature %016" PRIx64, XXH3_64bits(ids + off +
			    nsd_ids_record_size(len), sig));
		printf("\n");
	}
	for (i = 0; i < n; i++)
		printf("entry %" PRIu64 " %016" PRIx64 " %" PRIu64 "\n",
		    es.e[i].table, es.e[i].key, es.e[i].group);
	free(es.e);
	free(ids_path);
	return (fflush(stdout) == 0 && ok ? 0 : 1);
}
