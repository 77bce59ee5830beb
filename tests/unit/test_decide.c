/* test_decide.c — table-driven tests of policy decisions (exec / open / connect) on compiled images, per DESIGN.md's policy language. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "testutil.h"
#include "decide_policies.h"

/* ---- The decision table ---------------------------------------------------------- */

enum kind { EXEC, OPEN, CONN };

struct row {
	int pol;
	enum kind kind;
	const char *a; /* program, path or host */
	const char *b; /* EXEC: arguments joined by single spaces */
	unsigned n;    /* OPEN: action; CONN: port */
	enum policy_decision decision;
	int32_t rule;
	int line;
};

#define X(p, prog, args, d, r) { p, EXEC, prog, args, 0, POLICY_##d, r, __LINE__ }
#define O(p, path, act, d, r) { p, OPEN, path, NULL, POLICY_FILE_##act, POLICY_##d, r, __LINE__ }
#define OA(p, path, act, d, r) { p, OPEN, path, NULL, act, POLICY_##d, r, __LINE__ }
#define N(p, host, port, d, r) { p, CONN, host, NULL, port, POLICY_##d, r, __LINE__ }

static const struct row rows[] = {
	/* AgentGuard, rule by rule: deny 0 rm "-rf *", 1 sudo "*", 2 chmod "777 *", 3 *.env read,
	 * 4 *.pem read; allow 5..12 ls cat pwd echo grep head tail wc, 13 git status,
	 * 14 git "log *", 15 git "diff *", 16 write below /tmp/workspace, 17-18 network. */
	X(AG, "/bin/rm", "-rf /", DENY, 0),
	X(AG, "rm", "-rf build", DENY, 0),
	X(AG, "rm", "-rf /home/u /tmp", DENY, 0),
	X(AG, "rm", "-rf ", DENY, 0),
	X(AG, "rm", "-rf", ASK, -1),
	X(AG, "rm", "-r -f x", ASK, -1),
	X(AG, "rm", "-fr x", ASK, -1),
	X(AG, "rm", "file.txt", ASK, -1),
	X(AG, "/usr/bin/sudo", "ls", DENY, 1),
	X(AG, "sudo", "", DENY, 1),
	X(AG, "sudo", "-u root bash", DENY, 1),
	X(AG, "sudoedit", "x", ASK, -1),
	X(AG, "chmod", "777 /etc/passwd", DENY, 2),
	X(AG, "chmod", "777 a b", DENY, 2),
	X(AG, "chmod", "755 x", ASK, -1),
	X(AG, "chmod", "777", ASK, -1),
	X(AG, "chmod", "-R 777 x", ASK, -1),
	X(AG, "ls", "", ALLOW, 5),
	X(AG, "/bin/ls", "-la /", ALLOW, 5),
	X(AG, "/bin/cat", "/etc/hosts", ALLOW, 6),
	X(AG, "pwd", "", ALLOW, 7),
	X(AG, "echo", "hello world", ALLOW, 8),
	X(AG, "grep", "-r foo .", ALLOW, 9),
	X(AG, "head", "-n 5 f", ALLOW, 10),
	X(AG, "tail", "-f log", ALLOW, 11),
	X(AG, "/usr/bin/wc", "-l", ALLOW, 12),
	X(AG, "lsof", "", ASK, -1),
	X(AG, "git", "status", ALLOW, 13),
	X(AG, "git", "status --short", ASK, -1),
	X(AG, "git", "log --oneline", ALLOW, 14),
	X(AG, "git", "log", ASK, -1),
	X(AG, "git", "diff HEAD~1", ALLOW, 15),
	X(AG, "/usr/bin/git", "diff a b", ALLOW, 15),
	X(AG, "git", "push origin main", ASK, -1),
	X(AG, "git", "", ASK, -1),
	X(AG, "/usr/bin/python3", "x.py", ASK, -1),
	O(AG, "/work/ws/.env", READ, DENY, 3),
	O(AG, "/work/ws/.env", WRITE, ASK, -1),
	O(AG, "/work/ws/config/prod.env", READ, DENY, 3),
	O(AG, "/work/ws/x.env/inner", READ, DENY, 3),
	O(AG, "/home/u/.env.local", READ, ALLOW, -1),
	O(AG, "/etc/ssl/server.pem", READ, DENY, 4),
	O(AG, "/etc/ssl/server.pem", EXEC, ASK, -1),
	O(AG, "/tmp/workspace/out.txt", WRITE, ALLOW, 16),
	O(AG, "/tmp/workspace/a/b/c", WRITE, ALLOW, 16),
	O(AG, "/tmp/workspace", WRITE, ASK, -1),
	O(AG, "/tmp/workspace2/x", WRITE, ASK, -1),
	O(AG, "/tmp/workspace/out.txt", READ, ALLOW, -1),
	O(AG, "/tmp/workspace/key.pem", READ, DENY, 4),
	O(AG, "/tmp/workspace/x.env", WRITE, ALLOW, 16),
	O(AG, "/usr/bin/foo", EXEC, ASK, -1),
	N(AG, "api.anthropic.com", 443, ALLOW, 17),
	N(AG, "api.anthropic.com", 80, ASK, -1),
	N(AG, "API.Anthropic.COM.", 443, ALLOW, 17),
	N(AG, "api.github.com", 443, ALLOW, 18),
	N(AG, "github.com", 443, ASK, -1),
	N(AG, "evil.api.anthropic.com", 443, ASK, -1),
	N(AG, "api.anthropic.com", 0, DENY, -1),

	/* Precedence: deny, then ask, then allow, whatever the order in the file. */
	X(PREC, "git", "status", ALLOW, 0),
	X(PREC, "git", "log -1", ALLOW, 0),
	X(PREC, "git", "", ALLOW, 0),
	X(PREC, "git", "push", ALLOW, 0),
	X(PREC, "git", "push origin main", ASK, 5),
	X(PREC, "/usr/bin/git", "push x", ASK, 5),
	X(PREC, "git", "push --force", DENY, 9),
	X(PREC, "git", "push --force origin main", DENY, 9),
	X(PREC, "git", "push --force-with-lease", DENY, 9),
	X(PREC, "git", "--danger", ASK, 8),
	X(PREC, "make", "", ALLOW, 4),
	X(PREC, "make", "clean", DENY, 13),
	X(PREC, "make", "distclean all", DENY, 13),
	X(PREC, "make", "--danger", ASK, 8),
	X(PREC, "make", "--danger clean", DENY, 13),
	X(PREC, "/bin/ls", "--danger", ASK, 8),
	X(PREC, "/bin/ls", "", ASK, -1),
	O(PREC, "/data/a", WRITE, ALLOW, 2),
	O(PREC, "/data/a/b/c", WRITE, ALLOW, 2),
	O(PREC, "/data", WRITE, ASK, -1),
	O(PREC, "/datax/a", WRITE, ASK, -1),
	O(PREC, "/data/secret", WRITE, ALLOW, 2),
	O(PREC, "/data/secret/x", WRITE, ASK, 6),
	O(PREC, "/data/secret/x", READ, ASK, 6),
	O(PREC, "/data/secret/keys", READ, ASK, 6),
	O(PREC, "/data/secret/keys/id", READ, DENY, 11),
	O(PREC, "/data/secret/keys/a/b", EXEC, DENY, 11),
	N(PREC, "x.corp.com", 443, ALLOW, 3),
	N(PREC, "a.b.corp.com", 8080, ALLOW, 3),
	N(PREC, "build.corp.com", 22, ASK, 7),
	N(PREC, "BUILD.CORP.COM.", 22, ASK, 7),
	N(PREC, "build.corp.com", 23, DENY, 12),
	N(PREC, "a.b.corp.com", 23, DENY, 12),
	N(PREC, "corp.com", 443, ASK, -1),
	N(PREC, "corp.com", 23, ASK, -1),

	/* Defaults. */
	X(DDENY, "cat", "", DENY, -1),
	X(DDENY, "/usr/bin/cat", "x", DENY, -1),
	X(DDENY, "ls", "-l", ALLOW, 0),
	O(DDENY, "/etc/passwd", READ, ALLOW, -1),
	O(DDENY, "/etc/passwd", WRITE, DENY, -1),
	O(DDENY, "/usr/bin/x", EXEC, DENY, -1),
	O(DDENY, "/w/f", WRITE, ALLOW, 1),
	N(DDENY, "x.com", 443, DENY, -1),
	N(DDENY, "ok.com", 1, ALLOW, 2),
	X(DMAP, "anything", "", ASK, -1),
	O(DMAP, "/etc/x", READ, DENY, -1),
	O(DMAP, "/home/u/ok/f", READ, ALLOW, 1),
	O(DMAP, "/home/u/ok", READ, ALLOW, 1),
	O(DMAP, "/etc/x", WRITE, ASK, -1),
	O(DMAP, "/etc/x", EXEC, ASK, -1),
	N(DMAP, "good.com", 80, ALLOW, -1),
	N(DMAP, "bad.com", 80, DENY, 0),
	N(DMAP, "good.com", 0, DENY, -1),
	X(DALLOW, "ls", "", ALLOW, -1),
	X(DALLOW, "rm", "x", DENY, 0),
	O(DALLOW, "/x", WRITE, ALLOW, -1),
	O(DALLOW, "/x", EXEC, ALLOW, -1),
	O(DALLOW, "/etc/hosts", WRITE, ASK, 1),
	O(DALLOW, "/etc/hosts", READ, ALLOW, -1),
	N(DALLOW, "any.where", 80, ALLOW, -1),
	N(DALLOW, "any.where", 65536, DENY, -1),

	/* Per-action defaults and file actions. */
	O(ACT, "/r/f", READ, ALLOW, 1),
	O(ACT, "/r/f", WRITE, ALLOW, -1),
	O(ACT, "/r/f", EXEC, DENY, -1),
	O(ACT, "/other", READ, ASK, -1),
	O(ACT, "/other", WRITE, ALLOW, -1),
	O(ACT, "/other", EXEC, DENY, -1),
	O(ACT, "/w/f", WRITE, ASK, 0),
	O(ACT, "/w/f", READ, ASK, -1),
	O(ACT, "/x/bin", EXEC, ALLOW, 2),
	X(ACT, "/x/bin", "", ALLOW, 2),
	X(ACT, "/usr/bin/true", "", DENY, -1),
	X(ACT, "true", "", DENY, -1),
	N(ACT, "a.com", 80, DENY, -1),
	OA(ACT, "/r/f", 0, DENY, -1),
	OA(ACT, "/r/f", POLICY_FILE_READ | POLICY_FILE_WRITE, DENY, -1),
	OA(ACT, "/r/f", 8, DENY, -1),
	OA(ACT, "/w/f", POLICY_FILE_ALL, DENY, -1),
	OA(ACT, "/r/f", 0x80000000u, DENY, -1),

	/* Exec decided by file rules with action exec (absolute programs only). */
	X(EXECF, "/opt/t/tool", "", DENY, 3),
	X(EXECF, "tool", "", ALLOW, 0),
	X(EXECF, "/usr/local/bin/tool", "", ASK, 2),
	X(EXECF, "/usr/bin/ls", "-l", ALLOW, 1),
	X(EXECF, "/usr/bin/nc", "-l 80", DENY, 4),
	X(EXECF, "/usr/bin/tool", "", ALLOW, 0),
	X(EXECF, "/home/u/bin/x", "", ASK, -1),
	X(EXECF, "/home/u/run.sh", "", DENY, 5),
	X(EXECF, "run.sh", "", ASK, -1),
	O(EXECF, "/usr/bin/nc", READ, ALLOW, -1),
	O(EXECF, "/usr/bin/nc", WRITE, ASK, -1),
	O(EXECF, "/opt/t/tool", EXEC, DENY, 3),
	O(EXECF, "/x", READ, ALLOW, -1),
	N(EXECF, "x", 80, ASK, -1),

	/* Command rules. */
	X(CMD, "rm", "-rf /", DENY, 0),
	X(CMD, "/bin/rm", "-rf /", DENY, 0),
	X(CMD, "rm", "-rf /tmp", ASK, -1),
	X(CMD, "rm", "-rf  /", ASK, -1),
	/* an empty leading argument keeps its separator: {"rm", "", "-rf", "/"} joins to " -rf /" */
	X(CMD, "rm", " -rf /", ASK, -1),
	X(CMD, "rm", "-rf", ASK, -1),
	X(CMD, "npm", "run", DENY, 1),
	X(CMD, "npm", "run build", DENY, 1),
	X(CMD, "npm", "run build --prod", DENY, 1),
	X(CMD, "npm", "runner", ASK, -1),
	X(CMD, "npm", "run-script x", ASK, -1),
	X(CMD, "npm", "install", ASK, -1),
	X(CMD, "npm", "", ASK, -1),
	X(CMD, "npm", "install run", ASK, -1),
	X(CMD, "npmx", "run", ASK, -1),
	X(CMD, "/usr/bin/python3", "-c print(1)", DENY, 2),
	X(CMD, "/usr/bin/python3", "-c", ASK, -1),
	X(CMD, "python3", "-c x", ASK, -1),
	X(CMD, "/usr/local/bin/python3", "-c x", ASK, -1),
	X(CMD, "/usr/bin/python3", "x.py", ASK, -1),
	X(CMD, "py3", "", DENY, 3),
	X(CMD, "/usr/bin/py7", "a", DENY, 3),
	X(CMD, "pyx", "", ASK, -1),
	X(CMD, "py10", "", ASK, -1),
	X(CMD, "curl", "https://x", DENY, 4),
	X(CMD, "/bin/curl", "", DENY, 4),
	X(CMD, "cur", "", ASK, -1),
	X(CMD, "curls", "", ASK, -1),
	X(CMD, "tool", "start abc", DENY, 5),
	X(CMD, "tool", "stop x", DENY, 5),
	X(CMD, "/usr/bin/tool", "stop z", DENY, 5),
	X(CMD, "tool", "restart abc", ASK, -1),
	X(CMD, "tool", "start abc ", ASK, -1),
	X(CMD, "tool", "start ABC", ASK, -1),
	X(CMD, "tool", "start abc def", ASK, -1),
	X(CMD, "tool", "start", ASK, -1),
	X(CMD, "tool", "", ASK, -1),
	X(CMD, "xbz", "", DENY, 6),
	X(CMD, "xaz", "", ASK, -1),
	X(CMD, "n5", "", DENY, 7),
	X(CMD, "nx", "", ASK, -1),
	X(CMD, "lit", "a*b", DENY, 8),
	X(CMD, "lit", "aXb", ASK, -1),
	X(CMD, "/opt/bin/sub/dir/tool", "--evil", DENY, 9),
	X(CMD, "/opt/bin/x", "--evil", DENY, 9),
	X(CMD, "/opt/bin/x", "--good", ASK, -1),
	X(CMD, "x", "--evil", ASK, -1),
	X(CMD, "ruby", "", DENY, 10),
	X(CMD, "/usr/bin/ruby", "-e 1", DENY, 10),
	X(CMD, "rusy", "", DENY, 10),
	X(CMD, "rubyx", "", ASK, -1),
	X(CMD, "xruby", "", ASK, -1),
	X(CMD, "gcc", "-o out", DENY, 11),
	X(CMD, "gcc", "-o out main.c", DENY, 11),
	X(CMD, "gcc", "-o output", ASK, -1),
	X(CMD, "gcc", "-c -o out", ASK, -1),
	X(CMD, "gcc", "-o", ASK, -1),
	X(CMD, "npx", "", DENY, 12),
	X(CMD, "npx", "create-app x", DENY, 12),
	X(CMD, "/usr/bin/npx", "a", DENY, 12),
	X(CMD, "npxy", "", ASK, -1),
	X(CMD, "/usr/sbin/iptables", "-L", DENY, 13),
	X(CMD, "/usr/bin/ip6tables", "", DENY, 13),
	X(CMD, "iptables", "-L", ASK, -1),
	X(CMD, "/usr/sbin/iptables-save", "", ASK, -1),
	X(CMD, "/usr/local/sbin/iptables", "", ASK, -1),
	X(CMD, "cp", "-r a b", DENY, 14),
	X(CMD, "cp", "ab ", DENY, 14),
	X(CMD, "cp", "-ra b", ASK, -1),
	X(CMD, "ex*", "", DENY, 15),
	X(CMD, "/bin/ex*", "q", DENY, 15),
	X(CMD, "exit", "", ASK, -1),
	X(CMD, "tar", "xf a.tar", DENY, 16),
	X(CMD, "tar", "-xvf a.tar", DENY, 16),
	X(CMD, "tar", "cf x", ASK, -1),
	X(CMD, "tar", "", ASK, -1),
	X(CMD, "npm", "run ", DENY, 1),
	X(CMD, "/opt/bin/curl", "--evil", DENY, 4),
	X(CMD, "/opt/bin/py3", "--evil", DENY, 3),

	/* File rules. */
	O(FILES, "/work/ws/.env", READ, DENY, 0),
	O(FILES, "/a/.env", WRITE, DENY, 0),
	O(FILES, "/a/.env/b", READ, DENY, 0),
	O(FILES, "/.env", EXEC, DENY, 0),
	O(FILES, "/a/.envrc", READ, ALLOW, -1),
	O(FILES, "/a/x.env", READ, ALLOW, -1),
	O(FILES, "/home/u/.ssh", READ, DENY, 1),
	O(FILES, "/home/u/.ssh/id_rsa", READ, DENY, 1),
	O(FILES, "/home/u/.ssh/sub/known", WRITE, DENY, 1),
	O(FILES, "/home/u/.sshx", READ, ALLOW, -1),
	O(FILES, "/root/.ssh/id_rsa", READ, ALLOW, -1),
	O(FILES, "/work/ws/.ssh/x", READ, ALLOW, -1),
	O(FILES, "/tmp/a", READ, DENY, 2),
	O(FILES, "/tmp/a/b", WRITE, DENY, 2),
	O(FILES, "/tmp/ab", READ, ALLOW, -1),
	O(FILES, "/tmp", WRITE, ASK, -1),
	O(FILES, "/x/tmp/a", READ, ALLOW, -1),
	O(FILES, "/work/ws/src/main.c", WRITE, DENY, 3),
	O(FILES, "/work/ws/src/.c", WRITE, DENY, 3),
	O(FILES, "/work/ws/src/sub/main.c", WRITE, ASK, -1),
	O(FILES, "/work/ws/src/main.c", READ, ALLOW, -1),
	O(FILES, "/other/src/main.c", WRITE, ASK, -1),
	O(FILES, "/work/ws/a/src/main.c", WRITE, ASK, -1),
	O(FILES, "/work/ws/build/out/x.o", WRITE, DENY, 4),
	O(FILES, "/work/ws/build/x", WRITE, DENY, 4),
	O(FILES, "/work/ws/build", WRITE, ASK, -1),
	O(FILES, "/work/ws/build2/x", WRITE, ASK, -1),
	O(FILES, "/srv/a/b", READ, DENY, 5),
	O(FILES, "/srv/a/x/b", READ, DENY, 5),
	O(FILES, "/srv/a/x/y/b", READ, DENY, 5),
	O(FILES, "/srv/a/x/b/c", READ, DENY, 5),
	O(FILES, "/srv/a/xb", READ, ALLOW, -1),
	O(FILES, "/srv/b", READ, ALLOW, -1),
	O(FILES, "/var/log/syslog.log", READ, DENY, 6),
	O(FILES, "/var/log/.log", READ, DENY, 6),
	O(FILES, "/var/log/nginx/access.log", READ, ALLOW, -1),
	O(FILES, "/var/log/syslog", READ, ALLOW, -1),
	O(FILES, "/etc/passwd", READ, DENY, 7),
	O(FILES, "/etc/passwdx", READ, ALLOW, -1),
	O(FILES, "/etc/passw", READ, ALLOW, -1),
	O(FILES, "/opt/evil/x", EXEC, DENY, 8),
	O(FILES, "/opt/evil/a/b", EXEC, DENY, 8),
	O(FILES, "/opt/evil/x", READ, ALLOW, -1),
	O(FILES, "/opt/evil", EXEC, ASK, -1),
	X(FILES, "/opt/evil/x", "", DENY, 8),
	X(FILES, "/opt/evil/sub/x", "a b", DENY, 8),
	X(FILES, "/opt/good/x", "", ASK, -1),
	X(FILES, "x", "", ASK, -1),
	O(FILES, "/k/server.key", READ, DENY, 9),
	O(FILES, "/k/server.key", WRITE, DENY, 9),
	O(FILES, "/k/server.key", EXEC, ASK, -1),
	O(FILES, "/k/.key", READ, DENY, 9),
	O(FILES, "/cfg", WRITE, DENY, 10),
	O(FILES, "/cfg/x", WRITE, DENY, 10),
	O(FILES, "/cfgx", WRITE, ASK, -1),
	O(FILES, "/data/f1.txt", READ, DENY, 11),
	O(FILES, "/data/fa.txt", READ, ALLOW, -1),
	O(FILES, "/data/f12.txt", READ, ALLOW, -1),
	O(FILES, "/exact/dir", READ, DENY, 12),
	O(FILES, "/exact/dir/f", READ, ALLOW, -1),
	O(FILES, "/exact/di", READ, ALLOW, -1),
	O(FILES, "/pfx/dir", READ, DENY, 13),
	O(FILES, "/pfx/dir/a/b", READ, DENY, 13),
	O(FILES, "/pfx/dirx", READ, ALLOW, -1),
	O(FILES, "/pfx", READ, ALLOW, -1),
	O(FILES, "/rx/abc.db", READ, DENY, 14),
	O(FILES, "/rx/ABC.db", READ, ALLOW, -1),
	O(FILES, "/rx/abcxdb", READ, ALLOW, -1),
	O(FILES, "/rx/sub/abc.db", READ, ALLOW, -1),
	O(FILES, "/home/u/secrets/a", READ, DENY, 15),
	O(FILES, "/home/u/secrets/a/b", READ, DENY, 15),
	O(FILES, "/home/u/secrets", READ, ALLOW, -1),
	O(FILES, "/home/u/.bashrc", WRITE, DENY, 16),
	O(FILES, "/home/u/.bashrc/x", WRITE, ASK, -1),
	O(FILES, "/home/u/.bashrc.d/x", WRITE, ASK, -1),
	O(FILES, "/work/ws/vendor", WRITE, DENY, 17),
	O(FILES, "/work/ws/vendor/a/b", WRITE, DENY, 17),
	O(FILES, "/work/ws/vendorx", WRITE, ASK, -1),
	O(FILES, "/home/u/x.y", READ, ALLOW, -1),
	O(FILES, "/work/ws/cache/a.tmp", WRITE, DENY, 19),
	O(FILES, "/work/ws/x/y/cache/a.tmp", WRITE, DENY, 19),
	O(FILES, "/other/cache/a.tmp", WRITE, ASK, -1),
	O(FILES, "/home/u/.ssh2/id_ed25519", READ, DENY, 20),
	O(FILES, "/x/id_rsa", READ, ALLOW, -1),
	O(FILES, "/", WRITE, ASK, -1),
	O(FILES, "/TMP/a", READ, ALLOW, -1),
	O(FILES, "/a/.ENV", READ, ALLOW, -1),
	O(FILES, "/a/.env/x.key", READ, DENY, 0),
	O(FILES, "/k/x.key/.env", READ, DENY, 0),
	O(FILES, "/home/u/.ssh/x.key", WRITE, DENY, 1),
	O(FILES, "/tmp/a/id_ed25519", READ, DENY, 2),

	/* Network rules. */
	N(NET, "evil.com", 80, DENY, 0),
	N(NET, "EVIL.COM.", 443, DENY, 0),
	N(NET, "evil.com", 1, DENY, 0),
	N(NET, "www.evil.com", 80, ASK, -1),
	N(NET, "a.tracker.net", 80, DENY, 1),
	N(NET, "a.b.c.tracker.net", 80, DENY, 1),
	N(NET, "A.Tracker.Net.", 80, DENY, 1),
	N(NET, "tracker.net", 80, ASK, -1),
	N(NET, "xtracker.net", 80, ASK, -1),
	N(NET, "10.1.2.3", 80, DENY, 2),
	N(NET, "10.255.255.255", 80, DENY, 2),
	N(NET, "10.0.0.1", 443, DENY, 2),
	N(NET, "11.0.0.1", 80, ASK, -1), /* an IP input never matches the name glob "1*" (rule 14) */
	N(NET, "167772161", 80, DENY, 2),
	N(NET, "10.1", 80, DENY, 2),
	N(NET, "0xa.0.0.1", 80, DENY, 2),
	N(NET, "012.0.0.1", 80, DENY, 2),
	N(NET, "::ffff:10.1.2.3", 80, DENY, 2),
	N(NET, "[::ffff:10.1.2.3]", 80, DENY, 2),
	N(NET, "2001:db8::1", 80, DENY, 3),
	N(NET, "[2001:db8:ffff::1]", 80, DENY, 3),
	N(NET, "2001:db9::1", 80, ASK, -1),
	N(NET, "::1", 8080, DENY, 4),
	N(NET, "[::1]", 8080, DENY, 4),
	N(NET, "0:0:0:0:0:0:0:1", 8080, DENY, 4),
	N(NET, "::1", 8081, ASK, -1),
	N(NET, "192.168.1.1", 22, DENY, 5),
	N(NET, "3232235777", 22, DENY, 5),
	N(NET, "192.168.1.1", 23, ASK, -1), /* an IP input never matches the name glob "1*" (rule 14) */
	N(NET, "api-1.example.org", 80, DENY, 6),
	N(NET, "API-X.EXAMPLE.ORG", 80, DENY, 6),
	N(NET, "api-12.example.org", 80, ASK, -1),
	N(NET, "api-1.example.org.", 80, DENY, 6),
	N(NET, "fd12::1", 9, DENY, 7),
	N(NET, "fe80::1", 9, ASK, -1),
	N(NET, "mixed.case.org", 443, DENY, 8),
	N(NET, "MIXED.case.org.", 443, DENY, 8),
	N(NET, "mixed.case.org", 80, ASK, -1),
	N(NET, "any.host", 25, DENY, 9),
	N(NET, "1.2.3.4", 25, DENY, 9),
	N(NET, "127.0.0.1", 80, DENY, 10),
	N(NET, "2130706433", 80, DENY, 10),
	N(NET, "127.1", 80, DENY, 10),
	N(NET, "0x7f.0.0.1", 80, DENY, 10),
	N(NET, "::ffff:127.0.0.1", 80, DENY, 10),
	N(NET, "127.0.0.2", 80, ASK, -1), /* an IP input never matches the name glob "1*" (rule 14) */
	N(NET, "localhost", 80, ASK, -1),
	N(NET, "www.example.com", 443, ASK, 11),
	N(NET, "a.b.example.com", 443, ASK, 11),
	N(NET, "www.example.com", 80, ASK, -1),
	N(NET, "example.com", 443, ALLOW, 12),
	N(NET, "Example.COM.", 443, ALLOW, 12),
	N(NET, "google.com", 443, ALLOW, 13),
	N(NET, "8.8.8.8", 443, ALLOW, 13),
	N(NET, "[2606:4700::1111]", 443, ALLOW, 13),
	N(NET, "1password.com", 80, ALLOW, 14),
	N(NET, "1.2.3.4", 80, ASK, -1), /* an IP input never matches the name glob "1*" (rule 14) */
	N(NET, "100.64.0.1", 80, ASK, -1), /* an IP input never matches the name glob "1*" (rule 14) */
	N(NET, "exact.host", 80, ALLOW, 15),
	N(NET, "EXACT.HOST.", 80, ALLOW, 15),
	N(NET, "exact.host", 81, ASK, -1),
	N(NET, "sub.exact.host", 80, ASK, -1),
	N(NET, "other.host", 65535, ASK, -1),
	N(NET, "other.host", 0, DENY, -1),
	N(NET, "other.host", 65536, DENY, -1),
	N(NET, "other.host", 70000, DENY, -1),
	N(NET, "1.2.3.4", 0, DENY, -1),
	N(NET, "1.2.3.4.tracker.net", 80, DENY, 1),
	N(NET, "[2001:DB8::1]", 80, DENY, 3),
	N(NET, "www.example.com.", 443, ASK, 11),
	N(NET, "a.tracker.net", 25, DENY, 1),
	N(NET, "10.0.0.1", 25, DENY, 2),
	N(NET, "evil.com", 25, DENY, 0),
	N(NET, "[::1]", 25, DENY, 9),
	N(NETANY, "1.2.3.4", 80, ALLOW, 1),
	N(NETANY, "x.com", 22, DENY, 0),
	N(NETANY, "::1", 65535, ALLOW, 1),
	N(NETANY, "[::1]", 22, DENY, 0),
	N(NETANY, "x.com", 0, DENY, -1),
	N(NETANY, "x.com", 65536, DENY, -1),
	N(NETANY, "x.com", 4294967295u, DENY, -1),

	/* The describe policy's rules decide too. */
	X(DESC, "npm", "run x", DENY, 0),
	X(DESC, "npm", "runx", ASK, -1),
	O(DESC, "/home/u/.aws/credentials", READ, ASK, 1),
	O(DESC, "/home/u/.aws/credentials", EXEC, ASK, -1),
	O(DESC, "/home/u/.aws", WRITE, ASK, -1),
	N(DESC, "::1", 8080, ALLOW, 2),
	N(DESC, "[::1]", 8080, ALLOW, 2),
	N(DESC, "::1", 8081, ASK, -1),
	O(DESC, "/x/abc", EXEC, ALLOW, 3),
	X(DESC, "/x/abc", "", ALLOW, 3),
	O(DESC, "/x/ABC", EXEC, ASK, -1),
	X(DESC, "/usr/bin/env", "a", ALLOW, 4),
	X(DESC, "env", "", ASK, -1),

	/* 2000 rules: indexes stay right with the same keys in several lists. */
	X(GEN, "tool0", "", ALLOW, 0),
	X(GEN, "tool499", "x", ALLOW, 998),
	X(GEN, "tool500", "", ASK, -1),
	X(GEN, "tool10", "--rm -f", DENY, 1510),
	X(GEN, "tool10", "--keep", ALLOW, 20),
	X(GEN, "tool11", "--rm", ALLOW, 22),
	X(GEN, "tool498", "--rm", DENY, 1998),
	X(GEN, "tool500", "--rm", ASK, -1),
	X(GEN, "/usr/bin/tool42", "--rm", DENY, 1542),
	X(GEN, "tool", "", ASK, -1),
	O(GEN, "/gen/d3/x", WRITE, ALLOW, 7),
	O(GEN, "/gen/d3/secret/k", WRITE, DENY, 1507),
	O(GEN, "/gen/d249/secret/k", WRITE, DENY, 1999),
	O(GEN, "/gen/d250/secret/k", WRITE, ALLOW, 501),
	O(GEN, "/gen/d499/a", WRITE, ALLOW, 999),
	O(GEN, "/gen/d500/a", WRITE, ASK, -1),
	O(GEN, "/gen/d3", WRITE, ASK, -1),
	O(GEN, "/gen/d3/x", READ, ALLOW, -1),
	N(GEN, "h0.example.net", 443, ASK, 1000),
	N(GEN, "h42.example.net", 443, ASK, 1042),
	N(GEN, "H499.EXAMPLE.NET", 443, ASK, 1499),
	N(GEN, "h42.example.net", 80, ASK, -1),
	N(GEN, "h500.example.net", 443, ASK, -1),
};

