/*
 * index_format.h: the bytes of an index file, shared by the live index
 * (index_file.c) and its inspection (index_verify.c).
 *
 * An index named PATH is these files:
 *
 *   PATH        two header copies, then the slot table (mapped);
 *   PATH.ids    the group records, append-only (mapped);
 *   PATH.log    the fingerprints of the runs since the log was last folded
 *               into the stage (or the table rebuilt), append-only;
 *   PATH.stage  the stage, from the first fold on: a header page, then a
 *               slot table like PATH's but smaller (mapped, read-only),
 *               made whole by each fold and never written again;
 *   PATH.next   while the index grows: the table of twice the slots that
 *               the growth sweep copies PATH into (mapped), renamed over
 *               PATH once the sweep has gone round;
 *   PATH.lock   empty; flock(2) on it decides who may write. It is never
 *               renamed, so every run locks the same inode;
 *   PATH.undo   what --db-undo needs of the last NSD_UNDO_RUNS commits
 *               (below), written at each commit;
 *
 * and, only while they are built, PATH.new (a new index, or the table a
 * bulk load rebuilds) and PATH.stage.new (a fold's stage), each renamed
 * into place when done. How they are used is in index_file.c.
 *
 * Every integer is little-endian whatever the machine ("canonical byte
 * order"), so an index can be copied between machines. The layout is
 * pinned by the static_asserts in index_format.c and described for users
 * in nsdedup-index(5); any change to it is a new NSD_INDEX_VERSION.
 *
 * The header (one copy; the file holds two, at 0 and at 4096):
 *
 *   magic "NSDINDEX", version, byte-order mark, the file's random id (also
 *   in PATH.ids), a sequence number (the valid copy with the higher one is
 *   current), the fingerprint parameters, the table's size, and the state
 *   of the last commit: its generation, the generation a run may have
 *   started since (pending), the counts, the committed lengths of PATH.ids
 *   and PATH.log, the build of the stage in use, where the sweep is in the
 *   hash space and how far it has gone since the last fold, and, while
 *   the index grows, the size of PATH.next and how far the growth sweep
 *   has copied PATH into it; then MinHash's bins, bands, rows and
 *   threshold, the checks of the log and the newest group, and the bytes
 *   of the sketch each group keeps. An XXH3-64 checksum of everything
 *   before it ends the copy. Versions 1 and 2 had no stage and no growth
 *   (their fields were reserved, and zero); versions 1 to 3 ended at
 *   next_entries, with the checksum after it (NSD_INDEX_V3_SIZE); version
 *   4 at threshold, version 5 at last_group, and their groups kept no
 *   sketch.
 *
 * A slot is 16 bytes, in PATH, PATH.stage and PATH.next alike: the 64-bit
 * key (a fingerprint), then a word holding the generation of the run that
 * wrote it (bits 0-19), the table it belongs to (bits 20-23), its group
 * (bits 24-55) and a check of the other 15 bytes (bits 56-63, see "Checks"
 * below); an empty slot is all zeros. (Versions 1 to 4 had the generation
 * in bits 0-23, the table in 24-27, the group in 28-63, and no check: they
 * are read through nsd_slot_get() as if they were version 5.)
 * A group is the offset of its record in PATH.ids in units of 8 bytes,
 * which grows with every new group, so a smaller group is an older one.
 *
 * Slots are probed in buckets of four (64 bytes, one cache line): an entry
 * is in the bucket of its home slot, or in a later one when every bucket
 * in between is full. Several tables share the slots: table t finds its
 * home from (key & mask[t]), so entries whose keys agree under the mask
 * meet on one probe chain. nshash uses one table with the whole key;
 * SimHash's block tables are masks over its bits. Entries with equal keys
 * may repeat. The home is the top bits of the entry's position in the
 * hash space (nsd_index_position()), so that the table, the stage and
 * PATH.next, whatever their sizes, map the space in the same order, and a
 * stretch of it is a run of buckets in each.
 *
 * A group record in PATH.ids: the group's number (4 bytes), its checksum
 * (4 bytes), the id's length (4 bytes) and the id (a JSON token, possibly
 * empty), padded with zeros to a multiple of 8; in a MinHash index, then
 * the signature of the group's first record (2 bytes a bin, see
 * minhash.h). The file starts with a 16-byte header of its own: magic
 * "NSDIDS\0\1" and the index's file id. (Versions 1 to 4 had an 8-byte
 * number and no checksum; their numbers are below 2^32, so the upgrade to
 * version 5 writes the checksums over the high half, in place.)
 *
 * A record in PATH.log is a fingerprint and its slot word (with table 0,
 * and its check): 16 bytes, which stand for an entry in every table.
 * PATH.log starts with a 16-byte header: magic "NSDLOG\0\1" and the
 * index's file id. Only its first log_records records count; an nshash
 * fingerprint of the log is in no table file (PATH, PATH.stage or
 * PATH.next). Version 1 had no log (its log_records field was reserved,
 * and zero).
 *
 * PATH.stage starts with its own header (struct nsd_stage_header) in the
 * first NSD_STAGE_OFFSET bytes: magic "NSDSTAGE", the index's file id, the
 * build's number (the header of the index names the build in use), the
 * slots and entries, the sweep's position when it was made, the newest
 * generation among its entries, whether it took the log in, and an
 * XXH3-64 checksum. PATH.next has the layout of PATH; its header copies
 * are written only when it is renamed over PATH.
 *
 * Checks. Everything a decision reads is checked before it is believed
 * (version 5 on), so that damage stops a run rather than changing its
 * answers:
 *
 *   - each header copy and the stage's header end with an XXH3-64 checksum;
 *     the header's fields must also agree with each other (a committed
 *     generation of 0 is an empty index; pending_gen is committed_gen or
 *     the one after) and with the other copy, which never holds a newer
 *     state (nsd_index_read_header());
 *   - each slot, and each log record, carries a check byte: the xor of its
 *     other 15 bytes (nsd_slot_check()). It sees every changed byte, every
 *     flipped bit, every change within 8 consecutive bits and every change
 *     of an odd number of bits; of damage that changes several bytes at
 *     random, 1 in 256 goes unseen, as with any check of 8 bits. A CRC-8
 *     would also see most changes of two bits in the same place of two
 *     bytes, but its table lookups cost a run that writes a bulk load a
 *     fifth more CPU (minhash, 100 MB); the parity costs a few
 *     instructions, and the lookups that read every slot of a bucket barely
 *     notice it;
 *   - each group record carries the low 32 bits of the XXH3-64 of its
 *     bytes from the id's length on, seeded with its number and its place
 *     in the file;
 *   - the header keeps log_sum, the sum of the XXH3-64 of each committed
 *     log record seeded with its number, which a run recomputes as it
 *     reads the log, and last_group, the place of the newest group record,
 *     whose number must be the header's groups and whose end must be
 *     ids_length.
 *
 * PATH.undo starts with a 64-byte header of its own: magic "NSDUNDO\0\1",
 * the index's file id, and replaced_gen: the commits up to this
 * generation saved headers that name a table put out of place since (0:
 * none; see nsd_file_undo_replaced()); then zeros. Then NSD_UNDO_RUNS
 * entries of NSD_UNDO_ENTRY_SIZE bytes, one a commit, the oldest written
 * over: its serial number (from 1; 0 is an unused entry), what the commit
 * left of the fields that say which commit it was (committed_gen, records,
 * groups, ids_length, committed_at: nothing but a commit changes them),
 * then the
 * header copy current just before the commit was written, as encoded
 * (sizeof struct nsd_index_header bytes, with its own checksum), and last
 * an XXH3-64 checksum of the entry's bytes before it, seeded with the
 * entry's place. That header is the state an undo of the commit goes back
 * to: for a run that added entries, "committed G-1, pending G", after
 * every fold, rebuild and growth the run made, so that writing it as the
 * current header makes the run's entries leftovers, which recover() clears
 * (see "Undo" in index_undo.c).
 */
