// SPDX-License-Identifier: GPL-2.0
/*
 * sk-workload, the BPF side. A cgroup_skb program on ingress and egress
 * keeps a per-connection record of the payload each socket sent and
 * received, as a per-connection accounting agent would on every packet:
 * in an sk storage map with a slot in the inline tail, in one without,
 * or in a hash map keyed by socket cookie; the "raw" programs read a
 * field of the socket and count into one global record instead, the
 * cost of everything but the storage.
 *
 * For the churn workload, kprobe and fentry programs follow the RCU callbacks of a
 * socket's life: each call_rcu() of a callback in watch_fn[] is counted
 * and stamped, and the callback's run counted and timed; kfree_rcu()s
 * (how the dynamic path frees a socket's values and storage) are counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "../kselftest/sk_storage_maps.bpf.h"
#include "sk-workload.h"

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(inline_map, struct conn_rec);
SK_STORAGE_MAP_EXTRA(dyn_map, struct conn_rec, 0, 0);	/* does not ask */

/* Sized by user space before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct conn_rec);
} cookie_map SEC(".maps");

struct conn_rec raw_total;
__u64 raw_marks, no_record;

/* Payload bytes of an IPv4 TCP segment, 0 for anything else. */
static __always_inline __u32 tcp_payload(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct iphdr *ip = data;
	struct tcphdr *th = (void *)(ip + 1);

	if ((void *)(th + 1) > end || ip->version != 4 || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_TCP)
		return 0;
	return bpf_ntohs(ip->tot_len) - sizeof(*ip) - th->doff * 4;
}

static __always_inline void account(struct __sk_buff *skb, int variant, bool egress)
{
	struct conn_rec *r, zero = {};
	struct bpf_sock *sk = skb->sk;
	__u32 len;
	__u64 cookie;

	if (!sk)
		return;
	sk = bpf_sk_fullsock(sk);
	if (!sk)
		return;
	len = tcp_payload(skb);
	switch (variant) {
	case WL_RAW:
		raw_marks += sk->mark;
		r = &raw_total;
		break;
	case WL_INLINE:
		r = bpf_sk_storage_get(&inline_map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		break;
	case WL_DYNAMIC:
		r = bpf_sk_storage_get(&dyn_map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		break;
	default:
		cookie = bpf_get_socket_cookie(skb);
		r = bpf_map_lookup_elem(&cookie_map, &cookie);
		if (!r) {
			bpf_map_update_elem(&cookie_map, &cookie, &zero, BPF_NOEXIST);
			r = bpf_map_lookup_elem(&cookie_map, &cookie);
		}
		break;
	}
	if (!r) {
		__sync_fetch_and_add(&no_record, 1);
		return;
	}
	if (egress) {
		r->segs_out += len != 0;
		r->bytes_out += len;
	} else {
		r->segs_in += len != 0;
		r->bytes_in += len;
	}
}

#define VARIANT(name, variant)						\
SEC("cgroup_skb/ingress")						\
int name##_in(struct __sk_buff *skb)					\
{									\
	account(skb, variant, false);					\
	return 1;							\
}									\
SEC("cgroup_skb/egress")						\
int name##_out(struct __sk_buff *skb)					\
{									\
	account(skb, variant, true);					\
	return 1;							\
}

VARIANT(raw, WL_RAW)
VARIANT(inline, WL_INLINE)
VARIANT(dynamic, WL_DYNAMIC)
VARIANT(hash, WL_HASH)

/* ---- churn: RCU callbacks of a socket's life ---- */

/* Set by user space from /proc/kallsyms; 0 where a kernel has none. */
__u64 watch_fn[NR_WL_CB];
struct wl_rcu_stat rcu_stat[NR_WL_CB];
__u64 call_rcu_all, kfree_rcu_all, stamp_dropped;

/* rcu_head address -> ns of its call_rcu() */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 17);
	__type(key, __u64);
	__type(value, __u64);
} queued_at SEC(".maps");

/* A kprobe: fentry programs cannot read a function-pointer argument. */
SEC("kprobe/call_rcu")
int BPF_KPROBE(on_call_rcu, struct callback_head *head, void *func)
{
	__u64 key = (__u64)head, now = bpf_ktime_get_ns();
	int i;

	__sync_fetch_and_add(&call_rcu_all, 1);
	for (i = 0; i < NR_WL_CB; i++) {
		if (!watch_fn[i] || watch_fn[i] != (__u64)func)
			continue;
		__sync_fetch_and_add(&rcu_stat[i].queued, 1);
		if (bpf_map_update_elem(&queued_at, &key, &now, BPF_ANY))
			__sync_fetch_and_add(&stamp_dropped, 1);
		break;
	}
	return 0;
}

SEC("fentry/kvfree_call_rcu")
int BPF_PROG(on_kfree_rcu, struct callback_head *head, void *ptr)
{
	__sync_fetch_and_add(&kfree_rcu_all, 1);
	return 0;
}

static __always_inline void callback_ran(int i, struct callback_head *head)
{
	__u64 key = (__u64)head, *t, wait;

	__sync_fetch_and_add(&rcu_stat[i].done, 1);
	t = bpf_map_lookup_elem(&queued_at, &key);
	if (!t)
		return;
	wait = bpf_ktime_get_ns() - *t;
	bpf_map_delete_elem(&queued_at, &key);
	__sync_fetch_and_add(&rcu_stat[i].wait_ns, wait);
	__sync_fetch_and_add(&rcu_stat[i].timed, 1);
	if (wait > rcu_stat[i].wait_max_ns)
		rcu_stat[i].wait_max_ns = wait;
}

SEC("fentry/sk_prot_free_mem_rcu")
int BPF_PROG(on_sock_cb, struct callback_head *head)
{
	callback_ran(WL_CB_SOCK, head);
	return 0;
}

/*
 * The hot connection's records (sk-workload-hot.c): the address of each
 * map's record in the two sockets whose ports are hot_port, so that cache
 * misses on their lines can be told apart. Root may see addresses.
 */
__u16 hot_port;

SEC("iter/tcp")
int hot_records(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp;
	__u64 in, dyn;

	if (!skc || !hot_port)
		return 0;
	if (skc->skc_num != hot_port && bpf_ntohs(skc->skc_dport) != hot_port)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;
	in = (__u64)(long)bpf_sk_storage_get(&inline_map, tp, 0, 0);
	dyn = (__u64)(long)bpf_sk_storage_get(&dyn_map, tp, 0, 0);
	BPF_SEQ_PRINTF(ctx->meta->seq, "%u %llx %llx\n", skc->skc_num, in, dyn);
	return 0;
}
