/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bad input is checked against: the tail in effect and the debugfs
 * view of its slots, for badinput.c and verifier_bounds.c.
 */
#ifndef SK_BADINPUT_H
#define SK_BADINPUT_H

#include <linux/bpf.h>

#include "../kselftest_harness.h"
#include "sk_inline_util.h"
#include "sk_memcg.h"

#define REUSE_PATH	"/proc/sys/net/core/bpf_sk_inline_reuse"
#define SLOT_HDR	8

/* Write @input (@len bytes) to @path: 0 or -errno. */
static inline int write_raw(const char *path, const char *input, size_t len)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, input, len) < 0)
		err = -errno;
	close(fd);
	return err;
}

static inline unsigned int slot_bytes(unsigned int value_size)
{
	return align_up(SLOT_HDR + value_size, INLINE_ALIGN);
}

/* The layout once the maps of earlier tests are gone (freed by a workqueue). */
static inline int layout_settled(struct layout *l)
{
	int i, j, err, dying;

	for (i = 0; i < 200; i++) {
		err = layout_read(l);
		if (err)
			return err;
		for (dying = 0, j = 0; j < l->nr; j++)
			dying |= !strcmp(l->r[j].state, "dying");
		if (!dying)
			return 0;
		usleep(50000);
	}
	return -ETIMEDOUT;
}

/* The tail in effect, checked against the boot argument and the layout. */
static inline long tail_in_effect(struct __test_metadata *_metadata, struct layout *l)
{
	long tail = read_ulong(INLINE_BYTES_SYSCTL);

	EXPECT_EQ(expected_inline_bytes(), tail) {
		TH_LOG("boot argument \"%s\"", inline_bytes_boot_arg() ?: "(none)");
	}
	EXPECT_EQ(0, layout_settled(l));
	EXPECT_EQ(tail, l->tail);
	return tail;
}

#endif
