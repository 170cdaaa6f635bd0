// SPDX-License-Identifier: GPL-2.0
/*
 * A socket's destructors (the protocol's sk_destruct(), security_sk_free(),
 * put_net()) run where the protocol has always run them, whether or not
 * the socket held inline values: in the task that closes the last
 * reference, at once, or, for protocols that free their sockets after a
 * grace period themselves (SOCK_RCU_FREE: raw, AF_XDP), from an RCU
 * callback. Only the memory of a socket that held a value waits for a
 * grace period. The boot without a tail checks the table. Netlink is left
 * out: its release defers the socket's free to RCU itself, tail or not.
 */
#include <sys/socket.h>
#include <netinet/in.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "sock_kinds.h"
#include "destruct.skel.h"

/* Text symbols of the running kernel, sorted by address. */
struct ksym {
	unsigned long long addr;
	char name[64];
};

static struct ksym *ksyms;
static int nr_ksyms;

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int load_ksyms(void)
{
	char line[512], type;
	int cap = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct ksym k;

		if (sscanf(line, "%llx %c %63s", &k.addr, &type, k.name) != 3 ||
		    (type != 't' && type != 'T'))
			continue;
		if (nr_ksyms == cap) {
			cap = cap ? 2 * cap : 65536;
			ksyms = realloc(ksyms, cap * sizeof(*ksyms));
			if (!ksyms)
				return -ENOMEM;
		}
		ksyms[nr_ksyms++] = k;
	}
	fclose(f);
	qsort(ksyms, nr_ksyms, sizeof(*ksyms), ksym_cmp);
	return nr_ksyms ? 0 : -ENOENT;
}

static const char *ksym_name(unsigned long long addr)
{
	int lo = 0, hi = nr_ksyms - 1, mid;

	if (!nr_ksyms || addr < ksyms[0].addr)
		return "?";
	while (lo < hi) {
		mid = (lo + hi + 1) / 2;
		if (ksyms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid - 1;
	}
	return ksyms[lo].name;
}

/* The frame of the recorded stack that runs softirqs or RCU callbacks. */
static const char *deferred_frame(const struct destruct *skel)
{
	static const char * const deferred[] = {
		"rcu_do_batch", "rcu_core", "handle_softirqs", "__do_softirq",
		"run_ksoftirqd", "process_one_work",
	};
	int n = skel->bss->freed_stack_bytes / sizeof(__u64), i;
	size_t j;

	for (i = 0; i < n; i++)
		for (j = 0; j < sizeof(deferred) / sizeof(deferred[0]); j++)
			if (!strcmp(ksym_name(skel->bss->freed_stack[i]), deferred[j]))
				return deferred[j];
	return NULL;
}

FIXTURE(destruct) {
	struct destruct *skel;
	int map;
};

FIXTURE_SETUP(destruct)
{
	ASSERT_EQ(0, load_ksyms());
	self->skel = destruct__open_and_load();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, destruct__attach(self->skel));
	self->map = bpf_map__fd(self->skel->maps.map);
}

FIXTURE_TEARDOWN(destruct)
{
	destruct__destroy(self->skel);
	free(ksyms);
	ksyms = NULL;
	nr_ksyms = 0;
}

/*
 * Open a socket of @k with a value of the test's map and @mark, close it,
 * and wait up to a second for its destruction to be seen; -errno when the
 * socket cannot be set up as asked.
 */
static int close_with_value(FIXTURE_DATA(destruct) *self,
			    const struct sock_kind *k, __u32 mark, bool *at_once)
{
	struct val8 v = { .a = mark };
	int fd, err, i;

	fd = socket(k->family, k->type, k->protocol);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark))) {
		err = -errno;
		close(fd);
		return err;
	}
	err = sys_update(self->map, fd, &v, BPF_NOEXIST);
	if (!err)
		err = sys_lookup(self->map, fd, &v);
	if (err) {
		close(fd);
		return err;
	}
	self->skel->bss->freed = 0;
	self->skel->bss->mark = mark;
	close(fd);
	*at_once = self->skel->bss->freed;
	for (i = 0; i < 100 && !self->skel->bss->freed; i++)
		usleep(10000);
	self->skel->bss->mark = 0;
	return 0;
}

/* The families vm/kernel.config always builds; the others may be absent. */
static bool family_required(int family)
{
	return family == AF_UNIX || family == AF_INET || family == AF_INET6 ||
	       family == AF_PACKET;
}

TEST_F(destruct, destructors_run_in_the_closing_task)
{
	unsigned int i, off, size, tested = 0, inline_values = 0;
	int slot = map_slot(self->map, &off, &size);
	char status[32];

	/* The map asks for a slot: at a tail it gets one unless earlier
	 * tests of this boot leaked the room, and the values of sockets
	 * whose protocol has the tail are then inline.
	 */
	map_inline_status(self->map, status, sizeof(status));
	if (!tail_bytes()) {
		ASSERT_EQ(0, slot);
	} else if (slot != 1) {
		ASSERT_TRUE(!strcmp(status, "no room") ||
			    !strcmp(status, "too large")) TH_LOG("%s", status);
	}
	for (i = 0; i < NR_SOCK_KINDS; i++) {
		const struct sock_kind *k = &sock_kinds[i];
		bool at_once = false;
		int err;

		if (!(k->tests & KIND_DESTRUCT))
			continue;
		err = close_with_value(self, k, 0x5e5e0000 + i, &at_once);
		if (err == -EAFNOSUPPORT || err == -EPROTONOSUPPORT) {
			EXPECT_FALSE(family_required(k->family)) {
				TH_LOG("%s: missing from this kernel (%d)", k->name, err);
			}
			TH_LOG("%s: not in this kernel (%d)", k->name, err);
			continue;
		}
		ASSERT_EQ(0, err) TH_LOG("%s", k->name);
		tested++;
		if (slot == 1 && proto_has_tail(k->proto))
			inline_values++;
		EXPECT_EQ(1, self->skel->bss->freed) TH_LOG("%s", k->name);
		EXPECT_EQ(k->family, self->skel->bss->freed_family) TH_LOG("%s", k->name);
		EXPECT_LT(0, self->skel->bss->freed_stack_bytes) TH_LOG("%s", k->name);
		if (k->rcu_freed) {
			EXPECT_NE(NULL, deferred_frame(self->skel))
				TH_LOG("%s: not destructed from RCU", k->name);
			continue;
		}
		EXPECT_TRUE(at_once) TH_LOG("%s: destructed later", k->name);
		EXPECT_EQ(getpid(), self->skel->bss->freed_tgid) TH_LOG("%s", k->name);
		EXPECT_EQ(NULL, deferred_frame(self->skel))
			TH_LOG("%s: destructed under %s", k->name, deferred_frame(self->skel));
	}
	/* TCP and UDP have the tail by default: some values were inline. */
	if (slot == 1) {
		EXPECT_LT(0, inline_values);
	}
	TH_LOG("%u kinds, %u with inline values", tested, inline_values);
}

TEST_HARNESS_MAIN
