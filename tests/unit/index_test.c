/*
 * index_test.c: the file index, against a model of what it must hold.
 *
 * First, runs of random sizes, committed or given up (closed without a
 * commit, as a run that fails), over one index: after each, every
 * fingerprint a committed run claimed first is found with its group,
 * none that only a failed run claimed is found, and --db-verify finds no
 * problem. The sizes take the index through folds before a run and in
 * the middle of one, sweeps, growth (and its rename in the middle of a
 * run) and bulk loads, each committed or not. Now and then the last runs
 * are taken back (--db-undo): each undo that succeeds must leave what the
 * model held before the run, every fingerprint of it found and none that
 * only the run added, and one that is refused must change nothing.
 *
 * Then the rebuild with the log, on fingerprints chosen for where they
 * land in the table.
 *
 * The rebuild writes the table in one pass and places the log's entries
 * on their probe chains, committed ones before the run's. An entry whose
 * chain runs past the table's last bucket wraps around to the first ones,
 * where the run's entries may already sit: were a committed entry placed
 * after one of them, clearing the run's entries after a failure would
 * cut the committed entry off its home. This test makes exactly that
 * layout, fails the run, and looks the committed entries up again.
 *
 * Last, the checks of format version 5: the slots' check against a plain
 * xor of their bytes, every changed byte and flipped bit of a slot found, the
 * slot words of older versions read as version 5's, and the group records'
 * checksum.
 *
 * It makes its index in a new directory of $TMPDIR (or /tmp), removed
 * at the end.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index.h"
#include "index_format.h"
#include "tap.h"

#define SLOTS		4096		/* a new index's table */
#define SHIFT		(64 - 12)
#define PHI		0x9E3779B97F4A7C15ULL

/* The inverse of PHI modulo 2^64 (Newton's iteration doubles the bits). */
static uint64_t
phi_inverse(void)
{
	uint64_t	 x = PHI;
	int		 i;

	for (i = 0; i < 6; i++)
		x *= 2 - PHI * x;
	return (x);
}

/* A fingerprint whose home (nshash, table 0) is slot s; n tells apart. */
static uint64_t
key_at(uint64_t s, uint64_t n)
{
	return ((s << SHIFT | n) * phi_inverse());
}

static const struct nsd_index_params params = {
	.method = "nshash", .sentences = 5, .min_length = 10,
	.norm_version = 1, .ntables = 1, .masks = { ~0ULL }
};

static struct nsd_index *
open_index(const char *path)
{
	struct nsd_index_open	 o = { path, 0, -1, 0, 0 };
	struct nsd_index	*ix;
	struct nsd_error	 err;

	if (nsd_index_open_file(&ix, &o, &params, &err) == -1) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
	return (ix);
}

static void
problem(void *ctx, const char *what)
{
	(void)ctx;
	printf("# %s\n", what);
}

/* What the committed runs claimed first: a key and its group. */
struct claimed {
	uint64_t	 key;
	uint64_t	 group;
};

static int
claimed_cmp(const void *a, const void *b)
{
	const struct claimed	*x = a, *y = b;

	return (x->key < y->key ? -1 : x->key > y->key);
}

static uint64_t	 rng = 0x243F6A8885A308D3ULL;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng);
}

#define RUNS	40

/* The model before each of the last committed runs, for their undo. */
struct saved {
	struct claimed	*model;
	uint64_t	 n;
};

/*
 * Take back the last committed run, if --db-undo can, and check the index
 * against the model before it (the top of stack[*depth]): every key found
 * with its group, and no key of the model after it that is not in that.
 * *model and *nmodel become it. Returns whether every check held.
 */
static int
check_undo(const char *path, struct claimed **model, uint64_t *nmodel,
    struct saved *stack, size_t *depth, int *undone)
{
	struct nsd_index_report	 report;
	struct nsd_index_undone	 u;
	struct nsd_index	*ix;
	struct nsd_error	 err;
	struct claimed		*before;
	uint64_t		 i, found, nbefore, problems = 0;
	uint64_t		 lost = 0, wrong = 0, ghosts = 0;
	int			 ok = 1;

