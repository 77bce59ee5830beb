/* buildid.c — the GNU build-id of an ELF file, and the session's table of ruled programs' build-ids (see buildid.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/buildid.h"
#include "core/pathsearch.h"
#include "policy/cli.h"
#include "policy/policy.h"

/* elf(5): the fields read, by offset, for each class. */
#define EI_NIDENT_ 16
#define ELFCLASS32_ 1
#define ELFCLASS64_ 2
#define ELFDATA2LSB_ 1
#define ELFDATA2MSB_ 2
#define EV_CURRENT_ 1
#define PT_NOTE_ 4
#define NT_GNU_BUILD_ID_ 3

#define MAX_PHDRS 64
#define MAX_NOTE_SEGMENTS 4
#define MAX_NOTE_BYTES 1024

struct elf_reader {
	bool msb;
	bool wide; /* ELFCLASS64 */
};

static uint64_t get(const struct elf_reader *r, const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[r->msb ? n - 1 - i : i] << (8 * i);
	return v;
}

/* pread(2) of exactly n bytes at off: n, a short count (the file ends), or -errno. */
static ssize_t read_at(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	if (off > (uint64_t)LLONG_MAX - n)
		return 0;
	while (got < n) {
		long k = syscall(SYS_pread64, fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* The build-id in one note segment's bytes (n of them), entries aligned to a (4 or 8). */
static int find_note(const struct elf_reader *r, const uint8_t *p, size_t n, uint64_t a,
		     uint8_t *out, size_t cap)
{
	uint64_t at = 0;
	while (at + 12 <= n) {
		uint64_t namesz = get(r, p + at, 4), descsz = get(r, p + at + 4, 4);
		uint64_t type = get(r, p + at + 8, 4);
		/* the padding aligns the offsets within the segment, not the sizes (the gABI's
		   8-byte notes: a 4-byte name "GNU" at 12 puts the descriptor at 16) */
		uint64_t name_at = at + 12, desc_at = align_up(name_at + namesz, a);
		uint64_t next = align_up(desc_at + descsz, a);
		if (desc_at > n || desc_at + descsz > n)
			return 0;
		if (type == NT_GNU_BUILD_ID_ && namesz == 4 && memcmp(p + name_at, "GNU", 4) == 0) {
			if (descsz == 0 || descsz > cap)
				return 0;
			memcpy(out, p + desc_at, descsz);
			return (int)descsz;
		}
		at = next;
	}
	return 0;
}

int buildid_read_fd(int fd, uint8_t *out, size_t cap)
{
	uint8_t eh[64];
	struct elf_reader r;
	ssize_t k = read_at(fd, eh, sizeof eh, 0);
	if (k < 0)
		return (int)k;
	if (k < 52 || memcmp(eh, "\177ELF", 4) != 0)
		return 0;
	if ((eh[4] != ELFCLASS32_ && eh[4] != ELFCLASS64_) ||
	    (eh[5] != ELFDATA2LSB_ && eh[5] != ELFDATA2MSB_) || eh[6] != EV_CURRENT_)
		return 0;
	r.wide = eh[4] == ELFCLASS64_;
	r.msb = eh[5] == ELFDATA2MSB_;
	if (r.wide && k < 64)
		return 0;
	/* e_phoff, e_phentsize, e_phnum */
	uint64_t phoff = r.wide ? get(&r, eh + 32, 8) : get(&r, eh + 28, 4);
	uint64_t phentsize = get(&r, eh + (r.wide ? 54 : 42), 2);
	uint64_t phnum = get(&r, eh + (r.wide ? 56 : 44), 2);
	if (phentsize != (r.wide ? 56u : 32u) || phnum == 0 || phnum > MAX_PHDRS)
		return 0;
	uint8_t ph[MAX_PHDRS * 56];
	k = read_at(fd, ph, phentsize * phnum, phoff);
	if (k < 0)
		return (int)k;
	if ((uint64_t)k != phentsize * phnum)
		return 0;
	unsigned segments = 0;
	for (uint64_t i = 0; i < phnum && segments < MAX_NOTE_SEGMENTS; i++) {
		const uint8_t *e = ph + i * phentsize;
		if (get(&r, e, 4) != PT_NOTE_)
			continue;
		segments++;
		uint64_t off = r.wide ? get(&r, e + 8, 8) : get(&r, e + 4, 4);
		uint64_t size = r.wide ? get(&r, e + 32, 8) : get(&r, e + 16, 4);
		uint64_t al = r.wide ? get(&r, e + 48, 8) : get(&r, e + 28, 4);
		uint8_t notes[MAX_NOTE_BYTES];
		size_t want = size < sizeof notes ? (size_t)size : sizeof notes;
		k = read_at(fd, notes, want, off);
		if (k < 0)
			return (int)k;
		int n = find_note(&r, notes, (size_t)k, al == 8 ? 8 : 4, out, cap);
		if (n > 0)
			return n;
	}
	return 0;
}

int buildid_read_path(const char *path, uint8_t *out, size_t cap)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int n = buildid_read_fd(fd, out, cap);
	syscall(SYS_close, fd);
	return n;
}

bool buildid_hex(const uint8_t *id, size_t n, char *out, size_t cap)
{
	static const char digits[] = "0123456789abcdef";
	if (cap < 2 * n + 1)
		return false;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * n] = '\0';
	return true;
}

/* ---- the table ------------------------------------------------------------------- */

bool buildid_table_next(const char *text, size_t len, size_t *pos, struct buildid_entry *e)
{
	size_t hl = sizeof BUILDID_TABLE_HEADER - 1;
	if (len < hl || memcmp(text, BUILDID_TABLE_HEADER, hl) != 0)
		return false;
	if (*pos < hl)
		*pos = hl;
	while (*pos < len) {
		const char *line = text + *pos, *nl = memchr(line, '\n', len - *pos);
		size_t ll = nl ? (size_t)(nl - line) : len - *pos;
		*pos += ll + (nl != NULL);
		const char *t1 = memchr(line, '\t', ll);
		const char *t2 = t1 ? memchr(t1 + 1, '\t', ll - (size_t)(t1 + 1 - line)) : NULL;
		if (!t2 || t1 == line || t2 == t1 + 1 || t2 + 1 == line + ll ||
		    memchr(t2 + 1, '\t', ll - (size_t)(t2 + 1 - line)))
			continue;
		e->id = line;
		e->id_len = (size_t)(t1 - line);
		e->path = t1 + 1;
		e->path_len = (size_t)(t2 - t1 - 1);
		e->real = t2 + 1;
		e->real_len = ll - (size_t)(t2 + 1 - line);
		return true;
	}
	return false;
}

static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t c = *cap ? *cap : 1024;
		while (c < *len + n + 1)
			c *= 2;
		char *b = realloc(*buf, c);
		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = c;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

int buildid_table_add(char **buf, size_t *len, size_t *cap, const char *name, const char *path_env)
{
	char found[PATH_MAX], hex[2 * BUILDID_MAX + 1];
	uint8_t id[BUILDID_MAX];
	if (*len == 0 && append(buf, len, cap, BUILDID_TABLE_HEADER,
				sizeof BUILDID_TABLE_HEADER - 1) < 0)
		return -ENOMEM;
	if (!name || !name[0])
		return 0;
	if (name[0] == '/') {
		if (strlen(name) >= sizeof found)
			return 0;
		strcpy(found, name);
	} else if (strchr(name, '/') || path_search(name, path_env, found, sizeof found) <= 0) {
		return 0;
	}
	/* "./name" (an empty PATH entry) names whatever the current directory holds: not a program */
	if (found[0] != '/')
		return 0;
	char *real = realpath(found, NULL);
	if (!real)
		return 0;
	int n = buildid_read_path(real, id, sizeof id);
	int r = 0;
	if (n <= 0 || !buildid_hex(id, (size_t)n, hex, sizeof hex) || strpbrk(found, "\t\n") ||
	    strpbrk(real, "\t\n"))
		goto out;
	size_t pos = 0, fl = strlen(found);
	struct buildid_entry e;
	while (buildid_table_next(*buf, *len, &pos, &e))
		if (e.path_len == fl && memcmp(e.path, found, fl) == 0)
			goto out;
	size_t rl = strlen(real), hl = strlen(hex);
	if (*len + hl + fl + rl + 3 > BUILDID_TABLE_MAX)
		goto out;
	if (append(buf, len, cap, hex, hl) < 0 || append(buf, len, cap, "\t", 1) < 0 ||
	    append(buf, len, cap, found, fl) < 0 || append(buf, len, cap, "\t", 1) < 0 ||
	    append(buf, len, cap, real, rl) < 0 || append(buf, len, cap, "\n", 1) < 0)
		r = -ENOMEM;
	else
		r = 1;
out:
	free(real);
	return r;
}

/* A command pattern that names one program: a plain name or an absolute path, no wildcard. */
static bool plain_program(const struct policy_rule_info *info)
{
	if (info->kind != POLICY_RULE_COMMAND || !info->pattern || !info->pattern[0])
		return false;
	if (info->match == POLICY_MATCH_EXACT)
		return true;
	return info->match == POLICY_MATCH_GLOB && !strpbrk(info->pattern, "*?[\\");
}

static size_t base_len_of(const char *p, size_t n)
{
	const char *s = memrchr(p, '/', n);
	return s ? n - (size_t)(s + 1 - p) : n;
}

/* Whether the build-id of line e is shared with a line whose file has another basename. */
static bool multi_call(const char *text, size_t len, const struct buildid_entry *e)
{
	size_t pos = 0, bl = base_len_of(e->real, e->real_len);
	struct buildid_entry o;
	while (buildid_table_next(text, len, &pos, &o)) {
		size_t ol = base_len_of(o.real, o.real_len);
		if (o.id_len == e->id_len && memcmp(o.id, e->id, e->id_len) == 0 &&
		    (ol != bl || memcmp(o.real + o.real_len - ol, e->real + e->real_len - bl, bl) != 0))
			return true;
	}
	return false;
}

int buildid_table_build(const struct policy_image *img, const char *path_env, char **out,
			size_t *len)
{
	char *buf = NULL, *kept = NULL;
	size_t n = 0, cap = 0, kn = 0, kcap = 0;
	int r = buildid_table_add(&buf, &n, &cap, NULL, path_env);
	uint32_t rules = img ? policy_image_rule_count(img) : 0;
	for (uint32_t i = 0; r >= 0 && i < rules; i++) {
		struct policy_rule_info info;
		if (policy_rule_describe(img, (int32_t)i, &info) == 0 && plain_program(&info))
			r = buildid_table_add(&buf, &n, &cap, info.pattern, path_env);
	}
	for (size_t i = 0; r >= 0 && i < cli_nprograms; i++)
		for (size_t k = 0; r >= 0 && k < CLI_MAX_NAMES && cli_programs[i].names[k]; k++) {
			const char *name = cli_programs[i].names[k];
			char v[64];
			r = buildid_table_add(&buf, &n, &cap, name, path_env);
			/* a versioned name's usual form: python3, pip3 */
			if (r >= 0 && (cli_programs[i].flags & CLI_P_VERSIONED) &&
			    (size_t)snprintf(v, sizeof v, "%s3", name) < sizeof v)
				r = buildid_table_add(&buf, &n, &cap, v, path_env);
		}
	if (r >= 0)
		r = append(&kept, &kn, &kcap, BUILDID_TABLE_HEADER, sizeof BUILDID_TABLE_HEADER - 1);
	size_t pos = 0;
	struct buildid_entry e;
	while (r >= 0 && buildid_table_next(buf, n, &pos, &e))
		if (!multi_call(buf, n, &e))
			r = append(&kept, &kn, &kcap, e.id, (size_t)(e.real + e.real_len - e.id)) < 0 ||
				    append(&kept, &kn, &kcap, "\n", 1) < 0
			    ? -ENOMEM
			    : 0;
	free(buf);
	if (r < 0) {
		free(kept);
		return -ENOMEM;
	}
	*out = kept;
	*len = kn;
	return 0;
}
