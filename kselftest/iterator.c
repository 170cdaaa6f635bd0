// SPDX-License-Identifier: GPL-2.0
/*
 * The iter/bpf_sk_storage_map iterator while sockets come and go: each
 * read() returns one value, or one byte of it, so a walk is resumed
 * hundreds of times, and between reads a thread on the other CPU creates
 * sockets, gives them a value of another map of the same path (or of the
 * walked map itself) and closes older ones. On the inline path those
 * sockets enter and leave the registry the walk goes through. Every value
 * of a socket open throughout is shown exactly once in every pass. A walk
 * stopped between two read()s holds no socket: one closed meanwhile is
 * freed while the iterator stays open.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "interfaces.skel.h"
#include "iterator.skel.h"

#define STABLE		200
#define PASSES		3
/* One line of print_values in interfaces.bpf.c: two %020llu and a newline. */
#define LINE_BYTES	42

/* Sockets of the churn alive at a time: new ones enter, the oldest leave. */
#define CHURN_LIVE	64
/* The churn's value, told from the stable sockets' (i, ~i) in a walk. */
#define CHURN_A		(~0ULL)
#define CHURN_B		0ULL

struct churn {
	int map, walked;
	int link;		/* a second walker's, or -1 */
	atomic_bool stop;
	atomic_long rounds;
	atomic_int errors;
};

