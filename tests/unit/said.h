/* said.h — airlock_err() for unit tests of launcher parts: what they say on stderr, kept in `said` to assert on. */
#ifndef AIRLOCK_TEST_SAID_H
#define AIRLOCK_TEST_SAID_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "launcher/cli/launcher.h"

/* Every message since the test last emptied it (said[0] = '\0'), each ended by '\n'; cut when full. */
static char said[8192];

/* The launcher's main.c prints to stderr; the tests keep it instead. */
void airlock_err(const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(said);
	va_start(ap, fmt);
	vsnprintf(said + n, sizeof said - n, fmt, ap);
	va_end(ap);
	if (strlen(said) + 1 < sizeof said)
		strcat(said, "\n");
}

#endif
