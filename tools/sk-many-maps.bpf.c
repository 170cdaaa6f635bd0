// SPDX-License-Identifier: GPL-2.0
/*
 * sk-many-maps, the BPF side: MANY_MAPS sk storage maps that ask for a
 * slot (in0..) and as many that do not (dy0..), and iterators over UDP
 * sockets that look up the first M maps of one kind in each socket, one
 * program per kind and M (a program may use 64 maps, so no global data
 * either): walk_in_M and walk_dy_M; walk_in_0 looks nothing up. For each
 * socket the program writes to the iterator's output the time its
 * lookups took, between two bpf_ktime_get_ns(), and how many values it
 * did not find (struct many_record), for user space to sum: the walk
 * itself is not timed. Each call site has a map of its own, so the verifier emits the
 * inline maps' lookups into the program; the distinct no-op after each
 * call keeps the compiler from merging call sites, which would leave the
 * call there.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "../kselftest/sk_storage_maps.bpf.h"
#include "sk-many-maps.h"

char _license[] SEC("license") = "GPL";

#define MAP_PAIR(i)							\
	SK_STORAGE_MAP(in##i, __u64);					\
	SK_STORAGE_MAP_EXTRA(dy##i, __u64, 0, 0);

#define EACH_MAP(X) \
	X(0) \
	X(1) \
	X(2) \
	X(3) \
	X(4) \
	X(5) \
	X(6) \
	X(7) \
	X(8) \
	X(9) \
	X(10) \
	X(11) \
	X(12) \
	X(13) \
	X(14) \
	X(15) \
	X(16) \
	X(17) \
	X(18) \
	X(19) \
	X(20) \
	X(21) \
	X(22) \
	X(23) \
	X(24) \
	X(25) \
	X(26) \
	X(27) \
	X(28) \
	X(29) \
	X(30) \
	X(31) \
	X(32) \
	X(33) \
	X(34) \
	X(35) \
	X(36) \
	X(37) \
	X(38) \
	X(39) \
	X(40) \
	X(41) \
	X(42) \
	X(43) \
	X(44) \
	X(45) \
	X(46) \
	X(47) \
	X(48) \
	X(49) \
	X(50) \
	X(51) \
	X(52) \
	X(53) \
	X(54) \
	X(55) \
	X(56) \
	X(57) \
	X(58) \
	X(59) \
	X(60) \
	X(61) \
	X(62) \
	X(63)

EACH_MAP(MAP_PAIR)

#define LOOKUP(kind, i, m)						\
	if (i < (m)) {							\
		__u64 *v = bpf_sk_storage_get(&kind##i, sk, 0, 0);	\
									\
		asm volatile("r1 = " #i ::: "r1");			\
		if (v)							\
			s += *v;					\
		else							\
			r.missed++;					\
	}

#define WALK(kind, m)							\
SEC("iter/udp")								\
int walk_##kind##_##m(struct bpf_iter__udp *ctx)			\
{									\
	struct sock *sk = (struct sock *)ctx->udp_sk;			\
	struct many_record r = {};					\
	__u64 s = 0;							\
									\
	if (!sk)							\
		return 0;						\
	r.ns = bpf_ktime_get_ns();					\
	EACH_MAP_ARG(LOOKUP, kind, m)					\
	r.ns = bpf_ktime_get_ns() - r.ns;				\
	asm volatile("" :: "r"(s));					\
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));			\
	return 0;							\
}

#define EACH_MAP_ARG(X, kind, m) \
	X(kind, 0, m) \
	X(kind, 1, m) \
	X(kind, 2, m) \
	X(kind, 3, m) \
	X(kind, 4, m) \
	X(kind, 5, m) \
	X(kind, 6, m) \
	X(kind, 7, m) \
	X(kind, 8, m) \
	X(kind, 9, m) \
	X(kind, 10, m) \
	X(kind, 11, m) \
	X(kind, 12, m) \
	X(kind, 13, m) \
	X(kind, 14, m) \
	X(kind, 15, m) \
	X(kind, 16, m) \
	X(kind, 17, m) \
	X(kind, 18, m) \
	X(kind, 19, m) \
	X(kind, 20, m) \
	X(kind, 21, m) \
	X(kind, 22, m) \
	X(kind, 23, m) \
	X(kind, 24, m) \
	X(kind, 25, m) \
	X(kind, 26, m) \
	X(kind, 27, m) \
	X(kind, 28, m) \
	X(kind, 29, m) \
	X(kind, 30, m) \
	X(kind, 31, m) \
	X(kind, 32, m) \
	X(kind, 33, m) \
	X(kind, 34, m) \
	X(kind, 35, m) \
	X(kind, 36, m) \
	X(kind, 37, m) \
	X(kind, 38, m) \
	X(kind, 39, m) \
	X(kind, 40, m) \
	X(kind, 41, m) \
	X(kind, 42, m) \
	X(kind, 43, m) \
	X(kind, 44, m) \
	X(kind, 45, m) \
	X(kind, 46, m) \
	X(kind, 47, m) \
	X(kind, 48, m) \
	X(kind, 49, m) \
	X(kind, 50, m) \
	X(kind, 51, m) \
	X(kind, 52, m) \
	X(kind, 53, m) \
	X(kind, 54, m) \
	X(kind, 55, m) \
	X(kind, 56, m) \
	X(kind, 57, m) \
	X(kind, 58, m) \
	X(kind, 59, m) \
	X(kind, 60, m) \
	X(kind, 61, m) \
	X(kind, 62, m) \
	X(kind, 63, m)

WALK(in, 0)
WALK(in, 1)
WALK(dy, 1)
WALK(in, 4)
WALK(dy, 4)
WALK(in, 8)
WALK(dy, 8)
WALK(in, 16)
WALK(dy, 16)
WALK(in, 17)
WALK(dy, 17)
WALK(in, 32)
WALK(dy, 32)
WALK(in, 64)
WALK(dy, 64)
