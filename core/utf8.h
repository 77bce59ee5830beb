/*
 * utf8.h — UTF-8 as JSON needs it: the length of each sequence, invalid ones
 * found (RFC 3629), header-only so every part may use it without linking
 * anything (the TUI links no library).  json-c copies bytes >= 0x80 through
 * unchecked, and a line holding invalid UTF-8 is not JSON (RFC 8259 section
 * 8.1): the audit log and the control socket replace each maximal invalid
 * subpart with U+FFFD.
 */
#ifndef AIRLOCK_CORE_UTF8_H
#define AIRLOCK_CORE_UTF8_H

#include <stddef.h>

/* U+FFFD REPLACEMENT CHARACTER in UTF-8. */
#define UTF8_REPLACEMENT "\xEF\xBF\xBD"

/*
 * The UTF-8 sequence at s (n > 0 bytes left): its length when valid
 * (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF), else
 * minus the length of its maximal valid prefix (at least 1), which is what
 * one U+FFFD replaces (Unicode 15 section 3.9, "U+FFFD Substitution of
 * Maximal Subparts"; the WHATWG decoder does the same).
 */
static inline long utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
	size_t len, i;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		lo = c == 0xE0 ? 0xA0 : lo; /* overlong */
		hi = c == 0xED ? 0x9F : hi; /* surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		lo = c == 0xF0 ? 0x90 : lo; /* overlong */
		hi = c == 0xF4 ? 0x8F : hi; /* above U+10FFFF */
	} else
		return -1;
	if (n < 2 || s[1] < lo || s[1] > hi)
		return -1;
	for (i = 2; i < len && i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return -(long)i;
	return i == len ? (long)len : -(long)i;
}

/*
 * The bytes the JSON text of the sequence at s (len bytes, valid, from
 * utf8_seq()) takes in a json-c string: a quote or backslash 2, the controls
 * json-c names (\b \f \n \r \t) 2, other controls and DEL 6 (\u00XX),
 * anything else its own length.
 */
static inline size_t utf8_json_cost(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	if (len > 1)
		return len;
	if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
		return 2;
	return c < 0x20 || c == 0x7f ? 6 : 1;
}

#endif
