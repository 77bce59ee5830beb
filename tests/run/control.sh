# control.sh — the run suite's cases on the control socket: airlock attach's protocol
# (launcher/approvals/control.h) and airlock ps.  Sourced by tests/run/run.sh (case control).

CTLCLIENT="$HERE/ctlclient.py"

# The directory this user's control sockets are in (env -i: no XDG_RUNTIME_DIR).
ctl_dir()
{
	if [ "$(id -u "$RUN_USER")" = 0 ]; then echo /run/airlock; else echo "/tmp/airlock-$(id -u "$RUN_USER")"; fi
}

# ctl_session ACTIONS AGENT-SCRIPT: a --headless session under the ask policy, with a scripted
# control client (ctlclient.py ACTIONS) attached first; the agent waits for ./go, which the
# test makes once the launcher says a client is attached.  Sets RC, OUT, ERR, LOG, MSGS.
ctl_session()
{
	actions=$1
	script=$2
	rm -f "$W/go" "$L/msgs"
	arun_bg "$T/ctl.out" --headless --policy "$pol" -- \
		sh -c "while [ ! -e go ]; do sleep 0.05; done; $script"
	$AS "$PY" "$CTLCLIENT" "$(ctl_dir)" "$actions" "$L/msgs" 20 >"$L/ctl.client" 2>&1 &
	cpid=$!
	i=0
	case $actions in
	attach*) until grep -q '"attached": 1' "$L/msgs" 2>/dev/null || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done ;;
	*) sleep 0.5 ;;
	esac
	: >"$W/go"
	[ -z "$AS" ] || chown "$RUN_USER" "$W/go"
	t0=$(date +%s)
	wait_pid_gone "$BGPID" 200 || kill -9 "$BGPID"
	ELAPSED=$(($(date +%s) - t0))
	RC=$BGRC OUT=$(cat "$T/ctl.out") ERR=$(cat "$T/ctl.out.err")
	wait "$cpid"
	CRC=$?
	MSGS=$(cat "$L/msgs" 2>/dev/null)
}

expect_msg() { printf '%s\n' "$MSGS" | grep -q -- "$1" || _fail "expected a control message with $1"; }
expect_no_msg() { ! printf '%s\n' "$MSGS" | grep -q -- "$1" || _fail "expected no control message with $1"; }

case_control()
{
	p=$RUN_USER
	need_sandbox "$p: control socket" || return
	pol=$(ask_policy)
	fresh_asked

	ctl_session attach,ask:allow 'echo y > asked/k-allow; echo agent-done'
	check "$p: control: an attached client is shown the ask (who, what, rule, reason) and its allow lets the write through"
	expect_rc 0
	expect_out_has agent-done
	expect_content "$W/asked/k-allow" y
	expect_msg '"type": "hello"'
	expect_msg "\"what\": \"write $W/asked/k-allow\""
	expect_msg '"reason": "writes under asked/ wait for a human"'
	# who: the asker's command line, each argument a shell word (core/termtext.h)
	expect_msg '"who": "[^"]*sh -c '\''while'
	expect_msg '"decision": "allow", "decided_by": "human"'
	expect_msg '"type": "end", "status": 0'
	expect_log file="$W/asked/k-allow" decision=allow decided_by=human
	done_check

	ctl_session attach,ask:deny 'echo n > asked/k-deny || echo refused'
	check "$p: control: a deny answer refuses the write, logged decided_by human"
	expect_out_has refused
	expect_no_file "$W/asked/k-deny"
	expect_log file="$W/asked/k-deny" decision=deny decided_by=human
	done_check

	ctl_session attach,ask:deny-session 'echo 1 > asked/k-b || echo refused1; sh -c "echo 2 > asked/k-b" || echo refused2'
	check "$p: control: deny-session refuses the same request again without a second ask (decided_by session)"
	expect_out_has refused1
	expect_out_has refused2
	expect_no_file "$W/asked/k-b"
	expect_log_count 1 file="$W/asked/k-b" decision=deny decided_by=human
	expect_log_count 1 file="$W/asked/k-b" decision=deny decided_by=session
	[ "$(printf '%s\n' "$MSGS" | grep -c '"type": "ask"')" = 1 ] || _fail "expected exactly one ask message"
	done_check

	ctl_session attach,ask:close 'echo d > asked/k-detach || echo refused-after-detach'
	check "$p: control: a client that detaches while an ask waits: the ask takes the headless rule (deny, decided_by default) at once"
	expect_out_has refused-after-detach
	expect_no_file "$W/asked/k-detach"
	expect_log file="$W/asked/k-detach" decision=deny decided_by=default
	[ "${ELAPSED:-0}" -lt 10 ] || _fail "the ask waited"
	done_check

	ctl_session hello 'echo h > asked/k-none || echo refused-headless'
	check "$p: control: a client that never attaches does not hold asks: headless deny"
	expect_out_has refused-headless
	expect_log file="$W/asked/k-none" decision=deny decided_by=default
	done_check

	ctl_session attach,bad,ask:allow 'echo b > asked/k-bad; echo agent-done'
	check "$p: control: malformed lines are logged and dropped; the client and the session go on"
	expect_rc 0
	expect_content "$W/asked/k-bad" b
	expect_log source=launcher message~"not a JSON object"
	expect_log source=launcher message~"unknown type"
	done_check

	ctl_session attach,huge 'echo x > asked/k-huge || echo refused-huge'
	check "$p: control: a line over the bound drops that client (logged); its asks fall back to headless"
	expect_out_has refused-huge
	expect_log source=launcher message~"over the bound"
	done_check

	ctl_session attach,ask:quit 'echo q > asked/k-quit; echo not-reached; sleep 30'
	check "$p: control: quit ends the agent (SIGTERM, status 143), logged"
	expect_rc 143
	expect_out_lacks not-reached
	expect_log source=launcher message~"ending the agent: asked on the control socket"
	[ "$CRC" = 0 ] || _fail "the client did not see the end: $(cat "$L/ctl.client")"
	done_check

	# airlock ps lists the running session (and only while it runs)
	rm -f "$W/ready-ps"
	arun_bg "$T/ps.out" --headless --policy "$pol" -- sh -c 'echo > ready-ps; sleep 30'
	check "$p: airlock ps lists the running session: id, pid, mode, the agent's command; -q the id"
	if wait_file "$W/ready-ps" 100; then
		acmd ps
		sid=$(head -n 1 "$LOG" | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())["session_id"])')
		expect_out_has "$sid"
		expect_out_has "$BGPID"
		expect_out_has "headless"
		expect_out_has "sh -c echo > ready-ps; sleep 30"
		acmd ps -q
		expect_out_has "$sid"
		# the sandbox sees neither the control socket nor its directory
		ls_in=$(ls -a /proc/"$BGPID"/root/run/airlock 2>/dev/null)
		sockp="$(ctl_dir)/$sid.control"
		[ -S "$sockp" ] || _fail "no socket at $sockp"
		[ "$(stat -c %a "$sockp")" = 600 ] || _fail "the control socket is not 0600"
		kill -TERM "$BGPID"
		wait_pid_gone "$BGPID" 50
		[ ! -e "$sockp" ] || _fail "the control socket outlived the session"
		acmd ps -q
		expect_out_lacks "$sid"
		: "$ls_in"
	else
		_fail "the agent did not start"
		kill -9 "$BGPID"
	fi
	done_check

	check "$p: the agent cannot see or reach the control socket from inside the sandbox"
	arun --headless --policy "$pol" -- sh -c 'ls -a /run/airlock; ls "$(dirname "$AIRLOCK_DIR")" 2>&1; for f in /run/airlock/*.control /tmp/airlock-*/*.control /run/user/*/airlock/*.control; do test -S "$f" && echo "FOUND $f"; done; echo probe-done'
	expect_out_has probe-done
	expect_out_lacks FOUND
	expect_out_lacks ".control"
	done_check

	# --no-sandbox: the agent shares everything with the user; a double-forked process of its
	# own still cannot attach and approve its asks (the launcher is its child subreaper)
	cat >"$W/selfapprove.py" <<'EOF'
