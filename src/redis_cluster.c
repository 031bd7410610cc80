/*
 * redis_cluster.c: the Redis Cluster client (see redis_cluster.h).
 *
 * A batch is run in rounds. Each round sends every command that still
 * lacks a reply to the master that the slot map names for its key (or,
 * after ASK, to the node named there, behind ASKING), all nodes' writes
 * first and then all nodes' reads, so that the masters work at the same
 * time and a batch costs one round trip per node. A reply is one of:
 *
 *  - an answer (including an error such as WRONGTYPE): the command is done;
 *  - MOVED slot host:port: the slot has a new owner; the map says so at
 *    once and is read again from the cluster before the next round;
 *  - ASK slot host:port: the slot is being migrated and this key is
 *    already there; the command goes there once, behind ASKING;
 *  - TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN, READONLY: the cluster is
 *    in the middle of something (a migration, a failover, a restart);
 *    the next round waits first, 10 ms doubling to 1 s;
 *  - nothing, because the connection failed or a wait timed out: the
 *    connection is dropped, the map read again, and the command resent.
 *
 * Rounds go on until every command has its answer or NSD_REDIS_RETRY_MS
 * have passed. A command may so reach a server twice (its first reply
 * lost with the connection), which is why callers send only commands
 * whose second run answers as the first did (see index_redis.c).
 */
#include "config.h"

#include <sys/time.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "redis_cluster.h"
#include "util.h"

#define NO_NODE		UINT16_MAX
#define BACKOFF_FIRST_MS 10
#define BACKOFF_MAX_MS	1000

struct node {
	char		*host;
	int		 port;
	redisContext	*c;
	size_t		*sent;		/* this round: commands sent here */
	size_t		 nsent;
	size_t		 sent_cap;
	int		 connected_before;
	uint64_t	 conn;		/* connections made so far */
};

struct nsd_redis {
	struct nsd_redis_options opt;
	char		*seeds;
	char		*user;
	char		*password;
	struct node	*nodes;
	size_t		 nnodes;
	int		 cluster;
	size_t		 masters;
	uint16_t	 owner[NSD_REDIS_SLOTS];	/* node of each slot */
	/* Per command of the running batch: the node an ASK named. */
	uint16_t	*ask;
	size_t		 ask_cap;
	char		 problem[256];		/* the last thing that went
						   wrong, for the error */
	uint64_t	 rounds;		/* rounds run so far */
	struct nsd_redis_counts counts;
};

