// SPDX-License-Identifier: GPL-2.0
/*
 * net.core.bpf_sk_inline_charge beyond what memcg_charge measures: the
 * policy a map names in its fdinfo and keeps when the sysctl changes,
 * rewrites and repeated deletes that must neither charge a value again nor
 * return its charge twice, and values the bpf_sk_storage_get() helper
 * creates from a BPF program, charged and bounded like those the map
 * syscall creates. As in memcg_charge, an agent cgroup creates the maps
 * and a workload cgroup the sockets. Slots are charged in bytes through
 * the owner's obj_cgroup, memory.current moves in pages and each CPU keeps
 * up to a page of bytes and a batch of pages in stock (drained before each
 * reading): sizes are checked within SETTLE_PAGES pages, with enough
 * values that a charge is several times that.
 */
#include "../kselftest_harness.h"
#include "sk_memcg.h"
#include "sk_storage_test.h"
#include "sk_storage.skel.h"

#define PAIRS		500
#define NR_SOCKETS	(3 * PAIRS)
#define VALUE_SIZE	64
#define SLACK		(SETTLE_PAGES * MEMCG_PAGE)
/* Two maps must fit in any tail make check boots (100 bytes and up). */
#define SMALL_SIZE	16

FIXTURE(memcg_policy) {
	struct workload w;
	int map;
	struct sk_storage *skel;
	struct bpf_link *set;
};

FIXTURE_SETUP(memcg_policy)
{
	self->skel = NULL;
	self->set = NULL;
	memcg_test_setup(_metadata, &self->w, &self->map);
}

FIXTURE_TEARDOWN(memcg_policy)
{
	memcg_test_close(&self->w, self->map);
	bpf_link__destroy(self->set);
	sk_storage__destroy(self->skel);
	memcg_test_teardown();
}

/* The map's sk_inline_charged fdinfo line in bytes, or -1 without one. */
static long map_charged(int map)
{
	return map_fdinfo_long(map, "sk_inline_charged");
}

/*
 * Store and delete a value in every socket once, so that what creating
 * the map left in the per-cpu stocks is consumed before measuring.
 */
static int warm(FIXTURE_DATA(memcg_policy) *self, int map,
		unsigned int value_size)
{
	if (workload_store_range(&self->w, map, value_size, 0, self->w.nr_fds) ||
	    workload_delete_range(&self->w, map, 0, self->w.nr_fds))
		return -EIO;
	return 0;
}

/*
 * An owner-charged map with a value in each of the NR_SOCKETS sockets, and
 * the agent's memory.current before and after the values were stored.
 */
static void fill_owner_map(struct __test_metadata *_metadata,
			   FIXTURE_DATA(memcg_policy) *self,
			   long *base, long *full)
{
	unsigned int slot;

	self->map = agent_map_create(PATH_INLINE_OWNER, VALUE_SIZE);
	ASSERT_LE(0, self->map);
	slot = map_inline_size(self->map);
	ASSERT_EQ(0, workload_open(&self->w, PAIRS));
	ASSERT_EQ(0, warm(self, self->map, VALUE_SIZE));
	*base = stable_current(CG_AGENT);
	ASSERT_EQ(0, workload_store_range(&self->w, self->map, VALUE_SIZE, 0,
					  NR_SOCKETS));
	*full = stable_current(CG_AGENT);
	ASSERT_GE(SLACK, labs(*full - *base - (long)NR_SOCKETS * slot));
}

TEST_F_TIMEOUT(memcg_policy, inline_maps_name_their_charge_policy_in_fdinfo, 300)
{
	int sock, owner, dyn;

	REQUIRE_INLINE(PATH_INLINE_SOCKET, VALUE_SIZE);
	sock = agent_map_create(PATH_INLINE_SOCKET, SMALL_SIZE);
	owner = agent_map_create(PATH_INLINE_OWNER, SMALL_SIZE);
	dyn = agent_map_create(PATH_DYNAMIC, SMALL_SIZE);
	ASSERT_LE(0, sock);
	ASSERT_LE(0, owner);
	ASSERT_LE(0, dyn);
	EXPECT_STREQ("inline", map_storage(sock));
	EXPECT_STREQ("socket", map_charge(sock));
	EXPECT_STREQ("inline", map_storage(owner));
	EXPECT_STREQ("owner", map_charge(owner));
	/* The dynamic path always charges the owner: no policy to name. */
	EXPECT_STREQ("dynamic", map_storage(dyn));
	EXPECT_STREQ("", map_charge(dyn));
	close(sock);
	close(owner);
	close(dyn);
}

