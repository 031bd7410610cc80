/*
 * index_fold.c: the files of the persistent index that runs make anew or
 * append to: new tables and their renames into place, the log, the fold
 * of the log into a new stage, and the rebuild of a bulk load. The design
 * is in index_file.c.
 *
 * Folding. When the log holds its limit (nsd_index_log_limit(): half the
 * table's slots, at least 4096 and at most NSD_LOG_MAX_ENTRIES, 2^20, which
 * bounds what a run keeps in memory), it is folded into a new stage: the
 * old stage's entries that the sweep has not yet moved into the table,
 * then the log's committed entries, then the run's own, go into a table
 * sized for them, written to PATH.stage.new, synced and renamed over
 * PATH.stage, and the log starts empty. A writer folds before its run
 * when the log is half full, and a run folds again whenever its log fills.
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

/* Make the mapped bytes of fd durable. */
int
nsd_file_sync_map(struct file_index *fi, void *map, size_t len, int fd,
    const char *what, struct nsd_error *err)
{
	char	 msg[64];

	snprintf(msg, sizeof msg, "msync of %s", what);
	if (msync(map, len, MS_SYNC) == -1)
		return (nsd_file_commit_error(fi, msg, err));
	snprintf(msg, sizeof msg, "fdatasync of %s", what);
	if (fdatasync(fd) == -1)
		return (nsd_file_commit_error(fi, msg, err));
	return (0);
}

/* Open path's directory and fsync it, so that a rename in it lasts. */
int
nsd_file_sync_dir(const char *path)
{
	char	*dir = xstrdup(path), *slash = strrchr(dir, '/');
	int	 fd, rc;

	if (slash == dir)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	else
		strcpy(dir, ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd == -1)
		return (-1);
	rc = fsync(fd);
	close(fd);
	return (rc);
}

/*
 * Make a new file of size bytes at path with the given mode (exactly, or
 * less the umask). On failure, errno and *what say why.
 */
static int
create_reserved(const char *path, uint64_t size, mode_t mode, int exact,
    int *fdp, const char **what)
{
	int	 fd, e;

	(void)unlink(path);
	*what = "cannot create";
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, mode)) == -1)
		return (-1);
	if (exact)
		(void)fchmod(fd, mode);
	/*
	 * Blocks are reserved now, so that a full disk is an error here and
	 * never a SIGBUS when a page of the mapping is first written.
	 */
	*what = "cannot make room for the table";
	if ((e = posix_fallocate(fd, 0, size)) != 0) {
		close(fd);
		(void)unlink(path);
		errno = e;
		return (-1);
	}
	*fdp = fd;
	return (0);
}

/* Map a file made by create_reserved(); on failure, remove it. */
static int
map_new(const char *path, uint64_t size, int fd, unsigned char **mapp,
    const char **what)
{
	int	 e;

	*what = "cannot map the new table";
	*mapp = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*mapp != MAP_FAILED)
		return (0);
	e = errno;
	close(fd);
	(void)unlink(path);
	errno = e;
	return (-1);
}

int
nsd_file_create_mapped(const char *path, uint64_t size, mode_t mode, int exact,
    int *fdp, unsigned char **mapp, const char **what)
{
	if (create_reserved(path, size, mode, exact, fdp, what) == -1)
		return (-1);
	return (map_new(path, size, *fdp, mapp, what));
}

/* Write the log records gathered in log_buf to PATH.log. */
int
nsd_file_log_flush(struct file_index *fi, struct nsd_error *err)
{
	if (nsd_pwrite_all(fi->log_fd, fi->log_buf, (fi->log_records -
	    fi->log_written) * NSD_LOG_RECORD_SIZE, NSD_LOG_HEADER_SIZE +
	    (off_t)fi->log_written * NSD_LOG_RECORD_SIZE) == -1)
		return (nsd_file_commit_error(fi, "writing the log", err));
	fi->log_written = fi->log_records;
	return (0);
}

