// SPDX-License-Identifier: GPL-2.0
/*
 * sk-workload's hot connection under churn: one long-lived connection
 * served on CPU 0, its record updated by the program on every segment,
 * while a thread on CPU 1 replaces the oldest of CHURN_LIVE connections by
 * a new one, the program creating a value in each new socket, so that
 * sockets holding values come and go beside the busy one, a few of them
 * in the same registry bucket at any time. Per variant, passes of two phases,
 * without the churn and with it: transactions/s on the hot connection and
 * the churn's connections/s, or with --cachesim marked phases (labelled
 * by hot-phase lines) for the cache simulator run with coherence=on, and
 * where the hot sockets' records are, so that misses on their lines can
 * be told from the others.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>

#include "sk-workload-user.h"
#include "sk-workload.skel.h"

#define HOT_RECORDS	2	/* the client's and the server's */
/* 1024 sockets: four per bucket of the registry's 256, on average. */
#define CHURN_LIVE	512

static int churn_state;		/* 0 idle, 1 churning, -1 exit */
static long churn_conns;

static void *churner(void *arg)
{
	static struct conn live[CHURN_LIVE];
	int state, k = 0;

	if (pin_to_cpu(1))
		die("churn thread: no CPU 1: %s", strerror(errno));
	for (k = 0; k < CHURN_LIVE; k++)
		live[k].client = -1;
	for (k = 0; (state = __atomic_load_n(&churn_state, __ATOMIC_ACQUIRE)) >= 0;
	     k = (k + 1) % CHURN_LIVE) {
		if (!state) {
			usleep(1000);
			continue;
		}
		if (live[k].client >= 0)
			conn_close(&live[k]);
		conn_open(&live[k], -1);
		transaction(&live[k]);
		__atomic_add_fetch(&churn_conns, 1, __ATOMIC_RELEASE);
	}
	for (k = 0; k < CHURN_LIVE; k++)
		if (live[k].client >= 0)
			conn_close(&live[k]);
	return NULL;
}

static void churn_set(int state)
{
	long start = __atomic_load_n(&churn_conns, __ATOMIC_ACQUIRE);

	__atomic_store_n(&churn_state, state, __ATOMIC_RELEASE);
	/* Churning for real before the phase starts. */
	while (state == 1 && __atomic_load_n(&churn_conns, __ATOMIC_ACQUIRE) < start + 2)
		usleep(1000);
}

/* The window of live connections filled under the variant attached. */
static void churn_fill(void)
{
	long start = __atomic_load_n(&churn_conns, __ATOMIC_ACQUIRE);

	__atomic_store_n(&churn_state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&churn_conns, __ATOMIC_ACQUIRE) < start + CHURN_LIVE)
		usleep(10000);
	__atomic_store_n(&churn_state, 0, __ATOMIC_RELEASE);
}

/* The addresses of @v's records in the hot connection's two sockets. */
static int hot_records(const struct conn *c, int v, unsigned long long *addr)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	unsigned long long in, dyn;
	struct bpf_link *link;
	char line[128];
	unsigned int port;
	int fd, n = 0;
	FILE *f;

	if (getsockname(c->client, (void *)&a, &len))
		die("getsockname: %s", strerror(errno));
	skel->bss->hot_port = ntohs(a.sin_port);
	link = bpf_program__attach_iter(skel->progs.hot_records, NULL);
	if (!link)
		die("attach iter/tcp: %s", strerror(errno));
	fd = bpf_iter_create(bpf_link__fd(link));
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f)
		die("iter/tcp: %s", strerror(errno));
	while (n < HOT_RECORDS && fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %llx %llx", &port, &in, &dyn) == 3)
			addr[n++] = v == WL_INLINE ? in : dyn;
	fclose(f);
	bpf_link__destroy(link);
	return n;
}

void hot(void)
{
	static const int order[] = { WL_INLINE, WL_DYNAMIC };
	unsigned long long addr[HOT_RECORDS];
	long phase = 0, conns, tx = cfg.segment;
	pthread_t thr;
	struct conn c;
	__u64 t0, t;
	int p, m, i, v, n;

	if (pthread_create(&thr, NULL, churner, NULL))
		die("pthread_create");
	printf("# hot: one connection on CPU 0, %ld transactions a phase, %d passes; "
	       "churn on CPU 1 in the churn phases, %d connections alive\n", tx, cfg.passes,
	       CHURN_LIVE);
	for (i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++) {
		v = order[i];
		if (!have_variant[v])
			continue;
		variant_attach(v);
		churn_fill();
		conn_open(&c, 0);
		transaction(&c);
		n = hot_records(&c, v, addr);
		if (n != HOT_RECORDS) {
			printf("# check: hot %s: %d records found, not %d\n", variant_name[v],
			       n, HOT_RECORDS);
			record_errors++;
		}
		for (p = 0; p < cfg.passes; p++) {
			for (m = 0; m < 2; m++) {
				churn_set(m);
				conns = __atomic_load_n(&churn_conns, __ATOMIC_ACQUIRE);
				if (cfg.cachesim)
					cachesim_begin();
				t0 = now_ns();
				for (long k = 0; k < tx; k++)
					transaction(&c);
				t = now_ns() - t0;
				if (cfg.cachesim)
					cachesim_end();
				conns = __atomic_load_n(&churn_conns, __ATOMIC_ACQUIRE) - conns;
				churn_set(0);
				printf("hot-phase %ld %s %s %ld tx/s %.0f churn_conns %ld conns/s %.0f "
				       "records 0x%llx 0x%llx\n", phase++, variant_name[v],
				       m ? "churn" : "quiet", tx, tx / (t / 1e9), conns,
				       conns / (t / 1e9), addr[0], n > 1 ? addr[1] : 0ULL);
			}
		}
		conn_close(&c);
		variant_detach();
	}
	__atomic_store_n(&churn_state, -1, __ATOMIC_RELEASE);
	pthread_join(thr, NULL);
}
