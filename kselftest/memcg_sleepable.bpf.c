// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_sk_storage_get(F_CREATE) from an LSM hook, sleepable (lsm.s) or not
 * (lsm): getsockopt() at level SOL_SK_STORAGE_TEST creates the calling
 * socket's value. The verifier gives the helper GFP_KERNEL in the first
 * and GFP_ATOMIC in the second; "created" says whether the last call
 * returned a value.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(owner_map, struct val16);

int created = -1;

static __always_inline int create(struct socket *sock, int level)
{
	struct sock *sk = sock->sk;
	struct val16 *v;

	/* Checked as loaded: the verifier tracks this load, not a second one. */
	if (level != SOL_SK_STORAGE_TEST || !sk)
		return 0;
	v = bpf_sk_storage_get(&owner_map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	created = !!v;
	return 0;
}

SEC("lsm.s/socket_getsockopt")
int BPF_PROG(create_sleepable, struct socket *sock, int level, int optname)
{
	return create(sock, level);
}

SEC("lsm/socket_getsockopt")
int BPF_PROG(create_atomic, struct socket *sock, int level, int optname)
{
	return create(sock, level);
}
