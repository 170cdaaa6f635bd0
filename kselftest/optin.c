// SPDX-License-Identifier: GPL-2.0
/*
 * Who gets a slot in the inline tail: an sk storage map that asks for one
 * with map_extra 1, while the tail has room. A map that does not ask is
 * dynamic at every tail, unless the operator sets
 * net.core.bpf_sk_inline_all_maps. Undefined map_extra bits are refused.
 * A map that asks and gets no slot is still created; its fdinfo says why,
 * and the kernel log says so once. A slot's bytes count in the map's
 * memlock, and a freed map's slot comes back for a restarted agent after a
 * grace period.
 */
#include <sys/stat.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"

#define VALUE_SIZE	8

FIXTURE(optin) {
	char all_maps[16];
	char status[64];
	unsigned int off, size;
};

/* Without the switch (a kernel before it), every map may be inline. */
FIXTURE_SETUP(optin)
{
	if (read_file(ALL_MAPS_SYSCTL, self->all_maps,
		      sizeof(self->all_maps)) <= 0) {
		self->all_maps[0] = '\0';
		return;
	}
	ASSERT_EQ(0, write_file(ALL_MAPS_SYSCTL, "0"));
}

FIXTURE_TEARDOWN(optin)
{
	if (self->all_maps[0])
		write_file(ALL_MAPS_SYSCTL, self->all_maps);
}

TEST_F(optin, a_map_that_does_not_ask_is_dynamic_at_every_tail)
{
	int map = create_sk_map_extra(VALUE_SIZE, 0, 0);

	ASSERT_LE(0, map);
	EXPECT_EQ(0, map_slot(map, &self->off, &self->size));
	map_inline_status(map, self->status, sizeof(self->status));
	EXPECT_STREQ("not requested", self->status);
	close(map);
}

TEST_F(optin, a_map_that_asks_gets_a_slot_while_the_tail_has_room)
{
	bool room = tail_has_room(VALUE_SIZE);
	int map = create_sk_map(VALUE_SIZE, 0);

	ASSERT_LE(0, map);
	EXPECT_EQ(room ? 1 : 0, map_slot(map, &self->off, &self->size));
	map_inline_status(map, self->status, sizeof(self->status));
	if (!tail_bytes()) {
		EXPECT_STREQ("no tail", self->status);
	} else if (room) {
		EXPECT_STREQ("", self->status);
	}
	EXPECT_EQ(0, close_sk_map(map));
}

TEST_F(optin, undefined_map_extra_bits_are_refused)
{
	const __u64 bad[] = { 2, 3, 1ULL << 32, 1ULL << 63 };
	int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, create_sk_map_extra(VALUE_SIZE, 0, bad[i])) {
			TH_LOG("map_extra %#llx", (unsigned long long)bad[i]);
		}
	}
}

TEST_F(optin, the_operator_switch_gives_maps_that_do_not_ask_a_slot)
{
	int on, off;

	if (!tail_has_room(VALUE_SIZE))
		SKIP(return, "no room for a %d-byte value in the tail", VALUE_SIZE);
	ASSERT_EQ(0, write_file(ALL_MAPS_SYSCTL, "1"));
	on = create_sk_map_extra(VALUE_SIZE, 0, 0);
	ASSERT_EQ(0, write_file(ALL_MAPS_SYSCTL, "0"));
	off = create_sk_map_extra(VALUE_SIZE, 0, 0);
	ASSERT_LE(0, on);
	ASSERT_LE(0, off);
	EXPECT_EQ(1, map_slot(on, &self->off, &self->size));
	EXPECT_EQ(0, map_slot(off, &self->off, &self->size));
	EXPECT_EQ(0, close_sk_map(on));
	close(off);
}

TEST_F(optin, a_map_that_asks_and_finds_no_room_says_why)
{
	struct sk_fillers f;
	int map;

	if (!tail_bytes())
		SKIP(return, "no tail");
	map = fill_tail(create_sk_map, VALUE_SIZE, &f);
	ASSERT_LE(0, map);
	EXPECT_EQ(0, map_slot(map, &self->off, &self->size));
	map_inline_status(map, self->status, sizeof(self->status));
	EXPECT_STREQ("no room", self->status);
	/* Once a boot: this test or an earlier one made it print. */
	EXPECT_EQ(1, count_log_lines("bpf_sk_inline: map", "got none"));
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
	map_inline_status(big, self->status, sizeof(self->status));
	EXPECT_STREQ("too large", self->status);
	map_inline_status(clone, self->status, sizeof(self->status));
	EXPECT_STREQ("special fields", self->status);
	close(big);
	close(clone);
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

TEST_F(optin, the_slots_view_lives_in_its_own_debugfs_directory)
{
	struct layout l;
	struct stat st;

	ASSERT_EQ(0, stat(INLINE_DEBUGFS, &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	ASSERT_NE(-ENOENT, layout_read(&l));
	EXPECT_STREQ("requested", l.maps);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * An agent restarted with a new map, the tail otherwise full: its map gets
 * the old map's slot once the old map's free has passed a grace period.
 * The wait is logged; the bound is only against a slot that never comes.
 */
TEST_F(optin, a_restarted_map_gets_the_freed_slot_after_a_grace_period)
{
	unsigned int old_off, off, size;
	struct sk_fillers f;
	int map, tries = 0;
	double t0, waited;

	if (!tail_bytes())
		SKIP(return, "no tail");
	if (read_ulong(REUSE_SYSCTL) != 1)
		SKIP(return, "freed slots are leaked (net.core.bpf_sk_inline_reuse)");
	map = fill_tail(create_sk_map, VALUE_SIZE, &f);
	ASSERT_LE(0, map);
	close(map);
	ASSERT_LT(0, f.nr);
	old_off = f.off[--f.nr];
	t0 = now_ms();
	close(f.fd[f.nr]);
	for (;;) {
		map = create_sk_map(VALUE_SIZE, 0);
		ASSERT_LE(0, map);
		tries++;
		if (map_slot(map, &off, &size) == 1)
			break;
		close(map);
		ASSERT_GT(10000, now_ms() - t0);
		usleep(1000);
	}
	waited = now_ms() - t0;
	EXPECT_EQ(old_off, off);
	TH_LOG("the restarted map got the slot after %.1f ms, %d creates",
	       waited, tries);
	EXPECT_EQ(0, close_sk_map(map));
	ASSERT_EQ(0, release_fillers(&f));
}

TEST_HARNESS_MAIN
