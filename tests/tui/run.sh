#!/bin/sh
# run.sh — TAP tests of the approval TUI (launcher/approvals/tui.c), driven for real in tmux: each case
# starts a pane running the TUI, types into it with send-keys and reads it with capture-pane.
#
# Usage: tests/tui/run.sh BUILD_DIR      (BUILD_DIR holds the TUI's objects, launcher/approvals/tui*.o,
# vterm.o and core/termtext.o, as `make` builds them)
#
# The TUI runs through tests/tui/driver.c (compiled here against those objects),
# connected to tests/tui/fake_session.py, a fake session speaking the control protocol that
# records every line the TUI sends.  TUI_ATTACH=1 runs `BUILD_DIR/airlock attach SOCKET`
# instead of the driver for the cases that do not need the agent's terminal.
#
# Adding a case: write a function that calls start_tui (or start_pane with any command),
# then wait_for / wait_gone / keys / fake / wait_record, and returns non-zero on failure
# (fail "why" sets the diagnostic); then list it with `tcase "description" function`.  The
# helpers are in lib.sh; the cases in asks.sh (the panel), screen.sh (keys, the terminal) and
# real.sh (real sessions); the lists of them here.
#
# A sanitizer build (make SAN=1 BUILD=DIR) is detected: the driver then links ASan+UBSan and a
# last case asserts that they reported nothing.
# The last cases run the real BUILD_DIR/airlock (run with the TUI, run --headless + attach).
# Environment: KEEP_TMP=1 keeps the scratch directory; WAIT (s) bounds one wait (default 10);
# NO_REAL=1 skips the real-session cases.
# Exits 1 when any case fails; skips everything (loudly) when tmux or python3 is missing.
set -u

# shellcheck source=tests/lib/suite.sh
. "$(dirname "$0")/../lib/suite.sh"
suite_build_dir "" "$@" # BUILD, ROOT
HERE=$(cd "$(dirname "$0")" && pwd -P)
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
# the escaping the TUI shares with `airlock log` and the prompt
[ -f "$BUILD/core/termtext.o" ] || skip_all "$BUILD/core/termtext.o is missing (run make first)"
TUI_OBJS="$TUI_OBJS $BUILD/core/termtext.o"

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

# ---- the tmux server --------------------------------------------------------------------

# a session that outlives the cases: without one, the server exits after each case's
# kill-session, and the next case's new-session may reach it while it does ("server exited
# unexpectedly")
tmux -L "$TS" -f /dev/null new-session -d -s keepalive "sleep 100000" ||
	skip_all "tmux cannot start a server"

# ---- helpers and cases ------------------------------------------------------------------

# shellcheck source=tests/tui/lib.sh
. "$HERE/lib.sh"
# shellcheck source=tests/tui/asks.sh
. "$HERE/asks.sh"
# shellcheck source=tests/tui/screen.sh
. "$HERE/screen.sh"

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
tcase "control characters in events are shown escaped (\\x1b), never sent to the terminal" case_hostile_text
tcase "UTF-8 paths show in a UTF-8 locale (a shell word, as airlock log shows it)" case_utf8
tcase "an ask with bidi, zero-width, tag, C1, ESC and invalid bytes shows each escaped, never raw" case_disguised_ask
tcase "an ask's quoted argv shows as the launcher quoted it, in the panel and the queue" case_disguised_ask_quoted
tcase "a long request of escapes wraps between them on a narrow screen; Y answers it" case_disguised_wraps
tcase "events with disguising text: argv as shell words, each kind escaped, a cut row ends on a whole escape" case_disguised_activity
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

# shellcheck source=tests/tui/real.sh
. "$HERE/real.sh"

tcase "airlock attach: the session's end and its status are said" case_attach_ended
tcase "airlock attach: a session that went away is said" case_attach_gone
tcase "airlock attach: a detach is said, the session going on" case_attach_detached
tcase "real run: an ask appears (what, reason); Y lets the program continue" case_real_yes
tcase "real run: B denies, and the same request again is denied without a prompt" case_real_b
tcase "real run: a request with U+202E in a path and an argument shows escaped, as shell words; N denies" case_real_disguised
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
