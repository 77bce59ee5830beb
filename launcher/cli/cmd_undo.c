/* cmd_undo.c — `airlock diff` and `airlock undo`: what a session changed in its workspace, and putting it back, from its checkpoint. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "launcher/checkpoint/catalog.h"
#include "launcher/checkpoint/diff.h"
#include "launcher/checkpoint/store.h"
#include "launcher/checkpoint/undo.h"
#include "launcher/cli/launcher.h"

const char cmd_diff_usage[] =
	"usage: airlock diff [--stat] [SESSION] [PATH...]\n"
	"\n"
	"Shows what a session changed in its workspace, from its checkpoint: files\n"
	"created (A), modified (M), deleted (D) and renamed (R), as unified diffs for\n"
	"text and sizes and SHA-256 digests for binary files; and in a git workspace\n"
	"the references moved, created and deleted, HEAD, the stashes dropped or added,\n"
	"and the commits made.  --stat prints one \"X PATH\" line per file instead.\n"
	"\n"
	"SESSION is a checkpoint's id or a unique start of it (4 hex digits or more);\n"
	"without it, the newest checkpoint of the workspace holding the current\n"
	"directory.  PATHs (relative to the current directory, inside the workspace)\n"
	"limit the report to those files and what is beneath them.\n"
	"\n"
	"Exit status: 0 shown; 1 the checkpoint is damaged (said); 2 usage, or no\n"
	"such checkpoint.\n";

const char cmd_undo_usage[] =
	"usage: airlock undo [--dry-run] [SESSION] [PATH...]\n"
	"       airlock undo --list\n"
	"       airlock undo --forget SESSION | --forget --all\n"
	"\n"
	"Puts the workspace back as it was when the session started, whole or for the\n"
	"PATHs named (relative to the current directory, inside the workspace): what\n"
	"the sandbox created is removed, what it deleted or overwrote is restored,\n"
	"git's repository included.  A file changed outside the sandbox since the\n"
	"sandbox left it is never overwritten: it is moved aside to\n"
	"PATH.airlock-kept-XXXXXXXX (the session id's first 8 hex digits), and said.\n"
	"Every saved file is checked before anything changes; one whose saved copy is\n"
	"damaged is left as it is and named.  Undo can be run again.\n"
	"\n"
	"  --dry-run   print what would be done (restore, remove, keep, cannot\n"
	"              restore), change nothing\n"
	"  --list      the checkpoints, newest first: id, start (local time), state,\n"
	"              files saved and created, size, workspace, command\n"
	"  --forget    delete a checkpoint (or --all of them); not a running one\n"
	"\n"
	"SESSION is a checkpoint's id or a unique start of it (4 hex digits or more);\n"
	"without it, the newest checkpoint of the workspace holding the current\n"
	"directory.\n"
	"\n"
	"Exit status: 0 done; 1 something was not restored, or the session is still\n"
	"running; 2 usage, or no such checkpoint.\n";

static char *checkpoints_root(void)
{
	const char *home = getenv("HOME");
	return store_root(home && home[0] == '/' ? home : NULL);
}

/* Normalises arg (relative to cwd, or absolute) lexically and makes it relative to ws; NULL when
   outside it (said). */
static char *ws_relative(const char *cmd, const char *ws, const char *cwd, const char *arg)
{
	char abs[PATH_MAX * 2];
	if (arg[0] == '/')
		snprintf(abs, sizeof abs, "%s", arg);
	else
		snprintf(abs, sizeof abs, "%s/%s", cwd, arg);
	/* lexical normalisation: "", ".", ".." parts */
	char out[PATH_MAX * 2];
	size_t n = 0;
	for (char *p = abs; *p;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *e = strchr(p, '/');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == 1 && p[0] == '.') {
		} else if (l == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
		} else if (n + l + 2 < sizeof out) {
			out[n++] = '/';
			memcpy(out + n, p, l);
			n += l;
		}
		p += l;
	}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, sizeof out, "/");
	size_t wl = strlen(ws);
	while (wl > 1 && ws[wl - 1] == '/')
		wl--;
	if (strncmp(out, ws, wl) == 0 && (out[wl] == '\0' || out[wl] == '/'))
		return strdup(out[wl] ? out + wl + 1 : "");
	airlock_err("%s: %s is not inside the workspace %s", cmd, arg, ws);
	return NULL;
}

