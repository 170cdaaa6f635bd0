// SPDX-License-Identifier: GPL-2.0
/*
 * sk-tax-open: join a cgroup, open N sockets of one protocol and hold
 * them, for tools/sk-tax to read memory.current around. No BPF program.
 *
 *   sk-tax-open [-c CGROUP] [-v BYTES] PROTO N
 *
 * Joins CGROUP (a cgroup v2 directory), raises RLIMIT_NOFILE and grows
 * the fd table to its final size, prints "ready 0", waits for a line on
 * stdin, opens the sockets, prints "ready SOCKETS" (UNIX, UNIX-STREAM:
 * N socketpairs, 2N sockets) and waits for stdin to close before it exits.
 * With -v, after "ready SOCKETS" it waits for another line, creates an sk
 * storage map that does not ask for a slot (upstream's dynamic storage),
 * gives every socket a BYTES value through the syscall and prints
 * "values SOCKETS": what a socket's first dynamic value costs.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/vm_sockets.h>

#define TOOL_NAME "sk-tax-open"
#include "tool_util.h"
#include "../kselftest/sk_inline_util.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/* Names as in /proc/net/protocols. */
static const struct {
	const char *name;
	int family, type, protocol;
} protos[] = {
	{ "UNIX",	AF_UNIX,	SOCK_DGRAM,	0 },	/* socketpairs */
	{ "UNIX-STREAM", AF_UNIX,	SOCK_STREAM,	0 },	/* socketpairs */
	{ "TCP",	AF_INET,	SOCK_STREAM,	IPPROTO_TCP },
	{ "TCPv6",	AF_INET6,	SOCK_STREAM,	IPPROTO_TCP },
	{ "UDP",	AF_INET,	SOCK_DGRAM,	IPPROTO_UDP },
	{ "UDPv6",	AF_INET6,	SOCK_DGRAM,	IPPROTO_UDP },
	{ "NETLINK",	AF_NETLINK,	SOCK_RAW,	NETLINK_ROUTE },
	{ "PACKET",	AF_PACKET,	SOCK_RAW,	0 },	/* no protocol: no hook */
	{ "RAW",	AF_INET,	SOCK_RAW,	IPPROTO_ICMP },
	{ "RAWv6",	AF_INET6,	SOCK_RAW,	IPPROTO_ICMPV6 },
	{ "PING",	AF_INET,	SOCK_DGRAM,	IPPROTO_ICMP },
	{ "PINGv6",	AF_INET6,	SOCK_DGRAM,	IPPROTO_ICMPV6 },
	{ "MPTCP",	AF_INET,	SOCK_STREAM,	IPPROTO_MPTCP },
	{ "MPTCPv6",	AF_INET6,	SOCK_STREAM,	IPPROTO_MPTCP },
	{ "UDP-Lite",	AF_INET,	SOCK_DGRAM,	IPPROTO_UDPLITE },
	{ "UDPLITEv6",	AF_INET6,	SOCK_DGRAM,	IPPROTO_UDPLITE },
	{ "AF_VSOCK",	AF_VSOCK,	SOCK_STREAM,	0 },
	{ "XDP",	AF_XDP,		SOCK_RAW,	0 },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: sk-tax-open [-c CGROUP] [-v BYTES] PROTO N\n"
		"Join CGROUP, print \"ready 0\", wait for a line on stdin, open N\n"
		"sockets of PROTO (UNIX, UNIX-STREAM: N socketpairs), print\n"
		"\"ready SOCKETS\" and hold them until stdin closes. With -v, wait\n"
		"for another line, give each socket a value of BYTES (1..4096) in an\n"
		"sk storage map that does not ask for a slot (the dynamic storage),\n"
		"created in CGROUP, and print \"values SOCKETS\". PROTO is one of:\n");
	for (i = 0; i < ARRAY_SIZE(protos); i++)
		fprintf(f, " %s", protos[i].name);
	fprintf(f, "\nExit status 3: this kernel or user cannot create PROTO sockets.\n");
}

