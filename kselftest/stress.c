// SPDX-License-Identifier: GPL-2.0
/*
 * Churn, bounded in time, on 2 vCPUs: TCP connections (from a listener
 * whose clone map value every child inherits) and UDP sockets come and go
 * with values created and deleted by the helpers, while sk storage maps are
 * created, used and freed beside them, a few under the leak policy. Afterwards nothing is left:
 * no socket object, no slot, no value read by the wrong map. And with slab
 * allocations failing in one task: errors, never corrupt state.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"

#define DURATION_S	8
#define NR_LONG_LIVED	32
#define MAGIC		0x5157a1e5ULL

struct churn {
	volatile int stop;
	long ops[3], wrong[3], errors[3];
	int long_lived[NR_LONG_LIVED];
};

static void close_now(int fd)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
	close(fd);
}

/* TCP connections; both ends get a map_a value from the helper. */
static void *tcp_churner(void *p)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	struct churn *c = p;
	struct val16 in, out;
	int lfd, cfd, afd;
	long i;

	__u64 listener_val[2] = { MAGIC, 7 }, child_val[2];
	int clone_map = create_sk_map(16, BPF_F_CLONE);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (clone_map < 0 || lfd < 0 || bind(lfd, (void *)&addr, len) ||
	    getsockname(lfd, (void *)&addr, &len) || listen(lfd, 64) ||
	    sys_update(clone_map, lfd, listener_val, BPF_NOEXIST)) {
		c->errors[0]++;
		return NULL;
	}
	for (i = 0; !c->stop; i++) {
		cfd = socket(AF_INET, SOCK_STREAM, 0);
		if (cfd < 0 || connect(cfd, (void *)&addr, sizeof(addr))) {
			c->errors[0]++;
			break;
		}
		afd = accept(lfd, NULL, NULL);
		if (afd < 0) {
			c->errors[0]++;
			close(cfd);
			break;
		}
		/* Accepted children carry a copy of the listener's clone value. */
		if (sys_lookup(clone_map, afd, child_val) ||
		    child_val[0] != MAGIC || child_val[1] != 7)
			c->wrong[0]++;
		in.a = i;
		in.b = MAGIC;
		if (helper_create(cfd, MAP_A, &in, sizeof(in)) ||
		    helper_create(afd, MAP_A, &in, sizeof(in)))
			c->errors[0]++;
		if (helper_get(cfd, MAP_A, &out, sizeof(out)) ||
		    out.a != i || out.b != MAGIC)
			c->wrong[0]++;
		if (i % 2 && helper_delete(afd, MAP_A))
			c->errors[0]++;
		close_now(cfd);
		close_now(afd);
		c->ops[0]++;
	}
	close(lfd);
	close(clone_map);
	return NULL;
}

/* UDP sockets with map_b values, half of them deleted before close. */
static void *udp_churner(void *p)
{
	struct churn *c = p;
	struct val8 in, out;
	long i;
	int fd;

	for (i = 0; !c->stop; i++) {
		fd = socket(i % 2 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
		if (fd < 0) {
			c->errors[1]++;
			break;
		}
		in.a = i ^ MAGIC;
		if (helper_create(fd, MAP_B, &in, sizeof(in)))
			c->errors[1]++;
		if (helper_get(fd, MAP_B, &out, sizeof(out)) || out.a != in.a)
			c->wrong[1]++;
		if (i % 2 && (helper_delete(fd, MAP_B) ||
			      !helper_get(fd, MAP_B, &out, sizeof(out))))
			c->wrong[1]++;
		close(fd);
		c->ops[1]++;
	}
	return NULL;
}

static long slab_objects(const char *cache)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/objects", cache);
	return read_ulong(path);
}

/* Used, leaked and free bytes add up to the tail; no map is left dying. */
static int layout_settled(void)
{
	long tail = layout_value("tail_bytes");
	char buf[8192];
	int i;

	if (tail <= 0)
		return 0;
	for (i = 0; i < 200; i++) {
		if (read_file(LAYOUT_FILE, buf, sizeof(buf)) < 0)
			return -1;
		if (!strstr(buf, " dying ") && !strstr(buf, " map "))
			break;
		usleep(50000);
	}
	if (strstr(buf, " dying ") || strstr(buf, " map "))
		return -1;
	return layout_value("used_bytes") + layout_value("leaked_bytes") +
	       layout_value("free_bytes") == tail ? 0 : -1;
}

