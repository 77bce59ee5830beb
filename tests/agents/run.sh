#!/bin/sh
# run.sh — the agent suites: real agent CLIs driven by mock model APIs through scripted sessions
# under airlock (claude.sh; codex.sh when present).  Each runs in a network namespace of its own
# and skips loudly when it cannot run here (not root, no bwrap, the CLI not installed).
# Usage: tests/agents/run.sh BUILD_DIR      exit 1 when any suite failed
HERE=$(cd "$(dirname "$0")" && pwd -P)
if [ $# -ne 1 ] || [ ! -x "$1/airlock" ]; then
	echo "usage: $0 BUILD_DIR   (BUILD_DIR/airlock must exist)" >&2
	exit 2
fi
failed=""
for s in claude codex; do
	if [ ! -f "$HERE/$s.sh" ]; then
		echo "# SKIP $s: tests/agents/$s.sh is not there"
		continue
	fi
	echo "== tests/agents/$s.sh"
	sh "$HERE/$s.sh" "$1" || failed="$failed $s"
done
if [ -n "$failed" ]; then
	echo "# agent suites failed:$failed"
	exit 1
fi
