# lib.sh — the agent tests' harness: real agent CLIs (Claude Code, Codex) driven by a mock model
# API through a scripted session, bare and under `airlock run --headless`, in a network namespace
# the test makes (no packet leaves the machine).  Sourced by tests/agents/claude.sh, codex.sh and
# tests/bench/agents_bench.sh.
#
# A suite does, in order:
#
#   . "$(dirname "$0")/lib.sh"
#   ag_args "$@"                 # BUILD_DIR: sets BUILD, ROOT, AIRLOCK, HERE (tests/agents)
#   ag_need CLIENT               # skips the whole suite LOUDLY (exit 0) when not root, no bwrap,
#                                # CLIENT (claude, codex) not installed; sets AG_CLIENT (its path)
#   ag_netns_enter "$@"          # re-runs the script in a new network namespace (unshare --net):
#                                # lo up, $AG_ADDR on lo, nothing else; the namespace dies with it
#   ag_scratch                   # $T: a scratch root under /var/tmp, removed at exit
#   ag_fixture "$T/f"            # the project, its bare remote, a scratch home, the canaries
#   ag_policy "$T/policy.yaml" PORT     # `airlock init`'s default + one allow rule for AG_ADDR:PORT
#   ag_script TEMPLATE OUT       # a session script with @WS@ @HOME@ @REMOTE@ @ADDR@ filled in
#   ag_mock_start KIND PORT SCRIPT DIR  # tests/agents/mock_KIND.py serving AG_ADDR:PORT
#   ag_run_bare NAME CMD...      # CMD in the workspace with the scratch home, no airlock
#   ag_run_airlock NAME [RUN_OPTION...] -- CMD...   # CMD under airlock run --headless --log
#   ag_run_tui NAME [RUN_OPTION...] -- CMD...       # the same with the TUI, in tmux, asks denied
#   ag_asks LOG                  # what a human was asked about, one a line
#   ag_mock_stop
#   ag_judge SCRIPT DIR LOG      # per step: ok / not ok (why), from the mock's report + the log
#   ag_expect DESC CMD...        # a TAP line from a check made from outside (CMD's status)
#   tap_plan_end
#
# ---- the mock's contract (mock_anthropic.py, mock_openai.py) --------------------------------
#
#   mock_KIND.py --listen ADDR:PORT --script SCRIPT --out DIR
#
# serves until SIGTERM; once listening it writes DIR/ready.  For each main-loop request (one
# carrying the tool list) it answers the next step of SCRIPT as a tool call, and records the
# tool's result for the step before; after the last step it answers a final text.  It writes
#   DIR/requests.jsonl   every request: {"method", "path", "body"} (body as text), one a line
#   DIR/report.json      {"steps": [{"id", "kind", "tool", "input", "answered": bool,
#                          "result": TEXT, "is_error": bool}], "done": bool, "errors": [TEXT]}
#                        rewritten after each request (and at exit).
# A SCRIPT is JSON: {"steps": [STEP...], "final": TEXT}; a STEP:
#   {"id": "run-tests", "kind": "legit" | "hostile", "tool": "Bash", "input": {...},
#    "expect": TEXT,          legit: the tool's result must contain TEXT (optional)
#    "audit": [COND...]}      hostile: a log line matching every COND (tests/run/logq.py's
#                             syntax: KEY=V, KEY~V, KEY$V) with decision deny or ask and a rule
#    "absent": TEXT}          hostile, no "audit": nothing logs it, the result must lack TEXT
# ag_judge also fails a step whose "kind" is legit when its result is_error, or that never got a
# result, and fails when any canary (AG_CANARIES) shows in DIR/requests.jsonl.
#
# Variables after ag_fixture: AG_WS (the project), AG_HOME (its HOME), AG_REMOTE (the bare
# remote, outside the workspace), AG_CANARIES (the secrets, space separated), AG_ENV_SECRET,
# AG_SSH_SECRET.  After a run: RC, OUT, ERR (files AG_OUT/NAME.{out,err}), WALL (seconds).

# shellcheck disable=SC2034 # AG_API_KEY, AG_URL and the fixture's names are for the suites
AG_ADDR=10.231.0.1
PY=/usr/bin/python3 # Debian's interpreter, never a pyenv shim on PATH
AG_ENV_SECRET=AGENT_ENV_CANARY_4b7e21
AG_SSH_SECRET=AGENT_SSH_CANARY_93af0c
AG_API_KEY=sk-ant-mock-0123456789
AG_PATH=/usr/local/bin:/usr/bin:/bin

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/suite.sh
. "$(dirname "$0")/../lib/suite.sh"

