#!/bin/sh
# moves.sh — shim cases: rename(2) and its variants take the read rule the content carries (sourced by run.sh).
#
# Own session dir and policy (the main policy's rule indexes stay put):
# `mv .env x; cat x` must not read what `cat .env` may not, nor may a directory
# holding a read-denied path be renamed to where that path is readable.

R_MV_ENV=0
R_MV_KEYS=1

# moves_put_back NAME: a .env a failing case moved to NAME goes back (the next cases need it).
moves_put_back()
{
	if [ -e "$W/$1" ]; then
		mv "$W/$1" "$W/mv/.env"
	fi
}

moves_group()
{
	MS="$T/moves-session"
	mkdir -p "$MS" "$W/mv/vault" "$W/mv/plain"
	cat >"$T/moves.yaml" <<'YAML'
version: 1
default: { exec: allow, read: allow, write: allow, connect: deny }
deny:
  - file: { path: "./mv/.env*", action: read }
    reason: secrets, and their backups
  - file: { path: ./mv/vault/keys, action: read }
    reason: a denied file below a directory
YAML
	policy_compile "$T/moves.yaml" "$MS"
	server_start "$MS" --answer deny
	echo MV-SECRET >"$W/mv/.env"
	echo MV-KEYS >"$W/mv/vault/keys"
	echo plain >"$W/mv/plain/a.txt"

	SHIM_DIR=$MS sh_run 'mv mv/.env mv/x; echo "mv=$?"; cat mv/x'
	check "moves: mv .env x refused (the read rule stays with the content): EACCES, not moved, logged"
	expect_out_has "mv=1"
	expect_out_lacks MV-SECRET
	expect_err_has "Permission denied"
	expect_content "$W/mv/.env" MV-SECRET
	expect_no_file "$W/mv/x"
	expect_event type=event source=open action=read decision=deny rule=$R_MV_ENV "path=$W/mv/.env"
	done_check
	moves_put_back mv/x

	SHIM_DIR=$MS sh_run 'mv mv/.env mv/.env.old && echo moved'
	check "moves: mv .env .env.old allowed (both names denied for read)"
	expect_rc 0
	expect_out_eq moved
	expect_content "$W/mv/.env.old" MV-SECRET
	done_check
	mv "$W/mv/.env.old" "$W/mv/.env"

	SHIM_DIR=$MS sh_run 'mv mv/vault mv/open; echo "mv=$?"; cat mv/open/keys'
	check "moves: mv of a directory holding a read-denied file refused: EACCES, not moved, logged with its rule"
	expect_out_has "mv=1"
	expect_out_lacks MV-KEYS
	expect_content "$W/mv/vault/keys" MV-KEYS
	expect_no_file "$W/mv/open"
	expect_event type=event source=open action=read decision=deny rule=$R_MV_KEYS "path=$W/mv/vault/keys"
	done_check

	SHIM_DIR=$MS sh_run 'mv mv ws-moved; echo "mv=$?"'
	check "moves: mv of a directory two levels above denied files refused: EACCES, not moved"
	expect_out_has "mv=1"
	expect_content "$W/mv/.env" MV-SECRET
	expect_no_file "$W/ws-moved"
	done_check
	if [ -d "$W/ws-moved" ]; then mv "$W/ws-moved" "$W/mv"; fi
	if [ -d "$W/mv/open" ]; then mv "$W/mv/open" "$W/mv/vault"; fi

	SHIM_DIR=$MS sh_run 'mv mv/plain mv/plain2 && mv mv/plain2 mv/plain && echo moved'
	check "moves: mv of a directory with nothing denied below it allowed"
	expect_rc 0
	expect_out_eq moved
	expect_content "$W/mv/plain/a.txt" plain
	done_check

	SHIM_DIR=$MS shim_run "$PY" -c "${PYPRE}
try:
    os.rename('mv/.env', 'mv/py-x'); print('renamed')
except OSError as e:
    print(en(e))"
	check "moves: python os.rename of a read-denied file: EACCES, not renamed"
	expect_out_eq "err EACCES"
	expect_content "$W/mv/.env" MV-SECRET
	expect_no_file "$W/mv/py-x"
	done_check
	moves_put_back mv/py-x

	SHIM_DIR=$MS shim_run "$PY" -c "${PYPRE}
try:
    os.rename('mv/vault', 'mv/py-vault'); print('renamed')
except OSError as e:
    print(en(e))"
	check "moves: python os.rename of a directory holding a read-denied file: EACCES"
	expect_out_eq "err EACCES"
	expect_no_file "$W/mv/py-vault"
	done_check

	SHIM_DIR=$MS shim_run "$PY" -c "${PYPRE}
with open('mv/conf.tmp', 'w') as f:
    f.write('new\n')
os.rename('mv/conf.tmp', 'mv/conf'); print('saved')"
	check "moves: editors' pattern (write tmp; rename tmp file) allowed"
	expect_rc 0
	expect_out_eq saved
	expect_content "$W/mv/conf" new
	expect_no_file "$W/mv/conf.tmp"
	done_check

	if command -v perl >/dev/null 2>&1; then
		SHIM_DIR=$MS shim_run /usr/bin/perl -e "$PLPRE"' if (rename("mv/.env", "mv/pl-x")) { print "renamed" } else { print en() }'
		check "moves: perl rename of a read-denied file: EACCES, not renamed"
		expect_out_eq "err EACCES"
		expect_no_file "$W/mv/pl-x"
		done_check
		moves_put_back mv/pl-x

		SHIM_DIR=$MS shim_run /usr/bin/perl -e "$PLPRE"' open(my $f, ">", "mv/pl.tmp") or die; print $f "pl\n"; close $f; rename("mv/pl.tmp", "mv/pl.conf") or die "rename: $!"; print "saved"'
		check "moves: perl write tmp; rename tmp file allowed"
		expect_out_eq saved
		expect_content "$W/mv/pl.conf" pl
		done_check
	else
		tap_skip "moves: perl: not installed"
	fi
}