static const uint16_t crc16_table[256] = {
	0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7,
	0x8108, 0x9129, 0xa14a, 0xb16b, 0xc18c, 0xd1ad, 0xe1ce, 0xf1ef,
	0x1231, 0x0210, 0x3273, 0x2252, 0x52b5, 0x4294, 0x72f7, 0x62d6,
	0x9339, 0x8318, 0xb37b, 0xa35a, 0xd3bd, 0xc39c, 0xf3ff, 0xe3de,
	0x2462, 0x3443, 0x0420, 0x1401, 0x64e6, 0x74c7, 0x44a4, 0x5485,
	0xa56a, 0xb54b, 0x8528, 0x9509, 0xe5ee, 0xf5cf, 0xc5ac, 0xd58d,
	0x3653, 0x2672, 0x1611, 0x0630, 0x76d7, 0x66f6, 0x5695, 0x46b4,
	0xb75b, 0xa77a, 0x9719, 0x8738, 0xf7df, 0xe7fe, 0xd79d, 0xc7bc,
	0x48c4, 0x58e5, 0x6886, 0x78a7, 0x0840, 0x1861, 0x2802, 0x3823,
	0xc9cc, 0xd9ed, 0xe98e, 0xf9af, 0x8948, 0x9969, 0xa90a, 0xb92b,
	0x5af5, 0x4ad4, 0x7ab7, 0x6a96, 0x1a71, 0x0a50, 0x3a33, 0x2a12,
	0xdbfd, 0xcbdc, 0xfbbf, 0xeb9e, 0x9b79, 0x8b58, 0xbb3b, 0xab1a,
	0x6ca6, 0x7c87, 0x4ce4, 0x5cc5, 0x2c22, 0x3c03, 0x0c60, 0x1c41,
	0xedae, 0xfd8f, 0xcdec, 0xddcd, 0xad2a, 0xbd0b, 0x8d68, 0x9d49,
	0x7e97, 0x6eb6, 0x5ed5, 0x4ef4, 0x3e13, 0x2e32, 0x1e51, 0x0e70,
	0xff9f, 0xefbe, 0xdfdd, 0xcffc, 0xbf1b, 0xaf3a, 0x9f59, 0x8f78,
	0x9188, 0x81a9, 0xb1ca, 0xa1eb, 0xd10c, 0xc12d, 0xf14e, 0xe16f,
	0x1080, 0x00a1, 0x30c2, 0x20e3, 0x5004, 0x4025, 0x7046, 0x6067,
	0x83b9, 0x9398, 0xa3fb, 0xb3da, 0xc33d, 0xd31c, 0xe37f, 0xf35e,
	0x02b1, 0x1290, 0x22f3, 0x32d2, 0x4235, 0x5214, 0x6277, 0x7256,
	0xb5ea, 0xa5cb, 0x95a8, 0x8589, 0xf56e, 0xe54f, 0xd52c, 0xc50d,
	0x34e2, 0x24c3, 0x14a0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405,
	0xa7db, 0xb7fa, 0x8799, 0x97b8, 0xe75f, 0xf77e, 0xc71d, 0xd73c,
	0x26d3, 0x36f2, 0x0691, 0x16b0, 0x6657, 0x7676, 0x4615, 0x5634,
	0xd94c, 0xc96d, 0xf90e, 0xe92f, 0x99c8, 0x89e9, 0xb98a, 0xa9ab,
	0x5844, 0x4865, 0x7806, 0x6827, 0x18c0, 0x08e1, 0x3882, 0x28a3,
	0xcb7d, 0xdb5c, 0xeb3f, 0xfb1e, 0x8bf9, 0x9bd8, 0xabbb, 0xbb9a,
	0x4a75, 0x5a54, 0x6a37, 0x7a16, 0x0af1, 0x1ad0, 0x2ab3, 0x3a92,
	0xfd2e, 0xed0f, 0xdd6c, 0xcd4d, 0xbdaa, 0xad8b, 0x9de8, 0x8dc9,
	0x7c26, 0x6c07, 0x5c64, 0x4c45, 0x3ca2, 0x2c83, 0x1ce0, 0x0cc1,
	0xef1f, 0xff3e, 0xcf5d, 0xdf7c, 0xaf9b, 0xbfba, 0x8fd9, 0x9ff8,
	0x6e17, 0x7e36, 0x4e55, 0x5e74, 0x2e93, 0x3eb2, 0x0ed1, 0x1ef0,
};

uint16_t
nsd_redis_crc16(const char *s, size_t len)
{
	uint16_t	 crc = 0;
	size_t		 i;

	for (i = 0; i < len; i++)
		crc = (uint16_t)(crc << 8) ^
		    crc16_table[((crc >> 8) ^ (unsigned char)s[i]) & 0xff];
	return (crc);
}

unsigned
nsd_redis_slot(const char *key, size_t len)
{
	const char	*open, *close;

	/* Only what is between the first { and the } after it, if any. */
	open = memchr(key, '{', len);
	if (open != NULL) {
		close = memchr(open + 1, '}', len - (size_t)(open + 1 - key));
		if (close != NULL && close > open + 1) {
			key = open + 1;
			len = (size_t)(close - key);
		}
	}
	return (nsd_redis_crc16(key, len) & (NSD_REDIS_SLOTS - 1));
}

static long
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void
sleep_ms(long ms)
{
	struct timespec	 ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		continue;
}

/*
 * SIGPIPE is held back while the client talks to the servers: a server
 * that has closed the connection makes a write fail with EPIPE, a lost
 * connection like any other, instead of killing the process. A SIGPIPE
 * raised meanwhile is taken back, unless one was pending before.
 */
struct pipe_guard {
	sigset_t	 old;
	int		 pending;
};

static void
pipe_guard_begin(struct pipe_guard *g)
{
	sigset_t	 set, pend;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
	g->pending = sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE);
}

