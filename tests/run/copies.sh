# copies.sh — the run suite's cases on session copies (launcher/sandbox/copies.h): what would run
# later outside the sandbox (.git/hooks, dangerous .git/config keys, .claude/, .mcp.json, .codex/,
# .vscode/, .envrc) never reaches the host, planted by a dynamically linked program, a static
# binary or a raw syscall(), whether the path existed at launch or not; legitimate git work
# (git init, git config user.email, git branch --set-upstream-to, commits, checkout -b) reaches it;
# a host file changed meanwhile is kept aside; a launcher killed with SIGKILL leaves nothing
# planted.  Sourced by tests/run/run.sh (case copies).

# copies_ws NAME: a fresh copy of the user's workspace ($W) at $U/NAME, owned by the user; W
# points at it until copies_ws_end.
copies_ws()
{
	CW_SAVED=$W
	rm -rf "${U:?}/$1"
	cp -a "$W" "$U/$1"
	W=$U/$1
	[ -z "$AS" ] || chown -R "$RUN_USER" "$W"
}

copies_ws_end() { W=$CW_SAVED; }

# hostgit ARGS...: git on the host, as the user would run it afterwards.
hostgit() { HOME="$H" git -C "$W" "$@" 2>/dev/null; }

# kept_of FILE: where $LOG says FILE was kept aside (empty when it was not).
kept_of()
{
	"$PY" "$LOGQ" "$LOG" find event=kept_aside file="$1" 2>/dev/null |
		"$PY" -c 'import json, sys
for l in sys.stdin:
    print(json.loads(l).get("kept", ""))'
}

# expect_kept FILE TEXT: FILE is not on the host with TEXT, a kept_aside event names it, and the
# kept copy holds TEXT.
expect_kept()
{
	if [ -e "$1" ] && grep -q "$2" "$1" 2>/dev/null; then
		_fail "$1 reached the host with \"$2\""
	fi
	k=$(kept_of "$1")
	if [ -z "$k" ]; then
		_fail "no kept_aside event with file=$1 (and a kept path)"
	elif ! grep -q "$2" "$k" 2>/dev/null; then
		_fail "the kept copy $k lacks \"$2\""
	fi
}

# The planted paths, relative to the workspace; none but .git/ exists at launch.
COPIES_PLANTED=".git/hooks/pre-commit .claude/settings.json .mcp.json .codex/config.toml .vscode/tasks.json .envrc"

# The raw syscall() writer: openat(2) + write(2) through libc's syscall(), past every libc
# wrapper the shim hooks.
COPIES_RAW='import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for path in sys.argv[2:]:
    fd = libc.syscall(257, -100, path.encode(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o755)
    if fd < 0:
        print("raw ERR", path, os.strerror(ctypes.get_errno()))
        continue
    data = sys.argv[1].encode()
    libc.syscall(1, fd, data, len(data))
    libc.syscall(3, fd)
    print("raw OK", path)'

# copies_plant HOW: plants every runs-later path with HOW (dynamic, static, raw), each with a
# marker, then checks after the session that none reached the host and each was kept aside.
copies_plant()
{
	how=$1 mark=PLANTED_$1 p=$RUN_USER
	copies_ws "cw-$how"
	rm -rf "$W/.claude" "$W/.codex" "$W/.vscode" "$W/.mcp.json" "$W/.envrc"
	sum0=$(cksum <"$W/.git/config")
	case $how in
	dynamic)
		script="mkdir -p .claude .codex .vscode
			for f in $COPIES_PLANTED; do echo '$mark' >\"\$f\"; done
			chmod +x .git/hooks/pre-commit
			git config core.fsmonitor 'touch fsmon-$mark' && git config alias.st '!echo $mark' &&
			git config core.hooksPath /tmp/$mark && echo planted" ;;
	static)
		# "x" appended to .git/config too: no longer a config git reads, kept aside whole
		script="for f in $COPIES_PLANTED .git/config; do $PROBE_STATIC write \"\$f\"; done; echo planted" ;;
	raw)
		script="$PY $T/bin/rawwrite.py '$mark' $COPIES_PLANTED &&
			$PY $T/bin/rawwrite.py '
[alias]
	st = !echo $mark
