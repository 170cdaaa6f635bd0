// SPDX-License-Identifier: GPL-2.0
/*
 * sk-bench: what inline sk storage costs and saves, side by side.
 *
 * For each N: N UDP sockets and N TCP sockets (connected pairs over
 * loopback), created interleaved with filler sockets that are closed
 * again, so that they are spread over memory. Every socket holds a value
 * in an inline sk storage map, in a dynamic one of the same value size
 * (created once filler maps took the rest of the tail, freed again) and
 * in a hash map keyed by socket cookie. BPF iterators read each
 * socket's value, or its sk_mark, the physical limit: a cold pass touches
 * every socket once, a hot pass one socket many times; a pass that only
 * visits is subtracted. Then the bytes one value costs, the time the
 * deferred map free takes with N values, and the cost of a socket's
 * create and close.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdarg.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>

#include "../kselftest/sk_memcg.h"
#include "sk-bench.h"
#include "sk-bench.skel.h"

#ifndef SO_COOKIE
#define SO_COOKIE		57
#endif

#define MAX_STEPS		8
#define MAX_PASSES		31
#define LISTEN_PORT		10000
#define PORT_BASE		20000
#define PORTS_PER_ADDR		40000
#define UDP_NET			0x7f010001	/* 127.1.0.1 and up */
#define TCP_NET			0x7f020001	/* 127.2.0.1 and up */
#define CG_BENCH		CG_ROOT "/sk-bench"
#define FREE_MAP_NAME		"sk_memcg"	/* sk_map_create() names it so */
#define TAIL_SYSCTL		"/proc/sys/net/core/bpf_sk_inline_bytes"
#define LAYOUT_DEBUGFS		INLINE_LAYOUT

static const char *const mode_name[NR_BENCH_MODES] = {
	[BENCH_VISIT] = "visit only",
	[BENCH_RAW] = "raw sk_mark",
	[BENCH_INLINE] = "inline",
	[BENCH_DYNAMIC] = "dynamic",
	[BENCH_HASH] = "hash(cookie)",
	[BENCH_CALL] = "inline, call",
	[BENCH_RAW_END] = "raw, end",
};

static const unsigned int value_sizes[] = { 8, 64, 100 };
#define NR_SIZES	(sizeof(value_sizes) / sizeof(value_sizes[0]))

static struct {
	long steps[MAX_STEPS];
	int nr_steps;
	long tcp_max;
	int passes;
	long hot_iters;
	int spread;
	long create_iters;
	long registered;
	bool lookup, memory, create, dynref, reg, data, cachesim;
	const char *create_ref;
	unsigned long long seed;
} cfg = {
	.tcp_max = -1,
	.passes = 7,
	.hot_iters = 100000,
	.spread = 1,
	.create_iters = 2000,
	.registered = 100000,
	.seed = 1,
};

static long tail_bytes;
static bool unpatched;		/* no sysctl: a kernel without the series */
static bool have_memcg;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sk-bench [options]\n"
		"In the guest (booted with bpf_sk_inline_bytes=128):\n"
		"for each N, create N UDP sockets and N TCP sockets (N/2 connected\n"
		"pairs over loopback), spread over memory by filler sockets, give each\n"
		"a value in an inline sk storage map, a dynamic one (made once filler\n"
		"maps took the tail) and a hash map keyed by socket cookie, and report\n"
		"the ns per lookup of each from BPF iterators, cold (every socket once\n"
		"per pass) and hot (one socket many times), against reading sk_mark\n"
		"and a field on the socket's last line before the tail (\"end\");\n"
		"hot again from a cgroup/getsockopt program (\"full\": a socket the\n"
		"verifier knows is full, whose inline lookup has no NULL or state test).\n"
		"Then bytes per value (8, 64, 100 bytes), deferred map free time with N\n"
		"values, and the cost of a socket's create and close.\n"
		"\n"
		"  -n, --sockets N[,N...]  sockets of each protocol (default 100000)\n"
		"      --tcp MAX           at most MAX TCP sockets per step (default N)\n"
		"  -p, --passes P          passes per variant, min and median (default 7)\n"
		"      --hot-iters K       lookups per hot pass (default 100000)\n"
		"      --spread F          filler sockets per socket, on average (default 1)\n"
		"      --only LIST         of lookup,memory,create,registered (default\n"
		"                          all); registered: create+close and a 3-value\n"
		"                          map's walk, alone and beside --registered\n"
		"                          sockets with values; dynref: dynamic lookups\n"
		"                          and sk_mark only, at any tail: the dynamic\n"
		"                          path's reference (with create and registered\n"
		"                          also on a kernel without the series)\n"
		"      --registered R      sockets with values for that (default 100000)\n"
		"      --create-iters M    sockets per create+close round, M/4 TCP pairs\n"
		"                          (default 2000)\n"
		"      --create-ref REF    the create-ref line of a run with tail 0\n"
		"      --data              print data: lines (per-N medians for plots)\n"
		"      --seed S            random seed for the spread (default 1)\n"
		"      --cachesim          print a line per measured pass and the BPF\n"
		"                          programs' addresses, for tools/cachesim, and\n"
		"                          stay on the vCPU the tool started on\n"
		"  -h, --help              this text\n"
		"\n"
		"N=100000 wants a guest with 4 GB (vm/run --mem 4096). Absolute\n"
		"times under TCG mean little: compare the ratios. Nothing is\n"
		"asserted but that each map really is inline or dynamic and that every\n"
		"socket holds its values.\n");
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "sk-bench: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static __u64 start_ns;

static void progress(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "sk-bench: %6.1fs ", (now_ns() - start_ns) / 1e9);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static __u64 rng;

static __u32 rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (rng * 0x2545f4914f6cdd1dULL) >> 32;
}

static long *permutation(long n)
{
	long *p = malloc(n * sizeof(*p)), i, j, t;

	if (!p)
		die("out of memory");
	for (i = 0; i < n; i++)
		p[i] = i;
	for (i = n - 1; i > 0; i--) {
		j = ((__u64)rnd() << 32 | rnd()) % (i + 1);
		t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void min_median(const double *v, int n, double *min, double *med)
{
	double s[MAX_PASSES];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	*min = s[0];
	*med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* "sk_storage:\t<what>" from the map's fdinfo must be @want. */
static void expect_storage(int map, const char *what, const char *want)
{
	char got[32];

	if (map_fdinfo(map, "sk_storage", got, sizeof(got)) || strcmp(got, want))
		die("%s map is '%s' in its fdinfo, not 'sk_storage:\t%s' (boot with bpf_sk_inline_bytes=128?)",
		    what, got[0] ? got : "no sk_storage line", want);
}

/*
 * Wait (up to a minute) until no map holds a slot of the tail: the maps of
 * a previous step are freed after their programs, from a workqueue.
 */
static void wait_tail_free(void)
{
	char line[128];
	long used = -1;
	int i;
	FILE *f;

	for (i = 0; i < 600; i++) {
		f = fopen(LAYOUT_DEBUGFS, "r");
		if (!f)
			return;
		used = -1;
		while (fgets(line, sizeof(line), f))
			sscanf(line, "used_bytes: %ld", &used);
		fclose(f);
		if (!used)
			return;
		usleep(100000);
	}
	die("%ld bytes of the tail still used by maps a minute after they were closed", used);
}

/* ---- sockets ---- */

struct sockset {
	int *udp, *tcp, *filler;
	long n_udp, n_tcp, n_filler;
	int listener;
};

static void set_addr(struct sockaddr_in *a, __u32 net, long slot)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(net + slot / PORTS_PER_ADDR);
	a->sin_port = htons(PORT_BASE + slot % PORTS_PER_ADDR);
}

static int udp_bound(long slot)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	set_addr(&a, UDP_NET, slot);
	if (fd < 0 || bind(fd, (void *)&a, sizeof(a)))
		die("UDP socket %ld: %s", slot, strerror(errno));
	return fd;
}

static int listener(void)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons(LISTEN_PORT),
	};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (void *)&a, sizeof(a)) || listen(fd, 1024))
		die("TCP listener: %s", strerror(errno));
	return fd;
}

