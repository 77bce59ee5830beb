/*
 * buildid.h — what an ELF program is, not what it is called: its GNU
 * build-id, and the session's table of the build-ids of the programs the
 * policy's exec rules name, so that `cp /usr/bin/git ./g; ./g push` meets
 * the rules written for `git`.
 */
#ifndef AIRLOCK_BUILDID_H
#define AIRLOCK_BUILDID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest build-id kept, in bytes (GNU ld writes 20, sha1; --build-id=0x... can be longer). */
#define BUILDID_MAX 64

/*
 * Reads the GNU build-id of the ELF file open at fd into out (cap bytes):
 * the descriptor of the note named "GNU" with type NT_GNU_BUILD_ID (3),
 * found through the program headers' PT_NOTE segments (elf(5): "Notes
 * (Nhdr)"; the gABI's note section layout: namesz, descsz, type, the name
 * and the descriptor each padded to the segment's alignment, 4 or 8).
 * Both classes (ELFCLASS32, ELFCLASS64) and both byte orders are read.
 *
 * Bounded: reads with pread(2) only the 64-byte ELF header, at most 64
 * program headers (one read) and at most 4 PT_NOTE segments of at most
 * 1 KiB each; the file position is left alone.
 *
 * Returns the build-id's length in bytes (1..cap), or 0 when the file has
 * none: not ELF (a script, a text file), another class or version, a
 * truncated or malformed header, an entry size that is not its class's,
 * offsets past the end, no such note, or a build-id longer than cap.
 * Nothing in the file makes it fail otherwise.  -errno when pread(2) fails.
 * Calls raw syscalls only, allocates nothing: safe in the shim's hooks and
 * in a vfork(2) child.
 */
int buildid_read_fd(int fd, uint8_t *out, size_t cap);

/*
 * As buildid_read_fd() on path, opened O_RDONLY|O_CLOEXEC (O_NONBLOCK too,
 * so that a FIFO named like a program does not block) relative to the
 * current directory and closed again.  -errno when open(2) fails.
 */
int buildid_read_path(const char *path, uint8_t *out, size_t cap);

/* Writes the n bytes at id to out as lowercase hex, NUL-terminated; false when it does not fit cap. */
bool buildid_hex(const uint8_t *id, size_t n, char *out, size_t cap);

/*
 * ---- The session's table --------------------------------------------------
 *
 * The file `programs` in the session directory (read-only in the sandbox at
 * /run/airlock/programs), written by the launcher at session start, read by
 * the shim.  Text, one program a line, fields separated by one TAB:
 *
 *   airlock-programs 1                 (the first line, as is)
 *   BUILDID<TAB>PATH<TAB>REAL
 *
 * BUILDID the program's build-id in lowercase hex; PATH the program as the
 * rules name it: what PATH resolves a ruled name to (made absolute, symlinks
 * not resolved, so its basename is the ruled name: /usr/bin/python3) or the
 * path a rule names; REAL that file with every symlink resolved
 * (realpath(3)).  No field holds a TAB or a newline.  Several lines may
 * share a build-id (python and python3 are one file).  At most
 * BUILDID_TABLE_MAX bytes.
 */
#define BUILDID_TABLE_HEADER "airlock-programs 1\n"
#define BUILDID_TABLE_MAX (256u * 1024u)
#define BUILDID_TABLE_NAME "programs"

/* One line of the table, pointing into it (fields not NUL-terminated). */
struct buildid_entry {
	const char *id, *path, *real;
	size_t id_len, path_len, real_len;
};

/*
 * The next well-formed line of the table text (len bytes, the header
 * included) from *pos (start at 0) into *e; false after the last.  A line
 * without three non-empty fields is skipped; a text that does not start
 * with BUILDID_TABLE_HEADER has no lines.  Allocates nothing.
 */
bool buildid_table_next(const char *text, size_t len, size_t *pos, struct buildid_entry *e);

/*
 * Appends to the table being built in *buf (*len bytes of *cap, malloc'ed,
 * grown with realloc(3); start with all three zero, and the header is
 * written first) a line for the program named `name` (a basename, looked
 * up along path_env as execvp(3) does, core/pathsearch.h; or an absolute
 * path, taken as it is), when that program exists, is an ELF file with a
 * build-id, and its line is not there yet.  Returns 1 when a line was
 * added, 0 when none was (no such program, no build-id, a TAB or newline
 * in a path, already listed, or the table would pass BUILDID_TABLE_MAX),
 * -ENOMEM.  For the launcher and its tests (allocates).
 */
int buildid_table_add(char **buf, size_t *len, size_t *cap, const char *name, const char *path_env);

struct policy_image;

/*
 * The table for a policy: a line for each program a command rule names by
 * a plain name (match glob or exact, no wildcard, no '/': `git`, `rm`) or
 * by an absolute path, and for each name of policy/cli.c's table (git, npm,
 * pip, python, python3, ...: a copy of python3 run as `-m pip` is pip), as
 * buildid_table_add() finds them along path_env (NULL: the default PATH).
 * Then the lines of a multi-call binary are dropped: a build-id whose files
 * (REAL) have different basenames (busybox's `ls` and `rm` as hardlinks, or
 * uutils'), since such a binary is whatever argv[0] says and the name rules
 * already see that.  On success *out is the malloc'ed text (the caller
 * frees it; at least the header), *len its length, and 0 is returned;
 * -ENOMEM otherwise.
 */
int buildid_table_build(const struct policy_image *img, const char *path_env, char **out,
			size_t *len);

#endif
