# lib.sh — helpers for airlock run's integration tests: users, scratch trees, running the real
# build/airlock, and assertions on the audit log (the rest: tests/lib/check.sh).
#
# Sourced by tests/run/run.sh, hostile.sh and tests/proxy/run.sh after BUILD (absolute) and
# HERE (tests/run, absolute) are set.
#
#   use_user root                       # or nobody: $W workspace, $H home, $L logs, $P policies
#   arun --headless -- sh -c 'cat .env' # the real `airlock run`; sets RC, OUT, ERR, LOG
#   check "root: .env is not readable"  # start a check
#   expect_rc_not 0; expect_out_lacks "$ENV_SECRET"; expect_log file="$W/.env" decision=deny
#   done_check                          # prints ok / not ok
#
# Cases that fail because of a known bug in `airlock run` say so in their
# description ("[run bug: ...]") so `grep 'run bug'` finds them; they keep the
# correct expectation and fail until the launcher is fixed.

PY=/usr/bin/python3 # Debian's interpreter, never a pyenv shim on PATH
LOGQ="$HERE/logq.py"
PTYDRIVE="$HERE/ptydrive.py"
CASE_TIMEOUT=${CASE_TIMEOUT:-40}
AGENT_PATH=/usr/bin:/bin

# Secrets planted in every scratch tree: none of them may ever show in an agent's output.
ENV_SECRET=ENV_SECRET_7f3a9c
SSH_SECRET=SSH_PRIVATE_KEY_51d2e8
AWS_SECRET=AWS_SECRET_ACCESS_KEY_90be4f
API_SECRET=sk-api-secret-3c61d0

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh" # every suite lives in tests/NAME/
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
# shellcheck source=tests/lib/nobody.sh
. "$(dirname "$0")/../lib/nobody.sh"

# A failed check shows 800 bytes of stderr and the tail of the run's audit log.
CHECK_ERR_BYTES=800
check_details() { printf 'log: %s' "$(tail -n 6 "${LOG:-/dev/null}" 2>/dev/null | cut -c 1-400)"; }

# ---- the scratch tree ---------------------------------------------------------------------

# Creates $T, the scratch root.  Not under /tmp: the sandbox has a private /tmp, so a
# workspace or home there would be bound late and a home there would not show at all; a
# real user's home and project are not in /tmp either.  0755, so nobody can reach its tree.
lib_setup()
{
	base=/var/tmp
	[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
	T=$(mktemp -d "$base/airlock-run-test.XXXXXX") || exit 1
	T=$(cd "$T" && pwd -P)
	chmod 755 "$T"
	mkdir -p "$T/bin"
	BG_PIDS=""
	CASE_N=0
	trap lib_cleanup EXIT
	trap 'exit 130' INT TERM
}

lib_cleanup()
{
	for p in $BG_PIDS; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ -n "${KEEP_TMP:-}" ]; then
		echo "# kept $T" >&2
	else
		rm -rf "$T"
	fi
}

# user_setup NAME: a tree for NAME under $T/NAME: ws (a git repo with a README, a Makefile and
# a .env), home (.ssh/id_rsa, .aws/credentials, .gitconfig), logs, policies; owned by NAME.
user_setup()
{
	u=$T/$1
	mkdir -p "$u/ws" "$u/home/.ssh" "$u/home/.aws" "$u/logs" "$u/policies"
	printf 'SECRET=%s\n' "$ENV_SECRET" >"$u/ws/.env"
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n' "$SSH_SECRET" >"$u/home/.ssh/id_rsa"
	chmod 600 "$u/home/.ssh/id_rsa"
	printf '[default]\naws_secret_access_key = %s\n' "$AWS_SECRET" >"$u/home/.aws/credentials"
	printf '[user]\n\tname = Airlock Test\n\temail = test@airlock.invalid\n[safe]\n\tdirectory = *\n[init]\n\tdefaultBranch = main\n' >"$u/home/.gitconfig"
	printf 'hello from the readme\n' >"$u/ws/README.md"
	printf 'all:\n\t@echo made-it\n' >"$u/ws/Makefile"
	printf '.env\n' >"$u/ws/.gitignore"
	(cd "$u/ws" && HOME="$u/home" git init -q . && HOME="$u/home" git add README.md Makefile .gitignore &&
		HOME="$u/home" git commit -q -m initial) >/dev/null 2>&1
	if [ "$1" != "$(id -un)" ]; then
		chown -R "$1:$(id -gn "$1")" "$u"
	fi
}

# use_user NAME: later runs are NAME's (root: as is; another user: through setpriv).
use_user()
{
	RUN_USER=$1
	U=$T/$1
	W=$U/ws
	H=$U/home
	L=$U/logs
	P=$U/policies
	if [ "$1" = "$(id -un)" ]; then
		AS=""
	else
		AS="setpriv --reuid=$1 --regid=$(id -gn "$1") --clear-groups"
	fi
}

# write_policy NAME: stdin becomes $P/NAME (readable by the user); prints its path.
write_policy()
{
	cat >"$P/$1"
	chmod 644 "$P/$1"
	[ -z "$AS" ] || chown "$RUN_USER" "$P/$1"
	printf '%s\n' "$P/$1"
}

