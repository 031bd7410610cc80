/*
 * index_redis_open.c: opening the shared index (see the design essay at
 * the top of index_redis.c): the URL, the parameters a namespace was made
 * with and whether a run may use it.
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
#include "index_redis_int.h"
#include "redis_cluster.h"

/* The parameters, as NS:params keeps them. */
static void
params_string(const struct nsd_index_params *p, char *buf, size_t size)
{
	snprintf(buf, size, "nsdedup-redis %d method=%s sentences=%u "
	    "min_length=%u compat=%d norm=%u seed=%" PRIu64 " distance=%u "
	    "ngram=%u shingle=%u min_features=%u tables=%u bins=%u bands=%u "
	    "rows=%u threshold=%u sketch=%zu", NSD_REDIS_FORMAT, p->method,
	    p->sentences,
	    p->min_length, p->compat, p->norm_version, p->seed, p->distance,
	    p->ngram, p->shingle, p->min_features, p->ntables, p->bins,
	    p->bands, p->rows, p->threshold, p->sketch_bytes);
}

/* The words of NS:params after its format, as params_string() writes them. */
static const char *const param_words[] = {
	"method", "sentences", "min_length", "compat", "norm", "seed",
	"distance", "ngram", "shingle", "min_features", "tables", "bins",
	"bands", "rows", "threshold", "sketch"
};
#define NWORDS		(sizeof param_words / sizeof param_words[0])
#define WORD_METHOD	0
#define WORD_SEED	5
#define WORD_SKETCH	15	/* none before sketches */

/* A word's value, in decimal, at most max; -1 when it is not one. */
static int
param_number(const char *s, size_t len, uint64_t max, uint64_t *v)
{
	size_t	 i;

	*v = 0;
	if (len == 0 || len > 20)
		return (-1);
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]) ||
		    *v > (max - (uint64_t)(s[i] - '0')) / 10)
			return (-1);
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return (0);
}

/*
 * Read NS:params (s, len bytes) into rp: its format, then its words, each
 * once, the sketch alone optional (an index made before sketches has
 * none). What is not of that form says why in rp->why; the method, when
 * it is read, is in rp->p.method whatever the rest is.
 */
enum params_state
nsd_ri_params_parse(const char *s, size_t len, struct ri_params *rp)
{
	static const char format[] = "nsdedup-redis ";
	const char	*end = s + len, *w, *eq, *sp;
	uint64_t	 v[NWORDS], version;
	int		 seen[NWORDS];
	size_t		 i, n;

	memset(rp, 0, sizeof *rp);
	memset(seen, 0, sizeof seen);
	memset(v, 0, sizeof v);
	if (len < sizeof format - 1 || memcmp(s, format, sizeof format - 1) !=
	    0 || memchr(s, '\0', len) != NULL)
		return (PARAMS_FOREIGN);
	s += sizeof format - 1;
	sp = memchr(s, ' ', (size_t)(end - s));
	if (sp == NULL)
		sp = end;
	if (param_number(s, (size_t)(sp - s), UINT32_MAX, &version) == -1 ||
	    version == 0) {
		snprintf(rp->why, sizeof rp->why, "no format version");
		return (PARAMS_DAMAGED);
	}
	rp->version = (unsigned)version;
	if (version > NSD_REDIS_FORMAT)
		return (PARAMS_NEWER);
	for (w = sp + 1; sp < end; w = sp + 1) {
		sp = memchr(w, ' ', (size_t)(end - w));
		if (sp == NULL)
			sp = end;
		eq = memchr(w, '=', (size_t)(sp - w));
		for (i = 0; eq != NULL && i < NWORDS; i++)
			if (strlen(param_words[i]) == (size_t)(eq - w) &&
			    memcmp(param_words[i], w, (size_t)(eq - w)) == 0)
				break;
		n = eq != NULL ? (size_t)(sp - eq - 1) : 0;
		if (eq == NULL || i == NWORDS || seen[i]) {
			snprintf(rp->why, sizeof rp->why, "'%.*s' is %s",
			    (int)(sp - w > 40 ? 40 : sp - w), w, eq == NULL ||
			    i == NWORDS ? "not a parameter" : "there twice");
			return (PARAMS_DAMAGED);
		}
		seen[i] = 1;
		if (i == WORD_METHOD && n > 0 && n < sizeof rp->method) {
			memcpy(rp->method, eq + 1, n);
			rp->p.method = rp->method;
		} else if (i == WORD_METHOD || param_number(eq + 1, n,
		    i == WORD_SEED ? UINT64_MAX : UINT32_MAX, &v[i]) == -1 ||
		    (i == WORD_SKETCH && (v[i] % 8 != 0 || v[i] > 4096))) {
			snprintf(rp->why, sizeof rp->why, "'%.*s' is not a "
			    "value of %s", (int)(n > 40 ? 40 : n), eq + 1,
			    param_words[i]);
			return (PARAMS_DAMAGED);
		}
	}
	for (i = 0; i < NWORDS; i++)
		if (!seen[i] && i != WORD_SKETCH) {
			snprintf(rp->why, sizeof rp->why, "no %s",
			    param_words[i]);
			return (PARAMS_DAMAGED);
		}
	rp->p.sentences = (unsigned)v[1];
	rp->p.min_length = (unsigned)v[2];
	rp->p.compat = v[3] != 0;
	rp->p.norm_version = (unsigned)v[4];
	rp->p.seed = v[WORD_SEED];
	rp->p.distance = (unsigned)v[6];
	rp->p.ngram = (unsigned)v[7];
	rp->p.shingle = (unsigned)v[8];
	rp->p.min_features = (unsigned)v[9];
	rp->p.ntables = (unsigned)v[10];
	rp->p.bins = (unsigned)v[11];
	rp->p.bands = (unsigned)v[12];
	rp->p.rows = (unsigned)v[13];
	rp->p.threshold = (unsigned)v[14];
	rp->p.sketch_bytes = (size_t)v[WORD_SKETCH];
	return (PARAMS_OK);
}

