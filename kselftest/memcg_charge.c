// SPDX-License-Identifier: GPL-2.0
/*
 * Who pays for sk storage values: the map owner's memory cgroup on the
 * dynamic path and under net.core.bpf_sk_inline_charge = 1, the socket's
 * under 0. A map is created by an agent cgroup, 3 * PAIRS sockets by a
 * workload cgroup. memcg charges whole pages and caches up to a page per
 * CPU, so every size is checked within SETTLE_PAGES pages (a return to
 * the baseline of a whole run within 4 times that: what the per-cpu stocks
 * hold when it ends depends on which cgroup charged last on each CPU).
 */
#include "../kselftest_harness.h"
#include "sk_memcg.h"

#define PAIRS		500
#define NR_SOCKETS	(3 * PAIRS)
#define VALUE_SIZE	64
#define SLACK		(SETTLE_PAGES * MEMCG_PAGE)
/*
 * Dynamic values are slab objects freed after RCU grace periods; what
 * memcg still holds for them a minute later is within one charge batch
 * (64 pages), far below what they were charged.
 */
#define DYNAMIC_RESIDUE	(64 * MEMCG_PAGE)

FIXTURE(memcg) {
	struct workload w;
	int map;
	__u32 map_id;
	struct cg_snap agent0, agent1, work0, work1;
};

FIXTURE_SETUP(memcg)
{
	struct workload warm;
	int map;

	memcg_test_setup(_metadata, &self->w, &self->map);
	/*
	 * Caches and per-cpu structures the first sockets and map set up.
	 * The map is the workload's: its values are freed after RCU grace
	 * periods, seconds later under TCG, and would lower the agent's
	 * baseline in the middle of a measurement.
	 */
	map = sk_map_create_dynamic(VALUE_SIZE);
	ASSERT_LE(0, map);
	ASSERT_EQ(0, workload_open(&warm, 16));
	ASSERT_EQ(0, workload_store_range(&warm, map, VALUE_SIZE, 0, warm.nr_fds));
	workload_close(&warm);
	close(map);
}

FIXTURE_TEARDOWN(memcg)
{
	memcg_test_close(&self->w, self->map);
	memcg_test_teardown();
}

/* Create the map for @path and the sockets; snapshot both cgroups after. */
static int start(FIXTURE_DATA(memcg) *self, enum sk_path path)
{
	int err;

	self->map = agent_map_create(path, VALUE_SIZE);
	if (self->map < 0)
		return self->map;
	self->map_id = map_id(self->map);
	err = workload_open(&self->w, PAIRS);
	if (err)
		return err;
	/*
	 * The first charges in a fresh agent cgroup also drain what creating
	 * the map left in the per-cpu stocks: measure from a second round.
	 */
	if (path == PATH_INLINE_OWNER &&
	    (workload_store_range(&self->w, self->map, VALUE_SIZE, 0, NR_SOCKETS) ||
	     workload_delete_range(&self->w, self->map, 0, NR_SOCKETS)))
		return -EIO;
	wait_stats();
	cg_snapshot(CG_AGENT, &self->agent0);
	cg_snapshot(CG_WORK, &self->work0);
	return 0;
}

static long agent_now(void)
{
	return cg_current(CG_AGENT);
}

/* start() with @path, whose map must take the path it names. */
static void start_on(struct __test_metadata *_metadata,
		     FIXTURE_DATA(memcg) *self, enum sk_path path)
{
	ASSERT_EQ(0, start(self, path));
	ASSERT_STREQ(path == PATH_DYNAMIC ? "dynamic" : "inline",
		     map_storage(self->map));
}

/* Store a value in every socket; in @d what they charged the agent. */
static void store_all(struct __test_metadata *_metadata,
		      FIXTURE_DATA(memcg) *self, struct cg_snap *d)
{
	ASSERT_EQ(0, workload_store_range(&self->w, self->map, VALUE_SIZE, 0,
					  NR_SOCKETS));
	wait_stats();
	cg_snapshot(CG_AGENT, &self->agent1);
	cg_snapshot(CG_WORK, &self->work1);
	cg_delta(&self->agent0, &self->agent1, d);
	TH_LOG("agent: %ld bytes for %d values", d->current, NR_SOCKETS);
}

