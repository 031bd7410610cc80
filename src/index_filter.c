/*
 * index_filter.c: the key filter of an index file.
 *
 * Why. A run of new records mostly looks up keys that are not in the
 * index, and such a lookup reads the key's home bucket in the table, the
 * stage and PATH.next: a random page of each. Against an index of 10^8
 * entries (a table of 2 GiB) whose pages are not in memory, that is a
 * read from disk for nearly every new key. A present key costs those reads
 * anyway, to find its group; an absent one need not: a filter that fits
 * in memory and says "absent" for most absent keys spares them. It must
 * never say "absent" for a key that is there, which would lose a
 * duplicate; a "maybe" for a key that is not there (a false positive, or
 * a key that was there once) only costs the reads the lookup would have
 * made without it.
 *
 * What. A blocked Bloom filter: 2^b blocks of 512 bits, one cache line
 * each. A key is its entry's position in the hash space
 * (nsd_index_position(), of its table and its key under that table's
 * mask), so one filter holds the keys of every table, SimHash's block
 * tables too, and an entry moved between the table, the stage and
 * PATH.next keeps its key. Its block is the position's top b bits, as its
 * home bucket is the top bits in a table (so the blocks follow the
 * table's order); within it, NSD_FILTER_PROBES bits, 9 bits each of the
 * position mixed again (nsd_filter_mix(), SplitMix64's finalizer, since
 * a position's low bits depend on the key's low bits only). A lookup reads
 * one cache line and no other.
 *
 * Size. A byte for every slot of the table: 8 bits a slot, and a table is
 * grown past 3/4 full, so from 10.7 bits a key (48 keys in a block) to 21
 * just after it doubles. With six bits a key, the false positives are
 * 0.7% at 48 keys a block and 0.03% at 24 (tests/unit/filter_test.c
 * measures them with its keys, and holds them under 1% and 0.1%; a plain
 * Bloom filter of 10.7 bits would give 0.5%, the price of reading one
 * cache line rather than six). An index of 10^8
 * entries has a filter of 128 MiB, read in order when a run opens it.
 *
 * Keys are only ever added: an entry cleared (the leftovers of a run that
 * did not commit) leaves its bits, which is harmless. A table made anew
 * at another size (a rebuild, a growth, an upgrade) gets a filter made
 * anew from every entry of every table file (index_fold.c).
 */
#include "config.h"

#include <sys/mman.h>

#include <assert.h>
#include <endian.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "index_filter.h"
#include "util.h"

static_assert(offsetof(struct nsd_filter_header, gen) == 24, "filter gen");
static_assert(offsetof(struct nsd_filter_header, bits_sum) == 48,
    "filter sum");
static_assert(offsetof(struct nsd_filter_header, checksum) == 80,
    "filter checksum");
static_assert(sizeof(struct nsd_filter_header) == 88, "filter header size");
static_assert(NSD_FILTER_PROBES * 9 <= 64, "bits of one mix");

uint64_t
nsd_filter_blocks(uint64_t nslots)
{
	uint64_t	 n = nslots / NSD_FILTER_SLOTS_PER_BLOCK;

	return (n > 0 ? n : 1);
}

/* A filter of nblocks blocks, rounded up to a power of two, no words. */
static struct nsd_filter *
filter_shaped(uint64_t nblocks)
{
	struct nsd_filter	*f = xcalloc(1, sizeof *f);
	unsigned		 b = 0;

	while ((1ULL << b) < nblocks)
		b++;
	f->nblocks = 1ULL << b;
	f->shift = 64 - b;
	/* A shift of 64 is no shift at all: one block takes every key. */
	if (b == 0) {
		f->nblocks = 2;
		f->shift = 63;
	}
	return (f);
}

struct nsd_filter *
nsd_filter_new(uint64_t nblocks)
{
	struct nsd_filter	*f = filter_shaped(nblocks);

	f->words = xcalloc(f->nblocks * 8, sizeof *f->words);
	return (f);
}

struct nsd_filter *
nsd_filter_over(void *map, size_t map_len, uint64_t *words, uint64_t nblocks)
{
	struct nsd_filter	*f = filter_shaped(nblocks);

	assert(f->nblocks == nblocks);
	f->words = words;
	f->map = map;
	f->map_len = map_len;
	return (f);
}

void
nsd_filter_free(struct nsd_filter *f)
{
	if (f == NULL)
		return;
	if (f->map != NULL)
		(void)munmap(f->map, f->map_len);
	else
		free(f->words);
	free(f);
}

