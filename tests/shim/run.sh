#!/bin/sh
# run.sh — integration tests of the preload shim on real programs (sh, bash, python3, perl, node, coreutils, C); TAP.
#
# Usage: tests/shim/run.sh BUILD_DIR     (needs BUILD_DIR/airlock-preload.so, tests/channel_server,
#                                         tests/policy_image: `make all unit-tests`)
# Environment: KEEP_TMP=1 keeps the temp tree; ONLY=group[,group] runs some groups
# (hooks sh bash python perl node coreutils fortify loader errno spellings env answers ask moves
# buildid tripwire events failclosed).
#
# Every case runs the program under the shim (LD_PRELOAD + AIRLOCK_DIR, a session
# dir with policy.img and the channel served by tests' channel_server) in a
# temp workspace, and asserts the exit status, the errno the program saw
# (EACCES for exec and files, ECONNREFUSED for connect), that a denied action
# did not happen (no file created, truncated, removed or renamed, no program
# started: each test program creates a marker file when it runs), and the
# events in the channel log.  Cases failing because of a shim bug are marked
# "[shim bug: ...]" in their description and keep the correct expectation.
# The cases are in hooks.sh, programs.sh, paths.sh, channel.sh, moves.sh, buildid.sh and tripwire.sh; the helpers in lib.sh
# and tests/lib/.
set -u

HERE=$(cd "$(dirname "$0")" && pwd -P)
# shellcheck source=tests/shim/lib.sh
. "$HERE/lib.sh"
shim_suite_init "$@"
# shellcheck source=tests/shim/hooks.sh
. "$HERE/hooks.sh"
if [ ! -x "$PY" ]; then
	echo "Bail out! $PY is needed to run the tests"
	exit 1
fi

want()
{
	[ -z "${ONLY:-}" ] && return 0
	case ",$ONLY," in *",$1,"*) return 0 ;; esac
	return 1
}

# ---- fixtures ------------------------------------------------------------------------------

make_fixtures()
{
	mkdir -p "$W/bin" "$W/sub" "$W/a" "$W/private" "$W/public" "$W/protected" "$W/out" "$W/markers"
	echo SECRET-ENV >"$W/.env"
	echo ok-content >"$W/ok.txt"
	echo asked-content >"$W/asked.txt"
	echo probe-content >"$W/trace_probe.txt"
	echo PRIVATE-DATA >"$W/private/data.txt"
	echo PUBLIC-DATA >"$W/public/data.txt"
	for p in bin/forbidden bin/allowed_prog bin/askme sub/tool; do
		printf '#!/bin/sh\n: > "$1"\n' >"$W/$p"
		chmod 755 "$W/$p"
	done
	ln -s .env "$W/innocent"
	ln -s "$W/.env" "$W/abslink"
	ln -s ok.txt "$W/oklink"
	ln -s private "$W/privlink"
	ln -s public "$W/publink"
	ln -s protected "$W/protlink"
	ln -s out "$W/outlink"
	ln -s forbidden "$W/bin/alias-prog"
	cp /usr/bin/touch "$W/bin/forbidden-touch"
}

# protect NAME: (re)writes protected/NAME with "KEEP" and prints its path.
protect()
{
	chmod u+w "$W/protected" 2>/dev/null
	echo KEEP >"$W/protected/$1"
	printf '%s\n' "$W/protected/$1"
}

# A loopback listener (no shim) on two ephemeral ports: ALLOW_PORT and DENY_PORT.
# Each accepted connection gets "hello\n" and is recorded in $T/accepted.
start_listener()
{
	"$PY" - "$T/ports" "$T/accepted" <<'EOF' &
import os, select, socket, sys
portfile, accepted = sys.argv[1], sys.argv[2]
socks = []
for _ in range(2):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    socks.append(s)
with open(portfile + ".tmp", "w") as f:
    f.write(" ".join(str(s.getsockname()[1]) for s in socks))
os.rename(portfile + ".tmp", portfile)
while True:
    r, _, _ = select.select(socks, [], [])
    for s in r:
        c, _ = s.accept()
        with open(accepted, "a") as f:
            f.write("%d\n" % s.getsockname()[1])
        try:
            c.sendall(b"hello\n")
        except OSError:
            pass
        c.close()
EOF
	BG_PIDS="$BG_PIDS $!"
	i=0
	while [ ! -f "$T/ports" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -f "$T/ports" ] || {
		echo "Bail out! the loopback listener did not start"
		exit 1
	}
	read -r ALLOW_PORT DENY_PORT <"$T/ports"
	: >"$T/accepted"
}

# Rule indexes below are positions in this file (all lists, in file order).
R_ENV=0
R_PRIVATE=1
R_PROTECTED=2
R_FORBIDDEN=3
R_NETDENY=4
R_TOOL=5
R_ASKEXEC=6
R_ASKFILE=7
R_NETALLOW=8
write_policy()
{
	cat >"$T/policy.yaml" <<EOF
version: 1
default: { exec: allow, read: allow, write: allow, connect: deny }
deny:
  - file: { path: .env, action: read }
    reason: secrets
  - file: { path: ./private, action: read }
    reason: a private directory
  - file: { path: ./protected, action: write }
    reason: a read-only directory
  - command: "forbidden*"
    reason: programs that must not start
  - network: { destination: "127.0.0.1:$DENY_PORT" }
    reason: a denied loopback port
  - file: { path: ./sub/tool, action: exec }
    reason: a program denied by its path
ask:
  - command: askme
  - file: { path: ./asked.txt, action: read }
allow:
  - network: { destination: "127.0.0.1:$ALLOW_PORT" }
EOF
	policy_compile "$T/policy.yaml"
}

PYPRE='import errno, os, socket, subprocess, sys
def en(e):
    return "err " + errno.errorcode.get(e.errno, str(e.errno))
'
# Perl: errno name of $!
PLPRE='use strict; use warnings; use Errno; sub en { my $n = (grep { $!{$_} } keys %!)[0] // ("E#" . ($! + 0)); return "err $n"; } $| = 1;'

# ---- the cases ----------------------------------------------------------------------------------------------

# shellcheck source=tests/shim/programs.sh
. "$HERE/programs.sh"
# shellcheck source=tests/shim/paths.sh
. "$HERE/paths.sh"
# shellcheck source=tests/shim/channel.sh
. "$HERE/channel.sh"
# shellcheck source=tests/shim/answers.sh
. "$HERE/answers.sh"
# shellcheck source=tests/shim/moves.sh
. "$HERE/moves.sh"
# shellcheck source=tests/shim/buildid.sh
. "$HERE/buildid.sh"
# shellcheck source=tests/shim/tripwire.sh
. "$HERE/tripwire.sh"
# shellcheck source=tests/lib/nobody.sh
. "$HERE/../lib/nobody.sh"

# ---- main -------------------------------------------------------------------------------------------------------

lib_setup
make_fixtures
start_listener
write_policy
echo "# workspace $W, session $S, shim $SHIM"
server_start --answer deny

want hooks && hooks_group
want sh && shell_group /bin/sh
want bash && shell_group /bin/bash
want python && python_group
want perl && perl_group
want node && node_group
want coreutils && coreutils_group
want fortify && fortify_group
want loader && loader_group
want errno && errno_group
want spellings && spellings_group
want env && env_group
want answers && answers_group
want ask && ask_group
want moves && moves_group
want buildid && buildid_group
want tripwire && tripwire_group
server_start --answer deny
want events && events_group
want failclosed && failclosed_group

tap_plan_end
