/*
 * index_open.c: opening the persistent index: a new index made, the
 * parameters checked, every file opened and checked, a run that did not
 * commit cleared (recovery), and an index of an older version upgraded.
 * The design is in index_file.c.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index_file.h"

/* The fingerprint parameters header h says the index was made with. */
static void
params_of(const struct nsd_index_header *h, struct nsd_index_params *had)
{
	memset(had, 0, sizeof *had);
	had->method = h->method;
	had->sentences = h->sentences;
	had->min_length = h->min_length;
	had->compat = h->compat;
	had->norm_version = h->norm_version;
	had->seed = h->seed;
	had->distance = h->distance;
	had->ngram = h->ngram;
	had->shingle = h->shingle;
	had->min_features = h->min_features;
	had->bins = h->bins;
	had->bands = h->bands;
	had->rows = h->rows;
	had->threshold = h->threshold;
	had->sketch_bytes = h->sketch_bytes;
	had->ntables = h->ntables;
	memcpy(had->masks, h->mask, sizeof had->masks);
	/* Keys repeat in the block tables of SimHash, the one with several. */
	had->repeats = h->ntables > 1;
}

/*
 * Refuse an index made with other fingerprint parameters, naming one. An
 * index opened for --db-undo, which fingerprints nothing, takes its own.
 */
static int
check_params(struct file_index *fi, const struct nsd_index_params *p,
    struct nsd_error *err)
{
	const struct nsd_index_header	*h = &fi->hdr;
	struct nsd_index_params		 had;

	params_of(h, &had);
	if (fi->undo) {
		had.norm_oldest = had.norm_version;
		had.sig_bytes = nsd_ids_sig_bytes(h);
		fi->base.params = had;
		fi->repeats = had.repeats;
		return (0);
	}
	if (nsd_index_params_check(fi->path, &had, p, err) == -1)
		return (-1);
	/* Parameters choose the tables' masks, whatever a header says. */
	if (memcmp(h->mask, p->masks, p->ntables * sizeof h->mask[0]) != 0)
		return (nsd_file_damaged(err, fi->path, "its header's table "
		    "masks are not the ones its parameters choose"));
	return (0);
}

/* Write a new, empty index at fi->path (through PATH.new and a rename). */
static int
create_index(struct file_index *fi, const struct nsd_index_params *p,
    struct nsd_error *err)
{
	struct nsd_index_header	 h;
	unsigned char		 copy[NSD_INDEX_COPY_SIZE];
	unsigned char		 ids[NSD_IDS_HEADER_SIZE];
	unsigned char		*map;
	const char		*what;
	uint64_t		 size;
	int			 fd;

	size = nsd_index_file_size(NSD_INDEX_MIN_SLOTS);
	memset(&h, 0, sizeof h);
	if (getentropy(&h.file_id, sizeof h.file_id) == -1)
		h.file_id = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL ^
		    (uint64_t)getpid();
	h.sequence = 1;
	snprintf(h.method, sizeof h.method, "%s", p->method);
	h.sentences = p->sentences;
	h.min_length = p->min_length;
	h.compat = p->compat;
	h.norm_version = p->norm_version;
	h.seed = p->seed;
	h.distance = p->distance;
	h.ngram = p->ngram;
	h.shingle = p->shingle;
	h.min_features = p->min_features;
	h.bins = p->bins;
	h.bands = p->bands;
	h.rows = p->rows;
	h.threshold = p->threshold;
	h.sketch_bytes = p->sketch_bytes;
	assert(p->sig_bytes == 2 * (size_t)p->bins + p->sketch_bytes);
	assert(p->ntables >= 1 && p->ntables <= NSD_INDEX_MAX_TABLES);
	h.ntables = p->ntables;
	memcpy(h.mask, p->masks, p->ntables * sizeof h.mask[0]);
	h.nslots = NSD_INDEX_MIN_SLOTS;
	h.slot_size = NSD_INDEX_SLOT_SIZE;
	h.max_load = NSD_INDEX_MAX_LOAD;
	h.ids_length = NSD_IDS_HEADER_SIZE;
	h.created = h.committed_at = (uint64_t)nsd_index_now();

