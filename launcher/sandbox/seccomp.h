/* seccomp.h — the sandbox's seccomp filter, as named syscall groups. */
#ifndef AIRLOCK_SANDBOX_SECCOMP_H
#define AIRLOCK_SANDBOX_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

struct seccomp_options {
	bool process_spawn; /* false: fork, vfork, non-thread clone fail with EPERM, clone3 with ENOSYS */
};

/*
 * Builds the filter with libseccomp and returns a file descriptor holding
 * its BPF program (for bwrap --seccomp FD; not close-on-exec, offset 0), or
 * -errno with a message in err.
 */
int seccomp_filter_fd(const struct seccomp_options *opt, char *err, size_t errlen);

/* The names of the groups the filter refuses, e.g. "ptrace", "mount", NULL-terminated. */
const char *const *seccomp_group_names(void);

#endif