# fresh_asked: an empty $W/asked, owned by the user the cases run as.
fresh_asked()
{
	rm -rf "${W:?}/asked"
	mkdir -p "$W/asked"
	[ -z "$AS" ] || chown -R "$RUN_USER" "$W/asked"
}

# ask_policy: writes ask.yaml (writes below ./asked/ ask) and prints its path.
ask_policy()
{
	write_policy ask.yaml <<'EOF'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
ask:
  - file: { path: "./asked/**", action: write }
    reason: writes under asked/ wait for a human
EOF
}

# ---- running airlock ------------------------------------------------------------------------

# arun AIRLOCK-RUN-ARGS...: `airlock run --log $LOG ARGS...` as $RUN_USER in $W with a clean
# environment (PATH, HOME, USER, LANG and $CALLER_ENV); stdin /dev/null.  Sets RC, OUT, ERR,
# LOG (a fresh file per run) and ELAPSED (seconds, whole).
arun()
{
	CASE_N=$((CASE_N + 1))
	LOG=$L/case.$CASE_N.jsonl
	t0=$(date +%s)
	(
		cd "$W" || exit 125
		# shellcheck disable=SC2086 # AS and CALLER_ENV are word lists
		exec $AS env -i PATH="$AGENT_PATH" HOME="$H" USER="$RUN_USER" LANG=C.UTF-8 ${CALLER_ENV:-} \
			timeout -k 3 "$CASE_TIMEOUT" "$AIRLOCK" run --log "$LOG" "$@"
	) >"$T/out" 2>"$T/err" </dev/null
	RC=$?
	ELAPSED=$(($(date +%s) - t0))
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}

# acmd ARGS...: `airlock ARGS...` (not run) the same way.  Sets RC, OUT, ERR.
acmd()
{
	(
		cd "$W" || exit 125
		# shellcheck disable=SC2086
		exec $AS env -i PATH="$AGENT_PATH" HOME="$H" USER="$RUN_USER" LANG=C.UTF-8 \
			timeout -k 3 "$CASE_TIMEOUT" "$AIRLOCK" "$@"
	) >"$T/out" 2>"$T/err" </dev/null
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}

# arun_bg OUTFILE AIRLOCK-RUN-ARGS...: starts airlock run in the background ($CALLER_ENV as
# for arun; no timeout
# wrapper, so $BGPID is airlock itself: setpriv and env exec it).  Sets BGPID and LOG.
arun_bg()
{
	of=$1
	shift
	CASE_N=$((CASE_N + 1))
	LOG=$L/case.$CASE_N.jsonl
	(
		cd "$W" || exit 125
		# shellcheck disable=SC2086
		exec $AS env -i PATH="$AGENT_PATH" HOME="$H" USER="$RUN_USER" LANG=C.UTF-8 ${CALLER_ENV:-} \
			"$AIRLOCK" run --log "$LOG" "$@"
	) >"$of" 2>"$of.err" </dev/null &
	BGPID=$!
	BG_PIDS="$BG_PIDS $BGPID"
}

# wait_file FILE [TENTHS]: waits until FILE exists (default 10 s).  0 when it does.
wait_file()
{
	i=0
	while [ ! -e "$1" ] && [ $i -lt "${2:-100}" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$1" ]
}

# wait_pid_gone PID TENTHS: waits for PID (our child) to end; sets BGRC (124: still running).
wait_pid_gone()
{
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt "$2" ]; do
		# a zombie still answers kill -0: reap it when it has exited
		if [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = "Z" ]; then
			break
		fi
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != "Z" ]; then
		BGRC=124
		return 1
	fi
	wait "$1"
	BGRC=$?
	return 0
}

# ---- checks (more in tests/lib/check.sh) ------------------------------------------------------

# expect_secret_safe: none of the planted secrets shows on stdout or stderr.
expect_secret_safe()
{
	for s in "$ENV_SECRET" "$SSH_SECRET" "$AWS_SECRET" "$API_SECRET"; do
		case "$OUT$ERR" in *"$s"*) _fail "a secret ($s) was printed" ;; esac
	done
}

# ---- the audit log ----------------------------------------------------------------------------

# expect_log COND...: $LOG has a line matching every COND (see logq.py: K=V, K~V, K$V, !K).
expect_log()
{
	"$PY" "$LOGQ" "$LOG" find --wait 1 "$@" >/dev/null ||
		_fail "no log line with: $*"
}

# expect_no_log COND...: $LOG has no such line.
expect_no_log()
{
	line=$("$PY" "$LOGQ" "$LOG" find "$@") && _fail "unexpected log line: $(printf '%s' "$line" | cut -c 1-300)"
}

# expect_log_count N COND...: exactly N lines of $LOG match.
expect_log_count()
{
	want=$1
	shift
	got=$("$PY" "$LOGQ" "$LOG" count "$@")
	[ "$got" = "$want" ] || _fail "expected $want log line(s) with $*, got $got"
}

# expect_log_valid: every line of $LOG is a JSON object with the mandatory fields.
expect_log_valid()
{
	why=$("$PY" "$LOGQ" "$LOG" valid) || _fail "log $LOG: $why"
}
