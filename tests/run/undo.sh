# undo.sh — airlock run's cases for checkpoints and `airlock diff` / `airlock undo` (issue 14):
# what real agents did to people's work (public incidents), each under `airlock run --headless`
# with the built-in default policy, then undone.  Sourced by run.sh.
#
# The workspace of these cases is a git repository built fresh for each session
# (undo_fixture): commits on two branches (history packed, a newer commit loose, a branch only
# in packed-refs), two stashes, uncommitted edits (staged and not, a staged new file), untracked
# files, a symlink, an executable, a binary, and a .gitignore'd directory (ignored/, not covered
# by default, so left out of every comparison).  A case records the tree (tests/run/treehash.py:
# every file's bytes and mode, directories, symlinks, .git included), `git for-each-ref` and
# `git stash list` before the session; after it checks that the session did destroy something
# (else the case shows nothing), that `airlock diff` names what was destroyed, and that after
# `airlock undo` the tree, refs and stashes are what they were and `git fsck --full` is clean.
#
# Each destroyer by three ways where it is a program of ours (tests/run/probe.c): the dynamic
# probe (the shim sees its libc calls), the static probe (no shim at all), the dynamic probe's
# raw syscall(2) ops; git by the spelling the default policy asks about (a headless deny) and,
# when refused, one that gets through (a pathspec glob, or git started by a raw execve).
#
# UNDO_CONTROL=off runs every session of these cases with AIRLOCK_CHECKPOINT=off: each undo
# check must then fail (the way to see that they can); case_undo_off does that for one
# destroyer on every run.

TREEHASH=$HERE/treehash.py
UNDO_ENV=""
[ "${UNDO_CONTROL:-}" = off ] && UNDO_ENV="AIRLOCK_CHECKPOINT=off"

# undo_git ARGS...: git on the fixture from outside the sandbox (the user's own git).
undo_git() { HOME=$H GIT_CONFIG_NOSYSTEM=1 git -C "$W" "$@"; }

# undo_begin / undo_end: the undo cases' workspace is $U/undo-ws, not the suite's $W.
undo_begin()
{
	UNDO_SAVED_W=$W
	W=$U/undo-ws
}
undo_end() { W=$UNDO_SAVED_W; }

# undo_fixture: a fresh fixture repository at $W (see the head of this file), owned by the user
# the cases run as.  Returns 1 (after saying why) when git failed.
undo_fixture()
{
	rm -rf "${W:?}"
	mkdir -p "$W"
	(
		cd "$W" || exit 1
		export HOME="$H" GIT_CONFIG_NOSYSTEM=1
		g() { git "$@" >/dev/null 2>"$U/undo.git.err" || { echo "# undo fixture: git $* failed: $(cat "$U/undo.git.err")"; exit 1; }; }
		g init -q -b main .
		mkdir -p src docs bin
		printf 'ignored/\n' >.gitignore
		for i in $(seq 1 40); do printf 'def f%d():\n    return %d\n' "$i" "$i"; done >src/app.py
		printf '#include <stdio.h>\nint main(void) { return 0; }\n' >src/lib.c
		printf '# Guide\n\nStep one.\n' >docs/guide.md
		printf '#!/bin/sh\necho run\n' >bin/run.sh
		chmod 755 bin/run.sh
		head -c 65536 /dev/urandom >data.bin
		ln -s src/app.py app-link
		g add -A
		g commit -q -m one
		printf 'def helper():\n    return 1\n' >src/util.py
		printf '\ndef main():\n    return f1()\n' >>src/app.py
		g add -A
		g commit -q -m two
		g checkout -q -b feature
		printf '\nStep two (feature).\n' >>docs/guide.md
		printf 'feature\n' >feature.txt
		g add -A
		g commit -q -m 'feature work'
		g checkout -q main
		g repack -adq     # the history so far in a pack
		g pack-refs --all # feature only in packed-refs
		printf '/* three */\n' >>src/lib.c
		g commit -q -am three # a loose commit; main a loose ref again
		printf '\nStash me one.\n' >>docs/guide.md
		g stash push -q -m 'wip guide'
		printf '/* stash two */\n' >>src/lib.c
		g stash push -q -m 'wip lib'
		printf '# uncommitted edit\n' >>src/app.py
		printf '    # staged edit\n' >>src/util.py
		g add src/util.py
		printf 'new = 1\n' >src/new.py
		g add src/new.py
		mkdir -p notes ignored/deep
		printf 'my notes, never committed\n' >notes/todo.txt
		printf 'scratch\n' >scratch.txt
		head -c 4096 /dev/urandom >ignored/cache.bin
		printf 'build output\n' >ignored/deep/out.o
	) || return 1
	[ -z "$AS" ] || chown -R "$RUN_USER:$(id -gn "$RUN_USER")" "$W"
	return 0
}

