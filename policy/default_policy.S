/* default_policy.S — embeds policy/default_policy.yaml, the built-in default policy, in .rodata. */

/*
 * airlock_default_policy_start .. airlock_default_policy_end delimit the YAML
 * text (not NUL-terminated); policy_default_text() returns it.  The path is
 * relative to the repository root, where the Makefile runs the compiler.
 */
	.section .rodata
	.balign 8
	.globl airlock_default_policy_start
	.type airlock_default_policy_start, @object
airlock_default_policy_start:
	.incbin "policy/default_policy.yaml"
	.globl airlock_default_policy_end
	.type airlock_default_policy_end, @object
airlock_default_policy_end:
	.byte 0
	.size airlock_default_policy_start, airlock_default_policy_end - airlock_default_policy_start
	.size airlock_default_policy_end, 1

	.section .note.GNU-stack,"",@progbits
