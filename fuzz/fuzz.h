/*
 * fuzz.h: what every harness in fuzz/ shares.
 *
 * Each harness defines LLVMFuzzerTestOneInput() and nothing else external.
 * Built with clang -fsanitize=fuzzer it runs under libFuzzer (make fuzz);
 * built with the normal compiler and replay.c it runs the files named on
 * its command line once each (the regression files in tests/data/fuzz/,
 * replayed by make check). A broken property calls FUZZ_FAIL, which
 * prints it and aborts, so that both drivers report it as a finding.
 */
#ifndef NSD_FUZZ_H
#define NSD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FUZZ_FAIL(...) do {						\
	fprintf(stderr, "fuzz: %s:%d: ", __FILE__, __LINE__);		\
	fprintf(stderr, __VA_ARGS__);					\
	fputc('\n', stderr);						\
	abort();							\
} while (0)

#define FUZZ_CHECK(cond) do {						\
	if (!(cond))							\
		FUZZ_FAIL("%s", #cond);					\
} while (0)

#endif /* NSD_FUZZ_H */
