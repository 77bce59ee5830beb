#!/bin/bash
# undo_bench.sh — what checkpoints (issue 14: the seccomp checkpoint worker, `airlock undo`)
# cost, each workload under `airlock run --headless` (built-in default policy) with checkpoints
# and with AIRLOCK_CHECKPOINT=off, interleaved in the same script; and whether `airlock undo`
# puts every byte back after each write-heavy session.
# Usage: tests/bench/undo_bench.sh BUILD_DIR.  Prints "bench: NAME VALUE UNIT" lines:
#   undo.startup.{on,off} ms, .delta_ms ms, .ratio x
#                     `airlock run --headless -- true` in a 10,000-file, ~500 MB git workspace,
#                     median of STARTUP_RUNS (default 15) each (goal: delta <= +50 ms)
#   undo.checkout.*   `git checkout other` there: 9,000 of the 10,000 files differ on that branch
#   undo.untar.*      `tar -xf` of a 5,000-file archive over the workspace's vendor/ (every file
#                     replaced by another version)
#   undo.npm.*        `npm install --offline` of 30 local packages (tarballs made by npm pack,
#                     each depending on the one before; file: specs, no network): ~1,500 files
#                     each: .on s, .off s (medians of RUNS, default 5), .ratio x (goal <= 1.3),
#                     .undo s (median time of `airlock undo` after the session)
#   undo.restore_ok 1 bool
#                     after every session with checkpoints, `airlock undo`, then the tree hash
#                     (tests/run/treehash.py: every file's bytes and mode, .git included) equals
#                     the one before the session and `git for-each-ref` too; `git fsck --full`
#                     after the first of each workload (the tree hash already compares every byte
#                     of .git).  A mismatch is said, the workspace reset without undo so the
#                     timings go on, and the script prints restore_ok 0 and fails (exit 1).
# The workspace is built once under UNDO_BENCH_WS (default /var/tmp/airlock-bench-ws: not /tmp,
# which is private in the sandbox; ~1.1 GB with its .git) and reused: sessions without
# checkpoints are reset without git (the v1 archive untarred again, node_modules removed) or,
# for the checkout, by `git checkout main` outside the sandbox.  Skips loudly without bwrap.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
airlock=$build/airlock
top=$(cd "$(dirname "$0")/../.." && pwd)
treehash=$top/tests/run/treehash.py
runs=${RUNS:-5}
sruns=${STARTUP_RUNS:-15}
cache=${UNDO_BENCH_WS:-/var/tmp/airlock-bench-ws}
ws=$cache/ws
if ! command -v bwrap >/dev/null 2>&1; then
	echo "undo_bench: SKIPPED: no bwrap on PATH" >&2
	exit 0
fi
have_undo=1
if ! "$airlock" --help 2>&1 | grep -qE "^  undo "; then
	have_undo=0
	echo "undo_bench: this airlock has no undo command: timings only, sessions reset without it;" \
		"the restore check FAILS at the end" >&2