TEST_F_TIMEOUT(memcg_policy, a_map_keeps_the_policy_it_was_created_with, 300)
{
	int sock, owner, nr;
	unsigned int slot;
	long base, now;

	REQUIRE_INLINE(PATH_INLINE_SOCKET, VALUE_SIZE);
	sock = agent_map_create(PATH_INLINE_SOCKET, SMALL_SIZE);
	owner = agent_map_create(PATH_INLINE_OWNER, SMALL_SIZE);
	ASSERT_LE(0, sock);
	ASSERT_LE(0, owner);
	slot = map_inline_size(owner);
	ASSERT_EQ(SMALL_SIZE + 8, slot);
	ASSERT_EQ(slot, map_inline_size(sock));
	/* Enough values of a small slot to stand out of the slack. */
	ASSERT_EQ(0, workload_open(&self->w, 2 * PAIRS));
	nr = self->w.nr_fds;
	ASSERT_EQ(0, warm(self, owner, SMALL_SIZE));

	/* The socket map, used while new maps would charge their owner. */
	ASSERT_EQ(0, cg_write(CHARGE_SYSCTL, "1"));
	base = stable_current(CG_AGENT);
	ASSERT_EQ(0, workload_store_range(&self->w, sock, SMALL_SIZE, 0, nr));
	now = stable_current(CG_AGENT);
	TH_LOG("socket map, sysctl 1: agent %+ld for %d values", now - base, nr);
	EXPECT_GE(SLACK, now - base);
	EXPECT_STREQ("socket", map_charge(sock));

	/* The owner map, used while new maps would not. */
	ASSERT_EQ(0, cg_write(CHARGE_SYSCTL, "0"));
	base = stable_current(CG_AGENT);
	ASSERT_EQ(0, workload_store_range(&self->w, owner, SMALL_SIZE, 0, nr));
	now = stable_current(CG_AGENT);
	TH_LOG("owner map, sysctl 0: agent %+ld for %d values of slot %u",
	       now - base, nr, slot);
	EXPECT_GE(SLACK, labs(now - base - (long)nr * slot));
	EXPECT_STREQ("owner", map_charge(owner));
	close(sock);
	close(owner);
}

/*
 * fdinfo tells the owner what its values charge it now, exactly: values
 * created, deleted, and returned as their sockets are freed. A map that
 * lets the socket pay shows no such line.
 */
TEST_F_TIMEOUT(memcg_policy, fdinfo_shows_what_the_values_charge_the_owner, 300)
{
	int sock, nr, i;
	unsigned int slot;
	long charged;

	REQUIRE_INLINE(PATH_INLINE_OWNER, VALUE_SIZE);
	sock = agent_map_create(PATH_INLINE_SOCKET, SMALL_SIZE);
	ASSERT_LE(0, sock);
	EXPECT_EQ(-1, map_charged(sock));
	close(sock);
	self->map = agent_map_create(PATH_INLINE_OWNER, SMALL_SIZE);
	ASSERT_LE(0, self->map);
	slot = map_inline_size(self->map);
	ASSERT_EQ(0, map_charged(self->map));
	ASSERT_EQ(0, workload_open(&self->w, PAIRS));
	nr = self->w.nr_fds;
	ASSERT_EQ(0, workload_store_range(&self->w, self->map, SMALL_SIZE, 0, nr));
	EXPECT_EQ((long)nr * slot, map_charged(self->map));
	ASSERT_EQ(0, workload_delete_range(&self->w, self->map, 0, nr / 2));
	EXPECT_EQ((long)(nr - nr / 2) * slot, map_charged(self->map));
	/* Sockets free their values as they are destroyed, TCP's a bit later. */
	workload_close(&self->w);
	for (i = 0; i < 500 && (charged = map_charged(self->map)) > 0; i++)
		usleep(10000);
	EXPECT_EQ(0, charged);
}

