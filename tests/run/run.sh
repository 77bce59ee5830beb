#!/bin/sh
# run.sh — TAP integration tests of `airlock run`: the real build/airlock on real programs (sh, cat,
# git, python3, make, a static binary) in a scratch workspace with a scratch home, asserting on
# exit statuses, files and audit-log lines.
#
# Usage: tests/run/run.sh BUILD_DIR        (BUILD_DIR holds airlock and airlock-preload.so)
#
# The main scenarios run as the current user and, when that is root, again as nobody through
# `setpriv --reuid=nobody --regid=nogroup --clear-groups` (bubblewrap then adds a user
# namespace): most users are not root, and both must pass.  Cases needing bubblewrap, root or
# gcc -static skip with the reason.  Network cases never send a packet off this machine: the
# only server is one this script starts on the host's 127.0.0.1, and reaching it from inside
# the sandbox (which has its own loopback) is the failure.
#
# Environment: KEEP_TMP=1 keeps the scratch tree; CASE_TIMEOUT (s) bounds one run (default 40);
# ONLY_USER=NAME runs the per-user cases for that user only; ONLY_CASES="a b" runs cases a, b.
# Exits 1 when any case fails.
set -u

if [ $# -ne 1 ] || [ ! -x "$1/airlock" ]; then
	echo "usage: $0 BUILD_DIR   (BUILD_DIR/airlock must exist)" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd -P)
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
export LC_ALL=C
unset XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR

# shellcheck source=tests/run/lib.sh
. "$HERE/lib.sh"
lib_setup

ME=$(id -un)
IS_ROOT=false
[ "$(id -u)" = 0 ] && IS_ROOT=true

# ---- what this machine gives ---------------------------------------------------------------

USERS=$ME
nobody_setup # AIRLOCK, NOBODY_SKIP (tests/lib/nobody.sh)
[ -z "$NOBODY_SKIP" ] && USERS="$ME nobody"
[ -n "${ONLY_USER:-}" ] && USERS=$ONLY_USER

SANDBOX_SKIP=""
if ! command -v bwrap >/dev/null 2>&1; then
	SANDBOX_SKIP="bubblewrap (bwrap) is not installed"
fi

# The helper programs: probe dynamically linked (the shim sees it) and static (it does not).
CC=${CC:-gcc}
STATIC_SKIP=""
if ! "$CC" -O1 -o "$T/bin/probe" "$HERE/probe.c" -lpthread 2>"$T/cc.err"; then
	echo "Bail out! cannot compile tests/run/probe.c: $(cat "$T/cc.err")"
	exit 1
fi
if ! "$CC" -O1 -static -o "$T/bin/probe-static" "$HERE/probe.c" -lpthread 2>"$T/cc.err"; then
	STATIC_SKIP="gcc -static failed (no static libc?): $(head -c 200 "$T/cc.err")"
fi
chmod 755 "$T/bin" "$T/bin/"*
PROBE=$T/bin/probe
PROBE_STATIC=$T/bin/probe-static

# The host's server on 127.0.0.1 (the host's loopback, not the sandbox's): every connection
# it accepts is a line in $T/hits.
: >"$T/hits"
"$PY" -c '
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "a") as f:
        f.write("hit\n")
    c.close()
' "$T/port" "$T/hits" &
BG_PIDS="$BG_PIDS $!"
if ! wait_file "$T/port" 50; then
	echo "Bail out! the test's TCP server on 127.0.0.1 did not start"
	exit 1
fi
PORT=$(cat "$T/port")
hits() { wc -l <"$T/hits" | tr -d ' '; }

for u in $USERS; do
	user_setup "$u"
done

# need_sandbox DESC: false (after printing a skip) when the kernel sandbox cannot run here.
need_sandbox()
{
	if [ -n "$SANDBOX_SKIP" ]; then
		tap_skip "$1" "$SANDBOX_SKIP"
		return 1
	fi
	return 0
}

# Policies, written per user (readable by that user).
open_policy()
{
	write_policy open.yaml <<'EOF'
version: 1
# everything the shim sees is allowed: only the kernel layer restricts
default: {exec: allow, read: allow, write: allow, connect: deny}
EOF
}

# ---- the cases ---------------------------------------------------------------------------------

