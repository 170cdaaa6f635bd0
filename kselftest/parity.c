// SPDX-License-Identifier: GPL-2.0
/*
 * Inline and dynamic storage answer alike. An inline map and a dynamic
 * twin of the same value type get the same values on the same sockets
 * (lsm/socket_post_create, and sock_ops for accepted TCP sockets); then
 * programs on the hooks a socket passes until it is freed look both up:
 * fentry on inet_release, unix_release and tcp_close, fexit on
 * tcp_close, where the close may have destroyed the socket (a reset, or
 * the peer's FIN and ACK were in), and lsm/sk_free_security after the
 * destructors, where a create is tried too. Each hook must have run, and
 * no call may have had a value from one map and none or another from the
 * other: a program cannot tell which path its map is on. TCP closed by
 * both sides and reset (SO_LINGER 0), UDP, UNIX stream and datagram.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "parity.h"
#include "parity.skel.h"

#define HOOK(h)	(1U << (h))
/* Hooks every test's sockets pass. */
#define ALWAYS	(HOOK(PARITY_POST_CREATE) | HOOK(PARITY_SK_FREE) | \
		 HOOK(PARITY_SK_FREE_CREATE))
#define TCP	(ALWAYS | HOOK(PARITY_SOCKOPS) | HOOK(PARITY_INET_RELEASE) | \
		 HOOK(PARITY_TCP_CLOSE_ENTRY) | HOOK(PARITY_TCP_CLOSE_EXIT))
/* Where the socket is alive: a value in both maps, on every call. */
#define ALIVE	(HOOK(PARITY_POST_CREATE) | HOOK(PARITY_SOCKOPS) | \
		 HOOK(PARITY_INET_RELEASE) | HOOK(PARITY_UNIX_RELEASE) | \
		 HOOK(PARITY_TCP_CLOSE_ENTRY))

static const char * const hook_names[PARITY_NR_HOOKS] = {
	[PARITY_POST_CREATE] = "lsm/socket_post_create",
	[PARITY_SOCKOPS] = "sockops established",
	[PARITY_INET_RELEASE] = "fentry/inet_release",
	[PARITY_UNIX_RELEASE] = "fentry/unix_release",
	[PARITY_TCP_CLOSE_ENTRY] = "fentry/tcp_close",
	[PARITY_TCP_CLOSE_EXIT] = "fexit/tcp_close",
	[PARITY_SK_FREE] = "lsm/sk_free_security",
	[PARITY_SK_FREE_CREATE] = "lsm/sk_free_security F_CREATE",
};

FIXTURE(parity) {
	struct parity *skel;
	struct bpf_link *sockops;
};

FIXTURE_SETUP(parity)
{
	unsigned int off, size;
	int i;

	if (!tail_bytes())
		SKIP(return, "no tail: no inline map to compare with");
	/* The slots of the tests before are back a grace period after their maps' free. */
	for (i = 0; i < 200 && !tail_has_room(sizeof(struct val8)); i++)
		usleep(10000);
	self->skel = parity__open_and_load();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(1, map_slot(bpf_map__fd(self->skel->maps.inl), &off, &size));
	ASSERT_EQ(0, map_slot(bpf_map__fd(self->skel->maps.dyn), &off, &size));
	/* Auto-attaches all but sock_ops. */
	ASSERT_EQ(0, parity__attach(self->skel));
	self->sockops = attach_root_cgroup(self->skel->progs.established);
	ASSERT_NE(NULL, self->sockops);
	self->skel->bss->target_tgid = getpid();
}

FIXTURE_TEARDOWN(parity)
{
	bpf_link__destroy(self->sockops);
	parity__destroy(self->skel);
}

static int mark(int fd)
{
	int m = PARITY_MARK;

	return setsockopt(fd, SOL_SOCKET, SO_MARK, &m, sizeof(m)) ? -errno : 0;
}