' .git/config && echo planted" ;;
	esac
	arun --headless --policy "$(open_policy)" -- sh -c "$script"
	check "$p: runs-later paths planted by a $how program stay in the session's copies; each kept aside with an event"
	expect_rc 0
	expect_out_has planted
	case $how in
	static)
		# the static probe writes "x": .claude/ and the others did not exist at launch
		for f in $COPIES_PLANTED; do
			k=$(kept_of "$W/$f")
			[ -n "$k" ] || _fail "no kept_aside event for $W/$f"
			[ ! -s "$W/$f" ] || _fail "$W/$f reached the host: $(head -c 80 "$W/$f")"
		done
		k=$(kept_of "$W/.git/config")
		[ -n "$k" ] || _fail "no kept_aside event for $W/.git/config" ;;
	*)
		for f in $COPIES_PLANTED; do
			expect_kept "$W/$f" "$mark"
		done
		expect_kept "$W/.git/config" "$mark" ;;
	esac
	[ "$(cksum <"$W/.git/config")" = "$sum0" ] || _fail "the host's .git/config changed: $(cat "$W/.git/config")"
	for d in .claude .codex .vscode; do
		[ ! -e "$W/$d" ] || _fail "$W/$d is on the host (a placeholder left, or planted content)"
	done
	for f in .mcp.json .envrc; do
		[ ! -e "$W/$f" ] || _fail "$W/$f is on the host"
	done
	expect_log source=launcher event=kept_aside file="$W/.git/hooks/pre-commit" kept~/kept/
	expect_err_has "kept aside"
	expect_log_valid
	done_check
	copies_ws_end
}

# Legitimate git work in an existing repository reaches the host.
copies_git_work()
{
	p=$RUN_USER
	copies_ws cw-git
	rm -rf "$W/.envrc" "$W/.mcp.json" "$W/.claude" # placeholders an earlier SIGKILL may have left
	arun --headless --policy "$(open_policy)" -- sh -c 'git config user.email agent@airlock.invalid &&
		git checkout -q -b feature && echo change >>README.md && git commit -q -am "agent commit" &&
		git branch -q --set-upstream-to=main feature && echo "/scratch/" >>.git/info/exclude &&
		git status --porcelain && git status --short --branch | head -1'
	check "$p: git config user.email, checkout -b, commit, --set-upstream-to, info/exclude work inside and reach the host; no placeholder in git status"
	expect_rc 0
	expect_out_has "feature...main"
	expect_out_lacks ".mcp.json"
	expect_out_lacks ".envrc"
	grep -qx "/scratch/" "$W/.git/info/exclude" || _fail "info/exclude did not reach the host"
	grep -q "airlock" "$W/.git/info/exclude" && _fail "the placeholders' exclude lines reached the host"
	[ "$(hostgit config user.email)" = agent@airlock.invalid ] || _fail "host user.email: $(hostgit config user.email)"
	[ "$(hostgit symbolic-ref --short HEAD)" = feature ] || _fail "host HEAD: $(hostgit symbolic-ref HEAD)"
	[ "$(hostgit log -1 --format=%s)" = "agent commit" ] || _fail "host's last commit: $(hostgit log -1 --format=%s)"
	[ "$(hostgit config branch.feature.merge)" = refs/heads/main ] || _fail "host branch.feature.merge: $(hostgit config branch.feature.merge)"
	[ -z "$(hostgit status --porcelain --untracked-files=no)" ] || _fail "host status not clean: $(hostgit status --porcelain)"
	expect_log event=copy_applied file="$W/.git/config" message~user.email
	expect_no_log event=kept_aside
	expect_err_lacks "kept aside"
	done_check
	copies_ws_end
}

# git init where there was no repository: the new repository appears on the host, its hooks
# planted inside do not.
copies_git_init()
{
	p=$RUN_USER
	copies_ws cw-init
	rm -rf "$W/.git"
	arun --headless --policy "$(open_policy)" -- sh -c 'git init -q && git add README.md Makefile &&
		git commit -q -m "fresh start" && echo evil-hook >.git/hooks/post-checkout &&
		git config core.sshCommand "sh -c evil" && echo inited'
	check "$p: git init + commit in a workspace without .git: the repository is on the host, the hook and core.sshCommand are not"
	expect_rc 0
	expect_out_has inited
	[ "$(hostgit log -1 --format=%s)" = "fresh start" ] || _fail "host's last commit: $(hostgit log -1 --format=%s)"
	[ -z "$(hostgit config core.sshCommand)" ] || _fail "core.sshCommand reached the host"
	expect_kept "$W/.git/hooks/post-checkout" evil-hook
	expect_log event=kept_aside file="$W/.git/config" message~core.sshcommand
	done_check
	copies_ws_end
}

