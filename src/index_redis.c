/*
 * index_redis.c: the index shared through Redis or Redis Cluster
 * (--db redis://HOST:PORT[,HOST:PORT...][/NAMESPACE]).
 *
 * Keys, under the namespace NS (no hash tags: the keys spread over every
 * master by their own slots):
 *
 *	NS:params		the parameters the index was made with
 *	NS:next			the last group number handed out
 *	NS:f:<16 hex>		a fingerprint (nshash's sentence hashes, their
 *				--common marks and whole-text keys; minhash's
 *				band keys): the number of the group that
 *				claimed it, in decimal
 *	NS:s:<t>:<16 hex>	SimHash block table t, for one value of its
 *				block: a hash of fingerprint (16 hex) to group
 *	NS:g:<n>		group n: "g", the token of the run that opened
 *				it (16 hex), the first record's signature
 *				(minhash) and its id token; or "@<m>", when
 *				group n gave way to group m (below)
 *	NS:a:<n>:<m>		the arbitration between groups n < m (below)
 *	NS:w:<n>		group n's stance: "root", or "@<m>"
 *	NS:run:<token>		a run: "running" (a lease), or "done"
 *
 * The pipeline works in batches, and so does this index. Before a batch
 * is decided, every key its records may need is read in one pipelined
 * round (nsd_index_prefetch() names them), with the records of every
 * group those keys name. The batch is then decided here, in this
 * process, exactly as the other indexes decide it: lookups read what was
 * fetched, and claims and new groups are noted, so that each record sees
 * the ones before it. nsd_index_settle() then writes the batch: the new
 * groups' records first, so that no host can find a group before its
 * record; then the claims, each atomic on its own key:
 *
 *	SET NS:f:<fp> <group> NX GET	first claim wins, and says who won
 *	HSETNX NS:s:<t>:<v> <fp> <group>, then HLEN of the same key
 *
 * A claim that another host won between the read and the write is a
 * conflict: a record of this batch opened a group while a near copy was
 * being claimed elsewhere. For SimHash the same shows as a block that
 * grew by more than this batch added; the block is read again and its
 * new entries within the distance are the conflicts. Of two near copies
 * on two hosts, at least one sees the other this way: each host writes
 * before it reads its answer, so the one whose answer comes second sees
 * the first. When both see each other, both must not give way, so the
 * pipeline (which knows whether a conflict is similar enough to matter)
 * asks nsd_index_arbitrate() to decide (see redis_arbitrate()): one
 * SET NX key per pair says which group gives way, and one per group makes
 * the group given way to a root that never gives way itself, so that
 * there are no chains and no loops. The group that gives way becomes
 * "@<root>", and its records are the root's duplicates. So two near
 * copies arriving at the same moment on two hosts end with one original.
 *
 * There is no commit: a batch's writes are seen at once. So that a run
 * again after a failed run writes what the failed run would have, each
 * run has a token, kept in its groups' records, and a key that says it is
 * running (a lease renewed as it goes) or done; a failed run deletes it.
 * A record that a group of a failed run holds, with that group's id, is
 * the group's first record written again: the pipeline makes it the
 * original (nsd_index_group_adopt()).
 *
 * Group numbers come from INCRBY NS:next in blocks; at the end of a run
 * the block's unused numbers are handed back when no one has taken a
 * block since, so that one host's runs number their groups 1, 2, 3 ...
 * as the file index does, and hosts running at once interleave blocks.
 *
 * Every command may be sent twice (redis_cluster.c resends what a lost
 * connection left unanswered), and each answers the second time as it
 * did the first: a claim that finds its own group won, HSETNX is a no-op,
 * a group's record is the same bytes; but INCRBY, whose block is then
 * skipped.
 */
#include "config.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "index.h"
#include "index_redis.h"
#include "util.h"

#ifdef NSD_WITH_REDIS
#include "redis_cluster.h"

#define GROUP_BLOCK		1024
#define NAMESPACE_DEFAULT	"nsdedup"
#define NAMESPACE_MAX		64
#define CACHE_GROUPS_MAX	(1u << 16)
#define ALIAS_HOPS_MAX		16
#define RUNS_CACHED		64
/* How long a run is taken for alive after its last batch, in seconds. */
#define RUN_LEASE		600

/* A key of the batch: not read yet, read, or claimed by this batch. */
enum key_state {
	KEY_FREE = 0,
	KEY_WANTED,		/* to read in the next round */
	KEY_KNOWN
};

struct key_slot {
	uint64_t	 key;
	uint64_t	 group;		/* 0: no group holds it */
	uint8_t		 state;
};

/* An open-addressing map from a 64-bit key to a group. */
struct key_map {
	struct key_slot	*slots;
	size_t		 nslots;	/* a power of two */
	size_t		 used;
};

/* SimHash: one entry of a block, and a block (table t, block value v). */
struct block_entry {
	uint64_t	 fp;
	uint64_t	 group;
	size_t		 next;		/* in entries; SIZE_MAX ends */
	int		 ours;		/* added by this batch */
};

struct block_slot {
	uint64_t	 value;
	unsigned	 table;
	uint8_t		 state;
	size_t		 head;		/* in entries */
	uint64_t	 server_len;	/* its entries on the server, when
					   read */
	uint64_t	 added;		/* HSETNX this batch made */
	size_t		 len_reply;	/* batch index of its last HLEN, or
					   SIZE_MAX */
};

struct block_map {
	struct block_slot	*slots;
	size_t			 nslots;
	size_t			 used;
	struct block_entry	*entries;
	size_t			 nentries;
	size_t			 cap;
};

/* What is known of a group. */
struct group_slot {
	uint64_t	 number;	/* 0: free */
	uint64_t	 alias;		/* 0, or the group it turned out to
					   be */
	char		*id;
	size_t		 id_len;
	unsigned char	*sig;
	int		 known;
	int		 gone;		/* its record expired, or was lost */
	int		 queued;	/* in wanted_groups */
	uint64_t	 run;		/* the run that opened it */
};

struct group_map {
	struct group_slot	*slots;
	size_t			 nslots;
	size_t			 used;
};

/* A write of this batch, in the order made. */
struct claim {
	uint64_t	 key;		/* fp; SimHash: the fingerprint */
	uint64_t	 group;
	unsigned	 table;		/* SimHash */
	uint64_t	 value;		/* SimHash: the block value */
	uint64_t	 replaces;	/* a gone group the key names, or 0 */
};

struct redis_index {
	struct nsd_index	 base;
	struct nsd_redis	*cl;
	char			*url;		/* for messages */
	char			 ns[NAMESPACE_MAX + 1];
	int			 readonly;
	long			 ttl;		/* seconds; 0: keys stay */
	int			 repeats;	/* keys added to block tables,
					   not claimed (nsd_index_params) */
	unsigned		 distance;	/* SimHash, from near() */

	struct key_map		 keys;
	struct block_map	 blocks;
	struct group_map	 groups;
	uint64_t		*wanted_groups;
	size_t			 nwanted_groups;
	size_t			 wanted_groups_cap;
	uint64_t		*wanted_keys;	/* in the next read */
	size_t			 nwanted_keys;
	size_t			 wanted_keys_cap;
	struct wanted_block {
		unsigned	 table;
		uint64_t	 value;
	}			*wanted_blocks;
	size_t			 nwanted_blocks;
	size_t			 wanted_blocks_cap;

	struct claim		*claims;
	size_t			 nclaims;
	size_t			 claims_cap;
	uint64_t		*fresh;		/* groups opened this batch */
	size_t			 nfresh;
	size_t			 fresh_cap;

	struct nsd_index_conflict *conflicts;
	size_t			 nconflicts;
	size_t			 conflicts_cap;

	uint64_t		 block_next;	/* group numbers in hand */
	uint64_t		 block_end;	/* the last in hand; 0: none */
	uint64_t		 block_taken;	/* the counter when taken */

	struct nsd_redis_batch	 batch;
	struct nsd_buf		 keybuf;	/* the group records of a
						   batch */

	uint64_t		 run;		/* this run's token */
	char			 run_hex[17];
	long			 run_marked;	/* when last said alive */
	int			 committed;
	struct run_state {
		uint64_t	 run;
		int		 live;	/* running, or done */
	}			 runs[RUNS_CACHED];
	size_t			 nruns;
	uint64_t		 claimed;	/* claims this run won */
	uint64_t		 opened;
	uint64_t		 conflicts_seen;
	uint64_t		 gave_way;
};

/* Write v as 16 lower-case hex digits at p; returns the end. */
static char *
put_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	int	 i;

	for (i = 15; i >= 0; i--, v >>= 4)
		p[i] = digits[v & 15];
	return (p + 16);
}

/*
 * A fingerprint's key "NS:f:<hex>", or (table t) a SimHash block's
 * "NS:s:<t>:<hex>", into buf, which holds NAMESPACE_MAX + 64 bytes. Not
 * snprintf(): this runs for every key of every batch.
 */
