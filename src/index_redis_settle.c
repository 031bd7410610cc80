/*
 * index_redis_settle.c: the shared index's batch written at settle (its
 * new groups' records, then its claims), the conflicts another host's
 * claims made, their arbitration, and the leases of the runs (see the
 * design essay at the top of index_redis.c).
 */
#include "config.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "index_redis.h"
#include "index_redis_int.h"
#include "redis_cluster.h"
#include "util.h"

/* The key of run r's state: "running" (for a while), "done", or none. */
size_t
nsd_ri_run_key(const struct redis_index *ri, char *buf, size_t size, uint64_t r)
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
	argvlen[1] = nsd_ri_run_key(ri, key, sizeof key, r);
	argvlen[0] = 3;
	if (nsd_redis_command(ri->cl, key, argvlen[1], 2, argv, argvlen, &rep,
	    err) == -1)
		return (nsd_ri_url_error(ri, err));
	*live = rep->type == REDIS_REPLY_STRING;
	freeReplyObject(rep);
	if (ri->nruns == RUNS_CACHED)
		ri->nruns = 0;
	ri->runs[ri->nruns].run = r;
	ri->runs[ri->nruns++].live = *live;
	return (0);
}

int
nsd_ri_group_adopt(struct nsd_index *ix, uint64_t group, int *yes,
    struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	struct group_slot	*g;
	int			 live = 1;

	if (nsd_ri_group_resolve(ri, group, &g, err) == -1 ||
	    run_live(ri, g->run, &live, err) == -1)
		return (-1);
	*yes = !live;
	/* Its record, with this run's token, is written at settle. */
	if (*yes && !ri->readonly) {
		g->run = ri->run;
		nsd_ri_push_fresh(ri, g->number);
	}
	return (0);
}

/*
 * Say that this run is alive (RUN_LEASE seconds from now), or done; in
 * the batch being built when batch, else by itself.
 */
int
nsd_ri_run_mark(struct redis_index *ri, int done, int batch,
    struct nsd_error *err)
{
	int	 i;
	const char	*argv[5];
	size_t		 argvlen[5];
	char		 key[128], lease[24];
	redisReply	*r;
	int		 argc = 3;

