# session.sh — the run suite's cases on a session's course: exit statuses, concurrent asks,
# session_timeout, signals, the interactive prompt on a pseudo-terminal and its attackers,
# forged shim reports.  Sourced by tests/run/run.sh (cases exit_codes asks timeout signals
# interactive interactive_attacks forged_events).

# Exit statuses: the agent's, 128+N, 127, 126, a deny rule 126, a malformed policy 2.
case_exit_codes()
{
	p=$RUN_USER
	if need_sandbox "$p: exit statuses pass through"; then
		arun --headless -- sh -c 'exit 7'
		check "$p: the agent's exit 7 is airlock's; the session directory is removed"
		expect_rc 7
		expect_log source=launcher event=session_end exit_status=7
		sid=$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["session_id"])' "$LOG" 2>/dev/null)
		if [ -z "$sid" ]; then
			_fail "no session_id in the log"
		else
			for d in /run/airlock "/tmp/airlock-$(id -u "$RUN_USER")"; do
				[ ! -e "$d/$sid" ] || _fail "the session directory $d/$sid is left behind"
			done
		fi
		done_check

		acmd log "$LOG"
		check "$p: airlock log FILE prints the session"
		expect_rc 0
		expect_out_has "exit status 7"
		done_check

		arun --headless -- true
		check "$p: true exits 0"
		expect_rc 0
		done_check

		arun --headless -- sh -c 'kill -SEGV $$'
		check "$p: death by SIGSEGV gives 139"
		expect_rc 139
		done_check
	fi

	arun --headless -- airlock-no-such-program-x
	check "$p: a program that does not exist gives 127"
	expect_rc 127
	expect_err_has "not found"
	done_check

	printf 'echo should-not-run\n' >"$W/notexec.sh"
	chmod 644 "$W/notexec.sh"
	[ -z "$AS" ] || chown "$RUN_USER" "$W/notexec.sh"
	arun --headless -- ./notexec.sh
	check "$p: a file that is not executable gives 126"
	expect_rc 126
	expect_out_lacks should-not-run
	done_check

	printf '#!/bin/sh\necho ran > ran-forbidden\n' >"$W/forbidden-tool"
	chmod 755 "$W/forbidden-tool"
	[ -z "$AS" ] || chown "$RUN_USER" "$W/forbidden-tool"
	pol=$(write_policy deny-tool.yaml <<'EOF'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
deny:
  - command: forbidden-tool
    reason: this tool is not for agents
EOF
)
	arun --headless --policy "$pol" -- ./forbidden-tool
	check "$p: a deny rule naming the program gives 126 with the rule, and it does not run"
	expect_rc 126
	expect_no_file "$W/ran-forbidden"
	expect_err_has "deny-tool.yaml:4"
	done_check

	arun --headless --bwrap /nonexistent/bwrap -- true
	check "$p: bubblewrap missing (--bwrap /nonexistent/bwrap): 125, the message names the fix"
	expect_rc 125
	expect_err_has "--no-sandbox"
	expect_err_has "bubblewrap"
	done_check

	arun --headless
	check "$p: no program: 2 with the usage"
	expect_rc 2
	expect_err_has "usage: airlock run"
	done_check

	arun --default-allow -- true
	check "$p: --default-allow without --headless: 2"
	expect_rc 2
	done_check

	pol=$(printf 'version: 1\ndefault: {exec: allow}\nnot_a_key: 3\n' | write_policy bad.yaml)
	arun --headless --policy "$pol" -- true
	check "$p: a malformed policy gives 2 with file:line:column"
	expect_rc 2
	expect_err_re 'bad\.yaml:3:[0-9]+: '
	done_check
}

