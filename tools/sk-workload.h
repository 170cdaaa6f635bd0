/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sk-workload: what the BPF side (sk-workload.bpf.c) and the guest tool
 * (sk-workload.c) share.
 */
#ifndef SK_WORKLOAD_H
#define SK_WORKLOAD_H

/* Where the per-connection record lives. */
enum wl_variant {
	WL_NONE,		/* no program attached */
	WL_RAW,			/* the program reads sk_mark: the floor */
	WL_INLINE,		/* sk storage map with a slot in the tail */
	WL_DYNAMIC,		/* sk storage map without one */
	WL_HASH,		/* hash map keyed by socket cookie */
	NR_WL_VARIANTS
};

/* What the program keeps per connection, counted on every segment. */
struct conn_rec {
	__u64 segs_in, segs_out;	/* segments carrying payload */
	__u64 bytes_in, bytes_out;	/* payload bytes */
};

/* RCU callbacks the churn workload follows from call_rcu() to their run. */
enum wl_rcu_cb {
	WL_CB_SOCK,		/* sk_prot_free_mem_rcu: a socket's memory */
	NR_WL_CB
};

struct wl_rcu_stat {
	__u64 queued, done;		/* call_rcu()s, callbacks run */
	__u64 wait_ns, wait_max_ns;	/* from call_rcu() to the run */
	__u64 timed;			/* callbacks whose wait was measured */
};

#endif /* SK_WORKLOAD_H */
