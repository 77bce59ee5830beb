#!/bin/bash
# run.sh — TAP tests of `airlock serve` and `airlock env`: unrelated process trees join one
# session through the shim (LD_PRELOAD + AIRLOCK_DIR), are decided and logged, an ask is
# answered on the control socket, a pid namespace's pids are logged beside the host's, and a
# process that joins once the session has ended is denied everything and told why.
# Usage: tests/serve/run.sh BUILD   (BUILD holds airlock and airlock-preload.so)
# Traffic stays on loopback.  Exits 1 if any test fails.
set -u

if [ $# -ne 1 ] || [ ! -x "$1/airlock" ]; then
	echo "usage: $0 BUILD" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
AIRLOCK=$BUILD/airlock
SHIM=$BUILD/airlock-preload.so
HERE=$(cd "$(dirname "$0")" && pwd)
LOGQ="$HERE/../run/logq.py"
CTLCLIENT="$HERE/../run/ctlclient.py"

. "$HERE/../lib/tap.sh"
pass() { tap_ok "$1"; }
fail() { tap_not_ok "$@"; }
skip() { tap_skip "$@"; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/airlock-serve.XXXXXX")
TMP=$(cd "$TMP" && pwd -P)
SERVE_PID="" LISTEN_PID="" CTL_PID=""
cleanup() {
	for p in $SERVE_PID $LISTEN_PID $CTL_PID; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
export HOME="$TMP/home" LC_ALL=C
unset XDG_CONFIG_HOME LD_PRELOAD AIRLOCK_DIR
W="$TMP/ws" L="$TMP/audit.jsonl" D="$TMP/join"
mkdir -p "$HOME" "$W/sub"
echo "SECRET=1" >"$W/.env"
echo "SECRET=2" >"$W/sub/.env"
echo hello >"$W/ok.txt"
git -C "$W" init -q 2>/dev/null && git -C "$W" -c user.email=t@t -c user.name=t commit -q --allow-empty -m init

# ok DESC COND...: the log has a line matching every COND (logq.py find)
ok() {
	desc=$1
	shift
	if python3 "$LOGQ" "$L" find --wait 3 "$@" >/dev/null; then
		pass "$desc"
	else
		fail "$desc" "no log line with: $*" "$(tail -n 5 "$L" 2>/dev/null)"
	fi
}

# ---- a listener on loopback, outside every session: it records what it accepts ----------------
cat >"$TMP/listen.py" <<'PY'
import socket, sys
out = sys.argv[1]
socks = []
for _ in range(2):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    socks.append(s)
with open(out + ".ports", "w") as f:
    f.write(" ".join(str(s.getsockname()[1]) for s in socks) + "\n")
import select
while True:
    r, _, _ = select.select(socks, [], [])
    for s in r:
        c, _ = s.accept()
        with open(out, "a") as f:
            f.write("accepted %d\n" % s.getsockname()[1])
        c.close()
PY
cat >"$TMP/connect.py" <<'PY'
import socket, sys
s = socket.socket()
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
    print("connected")
except OSError as e:
    print("refused errno %d" % e.errno)
PY
python3 "$TMP/listen.py" "$TMP/accepted" &
LISTEN_PID=$!
for _ in $(seq 50); do [ -s "$TMP/accepted.ports" ] && break; sleep 0.1; done
read -r PORT1 PORT2 <"$TMP/accepted.ports"

# ---- bad input: refused, said, nothing left behind -----------------------------------------------
"$AIRLOCK" serve --headless ls >"$TMP/bad.out" 2>&1
if [ $? = 2 ] && grep -q "serve runs no program" "$TMP/bad.out"; then
	pass "serve PROGRAM: a usage error (serve runs no program)"
else
	fail "serve PROGRAM: a usage error" "$(cat "$TMP/bad.out")"
fi
mkdir -p "$TMP/taken"
"$AIRLOCK" serve --headless --log "$TMP/bad.jsonl" --dir "$TMP/taken" </dev/null >"$TMP/bad.out" 2>&1
if [ $? = 125 ] && grep -q "exists and is not a link serve made" "$TMP/bad.out" && [ -d "$TMP/taken" ] && [ ! -L "$TMP/taken" ]; then
	pass "serve --dir over a directory of its own: refused (125), the directory untouched"
else
	fail "serve --dir over a directory of its own: refused" "$(cat "$TMP/bad.out")"
fi
"$AIRLOCK" env --format xml >"$TMP/bad.out" 2>&1
if [ $? = 2 ] && grep -q "unknown --format 'xml'" "$TMP/bad.out"; then
	pass "env --format xml: a usage error"
else
	fail "env --format xml: a usage error" "$(cat "$TMP/bad.out")"
fi

# ---- the session ---------------------------------------------------------------------------------
(cd "$W" && exec "$AIRLOCK" serve --headless --log "$L" --dir "$D" </dev/null >"$TMP/serve.out" 2>"$TMP/serve.err") &
SERVE_PID=$!
for _ in $(seq 100); do "$AIRLOCK" env --serve "$D" >"$TMP/env.out" 2>"$TMP/env.err" && break; sleep 0.1; done
if grep -q "^export LD_PRELOAD='$SHIM'; export AIRLOCK_DIR='$D'\$" "$TMP/env.out"; then
	pass "env --serve DIR prints the shell's export line (the shim, the --dir path)"
else
	fail "env --serve DIR prints the shell's export line" "$(cat "$TMP/env.out" "$TMP/env.err" "$TMP/serve.err")"
	exit 1
fi
if [ -L "$D" ] && [ -S "$D/channel" ] && [ -f "$D/policy.img" ]; then
	pass "--dir: a symlink to the session directory (channel socket, policy.img)"
else
	fail "--dir: a symlink to the session directory" "$(ls -la "$D" "$D/" 2>&1)"
fi
if grep -q "export AIRLOCK_DIR=$D" "$TMP/serve.err" && grep -q "export LD_PRELOAD=$SHIM" "$TMP/serve.err"; then
	pass "serve says on stderr how a process tree joins it"
else
	fail "serve says on stderr how a process tree joins it" "$(cat "$TMP/serve.err")"
fi
ok "session_start: sandbox none, the message says serve" event=session_start sandbox=none "message~airlock serve"
SESSION=$(readlink "$D")
SESSION=${SESSION##*/}
"$AIRLOCK" ps >"$TMP/ps.out" 2>&1
if grep -q "^$SESSION .*(airlock serve --dir $D)" "$TMP/ps.out"; then
	pass "airlock ps lists the serve session"
else
	fail "airlock ps lists the serve session" "$(cat "$TMP/ps.out")"
fi
"$AIRLOCK" env --serve "$SESSION" --format dockerfile >"$TMP/docker.out" 2>&1
if [ "$(cat "$TMP/docker.out")" = "ENV LD_PRELOAD=\"$SHIM\" AIRLOCK_DIR=\"$D\"" ]; then
	pass "env --serve SESSION --format dockerfile: one ENV line"
else
	fail "env --serve SESSION --format dockerfile: one ENV line" "$(cat "$TMP/docker.out")"
fi

# ---- two unrelated process trees at once, each from its own shell: eval "$(airlock env)" ----------
cat >"$TMP/tree.sh" <<'SH'
#!/bin/bash
# tree.sh NAME: joins the session, then its children open, exec and connect
name=$1
# the shell that evals is not under the shim (it started before): a new one is, so that the
# programs it starts are decided at their exec too
if [ -z "${AIRLOCK_DIR:-}" ]; then
	eval "$("$AIRLOCK" env --serve "$D")" || exit 9
	exec bash "$0" "$@"
fi
cd "$W" || exit 9
cat .env >"$TMP/$name.cat.out" 2>"$TMP/$name.cat.err"
echo "cat=$?"
git status --short >"$TMP/$name.git.out" 2>&1
echo "git=$?"
echo "connect=$(python3 "$TMP/connect.py" "$PORT1")"
# a child of a child of a child: the shim re-injects itself
sh -c 'sh -c "cat sub/.env"' >/dev/null 2>"$TMP/$name.grand.err"
echo "grand=$?"
SH
export AIRLOCK D W TMP PORT1
setsid bash "$TMP/tree.sh" one >"$TMP/one.out" 2>&1 &
T1=$!
setsid bash "$TMP/tree.sh" two >"$TMP/two.out" 2>&1 &
T2=$!
wait $T1 $T2
for t in one two; do
	if grep -qx "cat=1" "$TMP/$t.out" && grep -q "Permission denied" "$TMP/$t.cat.err" && ! [ -s "$TMP/$t.cat.out" ]; then
		pass "tree $t: cat .env denied (EACCES), nothing read"
	else
		fail "tree $t: cat .env denied (EACCES), nothing read" "$(cat "$TMP/$t.out" "$TMP/$t.cat.err")"
	fi
	if grep -qx "git=0" "$TMP/$t.out"; then
		pass "tree $t: git status allowed"
	else
		fail "tree $t: git status allowed" "$(cat "$TMP/$t.out" "$TMP/$t.git.out")"
	fi
	if grep -q "^connect=refused errno 111" "$TMP/$t.out"; then
		pass "tree $t: python3 connect to 127.0.0.1:$PORT1: ask, headless: denied (ECONNREFUSED, as the shim refuses a connect)"
	else
		fail "tree $t: python3 connect: headless deny" "$(cat "$TMP/$t.out")"
	fi
	if grep -qx "grand=1" "$TMP/$t.out" && grep -q "Permission denied" "$TMP/$t.grand.err"; then
		pass "tree $t: a grandchild's cat sub/.env denied (the shim re-injected)"
	else
		fail "tree $t: a grandchild's cat sub/.env denied" "$(cat "$TMP/$t.out" "$TMP/$t.grand.err")"
	fi
done
if [ ! -s "$TMP/accepted" ]; then
	pass "the listener accepted no connection from the denied connects"
else
	fail "the listener accepted no connection from the denied connects" "$(cat "$TMP/accepted")"
fi
ok "logged: .env read denied by a rule" source=shim decision=deny "file=$W/.env" action=read "rule~:"
ok "logged: the grandchild's sub/.env read denied" source=shim decision=deny "file=$W/sub/.env"
ok "logged: git status allowed" source=shim decision=allow "command\$/git" "args~status"
ok "logged: the connect asked, denied by the headless default" source=shim "network_dst=127.0.0.1:$PORT1" decision=deny decided_by=default
n=$(python3 "$LOGQ" "$L" count source=shim decision=deny "file=$W/.env")
if [ "$n" = 2 ]; then
	pass "both trees' .env denials are in the one session's log"
else
	fail "both trees' .env denials are in the one session's log" "count $n"
fi
sids=$(python3 -c 'import json,sys; print(len({json.loads(l)["session_id"] for l in open(sys.argv[1]) if l.strip()}))' "$L")
if [ "$sids" = 1 ]; then pass "every line has the serve session's id"; else fail "every line has the serve session's id" "$sids ids"; fi

# ---- an ask answered on the control socket ---------------------------------------------------------
mkdir -p "$TMP/ctl"
ln -s "$(dirname "$(readlink "$D")")/$SESSION.control" "$TMP/ctl/$SESSION.control"
python3 "$CTLCLIENT" "$TMP/ctl" attach,ask:allow "$TMP/ctl.out" 60 2>"$TMP/ctl.err" &
CTL_PID=$!
for _ in $(seq 100); do grep -q '"attached": 1' "$TMP/ctl.out" 2>/dev/null && break; sleep 0.05; done
res=$(setsid bash -c 'eval "$("$AIRLOCK" env --serve "$D")"; python3 "$TMP/connect.py" "$0"' "$PORT2" 2>&1)
if [ "$res" = connected ] && grep -q "accepted $PORT2" "$TMP/accepted"; then
	pass "an ask answered allow on the control socket: python3's connect goes through"
else
	fail "an ask answered allow on the control socket" "$res" "$(cat "$TMP/ctl.out" "$TMP/ctl.err")"
fi
ok "logged: the connect allowed by a human" source=shim "network_dst=127.0.0.1:$PORT2" decision=allow decided_by=human

# ---- a pid namespace (a container's): both pids logged ------------------------------------------------
if unshare --pid --fork true 2>/dev/null; then
	(eval "$("$AIRLOCK" env --serve "$D")"; cd "$W" && unshare --pid --fork sh -c 'cat ok.txt sub/.env; true' >/dev/null 2>&1)
	line=$(python3 "$LOGQ" "$L" find --wait 3 source=shim "file=$W/sub/.env" ns_pid=2 2>/dev/null)
	if [ -n "$line" ] && python3 -c 'import json,sys; o=json.loads(sys.argv[1]); sys.exit(0 if o["pid"] != o["ns_pid"] and o["pid"] > 2 else 1)' "$line"; then
		pass "pid namespace: the host's pid and the process's own (ns_pid 2) both logged"
	else
		fail "pid namespace: both pids logged" "$line" "$(tail -n 3 "$L")"
	fi
else
	skip "pid namespace: both pids logged" "unshare --pid does not work here (needs root or user namespaces)"
fi

# ---- the end: SIGTERM ------------------------------------------------------------------------------
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
rc=$?
SERVE_PID=""
if [ "$rc" = 0 ]; then pass "SIGTERM ends serve with status 0"; else fail "SIGTERM ends serve with status 0" "exit $rc" "$(cat "$TMP/serve.err")"; fi
ok "session_end logged" event=session_end exit_status=0
if python3 "$LOGQ" "$L" valid >"$TMP/valid.out" 2>&1; then
	pass "every line of the log is valid JSON with its fields"
else
	fail "every line of the log is valid JSON with its fields" "$(cat "$TMP/valid.out")"
fi
if [ "$(tail -n 1 "$L" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("event"))')" = session_end ]; then
	pass "session_end is the last line"
else
	fail "session_end is the last line" "$(tail -n 2 "$L")"
fi
if [ ! -e "$D" ] && [ ! -L "$D" ] && [ ! -e "$(dirname "$(readlink -m "$TMP/ctl/$SESSION.control")")/$SESSION" ]; then
	pass "the --dir link and the session directory are gone"
else
	fail "the --dir link and the session directory are gone" "$(ls -la "$D" 2>&1)"
fi
wait "$CTL_PID" 2>/dev/null
CTL_PID=""

# ---- joining a session that has ended: fail closed, said once ------------------------------------
(cd "$W" && LD_PRELOAD=$SHIM AIRLOCK_DIR=$D sh -c 'cat ok.txt; cat ok.txt; echo rc=$?' >"$TMP/late.out" 2>"$TMP/late.err")
said=$(grep -c "airlock-preload: no policy at AIRLOCK_DIR=$D" "$TMP/late.err")
if grep -qx "rc=126" "$TMP/late.out" && ! grep -q hello "$TMP/late.out" && [ "$said" = 1 ]; then
	pass "a process joining an ended serve: exec denied (126), nothing read, said once on stderr"
else
	fail "a process joining an ended serve: fail closed, said once" "said $said times" "$(cat "$TMP/late.out" "$TMP/late.err")"
fi
(cd "$W" && LD_PRELOAD=$SHIM AIRLOCK_DIR=$D python3 -c 'print(open("ok.txt").read())' >"$TMP/late2.out" 2>"$TMP/late2.err")
rc=$?
said=$(grep -c "airlock-preload: no policy at AIRLOCK_DIR=$D.*the session has ended" "$TMP/late2.err")
if [ "$rc" != 0 ] && ! grep -q hello "$TMP/late2.out" && [ "$said" = 1 ]; then
	pass "python3 joining an ended serve: fails closed (exit $rc, nothing read), said once"
else
	fail "python3 joining an ended serve: fails closed, said once" "exit $rc, said $said times" "$(cat "$TMP/late2.out" "$TMP/late2.err")"
fi
"$AIRLOCK" env --serve "$D" >"$TMP/env2.out" 2>&1
if [ $? = 1 ] && grep -q "no running session at $D" "$TMP/env2.out"; then
	pass "env --serve DIR of an ended session: exit 1, says so"
else
	fail "env --serve DIR of an ended session: exit 1, says so" "$(cat "$TMP/env2.out")"
fi

tap_plan_end tests
