/*
 * index_undo.c: what the persistent index keeps of its last commits, and
 * --db-undo, which takes the last one back.
 *
 * Undo. A commit writes the header that says "committed G" over the copy
 * that said "pending G": the state before the run, as the run left it
 * after its folds, rebuilds and growth (which keep every committed entry
 * with its generation), with the run's entries as leftovers of a run that
 * has not committed. That header is what undoing the run must make current
 * again, and it is lost to the next writes of the header copies; so each
 * commit first saves it in PATH.undo, an entry of NSD_UNDO_RUNS (the
 * oldest is written over), with what the commit leaves of the fields that
 * nothing but a commit changes, which say which commit it was.
 *
 * To take back the commit that left the current state, the newest entry
 * that names it is written as the current header, in both copies
 * (nsd_file_write_undone()); the state is then "pending G" again, and
 * recover() clears the run's entries from the table and PATH.next, and its
 * stage if it folded its own entries into one, as after any run that did
 * not commit. PATH.ids and PATH.log, append-only, go back to their lengths
 * before the run. So the index is exactly as before the run (but for the
 * bytes past what counts), and the same input again gives the same output.
 *
 * This holds while the files the saved header names are still the ones in
 * place. A fold after the run (by a later run, or at the start of one)
 * makes a new stage without the stage's entries that the run's sweep
 * moved into the table, which an undo would clear; a growth or a rebuild
 * after the run puts a new table in place; an upgrade, a new format. Then
 * the run cannot be taken back, and nsd_undo_chain() says so. A fold, a
 * growth or a rebuild in the run itself is in the saved header. A table
 * put in place at the size it had (a renewal: index_window.c) leaves no
 * trace in the header that a saved one could be compared with; so every
 * run that puts a table in place first says so in PATH.undo's header
 * (nsd_file_undo_replaced()), and its own commit is the oldest that can
 * be taken back.
 *
 * Only a writer saves, in file_commit(), before the commit header: a run
 * that stops in between leaves an entry of a commit that never was, which
 * no state matches. The undo itself writes nothing but the header copies,
 * and then what recovery writes, so that a crash leaves the state before
 * it or the state after it.
 */
#include "config.h"

#include <sys/stat.h>

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index_file.h"

static_assert(NSD_UNDO_RUNS <= NSD_INDEX_UNDO_MAX, "undo runs");

/*
 * Make PATH.undo, open at fd (size bytes long), this index's and empty:
 * a new file, or one that is short, damaged or another index's. It gets
 * the table's owner and mode, as the log does.
 */
static int
undo_start(struct file_index *fi, int fd, off_t size)
{
	unsigned char	 buf[NSD_UNDO_FILE_SIZE];
	struct stat	 table;

	if (size == 0 && fstat(fi->main.fd, &table) == 0 &&
	    fchown(fd, table.st_uid, table.st_gid) == 0)
		(void)fchmod(fd, table.st_mode & 0666);
	memset(buf, 0, sizeof buf);
	memcpy(buf, NSD_UNDO_MAGIC, 8);
	nsd_put_le64(buf + 8, fi->hdr.file_id);
	if (nsd_pwrite_all(fd, buf, sizeof buf, 0) == -1 ||
	    fdatasync(fd) == -1 || nsd_file_sync_dir(fi->undo_path) == -1)
		return (-1);
	return (0);
}

/*
 * Before the commit that leaves header after: save before, the header
 * current now, in PATH.undo, over its oldest entry (or one that cannot be
 * used), and sync it.
 */
