#!/bin/sh
# run.sh — integration tests of the preload shim on real programs (sh, bash, python3, perl, node, coreutils, C); TAP.
#
# Usage: tests/shim/run.sh BUILD_DIR     (needs BUILD_DIR/airlock-preload.so, tests/channel_server,
#                                         tests/policy_image: `make all unit-tests`)
# Environment: KEEP_TMP=1 keeps the temp tree; ONLY=group[,group] runs some groups
# (hooks sh bash python perl node coreutils fortify loader errno spellings env ask events failclosed).
#
# Every case runs the program under the shim (LD_PRELOAD + AIRLOCK_DIR, a session
# dir with policy.img and the channel served by tests' channel_server) in a
# temp workspace, and asserts the exit status, the errno the program saw
# (EACCES for exec and files, ECONNREFUSED for connect), that a denied action
# did not happen (no file created, truncated, removed or renamed, no program
# started: each test program creates a marker file when it runs), and the
# events in the channel log.  Cases failing because of a shim bug are marked
# "[shim bug: ...]" in their description and keep the correct expectation.
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

# ---- sh (dash) and bash ----------------------------------------------------------------------

shell_group()
{
	sh=$1 # /bin/sh (dash) or /bin/bash
	n=$(basename "$sh")
	[ "$n" = sh ] && n=dash
	if [ ! -x "$sh" ]; then
		tap_skip "$n: $sh is not installed"
		return
	fi

	shim_run "$sh" -c 'read -r l < ok.txt && echo "$l"'
	check "$n: allowed read redirection (< ok.txt)"
	expect_rc 0
	expect_out_eq ok-content
	done_check

	shim_run "$sh" -c 'read -r l < .env; echo "rc=$?:$l"'
	check "$n: denied read redirection (< .env): EACCES, nothing read"
	expect_out_lacks SECRET
	expect_err_has "Permission denied"
	done_check

	rm -f "$W/out/$n.txt"
	shim_run "$sh" -c "echo written > out/$n.txt"
	check "$n: allowed write redirection (> out/$n.txt)"
	expect_rc 0
	expect_content "$W/out/$n.txt" written
	done_check

	f=$(protect "$n-keep.txt")
	shim_run "$sh" -c "echo evil > protected/$n-keep.txt"
	check "$n: denied write redirection (> protected/..): EACCES, not truncated"
	expect_rc_not 0
	expect_err_has "Permission denied"
	expect_content "$f" KEEP
	done_check

	f=$(protect "$n-append.txt")
	shim_run "$sh" -c "echo evil >> protected/$n-append.txt"
	check "$n: denied append redirection (>> protected/..): EACCES, unchanged"
	expect_rc_not 0
	expect_err_has "Permission denied"
	expect_content "$f" KEEP
	done_check

	shim_run "$sh" -c "echo evil > protected/$n-new.txt"
	check "$n: denied creating redirection (> protected/new): not created"
	expect_rc_not 0
	expect_err_has "Permission denied"
	expect_no_file "$W/protected/$n-new.txt"
	done_check

	shim_run "$sh" -c "allowed_prog markers/$n-exec"
	check "$n: allowed exec of a program"
	expect_rc 0
	expect_file "$W/markers/$n-exec"
	done_check

	shim_run "$sh" -c "forbidden markers/$n-exec-denied"
	check "$n: denied exec of a program: exit 126, EACCES, not started"
	expect_rc 126
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/$n-exec-denied"
	done_check

	shim_run "$sh" -c "exec $W/bin/forbidden markers/$n-exec2-denied"
	check "$n: denied 'exec /abs/path': EACCES, not started"
	expect_rc_not 0
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/$n-exec2-denied"
	done_check

	shim_run "$sh" -c "sub/tool markers/$n-tool-denied"
	check "$n: exec denied by a file exec rule (./sub/tool): exit 126, EACCES, not started"
	expect_rc 126
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/$n-tool-denied"
	done_check

	shim_run "$sh" -c "cd sub && ./tool ../markers/$n-tool-cd-denied"
	check "$n: cd sub && ./tool denied (file exec rule, relative to the new cwd): EACCES, not started"
	expect_rc 126
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/$n-tool-cd-denied"
	done_check

	shim_run "$sh" -c "x=\$(forbidden markers/$n-subst-denied; echo after); echo \"[\$x]\""
	check "$n: denied exec inside \$(...): EACCES, not started, the shell goes on"
	expect_out_has "[after]"
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/$n-subst-denied"
	done_check
}

# ---- python3 ----------------------------------------------------------------------------------

python_group()
{
	py_run "${PYPRE}print(open('ok.txt').read().strip())"
	check "python: open() read allowed"
	expect_rc 0
	expect_out_eq ok-content
	done_check

	py_run "${PYPRE}
try:
    print('read', open('.env').read())
except OSError as e:
    print(en(e))"
	check "python: open() read denied: EACCES"
	expect_rc 0
	expect_out_eq "err EACCES"
	done_check

	echo "old old old" >"$W/out/py-w.txt"
	py_run "${PYPRE}open('out/py-w.txt', 'w').write('new')"
	check "python: open('w') allowed, truncates"
	expect_rc 0
	expect_content "$W/out/py-w.txt" new
	done_check

	f=$(protect py-w.txt)
	py_run "${PYPRE}
try:
    open('protected/py-w.txt', 'w').write('evil'); print('opened')
except OSError as e:
    print(en(e))"
	check "python: open('w') denied: EACCES, not truncated"
	expect_out_eq "err EACCES"
	expect_content "$f" KEEP
	done_check

	py_run "${PYPRE}
try:
    open('protected/py-new.txt', 'x'); print('created')
except OSError as e:
    print(en(e))"
	check "python: open('x') in a denied directory: EACCES, not created"
	expect_out_eq "err EACCES"
	expect_no_file "$W/protected/py-new.txt"
	done_check

	py_run "${PYPRE}print(subprocess.run(['allowed_prog', 'markers/py-run']).returncode)"
	check "python: subprocess.run allowed"
	expect_out_eq 0
	expect_file "$W/markers/py-run"
	done_check

	py_run "${PYPRE}
try:
    subprocess.run(['forbidden', 'markers/py-run-denied']); print('ran')
except OSError as e:
    print(en(e))"
	check "python: subprocess.run denied: PermissionError EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/py-run-denied"
	done_check

	py_run "${PYPRE}
r = subprocess.run(['cat', '.env'], capture_output=True, text=True)
print(r.returncode, r.stdout.strip(), r.stderr.strip())"
	check "python: subprocess child (close_fds=True) still shimmed: cat .env denied"
	expect_out_lacks SECRET
	expect_out_has "Permission denied"
	done_check

	py_run "${PYPRE}
r = subprocess.run(['cat', 'ok.txt'], capture_output=True, text=True)
print(r.returncode, r.stdout.strip())"
	check "python: subprocess child (close_fds=True) allowed read"
	expect_out_eq "0 ok-content"
	done_check

	py_run "${PYPRE}print(os.system('allowed_prog markers/py-system'))"
	check "python: os.system allowed"
	expect_out_eq 0
	expect_file "$W/markers/py-system"
	done_check

	py_run "${PYPRE}print(os.system('forbidden markers/py-system-denied'))"
	check "python: os.system denied: the shell's exit 126 (wait status 32256), EACCES, not started"
	expect_out_eq 32256
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/py-system-denied"
	done_check

	py_run "${PYPRE}
pid = os.posix_spawn('$W/bin/allowed_prog', ['allowed_prog', 'markers/py-spawn'], os.environ)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))"
	check "python: os.posix_spawn allowed"
	expect_out_eq 0
	expect_file "$W/markers/py-spawn"
	done_check

	py_run "${PYPRE}
