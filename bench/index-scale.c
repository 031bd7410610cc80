/*
 * index-scale.c: build a file index to a given size from simulated records,
 * and report how fast lookups and inserts go, and how much of the process's
 * own memory is used, as the index grows.
 *
 * Each simulated record has a few pseudo-random 64-bit fingerprints, made
 * from the record's number by splitmix64's finalizer (a bijection, so no
 * two are equal and the index ends with exactly records * fps of them).
 * Records are decided in batches, as the pipeline's stage 3 does: every
 * fingerprint of the batch is prefetched, then each record looks its
 * fingerprints up, opens a group named "rec-N" when none matched, and
 * claims them all. The index is committed every so many records (a nightly
 * run) and at the end.
 *
 * One line per slice of records: the rate over that slice (growth of the
 * table included, commits not), the time growth took in it, the commit at
 * its end, and the largest RssAnon read from /proc/self/status in it
 * (every 65536 records and after each growth). Then the file sizes.
 *
 * With -m simhash, each record has one 64-bit SimHash instead, looked up
 * with nsd_index_near() in the block tables of nsd_simhash_tables() for
 * nsdedup's default distance (or -k K) and entered with nsd_index_add(),
 * as the pipeline does (an exact match adds nothing), a batch at a time
 * with every SimHash of the batch prefetched first. A share of the
 * records (-d RATE, default 0.2) are near-copies: the SimHash of one of
 * the 1024 records before, with 1 to K of its bits flipped, which the
 * lookup must find; the others are pseudo-random. Each line then adds the
 * mean number of candidates (entries compared) per lookup, and how many of
 * the slice's near-copies were found. Random fingerprints are the best
 * case for the block tables: real texts' SimHashes cluster, and meet more
 * candidates (nsdedup --stats tells how many).
 *
 * With -m minhash, each record is a set of -F FEATURES (default 300)
 * pseudo-random feature hashes, from which nsd_minhash_compute() makes its
 * signature and band keys with the layout nsdedup --method minhash gives
 * the default --threshold, as the method does: the groups holding any of
 * its band keys are its candidates, compared oldest first by signature
 * against the threshold; a record that matches none opens a group, which
 * keeps its signature (and a sketch's room, zeros), and claims the band
 * keys no group holds yet. A share of the records (-d RATE) are
 * near-copies of one of the 1024 records before: the features of that
 * record's original, with 5% to 25% of them replaced by new ones (Jaccard
 * similarity 0.6 to 0.9), which the lookup should find. Each line adds
 * the candidates per lookup, the near-copies and how many were found.
 *
 * Every line ends with the bytes of all the index's files (PATH, PATH.ids,
 * PATH.log, PATH.stage, PATH.next, PATH.filter, PATH.undo) per group, an
 * original, once the slice is done; the end gives each file's size.
 *
 * The index is opened with nsdedup's default fingerprint parameters, so
 * that nsdedup --db (-m simhash, -m minhash) can run against it
 * afterwards.
 *
 * Usage: nsd-index-scale [-M] [-b BATCH] [-c COMMIT] [-d RATE] [-F FEATURES]
 *            [-f FPS] [-k K] [-m METHOD] [-n RECORDS] [-S SEED] [-s SLICE]
 *            PATH
 */
#include "config.h"

#include <sys/stat.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "index.h"
#include "method.h"
#include "minhash.h"
#include "options.h"
#include "pipeline.h"
#include "simhash.h"

#define MAX_FPS		64
#define MAX_FEATURES	4096
#define MAX_BATCH	(1 << 20)
#define RSS_EVERY	65536

struct totals {
	const char	*path;
	uint64_t	 lookups;	/* SimHash, in the current slice */
	uint64_t	 candidates;
	uint64_t	 copies;	/* near-copies made */
	uint64_t	 found;		/* and found in their group */
	uint64_t	 table_size;	/* bytes of PATH */
	double		 grow_s;	/* in the current slice */
	uint64_t	 grows;
	uint64_t	 rss_max;	/* KiB, in the current slice */
	uint64_t	 rss_peak;	/* KiB, over the whole run */
};

