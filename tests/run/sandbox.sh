# sandbox.sh — the run suite's cases on what the sandbox stops: secret reads, writes outside the
# workspace, the caller's environment, a static binary, TIOCSTI, the seccomp filter's groups,
# process_spawn: false, the read-only policy file, setuid / setgid modes.  Sourced by
# tests/run/run.sh (cases secrets write_outside env static tiocsti seccomp spawn policy_ro setid).

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
	expect_log source=shim command=/usr/bin/cat args='["README.md"]' decision=allow decided_by=policy
	expect_log source=launcher event=session_start program=/usr/bin/sh
	expect_no_log file="$W/README.md"
	done_check

	arun --headless --trace -- sh -c 'cat README.md'
	check "$p: --trace also logs the allowed read of README.md"
	expect_out_eq "hello from the readme"
	expect_log file="$W/README.md" action=read decision=allow
	done_check
}

# Writes outside the workspace: refused by the shim (the default policy's write default: deny) and by
# the kernel.
case_write_outside()
{
	p=$RUN_USER
	need_sandbox "$p: writes outside the workspace are refused" || return
	rm -f "$H/x" "$H/y"
	arun --headless -- sh -c 'echo x > "$HOME/x"; echo x > /etc/airlock-run-test-x; echo x > inside.txt'
	check "$p: echo > \$HOME/x and > /etc/x are refused (the default denies writes outside), logged; ./inside.txt is written"
	expect_no_file "$H/x"
	expect_no_file /etc/airlock-run-test-x
	expect_content "$W/inside.txt" x
	expect_log file="$H/x" action=write decision=deny decided_by=policy
	expect_log file=/etc/airlock-run-test-x action=write decision=deny
	done_check

	# a policy that asks about writes outside, answered yes by --default-allow: the kernel holds
	awpol=$(write_policy ask-writes.yaml <<'EOF'
version: 1
default: {exec: allow, read: allow, write: ask, connect: deny}
allow:
  - file: { path: ./**, action: write }
  - file: { path: /dev/null, action: write }
EOF
)
	arun --headless --default-allow --policy "$awpol" -- sh -c 'echo y > "$HOME/y"; echo y > /etc/airlock-run-test-y; mkdir "$HOME/d"; true'
	check "$p: with --default-allow the shim lets the writes through, the read-only root stops them"
	expect_no_file "$H/y"
	expect_no_file /etc/airlock-run-test-y
	expect_no_file "$H/d"
	expect_log file="$H/y" action=write decision=allow decided_by=default
	# no rule decided: the line says the policy's default for write did
	expect_log file="$H/y" action=write reason="no rule matches: the policy's default for write decided"
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

		# runs-later paths are session copies (tests/run/copies.sh has the rest)
		gsum0=$(cksum <"$W/.git/config")
		for f in .git/hooks/pre-commit .git/config; do
			arun --headless --policy "$(open_policy)" -- "$PROBE_STATIC" write "$f"
			check "$p: a static binary writing $f writes the session's copy: nothing on the host, kept aside"
			expect_out_eq "write OK"
			expect_no_file "$W/.git/hooks/pre-commit"
			[ "$(cksum <"$W/.git/config")" = "$gsum0" ] || _fail "the host's .git/config changed"
			expect_log source=launcher event=kept_aside file="$W/$f"
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

# setid_modes: no file made or changed inside gets S_ISUID / S_ISGID (it would outlive the
# session on the host: a setuid-root shell in the workspace).  Refused with EPERM in chmod,
# fchmod, fchmodat, fchmodat2, open/openat O_CREAT and O_TMPFILE, creat, mknod; openat2 ENOSYS;
# mkdir's setid bits the kernel drops itself.  Plain modes still work.
case_setid()
{
	p=$RUN_USER
	need_sandbox "$p: setuid / setgid modes are refused" || return
	d=$W/setid
	rm -rf "$T/setid-ctl" "$d"
	mkdir "$T/setid-ctl"
	"$PROBE" setid "$T/setid-ctl" >"$T/setid-ctl.out"
	check "control: outside the sandbox the probe's chmod 04755 and open(O_CREAT, 04755) make setuid files"
	RC=0 OUT=$(cat "$T/setid-ctl.out") ERR="" LOG=""
	expect_out_has "chmod_4755 OK"
	expect_out_has "open_creat_4755 OK"
	[ -u "$T/setid-ctl/chmod" ] || _fail "chmod 04755 outside left no setuid bit"
	done_check
	rm -rf "$T/setid-ctl"

	mkdir "$d"
	: >"$d/cu"
	: >"$d/py"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$d"
	arun --headless --policy "$(open_policy)" -- sh -c '
		chmod u+s setid/cu; echo "u+s=$?"
		chmod g+s setid/cu; echo "g+s=$?"
		chmod 4755 setid/cu; echo "4755=$?"
		python3 -c "
import os
for m in (0o4755, 0o2755):
    try:
        os.chmod(\"setid/py\", m); print(\"py %o OK\" % m)
    except OSError as e:
        print(\"py %o errno %d\" % (m, e.errno))
"
		chmod +x setid/cu; echo "+x=$?"
		chmod 0750 setid/py; echo "0750=$?"'
	check "$p: chmod u+s / g+s / 4755 (coreutils) and python os.chmod(0o4755 / 0o2755) fail with EPERM; chmod +x and 0750 work"
	expect_rc 0
	for l in "u+s=1" "g+s=1" "4755=1" "py 4755 errno 1" "py 2755 errno 1" "+x=0" "0750=0"; do
		expect_out_has "$l"
	done
	expect_err_has "Operation not permitted"
	[ -n "$(find "$d" -perm /6000)" ] && _fail "setid bits on the host: $(find "$d" -perm /6000)"
	[ -x "$d/cu" ] || _fail "chmod +x did not reach the host"
	[ "$(stat -c %a "$d/py")" = 750 ] || _fail "chmod 0750 did not reach the host: $(stat -c %a "$d/py")"
	done_check

	for bin in "$PROBE" "$PROBE_STATIC"; do
		kind=dynamic
		if [ "$bin" = "$PROBE_STATIC" ]; then
			kind=static
			if [ -n "$STATIC_SKIP" ]; then
				tap_skip "$p: a static binary's setid modes are refused" "$STATIC_SKIP"
				continue
			fi
		fi
		rm -rf "${d:?}/$kind"
		mkdir "$d/$kind"
		[ -z "$AS" ] || chown "$RUN_USER" "$d/$kind"
		arun --headless --policy "$(open_policy)" -- "$bin" setid "setid/$kind"
		check "$p: $kind probe: chmod, fchmod, raw fchmodat / fchmodat2, open / openat O_CREAT and O_TMPFILE, creat, mknodat with setid modes are EPERM, openat2 ENOSYS; nothing setid on the host; plain modes work"
		expect_rc 0
		for g in chmod_4755 chmod_2755 fchmod_4755 fchmodat_4755 fchmodat2_6755 open_creat_4755 \
			openat_creat_2755 openat_tmpfile_4755 creat_4755 mknodat_4755; do
			expect_out_has "$g ERR EPERM"
		done
		expect_out_has "openat2_4755 ERR ENOSYS"
		for g in mkdir_2755 mkdirat_4755 chmod_0755 open_creat_0644 open_nocreat_junkmode mkdir_0755; do
			expect_out_has "$g OK"
		done
		[ -n "$(find "$d/$kind" -perm /6000)" ] && _fail "setid bits on the host: $(find "$d/$kind" -perm /6000)"
		for f in open openat creat mknodat openat2; do
			[ -e "$d/$kind/$f" ] && _fail "$f was created on the host"
		done
		[ "$(stat -c %a "$d/$kind/plain")" = 755 ] || _fail "chmod 0755 did not reach the host"
		done_check
	done
	rm -rf "$d"
}