	memcpy(ids, NSD_IDS_MAGIC, 8);
	nsd_put_le64(ids + 8, h.file_id);
	/*
	 * There is no index, so an id file here is one a killed creation
	 * left, or something planted: it goes (unlink(2) does not follow a
	 * symbolic link), and O_EXCL makes sure that what is written is a new
	 * file of our own.
	 */
	(void)unlink(fi->ids_path);
	fd = open(fi->ids_path, O_RDWR | O_CREAT | O_EXCL | NSD_WRITE_FLAGS,
	    0666);
	if (fd == -1)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->ids_path,
		    "cannot create"));
	if (pwrite(fd, ids, sizeof ids, 0) != (ssize_t)sizeof ids) {
		nsd_file_commit_error(fi, "writing the new id file", err);
		goto fail_ids;
	}
	if (fdatasync(fd) == -1) {
		nsd_file_commit_error(fi, "syncing the new id file", err);
		goto fail_ids;
	}
	close(fd);

	if (nsd_file_create_mapped(fi->new_path, size, 0666, 0, &fd, &map,
	    &what) == -1) {
		if (errno == EACCES || errno == EROFS)
			nsd_error_errno(err, NSD_EXIT_INDEX, fi->new_path,
			    what);
		else
			nsd_file_commit_error(fi, what, err);
		(void)unlink(fi->ids_path);
		return (-1);
	}
	nsd_index_header_encode(&h, copy);
	memcpy(map, copy, sizeof copy);
	h.sequence = 0;
	nsd_index_header_encode(&h, copy);
	memcpy(map + NSD_INDEX_COPY_SIZE, copy, sizeof copy);
	if (nsd_file_sync_map(fi, map, size, fd, "the new table", err) == -1)
		goto fail_table;
	if (rename(fi->new_path, fi->path) == -1) {
		nsd_file_commit_error(fi, "renaming the new index into place",
		    err);
		goto fail_table;
	}
	munmap(map, size);
	close(fd);
	if (nsd_file_sync_dir(fi->path) == -1) {
		nsd_file_commit_error(fi, "syncing the index's directory", err);
		/* Not known to last: better no index than a doubtful one. */
		(void)unlink(fi->path);
		(void)unlink(fi->ids_path);
		return (-1);
	}
	return (0);
fail_table:
	munmap(map, size);
	close(fd);
	(void)unlink(fi->new_path);
	(void)unlink(fi->ids_path);
	return (-1);
fail_ids:
	close(fd);
	(void)unlink(fi->ids_path);
	return (-1);
}

/*
 * Give every byte from offset from of a file a writer maps its blocks: a
 * copy made with holes would otherwise meet a full disk as a SIGBUS,
 * mid-run.
 */
static int
reserve(struct file_index *fi, int fd, off_t from, off_t size,
    const char *what, struct nsd_error *err)
{
	char	 msg[64];
	int	 e;

	if (size <= from || (e = posix_fallocate(fd, from, size - from)) == 0)
		return (0);
	errno = e;
	snprintf(msg, sizeof msg, "making room for %s", what);
	return (nsd_file_commit_error(fi, msg, err));
}

/*
 * The newest group record, which the header names: its number must be the
 * header's count of groups, and it must end where the committed bytes of
 * PATH.ids do. So a header whose count of groups or of bytes is wrong,
 * which its checksum cannot tell, is refused before a run numbers a group
 * twice or writes over one.
 */
static int
check_last_group(struct file_index *fi, struct nsd_error *err)
{
	const unsigned char	*rec;
	uint64_t		 size;

	if (fi->hdr.groups == 0)
		return (0);
	rec = nsd_file_group_record(fi, fi->hdr.last_group, &size, err);
	if (rec == NULL)
		return (-1);
	if (nsd_le32(rec) != fi->hdr.groups ||
	    fi->hdr.last_group * 8 + size != fi->hdr.ids_length)
		return (nsd_file_damaged(err, fi->path, "the header says %llu "
		    "groups in %llu bytes of %s, but its newest group record "
		    "is group %u, ending at byte %llu",
		    (unsigned long long)fi->hdr.groups,
		    (unsigned long long)fi->hdr.ids_length, fi->ids_path,
		    (unsigned)nsd_le32(rec),
		    (unsigned long long)(fi->hdr.last_group * 8 + size)));
	return (0);
}

/* Map PATH.ids and check that it belongs to this index. */
static int
open_ids(struct file_index *fi, struct nsd_error *err)
{
	struct stat	 sb;
	void		*p;

	fi->ids_fd = fi->readonly ? open(fi->ids_path, O_RDONLY |
	    NSD_OPEN_FLAGS) : open(fi->ids_path, O_RDWR | NSD_WRITE_FLAGS);
	if (fi->ids_fd == -1)
		return (nsd_index_open_error(err, fi->ids_path,
		    "cannot open the index's id file"));
	if (nsd_index_fstat(fi->ids_fd, fi->ids_path, &sb, err) == -1)
		return (-1);
	if ((uint64_t)sb.st_size < fi->hdr.ids_length)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: truncated (%llu bytes, the index has committed %llu) "
		    NSD_DAMAGE_HINT,
		    fi->ids_path, (unsigned long long)sb.st_size,
		    (unsigned long long)fi->hdr.ids_length));
	p = mmap(NULL, sb.st_size, PROT_READ |
	    (fi->readonly ? 0 : PROT_WRITE), MAP_SHARED, fi->ids_fd, 0);
	if (p == MAP_FAILED)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->ids_path,
		    "cannot map"));
	fi->ids = p;
	fi->ids_cap = sb.st_size;
	if (memcmp(fi->ids, NSD_IDS_MAGIC, 8) != 0 ||
	    nsd_le64(fi->ids + 8) != fi->hdr.file_id)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: not the id file of %s " NSD_DAMAGE_HINT, fi->ids_path,
		    fi->path));
	/*
	 * Only past the committed records, which are never written again:
	 * those the window forgot are a hole that must stay one.
	 */
	if (!fi->readonly && reserve(fi, fi->ids_fd,
	    (off_t)(fi->hdr.ids_length & ~(uint64_t)4095), sb.st_size,
	    "the id file", err) == -1)
		return (-1);
	fi->ids_len = fi->hdr.ids_length;
	fi->last_group = fi->hdr.last_group;
	return (fi->legacy ? 0 : check_last_group(fi, err));
}

