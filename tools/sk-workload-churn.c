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

static bool churn_running;

static bool churning(void)
{
	return __atomic_load_n(&churn_running, __ATOMIC_RELAXED);
}

struct churn_sample {
	double pending_sum, pending_max;
	long samples;
	double gp_ms[4096];
	int nr_gp;
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
	while (churning() && s->nr_gp < 4096) {
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

static void churn_one(int v, long sock_bytes, long dyn_bytes)
{
	struct wl_rcu_stat before[NR_WL_CB], *st = skel->bss->rcu_stat;
	__u64 call0 = skel->bss->call_rcu_all, kfree0 = skel->bss->kfree_rcu_all;
	struct churn_sample *s = calloc(1, sizeof(*s));
	double secs, rate, gp, mean_pending, wait_ms = 0, model, calls;
	pthread_t pending_thr, gp_thr;
	long conns = 0, queued;
	struct conn c;
	__u64 t0, end;

	if (!s)
		die("out of memory");
	/* Sockets closed before (the request/response connections) freed first. */
	for (int i = 0; i < 1000 && st[WL_CB_SOCK].queued != st[WL_CB_SOCK].done; i++)
		usleep(10000);
	st[WL_CB_SOCK].wait_max_ns = 0;
	memcpy(before, st, sizeof(before));
	variant_attach(v);
	__atomic_store_n(&churn_running, true, __ATOMIC_RELAXED);
	if (pthread_create(&pending_thr, NULL, pending_sampler, s) ||
	    pthread_create(&gp_thr, NULL, gp_sampler, s))
		die("pthread_create");
	t0 = now_ns();
	end = t0 + cfg.churn_seconds * 1000000000ULL;
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
	     st[WL_CB_SOCK].queued - before[WL_CB_SOCK].queued < 2 * (__u64)conns; i++)
		usleep(10000);
	__atomic_store_n(&churn_running, false, __ATOMIC_RELAXED);
	pthread_join(pending_thr, NULL);
	pthread_join(gp_thr, NULL);
	variant_detach();

	rate = conns / secs;
	calls = (skel->bss->call_rcu_all - call0) / secs;
	gp = s->nr_gp ? median(s->gp_ms, s->nr_gp) : 0;
	mean_pending = s->samples ? s->pending_sum / s->samples : 0;
	queued = st[WL_CB_SOCK].queued - before[WL_CB_SOCK].queued;
	if (st[WL_CB_SOCK].timed > before[WL_CB_SOCK].timed)
		wait_ms = (st[WL_CB_SOCK].wait_ns - before[WL_CB_SOCK].wait_ns) / 1e6 /
			  (st[WL_CB_SOCK].timed - before[WL_CB_SOCK].timed);
	/* Two sockets per connection wait one grace period each. */
	model = rate * 2 * (gp / 1e3) * (v == WL_INLINE ? sock_bytes :
					  v == WL_DYNAMIC ? dyn_bytes : 0);
	printf("churn %s conns/s %.0f call_rcu/s %.0f kfree_rcu/s %.0f gp_ms %.2f "
	       "sock_deferred/conn %.2f pending_mean %.1f pending_peak %.0f wait_ms %.2f "
	       "wait_max_ms %.2f held_kb %.1f model_kb %.1f seconds %.1f conns %ld\n",
	       variant_name[v], rate, calls, (skel->bss->kfree_rcu_all - kfree0) / secs, gp,
	       conns ? (double)queued / conns : 0, mean_pending, s->pending_max, wait_ms,
	       st[WL_CB_SOCK].wait_max_ns / 1e6, mean_pending * sock_bytes / 1024,
	       model / 1024, secs, conns);
	/* Both sockets of each connection held an inline value, and only those. */
	if (cfg.check && queued != (v == WL_INLINE ? 2 * conns : 0)) {
		printf("# check: churn %s: %ld sockets deferred for %ld connections\n",
		       variant_name[v], queued, conns);
		record_errors++;
	}
	fflush(stdout);
	free(s);
}

void churn(void)
{
	static const int order[] = { WL_NONE, WL_INLINE, WL_DYNAMIC };
	long sock_bytes = slab_object_size("TCP"), dyn_bytes = 0;
	struct btf *btf = btf__load_vmlinux_btf();
	long selem, storage, errors = record_errors;
	struct bpf_program *p;
	unsigned int i;

	if (!btf)
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
	printf("# churn: %d s per variant; a TCP socket is %ld bytes, a dynamic value with "
	       "its storage %ld; grace period: median synchronize_rcu() under the load\n",
	       cfg.churn_seconds, sock_bytes, dyn_bytes);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (have_variant[order[i]])
			churn_one(order[i], sock_bytes, dyn_bytes);
	printf("check: churn %s\n", record_errors > errors ? "wrong" : "ok");
}
