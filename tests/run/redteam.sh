# redteam.sh — the run suite's red-team cases: reproducible ways past the open gate (fanotify)
# found by trying them.  A way the gate now stops is an ordinary check; a known gap it does not
# stop (said in the README) is TAP's TODO: printed "not ok ... # TODO", not a failure, and it
# says so when it starts passing.  Sourced by run.sh (case redteam_gate).

# The static helper: renames, hard links and a move into a directory deeper than PATH_MAX,
# all by raw syscalls (no shim).  Built once into $T/bin/rt-static.
RT_C='#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
static int show(const char *how, int fd)
{
	char b[256];
	if (fd < 0) { printf("%s ERR %s\n", how, strerror(errno)); return 1; }
	ssize_t n = pread(fd, b, sizeof b - 1, 0);
	b[n > 0 ? n : 0] = 0;
	for (char *p = b; *p; p++) if (*p == 10) *p = 32;
	printf("%s OK [%s]\n", how, b);
	return 0;
}
int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "link")) {
		if (syscall(SYS_linkat, AT_FDCWD, argv[2], AT_FDCWD, argv[3], 0)) printf("link ERR %s\n", strerror(errno));
		return show("link", (int)syscall(SYS_openat, AT_FDCWD, argv[3], O_RDONLY));
	}
	if (argc == 4 && !strcmp(argv[1], "rename")) {
		if (syscall(SYS_renameat, AT_FDCWD, argv[2], AT_FDCWD, argv[3])) printf("rename ERR %s\n", strerror(errno));
		return show("rename", (int)syscall(SYS_openat, AT_FDCWD, argv[3], O_RDONLY));
	}
	if (argc == 4 && !strcmp(argv[1], "deep")) {
		char c[201];
		memset(c, 100, 200), c[200] = 0;
		int d = open(argv[3], O_RDONLY | O_DIRECTORY);
		for (int i = 0; i < 22 && d >= 0; i++) {
			mkdirat(d, c, 0755);
			int n = openat(d, c, O_RDONLY | O_DIRECTORY);
			close(d);
			d = n;
		}
		if (renameat(AT_FDCWD, argv[2], d, ".env")) printf("deep rename ERR %s\n", strerror(errno));
		return show("deep", (int)syscall(SYS_openat, d, ".env", O_RDONLY));
	}
	return 2;
}'

# rt_agent: waits for the host to plant three late .env files, then reads each one a way the
# gate decides by a harmless name: a hard link, a rename, a move deeper than PATH_MAX.
rt_agent()
{
	cat <<EOF2
touch "$W/rt-ready"
i=0; while [ ! -e "$W/rt-go" ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i + 1)); done
echo "direct: \$("$T/bin/rt-static" rename "$W/rt/a/.env" "$W/rt/a/.env")"
echo "hardlink: \$("$T/bin/rt-static" link "$W/rt/a/.env" "$W/rt/a/notes")"
echo "rename: \$("$T/bin/rt-static" rename "$W/rt/b/.env" "$W/rt/b/plain")"
echo "deep: \$("$T/bin/rt-static" deep "$W/rt/c/.env" "$W/rt/c")"
EOF2
}

case_redteam_gate()
{
	p=$RUN_USER
	need_sandbox "$p: redteam: late secrets through other names" || return
	if [ -n "$STATIC_SKIP" ]; then
		tap_skip "$p: redteam: late secrets through other names" "$STATIC_SKIP"
		return
	fi
	if [ -n "$AS" ]; then
		tap_skip "$p: redteam: late secrets through other names" "the open gate needs root"
		return
	fi
	if [ ! -x "$T/bin/rt-static" ]; then
		printf '%s\n' "$RT_C" >"$T/rt.c"
		if ! "$CC" -O1 -static -o "$T/bin/rt-static" "$T/rt.c" 2>"$T/cc.err"; then
			tap_skip "$p: redteam: late secrets through other names" "cannot build the helper: $(head -c 200 "$T/cc.err")"
			return
		fi
		chmod 755 "$T/bin/rt-static"
	fi
	rm -rf "$W/rt" "$W/rt-ready" "$W/rt-go"
	rt_agent >"$U/rt.sh"
	chmod 644 "$U/rt.sh"
	# the open gate alone: with the checkpoint on, the move 22 levels deep is refused before it
	# happens (its worker cannot name the path, so it cannot save what the rename would replace)
	CALLER_ENV="AIRLOCK_CHECKPOINT=off"
	arun_bg "$T/rt.out" --headless -- sh "$U/rt.sh"
	CALLER_ENV=""
	wait_file "$W/rt-ready" 100
	mkdir -p "$W/rt/a" "$W/rt/b" "$W/rt/c"
	for d in a b c; do printf 'SECRET=%s-%s\n' "$ENV_SECRET" "$d" >"$W/rt/$d/.env"; done
	touch "$W/rt-go"
	wait_pid_gone "$BGPID" 300
	RC=$BGRC OUT=$(cat "$T/rt.out") ERR=$(cat "$T/rt.out.err")

	check "$p: redteam: control: the late .env read by its own name is refused (EPERM, fanotify)"
	expect_out_has "direct: rename ERR Operation not permitted"
	expect_log source=launcher layer=fanotify file="$W/rt/a/.env" decision=deny
	done_check

	gap="known gap (README, the open gate): it decides by the name a file is opened under, and a static binary's link(2) or rename(2) of a late secret is not gated"
	check "$p: redteam: a static binary hard-links a late .env to notes and reads it"
	expect_out_lacks "$ENV_SECRET-a"
	expect_out_lacks "hardlink: link OK"
	done_check_todo "$gap"

	check "$p: redteam: a static binary renames a late .env to plain and reads it"
	expect_out_lacks "$ENV_SECRET-b"
	expect_out_lacks "rename: rename OK"
	done_check_todo "$gap"

	check "$p: redteam: a late .env moved 22 levels of 200-byte names deep (a path longer than PATH_MAX) and read: refused, the gate cannot read its path (fail closed), logged"
	expect_out_lacks "$ENV_SECRET-c"
	expect_log source=launcher layer=fanotify decision=deny reason~"could not read the file's path"
	done_check
	rm -rf "$W/rt" "$W/rt-ready" "$W/rt-go" "$U/rt.sh"
}