static void
pipe_guard_end(struct pipe_guard *g)
{
	static const struct timespec zero;
	sigset_t	 set, pend;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	if (!g->pending && sigpending(&pend) == 0 &&
	    sigismember(&pend, SIGPIPE))
		while (sigtimedwait(&set, NULL, &zero) == -1 &&
		    errno == EINTR)
			continue;
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static void
set_problem(struct nsd_redis *cl, const struct node *n, const char *what)
{
	snprintf(cl->problem, sizeof cl->problem, "%s:%d: %s", n->host,
	    n->port, what);
}

/* The node at host:port, added when new. */
static uint16_t
node_find(struct nsd_redis *cl, const char *host, size_t host_len, int port)
{
	struct node	*n;
	size_t		 i;

	for (i = 0; i < cl->nnodes; i++)
		if (cl->nodes[i].port == port &&
		    strlen(cl->nodes[i].host) == host_len &&
		    memcmp(cl->nodes[i].host, host, host_len) == 0)
			return ((uint16_t)i);
	if (cl->nnodes == NO_NODE)
		nsd_out_of_memory();
	cl->nodes = xreallocarray(cl->nodes, cl->nnodes + 1, sizeof *n);
	n = &cl->nodes[cl->nnodes];
	memset(n, 0, sizeof *n);
	n->host = xstrndup(host, host_len);
	n->port = port;
	return ((uint16_t)cl->nnodes++);
}

static void
node_drop(struct node *n)
{
	if (n->c != NULL)
		redisFree(n->c);
	n->c = NULL;
}

/* Connect to n (and authenticate) unless it is connected; 0 or -1. */
static int
node_connect(struct nsd_redis *cl, struct node *n)
{
	int	 i;
	struct timeval	 tv;
	redisReply	*r;
	const char	*argv[3];
	size_t		 argvlen[3];
	int		 argc = 0;

	if (n->c != NULL)
		return (0);
	if (n->connected_before)
		cl->counts.reconnects++;
	n->connected_before = 1;
	tv.tv_sec = cl->opt.wait_ms / 1000;
	tv.tv_usec = (cl->opt.wait_ms % 1000) * 1000;
	if (cl->opt.connect != NULL)
		n->c = cl->opt.connect(cl->opt.connect_ctx, n->host, n->port);
	else
		n->c = redisConnectWithTimeout(n->host, n->port, tv);
	if (n->c == NULL) {
		set_problem(cl, n, "cannot connect");
		return (-1);
	}
	if (n->c->err != 0) {
		set_problem(cl, n, n->c->errstr);
		node_drop(n);
		return (-1);
	}
	if (redisSetTimeout(n->c, tv) != REDIS_OK) {
		set_problem(cl, n, "cannot set a timeout");
		node_drop(n);
		return (-1);
	}
	n->conn++;
	if (cl->password == NULL)
		return (0);
	argv[argc++] = "AUTH";
	if (cl->user != NULL)
		argv[argc++] = cl->user;
	argv[argc++] = cl->password;
	for (i = 0; i < argc; i++)
		argvlen[i] = strlen(argv[i]);
	r = redisCommandArgv(n->c, argc, argv, argvlen);
	if (r == NULL || r->type == REDIS_REPLY_ERROR) {
		set_problem(cl, n, r != NULL ? r->str : n->c->errstr);
		if (r != NULL)
			freeReplyObject(r);
		node_drop(n);
		return (-1);
	}
	freeReplyObject(r);
	return (0);
}

/* Whether a reply element is an integer, and it. */
static int
reply_integer(const redisReply *r, long long *v)
{
	if (r->type != REDIS_REPLY_INTEGER)
		return (0);
	*v = r->integer;
	return (1);
}

/*
 * Read the slot map from node n: 1 when read, 0 when n is a single server
 * (cluster support disabled), -1 when n cannot tell.
 */
static int
map_read_from(struct nsd_redis *cl, uint16_t ni)
{
	redisReply	*r, *e, *m;
	long long	 first, last, port;
	uint16_t	 owner, seen[64];
	size_t		 i, nseen = 0, k;
	int		 rc = -1;

	if (node_connect(cl, &cl->nodes[ni]) == -1)
		return (-1);
	cl->counts.map_reads++;
	r = redisCommand(cl->nodes[ni].c, "CLUSTER SLOTS");
	if (r == NULL) {
		set_problem(cl, &cl->nodes[ni], cl->nodes[ni].c->errstr);
		node_drop(&cl->nodes[ni]);
		return (-1);
	}
	if (r->type == REDIS_REPLY_ERROR) {
		if (strstr(r->str, "cluster support disabled") != NULL) {
			for (i = 0; i < NSD_REDIS_SLOTS; i++)
				cl->owner[i] = ni;
			cl->cluster = 0;
			cl->masters = 1;
			rc = 0;
		} else
			set_problem(cl, &cl->nodes[ni], r->str);
		freeReplyObject(r);
		return (rc);
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) {
		set_problem(cl, &cl->nodes[ni], r->type == REDIS_REPLY_ARRAY ?
		    "no slots are served" : "CLUSTER SLOTS: unexpected reply");
		freeReplyObject(r);
		return (-1);
	}
	for (i = 0; i < NSD_REDIS_SLOTS; i++)
		cl->owner[i] = NO_NODE;
	for (i = 0; i < r->elements; i++) {
		e = r->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
		    !reply_integer(e->element[0], &first) ||
		    !reply_integer(e->element[1], &last) ||
		    first < 0 || last >= NSD_REDIS_SLOTS || first > last)
			continue;
		m = e->element[2];
		if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
		    (m->element[0]->type != REDIS_REPLY_STRING &&
		    m->element[0]->type != REDIS_REPLY_NIL) ||
		    !reply_integer(m->element[1], &port) || port <= 0 ||
		    port > 65535)
			continue;
		/*
		 * No address (Redis 7's unknown endpoint is NULL; older ones
		 * send an empty string): the host of the node that answered.
		 */
		if (m->element[0]->type == REDIS_REPLY_NIL ||
		    m->element[0]->len == 0)
			owner = node_find(cl, cl->nodes[ni].host,
			    strlen(cl->nodes[ni].host), (int)port);
		else
			owner = node_find(cl, m->element[0]->str,
			    m->element[0]->len, (int)port);
		for (long long s = first; s <= last; s++)
			cl->owner[s] = owner;
		for (k = 0; k < nseen && seen[k] != owner; k++)
			continue;
		if (k == nseen && nseen < sizeof seen / sizeof seen[0])
			seen[nseen++] = owner;
	}
	freeReplyObject(r);
	if (nseen == 0) {
		set_problem(cl, &cl->nodes[ni], "CLUSTER SLOTS: no slot range "
		    "could be read");
		return (-1);
	}
	cl->cluster = 1;
	cl->masters = nseen;
	return (1);
}

