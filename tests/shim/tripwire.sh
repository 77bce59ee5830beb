#!/bin/sh
# tripwire.sh — shim cases: the tripwire mode, no launcher (sourced by run.sh; ONLY=tripwire).
#
# `airlock compile` writes the default policy's image; programs run with LD_PRELOAD, AIRLOCK_IMAGE
# and AIRLOCK_LOG (no AIRLOCK_DIR, no channel server): denies hold in-process (EACCES, the secret
# not printed), asks get the headless answer (deny, decided_by default: the loopback listener
# accepts nothing), and every event is one whole JSON line of the audit log's format in
# AIRLOCK_LOG, checked with Python's json module: 100 concurrent processes lose no line and mix
# none; a log that cannot be written refuses the actions it would record, and stderr says so.
# `airlock log` reads the result.

# tw_run LOG [VAR=VALUE...] PROGRAM ARGS...: PROGRAM under the shim in the tripwire mode
# (image $TW/policy.img, log LOG), from $W with a clean environment; sets RC, OUT, ERR.
tw_run()
{
	_log=$1
	shift
	(
		cd "$W" || exit 125
		exec timeout -k 5 "$CASE_TIMEOUT" env -i \
			PATH="$W/bin:/usr/bin:/bin" HOME="$H" TMPDIR="$T/tmp" LANG=C.UTF-8 \
			PYTHONDONTWRITEBYTECODE=1 NODE_NO_WARNINGS=1 \
			AIRLOCK_IMAGE="$TW/policy.img" AIRLOCK_LOG="$_log" LD_PRELOAD="$SHIM" "$@"
	) >"$T/case.out" 2>"$T/case.err" </dev/null
	RC=$?
	OUT=$(cat "$T/case.out")
	ERR=$(cat "$T/case.err")
}

# tw_lines LOG: every line of LOG is one JSON object with the audit log's header fields (else
# _fail says which); prints the number of lines.
tw_lines()
{
	"$PY" - "$1" <<'EOF'
import json, sys
n = 0
with open(sys.argv[1], "rb") as f:
    for raw in f:
        n += 1
        if not raw.endswith(b"\n") or len(raw) > 4096:
            print("line %d: not a whole line of at most PIPE_BUF bytes (%d)" % (n, len(raw)))
            sys.exit(1)
        try:
            ev = json.loads(raw.decode("utf-8"))
        except Exception as e:
            print("line %d: not JSON: %s: %r" % (n, e, raw[:200]))
            sys.exit(1)
        for k in ("id", "timestamp", "session_id", "source", "pid", "decision", "decided_by"):
            if k not in ev:
                print("line %d: no %s" % (n, k))
                sys.exit(1)
print(n)
EOF
}

# tw_find LOG KEY=VALUE...: true when a line of LOG has every field equal (strings compared as
# they are, others as JSON: args=["hi"], response_time_ms=0); KEY~VALUE: the field holds VALUE.
tw_find()
{
	"$PY" - "$@" <<'EOF'
import json, sys
path, conds = sys.argv[1], sys.argv[2:]
def ok(ev, c):
    sub = "~" in c and ("=" not in c or c.index("~") < c.index("="))
    k, v = c.split("~" if sub else "=", 1)
    if k not in ev:
        return False
    got = ev[k] if isinstance(ev[k], str) else json.dumps(ev[k], separators=(",", ":"))
    return v in got if sub else got == v
for line in open(path, encoding="utf-8"):
    ev = json.loads(line)
    if all(ok(ev, c) for c in conds):
        sys.exit(0)
sys.exit(1)
EOF
}

# tw_expect LOG KEY=VALUE...: the current check fails unless tw_find finds such a line.
tw_expect()
{
	_l=$1
	shift
	tw_find "$_l" "$@" || _fail "no line of $(basename "$_l") with $*: $(tail -c 1500 "$_l")"
}

