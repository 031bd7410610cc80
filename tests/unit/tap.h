/*
 * tap.h: a few lines of TAP for the C unit tests, read by automake's
 * tap-driver. Each check prints "ok N - what" or "not ok N - what".
 */
#ifndef NSD_TAP_H
#define NSD_TAP_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

static int	 tap_count;
static int	 tap_failures;

static void	 tap_ok(int, const char *, ...)
    __attribute__((format(printf, 2, 3)));
static void	 tap_skip(const char *, ...)
    __attribute__((format(printf, 1, 2), unused));
static int	 tap_done(void);

static void
tap_ok(int pass, const char *fmt, ...)
{
	va_list	 ap;

	printf("%sok %d - ", pass ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!pass)
		tap_failures++;
}

static void
tap_skip(const char *fmt, ...)
{
	va_list	 ap;

	printf("ok %d # SKIP ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int
tap_done(void)
{
	printf("1..%d\n", tap_count);
	return (tap_failures > 0);
}

/* SplitMix64: a test's own stream of 64-bit values, from *state on. */
static inline uint64_t
tap_random(uint64_t *state)
{
	uint64_t	 z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return (z ^ (z >> 31));
}

#endif /* NSD_TAP_H */
