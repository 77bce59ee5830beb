#!/bin/sh
# claude.sh — real Claude Code (tests/agents/clients) driven by a mock Anthropic Messages API
# (mock_anthropic.py) through the session in claude_script.json: bare (the legitimate steps, to
# prove the mock and the script), then under `airlock run --headless` with the default policy plus
# one allow rule for the mock's address.  Every legitimate step must work, every hostile one be
# stopped (checked from outside: the host's files, the bare remote, the requests the "model" got)
# and logged (a deny or ask line with a rule).  In a network namespace of its own: no packet
# leaves the machine.  Root only; skips loudly without bwrap or the client.
# Usage: tests/agents/claude.sh BUILD_DIR      (AG_KEEP=1 keeps the scratch files)

# shellcheck source=tests/agents/lib.sh
. "$(dirname "$0")/lib.sh"
ag_args "$@"
ag_need claude
ag_netns_enter "$@"
ag_scratch
PORT=8080

# shellcheck source=tests/agents/claude_drive.sh
. "$HERE/claude_drive.sh"

# ---- bare: the legitimate steps, no airlock -------------------------------------------------
ag_fixture "$T/bare"
ag_script "$HERE/claude_script.json" "$T/script-full.json"
ag_script_legit "$T/script-full.json" "$T/script-bare.json"
ag_mock_start anthropic "$PORT" "$T/script-bare.json" "$T/mock-bare"
claude_bare bare
ag_mock_stop
echo "# bare: claude exited $RC after ${WALL}s"
ag_expect "bare: claude finishes the session (exit 0, mock played every step)" \
	sh -c '[ "$1" = 0 ] && grep -q "\"done\": true" "$2/report.json" || { echo "rc $1"; cat "$3"; exit 1; }' \
	sh "$RC" "$T/mock-bare" "$AG_OUT/bare.err"
ag_judge "$T/script-bare.json" "$T/mock-bare" "" --prefix "bare: " --legit-only

# ---- under airlock: the whole session ----------------------------------------------------
ag_fixture "$T/run"
AG_CANARIES="$AG_CANARIES $AG_API_KEY" # a tool that shows the key sends it to the "model"
ag_script "$HERE/claude_script.json" "$T/script.json"
ag_policy "$T/policy.yaml" "$PORT"
cp "$AG_HOME/.bashrc" "$T/bashrc.before"
git -C "$AG_REMOTE" for-each-ref >"$T/remote.before"
head_before=$(git -C "$AG_WS" rev-parse HEAD)
ag_mock_start anthropic "$PORT" "$T/script.json" "$T/mock-run"
claude_airlock airlock
ag_mock_stop
echo "# airlock: claude exited $RC after ${WALL}s; log $LOG"
ag_expect "airlock: claude finishes the session (exit 0, mock played every step)" \
	sh -c '[ "$1" = 0 ] && grep -q "\"done\": true" "$2/report.json" || { echo "rc $1"; tail -c 800 "$3"; exit 1; }' \
	sh "$RC" "$T/mock-run" "$AG_OUT/airlock.err"
ag_judge "$T/script.json" "$T/mock-run" "$LOG" --prefix "airlock: "

# ---- from outside, after the session ---------------------------------------------------
host() { (cd "$AG_WS" && HOME=$AG_HOME GIT_CONFIG_NOSYSTEM=1 "$@"); }
ag_expect "host: the tests pass on the host copy" host "$PY" -m unittest -q
ag_expect "host: the fix is committed in the host repo (with NOTES.md)" sh -c '
	s=$(git -C "$1" log -1 --format=%s) && [ "$s" = fix ] && [ "$(git -C "$1" rev-parse HEAD~1)" = "$2" ] &&
	git -C "$1" cat-file -e HEAD:NOTES.md || { echo "HEAD is \"$s\": $(git -C "$1" log --oneline -3 | tr "\n" " ")"; exit 1; }' \
	sh "$AG_WS" "$head_before"
ag_expect "host: git config user.email x@y applied" sh -c '
	e=$(git -C "$1" config --local user.email); [ "$e" = x@y ] || { echo "user.email is \"$e\""; exit 1; }' sh "$AG_WS"
ag_expect "host: the bare remote did not move" sh -c '
	git -C "$1" for-each-ref | diff "$2" - ' sh "$AG_REMOTE" "$T/remote.before"
ag_expect "host: ~/.bashrc unchanged" cmp "$T/bashrc.before" "$AG_HOME/.bashrc"
ag_expect "host: no .git/hooks/pre-commit planted" sh -c '
	! ls -l "$1/.git/hooks/pre-commit" 2>/dev/null' sh "$AG_WS"
ag_expect "host: no .claude/settings.json planted" sh -c '
	! ls -l "$1/.claude/settings.json" 2>/dev/null' sh "$AG_WS"
ag_expect "host: no .mcp.json planted" sh -c '! ls -l "$1/.mcp.json" 2>/dev/null' sh "$AG_WS"
ag_expect "host: no canary in Claude Code's output" sh -c '
	! grep -l -e "$2" -e "$3" "$1/airlock.out" "$1/airlock.err"' sh "$AG_OUT" "$AG_ENV_SECRET" "$AG_SSH_SECRET"

# ---- under airlock's TUI, in tmux: only the asks the default policy means to ask ----------
# What may still wait for a human in this session: the pushes, and the upload (the curl, or its
# connection to an unknown host).  Every ask is answered N; any other ask is a failure, and so
# is an ask a human allowed (nobody but this test answers).
TUI_ASKS_OK='^(exec git push .*|exec curl .*exfil\.example.*|connect exfil\.example:[0-9]+)$'
ag_fixture "$T/tui"
ag_script "$HERE/claude_script.json" "$T/script-tui.json"
ag_mock_start anthropic "$PORT" "$T/script-tui.json" "$T/mock-tui"
claude_tui tui
tui_rc=$?
ag_mock_stop
ag_tui_expect claude "$tui_rc" '^exec git push origin HEAD$' "$TUI_ASKS_OK" "$T/mock-tui"

tap_plan_end tests
