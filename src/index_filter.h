/*
 * index_filter.h: the key filter of an index file (PATH.filter), a blocked
 * Bloom filter of the positions (nsd_index_position()) of every entry in
 * the index's table files, so that a lookup of a key that is in none of
 * them reads none of them.
 *
 * The filter answers "absent", which is always true, or "maybe". It is
 * kept in memory by the run that made it (nsd_filter_new()), or in a
 * private mapping of the file by the run that read it (nsd_filter_over()),
 * which frees it with nsd_filter_free(); its bytes on disk are a header
 * (nsd_filter_encode_header(), nsd_filter_decode_header()) and the words
 * after it.
 * Nothing here does I/O or fails, but for decoding, which says why the
 * bytes are not a filter the index can use. The design is in
 * index_filter.c, the file's layout here and in nsdedup-index(5).
 *
 * PATH.filter: a header in the first NSD_FILTER_OFFSET bytes (struct
 * nsd_filter_header, little-endian), then the blocks, 64 bytes each, as
 * little-endian 64-bit words: 8 a block, bit j of a block bit (j & 63) of
 * its word j >> 6.
 */
#ifndef NSD_INDEX_FILTER_H
#define NSD_INDEX_FILTER_H

#include <stddef.h>
#include <stdint.h>

#define NSD_FILTER_MAGIC	"NSDKEYS\0"
#define NSD_FILTER_VERSION	1	/* of the filter file's layout */
#define NSD_FILTER_OFFSET	4096	/* the blocks of PATH.filter */
#define NSD_FILTER_BLOCK	64	/* bytes: a cache line */
#define NSD_FILTER_PROBES	6	/* bits set in a block for a key */
/* Bytes of filter for each slot of the table: 8 bits. */
#define NSD_FILTER_SLOTS_PER_BLOCK	NSD_FILTER_BLOCK

struct nsd_filter_header {
	char		 magic[8];	/* NSD_FILTER_MAGIC */
	uint32_t	 version;	/* NSD_FILTER_VERSION */
	uint32_t	 size;		/* sizeof this struct */
	uint64_t	 file_id;	/* the index's */
	uint64_t	 gen;		/* it holds every entry of every run
					   up to this generation */
	uint64_t	 nblocks;	/* a power of two */
	uint64_t	 keys;		/* keys that set a bit */
	uint64_t	 bits_sum;	/* XXH3-64 of the blocks */
	uint64_t	 reserved[3];	/* 0 */
	uint64_t	 checksum;	/* XXH3-64 of the bytes before it */
};

struct nsd_filter {
	uint64_t	*words;		/* nblocks * 8 */
	void		*map;		/* NULL, or the private mapping of
					   PATH.filter the words lie in */
	size_t		 map_len;
	uint64_t	 nblocks;
	unsigned	 shift;		/* 64 - log2(nblocks) */
	uint64_t	 keys;		/* keys that set a bit */
	uint64_t	 gen;		/* as in the header it was read from */
	int		 changed;	/* since it was read or written */
};

/* Why the bytes of PATH.filter are not a filter that can be used. */
enum nsd_filter_state {
	NSD_FILTER_OK,
	NSD_FILTER_DAMAGED,	/* no magic, a checksum fails, sizes */
	NSD_FILTER_OTHER,	/* another index's, or another version's */
	NSD_FILTER_STALE	/* older than the last commit */
};

/* The blocks of a filter for a table of nslots slots. */
uint64_t nsd_filter_blocks(uint64_t);

/* An empty filter of nblocks blocks (a power of two, at least 1). */
struct nsd_filter *nsd_filter_new(uint64_t);
/*
 * A filter of nblocks blocks (a power of two, at least 2) over words,
 * which lie in map, a private mapping map_len bytes long that
 * nsd_filter_free() unmaps.
 */
struct nsd_filter *nsd_filter_over(void *, size_t, uint64_t *, uint64_t);
void	 nsd_filter_free(struct nsd_filter *);

/* Bytes of a filter file of nblocks blocks. */
static inline uint64_t
nsd_filter_file_size(uint64_t nblocks)
{
	return (NSD_FILTER_OFFSET + nblocks * NSD_FILTER_BLOCK);
}

/*
 * The mixed hash of position pos that picks the bits in its block; its
 * block is the position's top bits, as a table's home bucket is.
 */
static inline uint64_t
nsd_filter_mix(uint64_t pos)
{
	pos = (pos ^ (pos >> 30)) * 0xBF58476D1CE4E5B9ULL;
	pos = (pos ^ (pos >> 27)) * 0x94D049BB133111EBULL;
	return (pos ^ (pos >> 31));
}

/* Whether position pos may be in the filter: 0 means surely not. */
static inline int
nsd_filter_maybe(const struct nsd_filter *f, uint64_t pos)
{
	const uint64_t	*w = f->words + (pos >> f->shift) * 8;
	uint64_t	 h = nsd_filter_mix(pos);
	unsigned	 i, b;

	for (i = 0; i < NSD_FILTER_PROBES; i++, h >>= 9) {
		b = h & 511;
		if (!(w[b >> 6] >> (b & 63) & 1))
			return (0);
	}
	return (1);
}

/* The filter's block of position pos, to prefetch. */
static inline const void *
nsd_filter_block(const struct nsd_filter *f, uint64_t pos)
{
	return (f->words + (pos >> f->shift) * 8);
}

/* Put position pos into the filter. */
void	 nsd_filter_add(struct nsd_filter *, uint64_t);

/*
 * Encode f's header, for the index file_id, into NSD_FILTER_OFFSET bytes;
 * the blocks follow as nsd_filter_words_le() leaves them.
 */
void	 nsd_filter_encode_header(const struct nsd_filter *, uint64_t, void *);

/*
 * Turn f's words to little-endian (and back again: the same swap), for
 * writing them out and after reading them in; nothing on a little-endian
 * machine.
 */
void	 nsd_filter_words_le(struct nsd_filter *);

/*
 * Check the header read from a filter file of len bytes against the
 * index (its file_id and committed generation): OK, with the header in
 * host order in *h, or why not.
 */
enum nsd_filter_state nsd_filter_decode_header(const void *, uint64_t,
	    uint64_t, uint64_t, struct nsd_filter_header *);

/* Whether f's words, just read, sum to what header h says. */
int	 nsd_filter_sum_ok(const struct nsd_filter *,
	    const struct nsd_filter_header *);

/* Words of f with their bits set, for the bits a key gets. */
uint64_t nsd_filter_bits_set(const struct nsd_filter *);

const char *nsd_filter_problem(enum nsd_filter_state);

#endif /* NSD_INDEX_FILTER_H */