/*
 * Refuse an index whose NS:params is in state st, in the words of an
 * index file that is not an index, is newer, or is damaged; -1.
 */
int
nsd_ri_params_refuse(const char *url, const char *ns,
    const struct ri_params *rp, enum params_state st, struct nsd_error *err)
{
	switch (st) {
	case PARAMS_FOREIGN:
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: not an nsdedup index", url));
	case PARAMS_NEWER:
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: index format version %u is newer than this nsdedup "
		    "reads (%d); use a newer nsdedup", url, rp->version,
		    NSD_REDIS_FORMAT));
	case PARAMS_DAMAGED:
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: damaged: %s:params: %s (try --db-verify)", url, ns,
		    rp->why));
	case PARAMS_OK:
		break;
	}
	return (0);
}

/*
 * Make NS:params, or check that the index was made with these ones: by
 * the rule of every index (index_params.c), which names the parameter
 * that differs; the method first, whatever shape the rest has.
 */
static int
check_params(struct redis_index *ri, struct nsd_error *err)
{
	int	 i, argc = 5;
	const char	*argv[7];
	size_t		 argvlen[7];
	char		 key[128], want[512], ttl[24];
	struct ri_params had;
	enum params_state st;
	redisReply	*r;
	int		 rc = 0;

	snprintf(key, sizeof key, "%s:params", ri->ns);
	params_string(&ri->base.params, want, sizeof want);
	argv[0] = ri->readonly ? "GET" : "SET";
	argv[1] = key;
	argv[2] = want;
	argv[3] = "NX";
	argv[4] = "GET";
	/* Made by a run with --ttl, the namespace expires whole. */
	if (ri->ttl > 0) {
		snprintf(ttl, sizeof ttl, "%ld", ri->ttl);
		argv[argc++] = "EX";
		argv[argc++] = ttl;
	}
	for (i = 0; i < argc; i++)
		argvlen[i] = strlen(argv[i]);
	if (nsd_redis_command(ri->cl, key, strlen(key), ri->readonly ? 2 :
	    argc, argv, argvlen, &r, err) == -1)
		return (nsd_ri_url_error(ri, err));
	if (r->type == REDIS_REPLY_ERROR &&
	    strncmp(r->str, "WRONGTYPE", 9) == 0)
		rc = nsd_ri_params_refuse(ri->url, ri->ns, NULL,
		    PARAMS_FOREIGN, err);
	else if (r->type == REDIS_REPLY_ERROR)
		rc = nsd_error_set(err, NSD_EXIT_INDEX, "%s: %s", ri->url,
		    r->str);
	else if (r->type == REDIS_REPLY_NIL && ri->readonly)
		rc = nsd_error_set(err, NSD_EXIT_INDEX, "%s: no such index",
		    ri->url);
	else if (r->type == REDIS_REPLY_STRING) {
		st = nsd_ri_params_parse(r->str, r->len, &had);
		if ((st == PARAMS_OK || (had.p.method != NULL &&
		    strcmp(had.p.method, ri->base.params.method) != 0)) &&
		    nsd_index_params_check(ri->url, &had.p, &ri->base.params,
		    err) == -1)
			rc = -1;
		else if (st != PARAMS_OK)
			rc = nsd_ri_params_refuse(ri->url, ri->ns, &had, st,
			    err);
		else
			nsd_index_params_adopt(&ri->base.params, &had.p);
	}
	freeReplyObject(r);
	return (rc);
}

