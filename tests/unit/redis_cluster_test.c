/*
 * redis_cluster_test.c: the Redis Cluster client, its hash slots and its
 * handling of redirects, waits and lost connections.
 *
 * First the slots: CRC16 against the check value of the Redis Cluster
 * specification, and the slot of keys that the Redis documentation gives
 * or that a real server (redis-server 7.0.15, CLUSTER KEYSLOT) computed,
 * hash tags included.
 *
 * Then the client against fake servers. Each connection is a socket
 * pair whose other end a forked child holds, playing a script: it reads
 * each command (a RESP array of bulk strings), compares it, arguments
 * joined by single spaces, with the one the script expects next, and
 * sends the raw RESP reply the script gives, or closes the connection,
 * or never answers. A child that reads a command it did not expect
 * answers "-ERR fake: ..." and exits non-zero, as does one whose
 * connection ends before its script is played out. Each node has a list
 * of scripts, one per connection, which the connect hook of the options
 * hands out in turn, so that a reconnection gets the next one. After
 * each case the client is closed, every child reaped, and the case
 * passes only if every child exited 0 and every script was used: the
 * client said exactly what was expected, on the connections expected.
 *
 * The cases: a single server; a pipelined batch over two masters; MOVED
 * and ASK, to a known node and to one the map did not name; Redis 7's
 * unknown endpoints; TRYAGAIN and CLUSTERDOWN; a connection closed
 * without an answer, or while idle (which must not raise SIGPIPE); a
 * server that never answers; a retry budget that runs out; an ordinary
 * error reply; AUTH on every connection; WAIT for the replicas behind a
 * command, which is taken again when fewer acknowledge.
 *
 * The scripts follow what redis_cluster.c does: CLUSTER SLOTS is read
 * again, from the first node (in the order the client learnt them) that
 * is connected or else from the first that answers, after MOVED, after a
 * reply that says to wait and after a lost connection.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "redis_cluster.h"
#include "tap.h"
#include "util.h"

#define FAKE_NODES	4
#define FAKE_CONNS	4		/* scripts per node */
#define FAKE_PIDS	(FAKE_NODES * FAKE_CONNS)
#define FAKE_FD_MAX	256		/* a child closes every fd below */

/* --- Slots --- */

/*
 * The slots of keys: the first three from the Redis documentation of
 * CLUSTER KEYSLOT, the others as redis-server 7.0.15 with cluster support
 * answered CLUSTER KEYSLOT (the last key is "é" in UTF-8).
 */
static const struct {
	const char	*key;
	unsigned	 slot;
} slot_vectors[] = {
	{ "somekey", 11058 },
	{ "foo{hash_tag}", 2515 },
	{ "bar{hash_tag}", 2515 },
	{ "foo", 12182 },
	{ "bar", 5061 },
	{ "hello", 866 },
	{ "zap", 6469 },
	{ "123456789", 12739 },
	{ "user1000", 3443 },
	{ "{user1000}.following", 3443 },
	{ "{user1000}.followers", 3443 },
	{ "foo{}{bar}", 8363 },
	{ "{bar", 4015 },
	{ "foo{{bar}}zap", 4015 },
	{ "foo{bar}{zap}", 5061 },
	{ "{}", 15257 },
	{ "}{", 12793 },
	{ "a}b{c}", 7365 },
	{ "key:{}:x", 1382 },
	{ "", 0 },
	{ "\xc3\xa9", 10180 },
};

static unsigned
slot(const char *key)
{
	return (nsd_redis_slot(key, strlen(key)));
}

/* The checksum, the vectors and the hash-tag rules of the specification. */
static void
test_slots(void)
{
	size_t	 i;
	int	 bad = 0;

	tap_ok(nsd_redis_crc16("123456789", 9) == 0x31C3,
	    "crc16(\"123456789\") is 0x31C3, the specification's check value");
	tap_ok(nsd_redis_crc16("", 0) == 0, "crc16 of nothing is 0");
	for (i = 0; i < sizeof slot_vectors / sizeof slot_vectors[0]; i++) {
		if (slot(slot_vectors[i].key) == slot_vectors[i].slot)
			continue;
		printf("# slot of \"%s\": %u, not %u\n", slot_vectors[i].key,
		    slot(slot_vectors[i].key), slot_vectors[i].slot);
		bad++;
	}
	tap_ok(bad == 0, "the slots of %zu keys are those Redis computes",
	    sizeof slot_vectors / sizeof slot_vectors[0]);

	tap_ok(slot("{user1000}.following") == slot("{user1000}.followers") &&
	    slot("{user1000}.following") == slot("user1000"),
	    "{user1000}.following and .followers share user1000's slot");
	tap_ok(slot("foo{}{bar}") ==
	    (nsd_redis_crc16("foo{}{bar}", 10) & 16383),
	    "foo{}{bar}: an empty tag, the whole key is hashed");
	tap_ok(slot("foo{{bar}}zap") == slot("{bar"),
	    "foo{{bar}}zap hashes \"{bar\"");
	tap_ok(slot("foo{bar}{zap}") == slot("bar"),
	    "foo{bar}{zap} hashes \"bar\"");
	tap_ok(slot("foo{bar") == (nsd_redis_crc16("foo{bar", 7) & 16383),
	    "foo{bar: no closing brace, the whole key is hashed");
	tap_ok(nsd_redis_slot("a\0{b}", 5) == slot("b"),
	    "a key with a NUL byte before its tag hashes the tag");
	tap_ok(nsd_redis_slot("foo{bar}", 4) ==
	    (nsd_redis_crc16("foo{", 4) & 16383),
	    "only the key's length is read");
}

/* --- The fake servers --- */

enum step_kind {
	STEP_REPLY,		/* read cmd, send reply */
	STEP_CLOSE,		/* read cmd, close without answering */
	STEP_HANG,		/* read cmd, never answer */
	STEP_HANGUP		/* close before reading anything more */
};

struct step {
	enum step_kind	 kind;
	char		*cmd;
	char		*reply;
};

struct script {
	struct step	*steps;
	size_t		 n;
	size_t		 repeat;	/* the last steps go on forever */
	int		 refuse;	/* the connection fails */
	int		 fd;		/* the client's end, until used */
};

struct fake_node {
	char		 name[64];	/* "host:port" */
	struct script	 conn[FAKE_CONNS];
	size_t		 nconn;
	size_t		 used;
	int		 fd;		/* the client's end, latest */
};

struct fake {
	struct fake_node nodes[FAKE_NODES];
	size_t		 nnodes;
	pid_t		 pids[FAKE_PIDS];
	size_t		 npids;
	int		 unscripted;	/* connections without a script */
};

/* A slot range of a CLUSTER SLOTS reply. */
struct range {
	int		 first;
	int		 last;
	const char	*host;		/* "": a NULL endpoint */
	int		 port;
};