#ifndef NSD_INDEX_FORMAT_H
#define NSD_INDEX_FORMAT_H

#include <endian.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

#define NSD_INDEX_MAGIC		"NSDINDEX"
#define NSD_INDEX_VERSION	8
#define NSD_INDEX_OLDEST	1	/* the oldest version still read */
#define NSD_INDEX_CHECKED	5	/* the first with checks in its slots,
					   group records and log */
#define NSD_INDEX_SKETCHED	6	/* the first whose groups may keep
					   sketches */
#define NSD_INDEX_FILTERED	7	/* the first with a key filter */
#define NSD_INDEX_WINDOWED	8	/* the first with a window (--ttl) */
#define NSD_INDEX_BOM		0x0102030405060708ULL
#define NSD_INDEX_COPY_SIZE	4096	/* room for one header copy */
#define NSD_INDEX_TABLE_OFFSET	(2 * NSD_INDEX_COPY_SIZE)
#define NSD_INDEX_SLOT_SIZE	16
#define NSD_INDEX_BUCKET	4	/* slots probed together: 64 bytes */
#define NSD_INDEX_MAX_TABLES	16
#define NSD_INDEX_MIN_SLOTS	4096
#define NSD_INDEX_MAX_LOAD	75	/* percent; then the table grows */

/* The fields of a slot word. */
#define NSD_INDEX_GEN_BITS	20
#define NSD_INDEX_GEN_MAX	((1ULL << NSD_INDEX_GEN_BITS) - 1)
#define NSD_INDEX_TABLE_SHIFT	20
#define NSD_INDEX_GROUP_SHIFT	24
#define NSD_INDEX_GROUP_MAX	0xffffffffULL
#define NSD_INDEX_CHECK_SHIFT	56
#define NSD_INDEX_META_MASK	((1ULL << NSD_INDEX_CHECK_SHIFT) - 1)

