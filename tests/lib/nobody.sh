# nobody.sh — the second user the run and proxy suites run airlock as: nobody, through setpriv.

# nobody_setup: whether the cases can run as nobody here.  Needs BUILD (absolute, holding airlock
# and airlock-preload.so) and T (the scratch root, 0755).  Sets NOBODY_SKIP to why they cannot
# (not root, no setpriv, no user nobody), or to "" when they can; then AIRLOCK is BUILD/airlock,
# or a copy of airlock and the shim (found next to the executable) in $T/build when nobody
# cannot run the build where it is (said in a TAP comment).
nobody_setup()
{
	AIRLOCK=$BUILD/airlock
	NOBODY_SKIP=""
	if [ "$(id -u)" != 0 ]; then
		NOBODY_SKIP="not root: cannot switch to nobody (the suite already runs unprivileged)"
	elif ! command -v setpriv >/dev/null 2>&1; then
		NOBODY_SKIP="no setpriv (util-linux)"
	elif ! getent passwd nobody >/dev/null 2>&1; then
		NOBODY_SKIP="no user nobody"
	elif ! setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups \
		sh -c 'test -x "$1/airlock" && test -r "$1/airlock-preload.so" && test -x "$1/airlock-landlock"' sh "$BUILD" 2>/dev/null; then
		mkdir -p "$T/build"
		cp "$BUILD/airlock" "$BUILD/airlock-preload.so" "$BUILD/airlock-landlock" "$T/build/"
		chmod 755 "$T/build" "$T/build/airlock" "$T/build/airlock-landlock"
		chmod 644 "$T/build/airlock-preload.so"
		AIRLOCK=$T/build/airlock
		echo "# nobody cannot read $BUILD: using a copy in $T/build"
	fi
}
