/*
 * decompress.h: compressed inputs, known by their magic bytes and decoded
 * on a thread of their own.
 *
 * nsdedup reads gzip (every member of a multi-member file, as zcat does),
 * zstd (every frame), bzip2 (every stream) and xz (every stream, with its
 * padding) whatever the input is called, standard input included. The
 * reader looks at an input's first bytes (nsd_compression_detect()); when
 * they are a compressor's, it starts a decompressor over the descriptor,
 * handing it the bytes it has read already, and from then on reads the
 * decoded bytes from it. The decompressor's thread reads and decodes
 * ahead, into a ring of buffers, while the pipeline fingerprints what came
 * before: decompression and fingerprinting overlap.
 *
 * Which formats are built in is configure's choice (--with-isal or
 * --with-zlib for gzip, --with-zstd, --with-bzip2, --with-lzma); an input
 * in a format that is not built in is refused by name.
 *
 * Errors: a corrupt or truncated stream is an input error
 * (NSD_EXIT_INPUT) naming the input and the byte of it where decoding
 * stopped; nsd_decompressor_read() hands out every byte decoded before it,
 * then the error. Memory: the decompressor owns its buffers;
 * nsd_decompressor_stop() frees them and ends the thread.
 */
#ifndef NSD_DECOMPRESS_H
#define NSD_DECOMPRESS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "util.h"

enum nsd_compression {
	NSD_COMPRESSION_NONE,
	NSD_COMPRESSION_GZIP,
	NSD_COMPRESSION_ZSTD,
	NSD_COMPRESSION_BZIP2,
	NSD_COMPRESSION_XZ
};

struct nsd_decompressor;

/* The compression of an input that starts with these bytes. */
enum nsd_compression nsd_compression_detect(const void *, size_t);

/*
 * Whether these first bytes of an input could still begin a compressed
 * one, had it more: whether to read more before calling
 * nsd_compression_detect(). At most 10 bytes decide.
 */
int	 nsd_compression_undecided(const void *, size_t);

/* "gzip", "zstd", "bzip2", "xz". */
const char	*nsd_compression_name(enum nsd_compression);

/*
 * What this nsdedup decodes, as "gzip (ISA-L), zstd, bzip2, xz", or
 * "none".
 */
const char	*nsd_compression_built_in(void);

/*
 * Decode input fd (called name in messages), compressed as c, on a thread
 * of its own. head holds the first bytes of it, already read. 0, or -1
 * with err set when c is not built in.
 */
int	 nsd_decompressor_start(struct nsd_decompressor **, int,
	    enum nsd_compression, const void *, size_t, const char *,
	    struct nsd_error *);

/*
 * Copy up to size decoded bytes into buf, waiting for them: the bytes
 * copied, 0 at the end of the input, -1 with err set when it is corrupt,
 * truncated or cannot be read (after every byte decoded before that).
 */
ssize_t	 nsd_decompressor_read(struct nsd_decompressor *, void *, size_t,
	    struct nsd_error *);

/*
 * Whether the next read can return without waiting, waiting up to ms
 * milliseconds for decoded bytes, the end or an error.
 */
int	 nsd_decompressor_ready(struct nsd_decompressor *, int);

/* The compressed bytes read so far, those of head included. */
uint64_t nsd_decompressor_consumed(struct nsd_decompressor *);

/* End the thread, wherever it is, and free everything. */
void	 nsd_decompressor_stop(struct nsd_decompressor *);

#endif /* NSD_DECOMPRESS_H */