try:
    pid = os.posix_spawn('$W/bin/forbidden', ['forbidden', 'markers/py-spawn-denied'], os.environ)
    print('spawned', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
except OSError as e:
    print(en(e))"
	check "python: os.posix_spawn denied: EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/py-spawn-denied"
	done_check

	py_run "${PYPRE}
try:
    pid = os.posix_spawnp('forbidden', ['forbidden', 'markers/py-spawnp-denied'], os.environ)
    print('spawned', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
except OSError as e:
    print(en(e))"
	check "python: os.posix_spawnp (PATH search) denied: EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/py-spawnp-denied"
	done_check

	py_run "${PYPRE}
try:
    pid = os.posix_spawn('/usr/bin/cat', ['cat'], os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 0, '.env', os.O_RDONLY, 0)])
    print('spawned', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
except OSError as e:
    print(en(e))"
	check "python: os.posix_spawn with a file action opening .env as stdin: EACCES, nothing read"
	expect_out_lacks SECRET
	expect_out_eq "err EACCES"
	done_check

	f=$(protect py-spawn-open.txt)
	py_run "${PYPRE}
try:
    pid = os.posix_spawn('/bin/sh', ['sh', '-c', 'echo evil'], os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, 'protected/py-spawn-open.txt', os.O_WRONLY | os.O_TRUNC, 0)])
    print('spawned', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
except OSError as e:
    print(en(e))"
	check "python: os.posix_spawn with a file action truncating a protected file: EACCES, not truncated"
	expect_out_eq "err EACCES"
	expect_content "$f" KEEP
	done_check

	py_run "${PYPRE}os.execv('$W/bin/allowed_prog', ['allowed_prog', 'markers/py-execv'])"
	check "python: os.execv allowed"
	expect_rc 0
	expect_file "$W/markers/py-execv"
	done_check

	py_run "${PYPRE}
try:
    os.execv('$W/bin/forbidden', ['forbidden', 'markers/py-execv-denied'])
except OSError as e:
    print(en(e))"
	check "python: os.execv denied: EACCES, the process goes on, not started"
	expect_rc 0
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/py-execv-denied"
	done_check

	echo moved >"$W/out/py-mv-src"
	rm -f "$W/out/py-mv-dst"
	py_run "${PYPRE}os.rename('out/py-mv-src', 'out/py-mv-dst')"
	check "python: os.rename allowed"
	expect_rc 0
	expect_no_file "$W/out/py-mv-src"
	expect_content "$W/out/py-mv-dst" moved
	done_check

	f=$(protect py-mv.txt)
	py_run "${PYPRE}
try:
    os.rename('protected/py-mv.txt', 'out/py-stolen'); print('renamed')
except OSError as e:
    print(en(e))"
	check "python: os.rename out of a denied directory: EACCES, not renamed"
	expect_out_eq "err EACCES"
	expect_content "$f" KEEP
	expect_no_file "$W/out/py-stolen"
	done_check

	echo planted >"$W/out/py-plant"
	py_run "${PYPRE}
try:
    os.rename('out/py-plant', 'protected/py-plant'); print('renamed')
except OSError as e:
    print(en(e))"
	check "python: os.rename into a denied directory: EACCES, not renamed"
	expect_out_eq "err EACCES"
	expect_file "$W/out/py-plant"
	expect_no_file "$W/protected/py-plant"
	done_check

	echo x >"$W/out/py-unlink"
	py_run "${PYPRE}os.unlink('out/py-unlink')"
	check "python: os.unlink allowed"
	expect_rc 0
	expect_no_file "$W/out/py-unlink"
	done_check

	f=$(protect py-unlink.txt)
	py_run "${PYPRE}
try:
    os.unlink('protected/py-unlink.txt'); print('removed')
except OSError as e:
    print(en(e))"
	check "python: os.unlink denied: EACCES, not removed"
	expect_out_eq "err EACCES"
	expect_content "$f" KEEP
	done_check

	py_run "${PYPRE}os.mkdir('out/py-dir')"
	check "python: os.mkdir allowed"
	expect_rc 0
	expect_dir "$W/out/py-dir"
	done_check

	py_run "${PYPRE}
try:
    os.mkdir('protected/py-dir'); print('made')
except OSError as e:
    print(en(e))"
	check "python: os.mkdir denied: EACCES, not created"
	expect_out_eq "err EACCES"
	expect_no_file "$W/protected/py-dir"
	done_check

	py_run "${PYPRE}os.symlink('../ok.txt', 'out/py-link')"
	check "python: os.symlink allowed"
	expect_rc 0
	expect_file "$W/out/py-link"
	done_check

	py_run "${PYPRE}
try:
    os.symlink('/etc/passwd', 'protected/py-link'); print('linked')
except OSError as e:
    print(en(e))"
	check "python: os.symlink denied: EACCES, not created"
	expect_out_eq "err EACCES"
	expect_no_file "$W/protected/py-link"
	done_check

	f=$(protect py-other.txt)
	mkdir -p "$W/protected/py-rmdir"
	py_run "${PYPRE}
for name, call in [('truncate', lambda: os.truncate('protected/py-other.txt', 0)),
                   ('chmod', lambda: os.chmod('protected/py-other.txt', 0o777)),
                   ('link', lambda: os.link('protected/py-other.txt', 'protected/py-hard')),
                   ('rmdir', lambda: os.rmdir('protected/py-rmdir'))]:
    try:
        call(); print(name, 'done')
    except OSError as e:
        print(name, en(e))"
	check "python: os.truncate, os.chmod, os.link, os.rmdir denied: EACCES, nothing changed"
	expect_out_eq "truncate err EACCES
chmod err EACCES
link err EACCES
rmdir err EACCES"
	expect_content "$f" KEEP
	[ "$(stat -c %a "$f")" != 777 ] || _fail "chmod happened"
	expect_no_file "$W/protected/py-hard"
	expect_dir "$W/protected/py-rmdir"
	done_check

	py_run "${PYPRE}
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.setblocking(False)
try:
    r.bind(('127.0.0.1', $DENY_PORT))
except OSError as e:
    print('bind', en(e)); sys.exit(0)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for name, call in [('sendto', lambda: s.sendto(b'x', ('127.0.0.1', $DENY_PORT))),
                   ('sendmsg', lambda: s.sendmsg([b'x'], [], 0, ('127.0.0.1', $DENY_PORT)))]:
    try:
        call(); print(name, 'sent')
    except OSError as e:
        print(name, en(e))
import time; time.sleep(0.2)
try:
    print('received', r.recv(10))
except BlockingIOError:
    print('nothing received')"
	check "python: UDP sendto / sendmsg to a denied port: ECONNREFUSED, nothing delivered"
	expect_out_eq "sendto err ECONNREFUSED
sendmsg err ECONNREFUSED
nothing received"
	done_check

	py_run "${PYPRE}
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.settimeout(2)
try:
    r.bind(('127.0.0.1', $ALLOW_PORT))
except OSError as e:
    print('bind', en(e)); sys.exit(0)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b'dgram', ('127.0.0.1', $ALLOW_PORT))
