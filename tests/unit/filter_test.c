/*
 * filter_test.c: the key filter of an index file (index_filter.c).
 *
 * Every key put in says "maybe", at every fill; keys never put in say
 * "absent" but for a rate of false positives within the bounds its design
 * essay gives, with this test's own seeded keys: random ones, and
 * consecutive ones (whose positions differ in few bits), taken as
 * positions the way nsd_index_position() makes them, for the table
 * sizes a filter is made for. The header encodes and decodes, and a
 * changed bit, another index's file id, another size or an older
 * generation is told apart.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "index_filter.h"
#include "index_format.h"
#include "tap.h"

/* The position of key in table t of an index whose masks are all ones. */
static uint64_t
position(unsigned t, uint64_t key)
{
	struct nsd_index_header	 h;

	memset(&h, 0, sizeof h);
	h.mask[t] = UINT64_MAX;
	return (nsd_index_position(&h, t, key));
}

/*
 * Fill a filter for a table of nslots slots to load percent of them with
 * keys from state (consecutive ones from start with seq), check that all
 * say maybe, and return the rate of false positives over other keys.
 */
static double
fill(uint64_t nslots, unsigned load, int seq, uint64_t *state,
    int *no_false_negative)
{
	struct nsd_filter	*f = nsd_filter_new(nsd_filter_blocks(nslots));
	uint64_t		 n = nslots * load / 100, i, start, fp = 0;
	uint64_t		 trials = 1000000;

	start = tap_random(state);
	for (i = 0; i < n; i++)
		nsd_filter_add(f, position(i % 3, seq ? start + i :
		    tap_random(state)));
	*state -= n * 0x9E3779B97F4A7C15ULL * (seq ? 0 : 1);
	*no_false_negative = 1;
	for (i = 0; i < n; i++)
		if (!nsd_filter_maybe(f, position(i % 3, seq ? start + i :
		    tap_random(state))))
			*no_false_negative = 0;
	for (i = 0; i < trials; i++)
		fp += nsd_filter_maybe(f, position(i % 3, seq ? start + n + i :
		    tap_random(state)));
	nsd_filter_free(f);
	return ((double)fp / trials);
}

int
main(void)
{
	struct nsd_filter_header	 h;
	struct nsd_filter		*f;
	unsigned char			 head[NSD_FILTER_OFFSET];
	uint64_t			 state = 7, pos, len;
	double				 rate;
	int				 ok, i;

	/* Full (3/4 of the slots) and just grown (3/8): the bounds. */
	rate = fill(1 << 20, 75, 0, &state, &ok);
	tap_ok(ok, "every key of a table 3/4 full is found");
	tap_ok(rate < 0.01, "false positives at 10.7 bits a key: %.4f%%",
	    rate * 100);
	rate = fill(1 << 20, 37, 0, &state, &ok);
	tap_ok(ok, "every key of a table 3/8 full is found");
	tap_ok(rate < 0.001, "false positives at 21.6 bits a key: %.4f%%",
	    rate * 100);
	rate = fill(1 << 20, 75, 1, &state, &ok);
	tap_ok(ok, "every consecutive key is found");
	tap_ok(rate < 0.01, "false positives of consecutive keys: %.4f%%",
	    rate * 100);
	/* Smallest filters, and past any load a table reaches. */
	rate = fill(NSD_INDEX_MIN_SLOTS, 75, 0, &state, &ok);
	tap_ok(ok && rate < 0.02, "a filter of the smallest table: %.4f%%",
	    rate * 100);
	rate = fill(64, 400, 0, &state, &ok);
	tap_ok(ok, "an overfull filter of one block finds every key");
	tap_ok(rate > 0.1, "and says maybe to many others: %.4f%%",
	    rate * 100);

	/* The header, and what it tells apart. */
	f = nsd_filter_new(nsd_filter_blocks(8192));
	tap_ok(f->nblocks == 128, "a byte a slot: %llu blocks for 8192 slots",
	    (unsigned long long)f->nblocks);
	for (i = 0; i < 1000; i++)
		nsd_filter_add(f, position(0, tap_random(&state)));
	f->gen = 5;
	len = nsd_filter_file_size(f->nblocks);
	nsd_filter_encode_header(f, 0x1234, head);
	tap_ok(nsd_filter_decode_header(head, len, 0x1234, 5, &h) ==
	    NSD_FILTER_OK && h.nblocks == 128 && h.gen == 5 &&
	    h.keys == f->keys && f->keys > 990, "the header decodes");
	tap_ok(nsd_filter_sum_ok(f, &h), "the words sum to the header's sum");
	tap_ok(nsd_filter_decode_header(head, len, 0x1234, 4, &h) ==
	    NSD_FILTER_OK, "a filter newer than the last commit is used");
	tap_ok(nsd_filter_decode_header(head, len, 0x1234, 6, &h) ==
	    NSD_FILTER_STALE, "one older than the last commit is not");
	tap_ok(nsd_filter_decode_header(head, len, 0x1235, 5, &h) ==
	    NSD_FILTER_OTHER, "nor another index's");
	tap_ok(nsd_filter_decode_header(head, len + 64, 0x1234, 5, &h) ==
	    NSD_FILTER_DAMAGED, "nor one of another size");
	f->words[77] ^= 1ULL << 9;
	tap_ok(!nsd_filter_sum_ok(f, &h), "a bit changed fails the sum");
	head[30] ^= 4;
	tap_ok(nsd_filter_decode_header(head, len, 0x1234, 5, &h) ==
	    NSD_FILTER_DAMAGED, "a header changed fails its checksum");
	pos = position(1, 42);
	tap_ok(nsd_filter_block(f, pos) == f->words + (pos >> f->shift) * 8,
	    "a key's block is its position's top bits");
	nsd_filter_free(f);
	return (tap_done());
}