# A file changed on the host during the session: the session's version is kept aside, not merged.
copies_host_changed()
{
	p=$RUN_USER
	copies_ws cw-race
	rm -f "$W/ready" "$W/go"
	arun_bg "$T/race.out" --headless --policy "$(open_policy)" -- sh -c 'git config user.email inside@airlock.invalid &&
		echo "ref: refs/heads/inside" >.git/HEAD && touch ready; i=0
		while [ ! -e go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done'
	wait_file "$W/ready" 200
	hostgit config user.email host@airlock.invalid
	printf 'ref: refs/heads/hostside\n' >"$W/.git/HEAD"
	touch "$W/go"
	wait_pid_gone "$BGPID" 300
	ERR=$(cat "$T/race.out.err")
	check "$p: .git/config and HEAD changed on the host during the session: the session's are kept aside, the host's stay"
	[ "$BGRC" = 0 ] || _fail "airlock run exited $BGRC"
	[ "$(hostgit config user.email)" = host@airlock.invalid ] || _fail "host user.email: $(hostgit config user.email)"
	grep -q hostside "$W/.git/HEAD" || _fail "host HEAD: $(cat "$W/.git/HEAD")"
	expect_kept "$W/.git/HEAD" inside
	expect_log event=kept_aside file="$W/.git/config" message~"changed on the host meanwhile"
	expect_err_has "meanwhile"
	done_check
	copies_ws_end
}

# The launcher killed with SIGKILL mid-session: nothing planted is on the host.
copies_sigkill()
{
	p=$RUN_USER
	copies_ws cw-kill
	rm -f "$W/ready"
	rm -rf "$W/.claude" "$W/.mcp.json"
	sum0=$(cksum <"$W/.git/config")
	arun_bg "$T/kill.out" --headless --policy "$(open_policy)" -- sh -c 'mkdir -p .claude &&
		echo KILLED_PLANT >.claude/settings.json && echo KILLED_PLANT >.mcp.json &&
		echo KILLED_PLANT >.git/hooks/pre-push && git config core.pager KILLED_PLANT && touch ready && sleep 30'
	wait_file "$W/ready" 200
	kill -9 "$BGPID"
	wait_pid_gone "$BGPID" 100
	sleep 0.3
	check "$p: airlock run killed with SIGKILL mid-session leaves nothing planted on the host (only empty placeholders)"
	[ ! -e "$W/.git/hooks/pre-push" ] || _fail ".git/hooks/pre-push is on the host"
	[ "$(cksum <"$W/.git/config")" = "$sum0" ] || _fail "the host's .git/config changed"
	[ ! -s "$W/.mcp.json" ] || _fail ".mcp.json has content on the host"
	[ ! -e "$W/.claude/settings.json" ] || _fail ".claude/settings.json is on the host"
	if grep -rqs KILLED_PLANT "$W"; then
		_fail "planted content on the host: $(grep -rls KILLED_PLANT "$W" | head -3)"
	fi
	done_check

	arun --headless --policy "$(open_policy)" -- true
	check "$p: the next session removes the empty placeholders the killed one left"
	expect_rc 0
	for f in .claude .mcp.json .envrc .codex; do
		[ ! -e "$W/$f" ] || _fail "$W/$f is still there"
	done
	done_check
	copies_ws_end
}

# --no-sandbox: no copies; the shim refuses writes to runs-later paths, by rules the launcher adds.
copies_no_sandbox()
{
	p=$RUN_USER
	copies_ws cw-nosb
	rm -f "$W/.envrc"
	sum0=$(cksum <"$W/.git/config")
	arun --no-sandbox --headless --policy "$(open_policy)" -- sh -c 'echo NOSB >.git/hooks/pre-commit;
		git config core.pager NOSB; echo NOSB >.envrc; echo NOSB >notes.txt; echo done'
	check "$p: --no-sandbox: writes to .git/hooks, .git/config and .envrc are refused by the shim (launcher rules), logged; others work"
	expect_out_has done
	[ ! -e "$W/.git/hooks/pre-commit" ] || _fail ".git/hooks/pre-commit was written"
	[ ! -e "$W/.envrc" ] || _fail ".envrc was written"
	[ "$(cksum <"$W/.git/config")" = "$sum0" ] || _fail "the host's .git/config changed"
	expect_content "$W/notes.txt" NOSB
	expect_log source=shim file="$W/.git/hooks/pre-commit" action=write decision=deny reason~"--no-sandbox"
	expect_log source=shim file="$W/.envrc" action=write decision=deny
	done_check
	copies_ws_end
}

# scandir(3) through ctypes: the program's own call, so the shim's scandir hook sees it.
COPIES_SCANDIR='import ctypes
libc = ctypes.CDLL(None)
libc.scandir.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p)), ctypes.c_void_p, ctypes.c_void_p]
lst = ctypes.POINTER(ctypes.c_void_p)()
n = libc.scandir(b".", ctypes.byref(lst), None, None)
names = sorted(ctypes.string_at(lst[i] + 19).decode() for i in range(n))
print(" ".join(x for x in names if x not in (".", "..")))'

