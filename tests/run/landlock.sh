# landlock.sh — cases of tests/run/run.sh for the Landlock layer: the helper (airlock-landlock)
# alone, outside bubblewrap, then under `airlock run`.  Sourced by run.sh (which sets $AIRLOCK,
# $PROBE, $PROBE_STATIC, $STATIC_SKIP and the user's $U, $W, $H, $AS); skips loudly when the
# kernel has no Landlock (ABI 2 or more: airlock does not use ABI 1).

# landlock_setup: LANDLOCK (the helper next to $AIRLOCK), LL_ABI (what doctor says the ruleset
# applies), LANDLOCK_SKIP (why the cases cannot run, or "").
landlock_setup()
{
	LANDLOCK=$(dirname "$AIRLOCK")/airlock-landlock
	LANDLOCK_SKIP=""
	LL_ABI=$(sed -n 's/^ *Landlock *ok *ABI \([0-9]*\):.*/\1/p' "$T/doctor.out")
	if [ ! -x "$LANDLOCK" ]; then
		LANDLOCK_SKIP="no $LANDLOCK (make builds it)"
	elif [ -z "$LL_ABI" ]; then
		LANDLOCK_SKIP="this kernel gives airlock no Landlock ($(grep -m1 'Landlock' "$T/doctor.out" | tr -s ' '))"
	fi
}

# ll_as CMD...: CMD as the case's user with a clean environment, in $U; sets RC, OUT, ERR.
ll_as()
{
	# shellcheck disable=SC2086 # AS is a word list
	(cd "$U" && exec $AS env -i PATH="$AGENT_PATH" LANG=C.UTF-8 "$@") >"$T/out" 2>"$T/err" </dev/null
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}

# The helper alone: write allowed under A only; sh, a dynamically linked and a static program and
# raw syscalls cannot write under B; a rule it cannot add stops it before the program (fail closed).
case_landlock_helper()
{
	p=$RUN_USER
	if [ -n "$LANDLOCK_SKIP" ]; then
		tap_skip "$p: the Landlock helper alone" "$LANDLOCK_SKIP"
		return
	fi
	A=$U/ll/A
	B=$U/ll/B
	rm -rf "$U/ll"
	mkdir -p "$A" "$B"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$U/ll"
	ll_as "$LANDLOCK" -r / -w "$A" -- sh -c 'echo x > "$1/sh"; echo x > "$2/sh"; echo done' sh "$A" "$B"
	check "$p: airlock-landlock -r / -w A -- sh: echo > A/f works, echo > B/f is refused (EACCES)"
	expect_rc 0
	expect_out_has done
	expect_content "$A/sh" x
	expect_no_file "$B/sh"
	expect_err_has "Permission denied"
	done_check

	ll_as "$LANDLOCK" -r / -w "$A" -- "$PROBE" write "$B/dyn"
	check "$p: ... a dynamically linked program's open(2) under B: EACCES"
	expect_out_eq "write ERR EACCES"
	expect_no_file "$B/dyn"
	done_check

	if [ -n "$STATIC_SKIP" ]; then
		tap_skip "$p: ... a static program and raw syscalls" "$STATIC_SKIP"
	else
		ll_as "$LANDLOCK" -r / -w "$A" -- sh -c '"$1" write "$2/static"; "$1" rawwrite "$2/raw"; "$1" rawwrite "$3/raw"' \
			sh "$PROBE_STATIC" "$B" "$A"
		check "$p: ... a static program (gcc -static) and raw syscall(SYS_openat) under B: EACCES; under A: written"
		expect_out_eq "write ERR EACCES
rawwrite ERR EACCES
rawwrite OK"
		expect_no_file "$B/static"
		expect_no_file "$B/raw"
		expect_content "$A/raw" x
		done_check
	fi

	ll_as "$LANDLOCK" -r / -w "$A" -w "$U/ll/missing" -- sh -c 'echo ran > "$1/ran"' sh "$A"
	check "$p: ... a rule it cannot add (a missing directory): exit 125, the program never runs"
	expect_rc 125
	expect_no_file "$A/ran"
	expect_err_has "not running the agent"
	done_check
}

