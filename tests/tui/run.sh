#!/bin/sh
# run.sh — TAP tests of the approval TUI (launcher/approvals/tui.c), driven for real in tmux: each case
# starts a pane running the TUI, types into it with send-keys and reads it with capture-pane.
#
# Usage: tests/tui/run.sh BUILD_DIR      (BUILD_DIR holds the TUI's objects, launcher/approvals/tui*.o
# and vterm.o, as `make` builds them)
#
# The TUI runs through tests/tui/driver.c (compiled here against those objects),
# connected to tests/tui/fake_session.py, a fake session speaking the control protocol that
# records every line the TUI sends.  TUI_ATTACH=1 runs `BUILD_DIR/airlock attach SOCKET`
# instead of the driver for the cases that do not need the agent's terminal.
#
# Adding a case: write a function that calls start_tui (or start_pane with any command),
# then wait_for / wait_gone / keys / fake / wait_record, and returns non-zero on failure
# (fail "why" sets the diagnostic); then list it with `tcase "description" function`.
#
# A sanitizer build (make SAN=1 BUILD=DIR) is detected: the driver then links ASan+UBSan and a
# last case asserts that they reported nothing.
# The last cases run the real BUILD_DIR/airlock (run with the TUI, run --headless + attach).
# Environment: KEEP_TMP=1 keeps the scratch directory; WAIT (s) bounds one wait (default 10);
# NO_REAL=1 skips the real-session cases.
# Exits 1 when any case fails; skips everything (loudly) when tmux or python3 is missing.
set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd -P)
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
WAIT=${WAIT:-10}
export LC_ALL=C SHELL=/bin/sh
unset NO_COLOR

# shellcheck source=tests/lib/tap.sh
. "$HERE/../lib/tap.sh"

skip_all()
{
	echo "# skipped: $1"
	echo "1..0 # SKIP skipped: $1"
	exit 0
}

command -v tmux >/dev/null 2>&1 || skip_all "tmux is not installed (apt-get install tmux)"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || skip_all "python3 is not installed"
# the TUI's objects (launcher/approvals/tui_state.h names its files)
TUI_OBJS=""
for o in tui tui_model tui_draw tui_keys vterm; do
	[ -f "$BUILD/launcher/approvals/$o.o" ] ||
		skip_all "$BUILD/launcher/approvals/$o.o is missing (run make first)"
	TUI_OBJS="$TUI_OBJS $BUILD/launcher/approvals/$o.o"
done

