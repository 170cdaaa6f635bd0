// SPDX-License-Identifier: GPL-2.0
/*
 * An inline map and its dynamic twin, same value type, given the same
 * values by the same programs on the same sockets: wherever a program can
 * see a socket, both must return a value or neither, and the same one.
 * Each hook asks both maps once per call on the test's sockets (SO_MARK
 * PARITY_MARK; lsm/socket_post_create, where the mark is not set yet,
 * takes the test's process) and counts what they answered.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"
#include "parity.h"

#define AF_UNIX		1
#define AF_INET		2

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(inl, struct val8);
SK_STORAGE_MAP_EXTRA(dyn, struct val8, 0, 0);	/* no map_extra: dynamic */

int target_tgid;
__u64 next_id;
struct parity_counts counts[PARITY_NR_HOOKS];

/* Nested tests: clang turns "!vi && !vd" into an OR the verifier refuses. */
static __always_inline void tally(int hook, struct val8 *vi, struct val8 *vd)
{
	struct parity_counts *c = &counts[hook & (PARITY_NR_HOOKS - 1)];

	__sync_fetch_and_add(&c->calls, 1);
	if (vi) {
		if (vd && vi->a == vd->a) {
			__sync_fetch_and_add(&c->both, 1);
			return;
		}
		if (vd)
			__sync_fetch_and_add(&c->differ, 1);
		else
			__sync_fetch_and_add(&c->inline_only, 1);
		c->last_inline = vi->a;
	} else if (vd) {
		__sync_fetch_and_add(&c->dynamic_only, 1);
	} else {
		__sync_fetch_and_add(&c->neither, 1);
	}
}

static __always_inline void look(struct sock *sk, int hook)
{
	tally(hook, bpf_sk_storage_get(&inl, sk, 0, 0),
	      bpf_sk_storage_get(&dyn, sk, 0, 0));
}

/* Values that were absent get the same new id in both maps. */
static __always_inline void create(struct sock *sk, int hook)
{
	struct val8 *vi, *vd;
	__u64 id;

	vi = bpf_sk_storage_get(&inl, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	vd = bpf_sk_storage_get(&dyn, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (vi && vd && !vi->a && !vd->a) {
		id = __sync_fetch_and_add(&next_id, 1) + 1;
		vi->a = id;
		vd->a = id;
	}
	tally(hook, vi, vd);
}

static __always_inline bool marked(const struct sock *sk)
{
	return sk && sk->sk_mark == PARITY_MARK;
}

SEC("lsm/socket_post_create")
int BPF_PROG(post_create, struct socket *sock, int family, int type,
	     int protocol, int kern)
{
	struct sock *sk = sock->sk;	/* read once: the NULL test must cover it */

	if (!target_tgid || bpf_get_current_pid_tgid() >> 32 != target_tgid ||
	    kern || (family != AF_INET && family != AF_UNIX) || !sk)
		return 0;
	create(sk, PARITY_POST_CREATE);
	return 0;
}

/* The accepted socket's values: it did not pass socket_post_create. */
SEC("sockops")
int established(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;

	if (!sk || sk->mark != PARITY_MARK)
		return 1;
	if (skops->op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB)
		create((struct sock *)sk, PARITY_SOCKOPS);
	else if (skops->op == BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB)
		look((struct sock *)sk, PARITY_SOCKOPS);
	return 1;
}

SEC("fentry/inet_release")
int BPF_PROG(inet_release, struct socket *sock)
{
	struct sock *sk = sock->sk;

	if (marked(sk))
		look(sk, PARITY_INET_RELEASE);
	return 0;
}

SEC("fentry/unix_release")
int BPF_PROG(unix_release, struct socket *sock)
{
	struct sock *sk = sock->sk;

	if (marked(sk))
		look(sk, PARITY_UNIX_RELEASE);
	return 0;
}

SEC("fentry/tcp_close")
int BPF_PROG(tcp_close_entry, struct sock *sk, long timeout)
{
	if (marked(sk))
		look(sk, PARITY_TCP_CLOSE_ENTRY);
	return 0;
}

/* The close may have destroyed the socket: RST, or the peer's FIN was in. */
SEC("fexit/tcp_close")
int BPF_PROG(tcp_close_exit, struct sock *sk, long timeout)
{
	if (marked(sk))
		look(sk, PARITY_TCP_CLOSE_EXIT);
	return 0;
}

/* After the destructors: the dynamic values are gone, the inline must be too. */
SEC("lsm/sk_free_security")
int BPF_PROG(sk_free, struct sock *sk)
{
	if (!marked(sk))
		return 0;
	look(sk, PARITY_SK_FREE);
	create(sk, PARITY_SK_FREE_CREATE);
	return 0;
}