# Denied secret reads (shim and masks), allowed reads.
case_secrets()
{
	p=$RUN_USER
	need_sandbox "$p: cat .env is denied" || return
	arun --headless -- cat .env
	check "$p: cat .env fails, prints nothing of it, log: deny by the .env rule"
	expect_rc_not 0
	expect_secret_safe
	expect_err_has "Permission denied"
	expect_log source=shim file="$W/.env" action=read decision=deny decided_by=policy \
		rule~"<default>:" reason~"Environment files"
	expect_log_valid
	done_check

	arun --headless -- cat "$H/.ssh/id_rsa"
	check "$p: cat ~/.ssh/id_rsa fails, prints nothing of it, log: deny by the id_rsa rule"
	expect_rc_not 0
	expect_secret_safe
	expect_log source=shim file="$H/.ssh/id_rsa" action=read decision=deny rule~"<default>:" reason~"SSH"
	done_check

	arun --headless -- sh -c 'cat ~/.aws/credentials; python3 -c "print(open(\".env\").read())"'
	check "$p: ~/.aws/credentials (cat) and .env (python3) are denied, nothing printed"
	expect_rc_not 0
	expect_secret_safe
	expect_log file="$H/.aws/credentials" decision=deny
	expect_log file="$W/.env" decision=deny
	done_check

	# a policy allowing every read: the mandatory masks still hide ~/.ssh and ~/.aws
	arun --headless --policy "$(open_policy)" -- sh -c 'cat ~/.ssh/id_rsa ~/.aws/credentials; ls -A ~/.ssh; true'
	check "$p: with a policy allowing every read, the mandatory masks still hide ~/.ssh and ~/.aws"
	expect_rc 0
	expect_secret_safe
	expect_out_lacks id_rsa
	done_check

	# the workspace holds a symlink to the key (as a hostile repository could), and a
	# .env.production deep in the tree
	mkdir -p "$W/services/api"
	printf 'DB_PASSWORD=%s\n' "$ENV_SECRET" >"$W/services/api/.env.production"
	ln -sf "$H/.ssh/id_rsa" "$W/key-link"
	[ -z "$AS" ] || chown -hR "$RUN_USER" "$W/services" "$W/key-link"
	arun --headless -- sh -c 'cat key-link; cat services/api/.env.production; true'
	check "$p: reading the key through a symlink in the workspace, and a deep .env.production, is denied"
	expect_secret_safe
	expect_log file="$H/.ssh/id_rsa" action=read decision=deny
	expect_log file="$W/services/api/.env.production" action=read decision=deny
	done_check
	if [ -z "$STATIC_SKIP" ]; then
		arun --headless -- sh -c "$PROBE_STATIC read key-link; $PROBE_STATIC read services/api/.env.production"
		check "$p: a static binary reading them gets nothing (masks: the key's directory, the deep .env.production)"
		expect_secret_safe
		expect_out_lacks "read OK n=2"
		expect_out_lacks "read OK n=3"
		done_check
	fi
	rm -rf "${W:?}/services" "$W/key-link"

	arun --headless -- sh -c 'cat README.md'
	check "$p: cat README.md works (allowed) and the exec is logged"
	expect_rc 0
	expect_out_eq "hello from the readme"
	expect_log source=shim command=/usr/bin/cat args='["README.md"]' decision=allow decided_by=policy rule~"<default>:"
	expect_log source=launcher event=session_start program=/usr/bin/sh
	expect_no_log file="$W/README.md"
	done_check

	arun --headless --trace -- sh -c 'cat README.md'
	check "$p: --trace also logs the allowed read of README.md"
	expect_out_eq "hello from the readme"
	expect_log file="$W/README.md" action=read decision=allow
	done_check
}

# Writes outside the workspace: refused by the shim (ask -> headless deny) and by the kernel.
case_write_outside()
{
	p=$RUN_USER
	need_sandbox "$p: writes outside the workspace are refused" || return
	rm -f "$H/x" "$H/y"
	arun --headless -- sh -c 'echo x > "$HOME/x"; echo x > /etc/airlock-run-test-x; echo x > inside.txt'
	check "$p: echo > \$HOME/x and > /etc/x are refused (headless ask -> deny), logged; ./inside.txt is written"
	expect_no_file "$H/x"
	expect_no_file /etc/airlock-run-test-x
	expect_content "$W/inside.txt" x
	expect_log file="$H/x" action=write decision=deny decided_by=default
	expect_log file=/etc/airlock-run-test-x action=write decision=deny
	done_check

	arun --headless --default-allow -- sh -c 'echo y > "$HOME/y"; echo y > /etc/airlock-run-test-y; mkdir "$HOME/d"; true'
	check "$p: with --default-allow the shim lets the writes through, the read-only root stops them"
	expect_no_file "$H/y"
	expect_no_file /etc/airlock-run-test-y
	expect_no_file "$H/d"
	expect_log file="$H/y" action=write decision=allow decided_by=default
	expect_err_has "Read-only file system"
	done_check
	rm -f /etc/airlock-run-test-x /etc/airlock-run-test-y 2>/dev/null
}

