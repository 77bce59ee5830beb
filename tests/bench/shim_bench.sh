#!/bin/sh
# shim_bench.sh — the shim's figures: open()+close() and fork+exec loops with and without the shim, and its constructor cost.
# Usage: tests/bench/shim_bench.sh BUILD_DIR.  Prints "bench: NAME VALUE UNIT" lines (ratios: shim / no shim, same run).
set -eu
build=$(cd "${1:-build}" && pwd)
loop=$build/bench/shim_loop
shim=$build/airlock-preload.so
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM

mkdir -p "$tmp/session" "$tmp/ws/src"
echo 'int main(void) { return 0; }' > "$tmp/ws/src/main.c"
"$build/tests/policy_image" "$top/policy/default_policy.yaml" "$tmp/session/policy.img" "$HOME" "$tmp/ws"
"$build/tests/channel_server" "$tmp/session/channel" "$tmp/channel.log" --answer deny &
server_pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -S "$tmp/session/channel" ] && break; sleep 0.1; done
export AIRLOCK_DIR="$tmp/session"
cd "$tmp/ws"

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# open()+close() of an allowed workspace file (reads are allowed by the default policy)
: > "$tmp/open.base"; : > "$tmp/open.shim"
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21; do
	"$loop" open 200000 src/main.c >> "$tmp/open.base"
	LD_PRELOAD=$shim "$loop" open 200000 src/main.c >> "$tmp/open.shim"
done
ob=$(median < "$tmp/open.base"); os=$(median < "$tmp/open.shim")

# 1000 x fork + exec /bin/true + wait; also with an empty preloaded library, the floor any
# LD_PRELOAD shim starts from on this machine (the loader opening and mapping one more object)
echo 'void airlock_bench_empty(void) {}' > "$tmp/empty.c"
cc -shared -fPIC -O2 -o "$tmp/empty.so" "$tmp/empty.c"
# the tripwire mode (no launcher): each exec decided from $tmp/tripwire.img and appended to a log
"$build/tests/policy_image" "$top/policy/default_policy.yaml" "$tmp/tripwire.img" "$HOME" "$tmp/ws"
: > "$tmp/exec.base"; : > "$tmp/exec.shim"; : > "$tmp/exec.empty"; : > "$tmp/exec.tripwire"
for _ in 1 2 3 4 5; do
	"$loop" exec 1000 >> "$tmp/exec.base"
	LD_PRELOAD=$shim "$loop" exec 1000 >> "$tmp/exec.shim"
	LD_PRELOAD=$tmp/empty.so "$loop" exec 1000 >> "$tmp/exec.empty"
	env -u AIRLOCK_DIR AIRLOCK_IMAGE="$tmp/tripwire.img" AIRLOCK_LOG="$tmp/tripwire.jsonl" \
		LD_PRELOAD=$shim "$loop" exec 1000 >> "$tmp/exec.tripwire"
done
eb=$(median < "$tmp/exec.base"); es=$(median < "$tmp/exec.shim"); ee=$(median < "$tmp/exec.empty")
et=$(median < "$tmp/exec.tripwire")

# the constructor, and the image mapping of a process's first decision, in 101 fresh processes each
: > "$tmp/init"; : > "$tmp/image"
i=0
while [ $i -lt 101 ]; do
	LD_PRELOAD=$shim "$loop" init >> "$tmp/init"
	LD_PRELOAD=$shim "$loop" image >> "$tmp/image"
	i=$((i + 1))
done
in=$(median < "$tmp/init"); im=$(median < "$tmp/image")

awk -v ob="$ob" -v os="$os" -v eb="$eb" -v es="$es" -v ee="$ee" -v et="$et" -v init="$in" -v image="$im" 'BEGIN {
	printf "bench: shim.open.base %.0f ns\n", ob / 200000
	printf "bench: shim.open.shim %.0f ns\n", os / 200000
	printf "bench: shim.open.ratio %.3f x\n", os / ob
	printf "bench: shim.exec.base %.0f us\n", eb / 1000 / 1000
	printf "bench: shim.exec.shim %.0f us\n", es / 1000 / 1000
	printf "bench: shim.exec.ratio %.3f x\n", es / eb
	printf "bench: shim.exec.empty_preload.ratio %.3f x\n", ee / eb
	printf "bench: shim.exec.tripwire %.0f us\n", et / 1000 / 1000
	printf "bench: shim.exec.tripwire.ratio %.3f x\n", et / eb
	printf "bench: shim.exec.tripwire.empty_preload.ratio %.3f x\n", et / ee
	printf "bench: shim.init %.1f us\n", init / 1000
	printf "bench: shim.init.image %.1f us\n", image / 1000
}'
