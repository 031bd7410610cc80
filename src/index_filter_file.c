/*
 * index_filter_file.c: PATH.filter, the key filter of an index
 * (index_filter.c), read at open, made anew, and written.
 *
 * The rule. The filter a lookup believes holds the key of every entry of
 * the table, the stage and PATH.next that the lookup may find. Every
 * entry a run puts into any of them goes into the run's filter too
 * (nsd_table_put(), table_add()), before anything can look it up; so the
 * filter in memory keeps the rule. The filter on disk must keep it for
 * whatever a later run will find:
 *
 *   - before a file that holds entries taken from the log (a fold's
 *     stage, a rebuilt or upgraded table) is renamed into place, the
 *     filter is written (install() in index_fold.c): the entries of a
 *     committed log are committed the moment the rename is done, before
 *     the header says so (a run that finds such a stage finishes the
 *     fold);
 *   - before the commit's header is written, the filter is written, with
 *     the run's entries (file_commit());
 *   - the entries a sweep or a growth copies between the table files keep
 *     their key, which the filter holds already; and clearing the
 *     leftovers of a run that did not commit only takes keys away, which
 *     makes a "maybe" that costs a lookup, never an "absent" that is
 *     wrong.
 *
 * It is written whole to PATH.filter.new, synced and renamed over
 * PATH.filter: a run stopped at any point leaves the old filter or the
 * new one, each a superset of what the committed index holds. Its header
 * names the newest generation whose entries it holds; one older than the
 * last commit (a filter put back from a copy) is not believed, nor one
 * whose checksums fail, nor another index's. A run that writes then
 * makes the filter anew from the table files, which reads them whole
 * once, and removes the old one at once so that no later run can believe
 * it; a run that only reads goes without it. So does a run over an index
 * of a version before filters, until its upgrade.
 *
 * A table made anew at another size (a rebuild, a growth, an upgrade)
 * gets a filter made anew at its size, from every entry (a filter of a
 * byte a slot would otherwise fill as the table doubles).
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index_file.h"

/*
 * Map PATH.filter if it is one this index can believe; NULL when it is
 * missing, damaged, stale or another index's (a failed read counts as
 * damage: the filter is never needed to answer right). The mapping is
 * private: its pages are the page cache's, read once in order for the
 * checksum, and only a page a run adds a key to becomes the process's
 * own (a fold's; the keys a sweep moves are in it already), so that a
 * filter of 128 MiB is neither copied nor counted as the run's memory.
 */
static struct nsd_filter *
filter_read(struct file_index *fi)
{
	unsigned char			 head[NSD_FILTER_OFFSET];
	struct nsd_filter_header	 h;
	struct nsd_filter		*f;
	struct stat			 sb;
	unsigned char			*map;
	int				 fd;

	fd = open(fi->filter_path, O_RDONLY | NSD_WRITE_FLAGS);
	if (fd == -1)
		return (NULL);
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    sb.st_size < NSD_FILTER_OFFSET ||
	    nsd_pread_exact(fd, head, sizeof head, 0) == -1 ||
	    nsd_filter_decode_header(head, sb.st_size, fi->hdr.file_id,
	    fi->hdr.committed_gen, &h) != NSD_FILTER_OK) {
		close(fd);
		return (NULL);
	}
	map = mmap(NULL, sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
	    fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return (NULL);
	f = nsd_filter_over(map, sb.st_size,
	    (uint64_t *)(void *)(map + NSD_FILTER_OFFSET), h.nblocks);
	/* Writable only now: populating a writable one copies every page. */
	if (!nsd_filter_sum_ok(f, &h) ||
	    mprotect(map, sb.st_size, PROT_READ | PROT_WRITE) == -1) {
		nsd_filter_free(f);
		return (NULL);
	}
	(void)madvise(map, sb.st_size, MADV_RANDOM);
	nsd_filter_words_le(f);
	f->keys = h.keys;
	f->gen = h.gen;
	return (f);
}

/*
 * At open: the filter, read, or (a writer's, where none can be believed)
 * made anew. A writer of an index of a version before checks goes
 * without until its upgrade makes its table anew; one of version 5 or 6
 * makes it at once (their next commit makes them version 7).
 */
int
nsd_file_filter_load(struct file_index *fi, struct nsd_error *err)
{
#ifdef NSD_CRASH_POINTS
	/*
	 * A test build runs without a filter when $NSDEDUP_NO_FILTER is set,
	 * to compare; a writer removes it, as the filter would miss what the
	 * run adds.
	 */
	if (getenv("NSDEDUP_NO_FILTER") != NULL) {
		fi->filter_off = 1;
		if (!fi->readonly && unlink(fi->filter_path) == -1 &&
		    errno != ENOENT)
			return (nsd_error_errno(err, NSD_EXIT_INDEX,
			    fi->filter_path, "cannot remove"));
		return (0);
	}
#endif
	if (fi->legacy)
		return (0);
	if (fi->hdr.version >= NSD_INDEX_FILTERED)
		fi->filter = filter_read(fi);
	if (fi->readonly || (fi->filter != NULL && fi->filter->nblocks ==
	    nsd_filter_blocks(nslots_of(&fi->main))))
		return (0);
	/* One of another size (a rebuild cut short) is made anew too. */
	if (unlink(fi->filter_path) == -1 && errno != ENOENT)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->filter_path,
		    "cannot remove a key filter that cannot be used"));
	return (nsd_file_filter_build(fi, err));
}

