/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every guest tool written in C needs: failing with a message, the
 * usage on a bad option, a monotonic clock in ns, a median. Define TOOL_NAME before including.
 */
#ifndef TOOL_UTIL_H
#define TOOL_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <linux/types.h>

#ifndef TOOL_NAME
#error "define TOOL_NAME before including tool_util.h"
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

static inline void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, TOOL_NAME ": FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* -h: the usage on stdout, status 0; an unknown option: on stderr, status 2. */
static inline void __attribute__((noreturn))
usage_exit(void (*usage)(FILE *f), int opt)
{
	usage(opt == 'h' ? stdout : stderr);
	exit(opt == 'h' ? 0 : 2);
}

static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#endif /* TOOL_UTIL_H */