T=$(mktemp -d "${TMPDIR:-/tmp}/airlock-tui-test.XXXXXX")
TS=airlock-test-$$
FAKE_PID=""
cleanup()
{
	tmux -L "$TS" kill-server >/dev/null 2>&1
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null
	if [ "${KEEP_TMP:-0}" = 1 ]; then
		echo "# kept $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# ---- the driver -------------------------------------------------------------------------

DRIVER=$T/tui-driver
CURSES=$(pkg-config --libs ncursesw 2>/dev/null || echo "-lncursesw -ltinfo")
JSONC=$(pkg-config --libs json-c 2>/dev/null || echo "-ljson-c")
SANFLAGS=""
# a sanitizer build (make SAN=1 BUILD=...): the driver links the runtime, reports go to files
if nm "$BUILD/launcher/approvals/tui.o" 2>/dev/null | grep -q __asan_; then
	SANFLAGS="-fsanitize=address,undefined"
	# ncurses keeps its "prescreen" when newterm() fails (an unknown TERM): not ours to free
	echo "leak:new_prescr" >"$T/lsan.supp"
	export ASAN_OPTIONS="log_path=$T/asan:detect_leaks=1" UBSAN_OPTIONS="log_path=$T/ubsan:print_stacktrace=1" \
		LSAN_OPTIONS="suppressions=$T/lsan.supp:print_suppressions=0"
fi
# shellcheck disable=SC2086
if ! ${CC:-cc} $SANFLAGS -std=gnu11 -D_GNU_SOURCE -I"$ROOT" -o "$DRIVER" "$HERE/driver.c" \
	$TUI_OBJS $JSONC $CURSES -lutil >"$T/driver.log" 2>&1; then
	sed 's/^/# /' "$T/driver.log"
	tap_not_ok "the test driver builds" "$(cat "$T/driver.log")"
	tap_plan_end
	exit 1
fi

# ---- helpers ----------------------------------------------------------------------------

# a session that outlives the cases: without one, the server exits after each case's
# kill-session, and the next case's new-session may reach it while it does ("server exited
# unexpectedly")
tmux -L "$TS" -f /dev/null new-session -d -s keepalive "sleep 100000" ||
	skip_all "tmux cannot start a server"

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

# ---- cases ------------------------------------------------------------------------------

case_hello()
{
	ready || return 1
	wait_for "fake0123456789ab" && wait_for "python3 agent.py --task demo" &&
		wait_record '{"type":"attach"}' || return 1
	last_line | grep -q "fake0123456789ab" || fail "the status line is not the last row"
}

case_events()
{
	ready || return 1
	wait_for "exec /usr/bin/git status" && wait_for "write /w/.env" &&
		wait_for "connect pypi.org:443" && wait_for "session started: fake agent" &&
		wait_for "policy.yaml:21" && wait_for "up 2.0K down 3.0M" || return 1
	fake exec deny /usr/bin/curl http://example.com
	wait_for "exec /usr/bin/curl http://example.com" && wait_for "deny 2"
}

case_colour()
{
	ready || return 1
	wait_for "exec /usr/bin/git status" || return 1
	# green (colour 2) around the allow, red (1) around the deny
	capture -e | grep -q "$(printf '\033')\[[0-9;]*32m *allow" ||
		fail "allow is not green: $(capture -e | grep allow | head -n 2 | od -c | head -n 5)" || return 1
	capture -e | grep -q "$(printf '\033')\[[0-9;]*31m *deny" || fail "deny is not red"
}

case_no_color()
{
	start_fake || return 1
	start_tui --no-color && wait_for "allow 2 deny 1" || return 1
	wait_for "ALLOW" && wait_for "DENY" || return 1
	! capture -e | grep -q "$(printf '\033')\[[0-9;]*3[0-7]m" || fail "colour with NO_COLOR set"
}

case_ask()
{
	ready || return 1
	fake ask 1 exec git push origin main
	wait_for "APPROVAL NEEDED #1" && wait_for "pid 4242: python3 agent.py --task demo" &&
		wait_for "exec git push origin main" && wait_for "policy.yaml:12: pushing needs a human" &&
		wait_for "s left" && wait_for "pending 1"
}

# answer_case KEY ANSWER
answer_case()
{
	ready || return 1
	fake ask 7 exec git push origin main
	wait_for "APPROVAL NEEDED #7" && wait_keys || return 1
	keys "$1"
	wait_record "{\"type\":\"answer\",\"id\":7,\"answer\":\"$2\"}" || return 1
	wait_gone "APPROVAL NEEDED" && wait_for "pending 0" && wait_for "human policy.yaml:12"
}
case_y() { answer_case y allow; }
case_n() { answer_case N deny; }
case_a() { answer_case a allow-session; }
case_b() { answer_case B deny-session; }

case_queue()
{
	ready || return 1
	fake ask 1 exec git push origin main
	fake ask 2 connect evil.example:443
	fake ask 3 write /w/secrets.txt
	wait_for "APPROVAL NEEDED #1" && wait_for "2 more waiting" &&
		wait_for "#2 connect evil.example:443" && wait_for "#3 write /w/secrets.txt" &&
		wait_keys || return 1
	keys y
	wait_record '"id":1,"answer":"allow"' && wait_for "APPROVAL NEEDED #2" &&
		wait_for "1 more waiting" && wait_keys || return 1
	keys n
	wait_record '"id":2,"answer":"deny"' && wait_for "APPROVAL NEEDED #3" || return 1
	wait_gone "more waiting"
}

case_sent_until_answered()
{
	ready --hold-answers || return 1
	fake ask 1 exec git push origin main
	fake ask 2 exec git push --force
	wait_for "APPROVAL NEEDED #1" && wait_keys || return 1
	keys y
	wait_record '"id":1,"answer":"allow"' || return 1
	# the next one is up; the first stays listed as sent (all sent: the oldest is shown)
	wait_for "APPROVAL NEEDED #2" && wait_for "#1 exec git push origin main" &&
		wait_for "[sent: allow]" && wait_keys || return 1
	keys b
	wait_record '"id":2,"answer":"deny-session"' && wait_for "[sent: deny-session]" ||
		return 1
	wait_for "allow (waiting for the launcher)" || return 1
	fake answered 1 allow human
	wait_gone "[sent: allow]" && wait_for "APPROVAL NEEDED #2" &&
		wait_for "deny-session (waiting for the launcher)" || return 1
	fake answered 2 deny human
	wait_gone "APPROVAL NEEDED"
}

case_no_colours_terminal()
{
	start_fake || return 1
	start_pane "env -u NO_COLOR TERM=vt100 $DRIVER $SOCK" && wait_for "allow 2 deny 1" || return 1
	wait_for "ALLOW" && wait_for "DENY"
}

# an answer stays on screen as sent until the launcher says "answered"
case_answered_elsewhere()
{
	ready || return 1
	fake ask 4 exec rm -rf build
	wait_for "APPROVAL NEEDED #4" || return 1
	fake answered 4 deny timeout
	wait_gone "APPROVAL NEEDED" && no_record '"type":"answer"'
}

case_tab_attached()
{
	ready || return 1
	keys Tab
	wait_for "agent output" && wait_for "on its own terminal" || return 1
	keys Tab
	wait_gone "on its own terminal" && wait_for "exec /usr/bin/git status"
}

case_tab_pty()
{
	start_fake || return 1
	start_tui -- sh -c 'echo hello-from-agent; read x; stty size; exec cat' &&
		wait_for "allow 2 deny 1" || return 1
	keys Tab
	wait_for "hello-from-agent" || return 1
	# the agent's terminal has the panel's size: 30 rows - header, title, status; 100 columns
	keys Enter
	wait_for "27 100" || return 1
	keys -l "ping-42"
	keys Enter
	wait_for "ping-42" || return 1
	[ "$(capture | grep -c "ping-42")" -ge 2 ] || fail "cat did not echo the line back" || return 1
	# keys went to the agent, not to the TUI: y is not an answer
	keys y
	sleep 0.3
	no_record '"type":"answer"' || return 1
	keys Tab
	wait_gone "hello-from-agent" && wait_for "exec /usr/bin/git status"
}

case_pty_resize()
{
	start_fake || return 1
	start_tui -- sh -c 'while read x; do stty size; done' && wait_for "allow 2 deny 1" || return 1
	keys Tab
	wait_for "agent output" || return 1
	tmux -L "$TS" resize-window -t "$CASE" -x 80 -y 20 || fail "resize-window failed" || return 1
	sleep 0.2
	keys Enter
	wait_for "17 80"
}

case_pty_escapes()
{
	start_fake || return 1
	start_tui -- sh -c 'printf "\033[31mred\033[0m \033]0;title\007plain\r\nabcdef\rXY\nback\bK\ttab\n"; exec cat' &&
		wait_for "allow 2 deny 1" || return 1
	keys Tab
	wait_for "red plain" && wait_for "XYcdef" && wait_for "bacK    tab" || return 1
	! capture | grep -q "title" || fail "an OSC string shows"
}

case_filter()
{
	ready || return 1
	wait_for "exec /usr/bin/git status" || return 1
	keys /
	keys -l "pypi"
	wait_for "/pypi" || return 1
	keys Enter
	wait_for "[filter: pypi]" && wait_gone "exec /usr/bin/git status" &&
		wait_for "connect pypi.org:443" || return 1
	# new matching rows show, others do not
	fake connect allow files.pypi.org:443
	fake exec allow /bin/true
	wait_for "files.pypi.org:443" && sleep 0.2 && wait_gone "exec /bin/true" || return 1
	keys /
	keys Escape
	wait_gone "[filter:" && wait_for "exec /usr/bin/git status" && wait_for "exec /bin/true"
}

case_scroll()
{
	ready || return 1
	fake events 100
	wait_for "line-99" || return 1
	keys PageUp
	wait_for "[scrolled" && wait_gone "line-99" || return 1
	# a new event does not move the view
	fake exec allow /bin/new-row
	sleep 0.3
	! capture | grep -q "new-row" || fail "the view followed the tail while scrolled" || return 1
	keys End
	wait_gone "[scrolled" && wait_for "new-row"
}

case_quit()
{
	ready || return 1
	keys q
	wait_for "End the agent? y/n" || return 1
	keys n
	wait_gone "End the agent?" && no_record '"type":"quit"' || return 1
	keys Q
	wait_for "End the agent? y/n" || return 1
	keys y
	wait_record '{"type":"quit"}' && wait_for "tui-exit=0"
}

case_detach()
{
	start_fake || return 1
	start_tui --attach && wait_for "allow 2 deny 1" && wait_for "detach" || return 1
	keys d
	wait_for "tui-exit=0" && no_record '"type":"quit"'
}

case_no_detach_in_run()
{
	[ "${TUI_ATTACH:-0}" = 1 ] && { skip "TUI_ATTACH=1: every TUI here is attached"; return; }
	ready || return 1
	keys d
	sleep 0.3
	! capture | grep -q "tui-exit" || fail "D detached a run TUI"
}

case_end()
{
	ready || return 1
	fake exec allow /bin/last-event
	fake end 3
	wait_for "tui-exit=0" && wait_for "pane-done"
}

case_resize()
{
	ready || return 1
	fake ask 5 exec git push origin main
	wait_for "APPROVAL NEEDED #5" || return 1
	for size in "60 15" "130 40" "20 5" "100 30"; do
		# shellcheck disable=SC2086
		set -- $size
		tmux -L "$TS" resize-window -t "$CASE" -x "$1" -y "$2" || fail "resize-window failed" || return 1
		if [ "$1" -ge 60 ]; then
			wait_for "APPROVAL NEEDED #5" || return 1
			n=0
			until last_line | grep -q "fake0123456789ab"; do
				n=$((n + 1))
				[ $n -gt 100 ] && fail "at $1x$2 the status line is not the last row" && return 1
				sleep 0.05
			done
		else
			sleep 0.5
			capture | grep -q "tui-exit" && fail "the TUI ended at $1x$2" && return 1
		fi
	done
	wait_keys || return 1
	keys y
	wait_record '"id":5,"answer":"allow"'
}

case_malformed()
{
	ready || return 1
	fake raw "this is not json"
	fake raw '{"type":"no-such-type"}'
	fake raw '[1,2,3]'
	fake raw '{"type":"event","event":"not an object"}'
	fake exec allow /bin/after-garbage
	wait_for "exec /bin/after-garbage" && wait_for "[4 bad lines]"
}

case_overlong()
{
	ready || return 1
	fake long 70000
	wait_for "tui-exit=2"
}

case_hostile_text()
{
	ready || return 1
	esc=$(printf '\033') bel=$(printf '\007')
	fake exec deny /usr/bin/printf "${esc}]2;pwned-title${bel}${esc}[2J"
	wait_for "exec /usr/bin/printf ?]2;pwned-title??[2J" || return 1
	title=$(tmux -L "$TS" display-message -p -t "$CASE" '#{pane_title}')
	[ "$title" != pwned-title ] || fail "an event's text set the terminal's title"
}

case_utf8()
{
	locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$' || { skip "no C.UTF-8 locale"; return; }
	start_fake || return 1
	start_tui --utf8 && wait_for "allow 2 deny 1" || return 1
	fake write allow /w/café/日本語.txt
	wait_for "write /w/café/日本語.txt" || return 1
}

case_bad_terminal()
{
	start_fake --keep || return 1
	start_pane "env TERM=no-such-terminal $DRIVER $SOCK; env -u TERM $DRIVER $SOCK" || return 1
	wait_for "pane-done" || return 1
	[ "$(capture | grep -c "tui-exit=1")" = 2 ] || fail "not 1 twice" || return 1
	[ "$(capture | grep -c "airlock: cannot use the terminal")" = 2 ] || fail "no message"
}

case_sigterm()
{
	ready || return 1
	pane=$(tmux -L "$TS" display-message -p -t "$CASE" '#{pane_pid}')
	pid=$(pgrep -P "$pane" | head -n 1) # env exec'ed the TUI's program
	[ -n "$pid" ] || fail "no TUI process found under the pane" || return 1
	kill -TERM "$pid"
	wait_for "tui-exit=0" || return 1
	! capture | grep -q "allow 2 deny 1" || fail "the TUI's screen is still up"
}

# an ask that takes the place of one that went (its process died) takes no key for 750 ms:
# the Y meant for the one before does not approve it
case_guard_swap()
{
	ready || return 1
	fake ask 1 exec touch benign
	wait_for "APPROVAL NEEDED #1" && wait_for "wait    Y allow" && wait_keys || return 1
	fake answered 1 deny default
	fake ask 2 exec touch evil
	wait_for "APPROVAL NEEDED #2" || return 1
	keys y
	wait_for "key ignored: the request just changed" || return 1
	no_record '"type":"answer"' || return 1
	wait_keys || return 1
	keys y
	wait_record '"id":2,"answer":"allow"'
}

# yy answers one ask, not the next one too; nor does a second key soon after
case_guard_double()
{
	ready || return 1
	fake ask 1 exec touch one
	fake ask 2 exec touch two
	fake ask 3 exec touch three
	wait_for "APPROVAL NEEDED #1" && wait_for "2 more waiting" && wait_keys || return 1
	keys yy
	wait_record '"id":1,"answer":"allow"' && wait_for "APPROVAL NEEDED #2" || return 1
	sleep 0.3
	no_record '"id":2' || return 1
	wait_keys || return 1
	keys n
	wait_record '"id":2,"answer":"deny"' || return 1
	sleep 0.2
	keys n
	sleep 0.3
	no_record '"id":3' || return 1
	wait_for "APPROVAL NEEDED #3" && wait_keys || return 1
	keys a
	wait_record '"id":3,"answer":"allow-session"'
}

# ask_at WIDTH HEIGHT: the TUI in a WIDTHxHEIGHT pane, ask 1 (exec /usr/bin/touch /tmp/some-file) sent
ask_at()
{
	start_fake && start_tui --size "$1" "$2" && wait_for "fake0123456789ab" || return 1
	fake ask 1 exec /usr/bin/touch /tmp/some-file
}

# at 20 columns the request wraps: all of what and who are there to read
case_narrow_wraps()
{
	ask_at 20 14 || return 1
	wait_for "APPROVAL NEEDED" && wait_for "exec /usr/bin/touch" && wait_for "/tmp/some-file" &&
		wait_for "pid 4242: python3 ag" && wait_for "ent.py --task demo" || return 1
	sleep 1
	keys y
	wait_record '"id":1,"answer":"allow"'
}

# too small to show the request: Y and A are refused, N and B work; enlarged, Y works
case_too_small()
{
	ask_at 20 6 && wait_for "terminal too small" || return 1
	sleep 1
	keys y
	keys a
	sleep 0.3
	no_record '"type":"answer"' || return 1
	keys n
	wait_record '"id":1,"answer":"deny"' || return 1
	fake ask 2 exec /usr/bin/touch /tmp/other-file
	wait_for "terminal too small" || return 1
	sleep 1
	keys Y
	sleep 0.3
	no_record '"id":2' || return 1
	tmux -L "$TS" resize-window -t "$CASE" -x 60 -y 20 || fail "resize-window failed" || return 1
	wait_for "exec /usr/bin/touch /tmp/other-file" && wait_keys || return 1
	keys y
	wait_record '"id":2,"answer":"allow"'
}

# a field cut short says so: a leading marker on the rule (cut on the left), a trailing one
# on the what (cut on the right)
case_cut_marks()
{
	ready || return 1
	fake rule /var/tmp/review/pol.yaml:5 allow /bin/true
	wait_for "exec /bin/true" && wait_for "...p/review/pol.yaml:5" || return 1
	capture | grep -qF "3145728 dow... allow" || fail "the cut what has no trailing marker"
}

case_cut_marks_utf8()
{
	locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$' || { skip "no C.UTF-8 locale"; return; }
	start_fake || return 1
	start_tui --utf8 && wait_for "allow 2 deny 1" || return 1
	fake rule /var/tmp/review/pol.yaml:5 allow /bin/true
	wait_for "exec /bin/true" && wait_for "…tmp/review/pol.yaml:5" || return 1
	capture | grep -qF "3145728 down,… allow" || fail "the cut what has no trailing marker"
}

# the status line's attached count follows the status messages
case_attached_count()
{
	ready || return 1
	wait_for "attached 1" || return 1
	fake attached 2
	wait_for "attached 2" || return 1
	fake attached 1
	wait_for "attached 1"
}

# tui_run()'s end_status and session_id: the end's status, -1 when the socket just closes,
# -2 when the TUI leaves first
case_end_status()
{
	ready || return 1
	fake end 3
	wait_for "tui-end=3 session=fake0123456789ab"
}

case_gone_status()
{
	ready || return 1
	stop_fake
	wait_for "tui-end=-1 session=fake0123456789ab"
}

case_detach_status()
{
	start_fake || return 1
	start_tui --attach && wait_for "allow 2 deny 1" || return 1
	keys d
	wait_for "tui-end=-2 session=fake0123456789ab"
}

tcase "hello: the session, the agent and the status line show; attach is sent" case_hello
tcase "events: exec, write, connect and launcher rows, egress bytes" case_events
tcase "colour: allow green, deny red" case_colour
tcase "NO_COLOR: decisions as words, no colour" case_no_color
tcase "an ask shows who, what, the rule, its reason and the time left" case_ask
tcase "Y sends allow; the panel goes on answered" case_y
tcase "N sends deny" case_n
tcase "A sends allow-session" case_a
tcase "B sends deny-session" case_b
tcase "several asks queue visibly (N more waiting), answered in order" case_queue
tcase "an ask answered elsewhere leaves the panel" case_answered_elsewhere
tcase "an answer shows as sent until the launcher says answered; the next ask is up" case_sent_until_answered
tcase "a terminal without colours (vt100) shows decisions as words" case_no_colours_terminal
tcase "Tab without the agent's terminal: its output is on its own terminal" case_tab_attached
tcase "Tab with the agent's terminal: its output, its size, keys go to it" case_tab_pty
tcase "a resize gives the agent's terminal the panel's new size" case_pty_resize
tcase "the agent's escape sequences are dropped, CR BS TAB interpreted" case_pty_escapes
tcase "/ filters the activity; Esc clears" case_filter
tcase "scrolling up holds the view; End follows again" case_scroll
tcase "Q asks first; n cancels; y sends quit and the TUI ends" case_quit
tcase "attach: D detaches without quitting" case_detach
tcase "run: D does not detach" case_no_detach_in_run
tcase "end from the session ends the TUI (0)" case_end
tcase "resize keeps the layout; 20x5 does not crash" case_resize
tcase "malformed lines are counted and ignored" case_malformed
tcase "a line over the bound ends the TUI with 2" case_overlong
tcase "SIGTERM restores the terminal" case_sigterm
tcase "an unknown or missing TERM: 1, with a message" case_bad_terminal
tcase "control characters in events are shown as ?, never sent to the terminal" case_hostile_text
tcase "UTF-8 paths show in a UTF-8 locale" case_utf8
tcase "an ask taking the place of one that went takes no key at first: Y is not carried over" case_guard_swap
tcase "yy answers one ask; a second key soon after does not answer the next" case_guard_double
tcase "at 20 columns the request wraps whole, and Y answers it" case_narrow_wraps
tcase "too small to show the request: Y/A refused, N denies; enlarged, Y allows" case_too_small
tcase "a rule cut on the left starts with ..., a what cut on the right ends with it" case_cut_marks
tcase "in UTF-8 the cut marker is an ellipsis" case_cut_marks_utf8
tcase "the attached count follows status messages" case_attached_count
tcase "end_status: the end's status, and the session id" case_end_status
tcase "end_status: -1 when the session goes away without an end" case_gone_status
tcase "end_status: -2 when the TUI detaches" case_detach_status

# ---- real sessions: build/airlock run and attach, in a scratch workspace -------------------

RWS=$T/ws
mkdir -p "$RWS/asked"
cat >"$T/ask.yaml" <<'EOF'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
ask:
  - file: { path: "./asked/**", action: write }
    reason: writes under asked/ wait for a human
EOF

# need_real: the real launcher and a sandbox it can build here, else a skip.
need_real()
{
	[ -z "${NO_REAL:-}" ] || { skip "NO_REAL is set (the sanitizer run covers the TUI alone)"; return; }
	[ -x "$BUILD/airlock" ] || { skip "$BUILD/airlock is not built"; return; }
	if [ -z "${REAL_OK:-}" ]; then
		if (cd "$RWS" && "$BUILD/airlock" run --headless --policy "$T/ask.yaml" \
			--log "$T/probe.jsonl" -- true) >"$T/probe.out" 2>&1; then
			REAL_OK=yes
		else
			REAL_OK=no
		fi
	fi
	[ "$REAL_OK" = yes ] || skip "airlock run cannot build a sandbox here: $(tail -n 1 "$T/probe.out")"
}

# arun_pane AGENT-SCRIPT [WIDTH HEIGHT]: `airlock run` (the TUI) on the ask policy in a new
# pane; the pane says run-exit=STATUS when it ends.  The log is $RLOG.  No single quotes.
arun_pane()
{
	RLOG=$T/$CASE.jsonl
	start_pane "cd $RWS && env TERM=screen-256color $BUILD/airlock run --policy $T/ask.yaml --log $RLOG -- sh -c '$1'; echo run-exit=\$?" "${2:-100}" "${3:-30}"
}

# log_count STRING...: how many lines of $RLOG hold every fixed STRING.
log_count()
{
	n=0
	while IFS= read -r line; do
		ok=1
		for want in "$@"; do
			case $line in *"$want"*) ;; *) ok=0 ;; esac
		done
		n=$((n + ok))
	done <"$RLOG"
	echo "$n"
}

