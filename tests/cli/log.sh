#!/bin/sh
# log.sh — TAP tests of `airlock log` on the real binary: printing, filters, --json pass-through, bad lines, -f, errors.
# Usage: tests/cli/log.sh BUILD/airlock
# Runs in a temporary directory with HOME and XDG_STATE_HOME there and TZ=UTC; exits 1 if any test fails.
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 BUILD/airlock" >&2
	exit 2
fi
AIRLOCK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")

TMP=$(mktemp -d "${TMPDIR:-/tmp}/airlock-log.XXXXXX")
FOLLOWER=
cleanup() {
	if [ -n "$FOLLOWER" ]; then kill "$FOLLOWER" 2>/dev/null; fi
	rm -rf "$TMP"
}
trap cleanup EXIT
TMP=$(cd "$TMP" && pwd -P)
export HOME="$TMP/home"
export XDG_STATE_HOME="$TMP/state"
# local time = UTC, so the times printed are the timestamps' own
export TZ=UTC LC_ALL=C
unset NO_COLOR
mkdir -p "$HOME"

. "$(dirname "$0")/lib.sh"

# lines DESC N ARG...: airlock ARG... exits 0 and prints N lines.
lines() {
	desc=$1 want=$2
	shift 2
	run "$@"
	n=$(wc -l <"$TMP/out" | tr -d ' ')
	if [ "$RC" = 0 ] && [ "$n" = "$want" ]; then
		pass "$desc"
	else
		fail "$desc" "wanted exit 0 and $want lines, got $n" "$(details)"
	fi
}