/* Read n records of PATH.log from the first into buf. */
int
nsd_file_log_read(struct file_index *fi, uint64_t first, size_t n,
    unsigned char *buf)
{
	return (nsd_pread_exact(fi->log_fd, buf, n * NSD_LOG_RECORD_SIZE,
	    NSD_LOG_HEADER_SIZE + (off_t)first * NSD_LOG_RECORD_SIZE));
}

/* Sync the mapped table tb, when this run wrote into it in place. */
int
nsd_table_sync(struct file_index *fi, struct table *tb, const char *what,
    struct nsd_error *err)
{
	if (!tb->written)
		return (0);
	if (nsd_file_sync_map(fi, tb->map, tb->map_len, tb->fd, what,
	    err) == -1)
		return (-1);
	tb->written = 0;
	return (0);
}

/*
 * Read record i of the log, at rec, checked as a run reads every committed
 * record: 0, or -1 with err set when it is damaged or is not a committed
 * entry of table 0 of a group of the index.
 */
int
nsd_file_log_record(const struct file_index *fi, const unsigned char *rec,
    uint64_t i, uint64_t *key, uint64_t *meta, struct nsd_error *err)
{
	uint64_t	 gen, off;

	if (nsd_slot_get(rec, fi->legacy, key, meta) == NSD_SLOT_DAMAGED)
		return (nsd_file_damaged(err, fi->log_path, "record %llu "
		    "fails its check", (unsigned long long)i));
	gen = nsd_slot_gen(*meta);
	off = nsd_slot_group(*meta) * 8;
	if (nsd_slot_table(*meta) != 0 || gen == 0 ||
	    (gen > fi->hdr.committed_gen && gen != fi->gen) ||
	    off < NSD_IDS_HEADER_SIZE ||
	    off + NSD_IDS_RECORD_HEAD > fi->ids_len)
		return (nsd_file_damaged(err, fi->log_path, "record %llu is "
		    "not a committed fingerprint", (unsigned long long)i));
	return (0);
}

/*
 * Insert the log's records [first, first + n) into tb, as entries of every
 * table, with the generations they carry (with once, only where tb does
 * not hold them already: see nsd_table_put()).
 */
int
nsd_file_log_insert(struct file_index *fi, struct table *tb, uint64_t first,
    uint64_t n, int once, struct nsd_error *err)
{
	uint64_t	 i, key, meta;
	size_t		 chunk, k;
	unsigned	 t;

	if (nsd_file_log_flush(fi, err) == -1)
		return (-1);
	for (i = 0; i < n; i += chunk) {
		chunk = n - i < LOG_BUFFER ? n - i : LOG_BUFFER;
		if (nsd_file_log_read(fi, first + i, chunk, fi->log_buf) == -1)
			return (nsd_file_commit_error(fi, "reading the log",
			    err));
		for (k = 0; k < chunk; k++) {
			if (nsd_file_log_record(fi, fi->log_buf + k *
			    NSD_LOG_RECORD_SIZE, first + i + k, &key, &meta,
			    err) == -1)
				return (-1);
			if (forgotten(fi, meta))
				continue;
			for (t = 0; t < fi->hdr.ntables; t++)
				if (nsd_table_put(fi, tb, key, meta |
				    (uint64_t)t << NSD_INDEX_TABLE_SHIFT, once,
				    err) == -1)
					return (-1);
		}
	}
	return (0);
}

/*
 * Make the table file path, of nslots slots from offset on, mapped into
 * *tb (called what in messages), for a growth, a fold, a rebuild or an
 * upgrade. Others who share the index must still open it: it gets the
 * owner and group of the table where allowed (which clears set-id bits,
 * so the mode again).
 */