/* Read the map from any node that answers; 0 or -1. */
static int
map_read(struct nsd_redis *cl)
{
	size_t	 i;

	for (i = 0; i < cl->nnodes; i++)
		if (cl->nodes[i].c != NULL && map_read_from(cl,
		    (uint16_t)i) >= 0)
			return (0);
	for (i = 0; i < cl->nnodes; i++)
		if (cl->nodes[i].c == NULL && map_read_from(cl,
		    (uint16_t)i) >= 0)
			return (0);
	return (-1);
}

/* Add the seeds "HOST:PORT[,HOST:PORT...]" as nodes; 0 or -1. */
static int
add_seeds(struct nsd_redis *cl, const char *seeds, struct nsd_error *err)
{
	const char	*p = seeds, *end, *colon, *host;
	size_t		 host_len;
	char		*stop;
	long		 port;

	while (*p != '\0') {
		end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		colon = NULL;
		for (const char *q = p; q < end; q++)
			if (*q == ':')
				colon = q;
		if (colon == NULL)
			return (nsd_error_set(err, NSD_EXIT_USAGE,
			    "%.*s: not HOST:PORT", (int)(end - p), p));
		errno = 0;
		port = strtol(colon + 1, &stop, 10);
		if (stop != end || colon + 1 == end || port <= 0 ||
		    port > 65535)
			return (nsd_error_set(err, NSD_EXIT_USAGE,
			    "%.*s: not a port", (int)(end - colon - 1),
			    colon + 1));
		host = p;
		host_len = (size_t)(colon - p);
		/* [::1]:6379 */
		if (host_len >= 2 && host[0] == '[' &&
		    host[host_len - 1] == ']') {
			host++;
			host_len -= 2;
		}
		if (host_len == 0)
			return (nsd_error_set(err, NSD_EXIT_USAGE,
			    "%.*s: no host", (int)(end - p), p));
		(void)node_find(cl, host, host_len, (int)port);
		p = *end == ',' ? end + 1 : end;
	}
	if (cl->nnodes == 0)
		return (nsd_error_set(err, NSD_EXIT_USAGE, "no server named"));
	return (0);
}

int
nsd_redis_open(struct nsd_redis **clp, const struct nsd_redis_options *o,
    struct nsd_error *err)
{
	struct nsd_redis	*cl;
	struct pipe_guard	 g;
	int			 rc;

	cl = xcalloc(1, sizeof *cl);
	cl->opt = *o;
	if (cl->opt.wait_ms <= 0)
		cl->opt.wait_ms = NSD_REDIS_WAIT_MS;
	if (cl->opt.retry_ms <= 0)
		cl->opt.retry_ms = NSD_REDIS_RETRY_MS;
	cl->seeds = xstrdup(o->seeds);
	cl->user = o->user != NULL ? xstrdup(o->user) : NULL;
	cl->password = o->password != NULL ? xstrdup(o->password) : NULL;
	if (add_seeds(cl, cl->seeds, err) == -1) {
		nsd_redis_close(cl);
		return (-1);
	}
	pipe_guard_begin(&g);
	rc = map_read(cl);
	pipe_guard_end(&g);
	if (rc == -1) {
		nsd_error_set(err, NSD_EXIT_INDEX, "%s", cl->problem);
		nsd_redis_close(cl);
		return (-1);
	}
	*clp = cl;
	return (0);
}

