/*
 * options.c: argv to struct nsd_config.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_redis.h"
#include "nshash.h"
#include "options.h"
#include "utf8.h"

enum {
	OPT_COMMON = 256,
	OPT_COMPAT,
	OPT_DB,
	OPT_DB_INFO,
	OPT_DB_VERIFY,
	OPT_DISTANCE,
	OPT_DUP_FIELD,
	OPT_EXPLAIN,
	OPT_FIELD_NAME,
	OPT_ID_FIELD,
	OPT_MAX_LINE,
	OPT_MIN_FEATURES,
	OPT_MIN_LENGTH,
	OPT_MIN_MATCH,
	OPT_NGRAM,
	OPT_NO_UPDATE,
	OPT_NO_WAIT,
	OPT_ON_ERROR,
	OPT_PROGRESS,
	OPT_SHINGLE,
	OPT_STATS,
	OPT_THRESHOLD,
	OPT_TTL,
	OPT_WAIT
};

/* The leading ':' makes getopt report a missing value as ':'. */
static const char short_options[] = ":adDf:Hhj:k:m:n:o:qV";

/* Sorted by long name. */
static const struct option long_options[] = {
	{ "annotate",	no_argument,		NULL, 'a' },
	{ "common",	required_argument,	NULL, OPT_COMMON },
	{ "compat",	required_argument,	NULL, OPT_COMPAT },
	{ "db",		required_argument,	NULL, OPT_DB },
	{ "db-info",	no_argument,		NULL, OPT_DB_INFO },
	{ "db-verify",	no_argument,		NULL, OPT_DB_VERIFY },
	{ "distance",	required_argument,	NULL, OPT_DISTANCE },
	{ "drop-dups",	no_argument,		NULL, 'd' },
	{ "dup-field",	required_argument,	NULL, OPT_DUP_FIELD },
	{ "explain",	no_argument,		NULL, OPT_EXPLAIN },
	{ "field-name",	required_argument,	NULL, OPT_FIELD_NAME },
	{ "format",	required_argument,	NULL, 'f' },
	{ "help",	no_argument,		NULL, 'h' },
	{ "id-field",	required_argument,	NULL, OPT_ID_FIELD },
	{ "jobs",	required_argument,	NULL, 'j' },
	{ "key",	required_argument,	NULL, 'k' },
	{ "max-line",	required_argument,	NULL, OPT_MAX_LINE },
	{ "method",	required_argument,	NULL, 'm' },
	{ "min-features", required_argument,	NULL, OPT_MIN_FEATURES },
	{ "min-length",	required_argument,	NULL, OPT_MIN_LENGTH },
	{ "min-match",	required_argument,	NULL, OPT_MIN_MATCH },
	{ "ngram",	required_argument,	NULL, OPT_NGRAM },
	{ "no-header",	no_argument,		NULL, 'H' },
	{ "no-update",	no_argument,		NULL, OPT_NO_UPDATE },
	{ "no-wait",	no_argument,		NULL, OPT_NO_WAIT },
	{ "on-error",	required_argument,	NULL, OPT_ON_ERROR },
	{ "only-dups",	no_argument,		NULL, 'D' },
	{ "output",	required_argument,	NULL, 'o' },
	{ "progress",	required_argument,	NULL, OPT_PROGRESS },
	{ "quiet",	no_argument,		NULL, 'q' },
	{ "sentences",	required_argument,	NULL, 'n' },
	{ "shingle",	required_argument,	NULL, OPT_SHINGLE },
	{ "stats",	no_argument,		NULL, OPT_STATS },
	{ "threshold",	required_argument,	NULL, OPT_THRESHOLD },
	{ "ttl",	required_argument,	NULL, OPT_TTL },
	{ "version",	no_argument,		NULL, 'V' },
	{ "wait",	required_argument,	NULL, OPT_WAIT },
	{ NULL,		0,			NULL, 0 }
};

/*
 * The value of --db when it had to be copied out of argv (see
 * hide_password), or NULL; kept for the life of the process.
 */
static char *db_copy;

/* The value of --db as argv holds it, its password hidden: for messages. */
static const char *db_shown;

/*
 * Take the password of a redis://[USER:]PASSWORD@HOST... URL out of argv,
 * where every local user may read it in /proc/PID/cmdline: the URL is
 * copied for the index, and in argv the password becomes "*" in place, the
 * rest of the URL moved up to it and the bytes it leaves cleared. Which
 * form gave the option (--db URL, --db=URL, an abbreviation) does not
 * matter: getopt's value points into the argv element. Returns the URL to
 * use.
 */
