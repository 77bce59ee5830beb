#!/bin/bash
# gate_bench.sh — what the open gate (fanotify permission events, launcher/sandbox/open_gate.h)
# costs: each workload under `airlock run --headless` with the gate and with
# AIRLOCK_OPEN_GATE=off, interleaved, in the same script; the figure is the ratio.
# Usage: tests/bench/gate_bench.sh BUILD_DIR.  Prints "bench: NAME VALUE UNIT" lines.
#   gate.open.first.*     a first open of a workspace file (N=${FILES:-4000} files, raw syscalls)
#   gate.open.repeat.*    a repeated open of one file (its inode has an ignore mark)
#   gate.git_status.*     `git status` in a 10,000-file repository, median of RUNS (default 7)
#   gate.npm_install.*    `npm install --offline` of a tree of 40 local packages (tarballs),
#                         median of NPM_RUNS (default 5)
# Needs root (fanotify permission events); skips loudly otherwise.  No network: npm --offline
# on local tarballs.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
airlock=$build/airlock
top=$(cd "$(dirname "$0")/../.." && pwd)
runs=${RUNS:-7}
npm_runs=${NPM_RUNS:-5}
files=${FILES:-4000}
if [ "$(id -u)" != 0 ]; then
	echo "gate_bench: SKIPPED: the open gate needs root (fanotify permission events)" >&2
	exit 0
fi
if ! "$airlock" doctor 2>/dev/null | grep -q "open gate (fanotify) *yes"; then
	echo "gate_bench: SKIPPED: airlock doctor says the open gate is not available here" >&2
	exit 0
fi
# not under /tmp: the sandbox has its own /tmp
tmp=$(mktemp -d "$top/build/gate-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/home" "$tmp/ws/files"
export HOME="$tmp/home"
unset XDG_CONFIG_HOME XDG_STATE_HOME
cc -O2 -o "$tmp/open_loop" "$top/tests/bench/open_loop.c"
for i in $(seq 0 $((files - 1))); do : >"$tmp/ws/files/f$i"; done

# arun GATE CMD...: airlock run --headless in the workspace, the gate on or off.
arun() {
	local gate=$1
	shift
	if [ "$gate" = off ]; then
		(cd "$tmp/ws" && AIRLOCK_OPEN_GATE=off "$airlock" run --headless --log "$tmp/log.jsonl" -- "$@")
	else
		(cd "$tmp/ws" && "$airlock" run --headless --log "$tmp/log.jsonl" -- "$@")
	fi
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# ---- one open, first and repeated ----------------------------------------------------------
: >"$tmp/open.on"
: >"$tmp/open.off"
for r in 1 2 3 4 5 6 7 8 9; do
	for gate in on off; do
		arun $gate "$tmp/open_loop" "$tmp/ws/files" "$files" 100000 >>"$tmp/open.$gate"
	done
done
for kind in first repeat; do
	on=$(awk -v k=$kind '$1 == k { print $2 }' "$tmp/open.on" | median)
	off=$(awk -v k=$kind '$1 == k { print $2 }' "$tmp/open.off" | median)
	echo "bench: gate.open.$kind.on $on ns"
	echo "bench: gate.open.$kind.off $off ns"
	echo "bench: gate.open.$kind.ratio $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a / b }') x"
done

# timed NAME GATE CMD...: wall seconds of one airlock run of CMD, appended to $tmp/NAME.GATE.
timed() {
	local name=$1 gate=$2
	shift 2
	local t0=$EPOCHREALTIME
	arun "$gate" "$@" >/dev/null 2>&1 || { echo "gate_bench: $name ($gate) failed" >&2; exit 1; }
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f\n", b - a }' >>"$tmp/$name.$gate"
}

report() {
	local name=$1 on off
	on=$(median <"$tmp/$name.on")
	off=$(median <"$tmp/$name.off")
	echo "bench: gate.$name.on $on s"
	echo "bench: gate.$name.off $off s"
	echo "bench: gate.$name.ratio $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a / b }') x"
}

# ---- git status in a 10,000-file repository ------------------------------------------------
repo=$tmp/ws/repo
mkdir -p "$repo"
(cd "$repo" && git init -q . && for d in $(seq 0 99); do mkdir -p "d$d"; for f in $(seq 0 99); do
	echo "$d $f" >"d$d/f$f.txt"; done; done && git add -A &&
	git -c user.name=b -c user.email=b@b commit -qm files && echo change >>d7/f7.txt &&
	sleep 1.1 && git status --short >/dev/null) # the index refreshed: no entry racily clean (git
# would read every file again), as in a repository not written the same second
for r in $(seq "$runs"); do
	for gate in on off; do timed git_status $gate git -C "$repo" status --short; done
done
report git_status

# ---- npm install of local packages ---------------------------------------------------------
if command -v npm >/dev/null 2>&1; then
	pk=$tmp/ws/pkgs
	mkdir -p "$pk" "$tmp/ws/app"
	deps=""
	for i in $(seq 1 40); do
		d=$pk/p$i
		mkdir -p "$d/lib"
		printf '{"name":"p%d","version":"1.0.0","main":"lib/f0.js"}\n' "$i" >"$d/package.json"
		for f in $(seq 0 24); do echo "module.exports = $f;" >"$d/lib/f$f.js"; done
		(cd "$pk" && npm pack --silent "./p$i" >/dev/null 2>&1)
		deps="$deps\"p$i\":\"file:../pkgs/p$i-1.0.0.tgz\","
	done
	printf '{"name":"app","version":"1.0.0","dependencies":{%s}}\n' "${deps%,}" >"$tmp/ws/app/package.json"
	npm_install() {
		rm -rf "$tmp/ws/app/node_modules" "$tmp/ws/app/package-lock.json"
		timed npm_install "$1" sh -c "cd $tmp/ws/app && npm_config_cache=$tmp/ws/.npm-cache npm install --offline --no-audit --no-fund --loglevel=error"
	}
	npm_install on # warms npm's cache and the page cache, not counted
	: >"$tmp/npm_install.on"
	for r in $(seq "$npm_runs"); do
		for gate in on off; do npm_install $gate; done
	done
	report npm_install
else
	echo "gate_bench: npm not found: gate.npm_install skipped" >&2
fi