# The placeholders (.claude, .codex, .vscode, .mcp.json, .envrc... missing at launch) are not
# listed inside while empty: ls, find, os.listdir, scandir and git status --ignored list what the
# workspace held at launch; a placeholder written to (.claude/settings.json) shows.
copies_listing()
{
	p=$RUN_USER
	copies_ws cw-list
	rm -rf "$W/.claude" "$W/.codex" "$W/.vscode" "$W/.gemini" "$W/.idea" "$W/.cursor" \
		"$W/.devcontainer" "$W/.mcp.json" "$W/.envrc"
	# shellcheck disable=SC2012 # ls -A is what is compared
	want=$(cd "$W" && ls -A | tr '\n' ' ')
	wantgit=$(hostgit status --porcelain --ignored | tr '\n' ' ')
	printf '%s\n' "$COPIES_SCANDIR" >"$T/bin/scandir.py"
	chmod 644 "$T/bin/scandir.py"
	arun --headless --policy "$(open_policy)" -- sh -c "echo \"ls=\$(ls -A | tr '\\n' ' ')\"
		echo \"ll=\$(ls -la | sed -n 's/.* //p' | tr '\\n' ' ')\"
		echo \"find=\$(find . -maxdepth 1 | sort | tr '\\n' ' ')\"
		echo \"py=\$($PY -c 'import os; print(\" \".join(sorted(os.listdir(\".\"))))')\"
		echo \"scandir=\$($PY $T/bin/scandir.py)\"
		echo \"git=\$(git status --porcelain --ignored | tr '\\n' ' ')\"
		mkdir -p .claude && echo '{}' >.claude/settings.json
		echo \"after=\$(ls -A | tr '\\n' ' ')\""
	check "$p: the empty placeholders are not listed inside (ls -A, ls -la, find, os.listdir, scandir, git status --ignored); .claude shows once written"
	expect_rc 0
	for n in .claude .codex .vscode .gemini .idea .cursor .devcontainer .mcp.json .envrc; do
		line=$(printf '%s\n' "$OUT" | grep -v '^after=' | grep -F -- "$n" | head -1)
		[ -z "$line" ] || _fail "$n listed inside: $line"
	done
	got=$(printf '%s\n' "$OUT" | sed -n 's/^ls=//p')
	[ "$got" = "$want" ] || _fail "ls -A inside: '$got', at launch on the host: '$want'"
	got=$(printf '%s\n' "$OUT" | sed -n 's/^git=//p')
	[ "$got" = "$wantgit" ] || _fail "git status --porcelain --ignored inside: '$got', on the host: '$wantgit'"
	got=$(printf '%s\n' "$OUT" | sed -n 's/^py=//p')
	[ -n "$got" ] || _fail "os.listdir listed nothing: $OUT"
	got=$(printf '%s\n' "$OUT" | sed -n 's/^scandir=//p')
	[ -n "$got" ] || _fail "scandir listed nothing: $OUT"
	got=$(printf '%s\n' "$OUT" | sed -n 's/^after=//p')
	case " $got " in *" .claude "*) ;; *) _fail "after writing .claude/settings.json, ls -A: $got" ;; esac
	case " $got " in *" .codex "*) _fail "after writing .claude/settings.json, .codex shows: $got" ;; esac
	expect_kept "$W/.claude/settings.json" "{}"
	done_check
	copies_ws_end
}

