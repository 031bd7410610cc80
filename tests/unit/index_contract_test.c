/*
 * index_contract_test.c: what every index must do, the same cases against
 * each of them: in memory, in a file, and on Redis.
 *
 * Usage: index_contract_test [memory] [file] [redis://HOST:PORT/NS]...
 * (no argument: memory and file; tests/redis.bats gives it its servers).
 *
 * The cases, through index.h only, each batch begun and settled as the
 * pipeline does (both do nothing but on a shared index):
 *  - groups: numbered from 1, one more each, named by their ids;
 *  - claims: first-claim-wins, a later claim answered the holder, the
 *    holder found by a lookup, and a key no group claimed found by none;
 *  - MinHash: the signature a group keeps; SimHash: the oldest group
 *    within the distance, found through the block tables;
 * and for the indexes that outlive a run (file, Redis):
 *  - what a run committed is there for the next, whose groups go on
 *    from the last;
 *  - a --no-update run sees its own claims, and leaves nothing;
 *  - two writers at once: the file index refuses the second as busy; on
 *    Redis, the first to write a key wins it, and the other's settle
 *    reports the conflict;
 *  - an index made with other parameters is refused; one made with an
 *    older normalization version, from the oldest that can be read, is
 *    opened and keeps its version;
 * and for the file index, whose runs commit: a run that does not commit
 * leaves nothing.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index.h"
#include "index_redis.h"
#include "options.h"
#include "pipeline.h"
#include "tap.h"
#include "text.h"

/* The index under test: "memory", a file path, or a URL. */
static const char	*target;
static int		 kind;	/* one of: */
#define KIND_MEMORY	0
#define KIND_FILE	1
#define KIND_REDIS	2

/* Where the index of the case is: target, with a name of the case's. */
static char	 where[512];

static void
place(const char *name)
{
	snprintf(where, sizeof where, "%s%s%s", target,
	    kind == KIND_MEMORY ? "" : kind == KIND_FILE ? "/" : "-", name);
	if (kind == KIND_MEMORY)
		snprintf(where, sizeof where, "memory");
}

static void
fail(const char *what, const struct nsd_error *err)
{
	printf("# %s: %s: %s\n", where, what, err != NULL ? err->msg : "");
}

