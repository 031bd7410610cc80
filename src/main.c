/*
 * main.c: the nsdedup command. Options, usage, diagnostics, exit status.
 *
 * This is the only file that prints or exits. Everything it reports comes
 * back from the modules as a struct nsd_error or through the pipeline's
 * hooks; stdout carries records only.
 */
#include "config.h"

#include <sys/time.h>

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "decompress.h"
#include "hanfold.h"
#include "index.h"
#include "index_format.h"
#include "index_redis.h"
#include "method.h"
#include "options.h"
#include "pipeline.h"
#include "region.h"
#include "text.h"
#include "writer.h"

#define SHOW_BAD_RECORDS	10
#define PROGRESS_LOG_SECONDS	10	/* --progress=always, not on a
					   terminal: a line this often */

static const char synopsis[] = "Usage: nsdedup [OPTION]... [FILE]...\n";

static const char help_start[] =
"Find near-duplicate records in newline-delimited JSON or TSV and annotate\n"
"them with the id of the first record of their group, or drop them.\n"
"With no FILE, or when FILE is -, read standard input.\n"
"\n";

/* Between the two, the options' help from their table. */
static const char help_end[] =
"\n"
"Exit status: 0 success, 1 success but some records were bad, 2 usage error,\n"
"3 input error, 4 output error, 5 stopped at a bad record, 6 out of memory,\n"
"7 the index cannot be used, 8 the index is busy, 9 the index could not be\n"
"written (the run committed nothing).\n"
"See nsdedup(1).\n"
"Reporting bugs: see REPORTING BUGS in nsdedup(1), or the README.\n";

/* After --version's first lines, as the GNU Coding Standards ask. */
static const char copyright[] =
"Copyright (C) 2026 The nsdedup authors.\n"
"License ISC: see the file COPYING that comes with the sources.\n"
"This is free software: you are free to change and redistribute it.\n"
"There is NO WARRANTY, to the extent permitted by law.\n";

/*
 * The temporary output file, and a table the index may be rebuilding, for
 * the signal handler to remove.
 */
static const char *volatile temp_path;
static const char *volatile scratch_path;

/* SIGUSR1 (or SIGINFO) came: show the progress once, as dd does. */
static volatile sig_atomic_t progress_asked;

struct report {
	const struct nsd_config	*cfg;
	uint64_t		 shown;
	int			 progress;	/* show the progress */
	int			 terminal;	/* on a terminal: one line,
						   drawn again in place */
	int			 drawn;		/* a progress line is on
						   screen */
	struct timespec		 start;
	struct timespec		 last;
};

static void usage(int) __attribute__((noreturn));

/*
 * Flush and close the standard output once a command that writes to it
 * (--help, --version, --db-info, --db-verify) is done, and report a
 * failure as the record output does: a full disk or a closed standard
 * output is exit status 4 with a message, never a silent loss.
 */
static int
finish_stdout(int status)
{
	int	 e;

	/* An earlier write that failed left its errno (callers clear it). */
	if (fflush(stdout) == 0 && !ferror(stdout) && fclose(stdout) == 0)
		return (status);
	e = errno;
	if (e != 0)
		fprintf(stderr, "nsdedup: standard output: write error: %s\n",
		    strerror(e));
	else
		fputs("nsdedup: standard output: write error\n", stderr);
	return (NSD_EXIT_OUTPUT);
}

static void
usage(int status)
{
	char	*options;

	if (status == NSD_EXIT_OK) {
		options = nsd_options_help();
		errno = 0;
		fputs(synopsis, stdout);
		fputs(help_start, stdout);
		fputs(options, stdout);
		fputs(help_end, stdout);
		free(options);
		exit(finish_stdout(status));
	} else {
		fputs(synopsis, stderr);
		fputs("Try 'nsdedup --help' for more information.\n", stderr);
	}
	exit(status);
}

static double
seconds_since(const struct timespec *t0)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ((now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) / 1e9);
}

static void
clear_progress(struct report *rp)
{
	if (rp->drawn) {
		fputs("\r\033[K", stderr);
		rp->drawn = 0;
	}
}

static void
on_bad_record(void *ctx, const char *file, uint64_t line, const char *reason)
{
	struct report	*rp = ctx;

	if (rp->cfg->quiet || rp->shown >= SHOW_BAD_RECORDS)
		return;
	rp->shown++;
	clear_progress(rp);
	fprintf(stderr, "nsdedup: %s:%" PRIu64 ": %s\n", file, line, reason);
}

/*
 * The progress line: records, duplicates, bytes and rate; and when every
 * input is a regular file, how much of them is read and the time left at
 * the rate so far.
 */