# ---- a sample log, written by hand ----------------------------------------------
# Lines 3 and 8 are not JSON objects, line 6 is blank; the rest are 6 events in 2 sessions.
LOG="$TMP/sample.jsonl"
cat >"$LOG" <<'EOF'
{"id":"0000000000000001","timestamp":"2026-11-30T01:02:03.456Z","session_id":"aaaaaaaa11111111","source":"shim","pid":4242,"command":"/usr/bin/rm","args":["-rf","/home/u/my dir","it's"],"decision":"deny","decided_by":"policy","rule":".airlock/policy.yaml:12","reason":"never delete outside the workspace"}
{"id":"0000000000000002","timestamp":"2026-11-30T01:02:04.000Z","session_id":"aaaaaaaa11111111","source":"shim","pid":4243,"file":"/etc/passwd","action":"read","decision":"allow","decided_by":"policy"}
{"id": "broken", "timestamp":
{"id":"0000000000000003","timestamp":"2026-11-30T01:02:05.007Z","session_id":"bbbbbbbb22222222","source":"proxy","network_dst":"example.com:443","decision":"ask","decided_by":"human","rule":"policy.yaml:30","reason":"unknown host","response_time_ms":2300}
{"id":"0000000000000004","timestamp":"2026-11-30T23:59:59.999Z","session_id":"bbbbbbbb22222222","source":"launcher","pid":99,"message":"session started: policy <default>"}

{"id":"0000000000000005","timestamp":"2026-11-30T01:02:06.000Z","session_id":"bbbbbbbb22222222","source":"shim","pid":7,"command":"printf","args":["\u001b[2J\u001b]0;pwned\u0007","a\nb"],"decision":"deny","decided_by":"policy","rule":"policy.yaml:5","reason":"tab\there \u202e reversed"}
[1, 2, 3]
{"id":"0000000000000006","timestamp":"2026-11-30T01:02:07.000Z","session_id":"aaaaaaaa11111111","source":"shim","pid":4244,"file":"/home/u/.env","action":"write","decision":"ask","decided_by":"timeout","rule":"policy.yaml:9","reason":"secrets","response_time_ms":30000}
EOF
# The valid lines: what --json prints with no filter.
grep -v -e '^{"id": "broken"' -e '^\[' -e '^$' "$LOG" >"$TMP/valid.jsonl"

# ---- printing for people --------------------------------------------------------
lines "log FILE prints one line per event" 6 log "$LOG"
has "an exec event: time, short session, source, pid, decision, command line, rule, reason" out \
	"01:02:03.456 aaaaaaaa shim        4242 deny  exec /usr/bin/rm -rf '/home/u/my dir' 'it'\\''s'  [.airlock/policy.yaml:12]  never delete outside the workspace"
has "a file event: action and path, decided by the default" out \
	"01:02:04.000 aaaaaaaa shim        4243 allow read /etc/passwd  [by the policy's default]"
has "a network event: destination, rule, who answered and how long it took" out \
	"01:02:05.007 bbbbbbbb proxy          - ask   connect example.com:443  [policy.yaml:30, by human, 2300 ms]  unknown host"
has "a launcher event: its message" out \
	"23:59:59.999 bbbbbbbb launcher      99 -     session started: policy <default>"
has "control characters in arguments are escaped, shell-style" out \
	"exec printf \$'\\x1b[2J\\x1b]0;pwned\\x07' \$'a\\nb'"
has "control and bidi characters in a reason are escaped" out "tab\\there \\u202e reversed"
if LC_ALL=C grep -q "$(printf '\033')" "$TMP/out"; then
	fail "no escape byte reaches the terminal (and no colour into a pipe)" "$(details)"
else
	pass "no escape byte reaches the terminal (and no colour into a pipe)"
fi
has "a malformed line is reported with its line number" err "$LOG:3: not a JSON object, skipped"
has "a JSON value that is not an object is reported" err "$LOG:8: not a JSON object, skipped"
n=$(wc -l <"$TMP/err" | tr -d ' ')
if [ "$n" = 2 ]; then pass "a blank line is skipped silently"; else fail "a blank line is skipped silently" "$(details)"; fi

TZ=Asia/Kolkata "$AIRLOCK" log "$LOG" >"$TMP/out" 2>"$TMP/err"
RC=$?
if [ -e /usr/share/zoneinfo/Asia/Kolkata ]; then
	has "times are local: UTC+5:30 shows 01:02:03.456Z as 06:32:03.456" out "06:32:03.456 aaaaaaaa"
else
	skip "times are local" "no tzdata for Asia/Kolkata"
fi

# ---- filters --------------------------------------------------------------------
lines "--decision deny" 2 log "$LOG" --decision deny
lacks "--decision deny prints no allow" out " allow "
lines "--decision allow" 1 log "$LOG" --decision allow
lines "--decision=ask" 2 log "$LOG" --decision=ask
lines "--source proxy" 1 log "$LOG" --source proxy
has "--source proxy prints the proxy event" out "connect example.com:443"
lines "--source launcher" 1 log "$LOG" --source launcher
lines "--source shim" 4 log "$LOG" --source shim
lines "--session with the whole id" 3 log "$LOG" --session bbbbbbbb22222222
lines "--session with the short id" 3 log "$LOG" --session aaaaaaaa
lines "--session that matches nothing" 0 log "$LOG" --session cccc
lines "filters combine: --session, --source, --decision" 1 log --session aaaa --source shim --decision ask "$LOG"
has "filters combine: the one event" out "write /home/u/.env"

# ---- --json ---------------------------------------------------------------------
run log "$LOG" --json
if [ "$RC" = 0 ] && cmp -s "$TMP/out" "$TMP/valid.jsonl"; then
	pass "--json passes every valid line through unchanged"
else
	fail "--json passes every valid line through unchanged" "$(details)"
fi
has "--json still reports the malformed line" err "$LOG:3: not a JSON object, skipped"
run log "$TMP/valid.jsonl" --json
if [ "$RC" = 0 ] && cmp -s "$TMP/out" "$TMP/valid.jsonl" && [ ! -s "$TMP/err" ]; then
	pass "--json on a clean log prints identical bytes"
else
	fail "--json on a clean log prints identical bytes" "$(details)"
fi
run log "$LOG" --json --decision deny
grep '"decision":"deny"' "$TMP/valid.jsonl" >"$TMP/want"
if [ "$RC" = 0 ] && cmp -s "$TMP/out" "$TMP/want"; then
	pass "--json with a filter prints the matching raw lines"
else
	fail "--json with a filter prints the matching raw lines" "$(details)"
fi
if command -v python3 >/dev/null 2>&1; then
	run log "$LOG" --json
	if python3 -c 'import json, sys
for line in sys.stdin.buffer: json.loads(line.decode("utf-8"))' <"$TMP/out"; then
		pass "--json output is JSON Lines another parser accepts"
	else
		fail "--json output is JSON Lines another parser accepts" "$(details)"
	fi
else
	skip "--json output is JSON Lines another parser accepts" "no python3"
fi

# ---- --summary ------------------------------------------------------------------
SLOG="$TMP/summary.jsonl"
{
	printf '%s\n' '{"id":"1","timestamp":"2026-11-30T01:00:00.000Z","session_id":"cccccccc33333333","source":"launcher","pid":9,"event":"session_start","program":"/usr/bin/python3","policy":"/p/policy.yaml","workspace":"/w","sandbox":"bubblewrap","network":"proxy","masked":2,"seccomp":["ptrace","mount"],"message":"session started: /usr/bin/python3"}'
	for i in 1 2 3; do
		printf '{"id":"g%s","timestamp":"2026-11-30T01:00:0%s.000Z","session_id":"cccccccc33333333","source":"shim","pid":10,"command":"/usr/bin/git","args":["status"],"decision":"allow","decided_by":"policy","rule":"p:1"}\n' "$i" "$i"
	done
	printf '%s\n' '{"id":"p1","timestamp":"2026-11-30T01:00:04.000Z","session_id":"cccccccc33333333","source":"shim","pid":10,"command":"/bin/git","args":["push"],"decision":"deny","decided_by":"human","rule":"p:7","response_time_ms":1200}'
	printf '%s\n' '{"id":"w1","timestamp":"2026-11-30T01:00:05.000Z","session_id":"cccccccc33333333","source":"shim","pid":10,"file":"/w/out.txt","action":"write","decision":"allow","decided_by":"policy","rule":"p:3"}'
	printf '%s\n' '{"id":"w2","timestamp":"2026-11-30T01:00:05.500Z","session_id":"cccccccc33333333","source":"shim","pid":10,"file":"/w/out.txt","action":"write","decision":"allow","decided_by":"policy","rule":"p:3"}'
	printf '%s\n' '{"id":"r1","timestamp":"2026-11-30T01:00:06.000Z","session_id":"cccccccc33333333","source":"shim","pid":10,"file":"/w/notes.txt","action":"read","decision":"allow","decided_by":"policy"}'
	printf '%s\n' '{"id":"r2","timestamp":"2026-11-30T01:00:07.000Z","session_id":"cccccccc33333333","source":"shim","pid":10,"file":"/w/.env","action":"read","decision":"deny","decided_by":"policy","rule":"p:9","reason":"secrets"}'
	printf '%s\n' '{"id":"n1","timestamp":"2026-11-30T01:00:08.000Z","session_id":"cccccccc33333333","source":"proxy","network_dst":"pypi.org:443","decision":"allow","decided_by":"policy","rule":"p:20","bytes_up":1200,"bytes_down":34000,"duration_ms":80,"via":"transparent"}'
	printf '%s\n' '{"id":"n2","timestamp":"2026-11-30T01:00:09.000Z","session_id":"cccccccc33333333","source":"proxy","network_dst":"pypi.org:443","decision":"allow","decided_by":"policy","rule":"p:20","bytes_up":800,"bytes_down":1000,"duration_ms":10,"via":"http-proxy"}'
	printf '%s\n' '{"id":"n3","timestamp":"2026-11-30T01:00:10.000Z","session_id":"cccccccc33333333","source":"proxy","network_dst":"evil.example:443","decision":"deny","decided_by":"default","bytes_up":0,"bytes_down":0,"duration_ms":0,"via":"socks","message":"SNI does not match"}'
	i=0
	while [ $i -lt 25 ]; do
		printf '{"id":"m%s","timestamp":"2026-11-30T01:00:11.000Z","session_id":"dddddddd44444444","source":"shim","pid":11,"command":"/usr/bin/tool%02d","args":[],"decision":"allow","decided_by":"policy"}\n' "$i" "$i"
		i=$((i + 1))
	done
	printf '%s\n' '{"id":"9","timestamp":"2026-11-30T01:00:12.250Z","session_id":"cccccccc33333333","source":"launcher","pid":9,"event":"session_end","exit_status":3,"allowed":7,"denied":3,"asked":2,"connections":3,"refused":1,"bytes_up":2000,"bytes_down":35000,"message":"session ended: exit status 3"}'
} >"$SLOG"
run log --summary "$SLOG"
if [ "$RC" = 0 ]; then pass "--summary exits 0"; else fail "--summary exits 0" "$(details)"; fi
first=$(grep -n '^session ' "$TMP/out" | head -n 1)
if [ "$first" = "1:session cccccccc33333333" ] && grep -q '^session dddddddd44444444' "$TMP/out"; then
	pass "--summary: one block per session, in order of first appearance"
else
	fail "--summary: one block per session, in order of first appearance" "$(details)"
fi
has "--summary: start time" out "  start      2026-11-30 01:00:00.000"
has "--summary: end time and duration" out "  end        2026-11-30 01:00:12.250  (12.250 s)"
has "--summary: the agent from the session start" out "  agent      /usr/bin/python3"
has "--summary: the workspace" out "  workspace  /w"
has "--summary: the exit status" out "  exit       3"
has "--summary: event counts" out "  events     11: 8 allowed, 3 denied, 2 asked"
has "--summary: commands by program, allowed and denied" out "          3      1  git"
has "--summary: files written, counted" out "          2      0  /w/out.txt"
has "--summary: a denied read is listed" out "          1  /w/.env"
lacks "--summary: an allowed read is not" out "/w/notes.txt"
has "--summary: a destination with the proxy's bytes" out "          2      0        2000       35000  pypi.org:443"
has "--summary: a denied destination" out "          0      1           0           0  evil.example:443"
has "--summary: denies with their rule" out "          1  exec /bin/git push  [p:7]"
has "--summary: a deny by the default" out "connect evil.example:443  [the default]"
has "--summary: asks with who answered and how" out "          1  deny    human     exec /bin/git push"
has "--summary: an ask answered by --headless (by default)" out "          1  deny    default   connect evil.example:443"
has "--summary: a group is capped at 20 rows" out "      … 5 more"
has "--summary: an empty group says none" out "  files written: none"
n=$(grep -c '  tool' "$TMP/out")
if [ "$n" = 20 ]; then pass "--summary: 20 rows shown of 25"; else fail "--summary: 20 rows shown of 25" "$(details)"; fi
run log "$SLOG" --source launcher
has "a session's start, from its fields" out \
	"01:00:00.000 cccccccc launcher       9 -     session started: /usr/bin/python3; policy /p/policy.yaml; workspace /w; bubblewrap sandbox, network through the egress proxy, 2 path(s) masked; seccomp refuses ptrace mount"
has "a session's end, from its fields" out \
	"01:00:12.250 cccccccc launcher       9 -     session ended: exit status 3; 7 allowed, 3 denied, 2 asked; 3 connection(s), 1 refused, 2000 bytes out, 35000 in"
run log "$SLOG" --source proxy
has "a connection's bytes, duration and path, from its fields" out \
	"connect pypi.org:443  [p:20]  (1200 bytes up, 34000 down, 80 ms, via transparent)"
has "a refused connection: why, then its bytes" out \
	"connect evil.example:443  [by the headless answer]  (SNI does not match; 0 bytes up, 0 down, 0 ms, via socks)"
run log --summary "$SLOG" --session dddd
if [ "$RC" = 0 ] && ! grep -q cccccccc "$TMP/out" && grep -q '^session dddddddd44444444' "$TMP/out"; then
	pass "--summary combines with --session"
else
	fail "--summary combines with --session" "$(details)"
fi
run log --summary "$SLOG" --decision deny
has "--summary combines with --decision" out "  events     3: 0 allowed, 3 denied, 2 asked"
run log --summary "$LOG"
has "--summary reports malformed lines too" err "$LOG:3: not a JSON object, skipped"
has "--summary: an ask still logged as ask" out "          1  ask     timeout   write /home/u/.env"
run log --summary "$TMP/valid.jsonl" --source proxy --session cccc
has "--summary with nothing matching" out "no events"
expect "--summary with --json exits 2" 2 log --summary --json "$SLOG"
expect "--summary with --follow exits 2" 2 log --summary -f "$SLOG"
run log --json "$SLOG" --session dddd
if [ "$RC" = 0 ] && [ "$(wc -l <"$TMP/out" | tr -d ' ')" = 25 ] && grep -q '"command":"/usr/bin/tool24"' "$TMP/out"; then
	pass "--json with --session prints that session's lines"
else
	fail "--json with --session prints that session's lines" "$(details)"
fi

# --summary quotes every name as the rest of `airlock log` does, and a session without its end event says so
QLOG="$TMP/quote.jsonl"
{
	printf '%s\n' '{"id":"q1","timestamp":"2026-11-30T02:00:00.000Z","session_id":"eeeeeeee55555555","source":"shim","pid":5,"file":"/w/\u001b[31mred","action":"write","decision":"allow","decided_by":"policy"}'
	printf '%s\n' '{"id":"q2","timestamp":"2026-11-30T02:00:01.000Z","session_id":"eeeeeeee55555555","source":"shim","pid":5,"file":"/w/my file","action":"write","decision":"deny","decided_by":"policy","rule":"my policy.yaml:4"}'
	printf '%s\n' '{"id":"q3","timestamp":"2026-11-30T02:00:02.000Z","session_id":"eeeeeeee55555555","source":"shim","pid":5,"file":"/w/\u001b]0;x\u0007","action":"read","decision":"deny","decided_by":"policy"}'
	printf '%s\n' '{"id":"q4","timestamp":"2026-11-30T02:00:03.000Z","session_id":"eeeeeeee55555555","source":"shim","pid":5,"command":"/usr/bin/\u001bcmd","args":[],"decision":"allow","decided_by":"policy"}'
	printf '%s\n' '{"id":"q5","timestamp":"2026-11-30T02:00:04.000Z","session_id":"eeeeeeee55555555","source":"proxy","network_dst":"a\u001bb:443","decision":"allow","decided_by":"policy"}'
} >"$QLOG"
run log --summary "$QLOG"
has "--summary: a written path with a control character is \$'...'-quoted" out "          1      0  \$'/w/\\x1b[31mred'"
has "--summary: a written path with a space is '...'-quoted" out "          0      1  '/w/my file'"
has "--summary: a denied read is quoted too" out "          1  \$'/w/\\x1b]0;x\\x07'"
has "--summary: a program is quoted too" out "          1      0  \$'\\x1bcmd'"
has "--summary: a destination is quoted too" out "\$'a\\x1bb:443'"
has "--summary: a rule's file is quoted too" out "  ['my policy.yaml:4']"
if LC_ALL=C grep -q "$(printf '\033')" "$TMP/out"; then
	fail "--summary: no escape byte reaches the terminal" "$(details)"
else
	pass "--summary: no escape byte reaches the terminal"
fi
has "--summary: no end event: the session may be running" out \
	"  end        (no end event: running, or the launcher was killed)"
lacks "--summary: no end event: no made-up end time" out "2026-11-30 02:00:04"

# lines whose timestamp or session_id is not a string are malformed, not shown with placeholders
OLOG="$TMP/odd.jsonl"
{
	sed -n 1p "$LOG"
	printf '%s\n' '{"id":"o1","timestamp":5,"session_id":"aaaaaaaa11111111","source":"shim","pid":1,"command":"/bin/x","args":[],"decision":"allow"}'
	printf '%s\n' '{"id":"o2","session_id":"aaaaaaaa11111111","source":"shim","pid":1,"command":"/bin/y","args":[],"decision":"allow"}'
	printf '%s\n' '{"id":"o3","timestamp":"2026-11-30T01:02:03.456Z","session_id":7,"source":"shim","pid":1,"command":"/bin/z","args":[],"decision":"allow"}'
	printf '%s\n' '{"id":"o4","timestamp":"2026-11-30T01:02:03.456Z","source":"shim","pid":1,"command":"/bin/w","args":[],"decision":"allow"}'
	printf '%s\n' '{"id":"o5","timestamp":"yesterday","session_id":"aaaaaaaa11111111","source":"shim","pid":1,"command":"/bin/v","args":[],"decision":"allow"}'
	printf '%s\n' '{"id":"o6","timestamp":null,"session_id":"aaaaaaaa11111111","source":"launcher","pid":1,"message":"hello"}'
} >"$OLOG"
lines "odd timestamps and session ids: only the good event is printed" 1 log "$OLOG"
lacks "odd timestamps: no ??:?? placeholder time" out "??:"
has "a number as timestamp is reported" err "odd.jsonl:2: 'timestamp' is not a string, skipped"
has "a missing timestamp is reported" err "odd.jsonl:3: no 'timestamp', skipped"
has "a number as session_id is reported" err "odd.jsonl:4: 'session_id' is not a string, skipped"
has "a missing session_id is reported" err "odd.jsonl:5: no 'session_id', skipped"
has "an unreadable timestamp is reported" err "odd.jsonl:6: 'timestamp' is not an RFC 3339 time, skipped"
has "a null timestamp is reported" err "odd.jsonl:7: 'timestamp' is not a string, skipped"
run log --summary "$OLOG"
lacks "--summary: no 'session -' for events without a session" out "session -"
lacks "--summary: no ???? dates" out "????"
has "--summary: the odd lines are reported there too" err "odd.jsonl:2: 'timestamp' is not a string, skipped"
has "--summary: only the good event is counted" out "  events     1: 0 allowed, 1 denied, 0 asked"
run log --json "$OLOG"
if [ "$RC" = 0 ] && [ "$(wc -l <"$TMP/out" | tr -d ' ')" = 1 ]; then
	pass "--json leaves the odd lines out too"
else
	fail "--json leaves the odd lines out too" "$(details)"
fi

# the session's facts are fields: a workspace, policy or program holding "; " (the separator of the old prose
# message) and other odd bytes reads back whole
ALOG="$TMP/semi.jsonl"
printf '%s\n' '{"id":"a1","timestamp":"2026-11-30T03:00:00.000Z","session_id":"ffffffff66666666","source":"launcher","pid":3,"event":"session_start","program":"/opt/a; policy b/run","policy":"/p; workspace /x/policy.yaml","workspace":"/w; policy /etc/evil.yaml; workspace /","sandbox":"none","message":"session started: /opt/a; policy b/run"}' >"$ALOG"
printf '%s\n' '{"id":"a2","timestamp":"2026-11-30T03:00:01.000Z","session_id":"ffffffff66666666","source":"launcher","pid":3,"event":"session_end","exit_status":0,"allowed":0,"denied":0,"asked":0,"connections":0,"refused":0,"bytes_up":0,"bytes_down":0,"message":"session ended: exit status 0"}' >>"$ALOG"
run log --summary "$ALOG"
has "--summary: a workspace with '; ' is whole" out "  workspace  /w; policy /etc/evil.yaml; workspace /"
has "--summary: a policy with '; ' is whole" out "  policy     /p; workspace /x/policy.yaml"
has "--summary: a program with '; ' is whole" out "  agent      /opt/a; policy b/run"
has "--summary: exit status 0 from the end event" out "  exit       0"
run log "$ALOG"
has "log: no kernel sandbox is said" out \
	"session started: /opt/a; policy b/run; policy /p; workspace /x/policy.yaml; workspace /w; policy /etc/evil.yaml; workspace /; NO kernel sandbox (--no-sandbox): the shim and this log only"
# an old log's prose is not parsed any more: its launcher events print as their message
printf '%s\n' '{"id":"o1","timestamp":"2026-11-30T03:00:00.000Z","session_id":"9999999999999999","source":"launcher","pid":3,"message":"session started: /usr/bin/x; policy p; workspace /w"}' >"$TMP/old.jsonl"
run log --summary "$TMP/old.jsonl"
has "--summary: an old log's session start is not parsed" out "  workspace  not recorded"

# ... and as `airlock run` records them: a workspace and a policy file whose paths hold "; ", quotes, '\', '$'
ODD="$TMP/odd; policy /etc/x.yaml; workspace /tmp 'q' \"dq\" \\ \$x"
mkdir -p "$ODD"
printf 'version: 1\ndefault: allow\n' >"$ODD/my; policy.yaml"
(cd "$ODD" && "$AIRLOCK" run --headless --policy "$ODD/my; policy.yaml" --log "$TMP/oddrun.jsonl" -- sh -c 'exit 5') \
	>"$TMP/out" 2>"$TMP/err"
RC=$?
if [ "$RC" = 125 ]; then # no kernel sandbox here: the facts are recorded all the same
	(cd "$ODD" && "$AIRLOCK" run --headless --no-sandbox --policy "$ODD/my; policy.yaml" --log "$TMP/oddrun.jsonl" \
		-- sh -c 'exit 5') >"$TMP/out" 2>"$TMP/err"
	RC=$?
fi
if [ "$RC" = 5 ]; then pass "run in an odd workspace exits as its agent"; else fail "run in an odd workspace exits as its agent" "$(details)"; fi
run log --summary "$TMP/oddrun.jsonl"
has "--summary: the recorded odd workspace" out "  workspace  $ODD"
has "--summary: the recorded odd policy file" out "  policy     $ODD/my; policy.yaml"
has "--summary: the recorded agent" out "  agent      /usr/bin/sh"
has "--summary: the recorded exit status" out "  exit       5"

# ---- other inputs ---------------------------------------------------------------
"$AIRLOCK" log - <"$LOG" >"$TMP/out" 2>"$TMP/err"
RC=$?
if [ "$RC" = 0 ] && [ "$(wc -l <"$TMP/out" | tr -d ' ')" = 6 ]; then
	pass "log - reads standard input"
else
	fail "log - reads standard input" "$(details)"
fi
has "log - names <stdin> in warnings" err "<stdin>:3: not a JSON object"
{ head -n 2 "$LOG"; printf '%s' "$(sed -n 4p "$LOG")"; } >"$TMP/nonl.jsonl"
lines "a last line without a newline is still read" 3 log "$TMP/nonl.jsonl"
{ head -n 2 "$LOG"; printf '{"id":"x","reason":"\377"}\n'; } >"$TMP/utf8.jsonl"
run log "$TMP/utf8.jsonl"
has "invalid UTF-8 in a line makes it malformed" err "utf8.jsonl:3: not a JSON object"

# today's default log
mkdir -p "$XDG_STATE_HOME/airlock/logs"
TODAY="$XDG_STATE_HOME/airlock/logs/$(date +%Y-%m-%d).jsonl"
expect "log with no FILE and no log today exits 1" 1 log
has "log with no FILE names today's file" err "$TODAY"
cp "$TMP/valid.jsonl" "$TODAY"
lines "log with no FILE reads today's log under XDG_STATE_HOME" 6 log
unset XDG_STATE_HOME
mkdir -p "$HOME/.local/state/airlock/logs"
cp "$TMP/valid.jsonl" "$HOME/.local/state/airlock/logs/$(date +%Y-%m-%d).jsonl"
lines "log with no FILE reads ~/.local/state when XDG_STATE_HOME is unset" 6 log
export XDG_STATE_HOME="$TMP/state"

# ---- colour ---------------------------------------------------------------------
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
	script -qec "'$AIRLOCK' log '$TMP/valid.jsonl'" /dev/null >"$TMP/out" 2>"$TMP/err" </dev/null
	RC=$?
	has "on a terminal, deny is red" out "$(printf '\033[1;31mdeny\033[0m')"
	NO_COLOR=1 script -qec "'$AIRLOCK' log '$TMP/valid.jsonl'" /dev/null >"$TMP/out" 2>"$TMP/err" </dev/null
	RC=$?
	lacks "NO_COLOR turns colour off" out "$(printf '\033[')"
else
	skip "on a terminal, deny is red" "script(1) cannot make a terminal here"
	skip "NO_COLOR turns colour off" "script(1) cannot make a terminal here"
fi

# ---- -f -------------------------------------------------------------------------
# wait_for FILE TEXT: up to 5 s for FILE to contain TEXT.
wait_for() {
	i=0
	while [ $i -lt 50 ]; do
		if grep -qF -- "$2" "$1" 2>/dev/null; then return 0; fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
FLOG="$TMP/follow.jsonl"
sed -n 1p "$LOG" >"$FLOG"
"$AIRLOCK" log -f "$FLOG" >"$TMP/fout" 2>"$TMP/ferr" &
FOLLOWER=$!
if wait_for "$TMP/fout" "exec /usr/bin/rm"; then
	pass "-f prints what is already there"
else
	fail "-f prints what is already there" "$(cat "$TMP/fout" "$TMP/ferr")"
fi
# an event appended in two writes: the first half must wait for the second
line=$(sed -n 4p "$LOG")
printf '%s' "$(printf '%s' "$line" | cut -c1-60)" >>"$FLOG"
sleep 0.5
printf '%s\n' "$(printf '%s' "$line" | cut -c61-)" >>"$FLOG"
if wait_for "$TMP/fout" "connect example.com:443"; then
	pass "-f prints an event appended after it started"
else
	fail "-f prints an event appended after it started" "$(cat "$TMP/fout" "$TMP/ferr")"
fi
if [ ! -s "$TMP/ferr" ]; then
	pass "-f waits for the end of a partial line instead of calling it malformed"
else
	fail "-f waits for the end of a partial line instead of calling it malformed" "$(cat "$TMP/ferr")"
fi
sed -n 2p "$LOG" >>"$FLOG"
if wait_for "$TMP/fout" "read /etc/passwd"; then
	pass "-f keeps following"
else
	fail "-f keeps following" "$(cat "$TMP/fout" "$TMP/ferr")"
fi
kill "$FOLLOWER" 2>/dev/null
wait "$FOLLOWER" 2>/dev/null
FOLLOWER=
n=$(wc -l <"$TMP/fout" | tr -d ' ')
if [ "$n" = 3 ]; then pass "-f printed each event once"; else fail "-f printed each event once" "$(cat "$TMP/fout")"; fi

"$AIRLOCK" log --follow --json --source proxy "$FLOG" >"$TMP/fout" 2>"$TMP/ferr" &
FOLLOWER=$!
sed -n 4p "$LOG" >>"$FLOG"
sed -n 5p "$LOG" >>"$FLOG"
sed -n 6p "$LOG" >>"$FLOG"
sed -n 7p "$LOG" | sed 's/"source":"shim"/"source":"proxy"/' >>"$FLOG"
wait_for "$TMP/fout" "0000000000000005"
kill "$FOLLOWER" 2>/dev/null
wait "$FOLLOWER" 2>/dev/null
FOLLOWER=
if [ "$(grep -c '"source":"proxy"' "$TMP/fout")" = 3 ] && ! grep -q launcher "$TMP/fout"; then
	pass "--follow --json --source filters what it follows"
else
	fail "--follow --json --source filters what it follows" "$(cat "$TMP/fout" "$TMP/ferr")"
fi

# ---- help and errors ------------------------------------------------------------
expect "log --help exits 0" 0 log --help
has "log --help documents the options" out "--decision D"
has "log --help documents the exit statuses" out "Exit status: 0 success; 1 the log cannot be read; 2 usage error."
expect "help log exits 0" 0 help log
expect "an unknown option exits 2" 2 log --bogus "$LOG"
has "an unknown option is named" err "airlock: log: unknown option: --bogus"
expect "--decision with a bad value exits 2" 2 log --decision maybe "$LOG"
has "--decision with a bad value says which are good" err "allow, deny or ask"
expect "--source with a bad value exits 2" 2 log --source agent "$LOG"
expect "--session without a value exits 2" 2 log "$LOG" --session
expect "two files exit 2" 2 log "$LOG" "$LOG"
expect "a missing file exits 1" 1 log "$TMP/nosuch.jsonl"
has "a missing file is named with the reason" err "cannot open $TMP/nosuch.jsonl: No such file or directory"
expect "a directory exits 1" 1 log "$TMP"

tap_plan_end tests
