/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by early.bpf.c and early.c. */
#ifndef EARLY_H
#define EARLY_H

#ifndef __VMLINUX_H__	/* BPF programs have the types of vmlinux.h */
#include <linux/types.h>
#endif

enum {
	EARLY_ALLOC_SECURITY,
	EARLY_CLONE_SECURITY,
	EARLY_FEXIT_SECURITY_SK_ALLOC,
	EARLY_UNUSED,
	EARLY_NR_HOOKS,	/* a power of two: the programs mask the index */
};

struct early_counts {
	__u64 calls;	/* each call looks a value up, then tries to create one */
	__u64 found;
	__u64 created;
	__u64 last_found;	/* the value the last lookup that found one found */
};

#endif
