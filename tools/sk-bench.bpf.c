// SPDX-License-Identifier: GPL-2.0
/*
 * sk-bench, the BPF side. The iterators visit every UDP or TCP socket and
 * read its value from the inline sk storage map, the dynamic one (user
 * space creates both, the second once filler maps took the tail) or the
 * hash map keyed by socket cookie, or read sk_mark, a field the
 * socket has anyway, or a field on the socket's last line before the tail
 * (BENCH_RAW_END: the tail's page, nearly always); BENCH_VISIT reads
 * nothing and is subtracted. The
 * verifier emits the inline map's lookup into the program; BENCH_CALL
 * reads the same map through the helper call. Each
 * lookup is also timed on its own, between two bpf_ktime_get_ns(); the few
 * windows that something interrupted are left out.
 *
 * With hot_iters set, the first socket that holds a value after hot_skip
 * others is read hot_iters times in a bpf_loop() that is timed here; the
 * other sockets are skipped. hot_full runs the same loop from a
 * cgroup/getsockopt program, whose socket the verifier knows not to be
 * NULL: its inline lookup has no NULL test, and keeps the state test.
 *
 * fentry/fexit on bpf_sk_storage_map_free() time the deferred free of the
 * map named free_name: its id is released before that work is queued.
 * count_values counts what an sk storage map's own iterator visits.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "../kselftest/sk_storage_maps.bpf.h"
#include "sk-bench.h"

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(inline_map, __u64);
/* Asks too: user space creates it dynamic, with the tail full. */
SK_STORAGE_MAP(dyn_map, __u64);

/* Sized by user space before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u64);
} cookie_map SEC(".maps");

/* Set by user space before each pass. */
int mode;
/* Never set: it only makes the verifier see two maps in BENCH_CALL. */
int call_dyn_map;
__u32 hot_iters, hot_skip;
/* A window this long was interrupted (or the vCPU stopped): dropped. */
__u64 window_max_ns = 50000;

/* Results of the last pass. */
__u64 visited, found, sum, window_ns, windows, hot_ns;
int hot_done;

/* Deferred map free. */
__u64 free_name[2];
__u64 free_map, free_enter_ns, free_exit_ns;
__u32 free_count;

struct hot_ctx {
	struct sock *sk;
	const int *end;		/* BENCH_RAW_END's field of sk */
	struct bpf_sock *full;	/* hot_full's */
	__u64 sum;
	__u64 found;
};

/*
 * Read @sk's value as mode says into *@acc; 1 if there is one. @mark and
 * @end are what the raw modes read; programs without the socket cookie
 * or the end field pass @with_hash or @with_end 0. A distinct no-op after
 * each call keeps the compiler from
 * sinking the calls into one that two maps reach, which the verifier
 * would leave a call.
 */
#define LOOKUP(sk, mark, end, with_hash, with_end, acc)			\
({									\
	__u64 *__v = NULL, __cookie;					\
	void *__map;							\
	int __found = 0;						\
									\
	switch (mode) {							\
	case BENCH_RAW:							\
		*(acc) += (mark);					\
		__found = 1;						\
		break;							\
	case BENCH_RAW_END:						\
		if (!(with_end))					\
			break;						\
		*(acc) += (end);					\
		__found = 1;						\
		break;							\
	case BENCH_INLINE:						\
		__v = bpf_sk_storage_get(&inline_map, sk, 0, 0);	\
		asm volatile("r0 = r0");				\
		break;							\
	case BENCH_DYNAMIC:						\
		__v = bpf_sk_storage_get(&dyn_map, sk, 0, 0);		\
		asm volatile("if r0 == 0 goto +0");			\
		break;							\
	case BENCH_HASH:						\
		if (!(with_hash))					\
			break;						\
		__cookie = bpf_get_socket_cookie(sk);			\
		__v = bpf_map_lookup_elem(&cookie_map, &__cookie);	\
		break;							\
	case BENCH_CALL:						\
		/* Two maps reach this call: the verifier keeps it. */	\
		__map = call_dyn_map ? (void *)&dyn_map : (void *)&inline_map; \
		asm volatile("" : "+r"(__map));				\
		__v = bpf_sk_storage_get(__map, sk, 0, 0);		\
		break;							\
	}								\
	if (__v) {							\
		*(acc) += *__v;						\
		__found = 1;						\
	}								\
	__found;							\
})

static __always_inline int lookup(struct sock *sk, const int *end, __u64 *acc)
{
	return LOOKUP(sk, sk->sk_mark, *end, 1, 1, acc);
}

static int hot_one(__u32 i, void *data)
{
	struct hot_ctx *c = data;

	c->found += lookup(c->sk, c->end, &c->sum);
	return 0;
}

/* The timed loop: @c->sk or @c->full read hot_iters times by @callback. */
static __always_inline void hot_timed(void *callback, struct hot_ctx *c)
{
	__u64 t0 = bpf_ktime_get_ns();

	bpf_loop(hot_iters, callback, c, 0);
	hot_ns = bpf_ktime_get_ns() - t0;
	found = c->found;
	sum += c->sum;
	hot_done = 1;
}

