#!/bin/sh
# demo.sh — runs the example agent (examples/agent.py) under `airlock run --headless` with the
# default policy, in a scratch git project with a scratch home, then shows what was allowed,
# denied and asked, from the agent's side and from the audit log.
# Usage: scripts/demo.sh BUILD/airlock
# Exit status: 0 when the run went as expected (the tests ran and the commit landed; the secret
# reads, the deletions outside the workspace, the push and curl's unknown host were refused; pip
# ran, contained), 1 otherwise.
# shellcheck disable=SC2016,SC2317 # single-quoted $(PYTHON) and `…` are make's and Markdown's; helpers run through check "$@"
set -eu

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 BUILD/airlock" >&2
	exit 2
fi
AIRLOCK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
AIRLOCK_ARG=$1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT="$ROOT/examples/agent.py"

# The interpreter itself, not a wrapper: a pyenv or asdf shim is a shell script that runs helper
# programs the default policy does not know, so it would be asked about (and headless, refused).
if ! PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || [ -z "$PY" ]; then
	echo "demo: python3 is needed (apt-get install python3)" >&2
	exit 1
fi

# Scratch space under /var/tmp rather than /tmp: inside the sandbox /tmp is a private tmpfs, so a
# scratch home under /tmp would be invisible to the agent.  Under /var/tmp the agent sees the fake
# home (less its masked ~/.ssh) and the "outside" directory read-only, as it would see yours.
base=${AIRLOCK_DEMO_DIR:-/var/tmp}
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
TMP=$(mktemp -d "$base/airlock-demo.XXXXXX")
if [ -n "${AIRLOCK_DEMO_KEEP:-}" ]; then
	trap 'echo "demo: scratch files kept in $TMP"' EXIT
else
	trap 'rm -rf "$TMP"' EXIT
fi
TMP=$(cd "$TMP" && pwd -P)
WS="$TMP/project"
# The agent runs from the scratch space: a checkout under /tmp would be out of the sandbox's sight.
cp "$ROOT/examples/agent.py" "$TMP/agent.py"
AGENT="$TMP/agent.py"

# A scratch home, so the demo decides the same on every machine and touches nothing of yours.
export HOME="$TMP/home"
unset XDG_CONFIG_HOME XDG_STATE_HOME GIT_DIR GIT_WORK_TREE
export GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
mkdir -p "$HOME/.ssh" "$TMP/outside" "$WS/src" "$WS/tests"
chmod 700 "$HOME/.ssh"
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key, made by airlock demo\n-----END OPENSSH PRIVATE KEY-----\n' \
	>"$HOME/.ssh/id_rsa"
chmod 600 "$HOME/.ssh/id_rsa"
printf '[user]\n\tname = airlock demo\n\temail = demo@example.invalid\n[init]\n\tdefaultBranch = main\n' \
	>"$HOME/.gitconfig"
echo "precious: the agent must not be able to delete this" >"$TMP/outside/keep.txt"

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
	RED=$(printf '\033[31m') GREEN=$(printf '\033[32m') YELLOW=$(printf '\033[33m')
	BOLD=$(printf '\033[1m') RESET=$(printf '\033[0m')
else
	RED="" GREEN="" YELLOW="" BOLD="" RESET=""
fi

make_project() {
	cd "$WS"
	cat >src/calc.py <<-'EOF'
		"""A tiny calculator: the project the example agent works on."""


		def add(a, b):
		    return a + b


		def mul(a, b):
		    raise NotImplementedError  # TODO
	EOF
	: >src/__init__.py
	: >tests/__init__.py
	cat >tests/test_calc.py <<-'EOF'
		import unittest

		from src.calc import add, mul


		class TestCalc(unittest.TestCase):
		    def test_add(self):
		        self.assertEqual(add(2, 3), 5)

		    def test_mul(self):
		        self.assertEqual(mul(4, 5), 20)


		if __name__ == "__main__":
		    unittest.main()
	EOF
	printf 'PYTHON ?= python3\n\ntest:\n\t$(PYTHON) -m unittest discover -s tests -t .\n\n.PHONY: test\n' >Makefile
	printf '# calc\n\nA tiny calculator. `make test` runs the tests.\n' >README.md
	echo "API_KEY=sk-demo-not-a-real-secret" >.env
	printf '.env\n__pycache__/\n' >.gitignore
	git init -q .
}

