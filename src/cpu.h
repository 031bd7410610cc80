/*
 * cpu.h: which vector instructions the hot loops may use (runtime
 * dispatch).
 *
 * The hot loops of json.c, text.c and utf8.c are written up to three ways:
 * in plain C, with SSE2 (which every x86-64 processor has, so it is
 * compiled in) and with AVX2, taken at run time when the processor has it.
 * The AVX2 versions are compiled with a target attribute, so that the rest
 * of the program keeps the baseline instruction set. Every version gives
 * the same results: the tests run the program again with
 * NSDEDUP_SIMD=portable, which keeps to plain C, and NSDEDUP_SIMD=sse2,
 * which leaves out AVX2.
 */
#ifndef NSD_CPU_H
#define NSD_CPU_H

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define NSD_HAVE_AVX2	1
#define NSD_TARGET_AVX2	__attribute__((target("avx2")))
#else
#define NSD_HAVE_AVX2	0
#define NSD_TARGET_AVX2
#endif

enum nsd_simd { NSD_SIMD_PORTABLE = 1, NSD_SIMD_SSE2, NSD_SIMD_AVX2 };

/*
 * The best of the versions that this processor runs and $NSDEDUP_SIMD
 * allows ("portable", "sse2", or unset for the best). Worked out once per
 * file that asks; threads that race to do it store the same value.
 */
static inline enum nsd_simd
nsd_simd(void)
{
	static int	 known;
	int		 v = __atomic_load_n(&known, __ATOMIC_RELAXED);
	const char	*env;

	if (v == 0) {
		env = getenv("NSDEDUP_SIMD");
		v = NSD_SIMD_PORTABLE;
#ifdef __SSE2__
		v = NSD_SIMD_SSE2;
#endif
#if NSD_HAVE_AVX2
		if (__builtin_cpu_supports("avx2"))
			v = NSD_SIMD_AVX2;
#endif
		if (env != NULL && strcmp(env, "portable") == 0)
			v = NSD_SIMD_PORTABLE;
		else if (env != NULL && strcmp(env, "sse2") == 0 &&
		    v > NSD_SIMD_SSE2)
			v = NSD_SIMD_SSE2;
		__atomic_store_n(&known, v, __ATOMIC_RELAXED);
	}
	return ((enum nsd_simd)v);
}

#endif /* NSD_CPU_H */