static void
format_progress(const struct report *rp, const struct nsd_stats *st,
    char *buf, size_t size)
{
	double	 t, done, left;
	int	 n;

	t = seconds_since(&rp->start);
	n = snprintf(buf, size, "nsdedup: %" PRIu64 " records, %" PRIu64
	    " duplicates, %.1f MB, %.1f MB/s", st->records, st->duplicates,
	    st->bytes / 1e6, t > 0 ? st->bytes / 1e6 / t : 0.0);
	if (st->input_size == 0 || n < 0 || (size_t)n >= size)
		return;
	done = st->input_done < st->input_size ?
	    (double)st->input_done / st->input_size : 1.0;
	n += snprintf(buf + n, size - n, ", %.0f%% read", 100 * done);
	if (done > 0 && done < 1 && (size_t)n < size) {
		left = t * (1 - done) / done;
		if (left < 60)
			snprintf(buf + n, size - n, ", %.0f s left", left);
		else
			snprintf(buf + n, size - n, ", %.0f min left",
			    left / 60);
	}
}

/* The progress as a line of its own: asked for, or into a log. */
static void
print_progress_line(struct report *rp, const struct nsd_stats *st)
{
	char	 line[256];

	clear_progress(rp);
	format_progress(rp, st, line, sizeof line);
	fprintf(stderr, "%s\n", line);
}

/*
 * Show the progress: on a terminal, one line drawn again in place twice a
 * second; elsewhere (--progress=always into a log), a plain line every
 * PROGRESS_LOG_SECONDS. A line asked for by a signal comes at once, plain.
 */
static void
on_progress(void *ctx, const struct nsd_stats *st)
{
	struct report	*rp = ctx;
	char		 line[256];

	if (progress_asked) {
		progress_asked = 0;
		print_progress_line(rp, st);
		return;
	}
	if (!rp->progress || seconds_since(&rp->last) <
	    (rp->terminal ? 0.5 : PROGRESS_LOG_SECONDS))
		return;
	clock_gettime(CLOCK_MONOTONIC, &rp->last);
	if (!rp->terminal) {
		print_progress_line(rp, st);
		return;
	}
	format_progress(rp, st, line, sizeof line);
	fprintf(stderr, "\r\033[K%s", line);
	rp->drawn = 1;
}

/*
 * The index outgrew memory but could not move into a file: the run went
 * on in memory, and the user should know why its memory grew.
 */
static void
warn_spill(struct nsd_index *ix)
{
	struct nsd_index_info	 info;

	nsd_index_info(ix, &info);
	if (info.spill_error != NULL)
		fprintf(stderr, "nsdedup: the index outgrew %lu MiB of memory "
		    "and could not move into a file: %s; it stayed in memory\n",
		    NSD_REGION_ANON_MAX >> 20, info.spill_error);
}

/*
 * --stats=json: the summary as one JSON object on a line of its own, the
 * last of standard error, with the run's exit status, for monitoring.
 */
static void
print_stats_json(const struct nsd_stats *st, const struct nsd_index_info *info,
    double elapsed, int status)
{
	fprintf(stderr, "{\"status\":%d,\"files\":%" PRIu64 ",\"records\":%"
	    PRIu64 ",\"bytes\":%" PRIu64 ",\"originals\":%" PRIu64
	    ",\"no_text\":%" PRIu64 ",\"duplicates\":%" PRIu64
	    ",\"unconfirmed\":%" PRIu64 ",\"bad\":%" PRIu64 ",\"blank\":%"
	    PRIu64 ",\"elapsed_seconds\":%.3f,\"mb_per_second\":%.1f,"
	    "\"lookups\":%" PRIu64 ",\"candidates\":%" PRIu64
	    ",\"index\":{\"entries\":%" PRIu64 ",\"groups\":%" PRIu64
	    ",\"memory_bytes\":%" PRIu64 ",\"peak_bytes\":%" PRIu64
	    ",\"mapped_bytes\":%" PRIu64 "}", status, st->files, st->records,
	    st->bytes, st->originals, st->no_text, st->duplicates,
	    st->unconfirmed, st->bad, st->blank, elapsed,
	    elapsed > 0 ? st->bytes / 1e6 / elapsed : 0.0, st->lookups,
	    st->candidates, info->fingerprints, info->groups, info->memory,
	    info->peak, info->mapped);
	if (info->servers > 0)
		fprintf(stderr, ",\"redis\":{\"masters\":%" PRIu64
		    ",\"commands\":%" PRIu64 ",\"round_trips\":%" PRIu64
		    ",\"moved\":%" PRIu64 ",\"ask\":%" PRIu64 ",\"retried\":%"
		    PRIu64 ",\"reconnects\":%" PRIu64 ",\"conflicts\":%"
		    PRIu64 ",\"gave_way\":%" PRIu64 "}", info->servers,
		    info->commands, info->round_trips, info->moved, info->ask,
		    info->retried, info->reconnects, info->conflicts,
		    info->gave_way);
	fputs("}\n", stderr);
}

