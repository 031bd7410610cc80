/*
 * util.c: allocation that cannot fail, growable buffers, error messages.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/*
 * Fill in an error and return -1, so that callers can write "return
 * nsd_error_set(...)".
 */
int
nsd_error_set(struct nsd_error *err, int status, const char *fmt, ...)
{
	va_list	 ap;

	if (err == NULL)
		return (-1);
	err->status = status;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return (-1);
}

/*
 * Report exhaustion with a fixed message: there may be no memory left to
 * format one.
 */
void
nsd_out_of_memory(void)
{
	static const char msg[] = "nsdedup: out of memory\n";
	ssize_t	 n;

	n = write(STDERR_FILENO, msg, sizeof msg - 1);
	(void)n;
	_exit(NSD_EXIT_NOMEM);
}

int
nsd_error_errno(struct nsd_error *err, int status, const char *path,
    const char *what)
{
	return (nsd_error_set(err, status, "%s: %s: %s", path, what,
	    strerror(errno)));
}

void *
xmalloc(size_t size)
{
	void	*p;

	if ((p = malloc(size == 0 ? 1 : size)) == NULL)
		nsd_out_of_memory();
	return (p);
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void	*p;

	if ((p = calloc(nmemb == 0 ? 1 : nmemb, size == 0 ? 1 : size)) == NULL)
		nsd_out_of_memory();
	return (p);
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void	*p;

	if (size != 0 && nmemb > SIZE_MAX / size)
		nsd_out_of_memory();
	if ((p = realloc(ptr, nmemb * size == 0 ? 1 : nmemb * size)) == NULL)
		nsd_out_of_memory();
	return (p);
}

char *
xstrdup(const char *s)
{
	return (xstrndup(s, strlen(s)));
}

char *
xstrndup(const char *s, size_t len)
{
	char	*p;

	p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return (p);
}

/* Make room for at least extra more bytes, growing geometrically. */
void
nsd_buf_reserve(struct nsd_buf *b, size_t extra)
{
	size_t	 want, cap;

	if (extra > SIZE_MAX - b->len)
		nsd_out_of_memory();
	want = b->len + extra;
	if (want <= b->cap)
		return;
	cap = b->cap == 0 ? 256 : b->cap;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	b->data = xreallocarray(b->data, cap, 1);
	b->cap = cap;
}

void
nsd_buf_append(struct nsd_buf *b, const void *p, size_t len)
{
	if (len == 0)
		return;
	nsd_buf_reserve(b, len);
	memcpy(b->data + b->len, p, len);
	b->len += len;
}

void
nsd_buf_free(struct nsd_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void
nsd_wipe(void *p, size_t len)
{
#ifdef HAVE_EXPLICIT_BZERO
	explicit_bzero(p, len);
#else
	volatile unsigned char	*v = p;

	while (len-- > 0)
		*v++ = 0;
#endif
}

char *
nsd_fraction_format(unsigned v, char *buf)
{
	size_t	 n;

	n = (size_t)snprintf(buf, NSD_FRACTION_MAX, "%u.%04u", v / 10000 % 10,
	    v % 10000);
	while (buf[n - 1] == '0')
		buf[--n] = '\0';
	if (buf[n - 1] == '.')
		buf[--n] = '\0';
	return (buf);
}

int
nsd_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t	 all, old;
	int		 rc;

	/* A new thread starts with its creator's mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return (rc);
}

int
nsd_fd_readable(int fd, int ms)
{
	struct pollfd	 pfd;
	int		 rc;

	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	rc = poll(&pfd, 1, ms);
	return (rc > 0 || (rc == -1 && errno != EINTR));
}

ssize_t
nsd_pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t	 done = 0;
	ssize_t	 n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done,
		    off + (off_t)done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (-1);
		if (n == 0)
			break;
		done += n;
	}
	return ((ssize_t)done);
}

int
nsd_pread_exact(int fd, void *buf, size_t len, off_t off)
{
	ssize_t	 n;

	if ((n = nsd_pread_all(fd, buf, len, off)) == -1)
		return (-1);
	if ((size_t)n < len) {
		errno = EIO;
		return (-1);
	}
	return (0);
}

int
nsd_pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	size_t	 done = 0;
	ssize_t	 n;

	while (done < len) {
		n = pwrite(fd, (const char *)buf + done, len - done,
		    off + (off_t)done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return (-1);
		}
		done += n;
	}
	return (0);
}