static size_t
key_name(const struct redis_index *ri, char *buf, size_t size,
    const char *kind, uint64_t a, uint64_t b, int two)
{
	char	*p = buf;
	size_t	 ns_len = strlen(ri->ns);
	char	 table[24];
	int	 n;

	assert(size >= NAMESPACE_MAX + 64);
	memcpy(p, ri->ns, ns_len);
	p += ns_len;
	*p++ = ':';
	*p++ = kind[0];
	*p++ = ':';
	if (two) {
		n = snprintf(table, sizeof table, "%" PRIu64 ":", a);
		memcpy(p, table, (size_t)n);
		p += n;
		a = b;
	}
	p = put_hex(p, a);
	*p = '\0';
	return ((size_t)(p - buf));
}

/* Group n's key "NS:g:N" into buf. */
static size_t
group_key(const struct redis_index *ri, char *buf, size_t size, uint64_t n)
{
	int	 len;

	len = snprintf(buf, size, "%s:g:%" PRIu64, ri->ns, n);
	assert(len > 0 && (size_t)len < size);
	return ((size_t)len);
}

/* The map's slot for key: where it is, or where it would go. */
static struct key_slot *
key_slot(struct key_map *m, uint64_t key)
{
	size_t	 mask, i;

	if (m->nslots == 0 || (m->used + 1) * 2 > m->nslots) {
		struct key_map	 old = *m;

		m->nslots = old.nslots == 0 ? 1024 : 2 * old.nslots;
		m->slots = xcalloc(m->nslots, sizeof *m->slots);
		m->used = 0;
		for (i = 0; i < old.nslots; i++)
			if (old.slots[i].state != KEY_FREE) {
				*key_slot(m, old.slots[i].key) = old.slots[i];
				m->used++;
			}
		free(old.slots);
	}
	mask = m->nslots - 1;
	for (i = nsd_fmix64(key) & mask; m->slots[i].state != KEY_FREE &&
	    m->slots[i].key != key; i = (i + 1) & mask)
		continue;
	return (&m->slots[i]);
}

/* Empty the map, keeping its slots. */
static void
key_map_clear(struct key_map *m)
{
	if (m->used > 0)
		memset(m->slots, 0, m->nslots * sizeof *m->slots);
	m->used = 0;
}

/* The block (table, value)'s slot: where it is, or where it would go. */
static struct block_slot *
block_slot(struct block_map *m, unsigned table, uint64_t value)
{
	size_t	 mask, i;

	if (m->nslots == 0 || (m->used + 1) * 2 > m->nslots) {
		struct block_slot	*old = m->slots;
		size_t			 nold = m->nslots;

		m->nslots = nold == 0 ? 1024 : 2 * nold;
		m->slots = xcalloc(m->nslots, sizeof *m->slots);
		m->used = 0;
		for (i = 0; i < nold; i++)
			if (old[i].state != KEY_FREE) {
				*block_slot(m, old[i].table, old[i].value) =
				    old[i];
				m->used++;
			}
		free(old);
	}
	mask = m->nslots - 1;
	for (i = nsd_fmix64(value + table * 0x9E3779B97F4A7C15ULL) & mask;
	    m->slots[i].state != KEY_FREE && (m->slots[i].value != value ||
	    m->slots[i].table != table); i = (i + 1) & mask)
		continue;
	return (&m->slots[i]);
}

/* Empty the blocks and their entries, keeping the memory. */
static void
block_map_clear(struct block_map *m)
{
	if (m->used > 0)
		memset(m->slots, 0, m->nslots * sizeof *m->slots);
	m->used = 0;
	m->nentries = 0;
}

/* Add (fp, group) to block b unless it holds fp; whether it was added. */
static int
block_add(struct block_map *m, struct block_slot *b, uint64_t fp,
    uint64_t group, int ours)
{
	size_t	 i;

	for (i = b->head; i != SIZE_MAX; i = m->entries[i].next)
		if (m->entries[i].fp == fp)
			return (0);
	if (m->nentries == m->cap) {
		m->cap = m->cap == 0 ? 1024 : 2 * m->cap;
		m->entries = xreallocarray(m->entries, m->cap,
		    sizeof *m->entries);
	}
	m->entries[m->nentries].fp = fp;
	m->entries[m->nentries].group = group;
	m->entries[m->nentries].ours = ours;
	m->entries[m->nentries].next = b->head;
	b->head = m->nentries++;
	return (1);
}

/* The group's slot: where it is, or where it would go. */
static struct group_slot *
group_slot(struct group_map *m, uint64_t number)
{
	size_t	 mask, i;

	assert(number != 0);
	if (m->nslots == 0 || (m->used + 1) * 2 > m->nslots) {
		struct group_slot	*old = m->slots;
		size_t			 nold = m->nslots;

		m->nslots = nold == 0 ? 1024 : 2 * nold;
		m->slots = xcalloc(m->nslots, sizeof *m->slots);
		m->used = 0;
		for (i = 0; i < nold; i++)
			if (old[i].number != 0) {
				*group_slot(m, old[i].number) = old[i];
				m->used++;
			}
		free(old);
	}
	mask = m->nslots - 1;
	for (i = nsd_fmix64(number) & mask; m->slots[i].number != 0 &&
	    m->slots[i].number != number; i = (i + 1) & mask)
		continue;
	return (&m->slots[i]);
}

/* The group's slot, made (unknown) when new. */
static struct group_slot *
group_get(struct group_map *m, uint64_t number)
{
	struct group_slot	*g = group_slot(m, number);

	if (g->number == 0) {
		g->number = number;
		m->used++;
	}
	return (g);
}

/* Forget every group, freeing their ids and signatures. */
static void
group_map_clear(struct group_map *m)
{
	size_t	 i;

	for (i = 0; i < m->nslots; i++) {
		free(m->slots[i].id);
		free(m->slots[i].sig);
	}
	if (m->nslots > 0)
		memset(m->slots, 0, m->nslots * sizeof *m->slots);
	m->used = 0;
}

/* Parse a decimal group number of len bytes; 0 when it is not one. */
static uint64_t
parse_number(const char *s, size_t len)
{
	uint64_t	 v = 0;
	size_t		 i;

	if (len == 0 || len > 19)
		return (0);
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return (0);
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	return (v);
}

/* Seconds on the monotonic clock. */
static long
now_seconds(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long)ts.tv_sec);
}

/* 16 hex digits at s as a number (0 when they are not hex digits). */
static uint64_t
parse_hex(const char *s)
{
	uint64_t	 v = 0;
	int		 i, d;

	for (i = 0; i < 16; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = s[i] - 'a' + 10;
		else
			return (0);
		v = v << 4 | (uint64_t)d;
	}
	return (v);
}

/* A reply that should hold a group number (or nil): 0 with *v, or -1. */
static int
reply_group(struct redis_index *ri, const redisReply *r, uint64_t *v,
    struct nsd_error *err)
{
	if (r->type == REDIS_REPLY_NIL) {
		*v = 0;
		return (0);
	}
	if (r->type == REDIS_REPLY_STRING &&
	    (*v = parse_number(r->str, r->len)) != 0)
		return (0);
	return (nsd_error_set(err, NSD_EXIT_INDEX,
	    "%s: unexpected reply: %s", ri->url,
	    r->type == REDIS_REPLY_ERROR ? r->str : "not a group number"));
}

/* Start a batch of commands. */
static void
cmds_begin(struct redis_index *ri)
{
	nsd_redis_batch_reset(&ri->batch);
}

/* Add a command whose first argument after the name is the key. */
static size_t
cmd_add(struct redis_index *ri, const char *key, size_t key_len, int argc,
    const char **argv, size_t *argvlen)
{
	int	 i;

	argvlen[0] = strlen(argv[0]);
	for (i = 2; i < argc; i++)
		if (argvlen[i] == SIZE_MAX)
			argvlen[i] = strlen(argv[i]);
	argv[1] = key;
	argvlen[1] = key_len;
	return (nsd_redis_batch_add(&ri->batch, key, key_len, argc, argv,
	    argvlen));
}

/* The client's error, prefixed with the index's URL; -1. */
static int
url_error(struct redis_index *ri, struct nsd_error *err)
{
	char	 msg[NSD_ERROR_MAX];

	memcpy(msg, err->msg, sizeof msg);
	return (nsd_error_set(err, NSD_EXIT_INDEX, "%s: %s", ri->url, msg));
}

/* Run the batch built since cmds_begin(), if it has commands. */
static int
cmds_run(struct redis_index *ri, struct nsd_error *err)
{
	if (ri->batch.ncmds == 0)
		return (0);
	if (nsd_redis_batch_run(ri->cl, &ri->batch, err) == -1)
		return (url_error(ri, err));
	return (0);
}

/* Whether a reply is an error, with the error set. */
static int
reply_failed(struct redis_index *ri, const redisReply *r,
    struct nsd_error *err)
{
	if (r->type != REDIS_REPLY_ERROR)
		return (0);
	nsd_error_set(err, NSD_EXIT_INDEX, "%s: %s", ri->url, r->str);
	return (1);
}

/* Note that the records of group n are needed. */
static void
want_group(struct redis_index *ri, uint64_t n)
{
	struct group_slot	*g;

	if (n == 0)
		return;
	g = group_get(&ri->groups, n);
	if (g->known || g->queued)
		return;
	g->queued = 1;
	if (ri->nwanted_groups == ri->wanted_groups_cap) {
		ri->wanted_groups_cap = ri->wanted_groups_cap == 0 ? 256 :
		    2 * ri->wanted_groups_cap;
		ri->wanted_groups = xreallocarray(ri->wanted_groups,
		    ri->wanted_groups_cap, sizeof *ri->wanted_groups);
	}
	ri->wanted_groups[ri->nwanted_groups++] = n;
}

