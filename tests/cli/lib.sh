# lib.sh — helpers shared by the CLI tests: pass / fail / skip (TAP, through tests/lib/tap.sh), and running airlock with expectations.
# The sourcing script sets AIRLOCK (the binary) and TMP (a scratch directory) first, and ends
# with `tap_plan_end tests`.

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh" # every suite lives in tests/NAME/

# pass DESC; fail DESC [DETAIL...] (each detail line printed as a TAP comment); skip DESC REASON.
pass() { tap_ok "$1"; }
fail() { tap_not_ok "$@"; }
skip() { tap_skip "$@"; }

# run ARG...: runs airlock; sets RC, output in $TMP/out and $TMP/err.
run() {
	"$AIRLOCK" "$@" >"$TMP/out" 2>"$TMP/err"
	RC=$?
}

details() {
	echo "exit status $RC"
	sed 's/^/stdout: /' "$TMP/out"
	sed 's/^/stderr: /' "$TMP/err"
}

# expect DESC STATUS ARG...: airlock ARG... exits with STATUS.
expect() {
	desc=$1 want=$2
	shift 2
	run "$@"
	if [ "$RC" = "$want" ]; then pass "$desc"; else fail "$desc" "wanted exit $want" "$(details)"; fi
}

# has DESC FILE TEXT: FILE (out or err) of the last run contains TEXT.
has() {
	if grep -qF -- "$3" "$TMP/$2"; then pass "$1"; else fail "$1" "no '$3' in std$2" "$(details)"; fi
}

# has_re DESC FILE ERE: a line of FILE (out or err) of the last run matches ERE.
has_re() {
	if grep -qE -- "$3" "$TMP/$2"; then pass "$1"; else fail "$1" "no /$3/ in std$2" "$(details)"; fi
}

# lacks DESC FILE TEXT: FILE (out or err) of the last run does not contain TEXT.
lacks() {
	if grep -qF -- "$3" "$TMP/$2"; then fail "$1" "'$3' in std$2" "$(details)"; else pass "$1"; fi
}
