# programs.sh — the shim suite's cases on real programs: dash, bash, python3, perl, node, coreutils.
# Sourced by tests/shim/run.sh (groups sh bash python perl node coreutils), which sets up the
# workspace, the policy (R_* rule indexes) and PYPRE / PLPRE.

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