/* Take in the record of group n, as its key holds it (r). */
static int
group_take(struct redis_index *ri, uint64_t n, const redisReply *r,
    struct nsd_error *err)
{
	struct group_slot	*g = group_get(&ri->groups, n);
	size_t			 sig_bytes = ri->base.params.sig_bytes;

	g->queued = 0;
	if (g->known)
		return (0);
	if (r->type == REDIS_REPLY_STRING && r->len > 1 && r->str[0] == '@' &&
	    (g->alias = parse_number(r->str + 1, r->len - 1)) != 0) {
		g->known = 1;
		return (0);
	}
	/*
	 * A group's record may be gone while keys still name it: with
	 * --ttl, it expired first; after a failover, the master that had it
	 * lost it. Such keys count as gone too (the cost, at worst, a
	 * duplicate let through).
	 */
	if (r->type == REDIS_REPLY_NIL) {
		g->known = g->gone = 1;
		return (0);
	}
	if (r->type != REDIS_REPLY_STRING || r->len < 1 + 16 + sig_bytes ||
	    r->str[0] != 'g')
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: group %" PRIu64 " has a broken record", ri->url, n));
	free(g->sig);
	free(g->id);
	g->run = parse_hex(r->str + 1);
	g->sig = sig_bytes > 0 ? xmalloc(sig_bytes) : NULL;
	if (sig_bytes > 0)
		memcpy(g->sig, r->str + 1 + 16, sig_bytes);
	g->id_len = r->len - 1 - 16 - sig_bytes;
	g->id = g->id_len > 0 ? xstrndup(r->str + 1 + 16 + sig_bytes,
	    g->id_len) :
	    NULL;
	g->known = 1;
	return (0);
}

/* Read the records of the wanted groups, and of the groups they name. */
static int
fetch_groups(struct redis_index *ri, struct nsd_error *err)
{
	const char		*argv[2];
	size_t			 argvlen[2], i, n, first = 0;
	char			 key[128];
	struct group_slot	*g;

	while (first < ri->nwanted_groups) {
		cmds_begin(ri);
		n = ri->nwanted_groups;
		for (i = first; i < n; i++) {
			argv[0] = "GET";
			cmd_add(ri, key, group_key(ri, key, sizeof key,
			    ri->wanted_groups[i]), 2, argv, argvlen);
		}
		if (cmds_run(ri, err) == -1)
			return (-1);
		for (i = first; i < n; i++) {
			if (group_take(ri, ri->wanted_groups[i],
			    nsd_redis_batch_reply(&ri->batch, i - first),
			    err) == -1)
				return (-1);
			g = group_get(&ri->groups, ri->wanted_groups[i]);
			if (g->alias != 0)
				want_group(ri, g->alias);
		}
		first = n;
	}
	ri->nwanted_groups = 0;
	return (0);
}

/*
 * The group that group n turned out to be, as far as this process knows
 * (n itself, mostly), or 0 when its record is gone. A lookup answers with
 * it, so that two numbers of one group count as one: as presenters of a
 * --common sentence, or towards --min-match.
 */
static uint64_t
group_canonical(struct redis_index *ri, uint64_t n)
{
	struct group_slot	*g;
	unsigned		 hops;

	for (hops = 0; n != 0 && hops < ALIAS_HOPS_MAX; hops++) {
		g = group_slot(&ri->groups, n);
		if (g->number == 0 || !g->known)
			return (n);
		if (g->gone)
			return (0);
		if (g->alias == 0)
			return (n);
		n = g->alias;
	}
	return (n);
}

/* Read every wanted key and block, then the groups they name. */
static int
fetch(struct redis_index *ri, struct nsd_error *err)
{
	const char		*argv[2];
	size_t			 argvlen[2], i, c = 0, k;
	char			 key[128];
	const redisReply	*r;
	uint64_t		 g, fp;
	struct block_slot	*b;

	if (ri->nwanted_keys == 0 && ri->nwanted_blocks == 0)
		return (fetch_groups(ri, err));
	cmds_begin(ri);
	for (i = 0; i < ri->nwanted_keys; i++) {
		argv[0] = "GET";
		cmd_add(ri, key, key_name(ri, key, sizeof key, "f",
		    ri->wanted_keys[i], 0, 0), 2, argv, argvlen);
	}
	for (i = 0; i < ri->nwanted_blocks; i++) {
		argv[0] = "HGETALL";
		cmd_add(ri, key, key_name(ri, key, sizeof key, "s",
		    ri->wanted_blocks[i].table, ri->wanted_blocks[i].value, 1),
		    2, argv, argvlen);
	}
	if (cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0; i < ri->nwanted_keys; i++) {
		struct key_slot	*ks = key_slot(&ri->keys, ri->wanted_keys[i]);

		r = nsd_redis_batch_reply(&ri->batch, c++);
		if (reply_group(ri, r, &g, err) == -1)
			return (-1);
		ks->group = g;
		ks->state = KEY_KNOWN;
		want_group(ri, g);
	}
	for (i = 0; i < ri->nwanted_blocks; i++) {
		b = block_slot(&ri->blocks, ri->wanted_blocks[i].table,
		    ri->wanted_blocks[i].value);
		r = nsd_redis_batch_reply(&ri->batch, c++);
		if (reply_failed(ri, r, err))
			return (-1);
		if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
			return (nsd_error_set(err, NSD_EXIT_INDEX,
			    "%s: a SimHash block is not a hash", ri->url));
		b->state = KEY_KNOWN;
		b->server_len = r->elements / 2;
		for (k = 0; k + 1 < r->elements; k += 2) {
			if (r->element[k]->type != REDIS_REPLY_STRING ||
			    r->element[k + 1]->type != REDIS_REPLY_STRING)
				continue;
			fp = strtoull(r->element[k]->str, NULL, 16);
			g = parse_number(r->element[k + 1]->str,
			    r->element[k + 1]->len);
			if (g == 0)
				continue;
			block_add(&ri->blocks, b, fp, g, 0);
			want_group(ri, g);
		}
	}
	ri->nwanted_keys = ri->nwanted_blocks = 0;
	return (fetch_groups(ri, err));
}

/* Want key, when not known yet. */
static struct key_slot *
want_key(struct redis_index *ri, uint64_t key)
{
	struct key_slot	*s = key_slot(&ri->keys, key);

	if (s->state == KEY_FREE) {
		s->key = key;
		s->group = 0;
		s->state = KEY_WANTED;
		ri->keys.used++;
		if (ri->nwanted_keys == ri->wanted_keys_cap) {
			ri->wanted_keys_cap = ri->wanted_keys_cap == 0 ? 1024 :
			    2 * ri->wanted_keys_cap;
			ri->wanted_keys = xreallocarray(ri->wanted_keys,
			    ri->wanted_keys_cap, sizeof *ri->wanted_keys);
		}
		ri->wanted_keys[ri->nwanted_keys++] = key;
	}
	return (s);
}

static struct block_slot *
want_block(struct redis_index *ri, unsigned t, uint64_t value)
{
	struct block_slot	*b = block_slot(&ri->blocks, t, value);

	if (b->state == KEY_FREE) {
		b->table = t;
		b->value = value;
		b->head = SIZE_MAX;
		b->added = 0;
		b->server_len = 0;
		b->len_reply = SIZE_MAX;
		b->state = KEY_WANTED;
		ri->blocks.used++;
		if (ri->nwanted_blocks == ri->wanted_blocks_cap) {
			ri->wanted_blocks_cap = ri->wanted_blocks_cap == 0 ?
			    256 : 2 * ri->wanted_blocks_cap;
			ri->wanted_blocks = xreallocarray(ri->wanted_blocks,
			    ri->wanted_blocks_cap, sizeof *ri->wanted_blocks);
		}
		ri->wanted_blocks[ri->nwanted_blocks].table = t;
		ri->wanted_blocks[ri->nwanted_blocks++].value = value;
	}
	return (b);
}

/* Want the keys of fp: its own, or (SimHash) its blocks. */
static void
redis_prefetch(struct nsd_index *ix, uint64_t fp)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	unsigned		 t;

	if (!ri->repeats) {
		(void)want_key(ri, fp);
		return;
	}
	for (t = 0; t < ix->params.ntables; t++)
		(void)want_block(ri, t, fp & ix->params.masks[t]);
}

static int
redis_lookup(struct nsd_index *ix, uint64_t fp, uint64_t *group,
    struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	struct key_slot		*s = want_key(ri, fp);

	if (s->state == KEY_WANTED) {
		if (fetch(ri, err) == -1)
			return (-1);
		s = key_slot(&ri->keys, fp);
	}
	*group = group_canonical(ri, s->group);
	return (0);
}

/* A reader (--no-update, under index_overlay.c) is never asked to write. */
static int
reader_refuses(struct redis_index *ri, struct nsd_error *err)
{
	return (nsd_error_set(err, NSD_EXIT_INDEX, "%s: opened to read, not "
	    "to write", ri->url));
}

