/* fuzz_regex.c — libFuzzer target for policy/regex.c: compile and match, validate raw programs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/regex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t prog[REGEX_MAX_PROGRAM];
	static char pattern[4096];
	const uint8_t *nul = memchr(data, 0, size);
	size_t plen = nul ? (size_t)(nul - data) : size;
	const char *text = nul ? (const char *)nul + 1 : "";
	size_t textlen = nul ? size - plen - 1 : 0;

	if (plen < sizeof pattern) {
		memcpy(pattern, data, plen);
		pattern[plen] = '\0';
		size_t len = 0, need = 0;
		char msg[128];
		int rc = regex_compile(pattern, prog, sizeof prog, &len, msg, sizeof msg);
		if (regex_compile(pattern, NULL, 0, &need, NULL, 0) != rc)
			abort();
		if (rc == 0) {
			if (need != len || regex_validate(prog, len) != 0)
				abort();
			(void)regex_match(prog, len, text, textlen);
		}
	}
	if (regex_validate(data, size) == 0)
		(void)regex_match(data, size, (const char *)data, size);
	return 0;
}
