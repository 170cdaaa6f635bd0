// SPDX-License-Identifier: GPL-2.0
/*
 * Where a socket is destructed: security_sk_free() runs in
 * sk_prot_free(), right after the protocol's sk_destruct() and put_net(),
 * in the same context. Record the task and the kernel stack there, for
 * the socket that carries the test's mark.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"

char _license[] SEC("license") = "GPL";

#define MAX_FRAMES	64

SK_STORAGE_MAP(map, struct val8);

__u32 mark;
int freed;		/* times the marked socket was destructed */
int freed_tgid;		/* in which process */
int freed_family;
__u64 freed_stack[MAX_FRAMES];
long freed_stack_bytes;

SEC("fentry/security_sk_free")
int BPF_PROG(on_sk_free, struct sock *sk)
{
	if (!mark || sk->sk_mark != mark)
		return 0;
	freed_tgid = bpf_get_current_pid_tgid() >> 32;
	freed_family = sk->__sk_common.skc_family;
	freed_stack_bytes = bpf_get_stack(ctx, freed_stack, sizeof(freed_stack), 0);
	__sync_fetch_and_add(&freed, 1);
	return 0;
}
