/*
 * pipeline.c: the stages of a run (see pipeline.h) and the loop over inputs.
 */
#include "config.h"

#include <sys/stat.h>

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "method.h"
#include "text.h"
#include "pipeline.h"
#include "reader.h"
#include "records.h"

enum record_kind {
	RECORD_OK,		/* a record to fingerprint and judge */
	RECORD_BLANK,		/* an empty or all-white-space line */
	RECORD_HEADER,		/* a TSV header line */
	RECORD_BAD		/* bad input, see reason */
};

/*
 * What the stages learn about one line of a batch; what its method makes
 * of it is its verdict, at the same place in the batch's verdicts.
 */
struct record {
	enum record_kind kind;
	size_t		 reason;	/* bad: offset in the batch's reasons */
	size_t		 key_off;	/* its keys in the batch's */
	struct nsd_record_found found;	/* its id and members */
	uint64_t	 group;		/* decided: the record's group */
	int		 dup;
	uint64_t	 number;	/* named: the group's number */
	size_t		 name_off;	/* named: the group's id in the
					   batch's names, or SIZE_MAX: none */
	size_t		 name_len;
};

/* A batch of lines and what the stages wrote about them. */
struct work {
	struct nsd_batch	 lines;
	struct record		*recs;
	struct nsd_verdict	*verdicts;	/* beside recs */
	size_t			 recs_cap;
	uint64_t		*keys;		/* the records' keys */
	unsigned char		*code;		/* beside each key (see
						   struct nsd_verdict) */
	size_t			 nkeys;
	size_t			 keys_cap;
	unsigned char		*sigs;		/* record i's at i * the
						   index's sig_bytes */
	size_t			 sigs_cap;	/* records */
	struct nsd_spans	 spans;
	struct nsd_buf		 reasons;
	struct nsd_buf		 id;		/* a TSV id as a JSON token */
	struct nsd_buf		 names;		/* the ids of the groups */
};

/* The state stage 2 needs, one per thread. */
struct nsd_worker {
	struct nsd_record_scanner rs;		/* the record's text */
	const struct nsd_method_ops *method;
	void			*scanner;	/* the method's */
	unsigned		 max_keys;	/* a record's, at most */
	size_t			 sig_bytes;	/* a record's, if it opens a
						   group */
	size_t			 sketch_bytes;	/* the end of them */
};

static int
worker_init(struct nsd_worker *w, const struct nsd_config *cfg,
    const struct nsd_index *ix, struct nsd_error *err)
{
	const struct nsd_method_ops *m = nsd_method_of(cfg->method);

	memset(w, 0, sizeof *w);
	w->method = m;
	w->max_keys = m->max_keys(cfg);
	w->sig_bytes = ix->params.sig_bytes;
	w->sketch_bytes = ix->params.sketch_bytes;
	if (nsd_record_scanner_init(&w->rs, cfg, m->joiner == NULL ? '\n' :
	    m->joiner(cfg, &ix->params), err) == -1)
		return (-1);
	w->scanner = m->scanner_new(cfg, &ix->params, err);
	return (w->scanner == NULL ? -1 : 0);
}

static void
worker_free(struct nsd_worker *w)
{
	nsd_record_scanner_free(&w->rs);
	if (w->method != NULL)
		w->method->scanner_free(w->scanner);
}

static void
work_free(struct work *wk)
{
	nsd_batch_free(&wk->lines);
	free(wk->recs);
	free(wk->verdicts);
	free(wk->keys);
	free(wk->code);
	free(wk->sigs);
	free(wk->spans.v);
	nsd_buf_free(&wk->reasons);
	nsd_buf_free(&wk->id);
	nsd_buf_free(&wk->names);
}

