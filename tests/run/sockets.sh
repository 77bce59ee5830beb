# sockets.sh — airlock run's case for the host's unix sockets (issue 13, class 4): a service's
# socket file under a path the sandbox shows (Docker Desktop's ~/.docker/desktop/docker.sock, an
# API socket under a system tree such as /srv) is not reachable from inside by python3, the
# dynamic probe, the static probe or raw syscall(SYS_connect), unless sandbox.write names it.
# connect(2) needs only write permission on the socket's inode, not a writable mount, so the
# read-only tree alone does not stop it.  Sourced by run.sh.

# sock_server PATH HITS READY: a python3 AF_UNIX server on the host at PATH (mode 0666, so the
# user the case runs as may connect), one line appended to HITS per connection it accepts;
# READY appears when it listens.  0 when it does.
sock_server()
{
	rm -f "$1" "$3"
	"$PY" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
s.listen(64)
open(sys.argv[3], "w").close()
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "a") as f:
        f.write("hit\n")
    c.close()
' "$1" "$2" "$3" &
	BG_PIDS="$BG_PIDS $!"
	SOCK_PIDS="$SOCK_PIDS $!"
	wait_file "$3" 50
}

# sock_hits: connections the two test servers accepted so far.
sock_hits() { wc -l <"$T/sock-hits" | tr -d ' '; }

# sock_agent SOCKET...: the agent's script: for each socket, one line per client: python3
# (dynamic, the shim in it), the dynamic probe, the static probe, the static probe's raw
# syscalls: "HOW PATH: OK" or "HOW PATH: ERR ENAME".
sock_agent()
{
	for s in "$@"; do
		cat <<EOF2
echo "py $s: \$(python3 -c 'import errno, socket, sys
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    c.connect(sys.argv[1])
    print("OK")
except OSError as e:
    print("ERR", errno.errorcode.get(e.errno, e.errno))' "$s")"
echo "dyn $s: \$("$PROBE" unix "$s")"
echo "static $s: \$("$PROBE_STATIC" unix "$s")"
echo "raw $s: \$("$PROBE_STATIC" rawunix "$s")"
EOF2
	done
}

# expect_start_num FIELD MIN: the run's session_start has FIELD, a number >= MIN.
expect_start_num()
{
	line=$("$PY" "$LOGQ" "$LOG" find event=session_start) || {
		_fail "no session_start line"
		return
	}
	printf '%s' "$line" | "$PY" -c 'import json, sys
v = json.load(sys.stdin).get(sys.argv[1])
sys.exit(0 if isinstance(v, int) and v >= int(sys.argv[2]) else 1)' "$1" "$2" ||
		_fail "session_start: expected $1 >= $2 in $(printf '%s' "$line" | grep -o '"masked.*"seccomp')"
}

