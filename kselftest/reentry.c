// SPDX-License-Identifier: GPL-2.0
/*
 * Tracing programs re-enter the sections that create and delete inline
 * values. Creating a value takes a registry bucket's raw spinlock (the
 * socket's first value) and charges the map's owner through the memcg's
 * per-CPU stock; fentry programs on _raw_spin_unlock_irqrestore(), which
 * runs with the bucket lock still held, and on obj_cgroup_charge() create
 * and delete values of the same map while creating programs run on both
 * CPUs. A kernel that let them in would take those locks again on the
 * same CPU: a deadlock, or a lockdep report. Shown: the load finishes,
 * both programs ran inside sections and were refused there, the kernel
 * logged no report, and every value the creating program gave is there.
 */
#include "../kselftest_harness.h"

#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sk_memcg.h"
#include "sk_storage_test.h"

/*
 * As in reentry.bpf.c: the worker's descriptors for its kept and fresh
 * sockets. Below 64, so that they stay in the file table's own array,
 * which the programs read; the workload's sockets take lower ones.
 */
#define KEPT_FD		40
#define NR_KEPT		8
#define FRESH_FD	48
#define NR_FRESH	16
#define NR_WORKERS	2
#define VALUE_MAGIC	0x5e5e0000ULL

/* As in reentry.bpf.c: the re-entering programs' counters. */
enum { ON_UNLOCK, ON_CHARGE, NR_HOOKS };

struct reentry_stats {
	__u64 runs;
	__u64 in_workload;
	__u64 refused;
	__u64 succeeded;
	__u64 hardirq;
};

/* Its skeleton names struct reentry_stats. */
#include "reentry.skel.h"

/*
 * Each round gives the fresh sockets' first values a section of their
 * own: with 16 of them and 256 registry buckets, a kernel without the
 * guard meets its own bucket in about one round in sixteen.
 */
#define ROUNDS		200

#define CG_REENTRY	CG_ROOT "/sk-reentry"

static const int kinds[][2] = {
	{ AF_INET, SOCK_STREAM }, { AF_INET, SOCK_DGRAM }, { AF_UNIX, SOCK_STREAM },
};

#define NR_KINDS	(sizeof(kinds) / sizeof(kinds[0]))

struct worker_result {
	int kept;	/* kept sockets made, each given a value */
	int sockets;	/* workload sockets made, each given a value */
	int verified;	/* of those, whose value was there */
	int lost_kind;	/* the kind of one that had none, + 1 */
	int error;	/* errno of a failed step, or -1 for a wrong fd */
};

/* @fd's value as give_value wrote it. */
static bool value_ok(int map_fd, int fd, int family)
{
	struct val16 v;

	if (bpf_map_lookup_elem(map_fd, &fd, &v))
		return false;
	return v.a == (VALUE_MAGIC | family) && v.b == (__u64)getpid();
}

/* A socket of @family and @type at descriptor @at. */
static int socket_at(int family, int type, int at)
{
	int fd = socket(family, type, 0);

	if (fd < 0)
		return -1;
	if (dup2(fd, at) != at) {
		close(fd);
		return -1;
	}
	close(fd);
	return at;
}

/*
 * Pinned to CPU @cpu: the kept sockets get values from give_value; each
 * round replaces the fresh ones (with give_value told to leave them
 * alone), then makes one socket of each kind, checks its value, and
 * closes them again, which unlinks them from the registry.
 */
static void worker(struct reentry *skel, int cpu, int out)
{
	int map_fd = bpf_map__fd(skel->maps.map);
	struct worker_result r = {};
	int fds[NR_KINDS];
	unsigned int k;
	cpu_set_t set;
	int i, round;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		r.error = errno;
		goto out;
	}
	skel->bss->worker_pid[cpu] = getpid();
	for (i = 0; i < NR_KEPT; i++) {
		if (socket_at(AF_INET, SOCK_DGRAM, KEPT_FD + i) < 0) {
			r.error = errno;
			goto out;
		}
		/* Not checked: the programs replace its value from now on. */
		r.kept++;
	}
	for (round = 0; round < ROUNDS && !r.error; round++) {
		skel->bss->filling[cpu] = true;
		for (i = 0; i < NR_FRESH; i++) {
			if (socket_at(AF_INET, SOCK_DGRAM, FRESH_FD + i) < 0) {
				r.error = errno;
				break;
			}
		}
		skel->bss->filling[cpu] = false;
		for (k = 0; k < NR_KINDS && !r.error; k++) {
			fds[k] = socket(kinds[k][0], kinds[k][1], 0);
			if (fds[k] < 0) {
				r.error = errno;
				break;
			}
			if (fds[k] >= KEPT_FD) {
				r.error = -1;
				break;
			}
			r.sockets++;
		}
		/* Checked after all three: the others' sections ran meanwhile. */
		for (i = 0; i < (int)k; i++) {
			if (value_ok(map_fd, fds[i], kinds[i][0]))
				r.verified++;
			else
				r.lost_kind = i + 1;
			close(fds[i]);
		}
	}
	/* The kept ones, last: the programs deleted and recreated their values. */
	for (i = 0; i < NR_KEPT; i++)
		close(KEPT_FD + i);
