/*
 * index_window.c: the window of the persistent index (--ttl), which
 * forgets each group a fixed time after the commit that opened it.
 *
 * Which groups are forgotten. Groups are records appended to PATH.ids, so
 * the groups opened by the commits made before a time are those whose
 * records start below the length PATH.ids had after the last of those
 * commits; PATH.times keeps that length and the time of every commit
 * (index_times.c). At open, a run takes the commits made a window or more
 * before its clock (nsd_index_now()) and their length is its horizon:
 * every entry whose group lies below it is forgotten. Forgotten entries
 * never match (find(), near_in(), the log read into the overlay), so a
 * record that shares a forgotten fingerprint opens a group of its own, or
 * joins a newer one.
 *
 * How their room comes back. A forgotten entry keeps its slot while its
 * table file is in use: linear probing needs every slot between an
 * entry's home and its place taken, and nothing in a table in use is ever
 * written over (index_file.c). Every copy of entries into a new file
 * leaves the forgotten ones out: a fold's new stage, the sweep's moves,
 * a bulk load's rebuild, the key filter made anew, and the growth, which
 * with a window becomes a renewal: when the index would grow and the
 * entries it still remembers would fill no more than 3/8 of the table,
 * the growth sweep copies the table into PATH.next of the same size
 * instead of twice it, without the forgotten entries (nsd_file_window_live()
 * estimates them from PATH.times's counts of entries added). So the table
 * of a steady feed stops growing at the size its window needs.
 *
 * The group records below the horizon are never read again. The commit
 * says so in the header (ids_start, the offset of the first record kept)
 * and then gives their bytes back to the file system, punching a hole in
 * PATH.ids (fallocate(2), where the file system can); the newest group's
 * record stays, since a run numbers the next group from it. Forgetting is
 * never taken back: ids_start only grows, and an undo keeps the later one.
 *
 * The window counts from the commit that opened a group, not from the
 * last record that joined it: a story still copied a window after it
 * began is seen anew (a missed copy, never a wrong match).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index_file.h"

/*
 * At open: the window (the run's --ttl, else the index's) and the horizon
 * it draws at the run's clock, from PATH.times. A writer that forgets
 * more than the header says writes a header that says so, before it can
 * leave anything out of a file: 0, or -1 when that header cannot be
 * written.
 */
int
nsd_file_window_open(struct file_index *fi, uint64_t ttl,
    struct nsd_error *err)
{
	struct nsd_index_header	 h;
	struct nsd_horizon	 hz;

	fi->now = nsd_index_now();
	fi->ttl = ttl > 0 ? ttl : fi->hdr.ttl;
	nsd_times_open(&fi->times, fi->times_path, fi->hdr.file_id,
	    fi->hdr.committed_gen, !fi->readonly);
	/*
	 * An undo forgets no more than its header says: what it writes anew
	 * (the recovery's fold, the filter) must hold what that header's
	 * state holds.
	 */
	nsd_times_horizon(&fi->times, fi->undo ? 0 : fi->ttl, fi->now,
	    fi->hdr.ids_start, &hz);
	fi->added_before = hz.added_last;
	fi->added_forgotten = hz.added_forgotten;
	fi->horizon_known = hz.known;
	fi->forget_below = hz.ids / 8;
	/*
	 * A writer says so in the header at once, before it leaves out of a
	 * file what the horizon forgets (a fold that recovery or the start of
	 * the run finishes, a filter made anew, a renewal, a rebuild): what is
	 * missing then, no later run looks for, whatever its window. Every
	 * header it writes from then on keeps it.
	 */
	if (fi->readonly || fi->undo || hz.ids <= fi->hdr.ids_start)
		return (0);
	h = fi->hdr;
	h.ids_start = hz.ids;
	return (nsd_file_write_header(fi, &h, err));
}

/*
 * The entries the index still remembers, about: those added since the
 * commit at the horizon (the run's among them), or UINT64_MAX when the
 * window forgets nothing that PATH.times counted.
 */
uint64_t
nsd_file_window_live(const struct file_index *fi)
{
	if (!fi->horizon_known || fi->times.fd == -1)
		return (UINT64_MAX);
	return (fi->added_before - fi->added_forgotten + fi->added);
}

/* What a writer killed while it started PATH.times anew left. */
void
nsd_file_window_clear(const struct file_index *fi)
{
	char	*tmp = nsd_index_path(fi->times_path, ".new");

	(void)unlink(tmp);
	free(tmp);
}

