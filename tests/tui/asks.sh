# asks.sh — the TUI suite's cases on the panel: the session's events, an ask and its answers
# (Y N A B), queued asks, asks answered elsewhere or replaced, asks on narrow and small
# screens, cut rules.  Sourced by tests/tui/run.sh.

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

# ---- text that disguises a request (core/termtext.h) -------------------------------------

# no_raw_controls: the screen holds none of the bytes a disguise is made of: not U+202E (e2 80 ae),
# the isolates, marks, zero-width characters, tags, C1 controls (c2 80-9f), ESC.
no_raw_controls()
{
	s=$(capture | od -An -tx1 | tr -d '\n')
	for seq in "e2 80 ae" "e2 81 a6" "e2 81 a9" "e2 80 8e" "e2 80 8f" "e2 80 8b" "e2 80 8d" \
		"e2 81 a0" "ef bb bf" "c2 ad" "cd 8f" "e1 85 9f" "e3 85 a4" "ef be a0" "e1 a0 8e" \
		"f3 a0 81 81" "ef b8 8f" "c2 9b" " 1b"; do
		case $s in *" $seq"*) fail "the screen holds the raw bytes $seq"; return 1 ;; esac
	done
}

# the ask's JSON: what (JSON string text, \u escapes allowed; raw bytes too), who fixed
ask_json()
{
	fake raw "{\"type\":\"ask\",\"id\":$1,\"pid\":4242,\"who\":\"python3 agent.py\",\"what\":\"$2\",\"rule\":\"policy.yaml:12\",\"reason\":\"$3\",\"timeout_ms\":60000}"
}

# An ask carrying each kind of disguising text: the panel shows each escaped, never the raw
# code point; é and 日本 stay readable.
case_disguised_ask()
{
	locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$' || { skip "no C.UTF-8 locale"; return; }
	start_fake || return 1
	start_tui --utf8 --size 120 40 && wait_for "allow 2 deny 1" || return 1
	c1=$(printf '\302\233') bad=$(printf '\233\377')
	ask_json 1 "exec rm -rf \\u202e/ fdp.txt ISO=\\u2066x\\u2069 MARK=\\u200e\\u200f ZW=a\\u200bb\\u200dc\\u2060d\\ufeff SHY=pass\\u00adwd CGJ=\\u034f FILL=\\u115f\\u3164\\uffa0 MVS=\\u180e TAG=\\udb40\\udc41 VS=\\ufe0f C1=$c1 ESC=\\u001b[2J BAD=$bad" \
		"why\\u202e caf\\u00e9 \\u65e5\\u672c"
	wait_for "APPROVAL NEEDED #1" || return 1
	# the what wraps by columns: each escape is looked for on its own
	for want in 'exec rm -rf \u202e/ fdp.txt' '\u2066' '\u2069' '\u200e' '\u200f' '\u200b' \
		'\u200d' '\u2060' '\ufeff' '\u00ad' '\u034f' '\u115f' '\u3164' '\uffa0' '\u180e' \
		'\U000e0041' '\ufe0f' '\xc2\x9b' '\x1b' '\x9b' '\xff' 'policy.yaml:12: why\u202e café 日本'; do
		wait_for "$want" 2 || return 1
	done
	no_raw_controls
}

# The launcher's what is a quoted argv; the TUI shows it as it came (its escapes are not
# escaped again), and the ask's row in the queue too.
case_disguised_ask_quoted()
{
	ready || return 1
	ask_json 1 "exec /bin/rm -rf \$'\\\\u202e/ fdp.txt' 'my dir'" "r"
	ask_json 2 "write \$'/w/\\\\u202etxt.exe'" "r"
	wait_for "exec /bin/rm -rf \$'\\u202e/ fdp.txt' 'my dir'" &&
		wait_for "#2 write \$'/w/\\u202etxt.exe'" || return 1
	no_raw_controls
}

# A long request full of escapes, on a narrow screen: it wraps between units, so every
# escape is shown whole (as many \u202e on the screen as in the request), and Y answers it.
case_disguised_wraps()
{
	start_fake || return 1
	start_tui --size 31 40 && wait_for "fake0123456789ab" || return 1
	what="exec x" k=0
	while [ $k -lt 24 ]; do
		what="$what $(printf '%.*s' $((k % 5)) abcd)\\u202e"
		k=$((k + 1))
	done
	ask_json 1 "$what" "r"
	wait_for "APPROVAL NEEDED" || return 1
	n=$(capture | grep -o '\\u202e' | wc -l)
	[ "$n" = 24 ] || fail "$n whole \\u202e on the screen, not 24 (an escape was split)" || return 1
	no_raw_controls || return 1
	sleep 1
	keys y
	wait_record '"id":1,"answer":"allow"'
}
