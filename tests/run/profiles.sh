# profiles.sh — the run suite's cases on agent profiles (launcher/profiles/profile.h): a known
# agent is recognised by its name or what a symlink to it resolves to, or named by --profile or
# the policy's profile: key; its state directory is created and writable (dynamic program,
# static binary, raw syscall), its runs-later settings do not reach the host, its API host is
# allowed, and its key reaches it but not the programs it runs.  sandbox.write paths that do
# not exist are created, or refused with a message.  Sourced by tests/run/run.sh (case
# profiles).

# The fake agents: shell scripts named as the real CLIs are (sh runs them: the agent's own
# process is sh with the script as argv[1]).  Each prints what it sees of its key, then what
# the programs it runs see, and writes its state three ways.
profiles_agents()
{
	mkdir -p "$T/agents/@openai/codex/bin"
	cat >"$T/agents/claude" <<'EOF'
#!/bin/sh
echo "agent=${ANTHROPIC_API_KEY:-}"
sh -c 'echo "sh=${ANTHROPIC_API_KEY:-}"'
/usr/bin/python3 -c 'import os; print("py=" + os.environ.get("ANTHROPIC_API_KEY", ""))'
# the agent's own environment, read by a program it runs
sh -c 'tr "\0" "\n" </proc/$PPID/environ 2>/dev/null | grep -c "^ANTHROPIC_API_KEY=." || true' | sed 's/^/parent-environ=/'
# its state, three ways
mkdir -p ~/.claude/session-env && echo dyn >~/.claude/session-env/dynamic && echo state-dynamic-ok
[ -z "${PROBE_STATIC:-}" ] || "$PROBE_STATIC" write ~/.claude/session-env/static
/usr/bin/python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
p = os.path.expanduser("~/.claude/session-env/raw").encode()
fd = libc.syscall(257, -100, p, os.O_WRONLY | os.O_CREAT, 0o644)
print("raw OK" if fd >= 0 else "raw ERR " + os.strerror(ctypes.get_errno()))'
# a hook planted in its settings: runs later, outside
echo '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo PLANTED_HOOK"}]}]}}' >~/.claude/settings.json && echo planted
# a hook script a settings hook may point at, and a skill: code later sessions run
mkdir -p ~/.claude/hooks ~/.claude/skills/x && echo 'echo PLANTED_SCRIPT' >~/.claude/hooks/stop.sh &&
	echo 'PLANTED_SKILL' >~/.claude/skills/x/SKILL.md && echo planted-scripts
# ~/.claude.json by raw syscall (the shim's refusal is no boundary): a trust a later session
# would not ask again is reset, the rest (Claude Code's own state) applied
/usr/bin/python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
p = os.path.expanduser("~/.claude.json").encode()
fd = libc.syscall(257, -100, p, os.O_WRONLY | os.O_TRUNC, 0)
b = b"{\"numStartups\": 5, \"projects\": {\"/any/dir\": {\"hasTrustDialogAccepted\": true}}}"
print("trust-written" if fd >= 0 and libc.write(fd, b, len(b)) == len(b) else "trust ERR " + os.strerror(ctypes.get_errno()))'
# the plugins' own state (plugins/store/): written every session, applied as state
mkdir -p ~/.claude/plugins/store && echo '{"k":"v"}' >~/.claude/plugins/store/p.json && echo plugin-state-ok
EOF
	printf '#!/bin/sh\necho "codex-agent=${OPENAI_API_KEY:-}"\n' >"$T/agents/@openai/codex/bin/codex.js"
	chmod 755 "$T/agents" "$T/agents/claude" "$T/agents/@openai" "$T/agents/@openai/codex" \
		"$T/agents/@openai/codex/bin" "$T/agents/@openai/codex/bin/codex.js"
	ln -sf "$T/agents/claude" "$T/bin/my-assistant"
	ln -sf "$T/agents/@openai/codex/bin/codex.js" "$T/bin/cx"
}

# session_profile: the profile field of $LOG's session_start.
session_profile()
{
	"$PY" "$LOGQ" "$LOG" find event=session_start 2>/dev/null | "$PY" -c 'import json, sys
for l in sys.stdin:
    print(json.loads(l).get("profile", "(none)"))'
}

