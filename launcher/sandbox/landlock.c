/* landlock.c — the Landlock ABI this kernel gives the sandbox's ruleset (landlock.h). */
#include <errno.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "launcher/sandbox/landlock.h"

int landlock_abi(char *why, size_t whylen)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi >= LANDLOCK_ABI_MIN)
		return abi > LANDLOCK_ABI_KNOWN ? LANDLOCK_ABI_KNOWN : (int)abi;
	if (abi == 1)
		snprintf(why, whylen, "the kernel's Landlock ABI 1 would refuse every rename across "
				      "directories (no REFER right; Linux >= 5.19 has it)");
	else if (errno == EOPNOTSUPP)
		snprintf(why, whylen, "built into the kernel but not enabled (lsm= boot parameter)");
	else
		snprintf(why, whylen, "not in this kernel (%s; Linux >= 5.19 with "
				      "CONFIG_SECURITY_LANDLOCK=y)", strerror(errno));
	return 0;
}
