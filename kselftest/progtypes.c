// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_sk_storage_get() on inline maps from the program types that can call
 * it: cgroup_skb egress, tc egress through bpf_sk_fullsock() and fentry (the
 * helper's _tracing variant) count the packets a socket sends;
 * cgroup/sock_create marks new sockets; sock_ops counts connections.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "progtypes.skel.h"

#define PACKETS	50

FIXTURE(progtypes)
{
	struct progtypes *skel;
	struct bpf_link *cgroup_skb, *fentry;
	struct bpf_tc_hook hook;
	int tx, rx;
	struct sockaddr_in rx_addr;
};

FIXTURE_SETUP(progtypes)
{
	LIBBPF_OPTS(bpf_tc_opts, tc);
	struct sockaddr_in addr;

	memset(&self->hook, 0, sizeof(self->hook));
	self->hook.sz = sizeof(self->hook);
	self->hook.ifindex = if_nametoindex("lo");
	self->hook.attach_point = BPF_TC_EGRESS;

	self->tx = loopback_socket(SOCK_DGRAM, &addr);
	self->rx = loopback_socket(SOCK_DGRAM, &self->rx_addr);
	ASSERT_LE(0, self->tx);
	ASSERT_LE(0, self->rx);

	self->skel = progtypes__open_and_load();
	ASSERT_NE(NULL, self->skel);
	self->skel->bss->port = ntohs(addr.sin_port);

	self->cgroup_skb = attach_root_cgroup(self->skel->progs.count_egress);
	ASSERT_NE(NULL, self->cgroup_skb);
	self->fentry = bpf_program__attach(self->skel->progs.count_udp_sendmsg);
	ASSERT_NE(NULL, self->fentry);
	ASSERT_EQ(0, bpf_tc_hook_create(&self->hook));
	tc.prog_fd = bpf_program__fd(self->skel->progs.count_tc_egress);
	ASSERT_EQ(0, bpf_tc_attach(&self->hook, &tc));
}

FIXTURE_TEARDOWN(progtypes)
{
	struct slot_ref refs[5] = {
		slot_ref(bpf_map__fd(self->skel->maps.count_cgroup_skb)),
		slot_ref(bpf_map__fd(self->skel->maps.count_tc)),
		slot_ref(bpf_map__fd(self->skel->maps.count_fentry)),
		slot_ref(bpf_map__fd(self->skel->maps.mark_sock_create)),
		slot_ref(bpf_map__fd(self->skel->maps.count_sock_ops)),
	};
	int i;

	/* Both attach points: remove the clsact qdisc, not only our filter. */
	self->hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	bpf_tc_hook_destroy(&self->hook);
	bpf_link__destroy(self->cgroup_skb);
	bpf_link__destroy(self->fentry);
	progtypes__destroy(self->skel);
	close(self->tx);
	close(self->rx);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, wait_released(refs[i]));
}

static void send_packets(struct __test_metadata *_metadata,
			 FIXTURE_DATA(progtypes) *self)
{
	char buf[16];
	int i;

	for (i = 0; i < PACKETS; i++) {
		ASSERT_EQ(4, sendto(self->tx, "ping", 4, 0,
				    (struct sockaddr *)&self->rx_addr,
				    sizeof(self->rx_addr)));
		ASSERT_EQ(4, recv(self->rx, buf, sizeof(buf), 0));
	}
}

static void expect_count_of(struct __test_metadata *_metadata,
			    struct bpf_map *map, int fd, __u64 expected)
{
	unsigned int tail = tail_bytes(), off, size;
	struct val8 v = {};

	ASSERT_EQ(0, sys_lookup(bpf_map__fd(map), fd, &v));
	EXPECT_EQ(expected, v.a);
	/* The five maps fit in any tail of 80 bytes or more. */
	if (tail >= 5 * slot_size(sizeof(v))) {
		EXPECT_EQ(1, map_slot(bpf_map__fd(map), &off, &size));
	} else if (!tail) {
		EXPECT_EQ(0, map_slot(bpf_map__fd(map), &off, &size));
	}
}

#define expect_count(_metadata, map, fd) \
	expect_count_of(_metadata, map, fd, PACKETS)

TEST_F(progtypes, cgroup_skb_program_counts_in_the_socket_storage)
{
	send_packets(_metadata, self);
	expect_count(_metadata, self->skel->maps.count_cgroup_skb, self->tx);
}

TEST_F(progtypes, tc_program_counts_in_the_socket_storage)
{
	send_packets(_metadata, self);
	expect_count(_metadata, self->skel->maps.count_tc, self->tx);
}

TEST_F(progtypes, fentry_program_counts_in_the_socket_storage)
{
	send_packets(_metadata, self);
	expect_count(_metadata, self->skel->maps.count_fentry, self->tx);
}

TEST_F(progtypes, sock_create_program_marks_new_sockets)
{
	struct bpf_link *link;
	struct val8 v;
	int lite, udp;

	self->skel->data->mark_protocol = IPPROTO_UDPLITE;
	link = attach_root_cgroup(self->skel->progs.mark_new_socket);
	ASSERT_NE(NULL, link);
	lite = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE);
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	bpf_link__destroy(link);
	ASSERT_LE(0, lite);
	ASSERT_LE(0, udp);
	expect_count_of(_metadata, self->skel->maps.mark_sock_create, lite, 0x50c4);
	EXPECT_EQ(-ENOENT, sys_lookup(bpf_map__fd(self->skel->maps.mark_sock_create),
				      udp, &v));
	close(lite);
	close(udp);
}

TEST_F(progtypes, sock_ops_program_counts_established_connections)
{
	struct sockaddr_in addr;
	struct bpf_link *link;
	struct tcp_conn c;

	ASSERT_EQ(0, tcp_listen(&c, &addr));
	self->skel->bss->port = ntohs(addr.sin_port);
	link = attach_root_cgroup(self->skel->progs.count_established);
	ASSERT_NE(NULL, link);
	ASSERT_EQ(0, tcp_accept(&c, &addr));
	bpf_link__destroy(link);
	expect_count_of(_metadata, self->skel->maps.count_sock_ops, c.cfd, 1);
	expect_count_of(_metadata, self->skel->maps.count_sock_ops, c.afd, 1);
	tcp_close(&c);
}

TEST_HARNESS_MAIN