int
nsd_table_new(struct file_index *fi, const char *path, const char *what,
    size_t offset, uint64_t nslots, struct table *tb, struct nsd_error *err)
{
	struct stat	 sb;
	const char	*why;
	unsigned char	*map;
	uint64_t	 size = offset + nslots * NSD_INDEX_SLOT_SIZE;
	int		 fd;

	if (nslots > (1ULL << 40)) {
		errno = EFBIG;
		return (nsd_file_commit_error(fi, "making a table", err));
	}
	if (fstat(fi->main.fd, &sb) == -1)
		return (nsd_file_commit_error(fi, "fstat", err));
	if (nsd_file_create_mapped(path, size, sb.st_mode & 07777, 1, &fd, &map,
	    &why) == -1)
		return (nsd_file_commit_error(fi, why, err));
	if (fchown(fd, sb.st_uid, sb.st_gid) == 0)
		(void)fchmod(fd, sb.st_mode & 07777);
	memset(tb, 0, sizeof *tb);
	tb->fd = fd;
	nsd_table_view(tb, what, map, size, offset, nslots);
	return (0);
}

/*
 * Put a new file in place: sync its mapping, rename it from path new over
 * path old, and sync the directory so that the rename lasts. On failure,
 * in->done says whether the rename happened.
 */
static int
install(struct file_index *fi, struct install *in, unsigned char *map,
    size_t size, int fd, const char *new, const char *old,
    struct nsd_error *err)
{
	char	 msg[96];

	in->done = 0;
	/* The filter first: see index_filter_file.c. */
	if (nsd_file_filter_sync(fi, err) == -1 ||
	    nsd_file_sync_map(fi, map, size, fd, in->what, err) == -1)
		return (-1);
	CRASH_POINT(in->built);
	if (rename(new, old) == -1) {
		snprintf(msg, sizeof msg, "renaming %s into place", in->what);
		return (nsd_file_commit_error(fi, msg, err));
	}
	in->done = 1;
	CRASH_POINT(in->renamed);
	if (nsd_file_sync_dir(old) == -1)
		return (nsd_file_commit_error(fi, "syncing the index's "
		    "directory", err));
	return (0);
}

/*
 * Put the table nt, made whole at path from, in the table's place under
 * header h, written into both of its copies (so that it says what h says
 * whichever copy is read): install() it, then use it. On failure,
 * in->done says whether the rename happened; nt is closed when it did,
 * and left to the caller, who removes it, when it did not.
 */
int
nsd_table_replace(struct file_index *fi, struct install *in, struct table *nt,
    const char *from, struct nsd_index_header *h, struct nsd_error *err)
{
	unsigned char	 copy[NSD_INDEX_TABLE_OFFSET];

	if (nsd_file_undo_replaced(fi, err) == -1)
		return (-1);
	h->sequence = fi->hdr.sequence + 1;
	nsd_index_header_encode(h, copy);
	memcpy(copy + NSD_INDEX_COPY_SIZE, copy, NSD_INDEX_COPY_SIZE);
	memcpy(nt->map, copy, sizeof copy);
	if (install(fi, in, nt->map, nt->map_len, nt->fd, from, fi->path,
	    err) == -1) {
		if (in->done)
			nsd_table_close(nt);
		return (-1);
	}
	nsd_table_close(&fi->main);
	fi->main = *nt;
	fi->main.what = "the table";
	fi->main.written = 0;
	fi->hdr = *h;
	fi->copy = 0;
	fi->epoch++;
	/*
	 * A table of another size gets a filter of its size, and one without
	 * the entries the window forgot, a filter without their keys.
	 */
	if (!fi->filter_off && (fi->filter == NULL || fi->filter->nblocks !=
	    nsd_filter_blocks(nslots_of(&fi->main)) || fi->forget_below != 0))
		return (nsd_file_filter_build(fi, err));
	return (0);
}

/*
 * The sixteenths of the hash space a fold counts the stage's entries in.
 * They are not spread evenly: the sweep moves those it passes into the
 * table, so the stretch just behind its cursor holds only the log's
 * latest, and the one just ahead the entries of every fold since the
 * sweep was last there, up to about twice the average when the sweep goes
 * round in a few folds. Linear probing in a stretch fuller than 3/4 makes
 * runs of taken slots that every insert there walks: a stage sized for
 * its average held a run of 575,185 slots and took 19 s to make
 * (bench/RESULTS.md, "A simulated year"). So the new stage is sized for
 * its fullest sixteenth.
 */