static void
print_stats(const struct nsd_config *cfg, const struct nsd_stats *st,
    struct nsd_index *ix, double elapsed, int status)
{
	struct nsd_index_info	 info;

	nsd_index_info(ix, &info);
	if (cfg->stats == NSD_STATS_JSON) {
		print_stats_json(st, &info, elapsed, status);
		return;
	}
	fprintf(stderr,
	    "nsdedup: records     %" PRIu64 "\n"
	    "nsdedup: bytes       %" PRIu64 "\n"
	    "nsdedup: originals   %" PRIu64 " (%" PRIu64
	    " with nothing to compare)\n"
	    "nsdedup: duplicates  %" PRIu64 "\n"
	    "nsdedup: unconfirmed %" PRIu64 " matches (--confirm)\n"
	    "nsdedup: bad         %" PRIu64 "\n"
	    "nsdedup: blank       %" PRIu64 "\n"
	    "nsdedup: elapsed     %.3f s\n"
	    "nsdedup: throughput  %.1f MB/s\n"
	    "nsdedup: index       %" PRIu64 " entries, %" PRIu64
	    " groups, "
	    "%.1f MiB of memory (%.1f MiB at peak), %.1f MiB mapped\n",
	    st->records, st->bytes, st->originals, st->no_text, st->duplicates,
	    st->unconfirmed, st->bad, st->blank, elapsed,
	    elapsed > 0 ? st->bytes / 1e6 / elapsed : 0.0,
	    info.fingerprints, info.groups, info.memory / 1048576.0,
	    info.peak / 1048576.0, info.mapped / 1048576.0);
	if (st->lookups > 0)
		fprintf(stderr, "nsdedup: candidates  %.2f per lookup (%"
		    PRIu64 " lookups)\n", (double)st->candidates / st->lookups,
		    st->lookups);
	if (info.servers > 0)
		fprintf(stderr, "nsdedup: redis       %" PRIu64 " master%s, %"
		    PRIu64 " commands in %" PRIu64 " round trips; %" PRIu64
		    " MOVED, %" PRIu64 " ASK, %" PRIu64 " retried, %" PRIu64
		    " reconnects; %" PRIu64 " conflicts, %" PRIu64
		    " groups gave way\n", info.servers,
		    info.servers == 1 ? "" : "s", info.commands,
		    info.round_trips, info.moved, info.ask, info.retried,
		    info.reconnects, info.conflicts, info.gave_way);
}

/*
 * On a signal that ends the run: remove the temporary output, then die of
 * the signal.
 */
static void
on_signal(int sig)
{
	if (temp_path != NULL)
		unlink(temp_path);
	if (scratch_path != NULL)
		unlink(scratch_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * The signals whose default action ends the process and that a user or the
 * system sends to end it (not those of a fault in the program, such as
 * SIGSEGV or SIGABRT), and the real-time ones.
 */
static const int ending_signals[] = {
	SIGALRM, SIGHUP, SIGINT, SIGPIPE, SIGPROF, SIGQUIT, SIGTERM,
	SIGUSR2, SIGVTALRM, SIGXCPU, SIGXFSZ,
#ifdef SIGPOLL
	SIGPOLL,
#endif
#ifdef SIGPWR
	SIGPWR,
#endif
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};

/*
 * Catch the signals that end a run, so that none leaves the temporary
 * output file; one that is ignored (nohup ignores SIGHUP, a shell SIGINT
 * for a background job, a caller may SIGPIPE), or that something else
 * handles (a profiler's SIGPROF), stays so. set gets those caught.
 */
static void
catch_signals(sigset_t *set)
{
	struct sigaction	 sa, was;
	sigset_t		 all;
	size_t			 i;
	int			 sig;

	sigemptyset(&all);
	for (i = 0; i < sizeof ending_signals / sizeof ending_signals[0]; i++)
		sigaddset(&all, ending_signals[i]);
#ifdef SIGRTMIN
	for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&all, sig);
#endif
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_mask = all;
	sigemptyset(set);
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&all, sig) == 1 &&
		    sigaction(sig, NULL, &was) == 0 &&
		    !(was.sa_flags & SA_SIGINFO) &&
		    was.sa_handler == SIG_DFL &&
		    sigaction(sig, &sa, NULL) == 0)
			sigaddset(set, sig);
}

static void
on_progress_signal(int sig)
{
	(void)sig;
	progress_asked = 1;
}

/*
 * SIGUSR1, and SIGINFO where there is one (^T on BSD terminals), ask for a
 * progress line and the run goes on; one that is ignored stays so.
 */