/* A connected pair over loopback; the client bound to @slot's address. */
static void tcp_pair(int lfd, long slot, int *client, int *server)
{
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons(LISTEN_PORT),
	};
	struct sockaddr_in a;
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (c < 0)
		die("TCP socket: %s", strerror(errno));
	if (slot >= 0) {
		set_addr(&a, TCP_NET, slot);
		if (bind(c, (void *)&a, sizeof(a)))
			die("TCP bind %ld: %s", slot, strerror(errno));
	}
	if (connect(c, (void *)&dst, sizeof(dst)))
		die("TCP connect: %s", strerror(errno));
	*server = accept(lfd, NULL, NULL);
	if (*server < 0)
		die("TCP accept: %s", strerror(errno));
	*client = c;
}

/* Close without leaving a TCP socket in timewait. */
static void close_now(int fd)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
	close(fd);
}

static void add_fillers(struct sockset *s, int type)
{
	int k = rnd() % (2 * cfg.spread + 1), fd;

	while (k--) {
		fd = socket(AF_INET, type, 0);
		if (fd < 0)
			die("filler socket: %s", strerror(errno));
		s->filler[s->n_filler++] = fd;
	}
}

/*
 * @n_udp bound UDP sockets and @n_tcp / 2 TCP pairs, interleaved with each
 * other and with filler sockets of the same protocol. Addresses (and so
 * the iterators' order) follow a random permutation, unrelated to the
 * order the sockets were allocated in.
 */
static void sockets_open(struct sockset *s, long n_udp, long n_tcp)
{
	long pairs = n_tcp / 2, steps = n_udp > pairs ? n_udp : pairs, i;
	long *pu = permutation(n_udp), *pt = permutation(pairs ? pairs : 1);
	long max_fillers = (n_udp + 2 * pairs) * 2 * cfg.spread;

	memset(s, 0, sizeof(*s));
	raise_nofile(n_udp + 2 * pairs + max_fillers + 64);
	s->udp = calloc(n_udp + 1, sizeof(int));
	s->tcp = calloc(2 * pairs + 1, sizeof(int));
	s->filler = calloc(max_fillers + 1, sizeof(int));
	if (!s->udp || !s->tcp || !s->filler)
		die("out of memory");
	s->listener = listener();
	for (i = 0; i < steps; i++) {
		if (i < n_udp) {
			s->udp[s->n_udp++] = udp_bound(pu[i]);
			add_fillers(s, SOCK_DGRAM);
		}
		if (i < pairs) {
			tcp_pair(s->listener, pt[i], &s->tcp[s->n_tcp],
				 &s->tcp[s->n_tcp + 1]);
			s->n_tcp += 2;
			add_fillers(s, SOCK_STREAM);
			add_fillers(s, SOCK_STREAM);
		}
	}
	free(pu);
	free(pt);
}

static void fillers_close(struct sockset *s)
{
	long i;

	for (i = 0; i < s->n_filler; i++)
		close(s->filler[i]);
	s->n_filler = 0;
}

static void sockets_close(struct sockset *s)
{
	long i;

	fillers_close(s);
	for (i = 0; i < s->n_udp; i++)
		close(s->udp[i]);
	for (i = 0; i < s->n_tcp; i++)
		close_now(s->tcp[i]);
	close(s->listener);
	free(s->udp);
	free(s->tcp);
	free(s->filler);
}

/*
 * Values for every measured socket in the three maps, and for every filler
 * in the dynamic map, in a random order, so that the dynamic path's
 * storages and elements are spread over their slabs too; the fillers'
 * go away with them.
 */
static void values_fill(struct sk_bench *skel, struct sockset *s)
{
	int inl = bpf_map__fd(skel->maps.inline_map);
	int dyn = bpf_map__fd(skel->maps.dyn_map);
	int hash = bpf_map__fd(skel->maps.cookie_map);
	long total = s->n_udp + s->n_tcp + s->n_filler, i, k;
	long *order = permutation(total);
	socklen_t len;
	__u64 cookie, v;
	int fd;

	for (i = 0; i < total; i++) {
		k = order[i];
		v = k + 1;
		if (k < s->n_udp)
			fd = s->udp[k];
		else if (k < s->n_udp + s->n_tcp)
			fd = s->tcp[k - s->n_udp];
		else
			fd = s->filler[k - s->n_udp - s->n_tcp];
		if (bpf_map_update_elem(dyn, &fd, &v, BPF_NOEXIST))
			die("dynamic value: %s", strerror(errno));
		if (k >= s->n_udp + s->n_tcp || cfg.dynref)
			continue;
		len = sizeof(cookie);
		if (bpf_map_update_elem(inl, &fd, &v, BPF_NOEXIST) ||
		    getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len) ||
		    bpf_map_update_elem(hash, &cookie, &v, BPF_NOEXIST))
			die("inline or hash value: %s", strerror(errno));
	}
	free(order);
}

/* ---- lookups ---- */

