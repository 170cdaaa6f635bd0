// SPDX-License-Identifier: GPL-2.0
/*
 * Many bpf_sk_storage_get() call sites whose flags are 0 or F_CREATE by a
 * branch the verifier cannot predict: NR_BLOCKS choices made first and
 * kept, then NR_BLOCKS blocks of CALLS_PER_BLOCK calls, block i passing
 * choice i. Choice i stays live until block i. A verifier that tells the
 * two values of a live choice apart (marks them precise) verifies the
 * blocks up to block i again for about every choice i: quadratic in the
 * blocks, past the 1M instruction limit at this size (50 blocks of 32
 * calls took 936k, 60 blocks take about 1.35M). One that does not prunes
 * the second value of each choice at once, as it does for a map without a
 * slot: 15k.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"

char _license[] SEC("license") = "GPL";

#define NR_BLOCKS	60	/* BLOCKS() */
#define CALLS_PER_BLOCK	32	/* GET32() */

SK_STORAGE_MAP(map, struct val8);

/*
 * F_CREATE if bit @bit of @bits is set, else 0: a conditional jump, never
 * the arithmetic the compiler would make of a C condition, so that each
 * path holds a constant.
 */
#define PICK(bits, bit) ({						\
	__u64 __f;							\
	asm volatile("%[f] = %[create];"				\
		     "if %[b] & %[mask] goto +1;"			\
		     "%[f] = 0;"					\
		     : [f] "=&r"(__f)					\
		     : [b] "r"(bits), [mask] "i"(1 << (bit)),		\
		       [create] "i"(BPF_SK_STORAGE_GET_F_CREATE));	\
	__f;								\
})

#define GET(f)		bpf_sk_storage_get(&map, sk, 0, f)
#define GET4(f)		do { GET(f); GET(f); GET(f); GET(f); } while (0)
#define GET16(f)	do { GET4(f); GET4(f); GET4(f); GET4(f); } while (0)
#define GET32(f)	do { GET16(f); GET16(f); } while (0)

#define TENS(m, t)	m(t##0) m(t##1) m(t##2) m(t##3) m(t##4)		\
			m(t##5) m(t##6) m(t##7) m(t##8) m(t##9)
#define BLOCKS(m)	m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7) m(8) m(9)	\
			TENS(m, 1) TENS(m, 2) TENS(m, 3) TENS(m, 4) TENS(m, 5)
/* 31 bits of the optname, then 31 of the level: both unknown. */
#define CHOOSE(i)	__u64 f##i = PICK((i) < 31 ? lo : hi, (i) % 31);
#define BLOCK(i)	GET32(f##i);

/*
 * Loaded only: how much the verifier does is the test. The socket is
 * never NULL here: no jump across the whole program, which inlined
 * lookups could take past the 16-bit jump range.
 */
SEC("cgroup/getsockopt")
int many_gets(struct bpf_sockopt *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	__u64 lo = ctx->optname, hi = ctx->level;

	BLOCKS(CHOOSE)
	BLOCKS(BLOCK)
	return 1;
}