static const char *kind_name(enum kind k)
{
	return k == EXEC ? "exec" : k == OPEN ? "open" : "connect";
}

/* Decides an EXEC row through policy_decide_exec, splitting the arguments at every space. */
static struct policy_verdict exec_argv(const struct policy_image *img, const char *prog,
				       const char *args)
{
	char buf[1024];
	const char *argv[256];
	size_t n = 0;

	assert_true(strlen(args) < sizeof buf);
	strcpy(buf, args);
	argv[n++] = prog;
	if (*buf) {
		char *p = buf;
		argv[n++] = p;
		for (; *p; p++) {
			if (*p == ' ') {
				*p = '\0';
				assert_true(n < 255);
				argv[n++] = p + 1;
			}
		}
	}
	argv[n] = NULL;
	return policy_decide_exec(img, prog, argv);
}

static bool check(const struct row *r, const char *how, struct policy_verdict v)
{
	char input[1100];

	if (v.decision == r->decision && v.rule == r->rule)
		return true;
	if (r->kind == EXEC)
		snprintf(input, sizeof input, "\"%s\" \"%s\" (%s)", r->a, r->b, how);
	else
		snprintf(input, sizeof input, "\"%s\" %u", r->a, r->n);
	print_error("line %d: %s %s: got %s rule %d, expected %s rule %d\n", r->line,
		    kind_name(r->kind), input, policy_decision_name(v.decision), (int)v.rule,
		    policy_decision_name(r->decision), (int)r->rule);
	return false;
}