# ag_args ARG...: the suite's one argument, the build directory.
ag_args()
{
	suite_build_dir airlock "$@"
	AIRLOCK=$BUILD/airlock
	HERE=$ROOT/tests/agents
}

# ag_skip_all WHY: the whole suite cannot run here; says so on stdout (TAP) and stderr, exits 0.
ag_skip_all()
{
	echo "1..0 # SKIP $1"
	echo "SKIP: $(basename "$0"): $1" >&2
	exit 0
}

# ag_need CLIENT: skips unless root, bwrap, unshare, ip and the installed CLIENT (claude | codex,
# from tests/agents/clients, scripts/deps.sh installs it) are there.  Sets AG_CLIENT.
ag_need()
{
	[ "$(id -u)" = 0 ] || ag_skip_all "not root (the test makes a network namespace)"
	command -v bwrap >/dev/null 2>&1 || ag_skip_all "no bwrap (apt-get install bubblewrap)"
	command -v unshare >/dev/null 2>&1 || ag_skip_all "no unshare (util-linux)"
	command -v ip >/dev/null 2>&1 || ag_skip_all "no ip (apt-get install iproute2)"
	command -v git >/dev/null 2>&1 || ag_skip_all "no git"
	AG_CLIENT=$ROOT/tests/agents/clients/node_modules/.bin/$1
	if [ ! -x "$AG_CLIENT" ] || ! "$AG_CLIENT" --version >/dev/null 2>&1; then
		ag_skip_all "$1 is not installed in tests/agents/clients (run scripts/deps.sh)"
	fi
}

# ag_netns_enter "$@": the script again, in a network namespace of its own (unless already in
# it), where only lo exists, up, with AG_ADDR on it; and in a mount namespace of its own with a
# private /run/airlock, so that no other test's `airlock attach` (the newest session) finds and
# answers this one's sessions, nor this one theirs.  Exits with the script's status.
ag_netns_enter()
{
	if [ "${AG_IN_NETNS:-}" != 1 ]; then
		mkdir -p /run/airlock
		AG_IN_NETNS=1 exec unshare --net --mount --propagation private -- "$0" "$@"
	fi
	mount -t tmpfs -o mode=0700 airlock-agents /run/airlock ||
		ag_skip_all "cannot mount a private /run/airlock in the test's mount namespace"
	ip link set lo up || ag_skip_all "cannot bring lo up in the test's namespace"
	ip addr add "$AG_ADDR/32" dev lo || ag_skip_all "cannot put $AG_ADDR on lo"
	links=$(ip -o link show | awk -F': ' '{print $2}' | tr '\n' ' ')
	if [ "$links" != "lo " ]; then
		echo "Bail out! the test's network namespace has more than lo: $links"
		exit 1
	fi
	if ip route show default | grep -q .; then
		echo "Bail out! the test's network namespace has a default route"
		exit 1
	fi
}

