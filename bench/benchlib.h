/*
 * benchlib.h: what the benchmark's programs share (nsd-gencorpus,
 * nsd-repost, nsd-index-scale): one pseudo-random number generator and
 * one argument parser, so that a seed means the same stream and an option
 * is read the same way in each.
 *
 * The generator is splitmix64: small, fast and well distributed, its
 * state the seed; a program keeps one per purpose (nsd-repost has one for
 * its edits and one for its touches), so that one purpose drawing more
 * does not shift the other's stream.
 *
 * The parser reads "--name VALUE", "--name=VALUE" and, where an option
 * has one, "-x VALUE"; a usage error prints "PROG: what" and calls the
 * program's usage(), which exits.
 */
#ifndef BENCHLIB_H
#define BENCHLIB_H

#include <stddef.h>
#include <stdint.h>

struct bench_rng {
	uint64_t	 state;
};

/* splitmix64's output function: a bijection of 64-bit words. */
static inline uint64_t
bench_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31));
}

static inline uint64_t
bench_rng_next(struct bench_rng *r)
{
	return (bench_mix64(r->state += 0x9e3779b97f4a7c15ULL));
}

/*
 * A uniform number in [0, n), n > 0: the high bits of the next word times
 * n (multiply-shift, no division; below 2^32, from its high 32 bits).
 */
static inline uint64_t
bench_rng_below(struct bench_rng *r, uint64_t n)
{
	if (n <= UINT32_MAX)
		return (((bench_rng_next(r) >> 32) * n) >> 32);
	return ((uint64_t)(((unsigned __int128)bench_rng_next(r) * n) >> 64));
}

/* A uniform number in [lo, hi]. */
static inline uint64_t
bench_rng_range(struct bench_rng *r, uint64_t lo, uint64_t hi)
{
	return (lo + bench_rng_below(r, hi - lo + 1));
}

/* A uniform number in [0, 1), of 53 bits. */
static inline double
bench_rng_unit(struct bench_rng *r)
{
	return ((double)(bench_rng_next(r) >> 11) * (1.0 / 9007199254740992.0));
}

/* The command line being read, and what a usage error does. */
struct bench_args {
	const char	*prog;		/* for messages */
	void		 (*usage)(int);	/* prints the usage, exits with it */
	int		 argc;
	char		**argv;
	int		 i;		/* the argument being read */
};

/* What a size's suffix multiplies by. */
enum bench_suffix {
	BENCH_SUFFIX_NONE,	/* no suffix */
	BENCH_SUFFIX_BINARY,	/* K, M, G: 1024, 1024^2, 1024^3 */
	BENCH_SUFFIX_DECIMAL	/* K, M, G: 1000, 1000^2, 1000^3 */
};

/* Start reading argv[1..argc). */
void		 bench_args_init(struct bench_args *, const char *,
		    void (*)(int), int, char **);

/* The argument being read, or NULL after the last. */
const char	*bench_args_peek(const struct bench_args *);

/* Whether the argument is the flag name (or letter, if not NULL). */
int		 bench_args_flag(struct bench_args *, const char *,
		    const char *);

/*
 * If the argument is option name (or letter, if not NULL) with a value,
 * the value, and the argument after it next; else NULL. An option given
 * without its value is a usage error.
 */
const char	*bench_args_value(struct bench_args *, const char *,
		    const char *);

/* A usage error: PROG: message, then usage(2). */
void		 bench_args_fail(const struct bench_args *, const char *, ...)
		    __attribute__((format(printf, 2, 3), noreturn));

/*
 * An unsigned number of option opt, decimal digits only, with the suffix
 * kind given, from min to max; anything else is a usage error.
 */
uint64_t	 bench_parse_size(const struct bench_args *, const char *,
		    const char *, enum bench_suffix, uint64_t, uint64_t);

/* A number of option opt from lo to hi (whole: an integer). */
double		 bench_parse_number(const struct bench_args *, const char *,
		    const char *, double, double, int);

#endif /* BENCHLIB_H */
