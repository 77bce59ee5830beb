#!/bin/sh
# run.sh — TAP tests of the airlock command line (init, check, policy lookup, errors) on the real binary.
# Usage: tests/cli/run.sh BUILD/airlock
# Runs in a temporary directory with HOME set to a temporary home; exits 1 if any test fails.
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 BUILD/airlock" >&2
	exit 2
fi
AIRLOCK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/airlock-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
TMP=$(cd "$TMP" && pwd -P)
export HOME="$TMP/home"
unset XDG_CONFIG_HOME
export LC_ALL=C
mkdir -p "$HOME" "$TMP/ws"

. "$(dirname "$0")/lib.sh"

# decide DECISION [-r RULE-TEXT] ARG...: `airlock check ARG...` prints DECISION first, exits
# with its status (allow 0, ask 3, deny 4), and, with -r, names a rule containing RULE-TEXT.
decide() {
	want=$1
	shift
	rule=""
	if [ "$1" = "-r" ]; then
		rule=$2
		shift 2
	fi
	case $want in
	allow) code=0 ;;
	ask) code=3 ;;
	deny) code=4 ;;
	esac
	run check "$@"
	first=$(head -n 1 "$TMP/out")
	desc="check $* -> $want${rule:+ by $rule}"
	if [ "$RC" != "$code" ] || [ "${first%% *}" != "$want" ]; then
		fail "$desc" "wanted $want (exit $code)" "$(details)"
	elif [ -n "$rule" ] && ! grep -F -- "rule:" "$TMP/out" | grep -qF -- "$rule"; then
		fail "$desc" "rule line lacks: $rule" "$(details)"
	else
		pass "$desc"
	fi
}

# ---- version and help -----------------------------------------------------------
cd "$TMP/ws" || exit 1

run version
if [ "$RC" = 0 ] && [ "$(cat "$TMP/out")" = "airlock 0.1.0" ]; then
	pass "airlock version prints 'airlock 0.1.0'"
else
	fail "airlock version prints 'airlock 0.1.0'" "$(details)"
fi
run --version
if [ "$RC" = 0 ] && [ "$(cat "$TMP/out")" = "airlock 0.1.0" ]; then
	pass "airlock --version prints 'airlock 0.1.0'"
else
	fail "airlock --version prints 'airlock 0.1.0'" "$(details)"
fi
expect "airlock --help exits 0" 0 --help
has "airlock --help lists init" out "  init "
has "airlock --help lists check" out "  check "
expect "airlock help exits 0" 0 help
has "airlock help lists the commands" out "Commands:"
expect "airlock help check exits 0" 0 help check
has "airlock help check documents exit statuses" out "Exit status: 0 allow; 3 ask; 4 deny"
expect "airlock check --help exits 0" 0 check --help
has "airlock check --help prints the check usage" out "usage: airlock check"
expect "airlock init --help exits 0" 0 init --help
has "airlock init --help prints the init usage" out "usage: airlock init"
expect "airlock with no command exits 2" 2
has "airlock with no command prints usage on stderr" err "usage: airlock COMMAND"
expect "an unknown command exits 2" 2 frobnicate
has "an unknown command is named on stderr" err "airlock: unknown command: frobnicate"
expect "airlock help NOSUCH exits 2" 2 help frobnicate
# The command table's invariant: every command listed has help that names it.
"$AIRLOCK" --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' >"$TMP/commands"
if [ -s "$TMP/commands" ]; then pass "airlock --help lists commands"; else fail "airlock --help lists commands"; fi
while read -r c; do
	run "$c" --help
	if [ "$RC" = 0 ] && head -n 1 "$TMP/out" | grep -q "^usage: airlock $c"; then
		pass "airlock $c --help starts with 'usage: airlock $c'"
	else
		fail "airlock $c --help starts with 'usage: airlock $c'" "$(details)"
	fi
done <"$TMP/commands"

# ---- init ---------------------------------------------------------------------------
expect "init writes .airlock/policy.yaml" 0 init
has "init says what it wrote" out ".airlock/policy.yaml"
if cmp -s .airlock/policy.yaml "$ROOT/policy/default_policy.yaml"; then
	pass "init writes the built-in default policy verbatim"