/* The slot word of versions 1 to 4, read as version 5's. */
#define NSD_INDEX_V4_GEN_MAX	((1ULL << 24) - 1)
#define NSD_INDEX_V4_TABLE_SHIFT 24
#define NSD_INDEX_V4_GROUP_SHIFT 28

/* How index files are opened: never blocking on a FIFO, never a tty. */
#define NSD_OPEN_FLAGS		(O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
/*
 * How a run that updates the index opens a file beside it (PATH.ids,
 * PATH.log, PATH.lock) that it may create or write: a symbolic link planted
 * at that predictable name is never followed.
 */
#define NSD_WRITE_FLAGS		(NSD_OPEN_FLAGS | O_NOFOLLOW)

#define NSD_IDS_MAGIC		"NSDIDS\0\1"
#define NSD_IDS_HEADER_SIZE	16
#define NSD_IDS_RECORD_HEAD	12	/* number, checksum, id length */

#define NSD_LOG_MAGIC		"NSDLOG\0\1"
#define NSD_LOG_HEADER_SIZE	16
#define NSD_LOG_RECORD_SIZE	16
#ifndef NSD_LOG_MAX_ENTRIES
#define NSD_LOG_MAX_ENTRIES	(1ULL << 20)	/* see nsd_index_log_limit */
#endif

/*
 * What every refusal of a damaged index ends with: how to see all of the
 * damage, and where the ways to mend it are written.
 */
#define NSD_DAMAGE_HINT	"(try --db-verify; see Damage in nsdedup-index(5))"

#define NSD_STAGE_MAGIC		"NSDSTAGE"
#define NSD_STAGE_OFFSET	4096	/* the slots of PATH.stage */

/*
 * One header copy. The struct's layout is the one on disk, where every
 * field is little-endian; decoded, the fields are in host order.
 */