# The caller's secrets in the environment do not cross, unless --env names them.
case_env()
{
	p=$RUN_USER
	need_sandbox "$p: environment" || return
	show='echo "key=[${SECRET_API_KEY-unset}] home=[$HOME] path=[$PATH]"; cat /proc/self/environ | tr "\0" "\n" | grep -c SECRET_API_KEY'
	CALLER_ENV="SECRET_API_KEY=$API_SECRET OTHER_TOKEN=tok" arun --headless -- sh -c "$show"
	check "$p: SECRET_API_KEY in the caller's environment is not in the agent's"
	expect_out_has "key=[unset]"
	expect_out_has "home=[$H]"
	expect_out_has "path=[$AGENT_PATH]"
	[ "$(printf '%s\n' "$OUT" | tail -n 1)" = 0 ] || _fail "SECRET_API_KEY is in /proc/self/environ"
	expect_secret_safe
	done_check

	CALLER_ENV="SECRET_API_KEY=$API_SECRET OTHER_TOKEN=tok" arun --headless --env SECRET_API_KEY -- \
		python3 -c 'import os; print("key=[%s] other=[%s]" % (os.environ.get("SECRET_API_KEY"), os.environ.get("OTHER_TOKEN")))'
	check "$p: --env SECRET_API_KEY passes it through (and nothing else)"
	expect_rc 0
	expect_out_eq "key=[$API_SECRET] other=[None]"
	done_check

	CALLER_ENV="SECRET_API_KEY=$API_SECRET" arun --headless --env SECRET_API_KEY=given -- sh -c 'echo "key=[$SECRET_API_KEY]"'
	check "$p: --env SECRET_API_KEY=given sets it"
	expect_out_eq "key=[given]"
	done_check
}

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

# A static binary: the shim cannot see it; masks, the read-only root and the sandbox's own
# network namespace stop it.
case_static()
{
	p=$RUN_USER
	if [ -n "$STATIC_SKIP" ]; then
		tap_skip "$p: a static binary is stopped by the kernel layer" "$STATIC_SKIP"
		return
	fi
	need_sandbox "$p: a static binary is stopped by the kernel layer" || return
	pol=$(open_policy)
	h0=$(hits)
	"$PROBE_STATIC" connect 127.0.0.1 "$PORT" >"$T/ctl.out"
	sleep 0.2
	h1=$(hits)
	check "control: the static probe reaches the test's server on the host's 127.0.0.1:$PORT from outside"
	RC=0 OUT=$(cat "$T/ctl.out") ERR="" LOG=""
	expect_out_eq "connect OK"
	[ "$h1" -gt "$h0" ] || _fail "the server saw no connection"
	done_check

	# the default policy: its deny-read rule on .env masks the workspace's .env too
	for f in "$H/.ssh/id_rsa" "$H/.aws/credentials" "$W/.env"; do
		arun --headless -- "$PROBE_STATIC" read "$f"
		check "$p: static binary reading ${f#"$U"/} gets nothing (masked)"
		expect_rc 0
		expect_secret_safe
		case "$OUT" in
		"read ERR "* | "read OK n=0 "*) ;;
		*) _fail "expected an error or 0 bytes" ;;
		esac
		done_check
	done

	arun --headless --policy "$pol" -- "$PROBE_STATIC" read README.md
	check "$p: static binary reading README.md works"
	expect_out_eq "read OK n=22 data=hello from the readme."
	done_check

	rm -f "$H/static-x"
	arun --headless --policy "$pol" -- "$PROBE_STATIC" write "$H/static-x"
	check "$p: static binary writing ~/static-x gets EROFS, nothing written"
	expect_out_eq "write ERR EROFS"
	expect_no_file "$H/static-x"
	done_check

	arun --headless --policy "$pol" -- "$PROBE_STATIC" write static-ok
	check "$p: static binary writing ./static-ok works"
	expect_out_eq "write OK"
	expect_content "$W/static-ok" x
	done_check

	h0=$(hits)
	arun --headless --policy "$pol" -- "$PROBE_STATIC" connect 127.0.0.1 "$PORT"
	sleep 0.2
	check "$p: static binary connecting to the host's 127.0.0.1:$PORT fails (own loopback), server untouched"
	expect_out_has "connect ERR"
	[ "$(hits)" = "$h0" ] || _fail "the host's server accepted a connection from inside the sandbox"
	done_check

	# the dynamic probe: the shim denies the connect (asked, headless), or with --default-allow
	# lets it go and the kernel layer stops it
	h0=$(hits)
	arun --headless -- "$PROBE" connect 127.0.0.1 "$PORT"
	check "$p: dynamic connect to 127.0.0.1:$PORT: the shim denies it (ask, headless), logged"
	expect_out_eq "connect ERR ECONNREFUSED"
	expect_log source=shim network_dst="127.0.0.1:$PORT" decision=deny
	done_check
	arun --headless --default-allow -- "$PROBE" connect 127.0.0.1 "$PORT"
	sleep 0.2
	check "$p: dynamic connect allowed by --default-allow still cannot reach the host's server"
	expect_out_has "connect ERR"
	expect_log network_dst="127.0.0.1:$PORT" decision=allow
	[ "$(hits)" = "$h0" ] || _fail "the host's server accepted a connection from inside the sandbox"
	done_check
}

