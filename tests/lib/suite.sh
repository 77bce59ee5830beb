# suite.sh — the head of the suites that test a build (run, proxy, tui): their one argument, BUILD_DIR.

# suite_build_dir NEEDS ARG...: the suite's arguments (ARG...) must be one directory, holding the
# executable NEEDS unless NEEDS is ""; otherwise prints the usage line and exits 2.  Sets BUILD
# to that directory, absolute, and ROOT to the source tree (every suite lives in tests/NAME/).
suite_build_dir()
{
	_suite_needs=$1
	shift
	if [ $# -ne 1 ] || [ ! -d "$1" ] || { [ -n "$_suite_needs" ] && [ ! -x "$1/$_suite_needs" ]; }; then
		if [ -n "$_suite_needs" ]; then
			echo "usage: $0 BUILD_DIR   (BUILD_DIR/$_suite_needs must exist)" >&2
		else
			echo "usage: $0 BUILD_DIR" >&2
		fi
		exit 2
	fi
	BUILD=$(cd "$1" && pwd -P)
	ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
}
