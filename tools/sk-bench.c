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
 *
 * Here: the options, a step per N and the summary; the sockets, lookups,
 * memory and create costs are in sk-bench-*.c.
 */
#include <getopt.h>
#include <stdarg.h>
#include <time.h>

#include "sk-bench-user.h"

#define TAIL_SYSCTL		"/proc/sys/net/core/bpf_sk_inline_bytes"

struct bench_cfg cfg = {
	.tcp_max = -1,
	.passes = 7,
	.hot_iters = 100000,
	.spread = 1,
	.create_iters = 2000,
	.registered = 100000,
	.seed = 1,
};

long tail_bytes;
bool unpatched;
bool have_memcg;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sk-bench [options]\n"
		"In the guest (booted with sysctl.net.core.bpf_sk_inline_bytes=128):\n"
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

static __u64 start_ns;

void progress(const char *fmt, ...)
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

__u32 rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (rng * 0x2545f4914f6cdd1dULL) >> 32;
}

long *permutation(long n)
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

void min_median(const double *v, int n, double *min, double *med)
{
	double s[MAX_PASSES];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	*min = s[0];
	*med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* "sk_storage:\t<what>" from the map's fdinfo must be @want. */
void expect_storage(int map, const char *what, const char *want)
{
	char got[32];

	if (map_fdinfo(map, "sk_storage", got, sizeof(got)) || strcmp(got, want))
		die("%s map is '%s' in its fdinfo, not 'sk_storage:\t%s' (boot with sysctl.net.core.bpf_sk_inline_bytes=128?)",
		    what, got[0] ? got : "no sk_storage line", want);
}

/*
 * Wait (up to a minute) until no map holds a slot of the tail: the maps of
 * a previous step are freed after their programs, from a workqueue.
 */
static void wait_tail_free(void)
{
	struct layout l;
	int i;

	for (i = 0; i < 600; i++) {
		if (layout_read(&l) == -ENOENT || !l.used)
			return;
		usleep(100000);
	}
	die("%ld bytes of the tail still used by maps a minute after they were closed", l.used);
}

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
	__u64 t0;
	int p;

	n_tcp &= ~1L;
	memset(res, 0, sizeof(*res));
	res->n = n;
	wait_tail_free();
	skel = bench_open(false);
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
		progress("N=%ld: bytes per value and map free", n);
		memory_section(skel, &s, res->mem);
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

/* The medians of COLS for UDP, then for TCP, of the cold or hot walk. */
static void print_medians(const struct step_result *r, int hot, const int *cols, int nr_cols)
{
	int p, c;

	for (p = 0; p < 2; p++)
		for (c = 0; c < nr_cols; c++)
			printf(" %.2f", (hot ? r->hot[p] : r->cold[p]).med[cols[c]]);
}

static const int dynref_columns[] = { BENCH_VISIT, BENCH_RAW, BENCH_DYNAMIC };
static const int lookup_columns[] = { BENCH_RAW, BENCH_INLINE, BENCH_DYNAMIC, BENCH_HASH };

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
			print_medians(&r[i], w, dynref_columns, ARRAY_SIZE(dynref_columns));
			printf("\n");
		}
	if (!cfg.lookup)
		return;
	/* One line per N and walk, medians, for gnuplot. */
	printf("\ndata: # walk N udp_raw udp_inline udp_dynamic udp_hash tcp_raw tcp_inline tcp_dynamic tcp_hash free_dynamic_ms free_inline_ms udp_call tcp_call udp_rawend tcp_rawend\n");
	for (w = 0; w < 2 && cfg.lookup; w++)
		for (i = 0; i < nr; i++) {
			printf("data: %s %ld", w ? "hot" : "cold", r[i].n);
			print_medians(&r[i], w, lookup_columns, ARRAY_SIZE(lookup_columns));
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
		default:
			usage_exit(usage, opt);
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
		die("the inline tail is off: boot with sysctl.net.core.bpf_sk_inline_bytes=128, or use --only create");
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
