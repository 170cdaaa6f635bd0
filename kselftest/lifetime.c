// SPDX-License-Identifier: GPL-2.0
/*
 * An sk storage value stays inside memory that is still its socket's for
 * as long as anyone may hold a pointer to it, on the inline path as on the
 * dynamic one. Each test holds a window open with a program (lifetime.bpf.c)
 * on the thread under test, pinned to CPU 0, while a thread pinned to CPU 1
 * frees the socket or the map in the middle of the window and allocates
 * new ones of the same kind, which reuse freed memory at once if nothing
 * defers its free:
 *
 * - a syscall lookup copies the value after the socket's file reference
 *   is dropped (UNIX, unbound UDP and TCP sockets);
 * - a program writes into a value after bpf_sk_release() of its socket;
 * - sock_diag copies a value of a map that is freed while the dump runs,
 *   and whose slot another map would take.
 *
 * Every test runs in every boot; without a tail the maps are dynamic and
 * the same assertions hold.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "sk_diag.h"
#include "lifetime.h"
#include "lifetime.skel.h"

#define HOLD_NS		(4ULL * 1000 * 1000 * 1000)
#define NEW_SOCKETS	8
#define ROUNDS		3
#define OLD_VALUE	0x01d01d01d01d01dULL
#define NEW_VALUE	0x0e00e00e00e00eULL

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Arm @w for the calling thread; the next matching call holds. */
static void arm(struct window *w)
{
	w->tid = syscall(SYS_gettid);
	w->hold_ns = HOLD_NS;
	w->release = 0;
	w->in_window = 0;
	w->timed_out = 0;
	__atomic_store_n(&w->armed, 1, __ATOMIC_SEQ_CST);
}

/* In the racing thread: wait until the window is open, at most 5 s. */
static int wait_in_window(struct window *w)
{
	int i;

	for (i = 0; i < 50000; i++) {
		if (__atomic_load_n(&w->in_window, __ATOMIC_SEQ_CST) == 1)
			return 0;
		usleep(100);
	}
	return -ETIMEDOUT;
}

/* The racing thread made its sockets: the window can be armed. */
static void set_ready(int *ready)
{
	__atomic_store_n(ready, 1, __ATOMIC_SEQ_CST);
}

static int wait_ready(int *ready)
{
	int i;

	for (i = 0; i < 50000; i++) {
		if (__atomic_load_n(ready, __ATOMIC_SEQ_CST))
			return 0;
		usleep(100);
	}
	return -ETIMEDOUT;
}

static void release(struct window *w)
{
	__atomic_store_n(&w->release, 1, __ATOMIC_SEQ_CST);
}

FIXTURE(lifetime)
{
	struct lifetime *skel;
	struct bpf_link *hold_lookup, *hold_diag;
	int map;
};

FIXTURE_SETUP(lifetime)
{
	REQUIRE_CPUS(2);
	self->skel = lifetime__open_and_load();
	ASSERT_NE(NULL, self->skel);
	self->map = bpf_map__fd(self->skel->maps.late_map);
	self->hold_lookup = bpf_program__attach(self->skel->progs.hold_lookup);
	ASSERT_NE(NULL, self->hold_lookup);
	self->hold_diag = bpf_program__attach(self->skel->progs.hold_diag);
	ASSERT_NE(NULL, self->hold_diag);
	ASSERT_EQ(0, pin_cpu(0));
}

FIXTURE_TEARDOWN(lifetime)
{
	bpf_link__destroy(self->hold_lookup);
	bpf_link__destroy(self->hold_diag);
	lifetime__destroy(self->skel);
}

/* ---- the syscall lookup ---- */

struct sock_kind {
	int family, type;
};

static int new_socket(const struct sock_kind *k, int fds[2])
{
	fds[1] = -1;
	if (k->family == AF_UNIX)
		return socketpair(AF_UNIX, k->type, 0, fds) ? -errno : 0;
	fds[0] = socket(k->family, k->type, 0);
	return fds[0] < 0 ? -errno : 0;
}