/* Note a write for settle. */
static void
note_claim(struct redis_index *ri, uint64_t key, uint64_t group,
    unsigned table, uint64_t value, uint64_t replaces)
{
	if (ri->nclaims == ri->claims_cap) {
		ri->claims_cap = ri->claims_cap == 0 ? 1024 :
		    2 * ri->claims_cap;
		ri->claims = xreallocarray(ri->claims, ri->claims_cap,
		    sizeof *ri->claims);
	}
	ri->claims[ri->nclaims].key = key;
	ri->claims[ri->nclaims].group = group;
	ri->claims[ri->nclaims].table = table;
	ri->claims[ri->nclaims].value = value;
	ri->claims[ri->nclaims].replaces = replaces;
	ri->nclaims++;
}

/*
 * A key no group holds (nsd_index_claim() looked it up, so it is known):
 * noted for settle. A key that names a gone group is claimed again, in
 * its place.
 */
static int
redis_put(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	struct key_slot		*s = key_slot(&ri->keys, fp);
	uint64_t		 gone = s->group;

	if (ri->readonly)
		return (reader_refuses(ri, err));
	s->group = group;
	note_claim(ri, fp, group, 0, 0, gone);
	return (0);
}

static int
redis_near(struct nsd_index *ix, uint64_t fp, unsigned k,
    struct nsd_index_near *near, struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	struct block_slot	*b;
	struct block_entry	*e;
	uint64_t		 g;
	unsigned		 t;
	size_t			 i;

	ri->distance = k;
	memset(near, 0, sizeof *near);
	for (t = 0; t < ix->params.ntables; t++) {
		b = want_block(ri, t, fp & ix->params.masks[t]);
		if (b->state == KEY_WANTED && fetch(ri, err) == -1)
			return (-1);
	}
	for (t = 0; t < ix->params.ntables; t++) {
		b = block_slot(&ri->blocks, t, fp & ix->params.masks[t]);
		for (i = b->head; i != SIZE_MAX; i = e->next) {
			e = &ri->blocks.entries[i];
			if ((g = group_canonical(ri, e->group)) == 0)
				continue;
			near->candidates++;
			nsd_index_near_offer(near, k, g,
			    (unsigned)__builtin_popcountll(e->fp ^ fp));
		}
	}
	return (0);
}

/* Block b's entry for fp when the group it names is gone, or NULL. */
static struct block_entry *
block_gone_entry(struct redis_index *ri, struct block_slot *b, uint64_t fp)
{
	size_t	 i;

	for (i = b->head; i != SIZE_MAX; i = ri->blocks.entries[i].next)
		if (ri->blocks.entries[i].fp == fp)
			return (group_canonical(ri,
			    ri->blocks.entries[i].group) == 0 ?
			    &ri->blocks.entries[i] : NULL);
	return (NULL);
}

static int
redis_add(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	struct block_slot	*b;
	struct block_entry	*e;
	uint64_t		 v;
	unsigned		 t;

	if (ri->readonly)
		return (reader_refuses(ri, err));
	for (t = 0; t < ix->params.ntables; t++) {
		v = fp & ix->params.masks[t];
		b = want_block(ri, t, v);
		if (b->state == KEY_WANTED && fetch(ri, err) == -1)
			return (-1);
		b = block_slot(&ri->blocks, t, v);
		if (block_add(&ri->blocks, b, fp, group, 1))
			note_claim(ri, fp, group, t, v, 0);
		else if ((e = block_gone_entry(ri, b, fp)) != NULL) {
			/* Its group is gone: fp is this group's now. */
			note_claim(ri, fp, group, t, v, e->group);
			e->group = group;
			e->ours = 1;
		}
	}
	return (0);
}

/* Take a block of group numbers; 0 or -1. */
static int
take_block(struct redis_index *ri, struct nsd_error *err)
{
	const char	*argv[3];
	size_t		 argvlen[3];
	char		 key[128], block[32];
	redisReply	*r;
	int		 i, rc = 0;

	snprintf(key, sizeof key, "%s:next", ri->ns);
	snprintf(block, sizeof block, "%d", GROUP_BLOCK);
	argv[0] = "INCRBY";
	argv[1] = key;
	argv[2] = block;
	for (i = 0; i < 3; i++)
		argvlen[i] = strlen(argv[i]);
	if (nsd_redis_command(ri->cl, key, strlen(key), 3, argv, argvlen, &r,
	    err) == -1)
		return (url_error(ri, err));
	if (r->type == REDIS_REPLY_INTEGER && r->integer >= GROUP_BLOCK) {
		ri->block_end = (uint64_t)r->integer;
		ri->block_next = ri->block_end - GROUP_BLOCK + 1;
		ri->block_taken = ri->block_end;
	} else
		rc = nsd_error_set(err, NSD_EXIT_INDEX, "%s: %s: %s", ri->url,
		    key, r->type == REDIS_REPLY_ERROR ? r->str :
		    "not a counter");
	freeReplyObject(r);
	return (rc);
}

/* The last group number handed out, by any host: the counter. */
static int
redis_numbered(struct nsd_index *ix, uint64_t *n, struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	const char		*argv[2];
	size_t			 argvlen[2];
	char			 key[128];
	redisReply		*r;

	snprintf(key, sizeof key, "%s:next", ri->ns);
	argv[0] = "GET";
	argv[1] = key;
	argvlen[0] = 3;
	argvlen[1] = strlen(key);
	if (nsd_redis_command(ri->cl, key, strlen(key), 2, argv, argvlen, &r,
	    err) == -1)
		return (url_error(ri, err));
	*n = r->type == REDIS_REPLY_STRING ? parse_number(r->str, r->len) : 0;
	freeReplyObject(r);
	return (0);
}

/* Group n's record is to be written at settle. */
static void
push_fresh(struct redis_index *ri, uint64_t n)
{
	if (ri->nfresh == ri->fresh_cap) {
		ri->fresh_cap = ri->fresh_cap == 0 ? 256 : 2 * ri->fresh_cap;
		ri->fresh = xreallocarray(ri->fresh, ri->fresh_cap,
		    sizeof *ri->fresh);
	}
	ri->fresh[ri->nfresh++] = n;
}

/* A new group, numbered from this run's block, written at settle. */
static int
redis_group_new(struct nsd_index *ix, const char *id, size_t len,
    const unsigned char *sig, uint64_t *group, struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	struct group_slot	*g;
	size_t			 sig_bytes = ix->params.sig_bytes;

	if (ri->readonly)
		return (reader_refuses(ri, err));
	if ((ri->block_end == 0 || ri->block_next > ri->block_end) &&
	    take_block(ri, err) == -1)
		return (-1);
	*group = ri->block_next++;
	g = group_get(&ri->groups, *group);
	free(g->id);
	free(g->sig);
	g->id = len > 0 ? xstrndup(id, len) : NULL;
	g->id_len = len;
	g->sig = NULL;
	if (sig_bytes > 0) {
		g->sig = xmalloc(sig_bytes);
		memcpy(g->sig, sig, sig_bytes);
	}
	g->alias = 0;
	g->run = ri->run;
	g->known = 1;
	push_fresh(ri, *group);
	ri->opened++;
	return (0);
}

/* Group n's slot, known, following what it turned out to be. */
static int
group_resolve(struct redis_index *ri, uint64_t n, struct group_slot **gp,
    struct nsd_error *err)
{
	struct group_slot	*g;
	unsigned		 hops;

	for (hops = 0; hops < ALIAS_HOPS_MAX; hops++) {
		g = group_get(&ri->groups, n);
		if (!g->known) {
			want_group(ri, n);
			if (fetch_groups(ri, err) == -1)
				return (-1);
			g = group_get(&ri->groups, n);
		}
		if (g->alias == 0) {
			*gp = g;
			return (0);
		}
		n = g->alias;
	}
	return (nsd_error_set(err, NSD_EXIT_INDEX,
	    "%s: group %" PRIu64 " names other groups in a loop", ri->url, n));
}

static int
redis_group_signature(struct nsd_index *ix, uint64_t group,
    const unsigned char **sig, struct nsd_error *err)
{
	struct group_slot	*g;

	if (group_resolve((struct redis_index *)ix, group, &g, err) == -1)
		return (-1);
	*sig = g->sig;
	return (0);
}

/* The key of run r's state: "running" (for a while), "done", or none. */
static size_t
run_key(const struct redis_index *ri, char *buf, size_t size, uint64_t r)
{
	int	 n;

	n = snprintf(buf, size, "%s:run:%016" PRIx64, ri->ns, r);
	assert(n > 0 && (size_t)n < size);
	return ((size_t)n);
}

/* Whether run r finished or is still running, as NS:run:R says. */
static int
run_live(struct redis_index *ri, uint64_t r, int *live,
    struct nsd_error *err)
{
	const char	*argv[2] = { "GET", NULL };
	size_t		 argvlen[2], i;
	char		 key[128];
	redisReply	*rep;