# case_host_sockets: the two host servers are reached from outside (the control), not from
# inside airlock run (every client fails with ECONNREFUSED: /dev/null lies over the socket, and
# the server sees no connection), and from inside again once sandbox.write names each socket.
case_host_sockets()
{
	p=$RUN_USER
	need_sandbox "$p: unix sockets of the host are not reachable from inside" || return
	if [ -n "$STATIC_SKIP" ]; then
		tap_skip "$p: unix sockets of the host are not reachable from inside" "$STATIC_SKIP"
		return
	fi
	# a system tree the sandbox shows: /srv as root; else one the user may write (/var/tmp),
	# outside the case's workspace and home, which only the socket walk covers
	if $IS_ROOT && [ -d /srv ]; then
		sysdir=$(mktemp -d /srv/airlock-test-XXXXXX) || return
	else
		sysdir=$(mktemp -d /var/tmp/airlock-sock-XXXXXX) || return
	fi
	chmod 755 "$sysdir"
	mkdir -p "$H/.docker/desktop"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$H/.docker"
	dock=$H/.docker/desktop/docker.sock
	api=$sysdir/api.sock
	: >"$T/sock-hits"
	SOCK_PIDS=""
	if ! sock_server "$dock" "$T/sock-hits" "$T/sock-ready.1" ||
		! sock_server "$api" "$T/sock-hits" "$T/sock-ready.2"; then
		check "$p: the test's unix socket servers start"
		_fail "a python3 AF_UNIX server did not start"
		done_check
		rm -rf "$sysdir"
		return
	fi
	sock_agent "$dock" "$api" >"$U/sock.sh"
	chmod 644 "$U/sock.sh"

	# the control: without airlock, the same user's clients reach both servers
	h0=$(sock_hits)
	RC=0 OUT=$(cd "$W" && $AS env -i PATH="$AGENT_PATH" HOME="$H" sh "$U/sock.sh" 2>&1) ERR="" LOG=""
	sleep 0.3
	check "$p: control: without airlock, python3, the dynamic and the static probe and raw syscalls reach $dock and $api"
	for how in py dyn static raw; do
		for s in "$dock" "$api"; do
			expect_out_re "^$how $s: ([a-z]+ )?OK$"
		done
	done
	[ "$(sock_hits)" -ge $((h0 + 8)) ] || _fail "the servers saw $(($(sock_hits) - h0)) connection(s), expected 8"
	done_check

	# home is an allowlist: ~/.docker is not there at all by default
	arun --headless --policy "$(open_policy)" -- sh "$U/sock.sh"
	check "$p: by default ~/.docker is not in the sandbox at all (home is an allowlist): every client gets ENOENT for its socket; the /srv one is masked"
	expect_rc 0
	for how in py dyn static raw; do
		expect_out_re "^$how $dock: ([a-z]+ )?ERR ENOENT$"
		expect_out_re "^$how $api: ([a-z]+ )?ERR ECONNREFUSED$"
	done
	done_check

	# ~/.docker shown (sandbox.read adds it to home's list): the walk masks its socket
	pol=$(write_policy sockets-home.yaml <<'EOF2'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
sandbox:
  read: ["~/.docker"]
EOF2
)
	h0=$(sock_hits)
	arun --headless --policy "$pol" -- sh "$U/sock.sh"
	sleep 0.3
	check "$p: inside airlock run, no client reaches the host's sockets (ECONNREFUSED: /dev/null lies over each) and the servers see no connection"
	expect_rc 0
	for how in py dyn static raw; do
		for s in "$dock" "$api"; do
			expect_out_re "^$how $s: ([a-z]+ )?ERR ECONNREFUSED$"
		done
	done
	[ "$(sock_hits)" = "$h0" ] || _fail "the servers saw $(($(sock_hits) - h0)) connection(s) from inside"
	expect_start_num sockets_masked 2
	expect_start_num masked 2 # the two sockets (no deny rule here; ~/.ssh and ~/.aws are not shown at all)
	expect_log_valid
	done_check

	# named in sandbox.write: each socket is bound and stays reachable, by every client
	npol=$(write_policy sockets-named.yaml <<EOF
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
sandbox:
  write: ["$dock", "$api"]
EOF
)
	h0=$(sock_hits)
	arun --headless --policy "$npol" -- sh "$U/sock.sh"
	sleep 0.3
	check "$p: a socket sandbox.write names stays reachable from inside: python3, the probes and raw syscalls connect"
	expect_rc 0
	for how in py dyn static raw; do
		for s in "$dock" "$api"; do
			expect_out_re "^$how $s: ([a-z]+ )?OK$"
		done
	done
	[ "$(sock_hits)" -ge $((h0 + 8)) ] || _fail "the servers saw $(($(sock_hits) - h0)) connection(s), expected 8"
	done_check

	for pid in $SOCK_PIDS; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	rm -rf "$sysdir" "$H/.docker" "$U/sock.sh" "$T/sock-ready.1" "$T/sock-ready.2"
}