	if (nsd_index_undo(path, -1, &u, &err) == -1) {
		/* Refused: nothing changes, and the model stands. */
		if (err.status != NSD_EXIT_INDEX)
			printf("# undo: %s\n", err.msg);
		while (*depth > 0)
			free(stack[--*depth].model);
		return (err.status == NSD_EXIT_INDEX);
	}
	if (*depth == 0) {
		printf("# undo took back a run the model did not keep\n");
		return (0);
	}
	(*undone)++;
	before = stack[*depth - 1].model;
	nbefore = stack[--*depth].n;
	ix = open_index(path);
	for (i = 0; i < nbefore; i++) {
		found = 0;
		ok &= nsd_index_lookup(ix, before[i].key, &found, &err) == 0;
		lost += found == 0;
		wrong += found != 0 && found != before[i].group;
	}
	for (i = 0; i < *nmodel; i++) {
		if (bsearch(&(*model)[i], before, nbefore, sizeof *before,
		    claimed_cmp) != NULL)
			continue;
		found = 0;
		ok &= nsd_index_lookup(ix, (*model)[i].key, &found, &err) == 0;
		ghosts += found != 0;
	}
	nsd_index_close(ix);
	ok &= nsd_index_verify(path, -1, problem, NULL, 10, &report,
	    &problems, &err) == 0 && problems == 0;
	ok &= lost == 0 && wrong == 0 && ghosts == 0;
	if (!ok)
		printf("# undo: %llu lost, %llu wrong, %llu of the run taken "
		    "back found, %llu problems\n", (unsigned long long)lost,
		    (unsigned long long)wrong, (unsigned long long)ghosts,
		    (unsigned long long)problems);
	free(*model);
	*model = before;
	*nmodel = nbefore;
	return (ok);
}

/*
 * Run after run over path; returns whether every check held. The model is
 * a sorted array of what committed runs claimed first.
 */
