/*
 * options.c: argv to struct nsd_config.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_redis.h"
#include "nshash.h"
#include "method.h"
#include "options.h"
#include "utf8.h"

/*
 * The value of --db when it had to be copied out of argv (see
 * hide_password), or NULL; kept for the life of the process.
 */
static char *db_copy;

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
	{ "on-error",	"pass",		NSD_ON_ERROR_PASS },
	{ "on-error",	"skip",		NSD_ON_ERROR_SKIP },
	{ "on-error",	"fail",		NSD_ON_ERROR_FAIL },
	{ "progress",	"auto",		NSD_PROGRESS_AUTO },
	{ "progress",	"always",	NSD_PROGRESS_ALWAYS },
	{ "progress",	"never",	NSD_PROGRESS_NEVER },
	{ "stats",	"text",		NSD_STATS_TEXT },
	{ "stats",	"json",		NSD_STATS_JSON },
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

/* A method's name, from the registry; the error lists them all. */
static int
parse_method(const char *option, const char *word, enum nsd_method *m,
    struct nsd_error *err)
{
	const struct nsd_method_ops *ops;
	char	 valid[128] = "";
	size_t	 i, used = 0;

	if (nsd_method_named(word, m) != NULL)
		return (0);
	for (i = 0; (ops = nsd_method_at(i)) != NULL; i++)
		used += snprintf(valid + used, sizeof valid - used, "%s%s",
		    used > 0 ? ", " : "", ops->name);
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
 * The options, one entry each, in the order --help lists them: how each is
 * named, what its value is and where it goes, the methods it belongs to,
 * and its help. nsd_options_parse() is a loop over this table, and
 * nsd_options_help() prints it.
 */
enum option_kind {
	KIND_FLAG,	/* no value: the int at field becomes value */
	KIND_CHOICE,	/* a word of choices[]: the enum at field */
	KIND_METHOD,	/* a method's name: the enum nsd_method at field */
	KIND_NUMBER,	/* parse_number() in [min, max]: the unsigned */
	KIND_SIZE,	/* the same with K, M or G: the size_t */
	KIND_SECONDS,	/* the same with s, m, h or d: the long */
	KIND_FRACTION,	/* parse_fraction() from min: the unsigned */
	KIND_NAME,	/* check_name(): the const char * */
	KIND_STRING,	/* anything, not empty unless OPTION_EMPTY */
	KIND_ACT	/* done by the parser itself: value is an ACT_ */
};

/* What the parser does for a KIND_ACT option. */
enum option_act {
	ACT_HELP,
	ACT_VERSION,
	ACT_KEY,	/* one more key */
	ACT_DB,		/* the index, its password hidden */
	ACT_WAIT,
	ACT_NO_WAIT
};

/* An option's flags. */
#define OPTION_EMPTY	0x1	/* its value may be empty */
#define OPTION_OPTIONAL	0x2	/* its value may be left out (--stats,
				   --stats=json): a KIND_CHOICE option then
				   takes its value */

struct option_spec {
	const char	*section;	/* --help's heading, or NULL */
	const char	*name;
	int		 letter;	/* its short name, or 0 */
	const char	*arg;		/* its value in --help; NULL: none */
	enum option_kind kind;
	size_t		 field;		/* offsetof(struct nsd_config, ...) */
	int		 value;		/* KIND_FLAG: what it sets;
					   KIND_ACT: an ACT_ */
	uint64_t	 min;
	uint64_t	 max;
	int		 flags;
	const char	*help;		/* lines; the first beside the option */
};

#define FIELD(f)	offsetof(struct nsd_config, f)

