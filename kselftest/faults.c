// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures, injected in this task only (failslab on the TCP
 * cache and on atomic allocations, fail_page_alloc), at socket creation
 * and on the dynamic path's atomic allocations: errors, never a half-made
 * value or a leaked socket; inline creations, which allocate nothing,
 * are unaffected.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "slab_util.h"

FIXTURE(faults) {
	struct attached drv;
};

FIXTURE_SETUP(faults)
{
	ASSERT_EQ(0, attach_driver(&self->drv));
}

FIXTURE_TEARDOWN(faults)
{
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
 * Fail, in this task, every allocation from slab cache @cache only (or
 * stop). Whatever else a kernel allocates on the way (debug kernels do
 * more) is left alone, so the failure lands where it is meant to.
 */
static int failslab_cache(const char *cache, bool on)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/failslab", cache);
	if (on)
		return write_file(path, "1") ||
		       write_file(FAILSLAB "cache-filter", "Y") ||
		       failslab(true, false, "-1") ? -1 : 0;
	return failslab(false, false, NULL) ||
	       write_file(FAILSLAB "cache-filter", "N") ||
	       write_file(path, "0") ? -1 : 0;
}

/*
 * The dynamic path allocates a value in atomic context; the inline path
 * allocates nothing. With atomic slab allocations failing, a dynamic update
 * fails cleanly and an inline one still works.
 */
