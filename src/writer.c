/*
 * writer.c: checked, buffered output and the annotation splicer.
 */
#include "config.h"

#include <sys/random.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "writer.h"

#define OUTPUT_BUFFER	(256 * 1024)

/*
 * A replaced file is written through a temporary file beside it, named
 * ".nsdedup-PID-XXXXXX" after the process that writes it, so that one
 * that a killed run left can be told from one being written: every run
 * that replaces a file removes, in its directory, those of processes that
 * no longer exist (remove_stale). Where the file system allows, the file
 * has no name while it is written (O_TMPFILE), and takes that name only
 * for the moment between linkat(2) and rename(2) at the end, so that no
 * death but one in that moment leaves a file behind.
 */
#define TEMP_PREFIX	".nsdedup-"
#define TEMP_RANDOM	6		/* the XXXXXX */

struct nsd_output {
	int		 fd;
	char		*path;		/* the target, or NULL for stdout */
	char		*temp;		/* the temporary file's name, or NULL
					   when writing directly */
	size_t		 dirlen;	/* of path's directory, with its '/' */
	int		 named;		/* temp exists (else it is the name an
					   unnamed file will take) */
	char		*buf;
	size_t		 len;
	size_t		 cap;		/* OUTPUT_BUFFER, more while held */
	int		 holding;	/* nsd_output_hold() */
	uid_t		 uid;		/* owner of the file replaced */
	gid_t		 gid;
	int		 keep_owner;
};

enum target {
	TARGET_REPLACE,		/* a regular file, new or replaced */
	TARGET_DIRECT,		/* a device or FIFO, opened and written */
	TARGET_STDOUT		/* our own standard output, by another name */
};

/*
 * Whether path, the same file as our standard output, names standard output
 * (such as /dev/stdout). It does when standard output is open for writing;
 * when it is not (main.c puts a read-only /dev/null in place of a closed
 * one), only a symbolic link such as /dev/stdout or /dev/fd/1 names it, and
 * -o /dev/null is that device, written like any other.
 */
static int
stdout_named(const char *path)
{
	struct stat	 st;
	int		 fl;

	fl = fcntl(STDOUT_FILENO, F_GETFL);
	if (fl != -1 && (fl & O_ACCMODE) != O_RDONLY)
		return (1);
	return (lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
}

/*
 * Where a file output really goes, and how. A regular file (or a new one)
 * is replaced through a temporary file beside it; through a symbolic link,
 * dangling or not, the file it names, so that the link stays. Anything
 * else (a device such as /dev/null, a FIFO) is written directly, since
 * there is nothing to replace, and a name for our standard output (such as
 * /dev/stdout) is standard output itself, as the shell opened it.
 * A replaced file keeps its owner (where we may) and permissions, never
 * set-uid, set-gid or sticky bits.
 */
static int
output_target(struct nsd_output *o, const char *path, mode_t *mode,
    enum target *how, struct nsd_error *err)
{
	struct stat	 st, out;
	mode_t		 mask;
	char		*real, link[4096];
	const char	*slash;
	ssize_t		 n;

	mask = umask(0);
	umask(mask);
	*mode = 0666 & ~mask;
	*how = TARGET_REPLACE;
	if (stat(path, &st) == 0) {
		if (fstat(STDOUT_FILENO, &out) == 0 &&
		    out.st_dev == st.st_dev && out.st_ino == st.st_ino &&
		    stdout_named(path)) {
			*how = TARGET_STDOUT;
			return (0);
		}
		if (!S_ISREG(st.st_mode)) {
			*how = TARGET_DIRECT;
			o->path = xstrdup(path);
			return (0);
		}
		*mode = st.st_mode & 0777;
		o->uid = st.st_uid;
		o->gid = st.st_gid;
		o->keep_owner = 1;
		if ((real = realpath(path, NULL)) == NULL)
			return (nsd_error_set(err, NSD_EXIT_OUTPUT, "%s: %s",
			    path, strerror(errno)));
		o->path = real;
		return (0);
	}
	if (errno != ENOENT)
		return (nsd_error_set(err, NSD_EXIT_OUTPUT, "%s: %s", path,
		    strerror(errno)));
	/* A dangling link: create the file it names, beside the link. */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) &&
	    (n = readlink(path, link, sizeof link - 1)) > 0) {
		link[n] = '\0';
		slash = strrchr(path, '/');
		if (link[0] == '/' || slash == NULL)
			o->path = xstrdup(link);
		else {
			o->path = xmalloc((slash - path) + 1 + n + 1);
			memcpy(o->path, path, (slash - path) + 1);
			memcpy(o->path + (slash - path) + 1, link, n + 1);
		}
		return (0);
	}
	o->path = xstrdup(path);
	return (0);
}

