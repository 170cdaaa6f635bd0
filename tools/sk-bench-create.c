// SPDX-License-Identifier: GPL-2.0
/*
 * sk-bench: the cost of a socket's create and close, with and without a
 * value, and what sockets that hold values cost the others: create+close
 * and a map walk beside them, and the registry's functions timed.
 */
#include "sk-bench-user.h"

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

void create_section(void)
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
	"bpf_sk_inline_link", "__bpf_sk_inline_destruct", "bpf_sk_inline_iter_find",
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
 * The BPF object, opened with the timers set up, not loaded. Opened here
 * alone: each file that calls sk_bench__open() embeds a copy of the object.
 */
struct sk_bench *bench_open(bool timers)
{
	struct sk_bench *skel = sk_bench__open();

	if (!skel)
		die("open the BPF object: %s", strerror(errno));
	/* Without the series, map_extra must be 0: its maps are dynamic anyway. */
	if (unpatched && (bpf_map__set_map_extra(skel->maps.inline_map, 0) ||
			  bpf_map__set_map_extra(skel->maps.dyn_map, 0)))
		die("map_extra: %s", strerror(errno));
	timed_setup(skel, timers);
	return skel;
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
void registered_section(void)
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
	skel = bench_open(true);
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
