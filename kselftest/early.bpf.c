// SPDX-License-Identifier: GPL-2.0
/*
 * Programs that see a socket before sk_alloc() or sk_clone_lock() have
 * set it up: the LSM hooks sk_alloc_security and sk_clone_security, and
 * fexit on security_sk_alloc(). Each looks a value up, then tries to
 * create one, and counts what it got.
 *
 * The map is inline or dynamic (early.c's variants) and both are tried
 * at every hook: on the clone path sk_prot_alloc() hands
 * security_sk_alloc() an object that nothing cleared (the previous
 * occupant's sk_bpf_storage and refcount are still there unless
 * init_on_alloc=1), and at sk_clone_security sock_copy() has just copied
 * the listener's sk_bpf_storage into the child. Neither may show through:
 * a socket not set up has no value and gets none, whichever path its map
 * is on.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"
#include "early.h"

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(map, struct val8);

int target_tgid;
int recording;		/* first round: remember the objects, look at nothing */
__u64 reused;		/* second round: objects the first round had */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u8);
} objects SEC(".maps");
int listen_port;	/* host order, as skc_num */
struct early_counts counts[EARLY_NR_HOOKS];

static void look(struct sock *sk, int hook)
{
	struct early_counts *c = &counts[hook & (EARLY_NR_HOOKS - 1)];
	__u64 addr = (__u64)sk;
	__u8 one = 1;
	struct val8 *v;

	if (recording) {
		bpf_map_update_elem(&objects, &addr, &one, BPF_ANY);
		return;
	}
	if (hook != EARLY_FEXIT_SECURITY_SK_ALLOC &&
	    bpf_map_lookup_elem(&objects, &addr))
		__sync_fetch_and_add(&reused, 1);

	__sync_fetch_and_add(&c->calls, 1);
	v = bpf_sk_storage_get(&map, sk, 0, 0);
	if (v) {
		__sync_fetch_and_add(&c->found, 1);
		c->last_found = v->a;
	}
	if (bpf_sk_storage_get(&map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE))
		__sync_fetch_and_add(&c->created, 1);
}

static int ours(void)
{
	return target_tgid && bpf_get_current_pid_tgid() >> 32 == target_tgid;
}

SEC("lsm/sk_alloc_security")
int BPF_PROG(on_alloc_security, struct sock *sk, int family, unsigned int priority)
{
	if (ours())
		look(sk, EARLY_ALLOC_SECURITY);
	return 0;
}

/* Runs in the softirq that takes the handshake's last ACK. */
SEC("lsm/sk_clone_security")
int BPF_PROG(on_clone_security, const struct sock *sk, struct sock *newsk)
{
	if (listen_port && sk->__sk_common.skc_num == listen_port)
		look(newsk, EARLY_CLONE_SECURITY);
	return 0;
}

SEC("fexit/security_sk_alloc")
int BPF_PROG(after_security_sk_alloc, struct sock *sk, int family,
	     unsigned int priority, int ret)
{
	if (ours())
		look(sk, EARLY_FEXIT_SECURITY_SK_ALLOC);
	return 0;
}
