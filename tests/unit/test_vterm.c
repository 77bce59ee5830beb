/* test_vterm.c — table-driven unit tests for launcher/approvals/vterm.c: the agent's output fed as bytes, read back as lines. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "launcher/approvals/vterm.h"

/* Whether a UTF-8 locale could be set (main): rows that need one are skipped without it. */
static bool have_utf8;

/* ---- helpers -------------------------------------------------------------------------- */

static void feed(struct vterm *vt, const char *s)
{
	vterm_feed(vt, s, strlen(s));
}

/* Every line's text (vterm_line_text), joined with '\n', into out. */
static void screen_text(const struct vterm *vt, char *out, size_t cap)
{
	size_t k = 0;
	out[0] = '\0';
	for (size_t i = 0; i < vterm_lines(vt); i++) {
		char line[4 * VTERM_LINE_MAX + 16];
		size_t n = vterm_line_text(vt, i, line, sizeof line);
		assert_true(k + n + 2 < cap);
		if (i > 0)
			out[k++] = '\n';
		memcpy(out + k, line, n + 1);
		k += n;
	}
}

/* The last line's length in cells. */
static int last_len(const struct vterm *vt)
{
	int len = 0;
	if (vterm_lines(vt) > 0)
		(void)vterm_line(vt, vterm_lines(vt) - 1, &len);
	return len;
}

/* ---- the table ------------------------------------------------------------------------ */

/* One step: a resize to cols (when cols != 0), or bytes fed (as one vterm_feed()). */
struct step {
	int cols;
	const char *bytes;
};

struct row {
	const char *name;
	struct step steps[8];
	const char *want; /* the lines' text joined with '\n' */
	int nlines;       /* how many lines there are */
	int len;          /* the last line's cells, trailing spaces included; -1: not checked */
	bool utf8;        /* needs a UTF-8 locale (else "C") */
	size_t max;       /* the model's max_lines; 0: 100 */
	int line;
};

#define F(b) { 0, b }
#define R(c) { c, NULL }
#define ROW(name, want, nlines, ...) { name, { __VA_ARGS__ }, want, nlines, -1, false, 0, __LINE__ }
#define ROWU(name, want, nlines, ...) { name, { __VA_ARGS__ }, want, nlines, -1, true, 0, __LINE__ }
#define ROWL(name, want, nlines, len, ...) { name, { __VA_ARGS__ }, want, nlines, len, false, 0, __LINE__ }

