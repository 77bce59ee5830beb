/* test_buildid.c — core/buildid.c: the GNU build-id of real and made-up ELF files, and the session's table of ruled programs. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buildid.h"

static char root[64];
static char true_path[PATH_MAX]; /* /bin/true, symlinks resolved */
static char true_hex[2 * BUILDID_MAX + 1]; /* its build-id as readelf(1) prints it */

/* root/name */
static const char *at(const char *name)
{
	static char p[4][PATH_MAX];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", root, name);
	return p[k];
}

static void write_bytes(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	assert_int_equal(close(fd), 0);
}

/* The first n bytes of from (all of it: n = SIZE_MAX) copied to to, mode 0755. */
static void copy_prefix(const char *from, const char *to, size_t n)
{
	static uint8_t b[1 << 16];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	assert_true(in >= 0);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(out >= 0);
	ssize_t k;
	while (n && (k = read(in, b, n < sizeof b ? n : sizeof b)) > 0) {
		assert_int_equal(write(out, b, (size_t)k), k);
		n -= (size_t)k;
	}
	close(in);
	assert_int_equal(close(out), 0);
}

/* The build-id readelf(1) -n prints for path into hex; false when readelf is missing. */
static bool readelf_buildid(const char *path, char *hex, size_t cap)
{
	char cmd[PATH_MAX + 64], line[512];
	snprintf(cmd, sizeof cmd, "readelf -n '%s' 2>/dev/null", path);
	FILE *f = popen(cmd, "r");
	bool found = false;
	while (f && fgets(line, sizeof line, f)) {
		const char *b = strstr(line, "Build ID: ");
		if (b && !found) {
			snprintf(hex, cap, "%s", b + 10);
			hex[strcspn(hex, " \n")] = '\0';
			found = true;
		}
	}
	if (f)
		pclose(f);
	return found;
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/airlock-buildid.XXXXXX");
	if (!mkdtemp(root) || !realpath("/bin/true", true_path))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- made-up ELF files --------------------------------------------------------------- */

static void put(uint8_t *p, uint64_t v, unsigned n, bool msb)
{
	for (unsigned i = 0; i < n; i++)
		p[msb ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/*
 * An ELF file of the class (64: ELFCLASS64) and byte order given: the header,
 * two program headers (a PT_LOAD, then a PT_NOTE at 0x100 with the given
 * alignment) and notes: a "GNU" property note (type 5, 8 bytes of descriptor)
 * then the build-id note (type 3) with id (idlen bytes).  Its length in *len.
 */
static uint8_t *make_elf(bool wide, bool msb, uint64_t note_align, const uint8_t *id,
			 size_t idlen, size_t *len)
{
	static uint8_t f[1024];
	memset(f, 0, sizeof f);
	memcpy(f, "\177ELF", 4);
	f[4] = wide ? 2 : 1;
	f[5] = msb ? 2 : 1;
	f[6] = 1;
	size_t phoff = wide ? 64 : 52, phent = wide ? 56 : 32;
	put(f + 16, 2, 2, msb); /* ET_EXEC */
	if (wide) {
		put(f + 32, phoff, 8, msb);
		put(f + 52, 64, 2, msb);
		put(f + 54, phent, 2, msb);
		put(f + 56, 2, 2, msb);
	} else {
		put(f + 28, phoff, 4, msb);
		put(f + 40, 52, 2, msb);
		put(f + 42, phent, 2, msb);
		put(f + 44, 2, 2, msb);
	}
	/*
	 * The notes at 0x100: a property note whose descriptor (12 bytes) leaves the next
	 * note 4 bytes off an 8-byte boundary, so that aligning to 8 pads it; then the
	 * build-id note, its name padded to "GNU\0" and its descriptor aligned in turn.
	 */
	size_t a = note_align == 8 ? 8 : 4;
#define ALIGN(v) (((v) + a - 1) & ~(a - 1))
	size_t n = 0x100;
	put(f + n, 4, 4, msb), put(f + n + 4, 12, 4, msb), put(f + n + 8, 5, 4, msb);
	memcpy(f + n + 12, "GNU", 4);
	n = ALIGN(ALIGN(n + 16) + 12);
	put(f + n, 4, 4, msb), put(f + n + 4, idlen, 4, msb), put(f + n + 8, 3, 4, msb);
	memcpy(f + n + 12, "GNU", 4);
	size_t desc = ALIGN(n + 16);
	memcpy(f + desc, id, idlen);
	size_t end = ALIGN(desc + idlen);
#undef ALIGN
	uint8_t *ph = f + phoff + phent; /* the second: PT_NOTE */
	put(f + phoff, 1, 4, msb);       /* the first: PT_LOAD */
	put(ph, 4, 4, msb);
	if (wide) {
		put(ph + 8, 0x100, 8, msb);
		put(ph + 32, end - 0x100, 8, msb);
		put(ph + 48, note_align, 8, msb);
	} else {
		put(ph + 4, 0x100, 4, msb);
		put(ph + 16, end - 0x100, 4, msb);
		put(ph + 28, note_align, 4, msb);
	}
	*len = end;
	return f;
}

static const uint8_t sample_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
				       7, 8, 9, 10, 11, 12, 13, 14, 15, 0x10 };

static int read_made(const uint8_t *f, size_t len, uint8_t *out, size_t cap)
{
	write_bytes(at("made"), f, len);
	return buildid_read_path(at("made"), out, cap);
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_real_programs(void **state)
{
	(void)state;
	uint8_t id[BUILDID_MAX];
	char hex[2 * BUILDID_MAX + 1];
	if (!readelf_buildid(true_path, true_hex, sizeof true_hex)) {
		print_message("SKIP: readelf(1) is missing or %s has no build-id\n", true_path);
		skip();
	}
	int n = buildid_read_path(true_path, id, sizeof id);
	assert_true(n > 0);
	assert_true(buildid_hex(id, (size_t)n, hex, sizeof hex));
	assert_string_equal(hex, true_hex);
	/* the same through an open fd, the file position left alone */
	int fd = open(true_path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 7, SEEK_SET), 7);
	assert_int_equal(buildid_read_fd(fd, id, sizeof id), n);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 7);
	close(fd);
	/* a copy has the same; a cap too small for it is no build-id */
	copy_prefix(true_path, at("true-copy"), SIZE_MAX);
	assert_int_equal(buildid_read_path(at("true-copy"), id, sizeof id), n);
	assert_int_equal(buildid_read_path(true_path, id, (size_t)n - 1), 0);
	/* another program has another */
	char other[PATH_MAX], other_hex[2 * BUILDID_MAX + 1];
	if (realpath("/bin/sh", other) && readelf_buildid(other, other_hex, sizeof other_hex)) {
		n = buildid_read_path(other, id, sizeof id);
		assert_true(n > 0 && buildid_hex(id, (size_t)n, hex, sizeof hex));
		assert_string_equal(hex, other_hex);
		assert_string_not_equal(hex, true_hex);
	}
}

static void test_truncated_and_not_elf(void **state)
{
	(void)state;
	uint8_t id[BUILDID_MAX];
	/* cut inside the header, inside the program headers, before the notes */
	static const size_t cuts[] = { 0, 3, 40, 63, 64, 100, 0x200 };
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		copy_prefix(true_path, at("cut"), cuts[i]);
		struct stat st;
		assert_int_equal(stat(at("cut"), &st), 0);
		assert_int_equal((size_t)st.st_size, cuts[i]);
		print_message("cut at %zu\n", cuts[i]);
		/* the notes of /bin/true are within its first 0x400 bytes: none of these reach them */
		assert_int_equal(buildid_read_path(at("cut"), id, sizeof id), 0);
	}
	static const char script[] = "#!/bin/sh\necho hello\n";
	write_bytes(at("script"), script, sizeof script - 1);
	assert_int_equal(buildid_read_path(at("script"), id, sizeof id), 0);
	write_bytes(at("empty"), "", 0);
	assert_int_equal(buildid_read_path(at("empty"), id, sizeof id), 0);
	assert_int_equal(buildid_read_path(at("no-such-file"), id, sizeof id), -ENOENT);
	assert_true(buildid_read_path(root, id, sizeof id) < 0); /* a directory: EISDIR */
	/* a FIFO does not block: pread(2) fails on it */
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(buildid_read_path(at("fifo"), id, sizeof id), -ESPIPE);
}

