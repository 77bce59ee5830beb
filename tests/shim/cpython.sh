#!/bin/sh
# cpython.sh — transparency test: CPython's own test_os, test_subprocess, test_posix, test_fileio give the same
# pass/fail/error/skip counts with the shim (allow-all policy) as without it.  TAP.
#
# Usage: tests/shim/cpython.sh BUILD_DIR
# Environment: KEEP_TMP=1 keeps the temp tree (both runs' logs and JUnit XML);
# CPYTHON_TESTS="test_os ..." overrides the test modules; CPYTHON_TIMEOUT (s, default 1800) per run.
#
# Needs /usr/bin/python3 with its test suite (Debian: libpython3.11-testsuite);
# skips, saying so, when it is missing.  Each run gets a fresh HOME and TMPDIR.
set -u

HERE=$(cd "$(dirname "$0")" && pwd -P)
# shellcheck source=tests/shim/lib.sh
. "$HERE/lib.sh"
shim_suite_init "$@"

TESTS=${CPYTHON_TESTS:-"test_os test_subprocess test_posix test_fileio"}
RUN_TIMEOUT=${CPYTHON_TIMEOUT:-1800}

missing=""
if [ ! -x "$PY" ]; then
	missing="$PY is not installed"
else
	for t in $TESTS; do
		"$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('test.$t') is None)" \
			2>/dev/null || missing="$missing test.$t"
	done
	[ -n "$missing" ] && missing="CPython's test suite is missing ($missing ); install libpython3.11-testsuite"
fi
if [ -n "$missing" ]; then
	echo "1..1"
	tap_skip "cpython transparency: $missing"
	echo "skipped: cpython transparency: $missing"
	exit 0
fi

lib_setup
cat >"$T/policy.yaml" <<'EOF'
version: 1
# allow-all: the shim decides every call, and every decision is allow
default: { exec: allow, read: allow, write: allow, connect: allow }
EOF
policy_compile "$T/policy.yaml"
# Run as root, test_subprocess.test_user starts children as another uid (nobody): with
# the 0700 session dir they could not map the image and would fail closed (correct,
# but not what this test measures), so the session dir is opened to every uid here.
chmod 755 "$T" "$S"
chmod 444 "$S/policy.img"
server_start --answer allow

# run_suite NAME [VAR=VALUE...]: runs the tests in $T/NAME with a fresh HOME and TMPDIR; JUnit in $T/NAME.xml.
run_suite()
{
	name=$1
	shift
	mkdir -p "$T/$name/cwd" "$T/$name/home" "$T/$name/tmp"
	start=$(date +%s)
	(
		cd "$T/$name/cwd" || exit 125
		# shellcheck disable=SC2086
		exec timeout -k 10 "$RUN_TIMEOUT" env -i PATH=/usr/bin:/bin HOME="$T/$name/home" \
			TMPDIR="$T/$name/tmp" LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 "$@" \
			"$PY" -m test --junit-xml "$T/$name.xml" $TESTS
	) >"$T/$name.log" 2>&1 </dev/null
	rc=$?
	echo "# $name: python3 -m test exited $rc after $(($(date +%s) - start)) s"
	eval "${name}_rc=$rc"
}

# counts NAME: one line per module and a total: "module tests pass fail error skip unknown"; and $T/NAME.outcomes.
counts()
{
	"$PY" - "$T/$1.xml" "$T/$1.outcomes" <<'EOF'
import collections, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
per = collections.OrderedDict()
out = []
unnamed = 0
for tc in root.iter("testcase"):
    name = tc.get("name")
    kinds = {c.tag for c in tc}
    if not name:
        # regrtest writes an empty <testcase/> when a test's result could not be recorded
        unnamed += 1
        name, module, outcome = "(unnamed-%d)" % unnamed, "(unnamed)", "unknown"
    else:
        parts = name.split(".")
        module = parts[1] if len(parts) > 2 and parts[0] == "test" else parts[0]
        outcome = ("error" if "error" in kinds else "fail" if "failure" in kinds
                   else "skip" if "skipped" in kinds else "pass")
    c = per.setdefault(module, collections.Counter())
    c["tests"] += 1
    c[outcome] += 1
    out.append("%s %s" % (name, outcome))
total = collections.Counter()
for m, c in per.items():
    total.update(c)
    print(m, c["tests"], c["pass"], c["fail"], c["error"], c["skip"], c["unknown"])
print("total", total["tests"], total["pass"], total["fail"], total["error"], total["skip"], total["unknown"])
with open(sys.argv[2], "w") as f:
    f.write("\n".join(sorted(out)) + "\n")
EOF
}