# TIOCSTI: bwrap --new-session leaves the agent without a controlling terminal, and the seccomp
# filter refuses the ioctl request itself, whatever the fd.  So the test needs no terminal: on
# /dev/null the kernel answers ENOTTY (checked outside as a control), the filter EPERM before
# the kernel looks at the fd.  High bits set in the request (ignored by the kernel) must not
# slip past; TCGETS (not refused) still gives ENOTTY inside.
case_tiocsti()
{
	p=$RUN_USER
	need_sandbox "$p: TIOCSTI refused" || return
	check "control: outside the sandbox ioctl(/dev/null, TIOCSTI) is ENOTTY"
	RC=0 OUT=$("$PROBE" tiocsti /dev/null) ERR="" LOG=""
	expect_out_eq "ioctl ERR ENOTTY"
	done_check
	for bin in "$PROBE" "$PROBE_STATIC"; do
		[ -x "$bin" ] || continue
		kind=dynamic
		[ "$bin" = "$PROBE" ] || kind=static
		arun --headless -- "$bin" tiocsti /dev/null
		check "$p: $kind ioctl(TIOCSTI) inside is EPERM (seccomp)"
		expect_out_eq "ioctl ERR EPERM"
		done_check
	done
	arun --headless -- "$PROBE" tiocsti-hi /dev/null
	check "$p: ioctl(TIOCSTI | 1<<32) inside is EPERM (masked comparison)"
	expect_out_eq "ioctl ERR EPERM"
	done_check
	arun --headless -- "$PROBE" tioclinux /dev/null
	check "$p: ioctl(TIOCLINUX) inside is EPERM"
	expect_out_eq "ioctl ERR EPERM"
	done_check
	arun --headless -- "$PROBE" tcgets /dev/null
	check "$p: ioctl(TCGETS) inside is not refused (ENOTTY from the kernel)"
	expect_out_eq "ioctl ERR ENOTTY"
	done_check

	# on a real terminal: --headless on a pty, the agent keeps it as fd 0
	for what in "tcgets:ioctl OK" "tiocsti:ioctl ERR EPERM"; do
		pty_run "" -- --headless -- "$PROBE" "${what%%:*}" -
		check "$p: on a terminal (pty as fd 0): ioctl(0, ${what%%:*}) -> ${what#*:}"
		expect_rc 0
		expect_err_has "${what#*:}"
		done_check
	done
}

# The seccomp filter's groups, inside the real sandbox: refused ones EPERM, kept socket
# families working; a foreign syscall architecture (i386 int $0x80) kills the process.
case_seccomp()
{
	p=$RUN_USER
	need_sandbox "$p: seccomp groups" || return
	arun --headless -- "$PROBE" seccomp
	check "$p: seccomp: ptrace, process_vm, mount, unshare, bpf, perf, keyctl, userfaultfd, io_uring, AF_ALG/AF_PACKET/netlink-uevent sockets are EPERM; unix, inet, inet6, netlink-route sockets work"
	expect_rc 0
	for g in ptrace process_vm_readv mount unshare bpf perf_event_open keyctl userfaultfd \
		io_uring_setup socket_af_alg socket_af_packet socket_netlink_uevent; do
		expect_out_has "$g ERR EPERM"
	done
	for g in socket_unix socket_inet socket_inet6 socket_netlink_route mmap; do
		expect_out_has "$g OK"
	done
	done_check

	ctl=$("$PROBE" int80 2>/dev/null)
	if [ "$ctl" != "int80 OK" ]; then
		tap_skip "$p: seccomp: an i386 syscall (int \$0x80) kills the process" "no i386 syscall entry on this kernel outside the sandbox either ($ctl)"
		return
	fi
	arun --headless -- "$PROBE" int80
	check "$p: seccomp: an i386 syscall (int \$0x80) kills the process (SIGSYS: 159)"
	expect_rc 159
	expect_out_lacks "int80 OK"
	done_check
}

# process_spawn: false — fork, vfork fail with EPERM, clone3 with ENOSYS, threads work.
case_spawn()
{
	p=$RUN_USER
	need_sandbox "$p: process_spawn: false" || return
	pol=$(write_policy nospawn.yaml <<'EOF'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
sandbox:
  process_spawn: false
EOF
)
	for what in "fork:fork ERR EPERM" "vfork:vfork ERR EPERM" "clone3:clone3 ERR ENOSYS" "thread:thread OK"; do
		arun --headless --policy "$pol" -- "$PROBE" "${what%%:*}"
		check "$p: process_spawn: false: ${what%%:*} -> ${what#*:}"
		expect_rc 0
		expect_out_eq "${what#*:}"
		done_check
	done
	arun --headless --policy "$pol" -- sh -c 'ls >/dev/null; echo after'
	check "$p: process_spawn: false: a shell cannot start ls"
	expect_err_has "fork"
	done_check
	arun --headless --policy "$(open_policy)" -- "$PROBE" fork
	check "$p: process_spawn true (default): fork works"
	expect_out_eq "fork OK"
	done_check
}

