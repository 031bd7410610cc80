/*
 * warm.h: reading a mapped file into memory in the background.
 *
 * nsd_warm_start() starts a thread that reads a mapping through, in
 * order, so that the page cache holds it before the lookups of a run
 * reach it at random; nsd_warm_stop() stops the thread and waits for it.
 * A mapping larger than half the memory available is left alone: reading
 * it would push out what it is read for. Nothing here fails: at worst no
 * thread starts, and the lookups read the file as they would have.
 */
#ifndef NSD_WARM_H
#define NSD_WARM_H

#include <stddef.h>

struct nsd_warm;

/* A warmer of len bytes at base (page-aligned), or NULL. */
struct nsd_warm	*nsd_warm_start(const void *base, size_t len);
void		 nsd_warm_stop(struct nsd_warm *);

#endif /* NSD_WARM_H */
