// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets keep working when every full socket carries an inline tail:
 * TCP and UDP over IPv4 and IPv6, UNIX, netlink and packet sockets (the
 * last two kmalloc() their sockets instead of using a cache of their own).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "sk_inline_util.h"

FIXTURE(ip)
{
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

FIXTURE_VARIANT(ip)
{
	int family;
};

FIXTURE_VARIANT_ADD(ip, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(ip, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(ip)
{
	memset(&self->addr, 0, sizeof(self->addr));
	if (variant->family == AF_INET) {
		struct sockaddr_in *sin = (void *)&self->addr;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		self->addrlen = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (void *)&self->addr;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		self->addrlen = sizeof(*sin6);
	}
}

FIXTURE_TEARDOWN(ip)
{
}

/* Bind @fd to the loopback address on an ephemeral port; record it. */
static int bind_loopback(int fd, struct sockaddr_storage *addr, socklen_t *len)
{
	if (bind(fd, (struct sockaddr *)addr, *len))
		return -errno;
	return getsockname(fd, (struct sockaddr *)addr, len) ? -errno : 0;
}

TEST_F(ip, tcp_connect_accept_and_transfer_a_megabyte)
{
	const size_t total = 1 << 20;
	int lfd, cfd, afd, i;
	size_t sent = 0, rcvd = 0;
	char buf[4096], *out;
	unsigned long sum_out = 0, sum_in = 0;
	pid_t pid;
	int status;

	lfd = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, bind_loopback(lfd, &self->addr, &self->addrlen));
	ASSERT_EQ(0, listen(lfd, 1));
	cfd = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, connect(cfd, (struct sockaddr *)&self->addr, self->addrlen));
	afd = accept(lfd, NULL, NULL);
	ASSERT_LE(0, afd);

	out = malloc(total);
	ASSERT_NE(NULL, out);
	for (i = 0; i < total; i++) {
		out[i] = (char)(i * 7 + i / 251);
		sum_out += (unsigned char)out[i];
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		while (sent < total) {
			ssize_t n = send(cfd, out + sent, total - sent, 0);

			if (n <= 0)
				_exit(1);
			sent += n;
		}
		_exit(0);
	}
	while (rcvd < total) {
		ssize_t n = recv(afd, buf, sizeof(buf), 0);

		ASSERT_LT(0, n);
		for (i = 0; i < n; i++)
			sum_in += (unsigned char)buf[i];
		rcvd += n;
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(total, rcvd);
	ASSERT_EQ(sum_out, sum_in);
	free(out);
	close(afd);
	close(cfd);
	close(lfd);
}

TEST_F(ip, udp_datagrams_round_trip)
{
	struct sockaddr_storage peer;
	socklen_t peerlen = sizeof(peer);
	char msg[64], buf[64];
	int rfd, sfd, i;

	rfd = socket(variant->family, SOCK_DGRAM, 0);
	ASSERT_LE(0, rfd);
	ASSERT_EQ(0, bind_loopback(rfd, &self->addr, &self->addrlen));
	sfd = socket(variant->family, SOCK_DGRAM, 0);
	ASSERT_LE(0, sfd);
	for (i = 0; i < 100; i++) {
		snprintf(msg, sizeof(msg), "datagram %d", i);
		ASSERT_EQ(strlen(msg), sendto(sfd, msg, strlen(msg), 0,
					      (struct sockaddr *)&self->addr,
					      self->addrlen));
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(strlen(msg), recvfrom(rfd, buf, sizeof(buf), 0,
						(struct sockaddr *)&peer, &peerlen));
		ASSERT_STREQ(msg, buf);
	}
	close(sfd);
	close(rfd);
}

TEST_F(ip, a_thousand_sockets_are_open_and_connected_at_once)
{
	enum { PAIRS = 500 };
	struct rlimit rl = { 4096, 4096 };
	int lfd, c[PAIRS], a[PAIRS], i;
	char byte;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	lfd = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, bind_loopback(lfd, &self->addr, &self->addrlen));
	ASSERT_EQ(0, listen(lfd, PAIRS));
	for (i = 0; i < PAIRS; i++) {
		c[i] = socket(variant->family, SOCK_STREAM, 0);
		ASSERT_LE(0, c[i]);
		ASSERT_EQ(0, connect(c[i], (struct sockaddr *)&self->addr,
				     self->addrlen));
		a[i] = accept(lfd, NULL, NULL);
		ASSERT_LE(0, a[i]);
	}
	for (i = 0; i < PAIRS; i++) {
		byte = (char)i;
		ASSERT_EQ(1, send(c[i], &byte, 1, 0));
	}
	for (i = 0; i < PAIRS; i++) {
		ASSERT_EQ(1, recv(a[i], &byte, 1, 0));
		ASSERT_EQ((char)i, byte);
		close(a[i]);
		close(c[i]);
	}
	close(lfd);
}

TEST(unix_stream_and_dgram_pairs_carry_data)
{
	int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };
	char buf[32];
	int sv[2], i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, socketpair(AF_UNIX, types[i], 0, sv));
		ASSERT_EQ(5, send(sv[0], "hello", 5, 0));
		ASSERT_EQ(5, recv(sv[1], buf, sizeof(buf), 0));
		ASSERT_EQ(0, memcmp(buf, "hello", 5));
		close(sv[0]);
		close(sv[1]);
	}
}

