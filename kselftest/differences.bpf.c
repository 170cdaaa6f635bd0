// SPDX-License-Identifier: GPL-2.0
/*
 * Where inline values behave differently from dynamic ones on purpose:
 * cgroup/setsockopt programs on a private level record the addresses of a
 * socket's values, so that a test can tell a value updated in place from
 * one replaced, and a pointer that aliases a recreated value from one to a
 * deleted element.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"

char _license[] SEC("license") = "GPL";

#define SOL_DIFF_TEST	0x5e60
enum { DIFF_ADDR = 1, DIFF_DELETE_RECREATE };

SK_STORAGE_MAP(map_default, struct val16);
/* Dynamic: user space creates both, this one once the tail is full. */
SK_STORAGE_MAP(map_dynamic, struct val16);

/* What the last run saw: value addresses, and a read through the second. */
__u64 addr[2];
__u64 seen;

static __always_inline int run(void *map, struct bpf_sock *sk, int op)
{
	struct val16 *p, *q;

	if (op == DIFF_ADDR) {
		p = bpf_sk_storage_get(map, sk, 0, 0);
		addr[0] = (__u64)p;
		return 1;
	}
	p = bpf_sk_storage_get(map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!p)
		return 0;
	p->a = 1;
	bpf_sk_storage_delete(map, sk);
	q = bpf_sk_storage_get(map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!q)
		return 0;
	/* A write through the pointer taken before the delete. */
	p->a = 7;
	addr[0] = (__u64)p;
	addr[1] = (__u64)q;
	seen = q->a;
	return 1;
}

SEC("cgroup/setsockopt")
int diff_probe(struct bpf_sockopt *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	int op = ctx->optname & 0xff;

	if (ctx->level != SOL_DIFF_TEST || !sk)
		return 1;
	ctx->optlen = -1;	/* handled here, the kernel never sees it */
	if (ctx->optname >> 8)
		return run(&map_dynamic, sk, op);
	return run(&map_default, sk, op);
}