void
nsd_filter_add(struct nsd_filter *f, uint64_t pos)
{
	uint64_t	*w = f->words + (pos >> f->shift) * 8;
	uint64_t	 h = nsd_filter_mix(pos), bit;
	unsigned	 i, b;
	int		 set = 0;

	for (i = 0; i < NSD_FILTER_PROBES; i++, h >>= 9) {
		b = h & 511;
		bit = 1ULL << (b & 63);
		if (!(w[b >> 6] & bit)) {
			w[b >> 6] |= bit;
			set = 1;
		}
	}
	if (set) {
		f->keys++;
		f->changed = 1;
	}
}

void
nsd_filter_words_le(struct nsd_filter *f)
{
#if BYTE_ORDER != LITTLE_ENDIAN
	uint64_t	 i;

	for (i = 0; i < f->nblocks * 8; i++)
		f->words[i] = htole64(f->words[i]);
#else
	(void)f;
#endif
}

/* The sum of f's words, which must be little-endian. */
static uint64_t
bits_sum(const struct nsd_filter *f)
{
	return (XXH3_64bits(f->words, f->nblocks * NSD_FILTER_BLOCK));
}

void
nsd_filter_encode_header(const struct nsd_filter *f, uint64_t file_id,
    void *out)
{
	struct nsd_filter_header	 d;

	memset(out, 0, NSD_FILTER_OFFSET);
	memset(&d, 0, sizeof d);
	memcpy(d.magic, NSD_FILTER_MAGIC, sizeof d.magic);
	d.version = htole32(NSD_FILTER_VERSION);
	d.size = htole32(sizeof d);
	d.file_id = htole64(file_id);
	d.gen = htole64(f->gen);
	d.nblocks = htole64(f->nblocks);
	d.keys = htole64(f->keys);
	d.bits_sum = htole64(bits_sum(f));
	d.checksum = htole64(XXH3_64bits(&d,
	    offsetof(struct nsd_filter_header, checksum)));
	memcpy(out, &d, sizeof d);
}

enum nsd_filter_state
nsd_filter_decode_header(const void *in, uint64_t len, uint64_t file_id,
    uint64_t committed_gen, struct nsd_filter_header *h)
{
	memcpy(h, in, sizeof *h);
	if (memcmp(h->magic, NSD_FILTER_MAGIC, sizeof h->magic) != 0 ||
	    le64toh(h->checksum) != XXH3_64bits(h,
	    offsetof(struct nsd_filter_header, checksum)))
		return (NSD_FILTER_DAMAGED);
	h->version = le32toh(h->version);
	h->size = le32toh(h->size);
	h->file_id = le64toh(h->file_id);
	h->gen = le64toh(h->gen);
	h->nblocks = le64toh(h->nblocks);
	h->keys = le64toh(h->keys);
	h->bits_sum = le64toh(h->bits_sum);
	h->checksum = le64toh(h->checksum);
	if (h->file_id != file_id || h->version != NSD_FILTER_VERSION)
		return (NSD_FILTER_OTHER);
	if (h->size != sizeof *h || h->nblocks < 2 ||
	    (h->nblocks & (h->nblocks - 1)) != 0 ||
	    h->nblocks > (UINT64_MAX - NSD_FILTER_OFFSET) / NSD_FILTER_BLOCK ||
	    nsd_filter_file_size(h->nblocks) != len)
		return (NSD_FILTER_DAMAGED);
	if (h->gen < committed_gen)
		return (NSD_FILTER_STALE);
	return (NSD_FILTER_OK);
}

int
nsd_filter_sum_ok(const struct nsd_filter *f,
    const struct nsd_filter_header *h)
{
	return (f->nblocks == h->nblocks && bits_sum(f) == h->bits_sum);
}

uint64_t
nsd_filter_bits_set(const struct nsd_filter *f)
{
	uint64_t	 i, n = 0;

	for (i = 0; i < f->nblocks * 8; i++)
		n += (uint64_t)__builtin_popcountll(f->words[i]);
	return (n);
}

const char *
nsd_filter_problem(enum nsd_filter_state state)
{
	switch (state) {
	case NSD_FILTER_OK:
		break;
	case NSD_FILTER_DAMAGED:
		return ("damaged");
	case NSD_FILTER_OTHER:
		return ("of another index or format version");
	case NSD_FILTER_STALE:
		return ("older than the last commit");
	}
	return ("usable");
}
