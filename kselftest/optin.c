// SPDX-License-Identifier: GPL-2.0
/*
 * Who gets a slot in the inline tail: an sk storage map that asks for one
 * with map_extra BPF_SK_STORAGE_F_INLINE, while the tail has room. A map
 * that does not ask is dynamic at every tail, and no switch of the host
 * changes that. Undefined map_extra bits, and
 * BPF_SK_STORAGE_F_INLINE_REQUIRED without BPF_SK_STORAGE_F_INLINE, are
 * refused. A map that asks and gets no slot is still created; bpf_map_info's
 * sk_storage_placement and its fdinfo say why, and the kernel log says so
 * once. One that requires a slot is refused instead, with the errno of the
 * reason. A slot's bytes count in the map's memlock. A creation refused
 * after its slot was chosen (by an LSM program) gives the slot back for an
 * immediate retry; a freed map that never held a value gives it back
 * without a grace period, and never leaks it; one that held values gives
 * it back for a restarted agent after a grace period.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "optin.skel.h"

#define VALUE_SIZE	8
/* The map optin.bpf.c's LSM program refuses, and the one created after it. */
#define DENIED_NAME	"sk_inline_deny"
#define RETRY_NAME	"sk_inline_retry"

/* Skip unless the tail has room for one slot of VALUE_SIZE when empty. */
#define REQUIRE_SLOT() do {						\
	if (tail_bytes() < slot_size(VALUE_SIZE))			\
		SKIP(return, "no tail that holds a %d-byte value", VALUE_SIZE); \
} while (0)

FIXTURE(optin) {
	char status[64];
	unsigned int off, size;
	long reuse;
};

FIXTURE_SETUP(optin)
{
	self->reuse = read_ulong(REUSE_SYSCTL);
}

/* A test that switched to the leak policy has its policy back. */
FIXTURE_TEARDOWN(optin)
{
	if (self->reuse >= 0)
		write_file(REUSE_SYSCTL, self->reuse ? "1" : "0");
}

/*
 * What map @map got, as bpf_map_info's sk_storage_placement says, and why
 * as its fdinfo says ("" for an inline map): the two agree.
 */
