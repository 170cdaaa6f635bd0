// SPDX-License-Identifier: GPL-2.0
/*
 * The iter/bpf_sk_storage_map iterator while sockets come and go: each
 * read() returns one value, so a walk is resumed hundreds of times, and
 * between reads a thread on the other CPU creates sockets, gives them a
 * value of another map of the same path and closes older ones. On the inline
 * path those sockets enter and leave the registry the walk goes through.
 * Every value of the walked map is shown exactly once in every pass.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "interfaces.skel.h"

#define STABLE		200
#define PASSES		3
/* One line of print_values in interfaces.bpf.c: two %020llu and a newline. */
#define LINE_BYTES	42

/* Sockets of the churn alive at a time: new ones enter, the oldest leave. */
#define CHURN_LIVE	64

struct churn {
	int map;
	atomic_bool stop;
	atomic_long rounds;
	atomic_int errors;
};

static void *churn_sockets(void *arg)
{
	struct churn *c = arg;
	struct val16 v = { 1, 2 };
	int live[CHURN_LIVE], k;

	for (k = 0; k < CHURN_LIVE; k++)
		live[k] = -1;
	for (k = 0; !atomic_load(&c->stop); k = (k + 1) % CHURN_LIVE) {
		if (live[k] >= 0)
			close(live[k]);
		live[k] = socket(AF_INET, SOCK_DGRAM, 0);
		if (live[k] < 0 || sys_update(c->map, live[k], &v, BPF_NOEXIST))
			atomic_fetch_add(&c->errors, 1);
		atomic_fetch_add(&c->rounds, 1);
	}
	for (k = 0; k < CHURN_LIVE; k++)
		if (live[k] >= 0)
			close(live[k]);
	return NULL;
}

/* Let the churn replace two sockets (at most ~1 s) before the next read. */
static void wait_churn(struct churn *c)
{
	long start = atomic_load(&c->rounds);
	int i;

	for (i = 0; i < 10000 && atomic_load(&c->rounds) < start + 2; i++)
		usleep(100);
}

FIXTURE(iterator) {
	struct interfaces *skel;
	int map, other;
	int fds[STABLE];
};

FIXTURE_BOOL_VARIANTS(iterator, dynamic, inline, dynamic);

FIXTURE_SETUP(iterator)
{
	struct sk_fillers f = {};
	unsigned int off, size;
	struct val16 v;
	int i;

	REQUIRE_CPUS(2);	/* the churn runs on CPU 1 */
	self->skel = interfaces__open();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, reuse_sk_map(self->skel->maps.map_inline, false));
	ASSERT_EQ(0, reuse_sk_map(self->skel->maps.map_dyn, true));
	ASSERT_EQ(0, interfaces__load(self->skel));
	self->map = bpf_map__fd(variant->dynamic ? self->skel->maps.map_dyn :
						    self->skel->maps.map_inline);
	/* The churn's map: on the walked map's path, while the tail lasts. */
	self->other = variant->dynamic ?
		      create_dynamic_sk_map(sizeof(struct val16), &f) :
		      create_sk_map(sizeof(struct val16), 0);
	ASSERT_LE(0, self->other);
	ASSERT_EQ(0, release_fillers(&f));
	if (variant->dynamic || !tail_bytes())
		ASSERT_EQ(0, map_slot(self->other, &off, &size));
	for (i = 0; i < STABLE; i++) {
		self->fds[i] = socket(i % 2 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
		ASSERT_LE(0, self->fds[i]);
		v = (struct val16){ i, ~0ULL - i };
		ASSERT_EQ(0, sys_update(self->map, self->fds[i], &v, BPF_NOEXIST));
	}
}

FIXTURE_TEARDOWN(iterator)
{
	int i;

	for (i = 0; i < STABLE; i++)
		if (self->fds[i] > 0)
			close(self->fds[i]);
	if (self->other >= 0)
		close(self->other);
	interfaces__destroy(self->skel);
}

/*
 * One pass of the printing iterator, a line per read() and churn between
 * reads; count what it shows in @seen. Return the number of lines, or -1
 * on a bad line.
 */
static int walk_once(int link_fd, int *seen, struct churn *c)
{
	char line[LINE_BYTES + 1];
	unsigned long long a, b;
	int fd, lines = 0;
	ssize_t n;

	fd = bpf_iter_create(link_fd);
	if (fd < 0)
		return -1;
	while ((n = read(fd, line, LINE_BYTES)) > 0) {
		line[n] = '\0';
		if (n != LINE_BYTES || sscanf(line, "%llu %llu", &a, &b) != 2 ||
		    a >= STABLE || b != ~0ULL - a) {
			lines = -1;
			break;
		}
		seen[a]++;
		lines++;
		wait_churn(c);
	}
	close(fd);
	return n < 0 ? -1 : lines;
}

TEST_F_TIMEOUT(iterator, every_value_once_per_pass_while_sockets_churn, 300)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = {};
	struct churn c = { .map = self->other };
	int seen[STABLE], pass, i, lines;
	struct bpf_link *link;
	long rounds;
	pthread_t th;

	linfo.map.map_fd = self->map;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(self->skel->progs.print_values, &opts);
	ASSERT_NE(NULL, link);
	/* The churn runs on CPU 1, the walk wherever the test runs. */
	ASSERT_EQ(0, start_on_cpu1(&th, churn_sockets, &c));
	for (pass = 0; pass < PASSES; pass++) {
		memset(seen, 0, sizeof(seen));
		lines = walk_once(bpf_link__fd(link), seen, &c);
		EXPECT_EQ(STABLE, lines);
		for (i = 0; i < STABLE; i++) {
			if (seen[i] != 1)
				TH_LOG("pass %d: value %d shown %d times",
				       pass, i, seen[i]);
			EXPECT_EQ(1, seen[i]);
		}
	}
	atomic_store(&c.stop, true);
	pthread_join(th, NULL);
	bpf_link__destroy(link);
	rounds = atomic_load(&c.rounds);
	TH_LOG("%ld sockets created and closed during %d passes", rounds,
	       PASSES);
	EXPECT_EQ(0, atomic_load(&c.errors));
	/* Without churn between the reads the test shows nothing. */
	EXPECT_LE(PASSES * STABLE, rounds);
}

TEST_HARNESS_MAIN
