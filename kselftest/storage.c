// SPDX-License-Identifier: GPL-2.0
/*
 * sk storage served from the inline tail: the helpers and the syscalls see
 * the same values, maps are isolated, maps that do not fit (map_dyn is
 * created once the tail is full) use the dynamic storage with the same
 * behaviour, and the layout is visible.
 *
 * Every test runs in every boot: with a tail the maps that fit are inline,
 * without one (or when it is too small) they are dynamic, and the visible
 * behaviour must be the same.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"

FIXTURE(storage)
{
	struct attached drv;
	int fd;
	int map_a, map_b, map_dyn, map_big;
};

FIXTURE_SETUP(storage)
{
	ASSERT_EQ(0, attach_driver(&self->drv));
	self->map_a = bpf_map__fd(self->drv.skel->maps.map_a);
	self->map_b = bpf_map__fd(self->drv.skel->maps.map_b);
	self->map_dyn = bpf_map__fd(self->drv.skel->maps.map_dyn);
	self->map_big = bpf_map__fd(self->drv.skel->maps.map_big);
	self->fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(storage)
{
	struct slot_ref a = slot_ref(self->map_a), b = slot_ref(self->map_b);

	close(self->fd);
	detach_driver(&self->drv);
	/* Map free is deferred: let the next test start with an empty tail. */
	EXPECT_EQ(0, wait_released(a));
	EXPECT_EQ(0, wait_released(b));
}

TEST_F(storage, maps_get_a_slot_exactly_when_they_fit)
{
	unsigned int tail = tail_bytes(), off, size;
	unsigned int need = slot_size(sizeof(struct val16)) +
			    slot_size(sizeof(struct val8));
	struct layout l;

	/*
	 * map_a and map_b are created first, in that order, in an empty tail;
	 * map_dyn after the tail was filled, map_big is larger than any tail.
	 */
	layout_read(&l);	/* totals of -1 if unreadable */
	ASSERT_LE(0, l.free);
	if (tail >= need) {
		ASSERT_EQ(1, map_slot(self->map_a, &off, &size));
		EXPECT_EQ(slot_size(sizeof(struct val16)), size);
		ASSERT_EQ(1, map_slot(self->map_b, &off, &size));
		EXPECT_EQ(slot_size(sizeof(struct val8)), size);
	} else if (!tail) {
		EXPECT_EQ(0, map_slot(self->map_a, &off, &size));
		EXPECT_EQ(0, map_slot(self->map_b, &off, &size));
	}
	EXPECT_EQ(0, map_slot(self->map_dyn, &off, &size));
	EXPECT_EQ(0, map_slot(self->map_big, &off, &size));
}

TEST_F(storage, value_created_by_the_helper_is_read_by_the_syscall)
{
	struct val16 in = { 0x1122334455667788ULL, 42 }, out = {};

	ASSERT_EQ(-ENOENT, sys_lookup(self->map_a, self->fd, &out));
	ASSERT_EQ(0, helper_create(self->fd, MAP_A, &in, sizeof(in)));
	ASSERT_EQ(0, sys_lookup(self->map_a, self->fd, &out));
	ASSERT_EQ(0, memcmp(&in, &out, sizeof(in)));
}

TEST_F(storage, value_written_by_the_syscall_is_read_by_the_helper)
{
	struct val16 in = { 7, 8 }, out = {};

	ASSERT_EQ(-ENOENT, helper_get(self->fd, MAP_A, &out, sizeof(out)));
	ASSERT_EQ(0, sys_update(self->map_a, self->fd, &in, BPF_ANY));
	ASSERT_EQ(0, helper_get(self->fd, MAP_A, &out, sizeof(out)));
	ASSERT_EQ(0, memcmp(&in, &out, sizeof(in)));
	in.b = 9;
	ASSERT_EQ(0, sys_update(self->map_a, self->fd, &in, BPF_ANY));
	ASSERT_EQ(0, helper_get(self->fd, MAP_A, &out, sizeof(out)));
	ASSERT_EQ(9, out.b);
}

TEST_F(storage, create_without_an_initial_value_gives_zeroes)
{
	struct val16 junk = { ~0ULL, ~0ULL }, out = { 1, 1 };

	/* Leave non-zero bytes in the slot, then delete and recreate. */
	ASSERT_EQ(0, helper_create(self->fd, MAP_A, &junk, sizeof(junk)));
	ASSERT_EQ(0, helper_delete(self->fd, MAP_A));
	ASSERT_EQ(0, helper_create_zero(self->fd, MAP_A));
	ASSERT_EQ(0, helper_get(self->fd, MAP_A, &out, sizeof(out)));
	ASSERT_EQ(0, out.a);
	ASSERT_EQ(0, out.b);
}

