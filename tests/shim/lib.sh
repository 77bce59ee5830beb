# lib.sh — helpers for the shim's integration tests: workspace, policy image, channel server, TAP and assertions.
#
# Sourced by tests/shim/run.sh.  Needs BUILD (absolute) set first.  Every test
# runs a real program under the shim from the workspace $W:
#
#   shim_run sh -c 'cat .env'        # result in $RC, $OUT, $ERR
#   check "dash: denied read"        # start a check
#   expect_rc_not 0; expect_err_has "Permission denied"; expect_out_lacks SECRET
#   done_check                       # prints ok / not ok
#
# Cases that fail because of a known shim bug say so in their description
# ("[shim bug: ...]") so `grep 'shim bug'` finds them; they keep the correct
# expectation and fail until the shim is fixed.

PY=/usr/bin/python3 # Debian's interpreter, never a pyenv shim on PATH
SHIM="$BUILD/airlock-preload.so"
CHANNEL_SERVER="$BUILD/tests/channel_server"
POLICY_IMAGE="$BUILD/tests/policy_image"
CASE_TIMEOUT=${CASE_TIMEOUT:-30}

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh" # every suite lives in tests/NAME/

# ---- TAP ------------------------------------------------------------------------------



tap_skip()
{
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - # SKIP $1"
	echo "skipped: $1" >&2
}


# ---- setup ----------------------------------------------------------------------------

# Creates the temp tree: $T root, $W workspace (canonical path), $H home, $S session dir.
lib_setup()
{
	T=$(mktemp -d "${TMPDIR:-/tmp}/airlock-shim-test.XXXXXX") || exit 1
	T=$(cd "$T" && pwd -P)
	W="$T/ws"
	H="$T/home"
	S="$T/session"
	mkdir -p "$W" "$H" "$S" "$T/tmp"
	SERVER_PID=""
	LOG=""
	LOG_N=0
	BG_PIDS=""
	trap lib_cleanup EXIT
	trap 'exit 130' INT TERM
}

lib_cleanup()
{
	server_stop
	for p in $BG_PIDS; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ -n "${KEEP_TMP:-}" ]; then
		echo "# kept $T" >&2
	else
		rm -rf "$T"
	fi
}

# policy_compile YAML_FILE [SESSION_DIR]: writes SESSION_DIR/policy.img (home $H, workspace $W).
policy_compile()
{
	sd=${2:-$S}
	rm -f "$sd/policy.img"
	if ! "$POLICY_IMAGE" "$1" "$sd/policy.img" "$H" "$W" >"$T/policy_image.err" 2>&1; then
		echo "Bail out! policy_image failed: $(cat "$T/policy_image.err")"
		exit 1
	fi
}

# ---- the channel server -----------------------------------------------------------------