void
nsd_redis_close(struct nsd_redis *cl)
{
	size_t	 i;

	if (cl == NULL)
		return;
	for (i = 0; i < cl->nnodes; i++) {
		node_drop(&cl->nodes[i]);
		free(cl->nodes[i].host);
		free(cl->nodes[i].sent);
	}
	free(cl->nodes);
	free(cl->ask);
	free(cl->seeds);
	free(cl->user);
	if (cl->password != NULL)
		nsd_wipe(cl->password, strlen(cl->password));
	free(cl->password);
	free(cl);
}

int
nsd_redis_is_cluster(const struct nsd_redis *cl)
{
	return (cl->cluster);
}

size_t
nsd_redis_masters(const struct nsd_redis *cl)
{
	return (cl->masters);
}

int
nsd_redis_master(const struct nsd_redis *cl, size_t i, const char **host,
    int *port, unsigned *slot)
{
	uint16_t	 seen[64];
	size_t		 nseen = 0, k;
	unsigned	 s;

	for (s = 0; s < NSD_REDIS_SLOTS; s++) {
		if (cl->owner[s] == NO_NODE)
			continue;
		for (k = 0; k < nseen && seen[k] != cl->owner[s]; k++)
			continue;
		if (k < nseen)
			continue;
		if (nseen == i) {
			*host = cl->nodes[cl->owner[s]].host;
			*port = cl->nodes[cl->owner[s]].port;
			*slot = s;
			return (0);
		}
		if (nseen == sizeof seen / sizeof seen[0])
			break;
		seen[nseen++] = cl->owner[s];
	}
	return (-1);
}

void
nsd_redis_counts(const struct nsd_redis *cl, struct nsd_redis_counts *c)
{
	*c = cl->counts;
}

void
nsd_redis_batch_init(struct nsd_redis_batch *b)
{
	memset(b, 0, sizeof *b);
}

void
nsd_redis_batch_reset(struct nsd_redis_batch *b)
{
	size_t	 i;

	for (i = 0; i < b->ncmds; i++)
		if (b->cmds[i].reply != NULL)
			freeReplyObject(b->cmds[i].reply);
	b->ncmds = 0;
	b->wire.len = 0;
}

void
nsd_redis_batch_free(struct nsd_redis_batch *b)
{
	nsd_redis_batch_reset(b);
	free(b->cmds);
	nsd_buf_free(&b->wire);
	memset(b, 0, sizeof *b);
}

/* Append "<c><n>\r\n" to the wire (not snprintf(): it is per argument). */
static void
wire_header(struct nsd_buf *w, char c, size_t n)
{
	char	 s[32], *p = s + sizeof s;

	*--p = '\n';
	*--p = '\r';
	do {
		*--p = (char)('0' + n % 10);
		n /= 10;
	} while (n > 0);
	*--p = c;
	nsd_buf_append(w, p, (size_t)(s + sizeof s - p));
}

size_t
nsd_redis_batch_add(struct nsd_redis_batch *b, const char *key,
    size_t key_len, int argc, const char **argv, const size_t *argvlen)
{
	struct nsd_redis_command *cmd;
	int		 i;

	if (b->ncmds == b->cap) {
		b->cap = b->cap == 0 ? 256 : 2 * b->cap;
		b->cmds = xreallocarray(b->cmds, b->cap, sizeof *b->cmds);
	}
	cmd = &b->cmds[b->ncmds];
	cmd->off = b->wire.len;
	cmd->slot = key != NULL ? nsd_redis_slot(key, key_len) : 0;
	cmd->reply = NULL;
	/* RESP: *argc, then $len and the bytes of each argument. */
	wire_header(&b->wire, '*', (size_t)argc);
	for (i = 0; i < argc; i++) {
		wire_header(&b->wire, '$', argvlen[i]);
		nsd_buf_append(&b->wire, argv[i], argvlen[i]);
		nsd_buf_append(&b->wire, "\r\n", 2);
	}
	cmd->len = b->wire.len - cmd->off;
	return (b->ncmds++);
}

size_t
nsd_redis_batch_add_slot(struct nsd_redis_batch *b, unsigned slot, int argc,
    const char **argv, const size_t *argvlen)
{
	size_t	 i;

	i = nsd_redis_batch_add(b, NULL, 0, argc, argv, argvlen);
	b->cmds[i].slot = slot % NSD_REDIS_SLOTS;
	return (i);
}

