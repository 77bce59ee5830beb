/* vterm.c — the agent's output as lines of printable cells: the escape-sequence parser and the line model (see vterm.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "launcher/approvals/vterm.h"

struct line {
	wchar_t *c; /* cells; L'\0' is the right half of a wide character */
	int len;
	size_t cap;
};

/* Where the parser is: outside sequences, after ESC, in a CSI sequence, in a string... */
enum esc_state { ESC_NONE, ESC_ESC, ESC_CSI, ESC_OSC, ESC_STR, ESC_STR_ESC, ESC_ONE };

struct vterm {
	struct line *lines; /* owned: a ring of max lines */
	size_t max, n, first;
	int cx;             /* the cursor's column on the last line */
	int cols;           /* the width lines wrap at */
	long scroll;        /* the viewer's: lines below its view */
	bool app_cursor;    /* DECCKM */
	enum esc_state esc;
	char csi[32];       /* a CSI sequence's parameter and intermediate bytes, cut to fit */
	size_t csilen;
	mbstate_t mb;
};

struct vterm *vterm_new(size_t max_lines)
{
	struct vterm *vt = calloc(1, sizeof *vt);
	if (!vt)
		return NULL;
	vt->lines = calloc(max_lines, sizeof *vt->lines);
	if (!vt->lines) {
		free(vt);
		return NULL;
	}
	vt->max = max_lines;
	vt->cols = VTERM_COLS;
	return vt;
}

void vterm_free(struct vterm *vt)
{
	if (!vt)
		return;
	for (size_t i = 0; i < vt->max; i++)
		free(vt->lines[i].c);
	free(vt->lines);
	free(vt);
}

void vterm_resize(struct vterm *vt, int cols)
{
	int w = cols > 0 ? cols : VTERM_COLS;
	vt->cols = w > VTERM_LINE_MAX ? VTERM_LINE_MAX : w;
}

size_t vterm_lines(const struct vterm *vt)
{
	return vt->n;
}

const wchar_t *vterm_line(const struct vterm *vt, size_t i, int *len)
{
	const struct line *l = &vt->lines[(vt->first + i) % vt->max];
	*len = l->len;
	return l->c;
}

size_t vterm_line_text(const struct vterm *vt, size_t i, char *buf, size_t cap)
{
	int len;
	const wchar_t *c = vterm_line(vt, i, &len);
	size_t k = 0;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	for (int j = 0; j < len && k + MB_LEN_MAX + 1 < cap; j++) {
		if (c[j] == L'\0')
			continue; /* the right half of a wide character */
		size_t m = wcrtomb(buf + k, c[j], &st);
		if (m == (size_t)-1) {
			buf[k++] = '?';
			memset(&st, 0, sizeof st);
		} else {
			k += m;
		}
	}
	while (k > 0 && buf[k - 1] == ' ')
		k--;
	if (cap > 0)
		buf[k] = '\0';
	return k;
}

bool vterm_app_cursor(const struct vterm *vt)
{
	return vt->app_cursor;
}

long vterm_scroll(const struct vterm *vt)
{
	return vt->scroll;
}

void vterm_set_scroll(struct vterm *vt, long lines)
{
	vt->scroll = lines > 0 ? lines : 0;
}

/* ---- the line model ------------------------------------------------------------------- */

static struct line *cur_line(struct vterm *vt)
{
	return vt->n ? &vt->lines[(vt->first + vt->n - 1) % vt->max] : NULL;
}

static void new_line(struct vterm *vt)
{
	struct line *l;
	if (vt->n < vt->max) {
		l = &vt->lines[(vt->first + vt->n) % vt->max];
		vt->n++;
		if (vt->scroll > 0)
			vt->scroll++;
	} else {
		l = &vt->lines[vt->first];
		vt->first = (vt->first + 1) % vt->max;
		if (vt->scroll > 0 && vt->scroll < (long)vt->max - 1)
			vt->scroll++;
	}
	l->len = 0;
	vt->cx = 0;
}

/* Puts wc at the cursor, padding with spaces; wide characters take two cells. */
static void put(struct vterm *vt, wchar_t wc)
{
	int w = wcwidth(wc);
	if (w <= 0) /* combining marks and unprintables: dropped */
		return;
	if (vt->cx + w > vt->cols)
		new_line(vt);
	struct line *l = cur_line(vt);
	if (!l) {
		new_line(vt);
		l = cur_line(vt);
	}
	size_t need = (size_t)vt->cx + (size_t)w;
	if (need > l->cap) {
		wchar_t *c = grow_array(l->c, &l->cap, need, sizeof *c, 128);
		if (!c)
			return;
		l->c = c;
	}
	while (l->len < vt->cx)
		l->c[l->len++] = L' ';
	l->c[vt->cx] = wc;
	if (w == 2)
		l->c[vt->cx + 1] = L'\0';
	vt->cx += w;
	if (vt->cx > l->len)
		l->len = vt->cx;
}

static void control(struct vterm *vt, unsigned char c)
{
	switch (c) {
	case '\n':
	case '\v':
	case '\f':
		new_line(vt);
		break;
	case '\r':
		vt->cx = 0;
		break;
	case '\b':
		if (vt->cx > 0)
			vt->cx--;
		break;
	case '\t': {
		int to = (vt->cx / 8 + 1) * 8;
		if (to >= vt->cols)
			to = vt->cols - 1;
		while (vt->cx < to)
			put(vt, L' ');
		break;
	}
	default: /* BEL and the rest: nothing to show */
		break;
	}
}