TEST_F(faults, failing_allocations_fail_dynamic_updates_only_and_cleanly)
{
	int inl = create_sk_map(16, 0), dyn, fd, err_dyn, err_inl;
	__u64 in[2] = { 1, 2 }, out[2];
	unsigned int off, size;
	struct sk_fillers f;

	dyn = create_dynamic_sk_map(16, &f);
	detach_driver(&self->drv);
	ASSERT_LE(0, dyn);
	ASSERT_LE(0, inl);
	ASSERT_EQ(0, release_fillers(&f));
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

/*
 * Socket allocation failing leaves no object behind and no tail state.
 * TCP's cache is never merged with another (SLAB_TYPESAFE_BY_RCU), so its
 * allocations alone can be made to fail.
 */
TEST_F(faults, failing_socket_allocation_returns_an_error_and_leaks_nothing)
{
	long tcp0 = slab_objects("TCP");
	int i, fd, failed = 0;

	detach_driver(&self->drv);
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, failslab_cache("TCP", true));
		fd = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_EQ(0, failslab_cache("TCP", false));
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
	EXPECT_GE(tcp0, settle_objects("TCP", tcp0));
	/* Allocations succeed again. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	EXPECT_LE(0, fd);
	close(fd);
}

#define FAIL_PAGE_ALLOC		"/sys/kernel/debug/fail_page_alloc/"
#define FAIL_PAGE_SOCKETS	4000

/*
 * This task's /proc/thread-self/make-it-fail, opened before anything
 * fails: writing to it allocates nothing, where opening it again would
 * (the path's name), and the task's own page faults may fail meanwhile.
 */
static int make_it_fail_fd = -1;

/*
 * Fail page allocations of this task once make_it_fail(true): all of
 * them, or only those that cannot sleep (@atomic_only; the syscalls' own
 * copies and the task's page faults sleep, the dynamic path's GFP_ATOMIC
 * values do not). At most @times fail, so that nothing can fail forever.
 */
static int fail_page_alloc(bool atomic_only, const char *times)
{
	make_it_fail_fd = open("/proc/thread-self/make-it-fail", O_WRONLY);
	return make_it_fail_fd < 0 ||
	       write_file(FAIL_PAGE_ALLOC "task-filter", "Y") ||
	       write_file(FAIL_PAGE_ALLOC "ignore-gfp-wait",
			  atomic_only ? "Y" : "N") ||
	       write_file(FAIL_PAGE_ALLOC "ignore-gfp-highmem", "N") ||
	       write_file(FAIL_PAGE_ALLOC "min-order", "0") ||
	       write_file(FAIL_PAGE_ALLOC "probability", "100") ||
	       write_file(FAIL_PAGE_ALLOC "interval", "1") ||
	       write_file(FAIL_PAGE_ALLOC "times", times) ||
	       write_file(FAIL_PAGE_ALLOC "verbose", "0") ? -1 : 0;
}

static int make_it_fail(bool on)
{
	return write(make_it_fail_fd, on ? "1" : "0", 1) == 1 ? 0 : -1;
}

static int fail_page_alloc_off(void)
{
	int err = make_it_fail(false);

	close(make_it_fail_fd);
	make_it_fail_fd = -1;
	return err || write_file(FAIL_PAGE_ALLOC "probability", "0") ? -1 : 0;
}

static int raise_nofile(unsigned int n)
{
	struct rlimit rl = { n, n };

	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}

/* Whether @fd holds { @a, @b } in @map if @created, and nothing if not. */
static bool holds(int fd, int map, bool created, __u64 a, __u64 b)
{
	struct val16 out;
	int err = helper_get(fd, map, &out, sizeof(out));

	if (!created)
		return err == -ENOENT;
	return !err && out.a == a && out.b == b;
}

/*
 * Values created by the helper while every atomic page allocation of the
 * task fails, on sockets made beforehand: inline creations (which allocate
 * nothing) never fail, and each socket afterwards holds exactly the values
 * whose creation succeeded. Dynamic creations fail only once their slab
 * cache needs a new page, which the free objects earlier tests left in it
 * can postpone past the last socket: how many failed is reported, not
 * required (failing_allocations_fail_dynamic_updates_only_and_cleanly
 * makes them fail for certain).
 */
TEST_F(faults, page_allocation_failures_leave_inline_creations_and_every_value_exact)
{
	static int fd[FAIL_PAGE_SOCKETS], err_inl[FAIL_PAGE_SOCKETS];
	static int err_dyn[FAIL_PAGE_SOCKETS];
	int i, n, dyn_failed = 0, inl_failed = 0, wrong = 0;
	int map_a = bpf_map__fd(self->drv.skel->maps.map_a);
	long udp0 = slab_objects("UDP");
	unsigned int off, size;
	struct val16 v;
	bool inl;

	inl = map_slot(map_a, &off, &size) == 1;
	ASSERT_EQ(0, raise_nofile(FAIL_PAGE_SOCKETS + 64));
	for (n = 0; n < FAIL_PAGE_SOCKETS; n++) {
		fd[n] = socket(AF_INET, SOCK_DGRAM, 0);
		ASSERT_LE(0, fd[n]);
	}
	ASSERT_EQ(0, fail_page_alloc(true, "1000")) {
		TH_LOG("fail_page_alloc not available: CONFIG_FAIL_PAGE_ALLOC and debugfs needed");
	}
	for (i = 0; i < n && dyn_failed < 20; i++) {
		v = (struct val16){ i, 0xa };
		ASSERT_EQ(0, make_it_fail(true));
		err_inl[i] = helper_create(fd[i], MAP_A, &v, sizeof(v));
		v.b = 0xd;
		err_dyn[i] = helper_create(fd[i], MAP_DYN, &v, sizeof(v));
		ASSERT_EQ(0, make_it_fail(false));
		dyn_failed += !!err_dyn[i];
		inl_failed += !!err_inl[i];
	}
	ASSERT_EQ(0, fail_page_alloc_off());
	TH_LOG("%d sockets: %d dynamic and %d inline creations failed",
	       i, dyn_failed, inl_failed);
	if (inl)
		EXPECT_EQ(0, inl_failed);
	for (n = i, i = 0; i < n; i++) {
		wrong += !holds(fd[i], MAP_A, !err_inl[i], i, 0xa);
		wrong += !holds(fd[i], MAP_DYN, !err_dyn[i], i, 0xd);
	}
	EXPECT_EQ(0, wrong);
	/* Every socket takes both values once allocations succeed again. */
	for (i = 0; i < FAIL_PAGE_SOCKETS; i++) {
		v = (struct val16){ i, 0xe };
		if (helper_create(fd[i], MAP_DYN, &v, sizeof(v)) ||
		    helper_create(fd[i], MAP_A, &v, sizeof(v)))
			wrong++;
		close(fd[i]);
	}
	EXPECT_EQ(0, wrong);
	EXPECT_GE(udp0, settle_objects("UDP", udp0));
}

/*
 * socket() while every page allocation of the task fails: once the caches
 * need a page it returns an error, and nothing of the failed sockets is
 * left; a socket made afterwards takes an inline value as usual.
 */
TEST_F(faults, page_allocation_failures_at_socket_creation_return_errors_and_leak_nothing)
{
	static int fd[FAIL_PAGE_SOCKETS];
	int i, n, failed = 0, bad_errno = 0;
	long tcp0 = slab_objects("TCP");
	struct val16 v = { 7, 8 }, out;

	ASSERT_EQ(0, raise_nofile(FAIL_PAGE_SOCKETS + 64));
	/* Grow the fd table now: socket() should fail only in the socket. */
	ASSERT_LE(0, dup2(0, FAIL_PAGE_SOCKETS + 32));
	close(FAIL_PAGE_SOCKETS + 32);
	ASSERT_EQ(0, fail_page_alloc(false, "200")) {
		TH_LOG("fail_page_alloc not available: CONFIG_FAIL_PAGE_ALLOC and debugfs needed");
	}
	for (n = 0, i = 0; i < FAIL_PAGE_SOCKETS && failed < 10; i++) {
		int s, err;

		ASSERT_EQ(0, make_it_fail(true));
		s = socket(AF_INET, SOCK_STREAM, 0);
		err = errno;
		ASSERT_EQ(0, make_it_fail(false));
		if (s >= 0) {
			fd[n++] = s;
			continue;
		}
		failed++;
		if (err != ENOMEM && err != ENOBUFS && err != ENFILE &&
		    bad_errno++ < 3)
			TH_LOG("socket: %s", strerror(err));
	}
	ASSERT_EQ(0, fail_page_alloc_off());
	TH_LOG("%d sockets made, %d failed", n, failed);
	EXPECT_LT(0, failed);
	EXPECT_EQ(0, bad_errno);
	for (i = 0; i < n; i++)
		close(fd[i]);
	EXPECT_GE(tcp0, settle_objects("TCP", tcp0));
	i = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, i);
	EXPECT_EQ(0, helper_create(i, MAP_A, &v, sizeof(v)));
	EXPECT_EQ(0, helper_get(i, MAP_A, &out, sizeof(out)));
	EXPECT_EQ(8, out.b);
	close(i);
}

TEST_HARNESS_MAIN