# Under `airlock run`: the session_start says which ABI; what the mounts allow still works (the
# workspace, a sandbox.write path, /tmp, /dev/null, /dev/stderr reopened by name); the scopes hold:
# no signal to bwrap's init, no abstract socket of the host (network: host).  The last two
# succeed without the helper: they fail when it is not run.
case_landlock()
{
	p=$RUN_USER
	need_sandbox "$p: the Landlock ruleset under airlock run" || return
	if [ -n "$LANDLOCK_SKIP" ]; then
		tap_skip "$p: the Landlock ruleset under airlock run" "$LANDLOCK_SKIP"
		return
	fi
	mkdir -p "$H/extra"
	[ -z "$AS" ] || chown "$RUN_USER" "$H/extra"
	rm -f "$W/ll-"* "$H/extra/"*
	pol=$(write_policy landlock.yaml <<'EOF2'
version: 1
default: {exec: allow, read: allow, write: allow, connect: allow}
sandbox:
  network: host
  write: ["~/extra"]
EOF2
)
	sock=airlock-ll-test-$$-$RUN_USER
	"$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0" + sys.argv[1])
s.listen(8)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept()
    c.close()
' "$sock" "$T/abstract.ready" &
	lpid=$!
	BG_PIDS="$BG_PIDS $lpid"
	wait_file "$T/abstract.ready" 50
	probe=$PROBE_STATIC
	[ -z "$STATIC_SKIP" ] || probe=$PROBE
	arun --headless --policy "$pol" -- sh -c '
		echo ws > ll-sh; "$1" write ll-probe; "$1" rawwrite "$HOME/extra/raw"
		echo t > /tmp/t && echo tmp-ok; echo n > /dev/null && echo null-ok
		[ -n "$3" ] || echo to-stderr > /dev/stderr
		"$1" kill 1; "$1" abstract "$2"' sh "$probe" "$sock" "$AS"
	# /dev/stderr reopened by name is the host's file $T/err; another user than root may not
	# write it anyway (it is root's)
	check "$p: airlock run: session_start says landlock=$LL_ABI; the workspace, sandbox.write, /tmp, /dev/null (as root /dev/stderr too) stay writable"
	expect_rc 0
	expect_log event=session_start landlock="$LL_ABI"
	expect_content "$W/ll-sh" ws
	expect_content "$W/ll-probe" x
	expect_content "$H/extra/raw" x
	expect_out_has "write OK"
	expect_out_has "rawwrite OK"
	expect_out_has tmp-ok
	expect_out_has null-ok
	[ -n "$AS" ] || expect_err_has to-stderr
	done_check

	"$probe" abstract "$sock" >"$T/abstract.host"
	if [ "$LL_ABI" -lt 6 ]; then
		tap_skip "$p: airlock run: the scopes" "Landlock ABI $LL_ABI has no scopes (6)"
	else
		check "$p: airlock run: the agent cannot signal bwrap's init (pid 1) nor reach the host's abstract socket @$sock (network: host), which the host can"
		expect_out_has "kill ERR EPERM"
		expect_out_has "abstract ERR EPERM"
		grep -q "abstract OK" "$T/abstract.host" || _fail "the host itself cannot reach @$sock: $(cat "$T/abstract.host")"
		done_check
	fi
	kill "$lpid" 2>/dev/null
	rm -f "$T/abstract.ready"

	arun --headless --no-sandbox -- true
	check "$p: airlock run --no-sandbox: no Landlock, and session_start says why"
	expect_rc 0
	expect_log event=session_start sandbox=none "landlock=unavailable: no kernel sandbox (--no-sandbox)"
	done_check
}