/*
 * Objects in use in @cache: SLUB counts the free objects of per-cpu slabs
 * as used, so allow a few slabs' worth.
 */
static long slack_objects(const char *cache)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/objs_per_slab", cache);
	return 8 * read_ulong(path);
}

/* Wait for socket frees (RCU, workqueues) to bring @cache back to @base. */
static long settle_objects(const char *cache, long base)
{
	long now = 0, slack = slack_objects(cache);
	int i;

	for (i = 0; i < 100; i++) {
		now = slab_objects(cache);
		if (now <= base + slack)
			break;
		usleep(100000);
	}
	return now;
}

FIXTURE(stress) {
	struct attached drv;
	struct churn c;
	long tcp0, udp0;
};

FIXTURE_SETUP(stress)
{
	memset(&self->c, 0, sizeof(self->c));
	self->tcp0 = slab_objects("TCP");
	self->udp0 = slab_objects("UDP");
	ASSERT_LE(0, self->tcp0);
	ASSERT_LE(0, self->udp0);
	ASSERT_EQ(0, attach_driver(&self->drv));
}

FIXTURE_TEARDOWN(stress)
{
}

/*
 * Maps come and go while the threads churn: each map's values encode the
 * map's id and the socket, and a map must read its own or nothing.
 */
static void map_churn(struct __test_metadata *_metadata, struct churn *c,
		      time_t end)
{
	int fd, i, cycle;
	__u64 in[2], got[2];
	__u32 id;

	for (i = 0; i < NR_LONG_LIVED; i++) {
		c->long_lived[i] = socket(AF_INET6, SOCK_STREAM, 0);
		ASSERT_LE(0, c->long_lived[i]);
	}
	for (cycle = 0; time(NULL) < end; cycle++) {
		fd = create_sk_map(8 + 8 * (cycle % 2), 0);
		if (fd < 0) {
			c->errors[2]++;
			break;
		}
		id = map_id(fd);
		for (i = 0; i < NR_LONG_LIVED; i++) {
			in[0] = id;
			in[1] = i;
			if (sys_lookup(fd, c->long_lived[i], got) != -ENOENT)
				c->wrong[2]++;
			if (sys_update(fd, c->long_lived[i], in, BPF_NOEXIST))
				c->errors[2]++;
			if (sys_lookup(fd, c->long_lived[i], got) ||
			    got[0] != id || (cycle % 2 && got[1] != (__u64)i))
				c->wrong[2]++;
		}
		/* A few maps are freed under the leak policy. */
		if (cycle % 10 == 5 && cycle < 40) {
			struct slot_ref ref = slot_ref(fd);

			write_file(REUSE_SYSCTL, "0");
			close(fd);
			if (wait_released(ref))
				c->errors[2]++;
			write_file(REUSE_SYSCTL, "1");
		} else {
			close(fd);
		}
		c->ops[2]++;
	}
	for (i = 0; i < NR_LONG_LIVED; i++)
		close(c->long_lived[i]);
}

static void run_churn(struct __test_metadata *_metadata, struct churn *c)
{
	pthread_t th[2];

	ASSERT_EQ(0, pthread_create(&th[0], NULL, tcp_churner, c));
	ASSERT_EQ(0, pthread_create(&th[1], NULL, udp_churner, c));
	map_churn(_metadata, c, time(NULL) + DURATION_S);
	c->stop = 1;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	TH_LOG("tcp %ld, udp %ld, map cycles %ld; errors %ld %ld %ld",
	       c->ops[0], c->ops[1], c->ops[2],
	       c->errors[0], c->errors[1], c->errors[2]);
}

static void churn_and_check(struct __test_metadata *_metadata,
			    FIXTURE_DATA(stress) *self)
{
	struct churn *c = &self->c;
	long tcp, udp;

	run_churn(_metadata, c);
	detach_driver(&self->drv);
	EXPECT_EQ(0, c->wrong[0]);
	EXPECT_EQ(0, c->wrong[1]);
	EXPECT_EQ(0, c->wrong[2]);
	EXPECT_EQ(0, c->errors[0] + c->errors[1] + c->errors[2]);
	EXPECT_LT(50, c->ops[0]);
	EXPECT_LT(50, c->ops[1]);
	EXPECT_LT(5, c->ops[2]);
	tcp = settle_objects("TCP", self->tcp0);
	udp = settle_objects("UDP", self->udp0);
	TH_LOG("TCP objects %ld -> %ld, UDP %ld -> %ld", self->tcp0, tcp,
	       self->udp0, udp);
	EXPECT_GE(self->tcp0 + slack_objects("TCP"), tcp);
	EXPECT_GE(self->udp0 + slack_objects("UDP"), udp);
	EXPECT_EQ(0, layout_settled());
}