static void close_socket(int fds[2])
{
	close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
}

struct closer {
	struct window *w;
	const struct sock_kind *kind;
	int map;
	int old[2];
	int new[NEW_SOCKETS][2];
	int ready, err;
};

/*
 * Make the socket to be looked up, then, once the lookup holds the window,
 * close it and make new ones with other values. All on CPU 1, so that a
 * freed object is the first its slab cache hands out again there.
 */
static void *close_and_replace(void *arg)
{
	struct val16 v = { NEW_VALUE, NEW_VALUE };
	struct val16 old = { OLD_VALUE, OLD_VALUE };
	struct closer *c = arg;
	int i;

	c->err = new_socket(c->kind, c->old);
	if (!c->err)
		c->err = sys_update(c->map, c->old[0], &old, BPF_ANY);
	set_ready(&c->ready);
	if (!c->err)
		c->err = wait_in_window(c->w);
	if (c->err)
		goto out;
	close_socket(c->old);
	for (i = 0; i < NEW_SOCKETS; i++) {
		c->err = new_socket(c->kind, c->new[i]);
		if (c->err)
			break;
		c->err = sys_update(c->map, c->new[i][0], &v, BPF_ANY);
		if (!c->err && c->new[i][1] >= 0)
			c->err = sys_update(c->map, c->new[i][1], &v, BPF_ANY);
		if (c->err)
			break;
	}
out:
	release(c->w);
	return NULL;
}

static void lookup_while_closed(struct __test_metadata *_metadata,
				FIXTURE_DATA(lifetime) *self,
				const struct sock_kind *kind)
{
	struct window *w = &self->skel->bss->window;
	struct val16 got;
	int round, i, err;
	pthread_t th;

	for (round = 0; round < ROUNDS; round++) {
		struct closer c = { .w = w, .kind = kind, .map = self->map };

		memset(c.new, 0xff, sizeof(c.new));
		ASSERT_EQ(0, start_on_cpu1(&th, close_and_replace, &c));
		ASSERT_EQ(0, wait_ready(&c.ready));
		ASSERT_EQ(0, c.err);
		arm(w);
		memset(&got, 0, sizeof(got));
		err = bpf_map_lookup_elem(self->map, &c.old[0], &got) ? -errno : 0;
		pthread_join(th, NULL);
		w->armed = 0;
		ASSERT_EQ(0, c.err);
		ASSERT_EQ(0, w->timed_out) TH_LOG("the window closed before the socket did");
		ASSERT_EQ(2, w->in_window);
		/* The old value, or the error of a socket already gone. */
		if (err) {
			EXPECT_TRUE(err == -ENOENT || err == -EBADF)
				TH_LOG("round %d: %d", round, err);
		} else {
			EXPECT_TRUE(got.a == OLD_VALUE && got.b == OLD_VALUE)
				TH_LOG("round %d: read %#llx %#llx, another socket's value",
				       round, (unsigned long long)got.a,
				       (unsigned long long)got.b);
		}
		for (i = 0; i < NEW_SOCKETS; i++)
			if (c.new[i][0] >= 0)
				close_socket(c.new[i]);
	}
}

TEST_F_TIMEOUT(lifetime, syscall_lookup_of_a_unix_socket_closed_meanwhile_reads_its_own_value, 120)
{
	const struct sock_kind k = { AF_UNIX, SOCK_STREAM };

	lookup_while_closed(_metadata, self, &k);
}

TEST_F_TIMEOUT(lifetime, syscall_lookup_of_an_unbound_udp_socket_closed_meanwhile_reads_its_own_value, 120)
{
	const struct sock_kind k = { AF_INET, SOCK_DGRAM };

	lookup_while_closed(_metadata, self, &k);
}

TEST_F_TIMEOUT(lifetime, syscall_lookup_of_a_tcp_socket_closed_meanwhile_reads_its_own_value, 120)
{
	const struct sock_kind k = { AF_INET, SOCK_STREAM };

	lookup_while_closed(_metadata, self, &k);
}