	argv[0] = "SET";
	argv[1] = key;
	argvlen[1] = nsd_ri_run_key(ri, key, sizeof key, ri->run);
	argv[2] = done ? "done" : "running";
	/*
	 * Done, it lives as long as --ttl lets what the run wrote live:
	 * past that, a group of the run that a later claim kept alive takes
	 * its first record again for an original, as --ttl promises of a
	 * record whose fingerprints expired.
	 */
	if (!done || ri->ttl > 0) {
		snprintf(lease, sizeof lease, "%ld", done ? ri->ttl :
		    (long)RUN_LEASE);
		argv[argc++] = "EX";
		argv[argc++] = lease;
	}
	for (i = 0; i < argc; i++)
		if (i != 1)
			argvlen[i] = strlen(argv[i]);
	ri->run_marked = nsd_ri_now_seconds();
	if (batch) {
		nsd_redis_batch_add(&ri->batch, key, argvlen[1], argc, argv,
		    argvlen);
		return (0);
	}
	if (nsd_redis_command(ri->cl, key, argvlen[1], argc, argv, argvlen,
	    &r, err) == -1)
		return (nsd_ri_url_error(ri, err));
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

/*
 * The arguments of SET key value NX GET, with the TTL, after the key at
 * argv[1]: first claim wins, and says who won. Returns argc.
 */
static int
set_nx_get_args(const struct redis_index *ri, const char **argv,
    size_t *argvlen, const char *value, char *ttl, size_t size)
{
	argv[0] = "SET";
	argv[2] = value;
	argvlen[2] = SIZE_MAX;
	argv[3] = "NX";
	argvlen[3] = 2;
	argv[4] = "GET";
	argvlen[4] = 3;
	return (ttl_args(ri, argv, argvlen, 5, ttl, size));
}

/*
 * Add to the batch being built what keeps NS:params and NS:next alive as
 * long as the keys it writes, when they expire at all: EXPIRE ... GT,
 * which never shortens a life that another run made longer.
 */
void
nsd_ri_meta_refresh(struct redis_index *ri)
{
	const char	*argv[4];
	size_t		 argvlen[4];
	char		 key[128], ttl[24];
	int		 n;

	if (!ri->meta_expires)
		return;
	snprintf(ttl, sizeof ttl, "%ld", ri->ttl);
	argv[0] = "EXPIRE";
	argv[2] = ttl;
	argvlen[2] = SIZE_MAX;
	argv[3] = "GT";
	argvlen[3] = 2;
	n = snprintf(key, sizeof key, "%s:params", ri->ns);
	nsd_ri_cmd_add(ri, key, (size_t)n, 4, argv, argvlen);
	n = snprintf(key, sizeof key, "%s:next", ri->ns);
	argvlen[2] = SIZE_MAX;
	nsd_ri_cmd_add(ri, key, (size_t)n, 4, argv, argvlen);
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
	nsd_ri_cmds_begin(ri);
	ri->keybuf.len = 0;
	/* The records, one after the other, then a SET for each. */
	for (i = 0; i < ri->nfresh; i++) {
		g = nsd_ri_group_get(&ri->groups, ri->fresh[i]);
		nsd_buf_append(&ri->keybuf, "g", 1);
		nsd_buf_append(&ri->keybuf, ri->run_hex, 16);
		if (sig_bytes > 0)
			nsd_buf_append(&ri->keybuf, g->sig, sig_bytes);
		if (g->id_len > 0)
			nsd_buf_append(&ri->keybuf, g->id, g->id_len);
	}
	for (i = 0, off = 0; i < ri->nfresh; i++) {
		g = nsd_ri_group_get(&ri->groups, ri->fresh[i]);
		argv[0] = "SET";
		argv[2] = ri->keybuf.data + off;
		argvlen[2] = 1 + 16 + sig_bytes + g->id_len;
		off += argvlen[2];
		argc = ttl_args(ri, argv, argvlen, 3, ttl, sizeof ttl);
		nsd_ri_cmd_add(ri, key, nsd_ri_group_key(ri, key, sizeof key,
		    ri->fresh[i]), argc, argv, argvlen);
	}
	if (ri->nclaims == 0)
		nsd_ri_meta_refresh(ri);
	if (nsd_ri_cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0; i < ri->batch.ncmds; i++)
		if (nsd_ri_reply_failed(ri,
		    nsd_redis_batch_reply(&ri->batch, i), err))
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
	argvlen[3] = nsd_ri_key_name(ri, key, sizeof key, "f", cl->key, 0, 0);
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
	nsd_ri_cmds_begin(ri);
	for (i = 0; i < ri->nclaims; i++) {
		cl = &ri->claims[i];
		snprintf(group, sizeof group, "%" PRIu64, cl->group);
		if (!ri->repeats && cl->replaces != 0) {
			claim_in_place(ri, cl, group, ttl);
			continue;
		}
		if (!ri->repeats) {
			argc = set_nx_get_args(ri, argv, argvlen, group, ttl,
			    sizeof ttl);
			nsd_ri_cmd_add(ri, key, nsd_ri_key_name(ri, key,
			    sizeof key, "f", cl->key, 0, 0), argc, argv,
			    argvlen);
			continue;
		}
		snprintf(fp, sizeof fp, "%016" PRIx64, cl->key);
		/* A field that names a gone group is overwritten. */
		argv[0] = cl->replaces != 0 ? "HSET" : "HSETNX";
		argv[2] = fp;
		argvlen[2] = 16;
		argv[3] = group;
		argvlen[3] = SIZE_MAX;
		nsd_ri_key_name(ri, key, sizeof key, "s", cl->table, cl->value,
		    1);
		nsd_ri_cmd_add(ri, key, strlen(key), 4, argv, argvlen);
		argv[0] = "HLEN";
		c = nsd_ri_cmd_add(ri, key, strlen(key), 2, argv, argvlen);
		nsd_ri_block_slot(&ri->blocks, cl->table,
		    cl->value)->len_reply = c;
		if (ri->ttl > 0) {
			argv[0] = "EXPIRE";
			argv[2] = ttl;
			snprintf(ttl, sizeof ttl, "%ld", ri->ttl);
			argvlen[2] = SIZE_MAX;
			nsd_ri_cmd_add(ri, key, strlen(key), 3, argv, argvlen);
		}
	}
	/* Still alive: a minute at most between two leases. */
	if (nsd_ri_now_seconds() - ri->run_marked >= 60)
		(void)nsd_ri_run_mark(ri, 0, 1, err);
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
		nsd_ri_cmd_add(ri, key, nsd_ri_group_key(ri, key, sizeof key,
		    ri->claims[i].group), 3, argv, argvlen);
	}
	nsd_ri_meta_refresh(ri);
	if (nsd_ri_cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0, c = 0; i < ri->nclaims; i++) {
		cl = &ri->claims[i];
		r = nsd_redis_batch_reply(&ri->batch, c++);
		if (!ri->repeats) {
			if (nsd_ri_reply_group(ri, r, &held, err) == -1)
				return (-1);
			if (held == 0 || held == cl->group) {
				ri->claimed++;
				continue;
			}
			/* Theirs, from now on, as near_enough() counts. */
			nsd_ri_key_slot(&ri->keys, cl->key)->group = held;
			if (is_fresh(ri, cl->group)) {
				add_conflict(ri, cl->group, held, cl->key);
				nsd_ri_want_group(ri, held);
			}
			continue;
		}
		if (nsd_ri_reply_failed(ri, r, err))
			return (-1);
		b = nsd_ri_block_slot(&ri->blocks, cl->table, cl->value);
		b->added += r->type == REDIS_REPLY_INTEGER && r->integer == 1;
		ri->claimed += r->type == REDIS_REPLY_INTEGER &&
		    r->integer == 1;
		r = nsd_redis_batch_reply(&ri->batch, c++);
		if (nsd_ri_reply_failed(ri, r, err))
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

	nsd_ri_cmds_begin(ri);
	for (i = 0; i < ri->blocks.nslots; i++)
		if (ri->blocks.slots[i].state == KEY_WANTED &&
		    ri->blocks.slots[i].len_reply != SIZE_MAX) {
			argv[0] = "HGETALL";
			nsd_ri_cmd_add(ri, key, nsd_ri_key_name(ri, key,
			    sizeof key, "s", ri->blocks.slots[i].table,
			    ri->blocks.slots[i].value, 1), 2, argv, argvlen);
		}
	if (ri->batch.ncmds == 0)
		return (0);
	if (nsd_ri_cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0; i < ri->blocks.nslots; i++) {
		b = &ri->blocks.slots[i];
		if (b->state != KEY_WANTED || b->len_reply == SIZE_MAX)
			continue;
		b->state = KEY_KNOWN;
		r = nsd_redis_batch_reply(&ri->batch, c++);
		if (nsd_ri_reply_failed(ri, r, err))
			return (-1);
		if (r->type != REDIS_REPLY_ARRAY)
			continue;
		for (k = 0; k + 1 < r->elements; k += 2) {
			if (!nsd_ri_block_field(r, k, &fp, &g))
				continue;
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
					nsd_ri_want_group(ri, g);
				}
			}
		}
	}
	return (0);
}