/* Put every entry of tb into f; -1 at a damaged slot. */
static int
filter_fill(struct file_index *fi, struct nsd_filter *f,
    const struct table *tb, struct nsd_error *err)
{
	uint64_t	 i, key, meta;

	if (tb->fd == -1)
		return (0);
	for (i = 0; i <= tb->mask; i++)
		switch (slot_read(fi, tb, i, &key, &meta)) {
		case SLOT_FREE:
			break;
		case SLOT_BAD:
			return (nsd_table_bad_slot(fi, tb, i, err));
		case SLOT_ENTRY:
			if (!forgotten(fi, meta))
				nsd_filter_add(f, nsd_index_position(&fi->hdr,
				    nsd_slot_table(meta), key));
			break;
		}
	return (0);
}

/*
 * Make the run's filter anew, sized for the table, from every entry of
 * the table, the stage and PATH.next; it replaces the run's, and is
 * written when the next file is put in place or at the commit.
 */
int
nsd_file_filter_build(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_filter	*f;

	f = nsd_filter_new(nsd_filter_blocks(nslots_of(&fi->main)));
	if (filter_fill(fi, f, &fi->main, err) == -1 ||
	    filter_fill(fi, f, &fi->stage, err) == -1 ||
	    filter_fill(fi, f, &fi->next, err) == -1) {
		nsd_filter_free(f);
		return (-1);
	}
	nsd_filter_free(fi->filter);
	fi->filter = f;
	f->changed = 1;
	return (0);
}

/*
 * Say in the header of PATH.filter, which holds what the run's filter
 * holds, that it holds every entry up to run gen: a run that put no entry
 * into a table file (its new ones are all in the log) commits a filter
 * that is still whole. In place: a header torn by a crash fails its
 * checksum, and the filter is made anew.
 */
static int
filter_stamp(struct file_index *fi, uint64_t gen, struct nsd_error *err)
{
	unsigned char	 head[NSD_FILTER_OFFSET];
	uint64_t	 old = fi->filter->gen;
	int		 fd, ok;

	fd = open(fi->filter_path, O_WRONLY | NSD_WRITE_FLAGS);
	if (fd == -1)
		return (nsd_file_commit_error(fi, "opening the key filter",
		    err));
	fi->filter->gen = gen;
	nsd_filter_words_le(fi->filter);
	nsd_filter_encode_header(fi->filter, fi->hdr.file_id, head);
	nsd_filter_words_le(fi->filter);
	ok = nsd_pwrite_all(fd, head, sizeof head, 0) == 0;
	CRASH_POINT("filter-stamped");
	if (!ok || fdatasync(fd) == -1) {
		fi->filter->gen = old;
		close(fd);
		return (nsd_file_commit_error(fi, "writing the key filter",
		    err));
	}
	close(fd);
	return (0);
}

/*
 * Write the run's filter, if it has changed, to PATH.filter.new, sync it
 * and rename it over PATH.filter, saying it holds every entry up to the
 * run's generation (or, unchanged, say so in its header). Errors leave
 * the run uncommitted.
 */
int
nsd_file_filter_sync(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_filter	*f = fi->filter;
	unsigned char		 head[NSD_FILTER_OFFSET];
	struct stat		 sb;
	uint64_t		 gen;
	int			 fd, ok;

	if (f == NULL)
		return (0);
	gen = fi->gen != 0 ? fi->gen : fi->hdr.committed_gen;
	if (!f->changed)
		return (gen > f->gen ? filter_stamp(fi, gen, err) : 0);
	f->gen = gen;
	(void)unlink(fi->filter_new_path);
	fd = open(fi->filter_new_path, O_WRONLY | O_CREAT | O_EXCL |
	    NSD_WRITE_FLAGS, 0644);
	if (fd == -1)
		return (nsd_file_commit_error(fi, "making the key filter",
		    err));
	/* The index's owner and mode, as the log's. */
	if (fstat(fi->main.fd, &sb) == 0) {
		(void)fchmod(fd, sb.st_mode & 07777);
		if (fchown(fd, sb.st_uid, sb.st_gid) == -1)
			(void)fchmod(fd, sb.st_mode & 0777);
	}
	nsd_filter_words_le(f);
	nsd_filter_encode_header(f, fi->hdr.file_id, head);
	ok = nsd_pwrite_all(fd, head, sizeof head, 0) == 0 &&
	    nsd_pwrite_all(fd, f->words, f->nblocks * NSD_FILTER_BLOCK,
	    NSD_FILTER_OFFSET) == 0;
	nsd_filter_words_le(f);
	if (!ok || fdatasync(fd) == -1) {
		nsd_file_commit_error(fi, "writing the key filter", err);
		close(fd);
		(void)unlink(fi->filter_new_path);
		return (-1);
	}
	close(fd);
	CRASH_POINT("filter-built");
	if (rename(fi->filter_new_path, fi->filter_path) == -1) {
		nsd_file_commit_error(fi, "renaming the key filter into place",
		    err);
		(void)unlink(fi->filter_new_path);
		return (-1);
	}
	CRASH_POINT("filter-renamed");
	if (nsd_file_sync_dir(fi->filter_path) == -1)
		return (nsd_file_commit_error(fi, "syncing the index's "
		    "directory", err));
	f->changed = 0;
	return (0);
}
