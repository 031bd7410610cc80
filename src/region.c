/*
 * region.c: memory that moves into a file when it grows large.
 *
 * The in-memory index grows with its input: over 10^8 records its table
 * alone would be gigabytes of anonymous memory, which the kernel can only
 * swap, and most servers have no swap. A file's pages it can write back
 * and drop, so a region past NSD_REGION_ANON_MAX lives in a file that was
 * unlinked as it was made (O_TMPFILE where the file system has it), and
 * the process's anonymous memory stays bounded. A region small enough for
 * anonymous memory pays nothing for this.
 *
 * The file's blocks are allocated as it grows (posix_fallocate), so that
 * a full disk is found here, where the region can go back to anonymous
 * memory, rather than as a SIGBUS at some later store into a hole.
 */
#include "config.h"

#include <sys/mman.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "region.h"
#include "util.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

void
nsd_region_init(struct nsd_region *r)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
}

static const char *
spill_dir(void)
{
	const char	*dir = getenv("TMPDIR");

	return (dir != NULL && *dir != '\0' ? dir : "/tmp");
}

/* An unlinked file in spill_dir(), or -1 with the reason in r. */
static int
spill_file(struct nsd_region *r)
{
	char		 path[4096];
	const char	*dir = spill_dir();
	int		 fd;

#ifdef O_TMPFILE
	if ((fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) != -1)
		return (fd);
	/* Not every file system has O_TMPFILE; other errors recur below. */
#endif
	if ((size_t)snprintf(path, sizeof path, "%s/nsdedup.XXXXXX", dir) >=
	    sizeof path) {
		snprintf(r->spill_error, sizeof r->spill_error,
		    "%s: name too long", dir);
		return (-1);
	}
	if ((fd = mkostemp(path, O_CLOEXEC)) == -1) {
		snprintf(r->spill_error, sizeof r->spill_error, "%s: %s", dir,
		    strerror(errno));
		return (-1);
	}
	(void)unlink(path);
	return (fd);
}

static void *
map_anon(size_t size)
{
	void	*p;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		nsd_out_of_memory();
	return (p);
}

/* Moves the contents (old bytes of them) into anonymous memory of size. */
static void
to_anon(struct nsd_region *r, size_t old, size_t size)
{
	void	*p = map_anon(size);

	if (r->base != NULL) {
		memcpy(p, r->base, old < size ? old : size);
		(void)munmap(r->base, old);
	}
	if (r->fd != -1)
		(void)close(r->fd);
	r->fd = -1;
	r->base = p;
	r->size = size;
}

/* Grows or shrinks within anonymous memory. */
static void
resize_anon(struct nsd_region *r, size_t size)
{
	void	*p;

	if (r->base == NULL) {
		r->base = map_anon(size);
	} else {
		p = mremap(r->base, r->size, size, MREMAP_MAYMOVE);
		if (p == MAP_FAILED)
			nsd_out_of_memory();
		r->base = p;
	}
	r->size = size;
}

/* Resizes within a file, or moves into one: 0, or -1 with r unchanged. */
static int
resize_file(struct nsd_region *r, size_t size)
{
	void	*p;
	int	 fd = r->fd, err;

	if (fd == -1 && (fd = spill_file(r)) == -1)
		return (-1);
	if ((r->fd == -1 || size > r->size) &&
	    (err = posix_fallocate(fd, 0, (off_t)size)) != 0) {
		snprintf(r->spill_error, sizeof r->spill_error, "%s: %s",
		    spill_dir(), strerror(err));
		goto fail;
	}
	if (r->fd != -1) {
		p = mremap(r->base, r->size, size, MREMAP_MAYMOVE);
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    0);
		if (p != MAP_FAILED && r->base != NULL) {
			memcpy(p, r->base, r->size < size ? r->size : size);
			(void)munmap(r->base, r->size);
		}
	}
	if (p == MAP_FAILED) {
		snprintf(r->spill_error, sizeof r->spill_error,
		    "mapping a file in %s: %s", spill_dir(), strerror(errno));
		goto fail;
	}
	/* A region that shrinks in a file leaves the file its tail. */
	r->base = p;
	r->size = size;
	r->fd = fd;
	return (0);

fail:
	if (r->fd == -1)
		(void)close(fd);
	return (-1);
}

/*
 * Map in the bytes from old to the end: one system call where touching
 * them would fault a page at a time (a third of a run's system time when
 * the in-memory table doubles). Older kernels say EINVAL, and the pages
 * fault in as before.
 */
static void
populate(struct nsd_region *r, size_t old)
{
	if (old < r->size)
		(void)madvise((char *)r->base + old, r->size - old,
		    MADV_POPULATE_WRITE);
}

void
nsd_region_resize(struct nsd_region *r, size_t size)
{
	long	 page = sysconf(_SC_PAGESIZE);
	size_t	 old = r->size;

	size = size == 0 ? 1 : size;
	if (size > SIZE_MAX - (size_t)page)
		nsd_out_of_memory();
	size = (size + (size_t)page - 1) & ~((size_t)page - 1);
	if (size == r->size)
		return;
	/*
	 * Once a file has failed, later growth stays anonymous: the run
	 * goes on as it would have without files, and says why at its end.
	 */
	if (r->fd == -1 && (size <= NSD_REGION_ANON_MAX ||
	    r->spill_error[0] != '\0'))
		resize_anon(r, size);
	else if (resize_file(r, size) == -1) {
		if (r->fd != -1)
			to_anon(r, r->size, size);
		else
			resize_anon(r, size);
	}
	populate(r, old);
}

size_t
nsd_region_anon(const struct nsd_region *r)
{
	return (r->fd == -1 ? r->size : 0);
}

size_t
nsd_region_mapped(const struct nsd_region *r)
{
	return (r->fd != -1 ? r->size : 0);
}

void
nsd_region_free(struct nsd_region *r)
{
	if (r->base != NULL)
		(void)munmap(r->base, r->size);
	if (r->fd != -1)
		(void)close(r->fd);
	nsd_region_init(r);
}
