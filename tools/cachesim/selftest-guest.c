// SPDX-License-Identifier: GPL-2.0
/*
 * cachesim-selftest: access patterns whose misses in the simulated cache
 * hierarchy (tools/cachesim, default sizes) are known, each pass between
 * the phase markers. It prints one line per phase,
 *
 *   cachesim-phase ID TEST PASS ACCESSES
 *
 * and tools/cachesim/selftest compares the plugin's counts for ID with
 * what TEST must give. Linked static and not PIE: the markers' addresses
 * come from nm.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE		64
#define L1_SIZE		(32 << 10)
#define L1_WAYS		8
#define L2_SIZE		(1 << 20)
#define LLC_SIZE	(32 << 20)

/* The phase markers: empty, never inlined, cloned or merged. */
__attribute__((noipa)) void cachesim_begin(void)
{
	asm volatile("" ::: "memory");
}

__attribute__((noipa)) void cachesim_end(void)
{
	asm volatile("" ::: "memory");
}

static long phase_id;

static void report(const char *test, int pass, long accesses)
{
	printf("cachesim-phase %ld %s %d %ld\n", phase_id++, test, pass, accesses);
}

static char *buffer(size_t size)
{
	char *p = aligned_alloc(4096, size);

	if (!p) {
		fprintf(stderr, "cachesim-selftest: out of memory\n");
		exit(1);
	}
	memset(p, 1, size);
	return p;
}

/* One load per line of @buf, in address order. */
static __attribute__((noinline)) uint64_t stride(const char *buf, size_t size)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < size; i += LINE)
		sum += *(const volatile uint64_t *)(buf + i);
	return sum;
}

/* Passes back to back: a report's write() in between would evict lines. */
static void stride_test(const char *test, const char *buf, size_t size, int passes)
{
	int p;

	for (p = 1; p <= passes; p++) {
		cachesim_begin();
		stride(buf, size);
		cachesim_end();
	}
	for (p = 1; p <= passes; p++)
		report(test, p, size / LINE);
}

static __attribute__((noinline)) void *chase(void *p, long n)
{
	while (n--)
		p = *(void *volatile *)p;
	return p;
}