static __always_inline int visit(struct sock *sk, const int *end)
{
	struct hot_ctx c = { .sk = sk, .end = end };
	__u64 t0;

	/* Cold: the lookup alone is timed too, away from the walk's noise. */
	if (!hot_iters) {
		t0 = bpf_ktime_get_ns();
		found += lookup(sk, end, &c.sum);
		t0 = bpf_ktime_get_ns() - t0;
		if (t0 < window_max_ns) {
			window_ns += t0;
			windows++;
		}
		sum += c.sum;
		visited++;
		return 0;
	}
	if (hot_done || !bpf_sk_storage_get(&dyn_map, sk, 0, 0))
		return 0;
	if (hot_skip) {
		hot_skip--;
		return 0;
	}
	/* Once untimed, so that the timed loop starts warm. */
	lookup(sk, end, &c.sum);
	hot_timed(hot_one, &c);
	visited = 1;
	return 0;
}

SEC("iter/udp")
int walk_udp(struct bpf_iter__udp *ctx)
{
	struct udp_sock *udp_sk = ctx->udp_sk;

	if (!udp_sk)
		return 0;
	return visit((struct sock *)udp_sk, &udp_sk->forward_threshold);
}

SEC("iter/tcp")
int walk_tcp(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp;

	if (!skc)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;
	return visit((struct sock *)tp, (const int *)&tp->mtu_info);
}

/* lookup() on a PTR_TO_SOCKET; sockopt programs have no socket cookie. */
static __always_inline int lookup_full(struct hot_ctx *c)
{
	struct bpf_sock *sk = c->full;

	return LOOKUP(sk, sk->mark, 0, 0, 0, &c->sum);
}

static int full_one(__u32 i, void *data)
{
	struct hot_ctx *c = data;

	c->found += lookup_full(c);
	return 0;
}

SEC("cgroup/getsockopt")
int hot_full(struct bpf_sockopt *ctx)
{
	struct hot_ctx c = { .full = ctx->sk };

	if (ctx->level != SOL_SK_BENCH)
		return 1;
	ctx->retval = 0;
	lookup_full(&c);
	hot_timed(full_one, &c);
	return 1;
}

/* Values an sk storage map iterator visited in the last read. */
__u64 map_values;

SEC("iter/bpf_sk_storage_map")
int count_values(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	if (ctx->sk && ctx->value)
		map_values++;
	return 0;
}

/*
 * Time spent in the registry's functions, each call from entry to exit:
 * user space picks the functions (SK_BENCH_TIMED of them) before loading.
 * Their sections with interrupts off lie within.
 */
__u64 timed_max_ns[SK_BENCH_TIMED], timed_total_ns[SK_BENCH_TIMED];
__u64 timed_calls[SK_BENCH_TIMED];

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SK_BENCH_TIMED);
	__type(key, __u32);
	__type(value, __u64);
} timed_start SEC(".maps");

static __always_inline void timed_enter(__u32 i)
{
	__u32 key = i;
	__u64 *t = bpf_map_lookup_elem(&timed_start, &key);

	if (t)
		*t = bpf_ktime_get_ns();
}

/* @i is a constant: the arrays are indexed without a bounds check. */
static __always_inline void timed_exit(__u32 i)
{
	__u32 key = i;
	__u64 *t = bpf_map_lookup_elem(&timed_start, &key), d;

	if (!t || !*t)
		return;
	d = bpf_ktime_get_ns() - *t;
	*t = 0;
	if (d > timed_max_ns[i])
		timed_max_ns[i] = d;
	__sync_fetch_and_add(&timed_total_ns[i], d);
	__sync_fetch_and_add(&timed_calls[i], 1);
}

#define TIMED(i)					\
SEC("fentry")						\
int BPF_PROG(timed##i##_enter)				\
{							\
	timed_enter(i);					\
	return 0;					\
}							\
							\
SEC("fexit")						\
int BPF_PROG(timed##i##_exit)				\
{							\
	timed_exit(i);					\
	return 0;					\
}

TIMED(0)
TIMED(1)
TIMED(2)

SEC("fentry/bpf_sk_storage_map_free")
int BPF_PROG(free_enter, struct bpf_map *map)
{
	__u64 name[2] = {};

	bpf_probe_read_kernel(name, sizeof(name), map->name);
	if (name[0] == free_name[0] && name[1] == free_name[1]) {
		free_map = (__u64)map;
		free_enter_ns = bpf_ktime_get_ns();
	}
	return 0;
}

/* The map is freed memory by now: compare its address only. */
SEC("fexit/bpf_sk_storage_map_free")
int BPF_PROG(free_exit, struct bpf_map *map)
{
	if (free_map && (__u64)map == free_map) {
		free_exit_ns = bpf_ktime_get_ns();
		free_map = 0;
		__sync_fetch_and_add(&free_count, 1);
	}
	return 0;
}
