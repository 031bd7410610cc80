/*
 * index_redis_verify.c: looking into a namespace without using it, for
 * --db-info and --db-verify (its keys are those of the design essay at the
 * top of index_redis.c).
 *
 * Nothing is written: the namespace is opened as a reader, and read with
 * GET, GETRANGE, HLEN, HGETALL, PTTL, EXISTS and SCAN. SCAN walks each
 * master's keys under NS: a page at a time; a page's keys are read in one
 * pipelined round and, to verify, the groups they name in a second, so
 * that a namespace costs two round trips a page, of max_keys keys at most
 * in all. What verification holds the namespace to:
 *
 *  - NS:params holds parameters that this nsdedup reads: its format, every
 *    word, a method it knows and a normalization version it knows;
 *  - every key under NS: is one that nsdedup makes, holding what it puts
 *    there: a group number (NS:f:), a hash of 16 hex digits to group
 *    numbers, each fingerprint a part of the block value that names the
 *    key, in one of the block tables (NS:s:), a group's record or "@M"
 *    (NS:g:), one of the two groups of an arbitration (NS:a:N:M, N < M),
 *    "root" or "@M" (NS:w:), "done" or "running" with a lease that ends
 *    (NS:run:);
 *  - NS:next, read last, is at least every group number that a key names:
 *    a group past it would be numbered again;
 *  - a group that a key names has its record, which is written before any
 *    key may name it;
 *  - a group that gave way to M ("@M") took the stance "@M" (NS:w:N), and
 *    M is a root (NS:w:M is "root") whose record names no other group, so
 *    that groups give way in no chain and no loop.
 *
 * Keys that expire (--ttl) may take a group's record or stance before the
 * keys that name it: in a namespace where keys expire, what is missing is
 * no problem. A run may write meanwhile: it numbers a group before any key
 * names it, and writes a group's record before its claims, and its stances
 * before the record that gives way, so what it adds is no problem either.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "index_redis.h"
#include "index_redis_int.h"
#include "redis_cluster.h"
#include "util.h"

#define SCAN_COUNT	"1000"

/* What a key under NS: is, by its name. */
enum kind {
	KIND_PARAMS,
	KIND_NEXT,
	KIND_FP,		/* NS:f:HEX */
	KIND_BLOCK,		/* NS:s:T:HEX */
	KIND_GROUP,		/* NS:g:N */
	KIND_PAIR,		/* NS:a:N:M */
	KIND_STANCE,		/* NS:w:N */
	KIND_RUN,		/* NS:run:HEX */
	KIND_OTHER
};

/* A key of the page being read. */
struct page_key {
	char		*name;
	enum kind	 kind;
	uint64_t	 a, b;		/* its numbers: T and HEX, N, N and M */
	long long	 pttl;		/* -1: none */
	size_t		 value;		/* its value's reply */
};

/* A group that a key of the page names, and the key. */
struct named {
	uint64_t	 group;
	size_t		 key;
	int		 alias;		/* the key is NS:g:N, given way to it */
};

struct inspect {
	const struct nsd_redis_inspect *o;
	struct redis_index	*ri;
	struct nsd_redis_report	*r;
	struct ri_params	 params;
	int			 params_ok;
	int			 verify;
	void			(*problem)(void *, const char *);
	void			*ctx;
	size_t			 max;
	uint64_t		 problems;
	/* What may be missing only for want of expired keys: said last. */
	char			(*later)[NSD_ERROR_MAX];
	size_t			 nlater;
	uint64_t		 later_count;
	uint64_t		 named_max;	/* the largest group named */
	char			 named_by[128];	/* the key that names it */
	struct page_key		*keys;
	size_t			 nkeys;
	size_t			 keys_cap;
	struct named		*named;
	size_t			 nnamed;
	size_t			 named_cap;
};

static void say(struct inspect *, const char *, ...)
	__attribute__((format(printf, 2, 3)));
static void say_later(struct inspect *, const char *, ...)
	__attribute__((format(printf, 2, 3)));

