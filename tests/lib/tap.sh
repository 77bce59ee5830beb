# tap.sh — TAP output shared by the shell test suites (shim, run, proxy, cli, tui): counters, ok / not ok / skip, the plan.

TAP_N=0
TAP_FAILED=0
TAP_FAILED_NAMES=""

tap_ok()
{
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1"
}

# tap_not_ok DESC [DIAGNOSTIC...]: each diagnostic line is printed as a TAP comment.
tap_not_ok()
{
	TAP_N=$((TAP_N + 1))
	TAP_FAILED=$((TAP_FAILED + 1))
	TAP_FAILED_NAMES="$TAP_FAILED_NAMES
  $TAP_N - $1"
	echo "not ok $TAP_N - $1"
	shift
	for d in "$@"; do
		printf '%s\n' "$d" | sed 's/^/#   /'
	done
}

# tap_todo DESC REASON [DIAGNOSTIC...]: a known gap (TAP's TODO directive): printed as not ok
# with the reason, never counted as a failure; the diagnostics say what was seen.
tap_todo()
{
	TAP_N=$((TAP_N + 1))
	echo "not ok $TAP_N - $1 # TODO $2"
	shift 2
	for d in "$@"; do
		printf '%s\n' "$d" | sed 's/^/#   /'
	done
}

# tap_skip DESC REASON: a test that could not run here, and why.  (The shim suite words its own.)
tap_skip()
{
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1 # SKIP skipped: $2"
}

# tap_plan_end [NOUN]: the plan, after the tests, and a summary ("# all 12 passed", or with
# NOUN "tests": "# all 12 tests passed"); returns 1 when any failed (their names listed).
tap_plan_end()
{
	_tap_noun=${1:+$1 }
	echo "1..$TAP_N"
	if [ "$TAP_FAILED" -gt 0 ]; then
		echo "# $TAP_FAILED of $TAP_N ${_tap_noun}failed:$TAP_FAILED_NAMES"
		return 1
	fi
	echo "# all $TAP_N ${_tap_noun}passed"
	return 0
}