/*
 * Clear the slots of tb that no committed run wrote, and (for PATH.next)
 * those homed past where the committed growth sweep went. A slot that is
 * damaged, or of a generation no run had, stops it before it clears
 * anything: what a header that lies about the last commit calls leftovers
 * would be committed entries.
 */
static int
clear_leftovers(const struct file_index *fi, struct table *tb, int grown,
    struct nsd_error *err)
{
	uint64_t	 i, key, meta, pos, from = fi->hdr.sweep_cursor -
	    fi->hdr.grow_done;
	enum slot_use	 use;
	int		 pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i <= tb->mask; i++) {
			use = slot_read(fi, tb, i, &key, &meta);
			if (pass == 0) {
				if (use == SLOT_BAD)
					return (nsd_table_bad_slot(fi, tb, i,
					    err));
				continue;
			}
			pos = nsd_index_position(&fi->hdr,
			    nsd_slot_table(meta), key);
			if ((use == SLOT_FREE && (key != 0 || meta != 0)) ||
			    (use == SLOT_ENTRY && grown &&
			    fi->hdr.grow_done != NSD_SWEPT_ALL &&
			    pos - from >= fi->hdr.grow_done))
				memset(&tb->slots[i], 0, sizeof tb->slots[i]);
		}
	return (0);
}

/*
 * After a run that did not commit: clear the slots it left in the table
 * and in PATH.next, make the stage anew without any of its entries, so
 * that its generation number can be taken again, and say the index is
 * clean.
 */
int
nsd_file_recover(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_index_header	 h;

	if (clear_leftovers(fi, &fi->main, 0, err) == -1 ||
	    nsd_file_sync_map(fi, fi->main.map, fi->main.map_len, fi->main.fd,
	    "the table", err) == -1)
		return (-1);
	if (fi->next.fd != -1) {
		if (clear_leftovers(fi, &fi->next, 1, err) == -1 ||
		    nsd_file_sync_map(fi, fi->next.map, fi->next.map_len,
		    fi->next.fd, "the growing table", err) == -1)
			return (-1);
	}
	if (fi->stage.fd != -1 && fi->stage_max_gen > fi->hdr.committed_gen &&
	    nsd_file_fold(fi, 0, err) == -1)
		return (-1);
	h = fi->hdr;
	h.pending_gen = h.committed_gen;
	return (nsd_file_write_header(fi, &h, err));
}

/* Map a table file open at fd, of size bytes, with nslots slots. */
static int
table_map(struct file_index *fi, struct table *tb, const char *what, int fd,
    const char *path, uint64_t size, uint64_t nslots, struct nsd_error *err)
{
	unsigned char	*map;

	if (!fi->readonly && reserve(fi, fd, 0, size, "a table", err) == -1)
		return (-1);
	map = mmap(NULL, size, PROT_READ | (fi->readonly ? 0 : PROT_WRITE),
	    MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, path,
		    "cannot map"));
	tb->fd = fd;
	nsd_table_view(tb, what, map, size, NSD_INDEX_TABLE_OFFSET, nslots);
	tb->legacy = fi->legacy;
	return (0);
}

/* Open the index file itself, creating it when allowed. */
static int
open_table(struct file_index *fi, const struct nsd_index_params *p,
    struct nsd_error *err)
{
	struct nsd_index_params	 had;
	struct stat		 sb;
	int			 fd;

