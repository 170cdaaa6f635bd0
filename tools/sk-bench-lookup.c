// SPDX-License-Identifier: GPL-2.0
/*
 * sk-bench: the lookups. BPF iterators walk the sockets, cold (each once
 * per pass) or hot (one many times), and a cgroup/getsockopt program runs
 * hot on a full socket; the cache simulator's markers and phase lines.
 */
#include <sys/syscall.h>

#include "sk-bench-user.h"

static const char *const mode_name[NR_BENCH_MODES] = {
	[BENCH_VISIT] = "visit only",
	[BENCH_RAW] = "raw sk_mark",
	[BENCH_INLINE] = "inline",
	[BENCH_DYNAMIC] = "dynamic",
	[BENCH_HASH] = "hash(cookie)",
	[BENCH_CALL] = "inline, call",
	[BENCH_RAW_END] = "raw, end",
};

/*
 * Phase markers for the cache simulator (tools/cachesim): the read() of
 * each pass runs between them. Empty, never inlined, cloned or merged: the
 * simulator watches their addresses, which nm gives.
 */
__attribute__((noipa)) void cachesim_begin(void)
{
	asm volatile("" ::: "memory");
}

__attribute__((noipa)) void cachesim_end(void)
{
	asm volatile("" ::: "memory");
}

static long cachesim_phase;

/* With --cachesim: which pass phase cachesim_phase was, and its lookups. */
static void cachesim_report(bool hot, const char *proto, long expect, int mode,
			    int pass, __u64 lookups)
{
	static const char *const key[NR_BENCH_MODES] = {
		"visit", "raw", "inline", "dynamic", "hash", "call", "rawend",
	};

	if (cfg.cachesim)
		printf("cachesim-phase %ld %s %s %ld %s %d %llu\n", cachesim_phase,
		       hot ? "hot" : "cold", proto, expect, key[mode], pass,
		       (unsigned long long)lookups);
	cachesim_phase++;
}

/*
 * With --cachesim: stay on this vCPU, whose accesses the simulator counts
 * from a pass's begin to its end (the read() runs on the caller's CPU).
 */
void cachesim_pin(void)
{
	unsigned long mask;
	unsigned int cpu;

	if (!cfg.cachesim)
		return;
	if (syscall(SYS_getcpu, &cpu, NULL, NULL))
		die("getcpu: %s", strerror(errno));
	mask = 1UL << cpu;
	if (syscall(SYS_sched_setaffinity, 0, sizeof(mask), &mask))
		die("sched_setaffinity: %s", strerror(errno));
}

/* With --cachesim: where the kernel and the BPF programs are. */
void cachesim_kallsyms(void)
{
	char line[256];
	FILE *f;

	if (!cfg.cachesim)
		return;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		die("/proc/kallsyms: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[bpf]") || strstr(line, " _text\n") ||
		    strstr(line, " _etext\n"))
			printf("cachesim-kallsyms %ld %s", cachesim_phase, line);
	fclose(f);
}

/* One pass of the iterator; ns of the read() that runs it. */
double iter_pass(struct bpf_link *link)
{
	char buf[64];
	int fd = bpf_iter_create(bpf_link__fd(link));
	__u64 t0;
	ssize_t n;

	if (fd < 0)
		die("bpf_iter_create: %s", strerror(errno));
	t0 = now_ns();
	cachesim_begin();
	do {
		n = read(fd, buf, sizeof(buf));
	} while (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)));
	cachesim_end();
	t0 = now_ns() - t0;
	if (n < 0)
		die("iterator read: %s", strerror(errno));
	close(fd);
	return t0;
}

/* A dynref run times the walk, sk_mark and the dynamic map alone. */
static bool mode_timed(int m)
{
	return !cfg.dynref || m == BENCH_VISIT || m == BENCH_RAW || m == BENCH_DYNAMIC;
}

/* Min and median over the passes, less the visit alone. */
static void reduce(double v[NR_BENCH_MODES][MAX_PASSES], double *min, double *med)
{
	int m;

	for (m = 0; m < NR_BENCH_MODES; m++)
		min_median(v[m], cfg.passes, &min[m], &med[m]);
	for (m = BENCH_RAW; m < NR_BENCH_MODES; m++) {
		min[m] -= min[BENCH_VISIT];
		med[m] -= med[BENCH_VISIT];
	}
}

/*
 * @passes rounds of every mode in turn, so that drift hits all alike.
 * Cold: ns per socket, of the timed lookups and of the whole pass. Hot:
 * ns per iteration of the timed loop.
 */