case_real_yes()
{
	need_real || return
	arun_pane 'echo y > asked/yes && echo wrote-yes; sleep 0.3'
	wait_for "write $RWS/asked/yes" || return
	wait_for "writes under asked/ wait for a human" && wait_keys || return
	keys y
	wait_for "run-exit=0" || return
	[ "$(cat "$RWS/asked/yes" 2>/dev/null)" = y ] || fail "asked/yes was not written"
	[ "$(log_count "asked/yes" '"decision":"allow"' '"decided_by":"human"')" = 1 ] ||
		fail "no allow by a human in the log"
}

case_real_b()
{
	need_real || return
	arun_pane 'echo 1 > asked/bee || echo refused-1; sh -c "echo 2 > asked/bee" || echo refused-2; echo agent-end; sleep 0.3'
	wait_for "write $RWS/asked/bee" && wait_keys || return
	keys B
	wait_for "run-exit=" || return
	[ ! -e "$RWS/asked/bee" ] || fail "asked/bee was written"
	[ "$(log_count "asked/bee" '"decision":"deny"' '"decided_by":"human"')" = 1 ] ||
		fail "not one deny by a human"
	[ "$(log_count "asked/bee" '"decision":"deny"' '"decided_by":"session"')" = 1 ] ||
		fail "the second write was not denied by session memory"
}