static void test_decision_table(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *r = &rows[i];
		const struct policy_image *img = image(r->pol);
		switch (r->kind) {
		case EXEC:
			bad += !check(r, "policy_decide_exec_joined",
				      policy_decide_exec_joined(img, r->a, r->b, strlen(r->b)));
			bad += !check(r, "policy_decide_exec", exec_argv(img, r->a, r->b));
			break;
		case OPEN:
			bad += !check(r, NULL, policy_decide_open(img, r->a, r->n));
			break;
		case CONN:
			bad += !check(r, NULL, policy_decide_connect(img, r->a, r->n));
			break;
		}
	}
	print_message("%zu decision rows\n", sizeof rows / sizeof rows[0]);
	assert_int_equal(bad, 0);
}

/* ---- Argument vectors ---------------------------------------------------------- */

static void test_exec_argv(void **state)
{
	const struct policy_image *ag = image(AG);

	(void)state;
	assert_verdict(policy_decide_exec(ag, "/bin/ls", NULL), ALLOW, 5);
	assert_verdict(policy_decide_exec(ag, "sudo", NULL), DENY, 1);
	assert_verdict(policy_decide_exec(ag, "git", NULL), ASK, -1);
	assert_verdict(policy_decide_exec(ag, "rm", (const char *const[]){ "rm", NULL }), ASK, -1);
	assert_verdict(policy_decide_exec(ag, "rm", (const char *const[]){ "rm", "-rf", "/", NULL }),
		       DENY, 0);
	assert_verdict(policy_decide_exec(ag, "git", (const char *const[]){ "git", "log", NULL }), ASK,
		       -1);
	assert_verdict(policy_decide_exec(ag, "git", (const char *const[]){ "git", "log", "", NULL }),
		       ALLOW, 14);
	assert_verdict(policy_decide_exec(ag, "git", (const char *const[]){ "sh", "status", NULL }),
		       ALLOW, 13);
	assert_verdict(policy_decide_exec(ag, "/usr/bin/git",
					  (const char *const[]){ "git", "status", "--short", NULL }),
		       ASK, -1);
	assert_verdict(policy_decide_exec(ag, "rm", (const char *const[]){ "rm", "-rf /", NULL }),
		       DENY, 0);
}

