# answers.sh — the shim suite's cases on calls that cannot change anything: they get the kernel's
# own answer (EEXIST, ENOENT, success) with no decision and no event, even where a rule denies
# writes; the calls that would change something are still refused.  Sourced by tests/shim/run.sh
# (group answers).

answers_group()
{
	mkdir -p "$W/protected/tree/a"
	f=$(protect have.txt)
	chmod 644 "$f"

	py_run "${PYPRE}
try:
    os.mkdir('protected/tree'); print('made')
except OSError as e:
    print(en(e))"
	check "answers: python os.mkdir of a protected directory that exists: EEXIST, as the kernel says"
	expect_out_eq "err EEXIST"
	done_check

	sh_run 'mkdir -p protected/tree/a && echo ok'
	check "answers: mkdir -p of a protected tree that exists: done, nothing to make"
	expect_rc 0
	expect_out_eq ok
	done_check

	if [ -x /usr/bin/node ]; then
		shim_run /usr/bin/node -e 'const fs = require("fs");
try { fs.mkdirSync(process.cwd() + "/protected/tree/a", { recursive: true }); console.log("ok"); }
catch (e) { console.log("err " + e.code); }'
		check "answers: node fs.mkdirSync(recursive) of a protected tree that exists: no error (Claude Code's Edit)"
		expect_out_eq ok
		done_check
	else
		tap_skip "answers: node is not installed"
	fi

	py_run "${PYPRE}
for name, call in [('unlink', lambda: os.unlink('protected/nothing')),
                   ('rmdir', lambda: os.rmdir('protected/nothing')),
                   ('symlink', lambda: os.symlink('x', 'protected/have.txt')),
                   ('link', lambda: os.link('ok.txt', 'protected/have.txt')),
                   ('chmod', lambda: os.chmod('protected/have.txt', 0o644))]:
    try:
        call(); print(name, 'done')
    except OSError as e:
        print(name, en(e))"
	check "answers: unlink, rmdir of a missing protected name: ENOENT; symlink, link onto one that exists: EEXIST; chmod to its own mode: done"
	expect_out_eq "unlink err ENOENT
rmdir err ENOENT
symlink err EEXIST
link err EEXIST
chmod done"
	expect_content "$f" KEEP
	done_check

	py_run "${PYPRE}
fd = os.open('protected/have.txt', os.O_RDONLY | os.O_CREAT, 0o600)
print(os.read(fd, 10).decode().strip()); os.close(fd)
try:
    os.open('protected/new.txt', os.O_RDONLY | os.O_CREAT, 0o600); print('created')
except OSError as e:
    print(en(e))
try:
    os.open('protected/have.txt', os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o600); print('opened')
except OSError as e:
    print(en(e))"
	check "answers: open(O_RDONLY|O_CREAT) of a protected file that exists is a read; of a new one: EACCES, not created; with O_EXCL: EEXIST"
	expect_out_eq "KEEP
err EACCES
err EEXIST"
	expect_no_file "$W/protected/new.txt"
	done_check

	# what would change something is still refused
	py_run "${PYPRE}
for name, call in [('mkdir', lambda: os.mkdir('protected/tree/b')),
                   ('unlink', lambda: os.unlink('protected/have.txt')),
                   ('chmod', lambda: os.chmod('protected/have.txt', 0o755))]:
    try:
        call(); print(name, 'done')
    except OSError as e:
        print(name, en(e))"
	check "answers: a new directory, removing a file, a new mode under the same rule: EACCES, nothing changed"
	expect_out_eq "mkdir err EACCES
unlink err EACCES
chmod err EACCES"
	expect_no_file "$W/protected/tree/b"
	expect_content "$f" KEEP
	[ "$(stat -c %a "$f")" = 644 ] || _fail "the mode changed to $(stat -c %a "$f")"
	done_check

	# no decision was made for the calls that changed nothing: the log says only the refusals
	RC=0 OUT="" ERR=""
	check "answers: the calls that changed nothing left no event; the refused ones did"
	expect_event type=event source=open action=write "path=$W/protected/tree/b"
	expect_no_event "path=$W/protected/tree"
	expect_no_event "path=$W/protected/tree/a"
	expect_no_event "path=$W/protected/nothing"
	done_check
}