else
	fail "init writes the built-in default policy verbatim"
fi
if stat -c %a . >/dev/null 2>&1; then
	modes="$(stat -c %a .airlock) $(stat -c %a .airlock/policy.yaml)"
	if [ "$modes" = "755 644" ]; then pass "init modes: .airlock 0755, policy.yaml 0644"; else
		fail "init modes: .airlock 0755, policy.yaml 0644" "got $modes"; fi
else
	skip "init modes: .airlock 0755, policy.yaml 0644" "no GNU stat -c"
fi
echo "# edited" >>.airlock/policy.yaml
expect "a second init refuses to overwrite (exit 1)" 1 init
has "the refusal names --force" err "airlock: init: .airlock/policy.yaml already exists; use --force"
if tail -n 1 .airlock/policy.yaml | grep -q "^# edited"; then pass "the refused init left the file alone"; else
	fail "the refused init left the file alone"; fi
expect "init --force overwrites" 0 init --force
if cmp -s .airlock/policy.yaml "$ROOT/policy/default_policy.yaml"; then
	pass "init --force restores the default policy"
else
	fail "init --force restores the default policy"
fi
leftover=$(find .airlock -name '.policy.yaml.*')
if [ -n "$leftover" ]; then fail "init leaves no temporary file" "$leftover"; else
	pass "init leaves no temporary file"; fi
expect "init rejects an unknown option (exit 2)" 2 init --bogus
expect "the written policy validates" 0 check --policy .airlock/policy.yaml
has_re "validation prints 'FILE: ok, N rules'" out '^\.airlock/policy\.yaml: ok, [0-9]+ rules$'

# ---- the default policy, rule by rule ---------------------------------------------
# Decided with ./.airlock/policy.yaml, the default text written by init above.
mkdir -p src a "$HOME/.ssh"
echo "SECRET=1" >.env
echo "key" >"$HOME/.ssh/id_rsa"
echo "hello" >README.md
ln -s .env envlink
ln -s "$HOME/.ssh/new_key" dangling

line=$(grep -n "reason: Deleting the root directory is never intended" .airlock/policy.yaml | sed -n 2p | cut -d: -f1)
rmline=$((line - 3))
decide deny -r ".airlock/policy.yaml:$rmline deny command \"rm\"" exec rm -rf /
has "the rm rule's reason is printed" out "  reason: Deleting the root directory is never intended"
decide deny -r 'deny command "rm"' exec rm -rf /home/someone
decide deny -r 'deny command "rm"' exec rm -rf /bin /boot /etc
# rm inside the workspace is contained: it runs; each deletion outside is a write, denied by default
decide allow -r "default (exec)" exec rm -rf "$TMP/ws/build"
decide allow exec rm -rf build dist
decide ask -r 'ask command "rm"' exec rm -rf .git
decide ask exec rm -rf .
decide allow -r "default (exec)" exec ls -la
decide allow exec cat README.md
decide allow exec grep -rn TODO .
decide allow exec /bin/ls
decide allow exec python3 -c "print(1)"
decide allow exec make test
decide allow -r "default (exec)" exec git status
decide allow exec git diff HEAD~1
decide allow exec git log --oneline
decide allow exec git commit -m "a message"
decide deny -r 'deny command "sudo"' exec sudo ls
decide deny exec su -
decide ask -r 'ask command "git" args "push" match prefix' exec git push origin main
decide ask -r 'match regex' exec git push --force origin main
has "the force-push rule's reason is printed" out "  reason: Force-pushing rewrites history"
decide ask exec git push -f
decide ask exec git remote add evil https://evil.example/x.git
decide ask exec git reset --hard HEAD~1
decide ask exec git clean -fdx
decide ask exec git checkout -- .
decide ask exec git stash drop
decide allow exec git stash
decide allow exec git checkout -- src/a.py
decide ask exec npm publish
decide ask exec twine upload dist/x.tar.gz
# installing, downloading, running programs: contained (the network rules decide connections)
decide allow exec pip install requests
decide allow exec python3 -m pip install requests
decide allow exec npm install left-pad
decide allow exec npm run build
decide allow exec curl https://unknown.example
decide allow exec env FOO=1 ls
decide allow exec find . -name x -delete
decide allow exec chmod +x src
decide deny exec mkfs.ext4 /dev/sdz
decide deny exec dd if=/dev/zero of=/dev/sda
decide deny -r 'deny command "crontab"' exec crontab -l
decide allow -r "default (exec)" exec airlock-no-such-program --flag
has "a default decision explains itself" out "reason: no rule matches; the policy's default for exec is allow"