	if (r == ri->run || r == 0) {
		*live = 1;
		return (0);
	}
	for (i = 0; i < ri->nruns; i++)
		if (ri->runs[i].run == r) {
			*live = ri->runs[i].live;
			return (0);
		}
	argv[1] = key;
	argvlen[1] = run_key(ri, key, sizeof key, r);
	argvlen[0] = 3;
	if (nsd_redis_command(ri->cl, key, argvlen[1], 2, argv, argvlen, &rep,
	    err) == -1)
		return (url_error(ri, err));
	*live = rep->type == REDIS_REPLY_STRING;
	freeReplyObject(rep);
	if (ri->nruns == RUNS_CACHED)
		ri->nruns = 0;
	ri->runs[ri->nruns].run = r;
	ri->runs[ri->nruns++].live = *live;
	return (0);
}

static int
redis_group_name(struct nsd_index *ix, uint64_t group,
    struct nsd_group_name *name, struct nsd_error *err)
{
	struct group_slot	*g;

	if (group_resolve((struct redis_index *)ix, group, &g, err) == -1)
		return (-1);
	name->id = g->id;
	name->id_len = g->id_len;
	name->number = g->number;
	return (0);
}

static int
redis_group_adopt(struct nsd_index *ix, uint64_t group, int *yes,
    struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	struct group_slot	*g;
	int			 live = 1;

	if (group_resolve(ri, group, &g, err) == -1 ||
	    run_live(ri, g->run, &live, err) == -1)
		return (-1);
	*yes = !live;
	/* Its record, with this run's token, is written at settle. */
	if (*yes && !ri->readonly) {
		g->run = ri->run;
		push_fresh(ri, g->number);
	}
	return (0);
}

/*
 * Say that this run is alive (RUN_LEASE seconds from now), or done; in
 * the batch being built when batch, else by itself.
 */
static int
run_mark(struct redis_index *ri, int done, int batch, struct nsd_error *err)
{
	int	 i;
	const char	*argv[5];
	size_t		 argvlen[5];
	char		 key[128], lease[24];
	redisReply	*r;
	int		 argc = 3;

	argv[0] = "SET";
	argv[1] = key;
	argvlen[1] = run_key(ri, key, sizeof key, ri->run);
	argv[2] = done ? "done" : "running";
	if (!done) {
		snprintf(lease, sizeof lease, "%d", RUN_LEASE);
		argv[argc++] = "EX";
		argv[argc++] = lease;
	}
	for (i = 0; i < argc; i++)
		if (i != 1)
			argvlen[i] = strlen(argv[i]);
	ri->run_marked = now_seconds();
	if (batch) {
		nsd_redis_batch_add(&ri->batch, key, argvlen[1], argc, argv,
		    argvlen);
		return (0);
	}
	if (nsd_redis_command(ri->cl, key, argvlen[1], argc, argv, argvlen,
	    &r, err) == -1)
		return (url_error(ri, err));
	freeReplyObject(r);
	return (0);
}

static void
add_conflict(struct redis_index *ri, uint64_t ours, uint64_t theirs,
    uint64_t key)
{
	struct nsd_index_conflict	*c;

	if (ri->nconflicts == ri->conflicts_cap) {
		ri->conflicts_cap = ri->conflicts_cap == 0 ? 64 :
		    2 * ri->conflicts_cap;
		ri->conflicts = xreallocarray(ri->conflicts,
		    ri->conflicts_cap, sizeof *ri->conflicts);
	}
	c = &ri->conflicts[ri->nconflicts++];
	c->ours = ours;
	c->theirs = theirs;
	c->key = key;
}

/* Whether group n was opened by this batch. */
static int
is_fresh(struct redis_index *ri, uint64_t n)
{
	size_t	 i;

	for (i = 0; i < ri->nfresh; i++)
		if (ri->fresh[i] == n)
			return (1);
	return (0);
}

/* The TTL arguments of a write: "EX", seconds. */
static int
ttl_args(const struct redis_index *ri, const char **argv, size_t *argvlen,
    int argc, char *buf, size_t size)
{
	if (ri->ttl <= 0)
		return (argc);
	snprintf(buf, size, "%ld", ri->ttl);
	argv[argc] = "EX";
	argvlen[argc++] = 2;
	argv[argc] = buf;
	argvlen[argc++] = strlen(buf);
	return (argc);
}

/* Write the records of the groups this batch opened. */
static int
write_groups(struct redis_index *ri, struct nsd_error *err)
{
	const char		*argv[5];
	size_t			 argvlen[5], i, sig_bytes;
	char			 key[128], ttl[32];
	size_t			 off;
	struct group_slot	*g;
	int			 argc;

	sig_bytes = ri->base.params.sig_bytes;
	cmds_begin(ri);
	ri->keybuf.len = 0;
	/* The records, one after the other, then a SET for each. */
	for (i = 0; i < ri->nfresh; i++) {
		g = group_get(&ri->groups, ri->fresh[i]);
		nsd_buf_append(&ri->keybuf, "g", 1);
		nsd_buf_append(&ri->keybuf, ri->run_hex, 16);
		if (sig_bytes > 0)
			nsd_buf_append(&ri->keybuf, g->sig, sig_bytes);
		if (g->id_len > 0)
			nsd_buf_append(&ri->keybuf, g->id, g->id_len);
	}
	for (i = 0, off = 0; i < ri->nfresh; i++) {
		g = group_get(&ri->groups, ri->fresh[i]);
		argv[0] = "SET";
		argv[2] = ri->keybuf.data + off;
		argvlen[2] = 1 + 16 + sig_bytes + g->id_len;
		off += argvlen[2];
		argc = ttl_args(ri, argv, argvlen, 3, ttl, sizeof ttl);
		cmd_add(ri, key, group_key(ri, key, sizeof key, ri->fresh[i]),
		    argc, argv, argvlen);
	}
	if (cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0; i < ri->batch.ncmds; i++)
		if (reply_failed(ri, nsd_redis_batch_reply(&ri->batch, i),
		    err))
			return (-1);
	return (0);
}

/*
 * Claim cl's key, which names a gone group (its record expired, or was
 * lost with a master), for cl->group: atomically, unless another host
 * claimed it meanwhile; answers as SET NX GET does.
 */
static void
claim_in_place(struct redis_index *ri, const struct claim *cl,
    const char *group, const char *ttl)
{
	static const char script[] =
	    "local v = redis.call('GET', KEYS[1]) "
	    "if v == false or v == ARGV[1] then "
	    "if ARGV[3] ~= '0' then "
	    "redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) "
	    "else redis.call('SET', KEYS[1], ARGV[2]) end "
	    "return false end return v";
	const char	*argv[7];
	size_t		 argvlen[7];
	char		 key[128], gone[24];
	int		 i;

	snprintf(gone, sizeof gone, "%" PRIu64, cl->replaces);
	argv[0] = "EVAL";
	argv[1] = script;
	argv[2] = "1";
	argv[3] = key;
	argvlen[3] = key_name(ri, key, sizeof key, "f", cl->key, 0, 0);
	argv[4] = gone;
	argv[5] = group;
	argv[6] = ttl;		/* "0": none */
	for (i = 0; i < 7; i++)
		if (i != 3)
			argvlen[i] = strlen(argv[i]);
	nsd_redis_batch_add(&ri->batch, key, argvlen[3], 7, argv, argvlen);
}

/* Send the batch's claims; note the ones another host won first. */
static int
write_claims(struct redis_index *ri, struct nsd_error *err)
{
	const char		*argv[8];
	size_t			 argvlen[8], i, c;
	char			 key[128], fp[20], group[24], ttl[32];
	struct claim		*cl;
	struct block_slot	*b;
	const redisReply	*r;
	uint64_t		 held;
	int			 argc;

	snprintf(ttl, sizeof ttl, "%ld", ri->ttl);
	cmds_begin(ri);
	for (i = 0; i < ri->nclaims; i++) {
		cl = &ri->claims[i];
		snprintf(group, sizeof group, "%" PRIu64, cl->group);
		if (!ri->repeats && cl->replaces != 0) {
			claim_in_place(ri, cl, group, ttl);
			continue;
		}
		if (!ri->repeats) {
			argv[0] = "SET";
			argv[2] = group;
			argvlen[2] = SIZE_MAX;
			argv[3] = "NX";
			argvlen[3] = 2;
			argv[4] = "GET";
			argvlen[4] = 3;
			argc = ttl_args(ri, argv, argvlen, 5, ttl, sizeof ttl);
			cmd_add(ri, key, key_name(ri, key, sizeof key, "f",
			    cl->key, 0, 0), argc, argv, argvlen);
			continue;
		}
		snprintf(fp, sizeof fp, "%016" PRIx64, cl->key);
		/* A field that names a gone group is overwritten. */
		argv[0] = cl->replaces != 0 ? "HSET" : "HSETNX";
		argv[2] = fp;
		argvlen[2] = 16;
		argv[3] = group;
		argvlen[3] = SIZE_MAX;
		key_name(ri, key, sizeof key, "s", cl->table, cl->value, 1);
		cmd_add(ri, key, strlen(key), 4, argv, argvlen);
		argv[0] = "HLEN";
		c = cmd_add(ri, key, strlen(key), 2, argv, argvlen);
		block_slot(&ri->blocks, cl->table, cl->value)->len_reply = c;
		if (ri->ttl > 0) {
			argv[0] = "EXPIRE";
			argv[2] = ttl;
			snprintf(ttl, sizeof ttl, "%ld", ri->ttl);
			argvlen[2] = SIZE_MAX;
			cmd_add(ri, key, strlen(key), 3, argv, argvlen);
		}
	}
	/* Still alive: a minute at most between two leases. */
	if (now_seconds() - ri->run_marked >= 60)
		(void)run_mark(ri, 0, 1, err);
	/*
	 * --ttl: a group's record lives as long as the last key claimed
	 * for it (claims come a record at a time, so a group's are
	 * together).
	 */
	for (i = 0; ri->ttl > 0 && i < ri->nclaims; i++) {
		if (i > 0 && ri->claims[i].group == ri->claims[i - 1].group)
			continue;
		argv[0] = "EXPIRE";
		argv[2] = ttl;
		argvlen[2] = strlen(ttl);
		cmd_add(ri, key, group_key(ri, key, sizeof key,
		    ri->claims[i].group), 3, argv, argvlen);
	}
	if (cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0, c = 0; i < ri->nclaims; i++) {
		cl = &ri->claims[i];
		r = nsd_redis_batch_reply(&ri->batch, c++);
		if (!ri->repeats) {
			if (reply_group(ri, r, &held, err) == -1)
				return (-1);
			if (held == 0 || held == cl->group) {
				ri->claimed++;
				continue;
			}
			/* Theirs, from now on, as near_enough() counts. */
			key_slot(&ri->keys, cl->key)->group = held;
			if (is_fresh(ri, cl->group)) {
				add_conflict(ri, cl->group, held, cl->key);
				want_group(ri, held);
			}
			continue;
		}
		if (reply_failed(ri, r, err))
			return (-1);
		b = block_slot(&ri->blocks, cl->table, cl->value);
		b->added += r->type == REDIS_REPLY_INTEGER && r->integer == 1;
		ri->claimed += r->type == REDIS_REPLY_INTEGER &&
		    r->integer == 1;
		r = nsd_redis_batch_reply(&ri->batch, c++);
		if (reply_failed(ri, r, err))
			return (-1);
		/* The last HLEN of a block tells whether others added. */
		if (c - 1 == b->len_reply && r->type == REDIS_REPLY_INTEGER &&
		    (uint64_t)r->integer > b->server_len + b->added)
			b->state = KEY_WANTED;
		c += ri->ttl > 0;
	}
	return (0);
}