struct walk_result {
	double ns[NR_BENCH_MODES][MAX_PASSES], pass[NR_BENCH_MODES][MAX_PASSES];
	long dropped, timed;
	bool full;		/* full_walk(): no hash mode, no pass times */
	double min[NR_BENCH_MODES], med[NR_BENCH_MODES];
	double pass_min[NR_BENCH_MODES], pass_med[NR_BENCH_MODES];
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
static void cachesim_pin(void)
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
static void cachesim_kallsyms(void)
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
static double iter_pass(struct bpf_link *link)
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

/* Min and median over the passes, less the visit alone. */
/* A dynref run times the walk, sk_mark and the dynamic map alone. */
static bool mode_timed(int m)
{
	return !cfg.dynref || m == BENCH_VISIT || m == BENCH_RAW || m == BENCH_DYNAMIC;
}

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
static void walk(struct sk_bench *skel, struct bpf_link *link, const char *proto,
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
static void full_walk(struct sk_bench *skel, const int *fds, long nr, const char *proto,
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

static double dropped_pct(const struct walk_result *r)
{
	return r->timed ? 100.0 * r->dropped / r->timed : 0;
}

static void ratio(char *buf, size_t len, double a, double b)
{
	if (a > 0 && b > 0)
		snprintf(buf, len, "%.2f", a / b);
	else
		snprintf(buf, len, "-");
}

static void print_walk(const char *walk_name, const char *proto, bool hot,
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

/* ---- memory and map free ---- */

struct slab_snap {
	double objects, pages;
};

static long slab_attr(const char *cache, const char *attr)
{
	char path[512];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, attr);
	return cg_read_long(path);
}

/*
 * Bytes of all slab objects in use, and of all slab pages. Each cache is
 * shrunk first: free objects in per-CPU slabs would count as in use.
 */
static void slab_snapshot(struct slab_snap *s)
{
	char path[512];
	struct dirent *e;
	long objs, slabs, size, order;
	DIR *d = opendir("/sys/kernel/slab");

	memset(s, 0, sizeof(*s));
	if (!d)
		die("/sys/kernel/slab: %s", strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || e->d_name[0] == ':')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", e->d_name);
		cg_write(path, "1");
		objs = slab_attr(e->d_name, "objects");
		slabs = slab_attr(e->d_name, "slabs");
		size = slab_attr(e->d_name, "object_size");
		order = slab_attr(e->d_name, "order");
		if (objs < 0 || slabs < 0 || size < 0 || order < 0)
			continue;
		s->objects += (double)objs * size;
		s->pages += (double)slabs * (4096L << order);
	}
	closedir(d);
}

/*
 * Wait (up to ~10 s) until slab use stops moving: frees of sockets and
 * values run after RCU grace periods.
 */
static void slab_settle(void)
{
	struct slab_snap a, b;
	int i;

	slab_snapshot(&a);
	for (i = 0; i < 40; i++) {
		usleep(250000);
		slab_snapshot(&b);
		if (b.objects - a.objects < 16384 && a.objects - b.objects < 16384)
			return;
		a = b;
	}
}

/*
 * Wait (up to ~30 s) until slab objects are back within @tol bytes of
 * @base; ms waited, or -1.
 */
static double slab_back_to(double base, double tol)
{
	struct slab_snap s;
	__u64 t0 = now_ns();
	int i;

	for (i = 0; i < 300; i++) {
		slab_snapshot(&s);
		if (s.objects <= base + tol)
			return (now_ns() - t0) / 1e6;
		usleep(100000);
	}
	return -1;
}

struct free_result {
	double id_ms, work_ms, done_ms, back_ms;
};

struct mem_result {
	unsigned int size, slot;
	double objects, pages, memcg, update_ns;
	struct free_result fr;
};

/*
 * Close @map, the last reference, and time its deferred free: its id is
 * released at once, the work (bpf_sk_storage_map_free()) runs later from a
 * workqueue and is timed by the fentry and fexit programs.
 */
static void map_free_timed(struct sk_bench *skel, int map, struct free_result *r)
{
	struct sk_bench__bss *b = skel->bss;
	__u32 id = map_id(map), count = b->free_count;
	__u64 t0, t_id = 0;
	int fd, i;

	b->free_map = 0;
	memset(b->free_name, 0, sizeof(b->free_name));
	memcpy(b->free_name, FREE_MAP_NAME, strlen(FREE_MAP_NAME));
	t0 = now_ns();
	close(map);
	for (i = 0; i < 600000; i++) {
		if (!t_id) {
			fd = bpf_map_get_fd_by_id(id);
			if (fd < 0 && errno == ENOENT)
				t_id = now_ns();
			else if (fd >= 0)
				close(fd);
		}
		if (t_id && __atomic_load_n(&b->free_count, __ATOMIC_ACQUIRE) != count)
			break;
		usleep(100);
	}
	if (__atomic_load_n(&b->free_count, __ATOMIC_ACQUIRE) == count)
		die("map free: bpf_sk_storage_map_free() not seen within a minute");
	/* Filler maps bear the same name: time no other free. */
	memset(b->free_name, 0, sizeof(b->free_name));
	r->id_ms = (t_id - t0) / 1e6;
	r->work_ms = (b->free_exit_ns - b->free_enter_ns) / 1e6;
	r->done_ms = (b->free_exit_ns - t0) / 1e6;
}

/* One @size-byte value in each UDP socket: bytes per value, then the free. */
static void memory_one(struct sk_bench *skel, struct sockset *s,
		       unsigned int size, bool inl, struct mem_result *r)
{
	struct slab_snap a, b;
	unsigned char value[128];
	long cg0 = 0, cg1 = 0, i;
	__u64 t0;
	int map;

	memset(value, 0x5a, sizeof(value));
	memset(r, 0, sizeof(*r));
	r->size = size;
	map = inl ? sk_map_create(size, 0) : sk_map_create_dynamic(size);
	if (map < 0)
		die("sk storage map of %u bytes: %s", size, strerror(-map));
	expect_storage(map, inl ? "inline" : "dynamic", inl ? "inline" : "dynamic");
	r->slot = map_inline_size(map);

	/*
	 * memory.current as it is: draining the per-CPU charge stocks takes
	 * a reclaim (memory.high), which frees slab objects of its own.
	 */
	slab_settle();
	slab_snapshot(&a);
	if (have_memcg)
		cg0 = cg_read_long(CG_BENCH "/memory.current");
	t0 = now_ns();
	for (i = 0; i < s->n_udp; i++)
		if (bpf_map_update_elem(map, &s->udp[i], value, BPF_NOEXIST))
			die("%u-byte value: %s", size, strerror(errno));
	r->update_ns = (double)(now_ns() - t0) / s->n_udp;
	if (have_memcg)
		cg1 = cg_read_long(CG_BENCH "/memory.current");
	slab_snapshot(&b);
	r->objects = (b.objects - a.objects) / s->n_udp;
	r->pages = (b.pages - a.pages) / s->n_udp;
	r->memcg = have_memcg ? (double)(cg1 - cg0) / s->n_udp : 0;
	t0 = now_ns();
	map_free_timed(skel, map, &r->fr);
	/* The values themselves go after grace periods: wait for them. */
	if (slab_back_to(a.objects, 65536 + (b.objects - a.objects) / 50) < 0)
		r->fr.back_ms = -1;
	else
		r->fr.back_ms = (now_ns() - t0) / 1e6;
}

static void print_memory(const struct sockset *s, struct mem_result r[NR_SIZES][2])
{
	double stock = 64.0 * 4096 * sysconf(_SC_NPROCESSORS_ONLN) / s->n_udp;

	char memcg[16], slot[16];
	unsigned int i, p;

	printf("\nmemory and map free: one value in each of the %ld UDP sockets, through the map syscall\n",
	       s->n_udp);
	printf("objects, pages: growth of slab objects in use and of slab pages (/sys/kernel/slab,\n"
	       "each cache shrunk first); memcg: of memory.current of the benchmark's cgroup, within\n"
	       "+-%.0f B/value (charges are cached per CPU, 64 pages each); overhead: objects less the\n"
	       "value, inline: the slot less the value. Free, from close() of the last reference: id\n"
	       "gone (bpf_map_get_fd_by_id() fails with ENOENT), work (fentry to fexit of\n"
	       "bpf_sk_storage_map_free(), from a workqueue), freed (its fexit), slab back (objects\n"
	       "within 2%% of before the values, after the RCU callbacks freed the values)\n", stock);
	printf("%-5s %-8s %5s | %8s %8s %8s %8s | %9s | %7s %7s %7s %7s\n",
	       "value", "storage", "slot", "objects", "pages", "memcg", "overhead",
	       "update", "id gone", "work", "freed", "slab");
	printf("%-5s %-8s %5s | %8s %8s %8s %8s | %9s | %7s %7s %7s %7s\n",
	       "bytes", "", "bytes", "B/value", "B/value", "B/value", "B/value",
	       "ns/value", "ms", "ms", "ms", "back ms");
	for (i = 0; i < NR_SIZES; i++) {
		for (p = 0; p < 2; p++) {
			const struct mem_result *m = &r[i][p];
			double over = p ? (double)m->slot - m->size : m->objects - m->size;

			if (have_memcg)
				snprintf(memcg, sizeof(memcg), "%.0f", m->memcg);
			else
				snprintf(memcg, sizeof(memcg), "-");
			if (p)
				snprintf(slot, sizeof(slot), "%u", m->slot);
			else
				snprintf(slot, sizeof(slot), "-");
			printf("%-5u %-8s %5s | %8.0f %8.0f %8s %8.0f | %9.0f | %7.1f %7.1f %7.1f %7.0f\n",
			       m->size, p ? "inline" : "dynamic", slot, m->objects,
			       m->pages, memcg, over, m->update_ns, m->fr.id_ms,
			       m->fr.work_ms, m->fr.done_ms, m->fr.back_ms);
		}
	}
}

/* ---- create and close ---- */

/* The pipe has no socket: it shows how fast the guest ran in each boot. */
enum create_kind { CR_PIPE, CR_UDP, CR_TCP, CR_PAIR, CR_UDP_INLINE, CR_UDP_DYNAMIC,
		   CR_TCP_INLINE, CR_TCP_DYNAMIC, NR_CREATE };

static const char *const create_name[NR_CREATE] = {
	"pipe+close (control)", "UDP socket+close", "TCP socket+close",
	"TCP pair connect+close", "UDP +inline value", "UDP +dynamic value",
	"TCP +inline value", "TCP +dynamic value",
};

static const char *const create_key[NR_CREATE] = {
	"pipe", "udp", "tcp", "pair", "udp_inline", "udp_dynamic",
	"tcp_inline", "tcp_dynamic",
};

#define CREATE_ROUNDS	9

/* ns per socket (per pair for CR_PAIR) of one round. */
static double create_close(enum create_kind k, int lfd, int map)
{
	long iters = k == CR_PAIR ? cfg.create_iters / 4 : cfg.create_iters, i;
	__u64 v = 1, t0 = now_ns();
	int fd, c, a, p[2];

	for (i = 0; i < iters; i++) {
		switch (k) {
		case CR_PIPE:
			if (pipe(p))
				die("pipe: %s", strerror(errno));
			close(p[0]);
			close(p[1]);
			continue;
		case CR_PAIR:
			tcp_pair(lfd, -1, &c, &a);
			close_now(c);
			close_now(a);
			continue;
		case CR_TCP:
		case CR_TCP_INLINE:
		case CR_TCP_DYNAMIC:
			fd = socket(AF_INET, SOCK_STREAM, 0);
			break;
		default:
			fd = socket(AF_INET, SOCK_DGRAM, 0);
			break;
		}
		if (fd < 0)
			die("socket: %s", strerror(errno));
		if (map >= 0 && bpf_map_update_elem(map, &fd, &v, BPF_NOEXIST))
			die("create value: %s", strerror(errno));
		close(fd);
	}
	return (double)(now_ns() - t0) / iters;
}

/* Bytes an object of slab cache @name takes in its slab pages, or -1. */
static long slab_bytes_per_object(const char *name)
{
	long order = slab_attr(name, "order"), per = slab_attr(name, "objs_per_slab");

	return order < 0 || per <= 0 ? -1 : (4096L << order) / per;
}

/* Sizes of sockets without values, then create+close of each kind. */
enum size_kind { SZ_UDP_OBJ, SZ_UDP_SLAB, SZ_TCP_OBJ, SZ_TCP_SLAB, NR_SIZE_KINDS };

static const char *const size_name[NR_SIZE_KINDS] = {
	"UDP object (object_size)", "UDP in its slab pages",
	"TCP object (object_size)", "TCP in its slab pages",
};

static const char *const size_key[NR_SIZE_KINDS] = {
	"udp_obj", "udp_slab", "tcp_obj", "tcp_slab",
};

/*
 * A row of: name, the tail-0 reference (if given), now, their ratio and,
 * if @norm is not negative, the ratio of both to the control.
 */
static void print_row(const char *name, double ref, double now, double norm)
{
	char col[32] = "";

	if (cfg.create_ref && ref > 0)
		snprintf(col, sizeof(col), "%.0f", ref);
	else if (cfg.create_ref)
		strcpy(col, "-");
	printf("%-28s %10s %10.0f", name, col, now);
	if (ref > 0 && now > 0)
		printf(" %7.2f", now / ref);
	if (ref > 0 && now > 0 && norm >= 0)
		printf(" %9.2f", norm);
	printf("\n");
}

static void create_section(void)
{
	double ns[NR_CREATE], ref[NR_CREATE], round[NR_CREATE][CREATE_ROUNDS], med;
	double size[NR_SIZE_KINDS], size_ref[NR_SIZE_KINDS];
	int lfd = listener(), maps[NR_CREATE], nr_kinds = CR_PAIR + 1, k, n, r;
	char col[32];

	progress("socket sizes, create+close");
	for (k = 0; k < NR_CREATE; k++) {
		ns[k] = ref[k] = -1;
		maps[k] = -1;
	}
	/* Values only where there is a tail to hold them inline. */
	if (tail_bytes > 0) {
		maps[CR_UDP_INLINE] = sk_map_create(8, 0);
		maps[CR_UDP_DYNAMIC] = sk_map_create_dynamic(8);
		if (maps[CR_UDP_INLINE] < 0 || maps[CR_UDP_DYNAMIC] < 0)
			die("sk storage maps: %s", strerror(errno));
		expect_storage(maps[CR_UDP_INLINE], "inline", "inline");
		expect_storage(maps[CR_UDP_DYNAMIC], "dynamic", "dynamic");
		/* The same maps: a socket holds one value either way. */
		maps[CR_TCP_INLINE] = maps[CR_UDP_INLINE];
		maps[CR_TCP_DYNAMIC] = maps[CR_UDP_DYNAMIC];
		nr_kinds = NR_CREATE;
	}
	/* Kinds in turn in every round, so that drift hits all alike. */
	for (r = 0; r < CREATE_ROUNDS; r++)
		for (k = 0; k < nr_kinds; k++)
			round[k][r] = create_close(k, lfd, maps[k]);
	for (k = 0; k < nr_kinds; k++) {
		/* The minimum: what the host took from a round only adds. */
		min_median(round[k], CREATE_ROUNDS, &ns[k], &med);
	}
	if (maps[CR_UDP_INLINE] >= 0) {
		close(maps[CR_UDP_INLINE]);
		close(maps[CR_UDP_DYNAMIC]);
	}
	close(lfd);
	size[SZ_UDP_OBJ] = slab_object_size("UDP");
	size[SZ_UDP_SLAB] = slab_bytes_per_object("UDP");
	size[SZ_TCP_OBJ] = slab_object_size("TCP");
	size[SZ_TCP_SLAB] = slab_bytes_per_object("TCP");

	/* "udp=NS,...,udp_obj=B,..." as printed below by a boot with tail 0 */
	for (k = 0; k < NR_SIZE_KINDS; k++)
		size_ref[k] = -1;
	if (cfg.create_ref) {
		char *dup = strdup(cfg.create_ref), *tok, *save = NULL;

		for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			for (k = 0; k < NR_CREATE; k++) {
				n = strlen(create_key[k]);
				if (!strncmp(tok, create_key[k], n) && tok[n] == '=')
					ref[k] = atof(tok + n + 1);
			}
			for (k = 0; k < NR_SIZE_KINDS; k++) {
				n = strlen(size_key[k]);
				if (!strncmp(tok, size_key[k], n) && tok[n] == '=')
					size_ref[k] = atof(tok + n + 1);
			}
		}
		free(dup);
	}

	snprintf(col, sizeof(col), "tail %ld", tail_bytes);
	printf("\nsockets without values: bytes per socket%s\n",
	       cfg.create_ref ? " (tail 0: the create-ref of a boot without the tail)" : "");
	printf("%-28s %10s %10s %7s\n", "", cfg.create_ref ? "tail 0" : "", col,
	       cfg.create_ref ? "ratio" : "");
	for (k = 0; k < NR_SIZE_KINDS; k++)
		print_row(size_name[k], size_ref[k], size[k], -1);
	printf("\nsocket create+close, ns per socket (per pair for TCP pairs), minimum of %d rounds of %ld;\n"
	       "vs pipe: the ratio of each boot's time to its pipe+close, tail now against tail 0\n",
	       CREATE_ROUNDS, cfg.create_iters);
	printf("%-28s %10s %10s %7s %9s\n", "", cfg.create_ref ? "tail 0" : "", col,
	       cfg.create_ref ? "ratio" : "", cfg.create_ref ? "vs pipe" : "");
	for (k = 0; k < nr_kinds; k++) {
		double norm = -1;

		if (k <= CR_PAIR && ref[k] > 0 && ref[CR_PIPE] > 0 && ns[CR_PIPE] > 0)
			norm = (ns[k] / ns[CR_PIPE]) / (ref[k] / ref[CR_PIPE]);
		print_row(create_name[k], k <= CR_PAIR ? ref[k] : -1, ns[k], norm);
	}
	/* What a value costs a socket's life, freeing included, in this boot. */
	if (nr_kinds == NR_CREATE)
		printf("with a value / without: UDP inline %.2f dynamic %.2f, TCP inline %.2f dynamic %.2f\n",
		       ns[CR_UDP_INLINE] / ns[CR_UDP], ns[CR_UDP_DYNAMIC] / ns[CR_UDP],
		       ns[CR_TCP_INLINE] / ns[CR_TCP], ns[CR_TCP_DYNAMIC] / ns[CR_TCP]);
	printf("create-ref: ");
	for (k = 0; k <= CR_PAIR; k++)
		printf("%s=%.0f,", create_key[k], ns[k]);
	for (k = 0; k < NR_SIZE_KINDS; k++)
		printf("%s=%.0f%s", size_key[k], size[k], k < NR_SIZE_KINDS - 1 ? "," : "\n");
}

/* ---- what sockets that hold values cost the others ---- */

enum reg_kind { RG_PIPE, RG_UDP, RG_PAIR, RG_UDP_VALUE, RG_ITER, NR_REG };

static const char *const reg_name[NR_REG] = {
	"pipe+close (control)", "UDP socket+close", "TCP pair connect+close",
	"UDP +value+close", "iterate a 3-value map",
};

static const enum create_kind reg_create_kind[RG_ITER] = {
	CR_PIPE, CR_UDP, CR_PAIR, CR_UDP_INLINE,
};

/* ns of one read() of @link to its end, which must have seen @want values. */
static double map_iter_pass(struct sk_bench *skel, struct bpf_link *link, __u64 want)
{
	double t;

	skel->bss->map_values = 0;
	t = iter_pass(link);
	if (skel->bss->map_values != want)
		die("the sk storage map iterator saw %llu values, not %llu",
		    (unsigned long long)skel->bss->map_values, (unsigned long long)want);
	return t;
}

/* The registry's functions, timed from entry to exit beside the values. */
static const char *const timed_fn[SK_BENCH_TIMED] = {
	"bpf_sk_inline_link", "__bpf_sk_inline_unlink", "bpf_sk_inline_iter_next",
};

static bool kernel_has(const char *fn)
{
	static int has[SK_BENCH_TIMED];		/* 0 unknown, 1 yes, -1 no */
	char line[256], sym[128];
	int i, k = -1;
	FILE *f;

	for (i = 0; i < SK_BENCH_TIMED; i++)
		if (!strcmp(fn, timed_fn[i]))
			k = i;
	if (k < 0 || has[k])
		return k >= 0 && has[k] > 0;
	has[k] = -1;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %127s", sym) == 1 && !strcmp(sym, fn)) {
			has[k] = 1;
			break;
		}
	fclose(f);
	return has[k] > 0;
}

