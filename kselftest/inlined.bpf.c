// SPDX-License-Identifier: GPL-2.0
/*
 * One bpf_sk_storage_get() per program, in the shapes the verifier inlines
 * (a map with a slot, flags 0, F_CREATE or unknown, from a tracing program
 * too) and those it leaves as a call (a dynamic map, an inner map, two maps
 * at one call). Each runs on getsockopt(fd, SOL_INLINED_TEST, its own
 * optname) and reports what it found; a counter on the helper shows when
 * the call was made. A cgroup_skb program looks up a socket that
 * bpf_skc_lookup_tcp() finds, a timewait socket among them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "inlined.h"
#include "sk_storage_maps.bpf.h"
#include "sk_net.bpf.h"

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(inl, struct inlined_val);
SK_STORAGE_MAP(inl2, struct inlined_val);
/* BPF_F_CLONE keeps a map on the dynamic storage in any boot. */
SK_STORAGE_MAP_FLAGS(dyn, struct inlined_val, BPF_F_CLONE);

struct inner {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(map_extra, 1);	/* a slot in the inline tail */
	__type(key, int);
	__type(value, struct inlined_val);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, int);
	__array(values, struct inner);
} outer SEC(".maps");

/* Read from a map at run time: unknown to the verifier. */
__u64 flags_in;
__u64 pick_second;
__u64 write_value;

int found;
__u64 seen;
__u64 helper_calls;

SEC("fentry/bpf_sk_storage_get")
int BPF_PROG(count_helper_calls)
{
	__sync_fetch_and_add(&helper_calls, 1);
	return 0;
}

SEC("fentry/bpf_sk_storage_get_tracing")
int BPF_PROG(count_tracing_helper_calls)
{
	__sync_fetch_and_add(&helper_calls, 1);
	return 0;
}

static __always_inline int report(struct bpf_sockopt *ctx, struct inlined_val *v)
{
	found = !!v;
	if (v) {
		seen = v->a;
		if (write_value)
			v->a = write_value;
	}
	ctx->retval = 0;
	return 1;
}

#define MINE(ctx, prog)	((ctx)->level == SOL_INLINED_TEST && (ctx)->optname == (prog))

/* Program @name: on optname @prog, one get from @map with @flags. */
#define GET_PROG(name, prog, map, flags)				\
SEC("cgroup/getsockopt")						\
int name(struct bpf_sockopt *ctx)					\
{									\
	if (!MINE(ctx, prog))						\
		return 1;						\
	return report(ctx, bpf_sk_storage_get(map, ctx->sk, 0, flags));	\
}

GET_PROG(get_flags_zero, PROG_ZERO, &inl, 0)
GET_PROG(get_flags_create, PROG_CREATE, &inl, BPF_SK_STORAGE_GET_F_CREATE)
GET_PROG(get_flags_unknown, PROG_UNKNOWN, &inl, flags_in)
GET_PROG(get_dynamic, PROG_DYNAMIC, &dyn, 0)

SEC("cgroup/getsockopt")
int get_inner(struct bpf_sockopt *ctx)
{
	int zero = 0;
	void *map;

	if (!MINE(ctx, PROG_INNER))
		return 1;
	map = bpf_map_lookup_elem(&outer, &zero);
	if (!map)
		return 1;
	return report(ctx, bpf_sk_storage_get(map, ctx->sk, 0, 0));
}

SEC("cgroup/getsockopt")
int get_two_maps(struct bpf_sockopt *ctx)
{
	void *map = &inl;

	if (!MINE(ctx, PROG_TWO_MAPS))
		return 1;
	if (pick_second)
		map = &inl2;
	/* One call for both maps, as the source says. */
	asm volatile("" : "+r"(map));
	return report(ctx, bpf_sk_storage_get(map, ctx->sk, 0, 0));
}

/* The 127.0.0.1 connection whose socket get_sock_common looks up. */
__u16 skc_sport, skc_dport;	/* network order, as a packet to it has them */
__u32 skc_state;
int skc_found;

/*
 * A socket bpf_skc_lookup_tcp() finds is not NULL once tested, but any
 * kind of socket: a timewait one among them. Run on any packet sent.
 */
SEC("cgroup_skb/egress")
int get_sock_common(struct __sk_buff *skb)
{
	struct bpf_sock_tuple tuple = {};
	struct bpf_sock *sk;

	if (!skc_dport)
		return 1;
	tuple.ipv4.saddr = bpf_htonl(0x7f000001);
	tuple.ipv4.daddr = bpf_htonl(0x7f000001);
	tuple.ipv4.sport = skc_sport;
	tuple.ipv4.dport = skc_dport;
	sk = bpf_skc_lookup_tcp(skb, &tuple, sizeof(tuple.ipv4), BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 1;
	skc_state = sk->state;
	skc_found = !!bpf_sk_storage_get(&inl, sk, 0, 0);
	bpf_sk_release(sk);
	return 1;
}

/* Runs before the cgroup hook, whose programs leave this optname alone. */
SEC("fentry/security_socket_getsockopt")
int BPF_PROG(get_tracing, struct socket *sock, int level, int optname)
{
	struct inlined_val *v;

	if (level != SOL_INLINED_TEST || optname != PROG_TRACING)
		return 0;
	v = bpf_sk_storage_get(&inl, sock->sk, 0, 0);
	found = !!v;
	if (v)
		seen = v->a;
	return 0;
}

/* Iterators run in read(): no hardirq/NMI check. Loaded, never read. */
SEC("iter/tcp")
int get_iter(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;

	if (skc && bpf_sk_storage_get(&inl, skc, 0, 0))
		found++;
	return 0;
}
