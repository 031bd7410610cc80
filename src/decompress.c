/*
 * decompress.c: decoding compressed inputs on a thread of their own.
 *
 * The thread reads the compressed input in pieces of IN_SIZE and decodes
 * it into a ring of NSLOTS buffers of OUT_SIZE; the reader empties them in
 * order. A full buffer is handed over at once; a partly filled one when
 * the input is a pipe that has nothing more ready, so that a slow writer's
 * records are not held back, and at the end.
 *
 * Each format is a codec: a step that decodes what it can of the input
 * into the room it is given, and says whether a stream (a gzip member, a
 * zstd frame, a bzip2 stream) ended there. Another stream may follow one
 * that ended, as in the output of `cat a.gz b.gz`: the codec is reset and
 * decoding goes on. The input may end only where a stream ended; anywhere
 * else it was truncated. xz's library handles concatenated streams, and
 * the padding between them, itself: told that the input is finished, it
 * reports the end once, after the last.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef NSD_WITH_ISAL
#include <isa-l/igzip_lib.h>
#elif defined(NSD_WITH_ZLIB)
#include <zlib.h>
#endif
#ifdef NSD_WITH_ZSTD
#include <zstd.h>
#endif
#ifdef NSD_WITH_BZIP2
#include <bzlib.h>
#endif
#ifdef NSD_WITH_LZMA
#include <lzma.h>
#endif

#include "decompress.h"

#define IN_SIZE		(256 * 1024)
#define OUT_SIZE	(1024 * 1024)
#define NSLOTS		4
#define POLL_MS		100	/* how soon a stop reaches a thread waiting
				   on a pipe */

enum step {
	STEP_MORE,	/* give it more input, or more room */
	STEP_END,	/* a stream ended where the input now is */
	STEP_ERROR	/* corrupt: *why says how */
};

struct codec {
	enum nsd_compression	 format;
	const char		*library;	/* for --version */
	void			*(*open)(void);
	/*
	 * Decode from in[0..inlen) into out[0..outlen): *used and *made say
	 * how much of each. finish says that no input follows in.
	 */
	enum step		 (*step)(void *, const unsigned char *, size_t,
				    size_t *, unsigned char *, size_t, size_t *,
				    int, const char **);
	void			 (*reset)(void *);
	void			 (*close)(void *);
};

struct slot {
	unsigned char	*data;
	size_t		 len;
	size_t		 pos;		/* read by the reader so far */
};

struct nsd_decompressor {
	pthread_t		 thread;
	pthread_mutex_t		 lock;
	pthread_cond_t		 filled;	/* a slot handed over, or the
						   end */
	pthread_cond_t		 emptied;	/* a slot given back, or stop */
	struct slot		 slots[NSLOTS];
	size_t			 head;		/* the reader's next slot */
	size_t			 tail;		/* the thread's next slot */
	size_t			 nfull;
	int			 started;	/* the thread runs */
	int			 done;		/* the thread has finished */
	int			 stopping;
	int			 failed;
	struct nsd_error	 error;
	uint64_t		 consumed;	/* atomic: compressed bytes
						   read */

	/* The thread's own. */
	int			 fd;
	int			 regular;
	char			*name;
	const struct codec	*codec;
	void			*state;
	unsigned char		*in;
	size_t			 in_cap;
	size_t			 in_len;
	size_t			 in_pos;
	uint64_t		 in_offset;	/* of in[0] in the input */
	int			 eof;
};

#ifdef NSD_WITH_ISAL
/* gzip with ISA-L's igzip, the fastest inflater on x86-64 and arm64. */
static void *
isal_open(void)
{
	struct inflate_state	*s = xmalloc(sizeof *s);

	isal_inflate_init(s);
	s->crc_flag = ISAL_GZIP;
	return (s);
}