static int
check_model(const char *path)
{
	struct nsd_index_report	 report;
	struct nsd_index	*ix;
	struct nsd_error	 err;
	struct claimed		*model = NULL, *run = NULL, probe, *hit;
	struct saved		 stack[NSD_INDEX_UNDO_MAX];
	uint64_t		 nmodel = 0, nrun, size, i, g[8], found;
	uint64_t		 problems, lost = 0, wrong = 0, ghosts = 0;
	size_t			 depth = 0;
	int			 r, commit, ok = 1, undone = 0;

	for (r = 0; r < RUNS && ok; r++) {
		size = rnd() % 10 == 0 ? 50000 + rnd() % 100000 :
		    rnd() % 4 == 0 ? 3000 + rnd() % 40000 : 1 + rnd() % 3000;
		commit = rnd() % 4 != 0 || r == RUNS - 1;
		ix = open_index(path);
		for (i = 0; i < 8; i++)
			ok &= nsd_index_group_new(ix, "", 0, &g[i], &err) == 0;
		run = xreallocarray(run, size, sizeof *run);
		for (i = 0, nrun = 0; i < size && ok; i++) {
			/* Now and then a key committed before: kept as is. */
			if (nmodel > 0 && rnd() % 10 == 0)
				probe.key = model[rnd() % nmodel].key;
			else
				probe.key = rnd();
			probe.group = g[i % 8];
			ok &= nsd_index_claim(ix, probe.key, probe.group, NULL,
			    &err) == 0;
			run[nrun++] = probe;
		}
		if (commit)
			ok &= nsd_index_commit(ix, size, &err) == 0;
		if (!ok)
			printf("# run %d: %s\n", r, err.msg);
		nsd_index_close(ix);
		if (commit) {
			/* The model before it, for its undo. */
			if (depth == NSD_INDEX_UNDO_MAX) {
				free(stack[0].model);
				memmove(stack, stack + 1, --depth *
				    sizeof *stack);
			}
			stack[depth].model = xreallocarray(NULL, nmodel + 1,
			    sizeof *model);
			if (nmodel > 0)
				memcpy(stack[depth].model, model, nmodel *
				    sizeof *model);
			stack[depth++].n = nmodel;
			/* First claim wins: only keys new to the model. */
			model = xreallocarray(model, nmodel + nrun,
			    sizeof *model);
			for (i = 0, size = nmodel; i < nrun; i++)
				if (bsearch(&run[i], model, nmodel,
				    sizeof *model, claimed_cmp) == NULL)
					model[size++] = run[i];
			nmodel = size;
			qsort(model, nmodel, sizeof *model, claimed_cmp);
		}
		ix = open_index(path);
		for (i = 0; i < nmodel; i++) {
			found = 0;
			ok &= nsd_index_lookup(ix, model[i].key, &found,
			    &err) == 0;
			lost += found == 0;
			wrong += found != 0 && found != model[i].group;
		}
		for (i = 0; !commit && i < nrun; i++) {
			hit = bsearch(&run[i], model, nmodel, sizeof *model,
			    claimed_cmp);
			found = 0;
			ok &= nsd_index_lookup(ix, run[i].key, &found,
			    &err) == 0;
			ghosts += hit == NULL && found != 0;
		}
		nsd_index_close(ix);
		problems = 0;
		ok &= nsd_index_verify(path, -1, problem, NULL, 10, &report,
		    &problems, &err) == 0 && problems == 0;
		ok &= lost == 0 && wrong == 0 && ghosts == 0;
		if (!ok)
			printf("# run %d (%s, %llu claims): %llu lost, %llu "
			    "wrong, %llu of a failed run found, %llu "
			    "problems\n", r, commit ? "committed" : "failed",
			    (unsigned long long)nrun, (unsigned long long)lost,
			    (unsigned long long)wrong,
			    (unsigned long long)ghosts,
			    (unsigned long long)problems);
		/* Now and then, take back the last run or two. */
		if (ok && commit && r < RUNS - 1 && rnd() % 3 == 0) {
			ok &= check_undo(path, &model, &nmodel, stack, &depth,
			    &undone);
			if (ok && rnd() % 2 == 0)
				ok &= check_undo(path, &model, &nmodel, stack,
				    &depth, &undone);
		}
	}
	printf("# %d runs, %llu fingerprints committed, %d taken back; the "
	    "table of %llu slots, stage build %llu\n", r,
	    (unsigned long long)nmodel, undone,
	    (unsigned long long)report.slots,
	    (unsigned long long)report.stage_build);
	while (depth > 0)
		free(stack[--depth].model);
	free(model);
	free(run);
	return (ok && undone > 0);
}

/* Remove the files of the index at path. */
static void
remove_index(const char *path)
{
	static const char *const suffix[] = { "", ".ids", ".log", ".lock",
	    ".new", ".stage", ".stage.new", ".next", ".undo" };
	char		 name[4200];
	size_t		 i;

	for (i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		snprintf(name, sizeof name, "%s%s", path, suffix[i]);
		(void)unlink(name);
	}
}

/* The xor of n bytes at p, one at a time. */
static unsigned
parity(const unsigned char *p, size_t n)
{
	unsigned	 c = 0;

	while (n-- > 0)
		c ^= *p++;
	return (c);
}

/* A random 64-bit number from a xorshift state. */
static uint64_t
next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (*state);
}