static void
catch_progress_signals(void)
{
	static const int	 asking[] = {
		SIGUSR1,
#ifdef SIGINFO
		SIGINFO,
#endif
	};
	struct sigaction	 sa, was;
	size_t			 i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_progress_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof asking / sizeof asking[0]; i++)
		if (sigaction(asking[i], NULL, &was) == 0 &&
		    !(was.sa_flags & SA_SIGINFO) && was.sa_handler == SIG_DFL)
			(void)sigaction(asking[i], &sa, NULL);
}

/* A Unix time as UTC, ISO 8601. */
static const char *
utc(int64_t t, char *buf, size_t size)
{
	time_t		 tt = (time_t)t;
	struct tm	 tm;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "%" PRId64, t);
	return (buf);
}

/* A part of the hash space, of 2^64 positions, in percent. */
static double
share_of_space(uint64_t positions)
{
	return (positions == UINT64_MAX ? 100.0 : positions / 1.8446744e17);
}

/* A length of time in the units --ttl takes, for messages. */
static void
span(uint64_t s, char *buf, size_t size)
{
	if (s % 86400 == 0)
		snprintf(buf, size, "%" PRIu64 "d", s / 86400);
	else if (s % 3600 == 0)
		snprintf(buf, size, "%" PRIu64 "h", s / 3600);
	else if (s % 60 == 0)
		snprintf(buf, size, "%" PRIu64 "m", s / 60);
	else
		snprintf(buf, size, "%" PRIu64 "s", s);
}

/* The lines of --db-info about the window (--ttl). */
static void
print_window(const char *path, const struct nsd_index_report *r)
{
	char	 t[32], w[32];

	if (r->ttl == 0)
		printf("window:        none: every group is kept (--ttl sets "
		    "one)\n");
	else {
		span(r->ttl, w, sizeof w);
		printf("window:        %s (--ttl): groups opened before %s "
		    "are forgotten%s\n", w, utc(r->cutoff, t, sizeof t),
		    r->times ? "" : "; the times of the commits are missing "
		    "or damaged, so no more are until runs record theirs");
	}
	printf("forgotten:     %" PRIu64 " group%s; %s.ids takes %" PRIu64
	    " bytes on disk\n", r->forgotten, r->forgotten == 1 ? "" : "s",
	    path, r->ids_allocated);
	if (r->oldest_group == 0)
		printf("oldest group:  none\n");
	else if (r->oldest_opened == 0)
		printf("oldest group:  %" PRIu64 ", opened at a time not "
		    "recorded\n", r->oldest_group);
	else
		printf("oldest group:  %" PRIu64 ", opened %s, %.1f days "
		    "ago\n", r->oldest_group, utc(r->oldest_opened, t,
		    sizeof t), (double)(r->now - r->oldest_opened) / 86400);
}

/* The line of --db-info about the key filter. */
static void
print_filter(const char *path, const struct nsd_index_report *r)
{
	switch (r->filter) {
	case NSD_REPORT_FILTER_OK:
		printf("filter:        %" PRIu64 " bytes in %s.filter, ",
		    r->filter_file_size, path);
		if (r->filter_keys > 0)
			printf("%.1f bits a key\n", 512.0 * r->filter_blocks /
			    r->filter_keys);
		else
			printf("no key yet\n");
		return;
	case NSD_REPORT_FILTER_NONE:
	case NSD_REPORT_FILTER_UNUSED:
		printf("filter:        none (the next run that writes makes "
		    "it)\n");
		return;
	default:
		printf("filter:        %s.filter cannot be used (the next run "
		    "that writes makes it anew)\n", path);
		return;
	}
}

/*
 * The runs --db-undo can take back (n, the first of them in runs, or none
 * given), and why not one more.
 */
static void
print_undo(size_t n, const struct nsd_undo_run *runs, const char *why)
{
	char	 t[32];
	size_t	 i;

	if (n == 0) {
		printf("undo:          nothing to take back: %s\n", why);
		return;
	}
	printf("undo:          %zu run%s can be taken back (--db-undo)%s\n", n,
	    n == 1 ? "" : "s", runs != NULL ? ", the last first:" : "");
	for (i = 0; runs != NULL && i < n && i < NSD_INDEX_UNDO_MAX; i++)
		printf("               generation %" PRIu64 ", %" PRIu64
		    " records, committed %s\n", runs[i].generation,
		    runs[i].records, utc(runs[i].committed_at, t, sizeof t));
	printf("               not the one before: %s\n", why);
}

