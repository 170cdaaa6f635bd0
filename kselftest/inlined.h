/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by inlined.bpf.c and inlined.c. */
#ifndef INLINED_H
#define INLINED_H

#ifndef __VMLINUX_H__	/* BPF programs have the types of vmlinux.h */
#include <linux/types.h>
#endif

#define SOL_INLINED_TEST	0x5e5f

/* getsockopt(fd, SOL_INLINED_TEST, PROG_*) runs one program. */
enum {
	PROG_ZERO = 1,
	PROG_CREATE,
	PROG_UNKNOWN,
	PROG_DYNAMIC,
	PROG_INNER,
	PROG_TWO_MAPS,
	PROG_TRACING,	/* fentry: the helper's _tracing variant */
};

struct inlined_val {
	__u64 a;
};

#endif