plain_rc=none
shim_rc=none
echo "# CPython $("$PY" -c 'import sys; print(sys.version.split()[0])'): $TESTS"
echo "# columns: module tests pass fail error skip unknown (unknown: an empty <testcase/> in regrtest's XML)"
run_suite plain
run_suite shim AIRLOCK_DIR="$S" LD_PRELOAD="$SHIM"
server_stop

n_ok=1
for name in plain shim; do
	if [ -s "$T/$name.xml" ] && counts "$name" >"$T/$name.counts" 2>"$T/$name.counts.err"; then
		tap_ok "cpython: the run $( [ $name = shim ] && echo under the shim || echo without the shim ) produced results"
	else
		n_ok=0
		tap_not_ok "cpython: the run $( [ $name = shim ] && echo under the shim || echo without the shim ) produced results" \
			"no JUnit XML or unreadable: $(cat "$T/$name.counts.err" 2>/dev/null)" "last lines of its output:" \
			"$(tail -n 25 "$T/$name.log")"
	fi
done

if [ $n_ok = 1 ]; then
	for m in $TESTS total; do
		a=$(grep "^$m " "$T/plain.counts" | cut -d' ' -f2-)
		b=$(grep "^$m " "$T/shim.counts" | cut -d' ' -f2-)
		[ -n "$a" ] || a="(none)"
		[ -n "$b" ] || b="(none)"
		if [ "$a" = "$b" ]; then
			tap_ok "cpython: $m: same counts with and without the shim (tests pass fail error skip unknown: $a)"
		else
			tap_not_ok "cpython: $m: counts differ (tests pass fail error skip unknown)" "without the shim: $a" \
				"under the shim:    $b"
		fi
	done
	for m in $(grep -v '^total ' "$T/shim.counts" | cut -d' ' -f1); do
		case " $TESTS total " in *" $m "*) continue ;; esac
		tap_not_ok "cpython: the shim run has results outside the test modules: $m" "$(grep "^$m " "$T/shim.counts")"
	done
	# regrtest's own verdict per module (a module can fail in ways the XML does not show)
	for name in plain shim; do
		sed -n '/^[0-9]* tests\{0,1\} failed/,/^$/p; /^[0-9]* tests\{0,1\} failed again/,/^$/p' "$T/$name.log" |
			grep -o 'test_[A-Za-z0-9_]*' | sort -u >"$T/$name.failed"
	done
	if cmp -s "$T/plain.failed" "$T/shim.failed"; then
		tap_ok "cpython: regrtest reports the same failed modules ($(tr '\n' ' ' <"$T/plain.failed")) with and without the shim"
	else
		tap_not_ok "cpython: regrtest's failed modules differ" "without the shim: $(tr '\n' ' ' <"$T/plain.failed")" \
			"under the shim:    $(tr '\n' ' ' <"$T/shim.failed")" "the shim run's errors:" \
			"$(grep -n -B2 -A8 'Error\|^FAIL\|^ERROR' "$T/shim.log" | head -n 60)"
	fi
	diffs=$(diff "$T/plain.outcomes" "$T/shim.outcomes" | grep '^[<>]')
	if [ -z "$diffs" ]; then
		tap_ok "cpython: every test has the same outcome with and without the shim"
	else
		tap_not_ok "cpython: tests whose outcome differs ('<' without the shim, '>' under it)" "$diffs"
		# the shim run's failure details, for the tests that differ
		for t in $(printf '%s\n' "$diffs" | grep '^>' | grep -v ' pass$' | awk '{print $2}' | head -n 20); do
			short=${t##*.}
			echo "# --- $t under the shim:"
			awk -v t="$short" '$0 ~ "^(FAIL|ERROR): " t " " {p = 1} p && /^(FAIL|ERROR): / && $0 !~ t {p = 0} p' \
				"$T/shim.log" | head -n 30 | sed 's/^/#   /'
		done
	fi
fi
echo "# plain run: exit $plain_rc; shim run: exit $shim_rc"
tap_plan_end