/* What the commands share: the store chosen, the paths. */
struct target {
	char *root;
	struct ckpt_store s;
	char **paths;
	size_t npaths;
};

static void target_free(struct target *t)
{
	for (size_t i = 0; i < t->npaths; i++)
		free(t->paths[i]);
	free(t->paths);
	free(t->root);
	ckpt_store_close(&t->s);
}

/* Resolves [SESSION] [PATH...] in args; returns an exit status, or -1 when done well. */
static int open_target(const char *cmd, int argc, char **args, int lock, struct target *t)
{
	memset(t, 0, sizeof *t);
	t->s.dirfd = t->s.lockfd = -1;
	t->root = checkpoints_root();
	char cwd[PATH_MAX];
	if (!t->root || !getcwd(cwd, sizeof cwd)) {
		airlock_err("%s: %s", cmd, t->root ? "cannot find the current directory" : "out of memory");
		return AIRLOCK_EXIT_FAILURE;
	}
	char id[CKPT_ID_LEN + 1];
	int first = 0;
	size_t hits = 0;
	if (argc > 0) {
		int r = ckpt_resolve(t->root, args[0], id, &hits);
		if (r == 0)
			first = 1;
		else if (r == -EEXIST) {
			airlock_err("%s: %s names %zu checkpoints: give more of the id", cmd, args[0], hits);
			return AIRLOCK_EXIT_USAGE;
		}
	}
	if (!first && ckpt_for_dir(t->root, cwd, id) < 0) {
		airlock_err("%s: no checkpoint for this workspace (airlock undo --list)", cmd);
		return AIRLOCK_EXIT_USAGE;
	}
	char err[512];
	int r = ckpt_store_open(t->root, id, lock, &t->s, err, sizeof err);
	if (r < 0) {
		airlock_err("%s: %s", cmd, err);
		return r == -ENOENT ? AIRLOCK_EXIT_USAGE : AIRLOCK_EXIT_FAILURE;
	}
	t->paths = calloc((size_t)argc + 1, sizeof *t->paths);
	if (!t->paths)
		return AIRLOCK_EXIT_FAILURE;
	for (int i = first; i < argc; i++) {
		char *rel = ws_relative(cmd, t->s.workspace, cwd, args[i]);
		if (!rel)
			return AIRLOCK_EXIT_USAGE;
		t->paths[t->npaths++] = rel;
	}
	return -1;
}

int cmd_diff(int argc, char **argv)
{
	bool stat = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "--stat") == 0)
			stat = true;
		else {
			airlock_err("diff: unknown option '%s'", argv[i]);
			fputs(cmd_diff_usage, stderr);
			return AIRLOCK_EXIT_USAGE;
		}
	}
	struct target t;
	int st = open_target("diff", argc - i, argv + i, 0, &t);
	if (st >= 0) {
		target_free(&t);
		return st;
	}
	if (t.s.running)
		fprintf(stderr, "airlock: diff: session %s is still running: this is what it changed so far\n",
			t.s.id);
	struct ckpt_diff_options o = { .paths = (const char *const *)t.paths, .npaths = t.npaths,
				       .stat = stat, .out = stdout, .err = stderr };
	int r = ckpt_diff(&t.s, &o);
	if (r < 0) {
		airlock_err("diff: cannot open the workspace %s: %s", t.s.workspace, strerror(-r));
		r = AIRLOCK_EXIT_FAILURE;
	}
	target_free(&t);
	return r;
}

static int list_all(void)
{
	char *root = checkpoints_root();
	struct ckpt_info *v;
	size_t n;
	int r = root ? ckpt_list(root, &v, &n) : -ENOMEM;
	if (r < 0) {
		airlock_err("undo: cannot list the checkpoints in %s: %s", root ? root : "?", strerror(-r));
		free(root);
		return AIRLOCK_EXIT_FAILURE;
	}
	ckpt_list_print(stdout, v, n);
	ckpt_list_free(v, n);
	free(root);
	return AIRLOCK_EXIT_OK;
}

int cmd_undo_list_checkpoints(FILE *f)
{
	char *root = checkpoints_root();
	struct ckpt_info *v;
	size_t n;
	int r = root ? ckpt_list(root, &v, &n) : -ENOMEM;
	free(root);
	if (r < 0)
		return r;
	ckpt_list_print(f, v, n);
	ckpt_list_free(v, n);
	return 0;
}