static const struct option_spec specs[] = {
	{ "Mode", "annotate", 'a', NULL, KIND_FLAG, FIELD(mode),
	  NSD_MODE_ANNOTATE, 0, 0, 0,
	  "write every record with similar_id and is_dup added\n"
	  "(the default)" },
	{ NULL, "drop-dups", 'd', NULL, KIND_FLAG, FIELD(mode),
	  NSD_MODE_DROP_DUPS, 0, 0, 0,
	  "write only the originals, unchanged" },
	{ NULL, "only-dups", 'D', NULL, KIND_FLAG, FIELD(mode),
	  NSD_MODE_ONLY_DUPS, 0, 0, 0,
	  "write only the duplicates, annotated" },

	{ "Input", "format", 'f', "FORMAT", KIND_CHOICE, FIELD(format),
	  0, 0, 0, 0,
	  "auto (default: per file, from the first line), jsonl\n"
	  "or tsv" },
	{ NULL, "key", 'k', "FIELD", KIND_ACT, 0, ACT_KEY, 0, 0, 0,
	  "the text to compare (default text); repeat to join\n"
	  "several fields; FIELD is a top-level member, a JSON\n"
	  "Pointer such as /body/text, a TSV header name or a\n"
	  "1-based TSV column number" },
	{ NULL, "id-field", 0, "FIELD", KIND_STRING, FIELD(id_field),
	  0, 0, 0, OPTION_EMPTY,
	  "the field that names a record (default id)" },
	{ NULL, "no-header", 'H', NULL, KIND_FLAG, FIELD(no_header),
	  1, 0, 0, 0,
	  "TSV input has no header line: columns are numbers\n"
	  "(-k 3), and similar_id is a group number unless\n"
	  "--id-field gives the id column's number" },
	{ NULL, "max-line", 0, "SIZE", KIND_SIZE, FIELD(max_line),
	  0, 1, (uint64_t)1 << 32, 0,
	  "longest record read whole, in bytes (default 16M;\n"
	  "K, M, G suffixes); longer lines are bad records" },
	{ NULL, "on-error", 0, "POLICY", KIND_CHOICE, FIELD(on_error),
	  0, 0, 0, 0,
	  "what to do with a bad record: pass (default: write\n"
	  "it unchanged), skip, or fail (stop the run)" },

	{ "Fingerprints", "method", 'm', "METHOD", KIND_METHOD,
	  FIELD(method), 0, 0, 0, 0,
	  "nshash (default): hashes of the longest sentences;\n"
	  "simhash: 64-bit SimHash within --distance bits;\n"
	  "minhash: MinHash-LSH, Jaccard of at least\n"
	  "--threshold" },
	{ NULL, "sentences", 'n', "N", KIND_NUMBER, FIELD(sentences),
	  0, 1, 64, 0,
	  "nshash: how many of the longest sentences (default 5)" },
	{ NULL, "min-length", 0, "N", KIND_NUMBER, FIELD(min_length),
	  0, 0, 100000, 0,
	  "nshash: a sentence must be longer than N characters\n"
	  "(default 30)" },
	{ NULL, "min-match", 0, "M", KIND_NUMBER, FIELD(min_match),
	  0, 1, NSD_NSHASH_MAX_SENTENCES, 0,
	  "nshash: a duplicate shares M of its fingerprints\n"
	  "with its group, or all when it has fewer\n"
	  "(default 2)" },
	{ NULL, "common", 0, "C", KIND_NUMBER, FIELD(common),
	  0, 0, 64, 0,
	  "nshash: a sentence that C groups share is\n"
	  "boilerplate, passed over (default 3; 0: off)" },
	{ NULL, "compat", 0, "nshash", KIND_CHOICE, FIELD(compat),
	  0, 0, 0, 0,
	  "split and select exactly as the reference nshash" },
	{ NULL, "distance", 0, "K", KIND_NUMBER, FIELD(distance),
	  0, 0, 8, 0,
	  "simhash: most bits that may differ (0-8, default 3)" },
	{ NULL, "threshold", 0, "J", KIND_FRACTION, FIELD(threshold),
	  0, 100, 10000, 0,
	  "minhash: least estimated Jaccard similarity of\n"
	  "a duplicate and its group (0.01-1, default 0.5)" },
	{ NULL, "ngram", 0, "N", KIND_NUMBER, FIELD(ngram),
	  0, 1, 8, 0,
	  "simhash, minhash: characters per Han/Kana/Hangul\n"
	  "feature (default 2; minhash 3)" },
	{ NULL, "shingle", 0, "N", KIND_NUMBER, FIELD(shingle),
	  0, 1, 8, 0,
	  "simhash, minhash: words per feature elsewhere\n"
	  "(default 3; minhash 2)" },
	{ NULL, "min-features", 0, "N", KIND_NUMBER, FIELD(min_features),
	  0, 1, 100000, 0,
	  "simhash, minhash: fewer features is nothing to\n"
	  "compare (default 8)" },
	{ NULL, "confirm", 0, "C", KIND_FRACTION, FIELD(confirm),
	  0, 0, 10000, 0,
	  "confirm each match on the whole texts: the smaller\n"
	  "shares at least C of its text with the other, and\n"
	  "enough of its numbers (default 0.7; 0: off);\n"
	  "minhash asks for the numbers only" },

	{ "Output", "output", 'o', "FILE", KIND_STRING, FIELD(output),
	  0, 0, 0, 0,
	  "write to FILE, replaced only when the run succeeds" },
	{ NULL, "field-name", 0, "NAME", KIND_NAME, FIELD(field_name),
	  0, 0, 0, 0,
	  "name of the added member or column (default\n"
	  "similar_id)" },
	{ NULL, "explain", 0, NULL, KIND_FLAG, FIELD(explain), 1, 0, 0, 0,
	  "add to each duplicate the evidence of its match" },
	{ NULL, "dup-field", 0, "NAME", KIND_NAME, FIELD(dup_field),
	  0, 0, 0, OPTION_EMPTY,
	  "name of the true/false member or column saying\n"
	  "whether a record is a duplicate (default is_dup;\n"
	  "empty: leave it out)" },

	{ "Index", "db", 0, "PATH", KIND_ACT, 0, ACT_DB, 0, 0, 0,
	  "remember fingerprints in the index file PATH (made\n"
	  "when missing), so later runs compare against them;\n"
	  "or share them between hosts on Redis (Cluster):\n"
	  "redis://HOST:PORT[,HOST:PORT...][/NAMESPACE]" },
	{ NULL, "no-update", 0, NULL, KIND_FLAG, FIELD(no_update),
	  1, 0, 0, 0,
	  "compare against the index, but add nothing to it" },
	{ NULL, "wait", 0, "SECONDS", KIND_ACT, 0, ACT_WAIT, 0, 7 * 24 * 3600,
	  0,
	  "wait at most SECONDS for a run that holds the index\n"
	  "(default: as long as it takes)" },
	{ NULL, "no-wait", 0, NULL, KIND_ACT, 0, ACT_NO_WAIT, 0, 0, 0,
	  "do not wait: exit with status 8 at once" },
	/* Redis takes up to 2^63 ms; ten years is plenty. */
	{ NULL, "ttl", 0, "SECONDS", KIND_SECONDS, FIELD(ttl),
	  0, 1, 3650 * 86400ULL, 0,
	  "forget groups SECONDS after they were opened (suffix\n"
	  "s, m, h or d); an index file keeps it as its window" },
	{ NULL, "db-info", 0, NULL, KIND_FLAG, FIELD(action),
	  NSD_ACTION_DB_INFO, 0, 0, 0,
	  "describe the index and exit" },
	{ NULL, "db-undo", 0, NULL, KIND_FLAG, FIELD(action),
	  NSD_ACTION_DB_UNDO, 0, 0, 0,
	  "take back the last run committed to the index\n"
	  "(again: the run before) and exit" },
	{ NULL, "db-verify", 0, NULL, KIND_FLAG, FIELD(action),
	  NSD_ACTION_DB_VERIFY, 0, 0, 0,
	  "check every invariant of the index and exit" },

	{ "Performance", "jobs", 'j', "N", KIND_NUMBER, FIELD(jobs),
	  0, 1, NSD_MAX_JOBS, 0,
	  "fingerprint on N threads (default: the cores\n"
	  "available); the output is the same for every N" },

	{ "Messages", "progress", 0, "WHEN", KIND_CHOICE, FIELD(progress),
	  0, 0, 0, 0,
	  "auto (default: when standard error is a terminal),\n"
	  "always or never" },
	{ NULL, "quiet", 'q', NULL, KIND_FLAG, FIELD(quiet), 1, 0, 0, 0,
	  "no messages about bad records, no progress" },
	{ NULL, "stats", 0, "FORMAT", KIND_CHOICE, FIELD(stats),
	  NSD_STATS_TEXT, 0, 0, OPTION_OPTIONAL,
	  "a summary on standard error at the end, as\n"
	  "text (the default) or as one JSON object (json)" },
	{ NULL, "help", 'h', NULL, KIND_ACT, 0, ACT_HELP, 0, 0, 0,
	  "show this help and exit" },
	{ NULL, "version", 'V', NULL, KIND_ACT, 0, ACT_VERSION, 0, 0, 0,
	  "show the version and exit" },
};