static enum step
isal_step(void *p, const unsigned char *in, size_t inlen, size_t *used,
    unsigned char *out, size_t outlen, size_t *made, int finish,
    const char **why)
{
	struct inflate_state	*s = p;
	int			 rc;

	(void)finish;
	s->next_in = (uint8_t *)(uintptr_t)in;
	s->avail_in = inlen;
	s->next_out = out;
	s->avail_out = outlen;
	rc = isal_inflate(s);
	*used = inlen - s->avail_in;
	*made = outlen - s->avail_out;
	switch (rc) {
	case ISAL_DECOMP_OK:
		return (s->block_state == ISAL_BLOCK_FINISH ? STEP_END :
		    STEP_MORE);
	case ISAL_INCORRECT_CHECKSUM:
		*why = "its CRC or length does not match";
		break;
	case ISAL_INVALID_WRAPPER:
	case ISAL_UNSUPPORTED_METHOD:
		*why = "not a gzip member header";
		break;
	default:
		*why = "invalid deflate data";
		break;
	}
	return (STEP_ERROR);
}

static void
isal_reset(void *p)
{
	struct inflate_state	*s = p;

	isal_inflate_reset(s);
	s->crc_flag = ISAL_GZIP;
}

static const struct codec gzip_codec = {
	NSD_COMPRESSION_GZIP, "gzip (ISA-L)", isal_open, isal_step,
	isal_reset, free
};
#elif defined(NSD_WITH_ZLIB)
/* gzip with zlib, where ISA-L is missing. */
static void *
zlib_open(void)
{
	z_stream	*z = xcalloc(1, sizeof *z);

	/* 16 + window bits: a gzip wrapper, and no other. */
	if (inflateInit2(z, 16 + MAX_WBITS) != Z_OK)
		nsd_out_of_memory();
	return (z);
}

static enum step
zlib_step(void *p, const unsigned char *in, size_t inlen, size_t *used,
    unsigned char *out, size_t outlen, size_t *made, int finish,
    const char **why)
{
	z_stream	*z = p;
	int		 rc;

	(void)finish;
	z->next_in = (Bytef *)(uintptr_t)in;
	z->avail_in = inlen;
	z->next_out = out;
	z->avail_out = outlen;
	rc = inflate(z, Z_NO_FLUSH);
	*used = inlen - z->avail_in;
	*made = outlen - z->avail_out;
	switch (rc) {
	case Z_OK:
	case Z_BUF_ERROR:
		return (STEP_MORE);
	case Z_STREAM_END:
		return (STEP_END);
	case Z_MEM_ERROR:
		nsd_out_of_memory();
	}
	*why = z->msg != NULL ? z->msg : "invalid deflate data";
	return (STEP_ERROR);
}

static void
zlib_reset(void *p)
{
	inflateReset(p);
}

static void
zlib_close(void *p)
{
	inflateEnd(p);
	free(p);
}

static const struct codec gzip_codec = {
	NSD_COMPRESSION_GZIP, "gzip (zlib)", zlib_open, zlib_step, zlib_reset,
	zlib_close
};
#endif

#ifdef NSD_WITH_ZSTD
static void *
zstd_open(void)
{
	ZSTD_DStream	*z;

	if ((z = ZSTD_createDStream()) == NULL)
		nsd_out_of_memory();
	return (z);
}

static enum step
zstd_step(void *p, const unsigned char *in, size_t inlen, size_t *used,
    unsigned char *out, size_t outlen, size_t *made, int finish,
    const char **why)
{
	ZSTD_inBuffer	 ib = { in, inlen, 0 };
	ZSTD_outBuffer	 ob = { out, outlen, 0 };
	size_t		 rc;

	(void)finish;
	rc = ZSTD_decompressStream(p, &ob, &ib);
	*used = ib.pos;
	*made = ob.pos;
	if (ZSTD_isError(rc)) {
		*why = ZSTD_getErrorName(rc);
		return (STEP_ERROR);
	}
	/* 0: a frame is decoded and flushed whole. */
	return (rc == 0 ? STEP_END : STEP_MORE);
}

static void
zstd_reset(void *p)
{
	ZSTD_DCtx_reset(p, ZSTD_reset_session_only);
}

static void
zstd_close(void *p)
{
	ZSTD_freeDStream(p);
}

static const struct codec zstd_codec = {
	NSD_COMPRESSION_ZSTD, "zstd", zstd_open, zstd_step, zstd_reset,
	zstd_close
};
#endif

#ifdef NSD_WITH_BZIP2
static void *
bzip2_open(void)
{
	bz_stream	*z = xcalloc(1, sizeof *z);

	if (BZ2_bzDecompressInit(z, 0, 0) != BZ_OK)
		nsd_out_of_memory();
	return (z);
}

