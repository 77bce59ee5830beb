#!/bin/bash
# container.sh — TAP tests of a container joining the host's `airlock serve`: a podman image
# built here from the host's own files (no registry, no network), the shim injected by the
# Containerfile's ENV line that `airlock env --format dockerfile` prints, the session reached
# through `-v DIR:DIR` of serve's --dir link.  The container's opens, execs and connects are
# decided by the host's session and logged there with both pids (the host's and the
# container's own, ns_pid); its asks are answered on the host's control socket.
# Usage: tests/serve/container.sh BUILD   (BUILD holds airlock and airlock-preload.so)
# Skips loudly when not root, without podman, or when podman cannot start a container here.
# Podman's storage, run state and events live in a scratch directory (vfs, cgroupfs, the
# file events backend): nothing global changes.  The container has no network
# (--network=none): its connects stay on its own loopback.  Exits 1 if any test fails.
set -u

if [ $# -ne 1 ] || [ ! -x "$1/airlock" ]; then
	echo "usage: $0 BUILD" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd -P)
AIRLOCK=$BUILD/airlock
SHIM=$BUILD/airlock-preload.so
HERE=$(cd "$(dirname "$0")" && pwd)
LOGQ="$HERE/../run/logq.py"
CTLCLIENT="$HERE/../run/ctlclient.py"
PY=/usr/bin/python3

. "$HERE/../lib/tap.sh"
pass() { tap_ok "$1"; }
fail() { tap_not_ok "$@"; }

# The tests below, by name: each is skipped with the reason when podman cannot run here.
TESTS=(
	"image: built from the host's files, the shim's ENV line in its config"
	"container: cat /secret/.env denied (EACCES), the secret not in the output"
	"container: cat /etc/hostname allowed (the container's hostname read)"
	"container: an ask answered deny on the host's control socket: the connect refused"
	"container: an ask answered allow on the host's control socket: the connect goes through"
	"logged on the host: the .env read denied, with the cat's pid in the container as ns_pid"
	"logged on the host: the exec of cat /etc/hostname allowed, pid and ns_pid differ"
	"logged on the host: the connect denied by a human"
	"logged on the host: the connect allowed by a human"
	"every line has the serve session's id"
	"without the shim (LD_PRELOAD empty): the container reads the secret (the denial was the shim's)"
	"without -v DIR:DIR: the shim fails closed (exec denied, 126), says why once, nothing logged"
	"the log is valid JSON, session_end last"
)
skip_all() {
	echo "# SKIP: no container test ran: $1"
	for t in "${TESTS[@]}"; do tap_skip "$t" "$1"; done
	tap_plan_end tests
	exit 0
}

[ "$(id -u)" = 0 ] || skip_all "not root (rootful podman with scratch storage needs root)"
command -v podman >/dev/null 2>&1 || skip_all "podman is not installed (scripts/deps.sh installs it)"
[ -x "$PY" ] || skip_all "no $PY on the host to copy into the image"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/airlock-ctr.XXXXXX")
TMP=$(cd "$TMP" && pwd -P)
SERVE_PID="" CTL_PID=""
# podman with everything it keeps in TMP: storage (vfs), run state, events (a file), its tmpdir
POD0=(podman --root "$TMP/pod/root" --runroot "$TMP/pod/run" --tmpdir "$TMP/pod/tmp"
	--storage-driver vfs --cgroup-manager cgroupfs --events-backend file)
