// SPDX-License-Identifier: GPL-2.0
/*
 * Before a socket exists: LSM programs on sk_alloc_security and
 * sk_clone_security, and fexit programs on security_sk_alloc(), see it
 * inside sk_prot_alloc() or sk_clone_lock(), before either has set it up.
 * A lookup there finds nothing and a create creates nothing, with no oops,
 * whether the map is inline or dynamic: an inline map's tail is empty from
 * the allocation on, and a dynamic map must not follow what the object
 * still holds, the previous occupant's sk_bpf_storage on the clone path
 * (nothing clears the object there unless init_on_alloc=1) or, at
 * sk_clone_security, the listener's, which sock_copy() copied. So the TCP
 * sockets looked at reuse objects whose previous sockets held values of
 * the map (with init_on_alloc=1 or not, whichever this boot has), and the
 * listener holds one too: none of them shows through, and the accepted
 * sockets hold none. That the objects were reused is checked (by
 * address), not assumed. The dynamic map runs at every tail, tail 0
 * included; the inline one needs a tail.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "early.h"
#include "early.skel.h"

#define NR_CONNS	64
#define OLD_MARK	0xdead0000ULL
#define PARENT_MARK	0x9a7e0000ULL

FIXTURE(early) {
	struct early *skel;
	int map, listener;
	struct sockaddr_in addr;
};

FIXTURE_BOOL_VARIANTS(early, dynamic, inline_map, dynamic_map);

/* A map that asks for a slot and got one, once the tests before gave theirs back. */
static int inline_map_fd(void)
{
	unsigned int off, size;
	int fd, i;

	for (i = 0;; i++) {
		fd = create_sk_map(sizeof(struct val8), 0);
		if (fd < 0 || map_slot(fd, &off, &size) == 1 || i == 200)
			return fd;
		close(fd);
		usleep(10000);
	}
}

FIXTURE_SETUP(early)
{
	socklen_t len = sizeof(self->addr);
	struct val8 parent = { .a = PARENT_MARK };
	unsigned int off, size;
	int fd;

	self->listener = -1;
	if (!variant->dynamic && !tail_bytes())
		SKIP(return, "no tail: the inline path is what this variant tests");
	self->skel = early__open();
	ASSERT_NE(NULL, self->skel);
	/* Without map_extra a map is dynamic at every tail. */
	fd = variant->dynamic ? create_sk_map_extra(sizeof(struct val8), 0, 0) :
				inline_map_fd();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bpf_map__reuse_fd(self->skel->maps.map, fd));
	close(fd);
	ASSERT_EQ(0, early__load(self->skel));
	self->map = bpf_map__fd(self->skel->maps.map);
	ASSERT_EQ(!variant->dynamic, map_slot(self->map, &off, &size));

	self->addr.sin_family = AF_INET;
	self->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	self->listener = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, self->listener);
	ASSERT_EQ(0, bind(self->listener, (struct sockaddr *)&self->addr, len));
	ASSERT_EQ(0, getsockname(self->listener, (struct sockaddr *)&self->addr, &len));
	ASSERT_EQ(0, listen(self->listener, NR_CONNS));
	/* What sock_copy() hands the children at sk_clone_security. */
	ASSERT_EQ(0, sys_update(self->map, self->listener, &parent, BPF_NOEXIST));
}

FIXTURE_TEARDOWN(early)
{
	close(self->listener);
	early__destroy(self->skel);
}

/* @n connections: fds[2 * i] the client's, fds[2 * i + 1] the accepted. */
static int connect_n(FIXTURE_DATA(early) *self, int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		fds[2 * i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fds[2 * i] < 0 ||
		    connect(fds[2 * i], (struct sockaddr *)&self->addr, sizeof(self->addr)))
			return -errno;
		fds[2 * i + 1] = accept(self->listener, NULL, NULL);
		if (fds[2 * i + 1] < 0)
			return -errno;
	}
	return 0;
}

/* Reset, not FIN: the sockets are freed now, not after TIME_WAIT. */
static void close_n(int *fds, int n)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int i;

	for (i = 0; i < 2 * n; i++) {
		setsockopt(fds[i], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fds[i]);
	}
}