profiles_detect()
{
	arun --headless -- "$T/agents/claude"
	check "$RUN_USER: profiles: claude recognised by its name, logged in session_start"
	expect_rc 0
	[ "$(session_profile)" = claude ] || _fail "session_start's profile is '$(session_profile)', not claude"
	done_check

	arun --headless -- "$T/bin/my-assistant"
	check "$RUN_USER: profiles: a symlink to claude (another name) is recognised by what it resolves to"
	[ "$(session_profile)" = claude ] || _fail "session_start's profile is '$(session_profile)', not claude"
	done_check

	CALLER_ENV="OPENAI_API_KEY=canary-openai" arun --headless -- "$T/bin/cx"
	check "$RUN_USER: profiles: codex.js through a symlink is codex; its key reaches it"
	expect_rc 0
	[ "$(session_profile)" = codex ] || _fail "session_start's profile is '$(session_profile)', not codex"
	expect_out_has "codex-agent=canary-openai"
	done_check

	arun --headless -- sh -c 'echo plain'
	check "$RUN_USER: profiles: another program gets none"
	[ "$(session_profile)" = none ] || _fail "session_start's profile is '$(session_profile)', not none"
	done_check
}

profiles_state()
{
	rm -rf "${H:?}/.claude" "$H/.claude.json"
	CALLER_ENV="ANTHROPIC_API_KEY=canary-anthropic" \
		arun --headless --env "PROBE_STATIC=${PROBE_STATIC_FOR_AGENT:-}" -- "$T/agents/claude"
	check "$RUN_USER: profiles: ~/.claude created (0700) and writable by a dynamic program, a static one and a raw syscall"
	expect_rc 0
	expect_dir "$H/.claude"
	mode=$(stat -c %a "$H/.claude" 2>/dev/null)
	[ "$mode" = 700 ] || _fail "~/.claude has mode $mode, not 700"
	expect_out_has state-dynamic-ok
	expect_file "$H/.claude/session-env/dynamic"
	if [ -n "${PROBE_STATIC_FOR_AGENT:-}" ]; then
		expect_out_has "write OK"
		expect_file "$H/.claude/session-env/static"
	fi
	expect_out_has "raw OK"
	expect_file "$H/.claude/session-env/raw"
	done_check

	check "$RUN_USER: profiles: a hook planted in ~/.claude/settings.json does not reach the host"
	expect_out_has planted
	if grep -q PLANTED_HOOK "$H/.claude/settings.json" 2>/dev/null; then
		_fail "the planted hook is in $H/.claude/settings.json"
	fi
	done_check

	check "$RUN_USER: profiles: ~/.claude.json's state is applied, a folder's trust is not"
	expect_out_has trust-written
	grep -q '"numStartups": *5' "$H/.claude.json" 2>/dev/null || _fail "numStartups not applied: $(cat "$H/.claude.json" 2>&1)"
	if grep -q hasTrustDialogAccepted "$H/.claude.json" 2>/dev/null; then
		_fail "the trust reached $H/.claude.json"
	fi
	done_check

	check "$RUN_USER: profiles: hook scripts and skills made in ~/.claude are kept aside; plugins/store is state"
	expect_out_has planted-scripts
	expect_no_file "$H/.claude/hooks/stop.sh"
	expect_no_file "$H/.claude/skills/x/SKILL.md"
	expect_log event=kept_aside file="$H/.claude/hooks/stop.sh"
	expect_out_has plugin-state-ok
	expect_file "$H/.claude/plugins/store/p.json"
	done_check

	check "$RUN_USER: profiles: the key reaches the agent, not sh, python or /proc/PPID/environ"
	expect_out_has "agent=canary-anthropic"
	expect_out_has "sh="
	expect_out_lacks "sh=canary"
	expect_out_has "py="
	expect_out_lacks "py=canary"
	expect_out_lacks "parent-environ=1"
	# the shim's refusal, beside the kernel's (Codex's static binary stays dumpable)
	expect_log source=shim file~/environ action=read decision=deny
	done_check

	rm -rf "${H:?}/.claude"
	CALLER_ENV="ANTHROPIC_API_KEY=canary-anthropic" arun --headless --profile none -- "$T/agents/claude"
	check "$RUN_USER: profiles: --profile none: no profile, no key, no state directory"
	[ "$(session_profile)" = none ] || _fail "session_start's profile is '$(session_profile)', not none"
	expect_out_lacks "canary"
	expect_no_file "$H/.claude/session-env/dynamic"
	done_check
}

