// SPDX-License-Identifier: GPL-2.0
/*
 * Tracing programs that call the sk storage helpers from inside the sk
 * storage code itself: refused at load for the bpf_sk_storage*() and
 * bpf_sk_inline*() functions, where the helper would recurse into the
 * code it interrupted; allowed elsewhere.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sk_storage_test.h"

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct val8);
} map SEC(".maps");

struct sock;

#define GET_ON(fn)							\
SEC("fentry/" #fn)							\
int BPF_PROG(get_on_##fn, struct sock *sk)				\
{									\
	bpf_sk_storage_get(&map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);	\
	return 0;							\
}

GET_ON(bpf_sk_storage_free)
GET_ON(bpf_sk_inline_link)
GET_ON(bpf_sk_inline_unlink)
GET_ON(udp_destroy_sock)
