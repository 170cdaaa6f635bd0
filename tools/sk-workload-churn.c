// SPDX-License-Identifier: GPL-2.0
/*
 * sk-workload's churn: connect, exchange, close, as fast as one thread
 * can, with the program creating a value in each new socket (or none);
 * connections/s, the RCU callbacks queued, the sockets awaiting their RCU
 * free (counted from call_rcu() to the callback by sk-workload.bpf.c) and
 * how long, and the grace period under that load.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <bpf/btf.h>

#include "sk-workload-user.h"
#include "sk-workload.skel.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

static bool churn_running;

static bool churning(void)
{
	return __atomic_load_n(&churn_running, __ATOMIC_RELAXED);
}

#define CHURN_ROUNDS	6
#define MAX_GP_SAMPLES	4096

/* One variant's churn, summed over its rounds. */
struct churn_sample {
	double pending_sum, pending_max;
	long samples;
	double gp_ms[MAX_GP_SAMPLES];
	int nr_gp;
	double rate[CHURN_ROUNDS];
	int rounds;
	long conns;
	double secs;
	__u64 queued, timed, wait_ns, wait_max_ns, call_rcu, kfree_rcu;
};

/* Every 10 ms: sockets queued for their RCU free and not freed yet. */
static void *pending_sampler(void *arg)
{
	struct churn_sample *s = arg;
	struct wl_rcu_stat *st = &skel->bss->rcu_stat[WL_CB_SOCK];
	double pending;

	pin_to_cpu(1);	/* off the workload's CPU where there is another */
	while (churning()) {
		pending = (double)st->queued - st->done;
		s->pending_sum += pending;
		if (pending > s->pending_max)
			s->pending_max = pending;
		s->samples++;
		usleep(10000);
	}
	return NULL;
}

/* Every 100 ms: how long synchronize_rcu() (membarrier) takes now. */
static void *gp_sampler(void *arg)
{
	struct churn_sample *s = arg;
	__u64 t0;

	pin_to_cpu(1);
	while (churning() && s->nr_gp < MAX_GP_SAMPLES) {
		t0 = now_ns();
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
			break;
		s->gp_ms[s->nr_gp++] = (now_ns() - t0) / 1e6;
		usleep(100000);
	}
	return NULL;
}

/* kmalloc's size class for @n bytes (SLUB, 8-byte minimum, 96 and 192). */
static long kmalloc_size(long n)
{
	long s = 8;

	if (n > 64 && n <= 96)
		return 96;
	if (n > 128 && n <= 192)
		return 192;
	while (s < n)
		s <<= 1;
	return s;
}

static long btf_size(struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);

	return id < 0 ? -1 : btf__resolve_size(btf, id);
}

static void watch_callbacks(void)
{
	static const char *const fn[NR_WL_CB] = {
		[WL_CB_SOCK] = "sk_prot_free_mem_rcu",
	};
	char line[256], name[128];
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "r");
	int i;

	if (!f)
		die("/proc/kallsyms: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %*s %127s", &addr, name) != 2)
			continue;
		for (i = 0; i < NR_WL_CB; i++)
			if (!strcmp(name, fn[i]))
				skel->bss->watch_fn[i] = addr;
	}
	fclose(f);
}

/* @seconds of churn under variant @v, added to @s. */
static void churn_round(int v, int seconds, struct churn_sample *s)
{
	struct wl_rcu_stat *st = &skel->bss->rcu_stat[WL_CB_SOCK], before;
	__u64 call0 = skel->bss->call_rcu_all, kfree0 = skel->bss->kfree_rcu_all;
	pthread_t pending_thr, gp_thr;
	__u64 t0, end, conns = 0;
	struct conn c;
	double secs;

	/* Sockets closed before (other variants', other rounds') freed first. */
	for (int i = 0; i < 1000 && st->queued != st->done; i++)
		usleep(10000);
	st->wait_max_ns = 0;
	before = *st;
	variant_attach(v);
	__atomic_store_n(&churn_running, true, __ATOMIC_RELAXED);
	if (pthread_create(&pending_thr, NULL, pending_sampler, s) ||
	    pthread_create(&gp_thr, NULL, gp_sampler, s))
		die("pthread_create");
	t0 = now_ns();
	end = t0 + seconds * 1000000000ULL;
	do {
		for (int k = 0; k < 64; k++, conns++) {
			conn_open(&c, -1);
			transaction(&c);
			conn_close(&c);
		}
	} while (now_ns() < end);
	secs = (now_ns() - t0) / 1e9;
	/* The last sockets' frees are queued once their timers let go. */
	for (int i = 0; i < 200 && v == WL_INLINE &&
	     st->queued - before.queued < 2 * conns; i++)
		usleep(10000);
	__atomic_store_n(&churn_running, false, __ATOMIC_RELAXED);
	pthread_join(pending_thr, NULL);
	pthread_join(gp_thr, NULL);
	variant_detach();

	s->rate[s->rounds++] = conns / secs;
	s->conns += conns;
	s->secs += secs;
	s->queued += st->queued - before.queued;
	s->timed += st->timed - before.timed;
	s->wait_ns += st->wait_ns - before.wait_ns;
	if (st->wait_max_ns > s->wait_max_ns)
		s->wait_max_ns = st->wait_max_ns;
	s->call_rcu += skel->bss->call_rcu_all - call0;
	s->kfree_rcu += skel->bss->kfree_rcu_all - kfree0;
}