decide deny -r 'deny file ".env" action read' open .env
has "open prints the canonical path" out "deny  read $TMP/ws/.env"
decide deny open "$HOME/.ssh/id_rsa"
decide deny -r 'deny file "~/.ssh"' open "$HOME/.ssh/id_rsa" --write
decide deny -r 'deny file ".env"' open envlink
has "a symlink is decided as its target" out "deny  read $TMP/ws/.env"
decide deny open ./a/../.env
decide deny open ./src//./../.env
decide deny open ./nonexistent/../.env
decide deny -r 'deny file "~/.ssh"' open dangling --write
decide allow open README.md
decide allow -r 'allow file "./**" action write' open ./src/x --write
decide allow open /tmp/airlock-cli-scratch --write
decide deny -r "default (write)" open /etc/airlock-cli-test --write
decide deny -r 'deny file "~/.bashrc" action write' open "$HOME/.bashrc" --write
# .git/hooks and .git/config are session copies at the kernel layer, not the policy's business
decide allow open .git/hooks/pre-commit --write
decide allow open .git/config --write
decide deny open .airlock/policy.yaml --write
decide allow open .airlock/policy.yaml
decide allow -r "default (exec)" open README.md --exec
has "open --exec is shown as execute" out "allow execute $TMP/ws/README.md"

decide allow -r 'allow network "api.anthropic.com:443"' connect api.anthropic.com:443
decide allow connect API.Anthropic.COM.:443
decide allow connect raw.githubusercontent.com:443
decide ask connect api.anthropic.com:80
decide ask -r "default (connect)" connect unknown.example:443
decide deny -r 'deny network "169.254.0.0/16"' connect 169.254.169.254:80
decide deny connect metadata.google.internal:80
decide ask connect "[2001:db8::1]:443"

# ---- command rules meet a CLI's normal form (policy/cli.c) -------------------------------
cat >"$TMP/cli.yaml" <<'YAML'
version: 1
default: {exec: ask}
deny:
  - command: git
    args: "push *--force*"
ask:
  - command: pip
    args: install
    match: prefix
allow:
  - command: git
    args: "commit *"
YAML
decide deny -r 'args "push *--force*"' --policy "$TMP/cli.yaml" exec git -c a=b push --force
has "a decision on the normal form shows it" out "  as:     git push --force"
decide allow -r 'args "commit *"' --policy "$TMP/cli.yaml" exec git -c user.name=x -C . commit -m m
has "git's global options are removed in the form shown" out "  as:     git commit -m m"
decide allow -r 'args "commit *"' --policy "$TMP/cli.yaml" exec git commit -m m
lacks "a decision on the command as given shows no other form" out "  as:"
decide ask -r "default (exec)" --policy "$TMP/cli.yaml" exec git --frobnicate push --force
if command -v python3 >/dev/null 2>&1; then
	decide ask -r 'ask command "pip" args "install"' --policy "$TMP/cli.yaml" exec python3 -m pip install x
	has "python3 -m pip is decided as pip" out "  as:     pip install x"
else
	skip "python3 -m pip is decided as pip" "no python3 in PATH"
fi

# ---- usage errors ------------------------------------------------------------------------
expect "check exec without CMD exits 2" 2 check exec
expect "check exec with an empty CMD exits 2" 2 check exec ""
expect "check open with an unknown option exits 2" 2 check open x --force
expect "check open without PATH exits 2" 2 check open --write
expect "check connect without a port exits 2" 2 check connect example.com
expect "check connect with port 0 exits 2" 2 check connect example.com:0
expect "check connect with an unbracketed IPv6 address exits 2" 2 check connect ::1:443
expect "check with an unknown action exits 2" 2 check frobnicate
expect "check with an unknown option exits 2" 2 check --frobnicate exec ls
expect "check --policy without FILE exits 2" 2 check --policy
has "usage errors are prefixed 'airlock: '" err "airlock: check: --policy needs a value"