/*
 * SimHash: read again the blocks that grew under this batch, and report
 * their new entries that are near one of this batch's new groups.
 */
static int
reread_blocks(struct redis_index *ri, struct nsd_error *err)
{
	const char		*argv[2];
	size_t			 argvlen[2], i, k, c = 0, e;
	char			 key[128];
	const redisReply	*r;
	struct block_slot	*b;
	struct block_entry	*en;
	uint64_t		 fp, g;
	int			 known;

	cmds_begin(ri);
	for (i = 0; i < ri->blocks.nslots; i++)
		if (ri->blocks.slots[i].state == KEY_WANTED &&
		    ri->blocks.slots[i].len_reply != SIZE_MAX) {
			argv[0] = "HGETALL";
			cmd_add(ri, key, key_name(ri, key, sizeof key, "s",
			    ri->blocks.slots[i].table,
			    ri->blocks.slots[i].value, 1), 2, argv, argvlen);
		}
	if (ri->batch.ncmds == 0)
		return (0);
	if (cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0; i < ri->blocks.nslots; i++) {
		b = &ri->blocks.slots[i];
		if (b->state != KEY_WANTED || b->len_reply == SIZE_MAX)
			continue;
		b->state = KEY_KNOWN;
		r = nsd_redis_batch_reply(&ri->batch, c++);
		if (reply_failed(ri, r, err))
			return (-1);
		if (r->type != REDIS_REPLY_ARRAY)
			continue;
		for (k = 0; k + 1 < r->elements; k += 2) {
			if (r->element[k]->type != REDIS_REPLY_STRING ||
			    r->element[k + 1]->type != REDIS_REPLY_STRING)
				continue;
			fp = strtoull(r->element[k]->str, NULL, 16);
			g = parse_number(r->element[k + 1]->str,
			    r->element[k + 1]->len);
			/* Ours, or read before: not news. */
			for (e = b->head, known = 0; e != SIZE_MAX && !known;
			    e = ri->blocks.entries[e].next)
				known = ri->blocks.entries[e].fp == fp &&
				    ri->blocks.entries[e].group == g;
			if (known || g == 0)
				continue;
			for (e = b->head; e != SIZE_MAX; e = en->next) {
				en = &ri->blocks.entries[e];
				if (en->ours && is_fresh(ri, en->group) &&
				    g != en->group && (unsigned)
				    __builtin_popcountll(en->fp ^ fp) <=
				    ri->distance) {
					add_conflict(ri, en->group, g, fp);
					want_group(ri, g);
				}
			}
		}
	}
	return (0);
}

static int
redis_settle(struct nsd_index *ix, const struct nsd_index_conflict **conf,
    size_t *nconf, struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	size_t			 i, n;

	ri->nconflicts = 0;
	if (!ri->readonly) {
		if (ri->nfresh > 0 && write_groups(ri, err) == -1)
			return (-1);
		if (ri->nclaims > 0 && write_claims(ri, err) == -1)
			return (-1);
		if (ri->nclaims == 0 && now_seconds() - ri->run_marked >= 60 &&
		    run_mark(ri, 0, 0, err) == -1)
			return (-1);
		if (ri->repeats && reread_blocks(ri, err) == -1)
			return (-1);
	}
	if (fetch_groups(ri, err) == -1)
		return (-1);
	/*
	 * A group that is gone is no rival; one that turned out another is
	 * that one; and a group that turned out ours is no conflict.
	 */
	for (i = 0, n = 0; i < ri->nconflicts; i++) {
		ri->conflicts[i].theirs = group_canonical(ri,
		    ri->conflicts[i].theirs);
		if (ri->conflicts[i].theirs != 0 &&
		    ri->conflicts[i].theirs != ri->conflicts[i].ours)
			ri->conflicts[n++] = ri->conflicts[i];
	}
	ri->nconflicts = n;
	ri->conflicts_seen += n;
	*conf = ri->conflicts;
	*nconf = ri->nconflicts;
	return (0);
}

/*
 * Add "SET key value NX GET" (with --ttl's EX), key being
 * "NS:kind:a[:b]" (b only when two).
 */
static void
set_nx_get(struct redis_index *ri, const char *kind, uint64_t a, uint64_t b,
    int two, const char *value)
{
	const char	*argv[8];
	size_t		 argvlen[8];
	char		 key[128], ttl[32];
	int		 argc, n;

	if (two)
		n = snprintf(key, sizeof key, "%s:%s:%" PRIu64 ":%" PRIu64,
		    ri->ns, kind, a, b);
	else
		n = snprintf(key, sizeof key, "%s:%s:%" PRIu64, ri->ns, kind,
		    a);
	assert(n > 0 && (size_t)n < sizeof key);
	argv[0] = "SET";
	argv[2] = value;
	argvlen[2] = SIZE_MAX;
	argv[3] = "NX";
	argvlen[3] = 2;
	argv[4] = "GET";
	argvlen[4] = 3;
	argc = ttl_args(ri, argv, argvlen, 5, ttl, sizeof ttl);
	cmd_add(ri, key, (size_t)n, argc, argv, argvlen);
}

/* A stance as NS:w:N keeps it: "root" (0), or "@M", given way to M. */
static int
reply_stance(struct redis_index *ri, const redisReply *r, int *set,
    uint64_t *to, struct nsd_error *err)
{
	*set = r->type != REDIS_REPLY_NIL;
	*to = 0;
	if (r->type == REDIS_REPLY_NIL || (r->type == REDIS_REPLY_STRING &&
	    r->len == 4 && memcmp(r->str, "root", 4) == 0))
		return (0);
	if (r->type == REDIS_REPLY_STRING && r->len > 1 && r->str[0] == '@' &&
	    (*to = parse_number(r->str + 1, r->len - 1)) != 0)
		return (0);
	return (nsd_error_set(err, NSD_EXIT_INDEX, "%s: unexpected reply: %s",
	    ri->url, r->type == REDIS_REPLY_ERROR ? r->str :
	    "not a stance"));
}

/*
 * Arbitration, in rounds that run only for a batch with conflicts.
 *
 * 1. The pair: NS:a:LO:HI, SET NX, value the group that gives way; the
 *    first host to propose "mine gives way" is followed by the other,
 *    so of two groups exactly one gives way.
 * 2. A group that gives way points at a root: NS:w:THEIRS is set to
 *    "root" unless it is set; if THEIRS has itself given way to ROOT
 *    meanwhile, ours gives way to ROOT instead.
 * 3. Ours takes its stance: NS:w:OURS set to "@ROOT" unless it is set;
 *    if another host already made ours a root (a third group gave way to
 *    it), ours stays.
 *
 * Roots never give way and every group that gives way points at a root,
 * so there are no chains and no loops, and the group a record gave way
 * to is an original in its own host's output. The price of that rule is
 * the rare case of step 3, where both groups of a pair stay: a duplicate
 * let through. Then the groups that gave way are written as "@ROOT".
 */