TEST_F_TIMEOUT(memcg, dynamic_values_are_charged_to_the_map_owner, 300)
{
	struct cg_snap d;

	start_on(_metadata, self, PATH_DYNAMIC);
	store_all(_metadata, self, &d);
	/* A storage and an element per socket, each more than 64 bytes. */
	ASSERT_LE((long)NR_SOCKETS * (VALUE_SIZE + 128), d.current);
	ASSERT_LE((long)NR_SOCKETS * (VALUE_SIZE + 128), d.slab);
}

TEST_F_TIMEOUT(memcg, inline_values_under_socket_charging_cost_the_owner_nothing, 300)
{
	struct cg_snap d;

	REQUIRE_INLINE(PATH_INLINE_SOCKET, VALUE_SIZE);
	start_on(_metadata, self, PATH_INLINE_SOCKET);
	store_all(_metadata, self, &d);
	/* Only growth is a charge: late frees of earlier work may shrink. */
	ASSERT_GE(SLACK, d.current);
	cg_delta(&self->work0, &self->work1, &d);
	TH_LOG("workload: %ld bytes for %d values", d.current, NR_SOCKETS);
	ASSERT_GE(SLACK, d.current);
}

TEST_F_TIMEOUT(memcg, sockets_carry_the_tail_in_their_own_charge, 300)
{
	long before, after, tcp = slab_object_size("TCP");
	long udp = slab_object_size("UDP");
	struct workload w;

	ASSERT_LT(0, tcp);
	ASSERT_LT(0, udp);
	wait_stats();
	before = cg_current(CG_WORK);
	ASSERT_EQ(0, workload_open(&w, PAIRS));
	wait_stats();
	after = cg_current(CG_WORK);
	workload_close(&w);
	TH_LOG("workload: %ld bytes for %d sockets; objects TCP %ld UDP %ld",
	       after - before, NR_SOCKETS, tcp, udp);
	/* The objects, whose size includes the tail, are the workload's. */
	ASSERT_LE(PAIRS * (2 * tcp + udp), after - before);
}

TEST_F_TIMEOUT(memcg, inline_values_under_owner_charging_cost_the_owner_a_slot_each, 300)
{
	unsigned int slot;
	struct cg_snap d;

	REQUIRE_INLINE(PATH_INLINE_OWNER, VALUE_SIZE);
	start_on(_metadata, self, PATH_INLINE_OWNER);
	slot = map_inline_size(self->map);
	ASSERT_EQ((VALUE_SIZE + 8 + 7) / 8 * 8, slot);
	ASSERT_EQ(0, workload_store_range(&self->w, self->map, VALUE_SIZE, 0,
					  NR_SOCKETS));
	settle_to(CG_AGENT, self->agent0.current + (long)NR_SOCKETS * slot,
		  SLACK);
	wait_stats();
	cg_snapshot(CG_AGENT, &self->agent1);
	cg_delta(&self->agent0, &self->agent1, &d);
	TH_LOG("agent: %ld bytes for %d values of slot %u", d.current,
	       NR_SOCKETS, slot);
	ASSERT_GE(SLACK, labs(d.current - (long)NR_SOCKETS * slot));
	/* Accounted as kernel memory (flushed lazily), not as slab. */
	TH_LOG("memory.stat: kernel %+ld, slab %+ld", d.kernel, d.slab);
	ASSERT_LE((long)NR_SOCKETS * slot / 2, d.kernel);
	ASSERT_GE(SLACK, d.slab);
}

/*
 * Measured from the fully charged state: the agent's own baseline moves by
 * a few pages as the task that created the map goes away.
 */