#define FOLD_SECTIONS	16

/* A fold under way: the stage being made, and what goes into it. */
struct fold {
	uint64_t	 section[FOLD_SECTIONS];	/* entries kept */
	struct table	 stage;
	uint64_t	 from;		/* the stretch swept and committed */
	uint64_t	 len;
	int		 own;		/* the pass: 0 committed, 1 the run's */
	uint64_t	 max_gen;
};

/*
 * Whether the entry key, meta of the stage, which the committed sweep has
 * passed, is in the table (or PATH.next) where a lookup reads it: a fold
 * leaves such entries out, and one that is not there would be lost. So a
 * header that says the sweep went further than it did, which its checksum
 * cannot tell, stops the run instead. The stage is walked in the order of
 * the hash space, and so are these lookups.
 */
static int
fold_swept(struct file_index *fi, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	struct table	*tb = nsd_file_table_for(fi, nsd_slot_table(meta), key);

	return (nsd_table_holds(fi, tb, key, meta, err));
}

/*
 * Keep an entry of the old stage in the new one: one of the pass's kind
 * that the committed sweep has not moved into the table.
 */
static int
fold_keep(struct file_index *fi, void *ctx, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	struct fold	*f = ctx;
	uint64_t	 pos, gen = nsd_slot_gen(meta);

	if ((gen == fi->gen) != f->own || forgotten(fi, meta))
		return (0);
	pos = nsd_index_position(&fi->hdr, nsd_slot_table(meta), key);
	if (f->len == NSD_SWEPT_ALL || pos - f->from < f->len)
		return (f->own ? 0 : fold_swept(fi, key, meta, err));
	if (nsd_table_insert(fi, &f->stage, key, meta, err) == -1)
		return (-1);
	if (gen > f->max_gen)
		f->max_gen = gen;
	return (0);
}

/* Count an entry of the old stage that the new one keeps. */
static int
fold_count(struct file_index *fi, void *ctx, uint64_t key, uint64_t meta,
    struct nsd_error *err)
{
	struct fold	*f = ctx;
	uint64_t	 pos;

	(void)err;
	pos = nsd_index_position(&fi->hdr, nsd_slot_table(meta), key);
	if (!forgotten(fi, meta) &&
	    f->len != NSD_SWEPT_ALL && pos - f->from >= f->len) {
		f->stage.entries++;
		f->section[pos / (NSD_SWEPT_ALL / FOLD_SECTIONS + 1)]++;
	}
	return (0);
}

/* Open and map PATH.stage, checking that it is this index's. */
int
nsd_file_stage_open(struct file_index *fi, struct nsd_stage_header *sh,
    struct nsd_error *err)
{
	unsigned char	 page[NSD_STAGE_OFFSET];
	struct stat	 sb;
	unsigned char	*map;
	int		 fd;

	fd = open(fi->stage_path, (fi->readonly ? O_RDONLY : O_RDWR) |
	    (fi->readonly ? NSD_OPEN_FLAGS : NSD_WRITE_FLAGS));
	if (fd == -1)
		return (nsd_index_open_error(err, fi->stage_path,
		    "cannot open the index's stage"));
	if (nsd_index_fstat(fd, fi->stage_path, &sb, err) == -1 ||
	    nsd_pread_exact(fd, page, sizeof page, 0) == -1 ||
	    nsd_stage_header_decode(page, fi->hdr.file_id, fi->hdr.version,
	    sh) == -1 ||
	    (uint64_t)sb.st_size != NSD_STAGE_OFFSET +
	    sh->nslots * NSD_INDEX_SLOT_SIZE) {
		close(fd);
		if (err->status != 0)
			return (-1);
		return (nsd_error_set(err, NSD_EXIT_INDEX,
		    "%s: not the stage of %s, or damaged " NSD_DAMAGE_HINT,
		    fi->stage_path,
		    fi->path));
	}
	map = mmap(NULL, sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->stage_path,
		    "cannot map"));
	}
	nsd_table_close(&fi->stage);
	fi->stage.fd = fd;
	nsd_table_view(&fi->stage, "the stage", map, sb.st_size,
	    NSD_STAGE_OFFSET, sh->nslots);
	fi->stage.legacy = fi->legacy;
	fi->stage.entries = sh->entries;
	fi->stage_max_gen = sh->max_gen;
	return (0);
}