/* Mark a record bad, keeping its reason in the batch. */
static void
set_bad(struct work *wk, struct record *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
set_bad(struct work *wk, struct record *r, const char *fmt, ...)
{
	va_list	 ap;
	char	 reason[256];
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	else if ((size_t)n >= sizeof reason)
		n = sizeof reason - 1;
	r->kind = RECORD_BAD;
	r->reason = wk->reasons.len;
	nsd_buf_append(&wk->reasons, reason, n);
	nsd_buf_putc(&wk->reasons, '\0');
}

/* The first of the inputs before in that has a TSV header, or NULL. */
static const struct nsd_record_input *
first_header(const struct nsd_config *cfg,
    const struct nsd_record_input *inputs, const struct nsd_record_input *in)
{
	const struct nsd_record_input *p;

	for (p = inputs; p < in && !cfg->no_header; p++)
		if (p->format == NSD_FORMAT_TSV && p->header_seen)
			return (p);
	return (NULL);
}

/*
 * Stage 1, in order: blank lines, the input's format, and the TSV header,
 * which must name the columns that the first of inputs[] with a header
 * named (in is one of them, read in turn). Long lines are bad here
 * already; the header errors are fatal.
 */
static int
stage_frame(const struct nsd_config *cfg,
    const struct nsd_record_input *inputs, struct nsd_record_input *in,
    struct work *wk, struct nsd_error *err)
{
	char		 why[NSD_RECORD_WHY_MAX];
	size_t		 i;

	wk->reasons.len = 0;
	if (wk->recs_cap < wk->lines.nlines) {
		wk->recs_cap = wk->lines.nlines;
		wk->recs = xreallocarray(wk->recs, wk->recs_cap,
		    sizeof *wk->recs);
		wk->verdicts = xreallocarray(wk->verdicts, wk->recs_cap,
		    sizeof *wk->verdicts);
	}
	for (i = 0; i < wk->lines.nlines; i++) {
		const struct nsd_line	*l = &wk->lines.lines[i];
		const char		*s = nsd_line_data(&wk->lines, l);
		struct record		*r = &wk->recs[i];

		memset(r, 0, sizeof *r);
		memset(&wk->verdicts[i], 0, sizeof wk->verdicts[i]);
		r->kind = RECORD_OK;
		if (l->kind == NSD_LINE_LONG_MORE ||
		    l->kind == NSD_LINE_LONG_LAST) {
			r->kind = RECORD_BAD;	/* the rest of a line reported
						   already */
			continue;
		}
		if (l->kind != NSD_LINE_WHOLE) {
			/*
			 * Its first bytes still decide the format, and a
			 * TSV header too long to read leaves no columns.
			 */
			if (in->format == NSD_FORMAT_AUTO)
				in->format = nsd_record_format_of(s, l->len);
			set_bad(wk, r,
			    "line longer than %zu bytes (--max-line)",
			    cfg->max_line);
			if (in->format == NSD_FORMAT_TSV && !in->header_seen &&
			    !cfg->no_header)
				return (nsd_error_set(err, NSD_EXIT_INPUT,
				    "%s:%llu: bad header: %s",
				    in->name, (unsigned long long)l->lineno,
				    wk->reasons.data + r->reason));
			continue;
		}
		if (nsd_record_is_blank(in->format, s, l->len)) {
			r->kind = RECORD_BLANK;
			continue;
		}
		if (in->format == NSD_FORMAT_AUTO)
			in->format = nsd_record_format_of(s, l->len);
		if (in->format != NSD_FORMAT_TSV || in->header_seen)
			continue;
		in->header_seen = 1;
		if (!cfg->no_header) {
			r->kind = RECORD_HEADER;
			if (nsd_record_check_tsv(s, l->len, why) == -1)
				return (nsd_error_set(err, NSD_EXIT_INPUT,
				    "%s:%llu: bad header: %s",
				    in->name, (unsigned long long)l->lineno,
				    why));
		}
		if (nsd_record_tsv_header(cfg, in, first_header(cfg, inputs,
		    in), s, l->len, l->lineno, err) == -1)
			return (-1);
	}
	return (0);
}

/* Stage 2: every record of the batch, independently of the others. */
static void
stage_scan(const struct nsd_config *cfg, struct nsd_worker *w,
    const struct nsd_record_input *in, struct work *wk)
{
	char		 why[NSD_RECORD_WHY_MAX];
	size_t		 i;

	wk->nkeys = 0;
	wk->spans.n = 0;
	if (w->sig_bytes > 0 && wk->sigs_cap < wk->lines.nlines) {
		wk->sigs_cap = wk->lines.nlines;
		wk->sigs = xreallocarray(wk->sigs, wk->sigs_cap, w->sig_bytes);
	}
	for (i = 0; i < wk->lines.nlines; i++) {
		const struct nsd_line	*l = &wk->lines.lines[i];
		const char		*s = nsd_line_data(&wk->lines, l);
		struct record		*r = &wk->recs[i];
		struct nsd_verdict	*v = &wk->verdicts[i];

		if (r->kind != RECORD_OK)
			continue;
		if (nsd_record_scan(cfg, &w->rs, in, s, l->len, &r->found,
		    &wk->spans, why) == -1) {
			set_bad(wk, r, "%s", why);
			continue;
		}
		/* Room for its keys, where the method writes them. */
		if (wk->nkeys + w->max_keys > wk->keys_cap) {
			wk->keys_cap = (wk->nkeys + w->max_keys) * 2;
			wk->keys = xreallocarray(wk->keys, wk->keys_cap,
			    sizeof *wk->keys);
			wk->code = xreallocarray(wk->code, wk->keys_cap, 1);
		}
		r->key_off = wk->nkeys;
		v->keys = wk->keys + wk->nkeys;
		v->code = wk->code + wk->nkeys;
		v->sig = w->sig_bytes == 0 ? NULL : wk->sigs + i * w->sig_bytes;
		v->sketch = w->sketch_bytes == 0 ? NULL :
		    v->sig + w->sig_bytes - w->sketch_bytes;
		w->method->scan(w->scanner, cfg, w->rs.text.data,
		    w->rs.text.len, v);
		wk->nkeys += v->nkeys;
	}
	/* The keys moved as they grew: where they are now. */
	for (i = 0; i < wk->lines.nlines; i++)
		if (wk->recs[i].kind == RECORD_OK) {
			wk->verdicts[i].keys = wk->keys + wk->recs[i].key_off;
			wk->verdicts[i].code = wk->code + wk->recs[i].key_off;
		}
}

/* r's id as a group keeps it. */
static void
record_id(const struct nsd_record_input *in, struct work *wk,
    const struct record *r, const struct nsd_line *l, const char **id,
    size_t *id_len)
{
	nsd_record_id(in, nsd_line_data(&wk->lines, l), &r->found, &wk->id, id,
	    id_len);
}

/* A new group for r, named by its id, keeping sig (or NULL). */
static int
open_group(const struct nsd_record_input *in, struct nsd_index *ix,
    struct work *wk, const struct record *r, const struct nsd_line *l,
    const unsigned char *sig, uint64_t *group, struct nsd_error *err)
{
	const char	*id;
	size_t		 id_len;

	record_id(in, wk, r, l, &id, &id_len);
	return (nsd_index_group_new_signed(ix, id, id_len, sig, group, err));
}

/*
 * A shared index has no commit: a run that failed leaves its groups, and
 * the run again finds its records already seen. Whether r is such a
 * record, the first of group (the group's id is r's, and the run that
 * opened it failed): then it is the group's original again, so that a run
 * again writes what the failed run would have written.
 */
static int
first_again(const struct nsd_record_input *in, struct nsd_index *ix,
    struct work *wk, const struct record *r, const struct nsd_line *l,
    uint64_t group, int *yes, struct nsd_error *err)
{
	struct nsd_group_name	 name;
	const char		*id;
	size_t			 id_len;

	*yes = 0;
	record_id(in, wk, r, l, &id, &id_len);
	if (id_len == 0 ||
	    nsd_index_group_name(ix, group, &name, err) == -1)
		return (id_len == 0 ? 0 : -1);
	if (name.id_len != id_len || memcmp(name.id, id, id_len) != 0)
		return (0);
	return (nsd_index_group_adopt(ix, group, yes, err));
}

/* Stage 3's loop: each record of the batch in turn. */
static int
decide_records(const struct nsd_config *cfg, const struct nsd_record_input *in,
    struct nsd_index *ix, struct work *wk, struct nsd_stats *st, size_t *stop,
    struct nsd_error *err)
{
	const struct nsd_method_ops *m = nsd_method_of(cfg->method);
	struct nsd_held	 held;
	uint64_t	 best;
	size_t		 i;
	int		 shared = nsd_index_is_shared(ix), again;

	for (i = 0; i < wk->lines.nlines; i++) {
		struct record		*r = &wk->recs[i];
		struct nsd_verdict	*v = &wk->verdicts[i];
		const struct nsd_line	*l = &wk->lines.lines[i];

		switch (r->kind) {
		case RECORD_BLANK:
			st->blank++;
			continue;
		case RECORD_HEADER:
			continue;
		case RECORD_BAD:
			if (l->kind == NSD_LINE_LONG_MORE ||
			    l->kind == NSD_LINE_LONG_LAST)
				continue;
			st->records++;
			st->bad++;
			if (cfg->on_error == NSD_ON_ERROR_FAIL) {
				*stop = i;
				return (0);
			}
			continue;
		case RECORD_OK:
			break;
		}
		st->records++;
		if (m->lookup(cfg, ix, v, &held, &best, st, err) == -1)
			return (-1);
		r->dup = best != 0;
		if (r->dup && shared && first_again(in, ix, wk, r, l, best,
		    &again, err) == -1)
			return (-1);
		if (r->dup && shared && again)
			r->dup = v->ev.exact = 0;
		if (best == 0 &&
		    open_group(in, ix, wk, r, l, v->sig, &best, err) == -1)
			return (-1);
		r->group = best;
		if (m->claim(cfg, ix, v, &held, best, r->dup, err) == -1)
			return (-1);
		if (r->dup)
			st->duplicates++;
		else {
			st->originals++;
			st->no_text += v->ev.usable == 0;
		}
	}
	return (0);
}

/*
 * Stage 3, in order: a record joins the oldest group it is a near copy of
 * (its method's lookup), or opens a new one; then its keys are claimed for
 * that group (those claimed before keep their group). Stops early, with
 * *stop set, at a bad record under --on-error=fail.
 */
static int
stage_decide(const struct nsd_config *cfg, const struct nsd_record_input *in,
    struct nsd_index *ix, struct work *wk, struct nsd_stats *st, size_t *stop,
    struct nsd_error *err)
{
	*stop = wk->lines.nlines;
	nsd_index_begin_batch(ix);
	if (nsd_method_of(cfg->method)->prefetch(cfg, ix, wk->verdicts,
	    wk->lines.nlines, err) == -1)
		return (-1);
	return (decide_records(cfg, in, ix, wk, st, stop, err));
}

/*
 * A shared index: write the batch's decisions (its first stop records),
 * and settle its conflicts with other processes (index_redis.c). A
 * record that opened a group while a near copy of it was being claimed
 * elsewhere gives way if the arbitration says so: it, and every record
 * of the batch that joined its group, become duplicates of the other.
 */
static int
settle_batch(const struct nsd_config *cfg, struct nsd_index *ix,
    struct work *wk, size_t stop, struct nsd_stats *st,
    struct nsd_error *err)
{
	const struct nsd_method_ops	*m = nsd_method_of(cfg->method);
	const struct nsd_index_conflict	*c;
	struct nsd_index_conflict	*pairs = NULL;
	struct record			*r;
	uint64_t			*winners = NULL;
	unsigned			*evidence = NULL, ev;
	size_t				 n, i, j, np = 0;
	int				 near, rc = -1;

	if (nsd_index_settle(ix, &c, &n, err) == -1)
		return (-1);
	if (n == 0)
		return (0);
	pairs = xreallocarray(NULL, n, sizeof *pairs);
	evidence = xreallocarray(NULL, n, sizeof *evidence);
	winners = xreallocarray(NULL, n, sizeof *winners);
	for (i = 0; i < n; i++) {
		for (j = 0, r = NULL; j < stop && r == NULL; j++)
			if (wk->recs[j].kind == RECORD_OK && !wk->recs[j].dup &&
			    wk->recs[j].group == c[i].ours)
				r = &wk->recs[j];
		if (r == NULL)
			continue;
		if ((near = m->near(cfg, ix, &wk->verdicts[r - wk->recs], c,
		    n, &c[i], &ev, err)) == -1)
			goto out;
		if (near && (near = nsd_method_confirm(cfg, ix,
		    &wk->verdicts[r - wk->recs], c[i].theirs, st, err)) == -1)
			goto out;
		if (!near)
			continue;
		/* One arbitration per group: with the oldest it met. */
		for (j = 0; j < np && pairs[j].ours != c[i].ours; j++)
			continue;
		if (j == np || c[i].theirs < pairs[j].theirs) {
			pairs[j] = c[i];
			evidence[j] = ev;
			np += j == np;
		}
	}
	if (nsd_index_arbitrate(ix, pairs, np, winners, err) == -1)
		goto out;
	for (j = 0; j < np; j++) {
		/* Theirs, or the group theirs gave way to meanwhile. */
		if (winners[j] == pairs[j].ours)
			continue;
		for (i = 0; i < stop; i++) {
			struct nsd_evidence *e = &wk->verdicts[i].ev;

			r = &wk->recs[i];
			if (r->kind != RECORD_OK || r->group != pairs[j].ours)
				continue;
			r->group = winners[j];
			if (r->dup)
				continue;
			r->dup = 1;
			e->exact = 0;
			e->evidence = evidence[j];
			memset(e->keys, 0, sizeof e->keys);
			st->originals--;
			st->no_text -= e->usable == 0;
			st->duplicates++;
		}
	}
	rc = 0;
out:
	free(pairs);
	free(evidence);
	free(winners);
	return (rc);
}

/*
 * The end of stage 3: the names of the groups of the records stage 4
 * annotates, up to record stop, copied into the batch, so that stage 4
 * never touches the index (a name may be a fetch from a shared one).
 */
static int
name_batch(const struct nsd_config *cfg, struct nsd_index *ix,
    struct work *wk, size_t stop, struct nsd_error *err)
{
	struct nsd_group_name	 name;
	struct record		*r;
	size_t			 i;

	wk->names.len = 0;
	if (cfg->mode == NSD_MODE_DROP_DUPS)
		return (0);
	for (i = 0; i < stop; i++) {
		r = &wk->recs[i];
		if (r->kind != RECORD_OK ||
		    (cfg->mode == NSD_MODE_ONLY_DUPS && !r->dup))
			continue;
		if (nsd_index_group_name(ix, r->group, &name, err) == -1)
			return (-1);
		r->number = name.number;
		r->name_off = SIZE_MAX;
		r->name_len = name.id_len;
		if (name.id != NULL) {
			r->name_off = wk->names.len;
			nsd_buf_append(&wk->names, name.id, name.id_len);
		}
	}
	return (0);
}

/* Stage 4 for a record that was judged: annotate it, pass it, or drop it. */
static int
write_judged(const struct nsd_config *cfg, struct nsd_writer *wr,
    const struct nsd_record_input *in, const struct work *wk,
    const struct record *r, const struct nsd_line *l, struct nsd_error *err)
{
	const char		*s = nsd_line_data(&wk->lines, l);
	struct nsd_annotation	 a;
	char			 evidence[NSD_EVIDENCE_MAX];

	if (cfg->mode == NSD_MODE_DROP_DUPS)
		return (r->dup ? 0 : nsd_writer_raw(wr, s, l->len, l->eol_len,
		    err));
	if (cfg->mode == NSD_MODE_ONLY_DUPS && !r->dup)
		return (0);
	memset(&a, 0, sizeof a);
	a.id = r->name_off == SIZE_MAX ? NULL : wk->names.data + r->name_off;
	a.id_len = r->name_len;
	a.group = r->number;
	a.dup = r->dup;
	if (cfg->explain && r->dup) {
		nsd_method_explain(nsd_method_of(cfg->method),
		    &wk->verdicts[r - wk->recs].ev, evidence, sizeof evidence);
		a.explain = evidence;
	}
	return (nsd_record_write(wr, in, s, l, &r->found, &wk->spans, &a,
	    err));
}

/* Stage 4, in order: the output, up to (not including) record stop. */
static int
stage_write(const struct nsd_config *cfg, struct nsd_writer *wr,
    struct nsd_record_input *in, const struct work *wk, size_t stop,
    struct nsd_error *err)
{
	const char	*s;
	size_t		 i;
	int		 pass = cfg->on_error == NSD_ON_ERROR_PASS;

	for (i = 0; i < stop; i++) {
		const struct record	*r = &wk->recs[i];
		const struct nsd_line	*l = &wk->lines.lines[i];

		s = nsd_line_data(&wk->lines, l);
		switch (r->kind) {
		case RECORD_BLANK:
			break;
		case RECORD_HEADER:
			/* The output is one table, with one header. */
			if (in->header_repeated)
				break;
			if (cfg->mode == NSD_MODE_DROP_DUPS) {
				if (nsd_writer_raw(wr, s, l->len, l->eol_len,
				    err) == -1)
					return (-1);
			} else if (nsd_record_write(wr, in, s, l, NULL, NULL,
			    NULL, err) == -1)
				return (-1);
			break;
		case RECORD_BAD:
			/*
			 * Pieces of a long line: its head decided whether
			 * they are passed.
			 */
			if (l->kind == NSD_LINE_LONG_HEAD)
				in->long_pass = pass;
			if (l->kind == NSD_LINE_LONG_HEAD ||
			    l->kind == NSD_LINE_LONG_MORE) {
				if (in->long_pass && nsd_output_write(wr->out,
				    s, l->len, err) == -1)
					return (-1);
				break;
			}
			if (l->kind == NSD_LINE_LONG_LAST) {
				if (in->long_pass && nsd_writer_raw(wr, s,
				    l->len, l->eol_len, err) == -1)
					return (-1);
				in->long_pass = 0;
				break;
			}
			if (pass && nsd_writer_raw(wr, s, l->len, l->eol_len,
			    err) == -1)
				return (-1);
			break;
		case RECORD_OK:
			if (write_judged(cfg, wr, in, wk, r, l, err) == -1)
				return (-1);
			break;
		}
	}
	return (0);
}

/* Tell the hook about the batch's bad records, up to record stop included. */
static void
report_bad(const struct nsd_pipeline_hooks *hooks,
    const struct nsd_record_input *in, const struct work *wk, size_t stop)
{
	size_t	 i;

	for (i = 0; i < wk->lines.nlines && i <= stop; i++) {
		const struct record	*r = &wk->recs[i];
		const struct nsd_line	*l = &wk->lines.lines[i];

		if (r->kind != RECORD_BAD || l->kind == NSD_LINE_LONG_MORE ||
		    l->kind == NSD_LINE_LONG_LAST)
			continue;
		if (hooks->bad_record != NULL)
			hooks->bad_record(hooks->ctx, in->name, l->lineno,
			    wk->reasons.data + r->reason);
	}
}

/*
 * The run. Batches go round a ring of slots: the main thread reads and
 * frames each batch into the next free slot, the workers scan framed
 * batches (whichever is oldest not taken yet), and the main thread decides
 * and writes the oldest batch once it is scanned. So the output is in
 * input order and the index is touched by the main thread only, whatever
 * the number of threads. While the oldest batch is not scanned yet, the
 * main thread scans one itself rather than wait, so --jobs=N is N threads
 * scanning, and --jobs=1 is no worker thread at all: the main thread does
 * everything, a batch at a time, in a ring of one slot.
 *
 * The ring holds at most 2N + 2 batches (RING_MAX at most) and RING_BYTES
 * of input (more only when a single batch is larger), which bounds the
 * memory of a run whatever its input. Reading stops early when the input
 * has nothing ready (a pipe from a slow writer): what the ring holds is
 * written and the output flushed before the main thread waits for more, so
 * that records flow through a pipeline as they come.
 *
 * Scanning reads the state of the batch's input (its format and TSV
 * columns), which framing sets before the first batch with a record to
 * scan leaves it and never writes again; writing keeps the rest of that
 * state, in order.
 */
#define RING_MAX	32
#define RING_BYTES	(32 * 1024 * 1024)
#define INPUT_WAIT_MS	5
#define STALL_WAIT_MS	100	/* the same, with nothing to do meanwhile */

enum slot_state { SLOT_FREE, SLOT_FRAMED, SLOT_SCANNING, SLOT_SCANNED };

struct slot {
	struct work		 wk;
	struct nsd_record_input		*in;
	uint64_t		 bytes;		/* of input, that it accounts
						   for */
	enum slot_state		 state;
};

struct worker_start {
	struct run		*run;
	struct nsd_worker	*worker;
};

struct run {
	const struct nsd_config	*cfg;
	struct nsd_index	*ix;
	struct nsd_writer	*wr;
	const struct nsd_pipeline_hooks *hooks;
	struct nsd_stats	*st;

	struct slot		*ring;
	size_t			 nslots;
	uint64_t		 head;		/* the oldest batch in the
						   ring */
	uint64_t		 tail;		/* the next one to be read */
	uint64_t		 next_scan;	/* the next one to be scanned */
	size_t			 held;		/* input bytes in the ring */

	char			**files;
	size_t			 nfiles;
	size_t			 next_file;
	struct nsd_record_input		*inputs;	/* one per file */
	struct nsd_reader	 rd;
	int			 reading;	/* rd is open on the current
						   file */
	uint64_t		 rd_bytes;	/* rd's bytes at the last
						   batch */
	uint64_t		 files_done;	/* the bytes of the inputs
						   read whole */
	struct nsd_record_input	*judging;	/* whose fields are judged,
						   its output held */
	struct nsd_buf		 held_bad;	/* its bad records: line
						   numbers and reasons */
	uint64_t		 bad_before;	/* st->bad before it */
	int			 at_end;	/* no more batches: all is
						   read, or reading failed */
	int			 read_failed;
	struct nsd_error	 read_err;

	pthread_mutex_t		 lock;
	pthread_cond_t		 framed;	/* a batch to scan, or quit */
	pthread_cond_t		 scanned;	/* a batch has been scanned */
	int			 quit;
	struct nsd_worker	*workers;	/* [0]: the main thread's */
	pthread_t		*threads;	/* for workers 1 .. njobs - 1 */
	struct worker_start	*starts;
	size_t			 njobs;
	size_t			 started;	/* threads running */
};

static struct slot *
slot_of(struct run *r, uint64_t seq)
{
	return (&r->ring[seq % r->nslots]);
}

/* The ring's lock, which a run of one thread does without. */
static void
run_lock(struct run *r)
{
	if (r->njobs > 1)
		pthread_mutex_lock(&r->lock);
}

static void
run_unlock(struct run *r)
{
	if (r->njobs > 1)
		pthread_mutex_unlock(&r->lock);
}

/*
 * Take the oldest framed batch nobody scans yet and scan it with worker w;
 * the lock is held on entry and on return, not while scanning.
 */
static void
scan_next(struct run *r, struct nsd_worker *w)
{
	struct slot	*s = slot_of(r, r->next_scan++);

	s->state = SLOT_SCANNING;
	run_unlock(r);
	stage_scan(r->cfg, w, s->in, &s->wk);
	run_lock(r);
	s->state = SLOT_SCANNED;
	if (r->njobs > 1)
		pthread_cond_signal(&r->scanned);
}

/* A worker thread: scan batches until told to quit. */
static void *
worker_main(void *arg)
{
	struct worker_start	*ws = arg;
	struct run		*r = ws->run;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->quit && r->next_scan == r->tail)
			pthread_cond_wait(&r->framed, &r->lock);
		if (r->quit)
			break;
		scan_next(r, ws->worker);
	}
	pthread_mutex_unlock(&r->lock);
	return (NULL);
}