/* The index parameters of nsdedup run with the options args. */
static void
params_of(const char *args, struct nsd_index_params *p)
{
	struct nsd_config	 cfg;
	struct nsd_error	 err;
	char			*argv[8], buf[128], *w;
	int			 argc = 0;

	snprintf(buf, sizeof buf, "%s", args);
	argv[argc++] = (char *)"nsdedup";
	for (w = strtok(buf, " "); w != NULL && argc < 7;
	    w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	if (nsd_options_parse(argc, argv, &cfg, &err) != NSD_OPTIONS_RUN) {
		printf("# bad options %s: %s\n", args, err.msg);
		exit(1);
	}
	nsd_pipeline_index_params(&cfg, p);
}

/*
 * Open the index under test, for a run (readonly: --no-update), waiting
 * wait_ms for a file index's lock (-1: as long as it takes).
 */
static struct nsd_index *
open_waiting(const struct nsd_index_params *p, int readonly, long wait_ms,
    struct nsd_error *err)
{
	struct nsd_index	*ix = NULL;
	struct nsd_index_open	 o;
	struct nsd_index_redis	 r;
	int			 rc;

	memset(err, 0, sizeof *err);
	switch (kind) {
	case KIND_MEMORY:
		rc = nsd_index_open_memory(&ix, p, err);
		break;
	case KIND_FILE:
		memset(&o, 0, sizeof o);
		o.path = where;
		o.readonly = readonly;
		o.wait_ms = wait_ms;
		rc = nsd_index_open_file(&ix, &o, p, err);
		break;
	default:
		memset(&r, 0, sizeof r);
		r.url = where;
		r.readonly = readonly;
		rc = nsd_index_open_redis(&ix, &r, p, err);
		break;
	}
	/* As main.c opens it for --no-update. */
	if (rc == 0 && readonly)
		rc = nsd_index_open_overlay(&ix, ix, err);
	return (rc == 0 ? ix : NULL);
}

static struct nsd_index *
open_index(const struct nsd_index_params *p, int readonly,
    struct nsd_error *err)
{
	return (open_waiting(p, readonly, -1, err));
}

/*
 * Claim key for group in a batch of its own: the group that held it
 * before, 0 when group now does, or UINT64_MAX on error.
 */
static uint64_t
claim(struct nsd_index *ix, uint64_t key, uint64_t group)
{
	const struct nsd_index_conflict	*c;
	struct nsd_error		 err;
	uint64_t			 held;
	size_t				 n;

	nsd_index_begin_batch(ix);
	if (nsd_index_claim(ix, key, group, &held, &err) == -1 ||
	    nsd_index_settle(ix, &c, &n, &err) == -1) {
		fail("claim", &err);
		return (UINT64_MAX);
	}
	return (held);
}

/* The holder of key, or 0; UINT64_MAX on error. */
static uint64_t
holder(struct nsd_index *ix, uint64_t key)
{
	struct nsd_error	 err;
	uint64_t		 g;

	nsd_index_begin_batch(ix);
	if (nsd_index_lookup(ix, key, &g, &err) == -1) {
		fail("lookup", &err);
		return (UINT64_MAX);
	}
	return (g);
}

/*
 * What a group of ix keeps of its first record when the case gives
 * nothing (every index keeps a sketch): zeros, or NULL when it keeps none.
 */
static const unsigned char *
blank_sig(const struct nsd_index *ix)
{
	static const unsigned char zeros[4096];

	return (ix->params.sig_bytes > 0 ? zeros : NULL);
}

/* A new group named id (sig: what it keeps, or NULL), settled; 0: error. */
static uint64_t
group(struct nsd_index *ix, const char *id, const unsigned char *sig)
{
	const struct nsd_index_conflict	*c;
	struct nsd_error		 err;
	uint64_t			 g;
	size_t				 n;

	if (sig == NULL)
		sig = blank_sig(ix);
	nsd_index_begin_batch(ix);
	if (nsd_index_group_new_signed(ix, id, strlen(id), sig, &g,
	    &err) == -1 || nsd_index_settle(ix, &c, &n, &err) == -1) {
		fail("group_new", &err);
		return (0);
	}
	return (g);
}

/* Whether group is named number and id (NULL: none). */
static int
named(struct nsd_index *ix, uint64_t g, uint64_t number, const char *id)
{
	struct nsd_group_name	 name;
	struct nsd_error	 err;

	if (nsd_index_group_name(ix, g, &name, &err) == -1) {
		fail("group_name", &err);
		return (0);
	}
	if (id == NULL)
		return (name.number == number && name.id == NULL);
	return (name.number == number && name.id != NULL &&
	    name.id_len == strlen(id) && memcmp(name.id, id, name.id_len) == 0);
}

static int
commit_close(struct nsd_index *ix)
{
	struct nsd_error	 err;
	int			 rc;

	rc = nsd_index_commit(ix, 1, &err);
	if (rc == -1)
		fail("commit", &err);
	nsd_index_close(ix);
	return (rc == 0);
}

/* Groups, claims and lookups in one run, and what the next one finds. */
static void
check_claims(void)
{
	struct nsd_index_params	 p;
	struct nsd_error	 err;
	struct nsd_index	*ix;
	uint64_t		 a, b, c, d;
	int			 ok;

	params_of("", &p);
	if ((ix = open_index(&p, 0, &err)) == NULL) {
		fail("open", &err);
		tap_ok(0, "%s: groups and claims", where);
		return;
	}
	a = group(ix, "\"a\"", NULL);
	b = group(ix, "\"b\"", NULL);
	c = group(ix, "", NULL);
	ok = a != 0 && b > a && c > b && named(ix, a, 1, "\"a\"") &&
	    named(ix, b, 2, "\"b\"") && named(ix, c, 3, NULL);
	tap_ok(ok, "%s: groups are numbered from 1 and named by their ids",
	    where);
	ok = claim(ix, 101, a) == 0 && claim(ix, 101, b) == a &&
	    claim(ix, 102, b) == 0 && claim(ix, 102, a) == b &&
	    holder(ix, 101) == a && holder(ix, 102) == b &&
	    holder(ix, 103) == 0;
	tap_ok(ok, "%s: the first claim wins, a later claim is answered the "
	    "holder, and a lookup finds it", where);
	ok = commit_close(ix);
	if (kind == KIND_MEMORY)
		return;
	if ((ix = open_index(&p, 0, &err)) == NULL) {
		fail("reopen", &err);
		ok = 0;
	} else {
		d = group(ix, "\"d\"", NULL);
		ok = ok && holder(ix, 101) == a && holder(ix, 102) == b &&
		    named(ix, a, 1, "\"a\"") && d > c &&
		    named(ix, d, 4, "\"d\"");
		ok = commit_close(ix) && ok;
	}
	tap_ok(ok, "%s: the next run finds what a run committed, and its "
	    "groups go on from the last", where);
}

/*
 * Two writers at once. A file index has one: the second is refused as
 * busy. On Redis both run, and the same key claimed in both batches goes
 * to the one that writes first; the other's settle reports the conflict
 * (its group, the winner's, the key), and it finds the winner after.
 */
static void
check_race(void)
{
	const struct nsd_index_conflict	*c;
	struct nsd_index_params	 p;
	struct nsd_error	 err;
	struct nsd_index	*one, *two;
	uint64_t		 g1, g2, held1, held2;
	size_t			 n1 = 0, n2 = 0;
	int			 ok = 0;

	params_of("", &p);
	if ((one = open_index(&p, 0, &err)) == NULL) {
		fail("open the first writer", &err);
		tap_ok(0, "%s: two writers at once", where);
		return;
	}
	two = open_waiting(&p, 0, 0, &err);
	if (kind == KIND_FILE) {
		ok = two == NULL && err.status == NSD_EXIT_BUSY;
		if (two != NULL)
			nsd_index_close(two);
		nsd_index_close(one);
		tap_ok(ok, "%s: a second writer is refused as busy", where);
		return;
	}
	if (two == NULL) {
		fail("open the second writer", &err);
		nsd_index_close(one);
		tap_ok(0, "%s: two writers at once", where);
		return;
	}
	nsd_index_begin_batch(one);
	nsd_index_begin_batch(two);
	if (nsd_index_group_new_signed(one, "\"r1\"", 4, blank_sig(one), &g1,
	    &err) == 0 && nsd_index_group_new_signed(two, "\"r2\"", 4,
	    blank_sig(two), &g2, &err) == 0 &&
	    nsd_index_claim(one, 401, g1, &held1, &err) == 0 &&
	    nsd_index_claim(two, 401, g2, &held2, &err) == 0 &&
	    nsd_index_settle(one, &c, &n1, &err) == 0) {
		ok = held1 == 0 && held2 == 0 && n1 == 0;
		if (nsd_index_settle(two, &c, &n2, &err) == 0)
			ok = ok && n2 == 1 && c[0].ours == g2 &&
			    c[0].theirs == g1 && c[0].key == 401 &&
			    holder(two, 401) == g1;
		else
			ok = 0;
	}
	if (!ok)
		fail("race", &err);
	ok = commit_close(one) && ok;
	ok = commit_close(two) && ok;
	tap_ok(ok, "%s: of two writers claiming one key, the first to write "
	    "wins, and the other's settle says so", where);
}

/* A --no-update run, and (file) a run that does not commit. */
static void
check_no_update(void)
{
	struct nsd_index_params	 p;
	struct nsd_error	 err;
	struct nsd_index	*ix;
	uint64_t		 g;
	int			 ok = 0;

	params_of("", &p);
	if ((ix = open_index(&p, 1, &err)) != NULL) {
		g = group(ix, "\"e\"", NULL);
		ok = g != 0 && claim(ix, 201, g) == 0 &&
		    holder(ix, 201) == g && holder(ix, 101) != 0;
		nsd_index_close(ix);
	} else
		fail("open --no-update", &err);
	if (ok && (ix = open_index(&p, 0, &err)) != NULL) {
		ok = holder(ix, 201) == 0;
		nsd_index_close(ix);
	}
	tap_ok(ok, "%s: a --no-update run sees its own claims and leaves "
	    "nothing", where);
	if (kind != KIND_FILE)
		return;
	ok = 0;
	if ((ix = open_index(&p, 0, &err)) != NULL) {
		g = group(ix, "\"f\"", NULL);
		ok = claim(ix, 301, g) == 0 && holder(ix, 301) == g;
		nsd_index_close(ix);	/* no commit */
	}
	if (ok && (ix = open_index(&p, 0, &err)) != NULL) {
		ok = holder(ix, 301) == 0 && group(ix, "\"g\"", NULL) != 0;
		nsd_index_close(ix);
	}
	tap_ok(ok, "%s: a run that does not commit leaves nothing", where);
}

/* Other parameters refused; an older normalization version opened. */
static void
check_params(void)
{
	struct nsd_index_params	 p, old;
	struct nsd_error	 err;
	struct nsd_index	*ix;
	int			 ok;

	params_of("-n 3", &p);
	ix = open_index(&p, 0, &err);
	ok = ix == NULL && err.status == NSD_EXIT_INDEX;
	nsd_index_close(ix);
	params_of("-m simhash", &p);
	ix = open_index(&p, 0, &err);
	ok = ok && ix == NULL && err.status == NSD_EXIT_INDEX;
	nsd_index_close(ix);
	tap_ok(ok, "%s: an index made with other parameters is refused",
	    where);

	/*
	 * Another MinHash layout: one of 128 bins is opened with its own
	 * (what the run fingerprints by), one of bins that are no power of
	 * two is refused.
	 */
	place("layout");
	params_of("-m minhash", &old);
	old.sig_bytes += 2 * (128 - (size_t)old.bins);
	old.bins = 128;
	old.bands = 42;
	old.rows = 3;
	ok = (ix = open_index(&old, 0, &err)) != NULL && commit_close(ix);
	params_of("-m minhash", &p);
	ok = ok && p.bins < 128 && (ix = open_index(&p, 0, &err)) != NULL &&
	    ix->params.bins == 128 && ix->params.bands == 42 &&
	    ix->params.rows == 3 && ix->params.sig_bytes == old.sig_bytes;
	if (!ok)
		fail("another MinHash layout", &err);
	else
		ok = commit_close(ix);
	place("layout-48");
	old.sig_bytes -= 2 * (128 - 48);
	old.bins = 48;
	old.bands = 16;
	ok = ok && (ix = open_index(&old, 0, &err)) != NULL &&
	    commit_close(ix);
	ix = ok ? open_index(&p, 0, &err) : NULL;
	ok = ok && ix == NULL && err.status == NSD_EXIT_INDEX &&
	    strstr(err.msg, "MinHash bins 48, not ") != NULL;
	nsd_index_close(ix);
	place("layout");
	tap_ok(ok, "%s: an index of another MinHash layout is used with it, "
	    "one of 48 bins refused", where);
	if (NSD_NORM_OLDEST == NSD_NORM_VERSION)
		return;
	/* A new index of the oldest version, then a run of the newest. */
	place("norm");
	params_of("-m minhash", &old);
	old.norm_version = NSD_NORM_OLDEST;
	ok = (ix = open_index(&old, 0, &err)) != NULL && commit_close(ix);
	params_of("-m minhash", &p);
	ok = ok && (ix = open_index(&p, 0, &err)) != NULL &&
	    ix->params.norm_version == NSD_NORM_OLDEST;
	if (!ok)
		fail("an older normalization version", &err);
	else
		ok = commit_close(ix);
	tap_ok(ok, "%s: an index of normalization version %d is opened by "
	    "version %d, and keeps its version", where, NSD_NORM_OLDEST,
	    NSD_NORM_VERSION);
}

/* MinHash's signatures and SimHash's distances, in indexes of their own. */
static void
check_methods(void)
{
	struct nsd_index_params	 p;
	struct nsd_index_near	 near;
	struct nsd_error	 err;
	struct nsd_index	*ix;
	const unsigned char	*got;
	unsigned char		 sig[512];
	uint64_t		 a, b;
	size_t			 i;
	int			 ok = 0;

	place("minhash");
	params_of("-m minhash --threshold 0.8", &p);
	for (i = 0; i < sizeof sig; i++)
		sig[i] = (unsigned char)(i * 7 + 3);
	if ((ix = open_index(&p, 0, &err)) != NULL) {
		a = group(ix, "\"s\"", sig);
		ok = a != 0 && p.sig_bytes <= sizeof sig &&
		    nsd_index_group_signature(ix, a, &got, &err) == 0 &&
		    memcmp(got, sig, p.sig_bytes) == 0;
		ok = commit_close(ix) && ok;
	} else
		fail("open minhash", &err);
	tap_ok(ok, "%s: a MinHash group keeps its first record's signature",
	    where);

	ok = 0;
	place("simhash");
	params_of("-m simhash --distance 3", &p);
	if ((ix = open_index(&p, 0, &err)) != NULL) {
		a = group(ix, "\"t\"", NULL);
		b = group(ix, "\"u\"", NULL);
		nsd_index_begin_batch(ix);
		ok = nsd_index_add(ix, 0xf0f0f0f0f0f0f0f0ULL, a, &err) == 0 &&
		    nsd_index_add(ix, 0xf0f0f0f0f0f0f0f3ULL, b, &err) == 0 &&
		    nsd_index_near(ix, 0xf0f0f0f0f0f0f0f1ULL, 3, &near,
		    &err) == 0 && near.group == a && near.distance == 1 &&
		    nsd_index_near(ix, 0x0f0f0f0f0f0f0f0fULL, 3, &near,
		    &err) == 0 && near.group == 0;
		ok = commit_close(ix) && ok;
	} else
		fail("open simhash", &err);
	tap_ok(ok, "%s: SimHash finds the oldest group within the distance, "
	    "and none beyond it", where);
}

int
main(int argc, char **argv)
{
	static char	*fallback[] = { (char *)"memory", (char *)"file" };
	char		**targets = fallback;
	char		  dir[] = "/tmp/nsd-contract-XXXXXX", cmd[64];
	int		  i, n = 2;

	if (argc > 1) {
		targets = argv + 1;
		n = argc - 1;
	}
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	for (i = 0; i < n; i++) {
		target = targets[i];
		kind = strcmp(target, "memory") == 0 ? KIND_MEMORY :
		    nsd_index_is_redis(target) ? KIND_REDIS : KIND_FILE;
		if (kind == KIND_FILE)
			target = dir;
		place("main");
		check_claims();
		if (kind != KIND_MEMORY) {
			place("main");
			check_no_update();
			check_race();
			check_params();
		}
		check_methods();
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return (tap_done());
}