commit_project() {
	git add -A
	git commit -q -m "initial commit, with the airlock policy"
	git init -q --bare "$TMP/remote.git"
	git remote add origin "$TMP/remote.git"
	git push -q origin main 2>/dev/null
}

say() { printf '%s\n' "$*"; }
step() { printf '\n%s== %s ==%s\n' "$BOLD" "$*" "$RESET"; }

say "${BOLD}airlock demo${RESET}: a scratch project in $WS, a scratch HOME in $HOME"
make_project

if [ -n "${AIRLOCK_DEMO_POLICY:-}" ]; then
	# To try the demo with a policy of your own (the checks below still expect the default's outcomes).
	step "a policy of your own: $AIRLOCK_DEMO_POLICY (AIRLOCK_DEMO_POLICY), not the default"
	mkdir -p .airlock
	cp "$AIRLOCK_DEMO_POLICY" .airlock/policy.yaml
	"$AIRLOCK" check --policy .airlock/policy.yaml
else
	step "airlock init"
	"$AIRLOCK" init
fi
commit_project
INITIAL=$(git -C "$WS" rev-parse HEAD)
cp "$WS/src/calc.py" "$TMP/calc.py.before"

step "airlock run --headless -- $PY examples/agent.py"
say "(headless: every action the policy asks about is refused; the agent keeps the terminal)"
say ""
rc=0
"$AIRLOCK" run --headless --workspace "$WS" --log "$TMP/audit.jsonl" -- \
	"$PY" "$AGENT" --rm-target "$TMP/outside" --remote origin >"$TMP/agent.out" 2>"$TMP/agent.err" || rc=$?
cat "$TMP/agent.out"
if [ -s "$TMP/agent.err" ]; then
	say ""
	say "(stderr:)"
	sed 's/^/  /' "$TMP/agent.err"
fi
say ""
say "airlock run exited with status $rc"

step "the audit log, summarised ($TMP/audit.jsonl)"
# Per decision counts, then each refused or asked action once, with its rule and reason.  An event
# whose decided_by is not "policy" went to the approval queue (asked): headless answered it.
python3 - "$TMP/audit.jsonl" "$WS" "$HOME" "$GREEN" "$YELLOW" "$RED" "$BOLD" "$RESET" <<-'EOF'
	import json, os, sys
	log, ws, home, green, yellow, red, bold, reset = sys.argv[1:]
	events = []
	with open(log) as f:
	    for line in f:
	        if line.strip():
	            events.append(json.loads(line))

	def short(p):
	    if p.startswith(ws + "/"):
	        return "./" + p[len(ws) + 1:]
	    if p.startswith(home + "/"):
	        return "~/" + p[len(home) + 1:]
	    return p

	def what(e):
	    if "command" in e:
	        args = " ".join(short(a) for a in e.get("args", []))
	        return f"exec {os.path.basename(e['command'])} {args}".strip()
	    if "file" in e:
	        return f"{e.get('action', 'open')} {short(e['file'])}"
	    if "network_dst" in e:
	        return f"connect {e['network_dst']}"
	    return e.get("message", "?")

	actions = [e for e in events if e.get("source") != "launcher"]
	asked = [e for e in actions if e.get("decided_by", "policy") != "policy"]
	count = lambda d: sum(1 for e in actions if e.get("decision") == d)
	print(f"{len(actions)} actions decided: {green}{count('allow')} allowed{reset}, "
	      f"{red}{count('deny')} denied{reset} "
	      f"(of which {yellow}{len(asked)} asked{reset} and refused by --headless)")
	for e in events:  # the launcher's own: the session's start and end are fields
	    if e.get("event") == "session_start":
	        print(f"  launcher: session started: {e.get('program')}; policy {short(e.get('policy', '?'))}; "
	              f"{e.get('sandbox')} sandbox, network {e.get('network', 'of the host')}, "
	              f"{e.get('masked', 0)} path(s) masked, seccomp refuses {len(e.get('seccomp', []))} groups")
	    elif e.get("event") == "session_end":
	        print(f"  launcher: session ended: exit status {e.get('exit_status')}; {e.get('allowed')} allowed, "
	              f"{e.get('denied')} denied, {e.get('asked')} asked; {e.get('connections')} connection(s), "
	              f"{e.get('refused')} refused")
	    elif e.get("source") == "launcher":  # e.g. a session copy applied back or kept aside
	        f = e.get("file")
	        print(f"  launcher: {short(f) + ': ' if f else ''}{e.get('message', '')}")
	print()
	rows, seen = [], {}
	for e in actions:
	    if e.get("decision") == "allow":
	        continue
	    kind = "asked" if e.get("decided_by", "policy") != "policy" else "denied"
	    key = (kind, what(e), e.get("rule", "default"))
	    if key in seen:
	        seen[key][3] += 1  # the same refusal again, e.g. /usr/bin/git then /bin/git along PATH
	        continue
	    seen[key] = [kind, what(e), os.path.basename(e.get("rule", "default")), 1,
	                 e.get("reason", "")]
	    rows.append(seen[key])
	print(f"{bold}{'OUTCOME':<7}  {'ACTION':<44}  {'RULE':<15}  REASON{reset}")
	for kind, act, rule, n, reason in rows:
	    colour = yellow if kind == "asked" else red
	    times = f" (x{n})" if n > 1 else ""
	    print(f"{colour}{kind:<7}{reset}  {(act + times)[:44]:<44}  {rule:<15}  {reason}")
	EOF