/* Print the synopsis and exit with status. */
static void
usage(int status)
{
	fputs("usage: nsd-index-scale [-M] [-b BATCH] [-c COMMIT] [-d RATE] "
	    "[-F FEATURES]\n"
	    "           [-f FPS] [-k K] [-m METHOD] [-n RECORDS] [-S SEED] "
	    "[-s SLICE]\n"
	    "           PATH\n", status == 0 ? stdout : stderr);
	exit(status);
}

/* Fingerprint k of record r: splitmix64's output function of r, k. */
static uint64_t
fingerprint(uint64_t seed, uint64_t r, unsigned fps, unsigned k)
{
	return (bench_mix64(seed + (r * fps + k + 1) * 0x9E3779B97F4A7C15ULL));
}

/* Seconds on the monotonic clock. */
static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec + ts.tv_nsec / 1e9);
}

/* This process's anonymous resident memory in KiB, from /proc. */
static uint64_t
rss_anon(void)
{
	char		 line[256];
	FILE		*f;
	uint64_t	 kib = 0;

	if ((f = fopen("/proc/self/status", "r")) == NULL)
		return (0);
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "RssAnon: %" SCNu64, &kib) == 1)
			break;
	fclose(f);
	return (kib);
}

/* Read RssAnon into the slice's and the run's maxima. */
static void
sample_rss(struct totals *t)
{
	uint64_t	 kib = rss_anon();

	if (kib > t->rss_max)
		t->rss_max = kib;
	if (kib > t->rss_peak)
		t->rss_peak = kib;
}

/*
 * What a new group keeps: a signature (MinHash), then a sketch's room,
 * left zero.
 */
static unsigned char	kept[NSD_MINHASH_SIG_BYTES + NSD_SKETCH_BYTES];

/* Report a failed index call and exit 1. */
static void
die(const struct nsd_error *err)
{
	fprintf(stderr, "nsd-index-scale: %s\n", err->msg);
	exit(1);
}

/* The size of a file, or 0 when it cannot be read. */
static uint64_t
file_size(const char *path)
{
	struct stat	 sb;

	return (stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0);
}

/* The bytes of all the index's files at path. */
static uint64_t
index_bytes(const char *path)
{
	static const char *const suffix[] = {
		"", ".ids", ".log", ".stage", ".next", ".filter", ".undo"
	};
	char		 name[4096];
	uint64_t	 sum = 0;
	size_t		 i;

	for (i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		snprintf(name, sizeof name, "%s%s", path, suffix[i]);
		sum += file_size(name);
	}
	return (sum);
}

/*
 * After record r, begun at t0: when the index's mapping changed, the table
 * (or only the id file) grew, and a grown table's time counts as growth.
 */
static void
after_record(struct nsd_index *ix, struct totals *t, uint64_t r,
    uint64_t *mapped, double t0)
{
	struct nsd_index_info	 info;

	nsd_index_info(ix, &info);
	if (info.mapped != *mapped) {
		*mapped = info.mapped;
		if (t->path != NULL && file_size(t->path) != t->table_size) {
			t->grow_s += now() - t0;
			t->grows++;
			t->table_size = file_size(t->path);
		}
		sample_rss(t);
	}
	if (r % RSS_EVERY == 0)
		sample_rss(t);
}