# git config core.hooksPath /dev/null (hooks off, as Claude Code runs it) reaches the host;
# another value (/tmp/x) in the same session is kept aside.
copies_hooks_off()
{
	p=$RUN_USER
	copies_ws cw-hoff
	arun --headless --policy "$(open_policy)" -- sh -c 'git config core.hooksPath /dev/null && echo off'
	check "$p: git config core.hooksPath /dev/null (hooks off) is applied to the host, with a copy_applied event"
	expect_rc 0
	expect_out_has off
	[ "$(hostgit config core.hooksPath)" = /dev/null ] || _fail "host core.hooksPath: '$(hostgit config core.hooksPath)'"
	expect_log event=copy_applied file="$W/.git/config" message~core.hookspath
	expect_no_log event=kept_aside file="$W/.git/config"
	done_check

	arun --headless --policy "$(open_policy)" -- sh -c 'git config core.hooksPath /dev/null/../../tmp/hooks && echo on'
	check "$p: git config core.hooksPath set to anything but /dev/null is kept aside"
	expect_rc 0
	[ "$(hostgit config core.hooksPath)" = /dev/null ] || _fail "host core.hooksPath: '$(hostgit config core.hooksPath)'"
	expect_log event=kept_aside file="$W/.git/config" message~core.hookspath
	done_check
	copies_ws_end
}

# branch.NAME.remote / pushRemote naming a URL (the user's next plain `git push` would go there)
# are kept aside; naming a remote the launch config has, or ".", they are applied like
# branch.NAME.merge.  The same in a nested repository's config.
copies_branch_remote()
{
	p=$RUN_USER
	copies_ws cw-brem
	rm -rf "$W/vendor"
	hostgit remote add origin "$U/cw-brem-origin.git"
	git init -q "$W/vendor/repo"
	git -C "$W/vendor/repo" remote add up "$U/cw-brem-origin.git"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$W"
	arun --headless --policy "$(open_policy)" -- sh -c 'git config branch.main.pushRemote /tmp/attacker.git &&
		git config branch.main.remote https://attacker.invalid/x.git &&
		git config branch.feature.remote origin && git config branch.feature.merge refs/heads/main &&
		git config branch.feature.pushRemote . &&
		git -C vendor/repo config branch.main.pushRemote /tmp/attacker.git &&
		git -C vendor/repo config branch.dev.remote up && echo set'
	check "$p: branch.*.remote/pushRemote set to a URL are kept aside (host and nested config); set to a launch remote or '.', applied"
	expect_rc 0
	expect_out_has set
	[ -z "$(hostgit config branch.main.pushRemote)" ] || _fail "branch.main.pushRemote reached the host: $(hostgit config branch.main.pushRemote)"
	[ -z "$(hostgit config branch.main.remote)" ] || _fail "branch.main.remote reached the host: $(hostgit config branch.main.remote)"
	[ "$(hostgit config branch.feature.remote)" = origin ] || _fail "host branch.feature.remote: '$(hostgit config branch.feature.remote)'"
	[ "$(hostgit config branch.feature.merge)" = refs/heads/main ] || _fail "host branch.feature.merge: '$(hostgit config branch.feature.merge)'"
	[ "$(hostgit config branch.feature.pushRemote)" = . ] || _fail "host branch.feature.pushRemote: '$(hostgit config branch.feature.pushRemote)'"
	expect_log event=kept_aside file="$W/.git/config" message~branch.main.pushremote
	expect_log event=kept_aside file="$W/.git/config" message~branch.main.remote
	nc=$W/vendor/repo/.git/config
	[ -z "$(git config --file "$nc" branch.main.pushRemote)" ] || _fail "branch.main.pushRemote reached vendor/repo/.git/config"
	[ "$(git config --file "$nc" branch.dev.remote)" = up ] || _fail "vendor/repo branch.dev.remote: '$(git config --file "$nc" branch.dev.remote)'"
	expect_log event=kept_aside file="$nc" message~branch.main.pushremote
	done_check
	copies_ws_end
}