/* Slots 0-8191 on a:7000, the others on b:7001. */
static const struct range map_ab[] = {
	{ 0, 8191, "a", 7000 },
	{ 8192, 16383, "b", 7001 },
	{ 0, 0, NULL, 0 }
};

static const char disabled[] =
    "-ERR This instance has cluster support disabled\r\n";

static volatile sig_atomic_t sigpipes;	/* raised in this process */

static void
on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static long
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void
fake_init(struct fake *f)
{
	memset(f, 0, sizeof *f);
}

/* The node host:port, added when new. */
static struct fake_node *
fake_node(struct fake *f, const char *host, int port)
{
	char	 name[64];
	size_t	 i;

	snprintf(name, sizeof name, "%s:%d", host, port);
	for (i = 0; i < f->nnodes; i++)
		if (strcmp(f->nodes[i].name, name) == 0)
			return (&f->nodes[i]);
	if (f->nnodes == FAKE_NODES)
		abort();
	snprintf(f->nodes[f->nnodes].name, sizeof f->nodes[f->nnodes].name,
	    "%s", name);
	f->nodes[f->nnodes].fd = -1;
	return (&f->nodes[f->nnodes++]);
}

/* A new script, for the next connection to host:port. */
static struct script *
fake_script(struct fake *f, const char *host, int port)
{
	struct fake_node	*n = fake_node(f, host, port);

	if (n->nconn == FAKE_CONNS)
		abort();
	return (&n->conn[n->nconn++]);
}

static struct step *
step_new(struct script *s, enum step_kind kind, const char *cmd)
{
	struct step	*st;

	s->steps = xreallocarray(s->steps, s->n + 1, sizeof *s->steps);
	st = &s->steps[s->n++];
	st->kind = kind;
	st->cmd = cmd != NULL ? xstrdup(cmd) : NULL;
	st->reply = NULL;
	return (st);
}

/* Expect cmd, answer with the raw RESP reply. */
static void
step(struct script *s, const char *cmd, const char *reply)
{
	step_new(s, STEP_REPLY, cmd)->reply = xstrdup(reply);
}

/* Expect cmd, answer with the bulk string v. */
static void
step_bulk(struct script *s, const char *cmd, const char *v)
{
	char	 buf[128];

	snprintf(buf, sizeof buf, "$%zu\r\n%s\r\n", strlen(v), v);
	step(s, cmd, buf);
}

/* Expect CLUSTER SLOTS, answer with the ranges r (up to one of no host). */
static void
step_slots(struct script *s, const struct range *r)
{
	struct nsd_buf	 b = { NULL, 0, 0 };
	char		 buf[256];
	size_t		 i, n;
	int		 len;

	for (n = 0; r[n].host != NULL; n++)
		continue;
	len = snprintf(buf, sizeof buf, "*%zu\r\n", n);
	nsd_buf_append(&b, buf, (size_t)len);
	for (i = 0; i < n; i++) {
		len = snprintf(buf, sizeof buf, "*3\r\n:%d\r\n:%d\r\n*3\r\n",
		    r[i].first, r[i].last);
		nsd_buf_append(&b, buf, (size_t)len);
		if (*r[i].host == '\0')
			len = snprintf(buf, sizeof buf, "$-1\r\n");
		else
			len = snprintf(buf, sizeof buf, "$%zu\r\n%s\r\n",
			    strlen(r[i].host), r[i].host);
		nsd_buf_append(&b, buf, (size_t)len);
		len = snprintf(buf, sizeof buf, ":%d\r\n$7\r\nid-%04d\r\n",
		    r[i].port, r[i].port);
		nsd_buf_append(&b, buf, (size_t)len);
	}
	nsd_buf_putc(&b, '\0');
	step(s, "CLUSTER SLOTS", b.data);
	nsd_buf_free(&b);
}

/* Let the last n steps of s go on for as long as the client wants. */
static void
script_repeat(struct script *s, size_t n)
{
	s->repeat = n;
}

/* Make the next connection to host:port fail. */
static void
fake_refuse(struct fake *f, const char *host, int port)
{
	fake_script(f, host, port)->refuse = 1;
}

/* Whether a child that played steps steps has played all of s. */
static int
played_out(const struct script *s, size_t steps)
{
	if (s->repeat == 0)
		return (steps >= s->n);
	return (steps > s->n - s->repeat);
}

/* Write all of p[0..len); 0 or -1. */
static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t	 w;

	while (len > 0) {
		w = write(fd, p, len);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return (-1);
		p += w;
		len -= (size_t)w;
	}
	return (0);
}

/*
 * Read the next command from fd into line, its arguments joined by single
 * spaces: 1, or 0 at the end of the connection, or -1 on an error.
 */
static int
fake_read_command(int fd, redisReader *rd, struct nsd_buf *line)
{
	redisReply	*r;
	char		 buf[4096];
	ssize_t		 got;
	size_t		 i;
	void		*v;

	for (;;) {
		if (redisReaderGetReply(rd, &v) != REDIS_OK)
			return (-1);
		if (v != NULL)
			break;
		got = read(fd, buf, sizeof buf);
		if (got == -1 && errno == EINTR)
			continue;
		if (got <= 0)
			return (got == 0 ? 0 : -1);
		if (redisReaderFeed(rd, buf, (size_t)got) != REDIS_OK)
			return (-1);
	}
	r = v;
	line->len = 0;
	if (r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return (-1);
	}
	for (i = 0; i < r->elements; i++) {
		if (r->element[i]->type != REDIS_REPLY_STRING) {
			freeReplyObject(r);
			return (-1);
		}
		if (i > 0)
			nsd_buf_putc(line, ' ');
		nsd_buf_append(line, r->element[i]->str, r->element[i]->len);
	}
	nsd_buf_putc(line, '\0');
	freeReplyObject(r);
	return (1);
}

/*
 * The child: play script s on fd and exit, 0 when the client said what s
 * expects and s was played out.
 */