tw_compile_cases()
{
	check "tripwire: airlock compile writes the default policy's image, read-only, and says so"
	RC=0
	OUT=$(cd "$W" && HOME="$H" "$AIRLOCK" compile "$REPO/policy/default_policy.yaml" \
		-o "$TW/policy.img" 2>&1) || RC=$?
	expect_rc 0
	expect_out_has "$TW/policy.img: "
	expect_out_has "workspace $W)"
	[ "$(stat -c %a "$TW/policy.img" 2>/dev/null)" = 444 ] ||
		_fail "image mode $(stat -c %a "$TW/policy.img" 2>&1), expected 444"
	ls "$TW"/policy.img.* >/dev/null 2>&1 && _fail "a temporary file was left: $(ls "$TW")"
	done_check

	check "tripwire: airlock compile of a bad policy: file:line:column, exit 2, the image kept"
	printf 'version: 1\ndefault: { exec: sometimes }\n' >"$TW/bad.yaml"
	cp "$TW/policy.img" "$TW/before.img"
	RC=0
	ERR=$(cd "$W" && HOME="$H" "$AIRLOCK" compile "$TW/bad.yaml" -o "$TW/policy.img" 2>&1) || RC=$?
	expect_rc 2
	expect_err_re "bad\.yaml:2:[0-9]+: "
	cmp -s "$TW/before.img" "$TW/policy.img" || _fail "the image changed"
	done_check

	check "tripwire: airlock compile without -o is a usage error"
	RC=0
	ERR=$("$AIRLOCK" compile "$TW/bad.yaml" 2>&1) || RC=$?
	expect_rc 2
	expect_err_has "-o IMAGE is required"
	done_check
}

# tw_secret_denied DESC LOG: the secret was not printed, and LOG has the deny of .env's read.
tw_secret_denied()
{
	expect_out_lacks SECRET-ENV
	tw_expect "$2" source=shim "file=$W/.env" action=read decision=deny decided_by=policy \
		'rule~default_policy.yaml:' "reason=Environment files hold secrets"
	done_check
}

tw_program_cases()
{
	L=$TW/programs.jsonl
	check "tripwire: sh: cat .env refused (Permission denied), logged by cat, same session as sh"
	tw_run "$L" /bin/sh -c 'cat .env; echo rc=$?'
	expect_out_has "rc=1"
	expect_err_has "Permission denied"
	tw_expect "$L" 'command~/cat' 'args=[".env"]' decision=allow decided_by=policy
	"$PY" - "$L" "$W/.env" <<'EOF' || _fail "the exec of cat and cat's deny are not in one session"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
ex = [e for e in evs if e.get("command", "").endswith("/cat")]
dn = [e for e in evs if e.get("file") == sys.argv[2]]
sys.exit(0 if ex and dn and ex[-1]["session_id"] == dn[-1]["session_id"] else 1)
EOF
	tw_secret_denied "" "$L"

	check "tripwire: python3: open('.env') is EACCES and logged"
	tw_run "$L" "$PY" -c "$PYPRE
try:
    print(open('.env').read())
except OSError as e:
    print(en(e))"
	expect_out_eq "err EACCES"
	tw_secret_denied "" "$L"

	check "tripwire: perl: open .env is EACCES and logged"
	tw_run "$L" /usr/bin/perl -e "$PLPRE"' if (open(my $f, "<", ".env")) { print <$f>; } else { print en(), "\n"; }'
	expect_out_eq "err EACCES"
	tw_secret_denied "" "$L"

	if command -v node >/dev/null 2>&1; then
		check "tripwire: node: fs.readFileSync('.env') is EACCES and logged"
		tw_run "$L" "$(command -v node)" -e 'try { console.log(require("fs").readFileSync(".env", "utf8")); } catch (e) { console.log("err " + e.code); }'
		expect_out_eq "err EACCES"
		tw_secret_denied "" "$L"
	else
		tap_skip "tripwire: node: not installed"
	fi

	check "tripwire: git: git hash-object .env cannot read it, and it is logged"
	tw_run "$L" /usr/bin/git hash-object .env
	expect_rc_not 0
	expect_err_has "Permission denied"
	tw_secret_denied "" "$L"

	check "tripwire: python3: an allowed exec is logged with its arguments, and runs"
	tw_run "$L" "$PY" -c 'import subprocess; subprocess.run(["/bin/echo", "hi there"], check=True)'
	expect_rc 0
	expect_out_eq "hi there"
	tw_expect "$L" 'command~/echo' 'args=["hi there"]' decision=allow decided_by=policy
	done_check

	check "tripwire: a child started with an empty environment keeps the shim and the log"
	tw_run "$L" AIRLOCK_SESSION=tw-empty-env "$PY" -c "$PYPRE
import subprocess
r = subprocess.run(['/bin/cat', '.env'], env={}, capture_output=True)
print(r.returncode, r.stdout.decode().strip() or '-')"
	expect_out_eq "1 -"
	tw_expect "$L" session_id=tw-empty-env "file=$W/.env" decision=deny
	tw_expect "$L" session_id=tw-empty-env 'command~/cat' decision=allow
	done_check

	check "tripwire: an ask (connect, the default policy's ask) gets the headless answer: refused, decided_by default"
	before=$(wc -l <"$T/accepted")
	tw_run "$L" "$PY" -c "$PYPRE
s = socket.socket()
try:
    s.connect(('127.0.0.1', $ALLOW_PORT)); print('connected')
except OSError as e:
    print(en(e))"
	expect_out_eq "err ECONNREFUSED"
	sleep 0.2
	[ "$(wc -l <"$T/accepted")" = "$before" ] || _fail "the listener accepted a connection"
	tw_expect "$L" "network_dst=127.0.0.1:$ALLOW_PORT" decision=deny decided_by=default \
		"reason=no rule matches: the policy's default for connect decided" response_time_ms=0
	done_check

	check "tripwire: every line of the log is JSON with the audit log's header"
	n=$(tw_lines "$L") || _fail "$n"
	done_check

	check "tripwire: airlock log prints the events"
	RC=0
	OUT=$("$AIRLOCK" log "$L" 2>"$T/log.err") || RC=$?
	ERR=$(cat "$T/log.err")
	expect_rc 0
	expect_out_has ".env"
	expect_out_has "$ALLOW_PORT"
	expect_out_has "echo"
	expect_err_lacks "skipped"
	done_check
}

