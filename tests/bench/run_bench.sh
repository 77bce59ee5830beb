#!/bin/bash
# run_bench.sh — airlock run's figures: its start-up and a real workload, each against a bare
# bubblewrap command with the same namespaces, mounts, seccomp filter and environment (less the
# shim's variables), measured interleaved in the same script.
# Usage: tests/bench/run_bench.sh BUILD_DIR.  Prints "bench: NAME VALUE UNIT" lines; the bare
# bwrap argv used goes to stderr.
#   run.startup.*   `airlock run --headless -- /bin/true`, median of RUNS (default 25) runs each,
#                   with a scratch HOME; .realhome: the same with your real HOME, whose secrets
#                   the launcher looks for and masks (the bwrap side then has the same masks)
#   run.workload.*  `make -j2 all` of this project in a scratch copy, median of WORKLOAD_RUNS
#                   (default 5) each; asks are allowed (--default-allow), since a compiler driver
#                   runs programs (cc1, collect2) the default policy asks about
# bash, not sh: bwrap takes its arguments on a file descriptor above 9.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
airlock=$build/airlock
top=$(cd "$(dirname "$0")/../.." && pwd)
runs=${RUNS:-25}
wruns=${WORKLOAD_RUNS:-5}
real_home=${HOME:-/}
bwrap=$(command -v bwrap || true)
if [ -z "$bwrap" ]; then
	echo "run_bench: skipped: no bwrap on PATH" >&2
	exit 0
fi
if [ -z "${EPOCHREALTIME:-}" ]; then
	echo "run_bench: needs bash 5 (EPOCHREALTIME)" >&2
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/airlock-run-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/home" "$tmp/ws" "$tmp/session"
export HOME="$tmp/home"
unset XDG_CONFIG_HOME XDG_STATE_HOME

# A bwrap that records what airlock hands the real one: the --args file descriptor (NUL-separated
# arguments), the seccomp program and the command line; then it runs the real bwrap.  (airlock
# starts bwrap with a clean environment, hence the name of the capture in a file.)
cat >"$tmp/bwrap" <<EOF
#!/bin/bash
out=$tmp/\$(cat "$tmp/capture-name")
printf '%s\\0' "\$@" >"\$out.argv"
if [ "\$1" = --args ]; then
	cat "/proc/self/fd/\$2" >"\$out.args"
	tr '\\0' '\\n' <"\$out.args" | awk 'p { print; exit } \$0 == "--seccomp" { p = 1 }' >"\$out.seccomp-fd"
	fd=\$(cat "\$out.seccomp-fd")
	[ -z "\$fd" ] || cat "/proc/self/fd/\$fd" >"\$out.bpf"
fi
exec "$bwrap" "\$@"
EOF
chmod +x "$tmp/bwrap"

# capture NAME DIR PROGRAM...: runs airlock once in DIR through the recording bwrap.
capture() {
	local name=$1 dir=$2
	shift 2
	echo "$name" >"$tmp/capture-name"
	(cd "$dir" && "$airlock" run --headless --default-allow \
		--bwrap "$tmp/bwrap" --log "$tmp/capture.jsonl" -- "$@") >/dev/null 2>"$tmp/$name.err" || {
		echo "run_bench: airlock run failed:" >&2
		cat "$tmp/$name.err" >&2
		exit 1
	}
}

# bare NAME: from the captured arguments, the bare bwrap's: the same list less --info-fd (airlock's
# child-pid channel) and the shim's variables (LD_PRELOAD, AIRLOCK_*), the session directory (gone
# with its session) replaced by an empty one, the seccomp program read from a file on fd 5, and
# --unshare-net added where airlock made the network namespace itself (network: proxy).
bare() {
	local name=$1
	python3 - "$tmp/$name.args" "$tmp/$name.bare" "$tmp/session" <<-'EOF'
		import sys
		src, dst, session = sys.argv[1:]
		a = open(src, "rb").read().split(b"\0")[:-1]
		out, i = [], 0
		while i < len(a):
		    w = a[i]
		    if w == b"--info-fd":
		        i += 2
		        continue
		    if w == b"--setenv" and (a[i + 1] == b"LD_PRELOAD" or a[i + 1].startswith(b"AIRLOCK_")):
		        i += 3
		        continue
		    if w == b"--seccomp":
		        out += [w, b"5"]
		        i += 2
		        continue
		    if w == b"--ro-bind-data":
		        # the sandbox's resolv.conf, from an fd of airlock's: a bind of the host's instead
		        out += [b"--ro-bind", b"/etc/resolv.conf", a[i + 2]]
		        i += 3
		        continue
		    if w in (b"--ro-bind", b"--bind") and a[i + 2] == b"/run/airlock":
		        out += [w, session.encode(), a[i + 2]]
		        i += 3
		        continue
		    if w in (b"--ro-bind", b"--bind") and a[i + 2].startswith(b"/run/airlock/"):
		        # a mount point inside the (read-only) session directory: it must exist there
		        open(session + "/" + a[i + 2][len(b"/run/airlock/"):].decode(), "ab").close()
		    out.append(w)
		    i += 1
		# airlock made the sandbox's network namespace itself (network: proxy): the bare
		# command gets one from bwrap, so both run with the same namespaces
		if b"--unshare-net" not in out:
		    out.insert(0, b"--unshare-net")
		open(dst, "wb").write(b"".join(x + b"\0" for x in out))
	EOF
}