TEST_F_TIMEOUT(memcg_policy, rewriting_a_value_does_not_charge_it_again, 300)
{
	unsigned char value[VALUE_SIZE];
	long base, full, now;
	int i, fd;

	REQUIRE_INLINE(PATH_INLINE_OWNER, VALUE_SIZE);
	fill_owner_map(_metadata, self, &base, &full);

	memset(value, 0xa5, sizeof(value));
	for (i = 0; i < NR_SOCKETS; i++) {
		fd = self->w.fds[i];
		ASSERT_EQ(0, bpf_map_update_elem(self->map, &fd, value, BPF_ANY));
		ASSERT_EQ(0, bpf_map_update_elem(self->map, &fd, value, BPF_EXIST));
		ASSERT_NE(0, bpf_map_update_elem(self->map, &fd, value, BPF_NOEXIST));
		ASSERT_EQ(EEXIST, errno);
	}
	now = stable_current(CG_AGENT);
	TH_LOG("after %d rewrites and refused creates: %+ld", 3 * NR_SOCKETS,
	       now - full);
	EXPECT_GE(SLACK, labs(now - full));
}

TEST_F_TIMEOUT(memcg_policy, deleting_a_value_twice_returns_its_charge_once, 300)
{
	long base, full, now;
	int i, fd;
	__u32 id;

	REQUIRE_INLINE(PATH_INLINE_OWNER, VALUE_SIZE);
	fill_owner_map(_metadata, self, &base, &full);
	ASSERT_EQ(0, workload_delete_range(&self->w, self->map, 0, NR_SOCKETS));
	for (i = 0; i < NR_SOCKETS; i++) {
		fd = self->w.fds[i];
		ASSERT_NE(0, bpf_map_delete_elem(self->map, &fd));
		ASSERT_EQ(ENOENT, errno);
	}
	now = stable_current(CG_AGENT);
	TH_LOG("after deleting every value twice: %+ld of %+ld", now - full,
	       full - base);
	EXPECT_GE(SLACK, labs(now - base));
	/* Closing sockets that hold no value returns nothing either. */
	workload_close(&self->w);
	now = settle_to(CG_AGENT, base, SLACK);
	TH_LOG("after closing the sockets: %+ld", now - base);
	EXPECT_GE(SLACK, labs(now - base));
	/* Nor does freeing the map, beyond the map itself. */
	id = map_id(self->map);
	close(self->map);
	self->map = -1;
	ASSERT_EQ(0, wait_map_freed(id));
	now = settle_to(CG_AGENT, base, SLACK);
	TH_LOG("after freeing the map: %+ld", now - base);
	EXPECT_GE(SLACK, labs(now - base));
}

/* Load the helper driver from the agent cgroup under @charge, attach it. */
static int agent_load_driver(FIXTURE_DATA(memcg_policy) *self,
			     const char *charge)
{
	int cg, err;

	err = cg_enter(CG_AGENT);
	if (!err)
		err = cg_write(CHARGE_SYSCTL, charge);
	if (!err) {
		self->skel = sk_storage__open_and_load();
		err = self->skel ? 0 : -EINVAL;
	}
	cg_write(CHARGE_SYSCTL, "0");
	if (cg_enter(CG_WORK) || err)
		return err ? err : -EIO;
	cg = open(CG_ROOT, O_RDONLY | O_DIRECTORY);
	if (cg < 0)
		return -errno;
	self->set = bpf_program__attach_cgroup(self->skel->progs.sk_storage_set, cg);
	close(cg);
	return self->set ? 0 : -EINVAL;
}

static int helper_op(int fd, int op, const struct val16 *v)
{
	return setsockopt(fd, SOL_SK_STORAGE_TEST, OPTNAME(MAP_A, op), v,
			  sizeof(*v)) ? -errno : 0;
}

/* bpf_sk_storage_get(F_CREATE) on sockets [from, to): how many were created. */
static int helper_create_range(struct workload *w, int from, int to, int *err)
{
	struct val16 v = { 1, 2 };
	int i;

	*err = 0;
	for (i = from; i < to; i++) {
		*err = helper_op(w->fds[i], OP_CREATE, &v);
		if (*err)
			break;
	}
	return i - from;
}