/* The number of threads --jobs asks for: by default, the cores available. */
static size_t
jobs_of(const struct nsd_config *cfg)
{
	cpu_set_t	 set;
	long		 n;

	if (cfg->jobs > 0)
		return (cfg->jobs);
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
	else
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return (n < 1 ? 1 : n > NSD_MAX_JOBS ? NSD_MAX_JOBS : (size_t)n);
}

/*
 * Set up the ring and the workers, and start the worker threads (with the
 * signals blocked in them, as every thread: nsd_thread_start()).
 */
static int
run_start(struct run *r, const struct nsd_config *cfg, struct nsd_index *ix,
    struct nsd_error *err)
{
	size_t		 i;
	int		 rc = 0;

	r->njobs = jobs_of(cfg);
	r->nslots = r->njobs == 1 ? 1 : 2 * r->njobs + 2;
	if (r->nslots > RING_MAX)
		r->nslots = RING_MAX;
	r->ring = xcalloc(r->nslots, sizeof *r->ring);
	r->workers = xcalloc(r->njobs, sizeof *r->workers);
	for (i = 0; i < r->njobs; i++)
		if (worker_init(&r->workers[i], cfg, ix, err) == -1)
			return (-1);
	if (r->njobs == 1)
		return (0);

	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->framed, NULL);
	pthread_cond_init(&r->scanned, NULL);
	r->threads = xcalloc(r->njobs - 1, sizeof *r->threads);
	r->starts = xcalloc(r->njobs, sizeof *r->starts);
	for (i = 1; i < r->njobs && rc == 0; i++) {
		r->starts[i].run = r;
		r->starts[i].worker = &r->workers[i];
		if ((rc = nsd_thread_start(&r->threads[i - 1], worker_main,
		    &r->starts[i])) == 0)
			r->started++;
	}
	if (rc != 0)
		return (nsd_error_set(err, NSD_EXIT_NOMEM,
		    "cannot start a thread (--jobs=%zu): %s", r->njobs,
		    strerror(rc)));
	return (0);
}