# .git/HEAD and .git/config deleted (or HEAD made unreadable) inside: never applied, the host's
# repository still works; each said with a kept_aside event.
copies_git_vital()
{
	p=$RUN_USER
	copies_ws cw-vital
	arun --headless --policy "$(open_policy)" -- sh -c 'rm -f .git/HEAD .git/config && echo gone'
	check "$p: .git/HEAD and .git/config deleted in the session stay on the host (kept_aside events); git log works there"
	expect_rc 0
	expect_out_has gone
	[ -f "$W/.git/HEAD" ] || _fail "the host's .git/HEAD was deleted"
	[ -f "$W/.git/config" ] || _fail "the host's .git/config was deleted"
	hostgit log -1 --format=%s >/dev/null || _fail "git log fails on the host"
	expect_log event=kept_aside file="$W/.git/HEAD" message~deleted
	expect_log event=kept_aside file="$W/.git/config" message~deleted
	done_check

	head0=$(cat "$W/.git/HEAD")
	arun --headless --policy "$(open_policy)" -- sh -c 'echo garbage >.git/HEAD && echo broke'
	check "$p: .git/HEAD written with something git cannot read is kept aside, the host's stays"
	expect_rc 0
	[ "$(cat "$W/.git/HEAD")" = "$head0" ] || _fail "host .git/HEAD: $(cat "$W/.git/HEAD")"
	expect_kept "$W/.git/HEAD" garbage
	done_check
	copies_ws_end
}

# A file name with ESC, CR and a newline planted under .claude/: the end-of-session message
# shows it escaped (\x1b, \r, \n), never the raw bytes that would drive the user's terminal.
copies_term_escapes()
{
	p=$RUN_USER
	copies_ws cw-esc
	rm -rf "$W/.claude"
	arun --headless --policy "$(open_policy)" -- "$PY" -c 'import os
os.makedirs(".claude", exist_ok=True)
open(".claude/x\x1b[2K\rairlock: nothing kept aside\n\x1b[8m", "w").write("hook")
print("planted")'
	check "$p: control characters in a kept file's name are escaped in the end-of-session message"
	expect_rc 0
	expect_out_has planted
	expect_err_has "kept aside"
	expect_err_has 'x\x1b[2K\rairlock: nothing kept aside\n\x1b[8m'
	printf '%s' "$ERR" | LC_ALL=C grep -q "$(printf '\033')" && _fail "an ESC byte reached stderr"
	printf '%s' "$ERR" | LC_ALL=C grep -q "$(printf '\r')" && _fail "a CR byte reached stderr"
	printf '%s\n' "$ERR" | grep -qx "airlock: nothing kept aside" && _fail "a forged line reached stderr"
	done_check
	copies_ws_end
}

