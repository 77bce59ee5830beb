# codex_drive.sh — how the agent tests drive Codex CLI: its arguments, its variables, a run bare
# and under airlock.  Sourced by tests/agents/codex.sh and tests/bench/agents_bench.sh after
# tests/agents/lib.sh (needs AG_ADDR, and AG_CODEX: the codex launcher) and PORT (the mock's port).

# The key Codex sends the mock; a canary too: no tool command may see it, so it must never show
# in a request body (it travels only in the Authorization header).  Bare, Codex hands it to every
# tool command (that is what airlock must stop), so only the airlock run counts it a canary.
CODEX_KEY=sk-proj-mock-CODEX_KEY_CANARY_5d2e8f

# Codex's background traffic, off: the plugin catalogue (git ls-remote of github.com/openai/plugins,
# api.github.com), apps, analytics (ab.chatgpt.com) and feedback.  In the test's namespace it all
# fails, but not alike: bare, by DNS timeouts (the resolver's 2.5 s polls, seconds per session);
# under airlock, by the proxy's immediate refusals.  The bench turns it off on both sides (it sets
# CODEX_QUIET_BG=1 before sourcing this file) so that the ratio compares the session; the test
# leaves Codex as users run it.
CODEX_QUIET="--disable|plugins|--disable|remote_plugin|--disable|apps|\
-c|analytics.enabled=false|-c|feedback.enabled=false"

# How the test drives Codex: `codex exec` (one prompt, no questions), the mock as its model
# provider (Responses API, the only one Codex 0.171 speaks), a model Codex knows (gpt-5.5: its
# metadata gives the apply_patch tool; an unknown name gets fallback metadata without it), its
# events on stdout as JSON Lines.  Codex's own sandbox (bubblewrap + seccomp) and approvals are
# off (--dangerously-bypass-approvals-and-sandbox): airlock is the sandbox, and Codex's
# bubblewrap cannot make namespaces inside airlock's seccomp filter anyway.
CODEX_ARGS="exec|--json|--skip-git-repo-check|--dangerously-bypass-approvals-and-sandbox|\
-c|model_providers.mock.name=mock|\
-c|model_providers.mock.base_url=http://$AG_ADDR:$PORT/v1|\
-c|model_providers.mock.wire_api=responses|\
-c|model_providers.mock.env_key=OPENAI_API_KEY|\
-c|model_provider=mock|-c|model=gpt-5.5|\
${CODEX_QUIET_BG:+$CODEX_QUIET|}Fix the failing tests and commit."
# Under airlock the key is in airlock's own environment, not an --env: airlock's codex profile
# passes OPENAI_API_KEY to Codex alone (and the shim scrubs it from the programs it runs).
CODEX_KEY_ENV="OPENAI_API_KEY=$CODEX_KEY"

# codex_bare NAME: Codex without airlock.
codex_bare()
{
	_xn=$1
	_oifs=$IFS
	IFS='|'
	# shellcheck disable=SC2086 # CODEX_ARGS is split at |
	set -- $CODEX_ARGS
	IFS=$_oifs
	ag_run_bare "$_xn" env "$CODEX_KEY_ENV" "$AG_CODEX" "$@"
}

# codex_under RUNNER NAME: Codex under airlock by RUNNER (ag_run_airlock: --headless;
# ag_run_tui: the TUI in tmux, every ask answered N), its key in airlock's environment.
codex_under()
{
	_xr=$1
	_xn=$2
	_oifs=$IFS
	IFS='|'
	# shellcheck disable=SC2086 # CODEX_ARGS is split at |
	set -- "--" "$AG_CODEX" $CODEX_ARGS
	IFS=$_oifs
	AG_EXTRA_ENV=$CODEX_KEY_ENV "$_xr" "$_xn" "$@"
}

# codex_airlock NAME: Codex under airlock run --headless.
codex_airlock() { codex_under ag_run_airlock "$1"; }

# codex_tui NAME: Codex under airlock's TUI in tmux (ag_run_tui), every ask answered N; returns 2
# when the TUI cannot run here (AG_TUI_SKIP).
codex_tui() { codex_under ag_run_tui "$1"; }
