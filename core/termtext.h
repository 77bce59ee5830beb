/*
 * termtext.h — text from the sandbox made safe to show on a human's terminal:
 * the one escaping that `airlock log`, the approval TUI (its panel and its
 * activity stream) and the one-line prompt share, so that a request cannot
 * look like another one (`rm -rf <U+202E>/ fdp.txt` showing as "rm -rf
 * txt.pdf /") nor drive the terminal.
 *
 * Text is taken as UTF-8 (the audit log and the control protocol are) whatever
 * the locale.  What is escaped, unit by unit (termtext_unit()):
 *
 *   - bytes that are not UTF-8 (RFC 3629: overlongs, surrogates, above
 *     U+10FFFF, stray continuation bytes, raw 0x80-0xFF) as \xNN, one a byte;
 *   - C0 controls and DEL: \n, \t, \r, else \xNN (ESC is \x1b);
 *   - C1 controls U+0080-U+009F, which some terminals obey as CSI and its
 *     kin: their UTF-8 bytes as \xc2\xNN;
 *   - code points a terminal shows as nothing or that reorder what is shown:
 *     the bidi controls (UAX #9 section 2: U+061C, U+200E/F, U+202A-U+202E,
 *     U+2066-U+2069; CVE-2021-42574), every Default_Ignorable_Code_Point of
 *     Unicode 15 (DerivedCoreProperties.txt: the soft hyphen U+00AD, U+034F,
 *     the Hangul fillers U+115F/U+1160/U+3164/U+FFA0, U+17B4/5,
 *     U+180B-U+180F, zero-width U+200B-U+200D, U+2060-U+206F, the variation
 *     selectors U+FE00-U+FE0F and U+E0100-U+E01EF, U+FEFF, U+FFF0-U+FFF8,
 *     U+1BCA0-U+1BCA3, U+1D173-U+1D17A, the tags U+E0000-U+E007F and the rest
 *     of U+E0000-U+E0FFF), the line and paragraph separators U+2028/U+2029
 *     and the interlinear annotation controls U+FFF9-U+FFFB: as \uXXXX, or
 *     \UXXXXXXXX above U+FFFF.
 *
 * Each escape is one bash $'...' reads back to the same bytes (bash(1),
 * QUOTING; \u and \U in a UTF-8 locale).  Everything else, letters of any
 * script included (é, 日本), is left as it is.
 */
#ifndef AIRLOCK_CORE_TERMTEXT_H
#define AIRLOCK_CORE_TERMTEXT_H

#include <stddef.h>
#include <stdio.h>

/* Bytes of the longest escape of one unit, its NUL included ("\U000e0001"). */
#define TERMTEXT_ESC_MAX 12

/*
 * The unit at s (n > 0 bytes left): a whole UTF-8 sequence, or one byte that
 * is not part of one.  Returns its length in bytes (1 to 4).  When it must be
 * escaped (see the top) its escape is written to esc, NUL-terminated;
 * otherwise esc[0] is '\0' and the unit's bytes are shown as they are.
 */
size_t termtext_unit(const char *s, size_t n, char esc[TERMTEXT_ESC_MAX]);

/*
 * The length of the escape that starts at s (n bytes left) as this file
 * writes them — \xNN, \uXXXX, \UXXXXXXXX, \n, \t, \r, and the \\ and \'
 * of a $'...' word — or 0 when s starts none.  For a display that cuts or
 * wraps escaped text: an escape is kept whole.
 */
size_t termtext_escape_len(const char *s, size_t n);

/* Writes s (NUL-terminated; NULL: nothing) to f as free text: the units of the top escaped, the rest as it is. */
void termtext_put_text(FILE *f, const char *s);

/*
 * Writes s (NUL-terminated; NULL as "") to f as one word a POSIX shell reads
 * back to s: bare when it holds only [A-Za-z0-9_@%+=:,./-] (and is not
 * empty), '...' when it holds no unit to escape (a quote as '\''), else
 * bash's $'...' with the escapes of the top and \\ and \'.  The argv of an
 * exec is shown as these words, one space between them, as `airlock log`,
 * the TUI and the prompt do.
 */
void termtext_put_word(FILE *f, const char *s);

/* s (NUL-terminated) as free text (termtext_put_text()), malloc'ed; NULL when out of memory or s is NULL. */
char *termtext_text(const char *s);

#endif
