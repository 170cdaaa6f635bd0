// SPDX-License-Identifier: GPL-2.0
/*
 * A value in every socket created while attached: kernel sockets too,
 * such as the one a protocol module creates in its init (qrtr's name
 * service). Count the AF_QIPCRTR sockets that got one. While the test
 * unloads the module, hold the first deferred free of a socket's memory
 * for a while in the RCU callback, so that the module's exit runs on
 * meanwhile unless proto_unregister() waits for it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"

#define AF_QIPCRTR	42

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(map, struct val8);

int qrtr_values;

SEC("lsm/socket_post_create")
int BPF_PROG(give_value, struct socket *sock, int family, int type,
	     int protocol, int kern)
{
	struct sock *sk = sock->sk;
	struct val8 *v;

	if (!sk)
		return 0;
	v = bpf_sk_storage_get(&map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!v)
		return 0;
	v->a = family;
	if (family == AF_QIPCRTR)
		__sync_fetch_and_add(&qrtr_values, 1);
	return 0;
}

/* Set by the test around the module's removal. */
bool hold_free;
int held;

#define HOLD_NS		(300 * 1000 * 1000ULL)

static long until_time(__u64 i, void *ctx)
{
	return bpf_ktime_get_ns() > *(__u64 *)ctx;
}

SEC("fentry/sk_prot_free_mem_rcu")
int BPF_PROG(hold_deferred_free, struct callback_head *head)
{
	__u64 until;

	if (!hold_free || held)
		return 0;
	held = 1;
	until = bpf_ktime_get_ns() + HOLD_NS;
	bpf_loop(1 << 23, until_time, &until, 0);
	return 0;
}