/* Decide records [from, to), as stage 3 of the pipeline does. */
static void
decide(struct nsd_index *ix, uint64_t seed, unsigned fps, uint64_t from,
    uint64_t to, struct totals *t)
{
	struct nsd_index_info	 info;
	struct nsd_error	 err;
	uint64_t		 r, g, best, fp[MAX_FPS], mapped;
	char			 id[40];
	double			 t0;
	unsigned		 k;
	int			 len;

	for (r = from; r < to; r++)
		for (k = 0; k < fps; k++)
			nsd_index_prefetch(ix, fingerprint(seed, r, fps, k));
	nsd_index_info(ix, &info);
	mapped = info.mapped;
	for (r = from; r < to; r++) {
		t0 = now();
		best = 0;
		for (k = 0; k < fps; k++) {
			fp[k] = fingerprint(seed, r, fps, k);
			if (nsd_index_lookup(ix, fp[k], &g, &err) == -1)
				die(&err);
			if (g != 0 && (best == 0 || g < best))
				best = g;
		}
		if (best == 0) {
			len = snprintf(id, sizeof id, "\"rec-%" PRIu64 "\"", r);
			if (nsd_index_group_new_signed(ix, id, len, kept, &best,
			    &err) == -1)
				die(&err);
		}
		for (k = 0; k < fps; k++)
			if (nsd_index_claim(ix, fp[k], best, NULL, &err) == -1)
				die(&err);
		after_record(ix, t, r, &mapped, t0);
	}
}

#define RING	1024

/* The SimHash records: what they make and what they remember. */
struct simhash_run {
	unsigned	 k;		/* the distance */
	double		 rate;		/* of near-copies */
	uint64_t	 ring[RING];	/* the last records' SimHashes */
};

/*
 * The SimHash of record r: pseudo-random or, for a share of the records,
 * a near-copy of one of the RING records before it, 1 to k distinct bits
 * away (*copy set). Deterministic in seed and r, given the records before.
 */
static uint64_t
simrecord(struct simhash_run *sr, uint64_t seed, uint64_t r, int *copy)
{
	uint64_t	 h, back, fp, flipped = 0, bit;
	unsigned	 flips, i;

	h = fingerprint(seed ^ 0x5348, r, 1, 0);
	*copy = r > 0 && sr->k > 0 &&
	    (double)(h >> 11) / 9007199254740992.0 < sr->rate;
	if (!*copy)
		fp = fingerprint(seed, r, 1, 0);
	else {
		back = 1 + (h & (RING - 1));
		if (back > r)
			back = r;
		fp = sr->ring[(r - back) % RING];
		flips = 1 + (unsigned)((h >> 10) % sr->k);
		for (i = 0; i < flips; i++) {
			bit = fingerprint(seed ^ 0xB17, r, sr->k, i) % 64;
			while ((flipped >> bit) & 1)
				bit = (bit + 1) % 64;
			flipped |= (uint64_t)1 << bit;
		}
		fp ^= flipped;
	}
	sr->ring[r % RING] = fp;
	return (fp);
}

/* A batch of SimHash records, made and prefetched before it is decided. */
static uint64_t	batch_fp[MAX_BATCH];
static char	batch_copy[MAX_BATCH];

/*
 * Decide records [from, to) by SimHash, as stage 3 of the pipeline does:
 * the oldest group within k bits, or a new one; the SimHash is entered in
 * the block tables unless it matched exactly.
 */
static void
decide_simhash(struct nsd_index *ix, struct simhash_run *sr, uint64_t seed,
    uint64_t from, uint64_t to, struct totals *t)
{
	struct nsd_index_info	 info;
	struct nsd_index_near	 near;
	struct nsd_error	 err;
	uint64_t		 r, g, fp, mapped;
	char			 id[40];
	double			 t0;
	int			 len, copy;

	/* The batch's SimHashes first, each prefetched, as the pipeline. */
	for (r = from; r < to; r++) {
		batch_fp[r - from] = simrecord(sr, seed, r, &copy);
		batch_copy[r - from] = (char)copy;
		nsd_index_prefetch(ix, batch_fp[r - from]);
	}
	nsd_index_info(ix, &info);
	mapped = info.mapped;
	for (r = from; r < to; r++) {
		t0 = now();
		fp = batch_fp[r - from];
		copy = batch_copy[r - from];
		if (nsd_index_near(ix, fp, sr->k, &near, &err) == -1)
			die(&err);
		t->lookups++;
		t->candidates += near.candidates;
		t->copies += copy;
		t->found += copy && near.group != 0;
		g = near.group;
		if (g == 0) {
			len = snprintf(id, sizeof id, "\"rec-%" PRIu64 "\"", r);
			if (nsd_index_group_new_signed(ix, id, len, kept, &g,
			    &err) == -1)
				die(&err);
		}
		if (!(near.group != 0 && near.distance == 0) &&
		    nsd_index_add(ix, fp, g, &err) == -1)
			die(&err);
		after_record(ix, t, r, &mapped, t0);
	}
}

