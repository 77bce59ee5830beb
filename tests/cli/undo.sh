#!/bin/sh
# undo.sh — TAP tests of `airlock diff` and `airlock undo` on checkpoint stores crafted as the writer makes them.
# Usage: tests/cli/undo.sh BUILD/airlock
# Each case builds a real git workspace, starts a checkpoint (tests/cli/ckpt_writer.py plays the
# launcher's worker: a hard link for a name about to go, a copy before an in-place write, the
# journal's records), destroys with real commands (git stash drop, git commit, git checkout -- .,
# git branch -D, mv, rm -rf .git, in-place writes), and checks what diff says and that undo puts
# back every byte: the sha256 of every file and directory mode under the workspace, .git included,
# `git fsck --full`, the refs and the stash; and the kept-aside rule, a damaged object, --dry-run.
# HOME and XDG_STATE_HOME are in a temporary directory; exits 1 if any test fails.
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 BUILD/airlock" >&2
	exit 2
fi
AIRLOCK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
WRITER=$(cd "$(dirname "$0")" && pwd)/ckpt_writer.py

TMP=$(mktemp -d "${TMPDIR:-/tmp}/airlock-undo.XXXXXX")
HOLDER=
cleanup() {
	if [ -n "$HOLDER" ]; then kill "$HOLDER" 2>/dev/null; fi
	if [ -n "${KEEP_TMP:-}" ]; then echo "# kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
TMP=$(cd "$TMP" && pwd -P)
export HOME="$TMP/home"
export XDG_STATE_HOME="$TMP/state"
export TZ=UTC LC_ALL=C
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@example.invalid GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
ROOT="$XDG_STATE_HOME/airlock/checkpoints"

. "$(dirname "$0")/lib.sh"

if ! command -v git >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1 ||
	! command -v diff >/dev/null 2>&1; then
	skip "undo suite" "git, python3 or diff(1) is missing"
	tap_plan_end tests
	exit $?
fi

# make_ws DIR: a git work tree with history, a branch, a stash, uncommitted and untracked work, a
# binary file, an ignored build directory, a file whose name holds a tab and a '%'.
make_ws() {
	mkdir -p "$1" && cd "$1" || exit 1
	git init -q -b main .
	echo a >a.txt
	echo c >c.txt
	mkdir -p src/deep
	echo lib >src/lib.c
	echo deep >src/deep/d.c
	printf 'bin\000ary\001' >bin.dat
	printf 'odd\n' >"$(printf 'od%%d\tname')"
	chmod 0751 src/deep
	echo build/ >.gitignore
	git add . && git commit -qm one
	git branch feature
	git checkout -q feature && echo f >f.txt && git add f.txt && git commit -qm feat
	git checkout -q main
	echo stashed >c.txt && git stash -q
	echo modified >>a.txt
	echo notes >notes.txt
	mkdir build && echo o >build/out.o
	cd - >/dev/null || exit 1
}

# state DIR: every entry's mode, sha256 (or target) and path, the refs, the stash, the index.
state() {
	python3 "$WRITER" hash "$1"
	git -C "$1" for-each-ref --format='%(objectname) %(refname)' 2>&1
	git -C "$1" log -g --format=%H refs/stash 2>&1
	git -C "$1" ls-files -s 2>&1
}

# session WS ID: a checkpoint of WS starts now; then `step CMD...` in WS; `end_session`.
session() {
	SW=$1 SID=$2 SS="$ROOT/$2"
	python3 "$WRITER" start "$SW" "$SS" "$SID"
}
step() {
	python3 "$WRITER" before "$SW" "$SS" && (cd "$SW" && "$@") && python3 "$WRITER" after "$SW" "$SS"
}
end_session() { python3 "$WRITER" end "$SW" "$SS"; }

same_state() { # DESC WANT_FILE DIR [ERE of lines left out]
	state "$3" | grep -Ev -e "${4:-^\$^}" >"$TMP/now.state"
	grep -Ev -e "${4:-^\$^}" "$2" >"$TMP/want.state"
	if cmp -s "$TMP/want.state" "$TMP/now.state"; then pass "$1"; else fail "$1" "$(diff "$TMP/want.state" "$TMP/now.state" | head -20)"; fi
}

# ---- 1: git commands, a rename, in-place writes, the user's edit afterwards --------------------
W1="$TMP/w1"
ID1=1111aaaa2222bbbb
make_ws "$W1"
state "$W1" >"$TMP/w1.before"
session "$W1" "$ID1"
step git stash drop -q
step sh -c 'echo agent >>c.txt && git add c.txt && git commit -qm "agent commit"'
step git checkout -- .
step git branch -q -D feature
step mv src/lib.c src/lib2.c
step sh -c 'printf "\002\003" >>bin.dat; echo new >new.txt; echo agent >notes.txt; echo tabbed >"$(printf "od%%d\tname")"'
end_session
# the user, after the session: edits a file the sandbox wrote, and one it created
echo "the user's own words" >"$W1/notes.txt"
echo "user edit" >>"$W1/new.txt"
state "$W1" >"$TMP/w1.after"

cd "$W1/src" || exit 1 # a subdirectory: the default checkpoint is the workspace's
expect "diff --stat: exit 0" 0 diff --stat
has "diff --stat: modified tracked file" out "M a.txt"
has "diff --stat: binary file modified" out "M bin.dat"
has "diff --stat: created file" out "A new.txt"
has "diff --stat: rename by inode" out "R src/lib.c -> src/lib2.c"
lacks "diff --stat: a renamed file is not also deleted" out "D src/lib.c"
has "diff --stat: escaped name (tab shown escaped)" out 'M od%d\tname'
lacks "diff --stat: ignored paths are never changes" out "build"
has "diff: the ignored prefix not covered is said once" err "1 git-ignored path was not covered"
has "diff: branch deleted" out "git: deleted refs/heads/feature"
has_re "diff: branch moved" out "^git: moved refs/heads/main [0-9a-f]{12} -> [0-9a-f]{12}$"
has "diff: stash dropped" out "git: stash dropped:"
has "diff: commits made" out "agent commit"
expect "diff: exit 0" 0 diff
has "diff: unified diff of text with labels" out "--- a/a.txt"
has "diff: the line the sandbox removed" out "-modified"
has_re "diff: binary by size and sha256" out "^binary bin.dat: before: 8 bytes, sha256 [0-9a-f]{64}; after: 10 bytes, sha256 [0-9a-f]{64}$"
has "diff: rename said" out "renamed src/lib.c -> src/lib2.c"
expect "diff PATH: limited to it" 0 diff --stat ../a.txt
if [ "$(cat "$TMP/out")" = "M a.txt" ]; then pass "diff PATH: only that path"; else fail "diff PATH: only that path" "$(details)"; fi
expect "diff: a PATH outside the workspace is a usage error" 2 diff /etc/passwd

expect "undo --dry-run: exit 0" 0 undo --dry-run
has "undo --dry-run: restore line" out "restore a.txt"
has "undo --dry-run: remove line" out "remove src/lib2.c"
has "undo --dry-run: kept-aside line" out "keep notes.txt (changed outside the sandbox) as notes.txt.airlock-kept-1111aaaa"
has "undo --dry-run: a created file the user changed is kept" out "keep new.txt (changed outside the sandbox after it was created)"
same_state "undo --dry-run changes nothing" "$TMP/w1.after" "$W1"
if grep -q '^undone=' "$ROOT/$ID1/meta"; then fail "undo --dry-run: meta untouched"; else pass "undo --dry-run: meta untouched"; fi

cd "$W1" || exit 1
expect "undo: exit 0" 0 undo
has "undo: says the user's file is kept aside" out "keep notes.txt (changed outside the sandbox) as notes.txt.airlock-kept-1111aaaa"
# everything as before, but the user's two files: notes kept aside, new.txt (theirs) left
same_state "undo: every byte, mode, ref, stash and index entry back" "$TMP/w1.before" "$W1" \
	'notes\.txt\.airlock-kept-1111aaaa$| new\.txt$'
if [ "$(cat notes.txt.airlock-kept-1111aaaa)" = "the user's own words" ]; then
	pass "undo: the user's version is kept aside whole"
else fail "undo: the user's version is kept aside whole" "$(cat notes.txt.airlock-kept-1111aaaa 2>&1)"; fi
if [ "$(cat new.txt)" = "new
user edit" ]; then pass "undo: a created file the user edited is left"; else fail "undo: a created file the user edited is left"; fi
if git fsck --full >"$TMP/fsck" 2>&1 && ! grep -q . "$TMP/fsck"; then pass "undo: git fsck --full clean"; else fail "undo: git fsck --full clean" "$(cat "$TMP/fsck")"; fi
if [ "$(git stash list | wc -l)" = 1 ] && git rev-parse -q --verify feature >/dev/null; then
	pass "undo: the stash and the deleted branch are back"
else fail "undo: the stash and the deleted branch are back" "$(git stash list; git branch -a)"; fi
grep -q '^undone=' "$ROOT/$ID1/meta" && pass "undo: undone= in meta" || fail "undo: undone= in meta"
# the store is intact: undo again changes nothing and says so
state "$W1" >"$TMP/w1.undone"
expect "undo again: exit 0" 0 undo
lacks "undo again: nothing restored" out "restore "
lacks "undo again: nothing removed" out "remove "
has "undo again: the user's file still said" out "keep new.txt"
same_state "undo again: the workspace unchanged" "$TMP/w1.undone" "$W1"
rm -f new.txt notes.txt.airlock-kept-1111aaaa

# ---- 2: rm -rf .git and a directory, --dry-run, a killed launcher ---------------------------------
W2="$TMP/w2"
ID2=2222cccc3333dddd
make_ws "$W2"
state "$W2" >"$TMP/w2.before"
session "$W2" "$ID2"
step rm -rf .git src
# the launcher was killed: no end records, no ended=
rm -rf "$ROOT/$ID2/.sim"
state "$W2" >"$TMP/w2.after"
cd "$W2" || exit 1
expect "rm -rf .git: diff says the repository is gone" 0 diff --stat "$ID2"
has "rm -rf .git: diff lists the refs lost" out "deleted refs/heads/feature"
has "rm -rf .git: the deleted directory" out "D src"
expect "rm -rf .git: --dry-run exit 0" 0 undo --dry-run "${ID2%????????????}"
has "rm -rf .git: --dry-run restores .git/HEAD" out "restore .git/HEAD"
has "rm -rf .git: no end records said" err "no end records"
same_state "rm -rf .git: --dry-run changes nothing" "$TMP/w2.after" "$W2"
expect "rm -rf .git: undo exit 0" 0 undo "$ID2"
same_state "rm -rf .git: undo brings every byte back (directory modes too)" "$TMP/w2.before" "$W2"
if git fsck --full >"$TMP/fsck" 2>&1 && ! grep -q . "$TMP/fsck"; then pass "rm -rf .git: git fsck --full clean"; else fail "rm -rf .git: git fsck --full clean" "$(cat "$TMP/fsck")"; fi
if [ "$(git status --porcelain | tr '\n' ' ')" = " M a.txt ?? notes.txt " ]; then
	pass "rm -rf .git: the uncommitted work is back"
else fail "rm -rf .git: the uncommitted work is back" "$(git status --porcelain)"; fi

# ---- 3: a damaged object: that path untouched, the rest restored, exit 1 ---------------------------
W3="$TMP/w3"
ID3=3333eeee4444ffff
make_ws "$W3"
state "$W3" >"$TMP/w3.before"
session "$W3" "$ID3"
step git checkout -- .
step rm -f notes.txt c.txt
end_session
obj=$(awk -F'\t' '$1 == "save" && $7 == "a.txt" { print $2 }' "$ROOT/$ID3/journal")
truncate -s 3 "$ROOT/$ID3/objects/$obj"
cp "$W3/a.txt" "$TMP/w3.a"
cd "$W3" || exit 1
expect "damaged object: undo exits 1" 1 undo
has "damaged object: said, with the object" out "cannot restore a.txt: checkpoint object $obj is damaged/missing (size 3, the record says 11)"
has "damaged object: partial undo said" out "partial undo: 1 path not restored"
if cmp -s a.txt "$TMP/w3.a"; then pass "damaged object: that path is left as it was"; else fail "damaged object: that path is left as it was"; fi
same_state "damaged object: every other path restored" "$TMP/w3.before" "$W3" ' a.txt$'
expect "damaged object: diff exits 1 and says so" 1 diff --stat
has "damaged object: diff names it" out "damaged a.txt: checkpoint object $obj"

# ---- 4: undo of named paths only ---------------------------------------------------------------
W4="$TMP/w4"
ID4=4444aaaa5555bbbb
make_ws "$W4"
state "$W4" >"$TMP/w4.before"
session "$W4" "$ID4"
step rm -rf src
step rm -f notes.txt
end_session
cd "$W4" || exit 1
expect "undo PATH: exit 0" 0 undo src
if [ -f src/deep/d.c ] && [ ! -e notes.txt ]; then pass "undo PATH: only beneath it"; else fail "undo PATH: only beneath it" "$(ls -R)"; fi
if [ "$(stat -c %a src/deep)" = 751 ]; then pass "undo PATH: a directory's mode from its dir record"; else fail "undo PATH: a directory's mode from its dir record" "$(stat -c %a src/deep)"; fi

# ---- 5: a running session, sessions by prefix, --list, --forget ------------------------------------
if true; then
	python3 -c 'import fcntl, sys, time
f = open(sys.argv[1])
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(30)' "$ROOT/$ID4/lock" "$TMP/locked" &
	HOLDER=$!
	n=0
	while [ ! -e "$TMP/locked" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
	expect "running: undo exits 1" 1 undo "$ID4"
	has "running: said" err "session $ID4 is still running"
	expect "running: diff goes on, with a note" 0 diff --stat "$ID4"
	has "running: diff's note" err "still running"
	expect "running: --forget refuses" 1 undo --forget "$ID4"
	kill "$HOLDER" 2>/dev/null
	wait "$HOLDER" 2>/dev/null
	HOLDER=
fi
cd "$TMP" || exit 1
expect "no checkpoint for the cwd: exit 2" 2 undo
has "no checkpoint: said" err "no checkpoint for this workspace (airlock undo --list)"
expect "--list: exit 0" 0 undo --list
has "--list: the sessions" out "$ID1"
if [ "$(grep -c '^[0-9a-f]\{16\} ' "$TMP/out")" = 4 ]; then pass "--list: four checkpoints"; else fail "--list: four checkpoints" "$(details)"; fi
if [ "$(sed -n 2p "$TMP/out" | cut -c1-16)" = "$ID4" ]; then pass "--list: newest first"; else fail "--list: newest first" "$(details)"; fi
has "--list: a killed launcher's session" out "killed"
expect "a prefix that names none: no such checkpoint" 2 diff --stat abcd
expect "ps --all: exit 0" 0 ps --all
has "ps --all: lists the checkpoints" out "$ID2"
printf '%s\n' '{"id":"1","timestamp":"2026-11-30T01:00:00.000Z","session_id":"'"$ID1"'","source":"launcher","pid":9,"event":"session_start","program":"/bin/sh","workspace":"'"$W1"'"}' >"$TMP/log.jsonl"
expect "log --summary: exit 0" 0 log --summary "$TMP/log.jsonl"
has "log --summary: the checkpoint line" out "checkpoint 18 saved, 18 created, \`airlock diff $ID1\`"
expect "--forget by prefix" 0 undo --forget 3333
[ ! -e "$ROOT/$ID3" ] && pass "--forget: the store is gone" || fail "--forget: the store is gone"
expect "--forget --all" 0 undo --forget --all
[ -z "$(ls "$ROOT")" ] && pass "--forget --all: none left" || fail "--forget --all: none left" "$(ls "$ROOT")"
expect "undo: unknown option" 2 undo --frobnicate
expect "undo --help" 0 undo --help
has "undo --help: the kept-aside rule" out "airlock-kept-"

tap_plan_end tests