TEST(netlink_socket_dumps_the_loopback_link)
{
	struct {
		struct nlmsghdr nlh;
		struct ifinfomsg ifm;
	} req = {
		.nlh.nlmsg_len = sizeof(req),
		.nlh.nlmsg_type = RTM_GETLINK,
		.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.ifm.ifi_family = AF_UNSPEC,
	};
	char buf[16384];
	int fd, lo = if_nametoindex("lo"), seen = 0;
	ssize_t n;

	ASSERT_LT(0, lo);
	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	ASSERT_LE(0, fd);
	ASSERT_EQ(sizeof(req), send(fd, &req, sizeof(req), 0));
	while (!seen) {
		struct nlmsghdr *nlh;

		n = recv(fd, buf, sizeof(buf), 0);
		ASSERT_LT(0, n);
		for (nlh = (void *)buf; NLMSG_OK(nlh, n); nlh = NLMSG_NEXT(nlh, n)) {
			if (nlh->nlmsg_type == NLMSG_DONE)
				goto out;
			ASSERT_NE(NLMSG_ERROR, nlh->nlmsg_type);
			if (((struct ifinfomsg *)NLMSG_DATA(nlh))->ifi_index == lo)
				seen = 1;
		}
	}
out:
	ASSERT_TRUE(seen);
	close(fd);
}

TEST(packet_socket_sees_loopback_traffic)
{
	struct sockaddr_ll ll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
	};
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_port = htons(9),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct timeval tv = { .tv_sec = 5 };
	const char *marker = "inline-tail-packet-probe";
	char buf[2048];
	int pfd, ufd, found = 0, i;
	ssize_t n;

	ll.sll_ifindex = if_nametoindex("lo");
	ASSERT_LT(0, ll.sll_ifindex);
	pfd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	ASSERT_LE(0, pfd);
	ASSERT_EQ(0, bind(pfd, (struct sockaddr *)&ll, sizeof(ll)));
	ASSERT_EQ(0, setsockopt(pfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ufd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, ufd);
	ASSERT_LT(0, sendto(ufd, marker, strlen(marker), 0,
			    (struct sockaddr *)&dst, sizeof(dst)));
	for (i = 0; i < 32 && !found; i++) {
		n = recv(pfd, buf, sizeof(buf), 0);
		ASSERT_LT(0, n);
		found = memmem(buf, n, marker, strlen(marker)) != NULL;
	}
	ASSERT_TRUE(found);
	close(ufd);
	close(pfd);
}

TEST_HARNESS_MAIN
