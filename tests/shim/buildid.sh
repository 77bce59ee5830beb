#!/bin/sh
# buildid.sh — shim cases: a copy or hard link of a ruled program is known by its GNU build-id (sourced by run.sh).
#
# Own session dir and policy.  `cp "$(command -v git)" ./g; ./g push origin main` must meet
# the rules written for `git push`: refused before git starts, so the bare remote the push
# would update keeps no branch, and the event names the program it is a copy of.  A copy of
# a program no rule names (/bin/true) and a copy of git doing what no rule refuses still run.

R_BI_PUSH=0
R_BI_REMOTE=1

# bi_pushed: true when the test's bare remote holds refs/heads/main (a push reached it).
bi_pushed()
{
	git --git-dir="$W/bi/remote.git" rev-parse --verify -q refs/heads/main >/dev/null 2>&1
}

# bi_push_refused DESC PROGRAM [py]: the push through PROGRAM was refused (the shell said EACCES;
# with py, python printed it), did not reach the remote, and the channel log has its deny with
# rule R_BI_PUSH and copy_of /usr/bin/git.
bi_push_refused()
{
	check "$1"
	if [ "${3:-}" = py ]; then
		expect_out_eq "err EACCES"
	else
		expect_err_has "Permission denied"
	fi
	bi_pushed && _fail "the push reached the remote"
	expect_event type=event source=exec decision=deny rule=$R_BI_PUSH "program=$2" \
		"copy_of=$BI_GIT" 'argv~"push","origin","main"'
	done_check
}

buildid_group()
{
	BI_GIT=$(PATH=/usr/bin:/bin command -v git) || {
		tap_skip "buildid: no git on this machine"
		return
	}
	if ! readelf -n "$BI_GIT" 2>/dev/null | grep -q "Build ID"; then
		tap_skip "buildid: $BI_GIT has no GNU build-id note (built without --build-id)"
		return
	fi
	BS="$T/buildid-session"
	mkdir -p "$BS" "$W/bi/other"
	cat >"$T/buildid.yaml" <<'YAML'
version: 1
default: { exec: allow, read: allow, write: allow, connect: deny }
deny:
  - command: git
    args: "push*"
    reason: pushing is for humans
ask:
  - command: git
    args: "remote add*"
YAML
	policy_compile "$T/buildid.yaml" "$BS"
	server_start "$BS" --answer deny
	# a repository with one commit and a bare remote, made without the shim
	git init -q --bare "$W/bi/remote.git"
	git init -q -b main "$W/bi/repo"
	git -C "$W/bi/repo" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
	git -C "$W/bi/repo" remote add origin "$W/bi/remote.git"

	check "buildid: the session's table lists $BI_GIT with its build-id"
	grep -q "	$BI_GIT	" "$BS/programs" || _fail "no line for $BI_GIT in $BS/programs: $(cat "$BS/programs")"
	done_check

	SHIM_DIR=$BS sh_run 'cp "$(command -v git)" bi/g && cd bi/repo && ../g push origin main; echo "rc=$?"'
	expect_out_has "rc=126"
	bi_push_refused "buildid: sh: cp git ./g; ./g push refused as git push (EACCES, remote untouched, logged as a copy)" \
		"$W/bi/g"

	SHIM_DIR=$BS shim_run "$PY" -c "${PYPRE}
import shutil
shutil.copy(shutil.which('git'), 'bi/g-py')
os.chdir('bi/repo')
try:
    subprocess.run(['../g-py', 'push', 'origin', 'main']); print('ran')
except OSError as e:
    print(en(e))"
	bi_push_refused "buildid: python3 copies git, subprocess runs the copy's push: PermissionError EACCES, logged" \
		"$W/bi/g-py" py

	# no file at all: a copy written into a memfd and started with fexecve (os.execve(fd))
	SHIM_DIR=$BS shim_run "$PY" -c "${PYPRE}
import shutil
fd = os.memfd_create('t')
os.write(fd, open(shutil.which('git'), 'rb').read())
os.chdir('bi/repo')
try:
    os.execve(fd, ['zz', 'push', 'origin', 'main'], dict(os.environ))
except OSError as e:
    print(en(e))"
	check "buildid: a copy of git in a memfd started by fexecve (python os.execve(fd)) refused as git push, logged with the memfd's name"
	expect_out_eq "err EACCES"
	bi_pushed && _fail "the push reached the remote"
	expect_event type=event source=exec decision=deny rule=$R_BI_PUSH "program~memfd:t" \
		"copy_of=$BI_GIT"
	done_check

	SHIM_DIR=$BS sh_run 'cp "$(command -v git)" bi/other/tool && cd bi/repo && ../other/tool push origin main'
	bi_push_refused "buildid: a renamed copy in another directory refused" "$W/bi/other/tool"

	if ln "$BI_GIT" "$W/bi/hard" 2>/dev/null; then
		SHIM_DIR=$BS sh_run 'cd bi/repo && ../hard push origin main'
		bi_push_refused "buildid: a hard link to git refused as git push" "$W/bi/hard"
	else
		tap_skip "buildid: cannot hard-link $BI_GIT into the workspace (another file system, or protected_hardlinks)"
	fi

	BI_LDSO=$(readelf -lW "$BI_GIT" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	if [ -n "$BI_LDSO" ] && [ -x "$BI_LDSO" ]; then
		SHIM_DIR=$BS sh_run "cd bi/repo && $BI_LDSO ../g push origin main"
		bi_push_refused "buildid: the copy started through the dynamic loader ($BI_LDSO ./g push) refused" \
			"$W/bi/g"
	else
		tap_skip "buildid: no dynamic loader named in $BI_GIT"
	fi

	ln -s "$BI_GIT" "$W/bi/soft"
	SHIM_DIR=$BS sh_run 'cd bi/repo && ../soft push origin main'
	check "buildid: a symlink to git refused by its name (canonical path), not as a copy"
	expect_err_has "Permission denied"
	bi_pushed && _fail "the push reached the remote"
	expect_event type=event source=exec decision=deny rule=$R_BI_PUSH "program=$W/bi/soft"
	done_check

	SHIM_DIR=$BS sh_run 'cd bi/repo && ../g remote add other /nowhere; echo "rc=$?"; git remote'
	check "buildid: an ask rule meets the copy too (asked, answered deny): remote not added"
	expect_out_has "rc=126"
	expect_out_lacks other
	expect_event type=ask source=exec decision=ask rule=$R_BI_REMOTE "program=$W/bi/g" "copy_of=$BI_GIT"
	done_check

	SHIM_DIR=$BS sh_run 'cd bi/repo && ../g log --format=%s'
	check "buildid: the copy doing what no rule refuses runs (git log)"
	expect_rc 0
	expect_out_eq one
	done_check

	SHIM_DIR=$BS sh_run 'cp /bin/true bi/t && bi/t && echo ran-true'
	check "buildid: a copy of an unruled program (/bin/true) runs, its event no copy's"
	expect_rc 0
	expect_out_eq ran-true
	expect_event type=event source=exec decision=allow "program=$W/bi/t"
	expect_no_event "program=$W/bi/t" "copy_of~/"
	done_check
}
