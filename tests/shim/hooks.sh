# hooks.sh — the shim's hook list (preload/hooks.def) against its wrappers and its exported symbols.
#
# Sourced by tests/shim/run.sh (group "hooks").  The wrappers' prototypes are checked by the
# compiler (shim.h declares each one from hooks.def); this checks the names: that the list,
# the SHIM_EXPORT definitions in preload/*.c and `nm -D --defined-only` of the built shim
# name the same functions.  The only other exports are the shim's own airlock_shim_*
# functions (timings for `make bench`).  HOOKS_SRC overrides the source tree (default: the
# checkout this file is in), to see the checks fail on a changed copy.

HOOKS_SRC=${HOOKS_SRC:-$(cd "$HERE/../.." && pwd -P)}

# The names of hooks.def, in file order, one a line.
hooks_listed() { sed -n 's/^HOOK([^,]*, *\([A-Za-z_0-9]*\),.*/\1/p' "$HOOKS_SRC/preload/hooks.def"; }

# The functions preload/*.c define as SHIM_EXPORT, one a line (with repeats).
hooks_defined()
{
	sed -n '/;[[:space:]]*$/!s/^SHIM_EXPORT [^(]*[ *]\([A-Za-z_0-9]*\)(.*/\1/p' "$HOOKS_SRC"/preload/*.c
}

# set_diff A B: the lines of file A not in file B (both sorted), as one line.
set_diff() { comm -23 "$1" "$2" | tr '\n' ' '; }

hooks_group()
{
	hl=$T/hooks.listed hd=$T/hooks.defined hx=$T/hooks.exported hown=$T/hooks.own
	hooks_listed >"$hl.all"
	sort -u "$hl.all" >"$hl"
	hooks_defined | sort >"$hd.all"
	sort -u "$hd.all" >"$hd"
	grep '^airlock_shim_' "$hd" >"$hown"
	RC=0 OUT="" ERR=""

	check "hooks: hooks.def lists $(wc -l <"$hl") functions, each once"
	[ -s "$hl" ] || _fail "no HOOK(...) line found in $HOOKS_SRC/preload/hooks.def"
	dup=$(sort "$hl.all" | uniq -d | tr '\n' ' ')
	[ -z "$dup" ] || _fail "listed more than once: $dup"
	done_check

	check "hooks: each hooks.def function has one SHIM_EXPORT wrapper in preload/*.c, and no other is exported but airlock_shim_*"
	miss=$(set_diff "$hl" "$hd")
	[ -z "$miss" ] || _fail "in hooks.def, no wrapper: $miss"
	dup=$(uniq -d "$hd.all" | tr '\n' ' ')
	[ -z "$dup" ] || _fail "defined more than once: $dup"
	extra=$(cat "$hl" "$hown" | sort | comm -23 "$hd" - | tr '\n' ' ')
	[ -z "$extra" ] || _fail "exported wrappers missing from hooks.def: $extra"
	done_check

	if ! command -v nm >/dev/null 2>&1; then
		tap_skip "hooks: the shim's exported symbols: nm (binutils) is not installed"
		return
	fi
	if ! nm -D --defined-only "$SHIM" >"$hx.nm" 2>"$T/nm.err"; then
		tap_not_ok "hooks: nm -D --defined-only $SHIM" "$(cat "$T/nm.err")"
		return
	fi
	check "hooks: the shim exports exactly the hooks.def functions and airlock_shim_* (nm -D --defined-only)"
	awk 'NF >= 3 { print $3 }' "$hx.nm" | sed 's/@.*//' | sort -u >"$hx"
	cat "$hl" "$hown" | sort -u >"$hx.want"
	miss=$(set_diff "$hx.want" "$hx")
	[ -z "$miss" ] || _fail "not exported: $miss"
	extra=$(set_diff "$hx" "$hx.want")
	[ -z "$extra" ] || _fail "exported, not in hooks.def: $extra"
	notfn=$(awk 'NF >= 3 && $2 != "T" { print $3 }' "$hx.nm" | tr '\n' ' ')
	[ -z "$notfn" ] || _fail "exported, not as functions (T): $notfn"
	done_check
}