# server_start [SESSION_DIR] [channel_server options...]: fresh log in $LOG, waits for the socket.
server_start()
{
	server_stop
	sd=$S
	case "${1:-}" in /*) sd=$1; shift ;; esac
	LOG_N=$((LOG_N + 1))
	LOG="$T/channel.$LOG_N.log"
	: >"$LOG"
	SERVER_SOCK="$sd/channel"
	"$CHANNEL_SERVER" "$SERVER_SOCK" "$LOG" "$@" 2>>"$T/channel_server.stderr" &
	SERVER_PID=$!
	i=0
	while [ ! -S "$SERVER_SOCK" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if [ ! -S "$SERVER_SOCK" ]; then
		echo "Bail out! channel_server did not create $SERVER_SOCK"
		exit 1
	fi
}

server_stop()
{
	if [ -n "${SERVER_PID:-}" ]; then
		kill "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
		SERVER_PID=""
	fi
}

# ---- running programs under the shim -----------------------------------------------------

# shim_run [VAR=VALUE...] PROGRAM ARGS...: runs PROGRAM under the shim in $W with a clean
# environment; sets RC, OUT, ERR.  SHIM_DIR overrides AIRLOCK_DIR (default $S).
shim_run()
{
	(
		cd "$W" || exit 125
		exec timeout -k 5 "$CASE_TIMEOUT" env -i \
			PATH="$W/bin:/usr/bin:/bin" HOME="$H" TMPDIR="$T/tmp" LANG=C.UTF-8 \
			PYTHONDONTWRITEBYTECODE=1 NODE_NO_WARNINGS=1 \
			AIRLOCK_DIR="${SHIM_DIR:-$S}" LD_PRELOAD="$SHIM" "$@"
	) >"$T/case.out" 2>"$T/case.err" </dev/null
	RC=$?
	OUT=$(cat "$T/case.out")
	ERR=$(cat "$T/case.err")
}

# sh_run SCRIPT: shim_run sh -c SCRIPT (dash).
sh_run() { shim_run /bin/sh -c "$1"; }
py_run() { shim_run "$PY" -c "$1"; }

# ---- checks --------------------------------------------------------------------------------

# check DESC: starts collecting expectations for one TAP line.
check()
{
	CHECK_DESC=$1
	CHECK_FAIL=""
}

_fail()
{
	CHECK_FAIL="$CHECK_FAIL
$1"
}

# done_check: emits the TAP line (with the program's rc, stdout and stderr when it failed).
done_check()
{
	if [ -z "$CHECK_FAIL" ]; then
		tap_ok "$CHECK_DESC"
	else
		tap_not_ok "$CHECK_DESC" "${CHECK_FAIL#?}" "rc: $RC" "stdout: $(printf '%s' "$OUT" | head -c 600)" \
			"stderr: $(printf '%s' "$ERR" | head -c 600)"
	fi
}

expect_rc()
{
	[ "$RC" = "$1" ] || _fail "expected exit status $1, got $RC"
}

expect_rc_not()
{
	[ "$RC" != "$1" ] || _fail "expected exit status other than $1"
}

expect_out_eq()
{
	[ "$OUT" = "$1" ] || _fail "expected stdout \"$1\", got \"$OUT\""
}

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

# expect_errno NAME: the program printed "err NAME" / NAME as its errno (stdout), and no EPERM.
expect_errno()
{
	case "$OUT" in
	*"$1"*) ;;
	*) _fail "expected errno $1 on stdout" ;;
	esac
}

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

# ---- the channel log ------------------------------------------------------------------------

# log_find [--wait SECONDS] [--absent] KEY=VALUE...: a line of $LOG (JSON) with every field equal.
# VALUE compares with the field rendered as JSON (strings without quotes); KEY~VALUE is a substring test.
log_find()
{
	"$PY" - "$LOG" "$@" <<'EOF'
import json, sys, time
log, args = sys.argv[1], sys.argv[2:]
wait, absent = 3.0, False
while args and args[0].startswith("--"):
    if args[0] == "--wait":
        wait = float(args[1]); args = args[2:]
    elif args[0] == "--absent":
        absent = True; args = args[1:]
conds = []
for a in args:
    i = min([p for p in (a.find("="), a.find("~")) if p >= 0])
    conds.append((a[:i], a[i], a[i + 1:]))
def render(v):
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))
def match():
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                o = json.loads(line)
            except ValueError:
                continue
            ok = True
            for k, op, v in conds:
                if k not in o:
                    ok = False; break
                r = render(o[k])
                if (op == "=" and r != v) or (op == "~" and v not in r):
                    ok = False; break
            if ok:
                return line.strip()
    return None
deadline = time.time() + wait
while True:
    m = match()
    if m or time.time() >= deadline:
        break
    time.sleep(0.05)
if m:
    print(m)
sys.exit(0 if bool(m) != absent else 1)
EOF
}

# expect_event KEY=VALUE...: the channel log holds such a line (waits up to 3 s).
expect_event()
{
	log_find "$@" >/dev/null || _fail "no log line with $* in $LOG:
$(tail -n 8 "$LOG")"
}

# expect_no_event KEY=VALUE...: no such line (call after a sentinel event was seen).
expect_no_event()
{
	line=$(log_find --wait 0 "$@") && _fail "unexpected log line: $line"
}
