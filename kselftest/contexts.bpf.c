// SPDX-License-Identifier: GPL-2.0
/*
 * Tracing programs that call the sk storage helpers from inside the sk
 * storage code itself: refused at load for the bpf_sk_storage*() functions
 * and every function of the inline storage, where the helper would recurse
 * into the code it interrupted; allowed elsewhere. The test points the
 * program at each function in turn.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(map, struct val8);

SEC("fentry")
int BPF_PROG(get_on_target)
{
	bpf_sk_storage_get(&map, (void *)0, 0, BPF_SK_STORAGE_GET_F_CREATE);
	return 0;
}
