/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sk-bench: what the guest tool's files (sk-bench.c, sk-bench-*.c) share.
 * The BPF side sees sk-bench.h alone.
 */
#ifndef SK_BENCH_USER_H
#define SK_BENCH_USER_H

#include <bpf/libbpf.h>

#define TOOL_NAME "sk-bench"
#include "tool_util.h"
#include "../kselftest/sk_memcg.h"
#include "sk-bench.h"
#include "sk-bench.skel.h"

#define MAX_STEPS		8
#define MAX_PASSES		31
#define NR_SIZES		3	/* value sizes of the memory section */
#define CG_BENCH		CG_ROOT "/sk-bench"

struct bench_cfg {
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
};

extern struct bench_cfg cfg;
extern long tail_bytes;
extern bool unpatched;		/* no sysctl: a kernel without the series */
extern bool have_memcg;

/* sk-bench.c */
void progress(const char *fmt, ...);
__u32 rnd(void);
long *permutation(long n);
void min_median(const double *v, int n, double *min, double *med);
void expect_storage(int map, const char *what, const char *want);

/* sk-bench-sockets.c */
struct sockset {
	int *udp, *tcp, *filler;
	long n_udp, n_tcp, n_filler;
	int listener;
};

int listener(void);
void tcp_pair(int lfd, long slot, int *client, int *server);
void close_now(int fd);
void sockets_open(struct sockset *s, long n_udp, long n_tcp);
void fillers_close(struct sockset *s);
void sockets_close(struct sockset *s);
void values_fill(struct sk_bench *skel, struct sockset *s);

/* sk-bench-lookup.c */
struct walk_result {
	double ns[NR_BENCH_MODES][MAX_PASSES], pass[NR_BENCH_MODES][MAX_PASSES];
	long dropped, timed;
	bool full;		/* full_walk(): no hash mode, no pass times */
	double min[NR_BENCH_MODES], med[NR_BENCH_MODES];
	double pass_min[NR_BENCH_MODES], pass_med[NR_BENCH_MODES];
};

void cachesim_pin(void);
void cachesim_kallsyms(void);
double iter_pass(struct bpf_link *link);
void walk(struct sk_bench *skel, struct bpf_link *link, const char *proto,
	  long expect, bool hot, struct walk_result *r);
void full_walk(struct sk_bench *skel, const int *fds, long nr, const char *proto,
	       struct walk_result *r);
double dropped_pct(const struct walk_result *r);
void ratio(char *buf, size_t len, double a, double b);
void print_walk(const char *walk_name, const char *proto, bool hot,
		const struct walk_result *r);

/* sk-bench-memory.c */
struct free_result {
	double id_ms, work_ms, done_ms, back_ms;
};

struct mem_result {
	unsigned int size, slot;
	double objects, pages, memcg, update_ns;
	struct free_result fr;
};

long slab_attr(const char *cache, const char *attr);
void memory_section(struct sk_bench *skel, struct sockset *s,
		    struct mem_result r[NR_SIZES][2]);
void print_memory(const struct sockset *s, struct mem_result r[NR_SIZES][2]);

/* sk-bench-create.c */
struct sk_bench *bench_open(bool timers);
void create_section(void);
void registered_section(void);

#endif /* SK_BENCH_USER_H */
