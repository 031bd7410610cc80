/*
 * redis_cluster.h: a pipelining client for one Redis server or a Redis
 * Cluster, on hiredis's connections and reply parser.
 *
 * Debian's hiredis (0.14) knows nothing of clusters, so this module routes
 * every command itself: the key's hash slot (CRC16 of the key, or of its
 * {hash tag}, mod 16384), the slot map from CLUSTER SLOTS, one connection
 * per master. A caller adds commands to a batch, each with the key that
 * routes it, and runs the batch: every node's commands go out together,
 * then every node's replies are read, and the commands that were
 * redirected (MOVED: the map is read again; ASK: once, after ASKING), told
 * to wait (TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN) or lost with their
 * connection are sent again, with a back-off, until each has its reply or
 * the retry budget is spent. Every command a batch holds must therefore
 * be safe to send twice (the index's are: see index_redis.c).
 *
 * A server that says cluster support is disabled is a single server: it
 * serves every slot.
 *
 * Memory: the replies belong to the batch and stay valid until the batch
 * is reset or freed. Errors: -1 with err filled in: NSD_EXIT_USAGE for
 * seeds that are not HOST:PORT, NSD_EXIT_INDEX for the rest.
 */
#ifndef NSD_REDIS_CLUSTER_H
#define NSD_REDIS_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "util.h"

#define NSD_REDIS_SLOTS		16384

/* How long each wait may take, and how long a batch may keep retrying. */
#define NSD_REDIS_WAIT_MS	5000
#define NSD_REDIS_RETRY_MS	30000

/* The hash slot of key[0..len), as Redis Cluster computes it. */
unsigned	 nsd_redis_slot(const char *, size_t);

/* CRC16-CCITT (XModem), the checksum under the slots. */
uint16_t	 nsd_redis_crc16(const char *, size_t);

struct nsd_redis;

/* How the client reaches a server. */
struct nsd_redis_options {
	const char	*seeds;		/* "HOST:PORT[,HOST:PORT...]" */
	const char	*user;		/* for AUTH, or NULL */
	const char	*password;	/* for AUTH, or NULL */
	long		 wait_ms;	/* 0: NSD_REDIS_WAIT_MS */
	long		 retry_ms;	/* 0: NSD_REDIS_RETRY_MS */
	/*
	 * For tests: makes the connection to host:port (a scripted fake on
	 * a socket pair) instead of TCP; returns NULL when it cannot.
	 */
	redisContext	*(*connect)(void *, const char *, int);
	void		*connect_ctx;
};

/*
 * Connect to the first seed that answers and read its slot map (or learn
 * that it is a single server).
 */
int	 nsd_redis_open(struct nsd_redis **, const struct nsd_redis_options *,
	    struct nsd_error *);
void	 nsd_redis_close(struct nsd_redis *);

/* Whether the server is a cluster, and how many masters serve it. */
int	 nsd_redis_is_cluster(const struct nsd_redis *);
size_t	 nsd_redis_masters(const struct nsd_redis *);

/*
 * Master i (from 0 to nsd_redis_masters() - 1, in the order of the slots
 * they serve first): its address, and a slot it serves, by which a command
 * that names no key reaches it (nsd_redis_batch_add_slot()). -1 when there
 * is no master i.
 */
int	 nsd_redis_master(const struct nsd_redis *, size_t, const char **,
	    int *, unsigned *);

/* What the client has had to do, for --stats and the tests. */
struct nsd_redis_counts {
	uint64_t	 commands;	/* sent, counting each resend */
	uint64_t	 round_trips;	/* batches sent to one node */
	uint64_t	 moved;
	uint64_t	 ask;
	uint64_t	 retried;	/* TRYAGAIN, CLUSTERDOWN and the like */
	uint64_t	 reconnects;
	uint64_t	 map_reads;	/* CLUSTER SLOTS */
};

void	 nsd_redis_counts(const struct nsd_redis *, struct nsd_redis_counts *);

/* A batch of commands and, once run, their replies. */
struct nsd_redis_batch {
	struct nsd_buf	 wire;		/* the commands, formatted */
	struct nsd_redis_command {
		size_t		 off;	/* in wire */
		size_t		 len;
		unsigned	 slot;
		redisReply	*reply;
		/* Where and when it was answered: a node, its connection. */
		uint16_t	 node;
		uint64_t	 conn;
		uint64_t	 round;
	}		*cmds;
	size_t		 ncmds;
	size_t		 cap;
};

void	 nsd_redis_batch_init(struct nsd_redis_batch *);
/* Forget the commands and free the replies, keeping the memory. */
void	 nsd_redis_batch_reset(struct nsd_redis_batch *);
void	 nsd_redis_batch_free(struct nsd_redis_batch *);

/*
 * Add a command of argc arguments (argv[i] of argvlen[i] bytes), routed
 * by key[0..key_len) (a command without a key: NULL, sent to the master
 * of slot 0); returns its index in the batch.
 */
size_t	 nsd_redis_batch_add(struct nsd_redis_batch *, const char *, size_t,
	    int, const char **, const size_t *);

/*
 * Add a command routed to the master of slot rather than by a key: one for
 * a single node, such as SCAN. Returns its index in the batch.
 */
size_t	 nsd_redis_batch_add_slot(struct nsd_redis_batch *, unsigned, int,
	    const char **, const size_t *);

/* Send every command of the batch and wait for every reply. */
int	 nsd_redis_batch_run(struct nsd_redis *, struct nsd_redis_batch *,
	    struct nsd_error *);

/* Command i's reply, once the batch has run: never NULL. */
static inline const redisReply *
nsd_redis_batch_reply(const struct nsd_redis_batch *b, size_t i)
{
	return (b->cmds[i].reply);
}

/*
 * Run one command (routed by key, as above) by itself; the reply is the
 * caller's, to free with freeReplyObject().
 */
int	 nsd_redis_command(struct nsd_redis *, const char *, size_t, int,
	    const char **, const size_t *, redisReply **, struct nsd_error *);

/*
 * Run one command (routed by key) as nsd_redis_command() does, then make
 * sure that the replicas of the master that ran it have it before the
 * caller uses the reply: WAIT for the replicas that master has online
 * (INFO replication), on the same connection, for at most half of
 * wait_ms. A master without replicas is not waited for. When fewer
 * replicas than that acknowledge, or the command and its WAIT were not
 * answered on one connection (a redirection, a lost connection, a
 * failover between them), the command is run again, after a back-off,
 * until the retry budget is spent: -1 then, with err saying how many of
 * how many replicas acknowledged. So only for a command whose run again
 * costs nothing but its first answer (INCRBY of a counter of blocks).
 * *replicas (unless NULL) is how many replicas acknowledged.
 */
int	 nsd_redis_command_replicated(struct nsd_redis *, const char *,
	    size_t, int, const char **, const size_t *, redisReply **,
	    long *, struct nsd_error *);

#endif /* NSD_REDIS_CLUSTER_H */