# profiles_keys: the agent's key and sign-in token stay its own, whatever the programs it runs do:
# a static program it starts gets no key (the exec hooks leave it out), a program started with
# the agent's script as argv[1] is not the agent, another process's environ stays refused with
# AIRLOCK_AGENT_KEYS dropped, and ~/.claude/.credentials.json is read by the agent only.
profiles_keys()
{
	mkdir -p "$T/agents/keys"
	cat >"$T/agents/keys/claude" <<'EOF'
#!/bin/sh
read -r cred <~/.claude/.credentials.json && echo "agent-cred=$cred"
cat ~/.claude/.credentials.json 2>/dev/null | sed 's/^/cat-cred=/'
cat ~/.codex/auth.json 2>/dev/null | sed 's/^/cat-codex=/'
[ -z "${PROBE_STATIC:-}" ] || "$PROBE_STATIC" getenv ANTHROPIC_API_KEY
cat "$0" /proc/self/environ | tr '\0' '\n' | grep -c '^ANTHROPIC_API_KEY=.' | sed 's/^/cat-argv1=/'
sleep 5 &
env -u AIRLOCK_AGENT_KEYS /usr/bin/python3 -c '
import sys
try:
    open("/proc/%s/environ" % sys.argv[1], "rb").read(); print("sibling-environ=read")
except OSError as e:
    print("sibling-environ=refused", e)' $!
kill $! 2>/dev/null
exit 0
EOF
	chmod 755 "$T/agents/keys" "$T/agents/keys/claude"
	mkdir -p "$H/.claude" && echo CRED-TOKEN-7 >"$H/.claude/.credentials.json"
	mkdir -p "$H/.codex" && echo CODEX-TOKEN-8 >"$H/.codex/auth.json"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$H/.claude" "$H/.codex"
	CALLER_ENV="ANTHROPIC_API_KEY=canary-anthropic" \
		arun --headless --env "PROBE_STATIC=${PROBE_STATIC_FOR_AGENT:-}" -- "$T/agents/keys/claude"
	check "$RUN_USER: profiles: ~/.claude/.credentials.json read by the agent, refused to cat (logged, naming the profile)"
	expect_rc 0
	expect_out_has "agent-cred=CRED-TOKEN-7"
	expect_out_lacks "cat-cred="
	expect_log source=shim file="$H/.claude/.credentials.json" action=read decision=deny \
		reason~"profile claude"
	done_check

	check "$RUN_USER: profiles: another known agent's sign-in (~/.codex/auth.json) is refused too"
	expect_out_lacks "cat-codex="
	expect_log source=shim file="$H/.codex/auth.json" action=read decision=deny
	done_check

	if [ -n "${PROBE_STATIC_FOR_AGENT:-}" ]; then
		check "$RUN_USER: profiles: a static program the agent starts gets no key"
		expect_out_has "getenv ANTHROPIC_API_KEY="
		expect_out_lacks "getenv ANTHROPIC_API_KEY=canary"
		done_check
	fi

	check "$RUN_USER: profiles: cat AGENT-SCRIPT /proc/self/environ is not the agent: no key"
	expect_out_has "cat-argv1=0"
	done_check

	check "$RUN_USER: profiles: env -u AIRLOCK_AGENT_KEYS: another process's environ still refused"
	expect_out_has "sibling-environ=refused"
	expect_out_lacks "sibling-environ=read"
	done_check
	rm -f "$H/.claude/.credentials.json" "$H/.codex/auth.json"
}