/* Start the log again empty, with an overlay to match, once it is moved. */
int
nsd_file_log_restart(struct file_index *fi, struct nsd_error *err)
{
	fi->log_records = fi->log_written = 0;
	fi->log_sum = 0;
	nsd_index_close(fi->overlay);
	fi->overlay = NULL;
	return (nsd_index_open_memory(&fi->overlay, &fi->base.params, err));
}

/*
 * Fold: make a new stage of the old one's entries that the committed sweep
 * has not moved into the table (but those left by runs that did not
 * commit), and, with log, the log's records; committed entries before
 * the run's. It is written to PATH.stage.new, synced and renamed over
 * PATH.stage, and the header then names it; with log, the log starts
 * empty.
 */
int
nsd_file_fold(struct file_index *fi, int log, struct nsd_error *err)
{
	struct nsd_stage_header	 sh;
	struct nsd_index_header	 h;
	struct install		 in = { "the new stage", "fold-built",
	    "fold-renamed", 0 };
	struct fold		 f;
	unsigned char		 page[NSD_STAGE_OFFSET];
	uint64_t		 count, nslots, logged, fullest;
	unsigned		 s;

	memset(&f, 0, sizeof f);
	f.from = fi->hdr.sweep_cursor - fi->hdr.sweep_done;
	f.len = fi->hdr.sweep_done;
	if (fi->stage.fd != -1 && nsd_table_stretch_each(fi, &fi->stage, 0,
	    NSD_SWEPT_ALL, fold_count, &f, err) == -1)
		return (-1);
	/* The log's entries are spread evenly: their keys are hashes. */
	logged = log ? fi->log_records * fi->hdr.ntables : 0;
	count = f.stage.entries + logged;
	for (s = 0; s < FOLD_SECTIONS; s++) {
		fullest = (f.section[s] + logged / FOLD_SECTIONS) *
		    FOLD_SECTIONS;
		if (fullest > count)
			count = fullest;
	}
	for (nslots = NSD_INDEX_MIN_SLOTS; nslots / 4 * 3 < count;)
		nslots *= 2;
	if (nsd_table_new(fi, fi->stage_new_path, "the new stage",
	    NSD_STAGE_OFFSET, nslots, &f.stage, err) == -1)
		return (-1);
	for (f.own = 0; f.own <= 1; f.own++) {
		if (fi->stage.fd != -1 && nsd_table_stretch_each(fi, &fi->stage,
		    0, NSD_SWEPT_ALL, fold_keep, &f, err) == -1)
			goto fail;
		if (log && (f.own ? nsd_file_log_insert(fi, &f.stage,
		    fi->hdr.log_records, fi->log_records - fi->hdr.log_records,
		    0, err) : nsd_file_log_insert(fi, &f.stage, 0,
		    fi->hdr.log_records, 0, err)) == -1)
			goto fail;
	}
	if (log && fi->log_records > fi->hdr.log_records)
		f.max_gen = fi->gen;
	if (log && fi->hdr.log_records > 0 && f.max_gen < fi->hdr.committed_gen)
		f.max_gen = fi->hdr.committed_gen;
	memset(&sh, 0, sizeof sh);
	sh.file_id = fi->hdr.file_id;
	sh.seq = fi->hdr.stage_seq + 1;
	sh.nslots = nslots;
	sh.entries = f.stage.entries;
	sh.fold_cursor = fi->hdr.sweep_cursor;
	sh.max_gen = f.max_gen;
	sh.reserved[0] = log;		/* it takes the log in */
	nsd_stage_header_encode(&sh, page);
	memcpy(f.stage.map, page, sizeof page);
	if (install(fi, &in, f.stage.map, f.stage.map_len, f.stage.fd,
	    fi->stage_new_path, fi->stage_path, err) == -1) {
		if (in.done)
			goto fail_renamed;
		goto fail;
	}
	h = fi->hdr;
	h.stage_seq = sh.seq;
	h.sweep_done = 0;
	if (log)
		h.log_records = h.log_sum = 0;
	if (nsd_file_write_header(fi, &h, err) == -1)
		goto fail_renamed;
	nsd_table_close(&fi->stage);
	fi->stage = f.stage;
	fi->stage.what = "the stage";
	fi->stage.written = 0;
	fi->stage_max_gen = f.max_gen;
	/*
	 * What this run swept before the fold is in the new stage still
	 * (the fold dropped only what committed sweeps moved), with the log's
	 * entries that no sweep has seen: the sweep counts afresh.
	 */
	fi->swept = 0;
	fi->epoch++;
	return (log ? nsd_file_log_restart(fi, err) : 0);
fail_renamed:
	/* The stage in place is the new one, and the run fails. */
	nsd_table_close(&f.stage);
	return (-1);
fail:
	nsd_table_close(&f.stage);
	(void)unlink(fi->stage_new_path);
	return (-1);
}