/*
 * The helper driver loaded under the owner policy and a workload of
 * 2 * PAIRS: map_a's fd in @map, its slot size in @slot. False, the test
 * skipped, without a tail.
 */
static bool owner_driver(struct __test_metadata *_metadata,
			 FIXTURE_DATA(memcg_policy) *self, int *map,
			 unsigned int *slot)
{
	ASSERT_EQ(0, agent_load_driver(self, "1"));
	*map = bpf_map__fd(self->skel->maps.map_a);
	if (!require_owner_map(_metadata, *map))
		return false;
	*slot = map_inline_size(*map);
	ASSERT_EQ(0, workload_open(&self->w, 2 * PAIRS));
	return true;
}

TEST_F_TIMEOUT(memcg_policy, helper_created_values_charge_the_owner_until_deleted, 300)
{
	struct val16 v = {};
	long base, full, now;
	unsigned int slot;
	int map, i, err;

	if (!owner_driver(_metadata, self, &map, &slot))
		return;
	/* A first round consumes what loading left in the per-cpu stocks. */
	ASSERT_EQ(self->w.nr_fds, helper_create_range(&self->w, 0,
						      self->w.nr_fds, &err));
	for (i = 0; i < self->w.nr_fds; i++)
		ASSERT_EQ(0, helper_op(self->w.fds[i], OP_DELETE, &v));
	base = stable_current(CG_AGENT);
	ASSERT_EQ(self->w.nr_fds, helper_create_range(&self->w, 0,
						      self->w.nr_fds, &err));
	full = stable_current(CG_AGENT);
	TH_LOG("agent: %+ld for %d helper-created values of slot %u",
	       full - base, self->w.nr_fds, slot);
	EXPECT_GE(SLACK, labs(full - base - (long)self->w.nr_fds * slot));
	/* The syscall sees the helper's value, with nothing more to charge. */
	ASSERT_EQ(0, bpf_map_lookup_elem(map, &self->w.fds[0], &v));
	EXPECT_EQ(2, v.b);
	for (i = 0; i < self->w.nr_fds; i++)
		ASSERT_EQ(0, helper_op(self->w.fds[i], OP_DELETE, &v));
	now = stable_current(CG_AGENT);
	TH_LOG("after the helper deleted them: %+ld", now - base);
	EXPECT_GE(SLACK, labs(now - base));
}

TEST_F_TIMEOUT(memcg_policy, helper_creation_fails_at_the_owner_memory_max_and_leaves_no_value, 300)
{
	struct val16 v = {};
	unsigned int slot;
	char limit[32];
	int map, n, err, fd, err_present;

	if (!owner_driver(_metadata, self, &map, &slot))
		return;
	snprintf(limit, sizeof(limit), "%ld",
		 stable_current(CG_AGENT) + 6 * MEMCG_PAGE);
	ASSERT_EQ(0, cg_write(CG_AGENT "/memory.max", limit));
	n = helper_create_range(&self->w, 0, self->w.nr_fds, &err);
	/* Still at the limit: a value that exists is returned, uncharged. */
	err_present = helper_op(self->w.fds[0], OP_CREATE, &v);
	/* Lift the limit before any check can end the test. */
	ASSERT_EQ(0, cg_write(CG_AGENT "/memory.max", "max"));
	TH_LOG("%d values created under a limit of 6 pages over the base", n);
	/* bpf_sk_storage_get() returned NULL: the driver reports ENOENT. */
	ASSERT_EQ(-ENOENT, err);
	ASSERT_LT(0, n);
	EXPECT_EQ(0, err_present);
	EXPECT_GE(SLACK / slot, labs(n - 6 * MEMCG_PAGE / (long)slot));
	/* The failed creation took no slot: the socket still has no value. */
	fd = self->w.fds[n];
	ASSERT_NE(0, bpf_map_lookup_elem(map, &fd, &v));
	ASSERT_EQ(ENOENT, errno);
	ASSERT_EQ(0, helper_op(fd, OP_CREATE, &v));
}

TEST_HARNESS_MAIN
