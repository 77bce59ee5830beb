# screen.sh — the TUI suite's cases on its keys and its terminal: Tab and the agent's terminal,
# filter, scroll, quit and detach, the session's end, resizes, hostile or malformed input, a
# bad TERM, SIGTERM, the status line and end_status.  Sourced by tests/tui/run.sh.

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
	wait_for "exec /usr/bin/printf \$'\\x1b]2;pwned-title\\x07\\x1b[2J'" || return 1
	title=$(tmux -L "$TS" display-message -p -t "$CASE" '#{pane_title}')
	[ "$title" != pwned-title ] || fail "an event's text set the terminal's title"
}

case_utf8()
{
	locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$' || { skip "no C.UTF-8 locale"; return; }
	start_fake || return 1
	start_tui --utf8 && wait_for "allow 2 deny 1" || return 1
	fake write allow /w/café/日本語.txt
	wait_for "write '/w/café/日本語.txt'" || return 1
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

# Events carrying disguising text: the activity stream shows an exec's argv as shell words
# (as `airlock log` does), each kind escaped, never the raw code point; a row cut to fit never
# ends inside an escape.
case_disguised_activity()
{
	locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$' || { skip "no C.UTF-8 locale"; return; }
	start_fake || return 1
	start_tui --utf8 && wait_for "allow 2 deny 1" || return 1
	bad=$(printf '\233')
	ev='{"type":"event","event":{"source":"shim","decision":"deny","decided_by":"policy","rule":"p.yaml:1",'
	fake raw "$ev\"command\":\"/bin/rm\",\"args\":[\"-rf\",\"\\u202e/ fdp.txt\",\"a b\"]}}"
	fake raw "$ev\"file\":\"x\\u2066y\\u2069\\udb40\\udc41\\u0085$bad\",\"action\":\"write\"}}"
	fake raw "$ev\"network_dst\":\"ex\\u00adample.com\\u200d:443\"}}"
	fake raw "$ev\"message\":\"\\u001b]2;pwned\\u0007 caf\\u00e9\"}}"
	fake raw "$ev\"command\":\"/bin/echo\",\"args\":[\"$(printf '\\u202e%.0s' 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)\"]}}"
	wait_for "exec /bin/rm -rf \$'\\u202e/ fdp.txt' 'a b'" &&
		wait_for "write \$'x\\u2066y\\u2069\\U000e0041\\xc2\\x85\\x9b'" &&
		wait_for 'connect ex\u00adample.com\u200d:443' &&
		wait_for '\x1b]2;pwned\x07 café' && wait_for "exec /bin/echo \$'\\u202e" || return 1
	no_raw_controls || return 1
	# the cut row ends with the mark right after a whole escape
	row=$(capture | grep -F "exec /bin/echo")
	case $row in
	*'\u202e…'*) ;;
	*) fail "the cut row does not end with a whole escape and the mark: $row" ;;
	esac
}
