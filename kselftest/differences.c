// SPDX-License-Identifier: GPL-2.0
/*
 * Deliberate differences of inline values from dynamic ones, as
 * Documentation/bpf/map_sk_storage.rst states them, asserted on whichever
 * path each map is on in this boot (without a tail both are dynamic):
 *
 * - a syscall update of a present value writes it in place; the dynamic
 *   path swaps in a new element;
 * - a pointer taken before a delete aliases the value created after it in
 *   the same socket; on the dynamic path it points to the deleted element.
 *
 * Racing creators (both get the winner's value) are in concurrency.c, the
 * owner charge policy at memory.max in memcg.c, optmem_max in interfaces.c.
 */
#include <sys/socket.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "differences.skel.h"

#define SOL_DIFF_TEST	0x5e60
enum { DIFF_ADDR = 1, DIFF_DELETE_RECREATE };

FIXTURE(differences)
{
	struct differences *skel;
	struct bpf_link *link;
	int fd;
};

/* dynamic: the map made with the tail full, else the default one. */
FIXTURE_BOOL_VARIANTS(differences, dynamic, default_map, dynamic_map);

FIXTURE_SETUP(differences)
{
	int cg = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY);

	ASSERT_LE(0, cg);
	/* The default map first, inline if the tail has room; then the other. */
	self->skel = differences__open();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, reuse_sk_map(self->skel->maps.map_default, false));
	ASSERT_EQ(0, reuse_sk_map(self->skel->maps.map_dynamic, true));
	ASSERT_EQ(0, differences__load(self->skel));
	self->link = bpf_program__attach_cgroup(self->skel->progs.diff_probe, cg);
	close(cg);
	ASSERT_NE(NULL, self->link);
	self->fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(differences)
{
	close(self->fd);
	bpf_link__destroy(self->link);
	differences__destroy(self->skel);
}

static int map_fd(FIXTURE_DATA(differences) *self, bool dynamic)
{
	return bpf_map__fd(dynamic ? self->skel->maps.map_dynamic :
				     self->skel->maps.map_default);
}

static bool map_is_inline(int fd)
{
	unsigned int off, size;

	return map_slot(fd, &off, &size) == 1;
}

static int probe(FIXTURE_DATA(differences) *self, bool dynamic, int op)
{
	char dummy = 0;

	return setsockopt(self->fd, SOL_DIFF_TEST, (dynamic << 8) | op,
			  &dummy, 1) ? -errno : 0;
}

TEST_F(differences, syscall_update_of_a_present_value_is_in_place_only_inline)
{
	int map = map_fd(self, variant->dynamic);
	struct val16 v = { 1, 2 };
	__u64 before;

	ASSERT_EQ(0, sys_update(map, self->fd, &v, BPF_ANY));
	ASSERT_EQ(0, probe(self, variant->dynamic, DIFF_ADDR));
	before = self->skel->bss->addr[0];
	ASSERT_NE(0, before);
	v.a = 3;
	ASSERT_EQ(0, sys_update(map, self->fd, &v, BPF_ANY));
	ASSERT_EQ(0, probe(self, variant->dynamic, DIFF_ADDR));
	if (map_is_inline(map)) {
		EXPECT_EQ(before, self->skel->bss->addr[0]);
	} else {
		EXPECT_NE(before, self->skel->bss->addr[0]);
	}
	if (variant->dynamic)
		EXPECT_FALSE(map_is_inline(map));
}

TEST_F(differences, pointer_taken_before_a_delete_aliases_the_new_value_only_inline)
{
	int map = map_fd(self, variant->dynamic);
	struct val16 v;

	ASSERT_EQ(0, probe(self, variant->dynamic, DIFF_DELETE_RECREATE));
	ASSERT_EQ(0, sys_lookup(map, self->fd, &v));
	if (map_is_inline(map)) {
		EXPECT_EQ(self->skel->bss->addr[0], self->skel->bss->addr[1]);
		EXPECT_EQ(7, self->skel->bss->seen);
		EXPECT_EQ(7, v.a);
	} else {
		EXPECT_NE(self->skel->bss->addr[0], self->skel->bss->addr[1]);
		EXPECT_EQ(0, self->skel->bss->seen);
		EXPECT_EQ(0, v.a);
	}
}

TEST_HARNESS_MAIN
