/* default_text.c — the built-in default policy's text, embedded by default_policy.S. */
#include "policy/policy.h"

/* policy/default_policy.S embeds default_policy.yaml between these symbols. */
extern const char airlock_default_policy_start[] __attribute__((visibility("hidden")));
extern const char airlock_default_policy_end[] __attribute__((visibility("hidden")));

const char *policy_default_text(size_t *len)
{
	*len = (size_t)(airlock_default_policy_end - airlock_default_policy_start);
	return airlock_default_policy_start;
}