/* Stop the worker threads and free the ring, the workers and the inputs. */
static void
run_stop(struct run *r)
{
	size_t	 i;

	if (r->njobs > 1) {
		pthread_mutex_lock(&r->lock);
		r->quit = 1;
		pthread_cond_broadcast(&r->framed);
		pthread_mutex_unlock(&r->lock);
		for (i = 0; i < r->started; i++)
			pthread_join(r->threads[i], NULL);
		free(r->threads);
		free(r->starts);
		pthread_cond_destroy(&r->framed);
		pthread_cond_destroy(&r->scanned);
		pthread_mutex_destroy(&r->lock);
	}
	for (i = 0; r->workers != NULL && i < r->njobs; i++)
		worker_free(&r->workers[i]);
	free(r->workers);
	for (i = 0; r->ring != NULL && i < r->nslots; i++)
		work_free(&r->ring[i].wk);
	free(r->ring);
	for (i = 0; r->inputs != NULL && i < r->nfiles; i++)
		nsd_record_input_free(&r->inputs[i]);
	free(r->inputs);
	if (r->reading)
		nsd_reader_close(&r->rd);
}

/*
 * Read and frame the next batch into slot s, going on to the next input at
 * the end of one: 1, or 0 when every input is read, or -1 on error.
 */
static int
read_batch(struct run *r, struct slot *s, struct nsd_error *err)
{
	const struct nsd_config	*cfg = r->cfg;
	struct nsd_record_input		*in;
	int			 rc;

	for (;;) {
		if (!r->reading) {
			if (r->next_file == r->nfiles)
				return (0);
			if (nsd_reader_open(&r->rd, r->files[r->next_file],
			    cfg->max_line, err) == -1)
				return (-1);
			in = &r->inputs[r->next_file];
			nsd_record_input_init(in, r->rd.name, cfg->format);
			r->reading = 1;
			r->rd_bytes = 0;
			r->st->files++;
		}
		in = &r->inputs[r->next_file];
		if ((rc = nsd_reader_fill(&r->rd, &s->wk.lines, err)) == -1)
			return (-1);
		if (rc > 0)
			break;
		r->st->bytes += r->rd.bytes - r->rd_bytes;
		r->files_done += nsd_reader_position(&r->rd);
		nsd_reader_close(&r->rd);
		r->reading = 0;
		r->next_file++;
	}
	s->in = in;
	s->bytes = r->rd.bytes - r->rd_bytes;
	r->rd_bytes = r->rd.bytes;
	r->st->input_done = r->files_done + nsd_reader_position(&r->rd);
	return (stage_frame(cfg, r->inputs, in, &s->wk, err) == -1 ? -1 : 1);
}