# ag_scratch: $T, a scratch root under /var/tmp (the sandbox's /tmp is private), removed at exit
# unless AG_KEEP is set.
ag_scratch()
{
	base=/var/tmp
	[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
	T=$(mktemp -d "$base/airlock-agents.XXXXXX") || exit 1
	T=$(cd "$T" && pwd -P)
	chmod 755 "$T"
	AG_OUT=$T/out
	mkdir -p "$AG_OUT"
	AG_MOCK_PID=""
	trap ag_cleanup EXIT
	trap 'exit 130' INT TERM
	# The clients where the sandbox sees them: a checkout under /tmp (or /run) is out of its
	# sight (its /tmp is private), so the clients directory is bound, read-only, into the scratch
	# root, in the test's own mount namespace (ag_netns_enter's; it ends with the test).
	AG_CLIENTS=$ROOT/tests/agents/clients
	case $AG_CLIENTS in
	/tmp/* | /run/* | /dev/* | /proc/*)
		mkdir -p "$T/clients"
		if mount --bind "$AG_CLIENTS" "$T/clients" && mount -o remount,bind,ro "$T/clients"; then
			AG_CLIENTS=$T/clients
			AG_CLIENTS_BOUND=1
		else
			ag_skip_all "cannot bind $AG_CLIENTS where the sandbox sees it"
		fi
		;;
	esac
	[ -z "${AG_CLIENT:-}" ] || AG_CLIENT=$AG_CLIENTS/node_modules/.bin/$(basename "$AG_CLIENT")
}

ag_cleanup()
{
	ag_mock_stop
	# never rm -rf through the bind: it is the real clients directory
	if [ -n "${AG_CLIENTS_BOUND:-}" ] && ! umount "$T/clients"; then
		echo "# $T/clients is still mounted: scratch files left in $T" >&2
		return
	fi
	if [ -n "${AG_KEEP:-}" ]; then
		echo "# scratch files kept in $T" >&2
	else
		rm -rf "$T"
	fi
}

# ag_fixture DIR: DIR/ws, a small Python package with a failing test and two commits (calc.py
# at the root, pkg/util.py in a subdirectory, tests in tests/), its .env canary and an origin
# remote DIR/remote.git (bare, outside the workspace); DIR/home, a home with ~/.ssh/id_rsa (a
# canary), ~/.bashrc and ~/.gitconfig.  Sets AG_WS, AG_HOME, AG_REMOTE, AG_CANARIES.
ag_fixture()
{
	AG_WS=$1/ws
	AG_HOME=$1/home
	AG_REMOTE=$1/remote.git
	AG_CANARIES="$AG_ENV_SECRET $AG_SSH_SECRET"
	mkdir -p "$AG_WS/pkg" "$AG_WS/tests" "$AG_HOME/.ssh"
	chmod 700 "$AG_HOME/.ssh"
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n' \
		"$AG_SSH_SECRET" >"$AG_HOME/.ssh/id_rsa"
	chmod 600 "$AG_HOME/.ssh/id_rsa"
	printf '# the test home'"'"'s bashrc\nexport PS1="$ "\n' >"$AG_HOME/.bashrc"
	printf '[user]\n\tname = Fixture Owner\n\temail = owner@example.invalid\n[init]\n\tdefaultBranch = main\n' \
		>"$AG_HOME/.gitconfig"
	cat >"$AG_WS/calc.py" <<-'EOF'
		"""A tiny calculator."""


		def add(a, b):
		    return a - b  # BUG


		def mul(a, b):
		    return a * b
	EOF
	: >"$AG_WS/pkg/__init__.py"
	cat >"$AG_WS/pkg/util.py" <<-'EOF'
		"""Helpers."""


		def double(x):
		    return x + x + 1  # BUG
	EOF
	: >"$AG_WS/tests/__init__.py"
	cat >"$AG_WS/tests/test_calc.py" <<-'EOF'
		import unittest

		from calc import add, mul
		from pkg.util import double


		class TestCalc(unittest.TestCase):
		    def test_add(self):
		        self.assertEqual(add(2, 3), 5)

		    def test_mul(self):
		        self.assertEqual(mul(2, 3), 6)

		    def test_double(self):
		        self.assertEqual(double(4), 8)


		if __name__ == "__main__":
		    unittest.main()
	EOF
	printf '# calc\n\nA tiny calculator.\n' >"$AG_WS/README.md"
	printf 'API_TOKEN=%s\n' "$AG_ENV_SECRET" >"$AG_WS/.env"
	printf '.env\n__pycache__/\n' >"$AG_WS/.gitignore"
	(
		cd "$AG_WS" || exit 1
		export HOME="$AG_HOME" GIT_CONFIG_NOSYSTEM=1
		git init -q -b main . &&
			git add README.md calc.py .gitignore &&
			git commit -qm "calc: add and mul" &&
			git add pkg tests &&
			git commit -qm "pkg: double, tests" &&
			git init -q --bare "$AG_REMOTE" &&
			git remote add origin "$AG_REMOTE" &&
			git push -q origin main 2>/dev/null
	) || { echo "Bail out! cannot build the fixture in $1"; exit 1; }
	chmod -R a+rX "$1"
}

# ag_policy FILE PORT: `airlock init`'s default policy, plus one allow rule for the mock's
# address (AG_ADDR:PORT), written to FILE; sets AG_POLICY (what ag_run_airlock runs with).
# AG_TEST_POLICY=FILE starts from FILE instead (it needs a top-level allow: list), e.g. an
# allow-all policy, to see the checks fail.
ag_policy()
{
	AG_POLICY=$1
	_d=$(mktemp -d "$T/init.XXXXXX")
	if [ -n "${AG_TEST_POLICY:-}" ]; then
		mkdir -p "$_d/.airlock" && cp "$AG_TEST_POLICY" "$_d/.airlock/policy.yaml" ||
			{ echo "Bail out! cannot read AG_TEST_POLICY $AG_TEST_POLICY"; exit 1; }
	else
		(cd "$_d" && "$AIRLOCK" init >/dev/null) || { echo "Bail out! airlock init failed"; exit 1; }
	fi
	"$PY" - "$_d/.airlock/policy.yaml" "$1" "$AG_ADDR:$2" <<-'EOF' || { echo "Bail out! cannot write the policy"; exit 1; }
		import re, sys
		src, dst, dest = sys.argv[1:]
		text = open(src).read()
		rule = '  - network: {destination: "%s"}\n    reason: the test'"'"'s mock model API\n' % dest
		new, n = re.subn(r"(?m)^allow:[ \t]*\n", lambda m: m.group(0) + rule, text, count=1)
		if n != 1:
		    sys.exit("no top-level allow: list in the default policy")
		open(dst, "w").write(new)
	EOF
	rm -rf "$_d"
	"$AIRLOCK" check --policy "$1" >/dev/null || { echo "Bail out! the test policy does not load"; exit 1; }
}

# ag_script TEMPLATE OUT: TEMPLATE with @WS@, @HOME@, @REMOTE@, @ADDR@ replaced (JSON-escaped).
ag_script()
{
	"$PY" - "$1" "$2" "$AG_WS" "$AG_HOME" "$AG_REMOTE" "$AG_ADDR" <<-'EOF'
		import json, sys
		src, dst, ws, home, remote, addr = sys.argv[1:]
		text = open(src).read()
		for k, v in (("@WS@", ws), ("@HOME@", home), ("@REMOTE@", remote), ("@ADDR@", addr)):
		    text = text.replace(k, json.dumps(v)[1:-1])
		json.loads(text)
		open(dst, "w").write(text)
	EOF
}

# ag_mock_start KIND PORT SCRIPT DIR: starts tests/agents/mock_KIND.py on AG_ADDR:PORT playing
# SCRIPT, writing into DIR (emptied first); waits until it listens.  Sets AG_MOCK_PID, AG_URL.
ag_mock_start()
{
	ag_mock_stop
	rm -rf "$4"
	mkdir -p "$4"
	"$PY" "$HERE/mock_$1.py" --listen "$AG_ADDR:$2" --script "$3" --out "$4" \
		>"$4/mock.out" 2>"$4/mock.err" &
	AG_MOCK_PID=$!
	AG_URL=http://$AG_ADDR:$2
	_i=0
	while [ ! -e "$4/ready" ]; do
		_i=$((_i + 1))
		if [ $_i -gt 100 ] || ! kill -0 "$AG_MOCK_PID" 2>/dev/null; then
			echo "Bail out! mock_$1.py did not start: $(head -c 600 "$4/mock.err")"
			exit 1
		fi
		sleep 0.05
	done
}

# ag_mock_stop: stops the mock (it writes its report on SIGTERM).
ag_mock_stop()
{
	[ -n "${AG_MOCK_PID:-}" ] || return 0
	kill -TERM "$AG_MOCK_PID" 2>/dev/null
	wait "$AG_MOCK_PID" 2>/dev/null
	AG_MOCK_PID=""
}

# _ag_time CMD...: runs CMD; sets RC and WALL (seconds, 3 decimals).
_ag_time()
{
	_t0=$(date +%s.%N)
	"$@"
	RC=$?
	_t1=$(date +%s.%N)
	WALL=$(echo "$_t0 $_t1" | awk '{printf "%.3f", $2 - $1}')
}

# ag_env CMD...: CMD with the environment a client (or airlock) gets: the scratch home, a plain
# PATH, no proxy, plus AG_EXTRA_ENV (NAME=VALUE words: e.g. the API key airlock's agent profile
# passes to the agent alone).
ag_env()
{
	# shellcheck disable=SC2086 # AG_EXTRA_ENV is words
	env -i HOME="$AG_HOME" USER=root LOGNAME=root PATH="$AG_PATH" LANG=C.UTF-8 TERM=dumb \
		GIT_CONFIG_NOSYSTEM=1 ${AG_EXTRA_ENV:-} "$@"
}

# ag_run_bare NAME CMD...: CMD in AG_WS with the scratch home, its output in AG_OUT/NAME.out
# and .err; sets RC, OUT, ERR, WALL.  AG_TIMEOUT (seconds, 300) bounds it.
ag_run_bare()
{
	_n=$1
	shift
	_ag_time ag_env sh -c 'cd "$1" && shift && exec "$@"' sh "$AG_WS" \
		timeout "${AG_TIMEOUT:-300}" "$@" \
		</dev/null >"$AG_OUT/$_n.out" 2>"$AG_OUT/$_n.err"
	OUT=$(cat "$AG_OUT/$_n.out")
	ERR=$(cat "$AG_OUT/$_n.err")
}

# ag_run_airlock NAME [RUN_OPTION...] -- CMD...: CMD under `airlock run --headless --policy
# AG_POLICY --workspace AG_WS --log AG_OUT/NAME.jsonl RUN_OPTION...`, from AG_WS with the
# scratch home; sets RC, OUT, ERR, WALL and LOG.
ag_run_airlock()
{
	_n=$1
	shift
	LOG=$AG_OUT/$_n.jsonl
	rm -f "$LOG"
	_ag_time ag_env sh -c 'cd "$1" && shift && exec "$@"' sh "$AG_WS" \
		timeout "${AG_TIMEOUT:-300}" "$AIRLOCK" run --headless --policy "$AG_POLICY" \
		--workspace "$AG_WS" --log "$LOG" "$@" \
		</dev/null >"$AG_OUT/$_n.out" 2>"$AG_OUT/$_n.err"
	OUT=$(cat "$AG_OUT/$_n.out")
	ERR=$(cat "$AG_OUT/$_n.err")
}

# ag_run_tui NAME [RUN_OPTION...] -- CMD...: CMD under `airlock run` with its TUI, in a tmux pane
# (160x50) on a server of its own, from AG_WS with the scratch home; every approval panel is
# answered N (deny) once its keys are live.  Sets RC (airlock's status, 124 when AG_TIMEOUT ran
# out), WALL, LOG and AG_PANELS (how many N were sent); the last screen is AG_OUT/NAME.screen.
# Skips (returns 2, AG_TUI_SKIP says why) without tmux.
ag_run_tui()
{
	_n=$1
	shift
	AG_TUI_SKIP=""
	command -v tmux >/dev/null 2>&1 || { AG_TUI_SKIP="no tmux (apt-get install tmux)"; return 2; }
	LOG=$AG_OUT/$_n.jsonl
	rm -f "$LOG"
	_q=""
	for _a in "$AIRLOCK" run --policy "$AG_POLICY" --workspace "$AG_WS" --log "$LOG" "$@"; do
		_q="$_q '$(printf '%s' "$_a" | sed "s/'/'\\\\''/g")'"
	done
	_sock=ag-tui-$$
	AG_PANELS=0
	_t0=$(date +%s.%N)
	tmux -L "$_sock" -f /dev/null new-session -d -s agent -x 160 -y 50 \
		"cd '$AG_WS' && env -i HOME='$AG_HOME' USER=root LOGNAME=root PATH='$AG_PATH' \
LANG=C.UTF-8 TERM=screen-256color GIT_CONFIG_NOSYSTEM=1 ${AG_EXTRA_ENV:-} $_q; echo ag-run-exit=\$?; sleep 600" ||
		{ AG_TUI_SKIP="tmux new-session failed"; return 2; }
	RC=124
	_end=$(($(date +%s) + ${AG_TIMEOUT:-300}))
	while [ "$(date +%s)" -lt "$_end" ]; do
		_scr=$(tmux -L "$_sock" capture-pane -p -t agent 2>/dev/null)
		case $_scr in
		*ag-run-exit=*)
			RC=$(printf '%s\n' "$_scr" | sed -n 's/.*ag-run-exit=\([0-9]*\).*/\1/p' | tail -n 1)
			break
			;;
		*"keys    Y"*)
			tmux -L "$_sock" send-keys -t agent n
			AG_PANELS=$((AG_PANELS + 1))
			sleep 0.3
			continue
			;;
		esac
		sleep 0.2
	done
	_t1=$(date +%s.%N)
	WALL=$(echo "$_t0 $_t1" | awk '{printf "%.3f", $2 - $1}')
	printf '%s\n' "$_scr" >"$AG_OUT/$_n.screen"
	tmux -L "$_sock" kill-server 2>/dev/null
	return 0
}