/* ---- a program's write after bpf_sk_release() ---- */

struct conns {
	struct window *w;
	int map, lfd, cfd, afd;
	struct sockaddr_in addr, local;
	int fds[2 * NEW_SOCKETS];
	int nr, ready, err;
};

/*
 * Connect (on CPU 1, as in close_and_replace()); once the program holds
 * the window, reset the connection and open others with values.
 */
static void *reset_and_reconnect(void *arg)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };
	struct val16 v = { NEW_VALUE, NEW_VALUE };
	struct conns *c = arg;
	socklen_t len = sizeof(c->local);
	int i, fd;

	c->cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (c->cfd < 0 ||
	    connect(c->cfd, (struct sockaddr *)&c->addr, sizeof(c->addr)) ||
	    getsockname(c->cfd, (struct sockaddr *)&c->local, &len))
		c->err = -errno;
	else if ((c->afd = accept(c->lfd, NULL, NULL)) < 0)
		c->err = -errno;
	set_ready(&c->ready);
	if (!c->err)
		c->err = wait_in_window(c->w);
	if (c->err)
		goto out;
	setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
	close(c->cfd);
	for (i = 0; i < NEW_SOCKETS; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&c->addr,
				      sizeof(c->addr))) {
			c->err = -errno;
			break;
		}
		c->fds[c->nr++] = fd;
		fd = accept(c->lfd, NULL, NULL);
		if (fd < 0) {
			c->err = -errno;
			break;
		}
		c->fds[c->nr++] = fd;
	}
	for (i = 0; i < c->nr && !c->err; i++)
		c->err = sys_update(c->map, c->fds[i], &v, BPF_ANY);
out:
	release(c->w);
	return NULL;
}

