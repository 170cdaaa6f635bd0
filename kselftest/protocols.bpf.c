// SPDX-License-Identifier: GPL-2.0
/*
 * Where an sk storage map keeps each value: for every value it visits, an
 * iter/bpf_sk_storage_map program prints the socket's cookie and the
 * value's offset from the socket, which is the slot's place in the tail
 * for an inline value and unrelated for an element of the dynamic storage.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

SEC("iter/bpf_sk_storage_map")
int print_offsets(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	void *sk = ctx->sk, *value = ctx->value;

	if (!sk || !value)
		return 0;
	/* Root may subtract pointers: the difference is a plain number. */
	BPF_SEQ_PRINTF(ctx->meta->seq, "%llu %lld\n", bpf_get_socket_cookie(sk),
		       (long long)(value - sk));
	return 0;
}
