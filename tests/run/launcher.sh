# launcher.sh — the run suite's cases on the launcher around the sandbox: --no-sandbox, airlock
# doctor, where the workspace and the log are, real programs under the shim, a full log disk.
# Sourced by tests/run/run.sh (cases no_sandbox doctor places real_programs log_full).

# --no-sandbox: a warning, a launcher event, and the shim still denies.
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

	# a tree deeper than the shim's rename walk goes (32 levels): without a kernel layer the
	# shim refuses the move it cannot check; with one, the masks hold wherever it goes
	deep=$(printf 'd/%.0s' $(seq 1 40))
	rm -rf "$W/deep" "$W/deep2"
	mkdir -p "$W/deep/$deep"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$W/deep"
	arun --headless --no-sandbox -- sh -c 'mv deep deep2; echo mv=$?'
	check "$p: --no-sandbox: mv of a tree past the rename walk's bounds is refused (the shim cannot check it)"
	expect_out_re "^mv=[1-9]"
	expect_dir "$W/deep"
	done_check
	arun --headless -- sh -c 'mv deep deep2; echo mv=$?'
	check "$p: with the kernel layer, the same mv runs (the masks hold wherever the tree goes)"
	expect_out_has "mv=0"
	expect_dir "$W/deep2"
	done_check
	rm -rf "$W/deep" "$W/deep2"

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
	expect_log source=shim command=/usr/bin/git args='["status"]' decision=allow decided_by=policy
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
	expect_log command=/usr/bin/python3 decision=allow decided_by=policy
	done_check

	arun --headless -- sh -c make
	check "$p: make with a trivial Makefile works and is logged"
	expect_rc 0
	expect_out_has made-it
	expect_log command=/usr/bin/make decision=allow decided_by=policy
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