static void test_exec_joined_length(void **state)
{
	(void)state;
	assert_verdict(policy_decide_exec_joined(image(AG), "rm", "-rf /tmpGARBAGE", 8), DENY, 0);
	assert_verdict(policy_decide_exec_joined(image(AG), "git", "statusXYZ", 6), ALLOW, 13);
	assert_verdict(policy_decide_exec_joined(image(AG), "git", "status", 0), ASK, -1);
	assert_verdict(policy_decide_exec_joined(image(AG), "git", "", 0), ASK, -1);
	assert_verdict(policy_decide_exec_joined(image(CMD), "rm", "-rf /junk", 5), DENY, 0);
	assert_verdict(policy_decide_exec_joined(image(CMD), "rm", "-rf /junk", 6), ASK, -1);
	assert_verdict(policy_decide_exec_joined(image(CMD), "npm", "run build", 3), DENY, 1);
	assert_verdict(policy_decide_exec_joined(image(CMD), "npm", "runner", 3), DENY, 1);
	assert_verdict(policy_decide_exec_joined(image(CMD), "tool", "start abc1", 9), DENY, 5);
}

#define BIG (20 * 1024)

/* One argument of BIG bytes, upper case (big) or lower (lower), among short ones. */
static void long_arg(const struct policy_image *ag, const struct policy_image *cmd, const char *big,
		     const char *lower)
{
	assert_verdict(policy_decide_exec(ag, "rm", (const char *const[]){ "rm", "-rf", big, NULL }),
		       DENY, 0);
	assert_verdict(policy_decide_exec(ag, "git", (const char *const[]){ "git", "diff", big, NULL }),
		       ALLOW, 15);
	assert_verdict(policy_decide_exec(ag, "git", (const char *const[]){ "git", "push", big, NULL }),
		       ASK, -1);
	assert_verdict(policy_decide_exec(ag, "cat", (const char *const[]){ "cat", big, big, NULL }),
		       ALLOW, 6);
	assert_verdict(policy_decide_exec(ag, "chmod",
					  (const char *const[]){ "chmod", "777", big, NULL }),
		       DENY, 2);
	assert_verdict(policy_decide_exec(ag, "git", (const char *const[]){ "git", big, NULL }), ASK,
		       -1);
	assert_verdict(policy_decide_exec(cmd, "tool",
					  (const char *const[]){ "tool", "start", lower, NULL }),
		       DENY, 5);
	assert_verdict(policy_decide_exec(cmd, "tool",
					  (const char *const[]){ "tool", "start", big, NULL }),
		       ASK, -1);
	assert_verdict(policy_decide_exec(cmd, "npm", (const char *const[]){ "npm", "run", big, NULL }),
		       DENY, 1);
	assert_verdict(policy_decide_exec(cmd, "rm", (const char *const[]){ "rm", "-rf", big, NULL }),
		       ASK, -1);
}