#define NSPECS	(sizeof specs / sizeof specs[0])

/* The column where --help's descriptions start. */
#define HELP_COLUMN	25

/* getopt_long's tables, made from specs[] once. */
static struct option	long_options[NSPECS + 1];
static char		short_options[2 * NSPECS + 2];

/*
 * Fill long_options and short_options from specs[]: a long option returns
 * 256 + its index, a short one its letter. The leading ':' of the short
 * options makes getopt report a missing value as ':'.
 */
static void
make_getopt_tables(void)
{
	size_t	 i, n = 0;

	if (short_options[0] != '\0')
		return;
	short_options[n++] = ':';
	for (i = 0; i < NSPECS; i++) {
		long_options[i].name = specs[i].name;
		long_options[i].has_arg = specs[i].arg == NULL ?
		    no_argument : specs[i].flags & OPTION_OPTIONAL ?
		    optional_argument : required_argument;
		long_options[i].flag = NULL;
		long_options[i].val = 256 + (int)i;
		if (specs[i].letter != 0) {
			short_options[n++] = (char)specs[i].letter;
			if (specs[i].arg != NULL)
				short_options[n++] = ':';
		}
	}
	short_options[n] = '\0';
}

/* The entry of specs[] for what getopt_long returned, or NULL. */
static const struct option_spec *
spec_of(int ch)
{
	size_t	 i;

	if (ch >= 256 && (size_t)(ch - 256) < NSPECS)
		return (&specs[ch - 256]);
	for (i = 0; i < NSPECS; i++)
		if (ch == specs[i].letter && ch != 0)
			return (&specs[i]);
	return (NULL);
}

