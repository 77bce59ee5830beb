/* test_checkpoint_reader.c — the checkpoint reader on stores crafted in a temporary directory: the journal folded (escapes, damaged lines, a cut last line), objects checked, the kept-aside rule, --dry-run changing nothing, a planted symlink not followed, prune, resolve. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "launcher/checkpoint/catalog.h"
#include "launcher/checkpoint/diff.h"
#include "launcher/checkpoint/journal.h"
#include "launcher/checkpoint/store.h"
#include "launcher/checkpoint/undo.h"

/* ---- fixtures -------------------------------------------------------------------- */

static char base[PATH_MAX], root[PATH_MAX], ws[PATH_MAX];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 65536);
	size_t n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void fmt(char *out, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *out, size_t cap, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(out, cap, f, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < cap);
}

static int setup(void **state)
{
	(void)state;
	snprintf(base, sizeof base, "/tmp/airlock-ckpt.XXXXXX");
	assert_non_null(mkdtemp(base));
	fmt(root, sizeof root, "%s/checkpoints", base);
	fmt(ws, sizeof ws, "%s/ws", base);
	assert_int_equal(mkdir(root, 0700), 0);
	assert_int_equal(mkdir(ws, 0755), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[PATH_MAX + 16];
	fmt(cmd, sizeof cmd, "rm -rf '%s'", base);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* A store for id: meta (started at started_ns, ended unless ended == 0), an empty journal. */
static void make_store(const char *id, long long started_ns, long long ended_ns)
{
	char p[PATH_MAX], meta[PATH_MAX * 2];
	fmt(p, sizeof p, "%s/%s", root, id);
	assert_int_equal(mkdir(p, 0700), 0);
	fmt(p, sizeof p, "%s/%s/objects", root, id);
	assert_int_equal(mkdir(p, 0700), 0);
	fmt(p, sizeof p, "%s/%s/lock", root, id);
	put(p, "");
	int n = snprintf(meta, sizeof meta, "version=1\nsession=%s\nworkspace=%s\nstarted=%lld\nmode=link\nignored=0\ngit=0\ncommand=agent\n",
			 id, ws, started_ns);
	if (ended_ns)
		snprintf(meta + n, sizeof meta - (size_t)n, "ended=%lld\nexit=0\n", ended_ns);
	fmt(p, sizeof p, "%s/%s/meta", root, id);
	put(p, meta);
}

static void journal_add(const char *id, const char *line)
{
	char p[PATH_MAX];
	fmt(p, sizeof p, "%s/%s/journal", root, id);
	FILE *f = fopen(p, "a");
	assert_non_null(f);
	fputs(line, f);
	fclose(f);
}

/* Saves ws/rel as the writer would before an overwrite (copy) or a removal (link): object obj. */
static void save(const char *id, const char *rel, unsigned obj, bool by_link)
{
	char src[PATH_MAX], dst[PATH_MAX], line[PATH_MAX * 2], esc[PATH_MAX];
	struct stat st;
	fmt(src, sizeof src, "%s/%s", ws, rel);
	fmt(dst, sizeof dst, "%s/%s/objects/%u", root, id, obj);
	assert_int_equal(lstat(src, &st), 0);
	if (by_link) {
		assert_int_equal(link(src, dst), 0);
	} else {
		char *text = slurp(src);
		put(dst, text);
		free(text);
	}
	assert_true(store_escape(rel, esc, sizeof esc) >= 0);
	fmt(line, sizeof line, "save\t%u\t%s\t%o\t%lld\t%lld\t%s\n", obj, by_link ? "link" : "copy",
	    (unsigned)st.st_mode, (long long)st.st_size,
	    (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, esc);
	journal_add(id, line);
}

/* The "end" record of ws/rel as it is now. */
static void end_rec(const char *id, const char *rel)
{
	char p[PATH_MAX], line[PATH_MAX * 2], esc[PATH_MAX];
	struct stat st;
	fmt(p, sizeof p, "%s/%s", ws, rel);
	assert_true(store_escape(rel, esc, sizeof esc) >= 0);
	if (lstat(p, &st) < 0)
		fmt(line, sizeof line, "end\t-\t0\t0\t0\t%s\n", esc);
	else
		fmt(line, sizeof line, "end\t%c\t%llu\t%lld\t%lld\t%s\n", ckpt_type_of(&st),
		    (unsigned long long)st.st_ino, (long long)st.st_size, ckpt_mtime_ns(&st), esc);
	journal_add(id, line);
}

static void ws_put(const char *rel, const char *text)
{
	char p[PATH_MAX];
	fmt(p, sizeof p, "%s/%s", ws, rel);
	put(p, text);
}

static char *ws_get(const char *rel)
{
	char p[PATH_MAX];
	fmt(p, sizeof p, "%s/%s", ws, rel);
	return slurp(p);
}

static void expect_file(const char *rel, const char *want)
{
	char *got = ws_get(rel);
	if (!got)
		fail_msg("%s is missing", rel);
	if (strcmp(got, want) != 0)
		fail_msg("%s holds \"%s\", wanted \"%s\"", rel, got, want);
	free(got);
}

static bool ws_exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;
	fmt(p, sizeof p, "%s/%s", ws, rel);
	return lstat(p, &st) == 0;
}

/* Runs undo on id; the action lines into *out (malloc'd). */
static int undo_of(const char *id, bool dry, const char *const *paths, size_t npaths, char **out,
		   struct ckpt_undo_result *res)
{
	struct ckpt_store s;
	char err[256];
	assert_int_equal(ckpt_store_open(root, id, dry ? 0 : LOCK_EX, &s, err, sizeof err), 0);
	size_t len;
	FILE *o = open_memstream(out, &len);
	FILE *e = fopen("/dev/null", "w");
	struct ckpt_undo_options opt = { .paths = paths, .npaths = npaths, .dry_run = dry, .out = o, .err = e };
	int r = ckpt_undo(&s, &opt, res);
	fclose(o);
	fclose(e);
	ckpt_store_close(&s);
	return r;
}

/* ---- the journal ------------------------------------------------------------------- */

static void test_journal_fold(void **state)
{
	(void)state;
	static const char text[] =
		"save\t1\tlink\t100644\t5\t1000\ta/b%09tab%25pct\n" /* a tab and a '%' in the name */
		"create\tfile\tnew\n"
		"save\t2\tcopy\t100600\t7\t2000\ta/b%09tab%25pct\n" /* a later save of the path wins */
		"dir\t750\ta\n"
		"refused\t13\tquiet\n"
		"bogus\tline\n"                                 /* unknown kind: damaged */
		"save\t3\tlink\t644\t1\t1\t../escape\n"         /* a path out: damaged */
		"save\t4\tlink\t644\t1\t1\t/abs\n"              /* absolute: damaged */
		"create\tfile\tx%0\n"                           /* a bad escape: damaged */
		"end\tf\t77\t7\t2000\ta/b%09tab%25pct\n"
		"end\t-\t0\t0\t0\tnew\n"
		"create\tfile\tcut"; /* no '\n': a killed writer's last line */
	struct ckpt_journal j;
	assert_int_equal(ckpt_journal_parse(text, strlen(text), &j), 0);
	assert_int_equal(j.n, 3);
	assert_int_equal(j.bad_lines, 4);
	assert_int_equal(j.first_bad, 6);
	assert_true(j.cut);
	assert_true(j.any_end);
	assert_int_equal(j.saves, 1);
	assert_int_equal(j.creates, 1);
	const struct ckpt_entry *e = ckpt_journal_find(&j, "a/b\ttab%pct");
	assert_non_null(e);
	assert_true(e->saved);
	assert_int_equal(e->save.obj, 2);
	assert_false(e->save.link);
	assert_int_equal(e->save.mode, 0100600);
	assert_int_equal(e->save.size, 7);
	assert_true(e->ended);
	assert_int_equal(e->end.ino, 77);
	assert_int_equal(j.nlinks, 1); /* the superseded link save is still an inode of the workspace's */
	assert_int_equal(j.links[0].obj, 1);
	assert_string_equal(j.links[0].path, "a/b\ttab%pct");
	e = ckpt_journal_find(&j, "a");
	assert_true(e && e->dir && e->dir_mode == 0750);
	e = ckpt_journal_find(&j, "new");
	assert_true(e && e->created && e->create_kind == 'f' && e->ended && e->end.type == '-');
	assert_null(ckpt_journal_find(&j, "quiet"));
	assert_null(ckpt_journal_find(&j, "cut"));
	ckpt_journal_free(&j);
}

static void test_journal_long_line(void **state)
{
	(void)state;
	size_t n = STORE_LINE_MAX + 100;
	char *text = malloc(n + 64);
	int k = snprintf(text, 64, "create\tfile\t");
	memset(text + k, 'x', n);
	strcpy(text + k + n, "\ncreate\tdir\tok\n");
	struct ckpt_journal j;
	assert_int_equal(ckpt_journal_parse(text, strlen(text), &j), 0);
	assert_int_equal(j.bad_lines, 1);
	assert_int_equal(j.n, 1);
	assert_string_equal(j.e[0].path, "ok");
	ckpt_journal_free(&j);
	free(text);
}

/* ---- undo -------------------------------------------------------------------------- */

static const char ID[] = "0123456789abcdef";

/* The session: a.txt overwritten (copy), b.txt removed (link), c.txt renamed to d.txt (link),
   new.txt created; the user edits a.txt afterwards. */
static void session(void)
{
	make_store(ID, now_ns(), now_ns());
	ws_put("a.txt", "a at the start\n");
	ws_put("b.txt", "b at the start\n");
	ws_put("c.txt", "c at the start\n");
	char p[PATH_MAX], q[PATH_MAX];
	save(ID, "a.txt", 1, false);
	ws_put("a.txt", "a by the sandbox\n");
	save(ID, "b.txt", 2, true);
	fmt(p, sizeof p, "%s/b.txt", ws);
	assert_int_equal(unlink(p), 0);
	save(ID, "c.txt", 3, true);
	fmt(p, sizeof p, "%s/c.txt", ws);
	fmt(q, sizeof q, "%s/d.txt", ws);
	assert_int_equal(rename(p, q), 0);
	journal_add(ID, "create\trename\td.txt\n");
	ws_put("new.txt", "new\n");
	journal_add(ID, "create\tfile\tnew.txt\n");
	end_rec(ID, "a.txt");
	end_rec(ID, "b.txt");
	end_rec(ID, "c.txt");
	end_rec(ID, "d.txt");
	end_rec(ID, "new.txt");
}

static void test_undo_kept_aside(void **state)
{
	(void)state;
	session();
	ws_put("a.txt", "the user's words\n"); /* after the session: a new inode's worth of change */
	char *out;
	struct ckpt_undo_result res;
	assert_int_equal(undo_of(ID, false, NULL, 0, &out, &res), 0);
	expect_file("a.txt", "a at the start\n");
	expect_file("a.txt.airlock-kept-01234567", "the user's words\n");
	expect_file("b.txt", "b at the start\n");
	expect_file("c.txt", "c at the start\n");
	assert_false(ws_exists("d.txt"));
	assert_false(ws_exists("new.txt"));
	assert_non_null(strstr(out, "keep a.txt (changed outside the sandbox) as a.txt.airlock-kept-01234567\n"));
	assert_non_null(strstr(out, "remove d.txt\n"));
	assert_int_equal(res.kept, 1);
	assert_int_equal(res.not_restored, 0);
	free(out);
	/* the store is whole: a second undo finds the checkpoint's state and does nothing */
	assert_int_equal(undo_of(ID, false, NULL, 0, &out, &res), 0);
	assert_string_equal(out, "");
	free(out);
	char p[PATH_MAX];
	fmt(p, sizeof p, "%s/%s/objects/2", root, ID);
	struct stat st;
	assert_int_equal(stat(p, &st), 0); /* never linked back: the object is its own inode */
	assert_int_equal(st.st_nlink, 1);
}

static void test_undo_dry_run(void **state)
{
	(void)state;
	session();
	ws_put("a.txt", "the user's words\n");
	char *out;
	struct ckpt_undo_result res;
	assert_int_equal(undo_of(ID, true, NULL, 0, &out, &res), 0);
	assert_non_null(strstr(out, "restore b.txt\n"));
	assert_non_null(strstr(out, "remove new.txt\n"));
	assert_non_null(strstr(out, "keep a.txt (changed outside the sandbox) as a.txt.airlock-kept-01234567\n"));
	free(out);
	expect_file("a.txt", "the user's words\n");
	expect_file("d.txt", "c at the start\n");
	expect_file("new.txt", "new\n");
	assert_false(ws_exists("b.txt"));
	assert_false(ws_exists("a.txt.airlock-kept-01234567"));
	char p[PATH_MAX];
	fmt(p, sizeof p, "%s/%s/meta", root, ID);
	char *meta = slurp(p);
	assert_null(strstr(meta, "undone="));
	free(meta);
}

static void test_undo_damaged_object(void **state)
{
	(void)state;
	session();
	char p[PATH_MAX];
	fmt(p, sizeof p, "%s/%s/objects/1", root, ID);
	assert_int_equal(truncate(p, 4), 0); /* a.txt's copy cut short */
	fmt(p, sizeof p, "%s/%s/objects/2", root, ID);
	assert_int_equal(unlink(p), 0); /* b.txt's link gone */
	char *out;
	struct ckpt_undo_result res;
	assert_int_equal(undo_of(ID, false, NULL, 0, &out, &res), 1);
	assert_non_null(strstr(out, "cannot restore a.txt: checkpoint object 1 is damaged/missing (size 4, the record says 15)\n"));
	assert_non_null(strstr(out, "cannot restore b.txt: checkpoint object 2 is damaged/missing (missing)\n"));
	assert_int_equal(res.not_restored, 2);
	expect_file("a.txt", "a by the sandbox\n"); /* not touched, not part-written */
	assert_false(ws_exists("b.txt"));
	expect_file("c.txt", "c at the start\n"); /* the rest restored */
	assert_false(ws_exists("new.txt"));
	free(out);
}

static void test_undo_link_object_modified(void **state)
{
	(void)state;
	session();
	/* b's linked inode written after it was saved (its mtime moves): not trusted */
	char p[PATH_MAX];
	fmt(p, sizeof p, "%s/%s/objects/2", root, ID);
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = 1000 } };
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	char *out;
	struct ckpt_undo_result res;
	assert_int_equal(undo_of(ID, false, NULL, 0, &out, &res), 1);
	assert_non_null(strstr(out, "cannot restore b.txt: checkpoint object 2 is damaged/missing (modified since it was saved"));
	free(out);
}

