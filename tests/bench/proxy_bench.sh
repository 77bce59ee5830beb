#!/bin/sh
# proxy_bench.sh — the egress proxy's figures, measured in the proxy tests' network lab
# (netlab.sh: namespaces only, no packet leaves the machine).
#
# Usage: tests/proxy/proxy_bench.sh BUILD_DIR      (as root; skips with "skipped: REASON" otherwise)
#
# The client (bench.c, static: the shim adds nothing) talks to bench.c's server on
# 203.0.113.12:9000/9001 in the lab's internet namespace, once "direct" — from the OUTER namespace
# without airlock — and once through the proxy — inside `airlock run --headless` started in OUTER,
# with a policy allowing exactly those two destinations (transparent path: the sandbox connects to
# the address, the launcher relays).  Both sides run interleaved, ROUNDS times (default 3), and
# the best round of each side counts (the least disturbed by the rest of the machine).
#
#   bench: proxy.throughput.ratio X x        1 GiB (BULK_BYTES) downloaded, proxy / direct (>= 0.90)
#   bench: proxy.throughput.upload.ratio X x the same, uploaded
#   bench: proxy.throughput MBps / proxy.throughput.direct MBps
#   bench: proxy.connrate.ratio X x          new connections per second, proxy / direct (>= 0.5)
#   bench: proxy.connrate CPS cps            through the proxy (>= 5000); .direct: without
#                                            (CONNRATE_SECS seconds, CONNRATE_THREADS threads,
#                                            each connection: connect, read one byte, close)
#   bench: proxy.latency.added US us         median round trip of a one-byte request on an open
#                                            connection, proxy minus direct (<= 100)
#   bench: proxy.latency.firstreq.added US us  the same for a new connection's first request
#                                            (connect + decision + upstream connect + round trip)
set -u
if [ $# -ne 1 ] || [ ! -x "$1/airlock" ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd -P)
PHERE=$(cd "$(dirname "$0")/../proxy" && pwd -P)
AIRLOCK=$BUILD/airlock
ROUNDS=${ROUNDS:-3}
BULK=${BULK_BYTES:-1073741824}
CR_SECS=${CONNRATE_SECS:-3}
CR_THREADS=${CONNRATE_THREADS:-8}
PINGS=${PINGS:-20000}
FIRSTS=${FIRSTS:-2000}
export LC_ALL=C

skip()
{
	echo "proxy_bench: skipped: $1" >&2
	exit 0
}
[ "$(id -u)" = 0 ] || skip "not root: the lab needs ip netns add"
command -v ip >/dev/null 2>&1 || skip "no iproute2"
command -v bwrap >/dev/null 2>&1 || skip "no bwrap"

T=$(mktemp -d /var/tmp/airlock-proxy-bench.XXXXXX) || exit 1
chmod 755 "$T"
LAB_HERE=$PHERE
# shellcheck source=tests/proxy/netlab.sh
. "$PHERE/netlab.sh"
lab_init "$T/lab"
trap 'lab_down; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
lab_up || {
	case "$LAB_ERR" in
	*"ip netns add"* | *veth*) skip "no network namespace / veth support: $LAB_ERR" ;;
	esac
	echo "proxy_bench: the lab did not come up: $LAB_ERR" >&2
	exit 1
}

${CC:-gcc} -O2 -static -pthread -o "$T/bench" "$PHERE/bench.c" 2>"$T/cc.err" ||
	skip "gcc -static failed: $(head -c 200 "$T/cc.err")"
chmod 755 "$T/bench"

lab_inet "$T/bench" serve 9000 >"$T/serve.out" 2>&1 &
i=0
while ! grep -q ready "$T/serve.out" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
grep -q ready "$T/serve.out" || {
	echo "proxy_bench: bench server did not start: $(cat "$T/serve.out")" >&2
	exit 1
}

mkdir -p "$T/ws"
cat >"$T/bench.yaml" <<'EOF'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
allow:
  - network: { destination: "203.0.113.12:9000" }
  - network: { destination: "203.0.113.12:9001" }
sandbox: {network: proxy}
EOF

# direct ARGS...: the client in OUTER.  proxied ARGS...: the client inside airlock run in OUTER.
direct()
{
	lab_out "$T/bench" "$@"
}
proxied()
{
	(cd "$T/ws" && lab_out env -i PATH=/usr/bin:/bin HOME="$T" LANG=C.UTF-8 \
		"$AIRLOCK" run --headless --policy "$T/bench.yaml" --log "$T/bench.jsonl" -- "$T/bench" "$@")
}

