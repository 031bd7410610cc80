/*
 * region.h: memory that moves into a file when it grows large.
 *
 * A region is a resizable block of zero-initialised bytes. Up to
 * NSD_REGION_ANON_MAX bytes it is anonymous memory; past that it moves
 * into an unlinked file in $TMPDIR (or /tmp), mapped shared, so that the
 * kernel can write its pages back and drop them as it does any file's,
 * and a run's own memory stays bounded whatever its input. When no file
 * can be made or extended, the region stays in (or returns to) anonymous
 * memory and keeps the reason in spill_error: nothing fails but mapping
 * memory, which exits as the xmalloc family does. The caller owns the
 * region and frees it with nsd_region_free(); base moves when the region
 * is resized.
 */
#ifndef NSD_REGION_H
#define NSD_REGION_H

#include <stddef.h>

#ifndef NSD_REGION_ANON_MAX
#define NSD_REGION_ANON_MAX	(8UL << 20)
#endif

#define NSD_REGION_ERROR_MAX	160

struct nsd_region {
	void	*base;		/* NULL while empty */
	size_t	 size;		/* bytes usable at base, in pages */
	int	 fd;		/* the file holding them, or -1 */
	/* Why they are not in a file, or "". */
	char	 spill_error[NSD_REGION_ERROR_MAX];
};

/* An empty region; resize it before use. */
void	 nsd_region_init(struct nsd_region *);

/* Resizes to at least size bytes, keeping the contents; new bytes are 0. */
void	 nsd_region_resize(struct nsd_region *, size_t size);

/* Bytes of the region held in anonymous memory, and in its file. */
size_t	 nsd_region_anon(const struct nsd_region *);
size_t	 nsd_region_mapped(const struct nsd_region *);

void	 nsd_region_free(struct nsd_region *);

#endif /* NSD_REGION_H */