static void test_undo_paths_and_created_changed(void **state)
{
	(void)state;
	session();
	ws_put("new.txt", "the user kept writing here\n"); /* a created file the user changed */
	char *out;
	struct ckpt_undo_result res;
	const char *only[] = { "new.txt", "b.txt" };
	assert_int_equal(undo_of(ID, false, only, 2, &out, &res), 0);
	expect_file("b.txt", "b at the start\n");
	expect_file("new.txt", "the user kept writing here\n");
	assert_non_null(strstr(out, "keep new.txt (changed outside the sandbox after it was created)\n"));
	expect_file("a.txt", "a by the sandbox\n"); /* not named: left */
	assert_true(ws_exists("d.txt"));
	free(out);
}

static void test_undo_symlink_planted(void **state)
{
	(void)state;
	/* sub/x.txt removed in the session; afterwards sub is replaced by a symlink to a directory
	   outside the workspace (the journal says nothing of sub itself) */
	make_store(ID, now_ns(), now_ns());
	char p[PATH_MAX], outside[PATH_MAX];
	fmt(p, sizeof p, "%s/sub", ws);
	assert_int_equal(mkdir(p, 0755), 0);
	ws_put("sub/x.txt", "x\n");
	save(ID, "sub/x.txt", 1, true);
	fmt(p, sizeof p, "%s/sub/x.txt", ws);
	assert_int_equal(unlink(p), 0);
	end_rec(ID, "sub/x.txt");
	fmt(p, sizeof p, "%s/sub", ws);
	assert_int_equal(rmdir(p), 0);
	fmt(outside, sizeof outside, "%s/outside", base);
	assert_int_equal(mkdir(outside, 0755), 0);
	assert_int_equal(symlink(outside, p), 0);
	char *out;
	struct ckpt_undo_result res;
	assert_int_equal(undo_of(ID, false, NULL, 0, &out, &res), 1);
	fmt(p, sizeof p, "%s/x.txt", outside);
	struct stat st;
	assert_int_not_equal(lstat(p, &st), 0); /* nothing written through the symlink */
	assert_non_null(strstr(out, "cannot restore sub/x.txt: a parent directory is not a directory"));
	free(out);
}

