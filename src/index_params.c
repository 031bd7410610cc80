/*
 * index_params.c: whether a run may use an index made with other
 * parameters, the one rule for every index that outlives a run (index.h).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "index.h"

/*
 * Whether had's MinHash layout, other than want's, is one a run with want
 * reads: bins a power of two between want's min_bins and max_bins, and
 * bands of rows among them.
 */
static int
layout_readable(const struct nsd_index_params *had,
    const struct nsd_index_params *want)
{
	if (had->bins == want->bins && had->bands == want->bands &&
	    had->rows == want->rows)
		return (0);
	return (want->min_bins != 0 && had->bins >= want->min_bins &&
	    had->bins <= want->max_bins && (had->bins & (had->bins - 1)) == 0 &&
	    had->bands >= 1 && had->rows >= 1 &&
	    (uint64_t)had->bands * had->rows <= had->bins);
}

void
nsd_index_params_adopt(struct nsd_index_params *p,
    const struct nsd_index_params *had)
{
	p->norm_version = had->norm_version;
	/* A signature is 2 bytes a bin, then the sketch. */
	p->sig_bytes = p->sig_bytes - 2 * (size_t)p->bins - p->sketch_bytes +
	    2 * (size_t)had->bins + had->sketch_bytes;
	p->bins = had->bins;
	p->bands = had->bands;
	p->rows = had->rows;
	p->sketch_bytes = had->sketch_bytes;
}

int
nsd_index_params_check(const char *name, const struct nsd_index_params *had,
    const struct nsd_index_params *want, struct nsd_error *err)
{
	const char		*what = NULL;
	unsigned long long	 was = 0, now = 0;
	char			 was_text[NSD_FRACTION_MAX];
	char			 now_text[NSD_FRACTION_MAX];

	if (strcmp(had->method, want->method) != 0)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with --method %s, not %s",
		    name, had->method, want->method));
	if (had->norm_version > want->norm_version)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with normalization version %u, "
		    "newer than this nsdedup knows (%u); use a newer nsdedup",
		    name, had->norm_version, want->norm_version));
	if (had->sentences != want->sentences)
		what = "--sentences", was = had->sentences,
		    now = want->sentences;
	else if (had->min_length != want->min_length)
		what = "--min-length", was = had->min_length,
		    now = want->min_length;
	else if (had->norm_version < want->norm_oldest)
		what = "normalization version", was = had->norm_version,
		    now = want->norm_version;
	else if (had->seed != want->seed)
		what = "seed", was = had->seed, now = want->seed;
	else if (had->distance != want->distance)
		what = "--distance", was = had->distance, now = want->distance;
	else if (had->ngram != want->ngram)
		what = "--ngram", was = had->ngram, now = want->ngram;
	else if (had->shingle != want->shingle)
		what = "--shingle", was = had->shingle, now = want->shingle;
	else if (had->min_features != want->min_features)
		what = "--min-features", was = had->min_features,
		    now = want->min_features;
	else if (had->threshold != want->threshold)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with --threshold %s, not %s",
		    name, nsd_fraction_format(had->threshold, was_text),
		    nsd_fraction_format(want->threshold, now_text)));
	else if (layout_readable(had, want))
		;
	else if (had->bins != want->bins)
		what = "MinHash bins", was = had->bins, now = want->bins;
	else if (had->bands != want->bands || had->rows != want->rows)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with MinHash bands of %u x %u "
		    "rows, not %u x %u", name, had->bands, had->rows,
		    want->bands, want->rows));
	if (what != NULL)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made with %s %llu, not %llu", name,
		    what, was, now));
	/* The parameters choose the tables: other ones are another layout. */
	if (had->ntables != want->ntables)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index keeps %u block table%s, not the %u its "
		    "parameters choose: it was made by another version of "
		    "nsdedup", name, had->ntables, had->ntables == 1 ? "" : "s",
		    want->ntables));
	/*
	 * None is an index made before sketches, which runs unconfirmed;
	 * a whole sketch holds every part a method keeps.
	 */
	if (had->sketch_bytes != 0 && had->sketch_bytes != want->sketch_whole &&
	    had->sketch_bytes != want->sketch_bytes)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index keeps sketches of %zu bytes, not %zu: it "
		    "was made by another version of nsdedup", name,
		    had->sketch_bytes, want->sketch_bytes));
	if ((had->compat != 0) != (want->compat != 0))
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: the index was made %s --compat=nshash", name,
		    had->compat ? "with" : "without"));
	return (0);
}