static void __attribute__((noreturn))
fake_serve(int fd, const struct script *s, const char *who)
{
	redisReader		*rd;
	struct nsd_buf		 line = { NULL, 0, 0 };
	const struct step	*st;
	char			 err[512];
	size_t			 i = 0, played = 0;
	int			 rc, status;

	rd = redisReaderCreate();
	for (;;) {
		if (i == s->n && s->repeat > 0)
			i = s->n - s->repeat;
		st = i < s->n ? &s->steps[i] : NULL;
		if (st != NULL && st->kind == STEP_HANGUP) {
			played++;
			i++;
			status = played_out(s, played) ? 0 : 2;
			break;
		}
		rc = fake_read_command(fd, rd, &line);
		if (rc <= 0) {
			status = rc == 0 && played_out(s, played) ? 0 : 2;
			if (status != 0)
				fprintf(stderr, "# fake %s: %s after %zu "
				    "steps of %zu\n", who, rc == 0 ?
				    "closed" : "bad input", played, s->n);
			break;
		}
		if (st == NULL || strcmp(st->cmd, line.data) != 0) {
			snprintf(err, sizeof err, "-ERR fake: expected %s, "
			    "got %s\r\n", st != NULL ? st->cmd : "nothing",
			    line.data);
			fprintf(stderr, "# fake %s: step %zu: %s", who, i,
			    err + 1);
			(void)write_all(fd, err, strlen(err));
			status = 1;
			break;
		}
		played++;
		i++;
		if (st->kind == STEP_REPLY) {
			if (write_all(fd, st->reply, strlen(st->reply)) == -1) {
				fprintf(stderr, "# fake %s: cannot answer %s\n",
				    who, st->cmd);
				status = 3;
				break;
			}
			continue;
		}
		if (st->kind == STEP_HANG)
			while (fake_read_command(fd, rd, &line) == 1)
				continue;
		status = played_out(s, played) ? 0 : 2;
		break;
	}
	redisReaderFree(rd);
	nsd_buf_free(&line);
	close(fd);
	_exit(status);
}

/*
 * Fork the children, one per script, each with its end of a socket pair.
 * They are all made before the client runs: a child forked while hiredis
 * holds buffers would, under valgrind, report them as possibly lost.
 */
static void
fake_fork(struct fake *f)
{
	struct script	*s;
	size_t		 i, j;
	pid_t		 pid;
	int		 sv[2], fd;

	for (i = 0; i < f->nnodes; i++) {
		for (j = 0; j < f->nodes[i].nconn; j++) {
			s = &f->nodes[i].conn[j];
			s->fd = -1;
			if (s->refuse)
				continue;
			if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1) {
				printf("# socketpair: %s\n", strerror(errno));
				continue;
			}
			fflush(stdout);
			fflush(stderr);
			if ((pid = fork()) == -1) {
				printf("# fork: %s\n", strerror(errno));
				close(sv[0]);
				close(sv[1]);
				continue;
			}
			if (pid == 0) {
				/* Or the other children never see EOF. */
				for (fd = 3; fd < FAKE_FD_MAX; fd++)
					if (fd != sv[1])
						close(fd);
				signal(SIGPIPE, SIG_IGN);
				alarm(10);
				fake_serve(sv[1], s, f->nodes[i].name);
			}
			close(sv[1]);
			if (f->npids == FAKE_PIDS)
				abort();
			f->pids[f->npids++] = pid;
			s->fd = sv[0];
		}
	}
}

/* The connect hook: a hiredis context on the node's next connection. */
static redisContext *
fake_connect(void *arg, const char *host, int port)
{
	struct fake		*f = arg;
	struct fake_node	*n = fake_node(f, host, port);
	struct script		*s;
	redisContext		*c;

	if (n->used == n->nconn) {
		printf("# unscripted connection to %s\n", n->name);
		f->unscripted++;
		return (NULL);
	}
	s = &n->conn[n->used++];
	if (s->fd == -1)
		return (NULL);
	n->fd = s->fd;
	s->fd = -1;
	if ((c = redisConnectFd(n->fd)) == NULL)
		close(n->fd);
	return (c);
}

/* Wait until the fake at host:port has closed its latest connection. */
static int
fake_wait_hangup(struct fake *f, const char *host, int port)
{
	struct pollfd	 pfd;

	pfd.fd = fake_node(f, host, port)->fd;
	pfd.events = 0;
	pfd.revents = 0;
	if (pfd.fd == -1 || poll(&pfd, 1, 5000) != 1)
		return (-1);
	return ((pfd.revents & POLLHUP) ? 0 : -1);
}

/*
 * Reap every child (the client must be closed by now) and check that all
 * exited 0 and every script was used; free the scripts.
 */
static void
fake_finish(struct fake *f, const char *name)
{
	struct script	*s;
	size_t		 i, j, k;
	pid_t		 pid;
	int		 status, bad = 0;

	for (i = 0; i < f->nnodes; i++)
		for (j = 0; j < f->nodes[i].nconn; j++)
			if (f->nodes[i].conn[j].fd != -1)
				close(f->nodes[i].conn[j].fd);
	for (i = 0; i < f->npids; i++) {
		while ((pid = waitpid(f->pids[i], &status, 0)) == -1 &&
		    errno == EINTR)
			continue;
		if (pid == -1 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			printf("# %s: fake child %zu: %s %d\n", name, i,
			    pid != -1 && WIFSIGNALED(status) ? "signal" :
			    "status", pid == -1 ? -1 : WIFSIGNALED(status) ?
			    WTERMSIG(status) : WEXITSTATUS(status));
			bad++;
		}
	}
	for (i = 0; i < f->nnodes; i++) {
		if (f->nodes[i].used != f->nodes[i].nconn) {
			printf("# %s: %s: %zu connections of %zu made\n", name,
			    f->nodes[i].name, f->nodes[i].used,
			    f->nodes[i].nconn);
			bad++;
		}
		for (j = 0; j < f->nodes[i].nconn; j++) {
			s = &f->nodes[i].conn[j];
			for (k = 0; k < s->n; k++) {
				free(s->steps[k].cmd);
				free(s->steps[k].reply);
			}
			free(s->steps);
		}
	}
	tap_ok(bad == 0 && f->unscripted == 0,
	    "%s: the fake servers heard exactly their scripts", name);
	memset(f, 0, sizeof *f);
}

/* Start the fakes of f, and options that connect through them. */
static void
fake_start(struct fake *f, struct nsd_redis_options *o, const char *seeds)
{
	fake_fork(f);
	memset(o, 0, sizeof *o);
	o->seeds = seeds;
	o->wait_ms = 1000;
	o->retry_ms = 1000;
	o->connect = fake_connect;
	o->connect_ctx = f;
}

/* Open a client on o, saying so when it cannot. */
static struct nsd_redis *
client_open(const struct nsd_redis_options *o, const char *name)
{
	struct nsd_redis	*cl;
	struct nsd_error	 err;

	if (nsd_redis_open(&cl, o, &err) == -1) {
		tap_ok(0, "%s: open: %s", name, err.msg);
		return (NULL);
	}
	return (cl);
}

/* Whether r is a reply of type type and (unless NULL) text str. */
static int
reply_is(const redisReply *r, int type, const char *str)
{
	if (r == NULL || r->type != type)
		return (0);
	if (str == NULL)
		return (1);
	return (r->str != NULL && strlen(str) == r->len &&
	    memcmp(r->str, str, r->len) == 0);
}

