// SPDX-License-Identifier: GPL-2.0
/*
 * Reloads with net.core.bpf_sk_inline_reuse = 1: a freed map's slot goes to
 * the next map, which never sees what the previous owner left in sockets.
 */
#define _GNU_SOURCE
#include <sys/stat.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"

#define NR_SOCKETS	32

FIXTURE(reload)
{
	int fds[NR_SOCKETS];
	long saved_policy;
};

static int open_socket(int i)
{
	return socket(i % 2 ? AF_INET6 : AF_INET,
		      i % 4 < 2 ? SOCK_STREAM : SOCK_DGRAM, 0);
}

FIXTURE_SETUP(reload)
{
	reload_sockets_open(_metadata, &self->saved_policy, self->fds,
			    NR_SOCKETS, open_socket);
	ASSERT_EQ(0, write_file(REUSE_SYSCTL, "1"));
}

FIXTURE_TEARDOWN(reload)
{
	reload_sockets_close(self->saved_policy, self->fds, NR_SOCKETS);
}

TEST_F(reload, policy_sysctl_accepts_0_and_1_only)
{
	EXPECT_EQ(-EINVAL, write_file(REUSE_SYSCTL, "2"));
	EXPECT_EQ(-EINVAL, write_file(REUSE_SYSCTL, "-1"));
	EXPECT_EQ(-EINVAL, write_file(REUSE_SYSCTL, "reuse"));
	EXPECT_EQ(1, read_ulong(REUSE_SYSCTL));
}

TEST_F_TIMEOUT(reload, a_thousand_reloads_reuse_the_slot_and_never_see_old_values, 500)
{
	bool fits = tail_bytes() >= slot_size(sizeof(struct val16));
	unsigned int off, size, first_off = ~0U;
	struct val16 v, out;
	int cycle, i, fd;

	for (cycle = 0; cycle < 1000; cycle++) {
		fd = create_sk_map(sizeof(struct val16), 0);
		ASSERT_LE(0, fd) {
			TH_LOG("cycle %d", cycle);
		}
		ASSERT_EQ(fits ? 1 : 0, map_slot(fd, &off, &size)) {
			TH_LOG("cycle %d", cycle);
		}
		if (fits && first_off == ~0U)
			first_off = off;
		if (fits) {
			ASSERT_EQ(first_off, off) TH_LOG("cycle %d", cycle);
		}
		for (i = 0; i < NR_SOCKETS; i++) {
			ASSERT_EQ(-ENOENT, sys_lookup(fd, self->fds[i], &out)) {
				TH_LOG("cycle %d socket %d: stale value %llx",
				       cycle, i, (unsigned long long)out.a);
			}
			v.a = cycle;
			v.b = i;
			ASSERT_EQ(0, sys_update(fd, self->fds[i], &v, BPF_NOEXIST));
		}
		for (i = 0; i < NR_SOCKETS; i++) {
			ASSERT_EQ(0, sys_lookup(fd, self->fds[i], &out));
			ASSERT_EQ(cycle, out.a);
			ASSERT_EQ(i, out.b);
		}
		ASSERT_EQ(0, free_map(fd));
	}
}

/*
 * The security property: map A fills its slot with bytes of its choosing
 * (all ones: BUSY set; and small numbers that look like tags), then goes
 * away; B, C and D are given slots inside A's old bytes, where their owner
 * tags now sit on A's data. None of them may see a value, none may hang.
 */