struct nsd_index_header {
	char		 magic[8];
	uint32_t	 version;
	uint32_t	 size;		/* sizeof this struct */
	uint64_t	 byte_order;	/* NSD_INDEX_BOM */
	uint64_t	 file_id;
	uint64_t	 sequence;
	char		 method[16];	/* NUL-padded */
	uint32_t	 sentences;
	uint32_t	 min_length;
	uint32_t	 compat;
	uint32_t	 norm_version;
	uint64_t	 seed;
	uint32_t	 distance;
	uint32_t	 ntables;
	uint64_t	 mask[NSD_INDEX_MAX_TABLES];
	uint64_t	 nslots;	/* a power of two */
	uint32_t	 slot_size;
	uint32_t	 max_load;	/* percent */
	uint64_t	 committed_gen;
	uint64_t	 pending_gen;	/* > committed_gen: a run may have
					   written slots since */
	uint64_t	 records;
	uint64_t	 groups;
	uint64_t	 entries;	/* filled slots */
	uint64_t	 ids_length;	/* committed bytes of PATH.ids */
	uint64_t	 created;	/* Unix time */
	uint64_t	 committed_at;
	uint32_t	 ngram;		/* SimHash: characters per CJK
					   feature */
	uint32_t	 shingle;	/* SimHash: words per feature */
	uint32_t	 min_features;	/* SimHash */
	uint32_t	 next_shift;	/* growing: PATH.next has 2^next_shift
					   slots; 0: not growing */
	uint64_t	 log_records;	/* committed records of PATH.log */
	uint64_t	 stage_seq;	/* the build of PATH.stage in use;
					   0: no stage */
	uint64_t	 sweep_cursor;	/* where in the hash space the sweep
					   goes on */
	uint64_t	 sweep_done;	/* swept since the last fold;
					   NSD_SWEPT_ALL: all round */
	uint64_t	 grow_done;	/* covered by the growth sweep */
	uint64_t	 next_entries;	/* committed entries of PATH.next */
	uint32_t	 bins;		/* MinHash: signature bins; 0 for the
					   other methods and before version
					   4, which had not these four */
	uint32_t	 bands;		/* MinHash: LSH bands */
	uint32_t	 rows;		/* MinHash: bins per band */
	uint32_t	 threshold;	/* MinHash: Jaccard, in 1/10000 */
	uint64_t	 log_sum;	/* of the committed log records; 0
					   before version 5, which had not
					   these two */
	uint64_t	 last_group;	/* the newest group (a group record's
					   offset / 8), or 0 when none */
	uint32_t	 sketch_bytes;	/* what each group record keeps after
					   the signature: the sketch of its
					   first record's text (sketch.h);
					   0 before version 6, which had not
					   these two */
	uint32_t	 ttl;		/* the window: a group is forgotten
					   this many seconds after the
					   commit that opened it; 0: never
					   (and before version 8, which had
					   not these two) */
	uint64_t	 ids_start;	/* the first group record kept of
					   PATH.ids: those before were
					   forgotten, their bytes given
					   back; 0: from the start */
	uint64_t	 checksum;	/* XXH3-64 of the bytes before it */
};

/* The longest window, in seconds: 3650 days. */
#define NSD_INDEX_TTL_MAX	(3650ULL * 86400)

/* The size of a header copy of versions 1 to 3, and where its sum was. */
#define NSD_INDEX_V3_SIZE	368
#define NSD_INDEX_V3_CHECKSUM	360
/* The same of version 4, and of version 5. */
#define NSD_INDEX_V4_SIZE	384
#define NSD_INDEX_V4_CHECKSUM	376
#define NSD_INDEX_V5_SIZE	400
#define NSD_INDEX_V5_CHECKSUM	392
/* The same of versions 6 and 7. */
#define NSD_INDEX_V7_SIZE	408
#define NSD_INDEX_V7_CHECKSUM	400

/* A sweep that went all round the hash space, or further. */
#define NSD_SWEPT_ALL	UINT64_MAX

/*
 * The header of PATH.stage, in the first NSD_STAGE_OFFSET bytes of the
 * file, before its slots; written once, when the stage is made. Like the
 * index header, little-endian on disk and in host order decoded.
 */