/* Add "GET key" to b. */
static size_t
add_get(struct nsd_redis_batch *b, const char *key)
{
	const char	*argv[2] = { "GET", key };
	size_t		 argvlen[2] = { 3, strlen(key) };

	return (nsd_redis_batch_add(b, key, argvlen[1], 2, argv, argvlen));
}

/* Run "GET key" by itself; the reply, to free, or NULL. */
static redisReply *
get(struct nsd_redis *cl, const char *key, struct nsd_error *err)
{
	const char	*argv[2] = { "GET", key };
	size_t		 argvlen[2] = { 3, strlen(key) };
	redisReply	*r;

	if (nsd_redis_command(cl, key, argvlen[1], 2, argv, argvlen, &r,
	    err) == -1)
		return (NULL);
	return (r);
}

/* Whether "GET key" by itself answers the bulk string v. */
static int
get_is(struct nsd_redis *cl, const char *key, const char *v)
{
	struct nsd_error	 err;
	redisReply		*r;
	int			 ok;

	if ((r = get(cl, key, &err)) == NULL) {
		printf("# GET %s: %s\n", key, err.msg);
		return (0);
	}
	ok = reply_is(r, REDIS_REPLY_STRING, v);
	freeReplyObject(r);
	return (ok);
}

/* --- The cases --- */

/* A server without cluster support serves every slot. */
static void
test_single(void)
{
	const char		*name = "single server";
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_batch	 b;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct nsd_error	 err;
	struct script		*s;
	const char		*ping = "PING";
	size_t			 len = 4;
	int			 rc;

	fake_init(&f);
	s = fake_script(&f, "a", 6379);
	step(s, "CLUSTER SLOTS", disabled);
	step_bulk(s, "GET foo", "1");
	step_bulk(s, "GET bar", "2");
	step(s, "PING", "+PONG\r\n");
	step_bulk(s, "GET hello", "3");
	fake_start(&f, &o, "a:6379");
	if ((cl = client_open(&o, name)) != NULL) {
		tap_ok(nsd_redis_is_cluster(cl) == 0 &&
		    nsd_redis_masters(cl) == 1,
		    "%s: not a cluster, one master", name);
		nsd_redis_batch_init(&b);
		add_get(&b, "foo");
		add_get(&b, "bar");
		nsd_redis_batch_add(&b, NULL, 0, 1, &ping, &len);
		rc = nsd_redis_batch_run(cl, &b, &err);
		tap_ok(rc == 0 &&
		    reply_is(nsd_redis_batch_reply(&b, 0),
		    REDIS_REPLY_STRING, "1") &&
		    reply_is(nsd_redis_batch_reply(&b, 1),
		    REDIS_REPLY_STRING, "2") &&
		    reply_is(nsd_redis_batch_reply(&b, 2),
		    REDIS_REPLY_STATUS, "PONG"),
		    "%s: keys of any slot, and no key, go to it", name);
		nsd_redis_batch_free(&b);
		tap_ok(get_is(cl, "hello", "3"), "%s: a command by itself",
		    name);
		nsd_redis_counts(cl, &n);
		tap_ok(n.commands == 4 && n.round_trips == 2 &&
		    n.map_reads == 1 && n.reconnects == 0,
		    "%s: 4 commands in 2 round trips", name);
		nsd_redis_close(cl);
	}
	fake_finish(&f, name);
}

/* Seeds: a bad one is refused; one that cannot connect is passed over. */
static void
test_seeds(void)
{
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis	*cl;
	struct nsd_error	 err;

	fake_init(&f);
	fake_start(&f, &o, "a7000");
	tap_ok(nsd_redis_open(&cl, &o, &err) == -1 &&
	    strstr(err.msg, "a7000") != NULL,
	    "seeds: \"a7000\" is refused (%s)", err.msg);
	fake_finish(&f, "seeds: a bad seed");

	fake_init(&f);
	fake_refuse(&f, "gone", 7009);
	step_slots(fake_script(&f, "a", 7000), map_ab);
	fake_start(&f, &o, "gone:7009,a:7000");
	if ((cl = client_open(&o, "seeds")) != NULL) {
		tap_ok(nsd_redis_is_cluster(cl) == 1 &&
		    nsd_redis_masters(cl) == 2,
		    "seeds: the second seed answers, a cluster of 2 masters");
		nsd_redis_close(cl);
	}
	fake_finish(&f, "seeds: the first seed that answers");
}

/* Many GETs in one batch, split over two masters by slot. */
static void
test_pipeline(void)
{
	const char		*name = "pipelined batch";
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_batch	 b;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct nsd_error	 err;
	struct script		*sa, *sb;
	char			 key[32], val[32], cmd[64];
	size_t			 i, on_a = 0, on_b = 0, bad = 0;
	const size_t		 keys = 300;
	int			 rc;

	fake_init(&f);
	sa = fake_script(&f, "a", 7000);
	sb = fake_script(&f, "b", 7001);
	step_slots(sa, map_ab);
	for (i = 0; i < keys; i++) {
		snprintf(key, sizeof key, "key:%zu", i);
		snprintf(val, sizeof val, "val:%zu", i);
		snprintf(cmd, sizeof cmd, "GET %s", key);
		if (slot(key) <= 8191) {
			step_bulk(sa, cmd, val);
			on_a++;
		} else {
			step_bulk(sb, cmd, val);
			on_b++;
		}
	}
	step_bulk(sb, "GET foo", "F");
	step_bulk(sa, "GET bar", "B");
	tap_ok(on_a > 50 && on_b > 50, "%s: %zu keys on a, %zu on b", name,
	    on_a, on_b);
	fake_start(&f, &o, "a:7000");
	if ((cl = client_open(&o, name)) != NULL) {
		tap_ok(nsd_redis_is_cluster(cl) == 1 &&
		    nsd_redis_masters(cl) == 2, "%s: a cluster of 2 masters",
		    name);
		nsd_redis_batch_init(&b);
		for (i = 0; i < keys; i++) {
			snprintf(key, sizeof key, "key:%zu", i);
			if (add_get(&b, key) != i)
				bad++;
		}
		rc = nsd_redis_batch_run(cl, &b, &err);
		for (i = 0; rc == 0 && i < keys; i++) {
			snprintf(val, sizeof val, "val:%zu", i);
			if (!reply_is(nsd_redis_batch_reply(&b, i),
			    REDIS_REPLY_STRING, val))
				bad++;
		}
		tap_ok(rc == 0 && bad == 0,
		    "%s: %zu replies, each its command's", name, keys);
		nsd_redis_counts(cl, &n);
		tap_ok(n.commands == keys && n.round_trips == 2 &&
		    n.map_reads == 1, "%s: one round trip per master", name);

		nsd_redis_batch_reset(&b);
		add_get(&b, "foo");
		add_get(&b, "bar");
		rc = nsd_redis_batch_run(cl, &b, &err);
		tap_ok(rc == 0 &&
		    reply_is(nsd_redis_batch_reply(&b, 0),
		    REDIS_REPLY_STRING, "F") &&
		    reply_is(nsd_redis_batch_reply(&b, 1),
		    REDIS_REPLY_STRING, "B"),
		    "%s: a batch reset and used again", name);
		nsd_redis_batch_free(&b);
		nsd_redis_close(cl);
	}
	fake_finish(&f, name);
}