/* Keep the bad records of a batch of the input judged, to report later. */
static void
hold_bad(struct run *r, const struct work *wk, size_t stop)
{
	size_t	 i;

	for (i = 0; i < wk->lines.nlines && i <= stop; i++) {
		const struct record	*rec = &wk->recs[i];
		const struct nsd_line	*l = &wk->lines.lines[i];
		const char		*why = wk->reasons.data + rec->reason;

		if (rec->kind != RECORD_BAD || l->kind == NSD_LINE_LONG_MORE ||
		    l->kind == NSD_LINE_LONG_LAST)
			continue;
		nsd_buf_append(&r->held_bad, &l->lineno, sizeof l->lineno);
		nsd_buf_append(&r->held_bad, why, strlen(why) + 1);
	}
}

/*
 * The judgement of the input is made: what it held, output and bad
 * records, goes on, or is forgotten (drop) as the run stops on it.
 */
static void
judge_release(struct run *r, int drop)
{
	const char	*p = r->held_bad.data;
	const char	*end = p + r->held_bad.len;
	uint64_t	 lineno;

	nsd_output_release(r->wr->out, drop);
	if (drop)
		r->st->bad = r->bad_before;
	for (; !drop && r->held_bad.len > 0 && p < end;
	    p += sizeof lineno + strlen(p + sizeof lineno) + 1) {
		memcpy(&lineno, p, sizeof lineno);
		if (r->hooks->bad_record != NULL)
			r->hooks->bad_record(r->hooks->ctx, r->judging->name,
			    lineno, p + sizeof lineno);
	}
	r->held_bad.len = 0;
	r->judging = NULL;
}

