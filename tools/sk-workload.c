// SPDX-License-Identifier: GPL-2.0
/*
 * sk-workload: what a host running per-connection accounting sees, inline
 * sk storage against dynamic, a hash map and no program.
 *
 * Request/response: N established TCP connections over loopback, served
 * round-robin by one thread (a 64-byte request, a 64-byte reply), so that
 * each transaction finds its sockets as cold as N makes them. A
 * cgroup_skb program on ingress and egress (sk-workload.bpf.c) keeps a
 * record per connection of the payload each socket saw, in each variant
 * in turn; transactions/s per variant, and with --cachesim a marked phase
 * per variant for the cache simulator. The records are then checked
 * against the transactions made.
 *
 * Churn: connect, exchange, close, as fast as one thread can, with the
 * program creating a value in each new socket; connections/s, the RCU
 * callbacks it queues, how many sockets await their RCU free and how
 * long, and the grace period under that load.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>

#include "sk-workload-user.h"
#include "sk-workload.skel.h"

#define MAX_PASSES	31
#define MSG_BYTES	64
#define LISTEN_PORT	11000
#define PORT_BASE	20000
#define PORTS_PER_ADDR	40000
#define CLIENT_NET	0x7f030001	/* clients bind 127.3.0.1 and up */
#define CG_WL		CG_ROOT "/sk-workload"
#define TAIL_SYSCTL	"/proc/sys/net/core/bpf_sk_inline_bytes"

const char *const variant_name[NR_WL_VARIANTS] = {
	[WL_NONE] = "none",
	[WL_RAW] = "raw",
	[WL_INLINE] = "inline",
	[WL_DYNAMIC] = "dynamic",
	[WL_HASH] = "hash",
};

struct wl_cfg cfg = {
	.passes = 5,
	.segment = 10000,
	.churn_seconds = 60,
	.reqresp = true,
	.churn = true,
	.check = true,
};

struct sk_workload *skel;
bool have_variant[NR_WL_VARIANTS];
long record_errors;
static int cg_fd = -1;
static long tail_bytes = -1;	/* -1: a kernel without the series */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sk-workload [options]\n"
		"In the guest: a request/response workload over N established TCP\n"
		"connections on loopback, served round-robin (64-byte request and\n"
		"reply), with a cgroup_skb program keeping a per-connection record in\n"
		"each variant in turn: none (no program), raw (a socket field: the\n"
		"floor), inline (sk storage map with a slot), dynamic (one without),\n"
		"hash (keyed by socket cookie); transactions/s per variant, medians.\n"
		"Then a churn workload: connect, exchange, close, with a value created\n"
		"in each socket: connections/s, RCU callbacks, sockets awaiting their\n"
		"RCU free, the grace period. Every record is checked against the\n"
		"transactions made; a mismatch fails the run.\n"
		"\n"
		"  -n, --conns N[,N...]   connections, growing (default\n"
		"                         1000,3000,10000,30000,100000)\n"
		"  -p, --passes P         timed passes per variant and N (default 5)\n"
		"      --segment T        transactions per variant per pass (default 10000,\n"
		"                         at most N)\n"
		"      --churn-seconds S  per churn variant (default 60)\n"
		"      --only reqresp|churn|hot\n"
		"                         hot: one connection on CPU 0 with and without\n"
		"                         churn on CPU 1, per variant (sk-workload-hot.c)\n"
		"      --cachesim         one phase per variant and N (--passes of them)\n"
		"                         between cachesim_begin() and cachesim_end(),\n"
		"                         labelled by cachesim-phase lines, no timing\n"
		"  -h, --help\n");
}

double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/*
 * Phase markers for the cache simulator (tools/cachesim): empty, never
 * inlined, cloned or merged; the simulator watches their addresses.
 */
__attribute__((noipa)) void cachesim_begin(void)
{
	asm volatile("" ::: "memory");
}

