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
	snprintf(buf, size, "nsdedup-redis 1 method=%s sentences=%u "
	    "min_length=%u compat=%d norm=%u seed=%" PRIu64 " distance=%u "
	    "ngram=%u shingle=%u min_features=%u tables=%u bins=%u bands=%u "
	    "rows=%u threshold=%u sketch=%zu", p->method, p->sentences,
	    p->min_length, p->compat, p->norm_version, p->seed, p->distance,
	    p->ngram, p->shingle, p->min_features, p->ntables, p->bins,
	    p->bands, p->rows, p->threshold, p->sketch_bytes);
}

/*
 * Read the parameters an index's NS:params keeps (as params_string()
 * writes them, or without the sketch, as before sketches) into *p, its
 * method into method[16]; -1 when it is not that form.
 */
static int
params_parse(const char *had, struct nsd_index_params *p, char *method)
{
	unsigned long long	 seed;
	unsigned		 sketch;
	int			 end = 0;

	memset(p, 0, sizeof *p);
	if (sscanf(had, "nsdedup-redis 1 method=%15s sentences=%u "
	    "min_length=%u compat=%d norm=%u seed=%llu distance=%u ngram=%u "
	    "shingle=%u min_features=%u tables=%u bins=%u bands=%u rows=%u "
	    "threshold=%u%n", method, &p->sentences, &p->min_length,
	    &p->compat, &p->norm_version, &seed, &p->distance, &p->ngram,
	    &p->shingle, &p->min_features, &p->ntables, &p->bins, &p->bands,
	    &p->rows, &p->threshold, &end) != 15)
		return (-1);
	had += end;
	if (*had != '\0') {
		end = 0;
		if (sscanf(had, " sketch=%u%n", &sketch, &end) != 1 ||
		    had[end] != '\0' || sketch % 8 != 0 || sketch > 4096)
			return (-1);
		p->sketch_bytes = sketch;
	}
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
		return (nsd_ri_url_error(ri, err));
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
		else {
			ri->base.params.norm_version = had.norm_version;
			/* Made before sketches: its groups keep none. */
			ri->base.params.sig_bytes -=
			    ri->base.params.sketch_bytes - had.sketch_bytes;
			ri->base.params.sketch_bytes = had.sketch_bytes;
		}
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
	ri->base.ops = &nsd_ri_ops;
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

#endif /* NSD_WITH_REDIS */