static void test_undo_killed_launcher(void **state)
{
	(void)state;
	make_store(ID, now_ns(), 0);
	ws_put("a.txt", "start\n");
	save(ID, "a.txt", 1, false);
	ws_put("a.txt", "sandbox\n");
	ws_put("n.txt", "new\n");
	journal_add(ID, "create\tfile\tn.txt\n");
	/* no end records: nothing says what the sandbox left, so nothing there is lost */
	char *out;
	struct ckpt_undo_result res;
	assert_int_equal(undo_of(ID, false, NULL, 0, &out, &res), 0);
	expect_file("a.txt", "start\n");
	assert_true(ws_exists("n.txt"));
	assert_true(res.kept >= 2);
	free(out);
}

/* ---- diff ---------------------------------------------------------------------------- */

static void test_diff_stat(void **state)
{
	(void)state;
	session();
	struct ckpt_store s;
	char err[256], *out;
	size_t len;
	assert_int_equal(ckpt_store_open(root, ID, 0, &s, err, sizeof err), 0);
	FILE *o = open_memstream(&out, &len), *e = fopen("/dev/null", "w");
	struct ckpt_diff_options opt = { .stat = true, .out = o, .err = e };
	assert_int_equal(ckpt_diff(&s, &opt), 0);
	fclose(o);
	fclose(e);
	assert_string_equal(out, "M a.txt\nD b.txt\nR c.txt -> d.txt\nA new.txt\n");
	free(out);
	ckpt_store_close(&s);
}