# Hooks in the work tree (core.hooksPath githooks, set before the session), husky's .husky/,
# tool configs that run code on ordinary use (.npmrc, .cargo/config.toml, .yarnrc.yml, mise.toml,
# .nvim.lua), other agents' configs (.amazonq/, .kiro/, .aider.conf.yml) and a VS Code
# NAME.code-workspace: each kept aside with an event, the hook's launch version stays.
COPIES_TOOLS=".husky/pre-commit .npmrc .cargo/config.toml .yarnrc.yml mise.toml .nvim.lua .amazonq/mcp.json .kiro/settings/mcp.json .aider.conf.yml p.code-workspace"
copies_tool_configs()
{
	p=$RUN_USER
	copies_ws cw-tools
	rm -rf "$W/githooks" "$W/.husky" "$W/.cargo" "$W/.amazonq" "$W/.kiro"
	mkdir "$W/githooks"
	printf '#!/bin/sh\necho user hook\n' >"$W/githooks/pre-commit"
	chmod +x "$W/githooks/pre-commit"
	hook0=$(cksum <"$W/githooks/pre-commit")
	hostgit config core.hooksPath githooks
	[ -z "$AS" ] || chown -R "$RUN_USER" "$W"
	# shellcheck disable=SC2016 # "$f" is the inner sh's
	arun --headless --policy "$(open_policy)" -- sh -c 'echo "echo TOOLS_PLANTED" >>githooks/pre-commit &&
		echo TOOLS_PLANTED >githooks/post-checkout &&
		mkdir -p .husky .cargo .amazonq .kiro/settings &&
		for f in '"$COPIES_TOOLS"'; do echo TOOLS_PLANTED >"$f"; done && echo planted'
	check "$p: hooks in core.hooksPath's work-tree directory, .husky, tool configs (.npmrc, .cargo/...), other agents' configs and *.code-workspace are kept aside with events"
	expect_rc 0
	expect_out_has planted
	[ "$(cksum <"$W/githooks/pre-commit")" = "$hook0" ] || _fail "githooks/pre-commit on the host changed: $(cat "$W/githooks/pre-commit")"
	expect_kept "$W/githooks/pre-commit" TOOLS_PLANTED
	expect_kept "$W/githooks/post-checkout" TOOLS_PLANTED
	for f in $COPIES_TOOLS; do
		expect_kept "$W/$f" TOOLS_PLANTED
	done
	for f in .npmrc .yarnrc.yml mise.toml .nvim.lua .aider.conf.yml .husky .cargo .amazonq .kiro; do
		[ ! -e "$W/$f" ] || _fail "$W/$f is on the host (a placeholder left, or planted content)"
	done
	done_check
	copies_ws_end
}

# The runs-later files below the top level the nested cases plant.
NESTED_PLANTED="sub/.git/hooks/pre-commit vendor/repo/.git/hooks/post-checkout sub/.claude/settings.json sub/.mcp.json sub/.vscode/tasks.json sub/.envrc"

# copies_nested HOW: a nested repository made inside (git init sub) and one there at launch
# (vendor/repo, with a hook of its own), runs-later files planted below the top level by HOW
# (dynamic, static, raw): after the session each is off the host and kept aside with an event;
# the pre-existing hook, unchanged, stays; vendor/repo's config gets its safe key, not core.fsmonitor.
copies_nested()
{
	how=$1 mark=NESTED_$1 p=$RUN_USER
	copies_ws "cn-$how"
	rm -rf "$W/sub" "$W/vendor"
	git init -q "$W/vendor/repo"
	printf '#!/bin/sh\necho user hook\n' >"$W/vendor/repo/.git/hooks/pre-push"
	chmod +x "$W/vendor/repo/.git/hooks/pre-push"
	hook0=$(cksum <"$W/vendor/repo/.git/hooks/pre-push")
	[ -z "$AS" ] || chown -R "$RUN_USER" "$W"
	mk="git init -q sub && mkdir -p sub/.claude sub/.vscode"
	case $how in
	dynamic)
		script="$mk && for f in $NESTED_PLANTED; do echo '$mark' >\"\$f\"; done &&
			git -C vendor/repo config core.fsmonitor 'touch fsmon-$mark' &&
			git -C vendor/repo config user.email nested@airlock.invalid &&
			git init -q sub3 && rm -rf sub3/.git/hooks && mkdir -p evilhooks &&
			echo '$mark' >evilhooks/pre-commit && ln -s ../../evilhooks sub3/.git/hooks && echo planted" ;;
	static)
		script="$mk && for f in $NESTED_PLANTED vendor/repo/.git/config; do $PROBE_STATIC write \"\$f\"; done &&
			echo planted" ;;
	raw)
		script="$mk && $PY $T/bin/rawwrite.py '$mark' $NESTED_PLANTED && $PY $T/bin/rawwrite.py '
[core]
	fsmonitor = touch fsmon-$mark