print(r.recv(10).decode())"
	check "python: UDP sendto to an allowed port delivered"
	expect_out_eq dgram
	done_check
}

# ---- perl --------------------------------------------------------------------------------------

perl_group()
{
	if ! command -v perl >/dev/null 2>&1; then
		tap_skip "perl: not installed"
		return
	fi
	pl() { shim_run /usr/bin/perl -e "$PLPRE $1"; }

	pl 'open(my $f, "<", "ok.txt") or die "open: $!"; print scalar <$f>;'
	check "perl: open < allowed"
	expect_rc 0
	expect_out_eq ok-content
	done_check

	pl 'if (open(my $f, "<", ".env")) { print "read ", <$f> } else { print en() }'
	check "perl: open < denied: EACCES"
	expect_out_eq "err EACCES"
	done_check

	pl 'open(my $f, ">", "out/pl.txt") or die "open: $!"; print $f "written\n"; close $f or die;'
	check "perl: open > allowed"
	expect_rc 0
	expect_content "$W/out/pl.txt" written
	done_check

	f=$(protect pl.txt)
	pl 'if (open(my $f, ">", "protected/pl.txt")) { print "opened" } else { print en() }'
	check "perl: open > denied: EACCES, not truncated"
	expect_out_eq "err EACCES"
	expect_content "$f" KEEP
	done_check

	pl 'print system("allowed_prog", "markers/pl-system");'
	check "perl: system allowed"
	expect_out_eq 0
	expect_file "$W/markers/pl-system"
	done_check

	pl 'my $r = system("forbidden", "markers/pl-system-denied"); print "$r ", en();'
	check "perl: system denied: -1 and EACCES, not started"
	expect_out_eq "-1 err EACCES"
	expect_no_file "$W/markers/pl-system-denied"
	done_check

	pl 'my $r = system("forbidden markers/pl-system-sh-denied; echo after"); print " $r";'
	check "perl: system via /bin/sh denied inside the shell: EACCES, not started"
	expect_out_has after
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/pl-system-sh-denied"
	done_check

	pl 'exec("allowed_prog", "markers/pl-exec") or print en();'
	check "perl: exec allowed"
	expect_rc 0
	expect_file "$W/markers/pl-exec"
	done_check

	pl '{ exec("forbidden", "markers/pl-exec-denied") }; print en();'
	check "perl: exec denied: EACCES, the process goes on, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/pl-exec-denied"
	done_check

	pl 'my $o = `cat ok.txt`; print "$? $o";'
	check "perl: backticks allowed"
	expect_out_eq "0 ok-content"
	done_check

	pl 'my $o = `forbidden markers/pl-bt-denied`; print defined $o ? "output" : "undef", " $? ", en();'
	check "perl: backticks denied: no output, \$? -1, EACCES, not started"
	expect_out_eq "undef -1 err EACCES"
	expect_no_file "$W/markers/pl-bt-denied"
	done_check

	pl 'my $o = `cat .env 2>&1`; print "[$o]";'
	check "perl: backticks child still shimmed: cat .env denied"
	expect_out_lacks SECRET
	expect_out_has "Permission denied"
	done_check
}

# ---- node ----------------------------------------------------------------------------------------

