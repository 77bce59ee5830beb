/* termtext.c — text from the sandbox escaped for a terminal (see termtext.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/termtext.h"
#include "core/utf8.h"

/*
 * Code points shown as nothing, or that reorder what is shown: bidi controls,
 * Default_Ignorable_Code_Point (Unicode 15 DerivedCoreProperties.txt), the
 * line and paragraph separators, the interlinear annotation controls.  Sorted.
 */
static const struct {
	uint32_t lo, hi;
} invisible[] = {
	{ 0x00AD, 0x00AD },   { 0x034F, 0x034F },   { 0x061C, 0x061C },   { 0x115F, 0x1160 },
	{ 0x17B4, 0x17B5 },   { 0x180B, 0x180F },   { 0x200B, 0x200F },   { 0x2028, 0x202E },
	{ 0x2060, 0x206F },   { 0x3164, 0x3164 },   { 0xFE00, 0xFE0F },   { 0xFEFF, 0xFEFF },
	{ 0xFFA0, 0xFFA0 },   { 0xFFF0, 0xFFFB },   { 0x1BCA0, 0x1BCA3 }, { 0x1D173, 0x1D17A },
	{ 0xE0000, 0xE0FFF },
};

static bool is_invisible(uint32_t cp)
{
	size_t lo = 0, hi = sizeof invisible / sizeof invisible[0];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cp < invisible[mid].lo)
			hi = mid;
		else if (cp > invisible[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* The code point of the valid UTF-8 sequence at s, len bytes (utf8_seq()). */
static uint32_t decode(const unsigned char *s, size_t len)
{
	static const unsigned char lead_mask[5] = { 0, 0x7F, 0x1F, 0x0F, 0x07 };
	uint32_t cp = s[0] & lead_mask[len];
	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3F);
	return cp;
}

size_t termtext_unit(const char *s, size_t n, char esc[TERMTEXT_ESC_MAX])
{
	const unsigned char *u = (const unsigned char *)s;
	long len = utf8_seq(u, n);
	esc[0] = '\0';
	if (len < 0) { /* not UTF-8: this byte alone; the next is looked at again */
		snprintf(esc, TERMTEXT_ESC_MAX, "\\x%02x", u[0]);
		return 1;
	}
	if (len == 1) {
		if (u[0] == '\n')
			memcpy(esc, "\\n", 3);
		else if (u[0] == '\t')
			memcpy(esc, "\\t", 3);
		else if (u[0] == '\r')
			memcpy(esc, "\\r", 3);
		else if (u[0] < 0x20 || u[0] == 0x7f)
			snprintf(esc, TERMTEXT_ESC_MAX, "\\x%02x", u[0]);
		return 1;
	}
	uint32_t cp = decode(u, (size_t)len);
	if (cp >= 0x80 && cp <= 0x9F)
		snprintf(esc, TERMTEXT_ESC_MAX, "\\x%02x\\x%02x", u[0], u[1]);
	else if (is_invisible(cp))
		snprintf(esc, TERMTEXT_ESC_MAX, cp > 0xFFFF ? "\\U%08x" : "\\u%04x", (unsigned)cp);
	return (size_t)len;
}

static size_t hex_run(const char *s, size_t n, size_t want)
{
	size_t i = 0;
	while (i < want && i < n && s[i] && strchr("0123456789abcdefABCDEF", s[i]))
		i++;
	return i;
}

size_t termtext_escape_len(const char *s, size_t n)
{
	if (n < 2 || s[0] != '\\')
		return 0;
	size_t digits;
	switch (s[1]) {
	case 'n': case 't': case 'r': case '\\': case '\'':
		return 2;
	case 'x': digits = 2; break;
	case 'u': digits = 4; break;
	case 'U': digits = 8; break;
	default: return 0;
	}
	return hex_run(s + 2, n - 2, digits) == digits ? 2 + digits : 0;
}

void termtext_put_text(FILE *f, const char *s)
{
	char esc[TERMTEXT_ESC_MAX];
	size_t n = s ? strlen(s) : 0;
	while (n > 0) {
		size_t k = termtext_unit(s, n, esc);
		if (esc[0])
			fputs(esc, f);
		else
			fwrite(s, 1, k, f);
		s += k;
		n -= k;
	}
}

/* True when s reads the same to sh without quotes. */
static bool plain_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_@%+=:,./-", *s)))
			return false;
	return true;
}

/* True when some unit of s (n bytes) is escaped. */
static bool has_escape(const char *s, size_t n)
{
	char esc[TERMTEXT_ESC_MAX];
	for (size_t k; n > 0; s += k, n -= k)
		if ((k = termtext_unit(s, n, esc)), esc[0])
			return true;
	return false;
}

void termtext_put_word(FILE *f, const char *s)
{
	char esc[TERMTEXT_ESC_MAX];
	size_t n;
	if (!s)
		s = "";
	n = strlen(s);
	if (plain_word(s)) {
		fputs(s, f);
		return;
	}
	if (!has_escape(s, n)) {
		fputc('\'', f);
		for (; *s; s++)
			if (*s == '\'')
				fputs("'\\''", f);
			else
				fputc(*s, f);
		fputc('\'', f);
		return;
	}
	fputs("$'", f);
	for (size_t k; n > 0; s += k, n -= k) {
		k = termtext_unit(s, n, esc);
		if (esc[0])
			fputs(esc, f);
		else if (*s == '\'' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else
			fwrite(s, 1, k, f);
	}
	fputc('\'', f);
}

char *termtext_text(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	if (!s)
		return NULL;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	termtext_put_text(f, s);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}