# undo_snap NAME: the tree listing, refs and stashes of $W into $U/undo.NAME.{list,refs,stash}.
undo_snap()
{
	"$PY" "$TREEHASH" "$W" --exclude ignored --exclude-glob '*.airlock-kept-*' --list \
		>"$U/undo.$1.list" 2>&1
	undo_git for-each-ref >"$U/undo.$1.refs" 2>&1
	undo_git stash list >"$U/undo.$1.stash" 2>&1
}

# undo_differs A B: true when snapshots A and B differ (tree, refs or stashes).
undo_differs()
{
	! cmp -s "$U/undo.$1.list" "$U/undo.$2.list" || ! cmp -s "$U/undo.$1.refs" "$U/undo.$2.refs" ||
		! cmp -s "$U/undo.$1.stash" "$U/undo.$2.stash"
}

# undo_delta A B: the first lines that differ between snapshots A and B, on one line.
undo_delta()
{
	for ud_k in list refs stash; do
		diff "$U/undo.$1.$ud_k" "$U/undo.$2.$ud_k" | grep '^[<>]'
	done | head -n 8 | cut -c 1-160 | tr '\n' ';'
}

# undo_session SCRIPT: a fresh fixture, snapshot "pre" (and src/app.py's bytes in
# $U/undo.app.orig), SCRIPT (sh -c) under
# `airlock run --headless` in it, snapshot "post".  The session's RC, OUT and ERR are kept in
# S_RC, S_OUT, S_ERR.  Returns 1 when the fixture could not be built.
undo_session()
{
	undo_fixture || return 1
	undo_snap pre
	cp "$W/src/app.py" "$U/undo.app.orig"
	CALLER_ENV=$UNDO_ENV
	arun --headless -- sh -c "$1"
	CALLER_ENV=""
	S_RC=$RC S_OUT=$OUT S_ERR=$ERR
	undo_snap post
	return 0
}

# undo_expect_destroyed: the session changed the tree, refs or stashes (else the case shows nothing).
undo_expect_destroyed()
{
	undo_differs pre post ||
		_fail "the session destroyed nothing (stale spelling or fixture?): session rc $S_RC, out: $(printf '%s' "$S_OUT" | head -c 200), err: $(printf '%s' "$S_ERR" | head -c 300)"
}

# undo_expect_restored: the tree, refs and stashes are as before the session; git fsck --full is
# clean; the untracked notes are back.
undo_expect_restored()
{
	undo_snap after
	cmp -s "$U/undo.pre.list" "$U/undo.after.list" ||
		_fail "the tree differs from before the session (< before, > after undo): $(undo_delta pre after)"
	cmp -s "$U/undo.pre.refs" "$U/undo.after.refs" ||
		_fail "git for-each-ref differs: $(diff "$U/undo.pre.refs" "$U/undo.after.refs" | grep '^[<>]' | head -n 4 | tr '\n' ';')"
	cmp -s "$U/undo.pre.stash" "$U/undo.after.stash" ||
		_fail "git stash list differs: $(diff "$U/undo.pre.stash" "$U/undo.after.stash" | grep '^[<>]' | tr '\n' ';')"
	ud_fsck=$(undo_git fsck --full --no-progress 2>&1) ||
		_fail "git fsck --full failed: $(printf '%s' "$ud_fsck" | head -n 4 | tr '\n' ';')"
	[ "$(cat "$W/notes/todo.txt" 2>/dev/null)" = "my notes, never committed" ] ||
		_fail "the untracked notes/todo.txt is not back"
}

