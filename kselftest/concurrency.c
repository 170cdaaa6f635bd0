// SPDX-License-Identifier: GPL-2.0
/*
 * Two vCPUs on the same sockets: racing creators agree on one value, and
 * create/delete churn while maps come and go never yields a wrong value.
 * Kernel reports (WARN, BUG, lockdep, RCU) fail the boot in vm/run.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"

#define NR_SHARED	16

struct race {
	pthread_barrier_t start, done;
	int fd[NR_SHARED];
	int rounds;
	int errors[2];
};

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

struct race_arg {
	struct race *r;
	int thread;
};

static void *racer(void *p)
{
	struct race_arg *a = p;
	struct race_cmd cmd = { .thread = a->thread };
	int round;

	pin_to_cpu(a->thread);
	for (round = 0; round < a->r->rounds; round++) {
		cmd.init.a = round;
		cmd.init.b = 1000 + a->thread;
		pthread_barrier_wait(&a->r->start);
		if (helper_race(a->r->fd[round % NR_SHARED], MAP_A, &cmd))
			a->r->errors[a->thread]++;
		pthread_barrier_wait(&a->r->done);
		pthread_barrier_wait(&a->r->start);	/* checked, deleted */
	}
	return NULL;
}

TEST(racing_creators_on_two_cpus_both_get_the_winner_value)
{
	struct race_arg args[2];
	struct attached drv;
	struct race r = { .rounds = 2000 };
	int seen_fd, round, t, wins[2] = {};
	pthread_t th[2];
	struct val16 v[2];
	__u32 idx;

	REQUIRE_CPUS(2);
	ASSERT_EQ(0, attach_driver(&drv));
	seen_fd = bpf_map__fd(drv.skel->maps.race_seen);
	for (t = 0; t < NR_SHARED; t++) {
		r.fd[t] = socket(AF_INET, SOCK_DGRAM, 0);
		ASSERT_LE(0, r.fd[t]);
	}
	pthread_barrier_init(&r.start, NULL, 3);
	pthread_barrier_init(&r.done, NULL, 3);
	for (t = 0; t < 2; t++) {
		args[t].r = &r;
		args[t].thread = t;
		ASSERT_EQ(0, pthread_create(&th[t], NULL, racer, &args[t]));
	}
	for (round = 0; round < r.rounds; round++) {
		pthread_barrier_wait(&r.start);
		pthread_barrier_wait(&r.done);
		for (t = 0; t < 2; t++) {
			idx = t;
			ASSERT_EQ(0, bpf_map_lookup_elem(seen_fd, &idx, &v[t]));
		}
		ASSERT_EQ(0, memcmp(&v[0], &v[1], sizeof(v[0]))) {
			TH_LOG("round %d: thread 0 saw %llu/%llu, thread 1 %llu/%llu",
			       round, v[0].a, v[0].b, v[1].a, v[1].b);
		}
		ASSERT_EQ(round, v[0].a);
		ASSERT_TRUE(v[0].b == 1000 || v[0].b == 1001);
		wins[v[0].b - 1000]++;
		ASSERT_EQ(0, helper_delete(r.fd[round % NR_SHARED], MAP_A));
		pthread_barrier_wait(&r.start);
	}
	for (t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	EXPECT_EQ(0, r.errors[0]);
	EXPECT_EQ(0, r.errors[1]);
	TH_LOG("wins: thread 0 %d, thread 1 %d", wins[0], wins[1]);
	for (t = 0; t < NR_SHARED; t++)
		close(r.fd[t]);
	detach_driver(&drv);
}

struct churn {
	int fd[NR_SHARED];
	volatile int stop;
	long ops[2], wrong[2];
};

struct churn_arg {
	struct churn *c;
	int thread;
};

/* Every writer stores the socket's index: any other value read is wrong. */
static void *churner(void *p)
{
	struct churn_arg *a = p;
	struct churn *c = a->c;
	unsigned int seed = a->thread + 1;
	struct val16 v, out;
	int i;

	pin_to_cpu(a->thread);
	while (!c->stop) {
		i = rand_r(&seed) % NR_SHARED;
		v.a = i;
		v.b = 0xc0ffee;
		switch (rand_r(&seed) % 3) {
		case 0:
			helper_create(c->fd[i], MAP_A, &v, sizeof(v));
			break;
		case 1:
			helper_delete(c->fd[i], MAP_A);
			break;
		}
		if (!helper_get(c->fd[i], MAP_A, &out, sizeof(out)) &&
		    (out.a != i || out.b != 0xc0ffee))
			c->wrong[a->thread]++;
		c->ops[a->thread]++;
	}
	return NULL;
}

TEST(create_delete_churn_while_maps_come_and_go_never_reads_a_wrong_value)
{
	struct churn c = {};
	struct churn_arg args[2];
	struct attached drv;
	pthread_t th[2];
	int t, i, fd, cycle, failures = 0;

	REQUIRE_CPUS(2);
	ASSERT_EQ(0, attach_driver(&drv));
	for (i = 0; i < NR_SHARED; i++) {
		c.fd[i] = socket(AF_INET6, SOCK_STREAM, 0);
		ASSERT_LE(0, c.fd[i]);
	}
	for (t = 0; t < 2; t++) {
		args[t].c = &c;
		args[t].thread = t;
		ASSERT_EQ(0, pthread_create(&th[t], NULL, churner, &args[t]));
	}
	/* Meanwhile, maps are created, used and freed around map_a's slot.
	 * Failures are counted, not asserted, so the threads are stopped
	 * before anything is reported.
	 */
	for (cycle = 0; cycle < 150 && !failures; cycle++) {
		fd = create_sk_map(8 + 8 * (cycle % 4), 0);
		if (fd < 0) {
			failures++;
			break;
		}
		for (i = 0; i < NR_SHARED; i++) {
			/* Values of up to 32 bytes: whole buffers both ways. */
			__u64 in[4] = { cycle, cycle, cycle, cycle }, got[4] = {};

			failures += sys_lookup(fd, c.fd[i], got) != -ENOENT;
			failures += sys_update(fd, c.fd[i], in, BPF_NOEXIST) != 0;
			failures += sys_lookup(fd, c.fd[i], got) != 0 || got[0] != cycle;
		}
		close(fd);
	}
	c.stop = 1;
	for (t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	EXPECT_EQ(0, failures) TH_LOG("failed at map cycle %d", cycle);
	TH_LOG("operations: %ld + %ld", c.ops[0], c.ops[1]);
	EXPECT_LT(1000, c.ops[0] + c.ops[1]);
	EXPECT_EQ(0, c.wrong[0]);
	EXPECT_EQ(0, c.wrong[1]);
	for (i = 0; i < NR_SHARED; i++)
		close(c.fd[i]);
	detach_driver(&drv);
}

TEST_HARNESS_MAIN