struct nsd_stage_header {
	char		 magic[8];	/* NSD_STAGE_MAGIC */
	uint32_t	 version;
	uint32_t	 size;		/* sizeof this struct */
	uint64_t	 file_id;	/* the index's */
	uint64_t	 seq;		/* this build's number, from 1 */
	uint64_t	 nslots;	/* a power of two */
	uint64_t	 entries;	/* filled slots */
	uint64_t	 fold_cursor;	/* the sweep cursor when it was made */
	uint64_t	 max_gen;	/* the newest generation among its
					   entries */
	uint64_t	 reserved[4];
	uint64_t	 checksum;	/* XXH3-64 of the bytes before it */
};

#define NSD_UNDO_MAGIC		"NSDUNDO\0\1"
#define NSD_UNDO_HEADER_SIZE	64
#define NSD_UNDO_RUNS		8	/* commits kept for --db-undo */
#define NSD_UNDO_ENTRY_SIZE	512
#define NSD_UNDO_HEAD		48	/* bytes before the header copy */
#define NSD_UNDO_FILE_SIZE	(NSD_UNDO_HEADER_SIZE + \
	NSD_UNDO_RUNS * NSD_UNDO_ENTRY_SIZE)

/* An entry of PATH.undo, decoded: a commit, and the state before it. */
struct nsd_undo_entry {
	uint64_t		 serial;	/* 0: unused */
	/* What the commit left of these fields of the header. */
	uint64_t		 gen;		/* committed_gen */
	uint64_t		 records;
	uint64_t		 groups;
	uint64_t		 ids_length;
	uint64_t		 committed_at;
	struct nsd_index_header	 before;	/* the header current before
						   it */
	int			 replaced;	/* the table it names has been
						   replaced since (not encoded:
						   from the file's header) */
};

/* A slot as it is on disk. */
struct nsd_index_slot {
	uint64_t	 key;
	uint64_t	 meta;
};

/* Why a header copy was not usable. */
enum nsd_header_state {
	NSD_HEADER_OK,
	NSD_HEADER_NOT_INDEX,	/* no magic: not an index at all */
	NSD_HEADER_DAMAGED,	/* bad checksum or impossible values */
	NSD_HEADER_NEWER,	/* a later format version */
	NSD_HEADER_UNKNOWN	/* a later version, or a damaged one */
};

/* Encode a stage header, with its checksum, into NSD_STAGE_OFFSET bytes. */
void	 nsd_stage_header_encode(const struct nsd_stage_header *, void *);

/*
 * Decode a stage header into host order: 0, or -1 when it is not a
 * stage, is damaged, is another index's (file_id), or does not go with an
 * index of the given format version (version 5 and later have stages of
 * their own version; older ones, of version 3 or 4).
 */
int	 nsd_stage_header_decode(const void *, uint64_t, unsigned,
	    struct nsd_stage_header *);

/*
 * Whether stage header sh is of the build after the one index header h
 * names, left by a fold cut short between its rename and its header: made
 * at the cursor h still has; the first build took in the log, which h
 * still counts, or held only entries of the run that made it. Any other
 * build is damage.
 */
int	 nsd_stage_is_next(const struct nsd_index_header *,
	    const struct nsd_stage_header *);

/* Decode a copy into host byte order, saying whether it can be used. */
enum nsd_header_state nsd_index_header_decode(const void *,
	    struct nsd_index_header *);

/* Encode h, with its checksum, into a copy of NSD_INDEX_COPY_SIZE bytes. */
void	 nsd_index_header_encode(const struct nsd_index_header *, void *);

const char *nsd_index_header_problem(enum nsd_header_state);

/*
 * Encode entry e as the bytes of place i of PATH.undo (NSD_UNDO_ENTRY_SIZE
 * of them), with its checksum.
 */
void	 nsd_undo_entry_encode(const struct nsd_undo_entry *, unsigned,
	    void *);

/*
 * Decode the entry at place i of PATH.undo of the index file_id:
 * NSD_SLOT_EMPTY (never written), NSD_SLOT_FULL, or NSD_SLOT_DAMAGED (its
 * checksum fails, or its header copy is not one of this index's).
 */
enum nsd_slot_state nsd_undo_entry_decode(const void *, unsigned, uint64_t,
	    struct nsd_undo_entry *);