TEST_F(storage, create_of_a_present_value_keeps_it)
{
	struct val16 first = { 1, 2 }, second = { 3, 4 }, out;

	ASSERT_EQ(0, helper_create(self->fd, MAP_A, &first, sizeof(first)));
	ASSERT_EQ(0, helper_create(self->fd, MAP_A, &second, sizeof(second)));
	ASSERT_EQ(0, sys_lookup(self->map_a, self->fd, &out));
	ASSERT_EQ(0, memcmp(&first, &out, sizeof(out)));
}

TEST_F(storage, delete_makes_the_value_absent_for_helper_and_syscall)
{
	struct val16 in = { 5, 6 }, out;

	ASSERT_EQ(0, helper_create(self->fd, MAP_A, &in, sizeof(in)));
	ASSERT_EQ(0, helper_delete(self->fd, MAP_A));
	ASSERT_EQ(-ENOENT, helper_get(self->fd, MAP_A, &out, sizeof(out)));
	ASSERT_EQ(-ENOENT, sys_lookup(self->map_a, self->fd, &out));
	ASSERT_EQ(-ENOENT, helper_delete(self->fd, MAP_A));
	ASSERT_EQ(0, sys_update(self->map_a, self->fd, &in, BPF_ANY));
	ASSERT_EQ(0, sys_delete(self->map_a, self->fd));
	ASSERT_EQ(-ENOENT, sys_delete(self->map_a, self->fd));
	ASSERT_EQ(-ENOENT, helper_get(self->fd, MAP_A, &out, sizeof(out)));
}

TEST_F(storage, syscall_update_flags_behave_as_for_dynamic_maps)
{
	int maps[] = { self->map_a, self->map_dyn };
	struct val16 in = { 1, 1 }, out;
	int i;

	for (i = 0; i < 2; i++) {
		int m = maps[i];

		ASSERT_EQ(-ENOENT, sys_update(m, self->fd, &in, BPF_EXIST));
		ASSERT_EQ(0, sys_update(m, self->fd, &in, BPF_NOEXIST));
		ASSERT_EQ(-EEXIST, sys_update(m, self->fd, &in, BPF_NOEXIST));
		in.a = 2;
		ASSERT_EQ(0, sys_update(m, self->fd, &in, BPF_EXIST));
		ASSERT_EQ(0, sys_lookup(m, self->fd, &out));
		ASSERT_EQ(2, out.a);
		ASSERT_EQ(-EINVAL, sys_update(m, self->fd, &in, BPF_F_LOCK));
		ASSERT_EQ(-EINVAL, sys_update(m, self->fd, &in, 8));
		ASSERT_EQ(0, sys_delete(m, self->fd));
		in.a = 1;
	}
}

TEST_F(storage, two_maps_in_one_socket_are_isolated)
{
	struct val16 a = { 0xaaaaaaaaaaaaaaaaULL, 0xaaaaaaaaaaaaaaaaULL }, out_a;
	struct val8 b = { 0xbbbbbbbbbbbbbbbbULL }, out_b;

	ASSERT_EQ(0, helper_create(self->fd, MAP_A, &a, sizeof(a)));
	ASSERT_EQ(-ENOENT, helper_get(self->fd, MAP_B, &out_b, sizeof(out_b)));
	ASSERT_EQ(0, helper_create(self->fd, MAP_B, &b, sizeof(b)));
	ASSERT_EQ(0, helper_get(self->fd, MAP_A, &out_a, sizeof(out_a)));
	ASSERT_EQ(0, memcmp(&a, &out_a, sizeof(a)));
	ASSERT_EQ(0, helper_delete(self->fd, MAP_A));
	ASSERT_EQ(0, helper_get(self->fd, MAP_B, &out_b, sizeof(out_b)));
	ASSERT_EQ(b.a, out_b.a);
}

TEST_F_TIMEOUT(storage, thousands_of_sockets_keep_their_own_values, 300)
{
	enum { N = 3000 };
	struct rlimit rl = { N + 64, N + 64 };
	static int fds[N];
	struct val16 v, out;
	int i;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	for (i = 0; i < N; i++) {
		fds[i] = socket(i % 2 ? AF_INET6 : AF_INET,
				i % 3 ? SOCK_DGRAM : SOCK_STREAM, 0);
		ASSERT_LE(0, fds[i]);
		v.a = i;
		v.b = ~(__u64)i;
		if (i % 2) {
			ASSERT_EQ(0, helper_create(fds[i], MAP_A, &v, sizeof(v)));
		} else {
			ASSERT_EQ(0, sys_update(self->map_a, fds[i], &v, BPF_NOEXIST));
		}
	}
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, sys_lookup(self->map_a, fds[i], &out));
		ASSERT_EQ(i, out.a);
		ASSERT_EQ(~(__u64)i, out.b);
	}
	for (i = 0; i < N; i++)
		close(fds[i]);
}