static void expect_placement(struct __test_metadata *_metadata,
			     FIXTURE_DATA(optin) *self, int map,
			     int placement, const char *status)
{
	map_inline_status(map, self->status, sizeof(self->status));
	EXPECT_STREQ(status, self->status);
	EXPECT_EQ(placement, map_placement(map)) {
		TH_LOG("fdinfo says \"%s\"", self->status);
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Whether byte @off of the tail is free: 1 or 0, -1 without the slots view. */
static int slot_is_free(unsigned int off)
{
	const struct layout_range *r;
	struct layout l;

	if (layout_read(&l))
		return -1;
	r = layout_at(&l, off);
	return r && !strcmp(r->state, "free");
}

/* Wait, at most 10 s, until byte @off of the tail is free: 0 or -ETIMEDOUT. */
static int wait_slot_free(unsigned int off)
{
	double t0 = now_ms();

	while (slot_is_free(off) != 1) {
		if (now_ms() - t0 > 10000)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}

/*
 * A socket of a protocol with a tail in this boot, where a value of an
 * inline map lives in the map's slot: UDP, or TCP; -1 if neither has one.
 */
static int tail_socket(void)
{
	if (proto_has_tail("UDP"))
		return socket(AF_INET, SOCK_DGRAM, 0);
	if (proto_has_tail("TCP"))
		return socket(AF_INET, SOCK_STREAM, 0);
	return -1;
}

TEST_F(optin, a_map_that_does_not_ask_is_dynamic_at_every_tail)
{
	int map = create_sk_map_extra(VALUE_SIZE, 0, 0);

	ASSERT_LE(0, map);
	EXPECT_EQ(0, map_slot(map, &self->off, &self->size));
	expect_placement(_metadata, self, map, BPF_SK_STORAGE_DYNAMIC,
			 "not requested");
	close(map);
}

/*
 * No setting of the host gives a map that does not ask a slot: the switch
 * that made every map a candidate is gone. With room in the tail, such a
 * map stays dynamic while one that asks right after it gets a slot.
 */
TEST_F(optin, no_switch_of_the_host_gives_a_map_that_does_not_ask_a_slot)
{
	int not_asked, asked, err;

	err = access(OLD_ALL_MAPS_SYSCTL, F_OK) ? errno : 0;
	EXPECT_EQ(ENOENT, err) {
		TH_LOG("%s is back", OLD_ALL_MAPS_SYSCTL);
	}
	if (!tail_has_room(VALUE_SIZE))
		SKIP(return, "no room for a %d-byte value in the tail", VALUE_SIZE);
	not_asked = create_sk_map_extra(VALUE_SIZE, 0, 0);
	asked = create_sk_map(VALUE_SIZE, 0);
	ASSERT_LE(0, not_asked);
	ASSERT_LE(0, asked);
	EXPECT_EQ(0, map_slot(not_asked, &self->off, &self->size));
	expect_placement(_metadata, self, not_asked, BPF_SK_STORAGE_DYNAMIC,
			 "not requested");
	EXPECT_EQ(1, map_slot(asked, &self->off, &self->size));
	expect_placement(_metadata, self, asked, BPF_SK_STORAGE_INLINE, "");
	close(not_asked);
	EXPECT_EQ(0, close_sk_map(asked));
}

TEST_F(optin, a_map_that_asks_gets_a_slot_while_the_tail_has_room)
{
	bool room = tail_has_room(VALUE_SIZE);
	int map = create_sk_map(VALUE_SIZE, 0);

	ASSERT_LE(0, map);
	EXPECT_EQ(room ? 1 : 0, map_slot(map, &self->off, &self->size));
	if (!tail_bytes())
		expect_placement(_metadata, self, map, BPF_SK_STORAGE_NO_AREA,
				 "no tail");
	else if (room)
		expect_placement(_metadata, self, map, BPF_SK_STORAGE_INLINE, "");
	else if (tail_bytes() < slot_size(VALUE_SIZE))
		expect_placement(_metadata, self, map, BPF_SK_STORAGE_TOO_LARGE,
				 "too large");
	else
		expect_placement(_metadata, self, map, BPF_SK_STORAGE_NO_ROOM,
				 "no room");
	EXPECT_EQ(0, close_sk_map(map));
}

TEST_F(optin, undefined_map_extra_bits_are_refused)
{
	const __u64 bad[] = { 4, 5, 7, 8, 1ULL << 32, 1ULL << 63,
			      SK_INLINE_REQUIRE | 1ULL << 63 };
	int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, create_sk_map_extra(VALUE_SIZE, 0, bad[i])) {
			TH_LOG("map_extra %#llx", (unsigned long long)bad[i]);
		}
	}
}

/* At every tail: a loader that runs on both kernels retries without it. */
TEST_F(optin, required_without_inline_is_refused)
{
	EXPECT_EQ(-EINVAL, create_sk_map_extra(VALUE_SIZE, 0,
					       BPF_SK_STORAGE_F_INLINE_REQUIRED));
}

TEST_F(optin, a_map_that_asks_and_finds_no_room_says_why)
{
	struct sk_fillers f;
	int map;

	REQUIRE_SLOT();
	map = fill_tail(create_sk_map, VALUE_SIZE, &f);
	ASSERT_LE(0, map);
	EXPECT_EQ(0, map_slot(map, &self->off, &self->size));
	expect_placement(_metadata, self, map, BPF_SK_STORAGE_NO_ROOM, "no room");
	/* Once a boot: this test or an earlier one made it print. */
	EXPECT_EQ(1, count_log_lines("bpf_sk_inline: map \"", "got no slot ("));
	EXPECT_EQ(1, count_log_lines("got no slot (",
				     "); its values are dynamic"));
	close(map);
	ASSERT_EQ(0, release_fillers(&f));
}

TEST_F(optin, a_map_that_cannot_live_inline_says_why)
{
	unsigned int tail = tail_bytes();
	int big, clone;

	if (!tail)
		SKIP(return, "no tail");
	/* With its tag, a value of the tail's size does not fit the tail. */
	big = create_sk_map(tail, 0);
	clone = create_sk_map(VALUE_SIZE, BPF_F_CLONE);
	ASSERT_LE(0, big);
	ASSERT_LE(0, clone);
	expect_placement(_metadata, self, big, BPF_SK_STORAGE_TOO_LARGE,
			 "too large");
	expect_placement(_metadata, self, clone, BPF_SK_STORAGE_NOT_INLINABLE,
			 "BPF_F_CLONE or special fields");
	close(big);
	close(clone);
}

TEST_F(optin, a_required_map_that_fits_gets_a_slot)
{
	int map;

	if (!tail_has_room(VALUE_SIZE))
		SKIP(return, "no room for a %d-byte value in the tail", VALUE_SIZE);
	map = create_sk_map_extra(VALUE_SIZE, 0, SK_INLINE_REQUIRE);
	ASSERT_LE(0, map);
	EXPECT_EQ(1, map_slot(map, &self->off, &self->size));
	expect_placement(_metadata, self, map, BPF_SK_STORAGE_INLINE, "");
	EXPECT_EQ(0, close_sk_map(map));
}

/* EOPNOTSUPP says the kernel has no tail, and only then. */
TEST_F(optin, a_required_map_without_a_tail_is_refused_with_eopnotsupp)
{
	if (tail_bytes())
		SKIP(return, "this boot has a tail");
	EXPECT_EQ(-EOPNOTSUPP,
		  create_sk_map_extra(VALUE_SIZE, 0, SK_INLINE_REQUIRE));
}

TEST_F(optin, a_required_map_too_large_for_the_tail_is_refused_with_e2big)
{
	unsigned int tail = tail_bytes();

	if (!tail)
		SKIP(return, "no tail");
	EXPECT_EQ(-E2BIG, create_sk_map_extra(tail, 0, SK_INLINE_REQUIRE));
}

/* The same map that does not require a slot is created, dynamic. */
TEST_F(optin, a_required_clone_map_is_refused_with_einval)
{
	int map;

	if (!tail_bytes())
		SKIP(return, "no tail");
	EXPECT_EQ(-EINVAL, create_sk_map_extra(VALUE_SIZE, BPF_F_CLONE,
					       SK_INLINE_REQUIRE));
	map = create_sk_map(VALUE_SIZE, BPF_F_CLONE);
	ASSERT_LE(0, map);
	expect_placement(_metadata, self, map, BPF_SK_STORAGE_NOT_INLINABLE,
			 "BPF_F_CLONE or special fields");
	close(map);
}

TEST_F(optin, a_required_map_is_refused_with_enospc_once_the_tail_is_full)
{
	struct sk_fillers f;
	int map;

	REQUIRE_SLOT();
	map = fill_tail(create_sk_map, VALUE_SIZE, &f);
	ASSERT_LE(0, map);
	close(map);
	EXPECT_EQ(-ENOSPC, create_sk_map_extra(VALUE_SIZE, 0, SK_INLINE_REQUIRE));
	ASSERT_EQ(0, release_fillers(&f));
}

/* The slot's bytes are the difference in memlock (bpftool map show). */
TEST_F(optin, memlock_counts_the_slot)
{
	int inl, dyn;

	if (!tail_has_room(VALUE_SIZE))
		SKIP(return, "no room for a %d-byte value in the tail", VALUE_SIZE);
	inl = create_sk_map(VALUE_SIZE, 0);
	dyn = create_sk_map_extra(VALUE_SIZE, 0, 0);
	ASSERT_LE(0, inl);
	ASSERT_LE(0, dyn);
	ASSERT_EQ(1, map_slot(inl, &self->off, &self->size));
	EXPECT_EQ(map_fdinfo_long(dyn, "memlock") + self->size,
		  map_fdinfo_long(inl, "memlock"));
	EXPECT_EQ(0, close_sk_map(inl));
	close(dyn);
}

/* With no switch left, the view has no line for it ("maps:"). */
TEST_F(optin, the_slots_view_lives_in_its_own_debugfs_directory)
{
	char buf[16384];
	struct layout l;
	struct stat st;

	ASSERT_EQ(0, stat(INLINE_DEBUGFS, &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	ASSERT_NE(-ENOENT, layout_read(&l));
	EXPECT_EQ(tail_bytes(), l.tail);
	ASSERT_LT(0, read_file(INLINE_LAYOUT, buf, sizeof(buf)));
	EXPECT_EQ(NULL, strstr(buf, "maps:")) {
		TH_LOG("%s", buf);
	}
}

/*
 * A creation refused after the map got its slot (an LSM program on
 * bpf_map_create, which runs after the map's allocation) gives the slot
 * back before the syscall returns: the creator's immediate retry, under
 * another name, gets it. The tail is full but for that one slot, which a
 * filler that never held a value gave back.
 */
TEST_F(optin, a_failed_creation_leaves_the_slot_for_an_immediate_retry)
{
	struct sk_fillers f;
	struct optin *skel;
	unsigned int off;
	int map;

	REQUIRE_SLOT();
	skel = optin__open_and_load();
	ASSERT_NE(NULL, skel);
	map = fill_tail(create_sk_map, VALUE_SIZE, &f);
	ASSERT_LE(0, map);
	close(map);
	ASSERT_LT(0, f.nr);
	off = f.off[--f.nr];
	close(f.fd[f.nr]);
	ASSERT_EQ(0, wait_slot_free(off));
	snprintf(skel->bss->deny_name, sizeof(skel->bss->deny_name), "%s",
		 DENIED_NAME);
	ASSERT_EQ(0, optin__attach(skel));

	EXPECT_EQ(-EPERM, create_sk_map_named(DENIED_NAME, VALUE_SIZE, 0,
					      SK_INLINE_REQUIRE));
	/* The refusal was the LSM program's, after the slot was chosen. */
	EXPECT_EQ(1, skel->bss->denied);
	map = create_sk_map_named(RETRY_NAME, VALUE_SIZE, 0, SK_INLINE_REQUIRE);
	ASSERT_LE(0, map) {
		TH_LOG("the retry: %s", strerror(-map));
	}
	EXPECT_EQ(1, map_slot(map, &self->off, &self->size));
	EXPECT_EQ(off, self->off);
	expect_placement(_metadata, self, map, BPF_SK_STORAGE_INLINE, "");
	optin__destroy(skel);
	EXPECT_EQ(0, close_sk_map(map));
	ASSERT_EQ(0, release_fillers(&f));
}

/*
 * An agent restarted with a new map, the tail otherwise full: its map,
 * which requires a slot and retries on ENOSPC, gets the old map's slot once
 * the old map's free has passed a grace period. The old map held a value
 * in a socket, which may still be read through its slot until then. The
 * wait is logged; the bound is only against a slot that never comes.
 */
TEST_F(optin, a_restarted_map_gets_the_freed_slot_after_a_grace_period)
{
	unsigned int old_off;
	struct sk_fillers f;
	int map, sk, tries = 0;
	double t0, waited;
	__u64 v = 0x5107;

	REQUIRE_SLOT();
	if (read_ulong(REUSE_SYSCTL) != 1)
		SKIP(return, "freed slots are leaked (net.core.bpf_sk_inline_reuse)");
	sk = tail_socket();
	if (sk < 0)
		SKIP(return, "neither UDP nor TCP sockets have a tail in this boot");
	map = fill_tail(create_sk_map, VALUE_SIZE, &f);
	ASSERT_LE(0, map);
	close(map);
	ASSERT_LT(0, f.nr);
	old_off = f.off[--f.nr];
	ASSERT_EQ(0, sys_update(f.fd[f.nr], sk, &v, BPF_NOEXIST));
	t0 = now_ms();
	close(f.fd[f.nr]);
	for (;;) {
		map = create_sk_map_extra(VALUE_SIZE, 0, SK_INLINE_REQUIRE);
		tries++;
		if (map >= 0)
			break;
		ASSERT_EQ(-ENOSPC, map);
		ASSERT_GT(10000, now_ms() - t0);
		usleep(1000);
	}
	waited = now_ms() - t0;
	EXPECT_EQ(1, map_slot(map, &self->off, &self->size));
	EXPECT_EQ(old_off, self->off);
	expect_placement(_metadata, self, map, BPF_SK_STORAGE_INLINE, "");
	TH_LOG("the restarted map got the slot after %.1f ms, %d creates",
	       waited, tries);
	EXPECT_EQ(0, close_sk_map(map));
	close(sk);
	ASSERT_EQ(0, release_fillers(&f));
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* On CPU 1: a bpf() call whose LSM hook holds a grace period open. */
static void *hold_grace_period(void *arg)
{
	struct optin *skel = arg;
	union bpf_attr attr = {};

	__atomic_store_n(&skel->bss->hold_tid, syscall(SYS_gettid),
			 __ATOMIC_SEQ_CST);
	syscall(__NR_bpf, BPF_MAP_GET_NEXT_ID, &attr, sizeof(attr));
	return NULL;
}

static __u32 hold_state(struct optin *skel)
{
	return __atomic_load_n(&skel->bss->hold_state, __ATOMIC_SEQ_CST);
}

/*
 * While a program on CPU 1 holds every grace period back, a map that never
 * held a value is freed: its slot is free again meanwhile. A map that held
 * one, freed in the same window, keeps its slot until the hold ends: the
 * hold did keep grace periods from ending.
 */
TEST_F(optin, a_map_that_never_held_a_value_returns_its_slot_without_a_grace_period)
{
	unsigned int unused_off, used_off;
	const struct layout_range *r;
	int unused, used, sk, freed, i;
	struct sk_fillers f;
	struct optin *skel;
	struct layout l;
	__u64 v = 0x05ed;
	pthread_t th;
	bool held;

	REQUIRE_CPUS(2);
	REQUIRE_SLOT();
	sk = tail_socket();
	if (sk < 0)
		SKIP(return, "neither UDP nor TCP sockets have a tail in this boot");
	ASSERT_EQ(0, pin_cpu(0));
	skel = optin__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, optin__attach(skel));
	used = fill_tail(create_sk_map, VALUE_SIZE, &f);
	ASSERT_LE(0, used);
	close(used);
	if (f.nr < 2) {
		ASSERT_EQ(0, release_fillers(&f));
		SKIP(return, "the tail holds fewer than two %d-byte values",
		     VALUE_SIZE);
	}
	f.nr -= 2;
	unused = f.fd[f.nr + 1];
	unused_off = f.off[f.nr + 1];
	used = f.fd[f.nr];
	used_off = f.off[f.nr];
	ASSERT_EQ(0, sys_update(used, sk, &v, BPF_NOEXIST));

	ASSERT_EQ(0, start_on_cpu1(&th, hold_grace_period, skel));
	for (i = 0; i < 50000 && hold_state(skel) != 1; i++)
		usleep(100);
	ASSERT_EQ(1, hold_state(skel));
	close(unused);
	close(used);
	/* Free seen first, then the hold still on: freed within the hold. */
	do {
		freed = slot_is_free(unused_off);
		held = hold_state(skel) == 1;
		if (freed || !held)
			break;
		usleep(1000);
	} while (1);
	EXPECT_EQ(1, freed);
	EXPECT_TRUE(held) {
		TH_LOG("the hold ended (timed out: %u) before the slot was free",
		       skel->bss->hold_timed_out);
	}
	/* The control: 200 ms later, still within the hold, still held. */
	usleep(200000);
	ASSERT_EQ(0, layout_read(&l));
	r = layout_at(&l, used_off);
	EXPECT_TRUE(r && range_held(r));
	EXPECT_EQ(1, hold_state(skel));

	__atomic_store_n(&skel->bss->hold_release, 1, __ATOMIC_SEQ_CST);
	pthread_join(th, NULL);
	EXPECT_EQ(0, skel->bss->hold_timed_out);
	EXPECT_EQ(0, wait_slot_free(used_off));
	optin__destroy(skel);
	close(sk);
	ASSERT_EQ(0, release_fillers(&f));
}

/*
 * Under the leak policy, a freed map's slot is leaked only if a socket may
 * still hold a value in it: one that never held a value comes back free.
 */
TEST_F(optin, a_map_that_never_held_a_value_leaks_no_slot)
{
	const struct layout_range *r;
	struct layout l;
	long leaked;
	int map;

	if (!tail_has_room(VALUE_SIZE))
		SKIP(return, "no room for a %d-byte value in the tail", VALUE_SIZE);
	ASSERT_LE(0, self->reuse);
	ASSERT_EQ(0, layout_read(&l));
	leaked = l.leaked;
	ASSERT_EQ(0, write_file(REUSE_SYSCTL, "0"));
	map = create_sk_map_extra(VALUE_SIZE, 0, SK_INLINE_REQUIRE);
	ASSERT_LE(0, map);
	ASSERT_EQ(1, map_slot(map, &self->off, &self->size));
	ASSERT_EQ(0, free_map(map));
	ASSERT_EQ(0, layout_read(&l));
	r = layout_at(&l, self->off);
	ASSERT_NE(NULL, r);
	EXPECT_STREQ("free", r->state);
	EXPECT_EQ(leaked, l.leaked);
}

TEST_HARNESS_MAIN