/* Whether entry e records the commit that left the state of header h. */
int	 nsd_undo_entry_matches(const struct nsd_undo_entry *,
	    const struct nsd_index_header *);

/*
 * The header that taking back entry e's commit makes current, from the
 * state of header h: the one saved before it, but for what the window has
 * forgotten since (ids_start), which is never taken back: those groups'
 * records may be gone.
 */
struct nsd_index_header nsd_undo_state(const struct nsd_undo_entry *,
	    const struct nsd_index_header *);

/*
 * The commits that --db-undo can take back, newest first, from the state
 * of header h, whose stage holds generations up to stage_max_gen: each the
 * newest entry of e[0..n) that records the commit that left the state,
 * while undoing it needs no file that a later fold, growth, rebuild or
 * upgrade replaced. The first max of them go into steps; the count is
 * returned, and *why says why the next cannot be taken back.
 */
size_t	 nsd_undo_chain(const struct nsd_undo_entry *, size_t,
	    const struct nsd_index_header *, uint64_t,
	    const struct nsd_undo_entry **, size_t, const char **);

/*
 * Read PATH.undo, open at fd, of the index file_id, into e[NSD_UNDO_RUNS]
 * (an entry that cannot be used has serial 0); *damaged counts the entries
 * that fail their checks. -1 with errno set when it cannot be read; 0
 * with every entry unused when it is short or another index's.
 */
int	 nsd_undo_read(int, uint64_t, struct nsd_undo_entry *, unsigned *);

/* Bytes of an index file with nslots slots. */
static inline uint64_t
nsd_index_file_size(uint64_t nslots)
{
	return (NSD_INDEX_TABLE_OFFSET + nslots * NSD_INDEX_SLOT_SIZE);
}

/*
 * The position of an entry of table with key in the hash space, which
 * every table of the index maps in the same order: a table of 2^k slots
 * starts its search for the entry at the slot of the position's top k
 * bits, and the sweeps walk the space by position.
 */
static inline uint64_t
nsd_index_position(const struct nsd_index_header *h, unsigned table,
    uint64_t key)
{
	uint64_t	 k = (key & h->mask[table]) +
	    table * 0xD6E8FEB86659FD93ULL;

	/* Fibonacci hashing: the top bits of a golden-ratio product. */
	return (k * 0x9E3779B97F4A7C15ULL);
}

/* The slot where table's search for key starts, among 2^(64-shift). */
static inline uint64_t
nsd_index_home(const struct nsd_index_header *h, unsigned table,
    uint64_t key, unsigned shift)
{
	return (nsd_index_position(h, table, key) >> shift);
}

/*
 * A slot word without its check: what index_file.c and index_verify.c
 * pass around as "meta"; nsd_slot_put() adds the check.
 */
static inline uint64_t
nsd_slot_meta(uint64_t gen, unsigned table, uint64_t group)
{
	return (gen | (uint64_t)table << NSD_INDEX_TABLE_SHIFT |
	    group << NSD_INDEX_GROUP_SHIFT);
}

static inline uint64_t
nsd_slot_gen(uint64_t meta)
{
	return (meta & NSD_INDEX_GEN_MAX);
}

static inline unsigned
nsd_slot_table(uint64_t meta)
{
	return ((meta >> NSD_INDEX_TABLE_SHIFT) & 0xf);
}

static inline uint64_t
nsd_slot_group(uint64_t meta)
{
	return ((meta >> NSD_INDEX_GROUP_SHIFT) & NSD_INDEX_GROUP_MAX);
}

/*
 * The check of a slot: the xor of its 15 other bytes (the key's 8 and the
 * low 7 of meta), its longitudinal parity, bit k of the check the parity
 * of bit k of every byte. It is linear and each byte's share is the byte
 * itself, so a change confined to one byte, or to any 8 consecutive bits,
 * always changes it, and so does any change of an odd number of bits.
 */
