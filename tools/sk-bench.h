/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sk-bench: what the BPF side (sk-bench.bpf.c) and the guest tool
 * (sk-bench.c, sk-bench-*.c) share.
 */
#ifndef SK_BENCH_H
#define SK_BENCH_H

/* What the iterator reads in each socket. */
enum bench_mode {
	BENCH_VISIT,		/* nothing: the walk alone, subtracted */
	BENCH_RAW,		/* sk->sk_mark, a field of the socket */
	BENCH_INLINE,		/* bpf_sk_storage_get(), inline map */
	BENCH_DYNAMIC,		/* bpf_sk_storage_get(), dynamic map */
	BENCH_HASH,		/* hash map keyed by bpf_get_socket_cookie() */
	BENCH_CALL,		/* the inline map through the helper call */
	BENCH_RAW_END,		/* a field on the line before the tail */
	NR_BENCH_MODES
};

/* getsockopt(fd, SOL_SK_BENCH, 0) runs the hot loop on fd's socket. */
#define SOL_SK_BENCH		0x5e5b

/* Kernel functions sk-bench can time, entry to exit. */
#define SK_BENCH_TIMED		3

#endif /* SK_BENCH_H */