# ---- --workspace -------------------------------------------------------------------------
mkdir -p "$TMP/other"
run check --workspace "$TMP/other" open "$TMP/other/x" --write
if [ "$RC" = 0 ]; then pass "--workspace DIR makes ./** mean DIR"; else
	fail "--workspace DIR makes ./** mean DIR" "$(details)"; fi
run check --workspace "$TMP/other" open "$TMP/ws/x" --write
if ! grep -qF 'file "./**"' "$TMP/out"; then pass "--workspace DIR: the launch directory is no longer ./"; else
	fail "--workspace DIR: the launch directory is no longer ./" "$(details)"; fi
expect "--workspace on a missing directory exits 2" 2 check --workspace "$TMP/nonexistent" exec ls

# ---- the AgentGuard example policy --------------------------------------------------------
AG="$ROOT/tests/data/policies/agentguard.yaml" # the one copy; the unit tests use it too
expect "the AgentGuard example policy loads unchanged" 0 check --policy "$AG"
has_re "the AgentGuard policy has its 19 rules" out ': ok, 19 rules$'
P="--policy $AG"
# shellcheck disable=SC2086
{
	decide deny -r 'deny command "rm" args "-rf *"' $P exec rm -rf build
	decide ask -r "default (exec)" $P exec rm notes.txt
	decide deny -r 'deny command "sudo" args "*"' $P exec sudo apt-get update
	decide deny $P exec sudo
	decide deny -r 'deny command "chmod" args "777 *"' $P exec chmod 777 run.sh
	decide ask $P exec chmod 755 run.sh
	decide deny -r 'deny file "*.env" action read' $P open .env
	decide deny $P open config/prod.env
	decide ask -r "default (write)" $P open .env --write
	decide deny -r 'deny file "*.pem" action read' $P open server.pem
	for c in ls cat pwd echo grep head tail wc; do
		decide allow -r "allow command \"$c\"" $P exec $c x
	done
	decide allow -r 'allow command "git" args "status"' $P exec git status
	decide ask $P exec git status --short
	decide allow -r 'allow command "git" args "log *"' $P exec git log --oneline
	decide ask $P exec git log
	decide allow -r 'allow command "git" args "diff *"' $P exec git diff HEAD
	decide ask $P exec git push origin main
	decide allow -r 'allow file "/tmp/workspace/**" action write' $P open /tmp/workspace/a/b.txt --write
	decide ask $P open /tmp/elsewhere.txt --write
	decide allow $P open /etc/hostname
	decide allow -r 'allow network "api.anthropic.com:443"' $P connect api.anthropic.com:443
	decide allow -r 'allow network "api.github.com:443"' $P connect api.github.com:443
	decide ask $P connect api.github.com:80
	decide ask $P connect evil.example.com:443
}

# ---- malformed policies: file:line:column: message, exit 2 -------------------------------
mkdir -p "$TMP/bad"
cd "$TMP/bad" || exit 1
printf 'version: 1\nbogus: 1\n' >unknown-key.yaml
printf 'version: 1\ndeny:\n  - command: rm\n    args: "[a"\n' >bad-glob.yaml
printf 'version: 1\ndeny:\n  - command: [x\n' >syntax.yaml
printf 'version: 1\ndefault: {exec: no}\n' >yaml-bool.yaml
printf 'version: 1\nversion: 1\n' >duplicate.yaml
printf 'version: 1\nallow:\n  - file: {path: x, action: eat}\n' >bad-action.yaml
for f in unknown-key bad-glob syntax yaml-bool duplicate bad-action; do
	expect "malformed $f.yaml exits 2" 2 check --policy "$f.yaml" exec ls
	has_re "malformed $f.yaml reports $f.yaml:LINE:COLUMN: message" err "^$f\\.yaml:[0-9]+:[0-9]+: [^ ]"
