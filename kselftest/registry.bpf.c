// SPDX-License-Identifier: GPL-2.0
/*
 * registry: the bytes of one UDP socket's tail that the registry could
 * write, the pointer (or link) in front of the tail and the map's slot,
 * copied out by an iter/udp program for the socket bound to @port.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "sk_storage_maps.bpf.h"

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(inline_map, __u64);

#define LINK_MAX	32
#define SLOT_BYTES	16	/* the owner tag and the __u64 value */

/* Set by user space: the watched socket, the bytes to copy. */
__u16 port;
__u32 link_bytes, slot_off;

__u8 link_copy[LINK_MAX], slot_copy[SLOT_BYTES];
int found;

SEC("iter/udp")
int snapshot(struct bpf_iter__udp *ctx)
{
	struct udp_sock *udp = ctx->udp_sk;
	__u32 n = link_bytes;
	unsigned long base;
	unsigned int off;

	if (!udp || udp->inet.sk.__sk_common.skc_num != port)
		return 0;
	off = BPF_CORE_READ(&udp->inet.sk, sk_prot_creator, bpf_sk_inline_off);
	if (!off || n > LINK_MAX)
		return 0;
	/* The socket's address as a number, for the arithmetic. */
	if (bpf_probe_read_kernel(&base, sizeof(base), &ctx->udp_sk))
		return 0;
	if (bpf_probe_read_kernel(link_copy, n, (void *)(base + off - n)) ||
	    bpf_probe_read_kernel(slot_copy, sizeof(slot_copy),
				  (void *)(base + off + slot_off)))
		return 0;
	found++;
	return 0;
}