POD=("${POD0[@]}")
# rlimits at most the host's: podman's defaults (nofile, nproc 1048576 and up) are above this
# machine's hard limits, which root without CAP_SYS_RESOURCE cannot raise (crun and runc say
# "setrlimit ... Operation not permitted").  Root's own processes are not held to nproc.
RUNOPTS=(--rm --pull=never --network=none --hostname airlock-ctr --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
CGP=/airlock-test-${TMP##*/}
IMAGE=localhost/airlock-ctr-test:latest
cleanup() {
	for p in $SERVE_PID $CTL_PID; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	"${POD[@]}" rm -a -f >/dev/null 2>&1
	# anything podman left mounted under TMP (shm, the run state), deepest first
	awk -v t="$TMP/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	# runc's cgroups (v1, cgroupfs) under the test's own parent, in every hierarchy
	for d in /sys/fs/cgroup/*"$CGP"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
export HOME="$TMP/home" LC_ALL=C
# no registry is ever asked: an empty registries.conf, an empty policy for images
export CONTAINERS_REGISTRIES_CONF="$TMP/pod/registries.conf" CONTAINERS_CONF="$TMP/pod/containers.conf"
unset XDG_CONFIG_HOME LD_PRELOAD AIRLOCK_DIR XDG_RUNTIME_DIR
W="$TMP/ws" L="$TMP/audit.jsonl" D="$TMP/join"
mkdir -p "$HOME" "$W" "$TMP/secret" "$TMP/pod/root" "$TMP/pod/run" "$TMP/pod/tmp" "$TMP/ctx"
: >"$CONTAINERS_REGISTRIES_CONF"
printf '[engine]\nevents_logger = "file"\ncgroup_manager = "cgroupfs"\n' >"$CONTAINERS_CONF"
echo "SECRET=ctr-7f3a9c" >"$TMP/secret/.env"

# ---- can podman start a container here at all? (a one-file image: a static binary) --------------
cat >"$TMP/ctx/true.c" <<'C'
int main(void) { return 0; }
C
if ! gcc -static -O2 -o "$TMP/ctx/true" "$TMP/ctx/true.c" 2>"$TMP/probe.err"; then
	skip_all "gcc -static cannot build the probe: $(head -n 1 "$TMP/probe.err")"
fi
tar -C "$TMP/ctx" -cf "$TMP/probe.tar" true
if ! "${POD[@]}" import "$TMP/probe.tar" localhost/airlock-ctr-probe:latest >"$TMP/probe.out" 2>"$TMP/probe.err"; then
	skip_all "podman import fails here: $(tail -n 1 "$TMP/probe.err")"
fi
# crun without cgroups first; crun refuses a hybrid cgroup hierarchy ("cgroups in hybrid mode not
# supported"), where runc with cgroupfs (v1) works, and runc cannot run without cgroups
why=""
for rt in "crun --cgroups=disabled" "runc --cgroup-parent=$CGP"; do
	set -- $rt
	command -v "$1" >/dev/null 2>&1 || { why="$why; $1: not installed"; continue; }
	if "${POD0[@]}" --runtime "$1" run "${RUNOPTS[@]}" "$2" localhost/airlock-ctr-probe:latest /true \
		>"$TMP/probe.out" 2>"$TMP/probe.err"; then
		POD=("${POD0[@]}" --runtime "$1")
		RUNOPTS+=("$2")
		why=""
		break
	fi
	why="$why; $1: $(grep -v '^$' "$TMP/probe.err" | tail -n 1)"
done
[ -z "$why" ] || skip_all "podman run cannot start a container here:${why#;}"
echo "# podman $(podman --version | awk '{print $3}'), runtime ${POD[*]: -1}, ${RUNOPTS[*]: -1}"

# ---- the session -------------------------------------------------------------------------------
(cd "$W" && exec "$AIRLOCK" serve --headless --log "$L" --dir "$D" </dev/null >"$TMP/serve.out" 2>"$TMP/serve.err") &
SERVE_PID=$!
for _ in $(seq 100); do "$AIRLOCK" env --serve "$D" --format dockerfile >"$TMP/envline" 2>"$TMP/env.err" && break; sleep 0.1; done
if ! grep -q "^ENV LD_PRELOAD=\"$SHIM\" AIRLOCK_DIR=\"$D\"\$" "$TMP/envline"; then
	fail "airlock env --format dockerfile: the ENV line" "$(cat "$TMP/envline" "$TMP/env.err" "$TMP/serve.err")"
	tap_plan_end tests
	exit 1
fi
SESSION=$(readlink "$D")
SESSION=${SESSION##*/}

# ---- the image: sh, cat, python3 (and the modules the probe imports), the shim at its host path --
cat >"$TMP/ctx/probe.py" <<'PY'
# probe.py: two listeners on the container's own loopback, a connect to each (each one an ask)
import errno, os, select, socket, sys
for name in ("deny", "allow"):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    c = socket.socket()
    try:
        c.connect(("127.0.0.1", port))
        r, _, _ = select.select([srv], [], [], 2)
        print("%s port=%d connected accepted=%d" % (name, port, 1 if r else 0))
    except OSError as e:
        print("%s port=%d refused errno %d" % (name, port, e.errno))
    sys.stdout.flush()
PY
SHIM=$SHIM "$PY" -S - >"$TMP/files" <<'PY'
# the files the image needs: each program, its libraries (ldd), the python modules the probe
# imports, every symlink on the way kept as a link (/lib -> usr/lib in a merged /usr)
import os, subprocess, sys, errno, select, socket
want = ["/usr/bin/sh", "/usr/bin/cat", "/usr/bin/python3", os.environ.get("SHIM", ""),
        "/etc/ld.so.cache", "/bin", "/lib", "/lib64", "/sbin",
        os.path.join(sys.prefix, "lib", "python%d.%d" % sys.version_info[:2], "lib-dynload")]
for prog in list(want[:4]):
    out = subprocess.run(["ldd", prog], capture_output=True, text=True).stdout
    for line in out.splitlines():
        for w in line.split():
            if w.startswith("/"):
                want.append(w)
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None)
    if f:
        want.append(f)
enc = os.path.dirname(sys.modules["encodings"].__file__)
want += [os.path.join(enc, n) for n in os.listdir(enc) if n.endswith(".py")]
seen = set()
def add(p):
    if not p or not os.path.lexists(p):
        return
    # the directory resolved, the last component as it is: a link stays a link
    p = os.path.join(os.path.realpath(os.path.dirname(p)), os.path.basename(p))
    if p in seen:
        return
    seen.add(p)
    if os.path.islink(p):
        t = os.readlink(p)
        add(t if t.startswith("/") else os.path.join(os.path.dirname(p), t))
for p in want:
    add(p)
for p in sorted(seen):
    print(p.lstrip("/"))
PY
tar -C / -cf "$TMP/ctx/rootfs.tar" --no-recursion -T "$TMP/files" 2>"$TMP/tar.err"
tar -C "$TMP/ctx" -rf "$TMP/ctx/rootfs.tar" probe.py
{
	echo "FROM scratch"
	echo "ADD rootfs.tar /"
	cat "$TMP/envline"
} >"$TMP/ctx/Containerfile"
if "${POD[@]}" build --pull=never --isolation chroot -q -f "$TMP/ctx/Containerfile" -t "$IMAGE" "$TMP/ctx" >"$TMP/build.out" 2>&1 &&
	"${POD[@]}" image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$IMAGE" >"$TMP/imgenv" 2>&1 &&
	grep -qx "LD_PRELOAD=$SHIM" "$TMP/imgenv" && grep -qx "AIRLOCK_DIR=$D" "$TMP/imgenv"; then
	pass "${TESTS[0]} ($(wc -l <"$TMP/files") files)"
else
	fail "${TESTS[0]}" "$(tail -n 5 "$TMP/build.out")" "$(cat "$TMP/imgenv" 2>/dev/null)" "$(cat "$TMP/tar.err")"
	tap_plan_end tests
	exit 1
fi

# ---- the container, its asks answered on the host's control socket --------------------------------
mkdir -p "$TMP/ctl"
ln -s "$(dirname "$(readlink "$D")")/$SESSION.control" "$TMP/ctl/$SESSION.control"
python3 "$CTLCLIENT" "$TMP/ctl" attach,ask:deny,ask:allow "$TMP/ctl.out" 120 2>"$TMP/ctl.err" &
CTL_PID=$!
for _ in $(seq 100); do grep -q '"attached": 1' "$TMP/ctl.out" 2>/dev/null && break; sleep 0.05; done
CMD='cat /secret/.env & echo catpid=$!; wait $!; echo cat=$?; cat /etc/hostname; echo; echo pid1=$$; python3 -S /probe.py'
"${POD[@]}" run "${RUNOPTS[@]}" -v "$D:$D" -v "$TMP/secret:/secret:ro" "$IMAGE" sh -c "$CMD" \
	>"$TMP/ctr.out" 2>"$TMP/ctr.err"
if grep -qx "cat=1" "$TMP/ctr.out" && grep -q "/secret/.env: Permission denied" "$TMP/ctr.err" &&
	! grep -q "ctr-7f3a9c" "$TMP/ctr.out" "$TMP/ctr.err"; then
	pass "${TESTS[1]}"
else
	fail "${TESTS[1]}" "$(cat "$TMP/ctr.out" "$TMP/ctr.err")"
fi
if grep -q "^airlock-ctr" "$TMP/ctr.out"; then pass "${TESTS[2]}"; else fail "${TESTS[2]}" "$(cat "$TMP/ctr.out" "$TMP/ctr.err")"; fi
DPORT=$(sed -n 's/^deny port=\([0-9]*\) .*/\1/p' "$TMP/ctr.out")
APORT=$(sed -n 's/^allow port=\([0-9]*\) .*/\1/p' "$TMP/ctr.out")
if grep -q "^deny port=[0-9]* refused errno 111\$" "$TMP/ctr.out"; then
	pass "${TESTS[3]}"
else
	fail "${TESTS[3]}" "$(cat "$TMP/ctr.out" "$TMP/ctl.out" "$TMP/ctl.err")"
fi
if grep -q "^allow port=[0-9]* connected accepted=1\$" "$TMP/ctr.out"; then
	pass "${TESTS[4]}"
else
	fail "${TESTS[4]}" "$(cat "$TMP/ctr.out" "$TMP/ctl.out" "$TMP/ctl.err")"
fi

# ---- what the host's log has of it -------------------------------------------------------------
CATPID=$(sed -n 's/^catpid=//p' "$TMP/ctr.out")
# pidpair COND...: "PID NS_PID" of the first line matching, when both are there and differ
pidpair() {
	python3 "$LOGQ" "$L" find --wait 3 "$@" 2>/dev/null | python3 -c '
import json, sys
o = json.loads(sys.stdin.read() or "{}")
p, n = o.get("pid"), o.get("ns_pid")
print("%s %s" % (p, n) if isinstance(p, int) and isinstance(n, int) and p != n and p > 1 else "")'
}
pp=$(pidpair source=shim decision=deny file=/secret/.env action=read "rule~:")
if [ -n "$CATPID" ] && [ "${pp#* }" = "$CATPID" ]; then
	pass "${TESTS[5]} ($CATPID; the host's pid ${pp% *})"
else
	fail "${TESTS[5]}" "catpid '$CATPID', pid/ns_pid '$pp'" "$(tail -n 5 "$L")"
fi
pp=$(pidpair source=shim decision=allow "command\$/cat" "args~/etc/hostname")
if [ -n "$pp" ]; then pass "${TESTS[6]} ($pp)"; else fail "${TESTS[6]}" "$(tail -n 8 "$L")"; fi
if [ -n "$DPORT" ] && pidpair source=shim "network_dst=127.0.0.1:$DPORT" decision=deny decided_by=human | grep -q .; then
	pass "${TESTS[7]}"
else
	fail "${TESTS[7]}" "port '$DPORT'" "$(tail -n 5 "$L")"
fi
if [ -n "$APORT" ] && pidpair source=shim "network_dst=127.0.0.1:$APORT" decision=allow decided_by=human | grep -q .; then
	pass "${TESTS[8]}"
else
	fail "${TESTS[8]}" "port '$APORT'" "$(tail -n 5 "$L")"
fi
sids=$(python3 -c 'import json,sys; print(len({json.loads(l)["session_id"] for l in open(sys.argv[1]) if l.strip()}))' "$L")
if [ "$sids" = 1 ]; then pass "${TESTS[9]}"; else fail "${TESTS[9]}" "$sids ids"; fi

# ---- the controls: without the shim the secret is readable; without the mount, fail closed ---------
"${POD[@]}" run "${RUNOPTS[@]}" --env LD_PRELOAD= -v "$TMP/secret:/secret:ro" "$IMAGE" sh -c 'cat /secret/.env' \
	>"$TMP/bare.out" 2>&1
if grep -qx "SECRET=ctr-7f3a9c" "$TMP/bare.out"; then pass "${TESTS[10]}"; else fail "${TESTS[10]}" "$(cat "$TMP/bare.out")"; fi
before=$(wc -l <"$L")
"${POD[@]}" run "${RUNOPTS[@]}" -v "$TMP/secret:/secret:ro" "$IMAGE" sh -c 'cat /etc/hostname; echo rc=$?; cat /secret/.env' \
	>"$TMP/nomount.out" 2>"$TMP/nomount.err"
said=$(grep -c "airlock-preload: no policy at AIRLOCK_DIR=$D" "$TMP/nomount.err")
sleep 0.5
after=$(wc -l <"$L")
if grep -qx "rc=126" "$TMP/nomount.out" && ! grep -q "airlock-ctr\|ctr-7f3a9c" "$TMP/nomount.out" &&
	[ "$said" = 1 ] && [ "$before" = "$after" ]; then
	pass "${TESTS[11]}"
else
	fail "${TESTS[11]}" "said $said times, log $before -> $after lines" "$(cat "$TMP/nomount.out" "$TMP/nomount.err")"
fi

# ---- the end -----------------------------------------------------------------------------------
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
SERVE_PID=""
wait "$CTL_PID" 2>/dev/null
CTL_PID=""
if python3 "$LOGQ" "$L" valid >"$TMP/valid.out" 2>&1 &&
	[ "$(tail -n 1 "$L" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("event"))')" = session_end ]; then
	pass "${TESTS[12]}"
else
	fail "${TESTS[12]}" "$(cat "$TMP/valid.out")" "$(tail -n 2 "$L")"
fi

tap_plan_end tests