/* 6,000 short arguments (many has room for them and the NULL). */
static void many_args(const struct policy_image *ag, const char **many)
{
	many[0] = "ls";
	for (int i = 1; i <= 6000; i++)
		many[i] = "ab";
	assert_verdict(policy_decide_exec(ag, "ls", many), ALLOW, 5);
	many[0] = "rm";
	many[1] = "-rf";
	assert_verdict(policy_decide_exec(ag, "rm", many), DENY, 0);
	many[1] = "-r";
	assert_verdict(policy_decide_exec(ag, "rm", many), ASK, -1);
}

/* The long argument in an argument string already joined (policy_decide_exec_joined). */
static void long_joined(const struct policy_image *ag, const char *big)
{
	char *joined = malloc(BIG + 8);
	assert_non_null(joined);
	memcpy(joined, "-rf ", 4);
	memcpy(joined + 4, big, BIG);
	assert_verdict(policy_decide_exec_joined(ag, "rm", joined, BIG + 4), DENY, 0);
	assert_verdict(policy_decide_exec_joined(ag, "rm", joined + 1, BIG + 3), ASK, -1);
	free(joined);
}

static void test_exec_long_args(void **state)
{
	char *big = malloc(BIG + 1), *lower = malloc(BIG + 1);
	const char **many = calloc(6002, sizeof *many);
	const struct policy_image *ag = image(AG), *cmd = image(CMD);

	(void)state;
	assert_non_null(big);
	assert_non_null(lower);
	assert_non_null(many);
	memset(big, 'A', BIG);
	big[BIG] = '\0';
	memset(lower, 'q', BIG);
	lower[BIG] = '\0';
	long_arg(ag, cmd, big, lower);
	many_args(ag, many);
	long_joined(ag, big);
	free(many);
	free(lower);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decision_table),
		cmocka_unit_test(test_exec_argv),
		cmocka_unit_test(test_exec_joined_length),
		cmocka_unit_test(test_exec_long_args),
	};
	return cmocka_run_group_tests_name("policy decisions", tests, NULL, teardown);
}