static int wait_line(void)
{
	char c;
	ssize_t n;

	while ((n = read(0, &c, 1)) == 1)
		if (c == '\n')
			return 0;
	return -1;
}

int main(int argc, char **argv)
{
	const char *cg = NULL;
	struct rlimit rl;
	long n, i, opened = 0, value_bytes = 0;
	int opt, fd, map, first_fd = -1, sv[2];
	static char value[4096];
	char *end;
	size_t p;

	while ((opt = getopt(argc, argv, "c:v:h")) != -1) {
		if (opt == 'c') {
			cg = optarg;
		} else if (opt == 'v') {
			errno = 0;
			value_bytes = strtol(optarg, &end, 10);
			if (errno || *end || value_bytes < 1 || value_bytes > (long)sizeof(value))
				die("-v %s: value bytes must be 1..%zu", optarg, sizeof(value));
		} else {
			usage_exit(usage, opt);
		}
	}
	if (argc - optind != 2)
		usage_exit(usage, '?');
	for (p = 0; p < ARRAY_SIZE(protos); p++)
		if (!strcmp(protos[p].name, argv[optind]))
			break;
	if (p == ARRAY_SIZE(protos))
		die("unknown protocol %s", argv[optind]);
	n = atol(argv[optind + 1]);
	if (n <= 0)
		die("N must be positive");

	/* One socket first, outside the measurement: can we at all? */
	fd = socket(protos[p].family, protos[p].type, protos[p].protocol);
	if (fd < 0) {
		fprintf(stderr, TOOL_NAME ": %s: %s\n", protos[p].name, strerror(errno));
		return 3;
	}
	close(fd);

	if (cg) {
		char path[512], pid[32];
		int cfd;

		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		snprintf(pid, sizeof(pid), "%d\n", getpid());
		cfd = open(path, O_WRONLY);
		if (cfd < 0 || write(cfd, pid, strlen(pid)) < 0)
			die("join %s: %s", cg, strerror(errno));
		close(cfd);
	}

	rl.rlim_cur = rl.rlim_max = 2 * n + 64;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("RLIMIT_NOFILE %ld: %s", 2 * n + 64, strerror(errno));
	/* The fd table grows once, here, before the first reading. */
	if (dup2(0, 2 * n + 32) < 0)
		die("dup2: %s", strerror(errno));
	close(2 * n + 32);

	printf("ready 0\n");
	fflush(stdout);
	if (wait_line())
		return 0;

	for (i = 0; i < n; i++) {
		if (protos[p].family == AF_UNIX) {
			if (socketpair(AF_UNIX, protos[p].type, 0, sv))
				die("socketpair %ld: %s", i, strerror(errno));
			fd = sv[0];
			opened += 2;
		} else {
			fd = socket(protos[p].family, protos[p].type, protos[p].protocol);
			if (fd < 0)
				die("socket %s %ld: %s", protos[p].name, i, strerror(errno));
			opened++;
		}
		if (first_fd < 0)
			first_fd = fd;
	}
	printf("ready %ld\n", opened);
	fflush(stdout);
	if (value_bytes) {
		if (wait_line())
			return 0;
		/* The fds are consecutive: the sockets' from first_fd on. */
		/* No map_extra: upstream's dynamic storage. */
		map = create_sk_map_named("sk_tax_value", value_bytes, 0, 0);
		if (map < 0)
			die("sk storage map of %ld bytes: %s", value_bytes, strerror(-map));
		for (fd = first_fd; fd < first_fd + opened; fd++)
			if (bpf_map_update_elem(map, &fd, value, BPF_NOEXIST))
				die("value of socket fd %d: %s", fd, strerror(errno));
		printf("values %ld\n", opened);
		fflush(stdout);
	}
	while (wait_line() == 0)
		;
	return 0;
}