__attribute__((noipa)) void cachesim_end(void)
{
	asm volatile("" ::: "memory");
}

/* ---- variants ---- */

static struct bpf_program *variant_prog(int v, bool egress)
{
	switch (v) {
	case WL_RAW:
		return egress ? skel->progs.raw_out : skel->progs.raw_in;
	case WL_INLINE:
		return egress ? skel->progs.inline_out : skel->progs.inline_in;
	case WL_DYNAMIC:
		return egress ? skel->progs.dynamic_out : skel->progs.dynamic_in;
	case WL_HASH:
		return egress ? skel->progs.hash_out : skel->progs.hash_in;
	}
	return NULL;
}

static struct bpf_link *links[2];

void variant_attach(int v)
{
	int i;

	for (i = 0; i < 2 && v != WL_NONE; i++) {
		links[i] = bpf_program__attach_cgroup(variant_prog(v, i), cg_fd);
		if (!links[i])
			die("attach %s: %s", variant_name[v], strerror(errno));
	}
}

void variant_detach(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
}

bool churn_prog(const struct bpf_program *p)
{
	if (!strncmp(bpf_program__section_name(p), "iter/", 5))
		return false;
	return bpf_program__type(p) == BPF_PROG_TYPE_TRACING ||
	       bpf_program__type(p) == BPF_PROG_TYPE_KPROBE;
}

/* Load the programs; at a tail that gives no slot, inline is not run. */
static void load(long max_conns, bool churn)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct bpf_program *p;
	char storage[16];
	int err;

	if (!btf)
		die("vmlinux BTF: %s", strerror(errno));
	skel = sk_workload__open();
	if (!skel)
		die("open skeleton: %s", strerror(errno));
	/* Both sockets of every connection, and the listener. */
	bpf_map__set_max_entries(skel->maps.cookie_map, 2 * max_conns + 64);
	if (tail_bytes < 0)	/* map_extra must be 0 without the series */
		bpf_map__set_map_extra(skel->maps.inline_map, 0);
	/* The churn's kprobe and fentry programs, on what this kernel has. */
	bpf_object__for_each_program(p, skel->obj) {
		const char *target = strchr(bpf_program__section_name(p), '/');

		if (!churn_prog(p))
			continue;
		if (!churn) {
			bpf_program__set_autoload(p, false);
		} else if (btf__find_by_name_kind(btf, target + 1, BTF_KIND_FUNC) < 0) {
			printf("# churn: no %s in this kernel\n", target + 1);
			bpf_program__set_autoload(p, false);
		}
	}
	btf__free(btf);
	err = sk_workload__load(skel);
	if (err)
		die("load: %s", strerror(-err));
	if (map_fdinfo(bpf_map__fd(skel->maps.inline_map), "sk_storage", storage,
		       sizeof(storage)))
		strcpy(storage, "dynamic");
	for (int v = 0; v < NR_WL_VARIANTS; v++)
		have_variant[v] = v != WL_INLINE || !strcmp(storage, "inline");
	if (!have_variant[WL_INLINE])
		printf("# inline: not run, the inline map is %s at this tail\n", storage);
	if (mkdir(CG_WL, 0755) && errno != EEXIST)
		die("%s: %s", CG_WL, strerror(errno));
	if (cg_enter(CG_WL))
		die("enter %s", CG_WL);
	cg_fd = open(CG_WL, O_RDONLY | O_DIRECTORY);
	if (cg_fd < 0)
		die("%s: %s", CG_WL, strerror(errno));
}

/* ---- connections ---- */

static int listen_fd = -1;

static void listener_open(void)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons(LISTEN_PORT),
	};
	int one = 1;

	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (listen_fd < 0 || setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(listen_fd, (void *)&a, sizeof(a)) || listen(listen_fd, 4096))
		die("listener: %s", strerror(errno));
}

static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY: %s", strerror(errno));
}

