#!/bin/sh
# run.sh — the corpus of real agents' commands: benign ones bare vs under `airlock run --headless`
# with the default policy (outcomes compared), dangerous ones under airlock (no harm, refusal
# logged).  Usage: tests/corpus/run.sh BUILD_DIR [--jobs N] [--only ID...]
# Prints `corpus: same N/M (P%)`, `corpus: asks A per 100`, `corpus: dangerous harmless D/E,
# logged L/E`; exits 1 below the thresholds (98% the same, 2 asks per 100, every dangerous action
# harmless and logged; cases waiting for another helper's work are printed PENDING, not failed).
# Skips loudly (exit 0, "SKIP") when airlock cannot run a sandbox here or no network namespace
# can be made (no packet may leave: every run is in a network namespace of its own).
set -eu
if [ $# -lt 1 ] || [ ! -x "$1/airlock" ]; then
	echo "usage: $0 BUILD_DIR [--jobs N] [--only ID...]  (BUILD_DIR/airlock built)" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
shift
HERE=$(cd "$(dirname "$0")" && pwd)
for tool in python3 git unshare; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP corpus: $tool is not installed"
		exit 0
	fi
done
if [ "$(id -u)" = 0 ]; then
	netns="unshare -n true"
else
	netns="unshare --map-current-user -n true"
fi
if ! $netns 2>/dev/null; then
	echo "SKIP corpus: cannot make a network namespace here ($netns), and no packet may leave"
	exit 0
fi
if ! "$BUILD/airlock" doctor >/dev/null 2>&1; then
	echo "SKIP corpus: airlock run cannot build its sandbox here (see $BUILD/airlock doctor)"
	exit 0
fi
# Under /var/tmp, not /tmp: inside the sandbox /tmp is a private tmpfs, and the workspace and the
# scratch home must be the same paths inside as outside.
base=/var/tmp
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
T=$(mktemp -d "$base/airlock-corpus.XXXXXX")
if [ -n "${AIRLOCK_CORPUS_KEEP:-}" ]; then
	trap 'echo "corpus: scratch files kept in $T"' EXIT
else
	trap 'rm -rf "$T"' EXIT
fi
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -ge 2 ] || jobs=2
python3 "$HERE/corpus.py" "$BUILD/airlock" "$T" --jobs "$((jobs * 2))" "$@"