/* The directory of path, of dirlen bytes: "." when it has none. */
static char *
dir_of(const char *path, size_t dirlen)
{
	return (dirlen == 0 ? xstrdup(".") : xstrndup(path, dirlen));
}

/*
 * The temporary file's name beside path ".nsdedup-PID-XXXXXX", the
 * XXXXXX for mkstemp to fill.
 */
static char *
temp_name(const char *path, size_t dirlen)
{
	size_t	 size = dirlen + sizeof TEMP_PREFIX + 24 + TEMP_RANDOM;
	char	*t;

	t = xmalloc(size);
	memcpy(t, path, dirlen);
	snprintf(t + dirlen, size - dirlen, "%s%ld-XXXXXX", TEMP_PREFIX,
	    (long)getpid());
	return (t);
}

/* Fill the XXXXXX at the end of name with random letters and digits. */
static void
randomize(char *name)
{
	static const char	 chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char		 r[TEMP_RANDOM];
	char			*p = name + strlen(name) - TEMP_RANDOM;
	struct timespec		 ts;
	uint64_t		 x;
	size_t			 i;

	if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^
		    (uint64_t)(uintptr_t)name;
		for (i = 0; i < sizeof r; i++, x >>= 8)
			r[i] = (unsigned char)x;
	}
	for (i = 0; i < TEMP_RANDOM; i++)
		p[i] = chars[r[i] % (sizeof chars - 1)];
}

/*
 * Remove, in the directory of path, the temporary files that runs killed
 * before they could remove them (SIGKILL, a crash) left: regular files
 * named .nsdedup-PID-XXXXXX that the user owns, of a PID that no process
 * has. A live run's file is never touched. What cannot be read or removed
 * stays.
 */
static void
remove_stale(const char *path, size_t dirlen)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	const char	*p;
	char		*dir, *end;
	long		 pid;

	dir = dir_of(path, dirlen);
	d = opendir(dir);
	free(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, TEMP_PREFIX,
		    sizeof TEMP_PREFIX - 1) != 0)
			continue;
		p = de->d_name + sizeof TEMP_PREFIX - 1;
		if (*p < '1' || *p > '9')
			continue;
		errno = 0;
		pid = strtol(p, &end, 10);
		if (errno != 0 || pid > INT_MAX || *end != '-' ||
		    strlen(end + 1) != TEMP_RANDOM || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		(void)unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}

/*
 * An unnamed file in the directory of path (O_TMPFILE), for
 * nsd_output_finish() to name through /proc/self/fd; -1 where the kernel
 * or the file system has no unnamed files, where /proc is not mounted, or
 * when NSDEDUP_NO_TMPFILE is set (for the tests of the named files).
 */
static int
open_unnamed(const char *path, size_t dirlen, mode_t mode)
{
#ifdef O_TMPFILE
	struct stat	 a, b;
	const char	*env = getenv("NSDEDUP_NO_TMPFILE");
	char		*dir, proc[32];
	int		 fd;

	if (env != NULL && *env != '\0')
		return (-1);
	dir = dir_of(path, dirlen);
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
	free(dir);
	if (fd == -1)
		return (-1);
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (stat(proc, &a) == -1 || fstat(fd, &b) == -1 ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(fd);
		return (-1);
	}
	return (fd);
#else
	(void)path;
	(void)dirlen;
	(void)mode;
	return (-1);
#endif
}

int
nsd_output_open(struct nsd_output **outp, const char *path,
    struct nsd_error *err)
{
	struct nsd_output	*o;
	const char		*slash;
	mode_t			 mode = 0666;
	size_t			 dirlen;
	enum target		 how = TARGET_REPLACE;