node_group()
{
	if [ ! -x /usr/bin/node ]; then
		tap_skip "node: /usr/bin/node is not installed"
		return
	fi
	nd() { shim_run /usr/bin/node -e "$1"; }

	nd 'const fs = require("fs"); console.log(fs.readFileSync("ok.txt", "utf8").trim());'
	check "node: fs.readFileSync allowed"
	expect_rc 0
	expect_out_eq ok-content
	done_check

	nd 'const fs = require("fs"); try { console.log("read " + fs.readFileSync(".env", "utf8")); } catch (e) { console.log("err " + e.code); }'
	check "node: fs.readFileSync denied: EACCES"
	expect_out_eq "err EACCES"
	done_check

	nd 'require("fs").readFile(".env", "utf8", (e, d) => console.log(e ? "err " + e.code : "read " + d));'
	check "node: fs.readFile (libuv thread pool) denied: EACCES"
	expect_out_eq "err EACCES"
	done_check

	nd 'require("fs").writeFileSync("out/node.txt", "written\n");'
	check "node: fs.writeFileSync allowed"
	expect_rc 0
	expect_content "$W/out/node.txt" written
	done_check

	f=$(protect node.txt)
	nd 'const fs = require("fs"); try { fs.writeFileSync("protected/node.txt", "evil"); console.log("written"); } catch (e) { console.log("err " + e.code); }'
	check "node: fs.writeFileSync denied: EACCES, not truncated"
	expect_out_eq "err EACCES"
	expect_content "$f" KEEP
	done_check

	nd 'const r = require("child_process").spawnSync("allowed_prog", ["markers/node-spawn"]); console.log(r.error ? "err " + r.error.code : r.status);'
	check "node: child_process.spawnSync allowed"
	expect_out_eq 0
	expect_file "$W/markers/node-spawn"
	done_check

	nd 'const r = require("child_process").spawnSync("forbidden", ["markers/node-spawn-denied"]); console.log(r.error ? "err " + r.error.code : r.status);'
	check "node: child_process.spawnSync denied: EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/node-spawn-denied"
	done_check

	nd 'const c = require("child_process").spawn("forbidden", ["markers/node-aspawn-denied"]); c.on("error", e => console.log("err " + e.code)); c.on("exit", s => console.log("exit " + s));'
	check "node: child_process.spawn (async) denied: error EACCES, not started"
	expect_out_has "err EACCES"
	expect_no_file "$W/markers/node-aspawn-denied"
	done_check

	nd 'require("child_process").execSync("allowed_prog markers/node-exec"); console.log("done");'
	check "node: child_process.execSync allowed"
	expect_out_eq "done"
	expect_file "$W/markers/node-exec"
	done_check

	nd 'try { require("child_process").execSync("forbidden markers/node-exec-denied", {stdio: "pipe"}); console.log("ran"); } catch (e) { console.log("status " + e.status + " " + String(e.stderr).trim()); }'
	check "node: child_process.execSync denied: status 126, not started"
	expect_out_has "status 126"
	expect_out_has "Permission denied"
	expect_no_file "$W/markers/node-exec-denied"
	done_check

	nd "const s = require('net').connect($ALLOW_PORT, '127.0.0.1'); s.on('data', d => process.stdout.write('got ' + d)); s.on('error', e => console.log('err ' + e.code));"
	check "node: net.connect to an allowed loopback port"
	expect_out_eq "got hello"
	done_check

	nd "const s = require('net').connect($DENY_PORT, '127.0.0.1'); s.on('connect', () => console.log('connected')); s.on('error', e => console.log('err ' + e.code));"
	check "node: net.connect to a denied loopback port: ECONNREFUSED, never reached"
	expect_out_eq "err ECONNREFUSED"
	grep -qx "$DENY_PORT" "$T/accepted" && _fail "the listener on the denied port accepted a connection"
	done_check
}

# ---- coreutils ------------------------------------------------------------------------------------

coreutils_group()
{
	sh_run 'cat ok.txt'
	check "coreutils: cat allowed"
	expect_rc 0
	expect_out_eq ok-content
	done_check

	sh_run 'cat .env'
	check "coreutils: cat denied: EACCES"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks SECRET
	done_check

	sh_run 'cp ok.txt out/cp.txt'
	check "coreutils: cp allowed"
	expect_rc 0
	expect_content "$W/out/cp.txt" ok-content
	done_check

	sh_run 'cp ok.txt protected/cp-new.txt'
	check "coreutils: cp into a denied directory: EACCES, not created"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_no_file "$W/protected/cp-new.txt"
	done_check

	f=$(protect cp-keep.txt)
	sh_run 'cp ok.txt protected/cp-keep.txt'
	check "coreutils: cp over a denied file: EACCES, not overwritten"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_content "$f" KEEP
	done_check

	sh_run 'cp .env out/cp-env.txt'
	check "coreutils: cp from a read-denied file: EACCES, no copy"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_no_file "$W/out/cp-env.txt"
	done_check

	echo mv >"$W/out/mv-src"
	sh_run 'mv out/mv-src out/mv-dst'
	check "coreutils: mv allowed"
	expect_rc 0
	expect_no_file "$W/out/mv-src"
	expect_content "$W/out/mv-dst" mv
	done_check

	f=$(protect mv-keep.txt)
	sh_run 'mv protected/mv-keep.txt out/mv-stolen'
	check "coreutils: mv out of a denied directory: EACCES, not moved"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_content "$f" KEEP
	expect_no_file "$W/out/mv-stolen"
	done_check

	echo planted >"$W/out/mv-plant"
	sh_run 'mv out/mv-plant protected/mv-plant'
	check "coreutils: mv into a denied directory: EACCES, not moved"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_file "$W/out/mv-plant"
	expect_no_file "$W/protected/mv-plant"
	done_check

	echo x >"$W/out/rm-me"
	sh_run 'rm out/rm-me'
	check "coreutils: rm allowed"
	expect_rc 0
	expect_no_file "$W/out/rm-me"
	done_check

	f=$(protect rm-keep.txt)
	sh_run 'rm -f protected/rm-keep.txt'
	check "coreutils: rm denied: EACCES, not removed"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_content "$f" KEEP
	done_check

	sh_run 'ln -s ../ok.txt out/ln-s && ln ok.txt out/ln-hard'
	check "coreutils: ln -s and ln allowed"
	expect_rc 0
	expect_file "$W/out/ln-s"
	expect_file "$W/out/ln-hard"
	done_check

	sh_run 'ln -s /etc/passwd protected/ln-s'
	check "coreutils: ln -s into a denied directory: EACCES, not created"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_no_file "$W/protected/ln-s"
	done_check

	sh_run 'ln ok.txt protected/ln-hard'
	check "coreutils: ln (hard) into a denied directory: EACCES, not created"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_no_file "$W/protected/ln-hard"
	done_check

	sh_run 'mkdir out/mkdir-dir'
	check "coreutils: mkdir allowed"
	expect_rc 0
	expect_dir "$W/out/mkdir-dir"
	done_check

	sh_run 'mkdir protected/mkdir-dir'
	check "coreutils: mkdir denied: EACCES, not created"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_no_file "$W/protected/mkdir-dir"
	done_check

	sh_run 'mkdir -p protected/mkdir-p/a/b'
	check "coreutils: mkdir -p denied: EACCES, not created"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_no_file "$W/protected/mkdir-p"
	done_check

	mkdir -p "$W/protected/walk"
	sh_run 'find protected/walk && du -s protected/walk >/dev/null && echo walked'
	check "coreutils: find and du inside a write-denied directory allowed (they only read)"
	expect_rc 0
	expect_out_has walked
	done_check

	sh_run 'touch out/touched'
	check "coreutils: touch allowed"
	expect_rc 0
	expect_file "$W/out/touched"
	done_check

	sh_run 'touch protected/touched'
	check "coreutils: touch denied: EACCES, not created"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_no_file "$W/protected/touched"
	done_check

	sh_run 'echo teed | tee out/tee.txt'
	check "coreutils: tee allowed"
	expect_rc 0
	expect_content "$W/out/tee.txt" teed
	done_check

	f=$(protect tee-keep.txt)
	sh_run 'echo evil | tee protected/tee-keep.txt'
	check "coreutils: tee denied: EACCES, not truncated"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_content "$f" KEEP
	done_check
}

