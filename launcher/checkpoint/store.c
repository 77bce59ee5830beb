/* store.c — the checkpoint store's shared pieces (store.h): field escaping, the meta file, where stores live. */
#include "launcher/checkpoint/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool must_escape(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == '%';
}

ssize_t store_escape(const char *path, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (must_escape(*p)) {
			if (n + 3 >= cap)
				return -1;
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		} else {
			if (n + 1 >= cap)
				return -1;
			out[n++] = (char)*p;
		}
	}
	if (n >= cap)
		return -1;
	out[n] = '\0';
	return (ssize_t)n;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

bool store_unescape(char *s)
{
	char *w = s;
	for (const char *r = s; *r; r++) {
		if (*r != '%') {
			*w++ = *r;
			continue;
		}
		int hi = hexval(r[1]), lo = hi < 0 ? -1 : hexval(r[2]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			return false;
		*w++ = (char)(hi << 4 | lo);
		r += 2;
	}
	*w = '\0';
	return true;
}

int store_split(char *line, char **fields, int max)
{
	int n = 0;
	char *p = line;
	for (;;) {
		if (n == max)
			return -1;
		fields[n++] = p;
		char *tab = strchr(p, '\t');
		if (tab)
			*tab = '\0';
		if (!store_unescape(fields[n - 1]))
			return -1;
		if (!tab)
			return n;
		p = tab + 1;
	}
}

char *store_root(const char *home)
{
	const char *x = getenv("XDG_STATE_HOME");
	char *out = NULL;
	int r = x && x[0] == '/' ? asprintf(&out, "%s/airlock/checkpoints", x)
				 : asprintf(&out, "%s/.local/state/airlock/checkpoints", home ? home : "");
	return r < 0 ? NULL : out;
}

/* Reads the whole meta file into buf (cap bytes, NUL-terminated). */
static int meta_read(int dirfd, char *buf, size_t cap)
{
	int fd = openat(dirfd, "meta", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap - 1) {
			close(fd);
			return -EIO;
		}
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

int store_meta_get(int dirfd, const char *key, char *out, size_t cap)
{
	char *buf = malloc(STORE_META_MAX + 1);
	if (!buf)
		return -ENOMEM;
	int r = meta_read(dirfd, buf, STORE_META_MAX + 1);
	if (r < 0) {
		free(buf);
		return r;
	}
	size_t klen = strlen(key);
	const char *found = NULL;
	size_t flen = 0;
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (!nl)
			break; /* a last line cut short: not trusted */
		if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
			found = line + klen + 1; /* the last one wins */
			flen = (size_t)(nl - found);
		}
		line = nl + 1;
	}
	if (!found)
		r = -ENOENT;
	else if (flen + 1 > cap)
		r = -E2BIG;
	else {
		memcpy(out, found, flen);
		out[flen] = '\0';
	}
	free(buf);
	return r;
}

int store_meta_put(int dirfd, const char *key, const char *value)
{
	if (strchr(value, '\n') || strchr(key, '\n') || strchr(key, '='))
		return -EINVAL;
	char *line = NULL;
	int len = asprintf(&line, "%s=%s\n", key, value);
	if (len < 0)
		return -ENOMEM;
	int fd = openat(dirfd, "meta", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	int r = 0;
	if (fd < 0)
		r = -errno;
	else {
		ssize_t w = write(fd, line, (size_t)len);
		if (w != len)
			r = w < 0 ? -errno : -EIO;
		close(fd);
	}
	free(line);
	return r;
}