done
run check --policy unknown-key.yaml
if grep -q "^unknown-key.yaml:2:1: .*bogus" "$TMP/err" && [ "$RC" = 2 ]; then
	pass "validation points at the unknown key: unknown-key.yaml:2:1"
else
	fail "validation points at the unknown key: unknown-key.yaml:2:1" "$(details)"
fi
expect "a missing --policy file exits 2" 2 check --policy missing.yaml exec ls
has "a missing policy file is named" err "missing.yaml"
if [ "$(id -u)" = 0 ]; then
	skip "an unreadable policy file is an error, not skipped" "running as root, which reads any file"
else
	mkdir -p unreadable/.airlock
	printf 'version: 1\n' >unreadable/.airlock/policy.yaml
	chmod 000 unreadable/.airlock/policy.yaml
	(cd unreadable && "$AIRLOCK" check exec ls >/dev/null 2>&1)
	rc=$?
	chmod 644 unreadable/.airlock/policy.yaml
	if [ "$rc" = 2 ]; then pass "an unreadable policy file is an error, not skipped"; else
		fail "an unreadable policy file is an error, not skipped" "exit $rc"; fi
fi
mkdir -p found/.airlock
printf 'version: 1\ndeny:\n  - command: ""\n' >found/.airlock/policy.yaml
cd found || exit 1
expect "a malformed ./.airlock/policy.yaml fails closed (exit 2)" 2 check exec ls
has_re "it is reported as .airlock/policy.yaml:LINE:COLUMN" err '^\.airlock/policy\.yaml:3:[0-9]+: '

# ---- policy lookup order ------------------------------------------------------------------
mkdir -p "$TMP/lookup" "$HOME/.config/airlock" "$TMP/xdg/airlock"
cd "$TMP/lookup" || exit 1
expect "no policy file: the built-in default is used" 0 check
has_re "it is named <default>" out '^<default>: ok, [0-9]+ rules$'
decide allow -r "default (exec)" exec airlock-lookup-probe
printf 'version: 1\nallow:\n  - command: airlock-lookup-probe\n' >"$HOME/.config/airlock/policy.yaml"
decide allow -r "$HOME/.config/airlock/policy.yaml:3 allow" exec airlock-lookup-probe
printf 'version: 1\nask:\n  - command: airlock-lookup-probe\n' >"$TMP/xdg/airlock/policy.yaml"
export XDG_CONFIG_HOME="$TMP/xdg"
decide ask -r "$TMP/xdg/airlock/policy.yaml:3 ask" exec airlock-lookup-probe
export XDG_CONFIG_HOME=relative/dir
decide allow -r "$HOME/.config/airlock/policy.yaml:3" exec airlock-lookup-probe
export XDG_CONFIG_HOME="$TMP/xdg"
mkdir -p .airlock
printf 'version: 1\ndeny:\n  - command: airlock-lookup-probe\n' >.airlock/policy.yaml
decide deny -r ".airlock/policy.yaml:3 deny" exec airlock-lookup-probe
decide allow -r "$HOME/.config/airlock/policy.yaml:3" --policy "$HOME/.config/airlock/policy.yaml" exec airlock-lookup-probe
decide deny -r "$TMP/lookup/.airlock/policy.yaml:3" --workspace "$TMP/lookup" exec airlock-lookup-probe
unset XDG_CONFIG_HOME

# ---- user-named files that are not regular files: refused or read, never a hang ----------------
# A FIFO blocks open(2) until a writer comes (fifo(7)) and /dev/zero never ends: each command
# runs under timeout(1), so a regression fails (exit 124) instead of hanging the suite.
command -v timeout >/dev/null 2>&1 || timeout() { shift; "$@"; }

# ends DESC STATUS TEXT ARG...: airlock ARG... ends within 10 s with STATUS and TEXT (unless
# empty) on stderr.
ends() {
	desc=$1 want=$2 text=$3
	shift 3
	timeout 10 "$AIRLOCK" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	RC=$?
	if [ "$RC" = 124 ]; then
		fail "$desc" "still running after 10 s (killed)" "$(details)"
	elif [ "$RC" != "$want" ]; then
		fail "$desc" "wanted exit $want" "$(details)"
	elif [ -n "$text" ] && ! grep -qF -- "$text" "$TMP/err"; then
		fail "$desc" "no '$text' in stderr" "$(details)"
	else
		pass "$desc"
	fi
}