static void test_sha256(void **state)
{
	(void)state;
	char p[PATH_MAX], hex[65];
	fmt(p, sizeof p, "%s/abc", base);
	put(p, "abc");
	int fd = open(p, O_RDONLY);
	assert_int_equal(ckpt_sha256_fd(fd, hex), 0);
	/* FIPS 180-2's example */
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_false(ckpt_fd_binary(fd));
	close(fd);
}

/* ---- the catalog ----------------------------------------------------------------------- */

static void test_prune(void **state)
{
	(void)state;
	long long day = 86400LL * 1000000000LL, now = now_ns();
	make_store("aaaa000000000001", now - 10 * day, now - 10 * day); /* old */
	make_store("aaaa000000000002", now - 3 * day, now - 3 * day);
	make_store("aaaa000000000003", now - 2 * day, now - 2 * day);
	make_store("aaaa000000000004", now - 1 * day, now - 1 * day);
	make_store("aaaa000000000005", now - 20 * day, 0); /* killed long ago */
	make_store("aaaa000000000006", now - 30 * day, now - 30 * day); /* old but running */
	char p[PATH_MAX];
	fmt(p, sizeof p, "%s/aaaa000000000006/lock", root);
	int lfd = open(p, O_RDONLY);
	assert_int_equal(flock(lfd, LOCK_EX), 0);
	char err[256] = "";
	/* keep the newest 3 and nothing older than 7 days: 1 and 5 (old) go, 6 runs */
	assert_int_equal(checkpoint_prune(root, 3, 7, err, sizeof err), 2);
	struct ckpt_info *v;
	size_t n;
	assert_int_equal(ckpt_list(root, &v, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(v[0].id, "aaaa000000000004");
	assert_string_equal(v[1].id, "aaaa000000000003");
	assert_string_equal(v[2].id, "aaaa000000000002");
	assert_string_equal(v[3].id, "aaaa000000000006");
	assert_true(v[3].running);
	ckpt_list_free(v, n);
	/* the count alone: beyond the newest 2, 2 goes (6 still runs) */
	assert_int_equal(checkpoint_prune(root, 2, 0, err, sizeof err), 1);
	assert_int_equal(ckpt_list(root, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[2].id, "aaaa000000000006");
	ckpt_list_free(v, n);
	assert_int_equal(checkpoint_prune(root, 0, 0, err, sizeof err), 0); /* both bounds off */
	assert_int_equal(ckpt_forget(root, "aaaa000000000006"), -EBUSY);
	close(lfd);
	assert_int_equal(ckpt_forget(root, "aaaa000000000006"), 0);
}

static void test_resolve(void **state)
{
	(void)state;
	make_store("abcd000000000001", now_ns(), now_ns());
	make_store("abcd000000000002", now_ns() + 5, now_ns());
	char id[CKPT_ID_LEN + 1];
	size_t hits;
	assert_int_equal(ckpt_resolve(root, "abcd", id, &hits), -EEXIST);
	assert_int_equal(hits, 2);
	assert_int_equal(ckpt_resolve(root, "ABCD000000000002", id, &hits), 0);
	assert_string_equal(id, "abcd000000000002");
	assert_int_equal(ckpt_resolve(root, "abc", id, &hits), -EINVAL); /* fewer than 4 */
	assert_int_equal(ckpt_resolve(root, "src", id, &hits), -EINVAL);
	assert_int_equal(ckpt_resolve(root, "ffff", id, &hits), -ENOENT);
	char sub[PATH_MAX];
	fmt(sub, sizeof sub, "%s/deep/er", ws);
	assert_int_equal(ckpt_for_dir(root, sub, id), 0);
	assert_string_equal(id, "abcd000000000002"); /* the newest covering it */
	assert_int_equal(ckpt_for_dir(root, base, id), -ENOENT);
	/* a damaged meta is refused, not trusted */
	char p[PATH_MAX];
	fmt(p, sizeof p, "%s/abcd000000000001/meta", root);
	put(p, "version=1\nsession=abcd000000000001\n");
	struct ckpt_store s;
	char err[256];
	assert_int_equal(ckpt_store_open(root, "abcd000000000001", 0, &s, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "damaged"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_fold),
		cmocka_unit_test(test_journal_long_line),
		cmocka_unit_test_setup_teardown(test_undo_kept_aside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_undo_dry_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_undo_damaged_object, setup, teardown),
		cmocka_unit_test_setup_teardown(test_undo_link_object_modified, setup, teardown),
		cmocka_unit_test_setup_teardown(test_undo_paths_and_created_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_undo_symlink_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_undo_killed_launcher, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_stat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sha256, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prune, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