	fd = open(fi->path, (fi->readonly ? O_RDONLY : O_RDWR) |
	    NSD_OPEN_FLAGS);
	if (fd == -1 && errno == ENOENT && fi->undo)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: no such index", fi->path));
	if (fd == -1 && errno == ENOENT && !fi->readonly) {
		if (create_index(fi, p, err) == -1)
			return (-1);
		fi->made_index = 1;
		fd = open(fi->path, O_RDWR | NSD_OPEN_FLAGS);
	}
	if (fd == -1) {
		if (errno == ENOENT)
			return (nsd_error_set(err, NSD_EXIT_INDEX,
			    "%s: no such index (--no-update does not make one)",
			    fi->path));
		if (errno == EISDIR)
			return (nsd_error_set(err, NSD_EXIT_INDEX,
			    "%s: is a directory, not an index", fi->path));
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->path,
		    "cannot open"));
	}
	fi->main.fd = fd;
	if (nsd_index_fstat(fd, fi->path, &sb, err) == -1)
		return (-1);
	if (nsd_index_read_header(fd, fi->path, &fi->hdr, &fi->copy, 1,
	    err) == -1)
		return (-1);
	if ((uint64_t)sb.st_size != nsd_index_file_size(fi->hdr.nslots))
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: %s (%llu bytes, the header says %llu) "
		    NSD_DAMAGE_HINT, fi->path,
		    (uint64_t)sb.st_size < nsd_index_file_size(fi->hdr.nslots) ?
		    "truncated" : "has bytes past its table",
		    (unsigned long long)sb.st_size,
		    (unsigned long long)nsd_index_file_size(fi->hdr.nslots)));
	if (check_params(fi, p, err) == -1)
		return (-1);
	/*
	 * An index of a version before checks is read as it is and, by a run
	 * that writes, upgraded first; what version 5 has no room for (a
	 * generation of 21 bits or more, a group past 32 GiB of records)
	 * cannot be either.
	 */
	fi->legacy = fi->hdr.version < NSD_INDEX_CHECKED;
	if (fi->legacy && (fi->hdr.pending_gen > NSD_INDEX_GEN_MAX ||
	    fi->hdr.ids_length / 8 > NSD_INDEX_GROUP_MAX))
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: an index of format version %u with %llu runs and "
		    "%llu bytes of group records, more than version %d holds "
		    "(%llu runs, %llu GiB); keep it with the nsdedup that made "
		    "it", fi->path, fi->hdr.version,
		    (unsigned long long)fi->hdr.pending_gen,
		    (unsigned long long)fi->hdr.ids_length,
		    NSD_INDEX_VERSION, (unsigned long long)NSD_INDEX_GEN_MAX,
		    (unsigned long long)((NSD_INDEX_GROUP_MAX + 1) >> 27)));
	/*
	 * An older normalization version is read, and the run fingerprints
	 * by it; another MinHash layout, and it fingerprints by that; its
	 * groups keep sketches, or none (made before them).
	 */
	params_of(&fi->hdr, &had);
	nsd_index_params_adopt(&fi->base.params, &had);
	assert(fi->base.params.sig_bytes == nsd_ids_sig_bytes(&fi->hdr));
	fi->main.fd = -1;
	if (table_map(fi, &fi->main, "the table", fd, fi->path, sb.st_size,
	    fi->hdr.nslots, err) == -1) {
		close(fd);
		return (-1);
	}
	fi->main.entries = fi->hdr.entries;
	return (0);
}

/*
 * Open PATH.stage, the one the header names. A writer that finds the next
 * build there (a fold renamed it, and was stopped before its header)
 * finishes the fold: what the stage's header says fixes what the index
 * header must say. A reader takes it as it is: it holds what the old one
 * held and what the log holds; and so does a writer of an older version,
 * which upgrade() then makes anew.
 */
static int
open_stage(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_stage_header	 sh;
	struct nsd_index_header	 h;
	int			 reader = fi->readonly || fi->legacy;

	if (fi->hdr.stage_seq == 0 && access(fi->stage_path, F_OK) == -1)
		return (0);
	if (nsd_file_stage_open(fi, &sh, err) == -1) {
		if (fi->hdr.stage_seq != 0)
			return (-1);
		/*
		 * With no stage named, one that is not this index's (of an
		 * index made anew at this path, or of the version before an
		 * upgrade) is of no use: a writer removes it.
		 */
		err->status = 0;
		if (!reader)
			(void)unlink(fi->stage_path);
		return (0);
	}
	if (sh.seq == fi->hdr.stage_seq)
		return (0);
	/*
	 * Any other build of this index than the next is damage, not a fold
	 * cut short: one that a header naming no stage ignored would be lost.
	 */
	if (!nsd_stage_is_next(&fi->hdr, &sh))
		return (nsd_file_damaged(err, fi->stage_path, "build %llu of "
		    "the stage, where the index names %llu",
		    (unsigned long long)sh.seq,
		    (unsigned long long)fi->hdr.stage_seq));
	if (reader)
		return (0);
	h = fi->hdr;
	h.stage_seq = sh.seq;
	h.sweep_done = 0;
	if (sh.reserved[0] != 0)	/* the log it took in */
		h.log_records = h.log_sum = 0;
	return (nsd_file_write_header(fi, &h, err));
}

/* What the header says of the growth, as the run keeps it. */
static void
growth_of_header(struct file_index *fi)
{
	fi->next.entries = fi->next_committed = fi->hdr.next_entries;
	fi->grow_done = fi->hdr.grow_done;
	fi->grow_from = fi->hdr.sweep_cursor - fi->hdr.grow_done;
}

