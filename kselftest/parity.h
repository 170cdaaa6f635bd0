/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by parity.bpf.c and parity.c. */
#ifndef PARITY_H
#define PARITY_H

#ifndef __VMLINUX_H__	/* BPF programs have the types of vmlinux.h */
#include <linux/types.h>
#endif

/* SO_MARK of the test's sockets; accepted ones inherit it. */
#define PARITY_MARK	0x9a417

enum {
	PARITY_POST_CREATE,	/* lsm/socket_post_create: create in both */
	PARITY_SOCKOPS,		/* sockops, established: look, create the child's */
	PARITY_INET_RELEASE,	/* fentry/inet_release */
	PARITY_UNIX_RELEASE,	/* fentry/unix_release */
	PARITY_TCP_CLOSE_ENTRY,	/* fentry/tcp_close */
	PARITY_TCP_CLOSE_EXIT,	/* fexit/tcp_close */
	PARITY_SK_FREE,		/* lsm/sk_free_security: lookup */
	PARITY_SK_FREE_CREATE,	/* lsm/sk_free_security: F_CREATE */
	PARITY_NR_HOOKS,	/* a power of two: the programs mask the index */
};

/* What the inline map and its dynamic twin returned, one call each. */
struct parity_counts {
	__u64 calls;
	__u64 both;		/* a value from each, the same */
	__u64 neither;
	__u64 inline_only;	/* divergences: */
	__u64 dynamic_only;
	__u64 differ;		/* a value from each, not the same */
	__u64 last_inline;	/* the inline value of the last divergence */
};

#endif