/*
 * MOVED in the middle of a pipeline: the map is read again, the command
 * goes to the new owner, and the others keep their replies.
 */
static void
test_moved(void)
{
	const char		*name = "MOVED";
	/* Slot 5061 (bar) moved to b. */
	static const struct range map_moved[] = {
		{ 0, 5060, "a", 7000 },
		{ 5061, 5061, "b", 7001 },
		{ 5062, 8191, "a", 7000 },
		{ 8192, 16383, "b", 7001 },
		{ 0, 0, NULL, 0 }
	};
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_batch	 b;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct nsd_error	 err;
	struct script		*sa, *sb;
	int			 rc;

	fake_init(&f);
	sa = fake_script(&f, "a", 7000);
	sb = fake_script(&f, "b", 7001);
	step_slots(sa, map_ab);
	step_bulk(sa, "GET hello", "h1");
	step(sa, "GET bar", "-MOVED 5061 b:7001\r\n");
	step_bulk(sa, "GET zap", "z1");
	step_slots(sa, map_moved);
	step_bulk(sb, "GET bar", "b1");
	step_bulk(sb, "GET bar", "b2");
	fake_start(&f, &o, "a:7000");
	if ((cl = client_open(&o, name)) != NULL) {
		nsd_redis_batch_init(&b);
		add_get(&b, "hello");
		add_get(&b, "bar");
		add_get(&b, "zap");
		rc = nsd_redis_batch_run(cl, &b, &err);
		tap_ok(rc == 0 &&
		    reply_is(nsd_redis_batch_reply(&b, 0),
		    REDIS_REPLY_STRING, "h1") &&
		    reply_is(nsd_redis_batch_reply(&b, 1),
		    REDIS_REPLY_STRING, "b1") &&
		    reply_is(nsd_redis_batch_reply(&b, 2),
		    REDIS_REPLY_STRING, "z1"),
		    "%s: the moved command answered by the new owner", name);
		nsd_redis_batch_free(&b);
		nsd_redis_counts(cl, &n);
		tap_ok(n.moved == 1 && n.map_reads == 2 && n.commands == 4 &&
		    n.ask == 0 && n.retried == 0,
		    "%s: counted, and the map read again", name);
		tap_ok(get_is(cl, "bar", "b2"),
		    "%s: the slot's next command goes to the new owner", name);
		nsd_redis_close(cl);
	}
	fake_finish(&f, name);
}

/* ASK: once to the node named, behind ASKING; the map stays. */
static void
test_ask(void)
{
	const char		*name = "ASK";
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct script		*sa, *sb;

	fake_init(&f);
	sa = fake_script(&f, "a", 7000);
	sb = fake_script(&f, "b", 7001);
	step_slots(sa, map_ab);
	step(sa, "GET bar", "-ASK 5061 b:7001\r\n");
	step_bulk(sa, "GET bar", "old");
	step(sb, "ASKING", "+OK\r\n");
	step_bulk(sb, "GET bar", "new");
	fake_start(&f, &o, "a:7000");
	if ((cl = client_open(&o, name)) != NULL) {
		tap_ok(get_is(cl, "bar", "new"),
		    "%s: the command answered by the node named", name);
		nsd_redis_counts(cl, &n);
		tap_ok(n.ask == 1 && n.moved == 0 && n.map_reads == 1 &&
		    n.commands == 2, "%s: counted, the map not read again",
		    name);
		tap_ok(get_is(cl, "bar", "old"),
		    "%s: the slot's next command goes to the old owner", name);
		nsd_redis_close(cl);
	}
	fake_finish(&f, name);
}

/*
 * MOVED and ASK naming a node the map did not name, in the middle of a
 * pipeline: the client learns the node while it still reads the replies
 * of the node that answered.
 */
static void
test_new_node(void)
{
	/* Slot 5061 (bar) moved to c. */
	static const struct range map_c[] = {
		{ 0, 5060, "a", 7000 },
		{ 5061, 5061, "c", 7002 },
		{ 5062, 8191, "a", 7000 },
		{ 8192, 16383, "b", 7001 },
		{ 0, 0, NULL, 0 }
	};
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_batch	 b;
	struct nsd_redis	*cl;
	struct nsd_error	 err;
	struct script		*s;
	const char		*what[2] = { "MOVED", "ASK" };
	char			 reply[64], name[64];
	int			 ask, rc;

	for (ask = 0; ask <= 1; ask++) {
		snprintf(name, sizeof name, "%s to a new node", what[ask]);
		fake_init(&f);
		s = fake_script(&f, "a", 7000);
		step_slots(s, map_ab);
		step_bulk(s, "GET hello", "h1");
		snprintf(reply, sizeof reply, "-%s 5061 c:7002\r\n",
		    what[ask]);
		step(s, "GET bar", reply);
		step_bulk(s, "GET zap", "z1");
		if (!ask)
			step_slots(s, map_c);
		s = fake_script(&f, "c", 7002);
		if (ask)
			step(s, "ASKING", "+OK\r\n");
		step_bulk(s, "GET bar", "b1");
		fake_start(&f, &o, "a:7000");
		if ((cl = client_open(&o, name)) != NULL) {
			nsd_redis_batch_init(&b);
			add_get(&b, "hello");
			add_get(&b, "bar");
			add_get(&b, "zap");
			rc = nsd_redis_batch_run(cl, &b, &err);
			tap_ok(rc == 0 &&
			    reply_is(nsd_redis_batch_reply(&b, 0),
			    REDIS_REPLY_STRING, "h1") &&
			    reply_is(nsd_redis_batch_reply(&b, 1),
			    REDIS_REPLY_STRING, "b1") &&
			    reply_is(nsd_redis_batch_reply(&b, 2),
			    REDIS_REPLY_STRING, "z1"),
			    "%s: answered there, the others kept", name);
			nsd_redis_batch_free(&b);
			nsd_redis_close(cl);
		}
		fake_finish(&f, name);
	}
}

/*
 * Redis 7 with cluster-preferred-endpoint-type unknown-endpoint: CLUSTER
 * SLOTS gives a NULL endpoint (as redis-server 7.0.15 does), ASK an empty
 * one (-ASK 5061 :7001), both meaning the host the client asked.
 */
