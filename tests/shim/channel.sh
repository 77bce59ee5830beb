# channel.sh — the shim suite's cases on the channel: asks the launcher answers, events it is
# sent, and a missing or corrupt policy image (every decision deny).  Sourced by
# tests/shim/run.sh (groups ask events failclosed), which starts the channel server.

# ---- ask: the launcher's answer decides -----------------------------------------------------------------

ask_group()
{
	server_start --answer allow
	sh_run 'askme markers/ask-allowed'
	check "ask: exec, server answers allow: the program starts"
	expect_rc 0
	expect_file "$W/markers/ask-allowed"
	expect_event type=ask source=exec decision=ask rule=$R_ASKEXEC "program=$W/bin/askme"
	expect_event type~answer decision=allow
	done_check

	sh_run 'cat asked.txt'
	check "ask: read, server answers allow: the file is read"
	expect_out_eq asked-content
	expect_event type=ask source=open action=read rule=$R_ASKFILE "path=$W/asked.txt"
	done_check

	py_run "${PYPRE}print(subprocess.run(['askme', 'markers/ask-sub-allowed']).returncode)"
	check "ask: python subprocess (asks from the vfork child), allow: starts"
	expect_out_eq 0
	expect_file "$W/markers/ask-sub-allowed"
	expect_event type=ask source=exec "program=$W/bin/askme" 'argv=["askme","markers/ask-sub-allowed"]'
	done_check

	server_start --answer allow --delay-ms 400
	sh_run 'askme markers/ask-delayed'
	check "ask: the answer comes after 400 ms: the call blocks for it, then proceeds"
	expect_rc 0
	expect_file "$W/markers/ask-delayed"
	expect_event type~answer decision=allow
	done_check

	server_start --answer deny
	sh_run 'askme markers/ask-denied'
	check "ask: exec, server answers deny: EACCES, not started"
	expect_rc 126
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/ask-denied"
	expect_event type=ask source=exec "program=$W/bin/askme"
	expect_event type~answer decision=deny
	done_check

	py_run "${PYPRE}
try:
    print('read', open('asked.txt').read())
except OSError as e:
    print(en(e))"
	check "ask: read, server answers deny: EACCES"
	expect_out_eq "err EACCES"
	expect_event type=ask source=open "path=$W/asked.txt"
	done_check

	py_run "${PYPRE}
try:
    subprocess.run(['askme', 'markers/ask-sub-denied']); print('ran')
except OSError as e:
    print(en(e))"
	check "ask: python subprocess (asks from the vfork child), deny: EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/ask-sub-denied"
	done_check

	server_stop
	rm -f "$S/channel"
	sh_run 'askme markers/ask-noserver'
	check "ask: no channel socket: denied (fail closed), not started"
	expect_rc 126
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/ask-noserver"
	done_check

	sh_run 'cat asked.txt'
	check "ask: no channel socket: read denied (fail closed): EACCES"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks asked-content
	done_check

	# A socket path that is not a socket at all.
	: >"$S/channel"
	sh_run 'askme markers/ask-notsock'
	check "ask: channel is not a socket: denied (fail closed): EACCES, not started"
	expect_rc 126
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/ask-notsock"
	done_check
	rm -f "$S/channel"
}

# ---- events reported on the channel ------------------------------------------------------------------------