/* Start PATH.times anew, its first record that of generation gen. */
static int
times_start(struct file_index *fi, uint64_t gen, const unsigned char *rec)
{
	unsigned char	 buf[NSD_TIMES_HEADER_SIZE + NSD_TIMES_RECORD_SIZE];
	struct stat	 table;
	char		*tmp;
	int		 fd, ok, e;

	tmp = nsd_index_path(fi->times_path, ".new");
	(void)unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | NSD_WRITE_FLAGS, 0666);
	if (fd == -1) {
		free(tmp);
		return (-1);
	}
	/* The index's owner and mode, as the log's. */
	if (fstat(fi->main.fd, &table) == 0) {
		(void)fchmod(fd, table.st_mode & 0666);
		if (fchown(fd, table.st_uid, table.st_gid) == -1)
			(void)fchmod(fd, table.st_mode & 0666 & ~0066);
	}
	nsd_times_header_encode(fi->hdr.file_id, gen, buf);
	memcpy(buf + NSD_TIMES_HEADER_SIZE, rec, NSD_TIMES_RECORD_SIZE);
	ok = nsd_pwrite_all(fd, buf, sizeof buf, 0) == 0 &&
	    fdatasync(fd) == 0 && rename(tmp, fi->times_path) == 0 &&
	    nsd_file_sync_dir(fi->times_path) == 0;
	if (!ok) {
		e = errno;
		(void)unlink(tmp);
		free(tmp);
		close(fd);
		errno = e;
		return (-1);
	}
	free(tmp);
	nsd_times_close(&fi->times);
	fi->times.fd = fd;
	fi->times.file_id = fi->hdr.file_id;
	fi->times.first = gen;
	return (0);
}

/*
 * Before the commit header h of a run that took a generation: write its
 * time and PATH.ids's length into PATH.times, synced; and in h, the window
 * and the first group record kept. The commit's time is never before the
 * last one's, so that PATH.times stays in order.
 */
int
nsd_file_window_commit(struct file_index *fi, struct nsd_index_header *h,
    struct nsd_error *err)
{
	struct nsd_times_record	 r;
	unsigned char		 rec[NSD_TIMES_RECORD_SIZE];
	int			 rc;

	h->ttl = (uint32_t)fi->ttl;
	/*
	 * A new window alone is no run: the header keeps the time of the
	 * last, by which --db-undo knows the last run's entry.
	 */
	if (fi->gen == 0 && h->records == fi->hdr.records)
		return (0);
	h->committed_at = fi->now > (int64_t)fi->hdr.committed_at ?
	    (uint64_t)fi->now : fi->hdr.committed_at;
	if (fi->gen == 0)
		return (0);
	r.at = (int64_t)h->committed_at;
	r.ids_length = h->ids_length;
	r.added = fi->added + (fi->times.fd != -1 &&
	    fi->hdr.committed_gen >= fi->times.first ? fi->added_before : 0);
	nsd_times_record_encode(&r, fi->hdr.file_id, fi->gen, rec);
	if (fi->times.fd != -1 && fi->gen >= fi->times.first)
		rc = nsd_pwrite_all(fi->times.fd, rec, sizeof rec,
		    NSD_TIMES_HEADER_SIZE + (off_t)(fi->gen -
		    fi->times.first) * NSD_TIMES_RECORD_SIZE) == 0 &&
		    fdatasync(fi->times.fd) == 0 ? 0 : -1;
	else
		rc = times_start(fi, fi->gen, rec);
	if (rc == -1)
		return (nsd_file_commit_error(fi, "writing the times of the "
		    "commits", err));
	CRASH_POINT("times-written");
	return (0);
}

/*
 * After a commit: give back the blocks of the group records before the
 * first one kept, where the file system can; the first page, with the
 * file's header, stays, and so does the newest record, by which a run
 * checks the header's count of groups. Nothing reads the others, so a
 * failure costs only room.
 */
void
nsd_file_window_punch(struct file_index *fi)
{
	uint64_t	 end = fi->hdr.ids_start;

	if (fi->hdr.groups != 0 && end > fi->hdr.last_group * 8)
		end = fi->hdr.last_group * 8;
	end &= ~(uint64_t)4095;

#ifdef FALLOC_FL_PUNCH_HOLE
	if (end > 4096)
		(void)fallocate(fi->ids_fd, FALLOC_FL_PUNCH_HOLE |
		    FALLOC_FL_KEEP_SIZE, 4096, (off_t)(end - 4096));
#else
	(void)end;
#endif
}