static enum step
bzip2_step(void *p, const unsigned char *in, size_t inlen, size_t *used,
    unsigned char *out, size_t outlen, size_t *made, int finish,
    const char **why)
{
	bz_stream	*z = p;
	int		 rc;

	(void)finish;
	z->next_in = (char *)(uintptr_t)in;
	z->avail_in = inlen;
	z->next_out = (char *)out;
	z->avail_out = outlen;
	rc = BZ2_bzDecompress(z);
	*used = inlen - z->avail_in;
	*made = outlen - z->avail_out;
	switch (rc) {
	case BZ_OK:
		return (STEP_MORE);
	case BZ_STREAM_END:
		return (STEP_END);
	case BZ_MEM_ERROR:
		nsd_out_of_memory();
	case BZ_DATA_ERROR_MAGIC:
		*why = "not a bzip2 stream header";
		break;
	default:
		*why = "invalid bzip2 data";
		break;
	}
	return (STEP_ERROR);
}

static void
bzip2_reset(void *p)
{
	BZ2_bzDecompressEnd(p);
	memset(p, 0, sizeof (bz_stream));
	if (BZ2_bzDecompressInit(p, 0, 0) != BZ_OK)
		nsd_out_of_memory();
}

static void
bzip2_close(void *p)
{
	BZ2_bzDecompressEnd(p);
	free(p);
}

static const struct codec bzip2_codec = {
	NSD_COMPRESSION_BZIP2, "bzip2", bzip2_open, bzip2_step, bzip2_reset,
	bzip2_close
};
#endif