/*
 * Rebuild the table 2^steps times larger, for a bulk load that filled it:
 * every entry of the table and the log is inserted again, committed ones
 * first, into PATH.new, which is synced and renamed over PATH; the log then
 * starts empty. The new header says what the current one does, with the
 * committed log records counted as the table's. (The stage stays.)
 */
int
nsd_file_rebuild(struct file_index *fi, unsigned steps, struct nsd_error *err)
{
	struct nsd_index_header	 h = fi->hdr;
	struct install		 in = { "the rebuilt table", "rebuild-built",
	    "rebuild-renamed", 0 };
	struct table		 nt;
	uint64_t		 i, key, meta, committed;
	int			 own;

	assert(fi->next.fd == -1);
	if (nsd_file_log_flush(fi, err) == -1)
		return (-1);
	h.nslots = nslots_of(&fi->main) << steps;
	if (nsd_table_new(fi, fi->new_path, "the rebuilt table",
	    NSD_INDEX_TABLE_OFFSET, h.nslots, &nt, err) == -1)
		return (-1);
	for (own = 0; own <= 1; own++) {
		for (i = 0; i <= fi->main.mask; i++) {
			switch (slot_read(fi, &fi->main, i, &key, &meta)) {
			case SLOT_FREE:
				continue;
			case SLOT_BAD:
				nsd_table_bad_slot(fi, &fi->main, i, err);
				goto fail;
			case SLOT_ENTRY:
				break;
			}
			if ((nsd_slot_gen(meta) == fi->gen) == own &&
			    !forgotten(fi, meta) &&
			    nsd_table_insert(fi, &nt, key, meta, err) == -1)
				goto fail;
		}
		if ((own ? nsd_file_log_insert(fi, &nt, fi->hdr.log_records,
		    fi->log_records - fi->hdr.log_records, 0, err) :
		    nsd_file_log_insert(fi, &nt, 0, fi->hdr.log_records, 0,
		    err)) == -1)
			goto fail;
		if (!own)
			committed = nt.entries;
	}
	/*
	 * The committed state, and the run pending; the log is written over
	 * from here on, so the rename must last.
	 */
	h.entries = committed;
	h.log_records = h.log_sum = 0;
	if (nsd_table_replace(fi, &in, &nt, fi->new_path, &h, err) == -1) {
		if (!in.done)
			goto fail;
		return (-1);
	}
	return (nsd_file_log_restart(fi, err));
fail:
	nsd_table_close(&nt);
	(void)unlink(fi->new_path);
	return (-1);
}