static int
redis_arbitrate(struct nsd_index *ix, const struct nsd_index_conflict *pairs,
    size_t n, uint64_t *winners, struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	const char		*argv[8];
	size_t			 argvlen[8], i, c, nalias = 0;
	char			 key[128], value[32], ttl[32];
	uint64_t		 lo, hi, proposed, to;
	struct group_slot	*g;
	int			 argc, set;

	cmds_begin(ri);
	for (i = 0; i < n; i++) {
		lo = pairs[i].ours < pairs[i].theirs ? pairs[i].ours :
		    pairs[i].theirs;
		hi = pairs[i].ours ^ pairs[i].theirs ^ lo;
		snprintf(value, sizeof value, "%" PRIu64, pairs[i].ours);
		set_nx_get(ri, "a", lo, hi, 1, value);
	}
	if (cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0; i < n; i++) {
		if (reply_group(ri, nsd_redis_batch_reply(&ri->batch, i),
		    &proposed, err) == -1)
			return (-1);
		winners[i] = proposed == 0 || proposed == pairs[i].ours ?
		    pairs[i].theirs : pairs[i].ours;
	}
	cmds_begin(ri);
	for (i = 0; i < n; i++)
		if (winners[i] != pairs[i].ours)
			set_nx_get(ri, "w", winners[i], 0, 0, "root");
	if (cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0, c = 0; i < n; i++) {
		if (winners[i] == pairs[i].ours)
			continue;
		if (reply_stance(ri, nsd_redis_batch_reply(&ri->batch, c++),
		    &set, &to, err) == -1)
			return (-1);
		if (to != 0)
			winners[i] = to;
	}
	cmds_begin(ri);
	for (i = 0; i < n; i++)
		if (winners[i] != pairs[i].ours) {
			snprintf(value, sizeof value, "@%" PRIu64, winners[i]);
			set_nx_get(ri, "w", pairs[i].ours, 0, 0, value);
		}
	if (cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0, c = 0; i < n; i++) {
		if (winners[i] == pairs[i].ours)
			continue;
		if (reply_stance(ri, nsd_redis_batch_reply(&ri->batch, c++),
		    &set, &to, err) == -1)
			return (-1);
		/* Unset, or set by this very call sent twice: given way. */
		if (set && to == 0)
			winners[i] = pairs[i].ours;
		else if (set)
			winners[i] = to;
	}
	cmds_begin(ri);
	for (i = 0; i < n; i++) {
		if (winners[i] == pairs[i].ours)
			continue;
		snprintf(value, sizeof value, "@%" PRIu64, winners[i]);
		argv[0] = "SET";
		argv[2] = value;
		argvlen[2] = SIZE_MAX;
		argc = ttl_args(ri, argv, argvlen, 3, ttl, sizeof ttl);
		cmd_add(ri, key, group_key(ri, key, sizeof key,
		    pairs[i].ours), argc, argv, argvlen);
		g = group_get(&ri->groups, pairs[i].ours);
		g->alias = winners[i];
		want_group(ri, winners[i]);
		nalias++;
		ri->gave_way++;
	}
	if (nalias > 0 && cmds_run(ri, err) == -1)
		return (-1);
	return (fetch_groups(ri, err));
}

/* Forget the batch: what was read may be stale by the next one. */
static void
batch_done(struct redis_index *ri)
{
	ri->nfresh = 0;
	ri->nclaims = 0;
	ri->nconflicts = 0;
	/* --no-update: the run's own claims live here alone. */
	if (ri->readonly)
		return;
	key_map_clear(&ri->keys);
	block_map_clear(&ri->blocks);
	if (ri->groups.used > CACHE_GROUPS_MAX)
		group_map_clear(&ri->groups);
	ri->nwanted_keys = ri->nwanted_blocks = 0;
}

static void
redis_begin_batch(struct nsd_index *ix)
{
	batch_done((struct redis_index *)ix);
}

/* Nothing to commit, but that the run is done. */
static int
redis_commit(struct nsd_index *ix, uint64_t records, struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;

	(void)records;
	batch_done(ri);
	if (ri->readonly || run_mark(ri, 1, 0, err) == -1)
		return (ri->readonly ? 0 : -1);
	ri->committed = 1;
	return (0);
}

static void
redis_info(struct nsd_index *ix, struct nsd_index_info *info)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	struct nsd_redis_counts	 c;

	memset(info, 0, sizeof *info);
	info->fingerprints = ri->claimed;
	info->groups = ri->opened;
	info->memory = ri->keys.nslots * sizeof *ri->keys.slots +
	    ri->blocks.nslots * sizeof *ri->blocks.slots +
	    ri->blocks.cap * sizeof *ri->blocks.entries +
	    ri->groups.nslots * sizeof *ri->groups.slots;
	info->peak = info->memory;
	nsd_redis_counts(ri->cl, &c);
	info->servers = nsd_redis_masters(ri->cl);
	info->commands = c.commands;
	info->round_trips = c.round_trips;
	info->moved = c.moved;
	info->ask = c.ask;
	info->retried = c.retried;
	info->reconnects = c.reconnects;
	info->conflicts = ri->conflicts_seen;
	info->gave_way = ri->gave_way;
}

/*
 * Hand back the group numbers this run took and did not use, unless
 * another run has taken a block since: the counter is set back only if
 * it still says what this run's last block made it.
 */
static void
give_back(struct redis_index *ri)
{
	int	 i;
	static const char script[] =
	    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
	    "redis.call('SET', KEYS[1], ARGV[2]) end return 0";
	const char	*argv[6];
	size_t		 argvlen[6];
	char		 key[128], taken[24], used[24];
	redisReply	*r;
	struct nsd_error ignored;

	if (ri->readonly || ri->block_end == 0 ||
	    ri->block_next > ri->block_end)
		return;
	snprintf(key, sizeof key, "%s:next", ri->ns);
	snprintf(taken, sizeof taken, "%" PRIu64, ri->block_taken);
	snprintf(used, sizeof used, "%" PRIu64, ri->block_next - 1);
	argv[0] = "EVAL";
	argv[1] = script;
	argv[2] = "1";
	argv[3] = key;
	argv[4] = taken;
	argv[5] = used;
	for (i = 0; i < 6; i++)
		argvlen[i] = strlen(argv[i]);
	if (nsd_redis_command(ri->cl, key, strlen(key), 6, argv, argvlen, &r,
	    &ignored) == 0)
		freeReplyObject(r);
}

static void
redis_close(struct nsd_index *ix)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	const char		*argv[2] = { "DEL", NULL };
	size_t			 argvlen[2] = { 3, 0 };
	char			 key[128];
	redisReply		*r;
	struct nsd_error	 ignored;

	/*
	 * A run that ends without committing failed: say so at once, for
	 * its records to be first again in the run that follows (one that
	 * dies without a word is taken for failed when its lease ends).
	 */
	if (ri->cl != NULL && !ri->readonly && !ri->committed) {
		argv[1] = key;
		argvlen[1] = run_key(ri, key, sizeof key, ri->run);
		if (nsd_redis_command(ri->cl, key, argvlen[1], 2, argv,
		    argvlen, &r, &ignored) == 0)
			freeReplyObject(r);
	}
	give_back(ri);
	nsd_redis_close(ri->cl);
	nsd_redis_batch_free(&ri->batch);
	nsd_buf_free(&ri->keybuf);
	free(ri->keys.slots);
	free(ri->blocks.slots);
	free(ri->blocks.entries);
	group_map_clear(&ri->groups);
	free(ri->groups.slots);
	free(ri->wanted_groups);
	free(ri->wanted_keys);
	free(ri->wanted_blocks);
	free(ri->claims);
	free(ri->fresh);
	free(ri->conflicts);
	free(ri->url);
	free(ri);
}

static const struct nsd_index_ops redis_ops = {
	.prefetch = redis_prefetch,
	.lookup = redis_lookup,
	.put = redis_put,
	.near = redis_near,
	.add = redis_add,
	.group_new = redis_group_new,
	.group_signature = redis_group_signature,
	.group_name = redis_group_name,
	.settle = redis_settle,
	.arbitrate = redis_arbitrate,
	.group_adopt = redis_group_adopt,
	.numbered = redis_numbered,
	.begin_batch = redis_begin_batch,
	.commit = redis_commit,
	.info = redis_info,
	.close = redis_close
};

/* The parameters, as NS:params keeps them. */
static void
params_string(const struct nsd_index_params *p, char *buf, size_t size)
{
	snprintf(buf, size, "nsdedup-redis 1 method=%s sentences=%u "
	    "min_length=%u compat=%d norm=%u seed=%" PRIu64 " distance=%u "
	    "ngram=%u shingle=%u min_features=%u tables=%u bins=%u bands=%u "
	    "rows=%u threshold=%u", p->method, p->sentences, p->min_length,
	    p->compat, p->norm_version, p->seed, p->distance, p->ngram,
	    p->shingle, p->min_features, p->ntables, p->bins, p->bands,
	    p->rows, p->threshold);
}

/*
 * Read the parameters an index's NS:params keeps (as params_string()
 * writes them) into *p, its method into method[16]; -1 when it is not
 * that form.
 */
