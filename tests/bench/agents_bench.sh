#!/bin/sh
# agents_bench.sh — the wall time of a real agent's session under airlock against the same session
# bare: Claude Code driven by the mock Anthropic API (tests/agents/mock_anthropic.py) through the
# legitimate steps of tests/agents/claude_script.json, in a fresh fixture each run, RUNS (default
# 5) runs each, interleaved, in a network namespace the bench makes (no packet leaves the machine).
# Prints "bench: agents.claude.wall.ratio R x" (median under airlock / median bare) and the raw
# medians ("bench: agents.claude.wall.bare S s", ".airlock"); each run's seconds, and how many
# legitimate steps failed in it (a failed step is quicker: the ratio then flatters), go to stderr.
# Root only; skips loudly (exit 0) when not root, without bwrap or without the client.
# Usage: tests/bench/agents_bench.sh BUILD_DIR

# shellcheck source=tests/agents/lib.sh
. "$(dirname "$0")/../agents/lib.sh"
ag_args "$@"
ag_need claude
ag_netns_enter "$@"
ag_scratch
PORT=8080
RUNS=${RUNS:-5}
# shellcheck source=tests/agents/claude_drive.sh
. "$HERE/claude_drive.sh"

median() { sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

i=0
while [ $i -lt "$RUNS" ]; do
	i=$((i + 1))
	for mode in bare airlock; do
		ag_fixture "$T/$mode$i"
		ag_script "$HERE/claude_script.json" "$T/full$mode$i.json"
		ag_script_legit "$T/full$mode$i.json" "$T/script$mode$i.json"
		[ "$mode" = airlock ] && ag_policy "$T/policy$i.yaml" "$PORT"
		ag_mock_start anthropic "$PORT" "$T/script$mode$i.json" "$T/mock$mode$i"
		"claude_$mode" "$mode$i"
		ag_mock_stop
		grep -q '"done": true' "$T/mock$mode$i/report.json" ||
			echo "agents_bench: $mode run $i did not finish the session (exit $RC)" >&2
		fails=$("$PY" "$HERE/judge.py" --script "$T/script$mode$i.json" --out "$T/mock$mode$i" \
			--legit-only | grep -c '^FAIL')
		echo "agents_bench: $mode run $i: ${WALL}s (exit $RC), $fails legitimate step(s) failed" >&2
		[ "$fails" = 0 ] || echo "agents_bench: $mode run $i is not the whole session: the ratio" \
			"compares a shorter one" >&2
		echo "$WALL" >>"$T/$mode.times"
	done
done
bare=$(median <"$T/bare.times")
air=$(median <"$T/airlock.times")
echo "bench: agents.claude.wall.bare $bare s"
echo "bench: agents.claude.wall.airlock $air s"
echo "bench: agents.claude.wall.ratio $(echo "$air $bare" | awk '{printf "%.2f", $1 / $2}') x"