step "allowed actions (airlock log --decision allow --source shim)"
"$AIRLOCK" log "$TMP/audit.jsonl" --decision allow --source shim | sed "s|$WS/.airlock/||g" | cut -c 1-150

step "airlock suggest: the log, turned into a policy ($TMP/suggested.yaml)"
"$AIRLOCK" suggest "$TMP/audit.jsonl" --workspace "$WS" --output "$TMP/suggested.yaml" 2>&1 | sed 's/^/  /'
grep -v -e '^ *#' -e '^$' "$TMP/suggested.yaml" | sed -n '/^deny:/,$p' | head -n 24 | sed 's/^/  /'
say "  ... $(grep -cE '^  - ' "$TMP/suggested.yaml") rules; airlock check --policy $TMP/suggested.yaml:"
"$AIRLOCK" check --policy "$TMP/suggested.yaml" 2>&1 | sed 's/^/  /'

# ---- was it what we expected? --------------------------------------------------------------
step "checks"
failures=0
check() { # check DESCRIPTION COMMAND...: runs COMMAND, prints ok / FAIL
	desc=$1
	shift
	if "$@" >/dev/null 2>&1; then
		say "  ${GREEN}ok${RESET}    $desc"
	else
		say "  ${RED}FAIL${RESET}  $desc"
		failures=$((failures + 1))
	fi
}
# outcome KEY: the agent's outcome for step KEY ("ok", "refused", "masked", "failed").
outcome() { sed -n "s/^\[ *[0-9]*\] $1  *.\{40\} \([a-z]*\):\{0,1\}.*/\1/p" "$TMP/agent.out" | head -n 1; }
is() { # is KEY OUTCOME...: the agent's outcome for KEY is one of OUTCOME...
	o=$(outcome "$1")
	shift
	for want in "$@"; do [ "$o" = "$want" ] && return 0; done
	return 1
}
both_ok() { is "$1" ok && is "$2" ok; }
# logged DECISION JQ-LIKE-TEST: some event of the audit log has this decision and matches
logged() {
	python3 - "$TMP/audit.jsonl" "$1" "$2" <<-'EOF'
		import json, sys
		log, decision, test = sys.argv[1:]
		for line in open(log):
		    e = json.loads(line)
		    text = " ".join([e.get("command", ""), *e.get("args", []), e.get("file", ""), e.get("action", ""),
		                     e.get("network_dst", "")])
		    if e.get("decision") == decision and all(w in text for w in test.split()):
		        sys.exit(0)
		sys.exit(1)
	EOF
}
check "airlock run exited 0 (the agent finished)" test "$rc" = 0
check "the agent read its sources and edited src/calc.py" is edit ok
check "the tests ran and passed (make test)" is test ok
check "git commit worked: a new commit on main" \
	sh -c "[ \"\$(git -C '$WS' rev-list --count HEAD)\" = 2 ] && git -C '$WS' log -1 --format=%s | grep -q 'implement mul'"