fi
tmp=$(mktemp -d /var/tmp/airlock-undo-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/home"
export HOME="$tmp/home"
unset XDG_CONFIG_HOME XDG_STATE_HOME
printf '[user]\n\tname = Bench\n\temail = bench@airlock.invalid\n[safe]\n\tdirectory = *\n[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n' \
	>"$HOME/.gitconfig"
export GIT_CONFIG_NOSYSTEM=1

# ---- the workspace (once) --------------------------------------------------------------------
# ws/: d00..d39/f000..f099 (4,000 text files), bin/b000..b999 (1,000 random files of 500 KB:
# the ~500 MB), vendor/m00..m49/v000..v099 (5,000 small files, v1), app/package.json; branch
# "other" changes every text and vendor file (9,000 of 10,000).  Ignored (.gitignore: .bench/):
# the archives, the npm packages and npm's cache.
build_ws() {
	echo "undo_bench: building the workspace in $ws (once)" >&2
	rm -rf "$cache"
	mkdir -p "$ws/.bench/pkgs" "$ws/app" "$cache/v1" "$cache/v2"
	cd "$ws"
	git init -q -b main .
	printf '.bench/\n' >.gitignore
	for d in $(seq -w 0 39); do
		mkdir -p "d$d"
		for f in $(seq -w 0 99); do
			awk -v d="$d" -v f="$f" 'BEGIN { for (i = 0; i < 40; i++) printf "line %d of file %s/%s: lorem ipsum dolor\n", i, d, f }' >"d$d/f$f.txt"
		done
	done
	mkdir -p bin
	for b in $(seq -w 0 999); do head -c 512000 /dev/urandom >"bin/b$b.dat"; done
	for v in v1 v2; do
		for m in $(seq -w 0 49); do
			mkdir -p "$cache/$v/vendor/m$m"
			for f in $(seq -w 0 99); do
				printf 'module m%s file %s version %s\n' "$m" "$f" "$v" >"$cache/$v/vendor/m$m/v$f.js"
			done
		done
		tar -C "$cache/$v" -cf "$ws/.bench/vendor-$v.tar" vendor
	done
	tar -xf .bench/vendor-v1.tar
	# npm: p01..p30, each 50 files, p(N) depending on p(N-1) by an absolute file: tarball
	local prev=""
	for i in $(seq -w 1 30); do
		local d=$cache/pkgsrc/p$i
		mkdir -p "$d/lib"
		if [ -n "$prev" ]; then
			printf '{"name":"p%s","version":"1.0.0","main":"lib/f00.js","dependencies":{"p%s":"file:%s/.bench/pkgs/p%s-1.0.0.tgz"}}\n' \
				"$i" "$prev" "$ws" "$prev" >"$d/package.json"
		else
			printf '{"name":"p%s","version":"1.0.0","main":"lib/f00.js"}\n' "$i" >"$d/package.json"
		fi
		for f in $(seq -w 0 48); do echo "module.exports = '$i/$f';" >"$d/lib/f$f.js"; done
		(cd "$ws/.bench/pkgs" && npm pack --silent "$d" >/dev/null)
		prev=$i
	done
	deps=""
	for i in $(seq -w 1 30); do deps="$deps\"p$i\":\"file:../.bench/pkgs/p$i-1.0.0.tgz\","; done
	printf '{"name":"app","version":"1.0.0","private":true,"dependencies":{%s}}\n' "${deps%,}" >app/package.json
	git add -A
	git commit -q -m main
	git checkout -q -b other
	for d in d*/; do for f in "$d"f*.txt; do echo "changed on other" >>"$f"; done; done
	tar -xf .bench/vendor-v2.tar
	git add -A
	git commit -q -m other
	git checkout -q main
	git -c pack.window=0 gc -q # no delta search over 500 MB of random bytes
	(cd app && npm_config_cache="$ws/.bench/npm-cache" npm install --offline --no-audit --no-fund \
		--loglevel=error >/dev/null 2>&1 || npm_config_cache="$ws/.bench/npm-cache" npm install \
		--no-audit --no-fund --loglevel=error >/dev/null) # fills npm's cache from the tarballs
	rm -rf app/node_modules app/package-lock.json
	rm -rf "$cache/v1" "$cache/v2" "$cache/pkgsrc"
	touch "$cache/complete"
	cd - >/dev/null
}
[ -e "$cache/complete" ] || build_ws
echo "undo_bench: workspace $ws: $(find "$ws" -path "$ws/.git" -prune -o -path "$ws/.bench" -prune -o -type f -print | wc -l) files," \
	"$(du -sm --exclude=.git --exclude=.bench "$ws" | cut -f1) MB (+ .git $(du -sm "$ws/.git" | cut -f1) MB)" >&2

# ---- running -----------------------------------------------------------------------------------

# arun on|off CMD...: airlock run --headless in the workspace, checkpoints on or off.
arun() {
	local mode=$1
	shift
	if [ "$mode" = off ]; then
		(cd "$ws" && AIRLOCK_CHECKPOINT=off "$airlock" run --headless --log "$tmp/log.jsonl" -- "$@")
	else
		(cd "$ws" && "$airlock" run --headless --log "$tmp/log.jsonl" -- "$@")
	fi
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", b - a }'; }

snap() {
	"$treehash" "$ws" --exclude .bench --list >"$tmp/$1.list"
	git -C "$ws" for-each-ref >"$tmp/$1.refs"
}

# restore_fail NAME RESET: undo did not put every byte back: said; the workspace is reset with
# RESET so the timings go on; the script fails at the end.
restore_ok=1
restore_fail() {
	echo "undo_bench: FAIL: after $1, airlock undo did not put every byte back:" >&2
	{ diff "$tmp/pre.list" "$tmp/after.list"; diff "$tmp/pre.refs" "$tmp/after.refs"; } | head -n 12 >&2 || true
	restore_ok=0
	(cd "$ws" && eval "$2")
}

# timed NAME MODE RESET CMD...: one session of CMD (wall seconds appended to $tmp/NAME.MODE);
# with checkpoints, then `airlock undo` (seconds to $tmp/NAME.undo) and the restore check;
# without, RESET (a shell command run outside the sandbox).
fsck_done=""
timed() {
	local name=$1 mode=$2 reset=$3 t0 t1
	shift 3
	snap pre # both modes: the same page cache before the session
	sync
	sleep 1 # no racily clean index entry: git in the session reads no file again
	t0=$EPOCHREALTIME
	arun "$mode" "$@" >"$tmp/out" 2>&1 || { echo "undo_bench: $name ($mode) failed:" >&2; tail -n 5 "$tmp/out" >&2; exit 1; }
	secs "$t0" "$EPOCHREALTIME" >>"$tmp/$name.$mode"
	if [ "$mode" = off ] || [ "$have_undo" = 0 ]; then
		(cd "$ws" && eval "$reset")
		return
	fi
	t1=$EPOCHREALTIME
	(cd "$ws" && "$airlock" undo) >"$tmp/undo.out" 2>&1 || { echo "undo_bench: airlock undo after $name failed:" >&2; tail -n 5 "$tmp/undo.out" >&2; exit 1; }
	secs "$t1" "$EPOCHREALTIME" >>"$tmp/$name.undo"
	snap after
	if ! cmp -s "$tmp/pre.list" "$tmp/after.list" || ! cmp -s "$tmp/pre.refs" "$tmp/after.refs"; then
		restore_fail "$name" "$reset"
		"$airlock" undo --forget >/dev/null 2>&1 || true
		return
	fi
	case " $fsck_done " in *" $name "*) ;; *)
		git -C "$ws" fsck --full --no-progress >"$tmp/fsck" 2>&1 || { echo "undo_bench: git fsck after undo of $name:" >&2; head -n 5 "$tmp/fsck" >&2; exit 1; }
		fsck_done="$fsck_done $name" ;;
	esac
	"$airlock" undo --forget >/dev/null 2>&1 || true
}