/* What a reply asks of the client. */
enum verdict {
	ANSWER,		/* done */
	MOVED,
	ASK,
	WAIT		/* try again after a while */
};

/*
 * Classify r; for MOVED and ASK, *node is the node named. Errors are
 * compared by their first word, as Redis sends them.
 */
static enum verdict
classify(struct nsd_redis *cl, const redisReply *r, uint16_t from,
    uint16_t *node)
{
	static const char *const waits[] = {
		"TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN",
		"READONLY", "BUSY"
	};
	const char	*addr, *colon;
	size_t		 i, w;
	long		 port;
	int		 moved;

	if (r->type != REDIS_REPLY_ERROR)
		return (ANSWER);
	moved = strncmp(r->str, "MOVED ", 6) == 0;
	if (moved || strncmp(r->str, "ASK ", 4) == 0) {
		addr = strchr(r->str + (moved ? 6 : 4), ' ');
		colon = addr != NULL ? strrchr(addr, ':') : NULL;
		if (colon == NULL)
			return (ANSWER);
		port = strtol(colon + 1, NULL, 10);
		if (port <= 0 || port > 65535)
			return (ANSWER);
		addr++;
		/* Redis 7's unknown endpoint, ":port": the host asked. */
		if (addr == colon) {
			addr = cl->nodes[from].host;
			colon = addr + strlen(addr);
		}
		*node = node_find(cl, addr, (size_t)(colon - addr), (int)port);
		return (moved ? MOVED : ASK);
	}
	for (i = 0; i < sizeof waits / sizeof waits[0]; i++) {
		w = strlen(waits[i]);
		if (strncmp(r->str, waits[i], w) == 0 &&
		    (r->str[w] == ' ' || r->str[w] == '\0'))
			return (WAIT);
	}
	return (ANSWER);
}

static void
node_sent(struct node *n, size_t i)
{
	if (n->nsent == n->sent_cap) {
		n->sent_cap = n->sent_cap == 0 ? 256 : 2 * n->sent_cap;
		n->sent = xreallocarray(n->sent, n->sent_cap, sizeof *n->sent);
	}
	n->sent[n->nsent++] = i;
}

/* Append command i of b to node ni's output, behind ASKING if asked. */
static int
send_command(struct nsd_redis *cl, struct nsd_redis_batch *b, size_t i,
    uint16_t ni, int asking)
{
	static const char asking_cmd[] = "*1\r\n$6\r\nASKING\r\n";
	struct node	*n = &cl->nodes[ni];

	if (asking && redisAppendFormattedCommand(n->c, asking_cmd,
	    sizeof asking_cmd - 1) != REDIS_OK)
		return (-1);
	if (redisAppendFormattedCommand(n->c, b->wire.data + b->cmds[i].off,
	    b->cmds[i].len) != REDIS_OK)
		return (-1);
	/* The low bit: an ASKING reply to read first. */
	node_sent(n, i << 1 | (size_t)(asking != 0));
	cl->counts.commands++;
	return (0);
}

/*
 * One round: send every command without a reply, and read what comes
 * back. *refresh is set when the map must be read again, *wait when the
 * next round must wait first.
 */