static void churn_report(int v, struct churn_sample *s, long sock_bytes, long dyn_bytes)
{
	double rate = median(s->rate, s->rounds), gp = s->nr_gp ? median(s->gp_ms, s->nr_gp) : 0;
	double pending = s->samples ? s->pending_sum / s->samples : 0;
	double wait_ms = s->timed ? s->wait_ns / 1e6 / s->timed : 0;
	long bytes = v == WL_INLINE ? sock_bytes : v == WL_DYNAMIC ? dyn_bytes : 0;

	/*
	 * Two sockets per connection wait: for a grace period (the model), or
	 * for as long as their callbacks were measured to wait (Little's law).
	 */
	printf("churn %s conns/s %.0f call_rcu/s %.0f kfree_rcu/s %.0f gp_ms %.2f "
	       "sock_deferred/conn %.2f pending_mean %.1f pending_peak %.0f wait_ms %.2f "
	       "wait_max_ms %.2f held_kb %.1f model_kb %.1f little_kb %.1f seconds %.1f "
	       "conns %ld\n",
	       variant_name[v], rate, s->call_rcu / s->secs, s->kfree_rcu / s->secs, gp,
	       s->conns ? (double)s->queued / s->conns : 0, pending, s->pending_max, wait_ms,
	       s->wait_max_ns / 1e6, pending * sock_bytes / 1024,
	       rate * 2 * (gp / 1e3) * bytes / 1024, rate * 2 * (wait_ms / 1e3) * bytes / 1024,
	       s->secs, s->conns);
	/* Both sockets of each connection held an inline value, and only those. */
	if (cfg.check && s->queued != (v == WL_INLINE ? 2 * (__u64)s->conns : 0)) {
		printf("# check: churn %s: %llu sockets deferred for %ld connections\n",
		       variant_name[v], (unsigned long long)s->queued, s->conns);
		record_errors++;
	}
}

void churn(void)
{
	static const int order[] = { WL_NONE, WL_INLINE, WL_DYNAMIC };
	long sock_bytes = slab_object_size("TCP"), dyn_bytes = 0;
	struct btf *btf = btf__load_vmlinux_btf();
	int rounds = cfg.churn_seconds < CHURN_ROUNDS ? cfg.churn_seconds : CHURN_ROUNDS;
	int secs = cfg.churn_seconds / rounds;
	struct churn_sample *s = calloc(NR_WL_VARIANTS, sizeof(*s));
	long selem, storage, errors = record_errors;
	struct bpf_program *p;
	unsigned int i;
	int r;

	if (!btf || !s)
		die("vmlinux BTF: %s", strerror(errno));
	selem = btf_size(btf, "bpf_local_storage_elem");
	storage = btf_size(btf, "bpf_local_storage");
	btf__free(btf);
	/* A value of struct conn_rec and the storage that holds it. */
	if (selem > 0 && storage > 0)
		dyn_bytes = kmalloc_size(selem + sizeof(struct conn_rec)) + kmalloc_size(storage);
	watch_callbacks();
	bpf_object__for_each_program(p, skel->obj)
		if (bpf_program__autoload(p) && churn_prog(p) && !bpf_program__attach(p))
			die("attach %s: %s", bpf_program__name(p), strerror(errno));
	printf("# churn: %d s per variant in %d rounds, variants in turn; a TCP socket is %ld "
	       "bytes, a dynamic value with its storage %ld; grace period: median "
	       "synchronize_rcu() under the load\n", cfg.churn_seconds, rounds, sock_bytes,
	       dyn_bytes);
	for (r = 0; r < rounds; r++)
		for (i = 0; i < ARRAY_LEN(order); i++) {
			int v = order[(i + r) % ARRAY_LEN(order)];

			if (have_variant[v])
				churn_round(v, secs, &s[v]);
		}
	for (i = 0; i < ARRAY_LEN(order); i++)
		if (have_variant[order[i]])
			churn_report(order[i], &s[order[i]], sock_bytes, dyn_bytes);
	free(s);
	printf("check: churn %s\n", record_errors > errors ? "wrong" : "ok");
}
