/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by sk_storage.bpf.c and the tests that drive it. */
#ifndef SK_STORAGE_TEST_H
#define SK_STORAGE_TEST_H

#ifndef __VMLINUX_H__	/* BPF programs have the types of vmlinux.h */
#include <linux/types.h>
#else
/* vmlinux.h has an OP_CREATE of its own, NFS's: BPF programs rename ours. */
#define OP_CREATE		SK_STORAGE_OP_CREATE
#endif

#ifndef ENOENT
#define ENOENT			2
#endif

#define SOL_SK_STORAGE_TEST	0x5e5e
#define OPTNAME(map, op)	(((map) << 8) | (op))
#define MAP_OF(optname)		((optname) >> 8)
#define OP_OF(optname)		((optname) & 0xff)
#define RACE_MAX_THREADS	64

enum { MAP_A = 1, MAP_B, MAP_DYN, MAP_BIG };

enum {
	OP_GET = 1,	/* getsockopt: the value, or ENOENT */
	OP_CREATE,	/* setsockopt: get with F_CREATE, optval the initial value */
	OP_CREATE_ZERO,	/* setsockopt: get with F_CREATE and no initial value */
	OP_DELETE,	/* setsockopt: bpf_sk_storage_delete() */
	OP_RACE,	/* setsockopt: create with race_cmd, record what was seen */
};

struct val8 {
	__u64 a;
};

struct val16 {
	__u64 a;
	__u64 b;
};

/* Larger than any tail (at most 1024 bytes): always dynamic. */
struct val_big {
	__u64 a;
	__u64 b;
	__u8 pad[1100];
};

struct race_cmd {
	struct val16 init;
	__u32 thread;
	__u32 pad;
};

#endif