' vendor/repo/.git/config && echo planted" ;;
	esac
	arun --headless --policy "$(open_policy)" -- sh -c "$script"
	check "$p: runs-later files below the top level (a nested repository's hook, sub/.claude, sub/.mcp.json...) planted by a $how program are moved aside after the session, each with an event; an unchanged nested hook stays"
	expect_rc 0
	expect_out_has planted
	for f in $NESTED_PLANTED; do
		[ ! -e "$W/$f" ] || _fail "$W/$f is on the host: $(head -c 80 "$W/$f")"
		k=$(kept_of "$W/$f")
		if [ -z "$k" ]; then
			_fail "no kept_aside event for $W/$f"
		elif [ "$how" != static ] && ! grep -q "$mark" "$k"; then
			_fail "the kept copy $k lacks $mark"
		fi
	done
	[ "$(cksum <"$W/vendor/repo/.git/hooks/pre-push")" = "$hook0" ] || _fail "the pre-existing nested hook changed or went"
	expect_no_log event=kept_aside file="$W/vendor/repo/.git/hooks/pre-push"
	[ -z "$(git config --file "$W/vendor/repo/.git/config" core.fsmonitor)" ] || _fail "core.fsmonitor reached vendor/repo/.git/config"
	git config --file "$W/vendor/repo/.git/config" --list >/dev/null 2>&1 || _fail "vendor/repo/.git/config is not git config: $(cat "$W/vendor/repo/.git/config")"
	[ -n "$(kept_of "$W/vendor/repo/.git/config")" ] || _fail "no kept_aside event for vendor/repo/.git/config"
	if [ "$how" = dynamic ]; then
		[ "$(git config --file "$W/vendor/repo/.git/config" user.email)" = nested@airlock.invalid ] ||
			_fail "the safe key user.email did not reach vendor/repo/.git/config"
	fi
	if [ "$how" = dynamic ]; then
		[ ! -L "$W/sub3/.git/hooks" ] || _fail "sub3/.git/hooks, a symlink to a directory of hooks, is on the host"
		[ -n "$(kept_of "$W/sub3/.git/hooks")" ] || _fail "no kept_aside event for sub3/.git/hooks (a symlink)"
	fi
	[ -n "$(git config --file "$W/sub/.git/config" core.repositoryformatversion)" ] || _fail "sub/.git/config (git init inside) did not stay"
	expect_log_valid
	done_check
	copies_ws_end
}

# The launcher killed with SIGKILL: a nested hook planted stays until the next launch, which moves
# it aside (the killed session's records in its store) and logs it.
copies_nested_sigkill()
{
	p=$RUN_USER
	copies_ws cn-kill
	rm -rf "$W/sub" "$W/vendor"
	git init -q "$W/vendor/repo"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$W"
	rm -f "$W/ready"
	arun_bg "$T/nkill.out" --headless --policy "$(open_policy)" -- sh -c 'echo KILLED_NESTED >vendor/repo/.git/hooks/pre-commit &&
		touch ready && sleep 30'
	wait_file "$W/ready" 200
	kill -9 "$BGPID"
	wait_pid_gone "$BGPID" 100
	sleep 0.3
	arun --headless --policy "$(open_policy)" -- true
	check "$p: a nested hook planted by a session whose launcher was killed is moved aside at the next launch, logged there"
	expect_rc 0
	[ ! -e "$W/vendor/repo/.git/hooks/pre-commit" ] || _fail "vendor/repo/.git/hooks/pre-commit is on the host"
	expect_kept "$W/vendor/repo/.git/hooks/pre-commit" KILLED_NESTED
	expect_log event=kept_aside file="$W/vendor/repo/.git/hooks/pre-commit" message~killed
	done_check
	copies_ws_end
}

case_copies()
{
	need_sandbox "$RUN_USER: session copies" || return
	if ! command -v git >/dev/null 2>&1; then
		tap_skip "$RUN_USER: session copies" "git is not installed"
		return
	fi
	printf '%s\n' "$COPIES_RAW" >"$T/bin/rawwrite.py"
	chmod 644 "$T/bin/rawwrite.py"
	copies_plant dynamic
	if [ -z "$STATIC_SKIP" ]; then
		copies_plant static
	else
		tap_skip "$RUN_USER: runs-later paths planted by a static binary" "$STATIC_SKIP"
	fi
	copies_plant raw
	copies_git_work
	copies_git_init
	copies_host_changed
	copies_sigkill
	copies_no_sandbox
	copies_listing
	copies_hooks_off
	copies_branch_remote
	copies_git_vital
	copies_term_escapes
	copies_tool_configs
	copies_nested dynamic
	if [ -z "$STATIC_SKIP" ]; then
		copies_nested static
	else
		tap_skip "$RUN_USER: runs-later files below the top level planted by a static binary" "$STATIC_SKIP"
	fi
	copies_nested raw
	copies_nested_sigkill
}