	o = xcalloc(1, sizeof *o);
	o->buf = xmalloc(OUTPUT_BUFFER);
	o->cap = OUTPUT_BUFFER;
	o->fd = -1;
	if (path == NULL) {
		o->fd = STDOUT_FILENO;
		*outp = o;
		return (0);
	}
	if (output_target(o, path, &mode, &how, err) == -1) {
		nsd_output_discard(o);
		return (-1);
	}
	if (how == TARGET_STDOUT) {
		o->fd = STDOUT_FILENO;
		*outp = o;
		return (0);
	}
	if (how == TARGET_DIRECT) {
		o->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (o->fd == -1) {
			nsd_error_set(err, NSD_EXIT_OUTPUT, "%s: %s", path,
			    strerror(errno));
			nsd_output_discard(o);
			return (-1);
		}
		*outp = o;
		return (0);
	}
	/*
	 * The temporary file sits beside the target so that rename(2) is
	 * atomic. An unnamed one gets its name (for the signal handler, which
	 * finds nothing there until nsd_output_finish() links it) now.
	 */
	path = o->path;
	slash = strrchr(path, '/');
	dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	o->dirlen = dirlen;
	remove_stale(path, dirlen);
	o->temp = temp_name(path, dirlen);
	if ((o->fd = open_unnamed(path, dirlen, mode)) != -1)
		randomize(o->temp);
	else if ((o->fd = mkstemp(o->temp)) != -1)
		o->named = 1;
	else {
		nsd_error_set(err, NSD_EXIT_OUTPUT,
		    "%s: cannot create a temporary file: %s",
		    path, strerror(errno));
		free(o->temp);
		o->temp = NULL;
		nsd_output_discard(o);
		return (-1);
	}
	/*
	 * mkstemp makes 0600: give the result the owner and mode of the file
	 * it replaces (the owner only where we may), or the mode any new file
	 * would get. Owner first: a change of owner may clear mode bits.
	 */
	if (o->keep_owner)
		(void)fchown(o->fd, o->uid, o->gid);	/* else it stays ours */
	if (fchmod(o->fd, mode) == -1) {
		nsd_error_set(err, NSD_EXIT_OUTPUT, "%s: %s",
		    o->named ? o->temp : path, strerror(errno));
		nsd_output_discard(o);
		return (-1);
	}
	*outp = o;
	return (0);
}

const char *
nsd_output_temp_path(const struct nsd_output *o)
{
	return (o == NULL ? NULL : o->temp);
}

/* Write all of p[0..len) to the output's descriptor, retrying short writes. */
static int
write_all(struct nsd_output *o, const char *p, size_t len,
    struct nsd_error *err)
{
	ssize_t	 n;

