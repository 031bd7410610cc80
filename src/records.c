/*
 * records.c: the records of JSON lines and TSV inputs (see records.h).
 */
#include "config.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "utf8.h"

/* The most of a column name that a message quotes, in bytes. */
#define NSD_NAME_SHOWN	64

/*
 * The longest list of names in a message, in bytes; the objects whose
 * member names are kept for it, the names of each, and the bytes kept.
 */
#define NAMES_LIST	240
#define NAMES_OBJECTS	10
#define NAMES_OF_OBJECT	1024
#define NAMES_KEPT	4096

/* Say why a record is bad, into why[NSD_RECORD_WHY_MAX]; -1. */
static int
bad(char *why, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
bad(char *why, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(why, NSD_RECORD_WHY_MAX, fmt, ap);
	va_end(ap);
	return (-1);
}

static_assert(NSD_MAX_KEYS <= 64, "a bit of a uint64_t for each --key");

/* A bit for each --key field. */
static uint64_t
all_keys(const struct nsd_config *cfg)
{
	return (cfg->nkeys >= 64 ? UINT64_MAX :
	    ((uint64_t)1 << cfg->nkeys) - 1);
}

void
nsd_record_input_init(struct nsd_record_input *in, const char *name,
    enum nsd_format format)
{
	memset(in, 0, sizeof *in);
	in->name = xstrdup(name);
	in->format = format;
	in->id_col = in->id_out_col = in->dup_out_col = -1;
	in->explain_out_col = -1;
}

void
nsd_record_input_free(struct nsd_record_input *in)
{
	free(in->name);
	nsd_tsv_fields_free(&in->header);
	nsd_buf_free(&in->header_line);
	nsd_buf_free(&in->names);
}

int
nsd_record_scanner_init(struct nsd_record_scanner *rs,
    const struct nsd_config *cfg, char joiner, struct nsd_error *err)
{
	size_t	 i, n = 0;

	memset(rs, 0, sizeof *rs);
	rs->joiner = joiner;
	for (i = 0; i < cfg->nkeys; i++, n++)
		if (nsd_json_path_parse(&rs->paths[n], cfg->keys[i], err) == -1)
			return (-1);
	rs->id_query = n;
	if (nsd_json_path_parse(&rs->paths[n++], cfg->id_field, err) == -1)
		return (-1);
	rs->member_query = n;
	nsd_json_path_member(&rs->paths[n++], cfg->field_name);
	if (cfg->dup_field[0] != '\0')
		nsd_json_path_member(&rs->paths[n++], cfg->dup_field);
	rs->explain_query = SIZE_MAX;
	if (cfg->explain) {
		rs->explain_query = n;
		nsd_json_path_member(&rs->paths[n++], NSD_EXPLAIN_NAME);
	}
	for (i = 0; i < n; i++) {
		rs->queries[i].path = &rs->paths[i];
		rs->queries[i].all = i >= rs->member_query;
	}
	rs->nqueries = n;
	nsd_json_scanner_init(&rs->scanner, rs->queries, n);
	rs->all_keys = all_keys(cfg);
	return (0);
}

void
nsd_record_scanner_free(struct nsd_record_scanner *rs)
{
	size_t	 i;

	nsd_json_scanner_free(&rs->scanner);
	/* Every slot: init may stop halfway; unused ones are zero. */
	for (i = 0; i < sizeof rs->paths / sizeof rs->paths[0]; i++)
		nsd_json_path_free(&rs->paths[i]);
	nsd_buf_free(&rs->text);
	nsd_tsv_fields_free(&rs->fields);
}

/*
 * White space only for JSON; nothing at all for TSV, where a line of tabs
 * is a row of empty fields; spaces only while the format is not known, as
 * a tab makes it TSV.
 */
int
nsd_record_is_blank(enum nsd_format format, const char *s, size_t len)
{
	size_t	 i;

	if (format == NSD_FORMAT_TSV)
		return (len == 0);
	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\r' &&
		    (s[i] != '\t' || format == NSD_FORMAT_AUTO))
			return (0);
	return (1);
}