/* The MinHash records: their layout, and what they remember. */
struct minhash_run {
	double		 rate;		/* of near-copies */
	unsigned	 features;	/* a record's */
	unsigned	 bins, bands, rows, threshold;
	uint64_t	 base[RING];	/* the last records' originals */
	uint64_t	*keys;		/* the batch's band keys */
	unsigned char	*sigs;		/* and signatures */
	char		*copy;		/* and which are near-copies */
};

/*
 * The MinHash bins of record r's features: pseudo-random ones or, for a
 * share of the records (*copy set), those of the original of one of the
 * RING records before it with 5% to 25% of them replaced. Deterministic in
 * seed and r, given the records before.
 */
static void
mhrecord(struct minhash_run *mr, uint64_t seed, uint64_t r, uint64_t *min,
    int *copy)
{
	uint64_t	 h, back, b, share, f;
	unsigned	 i;

	h = fingerprint(seed ^ 0x4d48, r, 1, 0);
	*copy = r > 0 && (double)(h >> 11) / 9007199254740992.0 < mr->rate;
	b = r;
	share = 0;
	if (*copy) {
		back = 1 + (h & (RING - 1));
		if (back > r)
			back = r;
		b = mr->base[(r - back) % RING];
		/* 5% to 25% of 2^64. */
		share = (UINT64_MAX / 20) +
		    (UINT64_MAX / 5 / 65536) * ((h >> 20) & 0xffff);
	}
	mr->base[r % RING] = b;
	nsd_minhash_clear(min);
	for (i = 0; i < mr->features; i++) {
		f = bench_mix64(h + (i + 1) * 0xD6E8FEB86659FD93ULL) < share ?
		    fingerprint(seed, r, mr->features, i) :
		    fingerprint(seed, b, mr->features, i);
		nsd_minhash_bin(min, f);
	}
}

/*
 * Decide records [from, to) by MinHash, as the method does (without the
 * sketch's confirmation): the batch's signatures and band keys first,
 * each key prefetched; then for each record, the groups holding its band
 * keys, oldest first, until one's signature agrees for the threshold; or
 * a new group. The band keys no group holds are claimed.
 */
