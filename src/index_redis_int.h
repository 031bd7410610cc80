/*
 * index_redis_int.h: what the files of the shared index share
 * (index_redis.c: the design essay, the batch's maps, reads and the
 * index's operations; index_redis_settle.c: a batch written, its
 * conflicts and their arbitration, and the runs' leases;
 * index_redis_open.c: the URL, the parameters and opening;
 * index_redis_verify.c: --db-info and --db-verify). Not for any other
 * module: index_redis.h is the index's interface.
 */
#ifndef NSD_INDEX_REDIS_INT_H
#define NSD_INDEX_REDIS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"
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
	int			 meta_expires;	/* NS:params and NS:next
						   expire too (--ttl) */
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

/* The format of NS:params that this nsdedup writes and reads. */
#define NSD_REDIS_FORMAT	1

/* What NS:params holds. */
enum params_state {
	PARAMS_OK,
	PARAMS_FOREIGN,		/* not an nsdedup index's */
	PARAMS_NEWER,		/* of a newer format */
	PARAMS_DAMAGED		/* of this format, but not as it writes */
};

/* NS:params, read; p.method points into it, once its method is read. */
struct ri_params {
	struct nsd_index_params	 p;
	char			 method[64];
	unsigned		 version;	/* of the format */
	char			 why[128];	/* what is damaged */
};

/* index_redis.c: the operations, keys' names, the maps, reads. */
extern const struct nsd_index_ops nsd_ri_ops;
size_t	 nsd_ri_key_name(const struct redis_index *, char *, size_t,
	    const char *, uint64_t, uint64_t, int);
size_t	 nsd_ri_group_key(const struct redis_index *, char *, size_t,
	    uint64_t);
struct key_slot *nsd_ri_key_slot(struct key_map *, uint64_t);
void	 nsd_ri_key_map_clear(struct key_map *);
struct block_slot *nsd_ri_block_slot(struct block_map *, unsigned, uint64_t);
void	 nsd_ri_block_map_clear(struct block_map *);
struct group_slot *nsd_ri_group_slot(struct group_map *, uint64_t);
struct group_slot *nsd_ri_group_get(struct group_map *, uint64_t);
void	 nsd_ri_group_map_clear(struct group_map *);
uint64_t nsd_ri_parse_number(const char *, size_t);
long	 nsd_ri_now_seconds(void);
int	 nsd_ri_reply_group(struct redis_index *, const redisReply *,
	    uint64_t *, struct nsd_error *);
void	 nsd_ri_cmds_begin(struct redis_index *);
size_t	 nsd_ri_cmd_add(struct redis_index *, const char *, size_t, int,
	    const char **, size_t *);
int	 nsd_ri_url_error(struct redis_index *, struct nsd_error *);
int	 nsd_ri_cmds_run(struct redis_index *, struct nsd_error *);
int	 nsd_ri_reply_failed(struct redis_index *, const redisReply *,
	    struct nsd_error *);
void	 nsd_ri_want_group(struct redis_index *, uint64_t);
int	 nsd_ri_fetch_groups(struct redis_index *, struct nsd_error *);
uint64_t nsd_ri_group_canonical(struct redis_index *, uint64_t);
void	 nsd_ri_push_fresh(struct redis_index *, uint64_t);
int	 nsd_ri_group_resolve(struct redis_index *, uint64_t,
	    struct group_slot **, struct nsd_error *);
void	 nsd_ri_close(struct nsd_index *);
int	 nsd_ri_block_field(const redisReply *, size_t, uint64_t *,
	    uint64_t *);

/* index_redis_open.c: connecting, NS:params read and refused. */
int	 nsd_ri_connect(struct redis_index **, const char *, int,
	    struct nsd_error *);
enum params_state nsd_ri_params_parse(const char *, size_t,
	    struct ri_params *);
int	 nsd_ri_params_refuse(const char *, const char *,
	    const struct ri_params *, enum params_state, struct nsd_error *);

/* index_redis_settle.c: writing a batch, arbitration, the runs. */
size_t	 nsd_ri_run_key(const struct redis_index *, char *, size_t, uint64_t);
int	 nsd_ri_run_mark(struct redis_index *, int, int, struct nsd_error *);
void	 nsd_ri_meta_refresh(struct redis_index *);
void	 nsd_ri_begin_batch(struct nsd_index *);
int	 nsd_ri_settle(struct nsd_index *, const struct nsd_index_conflict **,
	    size_t *, struct nsd_error *);
int	 nsd_ri_arbitrate(struct nsd_index *,
	    const struct nsd_index_conflict *, size_t, uint64_t *,
	    struct nsd_error *);
int	 nsd_ri_group_adopt(struct nsd_index *, uint64_t, int *,
	    struct nsd_error *);
int	 nsd_ri_commit(struct nsd_index *, uint64_t, struct nsd_error *);

#endif /* NSD_INDEX_REDIS_INT_H */