/*
 * Whether NS:params and NS:next are to expire with what this run writes:
 * with --ttl, when NS:params expires (the namespace was made by a run
 * with --ttl); they are then kept alive as long as any key a run wrote
 * (nsd_ri_meta_refresh()). A run without --ttl writes keys that stay, and
 * so makes them stay too: were the counter to expire before a group that
 * stays, a later group would take its number.
 */
static int
meta_expiry(struct redis_index *ri, struct nsd_error *err)
{
	const char		*argv[2];
	size_t			 argvlen[2];
	char			 params[128], next[128];
	const redisReply	*r;

	snprintf(params, sizeof params, "%s:params", ri->ns);
	snprintf(next, sizeof next, "%s:next", ri->ns);
	nsd_ri_cmds_begin(ri);
	argv[0] = ri->ttl > 0 ? "PTTL" : "PERSIST";
	nsd_ri_cmd_add(ri, params, strlen(params), 2, argv, argvlen);
	if (ri->ttl == 0)
		nsd_ri_cmd_add(ri, next, strlen(next), 2, argv, argvlen);
	if (nsd_ri_cmds_run(ri, err) == -1)
		return (-1);
	r = nsd_redis_batch_reply(&ri->batch, 0);
	if (nsd_ri_reply_failed(ri, r, err))
		return (-1);
	ri->meta_expires = ri->ttl > 0 && r->type == REDIS_REPLY_INTEGER &&
	    r->integer >= 0;
	return (0);
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

/*
 * A new index on the namespace of url, connected to its servers but with
 * nothing read from it yet; readonly, it writes nothing, not even when it
 * is closed. *rip is set even when this fails, for nsd_ri_close().
 */
int
nsd_ri_connect(struct redis_index **rip, const char *url, int readonly,
    struct nsd_error *err)
{
	struct redis_index	*ri;
	struct nsd_redis_options ro;
	char			*user, *password, *seeds;
	int			 rc;

	ri = *rip = xcalloc(1, sizeof *ri);
	ri->base.ops = &nsd_ri_ops;
	ri->readonly = readonly;
	ri->url = url_shown(url);
	nsd_redis_batch_init(&ri->batch);
	memset(&ro, 0, sizeof ro);
	rc = parse_url(url, ri->url, &ro, &user, &password, &seeds, ri->ns,
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
	return (rc);
}

int
nsd_index_open_redis(struct nsd_index **ixp, const struct nsd_index_redis *o,
    const struct nsd_index_params *p, struct nsd_error *err)
{
	struct redis_index	*ri;
	int			 rc;

	rc = nsd_ri_connect(&ri, o->url, o->readonly, err);
	ri->base.params = *p;
	ri->ttl = o->ttl;
	ri->repeats = p->repeats;
	if (rc == 0)
		rc = check_params(ri, err);
	if (rc == 0 && !ri->readonly)
		rc = meta_expiry(ri, err);
	/* This run's token, which its groups keep, and its lease. */
	if (getrandom(&ri->run, sizeof ri->run, 0) != sizeof ri->run)
		ri->run = nsd_fmix64((uint64_t)time(NULL) ^
		    (uint64_t)getpid() << 32 ^ (uint64_t)nsd_ri_now_seconds());
	ri->run += ri->run == 0;
	snprintf(ri->run_hex, sizeof ri->run_hex, "%016" PRIx64, ri->run);
	if (rc == 0 && !ri->readonly)
		rc = nsd_ri_run_mark(ri, 0, 0, err);
	if (rc == -1) {
		ri->block_end = 0;
		nsd_ri_close(&ri->base);
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

/* --db-info and --db-verify: refused as a run is. */
int
nsd_index_redis_describe(const struct nsd_redis_inspect *o,
    struct nsd_redis_report *r, struct nsd_error *err)
{
	struct nsd_index_redis	 ir = { o->url, 1, 0 };

	memset(r, 0, sizeof *r);
	return (nsd_index_open_redis(NULL, &ir, NULL, err));
}

int
nsd_index_redis_verify(const struct nsd_redis_inspect *o,
    void (*problem)(void *, const char *), void *ctx, size_t max,
    struct nsd_redis_report *r, uint64_t *problems, struct nsd_error *err)
{
	(void)problem;
	(void)ctx;
	(void)max;
	*problems = 0;
	return (nsd_index_redis_describe(o, r, err));
}

#endif /* NSD_WITH_REDIS */

void
nsd_redis_report_free(struct nsd_redis_report *r)
{
	free(r->url);
	r->url = NULL;
}