# ---- the fortified C program ------------------------------------------------------------------------

# Builds $T/fortify once; false (and a failed test line) when it cannot be built.
build_fortify()
{
	FORTIFY="$T/fortify"
	[ -x "$FORTIFY" ] && return 0
	if ! cc -D_FORTIFY_SOURCE=2 -O2 -Wall -o "$FORTIFY" "$HERE/fortify.c" >"$T/fortify.err" 2>&1; then
		tap_not_ok "fortify: build tests/shim/fortify.c with -D_FORTIFY_SOURCE=2 -O2" "$(cat "$T/fortify.err")"
		return 1
	fi
}

fortify_group()
{
	build_fortify || return
	if command -v nm >/dev/null 2>&1; then
		RC=0 OUT=$(nm -D "$FORTIFY" 2>&1) ERR=""
		check "fortify: the program calls __open_2, fopen64, execveat, fexecve"
		for s in __open_2 fopen64 execveat fexecve; do
			printf '%s\n' "$OUT" | grep -q " $s\\b" || _fail "$s is not an undefined symbol of $FORTIFY"
		done
		done_check
	else
		tap_skip "fortify: nm is not installed, cannot check the program calls __open_2"
	fi
	F=$FORTIFY

	shim_run "$F" open ok.txt r
	check "fortify: __open_2 read allowed"
	expect_out_eq "ok ok-content"
	done_check

	shim_run "$F" open .env r
	check "fortify: __open_2 read denied: EACCES"
	expect_out_eq "err EACCES"
	done_check

	echo old >"$W/out/f-open-w"
	shim_run "$F" open out/f-open-w w
	check "fortify: __open_2 O_WRONLY|O_TRUNC allowed: truncated"
	expect_out_eq ok
	expect_content "$W/out/f-open-w" ""
	done_check

	f=$(protect f-open.txt)
	shim_run "$F" open protected/f-open.txt w
	check "fortify: __open_2 O_WRONLY|O_TRUNC denied: EACCES, not truncated"
	expect_out_eq "err EACCES"
	expect_content "$f" KEEP
	done_check

	shim_run "$F" fopen64 ok.txt r
	check "fortify: fopen64 r allowed"
	expect_out_eq "ok ok-content"
	done_check

	shim_run "$F" fopen64 .env r
	check "fortify: fopen64 r denied: EACCES"
	expect_out_eq "err EACCES"
	done_check

	shim_run "$F" fopen64 out/f-fopen w
	check "fortify: fopen64 w allowed"
	expect_out_eq ok
	expect_file "$W/out/f-fopen"
	done_check

	f=$(protect f-fopen.txt)
	shim_run "$F" fopen64 protected/f-fopen.txt w
	check "fortify: fopen64 w denied: EACCES, not truncated"
	expect_out_eq "err EACCES"
	expect_content "$f" KEEP
	done_check

	shim_run "$F" fopen64 protected/f-fopen-new.txt a
	check "fortify: fopen64 a in a denied directory: EACCES, not created"
	expect_out_eq "err EACCES"
	expect_no_file "$W/protected/f-fopen-new.txt"
	done_check

	shim_run "$F" execveat "$W/bin/allowed_prog" markers/f-execveat
	check "fortify: execveat allowed"
	expect_rc 0
	expect_file "$W/markers/f-execveat"
	done_check

	shim_run "$F" execveat "$W/bin/forbidden" markers/f-execveat-denied
	check "fortify: execveat denied: EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/f-execveat-denied"
	done_check

	shim_run "$F" execveat-dirfd "$W/bin" forbidden markers/f-execveat-dirfd-denied
	check "fortify: execveat relative to a dirfd denied: EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/f-execveat-dirfd-denied"
	done_check

	shim_run "$F" fexecve "$W/bin/allowed_prog" markers/f-fexecve
	check "fortify: fexecve allowed"
	expect_rc 0
	expect_file "$W/markers/f-fexecve"
	done_check

	shim_run "$F" spawn-chdir "$W/bin" ./allowed_prog ../markers/f-spawn-chdir
	check "fortify: posix_spawn of ./prog after a chdir file action, allowed"
	expect_out_eq "exit 0"
	expect_file "$W/markers/f-spawn-chdir"
	done_check

	shim_run "$F" spawn-chdir "$W/bin" ./forbidden ../markers/f-spawn-chdir-denied
	check "fortify: posix_spawn of ./forbidden after a chdir file action: EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/f-spawn-chdir-denied"
	done_check

	shim_run "$F" spawn-chdir "$W/sub" ./tool ../markers/f-spawn-chdir-tool
	check "fortify: posix_spawn of ./tool after a chdir to sub/ (file exec rule ./sub/tool): EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/f-spawn-chdir-tool"
	done_check

	shim_run "$F" fexecve "$W/bin/forbidden" markers/f-fexecve-denied
	check "fortify: fexecve denied: EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/f-fexecve-denied"
	done_check
}

# ---- errno preserved on allowed calls ------------------------------------------------------------------

errno_group()
{
	build_fortify || return
	F=$FORTIFY
	shim_run "$F" errno ok.txt
	check "errno: unchanged by an allowed open (__open_2) that succeeds"
	expect_out_eq "errno kept"
	done_check

	shim_run "$F" errno-fopen ok.txt
	check "errno: unchanged by an allowed fopen64 that succeeds"
	expect_out_eq "errno kept"
	done_check

	py_run "${PYPRE}
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
ctypes.set_errno(1234)
fd = libc.open(b'/tmp', os.O_RDONLY | os.O_DIRECTORY)
print('errno kept' if ctypes.get_errno() == 1234 else 'errno changed to %d' % ctypes.get_errno(), fd >= 0)"
	check "errno: unchanged by an allowed open() through ctypes"
	expect_out_eq "errno kept True"
	done_check
}

# ---- spellings of a denied path --------------------------------------------------------------------------

