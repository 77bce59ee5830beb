/* sniff.c — what the egress proxy's three first-bytes parsers share: result names, host name checks. */
#include "proxy/sniff.h"

#include <stdbool.h>

#include "proxy/sniff_name.h"

const char *sniff_result_name(enum sniff_result r)
{
	static const char *const names[SNIFF_RESULT_MAX] = {
		[SNIFF_NEED_MORE] = "need-more", [SNIFF_OK] = "ok",
		[SNIFF_NONE] = "none",           [SNIFF_BAD] = "bad",
		[SNIFF_TOO_LARGE] = "too-large",
	};
	return (unsigned)r < SNIFF_RESULT_MAX ? names[r] : "?";
}

/* RFC 1123 §2.1 host name characters, and '_' (found in real names, SRV-style labels). */
static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.';
}

const char *sniff_copy_name(const char *s, size_t n, char out[SNIFF_HOST_MAX])
{
	if (n > 1 && s[n - 1] == '.')
		n--;
	if (n == 0)
		return "empty host name";
	if (n > 253)
		return "host name longer than 253 characters";
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		if (!name_char(s[i]))
			return "bad character in host name";
		if (s[i] != '.') {
			if (++label > 63)
				return "host name label longer than 63 characters";
		} else if (label == 0) {
			return "empty label in host name";
		} else {
			label = 0;
		}
		out[i] = sniff_lower(s[i]);
	}
	if (label == 0)
		return "empty label in host name";
	out[n] = '\0';
	return NULL;
}