static const struct row rows[] = {
	/* printable text */
	ROW("nothing fed: no line", "", 0, F("")),
	ROW("plain text", "hello, world", 1, F("hello, world")),
	ROW("several feeds join", "abcdef", 1, F("ab"), F("cd"), F("ef")),
	ROWL("a trailing space is a cell", "ab", 1, 3, F("ab ")),

	/* wrapping */
	ROW("wraps at the width", "abcde\nfgh", 2, R(5), F("abcdefgh")),
	ROW("a full line wraps only at the next character", "abcde", 1, R(5), F("abcde")),
	ROW("CR on a full line stays on it", "Xbcde", 1, R(5), F("abcde\rX")),
	ROW("twice the width: three lines", "ab\ncd\ne", 3, R(2), F("abcde")),

	/* CR, LF, VT, FF */
	ROW("CR LF", "one\ntwo", 2, F("one\r\ntwo")),
	ROW("LF alone starts a line at column 0", "one\ntwo", 2, F("one\ntwo")),
	ROW("VT and FF as LF", "a\nb\nc", 3, F("a\vb\fc")),
	ROW("a final LF makes an empty line", "a\n", 2, F("a\n")),
	ROW("a LF before any text makes the first line", "b", 1, F("\nb")),
	ROW("CR overwrites", "Jello", 1, F("hello\rJ")),
	ROW("CR then erase: a progress line", "done", 1, F("50%\r\033[Kdone")),

	/* backspace */
	ROW("BS moves back one column", "aX", 1, F("ab\bX")),
	ROW("BS not past column 0", "A", 1, F("\b\bA")),
	ROWL("BS does not erase", "ab", 1, 2, F("ab\b")),

	/* tabs */
	ROW("TAB to the next multiple of 8", "a       b", 1, F("a\tb")),
	ROW("TAB at column 0", "        x", 1, F("\tx")),
	ROW("TAB at a stop goes to the next", "abcdefgh        i", 1, F("abcdefgh\ti")),
	ROW("TAB not past the last column", "abcdefgh X", 1, R(10), F("abcdefgh\tX")),

	/* CSI cursor moves */
	ROW("CSI G: column", "abXdef", 1, F("abcdef\033[3GX")),
	ROW("CSI G: no parameter, column 1", "Xbc", 1, F("abc\033[GX")),
	ROW("CSI G: 0 as 1", "Xbc", 1, F("abc\033[0GX")),
	ROW("CSI G: not past the last column", "abc      X", 1, R(10), F("abc\033[99GX")),
	ROW("CSI C: forward", "ab   X", 1, F("ab\033[3CX")),
	ROW("CSI C: no parameter, one", "a X", 1, F("a\033[CX")),
	ROW("CSI C: not past the last column", "a        X", 1, R(10), F("a\033[100CX")),
	ROW("CSI D: back", "abXd", 1, F("abcd\033[2DX")),
	ROW("CSI D: no parameter, one", "aX", 1, F("ab\033[DX")),
	ROW("CSI D: not past column 0", "Xb", 1, F("ab\033[9DX")),
	ROW("only the first parameter counts", "aXc", 1, F("abc\033[2;5GX")),
	ROW("cursor up and down are dropped", "abc", 1, F("a\033[2Ab\033[Bc")),

	/* huge parameters saturate: no overflow, no wrapping round to a small number */
	ROW("CSI C: 20 digits, to the last column", "a        X", 1, R(10), F("a\033[99999999999999999999CX")),
	ROW("CSI C: 2^32 + 1, to the last column", "a        X", 1, R(10), F("a\033[4294967297CX")),
	ROW("CSI G: 2^31, the last column", "abc      X", 1, R(10), F("abc\033[2147483648GX")),
	ROW("CSI D: 2^32 + 1, to column 0", "Xbc", 1, F("abc\033[4294967297DX")),
	ROW("more digits than are kept", "a        X", 1, R(10),
	    F("a\033[1234567890123456789012345678901234567890CX")),
	ROW("CSI K: a huge parameter erases nothing", "abc", 1, F("abc\033[2D\033[4294967296K")),
	ROW("a huge negative parameter as the default", "aX", 1, F("ab\033[-99999999999999999999DX")),

	/* erase in line */
	ROW("CSI K: from the cursor to the end", "ab", 1, F("abcdef\033[3G\033[K")),
	ROW("CSI 0 K: the same", "ab", 1, F("abcdef\033[3G\033[0K")),
	ROW("CSI 1 K: from the start to the cursor", "   def", 1, F("abcdef\033[4G\033[1K")),
	ROW("CSI 2 K: the whole line, the cursor kept", "   x", 1, F("abc\033[2Kx")),
	ROW("CSI K with no line yet", "", 0, F("\033[K")),
	ROW("erase in display is dropped", "ab", 1, F("a\033[2Jb")),

	/* SGR and other sequences: dropped */
	ROW("SGR colours dropped", "red plain", 1, F("\033[1;31mred\033[0m plain")),
	ROW("private modes dropped", "ab", 1, F("a\033[?25lb\033[?1049h")),
	ROW("OSC ended by BEL", "text", 1, F("\033]0;a title\007text")),
	ROW("OSC ended by ST", "x", 1, F("\033]0;t\033\\x")),
	ROW("DCS ended by ST", "y", 1, F("\033Pq#0;2;0;0;0\033\\y")),
	ROW("APC and PM ended by ST", "ab", 1, F("\033_apc\033\\a\033^pm\033\\b")),
	ROW("CAN ends a string", "z", 1, F("\033]abc\030z")),
	ROW("SUB ends a string", "z", 1, F("\033Pabc\032z")),
	ROW("a string's text is not shown, LF included", "ab", 1, F("a\033]x\ny\007b")),
	ROW("two-byte escapes dropped", "a", 1, F("\0337a\0338")),
	ROW("charset designation: three bytes dropped", "ok", 1, F("\033(Bok")),
	ROW("ESC inside CSI starts again", "ab", 1, F("a\033[1\033[mb")),
	ROW("a control inside CSI acts", "Zb", 1, F("ab\033[\rmZ")),
	ROW("a byte over 0x7e inside CSI ends it", "ab", 1, F("a\033[\x80" "b")),

	/* other controls */
	ROW("BEL and other C0 dropped", "abc", 1, F("a\007b\001c")),
	ROW("DEL dropped", "ab", 1, F("a\177b")),

	/* UTF-8 */
	ROWU("UTF-8 text", "caf\xc3\xa9", 1, F("caf\xc3\xa9")),
	ROWU("a character split across feeds", "caf\xc3\xa9!", 1, F("caf\xc3"), F("\xa9!")),
	ROWU("three bytes in three feeds", "\xe2\x82\xac", 1, F("\xe2"), F("\x82"), F("\xac")),
	ROWU("a wide character takes two cells", "a\xe4\xb8\xad" "b", 1, F("a\xe4\xb8\xad" "b")),
	ROWU("a wide character wraps whole", "a\n\xe4\xb8\xad", 2, R(2), F("a\xe4\xb8\xad")),
	ROWU("a wide character filling the line", "a\xe4\xb8\xad\nb", 2, R(3), F("a\xe4\xb8\xad" "b")),
	ROWU("combining marks dropped", "e", 1, F("e\xcc\x81")),
	ROWU("C1 controls dropped", "ab", 1, F("a\xc2\x9b" "b")),
	ROWU("a control cancels a half character", "a\n?", 2, F("a\xc3\n\xa9")),

	/* invalid bytes */
	ROWU("an invalid byte shows as ?", "a?b", 1, F("a\xff" "b")),
	ROWU("a lone continuation byte as ?", "?", 1, F("\x80")),
	ROWU("a raw 8-bit CSI is not one", "?[31mx", 1, F("\x9b[31mx")),
	ROW("C locale: a byte over 0x7f as ?", "caf??", 1, F("caf\xc3\xa9")),

	/* sequences split across feeds */
	ROW("CSI split at every byte", "x", 1, F("\033"), F("["), F("3"), F("1"), F("m"), F("x")),
	ROW("CSI split in its parameter", "Xb", 1, F("ab\033["), F("2D"), F("X")),
	ROW("OSC split", "ok", 1, F("\033]0;ti"), F("tle\007ok")),
	ROW("ST split after its ESC", "y", 1, F("\033]x\033"), F("\\y")),

	/* resize */
	ROW("a narrower width applies to what comes", "abcdef\ngh", 2, F("abcdef"), R(3), F("gh")),
	ROW("lines made are not wrapped again", "abcdef", 1, R(3), F("abc"), R(80), F("def")),
};

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *r = &rows[i];
		if (r->utf8 && !have_utf8)
			continue;
		setlocale(LC_CTYPE, r->utf8 ? "C.UTF-8" : "C");
		struct vterm *vt = vterm_new(r->max ? r->max : 100);
		assert_non_null(vt);
		for (size_t s = 0; s < sizeof r->steps / sizeof r->steps[0]; s++) {
			if (r->steps[s].cols)
				vterm_resize(vt, r->steps[s].cols);
			else if (r->steps[s].bytes)
				feed(vt, r->steps[s].bytes);
		}
		char got[8192];
		screen_text(vt, got, sizeof got);
		if (strcmp(got, r->want) != 0 || (int)vterm_lines(vt) != r->nlines ||
		    (r->len >= 0 && last_len(vt) != r->len))
			fail_msg("line %d, %s: got \"%s\" in %zu line(s), last %d cells; want \"%s\" in %d",
				 r->line, r->name, got, vterm_lines(vt), last_len(vt), r->want, r->nlines);
		vterm_free(vt);
	}
}

