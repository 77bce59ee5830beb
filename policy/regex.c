/* regex.c — POSIX EREs: compiler to pointer-free bytecode, validator, and in-place Pike VM matcher. */
#include "policy/regex.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * Program layout (all integers little-endian, no alignment):
 *   header  'R' 'X' version(1) flags(0) u16 total_length u16 instruction_count
 *   code    instructions back to back; execution starts right after the header.
 * Instructions (opcode byte, then operands):
 *   MATCH  BOL  EOL  ANY              no operand
 *   BYTE   c                          one byte
 *   SET    bitmap[32]                 bit (c & 7) of bitmap[c >> 3]
 *   JMP    s16 rel                    rel is from the start of the JMP
 *   SPLIT  s16 rel1  s16 rel2         both relative to the start of the SPLIT
 * Relative jumps keep compiled fragments position independent, so the compiler
 * can move and duplicate them freely.
 */
enum {
	OP_MATCH = 1,
	OP_BYTE,
	OP_ANY,
	OP_SET,
	OP_JMP,
	OP_SPLIT,
	OP_BOL,
	OP_EOL,
};

#define HDR_SIZE 8u
#define VERSION 1u
#define SET_SIZE 33u
#define MAX_BOUND 255u
#define BOUND_INF 0xffffffffu
#define MAX_DEPTH 256

static size_t op_size(uint8_t op)
{
	switch (op) {
	case OP_MATCH:
	case OP_ANY:
	case OP_BOL:
	case OP_EOL:
		return 1;
	case OP_BYTE:
		return 2;
	case OP_SET:
		return SET_SIZE;
	case OP_JMP:
		return 3;
	case OP_SPLIT:
		return 5;
	default:
		return 0;
	}
}

static unsigned rd16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static void wr16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Target of the relative operand at p for the instruction starting at pc; may be out of range. */
static long rel_target(size_t pc, const uint8_t *p)
{
	long r = (long)rd16(p);
	if (r >= 0x8000)
		r -= 0x10000;
	return (long)pc + r;
}

/* ---- compiler ------------------------------------------------------------------- */

struct cc {
	const char *pat;
	size_t i;
	size_t n;
	size_t ninsns;
	int depth;
	char *msg;
	size_t msglen;
	uint8_t code[REGEX_MAX_PROGRAM];
	uint8_t scratch[REGEX_MAX_PROGRAM];
};

__attribute__((format(printf, 3, 4))) static int fail(struct cc *c, int err, const char *fmt, ...)
{
	if (c->msg && c->msglen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->msg, c->msglen, fmt, ap);
		va_end(ap);
	}
	return err;
}

static int too_big(struct cc *c)
{
	return fail(c, -E2BIG, "regex too large: program exceeds %u bytes or %u instructions",
		    REGEX_MAX_PROGRAM, REGEX_MAX_INSNS);
}

static const char *show_byte(char buf[8], uint8_t b)
{
	if (b >= 0x20 && b < 0x7f)
		snprintf(buf, 8, "%c", b);
	else
		snprintf(buf, 8, "\\x%02x", b);
	return buf;
}

static int reserve(struct cc *c, size_t bytes, size_t insns)
{
	if (bytes > REGEX_MAX_PROGRAM - c->n || insns > REGEX_MAX_INSNS - c->ninsns)
		return too_big(c);
	return 0;
}

static void put_rel(struct cc *c, size_t at, size_t pc, size_t target)
{
	wr16(c->code + at, (unsigned)((long)target - (long)pc) & 0xffffu);
}

static int emit_op(struct cc *c, uint8_t op, uint8_t arg)
{
	int rc = reserve(c, op_size(op), 1);
	if (rc)
		return rc;
	c->code[c->n] = op;
	if (op == OP_BYTE)
		c->code[c->n + 1] = arg;
	c->n += op_size(op);
	c->ninsns++;
	return 0;
}