TEST_F(reload, a_new_owner_of_the_bytes_never_reads_the_previous_owner_data)
{
	enum { A_VALUE = 40 };
	bool fits = tail_bytes() >= slot_size(A_VALUE);
	unsigned int a_off = 0, a_size, off, size;
	unsigned char pattern[2][A_VALUE];
	unsigned char out[A_VALUE];
	int a, m[3], round, i, j;
	__u64 k;

	memset(pattern[0], 0xff, A_VALUE);
	for (k = 0; k < A_VALUE / 8; k++)
		memcpy(pattern[1] + k * 8, &k, 8);

	for (round = 0; round < 2; round++) {
		a = create_sk_map(A_VALUE, 0);
		ASSERT_LE(0, a);
		ASSERT_EQ(fits, map_slot(a, &a_off, &a_size));
		for (i = 0; i < NR_SOCKETS; i++)
			ASSERT_EQ(0, sys_update(a, self->fds[i], pattern[round], BPF_ANY));
		ASSERT_EQ(0, free_map(a));

		for (j = 0; j < 3; j++) {
			m[j] = create_sk_map(8, 0);
			ASSERT_LE(0, m[j]);
			ASSERT_EQ(fits, map_slot(m[j], &off, &size));
			if (fits) {
				EXPECT_LE(a_off, off);
				EXPECT_GE(a_off + a_size, off + size);
			}
		}
		for (i = 0; i < NR_SOCKETS; i++)
			for (j = 0; j < 3; j++)
				ASSERT_EQ(-ENOENT, sys_lookup(m[j], self->fds[i], out));
		/* Claiming bytes whose stale tag has BUSY set must not wait. */
		for (i = 0; i < NR_SOCKETS; i++) {
			k = 0x600d + i;
			ASSERT_EQ(0, sys_update(m[1], self->fds[i], &k, BPF_NOEXIST));
			ASSERT_EQ(-ENOENT, sys_lookup(m[0], self->fds[i], out));
			ASSERT_EQ(-ENOENT, sys_lookup(m[2], self->fds[i], out));
			ASSERT_EQ(0, sys_lookup(m[1], self->fds[i], out));
			ASSERT_EQ(0, memcmp(&k, out, 8));
		}
		for (j = 0; j < 3; j++)
			ASSERT_EQ(0, free_map(m[j]));
	}
}

TEST_F(reload, pinned_map_keeps_its_slot_and_data_across_a_program_reload)
{
	const char *pin = "/sys/fs/bpf/sk_inline_reload_test";
	unsigned int off1 = 0, size1 = 0, off2 = 0, size2 = 0;
	struct val16 in = { 0x5157, 77 }, out;
	struct attached drv;
	struct slot_ref ref;
	int pinned, r1, r2;
	__u32 id;

	unlink(pin);
	ASSERT_EQ(0, attach_driver(&drv));
	ASSERT_EQ(0, bpf_map__pin(drv.skel->maps.map_a, pin));
	r1 = map_slot(bpf_map__fd(drv.skel->maps.map_a), &off1, &size1);
	id = map_id(bpf_map__fd(drv.skel->maps.map_a));
	ASSERT_EQ(0, helper_create(self->fds[0], MAP_A, &in, sizeof(in)));
	detach_driver(&drv);

	/* The programs are gone; the pinned map stays. Load them again. */
	memset(&drv, 0, sizeof(drv));
	pinned = bpf_obj_get(pin);
	ASSERT_LE(0, pinned);
	drv.skel = sk_storage__open();
	ASSERT_NE(NULL, drv.skel);
	ASSERT_EQ(0, bpf_map__reuse_fd(drv.skel->maps.map_a, pinned));
	ASSERT_EQ(0, sk_storage__load(drv.skel));
	ASSERT_EQ(0, attach_progs(&drv));
	EXPECT_EQ(id, map_id(bpf_map__fd(drv.skel->maps.map_a)));
	r2 = map_slot(bpf_map__fd(drv.skel->maps.map_a), &off2, &size2);
	EXPECT_EQ(r1, r2);
	EXPECT_EQ(off1, off2);
	EXPECT_EQ(size1, size2);
	ASSERT_EQ(0, helper_get(self->fds[0], MAP_A, &out, sizeof(out)));
	EXPECT_EQ(0, memcmp(&in, &out, sizeof(in)));
	ref = slot_ref(pinned);
	detach_driver(&drv);
	close(pinned);
	unlink(pin);
	EXPECT_EQ(0, wait_released(ref));
}

TEST_HARNESS_MAIN