static int
params_parse(const char *had, struct nsd_index_params *p, char *method)
{
	unsigned long long	 seed;
	int			 end = 0;

	memset(p, 0, sizeof *p);
	if (sscanf(had, "nsdedup-redis 1 method=%15s sentences=%u "
	    "min_length=%u compat=%d norm=%u seed=%llu distance=%u ngram=%u "
	    "shingle=%u min_features=%u tables=%u bins=%u bands=%u rows=%u "
	    "threshold=%u%n", method, &p->sentences, &p->min_length,
	    &p->compat, &p->norm_version, &seed, &p->distance, &p->ngram,
	    &p->shingle, &p->min_features, &p->ntables, &p->bins, &p->bands,
	    &p->rows, &p->threshold, &end) != 15 || had[end] != '\0')
		return (-1);
	p->method = method;
	p->seed = seed;
	return (0);
}

/* Make NS:params, or check that the index was made with these ones. */
static int
check_params(struct redis_index *ri, struct nsd_error *err)
{
	int	 i;
	const char	*argv[5];
	size_t		 argvlen[5];
	char		 key[128], want[512], method[16];
	struct nsd_index_params had;
	redisReply	*r;
	int		 rc = 0;

	snprintf(key, sizeof key, "%s:params", ri->ns);
	params_string(&ri->base.params, want, sizeof want);
	argv[0] = ri->readonly ? "GET" : "SET";
	argv[1] = key;
	argv[2] = want;
	argv[3] = "NX";
	argv[4] = "GET";
	for (i = 0; i < 5; i++)
		argvlen[i] = strlen(argv[i]);
	if (nsd_redis_command(ri->cl, key, strlen(key), ri->readonly ? 2 : 5,
	    argv, argvlen, &r, err) == -1)
		return (url_error(ri, err));
	if (r->type == REDIS_REPLY_ERROR)
		rc = nsd_error_set(err, NSD_EXIT_INDEX, "%s: %s", ri->url,
		    r->str);
	else if (r->type == REDIS_REPLY_NIL && ri->readonly)
		rc = nsd_error_set(err, NSD_EXIT_INDEX, "%s: no index there "
		    "(--no-update makes none)", ri->url);
	else if (r->type == REDIS_REPLY_STRING) {
		/* The rule of every index: index_params.c. */
		if (params_parse(r->str, &had, method) == -1)
			rc = nsd_error_set(err, NSD_EXIT_INDEX, "%s: the index "
			    "was made by another version of nsdedup", ri->url);
		else if (nsd_index_params_check(ri->url, &had,
		    &ri->base.params, err) == -1)
			rc = -1;
		else if (had.ntables != ri->base.params.ntables)
			rc = nsd_error_set(err, NSD_EXIT_INDEX, "%s: the index "
			    "was made by another version of nsdedup", ri->url);
		else
			ri->base.params.norm_version = had.norm_version;
	}
	freeReplyObject(r);
	return (rc);
}

/*
 * Split "redis://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...][/NAMESPACE]";
 * the password may come from REDISCLI_AUTH instead. Messages name the URL
 * as shown, without its password.
 */
static int
parse_url(const char *url, const char *shown, struct nsd_redis_options *o,
    char **user, char **password, char **seeds, char *ns,
    struct nsd_error *err)
{
	const char	*p = url + strlen(NSD_REDIS_SCHEME), *at, *slash;
	const char	*colon, *env;
	size_t		 i;

	*user = *password = *seeds = NULL;
	slash = strchr(p, '/');
	at = memchr(p, '@', slash != NULL ? (size_t)(slash - p) : strlen(p));
	if (at != NULL) {
		colon = memchr(p, ':', (size_t)(at - p));
		if (colon != NULL) {
			if (colon > p)
				*user = xstrndup(p, (size_t)(colon - p));
			*password = xstrndup(colon + 1,
			    (size_t)(at - colon - 1));
		} else
			*password = xstrndup(p, (size_t)(at - p));
		p = at + 1;
	} else if ((env = getenv("REDISCLI_AUTH")) != NULL && *env != '\0')
		*password = xstrdup(env);
	*seeds = slash != NULL ? xstrndup(p, (size_t)(slash - p)) : xstrdup(p);
	strcpy(ns, NAMESPACE_DEFAULT);
	if (slash != NULL && slash[1] != '\0') {
		if (strlen(slash + 1) > NAMESPACE_MAX)
			return (nsd_error_set(err, NSD_EXIT_USAGE,
			    "--db %s: the namespace is longer than %d bytes",
			    shown, NAMESPACE_MAX));
		for (i = 1; slash[i] != '\0'; i++)
			if (!isalnum((unsigned char)slash[i]) &&
			    strchr("_.-", slash[i]) == NULL)
				return (nsd_error_set(err, NSD_EXIT_USAGE,
				    "--db %s: a namespace is made of letters, "
				    "digits, '_', '.' and '-'", shown));
		strcpy(ns, slash + 1);
	}
	if (**seeds == '\0')
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--db %s: no HOST:PORT", shown));
	o->seeds = *seeds;
	o->user = *user;
	o->password = *password;
	return (0);
}

/*
 * Milliseconds from the environment variable name, in seconds (decimals
 * allowed) from 0.1 to a day; 0 when unset, -1 (err set) when invalid.
 */
static long
env_ms(const char *name, struct nsd_error *err)
{
	const char	*v = getenv(name);
	char		*end;
	double		 sec;

	if (v == NULL || *v == '\0')
		return (0);
	errno = 0;
	sec = strtod(v, &end);
	if (errno != 0 || *end != '\0' || !(sec >= 0.1 && sec <= 86400))
		return (nsd_error_set(err, NSD_EXIT_USAGE, "%s=%s: not a "
		    "number of seconds from 0.1 to 86400", name, v));
	return ((long)(sec * 1000));
}

/* A copy of url without its password, for messages. */
static char *
url_shown(const char *url)
{
	const char	*p = url + strlen(NSD_REDIS_SCHEME), *at, *slash;
	struct nsd_buf	 b = { NULL, 0, 0 };

	slash = strchr(p, '/');
	at = memchr(p, '@', slash != NULL ? (size_t)(slash - p) : strlen(p));
	if (at == NULL)
		return (xstrdup(url));
	nsd_buf_append(&b, NSD_REDIS_SCHEME, strlen(NSD_REDIS_SCHEME));
	nsd_buf_append(&b, "***@", 4);
	nsd_buf_append(&b, at + 1, strlen(at + 1) + 1);
	return (b.data);
}

int
nsd_index_open_redis(struct nsd_index **ixp, const struct nsd_index_redis *o,
    const struct nsd_index_params *p, struct nsd_error *err)
{
	struct redis_index	*ri;
	struct nsd_redis_options ro;
	char			*user, *password, *seeds;
	int			 rc;

	ri = xcalloc(1, sizeof *ri);
	ri->base.ops = &redis_ops;
	ri->base.params = *p;
	ri->readonly = o->readonly;
	ri->ttl = o->ttl;
	ri->repeats = p->repeats;
	ri->url = url_shown(o->url);
	nsd_redis_batch_init(&ri->batch);
	memset(&ro, 0, sizeof ro);
	rc = parse_url(o->url, ri->url, &ro, &user, &password, &seeds, ri->ns,
	    err);
	if (rc == 0 && ((ro.wait_ms = env_ms("NSDEDUP_REDIS_WAIT", err)) ==
	    -1 || (ro.retry_ms = env_ms("NSDEDUP_REDIS_RETRY", err)) == -1))
		rc = -1;
	else if (rc == 0 &&
	    (rc = nsd_redis_open(&ri->cl, &ro, err)) == -1) {
		char	 msg[NSD_ERROR_MAX];

		memcpy(msg, err->msg, sizeof msg);
		if (err->status == NSD_EXIT_USAGE)
			nsd_error_set(err, NSD_EXIT_USAGE, "--db %s: %s",
			    ri->url, msg);
		else
			nsd_error_set(err, NSD_EXIT_INDEX, "%s: cannot use "
			    "the index: %s", ri->url, msg);
	}
	if (password != NULL)
		nsd_wipe(password, strlen(password));
	free(user);
	free(password);
	free(seeds);
	if (rc == 0)
		rc = check_params(ri, err);
	/* This run's token, which its groups keep, and its lease. */
	if (getrandom(&ri->run, sizeof ri->run, 0) != sizeof ri->run)
		ri->run = nsd_fmix64((uint64_t)time(NULL) ^
		    (uint64_t)getpid() << 32 ^ (uint64_t)now_seconds());
	ri->run += ri->run == 0;
	snprintf(ri->run_hex, sizeof ri->run_hex, "%016" PRIx64, ri->run);
	if (rc == 0 && !ri->readonly)
		rc = run_mark(ri, 0, 0, err);
	if (rc == -1) {
		ri->block_end = 0;
		redis_close(&ri->base);
		return (-1);
	}
	*ixp = &ri->base;
	return (0);
}

#else /* !NSD_WITH_REDIS */

int
nsd_index_open_redis(struct nsd_index **ixp, const struct nsd_index_redis *o,
    const struct nsd_index_params *p, struct nsd_error *err)
{
	(void)ixp;
	(void)p;
	return (nsd_error_set(err, NSD_EXIT_USAGE, "--db %s: this nsdedup "
	    "was built without Redis (configure found no hiredis; on Debian: "
	    "apt-get install libhiredis-dev)", o->url));
}

#endif /* NSD_WITH_REDIS */