TEST_F_TIMEOUT(lifetime, program_write_after_bpf_sk_release_never_lands_in_another_connection, 120)
{
	struct sockaddr_in trig = { .sin_family = AF_INET, .sin_port = htons(9),
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct window *w = &self->skel->bss->window;
	struct late *late = &self->skel->bss->late;
	socklen_t len;
	struct bpf_link *link;
	int round, i, tfd, cg;
	struct val16 got;
	pthread_t th;

	cg = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, cg);
	link = bpf_program__attach_cgroup(self->skel->progs.late_write, cg);
	close(cg);
	ASSERT_NE(NULL, link);

	for (round = 0; round < ROUNDS; round++) {
		struct conns c = { .w = w, .map = self->map };

		c.addr = (struct sockaddr_in){ .sin_family = AF_INET,
			.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		len = sizeof(c.addr);
		c.lfd = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_LE(0, c.lfd);
		ASSERT_EQ(0, bind(c.lfd, (struct sockaddr *)&c.addr, len));
		ASSERT_EQ(0, getsockname(c.lfd, (struct sockaddr *)&c.addr, &len));
		ASSERT_EQ(0, listen(c.lfd, 2 * NEW_SOCKETS));
		ASSERT_EQ(0, start_on_cpu1(&th, reset_and_reconnect, &c));
		ASSERT_EQ(0, wait_ready(&c.ready));
		ASSERT_EQ(0, c.err);

		late->trigger_port = trig.sin_port;
		late->remote_port = c.addr.sin_port;
		late->local_port = c.local.sin_port;
		late->result = LATE_NONE;
		arm(w);
		tfd = socket(AF_INET, SOCK_DGRAM, 0);
		ASSERT_LE(0, tfd);
		/* Runs late_write on this thread, which holds the window. */
		connect(tfd, (struct sockaddr *)&trig, sizeof(trig));
		pthread_join(th, NULL);
		w->armed = 0;
		close(tfd);
		ASSERT_EQ(0, c.err);
		ASSERT_EQ(LATE_WRITTEN, late->result);
		ASSERT_EQ(0, w->timed_out) TH_LOG("the window closed before the connection did");

		for (i = 0; i < c.nr; i++) {
			ASSERT_EQ(0, sys_lookup(self->map, c.fds[i], &got));
			EXPECT_FALSE(got.a == LATE_CANARY || got.b == LATE_CANARY)
				TH_LOG("round %d: socket %d of %d holds the write meant for a released one",
				       round, i, c.nr);
			EXPECT_EQ(NEW_VALUE, got.a);
			close(c.fds[i]);
		}
		close(c.afd);
		close(c.lfd);
	}
	bpf_link__destroy(link);
}

/* ---- sock_diag's dump of every map ---- */

/* Its attribute, 48 bytes, is the only one of that size in the reply. */
#define DIAG_VALUE_SIZE	44
#define DIAG_PUT_LEN	((4 + DIAG_VALUE_SIZE + 3) & ~3)

struct replacer {
	struct window *w;
	int old_map, new_map, fd;
	int err;
};

/* Free the map being dumped; create maps until one takes its slot. */
static void *free_and_reuse_slot(void *arg)
{
	struct replacer *r = arg;
	__u8 v[DIAG_VALUE_SIZE];
	unsigned int off, size, old_off;
	int inline_old, i;

	r->err = wait_in_window(r->w);
	if (r->err)
		goto out;
	inline_old = map_slot(r->old_map, &old_off, &size) == 1;
	close(r->old_map);
	r->old_map = -1;
	/* The slot's map is freed by a worker: give it a moment, not more. */
	for (i = 0; i < 20; i++) {
		r->new_map = create_sk_map(DIAG_VALUE_SIZE, 0);
		if (r->new_map < 0) {
			r->err = r->new_map;
			goto out;
		}
		if (!inline_old || (map_slot(r->new_map, &off, &size) == 1 &&
				    off == old_off))
			break;
		close(r->new_map);
		r->new_map = -1;
		usleep(20000);
	}
	if (r->new_map < 0)
		r->new_map = create_sk_map(DIAG_VALUE_SIZE, 0);
	memset(v, 0x22, sizeof(v));
	r->err = sys_update(r->new_map, r->fd, v, BPF_ANY);
out:
	release(r->w);
	return NULL;
}

TEST_F_TIMEOUT(lifetime, sock_diag_dump_never_reports_a_value_under_a_map_freed_during_it, 120)
{
	struct window *w = &self->skel->bss->window;
	struct replacer r = { .w = w, .new_map = -1 };
	const struct diag_value *dv;
	struct diag_result res;
	__u8 old[DIAG_VALUE_SIZE];
	__u32 old_id;
	pthread_t th;
	int fd, err;

	fd = diag_socket(AF_INET, SOCK_STREAM);
	ASSERT_LE(0, fd);
	r.fd = fd;
	r.old_map = create_sk_map(DIAG_VALUE_SIZE, 0);
	ASSERT_LE(0, r.old_map);
	old_id = map_id(r.old_map);
	memset(old, 0x11, sizeof(old));
	ASSERT_EQ(0, sys_update(r.old_map, fd, old, BPF_ANY));

	w->diag_put_len = DIAG_PUT_LEN;
	arm(w);
	ASSERT_EQ(0, start_on_cpu1(&th, free_and_reuse_slot, &r));
	err = diag_storages(AF_INET, IPPROTO_TCP, sock_ino(fd), NULL, 0, &res);
	pthread_join(th, NULL);
	w->armed = 0;
	ASSERT_EQ(0, r.err);
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, w->timed_out);
	ASSERT_EQ(2, w->in_window);
	ASSERT_TRUE(res.found);
	dv = diag_find(&res, old_id);
	ASSERT_NE(NULL, dv) TH_LOG("the dump lost the value it was copying");
	ASSERT_EQ(DIAG_VALUE_SIZE, dv->len);
	EXPECT_EQ(0, memcmp(dv->data, old, sizeof(old)))
		TH_LOG("map %u reported with bytes %#x..., the value of the map that took its slot",
		       old_id, dv->data[0]);
	if (r.new_map >= 0)
		close(r.new_map);
	close(fd);
}

TEST_HARNESS_MAIN
