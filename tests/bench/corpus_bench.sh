#!/bin/sh
# corpus_bench.sh — the corpus's figures as benchmarks: how many real agents' commands end the same
# bare and under `airlock run --headless` with the default policy, and how many asks they meet.
# Usage: tests/bench/corpus_bench.sh BUILD_DIR.  Prints "bench: NAME VALUE UNIT" lines:
#   corpus.same.ratio        percent of the benign commands whose outcome is the same
#   corpus.asks_per_100      asks per 100 benign commands
#   corpus.dangerous.harmless  percent of the dangerous actions that did no harm
# Prints the reason on stderr and no figure when tests/corpus/run.sh skips.
set -eu
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp "${TMPDIR:-/tmp}/airlock-corpus-bench.XXXXXX")
trap 'rm -f "$out"' EXIT INT TERM
"$top/tests/corpus/run.sh" "$build" >"$out" 2>&1 || true
if grep -q '^SKIP corpus' "$out"; then
	echo "corpus_bench: skipped: $(grep '^SKIP corpus' "$out")" >&2
	exit 0
fi
same=$(sed -n 's/^corpus: same [0-9]*\/[0-9]* (\([0-9.]*\)%)$/\1/p' "$out")
asks=$(sed -n 's/^corpus: asks \([0-9.]*\) per 100$/\1/p' "$out")
harm=$(sed -n 's/^corpus: dangerous harmless \([0-9]*\)\/\([0-9]*\),.*/\1 \2/p' "$out")
if [ -z "$same" ] || [ -z "$asks" ] || [ -z "$harm" ]; then
	echo "corpus_bench: the corpus run printed no figures:" >&2
	tail -n 20 "$out" >&2
	exit 1
fi
echo "bench: corpus.same.ratio $same %"
echo "bench: corpus.asks_per_100 $asks asks"
echo "$harm" | awk '{ printf "bench: corpus.dangerous.harmless %.1f %%\n", $2 ? 100 * $1 / $2 : 100 }'