/* ---- what the table cannot say -------------------------------------------------------- */

/* The 80th column is the last one by default, and after a width <= 0: CSI 200 G puts X there. */
static void test_default_width(void **state)
{
	(void)state;
	setlocale(LC_CTYPE, "C");
	struct vterm *vt = vterm_new(10);
	feed(vt, "a\033[200GX");
	assert_int_equal(last_len(vt), VTERM_COLS);
	vterm_resize(vt, 0);
	feed(vt, "\nb\033[300GY");
	assert_int_equal(last_len(vt), VTERM_COLS);
	vterm_free(vt);
}

/* The width is capped at VTERM_LINE_MAX: a longer line wraps there. */
static void test_width_cap(void **state)
{
	(void)state;
	setlocale(LC_CTYPE, "C");
	struct vterm *vt = vterm_new(10);
	vterm_resize(vt, 5000);
	char buf[VTERM_LINE_MAX + 100];
	memset(buf, 'x', sizeof buf);
	vterm_feed(vt, buf, sizeof buf);
	assert_int_equal(vterm_lines(vt), 2);
	int len;
	(void)vterm_line(vt, 0, &len);
	assert_int_equal(len, VTERM_LINE_MAX);
	assert_int_equal(last_len(vt), 100);
	vterm_free(vt);
}

/* Past max_lines the oldest lines go. */
static void test_max_lines(void **state)
{
	(void)state;
	setlocale(LC_CTYPE, "C");
	struct vterm *vt = vterm_new(3);
	feed(vt, "1\n2\n3\n4\n5");
	char got[64];
	screen_text(vt, got, sizeof got);
	assert_string_equal(got, "3\n4\n5");
	for (int i = 0; i < 1000; i++)
		feed(vt, "line\n");
	assert_int_equal(vterm_lines(vt), 3);
	vterm_free(vt);
}