/* Count a broken promise, and pass on its description. */
static void
say(struct inspect *in, const char *fmt, ...)
{
	char	 msg[NSD_ERROR_MAX];
	va_list	 ap;

	if (in->problems++ >= in->max || in->problem == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	in->problem(in->ctx, msg);
}

/* A problem of something missing, said at the end unless keys expire. */
static void
say_later(struct inspect *in, const char *fmt, ...)
{
	va_list	 ap;

	if (in->later_count++ >= in->max)
		return;
	if (in->later == NULL)
		in->later = xreallocarray(NULL, in->max, sizeof *in->later);
	va_start(ap, fmt);
	vsnprintf(in->later[in->nlater++], sizeof *in->later, fmt, ap);
	va_end(ap);
}

/* 16 lower-case hex digits at s (len bytes) into *v; -1 when not. */
static int
hex16(const char *s, size_t len, uint64_t *v)
{
	size_t	 i;

	*v = 0;
	if (len != 16)
		return (-1);
	for (i = 0; i < 16; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			*v = *v << 4 | (uint64_t)(s[i] - '0');
		else if (s[i] >= 'a' && s[i] <= 'f')
			*v = *v << 4 | (uint64_t)(s[i] - 'a' + 10);
		else
			return (-1);
	}
	return (0);
}

/*
 * A number as nsdedup writes it (decimal, no leading zero) at s, len
 * bytes, into *v; -1 when it is not one.
 */
static int
decimal(const char *s, size_t len, uint64_t *v)
{
	size_t	 i;

	*v = 0;
	if (len == 0 || len > 19 || (len > 1 && s[0] == '0'))
		return (-1);
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return (0);
}

/* A group number (from 1) at s, len bytes; 0 when it is not one. */
static uint64_t
number(const char *s, size_t len)
{
	uint64_t	 v;

	return (decimal(s, len, &v) == -1 ? 0 : v);
}

/* What the key name (under NS:, which it lacks) is, and its numbers. */
static enum kind
kind_of(const char *s, uint64_t *a, uint64_t *b)
{
	const char	*colon;
	size_t		 len = strlen(s);

	*a = *b = 0;
	if (strcmp(s, "params") == 0)
		return (KIND_PARAMS);
	if (strcmp(s, "next") == 0)
		return (KIND_NEXT);
	if (strncmp(s, "f:", 2) == 0 && hex16(s + 2, len - 2, a) == 0)
		return (KIND_FP);
	if (strncmp(s, "run:", 4) == 0 && hex16(s + 4, len - 4, a) == 0)
		return (KIND_RUN);
	if (strncmp(s, "g:", 2) == 0 && (*a = number(s + 2, len - 2)) != 0)
		return (KIND_GROUP);
	if (strncmp(s, "w:", 2) == 0 && (*a = number(s + 2, len - 2)) != 0)
		return (KIND_STANCE);
	if ((s[0] != 's' && s[0] != 'a') || s[1] != ':' ||
	    (colon = strchr(s + 2, ':')) == NULL)
		return (KIND_OTHER);
	if (s[0] == 's' && decimal(s + 2, (size_t)(colon - s - 2), a) == 0 &&
	    hex16(colon + 1, strlen(colon + 1), b) == 0)
		return (KIND_BLOCK);
	if (s[0] == 'a' && (*a = number(s + 2, (size_t)(colon - s - 2))) !=
	    0 && (*b = number(colon + 1, strlen(colon + 1))) != 0)
		return (KIND_PAIR);
	return (KIND_OTHER);
}

/* Note that key k of the page names group g. */
static void
name_group(struct inspect *in, size_t k, uint64_t g, int alias)
{
	if (g > in->named_max) {
		in->named_max = g;
		snprintf(in->named_by, sizeof in->named_by, "%s",
		    in->keys[k].name);
	}
	if (!in->verify)
		return;
	if (in->nnamed == in->named_cap) {
		in->named_cap = in->named_cap == 0 ? 256 : 2 * in->named_cap;
		in->named = xreallocarray(in->named, in->named_cap,
		    sizeof *in->named);
	}
	in->named[in->nnamed].group = g;
	in->named[in->nnamed].key = k;
	in->named[in->nnamed++].alias = alias;
}

/* Add a command on key name to the batch: argv[0], name, then argv[2...]. */
static size_t
cmd(struct inspect *in, const char *name, int argc, const char **argv)
{
	size_t	 argvlen[4];
	int	 i;

	for (i = 2; i < argc; i++)
		argvlen[i] = strlen(argv[i]);
	return (nsd_ri_cmd_add(in->ri, name, strlen(name), argc, argv,
	    argvlen));
}

/* A reply's string, for a message: its first bytes, or what it is. */
static const char *
shown(const redisReply *r, char *buf, size_t size)
{
	size_t	 i, n;

	if (r->type == REDIS_REPLY_NIL)
		return ("nothing");
	if (r->type == REDIS_REPLY_ERROR)
		snprintf(buf, size, "an error: %s", r->str);
	else if (r->type != REDIS_REPLY_STRING)
		return ("no string");
	else {
		n = r->len < 24 ? r->len : 24;
		for (i = 0; i < n && i + 1 < size; i++)
			buf[i] = r->str[i] >= ' ' && r->str[i] < 127 ?
			    r->str[i] : '?';
		buf[i] = '\0';
		if (r->len > n && i + 4 < size)
			strcpy(buf + i, "...");
	}
	return (buf);
}

/* Verify a group record, "g" TOKEN SIGNATURE ID, or "@M". */
static void
check_group(struct inspect *in, size_t k, const redisReply *v)
{
	struct page_key	*pk = &in->keys[k];
	uint64_t	 to, token;
	char		 buf[64];

	if (v->type == REDIS_REPLY_STRING && v->len > 1 && v->str[0] == '@') {
		to = number(v->str + 1, v->len - 1);
		if (to == 0 || to == pk->a)
			say(in, "%s gave way to no other group (%s)",
			    pk->name, shown(v, buf, sizeof buf));
		else
			name_group(in, k, to, 1);
		return;
	}
	if (v->type != REDIS_REPLY_STRING || v->len < 17 || v->str[0] != 'g' ||
	    hex16(v->str + 1, 16, &token) == -1)
		say(in, "%s is not a group's record (%s)", pk->name,
		    shown(v, buf, sizeof buf));
	else if (in->params_ok && v->len < 17 + in->params.p.sig_bytes)
		say(in, "%s keeps %zu bytes of its first record, not %zu",
		    pk->name, v->len - 17, in->params.p.sig_bytes);
}

/* Verify a SimHash block: 16 hex digits to group numbers. */
static void
check_block(struct inspect *in, size_t k, const redisReply *v)
{
	struct page_key	*pk = &in->keys[k];
	uint64_t	 fp, g;
	size_t		 i;
	char		 buf[64];

	if (in->params_ok && pk->a >= in->params.p.ntables)
		say(in, "%s is of block table %" PRIu64 ", past the %u that "
		    "%s:params names", pk->name, pk->a, in->params.p.ntables,
		    in->ri->ns);
	if (v->type != REDIS_REPLY_ARRAY || v->elements % 2 != 0) {
		say(in, "%s is not a hash (%s)", pk->name,
		    shown(v, buf, sizeof buf));
		return;
	}
	in->r->block_entries += v->elements / 2;
	for (i = 0; i + 1 < v->elements; i += 2) {
		if (v->element[i]->type != REDIS_REPLY_STRING ||
		    hex16(v->element[i]->str, v->element[i]->len, &fp) == -1) {
			say(in, "%s has a field that is no fingerprint (%s)",
			    pk->name, shown(v->element[i], buf, sizeof buf));
			continue;
		}
		if (v->element[i + 1]->type != REDIS_REPLY_STRING ||
		    (g = number(v->element[i + 1]->str,
		    v->element[i + 1]->len)) == 0) {
			say(in, "%s: fingerprint %016" PRIx64 " names no "
			    "group (%s)", pk->name, fp, shown(v->element[i + 1],
			    buf, sizeof buf));
			continue;
		}
		if ((pk->b & ~fp) != 0)
			say(in, "%s holds fingerprint %016" PRIx64 ", of "
			    "which its block value is no part", pk->name, fp);
		name_group(in, k, g, 0);
	}
}

/* Verify key k's value v, and note the groups it names. */
static void
check_value(struct inspect *in, size_t k, const redisReply *v)
{
	struct page_key	*pk = &in->keys[k];
	uint64_t	 g;
	char		 buf[64];

	switch (pk->kind) {
	case KIND_PARAMS:
	case KIND_NEXT:
		break;
	case KIND_FP:
		if (v->type != REDIS_REPLY_STRING ||
		    (g = number(v->str, v->len)) == 0)
			say(in, "%s holds no group number (%s)", pk->name,
			    shown(v, buf, sizeof buf));
		else
			name_group(in, k, g, 0);
		break;
	case KIND_BLOCK:
		check_block(in, k, v);
		break;
	case KIND_GROUP:
		name_group(in, k, pk->a, -1);
		check_group(in, k, v);
		break;
	case KIND_PAIR:
		name_group(in, k, pk->a, -1);
		name_group(in, k, pk->b, -1);
		if (pk->a >= pk->b)
			say(in, "%s: an arbitration names its older group "
			    "first", pk->name);
		if (v->type != REDIS_REPLY_STRING ||
		    ((g = number(v->str, v->len)) != pk->a && g != pk->b))
			say(in, "%s names neither of its groups as the one "
			    "that gives way (%s)", pk->name,
			    shown(v, buf, sizeof buf));
		break;
	case KIND_STANCE:
		name_group(in, k, pk->a, -1);
		if (v->type == REDIS_REPLY_STRING && v->len == 4 &&
		    memcmp(v->str, "root", 4) == 0)
			break;
		if (v->type == REDIS_REPLY_STRING && v->len > 1 &&
		    v->str[0] == '@' && (g = number(v->str + 1,
		    v->len - 1)) != 0 && g != pk->a)
			name_group(in, k, g, 0);
		else
			say(in, "%s is neither \"root\" nor \"@\" and another "
			    "group (%s)", pk->name, shown(v, buf, sizeof buf));
		break;
	case KIND_RUN:
		if (v->type == REDIS_REPLY_STRING && v->len == 4 &&
		    memcmp(v->str, "done", 4) == 0)
			break;
		if (v->type != REDIS_REPLY_STRING || v->len != 7 ||
		    memcmp(v->str, "running", 7) != 0)
			say(in, "%s is neither \"running\" nor \"done\" (%s)",
			    pk->name, shown(v, buf, sizeof buf));
		else if (pk->pttl < 0)
			say(in, "%s says running, with no lease that ends",
			    pk->name);
		break;
	case KIND_OTHER:
		say(in, "%s is no key that nsdedup makes", pk->name);
		break;
	}
}

/* Count key k, by what it is, with v its value's reply (or a part). */
static void
count_key(struct inspect *in, size_t k, const redisReply *v)
{
	struct nsd_redis_report	*r = in->r;
	struct page_key		*pk = &in->keys[k];
	int64_t			 ttl;

	r->keys++;
	if (pk->pttl > 0) {
		r->expiring++;
		ttl = (pk->pttl + 999) / 1000;
		if (ttl > r->ttl_max)
			r->ttl_max = ttl;
	}
	switch (pk->kind) {
	case KIND_FP:
		r->fingerprints++;
		break;
	case KIND_BLOCK:
		r->blocks++;
		if (!in->verify && v->type == REDIS_REPLY_INTEGER)
			r->block_entries += (uint64_t)v->integer;
		break;
	case KIND_GROUP:
		r->groups++;
		r->gave_way += v->type == REDIS_REPLY_STRING && v->len >= 1 &&
		    v->str[0] == '@';
		break;
	case KIND_PAIR:
		r->pairs++;
		break;
	case KIND_STANCE:
		r->stances++;
		break;
	case KIND_RUN:
		if (v->type == REDIS_REPLY_STRING && v->len == 7 &&
		    memcmp(v->str, "running", 7) == 0)
			r->runs_running++;
		else
			r->runs_done++;
		break;
	case KIND_OTHER:
		r->others++;
		break;
	case KIND_PARAMS:
	case KIND_NEXT:
		break;
	}
}

/* Sort named groups by number. */
static int
named_cmp(const void *a, const void *b)
{
	const struct named	*x = a, *y = b;

	return (x->group < y->group ? -1 : x->group > y->group);
}

/*
 * Verify the groups the page's keys name: each has its record; and one
 * that a group gave way to is a root, with the stances that say so.
 */
static int
check_named(struct inspect *in, struct nsd_error *err)
{
	const char		*argv[2] = { "EXISTS", NULL };
	const redisReply	*v, *w_n, *w_m, *g_m;
	struct named		*nd;
	size_t			 i, c = 0;
	uint64_t		 checked = 0;
	char			 key[128], buf[64];
	char			 at[32];

	if (in->nnamed == 0)
		return (0);
	qsort(in->named, in->nnamed, sizeof *in->named, named_cmp);
	nsd_ri_cmds_begin(in->ri);
	for (i = 0; i < in->nnamed; i++) {
		nd = &in->named[i];
		if (nd->alias == 1) {
			argv[0] = "GET";
			snprintf(key, sizeof key, "%s:w:%" PRIu64, in->ri->ns,
			    in->keys[nd->key].a);
			cmd(in, key, 2, argv);
			snprintf(key, sizeof key, "%s:w:%" PRIu64, in->ri->ns,
			    nd->group);
			cmd(in, key, 2, argv);
			nsd_ri_group_key(in->ri, key, sizeof key, nd->group);
			cmd(in, key, 2, argv);
		} else if (nd->alias == 0 && nd->group != checked) {
			checked = nd->group;
			argv[0] = "EXISTS";
			nsd_ri_group_key(in->ri, key, sizeof key, nd->group);
			cmd(in, key, 2, argv);
		}
	}
	if (nsd_ri_cmds_run(in->ri, err) == -1)
		return (-1);
	checked = 0;
	for (i = 0; i < in->nnamed; i++) {
		nd = &in->named[i];
		if (nd->alias == 1) {
			w_n = nsd_redis_batch_reply(&in->ri->batch, c++);
			w_m = nsd_redis_batch_reply(&in->ri->batch, c++);
			g_m = nsd_redis_batch_reply(&in->ri->batch, c++);
			snprintf(at, sizeof at, "@%" PRIu64, nd->group);
			if (w_n->type == REDIS_REPLY_NIL)
				say_later(in, "%s gave way to group %" PRIu64
				    ", but %s:w:%" PRIu64 " is missing",
				    in->keys[nd->key].name, nd->group,
				    in->ri->ns, in->keys[nd->key].a);
			else if (w_n->type != REDIS_REPLY_STRING ||
			    strcmp(w_n->str, at) != 0)
				say(in, "%s gave way to group %" PRIu64 ", but "
				    "%s:w:%" PRIu64 " says %s",
				    in->keys[nd->key].name, nd->group,
				    in->ri->ns, in->keys[nd->key].a,
				    shown(w_n, buf, sizeof buf));
			if (w_m->type == REDIS_REPLY_NIL)
				say_later(in, "%s gave way to group %" PRIu64
				    ", whose stance %s:w:%" PRIu64 " is "
				    "missing", in->keys[nd->key].name,
				    nd->group, in->ri->ns, nd->group);
			else if (w_m->type != REDIS_REPLY_STRING ||
			    strcmp(w_m->str, "root") != 0)
				say(in, "%s gave way to group %" PRIu64 ", "
				    "which is no root (%s:w:%" PRIu64 " says "
				    "%s)", in->keys[nd->key].name, nd->group,
				    in->ri->ns, nd->group,
				    shown(w_m, buf, sizeof buf));
			if (g_m->type == REDIS_REPLY_NIL)
				say_later(in, "%s gave way to group %" PRIu64
				    ", which has no record",
				    in->keys[nd->key].name, nd->group);
			else if (g_m->type == REDIS_REPLY_STRING &&
			    g_m->len > 0 && g_m->str[0] == '@')
				say(in, "%s gave way to group %" PRIu64 ", "
				    "which gave way itself: a chain",
				    in->keys[nd->key].name, nd->group);
		} else if (nd->alias == 0 && nd->group != checked) {
			checked = nd->group;
			v = nsd_redis_batch_reply(&in->ri->batch, c++);
			if (nsd_ri_reply_failed(in->ri, v, err))
				return (-1);
			if (v->type == REDIS_REPLY_INTEGER && v->integer == 0)
				say_later(in, "%s names group %" PRIu64 ", "
				    "which has no record (%s)",
				    in->keys[nd->key].name, nd->group,
				    nsd_ri_group_key(in->ri, key, sizeof key,
				    nd->group) > 0 ? key : "");
		}
	}
	return (0);
}

/* Read and check (or count) the keys of a page of SCAN's reply. */
static int
read_page(struct inspect *in, const redisReply *keys, struct nsd_error *err)
{
	const char		*argv[4];
	const redisReply	*ttl, *v;
	struct page_key		*pk;
	size_t			 i, ns_len = strlen(in->ri->ns), n;
	int			 argc;
	uint64_t		 room = in->o->max_keys - in->r->keys;

	for (i = 0; i < in->nkeys; i++)
		free(in->keys[i].name);
	in->nkeys = in->nnamed = 0;
	n = keys->elements;
	if (n > room) {
		n = (size_t)room;
		in->r->partial = 1;
	}
	nsd_ri_cmds_begin(in->ri);
	for (i = 0; i < n; i++) {
		v = keys->element[i];
		if (v->type != REDIS_REPLY_STRING || v->len <= ns_len ||
		    memchr(v->str, '\0', v->len) != NULL)
			continue;
		if (in->nkeys == in->keys_cap) {
			in->keys_cap = in->keys_cap == 0 ? 1024 :
			    2 * in->keys_cap;
			in->keys = xreallocarray(in->keys, in->keys_cap,
			    sizeof *in->keys);
		}
		pk = &in->keys[in->nkeys++];
		pk->name = xstrndup(v->str, v->len);
		pk->kind = kind_of(pk->name + ns_len + 1, &pk->a, &pk->b);
		argv[0] = "PTTL";
		cmd(in, pk->name, 2, argv);
		/* What counts it, or what verifies it. */
		argv[0] = "GET";
		argc = 2;
		if (pk->kind == KIND_BLOCK)
			argv[0] = in->verify ? "HGETALL" : "HLEN";
		else if (pk->kind == KIND_GROUP && !in->verify) {
			argv[0] = "GETRANGE";
			argv[2] = "0";
			argv[3] = "0";
			argc = 4;
		}
		pk->value = cmd(in, pk->name, argc, argv);
	}
	if (nsd_ri_cmds_run(in->ri, err) == -1)
		return (-1);
	for (i = 0; i < in->nkeys; i++) {
		pk = &in->keys[i];
		ttl = nsd_redis_batch_reply(&in->ri->batch, pk->value - 1);
		v = nsd_redis_batch_reply(&in->ri->batch, pk->value);
		/* Gone meanwhile: SCAN may name a key that expired. */
		if (ttl->type == REDIS_REPLY_INTEGER && ttl->integer == -2)
			continue;
		pk->pttl = ttl->type == REDIS_REPLY_INTEGER ? ttl->integer :
		    -1;
		count_key(in, i, v);
		if (in->verify)
			check_value(in, i, v);
	}
	return (in->verify ? check_named(in, err) : 0);
}

/* SCAN every master's keys under NS:, a page at a time. */
static int
scan(struct inspect *in, struct nsd_error *err)
{
	const char		*argv[6];
	size_t			 argvlen[6], m, i;
	const redisReply	*r;
	const char		*host;
	char			 cursor[32], match[NAMESPACE_MAX + 4];
	unsigned		 slot;
	int			 port;

	snprintf(match, sizeof match, "%s:*", in->ri->ns);
	for (m = 0; m < in->r->masters && !in->r->partial; m++) {
		if (nsd_redis_master(in->ri->cl, m, &host, &port, &slot) == -1)
			break;
		strcpy(cursor, "0");
		do {
			argv[0] = "SCAN";
			argv[1] = cursor;
			argv[2] = "MATCH";
			argv[3] = match;
			argv[4] = "COUNT";
			argv[5] = SCAN_COUNT;
			for (i = 0; i < 6; i++)
				argvlen[i] = strlen(argv[i]);
			nsd_ri_cmds_begin(in->ri);
			nsd_redis_batch_add_slot(&in->ri->batch, slot, 6, argv,
			    argvlen);
			if (nsd_ri_cmds_run(in->ri, err) == -1)
				return (-1);
			r = nsd_redis_batch_reply(&in->ri->batch, 0);
			if (nsd_ri_reply_failed(in->ri, r, err))
				return (-1);
			if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
			    r->element[0]->type != REDIS_REPLY_STRING ||
			    r->element[0]->len >= sizeof cursor ||
			    r->element[1]->type != REDIS_REPLY_ARRAY)
				return (nsd_error_set(err, NSD_EXIT_INDEX,
				    "%s: SCAN: unexpected reply", in->ri->url));
			memcpy(cursor, r->element[0]->str,
			    r->element[0]->len + 1);
			/* The page's commands replace SCAN's reply. */
			r = nsd_redis_batch_reply(&in->ri->batch, 0);
			in->ri->batch.cmds[0].reply = NULL;
			if (read_page(in, r->element[1], err) == -1) {
				freeReplyObject((redisReply *)r);
				return (-1);
			}
			freeReplyObject((redisReply *)r);
			if (in->r->keys >= in->o->max_keys &&
			    (strcmp(cursor, "0") != 0 ||
			    m + 1 < in->r->masters))
				in->r->partial = 1;
		} while (strcmp(cursor, "0") != 0 && !in->r->partial);
	}
	return (0);
}