/* The checks of slots and group records, in format version 5. */
static void
check_checks(void)
{
	unsigned char	 slot[NSD_INDEX_SLOT_SIZE], bad[NSD_INDEX_SLOT_SIZE];
	unsigned char	 rec[64];
	uint64_t	 state = 0x243F6A8885A308D3ULL, key, meta, k, m, v4;
	uint32_t	 sum;
	int		 i, j, v, ok_sum = 1, ok_byte = 1, ok_bit = 1;
	int		 ok_ids = 1;

	for (i = 0; i < 2000; i++) {
		key = next_random(&state);
		meta = nsd_slot_meta(1 + next_random(&state) %
		    NSD_INDEX_GEN_MAX, next_random(&state) % 16, 2 +
		    next_random(&state) % (NSD_INDEX_GROUP_MAX - 1));
		nsd_slot_put(slot, key, meta);
		ok_sum &= slot[15] == parity(slot, 15) &&
		    nsd_slot_get(slot, 0, &k, &m) == NSD_SLOT_FULL &&
		    k == key && m == meta;
		if (i >= 200)
			continue;
		for (j = 0; j < NSD_INDEX_SLOT_SIZE; j++) {
			for (v = 1; v < 256; v++) {
				memcpy(bad, slot, sizeof bad);
				bad[j] ^= v;
				ok_byte &= nsd_slot_get(bad, 0, &k, &m) ==
				    NSD_SLOT_DAMAGED;
			}
		}
	}
	tap_ok(ok_sum, "a slot's check is the xor of its other 15 bytes, and "
	    "reads back what was put");
	tap_ok(ok_byte, "every change of one byte of a slot fails its check");
	for (j = 0; j < 8 * NSD_INDEX_SLOT_SIZE; j++) {
		memcpy(bad, slot, sizeof bad);
		bad[j / 8] ^= 1 << j % 8;
		ok_bit &= nsd_slot_get(bad, 0, &k, &m) == NSD_SLOT_DAMAGED;
	}
	memset(bad, 0, sizeof bad);
	bad[9] = 1;
	tap_ok(ok_bit && nsd_slot_get(bad, 0, &k, &m) == NSD_SLOT_DAMAGED,
	    "every flipped bit fails it too, and so does a lone bit in an "
	    "empty slot");

	/* Version 4: generation 5, table 3, group 77; no check. */
	v4 = 5 | 3ULL << 24 | 77ULL << 28;
	nsd_put_le64(bad, 42);
	nsd_put_le64(bad + 8, v4);
	tap_ok(nsd_slot_get(bad, 1, &k, &m) == NSD_SLOT_FULL && k == 42 &&
	    m == nsd_slot_meta(5, 3, 77) && nsd_slot_get(bad, 0, &k, &m) ==
	    NSD_SLOT_DAMAGED, "a version 4 slot word reads as version 5's, "
	    "and fails the check of version 5");

	/* A group record: number 7, id "ab", no signature, at group 20. */
	memset(rec, 0, sizeof rec);
	nsd_put_le32(rec, 7);
	nsd_put_le32(rec + 8, 4);
	memcpy(rec + 12, "\"ab\"", 4);
	sum = nsd_ids_record_sum(rec, 20, 0);
	for (j = 0; j < 16; j++) {
		if (j >= 4 && j < 8)
			continue;	/* the checksum itself */
		for (v = 1; v < 256; v++) {
			rec[j] ^= v;
			if (nsd_le32(rec + 8) == 4)
				ok_ids &= nsd_ids_record_sum(rec, 20, 0) != sum;
			rec[j] ^= v;
		}
	}
	tap_ok(ok_ids && nsd_ids_record_sum(rec, 21, 0) != sum,
	    "a group record's checksum changes with each of its bytes and "
	    "with its place");
}

/*
 * Which builds of the stage a header that names another is read with: the
 * next one, left by a fold cut short after its rename, and no other.
 */
static void
check_stage_rule(void)
{
	struct nsd_index_header	 h;
	struct nsd_stage_header	 sh;
	int			 ok;

	memset(&h, 0, sizeof h);
	memset(&sh, 0, sizeof sh);
	h.committed_gen = h.pending_gen = 4;
	h.sweep_cursor = sh.fold_cursor = 12345;
	h.stage_seq = 3;
	sh.seq = 4;
	sh.max_gen = 4;
	ok = nsd_stage_is_next(&h, &sh);
	sh.seq = 5;
	ok &= !nsd_stage_is_next(&h, &sh);
	sh.seq = 4;
	sh.fold_cursor = 1;
	ok &= !nsd_stage_is_next(&h, &sh);
	tap_ok(ok, "the build after the one named, made at the header's cursor,"
	    " is a fold cut short; another build or cursor is not");

	/* The first build: it took in the log, or held only the run's. */
	h.stage_seq = 0;
	sh.seq = 1;
	sh.fold_cursor = h.sweep_cursor;
	sh.reserved[0] = 1;
	h.log_records = 10;
	ok = nsd_stage_is_next(&h, &sh);
	h.log_records = 0;
	ok &= !nsd_stage_is_next(&h, &sh);
	h.pending_gen = 5;
	sh.max_gen = 5;
	ok &= nsd_stage_is_next(&h, &sh);
	sh.reserved[0] = 0;
	ok &= !nsd_stage_is_next(&h, &sh);
	tap_ok(ok, "a first build is one when it took in a log the header "
	    "counts, or one that held only the entries of the run that made "
	    "it, which the header does not");
}

