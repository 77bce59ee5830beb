/*
 * landlock.h — whether this kernel gives airlock's Landlock layer.  The
 * ruleset itself is applied inside the sandbox by the static helper
 * landlock/airlock-landlock.c, which bubblewrap runs just before the agent
 * (sandbox.c puts it on the command line); this header is shared with it.
 * Source of the rules below: the kernel's Documentation/userspace-api/landlock.rst.
 */
#ifndef AIRLOCK_SANDBOX_LANDLOCK_H
#define AIRLOCK_SANDBOX_LANDLOCK_H

#include <stddef.h>

/* The highest Landlock ABI whose rights the helper knows; a newer kernel gets this one's. */
#define LANDLOCK_ABI_KNOWN 7

/*
 * The lowest ABI airlock applies: ABI 1 (Linux 5.13 to 5.18) has no
 * LANDLOCK_ACCESS_FS_REFER, so under it every rename or link across
 * directories fails with EXDEV whatever the rules allow, which breaks git
 * and mv in the workspace, that the mounts allow.
 */
#define LANDLOCK_ABI_MIN 2

/*
 * The Landlock ABI the sandbox's ruleset applies on this kernel: the one
 * landlock_create_ruleset(2) with LANDLOCK_CREATE_RULESET_VERSION reports,
 * capped at LANDLOCK_ABI_KNOWN.  Returns it (>= LANDLOCK_ABI_MIN), or 0
 * with why there is none in why (whylen bytes, NUL-terminated): "not
 * enabled in this kernel (lsm= boot parameter)" for EOPNOTSUPP, "ABI 1 ..."
 * for ABI 1, else the syscall's error (ENOSYS: a kernel without it).
 */
int landlock_abi(char *why, size_t whylen);

#endif