static struct bpf_program *timed_prog(struct sk_bench *skel, int i, bool exit)
{
	struct bpf_program *p[SK_BENCH_TIMED][2] = {
		{ skel->progs.timed0_enter, skel->progs.timed0_exit },
		{ skel->progs.timed1_enter, skel->progs.timed1_exit },
		{ skel->progs.timed2_enter, skel->progs.timed2_exit },
	};

	return p[i][exit];
}

/* Before loading: the timers' targets, or none where @on is false or absent. */
static void timed_setup(struct sk_bench *skel, bool on)
{
	int i, j;

	for (i = 0; i < SK_BENCH_TIMED; i++)
		for (j = 0; j < 2; j++)
			if (on && kernel_has(timed_fn[i]))
				bpf_program__set_attach_target(timed_prog(skel, i, j), 0,
							       timed_fn[i]);
			else
				bpf_program__set_autoload(timed_prog(skel, i, j), false);
}

/*
 * One more round of a value's create+close and the map walk with the
 * timers attached (not in the rounds above: trampolines cost time).
 */
static void timed_round(struct sk_bench *skel, struct bpf_link *iter, int lfd, int map)
{
	struct bpf_link *l[SK_BENCH_TIMED][2] = {};
	struct sk_bench__bss *b = skel->bss;
	int i, j;

	for (i = 0; i < SK_BENCH_TIMED; i++)
		for (j = 0; j < 2 && bpf_program__autoload(timed_prog(skel, i, j)); j++) {
			l[i][j] = bpf_program__attach(timed_prog(skel, i, j));
			if (!l[i][j])
				die("attach a timer to %s: %s", timed_fn[i], strerror(errno));
		}
	memset(b->timed_max_ns, 0, sizeof(b->timed_max_ns));
	memset(b->timed_total_ns, 0, sizeof(b->timed_total_ns));
	memset(b->timed_calls, 0, sizeof(b->timed_calls));
	create_close(CR_UDP_INLINE, lfd, map);
	map_iter_pass(skel, iter, 3);
	for (i = 0; i < SK_BENCH_TIMED; i++)
		for (j = 0; j < 2; j++)
			bpf_link__destroy(l[i][j]);
	printf("\nthe registry's functions in a round of %ld values' create+close and a walk,\n"
	       "entry to exit (the sections with interrupts off lie within)\n",
	       cfg.create_iters);
	printf("%-28s %10s %10s %10s\n", "", "calls", "longest ns", "mean ns");
	for (i = 0; i < SK_BENCH_TIMED; i++) {
		if (!l[i][0]) {
			printf("%-28s %10s\n", timed_fn[i], "-");
			continue;
		}
		printf("%-28s %10llu %10llu %10.0f\n", timed_fn[i],
		       (unsigned long long)b->timed_calls[i],
		       (unsigned long long)b->timed_max_ns[i],
		       b->timed_calls[i] ? (double)b->timed_total_ns[i] / b->timed_calls[i] : 0);
		printf("data: timed %s %llu %llu\n", timed_fn[i],
		       (unsigned long long)b->timed_calls[i],
		       (unsigned long long)b->timed_max_ns[i]);
	}
}

