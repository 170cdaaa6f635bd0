// SPDX-License-Identifier: GPL-2.0
/*
 * Programs that run inside the sections that create and delete inline
 * values, and create and delete values themselves.
 *
 * give_value, an LSM program, gives each new socket of the test's workers
 * a value of an inline map, deletes it and creates it again: its first
 * creation links the socket into the registry (a bucket's raw spinlock,
 * released by _raw_spin_unlock_irqrestore()), and every creation charges
 * the map's owner (obj_cgroup_charge()). It marks its CPU while it runs.
 *
 * Two fentry programs, on _raw_spin_unlock_irqrestore() and on
 * obj_cgroup_charge(), then delete and create values of the same map in
 * the worker's own sockets, found in its file table: "kept" ones, which
 * hold a value from the start, at every run in a worker, and "fresh"
 * ones, which the worker replaces each round, only while give_value runs
 * on the CPU, so that their first value, which takes a registry bucket's
 * lock, is created inside the section that holds one. A kernel without a
 * guard takes that lock again there (a deadlock when both sockets hash to
 * one bucket); with it, the nested creation or deletion fails instead.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sk_storage_test.h"
#include "sk_storage_maps.bpf.h"

#define EPERM		1
#define EBUSY		16

/* As in reentry.c: the file descriptors of the two sets of sockets. */
#define KEPT_FD		40
#define NR_KEPT		8
#define FRESH_FD	48
#define NR_FRESH	16
#define NR_WORKERS	2

#define VALUE_MAGIC	0x5e5e0000ULL

char _license[] SEC("license") = "GPL";

SK_STORAGE_MAP(map, struct val16);

/* Whether give_value is running on this CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} in_workload SEC(".maps");

/* Set by each worker to its pid: the programs act for these only. */
__u32 worker_pid[NR_WORKERS];
/* Set while a worker makes its fresh sockets: give_value leaves them alone. */
bool filling[NR_WORKERS];

/* give_value's outcome */
__u64 given, give_failed, deleted, delete_failed;

enum { ON_UNLOCK, ON_CHARGE, NR_HOOKS };

struct reentry_stats {
	__u64 runs;		/* runs in a worker */
	__u64 in_workload;	/* of those, while give_value ran */
	__u64 refused;		/* a deletion or creation refused: inside a section */
	__u64 succeeded;	/* a deletion done, or a value got */
	__u64 hardirq;		/* the helpers refuse hard interrupts: not counted */
};

struct reentry_stats stats[NR_HOOKS];

/* The current task's worker index, or -1. */
static int worker(void)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (!pid)
		return -1;
	if (pid == worker_pid[0])
		return 0;
	if (pid == worker_pid[1])
		return 1;
	return -1;
}

static __u32 *workload_flag(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&in_workload, &zero);
}

SEC("lsm/socket_post_create")
int BPF_PROG(give_value, struct socket *sock, int family, int type,
	     int protocol, int kern)
{
	__u32 *flag = workload_flag();
	struct sock *sk = sock->sk;
	int w = worker();
	struct val16 *v;

	if (kern || !sk || !flag || w < 0 || filling[w & 1])
		return 0;
	*flag = 1;
	v = bpf_sk_storage_get(&map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!v) {
		__sync_fetch_and_add(&give_failed, 1);
		goto out;
	}
	/* A delete and a second creation: the delete section, and a claim
	 * of a socket that is linked already.
	 */
	if (bpf_sk_storage_delete(&map, sk)) {
		__sync_fetch_and_add(&delete_failed, 1);
		goto out;
	}
	__sync_fetch_and_add(&deleted, 1);
	v = bpf_sk_storage_get(&map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!v) {
		__sync_fetch_and_add(&give_failed, 1);
		goto out;
	}
	v->a = VALUE_MAGIC | family;
	v->b = bpf_get_current_pid_tgid() >> 32;
	__sync_fetch_and_add(&given, 1);
out:
	*flag = 0;
	return 0;
}

/*
 * Delete and create the value of the socket at @fd of the current task, if
 * any. The worker keeps its descriptors below 64, in the file table's own
 * array, which does not move.
 */
static __always_inline void reenter_fd(struct reentry_stats *s,
				       struct files_struct *files, int fd)
{
	struct socket *sock;
	struct file *file;
	struct sock *sk;
	struct val16 *v;
	long err;

	file = files->fd_array[fd];
	if (!file)
		return;
	sock = bpf_sock_from_file(file);
	if (!sock)
		return;
	sk = sock->sk;
	if (!sk)
		return;
	err = bpf_sk_storage_delete(&map, sk);
	if (err == -EPERM) {
		__sync_fetch_and_add(&s->hardirq, 1);
		return;
	}
	v = bpf_sk_storage_get(&map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	/*
	 * Nothing else touches the worker's sockets, and its memcg has no
	 * limit: a busy delete or a missing value means the CPU was inside
	 * a section (a socket that had no value returns -ENOENT first).
	 */
	if (err == -EBUSY || !v)
		__sync_fetch_and_add(&s->refused, 1);
	if (!err)
		__sync_fetch_and_add(&s->succeeded, 1);
	if (v)
		__sync_fetch_and_add(&s->succeeded, 1);
}

static __always_inline void reenter(int hook)
{
	struct reentry_stats *s = &stats[hook];
	struct files_struct *files;
	__u32 *flag = workload_flag();
	bool nested;
	int i;

	if (!flag || worker() < 0)
		return;
	files = bpf_get_current_task_btf()->files;
	if (!files)
		return;
	nested = *flag;
	__sync_fetch_and_add(&s->runs, 1);
	if (nested)
		__sync_fetch_and_add(&s->in_workload, 1);
#pragma unroll
	for (i = 0; i < NR_KEPT; i++)
		reenter_fd(s, files, KEPT_FD + i);
	if (!nested)
		return;
#pragma unroll
	for (i = 0; i < NR_FRESH; i++)
		reenter_fd(s, files, FRESH_FD + i);
}

/* Runs with the lock still held: a registry bucket's, in a first creation. */
SEC("fentry/_raw_spin_unlock_irqrestore")
int BPF_PROG(on_unlock, raw_spinlock_t *lock, unsigned long flags)
{
	reenter(ON_UNLOCK);
	return 0;
}

/* Runs where a creation charges the map's owner. */
SEC("fentry/obj_cgroup_charge")
int BPF_PROG(on_charge, struct obj_cgroup *objcg, gfp_t gfp, size_t size)
{
	reenter(ON_CHARGE);
	return 0;
}