/* The end of the input whose fields are judged: judge all its records. */
static int
judge_end(struct run *r, struct nsd_error *err)
{
	int	 rc;

	rc = nsd_record_judge_end(r->cfg, r->judging, err);
	judge_release(r, rc == -1);
	return (rc);
}

/*
 * Judge whether the batch's input has the fields of --key and --id-field
 * (nsd_record_judge()), by its records in order, before any of them is
 * decided or written. While the judgement is not made, the output is
 * held, so that an input judged to lack a field has written nothing; that
 * of the input before is made first, at its end. Under --on-error=fail,
 * the run stops at the first bad record: none after it is judged.
 */
static int
judge_batch(struct run *r, struct slot *s, struct nsd_error *err)
{
	struct nsd_record_input	*in = s->in;
	struct work		*wk = &s->wk;
	size_t			 i;

	if (r->judging != NULL && r->judging != in && judge_end(r, err) == -1)
		return (-1);
	for (i = 0; !in->judged && i < wk->lines.nlines; i++) {
		const struct record	*rec = &wk->recs[i];
		const struct nsd_line	*l = &wk->lines.lines[i];

		if (rec->kind == RECORD_BLANK ||
		    l->kind == NSD_LINE_LONG_MORE ||
		    l->kind == NSD_LINE_LONG_LAST)
			continue;
		if (nsd_record_judge(r->cfg, in, nsd_line_data(&wk->lines, l),
		    l->len, &rec->found, err) == -1) {
			if (r->judging == in)
				judge_release(r, 1);
			return (-1);
		}
		if (rec->kind == RECORD_BAD &&
		    r->cfg->on_error == NSD_ON_ERROR_FAIL)
			break;
	}
	if (in->judged && r->judging == in)
		judge_release(r, 0);
	else if (!in->judged && r->judging == NULL) {
		if (nsd_output_hold(r->wr->out, err) == -1)
			return (-1);
		r->judging = in;
		r->bad_before = r->st->bad;
	}
	return (0);
}