spellings_group()
{
	sh_run 'cat ./a/../.env'
	check "spelling: cat ./a/../.env denied"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks SECRET
	done_check

	sh_run 'cat ./a/../ok.txt'
	check "spelling: cat ./a/../ok.txt allowed"
	expect_out_eq ok-content
	done_check

	sh_run "cat /$W/.env"
	check "spelling: cat //W/.env (doubled leading slash) denied: EACCES"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks SECRET
	done_check

	sh_run "cat $W//.env; cat $W/./.env; cat $W/a//..//.env"
	check "spelling: W//.env, W/./.env, W/a//..//.env denied: EACCES, three times"
	expect_rc 1
	expect_err_count 3 "Permission denied"
	expect_out_lacks SECRET
	done_check

	sh_run "cat /$W//ok.txt"
	check "spelling: //W//ok.txt allowed"
	expect_out_eq ok-content
	done_check

	sh_run 'cat innocent'
	check "spelling: relative symlink to a denied file (innocent -> .env) denied: EACCES"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks SECRET
	done_check

	sh_run 'cat abslink'
	check "spelling: absolute symlink to a denied file denied: EACCES"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks SECRET
	done_check

	sh_run 'ln .env out/hard-env; echo "ln=$?"; cat out/hard-env'
	check "spelling: no hard link to a read-denied file (ln .env out/x): EACCES, not created, nothing read"
	expect_out_has "ln=1"
	expect_err_has "failed to create hard link 'out/hard-env' => '.env': Permission denied"
	expect_no_file "$W/out/hard-env"
	expect_out_lacks SECRET
	done_check

	sh_run 'cat oklink'
	check "spelling: symlink to an allowed file allowed"
	expect_out_eq ok-content
	done_check

	sh_run 'cat privlink/data.txt'
	check "spelling: read through a symlinked directory (privlink -> private) denied: EACCES"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks PRIVATE
	done_check

	sh_run 'ls private'
	check "spelling: listing a read-denied directory (ls private) denied: EACCES"
	expect_rc 2
	expect_err_has "cannot open directory 'private': Permission denied"
	expect_out_lacks data.txt
	done_check

	sh_run 'cat publink/data.txt'
	check "spelling: read through a symlinked allowed directory allowed"
	expect_out_eq PUBLIC-DATA
	done_check

	sh_run 'echo evil > protlink/via-link.txt'
	check "spelling: write through a symlinked directory (protlink -> protected) denied: EACCES, not created"
	expect_rc_not 0
	expect_err_has "Permission denied"
	expect_no_file "$W/protected/via-link.txt"
	done_check

	sh_run 'echo fine > outlink/via-link.txt'
	check "spelling: write through a symlinked allowed directory allowed"
	expect_content "$W/out/via-link.txt" fine
	done_check

	sh_run "cat /proc/self/root$W/.env"
	check "spelling: /proc/self/root/W/.env denied: EACCES"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks SECRET
	done_check

	sh_run "cat /proc/self/root$W/ok.txt"
	check "spelling: /proc/self/root/W/ok.txt allowed"
	expect_out_eq ok-content
	done_check

	sh_run 'cat /proc/self/cwd/.env'
	check "spelling: /proc/self/cwd/.env denied: EACCES"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks SECRET
	done_check

	py_run "${PYPRE}
d = os.open('.', os.O_RDONLY | os.O_DIRECTORY)
try:
    fd = os.open('.env', os.O_RDONLY, dir_fd=d); print('read', os.read(fd, 100))
except OSError as e:
    print(en(e))"
	check "spelling: os.open('.env', dir_fd=workspace) denied: EACCES"
	expect_out_eq "err EACCES"
	done_check

	py_run "${PYPRE}
d = os.open('.', os.O_RDONLY | os.O_DIRECTORY)
print(os.read(os.open('ok.txt', os.O_RDONLY, dir_fd=d), 100).decode().strip())"
	check "spelling: os.open('ok.txt', dir_fd=workspace) allowed"
	expect_out_eq ok-content
	done_check

	py_run "${PYPRE}
d = os.open('a', os.O_RDONLY | os.O_DIRECTORY)
try:
    fd = os.open('../.env', os.O_RDONLY, dir_fd=d); print('read', os.read(fd, 100))
except OSError as e:
    print(en(e))"
	check "spelling: os.open('../.env', dir_fd=W/a) denied: EACCES"
	expect_out_eq "err EACCES"
	done_check

	py_run "${PYPRE}
d = os.open('privlink', os.O_PATH | os.O_DIRECTORY)
try:
    fd = os.open('data.txt', os.O_RDONLY, dir_fd=d); print('read', os.read(fd, 100))
except OSError as e:
    print(en(e))"
	check "spelling: os.open('data.txt', dir_fd=O_PATH fd of privlink -> private) denied: EACCES"
	expect_out_eq "err EACCES"
	done_check

	py_run "${PYPRE}
d = os.open('protected', os.O_RDONLY | os.O_DIRECTORY)
try:
    os.open('dirfd-new', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d); print('created')
except OSError as e:
    print(en(e))"
	check "spelling: os.open(O_CREAT, dir_fd=protected) denied: EACCES, not created"
	expect_out_eq "err EACCES"
	expect_no_file "$W/protected/dirfd-new"
	done_check

	py_run "${PYPRE}
d = os.open('out', os.O_RDONLY | os.O_DIRECTORY)
os.close(os.open('dirfd-new', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d)); print('created')"
	check "spelling: os.open(O_CREAT, dir_fd=out) allowed"
	expect_out_eq created
	expect_file "$W/out/dirfd-new"
	done_check

	py_run "${PYPRE}
fd = os.open('.env', os.O_PATH)
for p in ('/proc/self/fd/%d' % fd, '/dev/fd/%d' % fd):
    try:
        print('read', open(p).read())
    except OSError as e:
        print(en(e))"
	check "spelling: reopening an O_PATH fd of .env via /proc/self/fd/N and /dev/fd/N denied"
	expect_out_eq "err EACCES
err EACCES"
	done_check

	py_run "${PYPRE}
fd = os.open('ok.txt', os.O_PATH)
print(open('/proc/self/fd/%d' % fd).read().strip())"
	check "spelling: reopening an O_PATH fd of ok.txt via /proc/self/fd/N allowed"
	expect_out_eq ok-content
	done_check

	sh_run 'ls protected'
	check "spelling: listing a write-denied directory (ls protected) allowed"
	expect_rc 0
	expect_out_has keep
	done_check

	py_run "${PYPRE}
try:
    print('keep.txt' in ' '.join(os.listdir('protected')))
except OSError as e:
    print(en(e))"
	check "spelling: os.listdir of a write-denied directory allowed"
	expect_out_eq True
	done_check

	sh_run 'alias-prog markers/alias-denied'
	check "spelling: exec through a symlink to a denied program (alias-prog -> forbidden) denied: EACCES, not started"
	expect_rc 126
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/alias-denied"
	done_check

	ldso=$(ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -n 1)
	if [ -n "$ldso" ]; then
		sh_run "$ldso $W/bin/forbidden-touch markers/ldso-denied"
		check "spelling: the dynamic loader running a denied program (ld.so forbidden-touch) denied: EACCES, not started"
		expect_rc 126
		expect_err_has "Permission denied"
		expect_no_file "$W/markers/ldso-denied"
		done_check

		sh_run "$ldso --argv0 innocent /usr/bin/touch markers/ldso-allowed"
		check "spelling: the dynamic loader running an allowed program allowed"
		expect_rc 0
		expect_file "$W/markers/ldso-allowed"
		done_check
	else
		tap_skip "spelling: ld.so exec: no dynamic loader found at a known path"
	fi
}