/* --db-info, and the summary --db-verify ends with. */
static void
print_report(const char *path, const struct nsd_index_report *r)
{
	const struct nsd_method_ops *m;
	char	 t1[32], t2[32], params[160];

	m = nsd_method_named(r->method, NULL);
	if (m != NULL)
		m->describe(r, params, sizeof params);
	else
		snprintf(params, sizeof params, "--method %s", r->method);

	printf("index:         %s\n"
	    "format:        version %u (header copy %c in use)\n"
	    "parameters:    %s, normalization %u\n"
	    "records:       %" PRIu64 "\n"
	    "groups:        %" PRIu64 "\n"
	    "entries:       %" PRIu64 " in the table, %" PRIu64
	    " in the stage, %" PRIu64 " in the log\n"
	    "load:          %.1f%% of %" PRIu64 " slots (grows past 62.5%%)\n"
	    "file size:     %" PRIu64 " bytes, and %" PRIu64
	    " in %s.ids (%" PRIu64 " committed)\n"
	    "log:           %" PRIu64 " records, %" PRIu64 " bytes in %s.log"
	    " (folded into the stage at %" PRIu64 ")\n",
	    path, r->version, 'A' + r->copy, params,
	    r->norm_version, r->records, r->groups, r->fingerprints,
	    r->stage_entries, r->log_records * r->ntables,
	    r->slots ? 100.0 * (r->fingerprints + r->stage_entries +
	    r->log_records * r->ntables) / r->slots : 0.0, r->slots,
	    r->file_size, r->ids_file_size, path, r->ids_length,
	    r->log_records, r->log_file_size, path,
	    nsd_index_log_limit(r->slots, r->ntables));
	if (r->sketch_bytes != 0)
		printf("sketches:      %u bytes a group (matches are "
		    "confirmed)\n", r->sketch_bytes);
	else
		printf("sketches:      none (made before them: matches are not "
		    "confirmed; rebuild the index to confirm them)\n");
	if (r->stage_build == 0)
		printf("stage:         none\n");
	else
		printf("stage:         %" PRIu64 " entries in %" PRIu64
		    " slots, %" PRIu64 " bytes in %s.stage (build %" PRIu64
		    "%s)\n", r->stage_entries, r->stage_slots,
		    r->stage_file_size, path, r->stage_build,
		    r->stage_unfinished ? "; the next build is there, and the "
		    "next run that writes takes it" : "");
	print_filter(path, r);
	printf("sweep:         at %.1f%% of the hash space, %.1f%% of it "
	    "since the last fold\n", share_of_space(r->sweep_cursor),
	    share_of_space(r->sweep_done));
	if (r->next_slots != 0)
		printf("growing:       to %" PRIu64 " slots in %s.next, %.1f%% "
		    "of the way round; %" PRIu64 " entries, %" PRIu64
		    " bytes\n", r->next_slots, path,
		    share_of_space(r->grow_done), r->next_entries,
		    r->next_file_size);
	printf("generation:    %" PRIu64 " (runs that added to it)\n"
	    "created:       %s\n"
	    "last commit:   %s\n", r->generation,
	    utc(r->created, t1, sizeof t1), utc(r->committed_at, t2,
	    sizeof t2));
	if (r->pending > r->generation)
		printf("interrupted:   run %" PRIu64 " did not commit; the next"
		    " run that writes clears what it left\n", r->pending);
	print_window(path, r);
	print_undo(r->undo_runs, r->undo, r->undo_why);
}

/* A line of --db-info for a namespace: count words, each with its key. */
static void
print_count(const char *label, uint64_t n, const char *one,
    const char *many, const char *ns, const char *key)
{
	printf("%-15s%" PRIu64 " %s (%s:%s)\n", label, n, n == 1 ? one : many,
	    ns, key);
}

/*
 * --db-info of a redis:// namespace, and the summary --db-verify ends
 * with, in the layout of a file's (print_report()).
 */