/* The minimum of each kind over rounds of every kind in turn. */
static void registered_rounds(double ns[NR_REG], int lfd, int map,
			      struct sk_bench *skel, struct bpf_link *link)
{
	double round[NR_REG][CREATE_ROUNDS], med;
	int k, r;

	for (r = 0; r < CREATE_ROUNDS; r++)
		for (k = 0; k < NR_REG; k++)
			round[k][r] = k == RG_ITER ? map_iter_pass(skel, link, 3) :
				      create_close(reg_create_kind[k], lfd,
						   k == RG_UDP_VALUE ? map : -1);
	for (k = 0; k < NR_REG; k++)
		min_median(round[k], CREATE_ROUNDS, &ns[k], &med);
}

/*
 * Socket create+close, with and without a value, and a walk of a map
 * holding 3 values, first alone, then while cfg.registered other UDP
 * sockets hold a value of another map: with a tail, sockets that held
 * an inline value are in the registry that the map iterator walks and
 * that a socket with a value enters and leaves.
 */
static void registered_section(void)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = {};
	int lfd = listener(), few = sk_map_create(8, 0), many = sk_map_create(8, 0);
	double none[NR_REG], reg[NR_REG];
	struct sk_bench *skel;
	struct bpf_link *link;
	int keep[3], *fds, k;
	__u64 v = 1;
	long i;

	progress("%ld sockets with values: create+close and a map walk beside them",
		 cfg.registered);
	if (few < 0 || many < 0)
		die("sk storage maps: %s", strerror(errno));
	if (tail_bytes > 0) {
		expect_storage(few, "inline", "inline");
		expect_storage(many, "inline", "inline");
	}
	skel = sk_bench__open();
	if (!skel)
		die("open the BPF object: %s", strerror(errno));
	timed_setup(skel, true);
	if (sk_bench__load(skel))
		die("load the BPF object: %s", strerror(errno));
	linfo.map.map_fd = few;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(skel->progs.count_values, &opts);
	if (!link)
		die("attach the map iterator: %s", strerror(errno));
	for (k = 0; k < 3; k++) {
		keep[k] = socket(AF_INET, SOCK_DGRAM, 0);
		if (keep[k] < 0 || bpf_map_update_elem(few, &keep[k], &v, BPF_NOEXIST))
			die("3 values: %s", strerror(errno));
	}
	registered_rounds(none, lfd, few, skel, link);

	raise_nofile(cfg.registered + 64);
	fds = calloc(cfg.registered, sizeof(int));
	if (!fds)
		die("out of memory");
	for (i = 0; i < cfg.registered; i++) {
		fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (fds[i] < 0 || bpf_map_update_elem(many, &fds[i], &v, BPF_NOEXIST))
			die("socket %ld with a value: %s", i, strerror(errno));
	}
	registered_rounds(reg, lfd, few, skel, link);

	printf("\n%ld UDP sockets holding a value of another map (%s) against none:\n"
	       "ns per socket (per pair for TCP pairs; per read() for the walk, which\n"
	       "visits the 3 values), minimum of %d rounds of %ld sockets; vs pipe: the\n"
	       "ratio to each column's own pipe+close\n",
	       cfg.registered, tail_bytes > 0 ? "inline" : "dynamic", CREATE_ROUNDS,
	       cfg.create_iters);
	printf("%-28s %10s %10s %7s %9s\n", "", "none", "values", "ratio", "vs pipe");
	for (k = 0; k < NR_REG; k++)
		printf("%-28s %10.0f %10.0f %7.2f %9.2f\n", reg_name[k], none[k], reg[k],
		       reg[k] / none[k], (reg[k] / reg[RG_PIPE]) / (none[k] / none[RG_PIPE]));
	for (k = 0; k < NR_REG; k++)
		printf("data: registered %s %.0f %.0f\n", reg_name[k], none[k], reg[k]);
	timed_round(skel, link, lfd, few);

	for (i = 0; i < cfg.registered; i++)
		close(fds[i]);
	free(fds);
	for (k = 0; k < 3; k++)
		close(keep[k]);
	bpf_link__destroy(link);
	sk_bench__destroy(skel);
	close(few);
	close(many);
	close(lfd);
}