report() {
	local name=$1 on off
	on=$(median <"$tmp/$name.on")
	off=$(median <"$tmp/$name.off")
	echo "bench: undo.$name.on $on s"
	echo "bench: undo.$name.off $off s"
	echo "bench: undo.$name.ratio $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a / b }') x"
	[ ! -s "$tmp/$name.undo" ] || echo "bench: undo.$name.undo $(median <"$tmp/$name.undo") s"
}

# ---- start-up ----------------------------------------------------------------------------------
arun on true >/dev/null 2>&1 || true # warm the page cache
for r in $(seq "$sruns"); do
	for mode in on off; do
		t0=$EPOCHREALTIME
		arun $mode true >/dev/null 2>&1 || { echo "undo_bench: airlock run true ($mode) failed" >&2; exit 1; }
		awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }' >>"$tmp/startup.$mode"
		[ "$mode" = off ] || (cd "$ws" && "$airlock" undo --forget >/dev/null 2>&1) || true
	done
done
on=$(median <"$tmp/startup.on")
off=$(median <"$tmp/startup.off")
echo "bench: undo.startup.on $on ms"
echo "bench: undo.startup.off $off ms"
echo "bench: undo.startup.delta_ms $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.1f", a - b }') ms"
echo "bench: undo.startup.ratio $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a / b }') x"

# ---- write-heavy sessions ----------------------------------------------------------------------
for r in $(seq "$runs"); do
	for mode in on off; do
		timed checkout $mode "git checkout -q -f main" git checkout -q other
	done
done
report checkout

for r in $(seq "$runs"); do
	for mode in on off; do
		timed untar $mode "tar -xf .bench/vendor-v1.tar" tar -xf .bench/vendor-v2.tar
	done
done
report untar

if command -v npm >/dev/null 2>&1; then
	npm_cmd="cd app && npm_config_update_notifier=false npm_config_cache=$ws/.bench/npm-cache npm install --offline --no-audit --no-fund --loglevel=error"
	for r in $(seq "$runs"); do
		for mode in on off; do
			timed npm $mode "rm -rf app/node_modules app/package-lock.json" sh -c "$npm_cmd"
		done
	done
	report npm
else
	echo "undo_bench: npm not found: undo.npm skipped" >&2
fi

if [ "$have_undo" = 0 ]; then
	echo "undo_bench: FAIL: no airlock undo: the restore was not checked" >&2
	exit 1
fi
echo "bench: undo.restore_ok $restore_ok bool"
if [ "$restore_ok" = 0 ]; then
	echo "undo_bench: FAIL: airlock undo did not put every byte back (above)" >&2
	exit 1
fi
