/*
 * options.h: the command line, turned into a struct nsd_config.
 *
 * nsd_options_parse() is the only reader of argv; everything below main.c
 * sees the configuration, never the command line. Every option is one
 * entry of a table in options.c (its value's kind and range, the field it
 * sets, the methods it belongs to, its help), which the parser and
 * nsd_options_help() both read. Enum-valued options go through one
 * string-to-enum table and numbers through one checked parser, so every
 * bad value gets the same kind of message.
 *
 * Memory: the config points into argv, so there is nothing to free; but
 * a redis:// URL with a password, which is wiped from argv as soon as it is
 * read, is a copy that options.c keeps for the life of the process.
 * Errors: NSD_OPTIONS_ERROR with err set (status NSD_EXIT_USAGE).
 */
#ifndef NSD_OPTIONS_H
#define NSD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

enum nsd_mode { NSD_MODE_ANNOTATE, NSD_MODE_DROP_DUPS, NSD_MODE_ONLY_DUPS };
enum nsd_format { NSD_FORMAT_AUTO, NSD_FORMAT_JSONL, NSD_FORMAT_TSV };
/* The methods, by their place in the registry (method.c); 0 the default. */
enum nsd_method {
	NSD_METHOD_NSHASH, NSD_METHOD_SIMHASH, NSD_METHOD_MINHASH
};
#define NSD_METHOD_DEFAULT	0
enum nsd_on_error { NSD_ON_ERROR_PASS, NSD_ON_ERROR_SKIP, NSD_ON_ERROR_FAIL };
enum nsd_action {
	NSD_ACTION_RUN,
	NSD_ACTION_DB_INFO,
	NSD_ACTION_DB_VERIFY,
	NSD_ACTION_DB_UNDO
};
enum nsd_progress {
	NSD_PROGRESS_AUTO, NSD_PROGRESS_ALWAYS, NSD_PROGRESS_NEVER
};
enum nsd_stats_format { NSD_STATS_NONE, NSD_STATS_TEXT, NSD_STATS_JSON };

#define NSD_DEFAULT_MAX_LINE	(16 * 1024 * 1024)
#define NSD_MAX_JOBS		256
#define NSD_MAX_KEYS		64
/* Chosen from bench/QUALITY.md; see FINGERPRINTS in nsdedup(1). */
#define NSD_DEFAULT_MIN_MATCH	2
#define NSD_DEFAULT_COMMON	3
/* Chosen from bench/QUALITY.md; see CONFIRMATION in nsdedup(1). */
#define NSD_DEFAULT_CONFIRM	7000	/* in 1/10000 */
/* MinHash's defaults, chosen from bench/QUALITY.md likewise. */
#define NSD_MINHASH_DEFAULT_THRESHOLD	5000	/* in 1/10000 */
#define NSD_MINHASH_DEFAULT_NGRAM	3
#define NSD_MINHASH_DEFAULT_SHINGLE	2

struct nsd_config {
	enum nsd_action		 action;
	enum nsd_mode		 mode;
	enum nsd_method		 method;
	enum nsd_format		 format;
	const char		*keys[NSD_MAX_KEYS];	/* -k, default "text" */
	size_t			 nkeys;
	const char		*id_field;		/* --id-field, default
							   "id" */
	int			 id_field_given;
	int			 no_header;
	unsigned		 sentences;
	unsigned		 distance;		/* simhash */
	unsigned		 ngram;			/* simhash, minhash */
	int			 ngram_given;
	unsigned		 shingle;		/* simhash, minhash */
	int			 shingle_given;
	unsigned		 min_features;		/* simhash, minhash */
	unsigned		 threshold;		/* minhash, 1/10000s */
	unsigned		 min_match;		/* nshash */
	int			 min_match_given;
	unsigned		 common;		/* nshash; 0: off */
	int			 common_given;
	unsigned		 confirm;		/* of a match, in
							   1/10000; 0: off */
	int			 confirm_given;
	int			 explain;
	unsigned		 min_length;
	int			 compat;
	const char		*field_name;
	const char		*dup_field;		/* "" to leave it out */
	enum nsd_on_error	 on_error;
	const char		*output;		/* -o, or NULL */
	enum nsd_stats_format	 stats;
	enum nsd_progress	 progress;
	int			 quiet;
	unsigned		 jobs;			/* -j; 0: the cores
							   available */
	size_t			 max_line;
	const char		*db;			/* --db, or NULL: in
							   memory */
	int			 no_update;
	long			 ttl;			/* --ttl, seconds;
							   0: none */
	long			 wait_ms;		/* -1: wait for the
							   lock as long as it
							   takes */
	char			**files;		/* operands; none:
							   stdin */
	size_t			 nfiles;
};

enum nsd_options_result {
	NSD_OPTIONS_RUN,
	NSD_OPTIONS_HELP,
	NSD_OPTIONS_VERSION,
	NSD_OPTIONS_ERROR
};

enum nsd_options_result nsd_options_parse(int, char **, struct nsd_config *,
	    struct nsd_error *);

/*
 * The options' part of --help, made from the table nsd_options_parse()
 * reads: a string the caller frees.
 */
char	*nsd_options_help(void);

#endif /* NSD_OPTIONS_H */
