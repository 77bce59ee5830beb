# paths.sh — the shim suite's cases on how a call names its path or program: a fortified C
# program's entry points, the dynamic loader, spellings of a denied path, the environment a
# child gets, and errno kept on allowed calls.  Sourced by tests/shim/run.sh (groups fortify
# loader errno spellings env).

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