/* Open PATH.next, while the index grows. */
static int
open_next(struct file_index *fi, struct nsd_error *err)
{
	struct stat	 sb;
	uint64_t	 nslots = 1ULL << fi->hdr.next_shift;
	int		 fd;

	fd = open(fi->next_path, (fi->readonly ? O_RDONLY : O_RDWR) |
	    (fi->readonly ? NSD_OPEN_FLAGS : NSD_WRITE_FLAGS));
	if (fd == -1)
		return (nsd_index_open_error(err, fi->next_path,
		    "cannot open the index's growing table"));
	if (nsd_index_fstat(fd, fi->next_path, &sb, err) == -1) {
		close(fd);
		return (-1);
	}
	if ((uint64_t)sb.st_size != nsd_index_file_size(nslots)) {
		close(fd);
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: truncated or too long (%llu bytes, not %llu) "
		    NSD_DAMAGE_HINT,
		    fi->next_path, (unsigned long long)sb.st_size,
		    (unsigned long long)nsd_index_file_size(nslots)));
	}
	if (table_map(fi, &fi->next, "the growing table", fd,
	    fi->next_path, sb.st_size, nslots,
	    err) == -1) {
		close(fd);
		return (-1);
	}
	growth_of_header(fi);
	return (0);
}

/*
 * After nsd_file_write_undone() made the header of an earlier state
 * current: take up that state (a growth it had not started is gone, with
 * PATH.next), and clear what the run it took back left, as after a run
 * that did not commit.
 */
int
nsd_file_undone(struct file_index *fi, struct nsd_error *err)
{
	fi->main.entries = fi->hdr.entries;
	fi->cursor = fi->hdr.sweep_cursor;
	if (fi->hdr.next_shift == 0 && fi->next.fd != -1) {
		nsd_table_close(&fi->next);
		(void)unlink(fi->next_path);
	}
	if (fi->next.fd != -1)
		growth_of_header(fi);
	if (fi->hdr.pending_gen > fi->hdr.committed_gen &&
	    nsd_file_recover(fi, err) == -1)
		return (-1);
	return (0);
}

/*
 * Open PATH.log; a writer makes it when there is none (an index of version
 * 1 has none), with the table's owner and mode, or gives it a header when
 * nothing in it counts yet.
 */
static int
open_log(struct file_index *fi, struct nsd_error *err)
{
	unsigned char	 head[NSD_LOG_HEADER_SIZE];
	struct stat	 sb, table;
	uint64_t	 need = NSD_LOG_HEADER_SIZE +
	    fi->hdr.log_records * NSD_LOG_RECORD_SIZE;

	if (fi->readonly && fi->hdr.log_records == 0)
		return (0);
	/* Made only while nothing in it counts: a lost log is an error. */
	if (!fi->readonly && fi->hdr.log_records == 0) {
		fi->log_fd = open(fi->log_path, O_RDWR | O_CREAT | O_EXCL |
		    NSD_WRITE_FLAGS, 0666);
		fi->made_log = fi->log_fd != -1;
	}
	if (fi->log_fd == -1)
		fi->log_fd = fi->readonly ? open(fi->log_path, O_RDONLY |
		    NSD_OPEN_FLAGS) : open(fi->log_path, O_RDWR |
		    NSD_WRITE_FLAGS);
	if (fi->log_fd == -1)
		return (nsd_index_open_error(err, fi->log_path,
		    "cannot open the index's log"));
	if (nsd_index_fstat(fi->log_fd, fi->log_path, &sb, err) == -1)
		return (-1);
	if (fi->hdr.log_records > 0 && (uint64_t)sb.st_size < need)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: truncated (%llu bytes, the index has committed %llu) "
		    NSD_DAMAGE_HINT,
		    fi->log_path, (unsigned long long)sb.st_size,
		    (unsigned long long)need));
	if (sb.st_size >= NSD_LOG_HEADER_SIZE &&
	    pread(fi->log_fd, head, sizeof head, 0) != (ssize_t)sizeof head)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->log_path,
		    "cannot read"));
	if (sb.st_size >= NSD_LOG_HEADER_SIZE &&
	    memcmp(head, NSD_LOG_MAGIC, 8) == 0 &&
	    nsd_le64(head + 8) == fi->hdr.file_id)
		return (0);
	if (fi->readonly || fi->hdr.log_records > 0)
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: not the log of %s " NSD_DAMAGE_HINT, fi->log_path,
		    fi->path));
	if (sb.st_size == 0 && fstat(fi->main.fd, &table) == 0 &&
	    fchown(fi->log_fd, table.st_uid, table.st_gid) == 0)
		(void)fchmod(fi->log_fd, table.st_mode & 0666);
	memcpy(head, NSD_LOG_MAGIC, 8);
	nsd_put_le64(head + 8, fi->hdr.file_id);
	if (pwrite(fi->log_fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    fdatasync(fi->log_fd) == -1 ||
	    nsd_file_sync_dir(fi->log_path) == -1)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->log_path,
		    "cannot write the index's log"));
	return (0);
}