# show NAME: the bare command, for the record.
show() {
	printf 'run_bench: bare %s: %s --args 11' "$1" "$bwrap" >&2
	tr '\0' ' ' <"$tmp/$1.bare" | sed 's/^/ [fd 11: /; s/ $/]/' >&2
	printf ' -- %s  (fd 5: the seccomp program airlock built, %s bytes)\n' "$2" \
		"$(wc -c <"$tmp/$1.bpf" | tr -d ' ')" >&2
}

# ms START END
ms() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.3f\n", (e - s) * 1000 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# time_airlock OUT DIR PROGRAM...: one airlock run in DIR, its wall time appended to OUT.
time_airlock() {
	local out=$1 dir=$2 s e
	shift 2
	cd "$dir"
	s=$EPOCHREALTIME
	"$airlock" run --headless --default-allow --log "$tmp/run.jsonl" -- "$@" >/dev/null 2>>"$tmp/airlock.err" ||
		{ echo "run_bench: airlock run $* failed" >&2; tail -5 "$tmp/airlock.err" >&2; exit 1; }
	e=$EPOCHREALTIME
	ms "$s" "$e" >>"$out"
}

# time_bare OUT NAME DIR PROGRAM...: one bare bwrap run, its wall time appended to OUT.
time_bare() {
	local out=$1 name=$2 dir=$3 s e
	shift 3
	cd "$dir"
	s=$EPOCHREALTIME
	"$bwrap" --args 11 -- "$@" 11<"$tmp/$name.bare" 5<"$tmp/$name.bpf" >/dev/null 2>>"$tmp/bare.err" ||
		{ echo "run_bench: bare bwrap $* failed" >&2; tail -5 "$tmp/bare.err" >&2; exit 1; }
	e=$EPOCHREALTIME
	ms "$s" "$e" >>"$out"
}

# ---- start-up: /bin/true ------------------------------------------------------------------
capture startup "$tmp/ws" /bin/true
bare startup
show startup /bin/true
HOME=$real_home capture realhome "$tmp/ws" /bin/true
bare realhome
masked=$(sed -n 's/.*"event":"session_start".*"masked":\([0-9]*\).*/\1/p' "$tmp/capture.jsonl" | tail -n 1)

for f in a b ra rb; do : >"$tmp/startup.$f"; done
for i in $(seq "$runs"); do
	# alternate which goes first, so neither side always runs on a warmer cache
	if [ $((i % 2)) -eq 0 ]; then
		time_airlock "$tmp/startup.a" "$tmp/ws" /bin/true
		time_bare "$tmp/startup.b" startup "$tmp/ws" /bin/true
		HOME=$real_home time_airlock "$tmp/startup.ra" "$tmp/ws" /bin/true
		time_bare "$tmp/startup.rb" realhome "$tmp/ws" /bin/true
	else
		time_bare "$tmp/startup.b" startup "$tmp/ws" /bin/true
		time_airlock "$tmp/startup.a" "$tmp/ws" /bin/true
		time_bare "$tmp/startup.rb" realhome "$tmp/ws" /bin/true
		HOME=$real_home time_airlock "$tmp/startup.ra" "$tmp/ws" /bin/true
	fi
done
sa=$(median <"$tmp/startup.a") sb=$(median <"$tmp/startup.b")
ra=$(median <"$tmp/startup.ra") rb=$(median <"$tmp/startup.rb")

# ---- a real workload: make -j2 all of this project, in a scratch copy --------------------
src="$tmp/src"
mkdir -p "$src"
if git -C "$top" rev-parse --verify -q HEAD >/dev/null 2>&1; then
	git -C "$top" archive HEAD | tar -x -C "$src"
else
	(cd "$top" && tar -c --exclude=./build --exclude=./.git .) | tar -x -C "$src"
fi
capture workload "$src" /bin/true
bare workload
show workload "make -j2 all"
: >"$tmp/work.a"
: >"$tmp/work.b"
for i in $(seq "$wruns"); do
	rm -rf "$src/build"
	if [ $((i % 2)) -eq 0 ]; then
		time_airlock "$tmp/work.a" "$src" make -j2 all
		rm -rf "$src/build"
		time_bare "$tmp/work.b" workload "$src" make -j2 all
	else
		time_bare "$tmp/work.b" workload "$src" make -j2 all
		rm -rf "$src/build"
		time_airlock "$tmp/work.a" "$src" make -j2 all
	fi
done
wa=$(median <"$tmp/work.a") wb=$(median <"$tmp/work.b")
events=$(grep -c '"source":"shim"' "$tmp/run.jsonl" || true)

awk -v sa="$sa" -v sb="$sb" -v ra="$ra" -v rb="$rb" -v wa="$wa" -v wb="$wb" -v n="$runs" \
	-v wn="$wruns" -v masked="${masked:-?}" 'BEGIN {
	printf "bench: run.startup.airlock %.2f ms\n", sa
	printf "bench: run.startup.bwrap %.2f ms\n", sb
	printf "bench: run.startup.ratio %.3f x\n", sa / sb
	printf "bench: run.startup.realhome.airlock %.2f ms\n", ra
	printf "bench: run.startup.realhome.bwrap %.2f ms\n", rb
	printf "bench: run.startup.realhome.masked %s paths\n", masked
	printf "bench: run.startup.ratio.realhome %.3f x\n", ra / rb
	printf "bench: run.workload.airlock %.0f ms\n", wa
	printf "bench: run.workload.bwrap %.0f ms\n", wb
	printf "bench: run.workload.ratio %.3f x\n", wa / wb
}'
echo "run_bench: medians of $runs start-ups and $wruns builds each, interleaved; $events shim events logged" >&2
