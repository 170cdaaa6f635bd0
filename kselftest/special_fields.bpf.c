// SPDX-License-Identifier: GPL-2.0
/*
 * An sk storage map whose value holds a referenced kptr to a cgroup, and a
 * cgroup_skb program that stores a reference to cgroup_id in the value of
 * every socket sending to port. A cgroup referenced this way stays a dying
 * descendant of its parent after rmdir until the kptr is released.
 *
 * Clang 14 drops the kptr type tag from BTF: the test creates map_kptr
 * itself, from BTF that has the tag, and the skeleton reuses that map.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "sk_storage_maps.bpf.h"

char _license[] SEC("license") = "GPL";

struct val_kptr {
	__u64 stores;
	struct cgroup __kptr *cg;
};

SK_STORAGE_MAP(map_kptr, struct val_kptr);

extern struct cgroup *bpf_cgroup_from_id(__u64 cgid) __ksym;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym;

__u64 cgroup_id;
__u16 port;
__u64 stored;

SEC("cgroup_skb/egress")
int hold_cgroup(struct __sk_buff *skb)
{
	struct bpf_sock *sk = skb->sk;
	struct val_kptr *v;
	struct cgroup *cg;

	if (!sk)
		return 1;
	sk = bpf_sk_fullsock(sk);
	if (!sk || !port || sk->dst_port != bpf_htons(port))
		return 1;
	v = bpf_sk_storage_get(&map_kptr, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!v)
		return 1;
	cg = bpf_cgroup_from_id(cgroup_id);
	if (!cg)
		return 1;
	cg = bpf_kptr_xchg(&v->cg, cg);
	if (cg)
		bpf_cgroup_release(cg);
	v->stores++;
	__sync_fetch_and_add(&stored, 1);
	return 1;
}