static inline unsigned
nsd_slot_check(uint64_t key, uint64_t meta)
{
	uint64_t	 x = key ^ (meta & NSD_INDEX_META_MASK);

	x ^= x >> 32;
	x ^= x >> 16;
	x ^= x >> 8;
	return (x & 0xff);
}

/* What a slot (or a log record) holds. */
enum nsd_slot_state {
	NSD_SLOT_EMPTY,		/* all zeros */
	NSD_SLOT_FULL,		/* an entry, in *key and *meta */
	NSD_SLOT_DAMAGED	/* its check fails, or generation 0 */
};

/*
 * Read the 16 bytes of a slot or a log record at p, of an index of format
 * version 5 or later (checked) or of an older one (legacy: converted to
 * version 5's slot word, with no check to test; a generation of 0 is
 * empty, as those versions read it).
 */
static inline enum nsd_slot_state
nsd_slot_get(const void *p, int legacy, uint64_t *key, uint64_t *meta)
{
	uint64_t	 k, m, gen, group;

	memcpy(&k, p, sizeof k);
	memcpy(&m, (const char *)p + 8, sizeof m);
	*key = k = le64toh(k);
	m = le64toh(m);
	if (legacy) {
		gen = m & NSD_INDEX_V4_GEN_MAX;
		group = m >> NSD_INDEX_V4_GROUP_SHIFT;
		*meta = nsd_slot_meta(gen, (m >> NSD_INDEX_V4_TABLE_SHIFT) &
		    0xf, group & NSD_INDEX_GROUP_MAX);
		if (gen == 0)
			return (NSD_SLOT_EMPTY);
		return (gen > NSD_INDEX_GEN_MAX || group > NSD_INDEX_GROUP_MAX ?
		    NSD_SLOT_DAMAGED : NSD_SLOT_FULL);
	}
	*meta = m & NSD_INDEX_META_MASK;
	if ((k | m) == 0)
		return (NSD_SLOT_EMPTY);
	if (m >> NSD_INDEX_CHECK_SHIFT != nsd_slot_check(k, m) ||
	    nsd_slot_gen(m) == 0)
		return (NSD_SLOT_DAMAGED);
	return (NSD_SLOT_FULL);
}

/* Write key and meta, with its check, as the 16 bytes of a slot at p. */
static inline void
nsd_slot_put(void *p, uint64_t key, uint64_t meta)
{
	uint64_t	 k = htole64(key), m;

	meta &= NSD_INDEX_META_MASK;
	m = htole64(meta | (uint64_t)nsd_slot_check(key, meta) <<
	    NSD_INDEX_CHECK_SHIFT);
	memcpy(p, &k, sizeof k);
	memcpy((char *)p + 8, &m, sizeof m);
}

/*
 * How many records PATH.log may hold before they are folded into the
 * stage: as many entries (a record per table) as half the table's slots,
 * at least 4096, and never more than NSD_LOG_MAX_ENTRIES, which bounds
 * what a run keeps of the log in its memory. (Versions 1 and 2 merged the
 * log into the table at an eighth of its slots, if fewer.)
 */
static inline uint64_t
nsd_index_log_limit(uint64_t nslots, unsigned ntables)
{
	uint64_t	 entries = nslots / 2;

	if (entries < 4096)
		entries = 4096;
	if (entries > NSD_LOG_MAX_ENTRIES)
		entries = NSD_LOG_MAX_ENTRIES;
	return (entries / ntables);
}

/*
 * The sweep period of a table of nslots slots: the entries that come into
 * the index while the sweep goes once round the hash space. An eighth of
 * the slots, so that a sweep writes each page of the table once for about
 * 32 entries it moves into it.
 */
static inline uint64_t
nsd_index_sweep_period(uint64_t nslots)
{
	return (nslots / 8 > 1024 ? nslots / 8 : 1024);
}

/* Bytes a group record with an id of len bytes takes in PATH.ids. */
static inline uint64_t
nsd_ids_record_size(size_t len)
{
	return ((NSD_IDS_RECORD_HEAD + (uint64_t)len + 7) & ~(uint64_t)7);
}