/* Every line of @buf points to the next of a random cycle through all. */
static void chase_init(char *buf, long lines)
{
	uint32_t *perm = malloc(lines * sizeof(*perm));
	uint64_t x = 88172645463325252ULL;
	long i, j;
	uint32_t t;

	if (!perm) {
		fprintf(stderr, "cachesim-selftest: out of memory\n");
		exit(1);
	}
	for (i = 0; i < lines; i++)
		perm[i] = i;
	/* Sattolo: a single cycle. */
	for (i = lines - 1; i > 0; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % i;
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (i = 0; i < lines; i++)
		*(void **)(buf + (size_t)perm[i] * LINE) =
			buf + (size_t)perm[(i + 1) % lines] * LINE;
	free(perm);
}

/*
 * Line A and L1_WAYS others, all in one L1 set (a way's size apart), read
 * A, B0, A, B1, ... A, B7, A, B0, ...: under LRU A stays and every B misses
 * (L1_WAYS of them share L1_WAYS - 1 ways); FIFO or random replacement
 * evict A too, or keep some Bs.
 */
static __attribute__((noinline)) uint64_t lru_pattern(const char *buf, long rounds)
{
	const long way = L1_SIZE / L1_WAYS;
	uint64_t sum = 0;
	long r;
	int b;

	for (r = 0; r < rounds; r++)
		for (b = 1; b <= L1_WAYS; b++) {
			sum += *(const volatile uint64_t *)buf;
			sum += *(const volatile uint64_t *)(buf + b * way);
		}
	return sum;
}

/*
 * Coherence: one line read over and over on this vCPU while a thread on
 * the other one stores to it (coherence misses) or to a line of its own
 * a page away (none).
 */
static volatile int writer_state;	/* 0 wait, 1 store, -1 exit */
static volatile long writer_stores;
static char *writer_target;

static void *writer(void *arg)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET((long)arg, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	while (writer_state >= 0) {
		if (writer_state == 1) {
			*(volatile uint64_t *)writer_target += 1;
			writer_stores++;
		}
	}
	return NULL;
}

/* Read @line @n times; how often its value changed between two reads. */
static __attribute__((noinline)) long reread(const char *line, long n)
{
	uint64_t prev = *(const volatile uint64_t *)line, v;
	long changes = 0;

	while (n--) {
		v = *(const volatile uint64_t *)line;
		changes += v != prev;
		prev = v;
	}
	return changes;
}

#define COH_CHUNK	10000
#define COH_CHANGES	200	/* each one a store between two reads: a miss */

/*
 * The other vCPU stores only while the host runs its thread, which a
 * loaded host may not do for a whole read loop: with @until_changes, read
 * on until the line changed under this vCPU that often (each change took a
 * coherence miss), for at most 100 times @reads.
 */
static void coherence_test(const char *test, char *line, char *target, long reads,
			   bool until_changes)
{
	long start, done = 0, changes = 0;

	writer_target = target;
	start = writer_stores;
	writer_state = 1;
	while (writer_stores < start + 1000)
		;
	cachesim_begin();
	do {
		changes += reread(line, COH_CHUNK);
		done += COH_CHUNK;
	} while (done < reads ||
		 (until_changes && changes < COH_CHANGES && done < 100 * reads));
	cachesim_end();
	writer_state = 0;
	printf("cachesim-selftest: %s: %ld reads saw %ld changes\n", test, done, changes);
	report(test, 1, done);
}

int main(void)
{
	size_t chase_size = 4 * (size_t)LLC_SIZE;
	long chase_lines = chase_size / LINE, rounds = 1000;
	char *big = buffer(chase_size), *l1fit = buffer(L1_SIZE / 2);
	char *l1x2 = buffer(2 * L1_SIZE), *l2x4 = buffer(4 * L2_SIZE);
	char *lru = buffer((L1_WAYS + 1) * (L1_SIZE / L1_WAYS));
	void *p = big;
	cpu_set_t cpus;
	int pass;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A phase counts the vCPU that began it: stay there. */
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		perror("cachesim-selftest: sched_setaffinity");
	chase_init(big, chase_lines);
	/* 4x the LLC in a random cycle: every load misses every level. */
	for (pass = 1; pass <= 2; pass++) {
		cachesim_begin();
		p = chase(p, chase_lines);
		cachesim_end();
		report("chase", pass, chase_lines);
	}
	/* Out of L1 and L2: the next walk starts cold there. */
	stride(l2x4, 4 * L2_SIZE);
	/* Half the L1: misses on the first pass only. */
	stride_test("l1fit", l1fit, L1_SIZE / 2, 8);
	/* Twice the L1: every access misses L1, L2 misses only on pass 1. */
	stride_test("l1x2", l1x2, 2 * L1_SIZE, 4);
	/* Four times the L2: every access misses L2, the LLC only on pass 1. */
	stride_test("l2x4", l2x4, 4 * L2_SIZE, 3);
	/* LRU order within a set. */
	lru_pattern(lru, 4);
	cachesim_begin();
	lru_pattern(lru, rounds);
	cachesim_end();
	report("lru", 1, rounds * L1_WAYS * 2);
	{
		char *lines = buffer(2 * 4096);
		pthread_t thr;

		if (pthread_create(&thr, NULL, writer, (void *)(long)!sched_getcpu())) {
			fprintf(stderr, "cachesim-selftest: pthread_create failed\n");
			return 1;
		}
		coherence_test("coh-shared", lines, lines, 200000, true);
		coherence_test("coh-private", lines, lines + 4096, 200000, false);
		writer_state = -1;
		pthread_join(thr, NULL);
	}
	return p == NULL;
}
