/*
 * vterm.h — the agent's output as the approval TUI keeps it: a small terminal
 * emulator that turns the bytes a program writes to its terminal into lines
 * of printable character cells, with a scrollback.
 *
 * What it interprets (the names are ECMA-48's; xterm's "ctlseqs" document
 * the same): printable characters in the locale's encoding (LC_CTYPE as set
 * when the bytes are fed, decoded with mbrtowc(3); a character split across
 * feeds is joined; wcwidth(3) gives its cells, a wide one takes two); LF, VT
 * and FF start a new line; CR goes to column 0; BS one column back (not past
 * 0); TAB to the next multiple of 8 (not past the last column); CSI K erases
 * in the line (0: from the cursor to the end, 1: from the start to the cursor,
 * 2: all of it); CSI G (column, 1-based), CSI C and CSI D (forward, back; not
 * past either edge); CSI ? 1 h / l (DECCKM: whether arrows go back as ESC O x).
 * Only the first parameter counts; an absent or zero one counts as the
 * default, a huge one as 65535 (a move then stops at the line's edge).
 * Control characters inside a CSI sequence act as outside it.
 *
 * What it drops: every other CSI sequence (SGR colours and attributes, cursor
 * up/down, erase in display...), OSC strings (ended by BEL or ST), DCS, SOS,
 * PM and APC strings (ended by ST; CAN or SUB cancel any of them), ESC and one
 * further byte (two for ESC with an intermediate byte: charset designations),
 * the other C0 controls (BEL...), and C1 controls decoded from the locale's
 * encoding.  An undecodable byte shows as '?'; a control character cancels a
 * character half decoded.
 *
 * The model has no rows and no cursor up: a new line is always added at the
 * end, lines wrap at the width (vterm_resize) as a terminal's would, and the
 * oldest line is dropped past max_lines.  Lines already made are not wrapped
 * again after a resize.  Every cell is a printable character or L' ', so the
 * lines can be shown on a terminal as they are: nothing the agent writes can
 * drive the user's terminal through them.
 */
#ifndef AIRLOCK_VTERM_H
#define AIRLOCK_VTERM_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#define VTERM_LINE_MAX 1024 /* cells in one line: the width is capped at this */
#define VTERM_COLS 80       /* the width before the first vterm_resize(), or after a size <= 0 */

struct vterm;

/* A new, empty model keeping at most max_lines lines (> 0).  NULL when out of memory. */
struct vterm *vterm_new(size_t max_lines);

/* Frees vt and its lines.  Accepts NULL. */
void vterm_free(struct vterm *vt);

/*
 * Interprets n bytes the program wrote (see above).  A sequence or a character may be split
 * across calls at any byte.  Out of memory, a character that needs a line to grow is dropped.
 */
void vterm_feed(struct vterm *vt, const void *buf, size_t n);

/*
 * The width lines wrap at from now on: cols columns, VTERM_COLS when cols <= 0, at most
 * VTERM_LINE_MAX.  The terminal's height does not matter to the model.
 */
void vterm_resize(struct vterm *vt, int cols);

/* How many lines are kept (at most max_lines). */
size_t vterm_lines(const struct vterm *vt);

/*
 * Line i (0: the oldest kept, vterm_lines() - 1: the one the cursor is on): its cells, *len of
 * them.  A cell is a printable character, L' ', or L'\0' for the right half of the wide
 * character before it.  Borrowed: valid until the next vterm_feed() or vterm_free().
 */
const wchar_t *vterm_line(const struct vterm *vt, size_t i, int *len);

/*
 * Line i as text in the locale's encoding, into buf (cap bytes, NUL-terminated): the right
 * halves of wide characters left out, a cell that cannot be encoded as '?', trailing spaces
 * dropped.  A line that does not fit is cut (at a character, with MB_LEN_MAX + 2 bytes to
 * spare).  Returns the length, without the NUL.
 */
size_t vterm_line_text(const struct vterm *vt, size_t i, char *buf, size_t cap);

/* Whether the program asked for application cursor keys (DECCKM): arrows as ESC O x, not ESC [ x. */
bool vterm_app_cursor(const struct vterm *vt);

/*
 * The viewer's scroll: how many of the last lines are below its view (0: the view follows
 * the end).  While it is above 0, each new line adds one, so the view stays on the same lines
 * (once the model is full, only while it is below max_lines - 1).  vterm_set_scroll() takes
 * any value: a negative one is taken as 0; one past the lines there are is the viewer's to clamp.
 */
long vterm_scroll(const struct vterm *vt);
void vterm_set_scroll(struct vterm *vt, long lines);

#endif