static void
print_redis_report(const struct nsd_redis_report *r)
{
	const struct nsd_method_ops *m;
	char	 params[160];

	printf("index:         %s\n", r->url);
	if (r->params.method[0] == '\0') {
		printf("format:        unknown\n"
		    "parameters:    cannot be read (%s:params)\n", r->ns);
	} else {
		m = nsd_method_named(r->params.method, NULL);
		if (m != NULL)
			m->describe(&r->params, params, sizeof params);
		else
			snprintf(params, sizeof params, "--method %s",
			    r->params.method);
		printf("format:        nsdedup-redis %u (%s:params)\n"
		    "parameters:    %s, normalization %u\n", r->params.version,
		    r->ns, params, r->params.norm_version);
	}
	printf("groups:        %" PRIu64 " numbered (%s:next), %" PRIu64
	    " records (%s:g:N), %" PRIu64 " given way to another\n",
	    r->next, r->ns, r->groups, r->ns, r->gave_way);
	if (r->blocks > 0 || r->params.ntables > 1)
		printf("fingerprints:  %" PRIu64 " entries in %" PRIu64
		    " SimHash block values (%s:s:TABLE:HEX)\n",
		    r->block_entries, r->blocks, r->ns);
	else
		print_count("fingerprints:", r->fingerprints, "key", "keys",
		    r->ns, "f:HEX");
	printf("arbitrations:  %" PRIu64 " between two groups (%s:a:N:M), %"
	    PRIu64 " stances (%s:w:N)\n", r->pairs, r->ns, r->stances,
	    r->ns);
	printf("runs:          %" PRIu64 " done, %" PRIu64 " running "
	    "(%s:run:TOKEN)\n", r->runs_done, r->runs_running, r->ns);
	printf("keys:          %" PRIu64 "%s under %s:, %" PRIu64 " of them "
	    "not nsdedup's\n", r->keys, r->partial ? " looked at (SCAN found "
	    "more)" : "", r->ns, r->others);
	if (r->expiring == 0)
		printf("ttl:           none: no key expires\n");
	else
		printf("ttl:           %" PRIu64 " of the keys expire, the "
		    "last in %" PRId64 " s (--ttl)\n", r->expiring,
		    r->ttl_max);
	printf("servers:       %zu master%s%s: %s\n", r->masters,
	    r->masters == 1 ? "" : "s", r->cluster ? " of a cluster" :
	    ", a single server", r->servers);
	if (r->params.method[0] != '\0' && r->params.sketch_bytes != 0)
		printf("sketches:      %u bytes a group (matches are "
		    "confirmed)\n", r->params.sketch_bytes);
	else if (r->params.method[0] != '\0')
		printf("sketches:      none (made before them: matches are not "
		    "confirmed; make a new namespace to confirm them)\n");
}

static void
on_problem(void *ctx, const char *msg)
{
	fprintf(stderr, "nsdedup: %s: %s\n", (const char *)ctx, msg);
}

/* A namespace's problem, named by its URL without a password. */
static void
on_redis_problem(void *ctx, const char *msg)
{
	const struct nsd_redis_report *r = ctx;

	fprintf(stderr, "nsdedup: %s: %s\n", r->url, msg);
}

/* --db-info and --db-verify of a redis:// namespace. */
static int
inspect_redis(const struct nsd_config *cfg)
{
	struct nsd_redis_inspect io;
	struct nsd_redis_report	 r;
	struct nsd_error	 err = { 0, "" };
	const char		*methods[16];
	const struct nsd_method_ops *m;
	uint64_t		 problems = 0;
	size_t			 i;
	int			 rc;

	for (i = 0; i + 1 < sizeof methods / sizeof methods[0] &&
	    (m = nsd_method_at(i)) != NULL; i++)
		methods[i] = m->name;
	methods[i] = NULL;
	io.url = cfg->db;
	io.methods = methods;
	io.norm_version = NSD_NORM_VERSION;
	io.max_keys = NSD_REDIS_INSPECT_MAX;
	if (cfg->action == NSD_ACTION_DB_INFO)
		rc = nsd_index_redis_describe(&io, &r, &err);
	else
		rc = nsd_index_redis_verify(&io, on_redis_problem, &r, 50, &r,
		    &problems, &err);
	if (rc == -1) {
		fprintf(stderr, "nsdedup: %s\n", err.msg);
		return (err.status);
	}
	errno = 0;
	print_redis_report(&r);
	if (cfg->action == NSD_ACTION_DB_VERIFY) {
		if (problems > 0)
			fprintf(stderr, "nsdedup: %s: damaged: %" PRIu64
			    " problem%s found\n", r.url, problems,
			    problems == 1 ? "" : "s");
		else
			printf("verified:      no problems found%s\n",
			    r.partial ? " in the keys looked at" : "");
	}
	nsd_redis_report_free(&r);
	return (finish_stdout(problems > 0 ? NSD_EXIT_INDEX : NSD_EXIT_OK));
}

/* --db-undo: take back the index's last run, read no records. */
static int
undo(const struct nsd_config *cfg)
{
	struct nsd_index_undone	 u;
	struct nsd_error	 err = { 0, "" };
	char			 t[32];

	if (nsd_index_undo(cfg->db, cfg->wait_ms, &u, &err) == -1) {
		fprintf(stderr, "nsdedup: %s\n", err.msg);
		return (err.status);
	}
	errno = 0;
	printf("undone:        the run committed %s (generation %" PRIu64
	    ", %" PRIu64 " records)\n"
	    "index:         %s, as before it: generation %" PRIu64 ", %"
	    PRIu64 " records\n", utc(u.run.committed_at, t, sizeof t),
	    u.run.generation, u.run.records, cfg->db, u.generation,
	    u.records);
	print_undo(u.left, NULL, u.why);
	return (finish_stdout(NSD_EXIT_OK));
}

