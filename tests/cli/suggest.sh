#!/bin/sh
# suggest.sh — TAP tests of `airlock suggest`: round trips on sessions recorded from real programs, never widening
# a deny, generalising, malformed lines, --session, --output, usage errors.
# Usage: tests/cli/suggest.sh BUILD/airlock
# Records sessions with `airlock run --headless` under a scratch directory in /var/tmp (the sandbox's /tmp is its
# own) with a scratch HOME; exits 1 if any test fails.  A case whose program is missing prints "skipped: reason".
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 BUILD/airlock" >&2
	exit 2
fi
AIRLOCK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

base=/var/tmp
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
TMP=$(mktemp -d "$base/airlock-suggest.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
TMP=$(cd "$TMP" && pwd -P)
export HOME="$TMP/home"
unset XDG_CONFIG_HOME XDG_STATE_HOME GIT_DIR GIT_WORK_TREE
export GIT_CONFIG_NOSYSTEM=1 LC_ALL=C TZ=UTC
mkdir -p "$HOME"
printf '[user]\n\tname = airlock test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n' \
	>"$HOME/.gitconfig"

. "$(dirname "$0")/lib.sh"

# The round trip: every event of LOG (of SESSION) decided by `airlock check` with POLICY as the log says; the
# lines in $KEPT (comma-separated: what suggest listed as "kept denied", allowed only by a default and denied by
# a carried-over rule) denied.
cat >"$TMP/roundtrip.py" <<'EOF'
import json, os, subprocess, sys
airlock, log, policy, ws = sys.argv[1:5]
session = sys.argv[5] if len(sys.argv) > 5 else ""
kept = set(int(k) for k in os.environ.get("KEPT", "").split(",") if k)
code = {"allow": 0, "ask": 3, "deny": 4}
seen, checked, bad, denied = set(), 0, 0, 0
for lineno, line in enumerate(open(log, encoding="utf-8", errors="replace"), 1):
    try:
        ev = json.loads(line)
    except ValueError:
        continue
    if not isinstance(ev, dict) or not str(ev.get("session_id", "")).startswith(session):
        continue
    d = ev.get("decision")
    if d not in code:
        continue
    if isinstance(ev.get("command"), str):
        if ev.get("truncated") or not isinstance(ev.get("args", []), list):
            continue
        argv = ["exec", ev["command"]] + [str(a) for a in ev.get("args", [])]
    elif isinstance(ev.get("file"), str):
        if ev.get("action") not in ("read", "write", "exec") or not ev["file"].startswith("/"):
            continue
        argv = ["open", ev["file"], "--" + ev["action"]]
    elif isinstance(ev.get("network_dst"), str):
        if ev["network_dst"].startswith("?:"):
            continue
        argv = ["connect", ev["network_dst"]]
    else:
        continue
    key = tuple(argv) + (d,)
    if key in seen:
        continue
    seen.add(key)
    checked += 1
    want = code[d]
    if lineno in kept:
        want, denied = 4, denied + 1
    r = subprocess.run([airlock, "check", "--policy", policy, "--workspace", ws] + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != want:
        bad += 1
        print("%s: recorded %s%s, check exits %d: %s" % (" ".join(argv), d,
              " (kept denied)" if lineno in kept else "", r.returncode,
              r.stdout.decode("utf-8", "replace").strip().replace("\n", " | ")))
print("%d distinct events checked, %d kept denied, %d decided otherwise" % (checked, denied, bad))
sys.exit(1 if bad or checked == 0 else 0)
EOF

HAVE_PY=
if command -v python3 >/dev/null 2>&1 && PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null); then
	HAVE_PY=1
fi

# roundtrip NAME LOG WORKSPACE [SESSION]: suggest exits 0, the policy is valid, and it reproduces every decision.
roundtrip() {
	name=$1 log=$2 ws=$3 sess=${4:-}
	pol="$TMP/$name.suggested.yaml"
	if [ -n "$sess" ]; then
		run suggest "$log" --session "$sess" --output "$pol"
	else
		run suggest "$log" --output "$pol"
	fi
	kept=$(sed -n 's/.*:\([0-9][0-9]*\): kept denied: .*/\1/p' "$TMP/err" | tr '\n' ,)
	cp "$TMP/err" "$TMP/$name.suggest.err"
	if [ "$RC" = 0 ] && [ -s "$pol" ]; then
		pass "$name: suggest writes a policy"
	else
		fail "$name: suggest writes a policy" "$(details)"
		return
	fi
	run check --policy "$pol"
	if [ "$RC" = 0 ] && grep -q ": ok, " "$TMP/out"; then
		pass "$name: airlock check says the suggested policy is valid"
	else
		fail "$name: airlock check says the suggested policy is valid" "$(details)" "$(cat "$pol")"
	fi
	if [ -z "$HAVE_PY" ]; then
		skip "$name: round trip" "no python3 to read the log"
		return
	fi
	if KEPT=$kept python3 "$TMP/roundtrip.py" "$AIRLOCK" "$log" "$pol" "$ws" "$sess" >"$TMP/rt" 2>&1; then
		pass "$name: round trip: $(tail -n 1 "$TMP/rt")"
	else
		fail "$name: round trip: every event decided as recorded" "$(cat "$TMP/rt")" "$(cat "$pol")"
	fi
}

# has_file / lacks_file DESC FILE TEXT: FILE contains TEXT, or not.
lacks_file() {
	if grep -qF -- "$3" "$2"; then fail "$1" "'$3' in $2" "$(cat "$2")"; else pass "$1"; fi
}
has_file() {
	if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1" "no '$3' in $2" "$(cat "$2")"; fi
}

# ---- recorded sessions: real programs under airlock run --headless ------------------
CAN_RUN=
mkdir -p "$TMP/probe"
if (cd "$TMP/probe" && "$AIRLOCK" run --headless --log "$TMP/probe.jsonl" -- true) >/dev/null 2>&1; then
	CAN_RUN=1
fi

# record NAME POLICY-TEXT RUN-OPTION... -- COMMAND...: runs COMMAND in the workspace $TMP/NAME, log $TMP/NAME.jsonl.
record() {
	name=$1 policy=$2
	shift 2
	mkdir -p "$TMP/$name"
	if [ -n "$policy" ]; then
		printf '%s\n' "$policy" >"$TMP/$name.policy.yaml"
		set -- --policy "$TMP/$name.policy.yaml" "$@"
	fi
	(cd "$TMP/$name" && "$AIRLOCK" run --headless --log "$TMP/$name.jsonl" "$@") \
		>"$TMP/$name.out" 2>&1
}

if [ -z "$CAN_RUN" ]; then
	for n in agent git python3 coreutils perl; do
		skip "$n: recorded session round trip" "airlock run cannot run here (see airlock doctor)"
	done
else
	# 1. the example agent, as `make demo` runs it (the default policy; asks denied by --headless)
	if [ -n "$HAVE_PY" ] && command -v git >/dev/null 2>&1 && command -v make >/dev/null 2>&1; then
		AIRLOCK_DEMO_DIR="$TMP" AIRLOCK_DEMO_KEEP=1 "$ROOT/scripts/demo.sh" "$AIRLOCK" >"$TMP/demo.out" 2>&1
		demo=$(sed -n 's/^demo: scratch files kept in //p' "$TMP/demo.out")
		if [ -n "$demo" ] && [ -s "$demo/audit.jsonl" ]; then
			roundtrip agent "$demo/audit.jsonl" "$demo/project"
			pol="$TMP/agent.suggested.yaml"
			if grep -q 'path: "./.env", action: read' "$pol"; then
				pass "agent: the denied read of .env is a deny rule"
			else
				fail "agent: the denied read of .env is a deny rule" "$(cat "$pol")"
			fi
			run check --policy "$pol" --workspace "$demo/project" exec git push origin HEAD
			if [ "$RC" = 4 ]; then pass "agent: git push stays denied"; else fail "agent: git push stays denied" "$(details)"; fi
			run check --policy "$pol" --workspace "$demo/project" exec git push --force
			if [ "$RC" != 0 ]; then pass "agent: another git push is not allowed"; else fail "agent: another git push is not allowed" "$(details)"; fi
		else
			skip "agent: recorded session round trip" "scripts/demo.sh did not run: $(tail -n 3 "$TMP/demo.out")"
		fi
	else
		skip "agent: recorded session round trip" "the example agent needs python3, git and make"
	fi

	# 2. git: a learning run (default: allow, --trace) with a denied push and a denied read
	if command -v git >/dev/null 2>&1; then
		mkdir -p "$TMP/git"
		echo secret >"$TMP/git/secret.txt"
		record git 'version: 1
default: allow
deny:
  - command: git
    args: push
    match: prefix
  - file: { path: ./secret.txt, action: read }' --trace -- sh -c \
			'git init -q; echo x > a; mkdir -p src; echo y > src/b; git add a src; git commit -qm first;
			 git status --short; git log --oneline; cat secret.txt; git push origin HEAD; true'
		roundtrip git "$TMP/git.jsonl" "$TMP/git"
		run check --policy "$TMP/git.suggested.yaml" --workspace "$TMP/git" open --write "$TMP/git/src/new"
		if [ "$RC" = 0 ]; then pass "git: workspace writes are generalised"; else fail "git: workspace writes are generalised" "$(details)"; fi
	else
		skip "git: recorded session round trip" "no git"
	fi

	# 3. python3: asks allowed by --default-allow, a denied write, a denied program
	if [ -n "$HAVE_PY" ]; then
		mkdir -p "$TMP/python3/private"
		record python3 'version: 1
default: {exec: ask, read: allow, write: ask, connect: ask}
deny:
  - file: { path: ./private, action: write }
  - command: uname
allow:
  - command: "python3*"' --default-allow --trace -- "$PY" -c '
import os, subprocess
open("out.txt", "w").write("x")
try:
    open("private/x", "w")
except OSError as e:
    print("refused:", e)
os.makedirs("build/obj", exist_ok=True)
open("build/obj/a.o", "w").write("o")
subprocess.run(["ls", "-l"])
subprocess.run(["ls", "-a"])
subprocess.run(["uname", "-a"])
'
		roundtrip python3 "$TMP/python3.jsonl" "$TMP/python3"
		run check --policy "$TMP/python3.suggested.yaml" --workspace "$TMP/python3" open --write "$TMP/python3/private/y"
		if [ "$RC" != 0 ]; then pass "python3: no allow rule covers the denied directory"; else fail "python3: no allow rule covers the denied directory" "$(details)" "$(cat "$TMP/python3.suggested.yaml")"; fi
	else
		skip "python3: recorded session round trip" "no python3"
	fi

	# 4. sh and coreutils under the built-in default policy: asks denied by --headless, a secret, a connection
	echo 'TOKEN=x' >"$TMP/coreutils.env" && mkdir -p "$TMP/coreutils" && mv "$TMP/coreutils.env" "$TMP/coreutils/.env"
	record coreutils '' --trace -- sh -c '
		mkdir -p d/e; echo 1 > d/e/f; cp d/e/f d/g; ls d; wc -l d/e/f; rm d/g; chmod 777 d/e/f
		cat .env; head -c 10 /etc/passwd >/dev/null; true'
	if [ -n "$HAVE_PY" ]; then
		# a connection the default policy asks about: denied at once, headless
		(cd "$TMP/coreutils" && "$AIRLOCK" run --headless --log "$TMP/coreutils.jsonl" -- "$PY" -c '
import socket
s = socket.socket()
s.settimeout(3)
try:
    s.connect(("203.0.113.7", 443))
except OSError as e:
    print("refused:", e)
') >>"$TMP/coreutils.out" 2>&1
	fi
	roundtrip coreutils "$TMP/coreutils.jsonl" "$TMP/coreutils"
	if grep -q '"decision":"deny"' "$TMP/coreutils.jsonl" && grep -q '"decided_by":"default"' "$TMP/coreutils.jsonl"; then
		pass "coreutils: the session has denies and asks answered by --headless"
	else
		fail "coreutils: the session has denies and asks answered by --headless" "$(cat "$TMP/coreutils.jsonl")"
	fi

	# 5. perl: a learning run with one denied read and one denied program
	if command -v perl >/dev/null 2>&1; then
		mkdir -p "$TMP/perl" && echo s >"$TMP/perl/secret"
		record perl 'version: 1
default: allow
deny:
  - file: { path: ./secret, action: read }
  - command: date' --trace -- perl -e '
			open(my $f, ">", "p.txt") or die; print $f "x"; close $f;
			mkdir "pd"; open(my $h, ">", "pd/q") or die; close $h;
			system("echo", "hi"); system("date");
			open(my $g, "<", "secret") or print "refused\n";'
		roundtrip perl "$TMP/perl.jsonl" "$TMP/perl"
	else
		skip "perl: recorded session round trip" "no perl"
	fi
fi

# ---- the learning run keeps the default protections; names that are not UTF-8 ----------
if [ -z "$CAN_RUN" ]; then
	skip "learn: the learning run keeps the built-in default's deny rules" "airlock run cannot run here (see airlock doctor)"
	skip "ff: a denied file whose name is not UTF-8 stays denied" "airlock run cannot run here (see airlock doctor)"
else
	# the reviewer's reproduction: a --trace run under `default: allow` in a workspace with a .env
	L="$TMP/learn"
	mkdir -p "$L" "$HOME/.ssh"
	echo 'TOKEN=learn-secret-42' >"$L/.env"
	echo readme >"$L/README"
	echo 'fake key' >"$HOME/.ssh/id_rsa"
	record learn 'version: 1
default: allow' --trace -- sh -c 'ls; cat README; cat .env >/dev/null; echo x > out.txt; git status --short'
	roundtrip learn "$TMP/learn.jsonl" "$L"
	P="$TMP/learn.suggested.yaml"
	# it read .env, allowed only by its policy's default: the built-in deny is kept, said, not a mismatch
	has_file "learn: the kept .env rule says the learning run did it" "$P" \
		"# the learning run did this (allowed only by its default); the built-in deny is kept:"
	if grep -q "kept denied: read $L/.env," "$TMP/learn.suggest.err"; then
		pass "learn: the read of .env is listed as kept denied"
	else
		fail "learn: the read of .env is listed as kept denied" "$(cat "$TMP/learn.suggest.err")"
	fi
	lacks_file "learn: ... not as decided otherwise" "$TMP/learn.suggest.err" "otherwise than the log"
	lacks_file "learn: the .env rule is not left out" "$P" '# left out (<default>:108)'
	has_file "learn: the built-in default's deny rules are carried over in their own block" "$P" \
		"# ---- carried over from the built-in default policy"
	has_file "learn: carried-over rules keep their reasons" "$P" 'reason: "Environment files hold secrets"'
	(cd "$L" && "$AIRLOCK" check --policy "$P" open .env --read) >"$TMP/out" 2>"$TMP/err"
	RC=$?
	if [ "$RC" = 4 ]; then pass "learn: reading .env is denied"; else fail "learn: reading .env is denied" "$(details)"; fi
	(cd "$L" && "$AIRLOCK" check --policy "$P" open "$HOME/.ssh/id_rsa" --read) >"$TMP/out" 2>"$TMP/err"
	RC=$?
	if [ "$RC" = 4 ]; then pass "learn: reading ~/.ssh/id_rsa is denied"; else fail "learn: reading ~/.ssh/id_rsa is denied" "$(details)"; fi
	(cd "$L" && "$AIRLOCK" check --policy "$P" exec rm -rf /) >"$TMP/out" 2>"$TMP/err"
	RC=$?
	if [ "$RC" = 4 ]; then pass "learn: rm -rf / is denied"; else fail "learn: rm -rf / is denied" "$(details)"; fi
	(cd "$L" && "$AIRLOCK" run --headless --policy "$P" -- sh -c 'cat .env') >"$TMP/out" 2>&1
	if grep -q learn-secret-42 "$TMP/out"; then
		fail "learn: run under the suggested policy does not print the secret" "$(cat "$TMP/out")"
	else
		pass "learn: run under the suggested policy does not print the secret"
	fi
	# the shell itself (allowed: the learning run ran it) reading .env, no cat needed
	(cd "$L" && "$AIRLOCK" run --headless --policy "$P" -- sh -c 'read l < .env; echo "got $l"') >"$TMP/out" 2>&1
	if grep -q learn-secret-42 "$TMP/out"; then
		fail "learn: not even the allowed shell reads the secret" "$(cat "$TMP/out")"
	else
		pass "learn: not even the allowed shell reads the secret"
	fi

	# the kernel layer: a write outside the workspace the shim allowed (the kernel layer refused it) is no
	# sandbox.write entry, so replaying the suggested policy does not write to the host
	K="$TMP/kern"
	mkdir -p "$K" "$TMP/outside"
	record kern 'version: 1
default: allow' --trace -- sh -c "echo x > '$TMP/outside/f'; echo y > mine; true"
	if grep -q "\"file\":\"$TMP/outside/f\",\"action\":\"write\",\"decision\":\"allow\"" "$TMP/kern.jsonl" &&
		[ ! -e "$TMP/outside/f" ]; then
		pass "kern: the write outside is logged allowed, the kernel layer refused it"
	else
		fail "kern: the write outside is logged allowed, the kernel layer refused it" "$(cat "$TMP/kern.jsonl")"
	fi
	roundtrip kern "$TMP/kern.jsonl" "$K"
	P="$TMP/kern.suggested.yaml"
	lacks_file "kern: no sandbox.write entry" "$P" "    - \"$TMP/outside\""
	has_file "kern: the directory is listed in a comment" "$P" "  #   $TMP/outside   (write $TMP/outside/f, line"
	(cd "$K" && "$AIRLOCK" run --headless --policy "$P" -- sh -c "echo x > '$TMP/outside/f'; true") >"$TMP/out" 2>&1
	if [ -e "$TMP/outside/f" ]; then
		fail "kern: replaying with the suggested policy does not write to the host" "$(cat "$P")"
	else
		pass "kern: replaying with the suggested policy does not write to the host"
	fi

	# a file named sec\xff, read-denied (asked about, denied by --headless): the log says sec<U+FFFD>
	F="$TMP/ff"
	FF=$(printf 'sec\377')
	mkdir -p "$F"
	echo 'ff-secret' >"$F/$FF"
	echo public >"$F/notes"
	record ff 'version: 1
default: allow
ask:
  - file: { path: "./sec*", action: read }' --trace -- sh -c 'cat sec*; cat notes; true'
	if grep -q 'sec\\ufffd\|sec'"$(printf '\357\277\275')" "$TMP/ff.jsonl"; then
		pass "ff: the log names the file with U+FFFD"
	else
		fail "ff: the log names the file with U+FFFD" "$(cat "$TMP/ff.jsonl")"
	fi
	roundtrip ff "$TMP/ff.jsonl" "$F"
	P="$TMP/ff.suggested.yaml"
	has_file "ff: the deny rule is a glob, U+FFFD as *" "$P" 'path: "./sec*", action: read'
	(cd "$F" && "$AIRLOCK" check --policy "$P" open "$FF" --read) >"$TMP/out" 2>"$TMP/err"
	RC=$?
	if [ "$RC" = 4 ]; then pass "ff: reading sec\\xff is denied"; else fail "ff: reading sec\\xff is denied" "$(details)" "$(cat "$P")"; fi
	(cd "$F" && "$AIRLOCK" run --headless --policy "$P" -- sh -c 'cat sec*') >"$TMP/out" 2>&1
	if grep -q ff-secret "$TMP/out"; then
		fail "ff: run under the suggested policy does not print it" "$(cat "$TMP/out")"
	else
		pass "ff: run under the suggested policy does not print it"
	fi
fi

# ---- a workspace and a policy file whose paths hold "; " (the old message's separator), quotes, '\', '$' ------
if [ -z "$CAN_RUN" ]; then
	skip "odd: a recorded odd workspace round trip" "airlock run cannot run here (see airlock doctor)"
else
	ODDN="odd; policy /etc/x.yaml; workspace /tmp 'q' \"dq\" \\ \$x"
	O="$TMP/$ODDN"
	record "$ODDN" 'version: 1
default: allow
deny:
  - command: uname' --trace -- sh -c 'mkdir -p d/e; echo x > d/out.txt; echo y > d/e/z; uname; true'
	roundtrip odd "$TMP/$ODDN.jsonl" "$O"
	P="$TMP/odd.suggested.yaml"
	# (the writes share $O/d: only the start event says the workspace is $O)
	has_file "odd: the workspace is read whole from the start event" "$P" "# ./ is the workspace $O, ~/"
	has_file "odd: writes in it are generalised to ./" "$P" 'path: "./**", action: write'
	has_file "odd: the session's policy file is found and its deny rules carried over" "$P" \
		"ran under, $TMP/$ODDN.policy.yaml"
	has_file "odd: the session's agent and exit status are read from its events" "$P" ": /usr/bin/sh"
	has_file "odd: ... and its exit status" "$P" ", exit status 0"
fi

# ---- hand-written logs ------------------------------------------------------------
# ev SESSION FIELDS: one event line.
n=0
ev() {
	n=$((n + 1))
	printf '{"id":"%016d","timestamp":"2026-11-30T01:02:%02d.000Z","session_id":"%s","source":"shim","pid":7,%s}\n' \
		"$n" "$((n % 60))" "$1" "$2"
}
start() {
	printf '{"id":"s","timestamp":"2026-11-30T01:00:00.000Z","session_id":"%s","source":"launcher","pid":1,"event":"session_start","program":"/usr/bin/agent","policy":"%s","workspace":"%s","sandbox":"bubblewrap","message":"session started: /usr/bin/agent"}\n' "$1" "${3:-<default>}" "$2"
}
S=aaaaaaaa11111111

# a deny is never widened: allowed /w/a/x, /w/a/y, /w/b/z; denied /w/a/secret
W="$TMP/w"
mkdir -p "$W"
{
	start $S "$W"
	ev $S "\"file\":\"$W/a/x\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$W/a/y\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"human\""
	ev $S "\"file\":\"$W/b/c/z\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$W/a/secret\",\"action\":\"write\",\"decision\":\"deny\",\"decided_by\":\"policy\",\"reason\":\"keep it\""
	ev $S "\"command\":\"/usr/bin/git\",\"args\":[\"status\",\"--short\"],\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"command\":\"/usr/bin/git\",\"args\":[\"commit\",\"-m\",\"a \\\"quoted\\\" \\\\ message\\nsecond line\"],\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"command\":\"/usr/bin/git\",\"args\":[\"push\",\"origin\",\"main\"],\"decision\":\"deny\",\"decided_by\":\"human\",\"response_time_ms\":900"
	ev $S "\"command\":\"/usr/bin/ls\",\"args\":[],\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"network_dst\":\"example.com:443\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"network_dst\":\"example.com:80\",\"decision\":\"allow\",\"decided_by\":\"session\""
	ev $S "\"network_dst\":\"example.org:443\",\"decision\":\"allow\",\"decided_by\":\"human\""
	ev $S "\"network_dst\":\"example.org:8080\",\"decision\":\"deny\",\"decided_by\":\"timeout\""
	ev $S "\"network_dst\":\"[2001:db8::1]:22\",\"decision\":\"deny\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$HOME/.cache/tool/x\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$HOME/.ssh/id_rsa\",\"action\":\"read\",\"decision\":\"deny\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"/etc/hosts\",\"action\":\"read\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"command\":\"/usr/bin/npm\",\"args\":[\"install\"],\"decision\":\"ask\",\"decided_by\":\"policy\""
} >"$TMP/hand.jsonl"
roundtrip hand "$TMP/hand.jsonl" "$W"
P="$TMP/hand.suggested.yaml"
lacks_file "never widened over a deny: no ./** write rule" "$P" 'path: "./**"'
lacks_file "never widened over a deny: no ./a/** write rule" "$P" 'path: "./a/**"'
has_file "a directory with nothing denied in it is widened: ./b/**" "$P" 'path: "./b/**"'
expect "the denied path stays denied" 4 check --policy "$P" --workspace "$W" open --write "$W/a/secret"
expect "a new path beside the denied one is not allowed (the default asks)" 3 check --policy "$P" --workspace "$W" open --write "$W/a/other"
expect "a new path in the widened directory is allowed" 0 check --policy "$P" --workspace "$W" open --write "$W/b/new"
has_file "home paths are written ~/..." "$P" 'path: "~/.cache/**"'
has_file "a denied read in home is a deny rule" "$P" 'path: "~/.ssh/id_rsa", action: read'
lacks_file "allowed reads need no rule (the default allows reads)" "$P" '/etc/hosts"'
has_file "a denied subcommand keeps git's allow rules to their prefixes" "$P" 'args: "status"'
expect "no rule allows git with any arguments: an unseen subcommand asks" 3 check --policy "$P" exec /usr/bin/git frobnicate
expect "git status with other arguments is allowed (the stable prefix)" 0 check --policy "$P" exec /usr/bin/git status
expect "git push is denied" 4 check --policy "$P" exec /usr/bin/git push origin main
expect "another git push is not allowed (the default asks)" 3 check --policy "$P" exec /usr/bin/git push other
expect "a force push is not allowed either (the built-in default asks; its ask rules are not carried over)" 3 check --policy "$P" exec /usr/bin/git push --force
has_file "a host's ports become one rule for the host" "$P" 'destination: "example.com" }'
expect "the host rule covers another port" 0 check --policy "$P" connect example.com:8443
has_file "a host with a denied port keeps per-port rules" "$P" 'destination: "example.org:443" }'
expect "another port of that host is not allowed" 3 check --policy "$P" connect example.org:9999
expect "an IPv6 destination stays denied" 4 check --policy "$P" connect '[2001:db8::1]:22'
has_file "an event still logged as ask becomes an ask rule" "$P" "$(printf 'ask:\n')"
has_file "a rule's comment counts its events and who decided" "$P" '# 2 events (2 distinct) allowed by the policy (1), by session memory (1), e.g. connect example.com:443'
has_file "a human's deny is counted in the comment" "$P" 'denied by a human: exec /usr/bin/git push origin main'
has_file "the header names the log" "$P" "$TMP/hand.jsonl"
has_file "the header names the session and the agent" "$P" "# session $S: /usr/bin/agent"
has_file "a deny rule keeps the log's reason" "$P" 'reason: "keep it"'

# the workspace when no session start names it: the directory the allowed writes share
grep -v '"source":"launcher"' "$TMP/hand.jsonl" | grep -v "$HOME" >"$TMP/nostart.jsonl"
run suggest "$TMP/nostart.jsonl"
has "without a session start, the allowed writes' common directory is the workspace" out "# ./ is the workspace $W,"
run suggest "$TMP/nostart.jsonl" --workspace "$TMP"
has "--workspace sets what ./ stands for" out 'path: "./w/b/**"'

# an event decided both ways: denied, with a warning
{
	start $S "$W"
	ev $S "\"command\":\"/usr/bin/make\",\"args\":[\"deploy\"],\"decision\":\"allow\",\"decided_by\":\"human\""
	ev $S "\"command\":\"/usr/bin/make\",\"args\":[\"deploy\"],\"decision\":\"deny\",\"decided_by\":\"human\""
	ev $S "\"command\":\"/usr/bin/make\",\"args\":[\"test\"],\"decision\":\"allow\",\"decided_by\":\"policy\""
} >"$TMP/conflict.jsonl"
run suggest "$TMP/conflict.jsonl" --output "$TMP/conflict.yaml"
has "an action decided both ways is reported" err "conflict.jsonl:3: decided deny here, allow at line 2"
expect "an action decided both ways is denied" 4 check --policy "$TMP/conflict.yaml" exec /usr/bin/make deploy
expect "the rest of that program is still allowed" 0 check --policy "$TMP/conflict.yaml" exec /usr/bin/make test

# ---- deny rules carried over ------------------------------------------------------
# the session's policy file (named relative to its workspace) still loads: its deny rules come along
C="$TMP/carry"
mkdir -p "$C/.airlock"
printf '%s\n' 'version: 1' 'default: allow' 'deny:' '  - command: curl' '    reason: no downloads here' \
	'  - file: { path: ./vault, action: read }' '  - command: sudo' \
	'  - command: rm' '    args: "-rf /*"' >"$C/.airlock/policy.yaml"
{
	start $S "$C" .airlock/policy.yaml
	ev $S "\"command\":\"/bin/rm\",\"args\":[\"-rf\",\"/tmp/build\"],\"decision\":\"allow\",\"decided_by\":\"human\""
	ev $S "\"file\":\"$C/notes\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$C/.env.example\",\"action\":\"read\",\"decision\":\"allow\",\"decided_by\":\"policy\",\"rule\":\"$C/.airlock/policy.yaml:9\""
} >"$TMP/carry.jsonl"
roundtrip carry "$TMP/carry.jsonl" "$C"
P="$TMP/carry.suggested.yaml"
has_file "the session's policy's deny rules are carried over in their own block" "$P" \
	"# ---- carried over from the policy session $S ran under, $C/.airlock/policy.yaml"
has_file "a carried-over rule keeps its reason" "$P" 'reason: "no downloads here"'
expect "a deny rule of the session's policy still denies" 4 check --policy "$P" --workspace "$C" exec curl https://example.com
expect "a deny rule of the session's policy still denies a file" 4 check --policy "$P" --workspace "$C" open --read "$C/vault"
n_sudo=$(grep -c '^  - command: "sudo"' "$P")
if [ "$n_sudo" = 1 ]; then pass "a rule in both policies is carried over once"; else fail "a rule in both policies is carried over once" "$(cat "$P")"; fi
has_file "a carried-over rule that would deny what a human allowed is left out, in a comment" "$P" \
	"# left out ($C/.airlock/policy.yaml:"
has_file "the comment names what the log allowed" "$P" 'it would deny exec /bin/rm -rf /tmp/build, which the log recorded as allowed'
lacks_file "the left-out rule is not in the policy" "$P" '    args: "-rf /*"'
run suggest "$TMP/carry.jsonl"
has "the left-out rule is named on stderr" err 'this deny rule is not carried over: it would deny exec /bin/rm -rf /tmp/build, which the log recorded as allowed'
envline=$(grep -n 'path: ".env.\*"' "$ROOT/policy/default_policy.yaml" | head -n 1 | cut -d: -f1)
has_file "a read an explicit rule allowed, the .env.* rule would deny: left out" "$P" "# left out (<default>:$envline): file: { path: \".env.*\", action: [read, write] }"
expect "the other carried-over rm rules still deny" 4 check --policy "$P" --workspace "$C" exec rm -fr /usr
expect ".env stays denied" 4 check --policy "$P" --workspace "$C" open --read "$C/.env"
# a human's yes to one action is not a yes to all a left-out rule denied: its approved actions keep exact
# allow rules, no other allow rule covers what it denied, and narrower deny rules keep the rest denied
R="$TMP/yes"
mkdir -p "$R/.airlock"
printf '%s\n' 'version: 1' 'default: allow' 'deny:' '  - command: rm' '    args: "-rf /*"' \
	'    reason: no recursive deletes of absolute paths' >"$R/.airlock/policy.yaml"
{
	start $S "$R" .airlock/policy.yaml
	ev $S "\"command\":\"/bin/rm\",\"args\":[\"-rf\",\"/tmp/x\"],\"decision\":\"allow\",\"decided_by\":\"human\""
	ev $S "\"command\":\"/bin/rm\",\"args\":[\"notes.txt\"],\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"command\":\"/bin/rm\",\"args\":[\"-rf\",\"build\"],\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$HOME/.ssh/known_hosts\",\"action\":\"read\",\"decision\":\"allow\",\"decided_by\":\"human\""
	ev $S "\"file\":\"$HOME/.ssh/known_hosts\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"human\""
	ev $S "\"file\":\"$HOME/.aws/config\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"human\""
	ev $S "\"file\":\"$HOME/.cache/tool/x\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
} >"$TMP/yes.jsonl"
roundtrip yes "$TMP/yes.jsonl" "$R"
P="$TMP/yes.suggested.yaml"
expect "an approved rm -rf /tmp/x: rm -rf / is still denied" 4 check --policy "$P" --workspace "$R" exec rm -rf /
expect "an approved rm -rf /tmp/x: rm -rf /etc is still denied" 4 check --policy "$P" --workspace "$R" exec rm -rf /etc
expect "an approved rm -rf /tmp/x: rm -rf /tmp/x /home is still denied" 4 check --policy "$P" --workspace "$R" exec rm -rf /tmp/x /home
expect "an approved rm -rf /tmp/x: rm -rf /tmp/x is allowed" 0 check --policy "$P" --workspace "$R" exec rm -rf /tmp/x
expect "an approved rm -rf /tmp/x: rm -rf /tmp/y is not allowed" 4 check --policy "$P" --workspace "$R" exec /bin/rm -rf /tmp/y
has_file "the approved run's allow rule is exact" "$P" "$(printf '  - command: "rm"\n    args: "-rf /tmp/x"\n    match: exact')"
expect "no allow rule covers rm with any arguments: another file asks" 3 check --policy "$P" --workspace "$R" exec rm other.txt
expect "no allow rule covers rm -rf with any arguments: -rf DIR asks" 3 check --policy "$P" --workspace "$R" exec rm -rf src
expect "the other allowed runs are allowed" 0 check --policy "$P" --workspace "$R" exec rm -rf build
has_file "the left-out rule's rest is kept, said in a comment" "$P" '#   kept, less what the log allowed:'
run suggest "$TMP/yes.jsonl"
has "stderr says narrower rules deny the rest" err 'narrower rules deny the rest of what it denied'
expect "an approved read of ~/.ssh/known_hosts: ~/.ssh/id_rsa is still denied" 4 check --policy "$P" --workspace "$R" open --read "$HOME/.ssh/id_rsa"
expect "an approved read of ~/.ssh/known_hosts: ~/.ssh/config is still denied" 4 check --policy "$P" --workspace "$R" open --read "$HOME/.ssh/config"
expect "an approved read of ~/.ssh/known_hosts: it is allowed" 0 check --policy "$P" --workspace "$R" open --read "$HOME/.ssh/known_hosts"
expect "an approved write of ~/.ssh/known_hosts: writing authorized_keys is still denied" 4 check --policy "$P" --workspace "$R" open --write "$HOME/.ssh/authorized_keys"
expect "an approved write of ~/.ssh/known_hosts: it is allowed" 0 check --policy "$P" --workspace "$R" open --write "$HOME/.ssh/known_hosts"
expect "an approved write of ~/.ssh/known_hosts: executing in ~/.ssh is still denied" 4 check --policy "$P" --workspace "$R" open --exec "$HOME/.ssh/rc"
lacks_file "no allow rule widened over ~/.ssh" "$P" 'path: "~/.ssh/**"'
lacks_file "no allow rule widened over ~/.aws" "$P" 'path: "~/.aws/**"'
expect "an approved write of ~/.aws/config: ~/.aws/credentials is still denied" 4 check --policy "$P" --workspace "$R" open --read "$HOME/.aws/credentials"
has_file "a home directory nothing left out covers is still widened" "$P" 'path: "~/.cache/**"'
# only the read approved: ~/.ssh stays denied for writes as it was
{
	start $S "$R"
	ev $S "\"file\":\"$HOME/.ssh/known_hosts\",\"action\":\"read\",\"decision\":\"allow\",\"decided_by\":\"human\""
} >"$TMP/yes3.jsonl"
roundtrip yes3 "$TMP/yes3.jsonl" "$R"
P="$TMP/yes3.suggested.yaml"
has_file "a read allowed: ~/.ssh is kept for writes and exec" "$P" 'path: "~/.ssh", action: [write, exec] }'
expect "a read allowed: ~/.ssh/id_rsa is no allowed read" 4 check --policy "$P" --workspace "$R" open --read "$HOME/.ssh/id_rsa"
expect "a read allowed: ~/.ssh/known_hosts.bak is no allowed read" 4 check --policy "$P" --workspace "$R" open --read "$HOME/.ssh/known_hosts.bak"
expect "a read allowed: writing ~/.ssh/known_hosts is still denied" 4 check --policy "$P" --workspace "$R" open --write "$HOME/.ssh/known_hosts"
# a learning run: what only a default allowed (the recorded policy's, no rule; --default-allow's) leaves no
# carried-over deny rule out; a person's yes or an explicit rule's does
K="$TMP/lrn"
mkdir -p "$K"
{
	start $S "$K"
	ev $S "\"file\":\"$K/.env\",\"action\":\"read\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$K/.env\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$K/.env\",\"action\":\"read\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"command\":\"/bin/rm\",\"args\":[\"-rf\",\"/home/someone\"],\"decision\":\"allow\",\"decided_by\":\"default\""
	ev $S "\"file\":\"$K/notes\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$HOME/.ssh/known_hosts\",\"action\":\"read\",\"decision\":\"allow\",\"decided_by\":\"policy\",\"rule\":\"$K/learn.yaml:4\""
	ev $S "\"file\":\"$K/.env.local\",\"action\":\"read\",\"decision\":\"allow\",\"decided_by\":\"human\""
} >"$TMP/lrn.jsonl"
roundtrip lrn "$TMP/lrn.jsonl" "$K"
P="$TMP/lrn.suggested.yaml"
E="$TMP/lrn.suggest.err"
expect "learning run: .env read only by the default stays denied" 4 check --policy "$P" --workspace "$K" open --read "$K/.env"
expect "learning run: .env written only by the default stays denied" 4 check --policy "$P" --workspace "$K" open --write "$K/.env"
expect "learning run: rm -rf /home/someone by --default-allow stays denied" 4 check --policy "$P" --workspace "$K" exec /bin/rm -rf /home/someone
expect "learning run: rm -rf / stays denied" 4 check --policy "$P" --workspace "$K" exec rm -rf /
expect "learning run: an ordinary write is allowed" 0 check --policy "$P" --workspace "$K" open --write "$K/notes"
expect "learning run: a read an explicit rule allowed leaves ~/.ssh out" 0 check --policy "$P" --workspace "$K" open --read "$HOME/.ssh/known_hosts"
expect "learning run: a read a human allowed leaves .env.* out" 0 check --policy "$P" --workspace "$K" open --read "$K/.env.local"
has_file "learning run: a comment at the kept rule says why" "$P" \
	"$(printf '  # the learning run did this (allowed only by its default); the built-in deny is kept:\n  #   read %s/.env (line 2) and 1 more\n  - file: { path: ".env", action: [read, write] }' "$K")"
lacks_file "learning run: the kept action gets no allow rule of its own" "$P" 'path: "./.env", action: write'
n_kept=$(grep -c 'this deny rule is kept' "$E")
if [ "$n_kept" = 2 ]; then pass "learning run: stderr says it once per kept rule"; else fail "learning run: stderr says it once per kept rule" "$(cat "$E")"; fi
has_file "learning run: stderr names the kept .env rule" "$E" \
	"this deny rule is kept: it denies read $K/.env, which the log recorded as allowed only by its policy's default ($TMP/lrn.jsonl:2, and more), not by a person or a rule"
has_file "learning run: the self-check lists what it kept denied" "$E" "lrn.jsonl:2: kept denied: read $K/.env,"
has_file "learning run: ... the --default-allow one too" "$E" \
	"lrn.jsonl:5: kept denied: exec /bin/rm -rf /home/someone, which the log recorded as allowed only by --default-allow;"
has_file "learning run: ... and counts them apart" "$E" "3 actions kept denied (above)"
lacks_file "learning run: kept denied is no mismatch" "$E" "otherwise than the log"
run suggest "$TMP/lrn.jsonl" -o "$TMP/lrn-o.yaml"
if [ "$RC" = 0 ] && [ ! -s "$TMP/out" ] && cmp -s "$TMP/lrn-o.yaml" "$P"; then
	pass "-o FILE is --output FILE; exit 0 with actions kept denied"
else
	fail "-o FILE is --output FILE; exit 0 with actions kept denied" "$(details)"
fi

# the kernel layer is never widened: writes outside the workspace keep their allow rules, no sandbox.write
{
	start $S "$K"
	ev $S "\"file\":\"$HOME/.config/tool/state\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"/opt/data/x\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"human\""
	ev $S "\"file\":\"$K/notes\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"/tmp/t\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
} >"$TMP/kl.jsonl"
roundtrip kl "$TMP/kl.jsonl" "$K"
P="$TMP/kl.suggested.yaml"
if sed -n '/^sandbox:/,$p' "$P" | grep -qE '^  (write|read):'; then fail "kernel layer: no sandbox.write or sandbox.read" "$(cat "$P")"; else pass "kernel layer: no sandbox.write or sandbox.read"; fi
has_file "kernel layer: the home directory one is listed in a comment" "$P" "  #   ~/.config/tool   (write $HOME/.config/tool/state, line 2)"
has_file "kernel layer: the other one too" "$P" "  #   /opt/data   (write /opt/data/x, line 3)"
lacks_file "kernel layer: not the workspace, not /tmp" "$P" "  #   /tmp"
has_file "kernel layer: widening it is the user's call" "$P" "Widening the kernel"
has_file "kernel layer: stderr says so" "$TMP/kl.suggest.err" "would need 2 directories in sandbox.write; not added (listed in a comment): widening the kernel layer is your call"
expect "kernel layer: the allow rule for such a write stays" 0 check --policy "$P" --workspace "$K" open --write "$HOME/.config/tool/state"

# a policy that no longer loads is said on stderr, the built-in default's rules still come along
{
	start $S "$C" "$TMP/gone.yaml"
	ev $S "\"file\":\"$C/notes\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
} >"$TMP/gone.jsonl"
run suggest "$TMP/gone.jsonl"
has "a session policy that does not load now is said on stderr" err \
	"session $S ran under the policy $TMP/gone.yaml, which does not load now"
has "the built-in default's rules come along all the same" out 'reason: "SSH keys and configuration"'
if [ "$RC" = 0 ]; then pass "a missing session policy is no failure"; else fail "a missing session policy is no failure" "$(details)"; fi

# ---- names that are not UTF-8: the log has U+FFFD ----------------------------------
U=$(printf '\357\277\275')
X="$TMP/x"
mkdir -p "$X/dir"
{
	start $S "$X"
	ev $S "\"file\":\"$X/a[1]$U$U\",\"action\":\"read\",\"decision\":\"deny\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$X/dir/k${U}y\",\"action\":\"write\",\"decision\":\"ask\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$X/dir/ok\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$X/dir/kxy/z\",\"action\":\"read\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$X/p${U}q\",\"action\":\"read\",\"decision\":\"deny\",\"decided_by\":\"human\""
} >"$TMP/fffd.jsonl"
roundtrip fffd "$TMP/fffd.jsonl" "$X"
P="$TMP/fffd.suggested.yaml"
has_file "U+FFFD: a run of them is one *, other glob specials quoted" "$P" 'path: "./a\\[1]*", action: read'
has_file "U+FFFD: an ask rule is a glob too" "$P" 'path: "./dir/k*y", action: write'
expect "U+FFFD: the real name, with bytes that are not UTF-8, is denied" 4 \
	check --policy "$P" --workspace "$X" open --read "$X/a[1]$(printf '\377\376')"
has_file "U+FFFD: in the middle of a name" "$P" 'path: "./p*q", action: read'
expect "U+FFFD: the * does not cross /" 0 check --policy "$P" --workspace "$X" open --read "$X/pz/zq"
expect "U+FFFD: the ask glob asks about the real name" 3 \
	check --policy "$P" --workspace "$X" open --write "$X/dir/k$(printf '\377')y"
# an allowed write of such a name: no allow rule names it; left to the default (so the self-check fails)
{
	start $S "$X"
	ev $S "\"file\":\"$X/d$U/new\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$X/dir/sec\",\"action\":\"write\",\"decision\":\"deny\",\"decided_by\":\"policy\""
	ev $S "\"file\":\"$X/dir/ok\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\""
} >"$TMP/fffd2.jsonl"
run suggest "$TMP/fffd2.jsonl" --output "$TMP/fffd2.yaml"
has "U+FFFD: an allowed name no rule can name is said on stderr" err \
	"fffd2.jsonl:2: the path's name holds bytes the log could not record (U+FFFD): no allow rule can name it exactly; left to the default"
has_file "U+FFFD: ... and in a comment" "$TMP/fffd2.yaml" "#   write '$X/d$U/new' (line 2)"
lacks_file "U+FFFD: no rule holds U+FFFD" "$TMP/fffd2.yaml" "$U\""
if [ "$RC" = 1 ] && [ -s "$TMP/fffd2.yaml" ]; then
	pass "U+FFFD: left to the default, it is decided otherwise: exit 1, the policy written"
else
	fail "U+FFFD: left to the default, it is decided otherwise: exit 1, the policy written" "$(details)"
fi

# ---- the self-check: suggest fails when its policy decides an event otherwise --------
{
	start $S "$W"
	ev $S "\"command\":\"/bin/sh\",\"args\":[\"-c\",\"echo hi\"],\"decision\":\"allow\",\"decided_by\":\"human\""
	ev $S "\"command\":\"/bin/sh\",\"args\":[\"-c echo\",\"hi\"],\"decision\":\"deny\",\"decided_by\":\"human\""
	ev $S "\"command\":\"/usr/bin/make\",\"args\":[\"all\"],\"decision\":\"allow\",\"decided_by\":\"policy\""
} >"$TMP/clash.jsonl"
run suggest "$TMP/clash.jsonl" --output "$TMP/clash.yaml"
if [ "$RC" = 1 ]; then pass "a policy that decides an event otherwise: exit 1"; else fail "a policy that decides an event otherwise: exit 1" "$(details)"; fi
has "the mismatches are listed on stderr" err "clash.jsonl:2: the suggested policy decides ask, the log allow"
has "the mismatches are listed on stderr: the other one" err "clash.jsonl:3: the suggested policy decides ask, the log deny"
has "the count is said on stderr" err "the suggested policy decides 2 actions otherwise than the log"
if [ -s "$TMP/clash.yaml" ] && grep -q 'command: "make"' "$TMP/clash.yaml"; then
	pass "the policy is written all the same"
else
	fail "the policy is written all the same" "$(cat "$TMP/clash.yaml" 2>&1)"
fi

# ---- malformed lines, empty logs --------------------------------------------------
{
	start $S "$W"
	echo '{"id": "broken", "timestamp":'
	ev $S "\"command\":\"/usr/bin/ls\",\"args\":[],\"decision\":\"maybe\""
	ev $S "\"command\":\"/usr/bin/ls\",\"args\":\"-l\",\"decision\":\"allow\""
	ev $S "\"file\":\"relative/path\",\"action\":\"write\",\"decision\":\"allow\""
	ev $S "\"file\":\"$W/x\",\"action\":\"chew\",\"decision\":\"allow\""
	ev $S "\"network_dst\":\"no-port\",\"decision\":\"allow\""
	echo '[1, 2]'
	ev $S "\"command\":\"/usr/bin/make\",\"args\":[\"all\"],\"decision\":\"allow\",\"decided_by\":\"policy\""
	echo ''
} >"$TMP/bad.jsonl"
run suggest "$TMP/bad.jsonl"
if [ "$RC" = 0 ]; then pass "malformed lines: suggest still succeeds"; else fail "malformed lines: suggest still succeeds" "$(details)"; fi
has "a line that is not JSON: LOG:LINE: what is wrong" err "$TMP/bad.jsonl:2: not a JSON object, skipped"
has "a bad decision is named" err "$TMP/bad.jsonl:3: the decision is 'maybe', not allow, deny or ask, skipped"
has "args that are not a list" err "$TMP/bad.jsonl:4: 'args' is not a list, skipped"
has "a relative path" err "$TMP/bad.jsonl:5: the path 'relative/path' is not absolute, skipped"
has "an unknown file action" err "$TMP/bad.jsonl:6: the file action is 'chew', not read, write or exec, skipped"
has "a destination without a port" err "$TMP/bad.jsonl:7: the destination 'no-port' is not HOST:PORT, skipped"
has "a JSON value that is not an object" err "$TMP/bad.jsonl:8: not a JSON object, skipped"
has "the good events after bad lines are kept" out 'args: "all"'
n_err=$(wc -l <"$TMP/err" | tr -d ' ')
if [ "$n_err" = 7 ]; then pass "one message per bad line, none for the blank one"; else fail "one message per bad line, none for the blank one" "$(details)"; fi

start $S "$W" >"$TMP/none.jsonl"
expect "a log with no actions exits 2" 2 suggest "$TMP/none.jsonl"
has "a log with no actions says so" err "no events to learn from"
: >"$TMP/empty.jsonl"
expect "an empty log exits 2" 2 suggest "$TMP/empty.jsonl"
echo 'not json' >"$TMP/junk.jsonl"
expect "a log of nothing but junk exits 2" 2 suggest "$TMP/junk.jsonl"

# ---- --session, stdin, --output ----------------------------------------------------
T=bbbbbbbb22222222
{
	start $S "$W"
	ev $S "\"command\":\"/usr/bin/make\",\"args\":[\"one\"],\"decision\":\"allow\",\"decided_by\":\"policy\""
	start $T "$TMP/other"
	ev $T "\"command\":\"/usr/bin/cmake\",\"args\":[\"two\"],\"decision\":\"deny\",\"decided_by\":\"policy\""
	ev $S "\"command\":\"/usr/bin/make\",\"args\":[\"three\"],\"decision\":\"allow\",\"decided_by\":\"policy\""
} >"$TMP/two.jsonl"
run suggest "$TMP/two.jsonl" --session bbbb
has "--session: the session's rules" out 'command: "cmake"'
lacks "--session: not the other session's" out 'command: "make"'
has "--session: the header names it" out "# session $T"
lacks "--session: the header leaves the other out" out "# session $S"
run suggest "$TMP/two.jsonl" --session=aaaaaaaa
has "--session=ID: the session's rules" out 'command: "make"'
lacks "--session=ID: not the other session's" out 'cmake'
run suggest "$TMP/two.jsonl"
has "without --session: every session" out "# session $T"
has "without --session: the first session too" out "# session $S"
has "different workspaces: paths stay absolute" out "(none known: paths stay absolute)"
expect "--session that matches nothing exits 2" 2 suggest "$TMP/two.jsonl" --session cccc
has "--session that matches nothing says so" err "no matching events"
"$AIRLOCK" suggest - <"$TMP/two.jsonl" >"$TMP/out" 2>"$TMP/err"
RC=$?
if [ "$RC" = 0 ] && grep -q 'cmake' "$TMP/out"; then pass "suggest - reads standard input"; else fail "suggest - reads standard input" "$(details)"; fi
run suggest "$TMP/two.jsonl" --output "$TMP/o.yaml"
if [ "$RC" = 0 ] && [ ! -s "$TMP/out" ] && grep -q cmake "$TMP/o.yaml"; then
	pass "--output writes the file, not stdout"
else
	fail "--output writes the file, not stdout" "$(details)"
fi
expect "-o without FILE exits 2" 2 suggest "$TMP/two.jsonl" -o
expect "--output into a missing directory exits 1" 1 suggest "$TMP/two.jsonl" --output "$TMP/nodir/o.yaml"

# ---- the launcher's own events on files, and the default's reason ---------------------
# kept_aside / copy_applied name a file but decide nothing; a decision no rule made carries the
# reason "no rule matches: ..." (events_default_reason), which is no rule's reason to copy.
S5=eeeeeeee55555555
W5=$TMP/ws5
mkdir -p "$W5"
{
	start $S5 "$W5"
	printf '{"id":"k1","timestamp":"2026-11-30T01:00:01.000Z","session_id":"%s","source":"launcher","pid":1,"event":"kept_aside","file":"%s/.git/hooks/pre-commit","kept":"/k/pre-commit","message":"kept aside"}\n' $S5 "$W5"
	ev $S5 "\"file\":\"/opt/elsewhere/x\",\"action\":\"write\",\"decision\":\"deny\",\"decided_by\":\"policy\",\"reason\":\"no rule matches: the policy's default for write decided\""
	ev $S5 "\"command\":\"/usr/bin/make\",\"args\":[\"test\"],\"decision\":\"allow\",\"decided_by\":\"policy\""
} >"$TMP/launcher-events.jsonl"
run suggest "$TMP/launcher-events.jsonl"
if [ "$RC" = 0 ] && ! grep -q "decision is missing" "$TMP/err"; then
	pass "a kept_aside event is the launcher's: no complaint about a missing decision"
else
	fail "a kept_aside event is the launcher's: no complaint about a missing decision" "$(details)"
fi
has "the write outside is still denied" out 'path: "/opt/elsewhere/x", action: write'
lacks "the default's reason is not copied as a rule's reason" out "no rule matches"

# ---- help and usage errors ------------------------------------------------------------
expect "suggest --help exits 0" 0 suggest --help
expect "help suggest exits 0" 0 help suggest
has "help describes the learning run: --trace" out "--trace"
has "help describes the learning run: default allow" out "default: allow"
has "help documents the exit statuses" out "Exit status: 0 success"
has "help documents exit 1 for a policy that decides an event otherwise" out "1 the policy was written but decides some event otherwise"
expect "suggest without LOG exits 2" 2 suggest
has "suggest without LOG says so" err "airlock: suggest: no LOG to read"
expect "an unknown option exits 2" 2 suggest "$TMP/two.jsonl" --bogus
has "an unknown option is named" err "unknown option: --bogus"
expect "two LOGs exit 2" 2 suggest "$TMP/two.jsonl" "$TMP/two.jsonl"
expect "--session without a value exits 2" 2 suggest "$TMP/two.jsonl" --session
expect "--workspace that is not absolute exits 2" 2 suggest "$TMP/two.jsonl" --workspace rel
expect "a missing LOG exits 1" 1 suggest "$TMP/nosuch.jsonl"
has "a missing LOG is named" err "cannot open $TMP/nosuch.jsonl"

tap_plan_end tests