/*
 * JSON when the line starts with '{' or '[', or has no tab at all (so that
 * a damaged first record of a JSON file is a bad record, not a TSV
 * header); TSV otherwise.
 */
enum nsd_format
nsd_record_format_of(const char *s, size_t len)
{
	size_t	 i;

	for (i = 0; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	if (i < len && (s[i] == '{' || s[i] == '['))
		return (NSD_FORMAT_JSONL);
	return (memchr(s, '\t', len) == NULL ?
	    NSD_FORMAT_JSONL : NSD_FORMAT_TSV);
}

int
nsd_record_check_tsv(const char *s, size_t len, char *why)
{
	const char	*nul;
	size_t		 at;

	if ((nul = memchr(s, '\0', len)) != NULL)
		return (bad(why, "NUL byte at byte %zu",
		    (size_t)(nul - s) + 1));
	if ((at = nsd_utf8_check(s, len)) < len)
		return (bad(why, "invalid UTF-8 at byte %zu", at + 1));
	return (0);
}

/*
 * Append names (n JSON strings) to out, ", " between them, as many as fit
 * in NAMES_LIST bytes, then "..." when some are left out or cut says that
 * there are more; and a NUL.
 */
static void
list_names(struct nsd_buf *out, const char *const *names, size_t n, int cut)
{
	size_t	 i, start = out->len, len;

	for (i = 0; i < n; i++) {
		len = strlen(names[i]);
		if (out->len - start + 2 + len > NAMES_LIST)
			break;
		if (i > 0)
			nsd_buf_append(out, ", ", 2);
		nsd_buf_append(out, names[i], len);
	}
	if (i < n || cut)
		nsd_buf_append(out, i > 0 ? ", ..." : "...", i > 0 ? 5 : 3);
	nsd_buf_putc(out, '\0');
}

/* A header without a column called field: say which columns it has. */
static int
no_column(const struct nsd_record_input *in, const char *field,
    const char *line, uint64_t lineno, struct nsd_error *err)
{
	const struct nsd_tsv_fields *hf = &in->header;
	struct nsd_buf	 cells = { 0 }, list = { 0 };
	const char	**names;
	size_t		 i, *at;
	int		 rc;

	/* The cells as JSON strings, which show every byte. */
	at = xreallocarray(NULL, hf->n, sizeof *at);
	for (i = 0; i < hf->n; i++) {
		at[i] = cells.len;
		nsd_json_encode_string(line + hf->f[i].start, hf->f[i].len,
		    &cells);
		nsd_buf_putc(&cells, '\0');
	}
	names = xreallocarray(NULL, hf->n, sizeof *names);
	for (i = 0; i < hf->n; i++)
		names[i] = cells.data + at[i];
	list_names(&list, names, hf->n, 0);
	rc = nsd_error_set(err, NSD_EXIT_INPUT,
	    "%s:%llu: no column '%s' in the header; the header has: %s",
	    in->name, (unsigned long long)lineno, field, list.data);
	free(names);
	free(at);
	nsd_buf_free(&cells);
	nsd_buf_free(&list);
	return (rc);
}

/*
 * Resolve a TSV column reference against the header (or, with -H, as a
 * number).
 */
static int
tsv_column(const struct nsd_config *cfg, const struct nsd_record_input *in,
    const char *field, const char *line, int required, long *col,
    uint64_t lineno, struct nsd_error *err)
{
	const struct nsd_tsv_fields *hf = &in->header;

	*col = nsd_tsv_column(field, cfg->no_header ? NULL : line, hf);
	if (*col >= 0 || !required)
		return (0);
	if (field[0] != '\0' && field[strspn(field, "0123456789")] == '\0')
		return (nsd_error_set(err, NSD_EXIT_INPUT,
		    "%s:%llu: no column %s: %s has %zu column%s", in->name,
		    (unsigned long long)lineno, field,
		    cfg->no_header ? "the first row" : "the header", hf->n,
		    hf->n == 1 ? "" : "s"));
	if (cfg->no_header)
		return (nsd_error_set(err, NSD_EXIT_USAGE,
		    "%s: with --no-header, columns are numbers, not '%s'",
		    in->name, field));
	return (no_column(in, field, line, lineno, err));
}

/* How much of a column name a message quotes: whole characters, 64 bytes. */
static int
quoted_len(const char *s, size_t len, const char **more)
{
	*more = "";
	if (len <= NSD_NAME_SHOWN)
		return ((int)len);
	len = NSD_NAME_SHOWN;
	while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	*more = "...";
	return ((int)len);
}

/*
 * Compare the header of in (split into hf, from line) with the header of
 * first, which the output has: the same columns, in the same order.
 */
static int
same_header(const struct nsd_record_input *first,
    const struct nsd_record_input *in, const char *line, uint64_t lineno,
    struct nsd_error *err)
{
	const struct nsd_tsv_fields *ff = &first->header, *hf = &in->header;
	const char	*a, *b, *amore, *bmore;
	size_t		 i;
	int		 alen, blen;

	if (hf->n != ff->n)
		return (nsd_error_set(err, NSD_EXIT_INPUT, "%s:%llu: header "
		    "differs from the header of %s: %zu column%s, not %zu",
		    in->name, (unsigned long long)lineno, first->name, hf->n,
		    hf->n == 1 ? "" : "s", ff->n));
	for (i = 0; i < hf->n; i++) {
		a = line + hf->f[i].start;
		b = first->header_line.data + ff->f[i].start;
		if (hf->f[i].len == ff->f[i].len &&
		    memcmp(a, b, hf->f[i].len) == 0)
			continue;
		alen = quoted_len(a, hf->f[i].len, &amore);
		blen = quoted_len(b, ff->f[i].len, &bmore);
		return (nsd_error_set(err, NSD_EXIT_INPUT, "%s:%llu: header "
		    "differs from the header of %s: column %zu is '%.*s%s', "
		    "not '%.*s%s'", in->name, (unsigned long long)lineno,
		    first->name, i + 1, alen, a, amore, blen, b, bmore));
	}
	return (0);
}

int
nsd_record_tsv_header(const struct nsd_config *cfg,
    struct nsd_record_input *in, const struct nsd_record_input *first,
    const char *line, size_t len, uint64_t lineno, struct nsd_error *err)
{
	struct nsd_tsv_fields	*hf = &in->header;
	size_t			 i;

	/* A header is kept, for the inputs after it to be compared with. */
	if (!cfg->no_header) {
		in->header_line.len = 0;
		nsd_buf_reserve(&in->header_line, len + 1);
		nsd_buf_append(&in->header_line, line, len);
		line = in->header_line.data;
	}
	nsd_tsv_split(line, len, hf);
	in->ncols = hf->n;
	if (!cfg->no_header && first != NULL) {
		if (same_header(first, in, line, lineno, err) == -1)
			return (-1);
		in->header_repeated = 1;
	}
	for (i = 0; i < cfg->nkeys; i++)
		if (tsv_column(cfg, in, cfg->keys[i], line, 1,
		    &in->key_cols[i], lineno, err) == -1)
			return (-1);
	if (tsv_column(cfg, in, cfg->id_field, line, cfg->id_field_given,
	    &in->id_col, lineno, err) == -1)
		return (-1);
	/* The annotation columns are found by name only, never by number. */
	in->id_out_col = in->dup_out_col = in->explain_out_col = -1;
	if (!cfg->no_header && cfg->explain)
		in->explain_out_col = nsd_tsv_header_index(NSD_EXPLAIN_NAME,
		    line, hf);
	if (!cfg->no_header) {
		in->id_out_col = nsd_tsv_header_index(cfg->field_name, line,
		    hf);
		if (cfg->dup_field[0] != '\0')
			in->dup_out_col = nsd_tsv_header_index(cfg->dup_field,
			    line, hf);
	}
	return (0);
}

/* Keep the spans of existing annotation members, sorted by position. */
static void
add_spans(const struct nsd_record_scanner *rs, struct nsd_record_found *f,
    struct nsd_spans *sp)
{
	size_t	 q, i, j;

	f->span_off = sp->n;
	for (q = rs->member_query; q < rs->nqueries; q++) {
		const struct nsd_json_query *qu = &rs->queries[q];

		for (i = 0; i < qu->nspans; i++) {
			struct nsd_splice_span	 s;

			if (sp->n == sp->cap) {
				sp->cap = sp->cap ? sp->cap * 2 : 64;
				sp->v = xreallocarray(sp->v, sp->cap,
				    sizeof *sp->v);
			}
			s.start = qu->spans[i].start;
			s.len = qu->spans[i].len;
			s.member = q == rs->member_query ? NSD_MEMBER_ID :
			    q == rs->explain_query ? NSD_MEMBER_EXPLAIN :
			    NSD_MEMBER_DUP;
			for (j = sp->n; j > f->span_off &&
			    sp->v[j - 1].start > s.start; j--)
				sp->v[j] = sp->v[j - 1];
			sp->v[j] = s;
			sp->n++;
		}
	}
	f->nspans = sp->n - f->span_off;
}

/* The --key fields the record just scanned has, of any type, a bit each. */
static uint64_t
keys_of(const struct nsd_record_scanner *rs, size_t nkeys)
{
	uint64_t	 keys = 0;
	size_t		 i;

	for (i = 0; i < nkeys; i++)
		if (rs->queries[i].found.type != NSD_JSON_NONE)
			keys |= (uint64_t)1 << i;
	return (keys);
}

/* A JSON record: validate it, find the fields, collect the text. */
static int
scan_json(const struct nsd_config *cfg, struct nsd_record_scanner *rs,
    const char *s, size_t len, struct nsd_record_found *f,
    struct nsd_spans *sp, char *why)
{
	struct nsd_json_scanner		*sc = &rs->scanner;
	const struct nsd_json_span	*id;
	size_t				 i;

	if (nsd_json_scan(sc, s, len, 1) == -1) {
		if (strcmp(sc->error, "not a JSON object") == 0)
			return (bad(why, "not a JSON object but %s",
			    nsd_json_type_name(sc->top)));
		if (strcmp(sc->error, "NUL byte") == 0 ||
		    strcmp(sc->error, "invalid UTF-8") == 0)
			return (bad(why, "%s at byte %zu", sc->error,
			    sc->error_at + 1));
		return (bad(why, "invalid JSON: %s at byte %zu", sc->error,
		    sc->error_at + 1));
	}
	id = &rs->queries[rs->id_query].found;
	f->object = 1;
	f->has_id = id->type != NSD_JSON_NONE;
	rs->text.len = 0;
	for (i = 0; i < cfg->nkeys; i++) {
		const struct nsd_json_span *k = &rs->queries[i].found;

		if (k->type == NSD_JSON_NONE) {
			f->keys = keys_of(rs, cfg->nkeys);
			return (bad(why, "no text field \"%s\"",
			    cfg->keys[i]));
		}
		if (k->type != NSD_JSON_STRING) {
			f->keys = keys_of(rs, cfg->nkeys);
			return (bad(why, "text field \"%s\" is %s, not a "
			    "string", cfg->keys[i],
			    nsd_json_type_name(k->type)));
		}
		if (i > 0)
			nsd_buf_putc(&rs->text, rs->joiner);
		nsd_json_decode_string(s + k->start, k->len, &rs->text);
	}
	f->keys = rs->all_keys;
	if (id->type == NSD_JSON_STRING || id->type == NSD_JSON_NUMBER) {
		f->id_start = id->start;
		f->id_len = id->len;
	}
	f->insert_at = sc->insert_at;
	f->has_members = sc->has_members;
	add_spans(rs, f, sp);
	return (0);
}

/* A TSV row: check it, collect the text columns and the id cell. */
static int
scan_tsv(const struct nsd_config *cfg, struct nsd_record_scanner *rs,
    const struct nsd_record_input *in, const char *s, size_t len,
    struct nsd_record_found *f, char *why)
{
	size_t	 i;

	if (nsd_record_check_tsv(s, len, why) == -1)
		return (-1);
	nsd_tsv_split(s, len, &rs->fields);
	if (rs->fields.n != in->ncols)
		return (bad(why, "row has %zu column%s, %s has %zu",
		    rs->fields.n, rs->fields.n == 1 ? "" : "s",
		    cfg->no_header ? "the first row" : "the header",
		    in->ncols));
	rs->text.len = 0;
	for (i = 0; i < cfg->nkeys; i++) {
		const struct nsd_tsv_field *k = &rs->fields.f[in->key_cols[i]];

		if (i > 0)
			nsd_buf_putc(&rs->text, rs->joiner);
		nsd_tsv_decode(s + k->start, k->len, &rs->text);
	}
	if (in->id_col >= 0 && rs->fields.f[in->id_col].len > 0) {
		f->id_start = rs->fields.f[in->id_col].start;
		f->id_len = rs->fields.f[in->id_col].len;
	}
	return (0);
}

int
nsd_record_scan(const struct nsd_config *cfg, struct nsd_record_scanner *rs,
    const struct nsd_record_input *in, const char *s, size_t len,
    struct nsd_record_found *f, struct nsd_spans *sp, char *why)
{
	memset(f, 0, sizeof *f);
	if (in->format == NSD_FORMAT_JSONL)
		return (scan_json(cfg, rs, s, len, f, sp, why));
	return (scan_tsv(cfg, rs, in, s, len, f, why));
}

/*
 * Judging the fields. A --key, or an --id-field given, that no record has
 * is a mistaken name rather than a file of bad records, and a run that
 * made every record bad, or left every group without its id, would be
 * worse than none. So the first records of each input are judged, in
 * order, until each of those fields has been seen in one of them, of any
 * type (a text that is not a string is a bad record, not a mistaken
 * name). A JSON object without one counts against it; a line that is not
 * a JSON object counts only as one of the NSD_RECORD_JUDGED records after
 * which the judgement is made (or at the end of the input, if sooner):
 * then the run stops if some object was seen and a field was in none. A
 * TSV input has no judgement: its header names the columns.
 *
 * The message lists the member names of the first NAMES_OBJECTS objects
 * judged, sorted, which are kept as they come: the judgement of a run
 * that is fine ends at its first record, with nothing kept.
 */

/* Keep the member names of the object s for the message, if wanted. */
static void
keep_names(struct nsd_record_input *in, const char *s, size_t len)
{
	struct nsd_json_names	 names = { 0 };
	struct nsd_buf		 name = { 0 };
	size_t			 i;

	if (in->named == NAMES_OBJECTS || in->names_cut)
		return;
	in->named++;
	if (nsd_json_member_names(s, len, NAMES_OF_OBJECT, &names) == 1)
		in->names_cut = 1;
	for (i = 0; i < names.n; i++) {
		if (in->names.len > NAMES_KEPT) {
			in->names_cut = 1;
			break;
		}
		name.len = 0;
		nsd_json_decode_string(s + names.v[i].start, names.v[i].len,
		    &name);
		nsd_json_encode_string(name.data, name.len, &in->names);
		nsd_buf_putc(&in->names, '\0');
	}
	nsd_buf_free(&name);
	nsd_json_names_free(&names);
}

static int
by_string(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

/* The judgement: the first field that none of the objects has, if any. */
static int
judge(const struct nsd_config *cfg, struct nsd_record_input *in, int all,
    struct nsd_error *err)
{
	struct nsd_buf	 field = { 0 }, list = { 0 };
	const char	**names = NULL, *p, *end, *missing = NULL;
	size_t		 i, n = 0, k;
	int		 rc;

	in->judged = 1;
	if (in->judge_objects == 0)
		return (0);
	for (i = 0; i < cfg->nkeys && missing == NULL; i++)
		if ((in->keys_seen & (uint64_t)1 << i) == 0)
			missing = cfg->keys[i];
	if (missing == NULL && cfg->id_field_given && !in->id_seen)
		missing = cfg->id_field;
	if (missing == NULL)
		return (0);
	nsd_json_encode_string(missing, strlen(missing), &field);
	nsd_buf_putc(&field, '\0');
	/* The names kept, sorted, each once. */
	p = in->names.data;
	end = in->names.len > 0 ? p + in->names.len : p;
	for (k = 0; k < in->names.len; k++)
		n += in->names.data[k] == '\0';
	names = xreallocarray(NULL, n > 0 ? n : 1, sizeof *names);
	for (n = 0; p < end; p += strlen(p) + 1)
		names[n++] = p;
	qsort(names, n, sizeof *names, by_string);
	for (i = k = 0; i < n; i++)
		if (k == 0 || strcmp(names[k - 1], names[i]) != 0)
			names[k++] = names[i];
	list_names(&list, names, k, in->names_cut);
	if (all)
		rc = nsd_error_set(err, NSD_EXIT_INPUT,
		    "%s: no record has the field %s; the records have%s%s",
		    in->name, field.data, k > 0 ? ": " : " no members",
		    k > 0 ? list.data : "");
	else
		rc = nsd_error_set(err, NSD_EXIT_INPUT,
		    "%s: no record of the first %d has the field %s; the "
		    "records have%s%s", in->name, NSD_RECORD_JUDGED,
		    field.data, k > 0 ? ": " : " no members",
		    k > 0 ? list.data : "");
	free(names);
	nsd_buf_free(&field);
	nsd_buf_free(&list);
	return (rc);
}

int
nsd_record_judge(const struct nsd_config *cfg, struct nsd_record_input *in,
    const char *s, size_t len, const struct nsd_record_found *f,
    struct nsd_error *err)
{
	if (in->judged)
		return (0);
	if (in->format == NSD_FORMAT_TSV) {
		in->judged = 1;
		return (0);
	}
	in->judge_records++;
	if (f->object) {
		in->judge_objects++;
		in->keys_seen |= f->keys;
		in->id_seen |= f->has_id;
		if (in->keys_seen == all_keys(cfg) &&
		    (in->id_seen || !cfg->id_field_given)) {
			in->judged = 1;
			return (0);
		}
		keep_names(in, s, len);
	}
	if (in->judge_records < NSD_RECORD_JUDGED)
		return (0);
	return (judge(cfg, in, 0, err));
}

int
nsd_record_judge_end(const struct nsd_config *cfg, struct nsd_record_input *in,
    struct nsd_error *err)
{
	return (in->judged ? 0 : judge(cfg, in, 1, err));
}

void
nsd_record_id(const struct nsd_record_input *in, const char *line,
    const struct nsd_record_found *f, struct nsd_buf *buf, const char **id,
    size_t *id_len)
{
	*id = line + f->id_start;
	*id_len = f->id_len;
	if (in->format == NSD_FORMAT_TSV && *id_len > 0) {
		buf->len = 0;
		nsd_json_encode_string(*id, *id_len, buf);
		*id = buf->data;
		*id_len = buf->len;
	}
}

int
nsd_record_write(struct nsd_writer *wr, const struct nsd_record_input *in,
    const char *s, const struct nsd_line *l, const struct nsd_record_found *f,
    const struct nsd_spans *sp, const struct nsd_annotation *a,
    struct nsd_error *err)
{
	struct nsd_splice	 splice;

	if (in->format == NSD_FORMAT_TSV || f == NULL)
		return (nsd_writer_tsv(wr, s, l->len, l->eol_len,
		    in->id_out_col, in->dup_out_col, in->explain_out_col,
		    f == NULL ? NULL : a, err));
	splice.insert_at = f->insert_at;
	splice.has_members = f->has_members;
	splice.replace = sp->v + f->span_off;
	splice.nreplace = f->nspans;
	return (nsd_writer_json(wr, s, l->len, l->eol_len, &splice, a, err));
}
