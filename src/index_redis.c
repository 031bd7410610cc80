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
 * pipeline (whose method's near operation knows whether a conflict is
 * similar enough to matter) asks nsd_index_arbitrate() to decide (see
 * nsd_ri_arbitrate() in index_redis_settle.c): one SET NX key per pair
 * says which group gives way, and one per group makes the group given
 * way to a root that never gives way itself, so that there are no chains
 * and no loops. The group that gives way becomes
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
 * A block is used only once the replicas of the master that gave it out
 * have it (WAIT, nsd_redis_command_replicated()): a failover to a replica
 * without it would give it out again, and two groups with one number
 * would merge two stories. The other writes are not waited for, since
 * what a failover takes of them costs at most a duplicate let through: a
 * lost claim is claimed again by the next record that has it, a lost
 * group's keys count as gone (group_take()), a lost "@M" leaves a group
 * its own, whose similar_id still ends at an original, and a lost
 * arbitration is decided again, the stances keeping groups out of loops
 * (and a loop made all the same, both lost, is an error, never a merge).
 *
 * With --ttl every key a run writes expires. A claim, a block, a group's
 * record and an arbitration's keys take the TTL when written, and a block
 * and a group's record again with each claim for them. A run's key, done,
 * takes it too: past it, a group of the run that later claims kept alive
 * takes its first record again for an original, as --ttl promises of a
 * record whose fingerprints expired. NS:params and NS:next must outlive
 * every key made with those parameters or naming a group number (a group
 * numbered again would merge two stories), so they expire only in a
 * namespace made with --ttl (NS:params made with an expiry), where each
 * batch pushes theirs past its own writes (EXPIRE ... GT, which another
 * run's longer TTL keeps), and a run without --ttl makes them stay.
 *
 * Every command may be sent twice (redis_cluster.c resends what a lost
 * connection left unanswered), and each answers the second time as it
 * did the first: a claim that finds its own group won, HSETNX is a no-op,
 * a group's record is the same bytes; but INCRBY, whose block is then
 * skipped.

 *
 * This file holds the batch's maps, the reads and the index's operations;
 * index_redis_settle.c writes a batch, arbitrates its conflicts and keeps
 * the runs' leases; index_redis_open.c parses the URL, checks the
 * parameters and opens; index_redis_verify.c looks into a namespace for
 * --db-info and --db-verify, holding it to what this essay promises;
 * index_redis_int.h is what they share.
 */
#include "config.h"

#include <assert.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index.h"
#include "index_redis.h"
#include "index_redis_int.h"
#include "redis_cluster.h"
#include "util.h"

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
size_t
nsd_ri_key_name(const struct redis_index *ri, char *buf, size_t size,
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
size_t
nsd_ri_group_key(const struct redis_index *ri, char *buf, size_t size,
    uint64_t n)
{
	int	 len;

	len = snprintf(buf, size, "%s:g:%" PRIu64, ri->ns, n);
	assert(len > 0 && (size_t)len < size);
	return ((size_t)len);
}

/* The map's slot for key: where it is, or where it would go. */
struct key_slot *
nsd_ri_key_slot(struct key_map *m, uint64_t key)
{
	size_t	 mask, i;

	if (m->nslots == 0 || (m->used + 1) * 2 > m->nslots) {
		struct key_map	 old = *m;

		m->nslots = old.nslots == 0 ? 1024 : 2 * old.nslots;
		m->slots = xcalloc(m->nslots, sizeof *m->slots);
		m->used = 0;
		for (i = 0; i < old.nslots; i++)
			if (old.slots[i].state != KEY_FREE) {
				*nsd_ri_key_slot(m, old.slots[i].key) =
				    old.slots[i];
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
void
nsd_ri_key_map_clear(struct key_map *m)
{
	if (m->used > 0)
		memset(m->slots, 0, m->nslots * sizeof *m->slots);
	m->used = 0;
}

/* The block (table, value)'s slot: where it is, or where it would go. */
struct block_slot *
nsd_ri_block_slot(struct block_map *m, unsigned table, uint64_t value)
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
				*nsd_ri_block_slot(m, old[i].table,
				    old[i].value) = old[i];
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
void
nsd_ri_block_map_clear(struct block_map *m)
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
struct group_slot *
nsd_ri_group_slot(struct group_map *m, uint64_t number)
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
				*nsd_ri_group_slot(m, old[i].number) = old[i];
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
struct group_slot *
nsd_ri_group_get(struct group_map *m, uint64_t number)
{
	struct group_slot	*g = nsd_ri_group_slot(m, number);

	if (g->number == 0) {
		g->number = number;
		m->used++;
	}
	return (g);
}

/* Forget every group, freeing their ids and signatures. */
void
nsd_ri_group_map_clear(struct group_map *m)
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
uint64_t
nsd_ri_parse_number(const char *s, size_t len)
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
long
nsd_ri_now_seconds(void)
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
int
nsd_ri_reply_group(struct redis_index *ri, const redisReply *r, uint64_t *v,
    struct nsd_error *err)
{
	if (r->type == REDIS_REPLY_NIL) {
		*v = 0;
		return (0);
	}
	if (r->type == REDIS_REPLY_STRING &&
	    (*v = nsd_ri_parse_number(r->str, r->len)) != 0)
		return (0);
	return (nsd_error_set(err, NSD_EXIT_INDEX,
	    "%s: unexpected reply: %s", ri->url,
	    r->type == REDIS_REPLY_ERROR ? r->str : "not a group number"));
}

/* Start a batch of commands. */
void
nsd_ri_cmds_begin(struct redis_index *ri)
{
	nsd_redis_batch_reset(&ri->batch);
}

/* Add a command whose first argument after the name is the key. */
size_t
nsd_ri_cmd_add(struct redis_index *ri, const char *key, size_t key_len,
    int argc, const char **argv, size_t *argvlen)
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
int
nsd_ri_url_error(struct redis_index *ri, struct nsd_error *err)
{
	char	 msg[NSD_ERROR_MAX];

	memcpy(msg, err->msg, sizeof msg);
	return (nsd_error_set(err, NSD_EXIT_INDEX, "%s: %s", ri->url, msg));
}

/* Run the batch built since nsd_ri_cmds_begin(), if it has commands. */
int
nsd_ri_cmds_run(struct redis_index *ri, struct nsd_error *err)
{
	if (ri->batch.ncmds == 0)
		return (0);
	if (nsd_redis_batch_run(ri->cl, &ri->batch, err) == -1)
		return (nsd_ri_url_error(ri, err));
	return (0);
}

/* Whether a reply is an error, with the error set. */
int
nsd_ri_reply_failed(struct redis_index *ri, const redisReply *r,
    struct nsd_error *err)
{
	if (r->type != REDIS_REPLY_ERROR)
		return (0);
	nsd_error_set(err, NSD_EXIT_INDEX, "%s: %s", ri->url, r->str);
	return (1);
}

/* Note that the records of group n are needed. */
void
nsd_ri_want_group(struct redis_index *ri, uint64_t n)
{
	struct group_slot	*g;

	if (n == 0)
		return;
	g = nsd_ri_group_get(&ri->groups, n);
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
	struct group_slot	*g = nsd_ri_group_get(&ri->groups, n);
	size_t			 sig_bytes = ri->base.params.sig_bytes;

	g->queued = 0;
	if (g->known)
		return (0);
	if (r->type == REDIS_REPLY_STRING && r->len > 1 && r->str[0] == '@' &&
	    (g->alias = nsd_ri_parse_number(r->str + 1, r->len - 1)) != 0) {
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
int
nsd_ri_fetch_groups(struct redis_index *ri, struct nsd_error *err)
{
	const char		*argv[2];
	size_t			 argvlen[2], i, n, first = 0;
	char			 key[128];
	struct group_slot	*g;

	while (first < ri->nwanted_groups) {
		nsd_ri_cmds_begin(ri);
		n = ri->nwanted_groups;
		for (i = first; i < n; i++) {
			argv[0] = "GET";
			nsd_ri_cmd_add(ri, key, nsd_ri_group_key(ri, key,
			    sizeof key, ri->wanted_groups[i]), 2, argv,
			    argvlen);
		}
		if (nsd_ri_cmds_run(ri, err) == -1)
			return (-1);
		for (i = first; i < n; i++) {
			if (group_take(ri, ri->wanted_groups[i],
			    nsd_redis_batch_reply(&ri->batch, i - first),
			    err) == -1)
				return (-1);
			g = nsd_ri_group_get(&ri->groups, ri->wanted_groups[i]);
			if (g->alias != 0)
				nsd_ri_want_group(ri, g->alias);
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
uint64_t
nsd_ri_group_canonical(struct redis_index *ri, uint64_t n)
{
	struct group_slot	*g;
	unsigned		 hops;

	for (hops = 0; n != 0 && hops < ALIAS_HOPS_MAX; hops++) {
		g = nsd_ri_group_slot(&ri->groups, n);
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
		return (nsd_ri_fetch_groups(ri, err));
	nsd_ri_cmds_begin(ri);
	for (i = 0; i < ri->nwanted_keys; i++) {
		argv[0] = "GET";
		nsd_ri_cmd_add(ri, key, nsd_ri_key_name(ri, key, sizeof key,
		    "f", ri->wanted_keys[i], 0, 0), 2, argv, argvlen);
	}
	for (i = 0; i < ri->nwanted_blocks; i++) {
		argv[0] = "HGETALL";
		nsd_ri_cmd_add(ri, key, nsd_ri_key_name(ri, key, sizeof key,
		    "s", ri->wanted_blocks[i].table,
		    ri->wanted_blocks[i].value, 1), 2, argv, argvlen);
	}
	if (nsd_ri_cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0; i < ri->nwanted_keys; i++) {
		struct key_slot	*ks = nsd_ri_key_slot(&ri->keys,
		    ri->wanted_keys[i]);

		r = nsd_redis_batch_reply(&ri->batch, c++);
		if (nsd_ri_reply_group(ri, r, &g, err) == -1)
			return (-1);
		ks->group = g;
		ks->state = KEY_KNOWN;
		nsd_ri_want_group(ri, g);
	}
	for (i = 0; i < ri->nwanted_blocks; i++) {
		b = nsd_ri_block_slot(&ri->blocks, ri->wanted_blocks[i].table,
		    ri->wanted_blocks[i].value);
		r = nsd_redis_batch_reply(&ri->batch, c++);
		if (nsd_ri_reply_failed(ri, r, err))
			return (-1);
		if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
			return (nsd_error_set(err, NSD_EXIT_INDEX,
			    "%s: a SimHash block is not a hash", ri->url));
		b->state = KEY_KNOWN;
		b->server_len = r->elements / 2;
		for (k = 0; k + 1 < r->elements; k += 2) {
			if (!nsd_ri_block_field(r, k, &fp, &g) || g == 0)
				continue;
			block_add(&ri->blocks, b, fp, g, 0);
			nsd_ri_want_group(ri, g);
		}
	}
	ri->nwanted_keys = ri->nwanted_blocks = 0;
	return (nsd_ri_fetch_groups(ri, err));
}

/* Want key, when not known yet. */
static struct key_slot *
want_key(struct redis_index *ri, uint64_t key)
{
	struct key_slot	*s = nsd_ri_key_slot(&ri->keys, key);

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
	struct block_slot	*b = nsd_ri_block_slot(&ri->blocks, t, value);

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

/*
 * Field k of a block's HGETALL reply r: its fingerprint (16 hex) and
 * group; 0 when either is not a string.
 */
int
nsd_ri_block_field(const redisReply *r, size_t k, uint64_t *fp, uint64_t *g)
{
	if (r->element[k]->type != REDIS_REPLY_STRING ||
	    r->element[k + 1]->type != REDIS_REPLY_STRING)
		return (0);
	*fp = strtoull(r->element[k]->str, NULL, 16);
	*g = nsd_ri_parse_number(r->element[k + 1]->str,
	    r->element[k + 1]->len);
	return (1);
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
		s = nsd_ri_key_slot(&ri->keys, fp);
	}
	*group = nsd_ri_group_canonical(ri, s->group);
	return (0);
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
	struct key_slot		*s = nsd_ri_key_slot(&ri->keys, fp);
	uint64_t		 gone = s->group;

	if (ri->readonly)
		return (nsd_index_refuse_write(ri->url, err));
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
		b = nsd_ri_block_slot(&ri->blocks, t, fp & ix->params.masks[t]);
		for (i = b->head; i != SIZE_MAX; i = e->next) {
			e = &ri->blocks.entries[i];
			if ((g = nsd_ri_group_canonical(ri, e->group)) == 0)
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
			return (nsd_ri_group_canonical(ri,
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
		return (nsd_index_refuse_write(ri->url, err));
	for (t = 0; t < ix->params.ntables; t++) {
		v = fp & ix->params.masks[t];
		b = want_block(ri, t, v);
		if (b->state == KEY_WANTED && fetch(ri, err) == -1)
			return (-1);
		b = nsd_ri_block_slot(&ri->blocks, t, v);
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

/* Give the counter key, which has no expiry, the namespace's. */
static int
counter_expire(struct redis_index *ri, const char *key, struct nsd_error *err)
{
	const char	*argv[3];
	size_t		 argvlen[3];
	char		 ttl[24];
	redisReply	*r;
	int		 i;

	snprintf(ttl, sizeof ttl, "%ld", ri->ttl);
	argv[0] = "EXPIRE";
	argv[1] = key;
	argv[2] = ttl;
	for (i = 0; i < 3; i++)
		argvlen[i] = strlen(argv[i]);
	if (nsd_redis_command(ri->cl, key, argvlen[1], 3, argv, argvlen, &r,
	    err) == -1)
		return (nsd_ri_url_error(ri, err));
	freeReplyObject(r);
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
	/* Used only once the master's replicas have it (see above). */
	if (nsd_redis_command_replicated(ri->cl, key, strlen(key), 3, argv,
	    argvlen, &r, NULL, err) == -1)
		return (nsd_ri_url_error(ri, err));
	if (r->type == REDIS_REPLY_INTEGER && r->integer >= GROUP_BLOCK) {
		ri->block_end = (uint64_t)r->integer;
		ri->block_next = ri->block_end - GROUP_BLOCK + 1;
		ri->block_taken = ri->block_end;
		/* A counter this made, in a namespace that expires. */
		if (ri->meta_expires && r->integer == GROUP_BLOCK)
			rc = counter_expire(ri, key, err);
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
		return (nsd_ri_url_error(ri, err));
	*n = r->type == REDIS_REPLY_STRING ?
	    nsd_ri_parse_number(r->str, r->len) : 0;
	freeReplyObject(r);
	return (0);
}

/* Group n's record is to be written at settle. */
void
nsd_ri_push_fresh(struct redis_index *ri, uint64_t n)
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
		return (nsd_index_refuse_write(ri->url, err));
	if ((ri->block_end == 0 || ri->block_next > ri->block_end) &&
	    take_block(ri, err) == -1)
		return (-1);
	*group = ri->block_next++;
	g = nsd_ri_group_get(&ri->groups, *group);
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
	nsd_ri_push_fresh(ri, *group);
	ri->opened++;
	return (0);
}

/* Group n's slot, known, following what it turned out to be. */
int
nsd_ri_group_resolve(struct redis_index *ri, uint64_t n, struct group_slot **gp,
    struct nsd_error *err)
{
	struct group_slot	*g;
	unsigned		 hops;

	for (hops = 0; hops < ALIAS_HOPS_MAX; hops++) {
		g = nsd_ri_group_get(&ri->groups, n);
		if (!g->known) {
			nsd_ri_want_group(ri, n);
			if (nsd_ri_fetch_groups(ri, err) == -1)
				return (-1);
			g = nsd_ri_group_get(&ri->groups, n);
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

	if (nsd_ri_group_resolve((struct redis_index *)ix, group, &g,
	    err) == -1)
		return (-1);
	*sig = g->sig;
	return (0);
}

static int
redis_group_name(struct nsd_index *ix, uint64_t group,
    struct nsd_group_name *name, struct nsd_error *err)
{
	struct group_slot	*g;

	if (nsd_ri_group_resolve((struct redis_index *)ix, group, &g,
	    err) == -1)
		return (-1);
	name->id = g->id;
	name->id_len = g->id_len;
	name->number = g->number;
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
	    "redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL') end return 0";
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

void
nsd_ri_close(struct nsd_index *ix)
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
		argvlen[1] = nsd_ri_run_key(ri, key, sizeof key, ri->run);
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
	nsd_ri_group_map_clear(&ri->groups);
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

const struct nsd_index_ops nsd_ri_ops = {
	.prefetch = redis_prefetch,
	.lookup = redis_lookup,
	.put = redis_put,
	.near = redis_near,
	.add = redis_add,
	.group_new = redis_group_new,
	.group_signature = redis_group_signature,
	.group_name = redis_group_name,
	.settle = nsd_ri_settle,
	.arbitrate = nsd_ri_arbitrate,
	.group_adopt = nsd_ri_group_adopt,
	.numbered = redis_numbered,
	.begin_batch = nsd_ri_begin_batch,
	.commit = nsd_ri_commit,
	.info = redis_info,
	.close = nsd_ri_close
};

