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
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sk_storage_test.h"

char _license[] SEC("license") = "GPL";

/* As in interfaces.c: the lock, then two counters. */
struct val_lock {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 a;
	__u64 b;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(map_extra, 1);	/* a slot in the inline tail */
	__type(key, int);
	__type(value, struct val16);
} map_inline SEC(".maps");

/* Dynamic: user space creates both, this one once the tail is full. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(map_extra, 1);	/* a slot in the inline tail */
	__type(key, int);
	__type(value, struct val16);
} map_dyn SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__uint(map_extra, 1);	/* a slot in the inline tail */
	__type(key, int);
	__type(value, struct val16);
} map_clone SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(map_extra, 1);	/* a slot in the inline tail */
	__type(key, int);
	__type(value, struct val_lock);
} map_lock SEC(".maps");

struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
};

/* The context of iter/bpf_sk_storage_map programs, as the kernel has it. */
struct bpf_iter__bpf_sk_storage_map {
	struct bpf_iter_meta *meta;
	struct bpf_map *map;
	void *sk;
	void *value;
};

/* Values visited (with a socket), their first words summed, and ends. */
__u64 visits;
__u64 sum;
__u64 ends;

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