/*
 * Load the log's committed records into the overlay, checking each, and
 * their sum against the header's: a header that counts fewer records than
 * were committed (or more) is refused, as is damage that the records' own
 * checks happen to miss. It comes before anything else a writer does to
 * the index: what the log holds tells a header that lies about the last
 * commit, which recover() would otherwise believe.
 */
static int
load_log(struct file_index *fi, struct nsd_error *err)
{
	const unsigned char	*rec;
	uint64_t		 i, n = fi->hdr.log_records, key, meta, sum = 0;
	size_t			 chunk, k;

	if (fi->overlay == NULL &&
	    nsd_index_open_memory(&fi->overlay, &fi->base.params, err) == -1)
		return (-1);
	for (i = 0; i < n; i += chunk) {
		chunk = n - i < LOG_BUFFER ? n - i : LOG_BUFFER;
		if (nsd_file_log_read(fi, i, chunk, fi->log_buf) == -1)
			return (nsd_error_errno(err, NSD_EXIT_INDEX,
			    fi->log_path, "cannot read"));
		for (k = 0; k < chunk; k++) {
			rec = fi->log_buf + k * NSD_LOG_RECORD_SIZE;
			if (nsd_file_log_record(fi, rec, i + k, &key, &meta,
			    err) == -1)
				return (-1);
			sum += nsd_log_record_sum(rec, i + k);
			if (!forgotten(fi, meta) && nsd_file_overlay_put(fi,
			    key, nsd_slot_group(meta), err) == -1)
				return (-1);
		}
	}
	if (!fi->legacy && sum != fi->hdr.log_sum)
		return (nsd_file_damaged(err, fi->log_path, "its %llu "
		    "committed records are not the ones the header sums up",
		    (unsigned long long)n));
	fi->log_records = fi->log_written = n;
	fi->log_sum = sum;
	return (0);
}

/*
 * What a writer does before its run, beyond recovery: fold a log half
 * full, so that the run starts with room for a day's news in it. (A growth
 * that went round is never committed before it takes the table's place;
 * older versions' were, and their upgrade takes them in.)
 */
static int
prepare(struct file_index *fi, struct nsd_error *err)
{
	if (fi->hdr.log_records * 2 >= nsd_index_log_limit(
	    nslots_of(&fi->main), fi->hdr.ntables) &&
	    nsd_file_fold(fi, 1, err) == -1)
		return (-1);
	return (0);
}

/*
 * Walk the committed group records of an index of an older version, as
 * --db-verify would (numbered 1, 2, 3, ..., ids clean, whole), and with
 * seal, write each one's checksum over the high half of its 8-byte
 * number, which is 0 there (a version 5 record's bytes 4 to 7); without,
 * put the 0 back. In place: this program reads only the low half of an
 * older version's number, but an older release reads all 8 bytes, so a
 * failed upgrade takes the checksums out again (unseal). *last gets the
 * newest record's group.
 */
static int
upgrade_ids(struct file_index *fi, int seal, uint64_t *last,
    struct nsd_error *err)
{
	uint64_t	 off, n = 0, size;
	uint64_t	 sig_bytes = nsd_ids_sig_bytes(&fi->hdr);
	unsigned char	*rec;
	uint32_t	 len, high;

	*last = 0;
	for (off = NSD_IDS_HEADER_SIZE; off < fi->ids_len; off += size) {
		rec = fi->ids + off;
		if (off + NSD_IDS_RECORD_HEAD > fi->ids_len)
			return (nsd_file_damaged(err, fi->ids_path, "a group "
			    "record is cut off at byte %llu",
			    (unsigned long long)off));
		len = nsd_le32(rec + 8);
		size = nsd_ids_record_bytes(len, sig_bytes);
		high = nsd_le32(rec + 4);
		if (nsd_le32(rec) != ++n || off + size > fi->ids_len ||
		    !nsd_ids_record_clean(rec, len) ||
		    (high != 0 && high != nsd_ids_record_sum(rec, off / 8,
		    sig_bytes)))
			return (nsd_file_damaged(err, fi->ids_path, "the "
			    "record at byte %llu is not group %llu's",
			    (unsigned long long)off, (unsigned long long)n));
		*last = off / 8;
	}
	if (n != fi->hdr.groups)
		return (nsd_file_damaged(err, fi->ids_path, "%llu group "
		    "records, where the header says %llu",
		    (unsigned long long)n, (unsigned long long)fi->hdr.groups));
	for (off = NSD_IDS_HEADER_SIZE; off < fi->ids_len; off += size) {
		rec = fi->ids + off;
		size = nsd_ids_record_bytes(nsd_le32(rec + 8), sig_bytes);
		nsd_put_le32(rec + 4, seal ? nsd_ids_record_sum(rec, off / 8,
		    sig_bytes) : 0);
	}
	return (nsd_file_sync_map(fi, fi->ids, fi->ids_cap, fi->ids_fd,
	    "the id file", err));
}

