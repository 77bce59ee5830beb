/* pattern.h — syntax checks for rule patterns, shared by the YAML loader and the compiler. */
#ifndef AIRLOCK_POLICY_PATTERN_H
#define AIRLOCK_POLICY_PATTERN_H

#include <stddef.h>

#include "policy/policy.h"

/*
 * Each function checks one field of a rule as written in the policy, under the
 * rule's `match:` mode, and returns 0, or -EINVAL with a one-line message in
 * msg (msglen bytes) saying what is wrong, e.g. "unterminated '[' in glob".
 * The message names no position: the caller adds file:line:column.
 */
int pattern_check_command(const char *command, enum policy_match m, char *msg, size_t msglen);
int pattern_check_args(const char *args, enum policy_match m, char *msg, size_t msglen);
int pattern_check_path(const char *path, enum policy_match m, char *msg, size_t msglen);
int pattern_check_destination(const char *destination, enum policy_match m, char *msg,
			      size_t msglen);

#endif