/* --db-info and --db-verify: look at the index, read no records. */
static int
inspect(const struct nsd_config *cfg)
{
	struct nsd_index_report	 r;
	struct nsd_error	 err = { 0, "" };
	uint64_t		 problems = 0;
	int			 rc;

	if (cfg->action == NSD_ACTION_DB_UNDO)
		return (undo(cfg));
	if (nsd_index_is_redis(cfg->db))
		return (inspect_redis(cfg));
	if (cfg->action == NSD_ACTION_DB_INFO)
		rc = nsd_index_describe(cfg->db, cfg->wait_ms, &r, &err);
	else
		rc = nsd_index_verify(cfg->db, cfg->wait_ms, on_problem,
		    (void *)cfg->db, 50, &r, &problems, &err);
	if (rc == -1) {
		fprintf(stderr, "nsdedup: %s\n", err.msg);
		return (err.status);
	}
	errno = 0;
	print_report(cfg->db, &r);
	if (cfg->action == NSD_ACTION_DB_VERIFY) {
		if (r.leftovers > 0)
			printf("leftovers:     %" PRIu64 " slots of run %"
			    PRIu64 ", to be cleared\n", r.leftovers,
			    r.pending);
		if (problems > 0)
			fprintf(stderr, "nsdedup: %s: damaged: %" PRIu64
			    " problem%s found\n", cfg->db, problems,
			    problems == 1 ? "" : "s");
		else
			printf("verified:      no problems found\n");
	}
	return (finish_stdout(problems > 0 ? NSD_EXIT_INDEX : NSD_EXIT_OK));
}

/*
 * Open /dev/null on each of descriptors 0, 1 and 2 that is closed, as
 * gnulib's stdopen does, so that no file opened later (the index's, the
 * output's) takes its number and receives records or messages meant for a
 * standard stream. Each is opened for the access that makes any use of it
 * fail: standard input write-only, so that reading it is an input error;
 * standard output and standard error read-only, so that writing records
 * is an output error and messages are lost. Returns the descriptor that
 * could not be opened, or -1.
 */
static int
guard_standard_fds(void)
{
	int	 fd, want;

	for (want = STDIN_FILENO; want <= STDERR_FILENO; want++) {
		if (fcntl(want, F_GETFD) != -1 || errno != EBADF)
			continue;
		fd = open("/dev/null", want == STDIN_FILENO ? O_WRONLY :
		    O_RDONLY);
		if (fd == -1)
			return (want);
		/* The lowest free number: those below want are open. */
		assert(fd == want);
	}
	return (-1);
}

static void
fatal(struct report *rp, const struct nsd_error *err)
{
	clear_progress(rp);
	fprintf(stderr, "nsdedup: %s\n", err->msg);
}

/* --version: the program, and what its indexes depend on. */
static void
print_version(void)
{
	const struct nsd_method_ops *m;
	size_t		 i;

	printf("nsdedup %s\n", PACKAGE_VERSION);
	fputs("fingerprints:", stdout);
	for (i = 0; (m = nsd_method_at(i)) != NULL; i++)
		printf("%s %s", i == 0 ? "" : ",", m->name);
	printf("; normalization version %d\n", NSD_NORM_VERSION);
	nsd_hanfold_init();
	printf("Han folding: %zu characters from OpenCC's dictionaries, "
	    "checksum %016" PRIx64 "\n", nsd_hanfold_size(),
	    nsd_hanfold_checksum());
	printf("compressed inputs: %s\n", nsd_compression_built_in());
	fputs(copyright, stdout);
}

