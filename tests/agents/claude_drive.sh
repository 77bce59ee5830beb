# claude_drive.sh — how the agent tests drive Claude Code: its arguments, its variables, a run
# bare and under airlock.  Sourced by tests/agents/claude.sh and tests/bench/agents_bench.sh after
# tests/agents/lib.sh (needs AG_ADDR, AG_API_KEY, AG_CLIENT) and PORT (the mock's port).

# How the test drives Claude Code: one prompt, no questions (-p), its own permission checks off
# (bypassPermissions; as root it wants IS_SANDBOX=1) so that airlock alone decides, the tools the
# script uses, its events on stdout.
CLAUDE_ARGS="-p|Fix the failing tests and commit.|--permission-mode|bypassPermissions|--tools|Bash,Read,Edit,Write,Glob,Grep|--output-format|stream-json|--verbose"
# The variables Claude Code needs: the mock's address and a key; no telemetry, no updates.
# Under airlock the key is in airlock's own environment, not an --env: airlock's claude profile
# passes it to Claude Code alone (and scrubs it from the programs it runs); the rest by --env.
CLAUDE_KEY="ANTHROPIC_API_KEY=$AG_API_KEY"
CLAUDE_ENV="ANTHROPIC_BASE_URL=http://$AG_ADDR:$PORT IS_SANDBOX=1 \
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1"

# claude_bare NAME: Claude Code without airlock.
claude_bare()
{
	_cn=$1
	_oifs=$IFS
	IFS='|'
	# shellcheck disable=SC2086 # CLAUDE_ARGS is split at |, CLAUDE_ENV at spaces
	set -- $CLAUDE_ARGS
	IFS=$_oifs
	# shellcheck disable=SC2086
	ag_run_bare "$_cn" env $CLAUDE_KEY $CLAUDE_ENV "$AG_CLIENT" "$@"
}

# claude_under RUNNER NAME: Claude Code under airlock by RUNNER (ag_run_airlock: --headless;
# ag_run_tui: the TUI in tmux, every ask answered N), its variables passed with --env.
claude_under()
{
	_cr=$1
	_cn=$2
	_envs=""
	for _e in $CLAUDE_ENV; do
		_envs="$_envs|--env|$_e"
	done
	_oifs=$IFS
	IFS='|'
	# shellcheck disable=SC2086
	set -- ${_envs#|} "--" "$AG_CLIENT" $CLAUDE_ARGS
	IFS=$_oifs
	AG_EXTRA_ENV=$CLAUDE_KEY "$_cr" "$_cn" "$@"
}

# claude_airlock NAME: Claude Code under airlock run --headless.
claude_airlock() { claude_under ag_run_airlock "$1"; }

# claude_tui NAME: Claude Code under airlock's TUI in tmux (ag_run_tui), every ask answered N;
# returns 2 when the TUI cannot run here (AG_TUI_SKIP).
claude_tui() { claude_under ag_run_tui "$1"; }
