# escapes.sh — airlock run's cases for the escape classes found from outside (issue 13), each
# tried with a dynamically linked program, a static binary and raw syscalls.  Sourced by run.sh.

# late_secret_agent: the agent's script for case_late_secrets: says it stands, waits for the
# host to plant the secrets, then reads each with cat, the dynamic probe, the static probe and
# the dynamic probe's raw syscalls.
late_secret_agent()
{
	cat <<EOF2
touch "$W/late-ready"
i=0; while [ ! -e "$W/late-go" ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i + 1)); done
for f in "$W/late/.env" "$H/.cache/late/id_rsa" "$H/.vault-token" "$W/late/notes.txt"; do
	echo "cat \$f: \$(cat "\$f" 2>&1)"
	echo "dyn \$f: \$("$PROBE" read "\$f")"
	echo "static \$f: \$("$PROBE_STATIC" read "\$f")"
	echo "raw \$f: \$("$PROBE" rawread "\$f")"
done
EOF2
}

# case_late_secrets: a secret that appears during the session (a .env the user's editor
# writes, a key a host tool drops in a tree of home's the sandbox shows) is refused to every
# process, the shim's or not: the open gate (fanotify) as root.  One at home's top level
# (~/.vault-token) is not there at all (home is an allowlist).  A plain file that appears
# meanwhile stays readable.
case_late_secrets()
{
	p=$RUN_USER
	need_sandbox "$p: secrets that appear during the session are refused" || return
	if [ -n "$STATIC_SKIP" ]; then
		tap_skip "$p: secrets that appear during the session" "$STATIC_SKIP"
		return
	fi
	for gate in on off; do
		rm -rf "$W/late" "$W/late-ready" "$W/late-go" "$H/.vault-token" "$H/.cache/late"
		mkdir -p "$H/.cache"
		[ -z "$AS" ] || chown "$RUN_USER" "$H/.cache"
		late_secret_agent >"$U/late.sh"
		chmod 644 "$U/late.sh"
		CALLER_ENV=""
		[ "$gate" = off ] && CALLER_ENV="AIRLOCK_OPEN_GATE=off"
		arun_bg "$T/late.out" --headless -- sh "$U/late.sh"
		CALLER_ENV=""
		wait_file "$W/late-ready" 100
		mkdir -p "$W/late"
		printf 'SECRET=%s\n' "$ENV_SECRET" >"$W/late/.env"
		printf '%s\n' "$API_SECRET" >"$H/.vault-token"
		mkdir -p "$H/.cache/late"
		printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n' "$SSH_SECRET" >"$H/.cache/late/id_rsa"
		printf 'plain notes\n' >"$W/late/notes.txt"
		[ -z "$AS" ] || chown -R "$RUN_USER" "$W/late" "$H/.vault-token" "$H/.cache/late"
		touch "$W/late-go"
		wait_pid_gone "$BGPID" 300
		RC=$BGRC OUT=$(cat "$T/late.out") ERR=$(cat "$T/late.out.err")
		if [ "$gate" = off ]; then
			# the control: the harm this layer exists for (so the check above can fail)
			check "$p: control: with AIRLOCK_OPEN_GATE=off a static binary reads a .env that appeared during the session [the shim alone cannot stop it]"
			expect_log event=session_start open_gate="off: AIRLOCK_OPEN_GATE=off"
			expect_out_has "static $W/late/.env: read OK"
			expect_no_log layer=fanotify
			done_check
			continue
		fi
		if [ -n "$AS" ]; then
			check "$p: not root: the session runs without the open gate and says why"
			expect_rc 0
			expect_log event=session_start open_gate~"off: fanotify permission events need CAP_SYS_ADMIN"
			done_check
			tap_skip "$p: secrets that appear during the session, refused to static binaries and raw syscalls" \
				"the open gate (fanotify permission events) needs root"
			continue
		fi
		check "$p: a .env and ~/.cache/late/id_rsa that appear during the session: cat, a dynamic, a static and a raw-syscall read all fail (~/.vault-token is not even there); a plain file that appears is read by each"
		expect_rc 0
		expect_secret_safe
		expect_log event=session_start open_gate=fanotify
		for how in cat dyn static raw; do
			expect_out_lacks "$how $W/late/.env: read OK"
			expect_out_lacks "$how $H/.vault-token: read OK"
			expect_out_lacks "$how $H/.cache/late/id_rsa: read OK"
		done
		expect_out_has "static $W/late/.env: read ERR EPERM"
		expect_out_has "raw $W/late/.env: rawread ERR EPERM"
		expect_out_has "static $H/.cache/late/id_rsa: read ERR EPERM"
		expect_out_has "static $H/.vault-token: read ERR ENOENT"
		expect_out_has "static $W/late/notes.txt: read OK n=12 data=plain notes."
		expect_out_has "raw $W/late/notes.txt: rawread OK"
		expect_out_has "cat $W/late/notes.txt: plain notes"
		done_check

		check "$p: the log names the layer that refused: the shim for the dynamic reads, fanotify (the launcher) for the static and raw ones"
		expect_log source=shim file="$W/late/.env" action=read decision=deny
		expect_log_count 2 source=launcher layer=fanotify file="$W/late/.env" action=read \
			decision=deny decided_by=policy rule~"<default>:" reason~"Environment files"
		expect_log_count 2 source=launcher layer=fanotify file="$H/.cache/late/id_rsa" \
			decision=deny reason~"SSH"
		expect_no_log layer=fanotify file="$W/late/notes.txt"
		expect_log_valid
		done_check
	done
	rm -rf "$W/late" "$W/late-ready" "$W/late-go" "$H/.vault-token" "$H/.cache/late" "$U/late.sh"
}