import glob, json, os, socket, sys, time
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        time.sleep(0.3)
        for p in glob.glob(sys.argv[1] + "/*.control"):
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(p)
                f = s.makefile("rw")
                f.write('{"type":"attach"}\n')
                f.flush()
                open("attach-tried", "w").close()
                for line in f:
                    m = json.loads(line)
                    if m["type"] == "ask":
                        f.write(json.dumps({"type": "answer", "id": m["id"], "answer": "allow"}) + "\n")
                        f.flush()
            except Exception:
                pass
        os._exit(0)
    os._exit(0)
os.wait()
# the ask only once the grandchild has tried to attach (a fixed wait lost the race on a busy
# machine), and a moment for the launcher to take its line
for _ in range(200):
    if os.path.exists("attach-tried"):
        break
    time.sleep(0.05)
time.sleep(0.5)
os.system("echo s > asked/k-self || echo refused-self")
EOF
	[ -z "$AS" ] || chown "$RUN_USER" "$W/selfapprove.py"
	rm -f "$W/attach-tried"
	arun --no-sandbox --headless --policy "$pol" -- "$PY" selfapprove.py "$(ctl_dir)"
	check "$p: control: with --no-sandbox a double-forked process of the agent cannot attach and approve its ask"
	expect_out_has refused-self
	expect_no_file "$W/asked/k-self"
	expect_log file="$W/asked/k-self" decision=deny decided_by=default
	expect_log source=launcher message~"or the agent itself was refused"
	done_check
	rm -f "$W/selfapprove.py"

	check "$p: airlock attach without a terminal says it needs one (status 1)"
	acmd attach
	expect_rc 1
	expect_err_has "needs a terminal"
	done_check

	if [ "$(id -u "$RUN_USER")" = 0 ] && command -v unshare >/dev/null 2>&1; then
		rm -f "$W/go" "$L/msgs"
		arun_bg "$T/ctl.out" --headless --policy "$pol" -- \
			sh -c 'while [ ! -e go ]; do sleep 0.05; done; echo m > asked/k-mntns || echo refused-mntns'
		unshare -m "$PY" "$CTLCLIENT" "$(ctl_dir)" attach,ask:allow "$L/msgs" 3 >/dev/null 2>&1
		: >"$W/go"
		wait_pid_gone "$BGPID" 100 || kill -9 "$BGPID"
		RC=$BGRC OUT=$(cat "$T/ctl.out") ERR=$(cat "$T/ctl.out.err")
		check "$p: control: a client in another mount namespace (as a sandbox would be) is refused, logged"
		expect_out_has refused-mntns
		expect_no_file "$W/asked/k-mntns"
		expect_log source=launcher message~"another mount namespace or the agent itself was refused"
		done_check
	fi
}