# ---- the environment: env -i, env -u, closed fds ---------------------------------------------------------

env_group()
{
	sh_run "env -i /usr/bin/cat $W/.env"
	check "env: env -i cat .env still denied in the child"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks SECRET
	done_check

	sh_run "env -i /usr/bin/cat $W/ok.txt"
	check "env: env -i cat ok.txt allowed"
	expect_out_eq ok-content
	done_check

	sh_run 'env -i /usr/bin/env'
	check "env: env -i: LD_PRELOAD and AIRLOCK_DIR restored in the child's environment"
	expect_out_has "LD_PRELOAD=$SHIM"
	expect_out_has "AIRLOCK_DIR=$S"
	done_check

	sh_run "env -i /bin/sh -c '$W/bin/forbidden $W/markers/env-i-denied; echo rc=\$?'"
	check "env: env -i sh -c forbidden: the grandchild's exec still denied: EACCES, not started"
	expect_out_has "rc=126"
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/env-i-denied"
	done_check

	sh_run 'env -u LD_PRELOAD cat .env'
	check "env: env -u LD_PRELOAD cat .env still denied: EACCES"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks SECRET
	done_check

	sh_run 'env -u LD_PRELOAD -u AIRLOCK_DIR /usr/bin/env'
	check "env: env -u LD_PRELOAD -u AIRLOCK_DIR: both restored"
	expect_out_has "LD_PRELOAD=$SHIM"
	expect_out_has "AIRLOCK_DIR=$S"
	done_check

	sh_run 'env LD_PRELOAD=/nonexistent.so AIRLOCK_DIR=/nonexistent /usr/bin/env 2>/dev/null'
	check "env: an overridden LD_PRELOAD / AIRLOCK_DIR gets the shim and the session back"
	expect_out_has "$SHIM"
	expect_out_has "AIRLOCK_DIR=$S"
	done_check

	py_run "${PYPRE}
os.closerange(3, 65536)
os.execv('/usr/bin/cat', ['cat', '.env'])"
	check "env: closerange(3, 65536) then execv cat .env: still denied"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks SECRET
	done_check

	py_run "${PYPRE}
os.closerange(3, 65536)
os.execv('/usr/bin/cat', ['cat', 'ok.txt'])"
	check "env: closerange(3, 65536) then execv cat ok.txt allowed"
	expect_out_eq ok-content
	done_check

	py_run "${PYPRE}
os.closerange(3, 65536)
os.execve('/usr/bin/env', ['env'], {})"
	check "env: closerange then execve with an empty environment: LD_PRELOAD, AIRLOCK_DIR restored"
	expect_out_has "LD_PRELOAD=$SHIM"
	expect_out_has "AIRLOCK_DIR=$S"
	done_check

	py_run "${PYPRE}
os.closerange(3, 65536)
os.execve('/bin/sh', ['sh', '-c', 'forbidden markers/env-close-denied; echo rc=\$?'], {'PATH': '$W/bin:/usr/bin:/bin'})"
	check "env: closerange then execve sh with its own environment: forbidden still denied: EACCES, not started"
	expect_out_has "rc=126"
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/env-close-denied"
	done_check
}

# ---- ask: the launcher's answer decides -----------------------------------------------------------------

ask_group()
{
	server_start --answer allow
	sh_run 'askme markers/ask-allowed'
	check "ask: exec, server answers allow: the program starts"
	expect_rc 0
	expect_file "$W/markers/ask-allowed"
	expect_event type=ask source=exec decision=ask rule=$R_ASKEXEC "program=$W/bin/askme"
	expect_event type~answer decision=allow
	done_check

	sh_run 'cat asked.txt'
	check "ask: read, server answers allow: the file is read"
	expect_out_eq asked-content
	expect_event type=ask source=open action=read rule=$R_ASKFILE "path=$W/asked.txt"
	done_check

	py_run "${PYPRE}print(subprocess.run(['askme', 'markers/ask-sub-allowed']).returncode)"
	check "ask: python subprocess (asks from the vfork child), allow: starts"
	expect_out_eq 0
	expect_file "$W/markers/ask-sub-allowed"
	expect_event type=ask source=exec "program=$W/bin/askme" 'argv=["askme","markers/ask-sub-allowed"]'
	done_check

	server_start --answer allow --delay-ms 400
	sh_run 'askme markers/ask-delayed'
	check "ask: the answer comes after 400 ms: the call blocks for it, then proceeds"
	expect_rc 0
	expect_file "$W/markers/ask-delayed"
	expect_event type~answer decision=allow
	done_check

	server_start --answer deny
	sh_run 'askme markers/ask-denied'
	check "ask: exec, server answers deny: EACCES, not started"
	expect_rc 126
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/ask-denied"
	expect_event type=ask source=exec "program=$W/bin/askme"
	expect_event type~answer decision=deny
	done_check

	py_run "${PYPRE}
try:
    print('read', open('asked.txt').read())
except OSError as e:
    print(en(e))"
	check "ask: read, server answers deny: EACCES"
	expect_out_eq "err EACCES"
	expect_event type=ask source=open "path=$W/asked.txt"
	done_check

	py_run "${PYPRE}
try:
    subprocess.run(['askme', 'markers/ask-sub-denied']); print('ran')
except OSError as e:
    print(en(e))"
	check "ask: python subprocess (asks from the vfork child), deny: EACCES, not started"
	expect_out_eq "err EACCES"
	expect_no_file "$W/markers/ask-sub-denied"
	done_check

	server_stop
	rm -f "$S/channel"
	sh_run 'askme markers/ask-noserver'
	check "ask: no channel socket: denied (fail closed), not started"
	expect_rc 126
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/ask-noserver"
	done_check

	sh_run 'cat asked.txt'
	check "ask: no channel socket: read denied (fail closed): EACCES"
	expect_rc 1
	expect_err_has "Permission denied"
	expect_out_lacks asked-content
	done_check

	# A socket path that is not a socket at all.
	: >"$S/channel"
	sh_run 'askme markers/ask-notsock'
	check "ask: channel is not a socket: denied (fail closed): EACCES, not started"
	expect_rc 126
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/ask-notsock"
	done_check
	rm -f "$S/channel"
}

