# lib.sh — the TUI suite's helpers: the fake session, tmux panes (start, capture, keys), waits on
# the screen and on what the TUI sent, and tcase, which runs one case.  Sourced by tests/tui/run.sh
# once the driver is built and the tmux server is up (T, TS, PY, DRIVER, WAIT set).

CASE=""   # the current case's name: its tmux session, socket, FIFO and record
SOCK="" CMDF="" REC=""
WHY=""

fail()
{
	WHY="$*"
	return 1
}

# start_fake [fake_session.py options]: a fake session on $SOCK, commands on $CMDF, lines the
# TUI sends in $REC.
start_fake()
{
	SOCK=$T/$CASE.sock CMDF=$T/$CASE.cmd REC=$T/$CASE.rec
	: >"$REC"
	"$PY" "$HERE/fake_session.py" "$SOCK" "$REC" --cmd "$CMDF" --timeout 60 "$@" \
		2>"$T/$CASE.fake.err" &
	FAKE_PID=$!
	i=0
	while [ ! -S "$SOCK" ] || [ ! -p "$CMDF" ]; do
		i=$((i + 1))
		[ $i -gt $((WAIT * 20)) ] && fail "the fake session did not start" && return 1
		sleep 0.05
	done
}

stop_fake()
{
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
	FAKE_PID=""
}

# start_pane COMMAND [WIDTH HEIGHT]: runs COMMAND (a shell string) in a new tmux session named
# $CASE; the pane stays after the command ends, showing what it printed.
start_pane()
{
	tmux -L "$TS" -f /dev/null new-session -d -s "$CASE" -x "${2:-100}" -y "${3:-30}" \
		"$1; echo pane-done; sleep 600" || fail "tmux new-session failed"
}

# start_tui [--no-color] [--utf8] [--attach] [--size WIDTH HEIGHT] [-- AGENT...]: the TUI on
# the fake session; with AGENT, the agent runs on a pseudo-terminal the TUI owns (as in
# `airlock run`).  Arguments must not hold single quotes.
start_tui()
{
	env="env TERM=screen-256color" nocolor="-u NO_COLOR" attach="" width=100 height=30
	while [ $# -gt 0 ]; do
		case "$1" in
		--no-color) nocolor="NO_COLOR=1" ;;
		--utf8) env="$env LC_ALL=C.UTF-8" ;;
		--attach) attach=--attach ;;
		--size) width=$2 height=$3 && shift 2 ;;
		*) break ;;
		esac
		shift
	done
	env="env $nocolor ${env#env }"
	if [ "${TUI_ATTACH:-0}" = 1 ] && [ $# -eq 0 ] && [ -x "$BUILD/airlock" ]; then
		start_pane "$env $BUILD/airlock attach $SOCK; echo tui-exit=\$?" "$width" "$height"
		return
	fi
	agent=""
	for a in "$@"; do
		agent="$agent '$a'"
	done
	start_pane "$env $DRIVER $attach $SOCK$agent" "$width" "$height"
}

capture()
{
	tmux -L "$TS" capture-pane -p -t "$CASE" "$@" 2>/dev/null
}

# wait_for TEXT [SECONDS]: until the pane shows TEXT (a fixed string).
wait_for()
{
	n=$(((${2:-$WAIT}) * 20))
	while [ "$n" -gt 0 ]; do
		capture | grep -qF -- "$1" && return 0
		sleep 0.05
		n=$((n - 1))
	done
	fail "the screen never showed \"$1\""
}

# wait_gone TEXT [SECONDS]: until the pane no longer shows TEXT.
wait_gone()
{
	n=$(((${2:-$WAIT}) * 20))
	while [ "$n" -gt 0 ]; do
		capture | grep -qF -- "$1" || return 0
		sleep 0.05
		n=$((n - 1))
	done
	fail "the screen still shows \"$1\""
}

# wait_record TEXT: until the TUI has sent a line holding TEXT.
wait_record()
{
	n=$((WAIT * 20))
	while [ "$n" -gt 0 ]; do
		grep -qF -- "$1" "$REC" && return 0
		sleep 0.05
		n=$((n - 1))
	done
	fail "the TUI never sent $1 (it sent: $(tr '\n' ' ' <"$REC"))"
}

# wait_keys: until the approval panel takes answers (its keys' row says "keys", not "wait":
# an ask newly shown takes none for 750 ms).  Needs a panel at least 40 columns wide.
wait_keys()
{
	wait_for "keys    Y"
}

# no_record TEXT: the TUI has not sent TEXT.
no_record()
{
	! grep -qF -- "$1" "$REC" || fail "the TUI sent $1"
}

keys()
{
	tmux -L "$TS" send-keys -t "$CASE" "$@"
}

# fake COMMAND...: a command to the fake session (see fake_session.py).
fake()
{
	# bounded: with the fake session gone, opening its FIFO would block for ever
	timeout 5 sh -c 'printf "%s\n" "$2" >"$1"' sh "$CMDF" "$*" ||
		echo "# the fake session did not take: $*"
}

# last_line: the pane's last row.
last_line()
{
	capture | tail -n 1
}

end_case()
{
	tmux -L "$TS" kill-session -t "$CASE" >/dev/null 2>&1
	stop_fake
}

# skip REASON: a case function's `skip "why"; return` makes the case a skip.
skip()
{
	WHY="$*"
	return 77
}

# tcase DESCRIPTION FUNCTION: runs one case in a fresh tmux session and fake session; the
# function returns 0 (ok), 77 (skip, WHY the reason) or anything else (not ok, WHY the
# diagnostic).
NCASE=0
tcase()
{
	NCASE=$((NCASE + 1))
	CASE=c$NCASE WHY=""
	"$2"
	rc=$?
	if [ $rc = 0 ]; then
		tap_ok "$1"
	elif [ $rc = 77 ]; then
		tap_skip "$1" "$WHY"
	else
		tap_not_ok "$1" "${WHY:-failed}" "--- screen:" "$(capture)" "--- sent:" \
			"$(cat "$REC" 2>/dev/null)" "--- fake session:" "$(cat "$T/$CASE.fake.err" 2>/dev/null)"
	fi
	end_case
}

# the TUI on the fake session, with its first screen up
ready()
{
	start_fake "$@" && start_tui && wait_for "allow 2 deny 1"
}