static const char *
hide_password(char *url)
{
	char	*p, *at, *slash, *colon;
	size_t	 tail, len;

	if (!nsd_index_is_redis(url))
		return (url);
	p = url + strlen(NSD_REDIS_SCHEME);
	slash = strchr(p, '/');
	at = memchr(p, '@', slash != NULL ? (size_t)(slash - p) : strlen(p));
	if (at == NULL)
		return (url);
	free(db_copy);
	db_copy = xstrdup(url);
	db_shown = url;
	/* As index_redis.c reads it: what follows a colon, or all of it. */
	if ((colon = memchr(p, ':', (size_t)(at - p))) != NULL)
		p = colon + 1;
	if ((len = (size_t)(at - p)) > 0) {
		tail = strlen(at) + 1;
		*p = '*';
		memmove(p + 1, at, tail);
		memset(p + 1 + tail, '\0', len - 1);
	}
	return (db_copy);
}

/* Every enum-valued option's words, in one table. */
struct choice {
	const char	*option;
	const char	*word;
	int		 value;
};

static const struct choice choices[] = {
	{ "compat",	"nshash",	1 },
	{ "format",	"auto",		NSD_FORMAT_AUTO },
	{ "format",	"jsonl",	NSD_FORMAT_JSONL },
	{ "format",	"tsv",		NSD_FORMAT_TSV },
	{ "method",	"nshash",	NSD_METHOD_NSHASH },
	{ "method",	"simhash",	NSD_METHOD_SIMHASH },
	{ "method",	"minhash",	NSD_METHOD_MINHASH },
	{ "on-error",	"pass",		NSD_ON_ERROR_PASS },
	{ "on-error",	"skip",		NSD_ON_ERROR_SKIP },
	{ "on-error",	"fail",		NSD_ON_ERROR_FAIL },
	{ "progress",	"auto",		NSD_PROGRESS_AUTO },
	{ "progress",	"always",	NSD_PROGRESS_ALWAYS },
	{ "progress",	"never",	NSD_PROGRESS_NEVER },
};

/* Look word up among option's choices; the error lists the valid ones. */
static int
parse_choice(const char *option, const char *word, int *value,
    struct nsd_error *err)
{
	char	 valid[128] = "";
	size_t	 i, used = 0;

	for (i = 0; i < sizeof choices / sizeof choices[0]; i++) {
		if (strcmp(choices[i].option, option) != 0)
			continue;
		if (strcmp(choices[i].word, word) == 0) {
			*value = choices[i].value;
			return (0);
		}
		used += snprintf(valid + used, sizeof valid - used, "%s%s",
		    used > 0 ? ", " : "", choices[i].word);
	}
	return (nsd_error_set(err, NSD_EXIT_USAGE,
	    "invalid value '%s' for --%s (valid: %s)", word, option, valid));
}

/* What a number may be followed by. */
#define NUMBER_SIZE	1	/* K, M, G */
#define NUMBER_SECONDS	2	/* s, m, h, d */

/*
 * The one number parser: decimal digits only, within [min, max]; with
 * NUMBER_SIZE, a K, M or G suffix multiplies by 1024, 1024^2 or 1024^3;
 * with NUMBER_SECONDS, an s, m, h or d by 1, 60, 3600 or 86400.
 */
static int
parse_number(const char *option, const char *s, uint64_t min, uint64_t max,
    int size, uint64_t *out, struct nsd_error *err)
{
	uint64_t	 v = 0, mult = 1;
	const char	*p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			goto bad;
		v = v * 10 + (*p - '0');
	}
	if (p == s)
		goto bad;
	if (size == NUMBER_SECONDS && *p != '\0' && p[1] == '\0') {
		switch (*p++) {
		case 's': break;
		case 'm': mult = 60; break;
		case 'h': mult = 3600; break;
		case 'd': mult = 86400; break;
		default: goto bad;
		}
	} else if (size == NUMBER_SIZE && *p != '\0' && p[1] == '\0') {
		switch (*p++) {
		case 'k': case 'K': mult = 1024; break;
		case 'm': case 'M': mult = 1024 * 1024; break;
		case 'g': case 'G': mult = 1024 * 1024 * 1024; break;
		default: goto bad;
		}
	}
	if (*p != '\0' || v > UINT64_MAX / mult)
		goto bad;
	v *= mult;
	if (v < min || v > max)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--%s must be between %llu and %llu, not '%s'", option,
		    (unsigned long long)min, (unsigned long long)max, s));
	*out = v;
	return (0);