tw_concurrent_cases()
{
	L=$TW/concurrent.jsonl
	# each worker: 4 denied reads (one of a name holding invalid UTF-8, a control character and
	# a quote), one exec with a 3000-byte argument (a line near PIPE_BUF), one with a 10000-byte
	# argument (cut to fit, "truncated": true): 6 lines
	cat >"$T/worker.py" <<'EOF'
import os, subprocess, sys
for name in (".env", ".env.local", ".env.x", b'.env.\xff\x01"q'):
    try:
        open(name).close()
    except OSError:
        pass
subprocess.run(["/bin/true", "a" * 3000])
subprocess.run(["/bin/true", "w%s" % sys.argv[1], "b" * 10000])
EOF
	check "tripwire: 100 concurrent processes: every line whole JSON, none lost, none mixed"
	(
		cd "$W" || exit 1
		i=0
		while [ $i -lt 100 ]; do
			env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 \
				AIRLOCK_IMAGE="$TW/policy.img" AIRLOCK_LOG="$L" LD_PRELOAD="$SHIM" \
				"$PY" "$T/worker.py" $i &
			i=$((i + 1))
		done
		wait
	)
	n=$(tw_lines "$L") || _fail "$n"
	[ "$n" = 600 ] || _fail "expected 600 lines (100 x 6), got $n"
	"$PY" - "$L" "$W" <<'EOF' || _fail "the lines are not what the workers did"
import collections, json, sys
evs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
w = sys.argv[2]
by_pid = collections.Counter(e["pid"] for e in evs)
ids = set(e["id"] for e in evs)
bad = []
if len(ids) != len(evs): bad.append("ids not unique: %d of %d" % (len(ids), len(evs)))
if len(set(e["session_id"] for e in evs)) != 100: bad.append("not one session per worker")
weird = [e for e in evs if e.get("file", "").startswith(w + "/.env.\ufffd\u0001\"q")]
if len(weird) != 100: bad.append("invalid UTF-8 name: %d lines" % len(weird))
near = [e for e in evs if e.get("args") == ["a" * 3000] and not e.get("truncated")]
if len(near) != 100: bad.append("3000-byte argument whole: %d" % len(near))
cut = [e for e in evs if e.get("truncated") and len(e.get("args", [])) == 2
       and e["args"][0].startswith("w") and e["args"][1].startswith("bbbb")]
if len(cut) != 100: bad.append("10000-byte argument cut and flagged: %d" % len(cut))
workers = set(e["args"][0] for e in cut)
if len(workers) != 100: bad.append("workers seen: %d" % len(workers))
denies = [e for e in evs if e["decision"] == "deny" and e.get("action") == "read"]
if len(denies) != 400: bad.append("denied reads: %d" % len(denies))
if bad:
    print("; ".join(bad)); sys.exit(1)
EOF
	done_check
}

