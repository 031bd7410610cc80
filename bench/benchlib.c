/*
 * benchlib.c: the argument parser the benchmark's programs share (see
 * benchlib.h; the generator is all inline).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

#define EXIT_USAGE	2

void
bench_args_init(struct bench_args *a, const char *prog, void (*usage)(int),
    int argc, char **argv)
{
	a->prog = prog;
	a->usage = usage;
	a->argc = argc;
	a->argv = argv;
	a->i = 1;
}

const char *
bench_args_peek(const struct bench_args *a)
{
	return (a->i < a->argc ? a->argv[a->i] : NULL);
}

void
bench_args_fail(const struct bench_args *a, const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "%s: ", a->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	a->usage(EXIT_USAGE);
	exit(EXIT_USAGE);
}

int
bench_args_flag(struct bench_args *a, const char *name, const char *letter)
{
	const char	*arg = bench_args_peek(a);

	if (arg == NULL || (strcmp(arg, name) != 0 &&
	    (letter == NULL || strcmp(arg, letter) != 0)))
		return (0);
	a->i++;
	return (1);
}

const char *
bench_args_value(struct bench_args *a, const char *name, const char *letter)
{
	const char	*arg = bench_args_peek(a);
	size_t		 n = strlen(name);

	if (arg == NULL)
		return (NULL);
	if (strncmp(arg, name, n) == 0 && arg[n] == '=') {
		a->i++;
		return (arg + n + 1);
	}
	if (strcmp(arg, name) != 0 &&
	    (letter == NULL || strcmp(arg, letter) != 0))
		return (NULL);
	if (a->i + 1 >= a->argc)
		bench_args_fail(a, "option '%s' needs a value", arg);
	a->i += 2;
	return (a->argv[a->i - 1]);
}

uint64_t
bench_parse_size(const struct bench_args *a, const char *opt, const char *s,
    enum bench_suffix suffix, uint64_t min, uint64_t max)
{
	unsigned long long v;
	uint64_t	 mul = 1, k;
	char		*end;

	errno = 0;
	if (*s < '0' || *s > '9')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		goto bad;
	if (suffix != BENCH_SUFFIX_NONE && *end != '\0') {
		k = suffix == BENCH_SUFFIX_BINARY ? 1024 : 1000;
		switch (*end) {
		case 'k': case 'K': mul = k; break;
		case 'm': case 'M': mul = k * k; break;
		case 'g': case 'G': mul = k * k * k; break;
		default: goto bad;
		}
		end++;
	}
	if (*end != '\0' || v > UINT64_MAX / mul || v * mul < min ||
	    v * mul > max)
		goto bad;
	return ((uint64_t)v * mul);
bad:
	bench_args_fail(a, "invalid value for %s: '%s'", opt, s);
}

double
bench_parse_number(const struct bench_args *a, const char *opt,
    const char *s, double lo, double hi, int whole)
{
	double	 v;
	char	*end;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi) ||
	    (whole && (v != (double)(uint64_t)v || *s < '0' || *s > '9')))
		bench_args_fail(a, "invalid value for %s: '%s'", opt, s);
	return (v);
}