static void
test_unknown_endpoint(void)
{
	static const struct range map_nil[] = {
		{ 0, 8191, "", 7000 },
		{ 8192, 16383, "", 7001 },
		{ 0, 0, NULL, 0 }
	};
	static const struct range map_ports[] = {
		{ 0, 8191, "a", 7000 },
		{ 8192, 16383, "a", 7001 },
		{ 0, 0, NULL, 0 }
	};
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis	*cl;
	struct script		*s;

	fake_init(&f);
	step_slots(fake_script(&f, "a", 7000), map_nil);
	step_bulk(fake_script(&f, "a", 7001), "GET foo", "F");
	fake_start(&f, &o, "a:7000");
	if ((cl = client_open(&o, "NULL endpoint")) != NULL) {
		tap_ok(nsd_redis_masters(cl) == 2,
		    "NULL endpoint: 2 masters (%zu)", nsd_redis_masters(cl));
		tap_ok(get_is(cl, "foo", "F"),
		    "NULL endpoint: the host asked, the port given");
		nsd_redis_close(cl);
	}
	fake_finish(&f, "NULL endpoint");

	fake_init(&f);
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ports);
	step(s, "GET bar", "-ASK 5061 :7001\r\n");
	s = fake_script(&f, "a", 7001);
	step(s, "ASKING", "+OK\r\n");
	step_bulk(s, "GET bar", "new");
	fake_start(&f, &o, "a:7000");
	if ((cl = client_open(&o, "ASK, empty endpoint")) != NULL) {
		tap_ok(get_is(cl, "bar", "new"),
		    "ASK, empty endpoint: the host asked, the port given");
		nsd_redis_close(cl);
	}
	fake_finish(&f, "ASK, empty endpoint");
}

/* TRYAGAIN and CLUSTERDOWN: sent again after a back-off. */
static void
test_wait(void)
{
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct script		*s;
	long			 t;

	fake_init(&f);
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ab);
	step(s, "GET bar", "-TRYAGAIN Multiple keys request during "
	    "rehashing of slot\r\n");
	step_slots(s, map_ab);
	step_bulk(s, "GET bar", "ok");
	fake_start(&f, &o, "a:7000");
	if ((cl = client_open(&o, "TRYAGAIN")) != NULL) {
		t = now_ms();
		tap_ok(get_is(cl, "bar", "ok"), "TRYAGAIN: sent again");
		t = now_ms() - t;
		nsd_redis_counts(cl, &n);
		/* redis_cluster.c waits 10 ms first. */
		tap_ok(n.retried == 1 && n.commands == 2 && t >= 10,
		    "TRYAGAIN: counted, after a back-off (%ld ms)", t);
		nsd_redis_close(cl);
	}
	fake_finish(&f, "TRYAGAIN");

	fake_init(&f);
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ab);
	step(s, "GET bar", "-CLUSTERDOWN The cluster is down\r\n");
	step_slots(s, map_ab);
	step(s, "GET bar", "-CLUSTERDOWN Hash slot not served\r\n");
	step_slots(s, map_ab);
	step_bulk(s, "GET bar", "ok");
	fake_start(&f, &o, "a:7000");
	if ((cl = client_open(&o, "CLUSTERDOWN")) != NULL) {
		t = now_ms();
		tap_ok(get_is(cl, "bar", "ok"), "CLUSTERDOWN: sent again");
		t = now_ms() - t;
		nsd_redis_counts(cl, &n);
		/* 10 ms, then 20. */
		tap_ok(n.retried == 2 && n.commands == 3 && t >= 30,
		    "CLUSTERDOWN: counted, after back-offs (%ld ms)", t);
		nsd_redis_close(cl);
	}
	fake_finish(&f, "CLUSTERDOWN");
}

/* A connection closed without an answer: reconnect and send again. */
static void
test_closed(void)
{
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct script		*s;

	fake_init(&f);
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ab);
	step_new(s, STEP_CLOSE, "GET bar");
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ab);
	step_bulk(s, "GET bar", "ok");
	fake_start(&f, &o, "a:7000");
	if ((cl = client_open(&o, "closed")) != NULL) {
		tap_ok(get_is(cl, "bar", "ok"),
		    "closed: the command sent again on a new connection");
		nsd_redis_counts(cl, &n);
		tap_ok(n.reconnects == 1 && n.commands == 2 &&
		    n.map_reads == 2, "closed: one reconnection");
		nsd_redis_close(cl);
	}
	fake_finish(&f, "closed");

	fake_init(&f);
	s = fake_script(&f, "a", 6379);
	step(s, "CLUSTER SLOTS", disabled);
	step_new(s, STEP_CLOSE, "GET bar");
	step_bulk(fake_script(&f, "a", 6379), "GET bar", "ok");
	fake_start(&f, &o, "a:6379");
	if ((cl = client_open(&o, "closed, single server")) != NULL) {
		tap_ok(get_is(cl, "bar", "ok"),
		    "closed, single server: sent again on a new connection");
		nsd_redis_counts(cl, &n);
		tap_ok(n.reconnects == 1 && n.commands == 2 &&
		    n.map_reads == 1, "closed, single server: one "
		    "reconnection, no map read");
		nsd_redis_close(cl);
	}
	fake_finish(&f, "closed, single server");
}

/*
 * A connection the server closed between two batches: the client learns
 * it when it writes, which must not raise SIGPIPE (a caller that leaves
 * SIGPIPE alone would die of it).
 */
static void
test_hangup(void)
{
	const char		*name = "closed while idle";
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct script		*s;
	sig_atomic_t		 before;

	fake_init(&f);
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ab);
	step_new(s, STEP_HANGUP, NULL);
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ab);
	step_bulk(s, "GET bar", "ok");
	fake_start(&f, &o, "a:7000");
	if ((cl = client_open(&o, name)) != NULL) {
		tap_ok(fake_wait_hangup(&f, "a", 7000) == 0,
		    "%s: the server has closed the connection", name);
		before = sigpipes;
		tap_ok(get_is(cl, "bar", "ok"),
		    "%s: the command sent on a new connection", name);
		tap_ok(sigpipes == before, "%s: no SIGPIPE (%d raised)", name,
		    (int)(sigpipes - before));
		nsd_redis_counts(cl, &n);
		tap_ok(n.reconnects == 1, "%s: one reconnection", name);
		nsd_redis_close(cl);
	}
	fake_finish(&f, name);
}