/* ---- one step ---- */

struct step_result {
	long n, n_udp, n_tcp;
	struct walk_result cold[2], hot[2], full[2];
	struct mem_result mem[NR_SIZES][2];
};

static const char *const proto_name[2] = { "udp", "tcp" };

static void step(long n, struct step_result *res)
{
	long n_tcp = cfg.tcp_max >= 0 && cfg.tcp_max < n ? cfg.tcp_max : n;
	struct bpf_link *links[2], *fl[2], *full_link = NULL;
	struct sk_bench *skel;
	struct sockset s;
	unsigned int i;
	__u64 t0;
	int p;

	n_tcp &= ~1L;
	memset(res, 0, sizeof(*res));
	res->n = n;
	wait_tail_free();
	skel = sk_bench__open();
	if (!skel)
		die("open the BPF object: %s", strerror(errno));
	timed_setup(skel, false);
	bpf_map__set_max_entries(skel->maps.cookie_map, n + n_tcp + 1);
	/*
	 * The inline map first, then the dynamic one with the tail filled.
	 * Without a tail both are dynamic: dynref times only the second.
	 */
	for (p = 0; p < 2; p++) {
		struct bpf_map *m = p ? skel->maps.dyn_map : skel->maps.inline_map;
		int fd = p && !cfg.dynref ? sk_map_create_dynamic(sizeof(__u64)) :
			 sk_map_create(sizeof(__u64), 0);

		if (fd < 0 || bpf_map__reuse_fd(m, fd))
			die("sk storage map for %s: %s", bpf_map__name(m),
			    strerror(fd < 0 ? -fd : errno));
		close(fd);
	}
	if (sk_bench__load(skel))
		die("load the BPF object: %s", strerror(errno));
	if (!cfg.dynref)
		expect_storage(bpf_map__fd(skel->maps.inline_map), "inline", "inline");
	if (!unpatched)
		expect_storage(bpf_map__fd(skel->maps.dyn_map), "dynamic", "dynamic");
	links[0] = bpf_program__attach_iter(skel->progs.walk_udp, NULL);
	links[1] = bpf_program__attach_iter(skel->progs.walk_tcp, NULL);
	fl[0] = bpf_program__attach(skel->progs.free_enter);
	fl[1] = bpf_program__attach(skel->progs.free_exit);
	if (!links[0] || !links[1] || !fl[0] || !fl[1])
		die("attach the BPF programs: %s", strerror(errno));
	if (cfg.lookup) {
		int cg = open(CG_ROOT, O_RDONLY | O_DIRECTORY);

		full_link = cg < 0 ? NULL : bpf_program__attach_cgroup(skel->progs.hot_full, cg);
		if (!full_link)
			die("attach hot_full to %s: %s", CG_ROOT, strerror(errno));
		close(cg);
	}

	progress("N=%ld: creating %ld UDP sockets and %ld TCP pairs", n, n, n_tcp / 2);
	t0 = now_ns();
	sockets_open(&s, n, n_tcp);
	progress("N=%ld: %ld sockets and %ld fillers in %.1f s", n, s.n_udp + s.n_tcp,
		 s.n_filler, (now_ns() - t0) / 1e9);
	res->n_udp = s.n_udp;
	res->n_tcp = s.n_tcp;

	/* Before the lookup values: a value's cost includes its storage. */
	if (cfg.memory) {
		struct mem_result warm;

		progress("N=%ld: bytes per value and map free", n);
		/* Once unrecorded: first-time allocations are not a value's. */
		memory_one(skel, &s, 8, false, &warm);
		for (i = 0; i < NR_SIZES; i++)
			for (p = 0; p < 2; p++)
				memory_one(skel, &s, value_sizes[i], p, &res->mem[i][p]);
	}

	if (cfg.lookup || cfg.dynref) {
		progress("N=%ld: values", n);
		values_fill(skel, &s);
		fillers_close(&s);
		/* Let the fillers' RCU frees finish before timing. */
		usleep(200000);
		for (p = 0; p < 2; p++) {
			long expect = p ? s.n_tcp : s.n_udp;

			if (!expect)
				continue;
			progress("N=%ld: %s cold passes", n, proto_name[p]);
			walk(skel, links[p], proto_name[p], expect, false, &res->cold[p]);
			progress("N=%ld: %s hot passes", n, proto_name[p]);
			walk(skel, links[p], proto_name[p], expect, true, &res->hot[p]);
			if (!cfg.lookup)
				continue;
			progress("N=%ld: %s hot passes on a full socket", n, proto_name[p]);
			full_walk(skel, p ? s.tcp : s.udp, expect, proto_name[p], &res->full[p]);
		}
		cachesim_kallsyms();
	}

	printf("\n== N=%ld: %ld UDP sockets, %ld TCP sockets (%ld pairs over loopback)%s\n",
	       n, s.n_udp, s.n_tcp, s.n_tcp / 2,
	       s.n_tcp < n ? ", fewer TCP: --tcp" : "");
	printf("spread: %d filler socket(s) per socket on average, allocated in between and closed before the passes\n",
	       cfg.spread);
	if (cfg.lookup || cfg.dynref) {
		printf("\nns per lookup, min and median of %d passes, less the same for a visit-only pass\n"
		       "(\"visit only\" rows: what was subtracted); x raw, x dyn: ratios of medians.\n"
		       "cold: every socket once per pass; hot: one socket %ld times in bpf_loop().\n"
		       "timed: each lookup between two bpf_ktime_get_ns() (windows over 50 us, cut by\n"
		       "an interrupt or a stopped vCPU, left out: udp %.3f%%, tcp %.3f%%), or the whole\n"
		       "hot loop (each pass hot on another socket); pass: the read() that runs the cold\n"
		       "iterator, per socket. full: hot from a cgroup/getsockopt program, whose socket\n"
		       "the verifier knows is full (no socket cookie there: no hash)\n",
		       cfg.passes, cfg.hot_iters, dropped_pct(&res->cold[0]),
		       dropped_pct(&res->cold[1]));
		printf("%-4s %-4s %-12s %8s %8s %6s %6s | %8s %8s %6s %6s\n", "", "", "",
		       "timed", "", "", "", "pass", "", "", "");
		printf("%-4s %-4s %-12s %8s %8s %6s %6s | %8s %8s %6s %6s\n", "walk", "sock",
		       "variant", "min", "median", "x raw", "x dyn", "min", "median",
		       "x raw", "x dyn");
		for (p = 0; p < 2; p++)
			if (p ? s.n_tcp : s.n_udp)
				print_walk("cold", proto_name[p], false, &res->cold[p]);
		for (p = 0; p < 2; p++)
			if (p ? s.n_tcp : s.n_udp)
				print_walk("hot", proto_name[p], true, &res->hot[p]);
		for (p = 0; p < 2 && cfg.lookup; p++)
			if (p ? s.n_tcp : s.n_udp)
				print_walk("full", proto_name[p], true, &res->full[p]);
	}
	if (cfg.memory)
		print_memory(&s, res->mem);
	fflush(stdout);

	sockets_close(&s);
	for (p = 0; p < 2; p++) {
		bpf_link__destroy(links[p]);
		bpf_link__destroy(fl[p]);
	}
	bpf_link__destroy(full_link);
	sk_bench__destroy(skel);
}

