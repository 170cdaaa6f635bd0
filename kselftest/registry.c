// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of sockets holding inline values writes nothing into a
 * socket but the socket's own first value: sockets coming and going
 * around one that holds a value, in the same buckets, leave the bytes in
 * front of its tail and its slot as they were. A link inside the socket
 * had neighbours' adds and removes write into it, on the line of the
 * first slot, that of a possibly busy connection.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <sys/resource.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "registry.skel.h"

/*
 * Sockets with a value alive at a time, and how often they are replaced:
 * 2048 different sockets put 8 in each of the registry's 256 buckets on
 * average, so the watched socket's bucket gets neighbours but once in
 * e^8 runs.
 */
#define CHURN_LIVE	2048
#define CHURN_ROUNDS	4

static int snapshot(struct registry *skel)
{
	struct bpf_link *link;
	char buf[64];
	int fd;

	skel->bss->found = 0;
	link = bpf_program__attach_iter(skel->progs.snapshot, NULL);
	if (!link)
		return -1;
	fd = bpf_iter_create(bpf_link__fd(link));
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	return skel->bss->found == 1 ? 0 : -1;
}

FIXTURE(registry) {
	struct registry *skel;
	int map, sk;
};

FIXTURE_SETUP(registry)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	unsigned int off, size;
	__u64 v = 42;

	self->sk = -1;
	self->skel = registry__open_and_load();
	ASSERT_NE(NULL, self->skel);
	self->map = bpf_map__fd(self->skel->maps.inline_map);
	if (map_slot(self->map, &off, &size) != 1)
		SKIP(return, "the map has no slot at this tail");
	self->skel->bss->slot_off = off;
	self->skel->bss->link_bytes = INLINE_LINK_BYTES;
	self->sk = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, self->sk);
	ASSERT_EQ(0, bind(self->sk, (void *)&a, sizeof(a)));
	ASSERT_EQ(0, getsockname(self->sk, (void *)&a, &len));
	self->skel->bss->port = ntohs(a.sin_port);
	ASSERT_EQ(0, sys_update(self->map, self->sk, &v, BPF_NOEXIST));
}

FIXTURE_TEARDOWN(registry)
{
	if (self->sk >= 0)
		close(self->sk);
	registry__destroy(self->skel);
}

/* Bytes of the watched socket's tail that differ from @link and @slot. */
static int changed_bytes(struct __test_metadata *_metadata, struct registry *skel,
			 const __u8 *link, const __u8 *slot, const char *when)
{
	int k, first = -1, changed = 0;

	for (k = 0; k < INLINE_LINK_BYTES; k++)
		if (link[k] != skel->bss->link_copy[k] && changed++ < 1)
			first = k - INLINE_LINK_BYTES;
	for (k = 0; k < (int)sizeof(skel->bss->slot_copy); k++)
		if (slot[k] != skel->bss->slot_copy[k] && changed++ < 1)
			first = k;
	if (changed)
		TH_LOG("%s: %d bytes changed, the first at %d from the tail", when,
		       changed, first);
	return changed;
}

TEST_F(registry, neighbours_leave_a_sockets_tail_alone)
{
	__u8 link[sizeof(self->skel->bss->link_copy)];
	__u8 slot[sizeof(self->skel->bss->slot_copy)];
	struct rlimit nofile = { CHURN_LIVE + 64, CHURN_LIVE + 64 };
	int live[CHURN_LIVE], r, k, changed = 0;
	__u64 v = 7, got = 0;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &nofile));
	ASSERT_EQ(0, snapshot(self->skel));
	memcpy(link, self->skel->bss->link_copy, sizeof(link));
	memcpy(slot, self->skel->bss->slot_copy, sizeof(slot));
	/*
	 * Looked at while the neighbours are there, and after they left: a
	 * link in the socket would point at them, then back at the bucket.
	 */
	for (r = 0; r < CHURN_ROUNDS; r++) {
		for (k = 0; k < CHURN_LIVE; k++) {
			live[k] = socket(AF_INET, SOCK_DGRAM, 0);
			ASSERT_LE(0, live[k]);
			ASSERT_EQ(0, sys_update(self->map, live[k], &v, BPF_NOEXIST));
		}
		ASSERT_EQ(0, snapshot(self->skel));
		changed += changed_bytes(_metadata, self->skel, link, slot, "neighbours in");
		for (k = 0; k < CHURN_LIVE; k++)
			close(live[k]);
		ASSERT_EQ(0, snapshot(self->skel));
		changed += changed_bytes(_metadata, self->skel, link, slot, "neighbours gone");
	}
	EXPECT_EQ(0, changed);
	ASSERT_EQ(0, sys_lookup(self->map, self->sk, &got));
	EXPECT_EQ(42, got);
}

TEST_HARNESS_MAIN