tw_failclosed_cases()
{
	check "tripwire: a log in a directory that does not exist: actions refused, stderr says so once"
	tw_run "$TW/no/such/dir/log.jsonl" "$PY" -c "$PYPRE
for _ in range(2):
    try:
        subprocess.run(['/bin/echo', 'ran'])
    except OSError as e:
        print(en(e))"
	expect_out_eq "err EACCES
err EACCES"
	expect_err_count 1 "cannot write the audit log $TW/no/such/dir/log.jsonl"
	expect_err_has "every action it would record is refused"
	done_check

	mkdir -p "$TW/ro"
	chmod 555 "$TW/ro"
	if [ "$(id -u)" = 0 ]; then
		nobody_setup
		if [ -n "$NOBODY_SKIP" ]; then
			tap_skip "tripwire: a log in a read-only directory: root writes there anyway and $NOBODY_SKIP"
			return
		fi
		chmod 755 "$T" "$W" "$TW"
		RUNAS="setpriv --reuid=nobody --regid=$(id -gn nobody) --clear-groups"
		shim=$(dirname "$AIRLOCK")/airlock-preload.so
	else
		RUNAS=""
		shim=$SHIM
	fi
	check "tripwire: a log in a read-only directory: the exec is refused, stderr says so"
	RC=0
	OUT=$(cd "$TW" && $RUNAS env -i PATH=/usr/bin:/bin AIRLOCK_IMAGE="$TW/policy.img" \
		AIRLOCK_LOG="$TW/ro/log.jsonl" LD_PRELOAD="$shim" /bin/sh -c '/bin/echo ran; echo rc=$?' \
		2>"$T/ro.err") || RC=$?
	ERR=$(cat "$T/ro.err")
	expect_out_lacks "ran"
	expect_err_has "cannot write the audit log $TW/ro/log.jsonl: Permission denied"
	expect_no_file "$TW/ro/log.jsonl"
	done_check

	check "tripwire: no image: every action refused, stderr says so"
	tw_run "$TW/noimage.jsonl" AIRLOCK_IMAGE="$TW/missing.img" /bin/sh -c '/bin/echo ran'
	expect_out_lacks "ran"
	expect_err_has "cannot use the policy image $TW/missing.img"
	tw_expect "$TW/noimage.jsonl" 'command~/echo' decision=deny 'message~policy image could not be used'
	done_check
}

# The README's word, shown: the mode is no boundary.  A static binary has no loader to preload
# the shim: it reads .env, and the log says nothing.
tw_gap_cases()
{
	if ! printf '#include <stdio.h>\nint main(void){FILE*f=fopen(".env","r");char b[64]={0};if(!f){perror(".env");return 1;}fgets(b,sizeof b,f);fputs(b,stdout);return 0;}\n' >"$T/static_cat.c" ||
		! gcc -static -O1 -o "$T/static_cat" "$T/static_cat.c" 2>"$T/static.err"; then
		tap_skip "tripwire: not a boundary: gcc -static cannot build here ($(head -c 200 "$T/static.err"))"
		return
	fi
	L=$TW/gap.jsonl
	check "tripwire: not a boundary: a static binary reads .env, and nothing is logged (README)"
	tw_run "$L" "$T/static_cat"
	expect_out_eq "SECRET-ENV"
	[ -s "$L" ] && _fail "the log has lines: $(cat "$L")"
	done_check
}

tripwire_group()
{
	AIRLOCK=$BUILD/airlock
	REPO=$(cd "$HERE/../.." && pwd -P)
	TW=$T/tripwire
	mkdir -p "$TW"
	if [ ! -x "$AIRLOCK" ]; then
		tap_skip "tripwire: $AIRLOCK is not built"
		return
	fi
	tw_compile_cases
	[ -f "$TW/policy.img" ] || return
	tw_program_cases
	tw_concurrent_cases
	tw_failclosed_cases
	tw_gap_cases
}
