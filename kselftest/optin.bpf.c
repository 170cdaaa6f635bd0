// SPDX-License-Identifier: GPL-2.0
/*
 * LSM programs of the optin tests, each for what the test names only:
 *
 * - deny_map: the bpf_map_create hook refuses, with -EPERM, the creation
 *   of a map named deny_name. The hook runs after the map was allocated
 *   and its BTF checked: an sk storage map that asked has its slot then,
 *   and the failed creation must give it back.
 * - hold_grace_period: the bpf() hook of the thread hold_tid names spins
 *   in bpf_loop() until user space releases it (or HOLD_NS pass). A
 *   non-sleepable program runs in an RCU read-side section: no grace
 *   period ends while it spins.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define EPERM		1
#define HOLD_NS		(4ULL * 1000 * 1000 * 1000)

char _license[] SEC("license") = "GPL";

/* Set by user space; "" denies nothing. */
char deny_name[16];
int denied;

SEC("lsm/bpf_map_create")
int BPF_PROG(deny_map, struct bpf_map *map, union bpf_attr *attr,
	     struct bpf_token *token, int ret)
{
	char name[sizeof(map->name)];
	int i;

	if (ret || !deny_name[0])
		return ret;
	if (bpf_probe_read_kernel(name, sizeof(name), map->name))
		return 0;
	for (i = 0; i < sizeof(name); i++) {
		if (name[i] != deny_name[i])
			return 0;
		if (!name[i])
			break;
	}
	denied++;
	return -EPERM;
}

/* Set by user space: hold_tid arms the hold for that thread's next bpf(). */
__u32 hold_tid;
__u32 hold_release;
/* 1 while the hold runs, 2 once it ended; hold_timed_out if by HOLD_NS. */
__u32 hold_state;
__u32 hold_timed_out;

static long spin(__u32 i, void *ctx)
{
	__u64 *end = ctx;

	if (*(volatile __u32 *)&hold_release)
		return 1;
	if (bpf_ktime_get_ns() > *end) {
		hold_timed_out = 1;
		return 1;
	}
	return 0;
}

SEC("lsm/bpf")
int BPF_PROG(hold_grace_period, int cmd, union bpf_attr *attr,
	     unsigned int size, int ret)
{
	__u64 end;
	int i;

	if (!hold_tid || (__u32)bpf_get_current_pid_tgid() != hold_tid)
		return ret;
	hold_tid = 0;
	end = bpf_ktime_get_ns() + HOLD_NS;
	hold_state = 1;
	for (i = 0; i < 64; i++) {
		bpf_loop(1 << 20, spin, &end, 0);
		if (*(volatile __u32 *)&hold_release || hold_timed_out)
			break;
	}
	hold_state = 2;
	return ret;
}