out:
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	_exit(0);
}

FIXTURE(reentry) {
	struct reentry *skel;
	long charge;
	int kmsg;
};

/*
 * The map is created in a memory cgroup of its own with the owner charged,
 * so that creations call obj_cgroup_charge() (the root cgroup charges
 * nothing); the test stays in it, and its workers too.
 */
FIXTURE_SETUP(reentry)
{
	unsigned int off, size;

	self->skel = NULL;
	self->kmsg = -1;
	self->charge = read_ulong(CHARGE_SYSCTL);
	if (!tail_on())
		SKIP(return, "no inline tail in this boot");
	if (!proto_has_tail("UDP") || !proto_has_tail("TCP"))
		SKIP(return, "TCP or UDP sockets have no tail in this boot");
	REQUIRE_CPUS(NR_WORKERS);
	ASSERT_EQ(0, cg_write(CG_ROOT "/cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_REENTRY, 0755) || errno == EEXIST);
	ASSERT_EQ(0, cg_enter(CG_REENTRY));
	ASSERT_EQ(0, write_file(CHARGE_SYSCTL, "1"));
	self->skel = reentry__open_and_load();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, write_file(CHARGE_SYSCTL, self->charge ? "1" : "0"));
	ASSERT_EQ(1, map_slot(bpf_map__fd(self->skel->maps.map), &off, &size))
		TH_LOG("the map got no slot");
	self->kmsg = kmsg_open();
	ASSERT_LE(0, self->kmsg);
}

FIXTURE_TEARDOWN(reentry)
{
	if (self->charge >= 0)
		write_file(CHARGE_SYSCTL, self->charge ? "1" : "0");
	if (self->kmsg >= 0)
		close(self->kmsg);
	reentry__destroy(self->skel);
	cg_enter(CG_ROOT);
	rmdir(CG_REENTRY);
}

TEST_F_TIMEOUT(reentry, fentry_on_the_create_path_locks_under_load, 300)
{
	struct reentry__bss *bss = self->skel->bss;
	struct worker_result r[NR_WORKERS] = {};
	const char *hook[] = { "_raw_spin_unlock_irqrestore", "obj_cgroup_charge" };
	int pipes[NR_WORKERS][2], status, i, expected = 0;
	pid_t pid[NR_WORKERS];
	char report[256];

	ASSERT_EQ(0, reentry__attach(self->skel));
	for (i = 0; i < NR_WORKERS; i++) {
		ASSERT_EQ(0, pipe(pipes[i]));
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			worker(self->skel, i, pipes[i][1]);
		close(pipes[i][1]);
	}
	/* A deadlock never gets here: the harness's timeout reports it. */
	for (i = 0; i < NR_WORKERS; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		ASSERT_EQ(sizeof(r[i]), read(pipes[i][0], &r[i], sizeof(r[i])));
		close(pipes[i][0]);
	}
	reentry__detach(self->skel);

	for (i = 0; i < NR_WORKERS; i++) {
		EXPECT_EQ(0, r[i].error) TH_LOG("worker %d: %s", i,
			r[i].error < 0 ? "a workload socket above its fds" :
			strerror(r[i].error));
		EXPECT_EQ(NR_KEPT, r[i].kept);
		EXPECT_EQ(ROUNDS * (int)NR_KINDS, r[i].sockets);
		EXPECT_EQ(r[i].sockets, r[i].verified)
			TH_LOG("worker %d: %d sockets lost their value, one of kind %d",
			       i, r[i].sockets - r[i].verified, r[i].lost_kind - 1);
		expected += r[i].kept + r[i].sockets;
	}
	/* The workload's own creations and deletions never run nested. */
	EXPECT_EQ(expected, bss->given);
	EXPECT_EQ(expected, bss->deleted);
	EXPECT_EQ(0, bss->give_failed);
	EXPECT_EQ(0, bss->delete_failed);
	for (i = 0; i < NR_HOOKS; i++) {
		TH_LOG("%s: %llu runs, %llu inside the workload, %llu refused, "
		       "%llu succeeded, %llu in hard interrupts", hook[i],
		       bss->stats[i].runs, bss->stats[i].in_workload,
		       bss->stats[i].refused, bss->stats[i].succeeded,
		       bss->stats[i].hardirq);
		EXPECT_LT(0, bss->stats[i].in_workload) TH_LOG("%s", hook[i]);
		/* Refused: nothing else touches the worker's sockets. */
		EXPECT_LT(0, bss->stats[i].refused) TH_LOG("%s", hook[i]);
	}
	/* Outside sections the programs' own helpers work. */
	EXPECT_LT(0, bss->stats[ON_UNLOCK].succeeded + bss->stats[ON_CHARGE].succeeded);
	EXPECT_FALSE(kmsg_report(self->kmsg, report, sizeof(report)))
		TH_LOG("kernel log: %s", report);
}

TEST_HARNESS_MAIN