/* A connection whose client is bound to @slot's address, or any (-1). */
void conn_open(struct conn *c, long slot)
{
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons(LISTEN_PORT),
	}, a = { .sin_family = AF_INET };

	c->client = socket(AF_INET, SOCK_STREAM, 0);
	if (c->client < 0)
		die("socket: %s", strerror(errno));
	if (slot >= 0) {
		a.sin_addr.s_addr = htonl(CLIENT_NET + slot / PORTS_PER_ADDR);
		a.sin_port = htons(PORT_BASE + slot % PORTS_PER_ADDR);
		if (bind(c->client, (void *)&a, sizeof(a)))
			die("bind %ld: %s", slot, strerror(errno));
	}
	if (connect(c->client, (void *)&dst, sizeof(dst)))
		die("connect: %s", strerror(errno));
	c->server = accept(listen_fd, NULL, NULL);
	if (c->server < 0)
		die("accept: %s", strerror(errno));
	nodelay(c->client);
	nodelay(c->server);
}

/* Close without a timewait socket on either side. */
void conn_close(struct conn *c)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(c->client, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
	close(c->client);
	close(c->server);
}

static void xfer(int from, int to, char *buf)
{
	ssize_t n, got = 0;

	if (write(from, buf, MSG_BYTES) != MSG_BYTES)
		die("write: %s", strerror(errno));
	while (got < MSG_BYTES) {
		n = read(to, buf + got, MSG_BYTES - got);
		if (n <= 0)
			die("read: %s", n ? strerror(errno) : "connection closed");
		got += n;
	}
}

/* One request and its reply. */
void transaction(const struct conn *c)
{
	char buf[MSG_BYTES] = "request";

	xfer(c->client, c->server, buf);
	memcpy(buf, "reply", 6);
	xfer(c->server, c->client, buf);
}

/* ---- request/response ---- */

struct reqresp {
	struct conn *conns;
	long nr, cursor;
	unsigned int *tx[NR_WL_VARIANTS];	/* per connection */
	long cachesim_phase;
};

/* @count transactions round-robin from the cursor, under variant @v. */
static double run_segment(struct reqresp *w, int v, long count, bool marked)
{
	__u64 t0;
	long i;

	variant_attach(v);
	if (marked)
		cachesim_begin();
	t0 = now_ns();
	for (i = 0; i < count; i++) {
		transaction(&w->conns[w->cursor]);
		w->tx[v][w->cursor]++;
		if (++w->cursor == w->nr)
			w->cursor = 0;
	}
	t0 = now_ns() - t0;
	if (marked)
		cachesim_end();
	variant_detach();
	return count / (t0 / 1e9);
}

/* Connections up to @n; each variant's record made in the new ones. */
static void grow(struct reqresp *w, long n)
{
	long first = w->nr, i;
	int v;

	for (i = w->nr; i < n; i++)
		conn_open(&w->conns[i], i);
	w->nr = n;
	for (v = 0; v < NR_WL_VARIANTS; v++) {
		if (!have_variant[v])
			continue;
		w->cursor = first;
		run_segment(w, v, n - first, false);
	}
	w->cursor = 0;
}

static void reqresp_step(struct reqresp *w, long n)
{
	double tps[NR_WL_VARIANTS][MAX_PASSES], med[NR_WL_VARIANTS];
	long seg = cfg.segment < n ? cfg.segment : n;
	int p, k, v;

	grow(w, n);
	for (p = 0; p < cfg.passes; p++) {
		/* A different variant first in each pass: drift spreads over all. */
		for (k = 0; k < NR_WL_VARIANTS; k++) {
			v = (k + p) % NR_WL_VARIANTS;
			if (!have_variant[v])
				continue;
			if (cfg.cachesim)
				printf("cachesim-phase %ld %ld %s %d %ld\n", w->cachesim_phase++,
				       n, variant_name[v], p, seg);
			tps[v][p] = run_segment(w, v, seg, cfg.cachesim);
		}
	}
	if (cfg.cachesim)
		return;
	for (v = 0; v < NR_WL_VARIANTS; v++)
		med[v] = have_variant[v] ? median(tps[v], cfg.passes) : 0;
	for (v = 0; v < NR_WL_VARIANTS; v++) {
		if (!have_variant[v])
			continue;
		printf("reqresp %ld %s %.0f %.3f\n", n, variant_name[v], med[v],
		       med[v] / med[WL_NONE]);
	}
	fflush(stdout);
}