TEST_F_TIMEOUT(stress, churn_leaves_no_socket_no_slot_and_no_wrong_value, 120)
{
	churn_and_check(_metadata, self);
}

#define FAILSLAB	"/sys/kernel/debug/failslab/"

/*
 * Fail slab allocations of this task: only atomic ones if @atomic_only,
 * at most @times of them (-1: no limit). Turning it off allocates, so a
 * limit is needed when sleeping allocations fail too.
 */
static int failslab(bool on, bool atomic_only, const char *times)
{
	if (on && (write_file(FAILSLAB "task-filter", "Y") ||
		   write_file(FAILSLAB "ignore-gfp-wait", atomic_only ? "Y" : "N") ||
		   write_file(FAILSLAB "probability", "100") ||
		   write_file(FAILSLAB "interval", "1") ||
		   write_file(FAILSLAB "times", times) ||
		   write_file(FAILSLAB "verbose", "0")))
		return -1;
	if (write_file("/proc/thread-self/make-it-fail", on ? "1" : "0"))
		return -1;
	return on ? 0 : write_file(FAILSLAB "probability", "0");
}

/*
 * The dynamic path allocates a value in atomic context; the inline path
 * allocates nothing. With atomic slab allocations failing, a dynamic update
 * fails cleanly and an inline one still works.
 */
TEST_F(stress, failing_allocations_fail_dynamic_updates_only_and_cleanly)
{
	int dyn = create_sk_map(16, BPF_F_NO_INLINE), inl = create_sk_map(16, 0);
	__u64 in[2] = { 1, 2 }, out[2];
	unsigned int off, size;
	int fd, err_dyn, err_inl;

	detach_driver(&self->drv);
	ASSERT_LE(0, dyn);
	ASSERT_LE(0, inl);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, failslab(true, true, "-1")) {
		TH_LOG("failslab not available: CONFIG_FAILSLAB and debugfs needed");
	}
	err_dyn = bpf_map_update_elem(dyn, &fd, in, BPF_NOEXIST) ? -errno : 0;
	err_inl = bpf_map_update_elem(inl, &fd, in, BPF_NOEXIST) ? -errno : 0;
	ASSERT_EQ(0, failslab(false, false, NULL));
	EXPECT_EQ(-ENOMEM, err_dyn);
	EXPECT_EQ(-ENOENT, sys_lookup(dyn, fd, out));
	if (map_slot(inl, &off, &size) == 1) {
		EXPECT_EQ(0, err_inl);
		EXPECT_EQ(0, sys_lookup(inl, fd, out));
	} else {
		EXPECT_EQ(-ENOMEM, err_inl);
	}
	/* Nothing half-made: both work once allocations succeed again. */
	EXPECT_EQ(0, sys_update(dyn, fd, in, BPF_NOEXIST));
	EXPECT_EQ(0, sys_update(inl, fd, in, BPF_ANY));
	EXPECT_EQ(0, sys_lookup(dyn, fd, out));
	EXPECT_EQ(2, out[1]);
	close(fd);
	close(dyn);
	close(inl);
}

/* Socket allocation failing leaves no object behind and no tail state. */
TEST_F(stress, failing_socket_allocation_returns_an_error_and_leaks_nothing)
{
	long udp0 = slab_objects("UDP");
	int i, fd, failed = 0;

	detach_driver(&self->drv);
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, failslab(true, false, "1"));
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		ASSERT_EQ(0, failslab(false, false, NULL));
		if (fd < 0) {
			EXPECT_TRUE(errno == ENOMEM || errno == ENOBUFS ||
				    errno == ENFILE) {
				TH_LOG("socket: %s", strerror(errno));
			}
			failed++;
		} else {
			close(fd);
		}
	}
	EXPECT_EQ(50, failed);
	EXPECT_GE(udp0 + slack_objects("UDP"), settle_objects("UDP", udp0));
}

TEST_F_TIMEOUT(stress, churn_still_passes_after_allocation_failures, 120)
{
	churn_and_check(_metadata, self);
}

TEST_HARNESS_MAIN