static void
round_run(struct nsd_redis *cl, struct nsd_redis_batch *b, int *refresh,
    int *wait)
{
	struct node	*n;
	redisReply	*r;
	enum verdict	 v;
	uint16_t	 ni, to;
	size_t		 i, k;
	int		 done, asking;

	cl->rounds++;
	for (ni = 0; ni < cl->nnodes; ni++)
		cl->nodes[ni].nsent = 0;
	for (i = 0; i < b->ncmds; i++) {
		if (b->cmds[i].reply != NULL)
			continue;
		asking = cl->ask[i] != NO_NODE;
		ni = asking ? cl->ask[i] : cl->owner[b->cmds[i].slot];
		cl->ask[i] = NO_NODE;
		if (ni == NO_NODE) {
			snprintf(cl->problem, sizeof cl->problem,
			    "slot %u is served by no node", b->cmds[i].slot);
			*refresh = *wait = 1;
			continue;
		}
		n = &cl->nodes[ni];
		if (n->c == NULL && node_connect(cl, n) == -1) {
			*refresh = *wait = 1;
			continue;
		}
		if (n->c != NULL && send_command(cl, b, i, ni, asking) == -1) {
			set_problem(cl, n, n->c->errstr);
			node_drop(n);
			*refresh = *wait = 1;
		}
	}
	/* Every node's writes first, so that they all work at once. */
	for (ni = 0; ni < cl->nnodes; ni++) {
		n = &cl->nodes[ni];
		if (n->nsent == 0 || n->c == NULL)
			continue;
		cl->counts.round_trips++;
		do {
			if (redisBufferWrite(n->c, &done) != REDIS_OK) {
				set_problem(cl, n, n->c->errstr);
				node_drop(n);
				*refresh = *wait = 1;
				break;
			}
		} while (!done);
	}
	for (ni = 0; ni < cl->nnodes; ni++) {
		n = &cl->nodes[ni];
		for (k = 0; k < n->nsent && n->c != NULL; k++) {
			i = n->sent[k] >> 1;
			/* ASKING's own +OK comes first. */
			if ((n->sent[k] & 1) && redisGetReply(n->c,
			    (void **)&r) == REDIS_OK) {
				freeReplyObject(r);
				r = NULL;
			}
			if (n->c->err != 0 ||
			    redisGetReply(n->c, (void **)&r) != REDIS_OK) {
				set_problem(cl, n, n->c->errstr);
				node_drop(n);
				*refresh = *wait = 1;
				break;
			}
			v = classify(cl, r, ni, &to);
			/* A node classify() added may have moved them all. */
			n = &cl->nodes[ni];
			switch (v) {
			case ANSWER:
				b->cmds[i].reply = r;
				b->cmds[i].node = ni;
				b->cmds[i].conn = n->conn;
				b->cmds[i].round = cl->rounds;
				continue;
			case MOVED:
				cl->counts.moved++;
				cl->owner[b->cmds[i].slot] = to;
				*refresh = 1;
				break;
			case ASK:
				cl->counts.ask++;
				cl->ask[i] = to;
				break;
			case WAIT:
				cl->counts.retried++;
				set_problem(cl, n, r->str);
				*refresh = *wait = 1;
				break;
			}
			freeReplyObject(r);
		}
	}
}

static int
batch_run(struct nsd_redis *cl, struct nsd_redis_batch *b,
    struct nsd_error *err)
{
	long		 deadline, backoff = BACKOFF_FIRST_MS;
	size_t		 i, left;
	int		 refresh, wait;

	if (b->ncmds > cl->ask_cap) {
		cl->ask_cap = b->cap;
		cl->ask = xreallocarray(cl->ask, cl->ask_cap, sizeof *cl->ask);
	}
	for (i = 0; i < b->ncmds; i++)
		cl->ask[i] = NO_NODE;
	deadline = now_ms() + cl->opt.retry_ms;
	for (;;) {
		refresh = wait = 0;
		round_run(cl, b, &refresh, &wait);
		for (i = 0, left = 0; i < b->ncmds; i++)
			left += b->cmds[i].reply == NULL;
		if (left == 0)
			return (0);
		if (now_ms() >= deadline)
			return (nsd_error_set(err, NSD_EXIT_INDEX,
			    "%s (gave up after %.1f s, %zu commands "
			    "unanswered)", cl->problem,
			    cl->opt.retry_ms / 1000.0, left));
		if (wait) {
			sleep_ms(backoff);
			backoff = backoff * 2 > BACKOFF_MAX_MS ?
			    BACKOFF_MAX_MS : backoff * 2;
		}
		if (refresh && cl->cluster)
			(void)map_read(cl);
	}
}

int
nsd_redis_batch_run(struct nsd_redis *cl, struct nsd_redis_batch *b,
    struct nsd_error *err)
{
	struct pipe_guard	 g;
	int			 rc;

	pipe_guard_begin(&g);
	rc = batch_run(cl, b, err);
	pipe_guard_end(&g);
	return (rc);
}

int
nsd_redis_command(struct nsd_redis *cl, const char *key, size_t key_len,
    int argc, const char **argv, const size_t *argvlen, redisReply **reply,
    struct nsd_error *err)
{
	struct nsd_redis_batch	 b;

	nsd_redis_batch_init(&b);
	nsd_redis_batch_add(&b, key, key_len, argc, argv, argvlen);
	if (nsd_redis_batch_run(cl, &b, err) == -1) {
		nsd_redis_batch_free(&b);
		return (-1);
	}
	*reply = b.cmds[0].reply;
	b.cmds[0].reply = NULL;
	nsd_redis_batch_free(&b);
	return (0);
}

/*
 * The replicas that INFO replication's reply r says are online: those
 * that have the data set and follow the stream, and so could be promoted
 * with what the master acknowledged. -1 when r is not that reply.
 */