int
nsd_file_undo_save(struct file_index *fi, const struct nsd_index_header *before,
    const struct nsd_index_header *after, struct nsd_error *err)
{
	struct nsd_undo_entry	 e[NSD_UNDO_RUNS], n;
	unsigned char		 buf[NSD_UNDO_ENTRY_SIZE];
	unsigned char		 head[16];
	struct stat		 sb;
	unsigned		 i, at = 0, damaged;
	uint64_t		 serial = 0;
	int			 fd;

	fd = open(fi->undo_path, O_RDWR | O_CREAT | NSD_WRITE_FLAGS, 0666);
	if (fd == -1)
		return (nsd_file_commit_error(fi, "opening the undo file",
		    err));
	if (fstat(fd, &sb) == -1)
		goto fail;
	if (!S_ISREG(sb.st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	if (nsd_undo_read(fd, fi->hdr.file_id, e, &damaged) == -1)
		goto fail;
	if (pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    sb.st_size < NSD_UNDO_FILE_SIZE ||
	    memcmp(head, NSD_UNDO_MAGIC, 8) != 0 ||
	    nsd_le64(head + 8) != fi->hdr.file_id) {
		if (undo_start(fi, fd, sb.st_size) == -1)
			goto fail;
		memset(e, 0, sizeof e);
	}
	for (i = 0; i < NSD_UNDO_RUNS; i++) {
		if (e[i].serial > serial)
			serial = e[i].serial;
		if (e[i].serial < e[at].serial)
			at = i;
	}
	memset(&n, 0, sizeof n);
	n.serial = serial + 1;
	n.gen = after->committed_gen;
	n.records = after->records;
	n.groups = after->groups;
	n.ids_length = after->ids_length;
	n.committed_at = after->committed_at;
	n.before = *before;
	nsd_undo_entry_encode(&n, at, buf);
	if (nsd_pwrite_all(fd, buf, sizeof buf, NSD_UNDO_HEADER_SIZE +
	    (off_t)at * NSD_UNDO_ENTRY_SIZE) == -1 || fdatasync(fd) == -1)
		goto fail;
	close(fd);
	CRASH_POINT("undo-saved");
	return (0);
fail:
	nsd_file_commit_error(fi, "writing the undo file", err);
	close(fd);
	return (-1);
}

/*
 * Before a new table is put in place: no commit up to the last can be
 * taken back, since the header it saved names the table being replaced
 * (or, when the index was growing, a PATH.next about to become the
 * table). PATH.undo's replaced_gen says so, synced first, so that a run
 * stopped at any point leaves no entry that can be used and names a table
 * no longer there. A file that is not this index's holds no entry to
 * keep from use.
 */
int
nsd_file_undo_replaced(struct file_index *fi, struct nsd_error *err)
{
	unsigned char	 head[24];
	int		 fd;

	if ((fd = open(fi->undo_path, O_RDWR | NSD_WRITE_FLAGS)) == -1) {
		if (errno == ENOENT)
			return (0);
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->undo_path,
		    "cannot open the undo file"));
	}
	if (nsd_pread_all(fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    memcmp(head, NSD_UNDO_MAGIC, 8) != 0 ||
	    nsd_le64(head + 8) != fi->hdr.file_id ||
	    nsd_le64(head + 16) >= fi->hdr.committed_gen) {
		close(fd);
		return (0);
	}
	nsd_put_le64(head + 16, fi->hdr.committed_gen);
	if (nsd_pwrite_all(fd, head + 16, 8, 16) == -1 || fdatasync(fd) == -1) {
		nsd_error_errno(err, NSD_EXIT_INDEX, fi->undo_path,
		    "cannot write the undo file");
		close(fd);
		return (-1);
	}
	close(fd);
	return (0);
}

/* The entries of PATH.undo, all unused when there is none. */
static int
undo_load(struct file_index *fi, struct nsd_undo_entry *e,
    struct nsd_error *err)
{
	unsigned	 damaged;
	int		 fd, rc;

	memset(e, 0, NSD_UNDO_RUNS * sizeof *e);
	if ((fd = open(fi->undo_path, O_RDONLY | NSD_OPEN_FLAGS)) == -1) {
		if (errno == ENOENT)
			return (0);
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->undo_path,
		    "cannot open"));
	}
	rc = nsd_undo_read(fd, fi->hdr.file_id, e, &damaged);
	close(fd);
	if (rc == -1)
		return (nsd_error_errno(err, NSD_EXIT_INDEX, fi->undo_path,
		    "cannot read"));
	return (0);
}

/*
 * Say what a write that failed left of the undo (done: its header is
 * written), in place of what a run's failure says.
 */
static void
undo_failed(struct nsd_error *err, int done)
{
	size_t	 len = strlen(err->msg), tail = strlen(NSD_FILE_NOT_COMMITTED);

	if (err->status != NSD_EXIT_COMMIT || len < tail ||
	    strcmp(err->msg + len - tail, NSD_FILE_NOT_COMMITTED) != 0)
		return;
	snprintf(err->msg + len - tail, sizeof err->msg - (len - tail), "%s",
	    done ? "; the run is taken back, and the next run that writes "
	    "clears what it left" : "; the index is as before --db-undo");
}

/* The newest generation the stage in use holds, or 0 without one. */
static uint64_t
stage_gen(const struct file_index *fi)
{
	return (fi->stage.fd != -1 ? fi->stage_max_gen : 0);
}

int
nsd_index_undo(const char *path, long wait_ms, struct nsd_index_undone *u,
    struct nsd_error *err)
{
	struct nsd_index_open		 o;
	struct nsd_index_params		 p;
	struct nsd_undo_entry		 e[NSD_UNDO_RUNS];
	const struct nsd_undo_entry	*step;
	struct nsd_index_header		 h;
	struct nsd_index		*ix;
	struct file_index		*fi;
	const char			*why;
	int				 rc = -1;

	memset(u, 0, sizeof *u);
	memset(&o, 0, sizeof o);
	o.path = path;
	o.wait_ms = wait_ms;
	o.undo = 1;
	memset(&p, 0, sizeof p);
	if (nsd_index_open_file(&ix, &o, &p, err) == -1)
		return (-1);
	fi = (struct file_index *)ix;
	if (undo_load(fi, e, err) == -1)
		goto done;
	if (nsd_undo_chain(e, NSD_UNDO_RUNS, &fi->hdr, stage_gen(fi), &step, 1,
	    &why) == 0) {
		nsd_error_set(err, NSD_EXIT_INDEX, "%s: cannot undo the last "
		    "run: %s (see Undo in nsdedup-index(5))", fi->path, why);
		goto done;
	}
	u->run.generation = fi->hdr.committed_gen;
	u->run.records = fi->hdr.records;
	u->run.committed_at = fi->hdr.committed_at;
	h = nsd_undo_state(step, &fi->hdr);
	if (nsd_file_write_undone(fi, &h, err) == -1) {
		undo_failed(err, 0);
		goto done;
	}
	if (nsd_file_undone(fi, err) == -1) {
		undo_failed(err, 1);
		goto done;
	}
	CRASH_POINT("undone");
	u->generation = fi->hdr.committed_gen;
	u->records = fi->hdr.records;
	u->left = nsd_undo_chain(e, NSD_UNDO_RUNS, &fi->hdr, stage_gen(fi),
	    NULL, 0, &u->why);
	rc = 0;
done:
	nsd_index_close(ix);
	return (rc);
}