TEST_F_TIMEOUT(memcg, owner_charges_return_on_delete_on_close_and_on_map_free, 300)
{
	long base, full, now, third;
	unsigned int slot;

	REQUIRE_INLINE(PATH_INLINE_OWNER, VALUE_SIZE);
	start_on(_metadata, self, PATH_INLINE_OWNER);
	slot = map_inline_size(self->map);
	third = (long)NR_SOCKETS / 3 * slot;
	base = self->agent0.current;
	ASSERT_EQ(0, workload_store_range(&self->w, self->map, VALUE_SIZE, 0,
					  NR_SOCKETS));
	full = agent_now();
	TH_LOG("all values stored: %+ld", full - base);

	ASSERT_EQ(0, workload_delete_range(&self->w, self->map, 0, PAIRS));
	now = agent_now();
	TH_LOG("after deleting a third: %+ld", now - full);
	ASSERT_GE(SLACK, labs(full - now - third));

	workload_close_range(&self->w, PAIRS, 2 * PAIRS);
	now = settle_to(CG_AGENT, full - 2 * third, SLACK);
	TH_LOG("after closing a third: %+ld", now - full);
	ASSERT_GE(SLACK, labs(full - now - 2 * third));

	close(self->map);
	self->map = -1;
	ASSERT_EQ(0, wait_map_freed(self->map_id));
	/* The last third, and the map itself, go with the map. */
	now = settle_to(CG_AGENT, full - 3 * third - SLACK, SLACK);
	TH_LOG("after freeing the map: %+ld", now - full);
	ASSERT_LE(3 * third - SLACK, full - now);
	ASSERT_GE(SLACK, now - base);
}

TEST_F_TIMEOUT(memcg, owner_charge_stops_at_memory_max_and_leaves_no_value, 300)
{
	char limit[32], value[VALUE_SIZE];
	unsigned int slot;
	long stored, i;
	int fd, err = 0;

	REQUIRE_INLINE(PATH_INLINE_OWNER, VALUE_SIZE);
	start_on(_metadata, self, PATH_INLINE_OWNER);
	slot = map_inline_size(self->map);
	snprintf(limit, sizeof(limit), "%ld", cg_current(CG_AGENT) + 6 * MEMCG_PAGE);
	ASSERT_EQ(0, cg_write(CG_AGENT "/memory.max", limit));
	memset(value, 1, sizeof(value));
	for (i = 0; i < self->w.nr_fds; i++) {
		fd = self->w.fds[i];
		if (bpf_map_update_elem(self->map, &fd, value, BPF_NOEXIST)) {
			err = -errno;
			break;
		}
	}
	stored = i;
	/* Lift the limit before any check can end the test. */
	ASSERT_EQ(0, cg_write(CG_AGENT "/memory.max", "max"));
	TH_LOG("%ld values stored under a limit of 6 pages over the base", stored);
	ASSERT_EQ(-ENOMEM, err);
	ASSERT_GE(SETTLE_PAGES * MEMCG_PAGE / slot,
		  labs(stored - 6 * MEMCG_PAGE / slot));
	/* The failed update took nothing. */
	ASSERT_NE(0, bpf_map_lookup_elem(self->map, &fd, value));
	ASSERT_EQ(ENOENT, errno);
	ASSERT_EQ(0, bpf_map_update_elem(self->map, &fd, value, BPF_NOEXIST));
}

TEST_F_TIMEOUT(memcg, every_charge_returns_to_baseline_on_each_path, 300)
{
	struct cg_snap a0, w0;
	enum sk_path path;
	long now;

	wait_stats();
	cg_snapshot(CG_AGENT, &a0);
	cg_snapshot(CG_WORK, &w0);
	for (path = 0; path < NR_PATHS; path++) {
		long tol;

		ASSERT_EQ(0, start(self, path));
		tol = strcmp(map_storage(self->map), "inline") ?
		      DYNAMIC_RESIDUE : 4 * SLACK;
		ASSERT_EQ(0, workload_store_range(&self->w, self->map,
						  VALUE_SIZE, 0, NR_SOCKETS));
		workload_close(&self->w);
		close(self->map);
		self->map = -1;
		ASSERT_EQ(0, wait_map_freed(self->map_id));
		now = settle_to(CG_AGENT, a0.current, tol);
		TH_LOG("%s: agent %+ld", sk_path_name[path], now - a0.current);
		ASSERT_GE(tol, labs(now - a0.current));
		now = settle_to(CG_WORK, w0.current, 8 * SLACK);
		TH_LOG("%s: workload %+ld", sk_path_name[path], now - w0.current);
		ASSERT_GE(8 * SLACK, labs(now - w0.current));
	}
}

TEST_HARNESS_MAIN