/* A server that never answers: the wait times out, the client reconnects. */
static void
test_hang(void)
{
	const char		*name = "no answer";
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct script		*s;
	long			 t;

	fake_init(&f);
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ab);
	step_new(s, STEP_HANG, "GET bar");
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ab);
	step_bulk(s, "GET bar", "ok");
	fake_start(&f, &o, "a:7000");
	o.wait_ms = 200;
	if ((cl = client_open(&o, name)) != NULL) {
		t = now_ms();
		tap_ok(get_is(cl, "bar", "ok"),
		    "%s: the command sent again on a new connection", name);
		t = now_ms() - t;
		nsd_redis_counts(cl, &n);
		tap_ok(n.reconnects == 1 && n.commands == 2 && t >= 200,
		    "%s: after the 200 ms wait (%ld ms), one reconnection",
		    name, t);
		nsd_redis_close(cl);
	}
	fake_finish(&f, name);
}

/* The retry budget runs out: an error that says what went wrong last. */
static void
test_budget(void)
{
	const char		*name = "retry budget";
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_batch	 b;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct nsd_error	 err;
	struct script		*s;
	long			 t;
	int			 rc;

	fake_init(&f);
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ab);
	step(s, "GET bar", "-CLUSTERDOWN The cluster is down\r\n");
	step_slots(s, map_ab);
	script_repeat(s, 2);
	fake_start(&f, &o, "a:7000");
	o.retry_ms = 100;
	if ((cl = client_open(&o, name)) != NULL) {
		nsd_redis_batch_init(&b);
		add_get(&b, "bar");
		t = now_ms();
		rc = nsd_redis_batch_run(cl, &b, &err);
		t = now_ms() - t;
		tap_ok(rc == -1, "%s: the batch fails after %ld ms", name, t);
		tap_ok(rc == -1 && strstr(err.msg, "a:7000") != NULL &&
		    strstr(err.msg, "CLUSTERDOWN The cluster is down") != NULL,
		    "%s: the error says the last problem (%s)", name,
		    rc == -1 ? err.msg : "");
		nsd_redis_counts(cl, &n);
		tap_ok(n.retried >= 2 && t >= 100,
		    "%s: retried %llu times for 100 ms", name,
		    (unsigned long long)n.retried);
		nsd_redis_batch_free(&b);
		nsd_redis_close(cl);
	}
	fake_finish(&f, name);
}

/*
 * Expect INFO replication, answer that the master has online replicas
 * online and one more still synchronizing (which WAIT does not count).
 */
static void
step_info(struct script *s, int online)
{
	struct nsd_buf	 v = { NULL, 0, 0 }, b = { NULL, 0, 0 };
	char		 line[128];
	int		 i, len;

	len = snprintf(line, sizeof line, "# Replication\r\nrole:master\r\n"
	    "connected_slaves:%d\r\n", online + 1);
	nsd_buf_append(&v, line, (size_t)len);
	for (i = 0; i <= online; i++) {
		len = snprintf(line, sizeof line, "slave%d:ip=127.0.0.1,"
		    "port=%d,state=%s,offset=42,lag=0\r\n", i, 7100 + i,
		    i < online ? "online" : "wait_bgsave");
		nsd_buf_append(&v, line, (size_t)len);
	}
	len = snprintf(line, sizeof line, "$%zu\r\n", v.len);
	nsd_buf_append(&b, line, (size_t)len);
	nsd_buf_append(&b, v.data, v.len);
	nsd_buf_append(&b, "\r\n", 3);
	step(s, "INFO replication", b.data);
	nsd_buf_free(&v);
	nsd_buf_free(&b);
}

/* INCRBY n 1024, replicated; its reply (0 when it failed), *acked. */
static long long
incr_replicated(struct nsd_redis *cl, long *acked, struct nsd_error *err)
{
	const char	*argv[3] = { "INCRBY", "n", "1024" };
	size_t		 argvlen[3] = { 6, 1, 4 };
	redisReply	*r;
	long long	 v;

	*acked = -1;
	if (nsd_redis_command_replicated(cl, "n", 1, 3, argv, argvlen, &r,
	    acked, err) == -1)
		return (0);
	v = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
	freeReplyObject(r);
	return (v);
}

/*
 * A command whose replicas must have it: WAIT for those online, on its
 * connection; taken again when fewer acknowledge; an error once the
 * retry budget is spent; no WAIT for a master without replicas.
 */
static void
test_replicated(void)
{
	const char		*name = "WAIT";
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct nsd_error	 err;
	struct script		*s;
	long long		 v;
	long			 acked;

	fake_init(&f);
	s = fake_script(&f, "a", 6379);
	step(s, "CLUSTER SLOTS", disabled);
	step_info(s, 2);
	step(s, "INCRBY n 1024", ":1024\r\n");
	step(s, "WAIT 2 500", ":2\r\n");
	fake_start(&f, &o, "a:6379");
	if ((cl = client_open(&o, name)) != NULL) {
		v = incr_replicated(cl, &acked, &err);
		tap_ok(v == 1024 && acked == 2,
		    "%s: for the 2 replicas online, behind the command", name);
		nsd_redis_close(cl);
	}
	fake_finish(&f, "WAIT: every replica acknowledged");

	fake_init(&f);
	s = fake_script(&f, "a", 6379);
	step(s, "CLUSTER SLOTS", disabled);
	step_info(s, 1);
	step(s, "INCRBY n 1024", ":1024\r\n");
	step(s, "WAIT 1 500", ":0\r\n");
	step_info(s, 1);
	step(s, "INCRBY n 1024", ":2048\r\n");
	step(s, "WAIT 1 500", ":1\r\n");
	fake_start(&f, &o, "a:6379");
	if ((cl = client_open(&o, name)) != NULL) {
		v = incr_replicated(cl, &acked, &err);
		nsd_redis_counts(cl, &n);
		tap_ok(v == 2048 && acked == 1 && n.retried == 1,
		    "%s: fewer replicas than asked: the command again, its "
		    "first answer unused (%lld)", name, v);
		nsd_redis_close(cl);
	}
	fake_finish(&f, "WAIT: fewer replicas, then all");

	/* The command told to wait: its WAIT counted from before it. */
	fake_init(&f);
	s = fake_script(&f, "a", 6379);
	step(s, "CLUSTER SLOTS", disabled);
	step_info(s, 1);
	step(s, "INCRBY n 1024", "-LOADING Redis is loading the dataset in "
	    "memory\r\n");
	step(s, "WAIT 1 500", ":1\r\n");
	step(s, "INCRBY n 1024", ":1024\r\n");
	step_info(s, 1);
	step(s, "INCRBY n 1024", ":2048\r\n");
	step(s, "WAIT 1 500", ":1\r\n");
	fake_start(&f, &o, "a:6379");
	if ((cl = client_open(&o, name)) != NULL) {
		v = incr_replicated(cl, &acked, &err);
		tap_ok(v == 2048 && acked == 1,
		    "%s: answered before its command ran, it does not count "
		    "(%lld)", name, v);
		nsd_redis_close(cl);
	}
	fake_finish(&f, "WAIT: before the command");

	fake_init(&f);
	s = fake_script(&f, "a", 6379);
	step(s, "CLUSTER SLOTS", disabled);
	step_info(s, 1);
	step(s, "INCRBY n 1024", ":1024\r\n");
	step(s, "WAIT 1 500", ":0\r\n");
	script_repeat(s, 3);
	fake_start(&f, &o, "a:6379");
	o.retry_ms = 100;
	if ((cl = client_open(&o, name)) != NULL) {
		v = incr_replicated(cl, &acked, &err);
		tap_ok(v == 0 && err.status == NSD_EXIT_INDEX &&
		    strstr(err.msg, "a:6379: 0 of its 1 replicas acknowledged "
		    "n within 500 ms") != NULL,
		    "%s: never enough: an error once the budget is spent (%s)",
		    name, v == 0 ? err.msg : "");
		nsd_redis_close(cl);
	}
	fake_finish(&f, "WAIT: never enough replicas");

	fake_init(&f);
	s = fake_script(&f, "a", 6379);
	step(s, "CLUSTER SLOTS", disabled);
	step_info(s, 0);
	step(s, "INCRBY n 1024", ":1024\r\n");
	fake_start(&f, &o, "a:6379");
	if ((cl = client_open(&o, name)) != NULL) {
		v = incr_replicated(cl, &acked, &err);
		tap_ok(v == 1024 && acked == 0,
		    "%s: a master without replicas online is not waited for",
		    name);
		nsd_redis_close(cl);
	}
	fake_finish(&f, "WAIT: no replica online");
}

