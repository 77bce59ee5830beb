# check.sh — one TAP line from several expectations, shared by the shim, run and proxy suites.
#
# Source tests/lib/tap.sh first.  The suite runs the program under test and sets RC (its exit
# status), OUT and ERR (its stdout and stderr), then:
#
#   check "dash: denied read"       # start a check
#   expect_rc 1; expect_err_has "Permission denied"; expect_no_file "$W/x"
#   done_check                      # prints ok / not ok, with RC, OUT and ERR when it failed
#
# A suite may set CHECK_ERR_BYTES (how much of stderr a failed check shows, 600 unless set) and
# define check_details, whose output (one diagnostic, empty for none) a failed check adds last.

# check DESC: starts collecting expectations for one TAP line.
check()
{
	CHECK_DESC=$1
	CHECK_FAIL=""
}

# _fail WHY: the check fails, for WHY (one line of the diagnostics).
_fail()
{
	CHECK_FAIL="$CHECK_FAIL
$1"
}

# check_details: nothing by default (see above).
check_details() { :; }

# done_check_todo REASON: as done_check for a known gap the check shows (README says so): a
# failure is TAP's "not ok ... # TODO REASON", not counted; a pass says the gap may be closed.
done_check_todo()
{
	if [ -z "$CHECK_FAIL" ]; then
		tap_ok "$CHECK_DESC # TODO $1 (passes now: the gap may be closed, drop the TODO)"
		return
	fi
	tap_todo "$CHECK_DESC" "$1" "${CHECK_FAIL#?}"
}

# done_check: emits the TAP line (with the program's rc, stdout and stderr when it failed).
done_check()
{
	if [ -z "$CHECK_FAIL" ]; then
		tap_ok "$CHECK_DESC"
		return
	fi
	_check_more=$(check_details)
	# _check_more: one argument, or none when empty
	tap_not_ok "$CHECK_DESC" "${CHECK_FAIL#?}" "rc: $RC" \
		"stdout: $(printf '%s' "$OUT" | head -c 600)" \
		"stderr: $(printf '%s' "$ERR" | head -c "${CHECK_ERR_BYTES:-600}")" \
		${_check_more:+"$_check_more"}
}

expect_rc() { [ "$RC" = "$1" ] || _fail "expected exit status $1, got $RC"; }
expect_rc_not() { [ "$RC" != "$1" ] || _fail "expected exit status other than $1"; }
expect_out_eq() { [ "$OUT" = "$1" ] || _fail "expected stdout \"$1\", got \"$OUT\""; }
expect_out_has()
{
	case "$OUT" in *"$1"*) ;; *) _fail "expected stdout to contain \"$1\"" ;; esac
}
expect_out_lacks()
{
	case "$OUT" in *"$1"*) _fail "stdout contains \"$1\"" ;; esac
}
expect_err_has()
{
	case "$ERR" in *"$1"*) ;; *) _fail "expected stderr to contain \"$1\"" ;; esac
}
expect_err_lacks()
{
	case "$ERR" in *"$1"*) _fail "stderr contains \"$1\"" ;; esac
}
# expect_out_re ERE: a stdout line matches ERE.
expect_out_re()
{
	printf '%s\n' "$OUT" | grep -qE -- "$1" || _fail "expected a stdout line matching /$1/"
}
expect_out_not_re()
{
	l=$(printf '%s\n' "$OUT" | grep -E -- "$1" | head -n 2)
	[ -z "$l" ] || _fail "stdout line matches /$1/: $l"
}
# expect_err_re ERE: a line of stderr matches ERE.
expect_err_re()
{
	printf '%s\n' "$ERR" | grep -qE -- "$1" || _fail "expected a stderr line matching /$1/"
}
# expect_err_count N TEXT: exactly N lines of stderr contain TEXT.
expect_err_count()
{
	got=$(printf '%s\n' "$ERR" | grep -cF -- "$2")
	[ "$got" = "$1" ] || _fail "expected $1 stderr line(s) with \"$2\", got $got"
}

# expect_file PATH: PATH exists (a symlink counts, even a dangling one).
expect_file() { [ -e "$1" ] || [ -L "$1" ] || _fail "expected $1 to exist"; }
expect_no_file()
{
	if [ -e "$1" ] || [ -L "$1" ]; then
		_fail "$1 exists: the denied action happened"
	fi
}
expect_dir() { [ -d "$1" ] || _fail "expected directory $1"; }

# expect_content FILE TEXT: FILE holds exactly TEXT (plus an optional final newline).
expect_content()
{
	if [ ! -f "$1" ]; then
		_fail "expected $1 to exist with \"$2\""
	elif [ "$(cat "$1")" != "$2" ]; then
		_fail "expected $1 to hold \"$2\", it holds \"$(head -c 200 "$1")\""
	fi
}