/* ---- escape sequences ----------------------------------------------------------------- */

static void erase_in_line(struct vterm *vt, int n)
{
	struct line *l = cur_line(vt);
	if (!l)
		return;
	if (n == 0 && l->len > vt->cx)
		l->len = vt->cx;
	else if (n == 1)
		for (int i = 0; i < vt->cx && i < l->len; i++)
			l->c[i] = L' ';
	else if (n == 2)
		l->len = 0;
}

/*
 * The first parameter of the CSI sequence (after a private marker '?'), 0 when absent.  A huge
 * one saturates at +-PARAM_MAX (atoi's overflow is undefined, and wrapped 2^32 + 1 to 1).
 */
#define PARAM_MAX 65535
static int first_param(const struct vterm *vt)
{
	bool priv = vt->csilen > 0 && vt->csi[0] == '?';
	long n = strtol(vt->csi + (priv ? 1 : 0), NULL, 10);
	return n > PARAM_MAX ? PARAM_MAX : n < -PARAM_MAX ? -PARAM_MAX : (int)n;
}

static void csi_dispatch(struct vterm *vt, unsigned char final)
{
	bool priv = vt->csilen > 0 && vt->csi[0] == '?';
	int n = first_param(vt);
	switch (final) {
	case 'K':
		erase_in_line(vt, n);
		break;
	case 'G': /* cursor horizontal absolute */
		vt->cx = n > 1 ? n - 1 : 0;
		if (vt->cx >= vt->cols)
			vt->cx = vt->cols - 1;
		break;
	case 'C': /* forward */
		vt->cx += n > 0 ? n : 1;
		if (vt->cx >= vt->cols)
			vt->cx = vt->cols - 1;
		break;
	case 'D': /* back */
		vt->cx -= n > 0 ? n : 1;
		if (vt->cx < 0)
			vt->cx = 0;
		break;
	case 'h':
	case 'l':
		if (priv && n == 1)
			vt->app_cursor = final == 'h';
		break;
	default:
		break;
	}
}

/* A byte outside any sequence: ESC, a control character, or (part of) a character. */
static void feed_ground(struct vterm *vt, unsigned char c)
{
	if (c == 0x1b) {
		vt->esc = ESC_ESC;
		return;
	}
	if (c < 0x20 || c == 0x7f) {
		memset(&vt->mb, 0, sizeof vt->mb);
		control(vt, c);
		return;
	}
	wchar_t wc;
	size_t r = mbrtowc(&wc, (const char *)&c, 1, &vt->mb);
	if (r == (size_t)-2)
		return;
	if (r == (size_t)-1) {
		memset(&vt->mb, 0, sizeof vt->mb);
		wc = L'?';
	}
	if (wc >= 0x80 && wc < 0xa0)
		return; /* C1 controls */
	put(vt, wc);
}

/* The byte after ESC: which sequence this is. */
static void feed_esc(struct vterm *vt, unsigned char c)
{
	if (c == '[') {
		vt->esc = ESC_CSI;
		vt->csilen = 0;
		vt->csi[0] = '\0';
	} else if (c == ']') {
		vt->esc = ESC_OSC;
	} else if (c == 'P' || c == 'X' || c == '^' || c == '_') {
		vt->esc = ESC_STR;
	} else if (c >= 0x20 && c <= 0x2f) {
		vt->esc = ESC_ONE; /* charset designations and the like: one more byte */
	} else {
		vt->esc = ESC_NONE; /* a two-byte sequence: dropped */
	}
}

/* A byte of a CSI sequence: a parameter or intermediate byte, the final byte, or a control. */
static void feed_csi(struct vterm *vt, unsigned char c)
{
	if (c >= 0x40 && c <= 0x7e) {
		csi_dispatch(vt, c);
		vt->esc = ESC_NONE;
	} else if (c >= 0x20 && c <= 0x3f) {
		if (vt->csilen + 1 < sizeof vt->csi) {
			vt->csi[vt->csilen++] = (char)c;
			vt->csi[vt->csilen] = '\0';
		}
	} else if (c == 0x1b) {
		vt->esc = ESC_ESC;
	} else if (c < 0x20) {
		control(vt, c);
	} else {
		vt->esc = ESC_NONE;
	}
}

/* A byte of an OSC, DCS, SOS, PM or APC string: only its end matters. */
static void feed_string(struct vterm *vt, unsigned char c)
{
	if (c == 0x07 && vt->esc == ESC_OSC)
		vt->esc = ESC_NONE;
	else if (c == 0x1b)
		vt->esc = ESC_STR_ESC;
	else if (c == 0x18 || c == 0x1a)
		vt->esc = ESC_NONE; /* CAN, SUB */
}

void vterm_feed(struct vterm *vt, const void *buf, size_t n)
{
	const unsigned char *b = buf;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = b[i];
		switch (vt->esc) {
		case ESC_NONE:
			feed_ground(vt, c);
			break;
		case ESC_ESC:
			feed_esc(vt, c);
			break;
		case ESC_CSI:
			feed_csi(vt, c);
			break;
		case ESC_OSC:
		case ESC_STR:
			feed_string(vt, c);
			break;
		case ESC_STR_ESC:
			vt->esc = c == '\\' ? ESC_NONE : ESC_STR;
			break;
		case ESC_ONE:
			vt->esc = ESC_NONE;
			break;
		}
	}
}
