// SPDX-License-Identifier: GPL-2.0
/*
 * net.core.bpf_sk_inline_charge = 1 from sleepable and non-sleepable
 * programs: the documentation says the owner's charge never reclaims and
 * never goes beyond its memory.max, whatever the program's context
 * (where the dynamic path reclaims for a sleepable program). So an LSM
 * program creates as many values under a limit of a few pages when it
 * may sleep as when it may not, one fewer than the limit holds at most,
 * a creation that failed leaves no value, and a value that exists is
 * returned at the limit without a charge. As in memcg, an agent cgroup
 * loads the program and a workload cgroup owns the sockets.
 */
#include <sys/socket.h>
#include "../kselftest_harness.h"
#include "sk_memcg.h"
#include "sk_storage_test.h"
#include "memcg_sleepable.skel.h"

#define NR_SOCKETS	1000
#define LIMIT_PAGES	6
#define SLACK		(SETTLE_PAGES * MEMCG_PAGE)

FIXTURE(sleepable) {
	struct workload w;
	struct memcg_sleepable *skel;
	struct bpf_link *link;
};

FIXTURE_BOOL_VARIANTS(sleepable, sleepable, lsm, lsm_s);

FIXTURE_SETUP(sleepable)
{
	self->skel = NULL;
	self->link = NULL;
	memcg_test_setup(_metadata, &self->w, NULL);
}

FIXTURE_TEARDOWN(sleepable)
{
	bpf_link__destroy(self->link);
	memcg_test_close(&self->w, -1);
	memcg_sleepable__destroy(self->skel);
	memcg_test_teardown();
}

/* Load the variant's program from the agent cgroup under the owner policy. */
static int agent_load(FIXTURE_DATA(sleepable) *self, bool sleepable)
{
	int err;

	self->skel = memcg_sleepable__open();
	if (!self->skel)
		return -EINVAL;
	bpf_program__set_autoload(sleepable ? self->skel->progs.create_atomic :
				  self->skel->progs.create_sleepable, false);
	err = cg_enter(CG_AGENT);
	if (!err)
		err = cg_write(CHARGE_SYSCTL, "1");
	if (!err)
		err = memcg_sleepable__load(self->skel);
	cg_write(CHARGE_SYSCTL, "0");
	if (cg_enter(CG_WORK) || err)
		return err ? err : -EIO;
	self->link = bpf_program__attach_lsm(sleepable ? self->skel->progs.create_sleepable :
					     self->skel->progs.create_atomic);
	return self->link ? 0 : -errno;
}

/* Run the program on @fd: 1 if it got a value, 0 if NULL, -1 if it did not run. */
static int lsm_create(FIXTURE_DATA(sleepable) *self, int fd)
{
	char buf[8];
	socklen_t len = sizeof(buf);

	self->skel->data->created = -1;
	getsockopt(fd, SOL_SK_STORAGE_TEST, 0, buf, &len);
	return self->skel->data->created;
}

TEST_F_TIMEOUT(sleepable, owner_charge_stops_at_memory_max_in_either_context, 300)
{
	int map, i, n, got, present, fd;
	struct val16 v;
	unsigned int slot;
	char limit[32];

	if (!libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_LSM, NULL))
		SKIP(return, "no BPF LSM in this kernel");
	ASSERT_EQ(0, agent_load(self, variant->sleepable));
	map = bpf_map__fd(self->skel->maps.owner_map);
	if (!require_owner_map(_metadata, map))
		return;
	slot = map_inline_size(map);
	ASSERT_EQ(0, workload_open(&self->w, NR_SOCKETS / 2));
	/* The program runs in this kernel's LSM stack. */
	ASSERT_EQ(1, lsm_create(self, self->w.fds[0]));
	ASSERT_EQ(0, bpf_map_delete_elem(map, &self->w.fds[0]));

	snprintf(limit, sizeof(limit), "%ld",
		 stable_current(CG_AGENT) + LIMIT_PAGES * MEMCG_PAGE);
	ASSERT_EQ(0, cg_write(CG_AGENT "/memory.max", limit));
	for (n = 0, got = 1; n < self->w.nr_fds; n++) {
		got = lsm_create(self, self->w.fds[n]);
		if (got != 1)
			break;
	}
	/* Still at the limit: a value that exists is returned, uncharged. */
	present = n ? lsm_create(self, self->w.fds[0]) : -1;
	/* Lift the limit before any check can end the test. */
	ASSERT_EQ(0, cg_write(CG_AGENT "/memory.max", "max"));
	TH_LOG("%s: %d values of slot %u under a limit of %d pages over the base",
	       variant->sleepable ? "lsm.s" : "lsm", n, slot, LIMIT_PAGES);
	/* bpf_sk_storage_get() returned NULL, no reclaim made room. */
	ASSERT_EQ(0, got);
	ASSERT_LT(0, n);
	EXPECT_EQ(1, present);
	EXPECT_GE(SLACK / slot, labs(n - LIMIT_PAGES * MEMCG_PAGE / (long)slot));
	/* The failed creation took no slot; without the limit it succeeds. */
	fd = self->w.fds[n];
	ASSERT_NE(0, bpf_map_lookup_elem(map, &fd, &v));
	ASSERT_EQ(ENOENT, errno);
	ASSERT_EQ(1, lsm_create(self, fd));
	for (i = 0; i <= n; i++)
		ASSERT_EQ(0, bpf_map_delete_elem(map, &self->w.fds[i]));
}

TEST_HARNESS_MAIN
