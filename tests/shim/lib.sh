# lib.sh — helpers for the shim's integration tests: workspace, policy image, channel server, running under the shim.
#
# Sourced by tests/shim/run.sh and cpython.sh, which then call shim_suite_init "$@".  Every
# test runs a real program under the shim from the workspace $W, with the checks of
# tests/lib/check.sh:
#
#   shim_run sh -c 'cat .env'        # result in $RC, $OUT, $ERR
#   check "dash: denied read"        # start a check
#   expect_rc 1; expect_err_has "Permission denied"; expect_out_lacks SECRET
#   done_check                       # prints ok / not ok
#
# Cases that fail because of a known shim bug say so in their description
# ("[shim bug: ...]") so `grep 'shim bug'` finds them; they keep the correct
# expectation and fail until the shim is fixed.

PY=/usr/bin/python3 # Debian's interpreter, never a pyenv shim on PATH
CASE_TIMEOUT=${CASE_TIMEOUT:-30}

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh" # every suite lives in tests/NAME/
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"

# tap_skip DESC: this suite's skip reads "ok N - # SKIP DESC", and DESC goes to stderr too.
tap_skip()
{
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - # SKIP $1"
	echo "skipped: $1" >&2
}

# shim_suite_init "$@": the suite's one argument, BUILD_DIR (exit 2 otherwise); sets BUILD
# (absolute), SHIM, CHANNEL_SERVER and POLICY_IMAGE, and bails out when one is not built.
shim_suite_init()
{
	if [ $# -ne 1 ]; then
		echo "usage: $0 BUILD_DIR" >&2
		exit 2
	fi
	BUILD=$(cd "$1" 2>/dev/null && pwd -P) || {
		echo "Bail out! no build directory $1"
		exit 1
	}
	SHIM="$BUILD/airlock-preload.so"
	CHANNEL_SERVER="$BUILD/tests/channel_server"
	POLICY_IMAGE="$BUILD/tests/policy_image"
	for f in "$SHIM" "$CHANNEL_SERVER" "$POLICY_IMAGE"; do
		if [ ! -f "$f" ]; then
			echo "Bail out! missing $f (run: make all unit-tests)"
			exit 1
		fi
	done
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
