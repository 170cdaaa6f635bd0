/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the inline sk storage selftests. */
#ifndef SK_INLINE_UTIL_H
#define SK_INLINE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INLINE_BYTES_SYSCTL	"/proc/sys/net/core/bpf_sk_inline_bytes"
#define INLINE_BYTES_BOOT_ARG	"sysctl.net.core.bpf_sk_inline_bytes="
#define INLINE_MAX_BYTES	1024
#define INLINE_ALIGN		8
/* In front of the tail: the socket's link for the map iterator. */
#define INLINE_LINK_BYTES	24

static inline unsigned int align_up(unsigned int v, unsigned int a)
{
	return (v + a - 1) / a * a;
}

/* Read a whole small file into buf; return its length or -errno. */
static inline int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

static inline long read_ulong(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 0);
}

/* Write a string to a file; return 0 or -errno of the write. */
static inline int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/*
 * The boot argument as given on this boot's command line, or NULL.
 * The last occurrence wins, as for any kernel parameter.
 */
static inline const char *inline_bytes_boot_arg(void)
{
	static char cmdline[4096], val[64];
	const char *p, *last = NULL;
	size_t n;

	if (read_file("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		return NULL;
	for (p = cmdline; (p = strstr(p, INLINE_BYTES_BOOT_ARG)); p++)
		if (p == cmdline || p[-1] == ' ')
			last = p + strlen(INLINE_BYTES_BOOT_ARG);
	if (!last)
		return NULL;
	n = strcspn(last, " \n");
	if (n >= sizeof(val))
		n = sizeof(val) - 1;
	memcpy(val, last, n);
	val[n] = '\0';
	return val;
}

/* Is the boot argument a valid tail size, as documented? */
static inline bool inline_bytes_valid(const char *arg, unsigned int *bytes)
{
	unsigned long v;
	char *end;

	if (!arg || !*arg || arg[0] == '-' || arg[0] == ' ')
		return false;
	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno || *end || v > INLINE_MAX_BYTES)
		return false;
	*bytes = v;
	return true;
}

/* The tail this boot should have: the argument rounded up, or 0. */
static inline unsigned int expected_inline_bytes(void)
{
	unsigned int bytes;

	if (!inline_bytes_valid(inline_bytes_boot_arg(), &bytes))
		return 0;
	return align_up(bytes, INLINE_ALIGN);
}

#endif