profiles_policy()
{
	pol=$(printf 'version: 1\nprofile: clod\n' | write_policy bad-profile.yaml)
	arun --headless --policy "$pol" -- sh -c true
	check "$RUN_USER: profiles: an unknown profile: in the policy is file:line:column, exit 2"
	expect_rc 2
	expect_err_has "$pol:2:10: unknown profile 'clod'"
	done_check

	pol=$(printf 'version: 1\nprofile: [claude]\n' | write_policy list-profile.yaml)
	arun --headless --policy "$pol" -- sh -c true
	check "$RUN_USER: profiles: a profile: that is not a word is refused at its position"
	expect_rc 2
	expect_err_has "$pol:2:10:"
	done_check

	arun --headless --profile nope -- sh -c true
	check "$RUN_USER: profiles: --profile nope is refused, naming the profiles there are"
	expect_rc 2
	expect_err_has "unknown profile 'nope'"
	expect_err_has "claude, codex, gemini, aider"
	done_check

	pol=$(printf 'version: 1\nprofile: codex\n' | write_policy codex-profile.yaml)
	CALLER_ENV="OPENAI_API_KEY=canary-openai" arun --headless --policy "$pol" -- sh -c 'echo "k=${OPENAI_API_KEY:-}"'
	check "$RUN_USER: profiles: profile: codex in the policy applies to any program"
	[ "$(session_profile)" = codex ] || _fail "session_start's profile is '$(session_profile)', not codex"
	expect_dir "$H/.codex"
	done_check
}

profiles_check()
{
	pol=$(printf 'version: 1\ndefault: {connect: ask}\n' | write_policy ask-connect.yaml)
	acmd check --policy "$pol" --profile claude connect api.anthropic.com:443
	check "$RUN_USER: profiles: check: the profile's API host is allowed, the rule names the profile"
	expect_rc 0
	expect_out_has "reason: profile claude:"
	expect_out_has "profile: claude (Claude Code, chosen by --profile)"
	done_check

	acmd check --policy "$pol" --profile none connect api.anthropic.com:443
	check "$RUN_USER: profiles: check --profile none: the host asks as the policy says"
	expect_rc 3
	done_check

	pol=$(printf 'version: 1\ndeny:\n  - network: {destination: "api.anthropic.com:443"}\n' | write_policy deny-api.yaml)
	acmd check --policy "$pol" --profile claude connect api.anthropic.com:443
	check "$RUN_USER: profiles: the policy's deny beats the profile's allow"
	expect_rc 4
	done_check

	acmd check exec "$T/bin/my-assistant"
	check "$RUN_USER: profiles: check exec detects the profile from the program"
	expect_out_has "profile: claude (Claude Code, detected from the program)"
	done_check
}

profiles_write_paths()
{
	rm -rf "${H:?}/.newstate"
	pol=$(printf 'version: 1\ndefault: {write: allow}\nsandbox:\n  write: ["./", "~/.newstate/deep"]\n' | write_policy newstate.yaml)
	arun --headless --policy "$pol" --profile none -- sh -c 'echo x >~/.newstate/deep/f && echo wrote'
	check "$RUN_USER: profiles: a missing sandbox.write directory under home is created (0700), not dropped"
	expect_rc 0
	expect_out_has wrote
	expect_file "$H/.newstate/deep/f"
	mode=$(stat -c %a "$H/.newstate" 2>/dev/null)
	[ "$mode" = 700 ] || _fail "~/.newstate has mode $mode, not 700"
	done_check

	pol=$(printf 'version: 1\nsandbox:\n  write: ["./", "/var/lib/airlock-test-missing/x"]\n' | write_policy missing.yaml)
	arun --headless --policy "$pol" --profile none -- sh -c 'echo ran'
	check "$RUN_USER: profiles: a missing sandbox.write path outside home and workspace: exit 125, said"
	expect_rc 125
	expect_out_lacks ran
	expect_err_has "sandbox.write: '/var/lib/airlock-test-missing/x'"
	expect_no_file /var/lib/airlock-test-missing
	done_check
}

