/*
 * util.h: the small things every module uses.
 *
 * The xmalloc family never returns NULL: running out of memory ends the
 * program with NSD_EXIT_NOMEM (the one place below main.c that exits, as the
 * conventions allow). struct nsd_buf is a growable byte buffer that is reused
 * across records instead of a fixed-size one. struct nsd_error carries the
 * message of a failed call up to main.c, which is the only code that prints.
 * Every thread is started through nsd_thread_start().
 */
#ifndef NSD_UTIL_H
#define NSD_UTIL_H

#include <sys/types.h>

#include <pthread.h>

#include <stddef.h>
#include <stdint.h>

/* Exit statuses, defined once; man/nsdedup.1 EXIT STATUS lists the same. */
enum nsd_exit {
	NSD_EXIT_OK = 0,	/* success */
	NSD_EXIT_BADREC = 1,	/* completed, but some records were bad */
	NSD_EXIT_USAGE = 2,	/* bad command line */
	NSD_EXIT_INPUT = 3,	/* an input could not be opened or read */
	NSD_EXIT_OUTPUT = 4,	/* the output could not be written */
	NSD_EXIT_FAILREC = 5,	/* stopped at a bad record (--on-error=fail) */
	NSD_EXIT_NOMEM = 6,	/* out of memory */
	NSD_EXIT_INDEX = 7,	/* the index file cannot be used */
	NSD_EXIT_BUSY = 8,	/* another run holds the index (--wait) */
	NSD_EXIT_COMMIT = 9	/* the index could not be written; the run
				   committed nothing */
};

#define NSD_ERROR_MAX 512

struct nsd_error {
	int	 status;		/* an enum nsd_exit value */
	char	 msg[NSD_ERROR_MAX];
};

int	 nsd_error_set(struct nsd_error *, int, const char *, ...)
	    __attribute__((format(printf, 3, 4)));

/* nsd_error_set() with "path: what: strerror(errno)". */
int	 nsd_error_errno(struct nsd_error *, int, const char *, const char *);

/* Says "out of memory" and exits with NSD_EXIT_NOMEM. */
void	 nsd_out_of_memory(void) __attribute__((noreturn));

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);

/*
 * A fraction in units of 1/10000 as the shortest decimal ("0.6", "1",
 * "0.0125") into buf, which must hold NSD_FRACTION_MAX bytes; returns buf.
 */
#define NSD_FRACTION_MAX	8
char	*nsd_fraction_format(unsigned, char *);

/* MurmurHash3's 64-bit finalizer: a bijection that mixes every bit. */
static inline uint64_t
nsd_fmix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (x);
}

/*
 * The bits set in x. Baseline x86-64 has no POPCNT instruction, and for
 * __builtin_popcountll GCC calls libgcc, which costs more on the paths of
 * every record than these few operations (sum pairs, then nibbles, then
 * add the bytes up with one multiplication).
 */
static inline unsigned
nsd_popcount64(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
	return ((unsigned)((x * 0x0101010101010101ULL) >> 56));
}

struct nsd_buf {
	char	*data;
	size_t	 len;
	size_t	 cap;
};

void	 nsd_buf_reserve(struct nsd_buf *, size_t);
void	 nsd_buf_append(struct nsd_buf *, const void *, size_t);
void	 nsd_buf_free(struct nsd_buf *);

/* Zero len bytes at p (a secret) in a way the compiler cannot drop. */
void	 nsd_wipe(void *, size_t);

/*
 * Start a thread running fn(arg) with every signal blocked in it, whatever
 * the caller blocks, so that the signals main.c handles, and holds blocked
 * around the end of a run, reach the main thread alone: a thread that took
 * one in the meantime would die of it, with the whole process, after the
 * index committed. Returns pthread_create()'s status.
 */
int	 nsd_thread_start(pthread_t *, void *(*)(void *), void *);

/*
 * Whether descriptor fd has bytes, or its end, to read, waiting up to ms
 * milliseconds. A wait that a signal cuts short (SIGUSR1) says not yet; an
 * error says yes, for the read to report it.
 */
int	 nsd_fd_readable(int, int);

/*
 * pread(2) len bytes at off of fd, again after EINTR and short reads: the
 * bytes read, fewer only at the end of the file, or -1 (errno).
 */
ssize_t	 nsd_pread_all(int, void *, size_t, off_t);
/* The same, all of len bytes or none: 0, or -1 (errno; EIO when short). */
int	 nsd_pread_exact(int, void *, size_t, off_t);
/* pwrite(2) all of len bytes at off: 0, or -1 (errno; EIO when short). */
int	 nsd_pwrite_all(int, const void *, size_t, off_t);

static inline void
nsd_buf_putc(struct nsd_buf *b, char c)
{
	if (b->len == b->cap)
		nsd_buf_reserve(b, 1);
	b->data[b->len++] = c;
}

#endif /* NSD_UTIL_H */
