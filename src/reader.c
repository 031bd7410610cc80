/*
 * reader.c: reading inputs and cutting them into lines.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"

#define READ_CHUNK	(1024 * 1024)

static const char bom[3] = { (char)0xEF, (char)0xBB, (char)0xBF };

/*
 * A pipe's buffer is 64 KiB by default: a writer that could run ahead while
 * a batch is fingerprinted blocks instead. Ask for a chunk's worth (Linux;
 * unprivileged processes may have up to /proc/sys/fs/pipe-max-size), and
 * do without when refused.
 */
static void
widen_pipe(int fd)
{
#ifdef F_SETPIPE_SZ
	struct stat	 sb;

	if (fstat(fd, &sb) == 0 && S_ISFIFO(sb.st_mode) &&
	    fcntl(fd, F_GETPIPE_SZ) < READ_CHUNK)
		(void)fcntl(fd, F_SETPIPE_SZ, READ_CHUNK);
#else
	(void)fd;
#endif
}

int
nsd_reader_open(struct nsd_reader *r, const char *path, size_t max_line,
    struct nsd_error *err)
{
	memset(r, 0, sizeof *r);
	r->max_line = max_line;
	r->chunk = READ_CHUNK;
	r->at_start = 1;
	if (strcmp(path, "-") == 0) {
		r->fd = STDIN_FILENO;
		r->name = xstrdup("(standard input)");
		widen_pipe(r->fd);
		return (0);
	}
	if ((r->fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (nsd_error_set(err, NSD_EXIT_INPUT, "%s: %s", path,
		    strerror(errno)));
	r->name = xstrdup(path);
	widen_pipe(r->fd);
	return (0);
}

void
nsd_reader_close(struct nsd_reader *r)
{
	/* The thread reads the descriptor: end it first. */
	nsd_decompressor_stop(r->decompressor);
	if (r->fd > STDIN_FILENO)
		close(r->fd);
	free(r->name);
	nsd_buf_free(&r->carry);
	memset(r, 0, sizeof *r);
	r->fd = -1;
}

int
nsd_reader_ready(struct nsd_reader *r, int ms)
{
	struct stat	 sb;

	if (r->eof)
		return (1);
	if (r->decompressor != NULL)
		return (nsd_decompressor_ready(r->decompressor, ms));
	if (r->regular == 0)
		r->regular = fstat(r->fd, &sb) == 0 && S_ISREG(sb.st_mode) ?
		    1 : -1;
	return (r->regular == 1 || nsd_fd_readable(r->fd, ms));
}

void
nsd_batch_free(struct nsd_batch *b)
{
	nsd_buf_free(&b->buf);
	free(b->lines);
	memset(b, 0, sizeof *b);
}

static void
add_line(struct nsd_batch *b, size_t start, size_t len, unsigned eol_len,
    enum nsd_line_kind kind, uint64_t lineno)
{
	struct nsd_line	*l;

	if (b->nlines == b->lines_cap) {
		b->lines_cap = b->lines_cap ? b->lines_cap * 2 : 1024;
		b->lines = xreallocarray(b->lines, b->lines_cap,
		    sizeof *b->lines);
	}
	l = &b->lines[b->nlines++];
	l->start = start;
	l->len = len;
	l->eol_len = eol_len;
	l->kind = kind;
	l->lineno = lineno;
}

/* Append one read(2) worth of input to b's buffer; sets eof at the end. */
static int
read_more(struct nsd_reader *r, struct nsd_batch *b, struct nsd_error *err)
{
	ssize_t	 n;

	nsd_buf_reserve(&b->buf, r->chunk);
	if (r->decompressor != NULL) {
		n = nsd_decompressor_read(r->decompressor, b->buf.data +
		    b->buf.len, r->chunk, err);
		if (n == -1)
			return (-1);
	} else {
		do
			n = read(r->fd, b->buf.data + b->buf.len, r->chunk);
		while (n == -1 && errno == EINTR);
		if (n == -1)
			return (nsd_error_set(err, NSD_EXIT_INPUT, "%s: %s",
			    r->name, strerror(errno)));
	}
	if (n == 0)
		r->eof = 1;
	b->buf.len += n;
	r->bytes += n;
	return (0);
}

/*
 * Look at the first bytes of the input, in b: when they are a
 * compressor's, hand them to a decompressor, which the input is read
 * through from then on.
 */
static int
start_decompressor(struct nsd_reader *r, struct nsd_batch *b,
    struct nsd_error *err)
{
	r->detected = 1;
	r->compression = nsd_compression_detect(b->buf.data, b->buf.len);
	if (r->compression == NSD_COMPRESSION_NONE)
		return (0);
	if (nsd_decompressor_start(&r->decompressor, r->fd, r->compression,
	    b->buf.data, b->buf.len, r->name, err) == -1)
		return (-1);
	b->buf.len = 0;
	r->bytes = 0;
	r->eof = 0;
	return (0);
}

uint64_t
nsd_reader_position(struct nsd_reader *r)
{
	if (r->decompressor != NULL)
		return (nsd_decompressor_consumed(r->decompressor));
	return (r->bytes);
}

/* Move b's bytes from offset on into the carry buffer, for the next batch. */
static void
keep_rest(struct nsd_reader *r, struct nsd_batch *b, size_t from)
{
	r->carry.len = 0;
	nsd_buf_append(&r->carry, b->buf.data + from, b->buf.len - from);
	b->buf.len = from;
}

/*
 * Continue a line longer than max_line: one piece per batch, ending with
 * the piece that holds its newline, or an empty one at the end of input.
 */
static int
fill_long(struct nsd_reader *r, struct nsd_batch *b, struct nsd_error *err)
{
	const char	*nl;
	size_t		 len;
	unsigned	 eol = 1;

	if (b->buf.len == 0 && !r->eof && read_more(r, b, err) == -1)
		return (-1);
	nl = b->buf.len > 0 ? memchr(b->buf.data, '\n', b->buf.len) : NULL;
	if (nl == NULL) {
		if (r->eof) {
			r->in_long = 0;
			add_line(b, 0, b->buf.len, 0, NSD_LINE_LONG_LAST,
			    r->lineno);
		} else
			add_line(b, 0, b->buf.len, 0, NSD_LINE_LONG_MORE,
			    r->lineno);
		return (1);
	}
	len = nl - b->buf.data;
	keep_rest(r, b, len + 1);
	r->in_long = 0;
	if (len > 0 && b->buf.data[len - 1] == '\r') {
		len--;
		eol = 2;
	}
	add_line(b, 0, len, eol, NSD_LINE_LONG_LAST, r->lineno);
	return (1);
}

int
nsd_reader_fill(struct nsd_reader *r, struct nsd_batch *b,
    struct nsd_error *err)
{
	size_t		 line_start = 0, scan = 0, end, partial;
	const char	*nl;
	unsigned	 eol;

	b->buf.len = 0;
	b->nlines = 0;
	nsd_buf_append(&b->buf, r->carry.data, r->carry.len);
	r->carry.len = 0;
	if (r->in_long)
		return (fill_long(r, b, err));

	for (;;) {
		if (!r->detected) {
			if (!r->eof && nsd_compression_undecided(b->buf.data,
			    b->buf.len)) {
				if (read_more(r, b, err) == -1)
					return (-1);
				continue;
			}
			if (start_decompressor(r, b, err) == -1)
				return (-1);
			continue;
		}
		if (r->at_start) {
			if (b->buf.len < sizeof bom && !r->eof) {
				if (read_more(r, b, err) == -1)
					return (-1);
				continue;
			}
			r->at_start = 0;
			if (b->buf.len >= sizeof bom &&
			    memcmp(b->buf.data, bom, sizeof bom) == 0)
				line_start = scan = sizeof bom;
		}
		/* A batch never filled has no buffer: no memchr of NULL. */
		while (scan < b->buf.len && (nl = memchr(b->buf.data + scan,
		    '\n', b->buf.len - scan)) != NULL) {
			end = nl - b->buf.data;
			eol = 1;
			if (end > line_start && b->buf.data[end - 1] == '\r') {
				end--;
				eol = 2;
			}
			add_line(b, line_start, end - line_start, eol,
			    end - line_start > r->max_line ?
			    NSD_LINE_TOO_LONG : NSD_LINE_WHOLE,
			    ++r->lineno);
			line_start = scan = nl - b->buf.data + 1;
		}
		scan = b->buf.len;
		/*
		 * Too long already? A '\r' last in the buffer may be the
		 * first half of a "\r\n" still to come: it does not count.
		 */
		partial = b->buf.len - line_start;
		if (partial > r->max_line && !(partial == r->max_line + 1 &&
		    b->buf.data[b->buf.len - 1] == '\r')) {
			if (b->nlines > 0) {
				keep_rest(r, b, line_start);
				return (1);
			}
			/*
			 * Hand out the head; the rest follows piece by piece.
			 */
			add_line(b, line_start, b->buf.len - line_start, 0,
			    NSD_LINE_LONG_HEAD, ++r->lineno);
			r->in_long = 1;
			return (1);
		}
		if (r->eof) {
			if (line_start < b->buf.len)
				add_line(b, line_start, b->buf.len - line_start,
				    0, NSD_LINE_WHOLE, ++r->lineno);
			return (b->nlines > 0);
		}
		/* A batch is a chunk, or what a pipe has ready, in lines. */
		if (b->nlines > 0 && (b->buf.len >= r->chunk ||
		    !nsd_reader_ready(r, 0))) {
			keep_rest(r, b, line_start);
			return (1);
		}
		if (read_more(r, b, err) == -1)
			return (-1);
	}
}