TEST_F(early, sockets_not_yet_set_up_hold_no_value)
{
	int old[2 * NR_CONNS], fds[2 * NR_CONNS], i, hook;
	struct early_counts *c = self->skel->bss->counts;
	struct val8 v;
	static const char * const names[] = {
		[EARLY_ALLOC_SECURITY] = "lsm/sk_alloc_security",
		[EARLY_CLONE_SECURITY] = "lsm/sk_clone_security",
		[EARLY_FEXIT_SECURITY_SK_ALLOC] = "fexit/security_sk_alloc",
	};

	/* Previous occupants of the TCP objects, each with a value. */
	ASSERT_EQ(0, early__attach(self->skel));
	self->skel->bss->recording = 1;
	self->skel->bss->target_tgid = getpid();
	self->skel->bss->listen_port = ntohs(self->addr.sin_port);
	ASSERT_EQ(0, connect_n(self, old, NR_CONNS));
	self->skel->bss->target_tgid = 0;
	self->skel->bss->listen_port = 0;
	self->skel->bss->recording = 0;
	for (i = 0; i < 2 * NR_CONNS; i++) {
		v.a = OLD_MARK + i;
		ASSERT_EQ(0, sys_update(self->map, old[i], &v, BPF_NOEXIST));
	}
	close_n(old, NR_CONNS);
	/* Their memory is freed a grace period after they are. */
	usleep(300000);

	self->skel->bss->listen_port = ntohs(self->addr.sin_port);
	self->skel->bss->target_tgid = getpid();
	ASSERT_EQ(0, connect_n(self, fds, NR_CONNS));
	self->skel->bss->target_tgid = 0;
	self->skel->bss->listen_port = 0;
	early__detach(self->skel);

	for (hook = 0; hook <= EARLY_FEXIT_SECURITY_SK_ALLOC; hook++) {
		TH_LOG("%s map, %s: %llu calls, %llu found (last %#llx%s), %llu created",
		       variant->dynamic ? "dynamic" : "inline", names[hook],
		       c[hook].calls, c[hook].found, c[hook].last_found,
		       c[hook].found && c[hook].last_found == PARENT_MARK ?
		       ": the listener's" : "", c[hook].created);
		EXPECT_LT(0, c[hook].calls) TH_LOG("%s", names[hook]);
		EXPECT_EQ(0, c[hook].found) TH_LOG("%s", names[hook]);
		EXPECT_EQ(0, c[hook].created) TH_LOG("%s", names[hook]);
	}
	/* Every accepted socket passed the clone hook. */
	EXPECT_LE(NR_CONNS, c[EARLY_CLONE_SECURITY].calls);

	/*
	 * The sockets, once set up, are as any other: empty, and usable; the
	 * listener's value is its own still.
	 */
	for (i = 0; i < 2 * NR_CONNS; i++) {
		v.a = i;
		EXPECT_EQ(-ENOENT, sys_lookup(self->map, fds[i], &v))
			TH_LOG("%s socket %d holds %#llx", i % 2 ? "accepted" : "client",
			       i / 2, (unsigned long long)v.a);
		v.a = i;
		EXPECT_EQ(0, sys_update(self->map, fds[i], &v, BPF_NOEXIST));
	}
	close_n(fds, NR_CONNS);
	EXPECT_EQ(0, sys_lookup(self->map, self->listener, &v));
	EXPECT_EQ(PARENT_MARK, v.a);

	/* The new sockets took objects that held values before. */
	TH_LOG("%llu of the new sockets reuse an object that held a value",
	       self->skel->bss->reused);
	/* A skip would hide a failure above: only without one. */
	if (!self->skel->bss->reused && _metadata->exit_code == KSFT_PASS)
		SKIP(return, "no object of the old sockets was handed out again");
	/* Every client socket passed both alloc hooks. */
	EXPECT_LE(NR_CONNS, c[EARLY_ALLOC_SECURITY].calls);
	EXPECT_LE(NR_CONNS, c[EARLY_FEXIT_SECURITY_SK_ALLOC].calls);
}

TEST_HARNESS_MAIN