static long
replicas_online(const redisReply *r)
{
	const char	*p, *end, *line;
	long		 n = 0;
	int		 role = 0;

	if (r->type != REDIS_REPLY_STRING)
		return (-1);
	for (p = r->str, end = r->str + r->len; p < end; p = line + 1) {
		line = memchr(p, '\n', (size_t)(end - p));
		if (line == NULL)
			line = end;
		if ((size_t)(line - p) >= 11 && memcmp(p, "role:master",
		    11) == 0)
			role = 1;
		if ((size_t)(line - p) > 5 && memcmp(p, "slave", 5) == 0 &&
		    p[5] >= '0' && p[5] <= '9' &&
		    memmem(p, (size_t)(line - p), "state=online", 12) != NULL)
			n++;
	}
	return (role ? n : -1);
}

int
nsd_redis_command_replicated(struct nsd_redis *cl, const char *key,
    size_t key_len, int argc, const char **argv, const size_t *argvlen,
    redisReply **reply, long *replicas, struct nsd_error *err)
{
	const char		*info[2] = { "INFO", "replication" };
	const size_t		 info_len[2] = { 4, 11 };
	const char		*wait[3] = { "WAIT", NULL, NULL };
	size_t			 wait_len[3];
	char			 want[24], timeout[24];
	struct nsd_redis_batch	 b;
	struct pipe_guard	 g;
	const redisReply	*r;
	long			 online, acked, deadline, backoff;
	uint16_t		 node;
	int			 rc = -1;

	nsd_redis_batch_init(&b);
	deadline = now_ms() + cl->opt.retry_ms;
	backoff = BACKOFF_FIRST_MS;
	snprintf(timeout, sizeof timeout, "%ld", cl->opt.wait_ms / 2);
	pipe_guard_begin(&g);
	for (;;) {
		/* The replicas of the master that serves key. */
		nsd_redis_batch_reset(&b);
		nsd_redis_batch_add(&b, key, key_len, 2, info, info_len);
		if (batch_run(cl, &b, err) == -1)
			break;
		r = nsd_redis_batch_reply(&b, 0);
		if ((online = replicas_online(r)) == -1) {
			nsd_error_set(err, NSD_EXIT_INDEX, "%s:%d: INFO "
			    "replication: %s", cl->nodes[b.cmds[0].node].host,
			    cl->nodes[b.cmds[0].node].port,
			    r->type == REDIS_REPLY_ERROR ? r->str :
			    "not a master's");
			break;
		}
		node = b.cmds[0].node;
		/* The command, then WAIT behind it on its connection. */
		nsd_redis_batch_reset(&b);
		nsd_redis_batch_add(&b, key, key_len, argc, argv, argvlen);
		if (online > 0) {
			snprintf(want, sizeof want, "%ld", online);
			wait[1] = want;
			wait[2] = timeout;
			wait_len[0] = 4;
			wait_len[1] = strlen(want);
			wait_len[2] = strlen(timeout);
			nsd_redis_batch_add(&b, key, key_len, 3, wait,
			    wait_len);
		}
		if (batch_run(cl, &b, err) == -1)
			break;
		/* WAIT counts from the command only behind it, on its link. */
		acked = -1;
		if (online > 0 && b.cmds[1].node == node &&
		    b.cmds[1].conn == b.cmds[0].conn &&
		    b.cmds[1].round == b.cmds[0].round &&
		    b.cmds[1].reply->type == REDIS_REPLY_INTEGER)
			acked = (long)b.cmds[1].reply->integer;
		if (b.cmds[0].node != node || (online > 0 && acked == -1))
			snprintf(cl->problem, sizeof cl->problem, "%s:%d: %.*s "
			    "was not answered with its WAIT (the master or "
			    "the connection changed)", cl->nodes[node].host,
			    cl->nodes[node].port, (int)key_len, key);
		else if (online == 0 || acked >= online) {
			*reply = b.cmds[0].reply;
			b.cmds[0].reply = NULL;
			if (replicas != NULL)
				*replicas = online > 0 ? acked : 0;
			rc = 0;
			break;
		} else
			snprintf(cl->problem, sizeof cl->problem, "%s:%d: "
			    "%ld of its %ld replicas acknowledged %.*s "
			    "within %s ms", cl->nodes[node].host,
			    cl->nodes[node].port, acked, online,
			    (int)key_len, key, timeout);
		cl->counts.retried++;
		if (now_ms() >= deadline) {
			nsd_error_set(err, NSD_EXIT_INDEX, "%s (gave up after "
			    "%.1f s)", cl->problem, cl->opt.retry_ms / 1000.0);
			break;
		}
		sleep_ms(backoff);
		backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
		    backoff * 2;
		if (cl->cluster)
			(void)map_read(cl);
	}
	pipe_guard_end(&g);
	nsd_redis_batch_free(&b);
	return (rc);
}