events_group()
{
	server_start --answer deny
	sh_run 'cat .env'
	check "events: a denied read is reported (source open, action read, path, rule)"
	expect_rc 1
	expect_event type=event source=open action=read decision=deny rule=$R_ENV "path=$W/.env"
	done_check

	f=$(protect ev-keep.txt)
	sh_run 'echo x > protected/ev-keep.txt'
	check "events: a denied write is reported (action write, the protected rule)"
	expect_event type=event source=open action=write decision=deny rule=$R_PROTECTED "path=$f"
	done_check

	sh_run 'forbidden markers/ev-denied'
	check "events: a denied exec is reported (program, argv, rule)"
	expect_event type=event source=exec decision=deny rule=$R_FORBIDDEN "program=$W/bin/forbidden" \
		'argv=["forbidden","markers/ev-denied"]'
	done_check

	py_run "${PYPRE}
s = socket.socket()
try:
    s.connect(('127.0.0.1', $DENY_PORT)); print('connected')
except OSError as e:
    print(en(e))"
	check "events: a denied connect: ECONNREFUSED, reported (host, port, rule)"
	expect_out_eq "err ECONNREFUSED"
	expect_event type=event source=connect decision=deny rule=$R_NETDENY host=127.0.0.1 port=$DENY_PORT
	done_check

	py_run "${PYPRE}
s = socket.socket()
s.connect(('127.0.0.1', $ALLOW_PORT)); print(s.recv(10).decode().strip())"
	check "events: an allowed connect works and is reported"
	expect_out_eq hello
	expect_event type=event source=connect decision=allow rule=$R_NETALLOW host=127.0.0.1 port=$ALLOW_PORT
	done_check

	sh_run 'allowed_prog markers/ev-allowed'
	check "events: an allowed exec is reported"
	expect_rc 0
	expect_event type=event source=exec decision=allow rule=-1 "program=$W/bin/allowed_prog" \
		'argv=["allowed_prog","markers/ev-allowed"]'
	done_check

	server_start --answer deny
	py_run "${PYPRE}
print(open('trace_probe.txt').read().strip())
try:
    open('.env')
except OSError as e:
    print(en(e))"
	check "events: an allowed read is not reported without AIRLOCK_TRACE"
	expect_out_eq "probe-content
err EACCES"
	# the denied read after it is the sentinel: once it is logged, the earlier read would be too
	expect_event type=event source=open decision=deny "path=$W/.env"
	sleep 0.2
	expect_no_event "path=$W/trace_probe.txt"
	expect_no_event source=open decision=allow
	done_check

	server_start --answer deny
	shim_run AIRLOCK_TRACE=1 "$PY" -c "print(open('trace_probe.txt').read().strip())"
	check "events: an allowed read is reported with AIRLOCK_TRACE=1"
	expect_out_eq probe-content
	expect_event type=event source=open action=read decision=allow "path=$W/trace_probe.txt"
	done_check
}

# ---- a missing or corrupt policy image: every decision is deny -------------------------------------------------

failclosed_group()
{
	good="$S/policy.img"
	size=$(wc -c <"$good")
	for variant in missing empty truncated flipped garbage; do
		FS="$T/session-$variant"
		mkdir -p "$FS"
		case $variant in
		missing) ;;
		empty) : >"$FS/policy.img" ;;
		truncated) head -c $((size / 2)) "$good" >"$FS/policy.img" ;;
		flipped)
			"$PY" -c "import sys
b = bytearray(open(sys.argv[1], 'rb').read()); b[len(b) * 3 // 4] ^= 0x5a
open(sys.argv[2], 'wb').write(b)" "$good" "$FS/policy.img"
			;;
		garbage) head -c "$size" /dev/urandom >"$FS/policy.img" ;;
		esac
		server_start "$FS" --answer allow

		rm -f "$W/out/fc-$variant"
		SHIM_DIR=$FS sh_run "echo x > out/fc-$variant"
		check "fail closed ($variant image): a write is denied: EACCES, not created"
		expect_rc_not 0
		expect_err_has "Permission denied"
		expect_no_file "$W/out/fc-$variant"
		done_check

		SHIM_DIR=$FS sh_run "allowed_prog markers/fc-$variant"
		check "fail closed ($variant image): an exec is denied: EACCES, not started"
		expect_rc 126
		expect_err_has "Permission denied"
		expect_no_file "$W/markers/fc-$variant"
		done_check

		SHIM_DIR=$FS sh_run 'read -r l < ok.txt; echo "[$l]"'
		check "fail closed ($variant image): a read is denied: EACCES"
		expect_out_lacks ok-content
		expect_err_has "Permission denied"
		done_check

		SHIM_DIR=$FS shim_run "$PY" -c "print('started')"
		check "fail closed ($variant image): python cannot even start (its reads are denied)"
		expect_rc 1
		expect_err_has "No module named 'encodings'"
		expect_out_lacks started
		done_check
		server_stop
	done
}
