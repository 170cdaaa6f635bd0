// SPDX-License-Identifier: GPL-2.0
/*
 * Programs that hold a window open on purpose, so that a race with a
 * socket's or a map's free happens every time instead of by luck: each
 * spins in bpf_loop() until user space says "release" (or a deadline
 * passes), in the middle of the code under test, for the thread under
 * test only.
 *
 * - hold_lookup: fexit of the syscall lookup of an sk storage map, after
 *   the socket's file reference is dropped and before the value is copied.
 * - late_write: cgroup/connect4 on a trigger port; looks a TCP connection
 *   up, gets its value, releases the socket, then writes a canary into the
 *   value once user space has closed the connection and opened others.
 * - hold_diag: fentry of the skb_put() that makes room for a value's
 *   attribute in a sock_diag reply (diag_put_len bytes: no other attribute
 *   of the reply has that size), after the value was found and before it
 *   is copied.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"
#include "sk_net.bpf.h"
#include "lifetime.h"

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(late_map, struct val16);

struct window window;

static long spin(__u32 i, void *ctx)
{
	__u64 *end = ctx;

	if (*(volatile __u32 *)&window.release)
		return 1;
	if (bpf_ktime_get_ns() > *end) {
		window.timed_out = 1;
		return 1;
	}
	return 0;
}

/* Hold the window open until user space releases it, at most hold_ns. */
static __always_inline void hold(void)
{
	__u64 end = bpf_ktime_get_ns() + window.hold_ns;
	int i;

	window.armed = 0;
	window.in_window = 1;
	for (i = 0; i < 64; i++) {
		bpf_loop(1 << 20, spin, &end, 0);
		if (*(volatile __u32 *)&window.release || window.timed_out)
			break;
	}
	window.in_window = 2;
}

static __always_inline int ours(void)
{
	return window.armed && (__u32)bpf_get_current_pid_tgid() == window.tid;
}

SEC("fexit/bpf_fd_sk_storage_lookup_elem")
int BPF_PROG(hold_lookup, void *map, void *key, void *ret)
{
	if (ours())
		hold();
	return 0;
}

/* lib/ is not traceable: hold in the skb_put() of the value's attribute. */
SEC("fentry/skb_put")
int BPF_PROG(hold_diag, void *skb, unsigned int len)
{
	if (len == window.diag_put_len && ours())
		hold();
	return 0;
}

struct late late;

SEC("cgroup/connect4")
int late_write(struct bpf_sock_addr *ctx)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	struct val16 *v;

	if (ctx->user_port != late.trigger_port || !window.armed)
		return 1;
	t.ipv4.saddr = bpf_htonl(0x7f000001);
	t.ipv4.daddr = bpf_htonl(0x7f000001);
	t.ipv4.sport = late.remote_port;
	t.ipv4.dport = late.local_port;
	sk = bpf_sk_lookup_tcp(ctx, &t, sizeof(t.ipv4), BPF_F_CURRENT_NETNS, 0);
	if (!sk) {
		late.result = LATE_NO_SOCKET;
		return 1;
	}
	v = bpf_sk_storage_get(&late_map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	/* The value is not tied to the reference: it stays usable after. */
	bpf_sk_release(sk);
	if (!v) {
		late.result = LATE_NO_VALUE;
		return 1;
	}
	hold();
	v->a = LATE_CANARY;
	v->b = LATE_CANARY;
	late.result = LATE_WRITTEN;
	return 1;
}