case_real_tab_quit()
{
	need_real || return
	arun_pane 'echo agent-says-hello; read line; echo agent-read-$line; sleep 30'
	wait_for "session started" || return
	keys Tab
	wait_for "agent-says-hello" || return
	keys "abc" Enter
	wait_for "agent-read-abc" || return
	keys Tab
	wait_gone "agent-read-abc" || return
	keys q
	wait_for "y/n" || return
	keys y
	wait_for "run-exit=143" || return
	[ "$(log_count '"source":"launcher"' "asked on the control socket")" = 1 ] ||
		fail "the quit is not in the log"
}

case_real_resize()
{
	need_real || return
	rm -f "$RWS/size.before" "$RWS/size.after" "$RWS/resized"
	arun_pane 'stty size > size.before; while [ ! -e resized ]; do sleep 0.05; done; stty size > size.after; sleep 30' 100 30
	wait_for "session started" || return
	i=0
	until [ -s "$RWS/size.before" ] || [ $i -gt $((WAIT * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sid=$(head -n 1 "$RLOG" | sed 's/.*"session_id":"\([0-9a-f]*\)".*/\1/')
	tmux -L "$TS" resize-window -t "$CASE" -x 72 -y 20
	sleep 1
	: >"$RWS/resized"
	i=0
	until [ -s "$RWS/size.after" ] || [ $i -gt $((WAIT * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	last_line | grep -qF "$sid" || fail "the status line is not the last row after the resize: $(last_line)"
	[ "$(capture | wc -l)" -le 20 ] || fail "more rows than the window"
	capture | grep -qF "exec /usr/bin/" || fail "the activity is gone"
	if [ ! -s "$RWS/size.after" ] || [ "$(cat "$RWS/size.after")" = "$(cat "$RWS/size.before")" ]; then
		fail "the agent's terminal kept its size: $(cat "$RWS/size.before" "$RWS/size.after" 2>&1)"
	fi
	keys q
	wait_for "y/n" && keys y
	wait_for "run-exit=143" && [ -z "$WHY" ]
}

case_real_attach()
{
	need_real || return
	RLOG=$T/$CASE.jsonl
	rm -f "$RWS/go"
	# the headless session in one tmux session, airlock attach in another
	tmux -L "$TS" -f /dev/null new-session -d -s "$CASE-agent" -x 100 -y 10 \
		"cd $RWS && $BUILD/airlock run --headless --policy $T/ask.yaml --log $RLOG -- sh -c 'while [ ! -e go ]; do sleep 0.05; done; echo z > asked/zed && echo wrote-zed'; echo run-exit=\$?; sleep 600"
	i=0
	until [ -s "$RLOG" ] || [ $i -gt $((WAIT * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	start_pane "env TERM=screen-256color $BUILD/airlock attach; echo attach-exit=\$?"
	if wait_for "attached 1"; then
		# a second client: both count, and its detach is counted and said
		tmux -L "$TS" -f /dev/null new-session -d -s "$CASE-second" -x 100 -y 30 \
			"env TERM=screen-256color $BUILD/airlock attach 2>&1; sleep 600"
		if wait_for "attached 2"; then
			tmux -L "$TS" send-keys -t "$CASE-second" d
			wait_for "attached 1"
			i=0
			until tmux -L "$TS" capture-pane -p -t "$CASE-second" |
				grep -qF "airlock: attach: detached from session" || [ $i -gt $((WAIT * 10)) ]; do
				sleep 0.1
				i=$((i + 1))
			done
			[ $i -le $((WAIT * 10)) ] || fail "the second attach did not say it detached"
		fi
		tmux -L "$TS" kill-session -t "$CASE-second"
		if [ -z "$WHY" ]; then
			: >"$RWS/go"
			wait_for "write $RWS/asked/zed" && wait_keys && keys y &&
				wait_for "attach-exit=0" && wait_for "ended (exit status 0)"
		fi
	fi
	agent=$(tmux -L "$TS" capture-pane -p -t "$CASE-agent")
	tmux -L "$TS" kill-session -t "$CASE-agent"
	[ -z "$WHY" ] || return 1
	printf '%s\n' "$agent" | grep -qF "wrote-zed" || fail "the agent did not write: $agent"
	printf '%s\n' "$agent" | grep -qF "run-exit=0" || fail "the session did not end well: $agent"
	[ "$(log_count "asked/zed" '"decision":"allow"' '"decided_by":"human"')" = 1 ] ||
		fail "no allow by a human in the log"
}

# need_airlock: BUILD_DIR/airlock (not with NO_REAL), else a skip.
need_airlock()
{
	[ -z "${NO_REAL:-}" ] || { skip "NO_REAL is set (the sanitizer run covers the TUI alone)"; return; }
	[ -x "$BUILD/airlock" ] || skip "$BUILD/airlock is not built"
}

# attach_end HOW MESSAGE: airlock attach on the fake session; after HOW (end: the session ends
# with 3, gone: it dies, detach: D), it says MESSAGE and exits 0
attach_end()
{
	need_airlock || return
	start_fake || return 1
	start_pane "env TERM=screen-256color $BUILD/airlock attach $SOCK; echo attach-exit=\$?" &&
		wait_for "allow 2 deny 1" || return 1
	case $1 in
	end) fake end 3 ;;
	gone) stop_fake ;;
	detach) keys d ;;
	esac
	wait_for "$2" && wait_for "attach-exit=0"
}
case_attach_ended() { attach_end end "airlock: attach: session fake0123456789ab ended (exit status 3)"; }
case_attach_gone() { attach_end gone "airlock: attach: the session went away"; }
case_attach_detached() { attach_end detach "airlock: attach: detached from session fake0123456789ab (it goes on)"; }

tcase "airlock attach: the session's end and its status are said" case_attach_ended
tcase "airlock attach: a session that went away is said" case_attach_gone
tcase "airlock attach: a detach is said, the session going on" case_attach_detached
tcase "real run: an ask appears (what, reason); Y lets the program continue" case_real_yes
tcase "real run: B denies, and the same request again is denied without a prompt" case_real_b
tcase "real run: Tab shows the agent's output and types into it; Q then y ends the session (143)" case_real_tab_quit
tcase "real run: a resize keeps the layout and resizes the agent's terminal" case_real_resize
tcase "attach: a headless session's ask is approved from a second terminal; a second client counts, its detach too" case_real_attach

if [ -n "$SANFLAGS" ]; then
	reports=$(cat "$T"/asan* "$T"/ubsan* 2>/dev/null)
	if [ -z "$reports" ]; then
		tap_ok "sanitizers: no reports"
	else
		tap_not_ok "sanitizers: no reports" "$reports"
	fi
fi

tap_plan_end