/*
 * Judge, decide and write a scanned batch, and report its bad records and
 * the progress; an error, or a stop at a bad record under
 * --on-error=fail, ends the run.
 */
static int
finish_batch(struct run *r, struct slot *s, struct nsd_error *err)
{
	struct work	*wk = &s->wk;
	size_t		 stop;

	if (judge_batch(r, s, err) == -1 ||
	    stage_decide(r->cfg, s->in, r->ix, wk, r->st, &stop, err) == -1 ||
	    settle_batch(r->cfg, r->ix, wk, stop, r->st, err) == -1 ||
	    name_batch(r->cfg, r->ix, wk, stop, err) == -1)
		return (-1);
	if (r->judging == s->in)
		hold_bad(r, wk, stop);
	else
		report_bad(r->hooks, s->in, wk, stop);
	if (stage_write(r->cfg, r->wr, s->in, wk, stop, err) == -1)
		return (-1);
	r->st->bytes += s->bytes;
	if (r->hooks->progress != NULL)
		r->hooks->progress(r->hooks->ctx, r->st);
	if (stop < wk->lines.nlines)
		return (nsd_error_set(err, NSD_EXIT_FAILREC,
		    "%s:%llu: stopped at this bad record (--on-error=fail)",
		    s->in->name,
		    (unsigned long long)wk->lines.lines[stop].lineno));
	return (0);
}

/* Read and frame a batch into the ring; false at the end of the input. */
static int
read_into_ring(struct run *r)
{
	struct slot	*s = slot_of(r, r->tail);
	int		 rc;

	if ((rc = read_batch(r, s, &r->read_err)) <= 0) {
		r->at_end = 1;
		r->read_failed = rc == -1;
		return (0);
	}
	run_lock(r);
	s->state = SLOT_FRAMED;
	r->tail++;
	r->held += s->bytes;
	if (r->njobs > 1)
		pthread_cond_signal(&r->framed);
	run_unlock(r);
	return (1);
}

/* The input stalls: progress, with nothing new. */
static void
stalled(struct run *r)
{
	if (r->hooks->progress != NULL)
		r->hooks->progress(r->hooks->ctx, r->st);
}