/* An ordinary error reply is the command's reply, not a reason to retry. */
static void
test_error_reply(void)
{
	const char		*name = "WRONGTYPE";
	static const char	 wrongtype[] = "WRONGTYPE Operation against "
	    "a key holding the wrong kind of value";
	const char		*argv[3] = { "LPUSH", "bar", "x" };
	size_t			 argvlen[3] = { 5, 3, 1 };
	char			 reply[128];
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct nsd_error	 err;
	struct script		*s;
	redisReply		*r;
	int			 rc;

	fake_init(&f);
	s = fake_script(&f, "a", 7000);
	step_slots(s, map_ab);
	snprintf(reply, sizeof reply, "-%s\r\n", wrongtype);
	step(s, "LPUSH bar x", reply);
	fake_start(&f, &o, "a:7000");
	if ((cl = client_open(&o, name)) != NULL) {
		rc = nsd_redis_command(cl, "bar", 3, 3, argv, argvlen, &r,
		    &err);
		tap_ok(rc == 0 && reply_is(r, REDIS_REPLY_ERROR, wrongtype),
		    "%s: the error is the command's reply", name);
		if (rc == 0)
			freeReplyObject(r);
		nsd_redis_counts(cl, &n);
		tap_ok(n.commands == 1 && n.retried == 0 && n.moved == 0 &&
		    n.reconnects == 0, "%s: not retried", name);
		nsd_redis_close(cl);
	}
	fake_finish(&f, name);
}

/* AUTH comes first on each connection, a reconnection's too. */
static void
test_auth(void)
{
	const char		*name = "AUTH";
	struct fake		 f;
	struct nsd_redis_options o;
	struct nsd_redis_batch	 b;
	struct nsd_redis_counts	 n;
	struct nsd_redis	*cl;
	struct nsd_error	 err;
	struct script		*sa, *sb;
	redisReply		*r;
	int			 rc;

	fake_init(&f);
	sa = fake_script(&f, "a", 7000);
	step(sa, "AUTH nsd secret", "+OK\r\n");
	step_slots(sa, map_ab);
	step_new(sa, STEP_CLOSE, "GET bar");
	sb = fake_script(&f, "b", 7001);
	step(sb, "AUTH nsd secret", "+OK\r\n");
	step_bulk(sb, "GET foo", "F");
	/* The map is read from the node still connected. */
	step_slots(sb, map_ab);
	sa = fake_script(&f, "a", 7000);
	step(sa, "AUTH nsd secret", "+OK\r\n");
	step_bulk(sa, "GET bar", "B");
	fake_start(&f, &o, "a:7000");
	o.user = "nsd";
	o.password = "secret";
	if ((cl = client_open(&o, name)) != NULL) {
		nsd_redis_batch_init(&b);
		add_get(&b, "bar");
		add_get(&b, "foo");
		rc = nsd_redis_batch_run(cl, &b, &err);
		tap_ok(rc == 0 &&
		    reply_is(nsd_redis_batch_reply(&b, 0),
		    REDIS_REPLY_STRING, "B") &&
		    reply_is(nsd_redis_batch_reply(&b, 1),
		    REDIS_REPLY_STRING, "F"),
		    "%s: user and password, on 3 connections", name);
		nsd_redis_batch_free(&b);
		nsd_redis_counts(cl, &n);
		tap_ok(n.reconnects == 1, "%s: one reconnection", name);
		nsd_redis_close(cl);
	}
	fake_finish(&f, name);

	fake_init(&f);
	sa = fake_script(&f, "a", 6379);
	step(sa, "AUTH secret", "+OK\r\n");
	step(sa, "CLUSTER SLOTS", disabled);
	step(sa, "GET bar", "$-1\r\n");
	fake_start(&f, &o, "a:6379");
	o.password = "secret";
	if ((cl = client_open(&o, "AUTH, password only")) != NULL) {
		r = get(cl, "bar", &err);
		tap_ok(r != NULL && r->type == REDIS_REPLY_NIL,
		    "AUTH, password only: the password alone");
		if (r != NULL)
			freeReplyObject(r);
		nsd_redis_close(cl);
	}
	fake_finish(&f, "AUTH, password only");

	fake_init(&f);
	step(fake_script(&f, "a", 7000), "AUTH nsd wrong",
	    "-WRONGPASS invalid username-password pair or user is "
	    "disabled.\r\n");
	fake_start(&f, &o, "a:7000");
	o.user = "nsd";
	o.password = "wrong";
	rc = nsd_redis_open(&cl, &o, &err);
	tap_ok(rc == -1 && strstr(err.msg, "a:7000") != NULL &&
	    strstr(err.msg, "WRONGPASS") != NULL,
	    "AUTH, wrong password: open fails (%s)", rc == -1 ? err.msg : "");
	if (rc == 0)
		nsd_redis_close(cl);
	fake_finish(&f, "AUTH, wrong password");
}

int
main(void)
{
	struct sigaction	 sa;

	/* Count SIGPIPEs instead of dying of one. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigpipe;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);

	test_slots();
	test_single();
	test_seeds();
	test_pipeline();
	test_moved();
	test_ask();
	test_new_node();
	test_unknown_endpoint();
	test_wait();
	test_closed();
	test_hangup();
	test_hang();
	test_budget();
	test_replicated();
	test_error_reply();
	test_auth();
	return (tap_done());
}