int
nsd_ri_settle(struct nsd_index *ix, const struct nsd_index_conflict **conf,
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
		if (ri->nclaims == 0 &&
		    nsd_ri_now_seconds() - ri->run_marked >= 60 &&
		    nsd_ri_run_mark(ri, 0, 0, err) == -1)
			return (-1);
		if (ri->repeats && reread_blocks(ri, err) == -1)
			return (-1);
	}
	if (nsd_ri_fetch_groups(ri, err) == -1)
		return (-1);
	/*
	 * A group that is gone is no rival; one that turned out another is
	 * that one; and a group that turned out ours is no conflict.
	 */
	for (i = 0, n = 0; i < ri->nconflicts; i++) {
		ri->conflicts[i].theirs = nsd_ri_group_canonical(ri,
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
	argc = set_nx_get_args(ri, argv, argvlen, value, ttl, sizeof ttl);
	nsd_ri_cmd_add(ri, key, (size_t)n, argc, argv, argvlen);
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
	    (*to = nsd_ri_parse_number(r->str + 1, r->len - 1)) != 0)
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
int
nsd_ri_arbitrate(struct nsd_index *ix, const struct nsd_index_conflict *pairs,
    size_t n, uint64_t *winners, struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;
	const char		*argv[8];
	size_t			 argvlen[8], i, c, nalias = 0;
	char			 key[128], value[32], ttl[32];
	uint64_t		 lo, hi, proposed, to;
	struct group_slot	*g;
	int			 argc, set;

	nsd_ri_cmds_begin(ri);
	for (i = 0; i < n; i++) {
		lo = pairs[i].ours < pairs[i].theirs ? pairs[i].ours :
		    pairs[i].theirs;
		hi = pairs[i].ours ^ pairs[i].theirs ^ lo;
		snprintf(value, sizeof value, "%" PRIu64, pairs[i].ours);
		set_nx_get(ri, "a", lo, hi, 1, value);
	}
	if (nsd_ri_cmds_run(ri, err) == -1)
		return (-1);
	for (i = 0; i < n; i++) {
		if (nsd_ri_reply_group(ri, nsd_redis_batch_reply(&ri->batch, i),
		    &proposed, err) == -1)
			return (-1);
		winners[i] = proposed == 0 || proposed == pairs[i].ours ?
		    pairs[i].theirs : pairs[i].ours;
	}
	nsd_ri_cmds_begin(ri);
	for (i = 0; i < n; i++)
		if (winners[i] != pairs[i].ours)
			set_nx_get(ri, "w", winners[i], 0, 0, "root");
	if (nsd_ri_cmds_run(ri, err) == -1)
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
	nsd_ri_cmds_begin(ri);
	for (i = 0; i < n; i++)
		if (winners[i] != pairs[i].ours) {
			snprintf(value, sizeof value, "@%" PRIu64, winners[i]);
			set_nx_get(ri, "w", pairs[i].ours, 0, 0, value);
		}
	if (nsd_ri_cmds_run(ri, err) == -1)
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
	nsd_ri_cmds_begin(ri);
	for (i = 0; i < n; i++) {
		if (winners[i] == pairs[i].ours)
			continue;
		snprintf(value, sizeof value, "@%" PRIu64, winners[i]);
		argv[0] = "SET";
		argv[2] = value;
		argvlen[2] = SIZE_MAX;
		argc = ttl_args(ri, argv, argvlen, 3, ttl, sizeof ttl);
		nsd_ri_cmd_add(ri, key, nsd_ri_group_key(ri, key, sizeof key,
		    pairs[i].ours), argc, argv, argvlen);
		g = nsd_ri_group_get(&ri->groups, pairs[i].ours);
		g->alias = winners[i];
		nsd_ri_want_group(ri, winners[i]);
		nalias++;
		ri->gave_way++;
	}
	if (nalias > 0 && nsd_ri_cmds_run(ri, err) == -1)
		return (-1);
	return (nsd_ri_fetch_groups(ri, err));
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
	nsd_ri_key_map_clear(&ri->keys);
	nsd_ri_block_map_clear(&ri->blocks);
	if (ri->groups.used > CACHE_GROUPS_MAX)
		nsd_ri_group_map_clear(&ri->groups);
	ri->nwanted_keys = ri->nwanted_blocks = 0;
}

void
nsd_ri_begin_batch(struct nsd_index *ix)
{
	batch_done((struct redis_index *)ix);
}

/* Nothing to commit, but that the run is done. */
int
nsd_ri_commit(struct nsd_index *ix, uint64_t records, struct nsd_error *err)
{
	struct redis_index	*ri = (struct redis_index *)ix;

	(void)records;
	batch_done(ri);
	if (ri->readonly)
		return (0);
	/* The run's key, done, dies no later than the namespace. */
	nsd_ri_cmds_begin(ri);
	(void)nsd_ri_run_mark(ri, 1, 1, err);
	nsd_ri_meta_refresh(ri);
	if (nsd_ri_cmds_run(ri, err) == -1 || nsd_ri_reply_failed(ri,
	    nsd_redis_batch_reply(&ri->batch, 0), err))
		return (-1);
	ri->committed = 1;
	return (0);
}
