#!/bin/sh
# demo.sh — shows what the default policy decides for each action of the example agent, in a scratch git repo.
# Usage: scripts/demo.sh BUILD/airlock
# Until `airlock run` exists this asks `airlock check` about each line of examples/agent_actions.txt.
set -eu

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 BUILD/airlock" >&2
	exit 2
fi
AIRLOCK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
AIRLOCK_ARG=$1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ACTIONS="$ROOT/examples/agent_actions.txt"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/airlock-demo.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# A scratch home, so the demo decides the same on every machine and touches nothing of yours.
export HOME="$TMP/home"
unset XDG_CONFIG_HOME
mkdir -p "$HOME/.ssh" "$TMP/project/src"
echo "not a real key" >"$HOME/.ssh/id_rsa"

if [ -t 1 ]; then
	RED=$(printf '\033[31m') GREEN=$(printf '\033[32m') YELLOW=$(printf '\033[33m')
	BOLD=$(printf '\033[1m') RESET=$(printf '\033[0m')
else
	RED="" GREEN="" YELLOW="" BOLD="" RESET=""
fi

make_project() {
	cd "$TMP/project"
	git init -q -b main . 2>/dev/null || git init -q .
	printf 'def main():\n    print("hello")\n' >src/app.py
	printf 'test:\n\tpython3 -c "import src.app"\n' >Makefile
	echo "API_KEY=not-a-real-secret" >.env
	echo ".env" >.gitignore
	git add -A
	git -c user.name=demo -c user.email=demo@example.invalid commit -q -m "initial commit"
}

echo "${BOLD}airlock demo${RESET}: a scratch project in $TMP/project"
make_project
echo
echo "\$ airlock init"
"$AIRLOCK" init
echo
echo "The example agent's actions (examples/agent_actions.txt), decided by .airlock/policy.yaml:"
echo

# colour DECISION: the decision, padded, in its colour.
colour() {
	case $1 in
	allow) printf '%s%-8s%s' "$GREEN" allow "$RESET" ;;
	ask) printf '%s%-8s%s' "$YELLOW" ask "$RESET" ;;
	deny) printf '%s%-8s%s' "$RED" deny "$RESET" ;;
	*) printf '%-8s' "$1" ;;
	esac
}

# field LABEL: the text after "  LABEL: " in the last check's output.
field() {
	sed -n "s/^  $1: *//p" "$TMP/out" | head -n 1
}

printf '%s%-8s  %-36s  %-18s  %s%s\n' "$BOLD" DECISION ACTION RULE REASON "$RESET"
allowed=0 asked=0 denied=0
set -f
while IFS= read -r line || [ -n "$line" ]; do
	case $line in "" | "#"*) continue ;; esac
	# shellcheck disable=SC2086 # the words of the line are the arguments
	set -- $line
	words=""
	for w in "$@"; do
		# A literal "~/" in the actions file means the home directory.
		# shellcheck disable=SC2088
		case $w in "~/"*) w="$HOME/${w#"~/"}" ;; esac
		words="$words $w"
	done
	# shellcheck disable=SC2086
	set -- $words
	rc=0
	"$AIRLOCK" check "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	case $rc in
	0) allowed=$((allowed + 1)) decision=allow ;;
	3) asked=$((asked + 1)) decision=ask ;;
	4) denied=$((denied + 1)) decision=deny ;;
	*)
		echo "demo: airlock check $line failed (exit $rc):" >&2
		cat "$TMP/err" >&2
		exit 1
		;;
	esac
	rule=$(field rule)
	reason=$(field reason)
	case $rule in
	default*) reason="no rule matches: the policy's default" ;;
	*)
		# "FILE:LINE LIST KIND PATTERN...": without a reason, show what the rule matches.
		[ -n "$reason" ] || reason="matches $(printf "%s\n" "$rule" | cut -d' ' -f3-)"
		rule=${rule%% *}
		;;
	esac
	printf '%s  %-36.36s  %-18.18s  %s\n' "$(colour "$decision")" "$line" "${rule#.airlock/}" \
		"$reason"
done <"$ACTIONS"
set +f

echo
echo "${BOLD}$((allowed + asked + denied)) actions: ${GREEN}$allowed allowed${RESET}${BOLD}," \
	"${YELLOW}$asked asked${RESET}${BOLD}, ${RED}$denied denied${RESET}"
echo
echo "Under \`airlock run\` (coming next) the asked ones wait for you, the denied ones fail"
echo "with EACCES / ECONNREFUSED, and every decision goes to the audit log.  Try your own:"
echo "  $AIRLOCK_ARG check exec git push --force origin main"
