# real.sh — the TUI suite's cases on real sessions: BUILD/airlock run with the TUI and airlock
# attach, in a scratch workspace (RWS) under an ask policy.  Sourced by tests/tui/run.sh.

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

# A real agent's request with U+202E in its path, and an exec with it in an argument: the
# panel and the activity show them as `airlock log` does (shell words, \u202e), never the
# raw code point; N denies.
case_real_disguised()
{
	need_real || return
	arun_pane '/usr/bin/printf "%s\n" "rm$(printf "\342\200\256")fdp" >/dev/null; echo x > "asked/$(printf "\342\200\256")txt.exe" || echo refused; sleep 0.3'
	wait_for "write \$'$RWS/asked/\\u202etxt.exe'" && wait_keys || return
	wait_for "exec /usr/bin/printf '%s\\n' \$'rm\\u202efdp'" || return
	no_raw_controls || return
	keys n
	wait_for "run-exit=" || return
	[ "$(log_count "txt.exe" '"decision":"deny"' '"decided_by":"human"')" = 1 ] ||
		fail "no deny by a human in the log"
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
	# this session by its id: "the newest" may be another suite's running at the same time
	sid=$(sed -n 's/.*"session_id":"\([0-9a-f]*\)".*/\1/p' "$RLOG" | head -1)
	[ -n "$sid" ] || { fail "no session id in $RLOG"; tmux -L "$TS" kill-session -t "$CASE-agent"; return 1; }
	start_pane "env TERM=screen-256color $BUILD/airlock attach $sid; echo attach-exit=\$?"
	if wait_for "attached 1"; then
		# a second client: both count, and its detach is counted and said
		tmux -L "$TS" -f /dev/null new-session -d -s "$CASE-second" -x 100 -y 30 \
			"env TERM=screen-256color $BUILD/airlock attach $sid 2>&1; sleep 600"
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