mkdir -p "$TMP/nonreg/.airlock" "$TMP/nonreg/elsewhere" "$TMP/nonreg/xdg/airlock"
cd "$TMP/nonreg" || exit 1
mkfifo p.yaml .airlock/policy.yaml xdg/airlock/policy.yaml
NOTREG="not a regular file (a FIFO): a policy must be a regular file"
ends "check --policy FIFO ends: exit 2, the file named" 2 "p.yaml: $NOTREG" \
	check --policy p.yaml exec ls
ends "run --policy FIFO ends: exit 2, the file named" 2 "p.yaml: $NOTREG" \
	run --headless --no-sandbox --policy p.yaml -- true
ends "a FIFO at ./.airlock/policy.yaml: check ends with exit 2" 2 ".airlock/policy.yaml: $NOTREG" \
	check exec ls
ends "a FIFO at ./.airlock/policy.yaml: run ends with exit 2" 2 ".airlock/policy.yaml: $NOTREG" \
	run --headless --no-sandbox -- true
cd elsewhere || exit 1
export XDG_CONFIG_HOME="$TMP/nonreg/xdg"
ends "a FIFO at \$XDG_CONFIG_HOME/airlock/policy.yaml: check ends with exit 2" 2 \
	"$TMP/nonreg/xdg/airlock/policy.yaml: $NOTREG" check exec ls
unset XDG_CONFIG_HOME
ends "/dev/zero as the policy is refused unread (exit 2)" 2 \
	"/dev/zero: not a regular file (a character device): a policy must be a regular file" \
	check --policy /dev/zero exec ls
ends "a directory as the policy is refused (exit 2)" 2 \
	"$TMP/nonreg: not a regular file (a directory)" check --policy "$TMP/nonreg" exec ls
# A log may be a pipe (`airlock log <(zcat old.jsonl.gz)`), read to its writer's end.
EV='{"timestamp":"2024-05-01T10:00:00.000Z","session_id":"0123456789abcdef","source":"launcher","message":"from-a-pipe"}'
ends "log /dev/zero is refused unread (exit 1)" 1 \
	"airlock: log: /dev/zero: not a regular file (a device): a log must be a regular file or a pipe" \
	log /dev/zero
ends "log DIRECTORY is refused (exit 1)" 1 "airlock: log: $TMP/nonreg: not a regular file (a directory)" \
	log "$TMP/nonreg"
ends "suggest /dev/zero is refused unread (exit 1)" 1 "airlock: suggest: /dev/zero: not a regular file" \
	suggest /dev/zero
mkfifo log.fifo
printf '%s\n' "$EV" >log.fifo &
writer=$!
ends "log FIFO reads what its writer wrote, to its end (exit 0)" 0 "" log --json log.fifo
has "log FIFO: the event is printed" out "from-a-pipe"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
printf '%s\n' "$EV" | timeout 10 "$AIRLOCK" log --json /dev/stdin >"$TMP/out" 2>"$TMP/err"
RC=$?
if [ "$RC" = 0 ] && grep -qF from-a-pipe "$TMP/out"; then pass "log /dev/stdin on a pipe reads it"; else
	fail "log /dev/stdin on a pipe reads it" "$(details)"; fi

# ---- ps: what dead launchers left -------------------------------------------------------------
# The session base (launcher/approvals/control.h, control_base()): /run/airlock for root, else
# $XDG_RUNTIME_DIR/airlock, here a scratch one.  A session is <base>/ID (launcher.pid inside)
# and the control socket <base>/ID.control.
if [ "$(id -u)" = 0 ]; then
	RT=/run/airlock
else
	export XDG_RUNTIME_DIR="$TMP/runtime"
	mkdir -m 700 "$XDG_RUNTIME_DIR"
	RT=$XDG_RUNTIME_DIR/airlock
