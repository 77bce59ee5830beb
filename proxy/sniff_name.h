/* sniff_name.h — inside the egress proxy's parsers (sniff_http.c, sniff_socks.c, sniff_tls.c): the host name rules they share. */
#ifndef AIRLOCK_PROXY_SNIFF_NAME_H
#define AIRLOCK_PROXY_SNIFF_NAME_H

#include <stddef.h>

#include "proxy/sniff.h"

/* ASCII lower case; other bytes unchanged. */
static inline char sniff_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
}

/*
 * Copies a host name (letters, digits, '-', '_', '.'; labels of 1..63, at
 * most 253 characters once one trailing '.' is dropped) lower-cased into
 * out.  Numeric spellings of addresses ("0x7f.1") pass: addr_parse() sorts
 * them out.  Returns NULL or why the name is bad.
 */
const char *sniff_copy_name(const char *s, size_t n, char out[SNIFF_HOST_MAX]);

#endif