# 50 processes x 20 concurrent asks, headless allow and headless deny: every ask answered
# correctly and logged exactly once (matched by its unique file name).
case_asks()
{
	p=$RUN_USER
	need_sandbox "$p: 50 x 20 concurrent asks" || return
	pol=$(ask_policy)
	for mode in allow deny; do
		d=asked/c$mode
		rm -rf "${W:?}/asked"
		mkdir -p "$W/$d"
		[ -z "$AS" ] || chown -R "$RUN_USER" "$W/asked"
		script='n=1
while [ $n -le 50 ]; do
	( i=1; while [ $i -le 20 ]; do echo "$n-$i" >'"$d"'/f-$n-$i; i=$((i + 1)); done ) 2>/dev/null &
	n=$((n + 1))
done
wait
ls '"$d"' | wc -l'
		if [ $mode = allow ]; then
			arun --headless --default-allow --policy "$pol" -- sh -c "$script"
		else
			arun --headless --policy "$pol" -- sh -c "$script"
		fi
		check "$p: 50 processes x 20 concurrent asks, headless $mode: all answered $mode, logged once each"
		expect_rc 0
		n=$(find "$W/$d" -type f | wc -l)
		if [ $mode = allow ]; then
			[ "$n" = 1000 ] || _fail "expected 1000 files written, found $n"
			bad=$(grep -L '^[0-9]*-[0-9]*$' "$W/$d"/f-* 2>/dev/null | head -n 3)
			[ -z "$bad" ] || _fail "files with wrong content: $bad"
		else
			[ "$n" = 0 ] || _fail "expected no file written, found $n"
		fi
		why=$("$PY" "$LOGQ" "$LOG" asks "$W/$d" 50 20 "$mode" default) || _fail "$why"
		expect_log source=launcher event=session_end asked=1000
		done_check
	done
}

# limits: session_timeout ends the agent with 124.
case_timeout()
{
	p=$RUN_USER
	need_sandbox "$p: session_timeout" || return
	pol=$(write_policy timeout.yaml <<'EOF'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
limits: {session_timeout: 2}
EOF
)
	arun --headless --policy "$pol" -- sleep 30
	check "$p: limits session_timeout: 2 and sleep 30 -> 124 within a few seconds, logged"
	expect_rc 124
	[ "$ELAPSED" -le 6 ] || _fail "took $ELAPSED s"
	expect_log source=launcher message~"time limit"
	done_check

	# SIGTERM ignored (inherited by every child): airlock must still end it
	arun --headless --policy "$pol" -- sh -c 'trap "" TERM; while :; do sleep 0.2; done'
	check "$p: session_timeout with an agent ignoring SIGTERM: still 124, soon after"
	expect_rc 124
	[ "$ELAPSED" -le 8 ] || _fail "took $ELAPSED s"
	done_check
}