	while (len > 0) {
		n = write(o->fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (nsd_error_set(err, NSD_EXIT_OUTPUT,
			    "%s: write error: %s",
			    o->path ? o->path : "standard output",
			    strerror(errno)));
		p += n;
		len -= n;
	}
	return (0);
}

/* Write out the whole buffer, held or not; a buffer grown to hold shrinks. */
static int
flush(struct nsd_output *o, struct nsd_error *err)
{
	if (write_all(o, o->buf, o->len, err) == -1)
		return (-1);
	o->len = 0;
	o->holding = 0;
	if (o->cap > OUTPUT_BUFFER) {
		free(o->buf);
		o->buf = xmalloc(OUTPUT_BUFFER);
		o->cap = OUTPUT_BUFFER;
	}
	return (0);
}

int
nsd_output_flush(struct nsd_output *o, struct nsd_error *err)
{
	return (o->holding ? 0 : flush(o, err));
}

int
nsd_output_hold(struct nsd_output *o, struct nsd_error *err)
{
	if (flush(o, err) == -1)
		return (-1);
	o->holding = 1;
	return (0);
}

void
nsd_output_release(struct nsd_output *o, int drop)
{
	if (o->holding && drop)
		o->len = 0;
	o->holding = 0;
}

int
nsd_output_write(struct nsd_output *o, const void *p, size_t len,
    struct nsd_error *err)
{
	if (o->holding && o->len + len > o->cap) {
		/* Room to hold it, or no more holding. */
		if (o->len + len <= NSD_OUTPUT_HOLD_MAX) {
			while (o->cap < o->len + len)
				o->cap *= 2;
			if (o->cap > NSD_OUTPUT_HOLD_MAX)
				o->cap = NSD_OUTPUT_HOLD_MAX;
			o->buf = xreallocarray(o->buf, o->cap, 1);
		} else
			o->holding = 0;
	}
	if (o->len + len > o->cap) {
		if (flush(o, err) == -1)
			return (-1);
		/* Large pieces (long lines) go straight out, uncopied. */
		if (len >= o->cap)
			return (write_all(o, p, len, err));
	}
	memcpy(o->buf + o->len, p, len);
	o->len += len;
	return (0);
}

/*
 * Give the unnamed file its temporary name, with linkat(2) through
 * /proc/self/fd (linkat cannot replace the target itself, so rename
 * follows); another name when that one is taken.
 */
static int
link_unnamed(struct nsd_output *o, struct nsd_error *err)
{
	char	 proc[32];
	int	 tries;

	snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
	for (tries = 0;; tries++) {
		if (linkat(AT_FDCWD, proc, AT_FDCWD, o->temp,
		    AT_SYMLINK_FOLLOW) == 0) {
			o->named = 1;
			return (0);
		}
		if (errno != EEXIST || tries == 100)
			return (nsd_error_set(err, NSD_EXIT_OUTPUT,
			    "%s: cannot name the temporary file: %s",
			    o->path, strerror(errno)));
		randomize(o->temp);
	}
}

/*
 * Make the rename into the directory of the output last: fsync(2) the
 * directory. One that cannot be opened for reading is left to the file
 * system; one whose file system cannot sync a directory (EINVAL) too.
 */
static int
sync_dir(struct nsd_output *o, struct nsd_error *err)
{
	char	*dir;
	int	 fd, e;

	dir = dir_of(o->path, o->dirlen);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd == -1)
		return (0);
	if (fsync(fd) == -1 && errno != EINVAL) {
		e = errno;
		close(fd);
		return (nsd_error_set(err, NSD_EXIT_OUTPUT,
		    "%s: fsync of its directory: %s", o->path, strerror(e)));
	}
	close(fd);
	return (0);
}

int
nsd_output_finish(struct nsd_output *o, struct nsd_error *err)
{
	const char	*name = o->path ? o->path : "standard output";

	if (flush(o, err) == -1) {
		nsd_output_discard(o);
		return (-1);
	}
	if (o->path == NULL) {
		free(o->buf);
		free(o);
		return (0);
	}
	if (o->temp == NULL) {
		/* A device or FIFO, written directly: no sync, no rename. */
		if (close(o->fd) == -1) {
			nsd_error_set(err, NSD_EXIT_OUTPUT, "%s: %s", name,
			    strerror(errno));
			o->fd = -1;
			nsd_output_discard(o);
			return (-1);
		}
		free(o->path);
		free(o->buf);
		free(o);
		return (0);
	}
	if (fsync(o->fd) == -1) {
		nsd_error_set(err, NSD_EXIT_OUTPUT, "%s: %s", name,
		    strerror(errno));
		nsd_output_discard(o);
		return (-1);
	}
	if (!o->named && link_unnamed(o, err) == -1) {
		nsd_output_discard(o);
		return (-1);
	}
	if (close(o->fd) == -1) {
		nsd_error_set(err, NSD_EXIT_OUTPUT, "%s: %s", name,
		    strerror(errno));
		o->fd = -1;
		nsd_output_discard(o);
		return (-1);
	}
	o->fd = -1;
	if (rename(o->temp, o->path) == -1) {
		nsd_error_set(err, NSD_EXIT_OUTPUT,
		    "%s: cannot rename into place: %s",
		    name, strerror(errno));
		nsd_output_discard(o);
		return (-1);
	}
	o->named = 0;
	if (sync_dir(o, err) == -1) {
		nsd_output_discard(o);
		return (-1);
	}
	free(o->temp);
	free(o->path);
	free(o->buf);
	free(o);
	return (0);
}

void
nsd_output_discard(struct nsd_output *o)
{
	struct nsd_error	 ignored;

	if (o == NULL)
		return;
	/*
	 * Records already produced still reach a stream (standard output, a
	 * device, a FIFO); a file is left as it was.
	 */
	if (o->temp == NULL && o->fd != -1 && o->len > 0)
		(void)flush(o, &ignored);
	if (o->path != NULL && o->fd != -1)
		close(o->fd);
	if (o->temp != NULL && o->named)
		unlink(o->temp);
	free(o->temp);
	free(o->path);
	free(o->buf);
	free(o);
}