/* "x.xx (y.yy)": ratio of medians @m, of minimums @l, of modes @x and @y. */
static void ratio2(char *buf, size_t len, const double *m, const double *l, int x, int y)
{
	char a[12], b[12];

	ratio(a, sizeof(a), m[x], m[y]);
	ratio(b, sizeof(b), l[x], l[y]);
	snprintf(buf, len, "%s (%s)", a, b);
}

static void summary(struct step_result *r, int nr)
{
	char a[32], b[32], c[32], d[32], e[32];
	int i, p, w;

	if (cfg.lookup) {
		printf("\n== summary: median ns per lookup (timed), ratios of medians (of minimums)\n");
		printf("%-4s %7s %-4s %7s %7s %7s %7s %7s %7s | %13s %13s %15s %13s %13s\n",
		       "walk", "N", "sock", "raw", "end", "inline", "call", "dynamic", "hash",
		       "inline/raw", "inline/end", "dynamic/inline", "hash/inline", "call/inline");
		for (w = 0; w < 3; w++)
			for (i = 0; i < nr; i++)
				for (p = 0; p < 2; p++) {
					const struct walk_result *x = w == 2 ? &r[i].full[p] :
								      w ? &r[i].hot[p] : &r[i].cold[p];
					const double *m = x->med, *l = x->min;
					char h[16] = "-", end[16] = "-";

					if (!(p ? r[i].n_tcp : r[i].n_udp))
						continue;
					ratio2(a, sizeof(a), m, l, BENCH_INLINE, BENCH_RAW);
					ratio2(e, sizeof(e), m, l, BENCH_INLINE, BENCH_RAW_END);
					ratio2(b, sizeof(b), m, l, BENCH_DYNAMIC, BENCH_INLINE);
					ratio2(c, sizeof(c), m, l, BENCH_HASH, BENCH_INLINE);
					ratio2(d, sizeof(d), m, l, BENCH_CALL, BENCH_INLINE);
					/* full: no socket cookie, no end field */
					if (x->full) {
						strcpy(c, "-");
						strcpy(e, "-");
					} else {
						snprintf(h, sizeof(h), "%.1f", m[BENCH_HASH]);
						snprintf(end, sizeof(end), "%.1f", m[BENCH_RAW_END]);
					}
					printf("%-4s %7ld %-4s %7.1f %7s %7.1f %7.1f %7.1f %7s | %13s %13s %15s %13s %13s\n",
					       (const char *[]){ "cold", "hot", "full" }[w], r[i].n,
					       proto_name[p], m[BENCH_RAW], end, m[BENCH_INLINE],
					       m[BENCH_CALL], m[BENCH_DYNAMIC], h, a, e, b, c, d);
				}
	}
	if (cfg.memory) {
		printf("\nmap free, ms from close() until bpf_sk_storage_map_free() returned (its own work), 8-byte values in N UDP sockets\n");
		printf("%8s %18s %18s\n", "N", "dynamic", "inline");
		for (i = 0; i < nr; i++)
			printf("%8ld %9.1f (%6.1f) %9.1f (%6.1f)\n", r[i].n,
			       r[i].mem[0][0].fr.done_ms, r[i].mem[0][0].fr.work_ms,
			       r[i].mem[0][1].fr.done_ms, r[i].mem[0][1].fr.work_ms);
	}
	if (cfg.dynref) {
		printf("\n== dynamic lookups, %s: median ns per lookup (timed), ratio of medians (of minimums)\n",
		       unpatched ? "kernel without the series" : "this kernel");
		printf("%-4s %7s %-4s %7s %7s | %15s\n", "walk", "N", "sock", "raw",
		       "dynamic", "dynamic/raw");
		for (w = 0; w < 2; w++)
			for (i = 0; i < nr; i++)
				for (p = 0; p < 2; p++) {
					const struct walk_result *x = w ? &r[i].hot[p] : &r[i].cold[p];

					if (!(p ? r[i].n_tcp : r[i].n_udp))
						continue;
					ratio2(a, sizeof(a), x->med, x->min, BENCH_DYNAMIC, BENCH_RAW);
					printf("%-4s %7ld %-4s %7.1f %7.1f | %15s\n",
					       w ? "hot" : "cold", r[i].n, proto_name[p],
					       x->med[BENCH_RAW], x->med[BENCH_DYNAMIC], a);
				}
	}
	if (!cfg.data)
		return;
	/*
	 * What tools/bench-dynref compares between boots: the walk alone
	 * (the same iterator code in every kernel, the boot's speed), then
	 * what sk_mark and a dynamic lookup add to it.
	 */
	for (w = 0; w < 2 && cfg.dynref; w++)
		for (i = 0; i < nr; i++) {
			printf("data: dynref %s %ld", w ? "hot" : "cold", r[i].n);
			for (p = 0; p < 2; p++) {
				const double *m = w ? r[i].hot[p].med : r[i].cold[p].med;

				printf(" %.2f %.2f %.2f", m[BENCH_VISIT], m[BENCH_RAW],
				       m[BENCH_DYNAMIC]);
			}
			printf("\n");
		}
	if (!cfg.lookup)
		return;
	/* One line per N and walk, medians, for gnuplot. */
	printf("\ndata: # walk N udp_raw udp_inline udp_dynamic udp_hash tcp_raw tcp_inline tcp_dynamic tcp_hash free_dynamic_ms free_inline_ms udp_call tcp_call udp_rawend tcp_rawend\n");
	for (w = 0; w < 2 && cfg.lookup; w++)
		for (i = 0; i < nr; i++) {
			printf("data: %s %ld", w ? "hot" : "cold", r[i].n);
			for (p = 0; p < 2; p++) {
				const double *m = w ? r[i].hot[p].med : r[i].cold[p].med;

				printf(" %.2f %.2f %.2f %.2f", m[BENCH_RAW], m[BENCH_INLINE],
				       m[BENCH_DYNAMIC], m[BENCH_HASH]);
			}
			printf(" %.2f %.2f %.2f %.2f %.2f %.2f\n", r[i].mem[0][0].fr.done_ms,
			       r[i].mem[0][1].fr.done_ms,
			       (w ? r[i].hot[0] : r[i].cold[0]).med[BENCH_CALL],
			       (w ? r[i].hot[1] : r[i].cold[1]).med[BENCH_CALL],
			       (w ? r[i].hot[0] : r[i].cold[0]).med[BENCH_RAW_END],
			       (w ? r[i].hot[1] : r[i].cold[1]).med[BENCH_RAW_END]);
		}
}