static void *churn_sockets(void *arg)
{
	struct churn *c = arg;
	struct val16 v = { CHURN_A, CHURN_B };
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

/*
 * Another walk of the same map, a byte per read(), over and over: its
 * place between reads sits among the first walk's and the churn's
 * sockets, which come and go around it.
 */
static void *walk_beside(void *arg)
{
	struct churn *c = arg;
	char byte;
	int fd;

	while (!atomic_load(&c->stop)) {
		fd = bpf_iter_create(c->link);
		if (fd < 0) {
			atomic_fetch_add(&c->errors, 1);
			break;
		}
		while (!atomic_load(&c->stop) && read(fd, &byte, 1) == 1)
			;
		close(fd);
	}
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

/* Kernel reports in the log so far (the main vm/splat-patterns). */
static int kernel_reports(void)
{
	return count_log_lines("WARNING:", NULL) + count_log_lines("BUG:", NULL) +
	       count_log_lines("refcount_t:", NULL);
}

/*
 * One pass of the printing iterator, @chunk bytes per read() and churn
 * between values; count what it shows of the stable sockets in @seen.
 * Return the number of their lines, or -1 on a bad line.
 */
static int walk_once(int link_fd, int *seen, struct churn *c, size_t chunk)
{
	char line[LINE_BYTES + 1];
	unsigned long long a, b;
	int fd, lines = 0;
	size_t have = 0;
	ssize_t n;

	fd = bpf_iter_create(link_fd);
	if (fd < 0)
		return -1;
	/* @chunk divides LINE_BYTES: no read goes past the end of a line. */
	while ((n = read(fd, line + have, chunk - have % chunk)) > 0) {
		have += n;
		if (have < LINE_BYTES)
			continue;
		line[have] = '\0';
		have = 0;
		if (sscanf(line, "%llu %llu", &a, &b) != 2) {
			lines = -1;
			break;
		}
		if (a == CHURN_A && b == CHURN_B && c->map == c->walked)
			continue;
		if (a >= STABLE || b != ~0ULL - a) {
			lines = -1;
			break;
		}
		seen[a]++;
		lines++;
		wait_churn(c);
	}
	close(fd);
	return n < 0 || have ? -1 : lines;
}

/*
 * PASSES walks of @chunk bytes per read() while sockets churn with values
 * of @churn_map.
 */
static void walk_while_churning(struct __test_metadata *_metadata,
				FIXTURE_DATA(iterator) *self, size_t chunk,
				int churn_map, bool beside)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = {};
	struct churn c = { .map = churn_map, .walked = self->map, .link = -1 };
	int seen[STABLE], pass, i, lines;
	int reports = kernel_reports();
	struct bpf_link *link;
	pthread_t th, th2;
	long rounds;

	linfo.map.map_fd = self->map;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(self->skel->progs.print_values, &opts);
	ASSERT_NE(NULL, link);
	/* The churn runs on CPU 1, the walk wherever the test runs. */
	ASSERT_EQ(0, start_on_cpu1(&th, churn_sockets, &c));
	if (beside) {
		c.link = bpf_link__fd(link);
		ASSERT_EQ(0, pthread_create(&th2, NULL, walk_beside, &c));
	}
	for (pass = 0; pass < PASSES; pass++) {
		memset(seen, 0, sizeof(seen));
		lines = walk_once(bpf_link__fd(link), seen, &c, chunk);
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
	if (beside)
		pthread_join(th2, NULL);
	bpf_link__destroy(link);
	rounds = atomic_load(&c.rounds);
	TH_LOG("%ld sockets created and closed during %d passes", rounds,
	       PASSES);
	EXPECT_EQ(0, atomic_load(&c.errors));
	/* Without churn between the reads the test shows nothing. */
	EXPECT_LE(PASSES * STABLE, rounds);
	EXPECT_EQ(reports, kernel_reports());
}

TEST_F_TIMEOUT(iterator, every_value_once_per_pass_while_sockets_churn, 300)
{
	walk_while_churning(_metadata, self, LINE_BYTES, self->other, false);
}

/*
 * A byte per read(): the walk stops at every value, and its next read()
 * goes on from there, with hundreds of sockets replaced in between. On
 * the inline path they hold values of the walked map, so the walk often
 * stops at a socket that is freed before it goes on. A dynamic map's walk
 * resumes a bucket by position, as upstream, where new values ahead of it
 * would be shown twice: its churn stays in the other map. A second walk
 * of the same map runs beside it all along.
 */
TEST_F_TIMEOUT(iterator, every_value_once_per_pass_reading_a_byte_at_a_time, 300)
{
	unsigned int off, size;
	bool inline_walk = map_slot(self->map, &off, &size) == 1;

	walk_while_churning(_metadata, self, 1,
			    inline_walk ? self->map : self->other, true);
}

/* Wait (at most ~5 s) until @fentry saw every socket of @cookies freed. */
static int wait_freed(struct iterator *fentry, const __u64 *cookies, int n)
{
	int map = bpf_map__fd(fentry->maps.freed), i, missing = n, tries;
	__u8 one;

	for (tries = 0; tries < 500 && missing; tries++) {
		if (tries)
			usleep(10000);
		for (i = 0, missing = 0; i < n; i++)
			missing += !!bpf_map_lookup_elem(map, &cookies[i], &one);
	}
	return missing;
}

/*
 * Read the walk a byte at a time until it stops in the middle, close
 * every socket that holds a value and wait a grace period: each socket's
 * memory is released (security_sk_free(), from sk_prot_free()) while the
 * iterator is still open, and the rest of the walk shows none of them.
 */
TEST_F_TIMEOUT(iterator, a_stopped_walk_keeps_no_closed_socket, 120)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = {};
	int reports = kernel_reports();
	size_t consumed = 0, rest = 0;
	struct iterator *fentry;
	__u64 cookies[STABLE];
	struct bpf_link *link;
	int fd, i, missing;
	char byte;
	ssize_t n;

	fentry = iterator__open_and_load();
	ASSERT_NE(NULL, fentry);
	ASSERT_EQ(0, iterator__attach(fentry));
	for (i = 0; i < STABLE; i++) {
		cookies[i] = sk_cookie(self->fds[i]);
		ASSERT_NE(0, cookies[i]);
	}
	linfo.map.map_fd = self->map;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(self->skel->progs.print_values, &opts);
	ASSERT_NE(NULL, link);
	fd = bpf_iter_create(bpf_link__fd(link));
	ASSERT_LE(0, fd);
	/* Two values and a half read: three shown, the walk stopped at a fourth. */
	while (consumed < 2 * LINE_BYTES + LINE_BYTES / 2) {
		ASSERT_EQ(1, read(fd, &byte, 1));
		consumed++;
	}
	for (i = 0; i < STABLE; i++) {
		close(self->fds[i]);
		self->fds[i] = -1;
	}
	missing = wait_freed(fentry, cookies, STABLE);
	EXPECT_EQ(0, missing)
		TH_LOG("%d of %d closed sockets not freed while the iterator is open",
		       missing, STABLE);
	/* Only the value being read when the sockets closed is left. */
	while ((n = read(fd, &byte, 1)) == 1)
		rest++;
	EXPECT_EQ(0, n);
	EXPECT_EQ(LINE_BYTES - consumed % LINE_BYTES, rest);
	close(fd);
	bpf_link__destroy(link);
	iterator__destroy(fentry);
	EXPECT_EQ(reports, kernel_reports());
}

TEST_HARNESS_MAIN