bad:
	return (nsd_error_set(err, NSD_EXIT_USAGE, "invalid %s '%s' for --%s",
	    size == NUMBER_SIZE ? "size" : size == NUMBER_SECONDS ?
	    "duration" : "number", s, option));
}

/*
 * A fraction from 0 to 1 in decimal ("0.75", ".8", "1"), with at most four
 * decimals, into *out in units of 1/10000; from min units up.
 */
static int
parse_fraction(const char *option, const char *s, unsigned min,
    unsigned *out, struct nsd_error *err)
{
	static const unsigned place[4] = { 1000, 100, 10, 1 };
	const char	*p = s;
	unsigned	 v = 0, digits = 0, decimals = 0;
	char		 least[NSD_FRACTION_MAX];

	if (*p >= '0' && *p <= '9') {
		v = 10000 * (unsigned)(*p++ - '0');
		digits++;
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && decimals < 4; p++)
			v += place[decimals++] * (unsigned)(*p - '0');
	if (*p != '\0' || digits + decimals == 0 || v < min || v > 10000)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "invalid value '%s' for --%s (a fraction from %s to 1, "
		    "with at most 4 decimals)", s, option,
		    nsd_fraction_format(min, least)));
	*out = v;
	return (0);
}

/*
 * A name written into JSON and TSV output: non-empty, UTF-8, no tab or
 * newline.
 */
static int
check_name(const char *option, const char *name, int may_be_empty,
    struct nsd_error *err)
{
	size_t	 len = strlen(name);

	if (len == 0 && !may_be_empty)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--%s must not be empty", option));
	if (nsd_utf8_check(name, len) != len || strpbrk(name, "\t\r\n") != NULL)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--%s must be UTF-8 without tabs or line breaks", option));
	return (0);
}

/*
 * Say what was wrong with the option arg that getopt_long rejected: an
 * unknown short option (opt, which may sit in a cluster such as -xq, where
 * arg is not yet the one at fault), a long option given a value it does not
 * take (opt is then its short name), or an unknown or ambiguous long one.
 */
static void
bad_option(const char *arg, int opt, struct nsd_error *err)
{
	size_t	 len;

	if (strncmp(arg, "--", 2) != 0 || (opt > 0 && opt < 256 &&
	    (opt == ':' || strchr(short_options, opt) == NULL))) {
		nsd_error_set(err, NSD_EXIT_USAGE, "unknown option '-%c'",
		    opt);
		return;
	}
	len = strcspn(arg, "=");
	if (opt != 0 && arg[len] == '=')
		nsd_error_set(err, NSD_EXIT_USAGE,
		    "option '%.*s' takes no value", (int)len, arg);
	else
		nsd_error_set(err, NSD_EXIT_USAGE,
		    "unknown or ambiguous option '%.*s'", (int)len, arg);
}

static void
config_defaults(struct nsd_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->mode = NSD_MODE_ANNOTATE;
	cfg->method = NSD_METHOD_NSHASH;
	cfg->format = NSD_FORMAT_AUTO;
	cfg->id_field = "id";
	cfg->sentences = 5;
	cfg->min_length = 30;
	cfg->distance = 3;
	cfg->ngram = 2;
	cfg->shingle = 3;
	cfg->min_features = 8;
	cfg->threshold = NSD_MINHASH_DEFAULT_THRESHOLD;
	cfg->min_match = NSD_DEFAULT_MIN_MATCH;
	cfg->common = NSD_DEFAULT_COMMON;
	cfg->field_name = "similar_id";
	cfg->dup_field = "is_dup";
	cfg->on_error = NSD_ON_ERROR_PASS;
	cfg->progress = NSD_PROGRESS_AUTO;
	cfg->max_line = NSD_DEFAULT_MAX_LINE;
	cfg->wait_ms = -1;
}

enum nsd_options_result
nsd_options_parse(int argc, char **argv, struct nsd_config *cfg,
    struct nsd_error *err)
{
	const char	*wait_option = NULL;
	uint64_t	 num;
	int		 ch, value, li;