static void parse_steps(const char *arg)
{
	char *dup = strdup(arg), *tok, *save = NULL, *end;
	long n;

	cfg.nr_steps = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		n = strtol(tok, &end, 10);
		if (*end == 'k')
			n *= 1000, end++;
		if (*end || n < 2 || n > 1000000 || cfg.nr_steps == MAX_STEPS) {
			fprintf(stderr, "sk-bench: bad --sockets '%s' (2..1000000, at most %d steps)\n",
				arg, MAX_STEPS);
			exit(2);
		}
		cfg.steps[cfg.nr_steps++] = n;
	}
	free(dup);
}

static void parse_only(const char *arg)
{
	cfg.lookup = strstr(arg, "lookup");
	cfg.memory = strstr(arg, "memory");
	cfg.create = strstr(arg, "create");
	cfg.dynref = strstr(arg, "dynref");
	cfg.reg = strstr(arg, "registered");
	if ((!cfg.lookup && !cfg.memory && !cfg.create && !cfg.dynref && !cfg.reg) ||
	    (cfg.dynref && (cfg.lookup || cfg.memory))) {
		fprintf(stderr, "sk-bench: bad --only '%s'\n", arg);
		exit(2);
	}
}

enum {
	OPT_TCP = 256, OPT_HOT, OPT_SPREAD, OPT_ONLY, OPT_CITERS, OPT_CREF,
	OPT_DATA, OPT_SEED, OPT_CACHESIM, OPT_REGISTERED,
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sockets", required_argument, NULL, 'n' },
		{ "tcp", required_argument, NULL, OPT_TCP },
		{ "passes", required_argument, NULL, 'p' },
		{ "hot-iters", required_argument, NULL, OPT_HOT },
		{ "spread", required_argument, NULL, OPT_SPREAD },
		{ "only", required_argument, NULL, OPT_ONLY },
		{ "create-iters", required_argument, NULL, OPT_CITERS },
		{ "create-ref", required_argument, NULL, OPT_CREF },
		{ "data", no_argument, NULL, OPT_DATA },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "cachesim", no_argument, NULL, OPT_CACHESIM },
		{ "registered", required_argument, NULL, OPT_REGISTERED },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct step_result *res;
	int opt, i;

	cfg.lookup = cfg.memory = cfg.create = cfg.reg = true;
	cfg.steps[0] = 100000;
	cfg.nr_steps = 1;
	while ((opt = getopt_long(argc, argv, "n:p:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			parse_steps(optarg);
			break;
		case OPT_TCP:
			cfg.tcp_max = atol(optarg);
			break;
		case 'p':
			cfg.passes = atoi(optarg);
			break;
		case OPT_HOT:
			cfg.hot_iters = atol(optarg);
			break;
		case OPT_SPREAD:
			cfg.spread = atoi(optarg);
			break;
		case OPT_ONLY:
			parse_only(optarg);
			break;
		case OPT_CITERS:
			cfg.create_iters = atol(optarg);
			break;
		case OPT_CREF:
			cfg.create_ref = optarg;
			break;
		case OPT_DATA:
			cfg.data = true;
			break;
		case OPT_CACHESIM:
			cfg.cachesim = true;
			break;
		case OPT_REGISTERED:
			cfg.registered = atol(optarg);
			break;
		case OPT_SEED:
			cfg.seed = strtoull(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || cfg.passes < 1 || cfg.passes > MAX_PASSES ||
	    cfg.hot_iters < 1 || cfg.hot_iters > 1 << 23 || cfg.spread < 0 ||
	    cfg.spread > 8 || cfg.create_iters < 4 || cfg.tcp_max < -1 ||
	    cfg.registered < 1 || cfg.registered > 1000000) {
		fprintf(stderr, "sk-bench: bad arguments (passes 1..%d, hot-iters 1..%d, spread 0..8, registered 1..1000000)\n",
			MAX_PASSES, 1 << 23);
		usage(stderr);
		return 2;
	}
	rng = cfg.seed * 0x9e3779b97f4a7c15ULL | 1;
	start_ns = now_ns();
	cachesim_pin();
	tail_bytes = cg_read_long(TAIL_SYSCTL);
	if (tail_bytes < 0 && (cfg.lookup || cfg.memory))
		die("%s: not the patched kernel (--only create,dynref runs there)", TAIL_SYSCTL);
	unpatched = tail_bytes < 0;
	if (unpatched)
		tail_bytes = 0;
	if ((cfg.lookup || cfg.memory) && !tail_bytes)
		die("the inline tail is off: boot with bpf_sk_inline_bytes=128, or use --only create");
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	cg_write("/proc/sys/fs/file-max", "4000000");
	/* The benchmark's own cgroup: what the dynamic values charge. */
	have_memcg = !cg_write(CG_ROOT "/cgroup.subtree_control", "+memory") &&
		     (!mkdir(CG_BENCH, 0755) || errno == EEXIST) && !cg_enter(CG_BENCH);

	printf("inline sk storage benchmark: %s %ld bytes, %ld CPUs, UDP object %ld B, TCP object %ld B\n",
	       unpatched ? "kernel without the series, tail" : "tail", tail_bytes, sysconf(_SC_NPROCESSORS_ONLN), slab_object_size("UDP"),
	       slab_object_size("TCP"));
	if (cfg.create)
		create_section();
	if (cfg.reg)
		registered_section();

	res = calloc(cfg.nr_steps, sizeof(*res));
	if (!res)
		die("out of memory");
	if (cfg.lookup || cfg.memory || cfg.dynref) {
		for (i = 0; i < cfg.nr_steps; i++)
			step(cfg.steps[i], &res[i]);
		summary(res, cfg.nr_steps);
	}
	free(res);
	if (have_memcg) {
		cg_enter(CG_ROOT);
		rmdir(CG_BENCH);
	}
	return 0;
}