/* Decide and write the oldest batch, and free its slot. */
static int
write_oldest(struct run *r, struct nsd_error *err)
{
	struct slot	*s = slot_of(r, r->head);

	if (finish_batch(r, s, err) == -1)
		return (-1);
	run_lock(r);
	s->state = SLOT_FREE;
	r->head++;
	r->held -= s->bytes;
	run_unlock(r);
	return (0);
}

/*
 * The main thread's loop. Each turn does the first of these that can be
 * done: read a batch, when the ring has room and the input has something
 * ready; write the oldest batch, when it is scanned; scan a batch that no
 * worker has taken; read, waiting for input, when the ring is empty (after
 * flushing the output); wait a little for input, when the ring has room;
 * wait for a worker.
 */
static int
run_batches(struct run *r, struct nsd_error *err)
{
	int	 room, scanned;

	for (;;) {
		room = !r->at_end && r->tail - r->head < r->nslots &&
		    (r->held < RING_BYTES || r->tail == r->head);
		if (room && (!r->reading || nsd_reader_ready(&r->rd, 0))) {
			read_into_ring(r);
			continue;
		}
		run_lock(r);
		scanned = r->head < r->tail &&
		    slot_of(r, r->head)->state == SLOT_SCANNED;
		if (!scanned && r->next_scan < r->tail) {
			scan_next(r, &r->workers[0]);
			run_unlock(r);
			continue;
		}
		run_unlock(r);
		if (scanned) {
			if (write_oldest(r, err) == -1)
				return (-1);
			continue;
		}
		if (r->head == r->tail) {
			if (r->at_end)
				break;
			/* All is written that can be before more comes. */
			if (nsd_output_flush(r->wr->out, err) == -1)
				return (-1);
			/*
			 * Wait for it a little at a time, so that progress
			 * asked for meanwhile (SIGUSR1) is shown.
			 */
			if (r->reading && !nsd_reader_ready(&r->rd,
			    STALL_WAIT_MS)) {
				stalled(r);
				continue;
			}
			read_into_ring(r);
			continue;
		}
		if (room) {
			/* A look at the ring again every few milliseconds. */
			if (!nsd_reader_ready(&r->rd, INPUT_WAIT_MS))
				stalled(r);
			continue;
		}
		run_lock(r);
		while (slot_of(r, r->head)->state != SLOT_SCANNED) {
			assert(r->njobs > 1);
			pthread_cond_wait(&r->scanned, &r->lock);
		}
		run_unlock(r);
	}
	if (r->read_failed) {
		*err = r->read_err;
		return (-1);
	}
	return (0);
}

void
nsd_pipeline_index_params(const struct nsd_config *cfg,
    struct nsd_index_params *ip)
{
	const struct nsd_method_ops	*method = nsd_method_of(cfg->method);

	memset(ip, 0, sizeof *ip);
	ip->norm_version = NSD_NORM_VERSION;
	ip->norm_oldest = NSD_NORM_OLDEST;
	/* One table, keyed by the whole key, unless the method says. */
	ip->ntables = 1;
	ip->masks[0] = UINT64_MAX;
	ip->method = method->name;
	ip->repeats = method->keys_repeat;
	method->index_params(cfg, ip);
	/*
	 * A method whose matches are confirmed by their numbers alone
	 * keeps no more of the sketch.
	 */
	ip->sketch_bytes = method->whole_text ? NSD_SKETCH_NUMBERS_BYTES :
	    NSD_SKETCH_BYTES;
	ip->sketch_whole = NSD_SKETCH_BYTES;
	ip->sig_bytes += ip->sketch_bytes;
}

/*
 * The sizes of the inputs, for a progress meter: 0 when one is not a
 * regular file (a pipe, a terminal), or is missing (its open will say).
 */
static uint64_t
inputs_size(char **files, size_t nfiles)
{
	struct stat	 sb;
	uint64_t	 sum = 0;
	size_t		 i;
	int		 rc;

	for (i = 0; i < nfiles; i++) {
		if (strcmp(files[i], "-") == 0)
			rc = fstat(STDIN_FILENO, &sb);
		else
			rc = stat(files[i], &sb);
		if (rc == -1 || !S_ISREG(sb.st_mode))
			return (0);
		sum += (uint64_t)sb.st_size;
	}
	return (sum);
}

int
nsd_pipeline_run(const struct nsd_config *cfg, struct nsd_index *ix,
    struct nsd_writer *wr, const struct nsd_pipeline_hooks *hooks,
    struct nsd_stats *st, struct nsd_error *err)
{
	static char	*stdin_only[] = { (char *)"-" };
	struct run	 r;
	int		 rc;

	memset(st, 0, sizeof *st);
	memset(&r, 0, sizeof r);
	r.cfg = cfg;
	r.ix = ix;
	r.wr = wr;
	r.hooks = hooks;
	r.st = st;
	r.files = cfg->files;
	r.nfiles = cfg->nfiles;
	if (r.nfiles == 0) {
		r.files = stdin_only;
		r.nfiles = 1;
	}
	r.inputs = xcalloc(r.nfiles, sizeof *r.inputs);
	st->input_size = inputs_size(r.files, r.nfiles);
	rc = run_start(&r, cfg, ix, err);
	if (rc == 0)
		rc = run_batches(&r, err);
	/* A run that stops otherwise reports what it held. */
	if (rc == 0 && r.judging != NULL)
		rc = judge_end(&r, err);
	else if (r.judging != NULL)
		judge_release(&r, 0);
	nsd_buf_free(&r.held_bad);
	run_stop(&r);
	return (rc);
}