void walk(struct sk_bench *skel, struct bpf_link *link, const char *proto,
	  long expect, bool hot, struct walk_result *r)
{
	struct sk_bench__bss *b = skel->bss;
	__u64 want;
	double t;
	int p, m;

	for (p = 0; p < cfg.passes; p++) {
		for (m = 0; m < NR_BENCH_MODES; m++) {
			if (!mode_timed(m))
				continue;
			b->mode = m;
			b->hot_iters = hot ? cfg.hot_iters : 0;
			b->visited = 0;
			b->found = 0;
			b->sum = 0;
			b->window_ns = 0;
			b->windows = 0;
			b->hot_ns = 0;
			b->hot_done = 0;
			/* Each round hot on another socket, all modes on the same. */
			b->hot_skip = (long)p * expect / cfg.passes;
			t = iter_pass(link);
			cachesim_report(hot, proto, expect, m, p,
					hot ? cfg.hot_iters : b->visited);
			if (hot) {
				if (!b->hot_done)
					die("%s hot: no socket holds a value", proto);
				want = m == BENCH_VISIT ? 0 : cfg.hot_iters;
				r->ns[m][p] = (double)b->hot_ns / cfg.hot_iters;
				r->pass[m][p] = t / cfg.hot_iters;
			} else {
				if ((long)b->visited < expect)
					die("%s: the iterator visited %llu sockets, not %ld",
					    proto, (unsigned long long)b->visited, expect);
				want = m == BENCH_VISIT ? 0 :
				       m == BENCH_RAW || m == BENCH_RAW_END ? b->visited : expect;
				if (!b->windows)
					die("%s: every timed window was interrupted", proto);
				r->ns[m][p] = (double)b->window_ns / b->windows;
				r->pass[m][p] = t / b->visited;
				r->dropped += b->visited - b->windows;
				r->timed += b->visited;
			}
			if (b->found != want)
				die("%s %s %s: %llu values found, not %llu", proto,
				    hot ? "hot" : "cold", mode_name[m],
				    (unsigned long long)b->found, (unsigned long long)want);
		}
	}
	reduce(r->ns, r->min, r->med);
	reduce(r->pass, r->pass_min, r->pass_med);
}

/*
 * Hot on @fd's socket from hot_full, a cgroup/getsockopt program: the
 * verifier knows its socket is full, so the inline lookup skips the NULL
 * and state tests that a BTF pointer, the iterators', keeps.
 */
void full_walk(struct sk_bench *skel, const int *fds, long nr, const char *proto,
	       struct walk_result *r)
{
	struct sk_bench__bss *b = skel->bss;
	socklen_t len;
	__u64 want;
	int p, m, v;

	r->full = true;
	for (p = 0; p < cfg.passes; p++) {
		/* Each round on another socket, all modes on the same. */
		int fd = fds[(long)p * nr / cfg.passes];

		for (m = 0; m < NR_BENCH_MODES; m++) {
			if (m == BENCH_HASH || m == BENCH_RAW_END)
				continue;
			b->mode = m;
			b->hot_iters = cfg.hot_iters;
			b->found = 0;
			b->sum = 0;
			b->hot_ns = 0;
			b->hot_done = 0;
			len = sizeof(v);
			if (getsockopt(fd, SOL_SK_BENCH, 0, &v, &len))
				die("%s full: getsockopt: %s", proto, strerror(errno));
			if (!b->hot_done)
				die("%s full: the getsockopt program did not run", proto);
			want = m == BENCH_VISIT ? 0 : cfg.hot_iters;
			if (b->found != want)
				die("%s full %s: %llu values found, not %llu", proto,
				    mode_name[m], (unsigned long long)b->found,
				    (unsigned long long)want);
			r->ns[m][p] = (double)b->hot_ns / cfg.hot_iters;
		}
	}
	reduce(r->ns, r->min, r->med);
}

double dropped_pct(const struct walk_result *r)
{
	return r->timed ? 100.0 * r->dropped / r->timed : 0;
}

void ratio(char *buf, size_t len, double a, double b)
{
	if (a > 0 && b > 0)
		snprintf(buf, len, "%.2f", a / b);
	else
		snprintf(buf, len, "-");
}

void print_walk(const char *walk_name, const char *proto, bool hot,
		const struct walk_result *r)
{
	char vraw[16], vdyn[16], praw[16], pdyn[16];
	int m;

	for (m = 0; m < NR_BENCH_MODES; m++) {
		if (!mode_timed(m) || (r->full && (m == BENCH_HASH || m == BENCH_RAW_END)))
			continue;
		ratio(vraw, sizeof(vraw), r->med[m], r->med[BENCH_RAW]);
		ratio(vdyn, sizeof(vdyn), r->med[m], r->med[BENCH_DYNAMIC]);
		ratio(praw, sizeof(praw), r->pass_med[m], r->pass_med[BENCH_RAW]);
		ratio(pdyn, sizeof(pdyn), r->pass_med[m], r->pass_med[BENCH_DYNAMIC]);
		if (m == BENCH_VISIT)
			*vraw = *vdyn = *praw = *pdyn = 0;
		printf("%-4s %-4s %-12s %8.1f %8.1f %6s %6s", walk_name, proto,
		       mode_name[m], r->min[m], r->med[m], vraw, vdyn);
		/* A hot pass walks every socket too: its read() tells nothing. */
		if (hot)
			printf("\n");
		else
			printf(" | %8.1f %8.1f %6s %6s\n", r->pass_min[m],
			       r->pass_med[m], praw, pdyn);
	}
}