/* A wide character's right half is L'\0' in the cells, and left out of the text. */
static void test_wide_cells(void **state)
{
	(void)state;
	if (!have_utf8)
		skip();
	setlocale(LC_CTYPE, "C.UTF-8");
	struct vterm *vt = vterm_new(10);
	feed(vt, "\xe4\xb8\xad" "a");
	int len;
	const wchar_t *c = vterm_line(vt, 0, &len);
	assert_int_equal(len, 3);
	assert_int_equal(c[0], 0x4e2d);
	assert_int_equal(c[1], L'\0');
	assert_int_equal(c[2], L'a');
	vterm_free(vt);
}

/* vterm_line_text cuts a line that does not fit, at a character, and NUL-terminates. */
static void test_line_text_cut(void **state)
{
	(void)state;
	setlocale(LC_CTYPE, "C");
	struct vterm *vt = vterm_new(10);
	feed(vt, "abcdefghijklmnopqrstuvwxyz0123456789");
	char buf[40];
	size_t n = vterm_line_text(vt, 0, buf, sizeof buf);
	assert_true(n + MB_LEN_MAX + 1 <= sizeof buf);
	assert_int_equal(strlen(buf), n);
	assert_memory_equal(buf, "abcdefghijklmnopqrstuvwxyz0123456789", n);
	vterm_free(vt);
}

/* DECCKM: CSI ? 1 h sets application cursor keys, CSI ? 1 l clears them; without '?' neither. */
static void test_app_cursor(void **state)
{
	(void)state;
	struct vterm *vt = vterm_new(10);
	assert_false(vterm_app_cursor(vt));
	feed(vt, "\033[?1h");
	assert_true(vterm_app_cursor(vt));
	feed(vt, "\033[1l\033[?2l");
	assert_true(vterm_app_cursor(vt));
	feed(vt, "\033[?1");
	feed(vt, "l");
	assert_false(vterm_app_cursor(vt));
	assert_int_equal(vterm_lines(vt), 0);
	vterm_free(vt);
}

/* The viewer's scroll holds its lines while new ones come, up to max_lines - 1 once full. */
static void test_scroll(void **state)
{
	(void)state;
	struct vterm *vt = vterm_new(4);
	vterm_set_scroll(vt, -3);
	assert_int_equal(vterm_scroll(vt), 0);
	feed(vt, "a\nb\n");
	assert_int_equal(vterm_scroll(vt), 0); /* following the end */
	vterm_set_scroll(vt, 1);
	feed(vt, "c\n");
	assert_int_equal(vterm_scroll(vt), 2);
	feed(vt, "d");        /* no new line */
	assert_int_equal(vterm_scroll(vt), 2);
	feed(vt, "\n");       /* full: the oldest goes, the view still moves */
	assert_int_equal(vterm_scroll(vt), 3);
	feed(vt, "\n\n");     /* at max_lines - 1 it stays */
	assert_int_equal(vterm_scroll(vt), 3);
	vterm_set_scroll(vt, 0);
	feed(vt, "\n");
	assert_int_equal(vterm_scroll(vt), 0);
	vterm_free(vt);
}

/* Any bytes at all: no crash, every cell printable (run under ASan/UBSan by make check-asan). */
static void test_noise(void **state)
{
	(void)state;
	static const char *const locales[] = { "C", "C.UTF-8" };
	for (size_t l = 0; l < 2; l++) {
		if (l == 1 && !have_utf8)
			break;
		setlocale(LC_CTYPE, locales[l]);
		struct vterm *vt = vterm_new(50);
		uint32_t x = 12345;
		unsigned char buf[997];
		for (int round = 0; round < 200; round++) {
			vterm_resize(vt, (int)(x % 300) - 20);
			for (size_t i = 0; i < sizeof buf; i++) {
				x = x * 1103515245u + 12345u;
				buf[i] = (unsigned char)(x >> 16);
			}
			vterm_feed(vt, buf, (size_t)(x % sizeof buf));
		}
		for (size_t i = 0; i < vterm_lines(vt); i++) {
			int len;
			const wchar_t *c = vterm_line(vt, i, &len);
			assert_true(len <= VTERM_LINE_MAX);
			for (int k = 0; k < len; k++)
				assert_true(c[k] == L'\0' || (c[k] >= 0x20 && c[k] != 0x7f && (c[k] < 0x80 || c[k] >= 0xa0)));
		}
		vterm_free(vt);
	}
}

int main(void)
{
	have_utf8 = setlocale(LC_CTYPE, "C.UTF-8") != NULL;
	if (!have_utf8)
		fprintf(stderr, "# no C.UTF-8 locale: the UTF-8 cases are skipped\n");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_default_width),
		cmocka_unit_test(test_width_cap),
		cmocka_unit_test(test_max_lines),
		cmocka_unit_test(test_wide_cells),
		cmocka_unit_test(test_line_text_cut),
		cmocka_unit_test(test_app_cursor),
		cmocka_unit_test(test_scroll),
		cmocka_unit_test(test_noise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