	config_defaults(cfg);
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, short_options, long_options,
	    &li)) != -1) {
		switch (ch) {
		case 'a':
			cfg->mode = NSD_MODE_ANNOTATE;
			break;
		case 'd':
			cfg->mode = NSD_MODE_DROP_DUPS;
			break;
		case 'D':
			cfg->mode = NSD_MODE_ONLY_DUPS;
			break;
		case 'f':
			if (parse_choice("format", optarg, &value, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->format = value;
			break;
		case 'H':
			cfg->no_header = 1;
			break;
		case 'h':
			return (NSD_OPTIONS_HELP);
		case 'j':
			if (parse_number("jobs", optarg, 1, NSD_MAX_JOBS, 0,
			    &num, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->jobs = num;
			break;
		case 'k':
			if (cfg->nkeys == NSD_MAX_KEYS) {
				nsd_error_set(err, NSD_EXIT_USAGE,
				    "at most %d --key options", NSD_MAX_KEYS);
				return (NSD_OPTIONS_ERROR);
			}
			cfg->keys[cfg->nkeys++] = optarg;
			break;
		case 'm':
			if (parse_choice("method", optarg, &value, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->method = value;
			break;
		case 'n':
			if (parse_number("sentences", optarg, 1, 64, 0, &num,
			    err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->sentences = num;
			break;
		case 'o':
			if (optarg[0] == '\0') {
				nsd_error_set(err, NSD_EXIT_USAGE,
				    "--output must not be empty");
				return (NSD_OPTIONS_ERROR);
			}
			cfg->output = optarg;
			break;
		case 'q':
			cfg->quiet = 1;
			break;
		case 'V':
			return (NSD_OPTIONS_VERSION);
		case OPT_COMMON:
			if (parse_number("common", optarg, 0, 64, 0, &num,
			    err) == -1)
				return (NSD_OPTIONS_ERROR);
			if (num == 1) {
				nsd_error_set(err, NSD_EXIT_USAGE,
				    "--common must be 0 (off) or from 2 to 64");
				return (NSD_OPTIONS_ERROR);
			}
			cfg->common = num;
			cfg->common_given = 1;
			break;
		case OPT_MIN_MATCH:
			if (parse_number("min-match", optarg, 1,
			    NSD_NSHASH_MAX_SENTENCES, 0, &num, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->min_match = num;
			cfg->min_match_given = 1;
			break;
		case OPT_COMPAT:
			if (parse_choice("compat", optarg, &value, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->compat = value;
			break;
		case OPT_DB:
			if (optarg[0] == '\0') {
				nsd_error_set(err, NSD_EXIT_USAGE,
				    "--db must not be empty");
				return (NSD_OPTIONS_ERROR);
			}
			cfg->db = hide_password(optarg);
			break;
		case OPT_DB_INFO:
			cfg->action = NSD_ACTION_DB_INFO;
			break;
		case OPT_DB_VERIFY:
			cfg->action = NSD_ACTION_DB_VERIFY;
			break;
		case OPT_DISTANCE:
			if (parse_number("distance", optarg, 0, 8, 0, &num,
			    err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->distance = num;
			break;
		case OPT_EXPLAIN:
			cfg->explain = 1;
			break;
		case OPT_MIN_FEATURES:
			if (parse_number("min-features", optarg, 1, 100000, 0,
			    &num, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->min_features = num;
			break;
		case OPT_NGRAM:
			if (parse_number("ngram", optarg, 1, 8, 0, &num,
			    err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->ngram = num;
			cfg->ngram_given = 1;
			break;
		case OPT_SHINGLE:
			if (parse_number("shingle", optarg, 1, 8, 0, &num,
			    err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->shingle = num;
			cfg->shingle_given = 1;
			break;
		case OPT_DUP_FIELD:
			if (check_name("dup-field", optarg, 1, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->dup_field = optarg;
			break;
		case OPT_FIELD_NAME:
			if (check_name("field-name", optarg, 0, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->field_name = optarg;
			break;
		case OPT_ID_FIELD:
			cfg->id_field = optarg;
			cfg->id_field_given = 1;
			break;
		case OPT_MAX_LINE:
			if (parse_number("max-line", optarg, 1,
			    (uint64_t)1 << 32, 1, &num, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->max_line = num;
			break;
		case OPT_MIN_LENGTH:
			if (parse_number("min-length", optarg, 0, 100000, 0,
			    &num, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->min_length = num;
			break;
		case OPT_NO_UPDATE:
			cfg->no_update = 1;
			break;
		case OPT_NO_WAIT:
			wait_option = "no-wait";
			cfg->wait_ms = 0;
			break;
		case OPT_ON_ERROR:
			if (parse_choice("on-error", optarg, &value, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->on_error = value;
			break;
		case OPT_PROGRESS:
			if (parse_choice("progress", optarg, &value, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->progress = value;
			break;
		case OPT_STATS:
			cfg->stats = 1;
			break;
		case OPT_THRESHOLD:
			if (parse_fraction("threshold", optarg, 100,
			    &cfg->threshold, err) == -1)
				return (NSD_OPTIONS_ERROR);
			break;
		case OPT_TTL:
			/* Redis takes up to 2^63 ms; ten years is plenty. */
			if (parse_number("ttl", optarg, 1, 3650 * 86400ULL,
			    NUMBER_SECONDS, &num, err) == -1)
				return (NSD_OPTIONS_ERROR);
			cfg->ttl = (long)num;
			break;
		case OPT_WAIT:
			if (parse_number("wait", optarg, 0, 7 * 24 * 3600, 0,
			    &num, err) == -1)
				return (NSD_OPTIONS_ERROR);
			wait_option = "wait";
			cfg->wait_ms = (long)num * 1000;
			break;
		case ':':
			if (strncmp(argv[optind - 1], "--", 2) == 0)
				nsd_error_set(err, NSD_EXIT_USAGE,
				    "option '%s' requires a value",
				    argv[optind - 1]);
			else
				nsd_error_set(err, NSD_EXIT_USAGE,
				    "option '-%c' requires a value", optopt);
			return (NSD_OPTIONS_ERROR);
		default:
			bad_option(argv[optind - 1], optopt, err);
			return (NSD_OPTIONS_ERROR);
		}
	}
	if (cfg->nkeys == 0)
		cfg->keys[cfg->nkeys++] = "text";
	/* The reference has neither rule against boilerplate. */
	if (cfg->compat && !cfg->min_match_given)
		cfg->min_match = 1;
	if (cfg->compat && !cfg->common_given)
		cfg->common = 0;
	/* MinHash sees sets of features, which want other sizes. */
	if (cfg->method == NSD_METHOD_MINHASH && !cfg->ngram_given)
		cfg->ngram = NSD_MINHASH_DEFAULT_NGRAM;
	if (cfg->method == NSD_METHOD_MINHASH && !cfg->shingle_given)
		cfg->shingle = NSD_MINHASH_DEFAULT_SHINGLE;
	if (cfg->dup_field[0] != '\0' &&
	    strcmp(cfg->dup_field, cfg->field_name) == 0) {
		nsd_error_set(err, NSD_EXIT_USAGE,
		    "--field-name and --dup-field must differ ('%s')",
		    cfg->field_name);
		return (NSD_OPTIONS_ERROR);
	}
	cfg->files = argv + optind;
	cfg->nfiles = argc - optind;
	if (cfg->db == NULL && (cfg->no_update || wait_option != NULL ||
	    cfg->action != NSD_ACTION_RUN)) {
		nsd_error_set(err, NSD_EXIT_USAGE, "--%s needs --db PATH",
		    cfg->no_update ? "no-update" : wait_option != NULL ?
		    wait_option : cfg->action == NSD_ACTION_DB_INFO ?
		    "db-info" : "db-verify");
		return (NSD_OPTIONS_ERROR);
	}
	if (cfg->ttl > 0 && (cfg->db == NULL || !nsd_index_is_redis(cfg->db))) {
		nsd_error_set(err, NSD_EXIT_USAGE,
		    "--ttl needs --db redis://...: a file index keeps every "
		    "fingerprint");
		return (NSD_OPTIONS_ERROR);
	}
	if (cfg->db != NULL && nsd_index_is_redis(cfg->db) &&
	    cfg->action != NSD_ACTION_RUN) {
		nsd_error_set(err, NSD_EXIT_USAGE, "--%s reads an index file, "
		    "not %s", cfg->action == NSD_ACTION_DB_INFO ? "db-info" :
		    "db-verify", db_shown != NULL ? db_shown : cfg->db);
		return (NSD_OPTIONS_ERROR);
	}
	if (cfg->explain && (strcmp(cfg->field_name, "explain") == 0 ||
	    strcmp(cfg->dup_field, "explain") == 0)) {
		nsd_error_set(err, NSD_EXIT_USAGE,
		    "--explain writes the member 'explain': give --field-name "
		    "and --dup-field other names");
		return (NSD_OPTIONS_ERROR);
	}
	if (cfg->method != NSD_METHOD_NSHASH && cfg->compat) {
		nsd_error_set(err, NSD_EXIT_USAGE,
		    "--compat=nshash needs --method=nshash");
		return (NSD_OPTIONS_ERROR);
	}
	if (cfg->action != NSD_ACTION_RUN && cfg->nfiles > 0) {
		nsd_error_set(err, NSD_EXIT_USAGE, "--%s reads no FILE ('%s')",
		    cfg->action == NSD_ACTION_DB_INFO ? "db-info" :
		    "db-verify", cfg->files[0]);
		return (NSD_OPTIONS_ERROR);
	}
	return (NSD_OPTIONS_RUN);
}