static void
decide_minhash(struct nsd_index *ix, struct minhash_run *mr, uint64_t seed,
    uint64_t from, uint64_t to, struct totals *t)
{
	struct nsd_index_info	 info;
	struct nsd_error	 err;
	uint64_t		 r, g, mapped, min[NSD_MINHASH_BINS], *keys;
	uint64_t		 held[NSD_MINHASH_MAX_BANDS];
	uint64_t		 cand[NSD_MINHASH_MAX_BANDS];
	const unsigned char	*their;
	unsigned char		*sig;
	size_t			 sig_len = 2 * (size_t)mr->bins;
	char			 id[40];
	double			 t0;
	unsigned		 k, n, i, j;
	int			 len, copy;

	for (r = from; r < to; r++) {
		mhrecord(mr, seed, r, min, &copy);
		mr->copy[r - from] = (char)copy;
		keys = mr->keys + (r - from) * mr->bands;
		nsd_minhash_compute(min, mr->bins, mr->bands, mr->rows,
		    mr->sigs + (r - from) * sig_len, keys);
		for (k = 0; k < mr->bands; k++)
			nsd_index_prefetch(ix, keys[k]);
	}
	nsd_index_info(ix, &info);
	mapped = info.mapped;
	for (r = from; r < to; r++) {
		t0 = now();
		keys = mr->keys + (r - from) * mr->bands;
		sig = mr->sigs + (r - from) * sig_len;
		for (n = 0, k = 0; k < mr->bands; k++) {
			if (nsd_index_lookup(ix, keys[k], &held[k], &err) == -1)
				die(&err);
			if (held[k] == 0)
				continue;
			for (i = 0; i < n && cand[i] < held[k]; i++)
				continue;
			if (i < n && cand[i] == held[k])
				continue;
			for (j = n++; j > i; j--)
				cand[j] = cand[j - 1];
			cand[i] = held[k];
		}
		g = 0;
		for (i = 0; i < n && g == 0; i++) {
			if (nsd_index_group_signature(ix, cand[i], &their,
			    &err) == -1)
				die(&err);
			if (nsd_minhash_similar(nsd_minhash_agree(sig, their,
			    mr->bins), mr->bins, mr->threshold))
				g = cand[i];
		}
		t->lookups++;
		t->candidates += n;
		t->copies += mr->copy[r - from];
		t->found += mr->copy[r - from] && g != 0;
		if (g == 0) {
			memcpy(kept, sig, sig_len);
			len = snprintf(id, sizeof id, "\"rec-%" PRIu64 "\"", r);
			if (nsd_index_group_new_signed(ix, id, len, kept, &g,
			    &err) == -1)
				die(&err);
		}
		for (k = 0; k < mr->bands; k++)
			if (held[k] == 0 &&
			    nsd_index_claim(ix, keys[k], g, NULL, &err) == -1)
				die(&err);
		after_record(ix, t, r, &mapped, t0);
	}
}

