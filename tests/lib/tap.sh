# tap.sh — TAP output shared by the shell test suites (shim, run, proxy): counters, ok / not ok, the plan.
# Each suite sourcing this defines its own tap_skip (how a skip reads is the suite's).

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

# The plan, after the tests; returns 1 when any failed (their names listed).
tap_plan_end()
{
	echo "1..$TAP_N"
	if [ "$TAP_FAILED" -gt 0 ]; then
		echo "# $TAP_FAILED of $TAP_N failed:$TAP_FAILED_NAMES"
		return 1
	fi
	echo "# all $TAP_N passed"
	return 0
}