#ifdef NSD_WITH_LZMA
static void *
xz_open(void)
{
	lzma_stream	*z = xcalloc(1, sizeof *z);

	if (lzma_stream_decoder(z, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		nsd_out_of_memory();
	return (z);
}

static enum step
xz_step(void *p, const unsigned char *in, size_t inlen, size_t *used,
    unsigned char *out, size_t outlen, size_t *made, int finish,
    const char **why)
{
	lzma_stream	*z = p;
	lzma_ret	 rc;

	z->next_in = in;
	z->avail_in = inlen;
	z->next_out = out;
	z->avail_out = outlen;
	rc = lzma_code(z, finish ? LZMA_FINISH : LZMA_RUN);
	*used = inlen - z->avail_in;
	*made = outlen - z->avail_out;
	switch (rc) {
	case LZMA_OK:
	case LZMA_BUF_ERROR:	/* no progress: the caller knows why */
		return (STEP_MORE);
	case LZMA_STREAM_END:
		return (STEP_END);
	case LZMA_MEM_ERROR:
		nsd_out_of_memory();
	case LZMA_FORMAT_ERROR:
		*why = "not an xz stream header";
		break;
	case LZMA_DATA_ERROR:
		*why = "invalid xz data";
		break;
	default:
		*why = "its check or options do not match";
		break;
	}
	return (STEP_ERROR);
}

static void
xz_reset(void *p)
{
	/* LZMA_CONCATENATED ends once, at the end of the input. */
	(void)p;
}

static void
xz_close(void *p)
{
	lzma_end(p);
	free(p);
}

static const struct codec xz_codec = {
	NSD_COMPRESSION_XZ, "xz", xz_open, xz_step, xz_reset, xz_close
};
#endif

static const struct codec *const codecs[] = {
#if defined(NSD_WITH_ISAL) || defined(NSD_WITH_ZLIB)
	&gzip_codec,
#endif
#ifdef NSD_WITH_ZSTD
	&zstd_codec,
#endif
#ifdef NSD_WITH_BZIP2
	&bzip2_codec,
#endif
#ifdef NSD_WITH_LZMA
	&xz_codec,
#endif
	NULL
};

static const char *const format_names[] = {
	[NSD_COMPRESSION_NONE] = "none",
	[NSD_COMPRESSION_GZIP] = "gzip",
	[NSD_COMPRESSION_ZSTD] = "zstd",
	[NSD_COMPRESSION_BZIP2] = "bzip2",
	[NSD_COMPRESSION_XZ] = "xz"
};

/* The library a user would install for a format, for the refusal. */
static const char *const format_libraries[] = {
	[NSD_COMPRESSION_NONE] = "",
	[NSD_COMPRESSION_GZIP] = "ISA-L or zlib",
	[NSD_COMPRESSION_ZSTD] = "libzstd",
	[NSD_COMPRESSION_BZIP2] = "libbz2",
	[NSD_COMPRESSION_XZ] = "liblzma"
};

/*
 * The magic numbers of the formats, with '?' for a byte that varies: a
 * zstd skippable frame is 0x184D2A50 to 0x184D2A5F, and bzip2's level is a
 * digit. bzip2's "BZh" and a digit could begin a line of text, so the
 * magic of its first block (the digits of pi), or that of the end of an
 * empty stream, must follow.
 */
static const struct magic {
	enum nsd_compression	 format;
	size_t			 len;
	const char		*bytes;
} magics[] = {
	{ NSD_COMPRESSION_GZIP, 2, "\x1f\x8b" },
	{ NSD_COMPRESSION_ZSTD, 4, "\x28\xb5\x2f\xfd" },
	{ NSD_COMPRESSION_ZSTD, 4, "?\x2a\x4d\x18" },
	{ NSD_COMPRESSION_XZ, 6, "\xfd" "7zXZ\0" },
	{ NSD_COMPRESSION_BZIP2, 10, "BZh?\x31\x41\x59\x26\x53\x59" },
	{ NSD_COMPRESSION_BZIP2, 10, "BZh?\x17\x72\x45\x38\x50\x90" }
};

/* How many of the first len bytes at p match magic m: len when all do. */
static size_t
magic_match(const struct magic *m, const unsigned char *p, size_t len)
{
	size_t	 i;
	int	 ok;

	for (i = 0; i < len && i < m->len; i++) {
		if (m->bytes[i] != '?')
			ok = p[i] == (unsigned char)m->bytes[i];
		else if (m->format == NSD_COMPRESSION_ZSTD)
			ok = (p[i] & 0xf0) == 0x50;
		else
			ok = p[i] >= '1' && p[i] <= '9';
		if (!ok)
			return (i);
	}
	return (i);
}

enum nsd_compression
nsd_compression_detect(const void *head, size_t len)
{
	size_t	 i;

	for (i = 0; i < sizeof magics / sizeof magics[0]; i++)
		if (magic_match(&magics[i], head, len) == magics[i].len)
			return (magics[i].format);
	return (NSD_COMPRESSION_NONE);
}

int
nsd_compression_undecided(const void *head, size_t len)
{
	size_t	 i;

	for (i = 0; i < sizeof magics / sizeof magics[0]; i++)
		if (len < magics[i].len &&
		    magic_match(&magics[i], head, len) == len)
			return (1);
	return (0);
}

const char *
nsd_compression_name(enum nsd_compression c)
{
	return (format_names[c]);
}

const char *
nsd_compression_built_in(void)
{
	static char	 list[128];
	size_t		 i;

	if (list[0] != '\0')
		return (list);
	for (i = 0; codecs[i] != NULL; i++) {
		if (i > 0)
			strncat(list, ", ", sizeof list - strlen(list) - 1);
		strncat(list, codecs[i]->library, sizeof list - strlen(list) -
		    1);
	}
	if (i == 0)
		strncpy(list, "none", sizeof list - 1);
	return (list);
}

/*
 * Set the error the reader gets once it has read every byte before it:
 * "FILE: byte N: corrupt gzip data: why".
 */
static void
fail(struct nsd_decompressor *d, const char *what, const char *why)
{
	pthread_mutex_lock(&d->lock);
	nsd_error_set(&d->error, NSD_EXIT_INPUT, "%s: byte %llu: %s %s data: "
	    "%s", d->name, (unsigned long long)(d->in_offset + d->in_pos),
	    what, nsd_compression_name(d->codec->format), why);
	d->failed = 1;
	pthread_mutex_unlock(&d->lock);
}

/* The next slot to decode into, or NULL when the reader stopped. */
static struct slot *
empty_slot(struct nsd_decompressor *d)
{
	struct slot	*s = NULL;

	pthread_mutex_lock(&d->lock);
	while (d->nfull == NSLOTS && !d->stopping)
		pthread_cond_wait(&d->emptied, &d->lock);
	if (!d->stopping) {
		s = &d->slots[d->tail];
		s->len = s->pos = 0;
	}
	pthread_mutex_unlock(&d->lock);
	return (s);
}

/* Give the reader the slot decoded into; d->lock is held. */
static void
hand_over_locked(struct nsd_decompressor *d)
{
	d->tail = (d->tail + 1) % NSLOTS;
	d->nfull++;
	pthread_cond_signal(&d->filled);
}

static void
hand_over(struct nsd_decompressor *d)
{
	pthread_mutex_lock(&d->lock);
	hand_over_locked(d);
	pthread_mutex_unlock(&d->lock);
}

/*
 * Whether the input has bytes (or its end) ready: always for a regular
 * file; for a pipe, waiting up to ms.
 */
static int
input_ready(struct nsd_decompressor *d, int ms)
{
	return (d->regular || nsd_fd_readable(d->fd, ms));
}

/*
 * Keep the input not yet decoded at the start of the buffer, and read more
 * after it. 0; 1 when the reader stopped meanwhile; -1 on a read error.
 */
static int
read_input(struct nsd_decompressor *d)
{
	ssize_t	 n;
	int	 stopping, e;

	d->in_len -= d->in_pos;
	memmove(d->in, d->in + d->in_pos, d->in_len);
	d->in_offset += d->in_pos;
	d->in_pos = 0;
	for (;;) {
		pthread_mutex_lock(&d->lock);
		stopping = d->stopping;
		pthread_mutex_unlock(&d->lock);
		if (stopping)
			return (1);
		if (input_ready(d, POLL_MS))
			break;
	}
	do
		n = read(d->fd, d->in + d->in_len, d->in_cap - d->in_len);
	while (n == -1 && errno == EINTR);
	if (n == -1) {
		e = errno;
		pthread_mutex_lock(&d->lock);
		nsd_error_set(&d->error, NSD_EXIT_INPUT, "%s: %s", d->name,
		    strerror(e));
		d->failed = 1;
		pthread_mutex_unlock(&d->lock);
		return (-1);
	}
	if (n == 0)
		d->eof = 1;
	d->in_len += n;
	__atomic_add_fetch(&d->consumed, (uint64_t)n, __ATOMIC_RELAXED);
	return (0);
}

/*
 * The thread: decode until the end of the input, an error or a stop.
 * ended says that the input, as read so far, ends where a stream ended.
 */
static void *
decode(void *arg)
{
	struct nsd_decompressor	*d = arg;
	struct slot		*s = NULL;
	const char		*why = NULL;
	size_t			 used, made;
	enum step		 rc;
	int			 ended = 0;

	for (;;) {
		if (s == NULL && (s = empty_slot(d)) == NULL)
			break;
		if (d->in_pos == d->in_len && !d->eof) {
			/* Hand out what is decoded before waiting on a pipe. */
			if (s->len > 0 && !input_ready(d, 0)) {
				hand_over(d);
				s = NULL;
				continue;
			}
			if (read_input(d) != 0)
				break;
		}
		rc = d->codec->step(d->state, d->in + d->in_pos,
		    d->in_len - d->in_pos, &used, s->data + s->len,
		    OUT_SIZE - s->len, &made, d->eof, &why);
		d->in_pos += used;
		s->len += made;
		if (rc == STEP_ERROR) {
			/* Not all libraries say where: then, before the end. */
			if (used == 0)
				d->in_pos = d->in_len;
			fail(d, "corrupt", why);
			break;
		}
		if (rc == STEP_END) {
			ended = 1;
			if (d->eof && d->in_pos == d->in_len)
				break;
			d->codec->reset(d->state);
		} else if (used > 0 || made > 0)
			ended = 0;
		else if (d->eof && d->in_pos == d->in_len) {
			/* The input is all read, and nothing comes of it. */
			if (!ended)
				fail(d, "truncated", "the input ends inside a "
				    "stream");
			break;
		} else if (s->len < OUT_SIZE) {
			/* The codec wants more input than the rest. */
			if (d->in_pos == 0 && d->in_len == d->in_cap) {
				fail(d, "corrupt", "nothing comes of it");
				break;
			}
			if (read_input(d) != 0)
				break;
		}
		if (s->len == OUT_SIZE) {
			hand_over(d);
			s = NULL;
		}
	}
	/*
	 * The last slot and the end together, so that a reader that empties
	 * it finds the end (or the error) at once: what came of a stream
	 * found corrupt is dropped with the batch it would have ended.
	 */
	pthread_mutex_lock(&d->lock);
	if (s != NULL && s->len > 0)
		hand_over_locked(d);
	d->done = 1;
	pthread_cond_broadcast(&d->filled);
	pthread_mutex_unlock(&d->lock);
	return (NULL);
}

static const struct codec *
codec_of(enum nsd_compression c)
{
	size_t	 i;

	for (i = 0; codecs[i] != NULL; i++)
		if (codecs[i]->format == c)
			return (codecs[i]);
	return (NULL);
}

int
nsd_decompressor_start(struct nsd_decompressor **dp, int fd,
    enum nsd_compression c, const void *head, size_t headlen,
    const char *name, struct nsd_error *err)
{
	struct nsd_decompressor	*d;
	const struct codec	*codec;
	struct stat		 sb;
	size_t			 i;

	if ((codec = codec_of(c)) == NULL)
		return (nsd_error_set(err, NSD_EXIT_INPUT, "%s: compressed "
		    "with %s, which this nsdedup was built without (%s): "
		    "decompress it first", name, nsd_compression_name(c),
		    format_libraries[c]));
	d = xcalloc(1, sizeof *d);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->filled, NULL);
	pthread_cond_init(&d->emptied, NULL);
	for (i = 0; i < NSLOTS; i++)
		d->slots[i].data = xmalloc(OUT_SIZE);
	d->fd = fd;
	d->regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
	d->name = xstrdup(name);
	d->codec = codec;
	d->state = codec->open();
	/* The reader may have read a chunk of its own before it knew. */
	d->in_cap = headlen > IN_SIZE ? headlen : IN_SIZE;
	d->in = xmalloc(d->in_cap);
	memcpy(d->in, head, headlen);
	d->in_len = headlen;
	d->consumed = headlen;
	if (nsd_thread_start(&d->thread, decode, d) == 0)
		d->started = 1;
	else {
		nsd_decompressor_stop(d);
		return (nsd_error_set(err, NSD_EXIT_INPUT, "%s: cannot start "
		    "a thread to decompress it", name));
	}
	*dp = d;
	return (0);
}

ssize_t
nsd_decompressor_read(struct nsd_decompressor *d, void *buf, size_t size,
    struct nsd_error *err)
{
	struct slot	*s;
	size_t		 n;

	pthread_mutex_lock(&d->lock);
	while (d->nfull == 0 && !d->done)
		pthread_cond_wait(&d->filled, &d->lock);
	if (d->nfull == 0) {
		pthread_mutex_unlock(&d->lock);
		if (!d->failed)
			return (0);
		*err = d->error;
		return (-1);
	}
	s = &d->slots[d->head];
	pthread_mutex_unlock(&d->lock);

	/* A full slot is the reader's until it gives it back. */
	n = s->len - s->pos < size ? s->len - s->pos : size;
	memcpy(buf, s->data + s->pos, n);
	s->pos += n;
	if (s->pos == s->len) {
		pthread_mutex_lock(&d->lock);
		d->head = (d->head + 1) % NSLOTS;
		d->nfull--;
		pthread_cond_signal(&d->emptied);
		pthread_mutex_unlock(&d->lock);
	}
	return ((ssize_t)n);
}

int
nsd_decompressor_ready(struct nsd_decompressor *d, int ms)
{
	struct timespec	 until;
	int		 ready;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&d->lock);
	if (ms > 0 && d->nfull == 0 && !d->done)
		pthread_cond_timedwait(&d->filled, &d->lock, &until);
	ready = d->nfull > 0 || d->done;
	pthread_mutex_unlock(&d->lock);
	return (ready);
}

uint64_t
nsd_decompressor_consumed(struct nsd_decompressor *d)
{
	return (__atomic_load_n(&d->consumed, __ATOMIC_RELAXED));
}

void
nsd_decompressor_stop(struct nsd_decompressor *d)
{
	size_t	 i;

	if (d == NULL)
		return;
	pthread_mutex_lock(&d->lock);
	d->stopping = 1;
	pthread_cond_broadcast(&d->emptied);
	pthread_mutex_unlock(&d->lock);
	if (d->started)
		pthread_join(d->thread, NULL);
	d->codec->close(d->state);
	for (i = 0; i < NSLOTS; i++)
		free(d->slots[i].data);
	free(d->in);
	free(d->name);
	pthread_cond_destroy(&d->filled);
	pthread_cond_destroy(&d->emptied);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
