/* SPDX-License-Identifier: GPL-2.0 */
/* Socket cache object counts, for tests that check no socket is leaked. */
#ifndef SK_SLAB_UTIL_H
#define SK_SLAB_UTIL_H

#include "sk_storage_util.h"

/* Objects in use in a socket cache, exactly: per-cpu slabs flushed first. */
static inline long slab_objects(const char *cache)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	write_file(path, "1");
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/objects", cache);
	return read_ulong(path);
}

static const char *const caches[] __attribute__((unused)) = { "TCP", "TCPv6", "UDP", "UDPv6" };
#define NR_CACHES	ARRAY_SIZE(caches)

/* Wait for socket frees (RCU, timers, workqueues) to bring @cache to @base. */
static inline long settle_objects(const char *cache, long base)
{
	return settle_within(slab_objects, cache, LONG_MIN, base, 150, 100000);
}

#endif