/* A transaction is one segment each way, on either side of the connection. */
static void expect_rec(const struct conn_rec *r, __u64 tx, const char *what, long i)
{
	if (r->segs_out == tx && r->bytes_out == tx * MSG_BYTES &&
	    r->segs_in == tx && r->bytes_in == tx * MSG_BYTES)
		return;
	if (record_errors++ < 5)
		printf("# check: connection %ld %s: segments out %llu in %llu, bytes out %llu "
		       "in %llu; transactions %llu\n", i, what,
		       (unsigned long long)r->segs_out, (unsigned long long)r->segs_in,
		       (unsigned long long)r->bytes_out, (unsigned long long)r->bytes_in,
		       (unsigned long long)tx);
}

static __u64 cookie_of(int fd)
{
	__u64 cookie = 0;
	socklen_t len = sizeof(cookie);

	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len))
		die("SO_COOKIE: %s", strerror(errno));
	return cookie;
}

/*
 * Every record against the transactions made under its variant: each
 * socket sent and received one 64-byte segment per transaction.
 */
static void reqresp_check(struct reqresp *w)
{
	int maps[NR_WL_VARIANTS] = {
		[WL_INLINE] = bpf_map__fd(skel->maps.inline_map),
		[WL_DYNAMIC] = bpf_map__fd(skel->maps.dyn_map),
		[WL_HASH] = bpf_map__fd(skel->maps.cookie_map),
	};
	struct conn_rec r, raw = {};
	__u64 raw_tx = 0, key;
	long i, checked = 0;
	int v, side;

	for (i = 0; i < w->nr; i++)
		raw_tx += w->tx[WL_RAW][i];
	raw.segs_out = raw.segs_in = 2 * raw_tx;
	raw.bytes_out = raw.bytes_in = 2 * raw_tx * MSG_BYTES;
	if (memcmp(&raw, &skel->bss->raw_total, sizeof(raw)) && record_errors++ < 5)
		printf("# check: raw record %llu segments out, %llu expected\n",
		       (unsigned long long)skel->bss->raw_total.segs_out,
		       (unsigned long long)raw.segs_out);
	for (v = WL_INLINE; v <= WL_HASH; v++) {
		if (!have_variant[v])
			continue;
		for (i = 0; i < w->nr; i++) {
			for (side = 0; side < 2; side++) {
				int fd = side ? w->conns[i].server : w->conns[i].client;
				void *k = &fd;

				if (v == WL_HASH) {
					key = cookie_of(fd);
					k = &key;
				}
				checked++;
				if (bpf_map_lookup_elem(maps[v], k, &r)) {
					if (record_errors++ < 5)
						printf("# check: no %s record for connection %ld: %s\n",
						       variant_name[v], i, strerror(errno));
					continue;
				}
				expect_rec(&r, w->tx[v][i], side ? "server" : "client", i);
			}
		}
	}
	if (skel->bss->no_record && record_errors++ < 5)
		printf("# check: %llu segments found no record\n",
		       (unsigned long long)skel->bss->no_record);
	printf("check: reqresp %ld records, %ld wrong\n", checked + 1, record_errors);
}