int
main(int argc, char **argv)
{
	struct nsd_config	 cfg;
	struct nsd_error	 err = { 0, "" };
	struct nsd_index	*ix = NULL;
	struct nsd_output	*out = NULL;
	struct nsd_writer	 wr;
	struct nsd_stats	 st;
	struct nsd_index_params	 ip;
	struct nsd_index_open	 io;
	struct nsd_index_redis	 ir;
	struct nsd_pipeline_hooks hooks;
	struct report		 rp;
	sigset_t		 signals, old;
	struct timespec		 no_wait = { 0, 0 };
	int			 rc, fd, status;

	/* Before anything else is opened. */
	if ((fd = guard_standard_fds()) != -1) {
		rc = errno;
		fprintf(stderr, "nsdedup: standard %s is closed, and /dev/null "
		    "cannot be opened in its place: %s\n", fd == STDIN_FILENO ?
		    "input" : fd == STDOUT_FILENO ? "output" : "error",
		    strerror(rc));
		return (fd == STDIN_FILENO ? NSD_EXIT_INPUT : NSD_EXIT_OUTPUT);
	}

	switch (nsd_options_parse(argc, argv, &cfg, &err)) {
	case NSD_OPTIONS_HELP:
		usage(NSD_EXIT_OK);
		/* NOTREACHED */
	case NSD_OPTIONS_VERSION:
		errno = 0;
		print_version();
		return (finish_stdout(NSD_EXIT_OK));
	case NSD_OPTIONS_ERROR:
		fprintf(stderr, "nsdedup: %s\n", err.msg);
		usage(NSD_EXIT_USAGE);
		/* NOTREACHED */
	case NSD_OPTIONS_RUN:
		break;
	}
	if (cfg.action != NSD_ACTION_RUN)
		return (inspect(&cfg));
	if (cfg.nfiles == 0 && isatty(STDIN_FILENO)) {
		fputs("nsdedup: no input: give a FILE, or pipe records in\n",
		    stderr);
		usage(NSD_EXIT_USAGE);
	}

	catch_progress_signals();
	memset(&rp, 0, sizeof rp);
	rp.cfg = &cfg;
	rp.terminal = isatty(STDERR_FILENO);
	rp.progress = !cfg.quiet && (cfg.progress == NSD_PROGRESS_ALWAYS ||
	    (cfg.progress == NSD_PROGRESS_AUTO && rp.terminal));
	clock_gettime(CLOCK_MONOTONIC, &rp.start);
	rp.last = rp.start;
	hooks.bad_record = on_bad_record;
	hooks.progress = on_progress;
	hooks.ctx = &rp;

	nsd_pipeline_index_params(&cfg, &ip);
	if (cfg.db != NULL && nsd_index_is_redis(cfg.db)) {
		ir.url = cfg.db;
		ir.readonly = cfg.no_update;
		ir.ttl = cfg.ttl;
		rc = nsd_index_open_redis(&ix, &ir, &ip, &err);
	} else if (cfg.db != NULL) {
		io.path = cfg.db;
		io.readonly = cfg.no_update;
		io.wait_ms = cfg.wait_ms;
		io.undo = 0;
		io.ttl = cfg.ttl > 0 ? (uint64_t)cfg.ttl : 0;
		rc = nsd_index_open_file(&ix, &io, &ip, &err);
	} else
		rc = nsd_index_open_memory(&ix, &ip, &err);
	/* --no-update: the run's own claims stay above the index. */
	if (rc == 0 && cfg.no_update)
		rc = nsd_index_open_overlay(&ix, ix, &err);
	if (rc == -1) {
		fatal(&rp, &err);
		return (err.status);
	}
	/*
	 * The handler removes the temporary output file: it must know the
	 * file as soon as it exists, and never see its path once finish or
	 * discard has renamed, removed or freed it. So the signals are held
	 * while the file is made, and again from the end of the run through
	 * the index commit; one that comes meanwhile is delivered after.
	 */
	scratch_path = ix->scratch;
	catch_signals(&signals);
	sigprocmask(SIG_BLOCK, &signals, &old);
	rc = nsd_output_open(&out, cfg.output, &err);
	temp_path = rc == 0 ? nsd_output_temp_path(out) : NULL;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc == -1) {
		fatal(&rp, &err);
		scratch_path = NULL;
		nsd_index_close(ix);
		return (err.status);
	}
	nsd_writer_init(&wr, out, cfg.field_name, cfg.dup_field);
	wr.explain = cfg.explain;

	rc = nsd_pipeline_run(&cfg, ix, &wr, &hooks, &st, &err);
	sigprocmask(SIG_BLOCK, &signals, &old);
	if (rc == 0)
		rc = nsd_output_finish(out, &err);
	else
		nsd_output_discard(out);
	temp_path = NULL;
	if (rc == 0)
		rc = nsd_index_commit(ix, st.originals + st.duplicates,
		    &err);
	/*
	 * A signal held meanwhile came too late to stop anything: the output
	 * is complete and the index committed. Dying of it now would tell a
	 * caller to run again, and the run again would find only duplicates.
	 */
	if (rc == 0)
		while (sigtimedwait(&signals, NULL, &no_wait) > 0)
			continue;
	sigprocmask(SIG_SETMASK, &old, NULL);

	clear_progress(&rp);
	/* A log of --progress=always gets the last line, with the totals. */
	if (rp.progress && !rp.terminal)
		print_progress_line(&rp, &st);
	if (!cfg.quiet && st.bad > rp.shown)
		fprintf(stderr,
		    "nsdedup: %" PRIu64 " bad records (%" PRIu64 " shown)\n",
		    st.bad, rp.shown);
	if (rc == -1)
		fatal(&rp, &err);
	if (!cfg.quiet)
		warn_spill(ix);
	status = rc == -1 ? err.status : st.bad > 0 ? NSD_EXIT_BADREC :
	    NSD_EXIT_OK;
	if (cfg.stats != NSD_STATS_NONE)
		print_stats(&cfg, &st, ix, seconds_since(&rp.start), status);
	nsd_writer_free(&wr);
	scratch_path = NULL;
	nsd_index_close(ix);
	return (status);
}