static void set_linger0(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

/* A byte each way over a connected pair: 0, or -1. */
static int exchange(int a, int b)
{
	char c = 'p';

	return write(a, &c, 1) == 1 && read(b, &c, 1) == 1 &&
	       write(b, &c, 1) == 1 && read(a, &c, 1) == 1 ? 0 : -1;
}

/*
 * Wait until @n marked sockets were freed (UDP sockets and TCP listeners
 * a grace period after their close), then check every hook: those in
 * @ran ran, and no call diverged.
 */
static void check(struct __test_metadata *_metadata,
		  FIXTURE_DATA(parity) *self, unsigned int n, unsigned int ran)
{
	struct parity_counts *c = self->skel->bss->counts;
	unsigned long long diverged;
	int h, i;

	for (i = 0; i < 300 && c[PARITY_SK_FREE].calls < n; i++)
		usleep(10000);
	self->skel->bss->target_tgid = 0;
	EXPECT_EQ(n, c[PARITY_SK_FREE].calls);
	for (h = 0; h < PARITY_NR_HOOKS; h++, c++) {
		diverged = c->inline_only + c->dynamic_only + c->differ;
		TH_LOG("%-30s %3llu calls: %3llu both, %3llu neither, %llu inline only, %llu dynamic only, %llu differ%s",
		       hook_names[h], c->calls, c->both, c->neither, c->inline_only,
		       c->dynamic_only, c->differ, diverged ? " DIVERGED" : "");
		if (ran & HOOK(h))
			EXPECT_LT(0, c->calls) TH_LOG("%s did not run", hook_names[h]);
		if (ALIVE & HOOK(h))
			EXPECT_EQ(c->calls, c->both) TH_LOG("%s", hook_names[h]);
		EXPECT_EQ(0, diverged)
			TH_LOG("%s: last inline value %#llx", hook_names[h], c->last_inline);
	}
}

/* Connected TCP sockets, marked: c->cfd the client's, c->afd the accepted. */
static int tcp_pair(struct tcp_conn *c)
{
	struct sockaddr_in addr;

	if (tcp_listen(c, &addr) || mark(c->lfd) || tcp_accept(c, &addr) ||
	    mark(c->cfd))
		return -1;
	return exchange(c->cfd, c->afd);
}

/* FIN from the client, then the server's: its close takes in the client's ACK. */
TEST_F(parity, tcp_closed_by_both_sides)
{
	struct tcp_conn c;
	char byte;

	ASSERT_EQ(0, tcp_pair(&c));
	close(c.cfd);
	ASSERT_EQ(0, read(c.afd, &byte, 1));
	close(c.afd);
	close(c.lfd);
	check(_metadata, self, 3, TCP);
}

/* SO_LINGER 0: each close resets, and destroys its socket there. */
TEST_F(parity, tcp_reset)
{
	struct tcp_conn c;
	char byte;

	ASSERT_EQ(0, tcp_pair(&c));
	set_linger0(c.cfd);
	set_linger0(c.afd);
	close(c.cfd);
	EXPECT_GT(0, read(c.afd, &byte, 1));	/* ECONNRESET */
	close(c.afd);
	close(c.lfd);
	check(_metadata, self, 3, TCP);
}

TEST_F(parity, udp)
{
	struct sockaddr_in a_addr, b_addr;
	int a, b;

	a = loopback_socket(SOCK_DGRAM, &a_addr);
	b = loopback_socket(SOCK_DGRAM, &b_addr);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, mark(a));
	ASSERT_EQ(0, mark(b));
	ASSERT_EQ(0, connect(a, (struct sockaddr *)&b_addr, sizeof(b_addr)));
	ASSERT_EQ(0, connect(b, (struct sockaddr *)&a_addr, sizeof(a_addr)));
	ASSERT_EQ(0, exchange(a, b));
	close(a);
	close(b);
	check(_metadata, self, 2, ALWAYS | HOOK(PARITY_INET_RELEASE));
}

TEST_F(parity, unix_stream_and_dgram)
{
	static const int types[] = { SOCK_STREAM, SOCK_DGRAM };
	int sv[2], i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, socketpair(AF_UNIX, types[i], 0, sv));
		ASSERT_EQ(0, mark(sv[0]));
		ASSERT_EQ(0, mark(sv[1]));
		ASSERT_EQ(0, exchange(sv[0], sv[1]));
		close(sv[0]);
		close(sv[1]);
	}
	check(_metadata, self, 4, ALWAYS | HOOK(PARITY_UNIX_RELEASE));
}

TEST_HARNESS_MAIN