static void test_made_up_files(void **state)
{
	(void)state;
	uint8_t id[BUILDID_MAX];
	size_t len;
	/* both classes, both byte orders, notes aligned to 4 and to 8 */
	for (int w = 0; w < 2; w++)
		for (int m = 0; m < 2; m++)
			for (uint64_t a = 4; a <= 8; a += 4) {
				print_message("class %d, %s, align %u\n", w ? 64 : 32, m ? "MSB" : "LSB",
					      (unsigned)a);
				const uint8_t *f = make_elf(w, m, a, sample_id, sizeof sample_id, &len);
				assert_int_equal(read_made(f, len, id, sizeof id), 20);
				assert_memory_equal(id, sample_id, 20);
			}
	/* a long build-id (--build-id=0x...): up to the cap */
	uint8_t long_id[BUILDID_MAX];
	memset(long_id, 0xab, sizeof long_id);
	const uint8_t *f = make_elf(true, false, 4, long_id, sizeof long_id, &len);
	assert_int_equal(read_made(f, len, id, sizeof id), BUILDID_MAX);
}

/* Where make_elf() puts the build-id note with 4-byte alignment: after the 28-byte property note. */
#define BID (0x100 + 28)

static void test_malformed(void **state)
{
	(void)state;
	uint8_t id[BUILDID_MAX], g[1024];
	size_t len;
	const uint8_t *f = make_elf(true, false, 4, sample_id, sizeof sample_id, &len);
	struct {
		const char *what;
		size_t off;
		unsigned n;
		uint64_t v;
	} cases[] = {
		{ "class 3", 4, 1, 3 },
		{ "byte order 0", 5, 1, 0 },
		{ "version 2", 6, 1, 2 },
		{ "phentsize 32 in a 64-bit file", 54, 2, 32 },
		{ "phnum 0", 56, 2, 0 },
		{ "phnum 65535 (PN_XNUM)", 56, 2, 65535 },
		{ "phoff past the end", 32, 8, 1u << 30 },
		{ "phoff at 2^64 - 1", 32, 8, UINT64_MAX },
		{ "note offset past the end", 64 + 56 + 8, 8, 1u << 20 },
		{ "note offset at 2^64 - 8", 64 + 56 + 8, 8, UINT64_MAX - 7 },
		{ "note size 0", 64 + 56 + 32, 8, 0 },
		{ "first note's namesz huge", 0x100, 4, 0xffffffffu },
		{ "first note's descsz huge", 0x104, 4, 0xfffffff0u },
		{ "build-id descsz past the segment", BID + 4, 4, 200 },
		{ "build-id descsz 0", BID + 4, 4, 0 },
		{ "build-id note named GNX", BID + 12 + 2, 1, 'X' },
		{ "build-id note of type 4", BID + 8, 4, 4 },
		{ "PT_NOTE turned PT_LOAD", 64 + 56, 4, 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		print_message("malformed: %s\n", cases[i].what);
		memcpy(g, f, len);
		put(g + cases[i].off, cases[i].v, cases[i].n, false);
		assert_int_equal(read_made(g, len, id, sizeof id), 0);
	}
	/* a note segment's size past the end of the file: what is there is read (1 KiB at most) */
	memcpy(g, f, len);
	put(g + 64 + 56 + 32, UINT64_MAX, 8, false);
	assert_int_equal(read_made(g, len, id, sizeof id), 20);
	/* and unchanged, it is read */
	memcpy(g, f, len);
	assert_int_equal(read_made(g, len, id, sizeof id), 20);
}

static void test_hex(void **state)
{
	(void)state;
	char hex[8];
	static const uint8_t b[] = { 0x00, 0x9f, 0xff };
	assert_true(buildid_hex(b, 3, hex, 7));
	assert_string_equal(hex, "009fff");
	assert_false(buildid_hex(b, 3, hex, 6));
	assert_true(buildid_hex(b, 0, hex, 1));
	assert_string_equal(hex, "");
}

/* The table's lines, as "PATH" each on its own line, in order. */
static void table_paths(const char *t, size_t len, char *out, size_t cap)
{
	size_t pos = 0, n = 0;
	struct buildid_entry e;
	out[0] = '\0';
	while (buildid_table_next(t, len, &pos, &e))
		n += (size_t)snprintf(out + n, cap - n, "%.*s\n", (int)e.path_len, e.path);
}

static void test_table(void **state)
{
	(void)state;
	struct test_policy tp;
	char *t = NULL, paths[4096], want[4096];
	size_t len = 0;
	if (!true_hex[0] && !readelf_buildid(true_path, true_hex, sizeof true_hex)) {
		print_message("SKIP: readelf(1) is missing or %s has no build-id\n", true_path);
		skip();
	}
	/*
	 * bin/ holds: mytrue (a copy of /bin/true), alias (a symlink to it: the same file),
	 * t1 and t2 (two copies of a made-up ELF file: one build-id, files of other
	 * basenames, a multi-call binary as far as the table can tell), a script, and
	 * nothing for `missing`.
	 */
	size_t elen;
	const uint8_t *elf = make_elf(true, false, 4, sample_id, sizeof sample_id, &elen);
	assert_int_equal(mkdir(at("bin"), 0755), 0);
	copy_prefix(true_path, at("bin/mytrue"), SIZE_MAX);
	assert_int_equal(symlink("mytrue", at("bin/alias")), 0);
	write_bytes(at("bin/t1"), elf, elen);
	write_bytes(at("bin/t2"), elf, elen);
	write_bytes(at("bin/script"), "#!/bin/sh\n", 10);
	char yaml[2048];
	snprintf(yaml, sizeof yaml,
		 "version: 1\n"
		 "deny:\n"
		 "  - command: mytrue\n"
		 "  - command: alias\n    match: exact\n"
		 "  - command: t1\n"
		 "  - command: t2\n"
		 "  - command: script\n"
		 "  - command: missing\n"
		 "  - command: \"my*\"\n"
		 "  - command: \"^x$\"\n    match: regex\n"
		 "  - command: %s/bin/mytrue\n"
		 "ask:\n"
		 "  - command: mytrue\n    args: push\n",
		 root);
	test_policy_build(&tp, yaml);
	assert_int_equal(buildid_table_build(tp.img, at("bin"), &t, &len), 0);
	assert_true(len >= sizeof BUILDID_TABLE_HEADER - 1);
	assert_memory_equal(t, BUILDID_TABLE_HEADER, sizeof BUILDID_TABLE_HEADER - 1);
	table_paths(t, len, paths, sizeof paths);
	/* mytrue once (its second rule adds nothing), alias (same file), the rule's path
	   once more (already there: no); t1 and t2 dropped; no script, no pattern */
	snprintf(want, sizeof want, "%s\n%s\n", at("bin/mytrue"), at("bin/alias"));
	assert_string_equal(paths, want);
	size_t pos = 0;
	struct buildid_entry e;
	assert_true(buildid_table_next(t, len, &pos, &e));
	assert_int_equal(e.id_len, strlen(true_hex));
	assert_memory_equal(e.id, true_hex, e.id_len);
	assert_int_equal(e.real_len, strlen(at("bin/mytrue")));
	assert_true(buildid_table_next(t, len, &pos, &e));
	assert_int_equal(e.real_len, strlen(at("bin/mytrue"))); /* alias's file is mytrue */
	assert_memory_equal(e.real, at("bin/mytrue"), e.real_len);
	free(t);
	test_policy_free(&tp);
}

static void test_table_parse(void **state)
{
	(void)state;
	static const char text[] = BUILDID_TABLE_HEADER "ab\t/p\t/r\n"
						  "bad line\n"
						  "\t/p\t/r\n"
						  "ab\t\t/r\n"
						  "ab\t/p\t\n"
						  "ab\t/p\t/r\textra\n"
						  "cd\t/q\t/s"; /* no final newline */
	size_t pos = 0;
	struct buildid_entry e;
	assert_true(buildid_table_next(text, sizeof text - 1, &pos, &e));
	assert_int_equal(e.id_len, 2);
	assert_memory_equal(e.path, "/p", 2);
	assert_true(buildid_table_next(text, sizeof text - 1, &pos, &e));
	assert_memory_equal(e.id, "cd", 2);
	assert_int_equal(e.real_len, 2);
	assert_memory_equal(e.real, "/s", 2);
	assert_false(buildid_table_next(text, sizeof text - 1, &pos, &e));
	/* another header: no lines */
	pos = 0;
	assert_false(buildid_table_next("airlock-programs 2\nab\t/p\t/r\n", 28, &pos, &e));
	pos = 0;
	assert_false(buildid_table_next("", 0, &pos, &e));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_programs),
		cmocka_unit_test(test_truncated_and_not_elf),
		cmocka_unit_test(test_made_up_files),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_parse),
	};
	return cmocka_run_group_tests_name("GNU build-id", tests, setup, teardown);
}