/* Whether the option called name is one of method m's own. */
static int
method_has(const struct nsd_method_ops *m, const char *name)
{
	const char *const *o;

	for (o = m->options; *o != NULL; o++)
		if (strcmp(*o, name) == 0)
			return (1);
	return (0);
}

/*
 * The methods whose own option is called name, as "simhash and minhash",
 * into buf; returns how many (0: an option of every method).
 */
static int
methods_of(const char *name, char *buf, size_t size)
{
	const struct nsd_method_ops *m;
	size_t		 i, used = 0;
	int		 count = 0, n = 0;

	for (i = 0; (m = nsd_method_at(i)) != NULL; i++)
		count += method_has(m, name);
	for (i = 0; (m = nsd_method_at(i)) != NULL; i++) {
		if (!method_has(m, name))
			continue;
		used += snprintf(buf + used, size - used, "%s%s",
		    n == 0 ? "" : n + 1 == count ? " and " : ", ", m->name);
		n++;
	}
	return (count);
}

/* Append to b as printf(3) would. */
static void
buf_printf(struct nsd_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
buf_printf(struct nsd_buf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	nsd_buf_reserve(b, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *
nsd_options_help(void)
{
	struct nsd_buf	 b = { NULL, 0, 0 };
	const char	*line, *end;
	char		 head[64];
	size_t		 i;
	int		 len;

	for (i = 0; i < NSPECS; i++) {
		if (specs[i].section != NULL)
			buf_printf(&b, "%s%s:\n", i > 0 ? "\n" : "",
			    specs[i].section);
		if (specs[i].letter != 0)
			len = snprintf(head, sizeof head, "  -%c, --%s",
			    specs[i].letter, specs[i].name);
		else
			len = snprintf(head, sizeof head, "      --%s",
			    specs[i].name);
		if (specs[i].arg != NULL)
			len += snprintf(head + len, sizeof head - len,
			    specs[i].flags & OPTION_OPTIONAL ? "[=%s]" : "=%s",
			    specs[i].arg);
		buf_printf(&b, "%s%*s", head,
		    len < HELP_COLUMN - 1 ? HELP_COLUMN - len : 1, "");
		for (line = specs[i].help; ; line = end + 1) {
			end = strchrnul(line, '\n');
			if (line != specs[i].help)
				buf_printf(&b, "%*s", HELP_COLUMN, "");
			buf_printf(&b, "%.*s\n", (int)(end - line), line);
			if (*end == '\0')
				break;
		}
	}
	return (b.data);
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
	cfg->method = NSD_METHOD_DEFAULT;
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
	cfg->confirm = NSD_DEFAULT_CONFIRM;
	cfg->field_name = "similar_id";
	cfg->dup_field = "is_dup";
	cfg->on_error = NSD_ON_ERROR_PASS;
	cfg->progress = NSD_PROGRESS_AUTO;
	cfg->max_line = NSD_DEFAULT_MAX_LINE;
	cfg->wait_ms = -1;
}

/* Where an option's value goes in cfg. */
#define AT(cfg, spec, type)	((type *)((char *)(cfg) + (spec)->field))

/*
 * Store the value of option spec, given as arg, into cfg: the kinds of
 * specs[] but KIND_ACT. 0, or -1 with err set.
 */
static int
store(struct nsd_config *cfg, const struct option_spec *spec,
    const char *arg, struct nsd_error *err)
{
	uint64_t	 num;
	int		 value = 0;

	switch (spec->kind) {
	case KIND_FLAG:
		*AT(cfg, spec, int) = spec->value;
		return (0);
	case KIND_CHOICE:
		if (arg == NULL)
			value = spec->value;
		else if (parse_choice(spec->name, arg, &value, err) == -1)
			return (-1);
		*AT(cfg, spec, int) = value;
		return (0);
	case KIND_METHOD:
		return (parse_method(spec->name, arg,
		    AT(cfg, spec, enum nsd_method), err));
	case KIND_NUMBER:
	case KIND_SIZE:
	case KIND_SECONDS:
		if (parse_number(spec->name, arg, spec->min, spec->max,
		    spec->kind == KIND_SIZE ? NUMBER_SIZE :
		    spec->kind == KIND_SECONDS ? NUMBER_SECONDS : 0, &num,
		    err) == -1)
			return (-1);
		if (spec->kind == KIND_SIZE)
			*AT(cfg, spec, size_t) = num;
		else if (spec->kind == KIND_SECONDS)
			*AT(cfg, spec, long) = (long)num;
		else
			*AT(cfg, spec, unsigned) = num;
		return (0);
	case KIND_FRACTION:
		return (parse_fraction(spec->name, arg, spec->min,
		    AT(cfg, spec, unsigned), err));
	case KIND_NAME:
		if (check_name(spec->name, arg, spec->flags & OPTION_EMPTY,
		    err) == -1)
			return (-1);
		*AT(cfg, spec, const char *) = arg;
		return (0);
	case KIND_STRING:
		if (arg[0] == '\0' && !(spec->flags & OPTION_EMPTY))
			return (nsd_error_set(err, NSD_EXIT_USAGE,
			    "--%s must not be empty", spec->name));
		*AT(cfg, spec, const char *) = arg;
		return (0);
	case KIND_ACT:
		break;
	}
	abort();
}

/* The index of the option named name in specs[]. */
static size_t
spec_index(const char *name)
{
	size_t	 i;

	for (i = 0; i < NSPECS; i++)
		if (strcmp(specs[i].name, name) == 0)
			return (i);
	abort();
}

/* The option of an action, for messages. */
static const char *
action_name(enum nsd_action action)
{
	switch (action) {
	case NSD_ACTION_DB_INFO:
		return ("db-info");
	case NSD_ACTION_DB_VERIFY:
		return ("db-verify");
	case NSD_ACTION_DB_UNDO:
		return ("db-undo");
	case NSD_ACTION_RUN:
		break;
	}
	return ("");
}

/*
 * The rules between options, once every option is read; given[i] says
 * whether specs[i] was. 0, or -1 with err set.
 */
static int
check_together(struct nsd_config *cfg, const unsigned char *given,
    const char *wait_option, struct nsd_error *err)
{
	char		 methods[64];
	size_t		 i;

	for (i = 0; i < NSPECS; i++)
		if (given[i] && methods_of(specs[i].name, methods,
		    sizeof methods) && !method_has(nsd_method_of(cfg->method),
		    specs[i].name))
			return (nsd_error_set(err, NSD_EXIT_USAGE,
			    "--%s is an option of --method %s, not of %s",
			    specs[i].name, methods,
			    nsd_method_of(cfg->method)->name));
	if (given[spec_index("common")] && cfg->common == 1)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--common must be 0 (off) or from 2 to 64"));
	if (cfg->dup_field[0] != '\0' &&
	    strcmp(cfg->dup_field, cfg->field_name) == 0)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--field-name and --dup-field must differ ('%s')",
		    cfg->field_name));
	if (cfg->db == NULL && (cfg->no_update || wait_option != NULL ||
	    cfg->action != NSD_ACTION_RUN))
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--%s needs --db PATH", cfg->no_update ? "no-update" :
		    wait_option != NULL ? wait_option :
		    action_name(cfg->action)));
	if (cfg->action == NSD_ACTION_DB_UNDO && cfg->no_update)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--db-undo changes the index: it cannot go with "
		    "--no-update"));
	if (cfg->action == NSD_ACTION_DB_UNDO && nsd_index_is_redis(cfg->db))
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--db-undo takes back runs of a file index only: a "
		    "redis:// index keeps no state before a run (see Undo in "
		    "nsdedup-index(5))"));
	if (cfg->ttl > 0 && cfg->db == NULL)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--ttl needs --db: a run without an index forgets "
		    "everything when it ends"));
	if (cfg->ttl > 0 && cfg->action != NSD_ACTION_RUN &&
	    !nsd_index_is_redis(cfg->db))
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--ttl sets the window of a run over the index: it does "
		    "not go with --%s", action_name(cfg->action)));
	if (cfg->explain && (strcmp(cfg->field_name, "explain") == 0 ||
	    strcmp(cfg->dup_field, "explain") == 0))
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--explain writes the member 'explain': give --field-name "
		    "and --dup-field other names"));
	if (cfg->action != NSD_ACTION_RUN && cfg->nfiles > 0)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "--%s reads no FILE ('%s')", action_name(cfg->action),
		    cfg->files[0]));
	return (0);
}