TEST_F_TIMEOUT(storage, new_sockets_never_show_values_of_freed_ones, 300)
{
	enum { N = 500 };
	struct val16 v = { 0xdeadbeef, 0xfeedface }, out;
	int fds[N], i;

	/* Same caches, so the new sockets reuse the freed objects. */
	for (i = 0; i < N; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_LE(0, fds[i]);
		ASSERT_EQ(0, helper_create(fds[i], MAP_A, &v, sizeof(v)));
	}
	for (i = 0; i < N; i++)
		close(fds[i]);
	for (i = 0; i < N; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_LE(0, fds[i]);
		ASSERT_EQ(-ENOENT, sys_lookup(self->map_a, fds[i], &out));
		ASSERT_EQ(-ENOENT, helper_get(fds[i], MAP_A, &out, sizeof(out)));
	}
	for (i = 0; i < N; i++)
		close(fds[i]);
}

TEST_F_TIMEOUT(storage, accepted_child_starts_without_the_listener_values, 300)
{
	struct val16 v = { 11, 12 }, out;
	struct sockaddr_in addr;
	struct tcp_conn c;

	ASSERT_EQ(0, tcp_listen(&c, &addr));
	ASSERT_EQ(0, helper_create(c.lfd, MAP_A, &v, sizeof(v)));
	ASSERT_EQ(0, tcp_accept(&c, &addr));
	ASSERT_EQ(-ENOENT, sys_lookup(self->map_a, c.afd, &out));
	ASSERT_EQ(0, sys_lookup(self->map_a, c.lfd, &out));
	ASSERT_EQ(11, out.a);
	tcp_close(&c);
}

TEST_F(storage, map_too_large_for_the_tail_behaves_the_same_on_the_dynamic_path)
{
	struct val16 in = { 21, 22 }, out;
	static struct val_big big, big_out;

	ASSERT_EQ(-ENOENT, helper_get(self->fd, MAP_BIG, &out, sizeof(out)));
	ASSERT_EQ(0, helper_create(self->fd, MAP_BIG, &in, sizeof(in)));
	ASSERT_EQ(0, helper_get(self->fd, MAP_BIG, &out, sizeof(out)));
	ASSERT_EQ(0, memcmp(&in, &out, sizeof(in)));
	ASSERT_EQ(0, sys_lookup(self->map_big, self->fd, &big_out));
	ASSERT_EQ(21, big_out.a);
	big.a = 31;
	ASSERT_EQ(-EEXIST, sys_update(self->map_big, self->fd, &big, BPF_NOEXIST));
	ASSERT_EQ(0, sys_update(self->map_big, self->fd, &big, BPF_EXIST));
	ASSERT_EQ(0, helper_get(self->fd, MAP_BIG, &out, sizeof(out)));
	ASSERT_EQ(31, out.a);
	ASSERT_EQ(0, helper_delete(self->fd, MAP_BIG));
	ASSERT_EQ(-ENOENT, sys_lookup(self->map_big, self->fd, &big_out));
}

TEST_F(storage, map_made_with_the_tail_full_behaves_the_same_on_the_dynamic_path)
{
	struct val16 in = { 41, 42 }, out;

	ASSERT_EQ(0, helper_create(self->fd, MAP_DYN, &in, sizeof(in)));
	ASSERT_EQ(0, sys_lookup(self->map_dyn, self->fd, &out));
	ASSERT_EQ(0, memcmp(&in, &out, sizeof(in)));
	ASSERT_EQ(0, helper_delete(self->fd, MAP_DYN));
	ASSERT_EQ(-ENOENT, helper_get(self->fd, MAP_DYN, &out, sizeof(out)));
}

TEST_F(storage, fdinfo_and_layout_view_agree)
{
	int maps[] = { self->map_a, self->map_b, self->map_dyn, self->map_big };
	unsigned int off, size, used = 0;
	const struct layout_range *row;
	int i, inline_maps = 0, r;
	struct layout l;

	/* The maps live throughout: one read of the view serves them all. */
	ASSERT_NE(-ENOENT, layout_read(&l));
	for (i = 0; i < 4; i++) {
		r = map_slot(maps[i], &off, &size);
		ASSERT_LE(0, r);
		row = layout_find(&l, map_id(maps[i]));
		if (!r) {
			EXPECT_EQ(NULL, row);
			continue;
		}
		inline_maps++;
		used += size;
		ASSERT_NE(NULL, row);
		EXPECT_EQ(off, row->off);
		EXPECT_EQ(size, row->size);
		EXPECT_EQ(0, off % INLINE_ALIGN);
		EXPECT_LE(off + size, tail_bytes());
	}
	EXPECT_EQ(tail_bytes(), l.tail);
	EXPECT_LE(used, l.used);
	EXPECT_EQ(tail_bytes(), l.used + l.leaked + l.free);
	if (tail_bytes() >= 40)
		EXPECT_EQ(2, inline_maps);
}

TEST_HARNESS_MAIN
