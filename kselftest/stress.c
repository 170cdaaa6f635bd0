// SPDX-License-Identifier: GPL-2.0
/*
 * Churn, bounded in time. TCP connections (accepted from a
 * listener that holds an inline value and a clone map value) and UDP
 * sockets come and go with values created, read and deleted by the helpers;
 * sk storage maps of several sizes are created, filled and freed beside
 * them, their slots reused by the next ones, while a reader looks at every
 * map it can reach. Every value encodes its map and its socket: nobody may
 * read a value written for another map or another socket. Afterwards no
 * socket object, slot, value or memory cgroup charge is left and the
 * layout adds up. A second churn (allocation failures are faults.c's)
 * frees a small map under the leak policy (net.core.bpf_sk_inline_reuse
 * = 0) while the others are reused: it leaks exactly its slot, which no
 * later map gets. That runs last and takes LEAK_MAPS * 16 bytes of the
 * tail, no more, from the "leak" test that runs last of all.
 *
 * SK_STRESS_SECONDS in the environment sets the length of both churns.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "slab_util.h"

#define CHURN_S		8
#define LEAK_CHURN_S	5
#define NR_LONG_LIVED	32
#define LEAK_MAPS	1
#define LEAK_VALUE	8
#define MAX_LIVE	8

enum { TCP, UDP, MAPS, READER, NR_ACTORS };

static const char *const actor[NR_ACTORS] = { "tcp", "udp", "maps", "reader" };

struct churn {
	volatile int stop;
	long ops[NR_ACTORS], wrong[NR_ACTORS], errors[NR_ACTORS];
	long inline_maps, leaked_maps;
	__u32 id_a, id_b;
	int clone_map;
	__u32 cur_id;		/* the map the reader should look at */
	int long_lived[NR_LONG_LIVED];
	__u64 cookie[NR_LONG_LIVED];
};

/* Count a wrong result; the first few are told. */
#define WRONG(c, who, fmt, ...) do {					\
	if ((c)->wrong[who]++ < 3)					\
		ksft_print_msg("%s: " fmt "\n", actor[who], ##__VA_ARGS__); \
} while (0)

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* The first word of a value: its map, and an index or counter. */
static __u64 tag_word(__u32 map_id, __u32 n)
{
	return (__u64)map_id << 32 | n;
}

static void close_now(int fd)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
	close(fd);
}

/* A fresh socket has no value; then it gets its own and reads it back. */
static int fresh_value(struct churn *c, int who, int fd, __u32 n)
{
	struct val16 in = { tag_word(c->id_a, n), sk_cookie(fd) }, out;

	if (helper_get(fd, MAP_A, &out, sizeof(out)) != -ENOENT)
		WRONG(c, who, "a fresh socket has a value");
	if (helper_create(fd, MAP_A, &in, sizeof(in))) {
		c->errors[who]++;
		return -1;
	}
	if (helper_get(fd, MAP_A, &out, sizeof(out)) ||
	    out.a != in.a || out.b != in.b)
		WRONG(c, who, "read back another value than created");
	return 0;
}

/*
 * TCP connections from a listener with values of its own: accepted sockets
 * inherit the clone map's value and nothing of the listener's inline tail.
 */
static void *tcp_churner(void *p)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	struct churn *c = p;
	struct val16 lval, out;
	__u64 clone_val[2], got[2];
	int lfd, cfd, afd;
	__u32 i;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (void *)&addr, len) ||
	    getsockname(lfd, (void *)&addr, &len) || listen(lfd, 64)) {
		c->errors[TCP]++;
		return NULL;
	}
	clone_val[0] = tag_word(map_id(c->clone_map), 0);
	clone_val[1] = sk_cookie(lfd);
	lval.a = tag_word(c->id_a, ~0U);
	lval.b = clone_val[1];
	if (sys_update(c->clone_map, lfd, clone_val, BPF_NOEXIST) ||
	    helper_create(lfd, MAP_A, &lval, sizeof(lval))) {
		c->errors[TCP]++;
		close(lfd);
		return NULL;
	}
	for (i = 0; !c->stop; i++) {
		cfd = socket(AF_INET, SOCK_STREAM, 0);
		if (cfd < 0 || connect(cfd, (void *)&addr, sizeof(addr))) {
			c->errors[TCP]++;
			break;
		}
		afd = accept(lfd, NULL, NULL);
		if (afd < 0) {
			c->errors[TCP]++;
			close(cfd);
			break;
		}
		if (sys_lookup(c->clone_map, afd, got) ||
		    got[0] != clone_val[0] || got[1] != clone_val[1])
			WRONG(c, TCP, "no clone value, or not the listener's");
		fresh_value(c, TCP, cfd, i);
		fresh_value(c, TCP, afd, i);
		if (i % 2 && (helper_delete(afd, MAP_A) ||
			      helper_get(afd, MAP_A, &out, sizeof(out)) != -ENOENT))
			WRONG(c, TCP, "a deleted value is still there");
		close_now(cfd);
		close_now(afd);
		c->ops[TCP]++;
	}
	/* The listener's own values went through all of it untouched. */
	if (helper_get(lfd, MAP_A, &out, sizeof(out)) ||
	    out.a != lval.a || out.b != lval.b)
		WRONG(c, TCP, "the listener's value changed");
	close(lfd);
	return NULL;
}