enum nsd_options_result
nsd_options_parse(int argc, char **argv, struct nsd_config *cfg,
    struct nsd_error *err)
{
	const struct option_spec *spec;
	unsigned char	 given[NSPECS];
	const char	*wait_option = NULL;
	uint64_t	 num;
	int		 ch, li;

	config_defaults(cfg);
	make_getopt_tables();
	memset(given, 0, sizeof given);
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, short_options, long_options,
	    &li)) != -1) {
		if (ch == ':') {
			if (strncmp(argv[optind - 1], "--", 2) == 0)
				nsd_error_set(err, NSD_EXIT_USAGE,
				    "option '%s' requires a value",
				    argv[optind - 1]);
			else
				nsd_error_set(err, NSD_EXIT_USAGE,
				    "option '-%c' requires a value", optopt);
			return (NSD_OPTIONS_ERROR);
		}
		if ((spec = spec_of(ch)) == NULL) {
			bad_option(argv[optind - 1], optopt, err);
			return (NSD_OPTIONS_ERROR);
		}
		given[spec - specs] = 1;
		if (spec->kind != KIND_ACT) {
			if (store(cfg, spec, optarg, err) == -1)
				return (NSD_OPTIONS_ERROR);
			continue;
		}
		switch (spec->value) {
		case ACT_HELP:
			return (NSD_OPTIONS_HELP);
		case ACT_VERSION:
			return (NSD_OPTIONS_VERSION);
		case ACT_KEY:
			if (cfg->nkeys == NSD_MAX_KEYS) {
				nsd_error_set(err, NSD_EXIT_USAGE,
				    "at most %d --key options", NSD_MAX_KEYS);
				return (NSD_OPTIONS_ERROR);
			}
			cfg->keys[cfg->nkeys++] = optarg;
			break;
		case ACT_DB:
			if (optarg[0] == '\0') {
				nsd_error_set(err, NSD_EXIT_USAGE,
				    "--db must not be empty");
				return (NSD_OPTIONS_ERROR);
			}
			cfg->db = hide_password(optarg);
			break;
		case ACT_WAIT:
			if (parse_number(spec->name, optarg, spec->min,
			    spec->max, 0, &num, err) == -1)
				return (NSD_OPTIONS_ERROR);
			wait_option = spec->name;
			cfg->wait_ms = (long)num * 1000;
			break;
		case ACT_NO_WAIT:
			wait_option = spec->name;
			cfg->wait_ms = 0;
			break;
		}
	}
	if (cfg->nkeys == 0)
		cfg->keys[cfg->nkeys++] = "text";
	cfg->id_field_given = given[spec_index("id-field")];
	cfg->min_match_given = given[spec_index("min-match")];
	cfg->common_given = given[spec_index("common")];
	cfg->confirm_given = given[spec_index("confirm")];
	cfg->ngram_given = given[spec_index("ngram")];
	cfg->shingle_given = given[spec_index("shingle")];
	if (nsd_method_of(cfg->method)->defaults != NULL)
		nsd_method_of(cfg->method)->defaults(cfg);
	cfg->files = argv + optind;
	cfg->nfiles = argc - optind;
	if (check_together(cfg, given, wait_option, err) == -1)
		return (NSD_OPTIONS_ERROR);
	return (NSD_OPTIONS_RUN);
}