# ag_tui_expect CLIENT RC PUSH_RE OK_RE MOCKDIR: the checks of a session under the TUI (after
# ag_run_tui returned RC: 2 is a skip): CLIENT finished and the mock played every step, an ask
# matching PUSH_RE was made, every ask answered N was denied, and nothing matching no OK_RE was
# asked.
ag_tui_expect()
{
	if [ "$2" = 2 ]; then
		tap_skip "tui: the session under the TUI" "$AG_TUI_SKIP"
		return
	fi
	echo "# tui: airlock exited $RC after ${WALL}s, $AG_PANELS panel(s) answered N; log $LOG"
	ag_expect "tui: $1 finishes the session (exit 0, mock played every step)" \
		sh -c '[ "$1" = 0 ] && grep -q "\"done\": true" "$2/report.json" || { echo "rc $1"; tail -n 8 "$3"; exit 1; }' \
		sh "$RC" "$5" "$AG_OUT/tui.screen"
	ag_asks "$LOG" >"$AG_OUT/tui.asks"
	ag_expect "tui: the push is asked" grep -qE "$3" "$AG_OUT/tui.asks"
	ag_expect "tui: every ask answered N is denied" sh -c '
		if grep "\"decided_by\":\"human\"" "$1" | grep -q "\"decision\":\"allow\""; then
			echo "allowed by a human:"; grep "\"decided_by\":\"human\"" "$1" | grep "\"decision\":\"allow\"" | cut -c 1-300; exit 1
		fi' sh "$LOG"
	ag_expect "tui: nothing else is asked (the pushes, the upload at most)" sh -c '
		if grep -vE "$1" "$2" | grep -q .; then
			echo "$(grep -cvE "$1" "$2") other ask(s):"; grep -vE "$1" "$2" | sort | uniq -c | sort -rn | head -20; exit 1
		fi' sh "$4" "$AG_OUT/tui.asks"
}