# undo_destroyer DESC WANT SCRIPT: one destroyer, two TAP lines: `airlock diff` names each
# word of WANT (paths, refs), and `airlock undo` restores everything.
undo_destroyer()
{
	ud_desc=$1
	ud_want=$2
	if ! undo_session "$3"; then
		check "$RUN_USER: undo: $ud_desc"
		_fail "the fixture could not be built"
		done_check
		return
	fi
	check "$RUN_USER: undo: $ud_desc: the session destroys; airlock diff names $ud_want"
	undo_expect_destroyed
	acmd diff
	expect_rc 0
	for ud_w in $ud_want; do expect_out_has "$ud_w"; done
	done_check
	check "$RUN_USER: undo: $ud_desc: airlock undo puts every byte back (tree hash, refs, stashes, git fsck, untracked files)"
	acmd undo
	expect_rc 0
	undo_expect_restored
	done_check
}

# undo_ready DESC: false (after a skip) when the sandbox cannot run; true otherwise.
undo_ready()
{
	need_sandbox "$RUN_USER: undo: $1" || return 1
	[ -z "$UNDO_ENV" ] || echo "# UNDO_CONTROL=off: every session runs with AIRLOCK_CHECKPOINT=off: the undo checks must fail"
	return 0
}

# undo_static_skip DESC: true (after a skip) when there is no static probe.
undo_static_skip()
{
	[ -n "$STATIC_SKIP" ] || return 1
	tap_skip "$RUN_USER: undo: $1 by a static binary" "$STATIC_SKIP"
	return 0
}

# case_undo_git: git's own destroyers, as agents ran them.
case_undo_git()
{
	undo_ready "git's destroyers" || return
	undo_begin
	undo_destroyer "git checkout -- . (or its glob spelling)" "src/app.py" \
		"git checkout -- . || git checkout -- '*'"
	undo_destroyer "git restore . (or --staged --worktree of a glob)" "src/app.py src/util.py" \
		"git restore . || git restore --staged --worktree -- '*'"
	undo_destroyer "git checkout -f feature (raw execve when refused)" "src/app.py" \
		"git checkout -f feature || '$PROBE' exec /usr/bin/git checkout -f feature"
	undo_destroyer "git branch -D feature" "refs/heads/feature" \
		"git branch -D feature"
	undo_destroyer "git stash drop (raw execve when refused)" "stash@{0}" \
		"git stash drop || '$PROBE' exec /usr/bin/git stash drop"
	undo_destroyer "git reset --hard HEAD~1 by a raw execve (dynamic probe)" "refs/heads/main src/lib.c" \
		"'$PROBE' exec /usr/bin/git reset --hard HEAD~1"
	if ! undo_static_skip "git reset --hard HEAD~1 by a raw execve"; then
		undo_destroyer "git reset --hard HEAD~1 by a raw execve (static probe)" "refs/heads/main src/lib.c" \
			"'$PROBE_STATIC' exec /usr/bin/git reset --hard HEAD~1"
	fi
	undo_end
}

