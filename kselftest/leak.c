// SPDX-License-Identifier: GPL-2.0
/*
 * Reloads with net.core.bpf_sk_inline_reuse = 0: freed slots are leaked
 * until reboot, so reloads use up the tail and then fall back to the
 * dynamic storage. This leaks the tail for the rest of the boot: it runs
 * last.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"

#define NR_SOCKETS	16

FIXTURE(leak)
{
	int fds[NR_SOCKETS];
	long saved_policy;
};

static int open_socket(int i)
{
	return socket(AF_INET, i % 2 ? SOCK_STREAM : SOCK_DGRAM, 0);
}

FIXTURE_SETUP(leak)
{
	reload_sockets_open(_metadata, &self->saved_policy, self->fds,
			    NR_SOCKETS, open_socket);
}

FIXTURE_TEARDOWN(leak)
{
	reload_sockets_close(self->saved_policy, self->fds, NR_SOCKETS);
}

/* Create a map, check it starts empty on every socket, fill it, free it. */
static int one_cycle(struct __test_metadata *_metadata, int *fds, int cycle,
		     unsigned int *off)
{
	struct val16 v = { cycle, 0 }, out;
	unsigned int size;
	int fd, slot, i;

	fd = create_sk_map(sizeof(struct val16), 0);
	if (fd < 0)
		return fd;
	slot = map_slot(fd, off, &size);
	for (i = 0; i < NR_SOCKETS; i++) {
		EXPECT_EQ(-ENOENT, sys_lookup(fd, fds[i], &out)) {
			TH_LOG("cycle %d: stale value", cycle);
		}
		v.b = i;
		EXPECT_EQ(0, sys_update(fd, fds[i], &v, BPF_NOEXIST));
		EXPECT_EQ(0, sys_lookup(fd, fds[i], &out));
		EXPECT_EQ(cycle, out.a);
	}
	/* A leaked slot leaves the "map" rows for a "leaked" one. */
	EXPECT_EQ(0, free_map(fd));
	return slot;
}

static void *toggle_policy(void *p)
{
	volatile int *stop = p;
	int n = 0;

	while (!*stop)
		write_file(REUSE_SYSCTL, n++ % 2 ? "1" : "0");
	return NULL;
}

TEST_F(leak, switching_the_policy_while_maps_come_and_go_is_safe)
{
	volatile int stop = 0;
	unsigned int off;
	struct layout l;
	pthread_t th;
	int cycle;

	ASSERT_EQ(0, pthread_create(&th, NULL, toggle_policy, (void *)&stop));
	/* Few cycles: whatever leaks here is gone for the next test. */
	for (cycle = 0; cycle < 6; cycle++) {
		ASSERT_LE(0, one_cycle(_metadata, self->fds, cycle, &off));
	}
	stop = 1;
	pthread_join(th, NULL);
	layout_read(&l);	/* totals of -1 if unreadable */
	EXPECT_EQ(tail_bytes(), l.used + l.leaked + l.free);
}

TEST_F_TIMEOUT(leak, reloads_fall_back_once_leaked_slots_fill_the_tail, 500)
{
	unsigned int slot = slot_size(sizeof(struct val16)), off;
	long free0, leaked0, expected;
	int cycle, r, fallback = -1;
	struct layout l;

	ASSERT_EQ(0, write_file(REUSE_SYSCTL, "0"));
	layout_read(&l);	/* totals of -1 if unreadable */
	free0 = l.free;
	leaked0 = l.leaked;
	ASSERT_LE(0, free0);
	/* First fit: each free range holds as many slots as fit in it. */
	expected = layout_capacity(&l, slot);
	ASSERT_LE(0, expected);
	for (cycle = 0; cycle < 1000; cycle++) {
		r = one_cycle(_metadata, self->fds, cycle, &off);
		ASSERT_LE(0, r) {
			TH_LOG("cycle %d", cycle);
		}
		if (!r && fallback < 0)
			fallback = cycle;
		if (fallback >= 0) {
			ASSERT_EQ(0, r) TH_LOG("cycle %d inline after fallback", cycle);
		}
	}
	TH_LOG("free %ld bytes, slot %u: fell back at cycle %d", free0, slot, fallback);
	ASSERT_EQ(expected, fallback);
	layout_read(&l);
	EXPECT_EQ(leaked0 + expected * slot, l.leaked);
}

TEST_HARNESS_MAIN
