/* SPDX-License-Identifier: GPL-2.0 */
/* The kinds of socket the tests open, each test choosing its own. */
#ifndef SK_SOCK_KINDS_H
#define SK_SOCK_KINDS_H

#include <stdbool.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef AF_XDP
#define AF_XDP	44
#endif

#define KIND_DESTRUCT	(1U << 0)	/* destruct.c */
#define KIND_PROTOCOLS	(1U << 1)	/* protocols.c */

struct sock_kind {
	int family, type, protocol;
	const char *name;
	const char *proto;	/* as /proc/net/protocols names it */
	unsigned int tests;	/* KIND_*: the tests that open it */
	bool rcu_freed;	/* SOCK_RCU_FREE: destructed after a grace period */
};

static const struct sock_kind sock_kinds[] = {
	{ AF_UNIX, SOCK_STREAM, 0, "unix stream", "UNIX-STREAM", KIND_DESTRUCT | KIND_PROTOCOLS },
	{ AF_UNIX, SOCK_DGRAM, 0, "unix dgram", "UNIX", KIND_DESTRUCT | KIND_PROTOCOLS },
	{ AF_UNIX, SOCK_SEQPACKET, 0, "unix seqpacket", "UNIX", KIND_DESTRUCT },
	{ AF_INET, SOCK_STREAM, 0, "tcp", "TCP", KIND_DESTRUCT | KIND_PROTOCOLS },
	{ AF_INET, SOCK_DGRAM, 0, "udp", "UDP", KIND_DESTRUCT | KIND_PROTOCOLS },
	{ AF_INET, SOCK_RAW, IPPROTO_ICMP, "raw", "RAW", KIND_DESTRUCT, true },
	{ AF_INET6, SOCK_STREAM, 0, "tcpv6", "TCPv6", KIND_DESTRUCT | KIND_PROTOCOLS },
	{ AF_INET6, SOCK_DGRAM, 0, "udpv6", "UDPv6", KIND_DESTRUCT | KIND_PROTOCOLS },
	{ AF_NETLINK, SOCK_RAW, 0, "netlink", "NETLINK", KIND_PROTOCOLS },
	{ AF_PACKET, SOCK_DGRAM, 0, "packet", "PACKET", KIND_DESTRUCT | KIND_PROTOCOLS },
	{ AF_VSOCK, SOCK_STREAM, 0, "vsock", "AF_VSOCK", KIND_DESTRUCT },
	{ AF_XDP, SOCK_RAW, 0, "xdp", "XDP", KIND_DESTRUCT, true },
};

#define NR_SOCK_KINDS	(sizeof(sock_kinds) / sizeof(sock_kinds[0]))

/* The kinds @test opens, in the table's order, in @out: how many. */
static inline int sock_kinds_of(unsigned int test, const struct sock_kind **out)
{
	unsigned int i;
	int n = 0;

	for (i = 0; i < NR_SOCK_KINDS; i++)
		if (sock_kinds[i].tests & test)
			out[n++] = &sock_kinds[i];
	return n;
}

#endif