/*
 * The same, with what a group keeps after the id (and its padding):
 * sig_bytes, a multiple of 8.
 */
static inline uint64_t
nsd_ids_record_bytes(size_t len, uint64_t sig_bytes)
{
	return (nsd_ids_record_size(len) + sig_bytes);
}

/*
 * What a group record of an index with header h holds after the id:
 * MinHash's signature, then the sketch.
 */
static inline uint64_t
nsd_ids_sig_bytes(const struct nsd_index_header *h)
{
	return (2 * (uint64_t)h->bins + h->sketch_bytes);
}

/*
 * Whether the group record at rec, of size bytes, holds an id that can be
 * written out: no control characters, zero padding.
 */
int	 nsd_ids_record_clean(const unsigned char *, uint32_t);

/*
 * The checksum of the group record at rec, of group (its offset / 8), in
 * an index whose records hold sig_bytes after the id: what a version 5
 * record keeps in its bytes 4 to 7. The id's length must have been found
 * to fit in the file.
 */
uint32_t nsd_ids_record_sum(const unsigned char *, uint64_t, uint64_t);

/* The log record at rec, number i, as it counts in the header's log_sum. */
uint64_t nsd_log_record_sum(const unsigned char *, uint64_t);

/*
 * Little-endian words at any alignment. Inline: a sketch's comparison
 * reads 46 of them, once for every candidate of every record.
 */
static inline uint64_t
nsd_le64(const void *p)
{
	uint64_t	 v;

	memcpy(&v, p, sizeof v);
	return (le64toh(v));
}

static inline uint32_t
nsd_le32(const void *p)
{
	uint32_t	 v;

	memcpy(&v, p, sizeof v);
	return (le32toh(v));
}

static inline void
nsd_put_le64(void *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof v);
}

static inline void
nsd_put_le32(void *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof v);
}

/*
 * Take the lock of the index at path: shared (readonly) or exclusive,
 * waiting wait_ms milliseconds (-1: as long as it takes). The lock lasts
 * until *fd is closed; *made says whether this call made PATH.lock.
 * Errors: NSD_EXIT_BUSY when the wait ran out, NSD_EXIT_INDEX otherwise.
 */
int	 nsd_index_lock(const char *, int, long, int *, int *,
	    struct nsd_error *);

/*
 * Give up the lock open at fd (-1: none) of a run that refuses the index
 * at path, and remove PATH.lock, which the run made (*made), unless
 * another run holds it or waits for it meanwhile.
 */
void	 nsd_index_lock_drop(const char *, int);

/*
 * Read both header copies of the index open at fd and pick the current
 * one into *h (its copy, 0 or 1, into *copy); with strict, refuse copies
 * that do not agree (nsd_index_copies_agree()). Errors: NSD_EXIT_INDEX.
 */
int	 nsd_index_read_header(int, const char *, struct nsd_index_header *,
	    int *, int, struct nsd_error *);

/*
 * Whether header copy newer can have been written after copy older: the
 * copies are written in turn, each with the sequence number after the
 * other's (or both alike), never change what the index was made with, and
 * never go back on a commit, a record, a group or a table that grew.
 */
int	 nsd_index_copies_agree(const struct nsd_index_header *,
	    const struct nsd_index_header *);

struct stat;

/*
 * The error of an open(2) of path with NSD_WRITE_FLAGS that failed: a
 * symbolic link found there is named as such, anything else is reported as
 * "path: what: strerror(errno)". Returns -1 (NSD_EXIT_INDEX).
 */
int	 nsd_index_open_error(struct nsd_error *, const char *, const char *);

/* fstat() an index file open at fd, which must be a regular file. */
int	 nsd_index_fstat(int, const char *, struct stat *, struct nsd_error *);

/*
 * The path an index is used by: a symbolic link is followed, so that growth
 * renames into the file it points to and the other files sit beside that.
 * free() it.
 */
char	*nsd_index_resolve(const char *);

/* The file names of the index at path: path + suffix; free() it. */
char	*nsd_index_path(const char *, const char *);

#endif /* NSD_INDEX_FORMAT_H */