/* Take the checksums of a failed upgrade out of the group records again. */
static void
upgrade_unseal(struct file_index *fi)
{
	struct nsd_error	 ignored;
	uint64_t		 last;

	(void)upgrade_ids(fi, 0, &last, &ignored);
}

/* Put an entry of a table of an older version into the upgrade's table. */
static int
upgrade_put(struct file_index *fi, void *ctx, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	return (nsd_table_put(fi, ctx, key, meta, 1, err));
}

/*
 * Make an index of version 1 to 4 one of version 5, before a run writes to
 * it: the checksums go into its group records (upgrade_ids()), and its
 * committed entries, wherever they are (the table, PATH.next where the
 * committed growth has been, the stage, the log), into a new table of
 * checked slots, each once, with the generation it had. The new table is
 * built at PATH.new and renamed over PATH, like a rebuild, with both header
 * copies saying version 5, with no stage, no log and no growth: so the
 * index is whole before the rename, and whole after it, whatever happens
 * in between. The old stage and PATH.next are then removed (a writer that
 * finds them there removes them too: a version 5 index takes neither).
 */
static int
upgrade(struct file_index *fi, struct nsd_error *err)
{
	struct nsd_index_header	 h = fi->hdr;
	struct install		 in = { "the upgraded table", "upgrade-built",
	    "upgrade-renamed", 0 };
	struct table		 nt;
	uint64_t		 count, from;

	if (upgrade_ids(fi, 1, &h.last_group, err) == -1)
		return (-1);
	CRASH_POINT("upgrade-ids");
	count = fi->main.entries + fi->stage.entries + fi->next.entries +
	    fi->hdr.log_records * fi->hdr.ntables;
	h.nslots = nslots_of(&fi->main);
	if (fi->next.fd != -1)
		h.nslots = nslots_of(&fi->next);
	while (count * 8 > h.nslots * 5)
		h.nslots *= 2;
	if (nsd_table_new(fi, fi->new_path, "the upgraded table",
	    NSD_INDEX_TABLE_OFFSET, h.nslots, &nt, err) == -1) {
		upgrade_unseal(fi);
		return (-1);
	}
	/* PATH.next counts where the committed growth has been. */
	from = fi->hdr.sweep_cursor - fi->hdr.grow_done;
	if (nsd_table_stretch_each(fi, &fi->main, 0, NSD_SWEPT_ALL, upgrade_put,
	    &nt, err) == -1 || (fi->next.fd != -1 && nsd_table_stretch_each(fi,
	    &fi->next, from, fi->hdr.grow_done, upgrade_put, &nt, err) == -1) ||
	    (fi->stage.fd != -1 && nsd_table_stretch_each(fi, &fi->stage, 0,
	    NSD_SWEPT_ALL, upgrade_put, &nt, err) == -1))
		goto fail;
	if (nsd_file_log_insert(fi, &nt, 0, fi->hdr.log_records, 1, err) == -1)
		goto fail;
	h.pending_gen = h.committed_gen;
	h.entries = nt.entries;
	h.log_records = h.log_sum = 0;
	h.stage_seq = h.sweep_cursor = h.sweep_done = 0;
	h.next_shift = 0;
	h.grow_done = h.next_entries = 0;
	if (nsd_table_replace(fi, &in, &nt, fi->new_path, &h, err) == -1) {
		if (!in.done)
			goto fail;
		return (-1);
	}
	nsd_table_close(&fi->stage);
	nsd_table_close(&fi->next);
	(void)unlink(fi->stage_path);
	(void)unlink(fi->next_path);
	fi->legacy = 0;
	fi->stage_max_gen = 0;
	fi->grow_done = fi->grow_from = fi->next_committed = 0;
	fi->last_group = h.last_group;
	return (nsd_file_log_restart(fi, err));
fail:
	nsd_table_close(&nt);
	(void)unlink(fi->new_path);
	upgrade_unseal(fi);
	return (-1);
}

/*
 * A refusal leaves nothing that opening made: the log it made (which
 * nothing in the index counts yet), the whole index when it made it, and
 * the lock file it made, last, while it still holds the lock.
 */
static void
unmake(struct file_index *fi)
{
	assert(!fi->readonly || (!fi->made_index && !fi->made_log));
	if (fi->made_log)
		(void)unlink(fi->log_path);
	if (fi->made_index) {
		(void)unlink(fi->ids_path);
		(void)unlink(fi->path);
	}
	if (fi->made_index || fi->made_log)
		(void)nsd_file_sync_dir(fi->path);
	if (fi->made_lock) {
		nsd_index_lock_drop(fi->path, fi->lock_fd);
		fi->lock_fd = -1;
	}
}