fi
[ -d "$RT" ] || mkdir -m 700 "$RT"
hex16() { od -An -N8 -tx1 /dev/urandom | tr -d ' \n'; }
# sock PATH: a socket bound at PATH that nothing listens on, as a SIGKILLed launcher leaves it.
sock() { python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1"; }
mkdir -p "$TMP/ps"
cd "$TMP/ps" || exit 1
if ! command -v python3 >/dev/null 2>&1; then
	skip "ps removes a dead session's directory and control socket, and says so" "no python3"
else
	sh -c 'exit 0' &
	dead=$!
	wait "$dead"
	id=$(hex16) orphan=$(hex16) making=$(hex16)
	mkdir -m 700 "$RT/$id" "$RT/$making"
	echo "$dead" >"$RT/$id/launcher.pid"
	: >"$RT/$id/policy.img"
	sock "$RT/$id/channel"
	sock "$RT/$id.control"
	sock "$RT/$orphan.control"
	expect "ps with a dead session's leftovers exits 0" 0 ps
	has "ps says it removed a dead session's leftovers" err \
		"airlock: ps: removed the leftovers of session $id (its launcher, pid $dead, is gone)"
	if [ ! -e "$RT/$id" ] && [ ! -e "$RT/$id.control" ]; then
		pass "ps removed the dead session's directory and control socket"
	else
		fail "ps removed the dead session's directory and control socket" "$(ls -la "$RT")"
	fi
	has "ps says it removed a control socket whose session directory is gone" err \
		"airlock: ps: removed the control socket of session $orphan"
	if [ ! -e "$RT/$orphan.control" ]; then pass "ps removed that control socket"; else
		fail "ps removed that control socket"; fi
	lacks "a directory without launcher.pid (being made) is not named" err "$making"
	if [ -d "$RT/$making" ]; then pass "a directory without launcher.pid (being made) stays"; else
		fail "a directory without launcher.pid (being made) stays"; fi
	rmdir "$RT/$making"
	run ps
	lacks "a second ps has nothing of it left to remove" err "$id"
fi

# A live session is listed and untouched; SIGKILLed, what it left is removed by the next ps.
"$AIRLOCK" run --headless --no-sandbox -- sleep 20 </dev/null >"$TMP/live.out" 2>&1 &
lpid=$!
lid=
i=0
while [ $i -lt 100 ]; do
	for f in "$RT"/*/launcher.pid; do
		[ "$(cat "$f" 2>/dev/null)" = "$lpid" ] && lid=$(basename "$(dirname "$f")")
	done
	[ -n "$lid" ] && [ -S "$RT/$lid.control" ] && break
	sleep 0.1
	i=$((i + 1))
done
if [ -z "$lid" ] || [ ! -S "$RT/$lid.control" ]; then
	fail "a live session's control socket appears" "$(cat "$TMP/live.out")"
else
	run ps
	if [ "$RC" = 0 ] && grep -q "^$lid  *$lpid " "$TMP/out"; then pass "ps lists a live session"; else
		fail "ps lists a live session" "$(details)"; fi
	lacks "ps removes nothing of a live session" err "$lid"
	if [ -f "$RT/$lid/launcher.pid" ] && [ -S "$RT/$lid.control" ]; then
		pass "a live session's directory and control socket stay"
	else
		fail "a live session's directory and control socket stay" "$(ls -la "$RT" "$RT/$lid")"
	fi
fi
agent=$(pgrep -P "$lpid" 2>/dev/null)
kill -9 "$lpid"
wait "$lpid" 2>/dev/null # reaped: a zombie still answers kill(2)
[ -z "$agent" ] || kill "$agent" 2>/dev/null
if [ -n "$lid" ]; then
	run ps
	has "after SIGKILL of its launcher, ps says it removed the session's leftovers" err \
		"airlock: ps: removed the leftovers of session $lid (its launcher, pid $lpid, is gone)"
	if [ ! -e "$RT/$lid" ] && [ ! -e "$RT/$lid.control" ]; then
		pass "after SIGKILL of its launcher, ps removed its directory and control socket"
	else
		fail "after SIGKILL of its launcher, ps removed its directory and control socket" "$(ls -la "$RT")"
	fi
fi

tap_plan_end tests
