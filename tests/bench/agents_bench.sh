#!/bin/sh
# agents_bench.sh — the wall time of a real agent's session under airlock against the same session
# bare: Claude Code driven by the mock Anthropic API (tests/agents/mock_anthropic.py) through the
# legitimate steps of tests/agents/claude_script.json, in a fresh fixture each run, RUNS (default
# 5) runs each, interleaved, in a network namespace the bench makes (no packet leaves the machine).
# Prints "bench: agents.claude.wall.ratio R x" (median under airlock / median bare) and the raw
# medians ("bench: agents.claude.wall.bare S s", ".airlock"); each run's seconds, and how many
# legitimate steps failed in it (a failed step is quicker: the ratio then flatters), go to stderr.
# Then the same for Codex CLI (mock_openai.py, codex_script.json): "bench: agents.codex.wall.ratio".
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

# bench AGENT MOCK: RUNS interleaved bare and airlock sessions of AGENT (AGENT_bare, AGENT_airlock
# from tests/agents/AGENT_drive.sh; tests/agents/AGENT_script.json's legitimate steps) against
# mock_MOCK.py; prints its three bench lines.
bench()
{
	i=0
	while [ $i -lt "$RUNS" ]; do
		i=$((i + 1))
		for mode in bare airlock; do
			r=$1-$mode$i
			ag_fixture "$T/$r"
			ag_script "$HERE/$1_script.json" "$T/full-$r.json"
			ag_script_legit "$T/full-$r.json" "$T/script-$r.json"
			[ "$mode" = airlock ] && ag_policy "$T/policy-$r.yaml" "$PORT"
			ag_mock_start "$2" "$PORT" "$T/script-$r.json" "$T/mock-$r"
			"$1_$mode" "$r"
			ag_mock_stop
			grep -q '"done": true' "$T/mock-$r/report.json" ||
				echo "agents_bench: $1 $mode run $i did not finish the session (exit $RC)" >&2
			fails=$("$PY" "$HERE/judge.py" --script "$T/script-$r.json" --out "$T/mock-$r" \
				--legit-only | grep -c '^FAIL')
			echo "agents_bench: $1 $mode run $i: ${WALL}s (exit $RC), $fails legitimate step(s) failed" >&2
			[ "$fails" = 0 ] || echo "agents_bench: $1 $mode run $i is not the whole session: the" \
				"ratio compares a shorter one" >&2
			echo "$WALL" >>"$T/$1.$mode.times"
		done
	done
	bare=$(median <"$T/$1.bare.times")
	air=$(median <"$T/$1.airlock.times")
	echo "bench: agents.$1.wall.bare $bare s"
	echo "bench: agents.$1.wall.airlock $air s"
	echo "bench: agents.$1.wall.ratio $(echo "$air $bare" | awk '{printf "%.2f", $1 / $2}') x"
}

bench claude anthropic
# Codex CLI, when scripts/deps.sh installed it too (tests/agents/codex_drive.sh).
AG_CODEX=$AG_CLIENTS/node_modules/.bin/codex
if [ -x "$AG_CODEX" ] && "$AG_CODEX" --version >/dev/null 2>&1; then
	CODEX_QUIET_BG=1 # its background traffic off on both sides (see codex_drive.sh)
	# shellcheck source=tests/agents/codex_drive.sh
	. "$HERE/codex_drive.sh"
	bench codex openai
else
	echo "SKIP: agents_bench: codex is not installed in tests/agents/clients (run scripts/deps.sh)" >&2
fi
