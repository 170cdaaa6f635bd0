/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The uapi constants the tests' BPF programs use that vmlinux.h lacks:
 * #defines, and enums that no type of the kernel's BTF refers to.
 */
#ifndef SK_NET_BPF_H
#define SK_NET_BPF_H

#include "vmlinux.h"

#define BPF_F_CURRENT_NETNS	(-1L)	/* linux/bpf.h */
#define TC_ACT_OK		0	/* linux/pkt_cls.h */

#endif