static int forget(const char *what)
{
	char *root = checkpoints_root();
	if (!root)
		return AIRLOCK_EXIT_FAILURE;
	int status = AIRLOCK_EXIT_OK;
	struct ckpt_info *v = NULL;
	size_t n = 0;
	char one[CKPT_ID_LEN + 1];
	if (strcmp(what, "--all") == 0) {
		if (ckpt_list(root, &v, &n) < 0) {
			airlock_err("undo: cannot list the checkpoints in %s", root);
			free(root);
			return AIRLOCK_EXIT_FAILURE;
		}
	} else {
		size_t hits;
		int r = ckpt_resolve(root, what, one, &hits);
		if (r < 0) {
			airlock_err("undo: %s", r == -EEXIST ? "that prefix names several checkpoints: give more of the id"
							     : "no such checkpoint (airlock undo --list)");
			free(root);
			return AIRLOCK_EXIT_USAGE;
		}
		v = calloc(1, sizeof *v);
		if (!v) {
			free(root);
			return AIRLOCK_EXIT_FAILURE;
		}
		memcpy(v[0].id, one, sizeof one);
		n = 1;
	}
	for (size_t i = 0; i < n; i++) {
		int r = ckpt_forget(root, v[i].id);
		if (r == -EBUSY) {
			airlock_err("undo: session %s is still running: its checkpoint is kept", v[i].id);
			status = AIRLOCK_EXIT_FAILURE;
		} else if (r < 0) {
			airlock_err("undo: cannot delete the checkpoint %s: %s", v[i].id, strerror(-r));
			status = AIRLOCK_EXIT_FAILURE;
		} else {
			printf("forgot %s\n", v[i].id);
		}
	}
	ckpt_list_free(v, n);
	free(root);
	return status;
}

int cmd_undo(int argc, char **argv)
{
	bool dry = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "--dry-run") == 0 || strcmp(argv[i], "-n") == 0)
			dry = true;
		else if (strcmp(argv[i], "--list") == 0 && argc == 2)
			return list_all();
		else if (strcmp(argv[i], "--forget") == 0 && argc == i + 2 && i == 1)
			return forget(argv[i + 1]);
		else {
			airlock_err("undo: unknown option or misplaced '%s'", argv[i]);
			fputs(cmd_undo_usage, stderr);
			return AIRLOCK_EXIT_USAGE;
		}
	}
	struct target t;
	int st = open_target("undo", argc - i, argv + i, dry ? 0 : LOCK_EX, &t);
	if (st >= 0) {
		target_free(&t);
		return st;
	}
	if (t.s.running) {
		airlock_err("undo: session %s is still running", t.s.id);
		target_free(&t);
		return AIRLOCK_EXIT_FAILURE;
	}
	struct ckpt_undo_options o = { .paths = (const char *const *)t.paths, .npaths = t.npaths,
				       .dry_run = dry, .out = stdout, .err = stderr };
	struct ckpt_undo_result res;
	int r = ckpt_undo(&t.s, &o, &res);
	if (r < 0) {
		airlock_err("undo: cannot open the workspace %s: %s", t.s.workspace, strerror(-r));
		target_free(&t);
		return AIRLOCK_EXIT_FAILURE;
	}
	if (!t.s.ignored_covered && t.s.nignored)
		fprintf(stderr, "airlock: undo: %zu git-ignored path%s %s not covered by this checkpoint: left as they are\n",
			t.s.nignored, t.s.nignored == 1 ? "" : "s", t.s.nignored == 1 ? "was" : "were");
	if (res.not_restored)
		printf("partial undo: %zu path%s not restored\n", res.not_restored,
		       res.not_restored == 1 ? "" : "s");
	else if (!dry && res.restored + res.removed + res.kept == 0)
		printf("nothing to undo: the workspace is as at the checkpoint %s\n", t.s.id);
	else if (!dry)
		printf("undone: %zu restored, %zu removed, %zu kept aside (checkpoint %s)\n", res.restored,
		       res.removed, res.kept, t.s.id);
	target_free(&t);
	return r ? AIRLOCK_EXIT_FAILURE : AIRLOCK_EXIT_OK;
}
