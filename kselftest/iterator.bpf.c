// SPDX-License-Identifier: GPL-2.0
/*
 * Which sockets were freed: sk_prot_free() releases a socket's memory (at
 * once, or a grace period later for one that held inline values) and runs
 * security_sk_free() first; sk_prot_free() itself is inlined. Record the
 * cookie of every socket that has one; the test gives its sockets theirs
 * with SO_COOKIE.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} freed SEC(".maps");

SEC("fentry/security_sk_free")
int BPF_PROG(record_free, struct sock *sk)
{
	__u64 cookie = sk->__sk_common.skc_cookie.counter;
	__u8 one = 1;

	if (cookie)
		bpf_map_update_elem(&freed, &cookie, &one, BPF_ANY);
	return 0;
}