# SIGTERM to airlock reaches the agent; kill -9 of airlock leaves no process behind.
case_signals()
{
	p=$RUN_USER
	need_sandbox "$p: signals" || return
	pol=$(open_policy)
	rm -f "$W/ready-term"
	arun_bg "$T/term.out" --headless --policy "$pol" -- \
		sh -c 'trap "echo got-term; exit 3" TERM; echo > ready-term; while :; do sleep 0.1; done'
	check "$p: SIGTERM to airlock runs the agent's trap, status 3"
	if wait_file "$W/ready-term" 100; then
		sleep 0.2
		kill -TERM "$BGPID"
		wait_pid_gone "$BGPID" 50
		RC=$BGRC OUT=$(cat "$T/term.out") ERR=$(cat "$T/term.out.err")
		expect_rc 3
		expect_out_has got-term
	else
		_fail "the agent did not start"
		kill -9 "$BGPID"
		RC=- OUT=$(cat "$T/term.out") ERR=$(cat "$T/term.out.err")
	fi
	done_check

	rm -f "$W/ready-term2"
	arun_bg "$T/term2.out" --headless --policy "$pol" -- sh -c 'echo > ready-term2; sleep 30'
	check "$p: SIGTERM to airlock with no trap in the agent: status 143"
	if wait_file "$W/ready-term2" 100; then
		sleep 0.2
		kill -TERM "$BGPID"
		wait_pid_gone "$BGPID" 50
		RC=$BGRC OUT=$(cat "$T/term2.out") ERR=$(cat "$T/term2.out.err")
		expect_rc 143
	else
		_fail "the agent did not start"
		kill -9 "$BGPID"
		RC=- OUT="" ERR=$(cat "$T/term2.out.err")
	fi
	done_check

	# SIGHUP, and --env SECRET_API_KEY (taken from the caller) shows on no command line
	rm -f "$W/ready-hup"
	CALLER_ENV="SECRET_API_KEY=$API_SECRET" arun_bg "$T/hup.out" --headless --env SECRET_API_KEY --policy "$pol" -- \
		sh -c 'trap "echo got-hup; exit 5" HUP; echo > ready-hup; while :; do sleep 0.1; done'
	check "$p: SIGHUP to airlock runs the agent's trap (status 5); the --env secret is on no command line"
	if wait_file "$W/ready-hup" 100; then
		sleep 0.2
		# (the secret comes in the environment, so this scanner's own argv does not hold it)
		leak=$(NEEDLE=$API_SECRET "$PY" -c '
import os
me, needle = os.getpid(), os.environ["NEEDLE"].encode()
for p in os.listdir("/proc"):
    if p.isdigit() and int(p) != me:
        try:
            c = open("/proc/%s/cmdline" % p, "rb").read()
        except OSError:
            continue
        if needle in c:
            print(p, c.replace(b"\0", b" ").decode(errors="replace")[:200])
')
		[ -z "$leak" ] || _fail "the secret is on the command line of: $leak"
		kill -HUP "$BGPID"
		wait_pid_gone "$BGPID" 50
		RC=$BGRC OUT=$(cat "$T/hup.out") ERR=$(cat "$T/hup.out.err")
		expect_rc 5
		expect_out_has got-hup
	else
		_fail "the agent did not start"
		kill -9 "$BGPID"
		RC=- OUT=$(cat "$T/hup.out") ERR=$(cat "$T/hup.out.err")
	fi
	done_check

	# a daemon the agent leaves behind dies with the session
	mark=airlock-daemon-mark-$$-$RUN_USER
	arun --headless --policy "$pol" -- sh -c \
		'setsid python3 -c "import time; time.sleep(120)" '"$mark"' </dev/null >/dev/null 2>&1 & echo started'
	check "$p: a daemon (setsid, background) the agent leaves behind does not outlive the session"
	expect_rc 0
	expect_out_eq started
	i=0
	while pgrep -f "$mark" >/dev/null && [ $i -lt 20 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	left=$(pgrep -af "$mark")
	if [ -n "$left" ]; then
		_fail "still running after the session ended: $left"
		pkill -9 -f "$mark"
	fi
	done_check

	mark=airlock-orphan-mark-$$-$RUN_USER
	rm -f "$W/ready-orphan"
	arun_bg "$T/orphan.out" --headless --policy "$pol" -- sh -c \
		'python3 -c "import time; time.sleep(120)" '"$mark"' & echo > ready-orphan; sleep 120; : '"$mark"
	check "$p: kill -9 of airlock: within 3 s no process of the sandbox remains"
	RC=- OUT="" ERR=""
	if wait_file "$W/ready-orphan" 100; then
		sleep 0.3
		before=$(pgrep -f "$mark" | wc -l)
		[ "$before" -ge 2 ] || _fail "expected the marked sandbox processes to run, found $before"
		kill -9 "$BGPID"
		wait "$BGPID" 2>/dev/null
		i=0
		while pgrep -f "$mark" >/dev/null && [ $i -lt 30 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		left=$(pgrep -af "$mark")
		if [ -n "$left" ]; then
			_fail "still running after 3 s: $left"
			pkill -9 -f "$mark"
		fi
	else
		_fail "the agent did not start"
		kill -9 "$BGPID"
	fi
	ERR=$(cat "$T/orphan.out.err")
	done_check
	# a killed launcher cannot remove its session directory: the test does
	sid=$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["session_id"])' "$LOG" 2>/dev/null)
	if [ -n "$sid" ]; then
		rm -rf "/run/airlock/$sid" "/tmp/airlock-$(id -u "$RUN_USER")/$sid" 2>/dev/null
	fi
}

# pty_run ANSWERS -- AIRLOCK-RUN-ARGS...: `airlock run` on a new pseudo-terminal (ptydrive.py)
# typing ANSWERS at its prompts.  RC: airlock's status; OUT: "prompts N"; ERR: what the
# terminal showed (CRs removed); LOG: a fresh log.
pty_run()
{
	answers=$1
	shift 2
	CASE_N=$((CASE_N + 1))
	LOG=$L/case.$CASE_N.jsonl
	OUT=$(
		cd "$W" && $AS env -i PATH="$AGENT_PATH" HOME="$H" USER="$RUN_USER" LANG=C.UTF-8 TERM=dumb PTYDRIVE_REPLY="${PTYDRIVE_REPLY:-}" \
			"$PY" "$PTYDRIVE" "$answers" 15 "$L/pty.out" -- "$AIRLOCK" run --log "$LOG" "$@" 2>&1
	)
	RC=$?
	ERR=$(tr -d '\r' <"$L/pty.out" 2>/dev/null)
}

# Interactive: airlock on a pseudo-terminal prompts on /dev/tty; y / n / a / b answer; no
# answer within ask_timeout denies.
case_interactive_attacks()
{
	p=$RUN_USER
	need_sandbox "$p: interactive prompt attacks" || return
	pol=$(write_policy ask3.yaml <<'EOF'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
ask_timeout: 3
ask:
  - file: { path: "./asked/**", action: write }
    reason: writes under asked/ wait for a human
EOF
)
	fresh_asked
	# the agent asks, then makes the terminal answer a query with a reply holding "a"
	PTYDRIVE_REPLY=1 pty_run "" -- --policy "$pol" -- sh -c \
		'(echo x > asked/inj || echo refused-inj) & sleep 1; printf "\033[>0q"; sleep 0.5; printf "\033[>0q"; wait; echo agent-done'
	check "$p: interactive: a terminal's reply to the agent's query does not answer its ask (denied at ask_timeout)"
	expect_no_file "$W/asked/inj"
	expect_log file="$W/asked/inj" decision=deny decided_by=timeout
	expect_err_has agent-done
	done_check

	pty_run "n" -- --policy "$pol" -- sh -c \
		'{ echo x > "$(printf "asked/f\r\033[2Kairlock: pid 7 (sh) asks to write harmless")"; } 2>/dev/null || echo refused-f'
	check "$p: interactive: control characters in the request are shown escaped, no escape sequence reaches the prompt"
	expect_err_has "asks to write \$'$W/asked/f\\r\\x1b[2Kairlock: pid 7 (sh) asks to write harmless'"
	expect_err_lacks "$(printf '\033[2K')"
	expect_log decision=deny decided_by=human
	done_check

	# text that would make the request read as another one (core/termtext.h): shown escaped,
	# as `airlock log` shows it; the agent's own error message is kept off the terminal
	rlo=$(printf '\342\200\256') zw=$(printf '\342\200\213') iso=$(printf '\342\201\246')
	tag=$(printf '\363\240\201\201') c1=$(printf '\302\233') shy=$(printf '\302\255')
	pty_run "n" -- --policy "$pol" -- sh -c \
		'{ echo x > "asked/$1"; } 2>/dev/null || echo refused-d' sh "${rlo}fdp.txt ${zw}${iso}${tag}${c1}${shy}caf$(printf '\303\251')"
	check "$p: interactive: bidi, zero-width, tag, C1 characters in the request are shown escaped (\\u202e), never raw"
	expect_err_has "asks to write \$'$W/asked/\\u202efdp.txt \\u200b\\u2066\\U000e0041\\xc2\\x9b\\u00adcaf$(printf '\303\251')'"
	for raw in "$rlo" "$zw" "$iso" "$tag" "$c1" "$shy"; do
		expect_err_lacks "$raw"
	done
	expect_log decision=deny decided_by=human
	done_check
}

# Shim events come from the agent's own processes: anything inside can send one.  Forged
# reports of allows the policy would not give are logged as the policy decides, flagged.
case_forged_events()
{
	p=$RUN_USER
	need_sandbox "$p: forged shim events" || return
	cp "$HERE/forge.py" "$W/forge.py"
	[ -z "$AS" ] || chown "$RUN_USER" "$W/forge.py"
	arun --headless -- "$PY" forge.py "$H"
	check "$p: forged shim events claiming allows are logged as the policy decides (deny / ask), flagged"
	expect_out_has forged
	expect_log file="$H/.ssh/id_rsa" action=read decision=deny message~"a forged report"
	expect_log command=/usr/bin/git decision=ask message~"the shim reported allow"
	expect_log network_dst=exfil.example.com:443 decision=ask message~"the shim reported allow"
	expect_no_log file="$H/.ssh/id_rsa" decision=allow
	expect_no_log network_dst=exfil.example.com:443 decision=allow
	expect_log file="$H/./.ssh/id_rsa" decision=deny message~"a path no shim reports"
	expect_log command=/lib64/ld-linux-x86-64.so.2 decision=deny message~"the shim reported allow"
	expect_no_log command=/lib64/ld-linux-x86-64.so.2 decision=allow
	done_check
	rm -f "$W/forge.py"
}

case_interactive()
{
	p=$RUN_USER
	need_sandbox "$p: interactive prompt" || return
	pol=$(ask_policy)
	fresh_asked
	for ans in y n a b; do
		case $ans in
		a | b) agent="echo 1 > asked/i-$ans; sh -c \"echo 2 > asked/i-$ans\"; echo agent-done" ;;
		*) agent="echo $ans > asked/i-$ans; echo agent-done" ;;
		esac
		pty_run "$ans" -- --policy "$pol" -- sh -c "$agent"
		case $ans in
		y)
			check "$p: interactive: 'y' at the prompt allows the asked write (decided_by human)"
			expect_rc 0
			expect_out_eq "prompts 1"
			expect_err_has "asks to write $W/asked/i-y"
			expect_content "$W/asked/i-y" y
			expect_log file="$W/asked/i-y" decision=allow decided_by=human reason~"wait for a human"
			;;
		n)
			check "$p: interactive: 'n' at the prompt denies it"
			expect_out_eq "prompts 1"
			expect_no_file "$W/asked/i-n"
			expect_log file="$W/asked/i-n" decision=deny decided_by=human
			;;
		a)
			check "$p: interactive: 'a' allows, and the same ask again passes without a prompt (decided_by session)"
			expect_rc 0
			expect_out_eq "prompts 1"
			expect_content "$W/asked/i-a" 2
			expect_log_count 1 file="$W/asked/i-a" decision=allow decided_by=human
			expect_log_count 1 file="$W/asked/i-a" decision=allow decided_by=session
			;;
		b)
			check "$p: interactive: 'b' denies, and the same ask again is denied without a prompt (decided_by session)"
			expect_rc 0
			expect_out_eq "prompts 1"
			expect_no_file "$W/asked/i-b"
			expect_log_count 1 file="$W/asked/i-b" decision=deny decided_by=human
			expect_log_count 1 file="$W/asked/i-b" decision=deny decided_by=session
			;;
		esac
		expect_err_has agent-done
		done_check
	done

	pol=$(write_policy ask-timeout.yaml <<'EOF'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
ask_timeout: 1
ask:
  - file: { path: "./asked/**", action: write }
EOF
)
	pty_run "" -- --policy "$pol" -- sh -c 'echo t > asked/i-t; echo agent-done'
	check "$p: interactive: no answer within ask_timeout: 1 -> denied (decided_by timeout)"
	expect_rc 0
	expect_out_eq "prompts 1"
	expect_no_file "$W/asked/i-t"
	expect_err_has agent-done
	expect_log file="$W/asked/i-t" decision=deny decided_by=timeout
	done_check
}
