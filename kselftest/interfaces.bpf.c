// SPDX-License-Identifier: GPL-2.0
/*
 * Maps and an iterator for the interfaces test: an sk storage map that is
 * inline when the tail has room, a dynamic one of the same value size
 * (interfaces.c creates both, the second with the tail full), a
 * BPF_F_CLONE map and one whose value holds a bpf_spin_lock (both always
 * dynamic), and
 * iter/bpf_sk_storage_map programs that count the values they visit or
 * print them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"

char _license[] SEC("license") = "GPL";

/* As in interfaces.c: the lock, then two counters. */
struct val_lock {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 a;
	__u64 b;
};

SK_STORAGE_MAP(map_inline, struct val16);
/* Dynamic: user space creates both, this one once the tail is full. */
SK_STORAGE_MAP(map_dyn, struct val16);
SK_STORAGE_MAP_FLAGS(map_clone, struct val16, BPF_F_CLONE);
SK_STORAGE_MAP(map_lock, struct val_lock);

/* Values visited (with a socket), their first words summed, and ends. */
__u64 visits, sum, ends;

SEC("iter/bpf_sk_storage_map")
int visit_values(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct val16 *v = ctx->value;

	if (!ctx->sk || !v) {
		ends++;
		return 0;
	}
	visits++;
	sum += v->a;
	return 0;
}

/*
 * One line per value, 42 bytes: a read() of 100 bytes stops the walk
 * after a few values, and the next read resumes it.
 */
SEC("iter/bpf_sk_storage_map")
int print_values(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct val16 *v = ctx->value;

	if (!ctx->sk || !v)
		return 0;
	BPF_SEQ_PRINTF(ctx->meta->seq, "%020llu %020llu\n", v->a, v->b);
	return 0;
}