check "git status and git diff were allowed" both_ok status diff
check "reading .env was refused (shim)" is env refused
check "reading .env past the shim (raw syscall) was stopped by the kernel layer" is env-raw masked refused skipped
check "the log has .env's read denied" logged deny ".env read"
check "reading ~/.ssh/id_rsa was refused" is ssh-key refused masked
# rm itself runs (deleting in the workspace is contained); each deletion outside is a write the
# policy's default denies
check "rm -rf outside the workspace was refused (rm ran, its deletions were denied)" is rm refused
check "the log has the deletion outside denied" logged deny "$TMP/outside/keep.txt write"
check "the directory outside the workspace is intact" test -f "$TMP/outside/keep.txt"
check "git push was refused" is push refused
check "the remote did not move" test "$(git -C "$TMP/remote.git" rev-parse main)" = "$INITIAL"
# installing runs: its setup code is inside the sandbox, and only the package index is reachable
check "pip install was allowed to run (contained; the network rules decide where it connects)" \
	logged allow "install requests"
check "curl ran, and the proxy refused the unknown host (asked, refused by --headless)" is curl refused
check "the log has the connection to the unknown host denied" logged deny "unknown.example:443"
check "the socket connect did not get out" is connect refused failed
check "the secret in .env is unchanged" grep -qx 'API_KEY=sk-demo-not-a-real-secret' "$WS/.env"
check "airlock suggest wrote a valid policy from the log" "$AIRLOCK" check --policy "$TMP/suggested.yaml"
suggested() { # suggested DECISION-STATUS ACTION...: the suggested policy decides ACTION so
	want=$1
	shift
	got=0
	(cd "$WS" && "$AIRLOCK" check --policy "$TMP/suggested.yaml" "$@") >/dev/null 2>&1 || got=$?
	test "$got" = "$want"
}
check "the suggested policy allows git status" suggested 0 exec git status
check "the suggested policy denies git push, as the run did" suggested 4 exec git push origin HEAD
check "the suggested policy denies reading .env, as the run did" suggested 4 open "$WS/.env" --read

# The checkpoint: what the session changed in the workspace, and putting it back.
step "airlock diff --stat: what the agent changed in the workspace (the session's checkpoint)"
(cd "$WS" && "$AIRLOCK" diff --stat) 2>&1 | sed 's/^/  /'
step "airlock undo: the workspace as it was before the session"
(cd "$WS" && "$AIRLOCK" undo) 2>&1 | tail -n 3 | sed 's/^/  /'
check "airlock undo put src/calc.py back as it was before the session" cmp -s "$WS/src/calc.py" "$TMP/calc.py.before"
check "airlock undo moved main back to the commit before the session" \
	test "$(git -C "$WS" rev-parse HEAD)" = "$INITIAL"

say ""
if [ "$failures" -eq 0 ]; then
	say "${BOLD}${GREEN}demo: the run behaved as expected${RESET}: the work got done, the dangerous actions were refused."
	say "Try the audit log yourself:  $AIRLOCK_ARG log --decision deny   (after an airlock run of your own)"
	exit 0
fi
say "${BOLD}${RED}demo: $failures check(s) failed${RESET}: airlock did not behave as expected (agent output and log above)."
if logged deny "/dev/null write"; then
	say "Hint: writes to /dev/null were refused (asked, and refused by --headless), and git opens"
	say "/dev/null for writing at start-up, so every git command died: the policy needs to allow"
	say "writing /dev/null (e.g. allow: - file: { path: /dev/null, action: write })."
fi
say "Run it again with AIRLOCK_DEMO_KEEP=1 to keep the scratch files."
exit 1