static int emit_set(struct cc *c, const uint8_t set[32])
{
	unsigned members = 0, last = 0;
	for (unsigned b = 0; b < 256; b++) {
		if (set[b >> 3] & (1u << (b & 7))) {
			members++;
			last = b;
		}
	}
	if (members == 256)
		return emit_op(c, OP_ANY, 0);
	if (members == 1)
		return emit_op(c, OP_BYTE, (uint8_t)last);
	int rc = reserve(c, SET_SIZE, 1);
	if (rc)
		return rc;
	c->code[c->n] = OP_SET;
	memcpy(c->code + c->n + 1, set, 32);
	c->n += SET_SIZE;
	c->ninsns++;
	return 0;
}

static int emit_jmp(struct cc *c, size_t target)
{
	int rc = reserve(c, 3, 1);
	if (rc)
		return rc;
	c->code[c->n] = OP_JMP;
	put_rel(c, c->n + 1, c->n, target);
	c->n += 3;
	c->ninsns++;
	return 0;
}

/* Inserts a SPLIT at `at`, shifting [at, n) up; targets are as they will be after the move. */
static int insert_split(struct cc *c, size_t at, size_t t1, size_t t2)
{
	int rc = reserve(c, 5, 1);
	if (rc)
		return rc;
	memmove(c->code + at + 5, c->code + at, c->n - at);
	c->code[at] = OP_SPLIT;
	put_rel(c, at + 1, at, t1);
	put_rel(c, at + 3, at, t2);
	c->n += 5;
	c->ninsns++;
	return 0;
}

static int emit_split(struct cc *c, size_t t1, size_t t2)
{
	return insert_split(c, c->n, t1, t2);
}

static size_t count_insns(const uint8_t *code, size_t from, size_t to)
{
	size_t k = 0;
	for (size_t pc = from; pc < to; pc += op_size(code[pc]))
		k++;
	return k;
}

/* F* for the fragment [s, n): SPLIT(body, out) body JMP(split). */
static int make_star(struct cc *c, size_t s)
{
	if (c->n == s)
		return 0;
	int rc = reserve(c, 8, 2);
	if (rc)
		return rc;
	size_t out = c->n + 8;
	if ((rc = insert_split(c, s, s + 5, out)) || (rc = emit_jmp(c, s)))
		return rc;
	return 0;
}

static int make_plus(struct cc *c, size_t s)
{
	if (c->n == s)
		return 0;
	return emit_split(c, s, c->n + 5);
}

static int make_quest(struct cc *c, size_t s)
{
	if (c->n == s)
		return 0;
	return insert_split(c, s, s + 5, c->n + 5);
}

static int append_copy(struct cc *c, size_t flen, size_t finsns)
{
	int rc = reserve(c, flen, finsns);
	if (rc)
		return rc;
	memcpy(c->code + c->n, c->scratch, flen);
	c->n += flen;
	c->ninsns += finsns;
	return 0;
}

/* F{m,n} for the fragment [s, n): m copies, then F* or F+ when unbounded, else n-m copies of F?. */
static int make_bound(struct cc *c, size_t s, unsigned m, unsigned n)
{
	size_t flen = c->n - s;
	if (flen == 0)
		return 0;
	size_t finsns = count_insns(c->code, s, c->n);
	memcpy(c->scratch, c->code + s, flen);
	c->n = s;
	c->ninsns -= finsns;
	int rc;
	for (unsigned k = 0; k < m; k++) {
		if ((rc = append_copy(c, flen, finsns)))
			return rc;
	}
	if (n == BOUND_INF) {
		if (m == 0) {
			if ((rc = append_copy(c, flen, finsns)))
				return rc;
			return make_star(c, s);
		}
		return make_plus(c, c->n - flen);
	}
	for (unsigned k = m; k < n; k++) {
		size_t at = c->n;
		if ((rc = append_copy(c, flen, finsns)) || (rc = make_quest(c, at)))
			return rc;
	}
	return 0;
}