/* The masters, "HOST:PORT, ...", into the report. */
static void
servers(struct inspect *in)
{
	struct nsd_redis_report	*r = in->r;
	const char		*host;
	size_t			 i, len = 0;
	unsigned		 slot;
	int			 port, n;

	r->cluster = nsd_redis_is_cluster(in->ri->cl);
	r->masters = nsd_redis_masters(in->ri->cl);
	for (i = 0; i < r->masters; i++) {
		if (nsd_redis_master(in->ri->cl, i, &host, &port, &slot) == -1)
			break;
		n = snprintf(r->servers + len, sizeof r->servers - len,
		    "%s%s%s%s:%d", i > 0 ? ", " : "",
		    strchr(host, ':') != NULL ? "[" : "", host,
		    strchr(host, ':') != NULL ? "]" : "", port);
		if (n < 0 || (size_t)n >= sizeof r->servers - len) {
			strcpy(r->servers + sizeof r->servers - 5, " ...");
			break;
		}
		len += (size_t)n;
	}
}

/* The parameters into the report, as a file's header gives them. */
static void
report_params(struct inspect *in)
{
	const struct nsd_index_params	*p = &in->params.p;
	struct nsd_index_report		*r = &in->r->params;

	r->version = in->params.version;
	snprintf(r->method, sizeof r->method, "%s", p->method);
	r->sentences = p->sentences;
	r->min_length = p->min_length;
	r->compat = (unsigned)p->compat;
	r->norm_version = p->norm_version;
	r->distance = p->distance;
	r->ngram = p->ngram;
	r->shingle = p->shingle;
	r->min_features = p->min_features;
	r->ntables = p->ntables;
	r->bins = p->bins;
	r->sketch_bytes = (unsigned)p->sketch_bytes;
	r->bands = p->bands;
	r->rows = p->rows;
	r->threshold = p->threshold;
	r->seed = p->seed;
	in->params.p.sig_bytes = 2 * (size_t)p->bins + p->sketch_bytes;
}