int
main(void)
{
	struct nsd_index_report	 report;
	struct nsd_index	*ix;
	struct nsd_error	 err;
	uint64_t		 g, found, problems = 0, last[5], first[3];
	char			 dir[4096], path[4200];
	const char		*tmp = getenv("TMPDIR");
	int			 i, ok;

	snprintf(dir, sizeof dir, "%s/nsd-index-test.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		printf("Bail out! cannot make a directory in %s\n", dir);
		return (1);
	}
	snprintf(path, sizeof path, "%s/model.nsd", dir);
	tap_ok(check_model(path), "runs committed and failed: the index holds "
	    "what the committed ones claimed first, and verifies");
	remove_index(path);

	snprintf(path, sizeof path, "%s/wrap.nsd", dir);
	for (i = 0; i < 5; i++)
		last[i] = key_at(SLOTS - 4 + i % 4, i + 1);
	for (i = 0; i < 3; i++)
		first[i] = key_at(i, i + 1);

	/*
	 * Run 1 commits, into the log: five entries homed in the last bucket,
	 * of which the rebuild can place four there, and three in the first.
	 */
	ix = open_index(path);
	ok = nsd_index_group_new(ix, "", 0, &g, &err) == 0;
	for (i = 0; i < 5; i++)
		ok &= nsd_index_claim(ix, last[i], g, NULL, &err) == 0;
	for (i = 0; i < 3; i++)
		ok &= nsd_index_claim(ix, first[i], g, NULL, &err) == 0;
	ok &= nsd_index_commit(ix, 1, &err) == 0;
	nsd_index_close(ix);
	tap_ok(ok, "run 1 commits eight entries to the log");

	/*
	 * Run 2 adds one entry homed in the first bucket, which takes its
	 * last slot, and enough others (homed in the middle) to fill the log,
	 * so that the table is rebuilt; then it fails.
	 */
	ix = open_index(path);
	ok = nsd_index_group_new(ix, "", 0, &g, &err) == 0;
	ok &= nsd_index_claim(ix, key_at(1, 99), g, NULL, &err) == 0;
	for (i = 0; i < 600; i++)
		ok &= nsd_index_claim(ix, key_at(1000 + 3 * i, 7), g,
		    NULL, &err) == 0;
	nsd_index_close(ix);
	tap_ok(ok, "run 2 fills the log, and the table is rebuilt");

	/* Run 3 clears what run 2 left, and finds every committed entry. */
	ix = open_index(path);
	ok = 1;
	for (i = 0; i < 5; i++) {
		found = 0;
		ok &= nsd_index_lookup(ix, last[i], &found, &err) == 0 &&
		    found != 0;
	}
	tap_ok(ok, "every entry of the last bucket's chain is found, also "
	    "the one that wrapped around past the run's entry");
	ok = 1;
	for (i = 0; i < 3; i++) {
		found = 0;
		ok &= nsd_index_lookup(ix, first[i], &found, &err) == 0 &&
		    found != 0;
	}
	found = 1;
	ok &= nsd_index_lookup(ix, key_at(1, 99), &found, &err) == 0 &&
	    found == 0;
	tap_ok(ok, "the first bucket's committed entries are found, the "
	    "failed run's is not");
	nsd_index_close(ix);
	ok = nsd_index_verify(path, -1, problem, NULL, 10, &report,
	    &problems, &err) == 0 && problems == 0;
	tap_ok(ok, "--db-verify finds no problem");
	remove_index(path);
	(void)rmdir(dir);
	check_checks();
	check_stage_rule();
	return (tap_done());
}
