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
#define LAYOUT_PATH	INLINE_LAYOUT
#define SLOT_HDR	8
#define MAX_RANGES	(INLINE_MAX_BYTES / INLINE_ALIGN)

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

/* /sys/kernel/debug/bpf_sk_inline, parsed. */
struct range {
	unsigned int off, size, id;
	char state[8];
};

struct layout {
	long tail, used, leaked, free;
	int nr;
	struct range r[MAX_RANGES];
};

static inline long layout_header(const char *buf, const char *name)
{
	const char *p = strstr(buf, name);

	return p ? strtol(p + strlen(name), NULL, 10) : -1;
}

/*
 * Read the layout: 0, -ENOENT when it cannot be read, -EBADMSG when its
 * ranges do not tile the tail or do not add up to its totals.
 */
static inline int layout_read(struct layout *l)
{
	long sum_used = 0, sum_leaked = 0, sum_free = 0, end = 0;
	char buf[16384], *line, *save;
	struct range *r;

	if (read_file(LAYOUT_PATH, buf, sizeof(buf)) < 0)
		return -ENOENT;
	memset(l, 0, sizeof(*l));
	l->tail = layout_header(buf, "tail_bytes:");
	l->used = layout_header(buf, "used_bytes:");
	l->leaked = layout_header(buf, "leaked_bytes:");
	l->free = layout_header(buf, "free_bytes:");
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (l->nr == MAX_RANGES)
			return -EBADMSG;
		r = &l->r[l->nr];
		if (sscanf(line, "%u %u %7s", &r->off, &r->size, r->state) != 3)
			continue;
		if (sscanf(line, "%*u %*u %*s %u", &r->id) != 1)
			r->id = 0;
		if (r->off != end || !r->size)
			return -EBADMSG;
		end += r->size;
		if (!strcmp(r->state, "map") || !strcmp(r->state, "dying"))
			sum_used += r->size;
		else if (!strcmp(r->state, "leaked"))
			sum_leaked += r->size;
		else if (!strcmp(r->state, "free"))
			sum_free += r->size;
		else
			return -EBADMSG;
		l->nr++;
	}
	if (l->tail < 0 || end != l->tail || sum_used != l->used ||
	    sum_leaked != l->leaked || sum_free != l->free)
		return -EBADMSG;
	return 0;
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

/* The largest free range, the first of them if several: what a slot can take. */
static inline unsigned int layout_room(const struct layout *l, unsigned int *off)
{
	unsigned int room = 0;
	int i;

	*off = 0;
	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->r[i].state, "free") && l->r[i].size > room) {
			room = l->r[i].size;
			*off = l->r[i].off;
		}
	return room;
}

static inline const struct range *layout_find(const struct layout *l, __u32 id)
{
	int i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->r[i].state, "map") && l->r[i].id == id)
			return &l->r[i];
	return NULL;
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