/* "name": as a JSON member prefix, with the name escaped as a JSON string. */
static char *
json_member(const char *name)
{
	struct nsd_buf	 b = { 0 };

	nsd_json_encode_string(name, strlen(name), &b);
	nsd_buf_append(&b, ":", 2);	/* with the NUL */
	return (b.data);
}

void
nsd_writer_init(struct nsd_writer *w, struct nsd_output *out,
    const char *id_name, const char *dup_name)
{
	memset(w, 0, sizeof *w);
	w->out = out;
	w->id_member = json_member(id_name);
	w->dup_member = dup_name[0] != '\0' ? json_member(dup_name) : NULL;
	w->id_column = id_name;
	w->dup_column = dup_name[0] != '\0' ? dup_name : NULL;
}

void
nsd_writer_free(struct nsd_writer *w)
{
	nsd_buf_free(&w->scratch);
	free(w->id_member);
	free(w->dup_member);
}

static int
put(struct nsd_writer *w, const void *p, size_t len, struct nsd_error *err)
{
	return (nsd_output_write(w->out, p, len, err));
}

static int
put_eol(struct nsd_writer *w, unsigned eol_len, struct nsd_error *err)
{
	return (put(w, eol_len == 2 ? "\r\n" : "\n", eol_len == 2 ? 2 : 1,
	    err));
}

/*
 * The value of one annotation member: the id token or group number, or the
 * flag.
 */
/*
 * An id as a TSV cell: ids are kept as JSON tokens, so a string is decoded
 * and written as it is, except that a tab or a newline, which a TSV field
 * cannot hold, is written as the escape jq's @tsv would use. An id that
 * came from a TSV field therefore comes back byte for byte.
 */
static int
put_tsv_id(struct nsd_writer *w, const char *id, size_t len,
    struct nsd_error *err)
{
	const char	*p, *end, *run;

	if (len == 0 || id[0] != '"')
		return (put(w, id, len, err));
	w->scratch.len = 0;
	nsd_json_decode_string(id, len, &w->scratch);
	p = run = w->scratch.data;
	for (end = p + w->scratch.len; p < end; p++) {
		if (*p != '\t' && *p != '\n')
			continue;
		if (put(w, run, p - run, err) == -1 ||
		    put(w, *p == '\t' ? "\\t" : "\\n", 2, err) == -1)
			return (-1);
		run = p + 1;
	}
	return (put(w, run, end - run, err));
}

static int
put_value(struct nsd_writer *w, enum nsd_member m,
    const struct nsd_annotation *a, int tsv, struct nsd_error *err)
{
	char	 num[24];
	int	 n;

	if (m == NSD_MEMBER_DUP)
		return (a->dup ? put(w, "true", 4, err) :
		    put(w, "false", 5, err));
	/* Evidence, or for an original: null in JSON, nothing in TSV. */
	if (m == NSD_MEMBER_EXPLAIN && a->explain != NULL)
		return (put(w, a->explain, strlen(a->explain), err));
	if (m == NSD_MEMBER_EXPLAIN)
		return (tsv ? 0 : put(w, "null", 4, err));
	if (a->id != NULL && tsv)
		return (put_tsv_id(w, a->id, a->id_len, err));
	if (a->id != NULL)
		return (put(w, a->id, a->id_len, err));
	n = snprintf(num, sizeof num, "%" PRIu64, a->group);
	return (put(w, num, n, err));
}

int
nsd_writer_raw(struct nsd_writer *w, const char *line, size_t len,
    unsigned eol_len, struct nsd_error *err)
{
	if (put(w, line, len, err) == -1)
		return (-1);
	return (put_eol(w, eol_len, err));
}