/* Build the index slice by slice, printing a line for each. */
int
main(int argc, char **argv)
{
	struct nsd_config	 cfg;
	struct nsd_error	 err;
	struct nsd_index_params	 ip;
	struct nsd_index_open	 io;
	struct nsd_index_info	 info;
	struct nsd_index	*ix;
	struct totals		 t;
	static struct simhash_run sr;
	static struct minhash_run mr;
	static char		 name[] = "nsdedup";
	char			*fake[] = { name, NULL };
	char			 ids_path[4096], log_path[4096];
	char			 stage_path[4096];
	char			 filter_path[4096];
	uint64_t		 records = 20000000, slice = 1000000;
	uint64_t		 every = 1000000, batch = 256, seed = 1;
	uint64_t		 r, end, n, b, size, ids_size, all, pending = 0;
	unsigned		 fps = 5;
	double			 t0, t1, t2, start;
	struct bench_args	 a;
	const char		*v;
	int			 simhash = 0, minhash = 0, memory = 0;

	/* nsdedup's defaults, from its own option parser. */
	if (nsd_options_parse(1, fake, &cfg, &err) != NSD_OPTIONS_RUN)
		die(&err);
	sr.k = cfg.distance;
	sr.rate = 0.2;
	mr.rate = 0.2;
	mr.features = 300;
	bench_args_init(&a, "nsd-index-scale", usage, argc, argv);
	while ((v = bench_args_peek(&a)) != NULL && v[0] == '-') {
		if (bench_args_flag(&a, "--help", "-h"))
			usage(0);
		else if (bench_args_flag(&a, "--memory", "-M"))
			memory = 1;
		else if ((v = bench_args_value(&a, "--copy-rate", "-d")) !=
		    NULL)
			sr.rate = mr.rate = bench_parse_number(&a, "-d", v, 0,
			    1, 0);
		else if ((v = bench_args_value(&a, "--features", "-F")) !=
		    NULL)
			mr.features = (unsigned)bench_parse_size(&a, "-F", v,
			    BENCH_SUFFIX_DECIMAL, 1, MAX_FEATURES);
		else if ((v = bench_args_value(&a, "--distance", "-k")) != NULL)
			sr.k = (unsigned)bench_parse_size(&a, "-k", v,
			    BENCH_SUFFIX_NONE, 1, NSD_SIMHASH_MAX_DISTANCE);
		else if ((v = bench_args_value(&a, "--method", "-m")) != NULL) {
			if (strcmp(v, "simhash") == 0)
				simhash = 1;
			else if (strcmp(v, "minhash") == 0)
				minhash = 1;
			else if (strcmp(v, "nshash") != 0)
				bench_args_fail(&a, "invalid value for -m: "
				    "'%s' (valid: minhash, nshash, simhash)",
				    v);
		} else if ((v = bench_args_value(&a, "--batch", "-b")) != NULL)
			batch = bench_parse_size(&a, "-b", v,
			    BENCH_SUFFIX_DECIMAL, 1, MAX_BATCH);
		else if ((v = bench_args_value(&a, "--commit", "-c")) != NULL)
			every = bench_parse_size(&a, "-c", v,
			    BENCH_SUFFIX_DECIMAL, 1, UINT64_MAX / 2);
		else if ((v = bench_args_value(&a, "--fps", "-f")) != NULL)
			fps = (unsigned)bench_parse_size(&a, "-f", v,
			    BENCH_SUFFIX_DECIMAL, 1, MAX_FPS);
		else if ((v = bench_args_value(&a, "--records", "-n")) != NULL)
			records = bench_parse_size(&a, "-n", v,
			    BENCH_SUFFIX_DECIMAL, 1, UINT64_MAX / MAX_FPS / 2);
		else if ((v = bench_args_value(&a, "--seed", "-S")) != NULL)
			seed = bench_parse_size(&a, "-S", v, BENCH_SUFFIX_NONE,
			    0, UINT64_MAX);
		else if ((v = bench_args_value(&a, "--slice", "-s")) != NULL)
			slice = bench_parse_size(&a, "-s", v,
			    BENCH_SUFFIX_DECIMAL, 1, UINT64_MAX / 2);
		else
			bench_args_fail(&a, "unknown argument '%s'",
			    bench_args_peek(&a));
	}
	if (argc - a.i != 1)
		usage(2);

	/* As main.c sets them up; a given -k changes the tables. */
	if (simhash) {
		cfg.method = NSD_METHOD_SIMHASH;
		cfg.distance = sr.k;
		fps = 1;
	}
	if (minhash) {
		cfg.method = NSD_METHOD_MINHASH;
		nsd_method_of(cfg.method)->defaults(&cfg);
	}
	nsd_pipeline_index_params(&cfg, &ip);
	if (minhash) {
		mr.bins = ip.bins;
		mr.bands = fps = ip.bands;
		mr.rows = ip.rows;
		mr.threshold = ip.threshold;
		mr.keys = xcalloc(batch * mr.bands, sizeof mr.keys[0]);
		mr.sigs = xcalloc(batch, 2 * (size_t)mr.bins);
		mr.copy = xcalloc(batch, 1);
	}
	memset(&io, 0, sizeof io);
	io.path = argv[a.i];
	io.wait_ms = 0;
	if (memory ? nsd_index_open_memory(&ix, &ip, &err) == -1 :
	    nsd_index_open_file(&ix, &io, &ip, &err) == -1)
		die(&err);
	snprintf(ids_path, sizeof ids_path, "%s.ids", io.path);
	snprintf(log_path, sizeof log_path, "%s.log", io.path);
	snprintf(stage_path, sizeof stage_path, "%s.stage", io.path);
	snprintf(filter_path, sizeof filter_path, "%s.filter", io.path);

	if (minhash)
		printf("# %" PRIu64 " records of %u features, MinHash of %u "
		    "bins, %u bands of %u rows, threshold %.4g, %.0f%% "
		    "near-copies, %s index, a commit every %" PRIu64
		    " records, seed %" PRIu64 "\n", records, mr.features,
		    mr.bins, mr.bands, mr.rows, mr.threshold / 10000.0,
		    100 * mr.rate, memory ? "in-memory" : "file", every,
		    seed);
	else if (simhash)
		printf("# %" PRIu64 " records of one SimHash, distance %u, %u "
		    "block tables, %.0f%% near-copies, %s index, a commit "
		    "every %" PRIu64 " records, seed %" PRIu64 "\n", records,
		    sr.k, ip.ntables, 100 * sr.rate, memory ? "in-memory" :
		    "file", every, seed);
	else
		printf("# %" PRIu64 " records of %u fingerprints, batches of %"
		    PRIu64 ", a commit every %" PRIu64 " records, seed %"
		    PRIu64 "\n", records, fps, batch, every, seed);
	printf("# records fingerprints seconds records/s fingerprints/s "
	    "grows grow_s commit_s rss_anon_kib%s bytes_per_group\n",
	    simhash || minhash ? " candidates_per_lookup copies found" : "");
	fflush(stdout);
	memset(&t, 0, sizeof t);
	t.path = memory ? NULL : io.path;
	t.table_size = file_size(io.path);
	sample_rss(&t);
	start = now();
	for (r = 0; r < records; ) {
		t0 = now();
		t.grow_s = 0;
		t.grows = 0;
		t.rss_max = 0;
		t.lookups = t.candidates = t.copies = t.found = 0;
		end = r + slice < records ? r + slice : records;
		n = end - r;
		while (r < end) {
			b = end - r < batch ? end - r : batch;
			if (minhash)
				decide_minhash(ix, &mr, seed, r, r + b, &t);
			else if (simhash)
				decide_simhash(ix, &sr, seed, r, r + b, &t);
			else
				decide(ix, seed, fps, r, r + b, &t);
			r += b;
		}
		t1 = now();
		pending += n;
		if (r % every == 0 || r == records) {
			if (nsd_index_commit(ix, pending, &err) == -1)
				die(&err);
			pending = 0;
		}
		t2 = now();
		sample_rss(&t);
		nsd_index_info(ix, &info);
		printf("%" PRIu64 " %" PRIu64 " %.3f %.0f %.0f %" PRIu64
		    " %.3f %.3f %" PRIu64, r, info.fingerprints, t1 - t0,
		    n / (t1 - t0), n * fps / (t1 - t0), t.grows, t.grow_s,
		    t2 - t1, t.rss_max);
		if (simhash || minhash)
			printf(" %.3f %" PRIu64 " %" PRIu64,
			    (double)t.candidates / (t.lookups ? t.lookups : 1),
			    t.copies, t.found);
		printf(" %.1f\n", memory || info.groups == 0 ? 0.0 :
		    (double)index_bytes(io.path) / info.groups);
		fflush(stdout);
	}
	nsd_index_info(ix, &info);
	nsd_index_close(ix);
	if (memory) {
		printf("# total %.1f s; %" PRIu64 " fingerprints, %" PRIu64
		    " groups; the index used %.1f MiB (%.1f at peak)\n",
		    now() - start, info.fingerprints, info.groups,
		    info.memory / 1048576.0, info.peak / 1048576.0);
		return (0);
	}
	size = file_size(io.path);
	ids_size = file_size(ids_path);
	all = index_bytes(io.path);
	printf("# total %.1f s; %" PRIu64 " fingerprints, %" PRIu64
	    " groups; peak RssAnon %" PRIu64 " KiB\n", now() - start,
	    info.fingerprints, info.groups, t.rss_peak);
	printf("# files: table %" PRIu64 " bytes (%.2f per fingerprint), "
	    "ids %" PRIu64 " bytes (%.2f), together %.2f per fingerprint\n",
	    size, (double)size / info.fingerprints, ids_size,
	    (double)ids_size / info.fingerprints,
	    (double)(size + ids_size) / info.fingerprints);
	printf("# all files %" PRIu64 " bytes (log %" PRIu64 ", stage %"
	    PRIu64 ", filter %" PRIu64 "): %.1f per group, %.1f per record\n",
	    all, file_size(log_path), file_size(stage_path),
	    file_size(filter_path), (double)all / info.groups,
	    (double)all / records);
	return (0);
}
