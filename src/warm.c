/*
 * warm.c: reading a mapped file into memory in the background.
 *
 * A run against a large index with a cold page cache (the first run after
 * a reboot, or a nightly run after the day's other work pushed the index
 * out) looks up fingerprints at random all over the table, and each first
 * touch of a page is a disk read that the run waits for, one at a time:
 * measured on an index of 10^8 entries, 200,000 lookups took 1.5 s where
 * reading the whole 2 GiB table in order took 0.9 s. So a thread reads the
 * table in order while the run goes on; a lookup ahead of it still reads
 * its page at random, one behind it finds the page in memory.
 *
 * MADV_POPULATE_READ (Linux 5.14) reads a range into the page cache and
 * maps it; on older kernels a read of one byte a page does the same.
 */
#include "config.h"

#include <sys/mman.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "warm.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif

#define WARM_STEP	(16UL << 20)	/* bytes read between checks */

struct nsd_warm {
	pthread_t		 thread;
	const unsigned char	*base;
	size_t			 len;
	atomic_int		 stop;
};

/* MemAvailable from /proc/meminfo, in bytes, or 0 when unknown. */
static size_t
memory_available(void)
{
	FILE			*f;
	char			 line[128];
	unsigned long long	 kib = 0;

	if ((f = fopen("/proc/meminfo", "re")) == NULL)
		return (0);
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (kib > SIZE_MAX >> 10 ? SIZE_MAX : (size_t)kib << 10);
}

static void *
warm_run(void *arg)
{
	struct nsd_warm	*w = arg;
	size_t		 off, n, i, page = (size_t)sysconf(_SC_PAGESIZE);
	int		 populate = 1;
	volatile unsigned char sink;

#ifdef NSD_CRASH_POINTS
	/*
	 * The test build keeps the thread alive until it is stopped, when
	 * $NSDEDUP_WARM_LINGER says so, as on a table too large to read in
	 * before the run ends.
	 */
	struct timespec	 ms = { 0, 1000 * 1000 };

	while (getenv("NSDEDUP_WARM_LINGER") != NULL &&
	    !atomic_load(&w->stop))
		nanosleep(&ms, NULL);
#endif
	for (off = 0; off < w->len && !atomic_load(&w->stop); off += n) {
		n = w->len - off < WARM_STEP ? w->len - off : WARM_STEP;
		if (populate && madvise((void *)(w->base + off), n,
		    MADV_POPULATE_READ) == 0)
			continue;
		populate = 0;
		for (i = 0; i < n; i += page)
			sink = w->base[off + i];
	}
	(void)sink;
	return (NULL);
}

struct nsd_warm *
nsd_warm_start(const void *base, size_t len)
{
	struct nsd_warm	*w;

	if (len == 0 || len > memory_available() / 2)
		return (NULL);
	w = xcalloc(1, sizeof *w);
	w->base = base;
	w->len = len;
	atomic_init(&w->stop, 0);
	if (nsd_thread_start(&w->thread, warm_run, w) != 0) {
		free(w);
		return (NULL);
	}
	return (w);
}

void
nsd_warm_stop(struct nsd_warm *w)
{
	if (w == NULL)
		return;
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
	free(w);
}