static bool is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static bool is_alnum(int ch)
{
	return is_digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static bool is_dup_op(char ch)
{
	return ch == '*' || ch == '+' || ch == '?' || ch == '{';
}

/* Reads digits at the cursor into *v (capped), false when there are none. */
static bool parse_number(struct cc *c, unsigned *v)
{
	if (!is_digit(c->pat[c->i]))
		return false;
	unsigned x = 0;
	while (is_digit(c->pat[c->i])) {
		if (x <= MAX_BOUND)
			x = x * 10 + (unsigned)(c->pat[c->i] - '0');
		c->i++;
	}
	*v = x;
	return true;
}

static int parse_bound(struct cc *c, size_t frag)
{
	size_t at = c->i++;
	unsigned m = 0, n;
	bool have_m = parse_number(c, &m);
	if (!have_m && c->pat[c->i] != ',')
		goto bad;
	n = m;
	if (c->pat[c->i] == ',') {
		c->i++;
		if (!parse_number(c, &n))
			n = BOUND_INF;
	}
	if (c->pat[c->i] != '}')
		goto bad;
	c->i++;
	if (m > MAX_BOUND || (n != BOUND_INF && n > MAX_BOUND))
		return fail(c, -EINVAL, "repetition count exceeds %u in bound at offset %zu",
			    MAX_BOUND, at);
	if (n < m)
		return fail(c, -EINVAL, "invalid bound {%u,%u} at offset %zu", m, n, at);
	return make_bound(c, frag, m, n);
bad:
	for (size_t j = c->i; c->pat[j] != '}'; j++) {
		if (!c->pat[j])
			return fail(c, -EINVAL, "unmatched '{' at offset %zu", at);
	}
	return fail(c, -EINVAL, "invalid bound at offset %zu", at);
}

static const char *const class_names[] = {
	"alnum", "alpha", "blank", "cntrl", "digit", "graph",
	"lower", "print", "punct", "space", "upper", "xdigit",
};

static bool class_has(unsigned cls, unsigned b)
{
	bool lower = b >= 'a' && b <= 'z', upper = b >= 'A' && b <= 'Z';
	bool digit = b >= '0' && b <= '9', graph = b > 0x20 && b < 0x7f;
	switch (cls) {
	case 0:
		return lower || upper || digit;
	case 1:
		return lower || upper;
	case 2:
		return b == ' ' || b == '\t';
	case 3:
		return b < 0x20 || b == 0x7f;
	case 4:
		return digit;
	case 5:
		return graph;
	case 6:
		return lower;
	case 7:
		return graph || b == ' ';
	case 8:
		return graph && !lower && !upper && !digit;
	case 9:
		return b == ' ' || (b >= '\t' && b <= '\r');
	case 10:
		return upper;
	default:
		return digit || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
	}
}

static void set_add(uint8_t set[32], unsigned lo, unsigned hi)
{
	for (unsigned b = lo; b <= hi; b++)
		set[b >> 3] = (uint8_t)(set[b >> 3] | 1u << (b & 7));
}

/* The '[' at j opens "[." "[=" or "[:" — returns that second character, else 0. */
static char bracket_special(const char *p, size_t j)
{
	if (p[j] == '[' && (p[j + 1] == '.' || p[j + 1] == '=' || p[j + 1] == ':'))
		return p[j + 1];
	return 0;
}

static int unsupported_bracket(struct cc *c, char kind, size_t at)
{
	if (kind == '.')
		return fail(c, -EINVAL, "collating elements [. .] are not supported (offset %zu)", at);
	return fail(c, -EINVAL, "equivalence classes [= =] are not supported (offset %zu)", at);
}

static int parse_class(struct cc *c, uint8_t set[32])
{
	const char *p = c->pat;
	size_t at = c->i, name = at + 2, end = name;
	while (!(p[end] == ':' && p[end + 1] == ']')) {
		if (!p[end])
			return fail(c, -EINVAL, "unterminated character class '[:' at offset %zu", at);
		end++;
	}
	size_t nlen = end - name;
	for (unsigned k = 0; k < sizeof class_names / sizeof class_names[0]; k++) {
		if (strlen(class_names[k]) == nlen && memcmp(class_names[k], p + name, nlen) == 0) {
			for (unsigned b = 0; b < 256; b++) {
				if (class_has(k, b))
					set_add(set, b, b);
			}
			c->i = end + 2;
			return 0;
		}
	}
	return fail(c, -EINVAL, "invalid character class '%.*s' at offset %zu",
		    (int)(nlen > 32 ? 32 : nlen), p + name, at);
}

static int parse_bracket(struct cc *c)
{
	const char *p = c->pat;
	size_t open = c->i++;
	uint8_t set[32] = { 0 };
	bool neg = false, first = true;
	int rc;
	if (p[c->i] == '^') {
		neg = true;
		c->i++;
	}
	for (;; first = false) {
		size_t el = c->i;
		char ch = p[el];
		if (!ch)
			return fail(c, -EINVAL, "unmatched '[' at offset %zu", open);
		if (ch == ']' && !first)
			break;
		char kind = bracket_special(p, el);
		if (kind == ':') {
			if ((rc = parse_class(c, set)))
				return rc;
			if (p[c->i] == '-' && p[c->i + 1] && p[c->i + 1] != ']')
				return fail(c, -EINVAL, "invalid range at offset %zu", el);
			continue;
		}
		if (kind)
			return unsupported_bracket(c, kind, el);
		if (ch == '-' && !first && p[el + 1] && p[el + 1] != ']')
			return fail(c, -EINVAL, "invalid range at offset %zu", el);
		unsigned lo = (uint8_t)ch, hi = lo;
		c->i++;
		if (p[c->i] == '-' && p[c->i + 1] && p[c->i + 1] != ']') {
			char hk = bracket_special(p, c->i + 1);
			if (hk == ':')
				return fail(c, -EINVAL, "invalid range at offset %zu", el);
			if (hk)
				return unsupported_bracket(c, hk, c->i + 1);
			hi = (uint8_t)p[c->i + 1];
			if (hi < lo) {
				char a[8], b[8];
				return fail(c, -EINVAL, "invalid range '%s-%s' at offset %zu",
					    show_byte(a, (uint8_t)lo), show_byte(b, (uint8_t)hi), el);
			}
			c->i += 2;
		}
		set_add(set, lo, hi);
	}
	c->i++;
	if (neg) {
		for (unsigned k = 0; k < 32; k++)
			set[k] = (uint8_t)~set[k];
	}
	return emit_set(c, set);
}

static int parse_escape(struct cc *c)
{
	size_t at = c->i;
	char e = c->pat[at + 1];
	if (!e)
		return fail(c, -EINVAL, "trailing backslash at offset %zu", at);
	if (e >= '1' && e <= '9')
		return fail(c, -EINVAL, "back references are not supported ('\\%c' at offset %zu)", e,
			    at);
	if (is_alnum(e) || e == '<' || e == '>' || e == '`' || e == '\'')
		return fail(c, -EINVAL, "unsupported escape '\\%c' at offset %zu", e, at);
	c->i += 2;
	return emit_op(c, OP_BYTE, (uint8_t)e);
}

static int parse_alt(struct cc *c);

static int parse_group(struct cc *c)
{
	size_t open = c->i++;
	if (++c->depth > MAX_DEPTH)
		return fail(c, -EINVAL, "groups nested more than %d deep at offset %zu", MAX_DEPTH,
			    open);
	int rc = parse_alt(c);
	if (rc)
		return rc;
	if (c->pat[c->i] != ')')
		return fail(c, -EINVAL, "unmatched '(' at offset %zu", open);
	c->i++;
	c->depth--;
	return 0;
}

static int parse_piece(struct cc *c)
{
	size_t frag = c->n;
	char ch = c->pat[c->i];
	int rc;
	if (is_dup_op(ch))
		return fail(c, -EINVAL, "'%c' at offset %zu has nothing to repeat", ch, c->i);
	if (ch == '^' || ch == '$') {
		c->i++;
		if (is_dup_op(c->pat[c->i]))
			return fail(c, -EINVAL, "'%c' at offset %zu has nothing to repeat",
				    c->pat[c->i], c->i);
		return emit_op(c, ch == '^' ? OP_BOL : OP_EOL, 0);
	}
	switch (ch) {
	case '(':
		rc = parse_group(c);
		break;
	case '[':
		rc = parse_bracket(c);
		break;
	case '\\':
		rc = parse_escape(c);
		break;
	case '.':
		c->i++;
		rc = emit_op(c, OP_ANY, 0);
		break;
	default:
		c->i++;
		rc = emit_op(c, OP_BYTE, (uint8_t)ch);
		break;
	}
	while (!rc && is_dup_op(c->pat[c->i])) {
		switch (c->pat[c->i]) {
		case '*':
			c->i++;
			rc = make_star(c, frag);
			break;
		case '+':
			c->i++;
			rc = make_plus(c, frag);
			break;
		case '?':
			c->i++;
			rc = make_quest(c, frag);
			break;
		default:
			rc = parse_bound(c, frag);
			break;
		}
	}
	return rc;
}

/*
 * branch ('|' branch)*: each branch but the last becomes SPLIT(branch, next) branch JMP(end).
 * Until the end is known, each JMP's operand holds the distance back to the previous JMP.
 */
static int parse_alt(struct cc *c)
{
	size_t chain = 0;
	int rc;
	for (;;) {
		size_t start = c->n;
		while (c->pat[c->i] && c->pat[c->i] != '|' && c->pat[c->i] != ')') {
			if ((rc = parse_piece(c)))
				return rc;
		}
		if (c->pat[c->i] != '|')
			break;
		c->i++;
		if ((rc = reserve(c, 8, 2)) || (rc = insert_split(c, start, start + 5, c->n + 8)))
			return rc;
		size_t j = c->n;
		if ((rc = emit_jmp(c, j)))
			return rc;
		wr16(c->code + j + 1, chain ? (unsigned)(j - chain) : 0);
		chain = j;
	}
	while (chain) {
		unsigned link = rd16(c->code + chain + 1);
		put_rel(c, chain + 1, chain, c->n);
		chain = link ? chain - link : 0;
	}
	return 0;
}

int regex_compile(const char *pattern, uint8_t *out, size_t cap, size_t *len, char *msg,
		  size_t msglen)
{
	struct cc c;
	c.msg = msg;
	c.msglen = msglen;
	if (msg && msglen)
		msg[0] = '\0';
	if (!pattern || !len || (!out && cap))
		return fail(&c, -EINVAL, "invalid arguments");
	c.pat = pattern;
	c.i = 0;
	c.n = HDR_SIZE;
	c.ninsns = 0;
	c.depth = 0;
	int rc = parse_alt(&c);
	if (!rc && c.pat[c.i] == ')')
		rc = fail(&c, -EINVAL, "unmatched ')' at offset %zu", c.i);
	if (!rc)
		rc = emit_op(&c, OP_MATCH, 0);
	if (rc)
		return rc;
	c.code[0] = 'R';
	c.code[1] = 'X';
	c.code[2] = VERSION;
	c.code[3] = 0;
	wr16(c.code + 4, (unsigned)c.n);
	wr16(c.code + 6, (unsigned)c.ninsns);
	*len = c.n;
	if (!out)
		return 0;
	if (c.n > cap)
		return fail(&c, -E2BIG, "compiled regex needs %zu bytes, buffer holds %zu", c.n, cap);
	memcpy(out, c.code, c.n);
	return 0;
}

/* ---- validation --------------------------------------------------------------- */

static bool bit_get(const uint8_t *bits, size_t k)
{
	return bits[k >> 3] & (1u << (k & 7));
}

static void bit_set(uint8_t *bits, size_t k)
{
	bits[k >> 3] = (uint8_t)(bits[k >> 3] | 1u << (k & 7));
}

static bool target_ok(const uint8_t *starts, size_t len, size_t pc, const uint8_t *operand)
{
	long t = rel_target(pc, operand);
	return t >= (long)HDR_SIZE && (size_t)t < len && bit_get(starts, (size_t)t);
}

int regex_validate(const uint8_t *prog, size_t len)
{
	uint8_t starts[REGEX_MAX_PROGRAM / 8];
	if (!prog || len <= HDR_SIZE || len > REGEX_MAX_PROGRAM)
		return -EINVAL;
	if (prog[0] != 'R' || prog[1] != 'X' || prog[2] != VERSION || prog[3] != 0 ||
	    rd16(prog + 4) != len)
		return -EINVAL;
	memset(starts, 0, sizeof starts);
	size_t count = 0, pc = HDR_SIZE;
	uint8_t last = 0;
	while (pc < len) {
		size_t sz = op_size(prog[pc]);
		if (!sz || sz > len - pc || ++count > REGEX_MAX_INSNS)
			return -EINVAL;
		bit_set(starts, pc);
		last = prog[pc];
		pc += sz;
	}
	if (count != rd16(prog + 6) || (last != OP_MATCH && last != OP_JMP))
		return -EINVAL;
	for (pc = HDR_SIZE; pc < len; pc += op_size(prog[pc])) {
		if (prog[pc] == OP_JMP && !target_ok(starts, len, pc, prog + pc + 1))
			return -EINVAL;
		if (prog[pc] == OP_SPLIT && (!target_ok(starts, len, pc, prog + pc + 1) ||
					     !target_ok(starts, len, pc, prog + pc + 3)))
			return -EINVAL;
	}
	return 0;
}

/* ---- matching ----------------------------------------------------------------- */

struct vm {
	const uint8_t *prog;
	size_t len;
	size_t textlen;
	uint8_t seen[REGEX_MAX_PROGRAM / 8];
};

struct threads {
	size_t n;
	uint16_t pc[REGEX_MAX_INSNS];
};

static void push(struct vm *vm, struct threads *l, long pc)
{
	if (pc < 0 || (size_t)pc >= vm->len || bit_get(vm->seen, (size_t)pc) ||
	    l->n >= REGEX_MAX_INSNS)
		return;
	size_t sz = op_size(vm->prog[pc]);
	if (!sz || sz > vm->len - (size_t)pc)
		return;
	bit_set(vm->seen, (size_t)pc);
	l->pc[l->n++] = (uint16_t)pc;
}

/* Adds pc and everything reachable from it without consuming a byte; l doubles as the worklist. */
static void add_thread(struct vm *vm, struct threads *l, size_t pc, size_t pos)
{
	size_t k = l->n;
	push(vm, l, (long)pc);
	for (; k < l->n; k++) {
		size_t p = l->pc[k];
		const uint8_t *ins = vm->prog + p;
		switch (ins[0]) {
		case OP_JMP:
			push(vm, l, rel_target(p, ins + 1));
			break;
		case OP_SPLIT:
			push(vm, l, rel_target(p, ins + 1));
			push(vm, l, rel_target(p, ins + 3));
			break;
		case OP_BOL:
			if (pos == 0)
				push(vm, l, (long)p + 1);
			break;
		case OP_EOL:
			if (pos == vm->textlen)
				push(vm, l, (long)p + 1);
			break;
		default:
			break;
		}
	}
}

static void forget(struct vm *vm, const struct threads *l)
{
	for (size_t k = 0; k < l->n; k++)
		vm->seen[l->pc[k] >> 3] = (uint8_t)(vm->seen[l->pc[k] >> 3] & ~(1u << (l->pc[k] & 7)));
}

bool regex_match(const uint8_t *prog, size_t len, const char *text, size_t textlen)
{
	struct vm vm;
	struct threads a, b, *cur = &a, *next = &b;
	if (!prog || len <= HDR_SIZE || len > REGEX_MAX_PROGRAM || (!text && textlen))
		return false;
	vm.prog = prog;
	vm.len = len;
	vm.textlen = textlen;
	memset(vm.seen, 0, sizeof vm.seen);
	a.n = 0;
	add_thread(&vm, cur, HDR_SIZE, 0);
	for (size_t pos = 0; pos < textlen; pos++) {
		uint8_t ch = (uint8_t)text[pos];
		forget(&vm, cur);
		next->n = 0;
		for (size_t k = 0; k < cur->n; k++) {
			size_t p = cur->pc[k];
			const uint8_t *ins = prog + p;
			bool ok;
			switch (ins[0]) {
			case OP_BYTE:
				ok = ins[1] == ch;
				break;
			case OP_ANY:
				ok = true;
				break;
			case OP_SET:
				ok = bit_get(ins + 1, ch);
				break;
			default:
				ok = false;
				break;
			}
			if (ok)
				add_thread(&vm, next, p + op_size(ins[0]), pos + 1);
		}
		if (next->n == 0)
			return false;
		struct threads *t = cur;
		cur = next;
		next = t;
	}
	for (size_t k = 0; k < cur->n; k++) {
		if (prog[cur->pc[k]] == OP_MATCH)
			return true;
	}
	return false;
}