# case_undo_scripts: interpreters' library calls: Python's shutil.rmtree of .git, a Node loop
# of fs.rmSync over every file (.git's included).
case_undo_scripts()
{
	undo_ready "scripts' destroyers" || return
	undo_begin
	undo_destroyer "python3 shutil.rmtree('.git')" "refs/heads/main" \
		"/usr/bin/python3 -c 'import shutil; shutil.rmtree(\".git\")'"
	if command -v node >/dev/null 2>&1; then
		undo_destroyer "node: fs.rmSync of every file" "src/app.py notes/todo.txt" \
			"node -e 'const fs = require(\"fs\"), path = require(\"path\");
function walk(d) { for (const e of fs.readdirSync(d, { withFileTypes: true })) {
	const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else fs.rmSync(p, { force: true }); } }
walk(\".\");'"
	else
		tap_skip "$RUN_USER: undo: node: fs.rmSync of every file" "node is not installed"
	fi
	undo_end
}

# undo_three OP DESC WANT ARGS: the probe's OP by the dynamic probe, the static probe and the
# dynamic probe's raw variant (rawOP).
undo_three()
{
	undo_destroyer "$2 (dynamic: libc)" "$3" "'$PROBE' $1 $4"
	if ! undo_static_skip "$2"; then
		undo_destroyer "$2 (static binary)" "$3" "'$PROBE_STATIC' $1 $4"
	fi
	undo_destroyer "$2 (raw syscalls)" "$3" "'$PROBE' raw$1 $4"
}

# case_undo_rmtree: rmtree of the workspace itself, .git included.
case_undo_rmtree()
{
	undo_ready "rmtree ." || return
	undo_begin
	undo_three rmtree "rmtree of the workspace (.)" "src/app.py notes/todo.txt" "."
	undo_end
}

# case_undo_trunc: tracked and untracked files truncated and overwritten with garbage.
case_undo_trunc()
{
	undo_ready "truncation" || return
	undo_begin
	undo_three trunc "truncation of tracked and untracked files" "src/app.py data.bin" \
		"src/app.py src/lib.c src/util.py docs/guide.md data.bin bin/run.sh notes/todo.txt"
	undo_end
}

# case_undo_clobber: git's read-only object files made writable and overwritten in place (the
# pack of the history, the loose commit main points to).
case_undo_clobber()
{
	undo_ready "a tampered .git/objects" || return
	undo_begin
	undo_three clobber "a tampered .git/objects pack and loose object" ".git/objects/pack/pack-" \
		".git/objects/pack/pack-*.pack .git/objects/\$(git rev-parse HEAD | cut -c 1-2)/\$(git rev-parse HEAD | cut -c 3-)"
	undo_end
}

# case_undo_rename: an untracked file renamed over a tracked one with uncommitted edits.
case_undo_rename()
{
	undo_ready "rename over a file" || return
	undo_begin
	undo_three rename "rename of scratch.txt over src/app.py" "src/app.py" "scratch.txt src/app.py"
	undo_end
}

# case_undo_moved_then_written: a file of the checkpoint's renamed (alone, or with its directory,
# or given a second name by a hard link) and then overwritten in place at its new name: the link
# the store kept for its old name is that same inode, so the content must be copied before the
# write, under the old name; `airlock undo` puts the old name back and removes the new one.
case_undo_moved_then_written()
{
	undo_ready "a file moved, then written in place" || return
	undo_begin
	undo_destroyer "mv src/app.py src/moved.py; echo garbage >src/moved.py" "src/app.py" \
		"mv src/app.py src/moved.py && echo garbage >src/moved.py"
	undo_destroyer "mv src lib; write lib/app.py in place; rm lib/lib.c" "src/app.py" \
		"mv src lib && echo garbage >lib/app.py && rm lib/lib.c"
	undo_destroyer "mv src/app.py under a git-ignored directory, then write it" "src/app.py" \
		"mv src/app.py ignored/app.py && echo garbage >ignored/app.py"
	undo_destroyer "ln src/app.py second; echo garbage >second; rm second" "src/app.py" \
		"ln src/app.py second && echo garbage >second && rm second"
	undo_end
}

# case_undo_reopen: a file opened read-only, then opened again for writing through
# /proc/PID/fd/N (a magic link the worker's openat2(RESOLVE_IN_ROOT) refuses to follow), and
# a file moved into a directory so deep its path does not fit PATH_MAX, written through its
# short relative name: each is saved first (or the call refused), never let go unsaved.
case_undo_reopen()
{
	undo_ready "a file reopened for writing through /proc/PID/fd" || return
	undo_begin
	undo_three procfd "reopened for writing through /proc/PID/fd/N" "src/app.py data.bin" \
		"src/app.py src/lib.c data.bin notes/todo.txt"
	# the deep one: refused (ENAMETOOLONG) or saved; either way src/app.py's bytes after undo
	if undo_session "'$PROBE' deeptrunc src/app.py"; then
		check "$RUN_USER: undo: a file moved into a directory deeper than PATH_MAX and truncated there has its bytes after airlock undo"
		acmd undo
		cmp -s "$W/src/app.py" "$U/undo.app.orig" ||
			_fail "src/app.py lost its bytes (session: $(printf '%s' "$S_OUT" | head -c 100); undo rc $RC: $(printf '%s' "$OUT$ERR" | head -c 300))"
		done_check
	fi
	undo_end
}

# undo_store: the newest checkpoint store of the user (store.h: STATE/checkpoints/SESSION).
undo_store()
{
	ls -td "$H/.local/state/airlock/checkpoints"/*/ 2>/dev/null | head -n 1 | sed 's:/$::'
}

# undo_object STORE PATH: the object file the journal's last "save" of PATH names.
undo_object()
{
	"$PY" - "$1/journal" "$2" <<'EOF'
import sys
obj = None
for line in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
    f = line.split(b"\t")
    if f[0] == b"save" and len(f) >= 7 and f[-1].decode() == sys.argv[2]:
        obj = f[1].decode()
if obj:
    print(obj)
EOF
}

# case_undo_dry_run: `undo --dry-run` lists and changes nothing; the undo after it restores.
case_undo_dry_run()
{
	undo_ready "undo --dry-run" || return
	undo_begin
	undo_session "'$PROBE' rawrmtree ." || { undo_end; return; }
	check "$RUN_USER: undo --dry-run after an rmtree of the workspace names what it would restore and changes nothing"
	undo_expect_destroyed
	acmd undo --dry-run
	expect_rc 0
	expect_out_has "src/app.py"
	undo_snap dry
	undo_differs post dry && _fail "undo --dry-run changed the workspace: $(undo_delta post dry)"
	done_check
	check "$RUN_USER: undo after a dry run restores everything"
	acmd undo
	expect_rc 0
	undo_expect_restored
	done_check
	undo_end
}

# undo_expect_kept PATH ORIG USER: PATH holds ORIG's bytes again, and exactly one
# PATH.airlock-kept-* holds the user's text USER; undo's output names PATH.
undo_expect_kept()
{
	cmp -s "$1" "$2" || _fail "$1 does not hold its bytes from before the session: $(head -c 80 "$1" 2>&1 | tr '\n' ' ')"
	ud_n=0
	for ud_k in "$1".airlock-kept-*; do
		[ -e "$ud_k" ] || continue
		ud_n=$((ud_n + 1))
		[ "$(cat "$ud_k")" = "$3" ] || _fail "$ud_k does not hold the user's edit: $(head -c 80 "$ud_k" | tr '\n' ' ')"
	done
	[ "$ud_n" = 1 ] || _fail "expected one $1.airlock-kept-* with the user's edit, found $ud_n"
	case "$OUT$ERR" in *"${1#"$W"/}"*) ;; *) _fail "undo did not say what it kept aside (${1#"$W"/})" ;; esac
}

# case_undo_user_edit: a file the user changed from outside the sandbox is never overwritten by
# undo: after the session (a file the agent truncated), and during it (a file the agent deleted,
# written again by the user's editor while the session runs).
case_undo_user_edit()
{
	undo_ready "the user's own edits" || return
	undo_begin
	if undo_static_skip "the user's own edits"; then
		undo_end
		return
	fi
	undo_session "'$PROBE_STATIC' rawtrunc src/app.py src/lib.c" || { undo_end; return; }
	printf "the user's own edit after the session\n" >"$W/src/app.py"
	check "$RUN_USER: undo: a file the user edited after the session is kept aside as PATH.airlock-kept-*, said, and the rest restored"
	undo_expect_destroyed
	acmd undo
	expect_rc 0
	undo_expect_kept "$W/src/app.py" "$U/undo.app.orig" "the user's own edit after the session"
	undo_snap after
	cmp -s "$U/undo.pre.list" "$U/undo.after.list" ||
		_fail "the tree (less the kept file) differs from before the session: $(undo_delta pre after)"
	done_check

	# during the session: the agent deletes src/app.py, then waits while the user writes it
	undo_fixture || { undo_end; return; }
	undo_snap pre
	cp "$W/src/app.py" "$U/undo.app.orig"
	CALLER_ENV=$UNDO_ENV
	arun_bg "$T/undo.bg.out" --headless -- sh -c "'$PROBE_STATIC' rawtrunc src/lib.c; rm -f src/app.py; touch ignored/ready
i=0; while [ ! -e ignored/go ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i + 1)); done"
	CALLER_ENV=""
	wait_file "$W/ignored/ready" 150
	printf "the user's own edit during the session\n" >"$W/src/app.py"
	[ -z "$AS" ] || chown "$RUN_USER" "$W/src/app.py"
	touch "$W/ignored/go"
	wait_pid_gone "$BGPID" 300
	S_RC=$BGRC S_OUT=$(cat "$T/undo.bg.out") S_ERR=$(cat "$T/undo.bg.out.err")
	undo_snap post
	check "$RUN_USER: undo: a file the agent deleted and the user wrote again during the session is kept aside, said, and the rest restored"
	undo_expect_destroyed
	acmd undo
	expect_rc 0
	undo_expect_kept "$W/src/app.py" "$U/undo.app.orig" "the user's own edit during the session"
	undo_snap after
	cmp -s "$U/undo.pre.list" "$U/undo.after.list" ||
		_fail "the tree (less the kept file) differs from before the session: $(undo_delta pre after)"
	done_check
	undo_end
}

# case_undo_damaged: a store whose object was deleted or truncated: undo exits 1, names the
# path, and writes no partial file there.
case_undo_damaged()
{
	undo_ready "a damaged store" || return
	undo_begin
	undo_session "'$PROBE' rawrmtree src" || { undo_end; return; }
	ud_st=$(undo_store)
	ud_obj=$(undo_object "$ud_st" src/app.py)
	check "$RUN_USER: undo of a store whose object for src/app.py was deleted: exit 1, names src/app.py, writes no src/app.py"
	undo_expect_destroyed
	if [ -z "$ud_obj" ] || [ ! -e "$ud_st/objects/$ud_obj" ]; then
		_fail "no saved object for src/app.py in the store (${ud_st:-none}): $(grep -a 'src/app.py' "$ud_st/journal" 2>&1 | head -n 3 | tr '\n' ';')"
	else
		rm -f "$ud_st/objects/$ud_obj"
		acmd undo
		expect_rc 1
		case "$OUT$ERR" in *src/app.py*) ;; *) _fail "undo did not name src/app.py" ;; esac
		expect_no_file "$W/src/app.py"
		ud_stray=$(find "$W/src" -name '*app.py*' 2>/dev/null | head -n 3)
		[ -z "$ud_stray" ] || _fail "undo left a partial or temporary file: $ud_stray"
	fi
	done_check

	undo_session "'$PROBE' rawtrunc src/app.py" || { undo_end; return; }
	ud_st=$(undo_store)
	ud_obj=$(undo_object "$ud_st" src/app.py)
	check "$RUN_USER: undo of a store whose object for src/app.py was truncated: exit 1, names src/app.py, src/app.py not overwritten with the cut bytes"
	undo_expect_destroyed
	if [ -z "$ud_obj" ] || [ ! -e "$ud_st/objects/$ud_obj" ]; then
		_fail "no saved object for src/app.py in the store (${ud_st:-none})"
	else
		truncate -s 20 "$ud_st/objects/$ud_obj"
		acmd undo
		expect_rc 1
		case "$OUT$ERR" in *src/app.py*) ;; *) _fail "undo did not name src/app.py" ;; esac
		expect_content "$W/src/app.py" "garbage"
		ud_stray=$(find "$W/src" -name '*app.py?*' 2>/dev/null | head -n 3)
		[ -z "$ud_stray" ] || _fail "undo left a partial or temporary file: $ud_stray"
	fi
	done_check
	undo_end
}

# case_undo_off: the control: with AIRLOCK_CHECKPOINT=off an rmtree of the workspace stays
# after `airlock undo` (so the checks above can fail).
case_undo_off()
{
	undo_ready "AIRLOCK_CHECKPOINT=off" || return
	undo_begin
	_env=$UNDO_ENV
	UNDO_ENV="AIRLOCK_CHECKPOINT=off"
	undo_session "'$PROBE' rawrmtree ." || { UNDO_ENV=$_env; undo_end; return; }
	UNDO_ENV=$_env
	check "$RUN_USER: undo: control: with AIRLOCK_CHECKPOINT=off an rmtree of the workspace is not undone [the checks above can fail]"
	undo_expect_destroyed
	acmd undo
	undo_snap after
	undo_differs pre after || _fail "the workspace is back although checkpoints were off"
	expect_no_file "$W/notes/todo.txt"
	done_check
	undo_end
}
