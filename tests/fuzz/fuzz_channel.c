/* fuzz_channel.c — libFuzzer target for core/channel.c: decode any datagram; what decodes must re-encode to the same bytes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/channel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walks the arguments the way the launcher will, checking lengths against strlen. */
static void walk_args(const struct channel_msg *m)
{
	struct channel_args it;
	const char *s;
	size_t n;
	uint32_t count = 0;
	channel_args_begin(m, &it);
	while ((s = channel_args_next(&it, &n)) != NULL) {
		if (strlen(s) != n)
			abort();
		count++;
	}
	if (count != m->argc)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t again[CHANNEL_MAX_MSG];
	struct channel_msg m, m2;
	/* A private copy, exactly sized, so ASan catches any read past the datagram. */
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	int r = channel_decode(copy, size, &m);
	if (r != 0) {
		if ((r != -EBADMSG && r != -EPROTO) || !m.why)
			abort();
		free(copy);
		return 0;
	}
	if (m.source == CHANNEL_SOURCE_EXEC)
		walk_args(&m);
	int len = channel_encode(again, sizeof again, &m);
	if (len < 0 || (size_t)len != size || memcmp(again, copy, size) != 0)
		abort();
	if (channel_decode(again, (size_t)len, &m2) != 0 || m2.id != m.id || m2.type != m.type)
		abort();
	free(copy);
	return 0;
}
