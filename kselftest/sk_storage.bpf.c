// SPDX-License-Identifier: GPL-2.0
/*
 * Drives bpf_sk_storage_get()/bpf_sk_storage_delete() from user space:
 * setsockopt(fd, SOL_SK_STORAGE_TEST, OPTNAME(map, op), value, len) runs
 * the helpers on the socket, getsockopt() with the same level reads the
 * value the helper returns. Errors come back as the syscall's errno.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(map_a, struct val16);
SK_STORAGE_MAP(map_b, struct val8);
/* Dynamic: user space creates it once the tail is full (attach_driver()). */
SK_STORAGE_MAP(map_dyn, struct val16);
SK_STORAGE_MAP(map_big, struct val_big);

/* The value each racing thread saw after its create, by thread index. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RACE_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct val16);
} race_seen SEC(".maps");

/*
 * @size bytes of the value travel through optval. The helper's initial
 * value must be on the stack or in a map, so it is copied there; the big
 * map's value does not fit on the stack and is created zeroed, then written.
 */
static __always_inline int run(void *map, struct bpf_sockopt *ctx, int op,
			       const int size, const bool on_stack,
			       const bool getsockopt)
{
	void *optval = ctx->optval, *optval_end = ctx->optval_end;
	struct race_cmd cmd = {};
	struct val16 init = {};
	void *data = 0;
	__u32 idx;

	switch (op) {
	case OP_DELETE: {
		int err = bpf_sk_storage_delete(map, ctx->sk);

		if (err)
			bpf_set_retval(err);
		return !err;
	}
	case OP_RACE:
		if (!on_stack || size != sizeof(struct val16) ||
		    optval + sizeof(cmd) > optval_end)
			return 0;
		__builtin_memcpy(&cmd, optval, sizeof(cmd));
		data = bpf_sk_storage_get(map, ctx->sk, &cmd.init,
					  BPF_SK_STORAGE_GET_F_CREATE);
		if (!data)
			break;
		idx = cmd.thread;
		return bpf_map_update_elem(&race_seen, &idx, data, 0) == 0;
	case OP_CREATE:
		if (optval + size > optval_end)
			return 0;
		__builtin_memcpy(&init, optval, size);
		data = bpf_sk_storage_get(map, ctx->sk, on_stack ? &init : 0,
					  BPF_SK_STORAGE_GET_F_CREATE);
		if (data && !on_stack)
			__builtin_memcpy(data, &init, size);
		break;
	case OP_CREATE_ZERO:
		data = bpf_sk_storage_get(map, ctx->sk, 0,
					  BPF_SK_STORAGE_GET_F_CREATE);
		break;
	case OP_GET:
		/* Only getsockopt can return data (and set retval). */
		if (!getsockopt)
			return 0;
		data = bpf_sk_storage_get(map, ctx->sk, 0, 0);
		if (!data)
			break;
		if (optval + size > optval_end)
			return 0;
		__builtin_memcpy(optval, data, size);
		ctx->optlen = size;
		/* Keep the two 4-byte context stores apart: the verifier
		 * refuses the 8-byte store the compiler would merge them into.
		 */
		asm volatile("" ::: "memory");
		ctx->retval = 0;
		return 1;
	}
	if (!data) {
		bpf_set_retval(-ENOENT);
		return 0;
	}
	return 1;
}

#define DISPATCH(ctx, op, get)						\
	switch (MAP_OF(ctx->optname)) {					\
	case MAP_A:							\
		return run(&map_a, ctx, op, sizeof(struct val16), true, get); \
	case MAP_B:							\
		return run(&map_b, ctx, op, sizeof(struct val8), true, get);	\
	case MAP_DYN:							\
		return run(&map_dyn, ctx, op, sizeof(struct val16), true, get); \
	case MAP_BIG:							\
		return run(&map_big, ctx, op, sizeof(struct val16), false, get); \
	}								\
	return 0

SEC("cgroup/setsockopt")
int sk_storage_set(struct bpf_sockopt *ctx)
{
	int op = OP_OF(ctx->optname);

	if (ctx->level != SOL_SK_STORAGE_TEST)
		return 1;
	ctx->optlen = -1;	/* handled here, the kernel never sees it */
	if (op == OP_GET)
		return 0;
	DISPATCH(ctx, op, false);
}

SEC("cgroup/getsockopt")
int sk_storage_get(struct bpf_sockopt *ctx)
{
	if (ctx->level != SOL_SK_STORAGE_TEST)
		return 1;
	if (OP_OF(ctx->optname) != OP_GET)
		return 0;
	DISPATCH(ctx, OP_GET, true);
}