/*
 * Read NS:params; *missing when there is none. A namespace of a newer
 * format cannot be looked into; one whose parameters cannot be read is
 * described by nobody, but verified (a problem then).
 */
static int
read_params(struct inspect *in, int *missing, struct nsd_error *err)
{
	const char	*argv[2] = { "GET", NULL };
	const char	*const *m;
	const redisReply *v;
	enum params_state st;
	char		 key[128];

	snprintf(key, sizeof key, "%s:params", in->ri->ns);
	nsd_ri_cmds_begin(in->ri);
	cmd(in, key, 2, argv);
	if (nsd_ri_cmds_run(in->ri, err) == -1)
		return (-1);
	v = nsd_redis_batch_reply(&in->ri->batch, 0);
	*missing = v->type == REDIS_REPLY_NIL;
	if (*missing)
		return (in->verify ? 0 : nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: no such index", in->ri->url));
	if (v->type == REDIS_REPLY_STRING)
		st = nsd_ri_params_parse(v->str, v->len, &in->params);
	else if (v->type == REDIS_REPLY_ERROR &&
	    strncmp(v->str, "WRONGTYPE", 9) != 0)
		return (nsd_ri_reply_failed(in->ri, v, err), -1);
	else
		st = PARAMS_FOREIGN;
	if (st == PARAMS_NEWER || (st != PARAMS_OK && !in->verify))
		return (nsd_ri_params_refuse(in->ri->url, in->ri->ns,
		    &in->params, st, err));
	if (st == PARAMS_FOREIGN)
		say(in, "%s does not hold an nsdedup index's parameters",
		    key);
	else if (st == PARAMS_DAMAGED)
		say(in, "%s: %s", key, in->params.why);
	if (st != PARAMS_OK)
		return (0);
	in->params_ok = 1;
	report_params(in);
	for (m = in->o->methods; *m != NULL &&
	    strcmp(*m, in->params.p.method) != 0; m++)
		continue;
	if (*m == NULL)
		say(in, "%s: --method %s is no method this nsdedup knows", key,
		    in->params.p.method);
	if (in->params.p.norm_version > in->o->norm_version)
		say(in, "%s: normalization version %u is newer than this "
		    "nsdedup knows (%u)", key, in->params.p.norm_version,
		    in->o->norm_version);
	return (0);
}

/* NS:next, read after every key: at least every group number named. */
static int
read_next(struct inspect *in, struct nsd_error *err)
{
	const char	*argv[2] = { "GET", NULL };
	const redisReply *v;
	char		 key[128], buf[64];

	snprintf(key, sizeof key, "%s:next", in->ri->ns);
	nsd_ri_cmds_begin(in->ri);
	cmd(in, key, 2, argv);
	if (nsd_ri_cmds_run(in->ri, err) == -1)
		return (-1);
	v = nsd_redis_batch_reply(&in->ri->batch, 0);
	if (v->type == REDIS_REPLY_NIL) {
		if (in->named_max > 0)
			say(in, "%s is missing, and %s names group %" PRIu64,
			    key, in->named_by, in->named_max);
		return (0);
	}
	if (v->type != REDIS_REPLY_STRING ||
	    ((in->r->next = number(v->str, v->len)) == 0 &&
	    (v->len != 1 || v->str[0] != '0'))) {
		say(in, "%s is not a counter (%s)", key,
		    shown(v, buf, sizeof buf));
		return (0);
	}
	if (in->named_max > in->r->next)
		say(in, "%s names group %" PRIu64 ", past the counter %s "
		    "(%" PRIu64 "): a later group would take its number",
		    in->named_by, in->named_max, key, in->r->next);
	return (0);
}

/* Look into the namespace: describe it, or verify it too. */
static int
inspect(struct inspect *in, struct nsd_error *err)
{
	int	 missing = 0;
	size_t	 i;

	if (nsd_ri_connect(&in->ri, in->o->url, 1, err) == -1)
		return (-1);
	in->r->url = xstrdup(in->ri->url);
	snprintf(in->r->ns, sizeof in->r->ns, "%s", in->ri->ns);
	servers(in);
	if (read_params(in, &missing, err) == -1 || scan(in, err) == -1 ||
	    read_next(in, err) == -1)
		return (-1);
	if (missing && in->r->keys == 0)
		return (nsd_error_set(err, NSD_EXIT_INDEX, "%s: no such index",
		    in->ri->url));
	if (missing)
		say(in, "%s:params is missing", in->ri->ns);
	/* What expired keys may have taken is no problem where keys do. */
	if (in->r->expiring == 0)
		for (i = 0; i < in->nlater; i++)
			say(in, "%s", in->later[i]);
	if (in->r->expiring == 0 && in->later_count > in->nlater)
		in->problems += in->later_count - in->nlater;
	return (0);
}

static int
run(const struct nsd_redis_inspect *o, int verify,
    void (*problem)(void *, const char *), void *ctx, size_t max,
    struct nsd_redis_report *r, uint64_t *problems, struct nsd_error *err)
{
	struct inspect	 in;
	size_t		 i;
	int		 rc;

	memset(&in, 0, sizeof in);
	memset(r, 0, sizeof *r);
	in.o = o;
	in.r = r;
	in.verify = verify;
	in.problem = problem;
	in.ctx = ctx;
	in.max = max;
	rc = inspect(&in, err);
	if (problems != NULL)
		*problems = in.problems;
	for (i = 0; i < in.nkeys; i++)
		free(in.keys[i].name);
	free(in.keys);
	free(in.named);
	free(in.later);
	if (in.ri != NULL)
		nsd_ri_close(&in.ri->base);
	if (rc == -1)
		nsd_redis_report_free(r);
	return (rc);
}

int
nsd_index_redis_describe(const struct nsd_redis_inspect *o,
    struct nsd_redis_report *r, struct nsd_error *err)
{
	return (run(o, 0, NULL, NULL, 0, r, NULL, err));
}

int
nsd_index_redis_verify(const struct nsd_redis_inspect *o,
    void (*problem)(void *, const char *), void *ctx, size_t max,
    struct nsd_redis_report *r, uint64_t *problems, struct nsd_error *err)
{
	return (run(o, 1, problem, ctx, max, r, problems, err));
}