int
nsd_writer_json(struct nsd_writer *w, const char *line, size_t len,
    unsigned eol_len, const struct nsd_splice *sp,
    const struct nsd_annotation *a, struct nsd_error *err)
{
	size_t	 pos = 0, i;
	int	 have_id = 0, have_dup = w->dup_member == NULL, comma;
	int	 have_explain = 0;

	for (i = 0; i < sp->nreplace; i++) {
		const struct nsd_splice_span *r = &sp->replace[i];

		if (put(w, line + pos, r->start - pos, err) == -1 ||
		    put_value(w, r->member, a, 0, err) == -1)
			return (-1);
		pos = r->start + r->len;
		if (r->member == NSD_MEMBER_ID)
			have_id = 1;
		else if (r->member == NSD_MEMBER_EXPLAIN)
			have_explain = 1;
		else
			have_dup = 1;
	}
	if (put(w, line + pos, sp->insert_at - pos, err) == -1)
		return (-1);
	comma = sp->has_members;
	if (!have_id) {
		if ((comma && put(w, ",", 1, err) == -1) ||
		    put(w, w->id_member, strlen(w->id_member), err) == -1 ||
		    put_value(w, NSD_MEMBER_ID, a, 0, err) == -1)
			return (-1);
		comma = 1;
	}
	if (!have_dup) {
		if ((comma && put(w, ",", 1, err) == -1) ||
		    put(w, w->dup_member, strlen(w->dup_member), err) == -1 ||
		    put_value(w, NSD_MEMBER_DUP, a, 0, err) == -1)
			return (-1);
	}
	/*
	 * Evidence is added to duplicates only (after similar_id at least);
	 * an explain member the record had was replaced above.
	 */
	if (w->explain && a->explain != NULL && !have_explain &&
	    (put(w, ",\"explain\":", 11, err) == -1 ||
	    put(w, a->explain, strlen(a->explain), err) == -1))
		return (-1);
	if (put(w, line + sp->insert_at, len - sp->insert_at, err) == -1)
		return (-1);
	return (put_eol(w, eol_len, err));
}

/* One annotation cell: the header's name for it, or the record's value. */
static int
put_cell(struct nsd_writer *w, enum nsd_member m,
    const struct nsd_annotation *a, struct nsd_error *err)
{
	const char	*name = m == NSD_MEMBER_ID ? w->id_column :
	    m == NSD_MEMBER_EXPLAIN ? NSD_EXPLAIN_NAME : w->dup_column;

	if (a == NULL)
		return (put(w, name, strlen(name), err));
	return (put_value(w, m, a, 1, err));
}

int
nsd_writer_tsv(struct nsd_writer *w, const char *line, size_t len,
    unsigned eol_len, long id_col, long dup_col, long explain_col,
    const struct nsd_annotation *a, struct nsd_error *err)
{
	const char	*p = line, *end = line + len, *tab;
	long		 col;

	if (!w->explain)
		explain_col = -1;
	if (id_col < 0 && (dup_col < 0 || w->dup_column == NULL) &&
	    explain_col < 0) {
		/* Nothing to replace: the row as it is, then the new cells. */
		if (put(w, line, len, err) == -1)
			return (-1);
	} else {
		for (col = 0;; col++) {
			tab = memchr(p, '\t', end - p);
			if (col > 0 && put(w, "\t", 1, err) == -1)
				return (-1);
			if (col == id_col) {
				if (put_cell(w, NSD_MEMBER_ID, a, err) == -1)
					return (-1);
			} else if (col == dup_col && w->dup_column != NULL) {
				if (put_cell(w, NSD_MEMBER_DUP, a, err) == -1)
					return (-1);
			} else if (col == explain_col) {
				if (put_cell(w, NSD_MEMBER_EXPLAIN, a,
				    err) == -1)
					return (-1);
			} else if (put(w, p, (tab ? tab : end) - p, err) == -1)
				return (-1);
			if (tab == NULL)
				break;
			p = tab + 1;
		}
	}
	if (id_col < 0 && (put(w, "\t", 1, err) == -1 ||
	    put_cell(w, NSD_MEMBER_ID, a, err) == -1))
		return (-1);
	if (dup_col < 0 && w->dup_column != NULL &&
	    (put(w, "\t", 1, err) == -1 ||
	    put_cell(w, NSD_MEMBER_DUP, a, err) == -1))
		return (-1);
	/* The evidence as a JSON object; empty for an original. */
	if (w->explain && explain_col < 0 && (put(w, "\t", 1, err) == -1 ||
	    put_cell(w, NSD_MEMBER_EXPLAIN, a, err) == -1))
		return (-1);
	return (put_eol(w, eol_len, err));
}
