/* SPDX-License-Identifier: GPL-2.0 */
/* The context of iter/bpf_sk_storage_map programs, as the kernel has it. */
#ifndef SK_STORAGE_ITER_BPF_H
#define SK_STORAGE_ITER_BPF_H

#include <linux/bpf.h>

struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
};

struct bpf_iter__bpf_sk_storage_map {
	struct bpf_iter_meta *meta;
	struct bpf_map *map;
	void *sk;
	void *value;
};

#endif
