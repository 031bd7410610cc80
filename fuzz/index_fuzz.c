/*
 * index_fuzz.c: opening an index file made of arbitrary bytes.
 *
 * The input is a flags byte, then the bytes of PATH, PATH.ids and PATH.log
 * separated by SEP (a missing part is a missing file). With flag 1 the
 * checksums of both header copies are recomputed first, so that mutated
 * headers get past the checksum to the checks behind it. The files are
 * written to a scratch directory, then read as nsdedup --db-info,
 * --db-verify and --db --no-update would: described, verified, and opened
 * read-only with the parameters the header names, with lookups of the keys
 * in the first slots, the names of the groups found, and a claim (kept in
 * memory). Nothing may read or write out of bounds; errors are fine.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "index.h"
#include "index_format.h"
#include "simhash.h"
#include "text.h"
#include "fuzz.h"

#define SEP		"\n--nsdfuzz--\n"
#define SEP_LEN		(sizeof SEP - 1)
#define NKEYS		64

static char	 dir[] = "/tmp/nsd-fuzz-index.XXXXXX";
static char	*paths[4];	/* PATH, PATH.ids, PATH.log, PATH.lock */

static void
cleanup(void)
{
	size_t	 i;

	for (i = 0; i < 4; i++)
		unlink(paths[i]);
	rmdir(dir);
}

static void
init(void)
{
	static const char *suffix[4] = { "", ".ids", ".log", ".lock" };
	size_t	 i;

	if (mkdtemp(dir) == NULL)
		FUZZ_FAIL("mkdtemp");
	for (i = 0; i < 4; i++) {
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

/* Give both header copies the checksum they claim to have. */
static void
fix_checksums(uint8_t *p, size_t n)
{
	const size_t	 at = offsetof(struct nsd_index_header, checksum);
	uint64_t	 sum;
	size_t		 c, i;

	for (c = 0; c < 2; c++) {
		if (n < c * NSD_INDEX_COPY_SIZE + at + 8)
			return;
		sum = XXH3_64bits(p + c * NSD_INDEX_COPY_SIZE, at);
		for (i = 0; i < 8; i++)
			p[c * NSD_INDEX_COPY_SIZE + at + i] = sum >> (8 * i);
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
	if (strcmp(method, "simhash") == 0 && r->distance <= 8)
		p->ntables = nsd_simhash_tables(r->distance, p->masks);
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
	else if (nsd_index_claim(ix, 42, g, &err) == 0) {
		FUZZ_CHECK(nsd_index_lookup(ix, 42, &group, &err) == 0);
		FUZZ_CHECK(group != 0);
	}
	nsd_index_info(ix, &info);
	(void)sink;
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
	uint8_t			*copy = NULL;
	uint64_t		 problems;
	char			 method[sizeof r.method + 1];
	size_t			 i, len, table_len = 0;

	if (!ready) {
		init();
		ready = 1;
	}
	if (size == 0)
		return (0);
	for (i = 0; i < 4; i++)
		unlink(paths[i]);
	part = data + 1;
	end = data + size;
	for (i = 0; i < 3 && part != NULL; i++) {
		sep = memmem(part, end - part, SEP, SEP_LEN);
		len = (sep ? sep : end) - part;
		if (i == 0) {
			copy = xmalloc(len + 1);
			memcpy(copy, part, len);
			if (data[0] & 1)
				fix_checksums(copy, len);
			write_file(paths[0], copy, len);
			table_len = len;
		} else
			write_file(paths[i], part, len);
		part = sep ? sep + SEP_LEN : NULL;
	}

	if (nsd_index_describe(paths[0], 0, &r, &err) == 0) {
		params_of(&r, &p, method);
		o.path = paths[0];
		o.readonly = 1;
		o.wait_ms = 0;
		if (nsd_index_open_file(&ix, &o, &p, &err) == 0) {
			exercise(ix, copy, table_len,
			    strcmp(method, "simhash") == 0, r.distance);
			nsd_index_close(ix);
		}
	}
	problems = 0;
	(void)nsd_index_verify(paths[0], 0, problem, NULL, 50, &r, &problems,
	    &err);
	free(copy);
	return (0);
}
