// SPDX-License-Identifier: GPL-2.0
/*
 * Program types that call bpf_sk_storage_get() on a socket: cgroup_skb, tc
 * (through bpf_sk_fullsock()) and fentry (the _tracing variant of the
 * helper) count the packets a socket sends; cgroup/sock_create marks new
 * sockets; sock_ops counts TCP connections established.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"
#include "sk_net.bpf.h"

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(count_cgroup_skb, struct val8);
SK_STORAGE_MAP(count_tc, struct val8);
SK_STORAGE_MAP(count_fentry, struct val8);
SK_STORAGE_MAP(mark_sock_create, struct val8);
SK_STORAGE_MAP(count_sock_ops, struct val8);

/* Only sockets bound to this port are counted. */
__u16 port;

static __always_inline void count(void *map, void *sk)
{
	struct val8 *v = bpf_sk_storage_get(map, sk, 0,
					    BPF_SK_STORAGE_GET_F_CREATE);

	if (v)
		__sync_fetch_and_add(&v->a, 1);
}

static __always_inline struct bpf_sock *our_sock(struct __sk_buff *skb)
{
	struct bpf_sock *sk = skb->sk;

	if (!sk)
		return 0;
	sk = bpf_sk_fullsock(sk);
	if (!sk || sk->src_port != port)
		return 0;
	return sk;
}

SEC("cgroup_skb/egress")
int count_egress(struct __sk_buff *skb)
{
	struct bpf_sock *sk = our_sock(skb);

	if (sk)
		count(&count_cgroup_skb, sk);
	return 1;
}

SEC("tc")
int count_tc_egress(struct __sk_buff *skb)
{
	struct bpf_sock *sk = our_sock(skb);

	if (sk)
		count(&count_tc, sk);
	return TC_ACT_OK;
}

SEC("fentry/udp_sendmsg")
int BPF_PROG(count_udp_sendmsg, struct sock *sk)
{
	if (sk->__sk_common.skc_num == port)
		count(&count_fentry, sk);
	return 0;
}

/* Sockets of this protocol number get a mark when they are created. */
int mark_protocol = -1;

SEC("cgroup/sock_create")
int mark_new_socket(struct bpf_sock *ctx)
{
	struct val8 *v;

	if (ctx->protocol != mark_protocol)
		return 1;
	v = bpf_sk_storage_get(&mark_sock_create, ctx, 0,
			       BPF_SK_STORAGE_GET_F_CREATE);
	if (v)
		v->a = 0x50c4;
	return 1;
}

SEC("sockops")
int count_established(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;

	if (!sk || (skops->op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB &&
		    skops->op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB))
		return 1;
	if (skops->local_port != port && bpf_ntohl(skops->remote_port) != port)
		return 1;
	count(&count_sock_ops, sk);
	return 1;
}