# the probe: is there a proxy relaying to the lab?
if ! proxied pingpong 203.0.113.12 9000 10 >"$T/probe.out" 2>&1; then
	skip "airlock has no working egress proxy yet (probe through it: $(tr '\n' ' ' <"$T/probe.out" | cut -c 1-200))"
fi

# field NAME: the value of "NAME value" in $T/r
field() { awk -v k="$1" '$1 == k { print $2 }' "$T/r"; }
# best MODE CURRENT NEW: keeps the better of two numbers (min for times, max for rates)
best()
{
	if [ -z "$2" ]; then echo "$3"; return; fi
	awk -v m="$1" -v a="$2" -v b="$3" 'BEGIN { if ((m == "min" && b < a) || (m == "max" && b > a)) print b; else print a }'
}

dd_s=""; du_s=""; pd_s=""; pu_s=""; dc=""; pc=""; dl=""; pl=""; df=""; pf=""
failed=""
r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	for side in direct proxied; do
		if $side down 203.0.113.12 9000 "$BULK" >"$T/r" 2>&1; then
			v=$(field seconds)
			if [ $side = direct ]; then dd_s=$(best min "$dd_s" "$v"); else pd_s=$(best min "$pd_s" "$v"); fi
		else failed="$failed $side-down($(tr '\n' ' ' <"$T/r" | cut -c 1-120))"; fi
		if $side up 203.0.113.12 9000 "$BULK" >"$T/r" 2>&1; then
			v=$(field seconds)
			if [ $side = direct ]; then du_s=$(best min "$du_s" "$v"); else pu_s=$(best min "$pu_s" "$v"); fi
		else failed="$failed $side-up($(tr '\n' ' ' <"$T/r" | cut -c 1-120))"; fi
		if $side connrate 203.0.113.12 9001 "$CR_SECS" "$CR_THREADS" >"$T/r" 2>&1; then
			v=$(field cps)
			if [ $side = direct ]; then dc=$(best max "$dc" "$v"); else pc=$(best max "$pc" "$v"); fi
			e=$(field errors)
			[ "${e:-0}" = 0 ] || echo "proxy_bench: $side connrate: $e failed connections" >&2
		else failed="$failed $side-connrate($(tr '\n' ' ' <"$T/r" | cut -c 1-120))"; fi
		if $side pingpong 203.0.113.12 9000 "$PINGS" >"$T/r" 2>&1; then
			v=$(field median_us)
			if [ $side = direct ]; then dl=$(best min "$dl" "$v"); else pl=$(best min "$pl" "$v"); fi
		else failed="$failed $side-pingpong($(tr '\n' ' ' <"$T/r" | cut -c 1-120))"; fi
		if $side firstreq 203.0.113.12 9000 "$FIRSTS" >"$T/r" 2>&1; then
			v=$(field median_us)
			if [ $side = direct ]; then df=$(best min "$df" "$v"); else pf=$(best min "$pf" "$v"); fi
		else failed="$failed $side-firstreq($(tr '\n' ' ' <"$T/r" | cut -c 1-120))"; fi
	done
done

# Process start-up of airlock (sandbox, namespace) is inside the proxied side's wall time only
# for what the client measures itself: every figure is timed by the client, not by the shell.
out()
{
	printf 'bench: %s %s %s\n' "$1" "$2" "$3"
}
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
if [ -n "$dd_s" ] && [ -n "$pd_s" ]; then
	out proxy.throughput.ratio "$(calc %.3f "$dd_s / $pd_s")" x
	out proxy.throughput "$(calc %.0f "$BULK / $pd_s / 1048576")" MBps
	out proxy.throughput.direct "$(calc %.0f "$BULK / $dd_s / 1048576")" MBps
fi
if [ -n "$du_s" ] && [ -n "$pu_s" ]; then
	out proxy.throughput.upload.ratio "$(calc %.3f "$du_s / $pu_s")" x
fi
if [ -n "$dc" ] && [ -n "$pc" ]; then
	out proxy.connrate.ratio "$(calc %.3f "$pc / $dc")" x
	out proxy.connrate "$pc" cps
	out proxy.connrate.direct "$dc" cps
fi
if [ -n "$dl" ] && [ -n "$pl" ]; then
	out proxy.latency.added "$(calc %.1f "$pl - $dl")" us
	out proxy.latency.direct "$dl" us
fi
if [ -n "$df" ] && [ -n "$pf" ]; then
	out proxy.latency.firstreq.added "$(calc %.1f "$pf - $df")" us
fi
if [ -n "$failed" ]; then
	echo "proxy_bench: failed runs:$failed" >&2
	exit 1
fi
exit 0
