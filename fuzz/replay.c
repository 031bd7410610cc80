/*
 * replay.c: run a harness over files without libFuzzer.
 *
 * Linked with one harness, it passes each file named on the command line
 * to LLVMFuzzerTestOneInput() once, so that findings kept as regression
 * files are checked by make check with any compiler. A broken property
 * aborts, as under libFuzzer.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int
main(int argc, char **argv)
{
	FILE		*f;
	uint8_t		*data = NULL;
	size_t		 len, cap = 0, n;
	int		 i;

	for (i = 1; i < argc; i++) {
		if ((f = fopen(argv[i], "rb")) == NULL) {
			perror(argv[i]);
			return (2);
		}
		len = 0;
		for (;;) {
			if (len == cap) {
				cap = cap ? cap * 2 : 65536;
				if ((data = realloc(data, cap)) == NULL) {
					perror("realloc");
					return (2);
				}
			}
			if ((n = fread(data + len, 1, cap - len, f)) == 0)
				break;
			len += n;
		}
		if (ferror(f)) {
			perror(argv[i]);
			return (2);
		}
		fclose(f);
		/* A copy of exactly len bytes, so overreads show under ASan. */
		{
			uint8_t	*copy = malloc(len ? len : 1);

			if (copy == NULL) {
				perror("malloc");
				return (2);
			}
			memcpy(copy, data, len);
			LLVMFuzzerTestOneInput(copy, len);
			free(copy);
		}
		printf("replayed %s\n", argv[i]);
	}
	free(data);
	return (0);
}