# case_home_allowlist: HOME is shown as the tools need it (caches, toolchains, ~/.gitconfig), the
# rest absent, whether a rule names it or not: a credential file no rule knows and the shell rc
# file people export keys from cannot be read by cat, a static binary or raw syscalls; a
# sandbox.read entry under ~ adds a path, `read: ["~"]` shows home whole.
case_home_allowlist()
{
	p=$RUN_USER
	need_sandbox "$p: home as an allowlist" || return
	if [ -n "$STATIC_SKIP" ]; then
		tap_skip "$p: home as an allowlist" "$STATIC_SKIP"
		return
	fi
	mkdir -p "$H/.config/acme" "$H/.cache/tool"
	printf 'acme_token=%s\n' "$API_SECRET" >"$H/.config/acme/token"
	printf 'export ACME_KEY=%s\n' "$API_SECRET" >"$H/.bashrc"
	printf 'cached\n' >"$H/.cache/tool/data"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$H/.config" "$H/.cache" "$H/.bashrc"
	reads='for f in "$HOME/.config/acme/token" "$HOME/.bashrc" "$HOME/.cache/tool/data"; do
		echo "cat $f: $(cat "$f" 2>&1)"
		echo "static $f: $('"$PROBE_STATIC"' read "$f")"
		echo "raw $f: $('"$PROBE"' rawread "$f")"
	done
	echo "ls: $(ls -A "$HOME" | tr "\n" " ")"
	echo "git: $(git config --global user.name)"'
	arun --headless -- sh -c "$reads"
	check "$p: a credential file no rule names (~/.config/acme/token) and ~/.bashrc are absent inside (cat, static, raw syscall); ~/.cache and ~/.gitconfig are there"
	expect_rc 0
	expect_secret_safe
	for how in cat static raw; do
		expect_out_lacks "$how $H/.config/acme/token: read OK"
		expect_out_lacks "$how $H/.bashrc: read OK"
	done
	expect_out_has "static $H/.config/acme/token: read ERR ENOENT"
	expect_out_has "raw $H/.bashrc: rawread ERR ENOENT"
	expect_out_has "static $H/.cache/tool/data: read OK n=7 data=cached."
	expect_out_has "raw $H/.cache/tool/data: rawread OK"
	expect_out_has "git: Airlock Test"
	expect_out_lacks ".bashrc "
	expect_out_lacks ".config "
	done_check

	pol=$(write_policy home-read.yaml <<'EOF2'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
sandbox:
  read: ["~/.config/acme"]
EOF2
)
	arun --headless --policy "$pol" -- sh -c "$reads"
	check "$p: sandbox.read: [~/.config/acme] adds that directory to home's allowlist (the rest stays absent, the system stays whole)"
	expect_rc 0
	expect_out_has "static $H/.config/acme/token: read OK"
	expect_out_lacks "static $H/.bashrc: read OK"
	expect_out_has "git: Airlock Test"
	done_check

	pol=$(write_policy home-whole.yaml <<'EOF2'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
sandbox:
  read: ["~"]
EOF2
)
	arun --headless --policy "$pol" -- sh -c "$reads"
	check "$p: sandbox.read: [~] shows home whole (the old view)"
	expect_rc 0
	expect_out_has "static $H/.bashrc: read OK"
	done_check
	rm -rf "$H/.config/acme" "$H/.cache/tool" "$H/.bashrc"
}

# case_gate_dies: the open gate's worker process killed mid-session (as root): the session ends
# at once (fail closed, exit 137) and the log says why; nothing the agent runs later happens.
case_gate_dies()
{
	p=$RUN_USER
	need_sandbox "$p: the open gate's worker dies" || return
	if [ -n "$AS" ]; then
		tap_skip "$p: the open gate's worker dies" "the open gate needs root"
		return
	fi
	rm -f "$W/gate-ready" "$W/gate-after"
	arun_bg "$T/gate.out" --headless -- sh -c 'touch gate-ready; sleep 3; touch gate-after; echo after'
	wait_file "$W/gate-ready" 100
	gate=$(pgrep -P "$BGPID" -x airlock-gate | head -n 1)
	[ -n "$gate" ] && kill -KILL "$gate"
	wait_pid_gone "$BGPID" 100
	RC=$BGRC OUT=$(cat "$T/gate.out") ERR=$(cat "$T/gate.out.err")
	check "$p: the open gate's worker (airlock-gate) killed: the session ends at once, 137, logged; the agent does nothing more"
	[ -n "$gate" ] || _fail "no airlock-gate process under the launcher $BGPID"
	expect_rc 137
	expect_out_lacks after
	[ -e "$W/gate-after" ] && _fail "the agent went on after the gate died"
	expect_err_has "the open gate (fanotify) failed: its worker process ended"
	expect_log source=launcher decision=deny message~"its worker process ended"
	done_check
	rm -f "$W/gate-ready" "$W/gate-after"
}