# What the agents run later besides their settings: Claude Code's daemon.json and jobs/, a
# script at the top of ~/.claude a setting names (changed: its launch version put back; new:
# removed), Codex's managed_config.toml, hooks.json, hooks/, AGENTS.md, prompts/.  State that is
# not a script (a new stats file at the top of ~/.claude) stays.
profiles_runs_later()
{
	mkdir -p "$T/agents2"
	printf '#!/bin/sh\nexec sh -c "$*"\n' >"$T/agents2/claude"
	cp "$T/agents2/claude" "$T/agents2/codex"
	chmod 755 "$T/agents2" "$T/agents2/claude" "$T/agents2/codex"
	rm -rf "${H:?}/.claude" "$H/.codex"
	mkdir -p "$H/.claude"
	printf '#!/bin/sh\necho status\n' >"$H/.claude/statusline.sh"
	chmod 755 "$H/.claude/statusline.sh"
	echo "{}" >"$H/.claude/history.jsonl"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$H/.claude"
	arun --headless -- "$T/agents2/claude" 'echo "echo RL_PLANTED" >>~/.claude/statusline.sh &&
		printf "#!/bin/sh\necho RL_PLANTED\n" >~/.claude/run-me && echo RL_PLANTED >~/.claude/helper.py &&
		echo "{\"workers\":[\"RL_PLANTED\"]}" >~/.claude/daemon.json &&
		mkdir -p ~/.claude/jobs && echo RL_PLANTED >~/.claude/jobs/j.json &&
		echo "{\"n\":1}" >~/.claude/stats-cache.json && echo "{}" >>~/.claude/history.jsonl && echo planted'
	check "$RUN_USER: profiles: claude's daemon.json, jobs/ and scripts at the top of ~/.claude are kept aside; its state stays"
	expect_rc 0
	expect_out_has planted
	expect_kept "$H/.claude/daemon.json" RL_PLANTED
	expect_kept "$H/.claude/jobs/j.json" RL_PLANTED
	expect_kept "$H/.claude/statusline.sh" RL_PLANTED
	expect_kept "$H/.claude/run-me" RL_PLANTED
	expect_kept "$H/.claude/helper.py" RL_PLANTED
	grep -q "echo status" "$H/.claude/statusline.sh" 2>/dev/null || _fail "statusline.sh's launch version was not put back"
	expect_no_file "$H/.claude/run-me"
	expect_file "$H/.claude/stats-cache.json"
	[ "$(wc -l <"$H/.claude/history.jsonl")" = 2 ] || _fail "history.jsonl did not keep the session's line"
	expect_no_log event=kept_aside file="$H/.claude/stats-cache.json"
	done_check

	arun --headless -- "$T/agents2/codex" 'printf "notify = [\"RL_PLANTED\"]\n" >~/.codex/managed_config.toml &&
		mkdir -p ~/.codex/hooks ~/.codex/prompts && echo RL_PLANTED >~/.codex/hooks.json &&
		echo RL_PLANTED >~/.codex/hooks/h.json && echo RL_PLANTED >~/.codex/AGENTS.md &&
		echo RL_PLANTED >~/.codex/prompts/review.md && echo planted'
	check "$RUN_USER: profiles: codex's managed_config.toml, hooks.json, hooks/, AGENTS.md, prompts/ are kept aside"
	expect_rc 0
	expect_out_has planted
	for f in managed_config.toml hooks.json hooks/h.json AGENTS.md prompts/review.md; do
		expect_kept "$H/.codex/$f" RL_PLANTED
	done
	done_check
}

case_profiles()
{
	need_sandbox "$RUN_USER: agent profiles" || return
	profiles_agents
	PROBE_STATIC_FOR_AGENT=""
	if [ -z "$STATIC_SKIP" ]; then
		PROBE_STATIC_FOR_AGENT=$PROBE_STATIC
	else
		tap_skip "$RUN_USER: profiles: ~/.claude written by a static binary" "$STATIC_SKIP"
	fi
	profiles_detect
	profiles_state
	profiles_keys
	profiles_policy
	profiles_check
	profiles_write_paths
	profiles_runs_later
	CALLER_ENV=""
}