static void reqresp(void)
{
	long max = cfg.steps[cfg.nr_steps - 1];
	struct reqresp w = { 0 };
	int s, v;

	w.conns = calloc(max, sizeof(*w.conns));
	if (!w.conns)
		die("out of memory");
	for (v = 0; v < NR_WL_VARIANTS; v++) {
		w.tx[v] = calloc(max, sizeof(unsigned int));
		if (!w.tx[v])
			die("out of memory");
	}
	printf("# reqresp N variant transactions/s ratio-to-none (median of %d passes "
	       "of %ld transactions)\n", cfg.passes, cfg.segment);
	for (s = 0; s < cfg.nr_steps; s++)
		reqresp_step(&w, cfg.steps[s]);
	if (cfg.check)
		reqresp_check(&w);
	for (long i = 0; i < w.nr; i++)
		conn_close(&w.conns[i]);
	free(w.conns);
	for (v = 0; v < NR_WL_VARIANTS; v++)
		free(w.tx[v]);
}

/* ---- main ---- */

static void parse_steps(const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	long prev = 0, n;

	cfg.nr_steps = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;

		n = strtol(tok, &end, 10);
		if (*end || n <= prev || n > 200000 || cfg.nr_steps == MAX_STEPS)
			die("-n: growing counts up to 200000, at most %d of them", MAX_STEPS);
		cfg.steps[cfg.nr_steps++] = prev = n;
	}
	free(copy);
	if (!cfg.nr_steps)
		die("-n: no count");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "conns", required_argument, NULL, 'n' },
		{ "passes", required_argument, NULL, 'p' },
		{ "segment", required_argument, NULL, 's' },
		{ "churn-seconds", required_argument, NULL, 'c' },
		{ "only", required_argument, NULL, 'o' },
		{ "cachesim", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	char *end;
	int o;

	parse_steps("1000,3000,10000,30000,100000");
	while ((o = getopt_long(argc, argv, "n:p:h", opts, NULL)) != -1) {
		switch (o) {
		case 'n':
			parse_steps(optarg);
			break;
		case 'p':
			cfg.passes = strtol(optarg, &end, 10);
			if (*end || cfg.passes < 1 || cfg.passes > MAX_PASSES)
				die("--passes: 1 to %d", MAX_PASSES);
			break;
		case 's':
			cfg.segment = strtol(optarg, &end, 10);
			if (*end || cfg.segment < 1)
				die("--segment: a positive count");
			break;
		case 'c':
			cfg.churn_seconds = strtol(optarg, &end, 10);
			if (*end || cfg.churn_seconds < 1 || cfg.churn_seconds > 3600)
				die("--churn-seconds: 1 to 3600");
			break;
		case 'o':
			cfg.reqresp = !strcmp(optarg, "reqresp");
			cfg.churn = !strcmp(optarg, "churn");
			cfg.hot = !strcmp(optarg, "hot");
			if (!cfg.reqresp && !cfg.churn && !cfg.hot)
				die("--only: reqresp, churn or hot");
			break;
		case 'C':
			cfg.cachesim = true;
			cfg.churn = false;
			break;
		default:
			usage_exit(usage, o);
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	tail_bytes = cg_read_long(TAIL_SYSCTL);
	printf("# kernel: %s\n", tail_bytes < 0 ? "without the series" : "with the series");
	if (tail_bytes >= 0)
		printf("# tail: %ld bytes\n", tail_bytes);
	raise_nofile(2 * cfg.steps[cfg.nr_steps - 1] + 256);
	load(cfg.steps[cfg.nr_steps - 1], cfg.churn);
	if (pin_to_cpu(0))
		die("sched_setaffinity: %s", strerror(errno));
	listener_open();
	if (cfg.reqresp)
		reqresp();
	if (cfg.churn)
		churn();
	if (cfg.hot)
		hot();
	close(listen_fd);
	sk_workload__destroy(skel);
	cg_enter(CG_ROOT);
	rmdir(CG_WL);
	if (record_errors)
		printf("sk-workload: %ld records do not match the transactions made\n",
		       record_errors);
	return record_errors ? 1 : 0;
}