int
nsd_index_open_file(struct nsd_index **ixp, const struct nsd_index_open *o,
    const struct nsd_index_params *p, struct nsd_error *err)
{
	struct file_index	*fi;

	fi = xcalloc(1, sizeof *fi);
	fi->base.ops = &nsd_file_index_ops;
	fi->base.params = *p;
	fi->path = nsd_index_resolve(o->path);
	fi->ids_path = nsd_index_path(fi->path, ".ids");
	fi->new_path = nsd_index_path(fi->path, ".new");
	fi->log_path = nsd_index_path(fi->path, ".log");
	fi->stage_path = nsd_index_path(fi->path, ".stage");
	fi->stage_new_path = nsd_index_path(fi->path, ".stage.new");
	fi->next_path = nsd_index_path(fi->path, ".next");
	fi->filter_path = nsd_index_path(fi->path, ".filter");
	fi->filter_new_path = nsd_index_path(fi->path, ".filter.new");
	fi->undo_path = nsd_index_path(fi->path, ".undo");
	fi->times_path = nsd_index_path(fi->path, ".times");
	fi->times.fd = -1;
	fi->main.fd = fi->stage.fd = fi->next.fd = -1;
	fi->ids_fd = fi->log_fd = fi->lock_fd = -1;
	fi->readonly = o->readonly;
	fi->undo = o->undo;
	fi->repeats = p->repeats;
	fi->epoch = 1;
	if (nsd_index_lock(fi->path, o->readonly, o->wait_ms, &fi->lock_fd,
	    &fi->made_lock, err) == -1 || open_table(fi, p, err) == -1 ||
	    open_ids(fi, err) == -1 || open_log(fi, err) == -1)
		goto fail;
	if (nsd_file_window_open(fi, o->ttl, err) == -1)
		goto fail;
	if (!fi->readonly) {
		/* What a rebuild, fold or growth cut short left. */
		(void)unlink(fi->new_path);
		(void)unlink(fi->stage_new_path);
		(void)unlink(fi->filter_new_path);
		nsd_file_window_clear(fi);
		if (fi->hdr.next_shift == 0)
			(void)unlink(fi->next_path);
		fi->base.scratch = fi->new_path;
	}
	if (open_stage(fi, err) == -1 ||
	    (fi->hdr.next_shift != 0 && open_next(fi, err) == -1) ||
	    load_log(fi, err) == -1 || nsd_file_filter_load(fi, err) == -1)
		goto fail;
	if (!fi->readonly) {
		/* Before version 5, nothing was kept to take back. */
		if (fi->legacy && fi->undo) {
			nsd_error_set(err, NSD_EXIT_INDEX, "%s: cannot undo "
			    "the last run: the index is of format version %u, "
			    "which keeps nothing for --db-undo", fi->path,
			    fi->hdr.version);
			goto fail;
		}
		if (fi->legacy && upgrade(fi, err) == -1)
			goto fail;
		if (fi->hdr.pending_gen > fi->hdr.committed_gen &&
		    nsd_file_recover(fi, err) == -1)
			goto fail;
		/*
		 * A run killed between a rename and the sync of the directory
		 * left a table, a stage or a log that must last before this
		 * run writes over what they replaced.
		 */
		if (nsd_file_sync_dir(fi->path) == -1) {
			nsd_error_errno(err, NSD_EXIT_INDEX, fi->path,
			    "cannot sync the index's directory");
			goto fail;
		}
		/* An undo changes nothing it need not change. */
		if (!fi->undo && prepare(fi, err) == -1)
			goto fail;
	}
	/*
	 * Lookups go at random over the table and the stage: see warm.c.
	 * With the key filter, and keys claimed once (nshash's, MinHash's),
	 * only the few keys it holds, or seems to, reach them, and the sweeps
	 * read them a stretch at a time, each stretch asked for ahead
	 * (nsd_table_stretch_each()): so no reading of them whole, and no
	 * read-ahead around a page a lookup touches, which on a disk whose
	 * read-ahead is megabytes brought a table's worth in for a few
	 * hundred lookups. SimHash's block keys are shared by many entries,
	 * and most lookups find theirs: its table is read in order still
	 * (in bench/RESULTS.md, a cold day against 10^7 SimHashes took 12%
	 * of an empty index's speed read at random, 26% read in order).
	 */
	if (fi->filter != NULL && !fi->repeats) {
		(void)madvise(fi->main.map, fi->main.map_len, MADV_RANDOM);
		if (fi->stage.fd != -1)
			(void)madvise(fi->stage.map, fi->stage.map_len,
			    MADV_RANDOM);
	} else {
		fi->main.warm = nsd_warm_start(fi->main.map,
		    fi->main.map_len);
		if (fi->stage.fd != -1)
			fi->stage.warm = nsd_warm_start(fi->stage.map,
			    fi->stage.map_len);
	}
	fi->cursor = fi->hdr.sweep_cursor;
	*ixp = &fi->base;
	return (0);
fail:
	unmake(fi);
	nsd_index_close(&fi->base);
	return (-1);
}
