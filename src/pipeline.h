/*
 * pipeline.h: the run. Inputs through the stages to the output.
 *
 * A run reads each input a batch of lines at a time and passes every batch
 * through four stages:
 *   1. frame   (in order)    blank lines, the input's format, the TSV header;
 *   2. scan    (any order)   validate each record, find its text and id,
 *                            and fingerprint the text;
 *   3. decide  (in order)    look the fingerprints up in the index,
 *                            assign each record its group, and copy the
 *                            groups' names into the batch;
 *   4. write   (in order)    annotate, drop or pass records to the output,
 *                            without touching the index.
 * Only stage 2 is free of ordering; it touches nothing but its record and
 * its own struct nsd_worker, which is what lets it run on several threads
 * while the output stays in input order. Before stage 3, the first records
 * of each input are judged in order for the fields asked for (records.h:
 * nsd_record_judge()), and what they write is held back until that is
 * done, so that an input that lacks one stops the run having written
 * nothing.
 *
 * The pipeline never prints: bad records and progress go to the hooks.
 * Errors: -1 with err set; err->status is the exit status to use.
 */
#ifndef NSD_PIPELINE_H
#define NSD_PIPELINE_H

#include <stdint.h>

#include "index.h"
#include "options.h"
#include "util.h"
#include "writer.h"

struct nsd_stats {
	uint64_t	 files;
	uint64_t	 bytes;		/* read, terminators and BOMs
					   included */
	uint64_t	 records;	/* lines that are not blank and not
					   headers */
	uint64_t	 originals;
	uint64_t	 duplicates;
	uint64_t	 unconfirmed;	/* matches the whole texts did not
					   confirm (--confirm) */
	uint64_t	 no_text;	/* originals with nothing to compare */
	uint64_t	 bad;
	uint64_t	 blank;
	uint64_t	 input_size;	/* the inputs' sizes in bytes
					   (compressed, when they are), or 0
					   when one is not a regular file */
	uint64_t	 input_done;	/* how much of them is read */
	uint64_t	 lookups;	/* simhash: searches of the index */
	uint64_t	 candidates;	/* simhash: entries they compared */
};

struct nsd_pipeline_hooks {
	/* A bad record: where it is and why (reason without file and line). */
	void	 (*bad_record)(void *, const char *, uint64_t, const char *);
	/*
	 * Called after every batch, and every few milliseconds while the
	 * input stalls.
	 */
	void	 (*progress)(void *, const struct nsd_stats *);
	void	*ctx;
};

/* The parameters of the index that cfg's fingerprints are kept in. */
void	 nsd_pipeline_index_params(const struct nsd_config *,
	    struct nsd_index_params *);

int	 nsd_pipeline_run(const struct nsd_config *, struct nsd_index *,
	    struct nsd_writer *, const struct nsd_pipeline_hooks *,
	    struct nsd_stats *, struct nsd_error *);

#endif /* NSD_PIPELINE_H */