/* UDP sockets with map_b values, half of them deleted before close. */
static void *udp_churner(void *p)
{
	struct churn *c = p;
	struct val8 in, out;
	__u32 i;
	int fd;

	for (i = 0; !c->stop; i++) {
		fd = socket(i % 2 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
		if (fd < 0) {
			c->errors[UDP]++;
			break;
		}
		in.a = (__u64)c->id_b << 48 ^ sk_cookie(fd);
		if (helper_get(fd, MAP_B, &out, sizeof(out)) != -ENOENT)
			WRONG(c, UDP, "a fresh socket has a value");
		if (helper_create(fd, MAP_B, &in, sizeof(in)))
			c->errors[UDP]++;
		if (helper_get(fd, MAP_B, &out, sizeof(out)) || out.a != in.a)
			WRONG(c, UDP, "read back another value than created");
		if (i % 2 && (helper_delete(fd, MAP_B) ||
			      helper_get(fd, MAP_B, &out, sizeof(out)) != -ENOENT))
			WRONG(c, UDP, "a deleted value is still there");
		close(fd);
		c->ops[UDP]++;
	}
	return NULL;
}

/*
 * Reads the long-lived sockets through whatever map the churn has just
 * made, holding its own reference: a value is absent or that map's.
 */
static void *reader(void *p)
{
	struct churn *c = p;
	struct bpf_map_info info;
	__u32 id, len;
	__u64 got[8];
	int fd, i, err;

	while (!c->stop) {
		id = __atomic_load_n(&c->cur_id, __ATOMIC_ACQUIRE);
		fd = id ? bpf_map_get_fd_by_id(id) : -1;
		if (fd < 0) {
			sched_yield();
			continue;
		}
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			c->errors[READER]++;
		for (i = 0; i < NR_LONG_LIVED; i++) {
			got[1] = c->cookie[i];
			err = sys_lookup(fd, c->long_lived[i], got);
			if (err == -ENOENT)
				continue;
			if (err)
				c->errors[READER]++;
			else if (got[0] != tag_word(id, i) ||
				 (info.value_size >= 16 && got[1] != c->cookie[i]))
				WRONG(c, READER, "map %u, socket %d: not its value",
				      id, i);
			c->ops[READER]++;
		}
		close(fd);
	}
	return NULL;
}

/* The layout, consistent, of the tail in effect: 0 or -errno. */
static int layout_now(struct layout *l)
{
	int err = layout_read(l);

	return !err && l->tail != (long)tail_bytes() ? -EBADMSG : err;
}

/*
 * The layout is consistent and each of the live maps @fds has the slot
 * its fdinfo shows, in a range of its own, or none if it is dynamic.
 */
static int layout_check(struct layout *l, const int *fds, int n)
{
	const struct layout_range *r;
	unsigned int off, size;
	int i, err, slot;

	err = layout_now(l);
	for (i = 0; !err && i < n; i++) {
		slot = map_slot(fds[i], &off, &size);
		r = layout_find(l, map_id(fds[i]));
		if (slot < 0 || (!slot && r) ||
		    (slot && (!r || r->off != off || r->size != size)))
			err = -ESRCH;
	}
	return err;
}

/* Wait until the only slots held are the live maps' (frees are deferred). */
static int layout_quiet(struct layout *l, const int *fds, int n)
{
	long held;
	unsigned int off, size;
	int i, tries;

	for (tries = 0; tries < 400; tries++) {
		if (layout_check(l, fds, n))
			return -EBADMSG;
		for (held = 0, i = 0; i < n; i++)
			if (map_slot(fds[i], &off, &size) == 1)
				held += size;
		if (held == l->used)
			return 0;
		usleep(25000);
	}
	return -ETIMEDOUT;
}



static int churn_seconds(int dflt)
{
	const char *s = getenv("SK_STRESS_SECONDS");

	return s && atoi(s) > 0 ? atoi(s) : dflt;
}

/*
 * Each test runs in a memory cgroup of its own, so that what the churn
 * leaves charged, sockets or values, shows in its memory.stat.
 */
#define CG_STRESS	"/sys/fs/cgroup/sk-stress"
/* Per-cpu stocks and stat batches may hold up to a page a CPU. */
#define MEMCG_SLACK	(4 * 4096L)
#define MEMCG_FLUSH_US	2200000

static int enter_cgroup(const char *cg)
{
	char path[96], pid[16];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_file(path, pid);
}

/* One entry of the stress cgroup's memory.stat, in bytes, or -1. */
static long memcg_stat(const char *key)
{
	char buf[8192], *p;
	size_t len = strlen(key);

	if (read_file(CG_STRESS "/memory.stat", buf, sizeof(buf)) < 0)
		return -1;
	p = buf;
	do {
		if (!strncmp(p, key, len) && p[len] == ' ')
			return atol(p + len + 1);
		p = strchr(p, '\n');
	} while (p++);
	return -1;
}

/* Wait for @key to drop to @max, as memory.stat gets flushed. */
static long settle_memcg(const char *key, long max)
{
	return settle_within(memcg_stat, key, LONG_MIN, max, 60, 500000);
}

FIXTURE(stress) {
	struct attached drv;
	struct churn c;
	long base[NR_CACHES];
	long policy;
	struct layout before;
};

FIXTURE_SETUP(stress)
{
	unsigned int i;

	ASSERT_EQ(0, write_file("/sys/fs/cgroup/cgroup.subtree_control",
				"+memory"));
	ASSERT_TRUE(!mkdir(CG_STRESS, 0755) || errno == EEXIST);
	ASSERT_EQ(0, enter_cgroup(CG_STRESS));
	memset(&self->c, 0, sizeof(self->c));
	self->c.clone_map = -1;
	self->policy = read_ulong(REUSE_SYSCTL);
	ASSERT_EQ(1, self->policy);
	for (i = 0; i < NR_CACHES; i++) {
		self->base[i] = slab_objects(caches[i]);
		ASSERT_LE(0, self->base[i]);
	}
	ASSERT_EQ(0, layout_quiet(&self->before, NULL, 0));
	ASSERT_EQ(0, self->before.used);
	ASSERT_EQ(0, attach_driver(&self->drv));
}

FIXTURE_TEARDOWN(stress)
{
	restore_reuse(self->policy);
	enter_cgroup("/sys/fs/cgroup");
	rmdir(CG_STRESS);
}

/*
 * Value sizes of the churn's maps, in turn; the last one is created with
 * the tail full (fillers, freed again at once), so it is dynamic.
 */
static const unsigned int churn_sizes[] = { 8, 16, 40, 16 };
#define NR_SIZES	ARRAY_SIZE(churn_sizes)

/*
 * Free the map @fd under the leak policy, once every other freed map is
 * gone (so that only this one leaks): its slot, and nothing else, leaks.
 */
static int leak_map(int fd, int *live, int n)
{
	struct slot_ref ref = slot_ref(fd);
	const struct layout_range *range;
	struct layout l;
	long leaked;
	int err;

	live[n] = fd;
	err = layout_quiet(&l, live, n + 1);
	if (!err && write_file(REUSE_SYSCTL, "0"))
		err = -EIO;
	if (err) {
		close(fd);
		return err;
	}
	leaked = l.leaked;
	close(fd);
	err = wait_released(ref);
	if (write_file(REUSE_SYSCTL, "1"))
		return -EIO;
	if (err)
		return err;
	err = layout_quiet(&l, live, n);
	if (err)
		return err;
	if (l.leaked != leaked + slot_size(LEAK_VALUE))
		return -ENOSPC;
	range = layout_at(&l, ref.off);
	if (!range)
		return -ENOENT;
	return strcmp(range->state, "leaked") ? -EEXIST : 0;
}

/*
 * Maps come and go while the threads churn. Each map's values encode the
 * map's id, the socket's index and its cookie; a new map finds nothing in
 * sockets whose slot bytes a freed map used. With @leak, every eighth map
 * is small and, if inline, freed under the leak policy, LEAK_MAPS of them.
 */
static void map_churn(struct __test_metadata *_metadata, struct churn *c,
		      const int *skel, int nr_skel, time_t end, bool leak)
{
	int fd, i, n, cycle, live[MAX_LIVE], slot, err;
	unsigned int size, off, slot_bytes;
	struct sk_fillers f;
	struct layout l;
	__u64 in[5], got[5];
	bool leaking, dynamic;
	__u32 id;

	for (n = 0; n < nr_skel; n++)
		live[n] = skel[n];
	live[n++] = c->clone_map;
	for (cycle = 0; now_s() < end && !c->errors[MAPS]; cycle++) {
		leaking = leak && c->leaked_maps < LEAK_MAPS && cycle % 8 == 7;
		size = leaking ? LEAK_VALUE : churn_sizes[cycle % NR_SIZES];
		dynamic = !leaking && cycle % NR_SIZES == NR_SIZES - 1;
		if (layout_now(&l)) {
			WRONG(c, MAPS, "layout unreadable or inconsistent");
			break;
		}
		fd = dynamic ? create_dynamic_sk_map(size, &f) : create_sk_map(size, 0);
		if (fd < 0) {
			c->errors[MAPS]++;
			break;
		}
		if (dynamic && release_fillers(&f))
			c->errors[MAPS]++;
		id = map_id(fd);
		slot = map_slot(fd, &off, &slot_bytes);
		/* Nobody else takes slots now: room seen before is still there. */
		if (slot < 0 || (dynamic && slot) ||
		    (!dynamic && layout_room(&l, NULL) >= slot_size(size) && !slot))
			WRONG(c, MAPS, "map %u of %u bytes: %s", id, size,
			      slot ? "inline with the tail full" : "dynamic with room");
		c->inline_maps += slot == 1;
		live[n] = fd;
		if (layout_check(&l, live, n + 1))
			WRONG(c, MAPS, "map %u: layout and fdinfo disagree", id);
		__atomic_store_n(&c->cur_id, id, __ATOMIC_RELEASE);
		for (i = 0; i < NR_LONG_LIVED; i++) {
			memset(in, 0, sizeof(in));
			in[0] = tag_word(id, i);
			in[1] = c->cookie[i];
			if (sys_lookup(fd, c->long_lived[i], got) != -ENOENT)
				WRONG(c, MAPS, "map %u, socket %d: a value in a new map",
				      id, i);
			if (sys_update(fd, c->long_lived[i], in, BPF_NOEXIST))
				c->errors[MAPS]++;
			memset(got, 0, sizeof(got));
			if (sys_lookup(fd, c->long_lived[i], got) ||
			    memcmp(in, got, size))
				WRONG(c, MAPS, "map %u, socket %d: another value read",
				      id, i);
		}
		if (leaking && slot == 1) {
			err = leak_map(fd, live, n);
			if (err) {
				TH_LOG("cycle %d: leaking map %u: %s", cycle, id,
				       strerror(-err));
				c->wrong[MAPS]++;
			}
			c->leaked_maps++;
		} else {
			close(fd);
		}
		c->ops[MAPS]++;
	}
	__atomic_store_n(&c->cur_id, 0, __ATOMIC_RELEASE);
}

static void churn_and_check(struct __test_metadata *_metadata,
			    FIXTURE_DATA(stress) *self, int seconds, bool leak)
{
	unsigned int k, off, size, skel_bytes = 0;
	struct churn *c = &self->c;
	int i, skel[4], nr_skel = 0;
	long leaked, objects;
	pthread_t th[3];
	struct layout l;
	long slab0, sock0, slab, sock;

	/* memory.stat is flushed every 2 s: start from a flushed one. */
	usleep(MEMCG_FLUSH_US);
	slab0 = memcg_stat("slab_unreclaimable");
	sock0 = memcg_stat("sock");
	ASSERT_LE(0, slab0);
	ASSERT_LE(0, sock0);
	skel[nr_skel++] = bpf_map__fd(self->drv.skel->maps.map_a);
	skel[nr_skel++] = bpf_map__fd(self->drv.skel->maps.map_b);
	skel[nr_skel++] = bpf_map__fd(self->drv.skel->maps.map_dyn);
	skel[nr_skel++] = bpf_map__fd(self->drv.skel->maps.map_big);
	for (i = 0; i < nr_skel; i++)
		if (map_slot(skel[i], &off, &size) == 1)
			skel_bytes += size;
	c->id_a = map_id(skel[0]);
	c->id_b = map_id(skel[1]);
	c->clone_map = create_sk_map(16, BPF_F_CLONE);
	ASSERT_LE(0, c->clone_map);
	for (i = 0; i < NR_LONG_LIVED; i++) {
		c->long_lived[i] = socket(AF_INET6, SOCK_STREAM, 0);
		ASSERT_LE(0, c->long_lived[i]);
		c->cookie[i] = sk_cookie(c->long_lived[i]);
		ASSERT_NE(0, c->cookie[i]);
	}
	ASSERT_EQ(0, pthread_create(&th[0], NULL, tcp_churner, c));
	ASSERT_EQ(0, pthread_create(&th[1], NULL, udp_churner, c));
	ASSERT_EQ(0, pthread_create(&th[2], NULL, reader, c));
	map_churn(_metadata, c, skel, nr_skel, now_s() + seconds, leak);
	c->stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < NR_ACTORS; i++)
		TH_LOG("%-6s %7ld ops, %ld wrong, %ld errors", actor[i],
		       c->ops[i], c->wrong[i], c->errors[i]);
	TH_LOG("tail %u: %ld of %ld maps inline, %ld leaked", tail_bytes(),
	       c->inline_maps, c->ops[MAPS], c->leaked_maps);
	for (i = 0; i < NR_ACTORS; i++) {
		EXPECT_EQ(0, c->wrong[i]) TH_LOG("%s", actor[i]);
		EXPECT_EQ(0, c->errors[i]) TH_LOG("%s", actor[i]);
	}
	EXPECT_LT(50, c->ops[TCP]);
	EXPECT_LT(50, c->ops[UDP]);
	EXPECT_LT(5, c->ops[MAPS]);
	EXPECT_LT(0, c->ops[READER]);
	/* With room beside the helper maps, churn maps get slots, and leak. */
	if (!tail_bytes())
		EXPECT_EQ(0, c->inline_maps);
	if (tail_bytes() >= skel_bytes + slot_size(16))
		EXPECT_LT(0, c->inline_maps);
	if (leak && tail_bytes() >= skel_bytes + LEAK_MAPS * slot_size(LEAK_VALUE))
		EXPECT_EQ(LEAK_MAPS, c->leaked_maps);
	EXPECT_GE(LEAK_MAPS, c->leaked_maps);

	for (i = 0; i < NR_LONG_LIVED; i++)
		close(c->long_lived[i]);
	close(c->clone_map);
	detach_driver(&self->drv);
	for (k = 0; k < NR_CACHES; k++) {
		objects = settle_objects(caches[k], self->base[k]);
		TH_LOG("%-5s objects %ld -> %ld", caches[k], self->base[k], objects);
		EXPECT_GE(self->base[k], objects);
	}
	/* Nothing the churn made stays charged (the driver's maps are gone). */
	slab = settle_memcg("slab_unreclaimable", slab0 + MEMCG_SLACK);
	sock = settle_memcg("sock", sock0);
	TH_LOG("memcg slab %ld -> %ld, sock %ld -> %ld", slab0, slab, sock0,
	       sock);
	EXPECT_GE(slab0 + MEMCG_SLACK, slab);
	EXPECT_GE(sock0, sock);
	/* No slot is held, and only the maps freed to leak leaked. */
	leaked = self->before.leaked + c->leaked_maps * slot_size(LEAK_VALUE);
	EXPECT_EQ(0, layout_quiet(&l, NULL, 0));
	EXPECT_EQ(0, l.used);
	EXPECT_EQ(leaked, l.leaked);
	EXPECT_EQ(l.tail - leaked, l.free);
	EXPECT_EQ(1, read_ulong(REUSE_SYSCTL));
}

TEST_F_TIMEOUT(stress, churn_leaves_no_socket_no_slot_and_no_wrong_value, 120)
{
	churn_and_check(_metadata, self, churn_seconds(CHURN_S), false);
}

/*
 * Last: the same churn after the allocation failures, with a few small
 * maps freed under the leak policy. Whatever it leaks stays until reboot.
 */
TEST_F_TIMEOUT(stress, churn_with_maps_freed_under_the_leak_policy, 120)
{
	churn_and_check(_metadata, self, churn_seconds(LEAK_CHURN_S), true);
}

TEST_HARNESS_MAIN
