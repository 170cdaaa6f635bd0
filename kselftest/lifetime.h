/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by lifetime.bpf.c and lifetime.c. */
#ifndef LIFETIME_H
#define LIFETIME_H

#ifndef __VMLINUX_H__	/* BPF programs have the types of vmlinux.h */
#include <linux/types.h>
#endif

/* A window a program holds open for one thread (see lifetime.bpf.c). */
struct window {
	__u32 armed;		/* user: hold the next matching call */
	__u32 tid;		/* user: only for this thread */
	__u64 hold_ns;		/* user: at most this long */
	__u32 release;		/* user: close the window now */
	__u32 in_window;	/* program: 1 while holding, 2 after */
	__u32 timed_out;	/* program: hold_ns passed before release */
	__u32 diag_put_len;	/* user: hold_diag's skb_put() length */
};

#define LATE_CANARY		0xdeadbeefcafef00dULL

enum { LATE_NONE, LATE_NO_SOCKET, LATE_NO_VALUE, LATE_WRITTEN };

/* What late_write looks up, in network byte order, and what it did. */
struct late {
	__u32 trigger_port;	/* connect() to this port runs it */
	__u32 remote_port;	/* the connection's peer port */
	__u32 local_port;	/* and its own */
	__u32 result;
};

#endif