# The policy file cannot be changed from inside, by the shim (deny rule) nor the kernel (ro bind).
case_policy_ro()
{
	p=$RUN_USER
	need_sandbox "$p: the policy file is read-only inside" || return
	mkdir -p "$W/.airlock"
	cp "$ROOT/policy/default_policy.yaml" "$W/.airlock/policy.yaml"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$W/.airlock"
	sum0=$(cksum <"$W/.airlock/policy.yaml")

	arun --headless -- sh -c 'echo "allow: []" >> .airlock/policy.yaml'
	check "$p: ./.airlock/policy.yaml is found and used, and appending to it is denied"
	expect_rc_not 0
	expect_log source=launcher event=session_start policy=.airlock/policy.yaml
	expect_log file="$W/.airlock/policy.yaml" action=write decision=deny reason~"own policy" rule~".airlock/policy.yaml:"
	[ "$(cksum <"$W/.airlock/policy.yaml")" = "$sum0" ] || _fail "the policy file changed"
	done_check

	# the same file named with an absolute --policy
	arun --headless --default-allow --policy "$W/.airlock/policy.yaml" -- sh -c 'echo "allow: []" >> .airlock/policy.yaml'
	check "$p: sh appending to ./.airlock/policy.yaml is denied by the shim's rule (even with --default-allow), file unchanged"
	expect_rc_not 0
	expect_log file="$W/.airlock/policy.yaml" action=write decision=deny reason~"own policy"
	[ "$(cksum <"$W/.airlock/policy.yaml")" = "$sum0" ] || _fail "the policy file changed"
	done_check

	if [ -z "$STATIC_SKIP" ]; then
		arun --headless --policy "$W/.airlock/policy.yaml" -- "$PROBE_STATIC" write .airlock/policy.yaml
		check "$p: a static binary writing ./.airlock/policy.yaml gets EROFS (read-only bind)"
		expect_out_eq "write ERR EROFS"
		[ "$(cksum <"$W/.airlock/policy.yaml")" = "$sum0" ] || _fail "the policy file changed"
		done_check

		arun --headless --policy "$W/.airlock/policy.yaml" -- "$PROBE_STATIC" write .airlock/new.yaml
		check "$p: a static binary cannot create files in ./.airlock (EROFS)"
		expect_out_eq "write ERR EROFS"
		expect_no_file "$W/.airlock/new.yaml"
		done_check

		arun --headless --policy "$W/.airlock/policy.yaml" -- "$PROBE_STATIC" write notes.txt
		check "$p: a static binary can write ./notes.txt next to it (allowed)"
		expect_out_eq "write OK"
		expect_content "$W/notes.txt" x
		done_check

		for f in .git/hooks/pre-commit .git/config; do
			arun --headless --policy "$(open_policy)" -- "$PROBE_STATIC" write "$f"
			check "$p: a static binary writing $f gets EROFS (mandatory protection), nothing written"
			expect_out_eq "write ERR EROFS"
			expect_no_file "$W/.git/hooks/pre-commit"
			done_check
		done

		cp "$P/open.yaml" "$W/agent-policy.yaml"
		[ -z "$AS" ] || chown "$RUN_USER" "$W/agent-policy.yaml"
		arun --headless --policy "$W/agent-policy.yaml" -- "$PROBE_STATIC" write agent-policy.yaml
		check "$p: --policy FILE inside the workspace is read-only too (EROFS)"
		expect_out_eq "write ERR EROFS"
		expect_content "$W/agent-policy.yaml" "$(cat "$P/open.yaml")"
		done_check
		rm -f "$W/agent-policy.yaml"
	else
		tap_skip "$p: a static binary writing the policy gets EROFS" "$STATIC_SKIP"
	fi
	rm -rf "${W:?}/.airlock"

	arun --headless --policy ../policies/open.yaml -- true
	check "$p: --policy with a relative path works"
	expect_rc 0
	done_check
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
		'echo x > "$(printf "asked/f\r\033[2Kairlock: pid 7 (sh) asks to write harmless")" || echo refused-f'
	check "$p: interactive: control characters in the request are shown as ?, no escape sequence reaches the prompt"
	expect_err_has "asked/f??[2Kairlock: pid 7"
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
	expect_log command=/usr/bin/curl decision=ask message~"the shim reported allow"
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

# --no-sandbox: a warning, a launcher event, and the shim still denies.
# ---- the control socket: airlock attach's protocol (launcher/approvals/control.h), ps ---------------------

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
	expect_msg '"who": "[^"]*sh -c while'
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
time.sleep(1.5)
os.system("echo s > asked/k-self || echo refused-self")
EOF
	[ -z "$AS" ] || chown "$RUN_USER" "$W/selfapprove.py"
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

case_no_sandbox()
{
	p=$RUN_USER
	arun --headless --no-sandbox -- sh -c 'cat .env; cat README.md'
	check "$p: --no-sandbox warns on stderr, logs a launcher event, and the shim still denies .env"
	expect_err_has "--no-sandbox"
	expect_secret_safe
	expect_out_has "hello from the readme"
	expect_log source=launcher event=session_start sandbox=none
	expect_log source=shim file="$W/.env" decision=deny
	done_check

	# the agent itself dies with its launcher, even without bwrap's --die-with-parent
	mark=airlock-nosandbox-mark-$$-$RUN_USER
	rm -f "$W/ready-nsb"
	arun_bg "$T/nsb.out" --headless --no-sandbox -- sh -c \
		'echo > ready-nsb; exec python3 -c "import time; time.sleep(120)" '"$mark"
	check "$p: --no-sandbox: kill -9 of airlock ends the agent within 3 s"
	RC=- OUT="" ERR=""
	if wait_file "$W/ready-nsb" 100; then
		kill -9 "$BGPID"
		wait "$BGPID" 2>/dev/null
		i=0
		while pgrep -f "$mark" >/dev/null && [ $i -lt 30 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		left=$(pgrep -af "$mark")
		[ -z "$left" ] || { _fail "still running after 3 s: $left"; pkill -9 -f "$mark"; }
	else
		_fail "the agent did not start"
		kill -9 "$BGPID"
	fi
	done_check
}

case_doctor()
{
	p=$RUN_USER
	need_sandbox "$p: airlock doctor exits 0" || return
	acmd doctor
	check "$p: airlock doctor exits 0 here"
	LOG=""
	expect_rc 0
	expect_out_has "airlock run works here"
	done_check
}

# Where the workspace and the log are: a workspace under /tmp (bound after the private /tmp),
# --workspace DIR from another directory, the default log path under the home.
case_places()
{
	p=$RUN_USER
	need_sandbox "$p: workspace places" || return
	tw=$(mktemp -d /tmp/airlock-run-ws.XXXXXX)
	[ -z "$AS" ] || chown "$RUN_USER" "$tw"
	CASE_N=$((CASE_N + 1))
	LOG=$L/case.$CASE_N.jsonl
	(cd "$tw" && $AS env -i PATH="$AGENT_PATH" HOME="$H" USER="$RUN_USER" LANG=C.UTF-8 \
		timeout -k 3 "$CASE_TIMEOUT" "$AIRLOCK" run --log "$LOG" --headless -- \
		sh -c 'echo in-tmp > made.txt; ls /tmp') >"$T/out" 2>"$T/err" </dev/null
	RC=$? OUT=$(cat "$T/out") ERR=$(cat "$T/err")
	check "$p: a workspace under /tmp is writable inside and the host sees the file"
	expect_rc 0
	expect_content "$tw/made.txt" in-tmp
	expect_out_has airlock-run-ws.
	done_check
	rm -rf "$tw"

	mkdir -p "$U/other"
	[ -z "$AS" ] || chown "$RUN_USER" "$U/other"
	CASE_N=$((CASE_N + 1))
	LOG=$L/case.$CASE_N.jsonl
	(cd "$U/other" && $AS env -i PATH="$AGENT_PATH" HOME="$H" USER="$RUN_USER" LANG=C.UTF-8 \
		timeout -k 3 "$CASE_TIMEOUT" "$AIRLOCK" run --log "$LOG" --headless --default-allow --workspace "$W" -- \
		sh -c 'echo a > "$0/from-other.txt"; echo b > here.txt; pwd' "$W") >"$T/out" 2>"$T/err" </dev/null
	RC=$? OUT=$(cat "$T/out") ERR=$(cat "$T/err")
	check "$p: --workspace DIR from another directory: DIR is writable, the launch directory is not"
	expect_content "$W/from-other.txt" a
	expect_no_file "$U/other/here.txt"
	expect_out_eq "$U/other"
	expect_log source=launcher event=session_start workspace="$W"
	done_check
	rm -f "$W/from-other.txt"

	CASE_N=$((CASE_N + 1))
	rm -rf "$H/.local"
	(cd "$W" && $AS env -i PATH="$AGENT_PATH" HOME="$H" USER="$RUN_USER" LANG=C.UTF-8 \
		timeout -k 3 "$CASE_TIMEOUT" "$AIRLOCK" run --headless -- sh -c 'cat .env; for f in "$HOME"/.local/state/airlock/logs/*.jsonl; do echo forged >> "$f"; done; true') \
		>"$T/out" 2>"$T/err" </dev/null
	RC=$? OUT=$(cat "$T/out") ERR=$(cat "$T/err")
	LOG=$(ls "$H"/.local/state/airlock/logs/*.jsonl 2>/dev/null | head -n 1)
	check "$p: without --log the log is ~/.local/state/airlock/logs/DAY.jsonl, and the agent cannot append to it"
	if [ -z "$LOG" ]; then
		_fail "no log in $H/.local/state/airlock/logs"
		LOG=/dev/null
	else
		case $LOG in */"$(date +%Y-%m-%d)".jsonl) ;; *) _fail "log named $LOG" ;; esac
		expect_log file="$W/.env" decision=deny
		expect_log source=launcher event=session_end
		expect_log_valid
		grep -q forged "$LOG" && _fail "the agent wrote into the log"
	fi
	done_check
	rm -rf "$H/.local"

	# --log inside the workspace (writable inside): the log is bound read-only over itself
	need_sandbox "$p: --log in the workspace" || return
	rm -f "$W/ws-audit.jsonl"
	(
		cd "$W" || exit 125
		# shellcheck disable=SC2086
		exec $AS env -i PATH="$AGENT_PATH" HOME="$H" USER="$RUN_USER" LANG=C.UTF-8 \
			timeout -k 3 "$CASE_TIMEOUT" "$AIRLOCK" run --headless --log ./ws-audit.jsonl -- \
			sh -c 'echo forged >> ws-audit.jsonl || echo refused-shell; cp /dev/null ws-audit.jsonl || echo refused-truncate; mv ws-audit.jsonl x.jsonl || echo refused-rename'
	) >"$T/out" 2>"$T/err" </dev/null
	RC=$? OUT=$(cat "$T/out") ERR=$(cat "$T/err") LOG=$W/ws-audit.jsonl
	check "$p: --log in the workspace: the agent can neither append to, truncate nor rename the log"
	expect_out_has refused-shell
	expect_out_has refused-truncate
	expect_out_has refused-rename
	expect_log source=launcher event=session_end
	grep -q '^forged' "$LOG" && _fail "the agent wrote into the log"
	done_check
	rm -f "$W/ws-audit.jsonl" "$W/x.jsonl"
}

# Real programs: git, python3, make, sh, started from a shell so the shim logs each exec.
case_real_programs()
{
	p=$RUN_USER
	need_sandbox "$p: real programs" || return
	arun --headless -- sh -c 'git status'
	check "$p: git status works and is logged"
	expect_rc 0
	expect_out_has "On branch main"
	expect_log source=shim command=/usr/bin/git args='["status"]' decision=allow rule~"<default>:"
	expect_no_log decision=deny
	done_check

	arun --headless -- sh -c 'echo more >> README.md && git add README.md && git commit -q -m "from the agent"'
	check "$p: git add + git commit in the workspace work and are logged"
	expect_rc 0
	subj=$(HOME="$H" git -C "$W" log -1 --format=%s 2>/dev/null)
	[ "$subj" = "from the agent" ] || _fail "last commit is \"$subj\""
	expect_log command=/usr/bin/git args~'"add"' decision=allow
	expect_log command=/usr/bin/git args~'"commit"' decision=allow
	done_check

	# the same with a policy allowing everything: only the kernel layer is in the way (the
	# read-only .git/config and .git/hooks do not stop a commit)
	arun --headless --policy "$(open_policy)" -- sh -c 'echo again >> README.md && git add README.md && git commit -q -m "open policy" && git status --short'
	check "$p: with a policy allowing everything, git add + commit + status work in the sandbox"
	expect_rc 0
	subj=$(HOME="$H" git -C "$W" log -1 --format=%s 2>/dev/null)
	[ "$subj" = "open policy" ] || _fail "last commit is \"$subj\""
	expect_log command=/usr/bin/git args~'"commit"' decision=allow
	done_check

	arun --headless -- sh -c 'python3 -c "print(open(\"README.md\").read().splitlines()[0])"'
	check "$p: python3 -c reading README.md works and is logged"
	expect_rc 0
	expect_out_eq "hello from the readme"
	expect_log command=/usr/bin/python3 decision=allow rule~"<default>:"
	done_check

	arun --headless -- sh -c make
	check "$p: make with a trivial Makefile works and is logged"
	expect_rc 0
	expect_out_has made-it
	expect_log command=/usr/bin/make decision=allow rule~"<default>:"
	expect_log command=/usr/bin/echo args='["made-it"]' decision=allow
	done_check
}

# A full log disk fails closed: when an event cannot be written whole, the agent is not started
# or is stopped, run exits 125 and says so once, and the log ends with its last whole line.
case_log_full()
{
	p=$RUN_USER
	need_sandbox "$p: a full log disk" || return
	rm -f "$W/full-started"
	arun --headless --log /dev/full -- sh -c 'echo x > full-started'
	check "$p: --log /dev/full (ENOSPC from the start): 125, the agent never ran, said once"
	LOG=/dev/null
	expect_rc 125
	expect_no_file "$W/full-started"
	expect_err_has "cannot write the audit log /dev/full: No space left on device: the agent was not started"
	n=$(printf '%s\n' "$ERR" | grep -c 'audit log')
	[ "$n" = 1 ] || _fail "$n stderr lines mention the audit log, not 1"
	done_check
	rm -f "$W/full-started"

	# mid-session: the log on a 64 KiB tmpfs in a private mount namespace; the agent's loop
	# logs an exec each round (~300 bytes a line), so the disk is full long before it ends
	mnt=$T/logfs.$p
	mkdir -p "$mnt"
	if ! $IS_ROOT; then
		tap_skip "$p: the log disk fills mid-session" "not root: cannot mount a small tmpfs"
		return
	fi
	if ! unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1"' sh "$mnt" 2>"$T/err"; then
		tap_skip "$p: the log disk fills mid-session" "unshare -m + mount tmpfs failed: $(head -c 200 "$T/err")"
		return
	fi
	pol=$(open_policy)
	for how in --headless "--headless --no-sandbox"; do
		CASE_N=$((CASE_N + 1))
		LOG=$L/case.$CASE_N.jsonl
		rm -f "$W/full-marker" "$LOG"
		# the log is copied out before the namespace (and its tmpfs) goes
		(
			cd "$W" || exit 125
			# shellcheck disable=SC2016 # expanded by the inner sh
			AS=$AS exec unshare -m sh -c '
				mount -t tmpfs -o size=64k,mode=0755 tmpfs "$1" || exit 99
				chown "$2" "$1"
				# shellcheck disable=SC2086
				$AS env -i PATH="$7" HOME="$6" USER="$2" LANG=C.UTF-8 \
					timeout -k 3 "$8" "$3" run $9 --log "$1/audit.jsonl" --policy "$5" -- \
					sh -c "i=0; while [ \$i -lt 3000 ]; do /bin/true; i=\$((i+1)); done; echo done > full-marker"
				rc=$?
				cp "$1/audit.jsonl" "$4" 2>/dev/null
				exit $rc
			' sh "$mnt" "$RUN_USER" "$AIRLOCK" "$LOG" "$pol" "$H" "$AGENT_PATH" "$CASE_TIMEOUT" "$how"
		) >"$T/out" 2>"$T/err" </dev/null
		RC=$? OUT=$(cat "$T/out") ERR=$(cat "$T/err")
		check "$p: run $how, the log disk fills mid-session: 125, the agent stopped, the log whole lines, said once"
		expect_rc 125
		expect_no_file "$W/full-marker"
		expect_err_has "cannot write the audit log $mnt/audit.jsonl: No space left on device: the agent was stopped"
		n=$(printf '%s\n' "$ERR" | grep -c 'audit log')
		[ "$n" -ge 1 ] && [ "$n" -le 2 ] || _fail "$n stderr lines mention the audit log"
		# every line whole JSON, the last one too, and enough of them that the disk did fill
		why=$("$PY" -c '
import json, sys
data = open(sys.argv[1], "rb").read()
if not data.endswith(b"\n"):
    sys.exit("the log ends in half a line: %r" % data[-80:])
lines = data.split(b"\n")[:-1]
for l in lines:
    try:
        json.loads(l)
    except ValueError:
        sys.exit("not JSON: %r" % l[:200])
if len(lines) < 100:
    sys.exit("only %d lines: the disk did not fill" % len(lines))
' "$LOG" 2>&1) || _fail "log: $why"
		expect_log source=launcher event=session_start
		done_check
		rm -f "$W/full-marker"
	done
}

# ---- run them ------------------------------------------------------------------------------

"$AIRLOCK" doctor >"$T/doctor.out" 2>&1 || echo "# airlock doctor: $(tail -n 3 "$T/doctor.out" | tr '\n' ' ')"

# ONLY_CASES="control signals" runs those cases only (names without case_).
for u in $USERS; do
	use_user "$u"
	echo "# ---- as $u ----"
	for c in secrets write_outside env exit_codes asks static tiocsti seccomp spawn policy_ro timeout signals interactive interactive_attacks forged_events control no_sandbox doctor places real_programs log_full; do
		case " ${ONLY_CASES:-$c} " in *" $c "*) "case_$c" ;; esac
	done
done
if [ -n "$NOBODY_SKIP" ]; then
	tap_skip "the main scenarios as nobody (setpriv)" "$NOBODY_SKIP"
fi

tap_plan_end
