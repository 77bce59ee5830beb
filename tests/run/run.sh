#!/bin/sh
# run.sh — TAP integration tests of `airlock run`: the real build/airlock on real programs (sh, cat,
# git, python3, make, a static binary) in a scratch workspace with a scratch home, asserting on
# exit statuses, files and audit-log lines.
#
# Usage: tests/run/run.sh BUILD_DIR        (BUILD_DIR holds airlock and airlock-preload.so)
#
# The main scenarios run as the current user and, when that is root, again as nobody through
# `setpriv --reuid=nobody --regid=nogroup --clear-groups` (bubblewrap then adds a user
# namespace): most users are not root, and both must pass.  Cases needing bubblewrap, root or
# gcc -static skip with the reason.  Network cases never send a packet off this machine: the
# only server is one this script starts on the host's 127.0.0.1, and reaching it from inside
# the sandbox (which has its own loopback) is the failure.
#
# Environment: KEEP_TMP=1 keeps the scratch tree; CASE_TIMEOUT (s) bounds one run (default 40);
# ONLY_USER=NAME runs the per-user cases for that user only; ONLY_CASES="a b" runs cases a, b.
# Exits 1 when any case fails.
# The cases are in sandbox.sh, session.sh, control.sh, launcher.sh, copies.sh, profiles.sh, landlock.sh, escapes.sh, redteam.sh, sockets.sh and undo.sh; the helpers in lib.sh and
# tests/lib/.
set -u

# shellcheck source=tests/lib/suite.sh
. "$(dirname "$0")/../lib/suite.sh"
suite_build_dir airlock "$@" # BUILD, ROOT
HERE=$(cd "$(dirname "$0")" && pwd -P)
export LC_ALL=C
unset XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR

# shellcheck source=tests/run/lib.sh
. "$HERE/lib.sh"
lib_setup

ME=$(id -un)
IS_ROOT=false
[ "$(id -u)" = 0 ] && IS_ROOT=true

# ---- what this machine gives ---------------------------------------------------------------

USERS=$ME
nobody_setup # AIRLOCK, NOBODY_SKIP (tests/lib/nobody.sh)
[ -z "$NOBODY_SKIP" ] && USERS="$ME nobody"
[ -n "${ONLY_USER:-}" ] && USERS=$ONLY_USER

SANDBOX_SKIP=""
if ! command -v bwrap >/dev/null 2>&1; then
	SANDBOX_SKIP="bubblewrap (bwrap) is not installed"
fi

# The helper programs: probe dynamically linked (the shim sees it) and static (it does not).
CC=${CC:-gcc}
STATIC_SKIP=""
if ! "$CC" -O1 -o "$T/bin/probe" "$HERE/probe.c" -lpthread 2>"$T/cc.err"; then
	echo "Bail out! cannot compile tests/run/probe.c: $(cat "$T/cc.err")"
	exit 1
fi
if ! "$CC" -O1 -static -o "$T/bin/probe-static" "$HERE/probe.c" -lpthread 2>"$T/cc.err"; then
	STATIC_SKIP="gcc -static failed (no static libc?): $(head -c 200 "$T/cc.err")"
fi
chmod 755 "$T/bin" "$T/bin/"*
PROBE=$T/bin/probe
PROBE_STATIC=$T/bin/probe-static

# The host's server on 127.0.0.1 (the host's loopback, not the sandbox's): every connection
# it accepts is a line in $T/hits.
: >"$T/hits"
"$PY" -c '
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "a") as f:
        f.write("hit\n")
    c.close()
' "$T/port" "$T/hits" &
BG_PIDS="$BG_PIDS $!"
if ! wait_file "$T/port" 50; then
	echo "Bail out! the test's TCP server on 127.0.0.1 did not start"
	exit 1
fi
PORT=$(cat "$T/port")
hits() { wc -l <"$T/hits" | tr -d ' '; }

for u in $USERS; do
	user_setup "$u"
done

# need_sandbox DESC: false (after printing a skip) when the kernel sandbox cannot run here.
need_sandbox()
{
	if [ -n "$SANDBOX_SKIP" ]; then
		tap_skip "$1" "$SANDBOX_SKIP"
		return 1
	fi
	return 0
}

# Policies, written per user (readable by that user).
open_policy()
{
	write_policy open.yaml <<'EOF'
version: 1
# everything the shim sees is allowed: only the kernel layer restricts
default: {exec: allow, read: allow, write: allow, connect: deny}
EOF
}

# ---- the cases ---------------------------------------------------------------------------------

# shellcheck source=tests/run/sandbox.sh
. "$HERE/sandbox.sh"
# shellcheck source=tests/run/session.sh
. "$HERE/session.sh"
# shellcheck source=tests/run/control.sh
. "$HERE/control.sh"
# shellcheck source=tests/run/launcher.sh
. "$HERE/launcher.sh"
# shellcheck source=tests/run/copies.sh
. "$HERE/copies.sh"
# shellcheck source=tests/run/profiles.sh
. "$HERE/profiles.sh"
# shellcheck source=tests/run/landlock.sh
. "$HERE/landlock.sh"
# shellcheck source=tests/run/escapes.sh
. "$HERE/escapes.sh"
# shellcheck source=tests/run/redteam.sh
. "$HERE/redteam.sh"
# shellcheck source=tests/run/sockets.sh
. "$HERE/sockets.sh"
# shellcheck source=tests/run/undo.sh
. "$HERE/undo.sh"

# ---- run them ------------------------------------------------------------------------------

"$AIRLOCK" doctor >"$T/doctor.out" 2>&1 || echo "# airlock doctor: $(tail -n 3 "$T/doctor.out" | tr '\n' ' ')"
landlock_setup

# ONLY_CASES="control signals" runs those cases only (names without case_).
for u in $USERS; do
	use_user "$u"
	echo "# ---- as $u ----"
	for c in secrets write_outside env exit_codes asks static tiocsti seccomp setid spawn policy_ro timeout signals interactive interactive_attacks forged_events control no_sandbox doctor places real_programs log_full copies profiles landlock_helper landlock late_secrets gate_dies home_allowlist redteam_gate host_sockets \
		undo_git undo_scripts undo_rmtree undo_trunc undo_clobber undo_rename undo_moved_then_written undo_reopen undo_user_edit undo_dry_run undo_damaged undo_off; do
		case " ${ONLY_CASES:-$c} " in *" $c "*) "case_$c" ;; esac
	done
done
if [ -n "$NOBODY_SKIP" ]; then
	tap_skip "the main scenarios as nobody (setpriv)" "$NOBODY_SKIP"
fi

tap_plan_end