# ---- events reported on the channel ------------------------------------------------------------------------

events_group()
{
	server_start --answer deny
	sh_run 'cat .env'
	check "events: a denied read is reported (source open, action read, path, rule)"
	expect_rc 1
	expect_event type=event source=open action=read decision=deny rule=$R_ENV "path=$W/.env"
	done_check

	f=$(protect ev-keep.txt)
	sh_run 'echo x > protected/ev-keep.txt'
	check "events: a denied write is reported (action write, the protected rule)"
	expect_event type=event source=open action=write decision=deny rule=$R_PROTECTED "path=$f"
	done_check

	sh_run 'forbidden markers/ev-denied'
	check "events: a denied exec is reported (program, argv, rule)"
	expect_event type=event source=exec decision=deny rule=$R_FORBIDDEN "program=$W/bin/forbidden" \
		'argv=["forbidden","markers/ev-denied"]'
	done_check

	py_run "${PYPRE}
s = socket.socket()
try:
    s.connect(('127.0.0.1', $DENY_PORT)); print('connected')
except OSError as e:
    print(en(e))"
	check "events: a denied connect: ECONNREFUSED, reported (host, port, rule)"
	expect_out_eq "err ECONNREFUSED"
	expect_event type=event source=connect decision=deny rule=$R_NETDENY host=127.0.0.1 port=$DENY_PORT
	done_check

	py_run "${PYPRE}
s = socket.socket()
s.connect(('127.0.0.1', $ALLOW_PORT)); print(s.recv(10).decode().strip())"
	check "events: an allowed connect works and is reported"
	expect_out_eq hello
	expect_event type=event source=connect decision=allow rule=$R_NETALLOW host=127.0.0.1 port=$ALLOW_PORT
	done_check

	sh_run 'allowed_prog markers/ev-allowed'
	check "events: an allowed exec is reported"
	expect_rc 0
	expect_event type=event source=exec decision=allow rule=-1 "program=$W/bin/allowed_prog" \
		'argv=["allowed_prog","markers/ev-allowed"]'
	done_check

	server_start --answer deny
	py_run "${PYPRE}
print(open('trace_probe.txt').read().strip())
try:
    open('.env')
except OSError as e:
    print(en(e))"
	check "events: an allowed read is not reported without AIRLOCK_TRACE"
	expect_out_eq "probe-content
err EACCES"
	# the denied read after it is the sentinel: once it is logged, the earlier read would be too
	expect_event type=event source=open decision=deny "path=$W/.env"
	sleep 0.2
	expect_no_event "path=$W/trace_probe.txt"
	expect_no_event source=open decision=allow
	done_check

	server_start --answer deny
	shim_run AIRLOCK_TRACE=1 "$PY" -c "print(open('trace_probe.txt').read().strip())"
	check "events: an allowed read is reported with AIRLOCK_TRACE=1"
	expect_out_eq probe-content
	expect_event type=event source=open action=read decision=allow "path=$W/trace_probe.txt"
	done_check
}

# ---- a missing or corrupt policy image: every decision is deny -------------------------------------------------

failclosed_group()
{
	good="$S/policy.img"
	size=$(wc -c <"$good")
	for variant in missing empty truncated flipped garbage; do
		FS="$T/session-$variant"
		mkdir -p "$FS"
		case $variant in
		missing) ;;
		empty) : >"$FS/policy.img" ;;
		truncated) head -c $((size / 2)) "$good" >"$FS/policy.img" ;;
		flipped)
			"$PY" -c "import sys
b = bytearray(open(sys.argv[1], 'rb').read()); b[len(b) * 3 // 4] ^= 0x5a
open(sys.argv[2], 'wb').write(b)" "$good" "$FS/policy.img"
			;;
		garbage) head -c "$size" /dev/urandom >"$FS/policy.img" ;;
		esac
		server_start "$FS" --answer allow

		rm -f "$W/out/fc-$variant"
		SHIM_DIR=$FS sh_run "echo x > out/fc-$variant"
		check "fail closed ($variant image): a write is denied: EACCES, not created"
		expect_rc_not 0
		expect_err_has "Permission denied"
		expect_no_file "$W/out/fc-$variant"
		done_check

		SHIM_DIR=$FS sh_run "allowed_prog markers/fc-$variant"
		check "fail closed ($variant image): an exec is denied: EACCES, not started"
		expect_rc 126
		expect_err_has "Permission denied"
		expect_no_file "$W/markers/fc-$variant"
		done_check

		SHIM_DIR=$FS sh_run 'read -r l < ok.txt; echo "[$l]"'
		check "fail closed ($variant image): a read is denied: EACCES"
		expect_out_lacks ok-content
		expect_err_has "Permission denied"
		done_check

		SHIM_DIR=$FS shim_run "$PY" -c "print('started')"
		check "fail closed ($variant image): python cannot even start (its reads are denied)"
		expect_rc 1
		expect_err_has "No module named 'encodings'"
		expect_out_lacks started
		done_check
		server_stop
	done
}

# ---- the dynamic loader run as a program -------------------------------------------------------------------

# ld.so(8) can run any program: "ld-linux-x86-64.so.2 PROGRAM" is decided on PROGRAM.
loader_group()
{
	ld=$(ls /lib64/ld-linux-*.so.* /lib/ld-linux-*.so.* 2>/dev/null | head -1)
	if [ -z "$ld" ]; then
		tap_skip "loader: no ld-linux found"
		return
	fi
	cp /usr/bin/touch "$W/bin/forbidden-touch"
	shim_run /bin/sh -c "$ld /usr/bin/touch markers/ld-allowed"
	check "loader: $ld /usr/bin/touch is decided on touch: started"
	expect_rc 0
	expect_file "$W/markers/ld-allowed"
	done_check

	shim_run /bin/sh -c "$ld --library-path /nonexistent $W/bin/forbidden-touch markers/ld-denied"
	check "loader: $ld --library-path X forbidden-touch is decided on it: EACCES, not started"
	expect_err_has "Permission denied"
	expect_no_file "$W/markers/ld-denied"
	done_check
}

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
want ask && ask_group
server_start --answer deny
want events && events_group
want failclosed && failclosed_group

tap_plan_end