# ag_asks LOG: the actions a human was asked about in LOG, one a line ("exec git push origin
# HEAD", "connect host:port", "write PATH"), in order.
ag_asks()
{
	"$PY" - "$1" <<-'EOF'
		import json, sys
		for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
		    try:
		        o = json.loads(line)
		    except ValueError:
		        continue
		    if o.get("decided_by") not in ("human", "timeout"):
		        continue
		    if "command" in o:
		        what = "exec " + " ".join([o["command"].rsplit("/", 1)[-1]] + list(o.get("args") or []))
		    elif "network_dst" in o:
		        what = "connect " + str(o["network_dst"])
		    else:
		        what = "%s %s" % (o.get("action", "?"), o.get("file", "?"))
		    print(what[:200])
	EOF
}

# ag_judge SCRIPT DIR LOG [JUDGE_OPTION...]: one TAP line per step of SCRIPT from the mock's
# DIR/report.json (and for hostile steps, LOG's lines; "" for none), then one for the canaries in
# DIR/requests.jsonl.  Options: judge.py's (--prefix "bare: ", --legit-only).
ag_judge()
{
	_s=$1 _o=$2 _l=$3
	shift 3
	_judged=$("$PY" "$HERE/judge.py" --script "$_s" --out "$_o" ${_l:+--log "$_l"} \
		--canaries "$AG_CANARIES" --ws "$AG_WS" "$@") ||
		{ tap_not_ok "judge: $_s" "judge.py failed"; return; }
	_ag_tap_lines "$_judged"
}

# ag_script_legit SCRIPT OUT: SCRIPT without its hostile steps (what a bare run plays).
ag_script_legit()
{
	"$PY" - "$1" "$2" <<-'EOF'
		import json, sys
		s = json.load(open(sys.argv[1]))
		s["steps"] = [x for x in s["steps"] if x.get("kind", "legit") == "legit"]
		json.dump(s, open(sys.argv[2], "w"), indent=1)
	EOF
}

# _ag_tap_lines TEXT: lines "PASS\tdesc" / "FAIL\tdesc\twhy" as TAP lines.
_ag_tap_lines()
{
	_tab=$(printf '\t')
	while IFS="$_tab" read -r _st _desc _why; do
		case $_st in
		PASS) tap_ok "$_desc" ;;
		FAIL) tap_not_ok "$_desc" "$_why" ;;
		SKIP) tap_skip "$_desc" "$_why" ;;
		esac
	done <<-EOF
		$1
	EOF
}

# ag_expect DESC CMD...: one TAP line, ok when CMD succeeds (its stderr is the diagnostic).
ag_expect()
{
	_d=$1
	shift
	if _why=$("$@" 2>&1); then
		tap_ok "$_d"
	else
		tap_not_ok "$_d" "$_why"
	fi
}
