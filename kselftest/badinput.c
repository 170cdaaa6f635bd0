// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input gets a clear error and changes nothing: the sysctls of inline
 * sk storage, sk storage map value sizes around the space left in the tail
 * and at the upstream maximum, map_flags bit 19 (no flag chooses the
 * path), and map syscalls on descriptors that are not sockets or with bad flags.
 * Every row reads back what it could have changed. What is expected follows
 * the tail in effect (the last sysctl.net.core.bpf_sk_inline_bytes= of the
 * command line, rounded up, or 0).
 */
#include <sys/eventfd.h>

#include "badinput.h"

/*
 * The sysctls. The tail is fixed at boot: its file is read-only (0444),
 * and every write to it, of any input, fails with EACCES, for root too.
 * The policies take 0 and 1 at any time; anything else is EINVAL. Every
 * row leaves the value as it found it.
 */
FIXTURE(knob) {
	char before[64];
	long value;
	bool present;
};

FIXTURE_VARIANT(knob) {
	const char *path;
	const char *too_large;	/* the first value out of range */
	bool read_only;
};

FIXTURE_VARIANT_ADD(knob, inline_bytes) {
	.path = INLINE_BYTES_SYSCTL,
	.too_large = "1025\n",
	.read_only = true,
};

FIXTURE_VARIANT_ADD(knob, reuse) {
	.path = REUSE_PATH,
	.too_large = "2\n",
};

FIXTURE_VARIANT_ADD(knob, charge) {
	.path = CHARGE_SYSCTL,
	.too_large = "2\n",
};

FIXTURE_SETUP(knob)
{
	self->present = !access(variant->path, F_OK);
	if (!self->present && !strcmp(variant->path, CHARGE_SYSCTL))
		SKIP(return, "%s does not exist: this kernel has no memcg charging policy",
		     variant->path);
	ASSERT_LE(0, read_file(variant->path, self->before, sizeof(self->before)));
	self->value = strtol(self->before, NULL, 10);
	if (variant->read_only) {
		ASSERT_EQ(expected_inline_bytes(), self->value);
	} else {
		ASSERT_TRUE(self->value == 0 || self->value == 1);
	}
}

FIXTURE_TEARDOWN(knob)
{
	struct layout l;
	char now[64];

	if (!self->present)
		return;
	ASSERT_LE(0, read_file(variant->path, now, sizeof(now)));
	ASSERT_STREQ(self->before, now);
	/* The allocator still sees the tail the sockets were sized with. */
	if (variant->read_only) {
		ASSERT_EQ(0, layout_read(&l));
		ASSERT_EQ(self->value, l.tail);
	}
}

/*
 * The knob refuses @input with @expected, or takes it for 0; the
 * read-only one refuses everything with EACCES.
 */
static void reject(struct __test_metadata *_metadata,
		   const FIXTURE_VARIANT(knob) *variant, const char *input,
		   int expected)
{
	if (variant->read_only)
		expected = -EACCES;
	ASSERT_EQ(expected, write_raw(variant->path, input, strlen(input))) {
		TH_LOG("writing \"%s\" to %s", input, variant->path);
	}
}

/* A test that @input is refused with EINVAL (EACCES: read-only). */
#define REFUSED(name, input)						\
	TEST_F(knob, name)						\
	{								\
		reject(_metadata, variant, input, -EINVAL);		\
	}

REFUSED(minus_one_is_refused, "-1\n")
REFUSED(a_value_beyond_32_bits_is_refused, "4294967296\n")
REFUSED(a_value_beyond_64_bits_is_refused, "99999999999999999999\n")
REFUSED(the_first_value_out_of_range_is_refused, variant->too_large)
REFUSED(non_numeric_text_is_refused, "abc\n")
REFUSED(a_number_followed_by_text_is_refused, "1abc\n")
REFUSED(an_empty_line_is_refused, "\n")

/* A write of nothing succeeds, but on the read-only file, which no write opens. */
TEST_F(knob, a_zero_length_write_changes_nothing)
{
	reject(_metadata, variant, "", 0);
}

/*
 * An unaligned tail, even one that rounds up to the value in effect, is
 * refused as any write is. The policies have no alignment; a fraction is
 * not a number for them.
 */
TEST_F(knob, an_unaligned_value_is_refused)
{
	char val[32];

	if (!variant->read_only) {
		reject(_metadata, variant, "0.5\n", -EINVAL);
		return;
	}
	snprintf(val, sizeof(val), "%ld\n", self->value ? self->value - 4 : 4);
	reject(_metadata, variant, val, -EACCES);
}

/* After boot, the tail takes no other valid value (EACCES); the policies do. */
TEST_F(knob, another_valid_value_after_boot)
{
	long other = variant->read_only ?
		     (self->value == INLINE_MAX_BYTES ? 8 : self->value + 8) :
		     !self->value;
	char val[32];

	snprintf(val, sizeof(val), "%ld\n", other);
	if (variant->read_only) {
		reject(_metadata, variant, val, -EACCES);
		return;
	}
	ASSERT_EQ(0, write_raw(variant->path, val, strlen(val)));
	EXPECT_EQ(other, read_ulong(variant->path));
	ASSERT_EQ(0, write_raw(variant->path, self->before, strlen(self->before)));
}

/*
 * The policies take the value they show; the tail's file refuses even
 * that (do_sysctl_args() leaves it alone: the kernel took the command
 * line's value before the initcalls).
 */
TEST_F(knob, the_value_in_effect_is_written_back_only_where_writable)
{
	reject(_metadata, variant, self->before, 0);
}

/*
 * Value sizes around the room left in the tail (its largest free range:
 * the whole tail when nothing holds a slot), and the upstream limit.
 */
FIXTURE(sizes) {
	struct layout before;
	long tail;
	unsigned int room, room_off;
	int fd;
};

FIXTURE_SETUP(sizes)
{
	self->fd = -1;
	self->tail = tail_in_effect(_metadata, &self->before);
	self->room = layout_room(&self->before, &self->room_off);
	TH_LOG("tail %ld: used %ld, leaked %ld, free %ld, largest free range %u at %u",
	       self->tail, self->before.used, self->before.leaked,
	       self->before.free, self->room, self->room_off);
	ASSERT_LE(self->room, self->before.free);
	if (!self->before.used && !self->before.leaked) {
		ASSERT_EQ(self->tail, self->room);
	}
}

FIXTURE_TEARDOWN(sizes)
{
	struct layout after;

	if (self->fd >= 0)
		close(self->fd);
	/* Whatever the row created is gone again, and nothing else moved. */
	ASSERT_EQ(0, layout_settled(&after));
	ASSERT_EQ(self->before.free, after.free);
	ASSERT_EQ(self->before.leaked, after.leaked);
}

/*
 * Create a map of @size: inline in the expected place (the room found in
 * setup) or dynamic with no change to the layout; a value round-trips.
 */
static void check_map(struct __test_metadata *_metadata,
		      FIXTURE_DATA(sizes) *self, unsigned int size,
		      bool want_inline)
{
	unsigned char *in = malloc(size), *out = malloc(size);
	int sk = socket(AF_INET, SOCK_DGRAM, 0);
	unsigned int off, slot;
	const struct layout_range *r;
	struct layout now;

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	ASSERT_LE(0, sk);
	self->fd = sk_map_create(size, 0);
	ASSERT_LE(0, self->fd) {
		TH_LOG("value_size %u: %s", size, strerror(-self->fd));
	}
	ASSERT_EQ(want_inline, map_slot(self->fd, &off, &slot)) {
		TH_LOG("value_size %u: %s", size, map_storage(self->fd));
	}
	ASSERT_EQ(0, layout_read(&now));
	if (want_inline) {
		ASSERT_EQ(self->room_off, off);
		ASSERT_EQ(slot_bytes(size), slot);
		r = layout_find(&now, map_id(self->fd));
		ASSERT_NE(NULL, r);
		ASSERT_EQ(off, r->off);
		ASSERT_EQ(slot, r->size);
		ASSERT_EQ(self->before.free - slot, now.free);
	} else {
		ASSERT_EQ(NULL, layout_find(&now, map_id(self->fd)));
		ASSERT_EQ(self->before.free, now.free);
	}
	memset(in, 0xa5, size);
	in[size - 1] = 0x5a;
	ASSERT_EQ(0, bpf_map_update_elem(self->fd, &sk, in, BPF_NOEXIST));
	ASSERT_EQ(0, bpf_map_lookup_elem(self->fd, &sk, out));
	ASSERT_EQ(0, memcmp(in, out, size));
	close(sk);
	free(in);
	free(out);
}

/* With no room (tail 0, or 8 bytes) even the smallest value is dynamic. */
static bool no_room(struct __test_metadata *_metadata, FIXTURE_DATA(sizes) *self)
{
	if (self->room > SLOT_HDR)
		return false;
	TH_LOG("%u bytes of room: no value fits, a 1-byte value is dynamic",
	       self->room);
	check_map(_metadata, self, 1, false);
	return true;
}

TEST_F(sizes, a_value_that_exactly_fills_the_room_is_inline)
{
	if (!no_room(_metadata, self))
		check_map(_metadata, self, self->room - SLOT_HDR, true);
}

TEST_F(sizes, a_value_one_byte_smaller_is_inline_in_the_same_slot)
{
	if (!no_room(_metadata, self))
		check_map(_metadata, self, self->room - SLOT_HDR - 1, true);
}

TEST_F(sizes, a_value_one_byte_larger_than_the_room_is_dynamic_and_works)
{
	if (!no_room(_metadata, self))
		check_map(_metadata, self, self->room - SLOT_HDR + 1, false);
}

/*
 * BPF_LOCAL_STORAGE_MAX_VALUE_SIZE: min(KMALLOC_MAX_SIZE - MAX_BPF_STACK,
 * U16_MAX) - sizeof(struct bpf_local_storage_elem), the element's size
 * taken from the kernel's BTF.
 */
static long upstream_max_value_size(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	long elem = -1;
	int id;

	if (!btf)
		return -1;
	id = btf__find_by_name_kind(btf, "bpf_local_storage_elem", BTF_KIND_STRUCT);
	if (id > 0)
		elem = btf__type_by_id(btf, id)->size;
	btf__free(btf);
	return elem < 0 ? -1 : 65535 - elem;
}

TEST_F(sizes, the_upstream_maximum_is_accepted_and_one_more_byte_is_not)
{
	long max = upstream_max_value_size();

	ASSERT_LT(0, max);
	TH_LOG("BPF_LOCAL_STORAGE_MAX_VALUE_SIZE: %ld", max);
	ASSERT_EQ(-E2BIG, sk_map_create(max + 1, 0));
	ASSERT_EQ(-E2BIG, sk_map_create(65535, 0));
	check_map(_metadata, self, max, false);
}

TEST_F(sizes, a_zero_value_size_is_refused)
{
	ASSERT_EQ(-EINVAL, sk_map_create(0, 0));
}

/*
 * sk storage takes no flag that chooses the path: map_flags bit 19 (a
 * per-map opt-out once, upstream's BPF_F_RB_OVERWRITE later) is refused as
 * by the unpatched kernel, for a value that would fit and one that would
 * not, and creates nothing: no map id, no slot.
 */
TEST_F(sizes, map_flags_bit_19_is_refused_and_creates_nothing)
{
	static const unsigned int value_sizes[] = { 8, 2048 };
	__u32 last = 0, id = 0;
	struct layout now;
	unsigned int k;

	while (!bpf_map_get_next_id(id, &id))
		last = id;
	for (k = 0; k < ARRAY_SIZE(value_sizes); k++) {
		self->fd = sk_map_create(value_sizes[k], 1U << 19);
		ASSERT_EQ(-EINVAL, self->fd) {
			TH_LOG("value_size %u: the map is %s", value_sizes[k],
			       self->fd >= 0 ? map_storage(self->fd) : "not made");
		}
	}
	id = last;
	ASSERT_NE(0, bpf_map_get_next_id(id, &id));
	ASSERT_EQ(ENOENT, errno);
	ASSERT_EQ(0, layout_read(&now));
	ASSERT_EQ(self->before.used, now.used);
	ASSERT_EQ(self->before.free, now.free);
}

/*
 * Map syscalls with bad descriptors and flags, on an inline map (when the
 * tail has room for it) and on a dynamic one of the same value size,
 * created after it with the tail full: the same errno as the dynamic path,
 * and a value already stored stays as it was.
 */
FIXTURE(fds) {
	int map[2];
	int pipe[2];
	int sk;
	__u64 stored[2][2];
	struct layout before;
};

FIXTURE_SETUP(fds)
{
	unsigned int off, size, room;
	long tail;
	int i;

	tail = tail_in_effect(_metadata, &self->before);
	room = layout_room(&self->before, &off);
	self->map[0] = sk_map_create(16, 0);
	self->map[1] = sk_map_create_dynamic(16);
	ASSERT_LE(0, self->map[0]);
	ASSERT_LE(0, self->map[1]);
	ASSERT_EQ(room >= slot_bytes(16), map_slot(self->map[0], &off, &size)) {
		TH_LOG("tail %ld, room %u: the map is %s", tail, room,
		       map_storage(self->map[0]));
	}
	ASSERT_EQ(0, map_slot(self->map[1], &off, &size));
	ASSERT_EQ(0, pipe(self->pipe));
	self->sk = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, self->sk);
	for (i = 0; i < 2; i++) {
		self->stored[i][0] = 0x5107ed00 + i;
		self->stored[i][1] = ~0ULL - i;
		ASSERT_EQ(0, bpf_map_update_elem(self->map[i], &self->sk,
						 self->stored[i], BPF_NOEXIST));
	}
}

FIXTURE_TEARDOWN(fds)
{
	__u64 out[2];
	int i;

	/* What the socket held before the bad calls is still there. */
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, bpf_map_lookup_elem(self->map[i], &self->sk, out));
		EXPECT_EQ(0, memcmp(self->stored[i], out, sizeof(out)));
	}
	close(self->sk);
	close(self->map[0]);
	close(self->map[1]);
	close(self->pipe[0]);
	close(self->pipe[1]);
}

/* Update, lookup and delete with @fd as the key all fail with @expected. */
static void every_op_fails(struct __test_metadata *_metadata, int map, int fd,
			   int expected)
{
	__u64 value[2] = { 1, 2 };

	ASSERT_NE(0, bpf_map_update_elem(map, &fd, value, BPF_ANY));
	ASSERT_EQ(expected, errno);
	ASSERT_NE(0, bpf_map_update_elem(map, &fd, value, BPF_NOEXIST));
	ASSERT_EQ(expected, errno);
	ASSERT_NE(0, bpf_map_lookup_elem(map, &fd, value));
	ASSERT_EQ(expected, errno);
	ASSERT_NE(0, bpf_map_delete_elem(map, &fd));
	ASSERT_EQ(expected, errno);
}

TEST_F(fds, a_pipe_is_not_a_socket_on_either_path)
{
	int i;

	for (i = 0; i < 2; i++) {
		every_op_fails(_metadata, self->map[i], self->pipe[0], ENOTSOCK);
		every_op_fails(_metadata, self->map[i], self->pipe[1], ENOTSOCK);
	}
}

TEST_F(fds, other_descriptors_are_not_sockets_either)
{
	int i, efd = eventfd(0, 0), file = open("/proc/self/stat", O_RDONLY);

	ASSERT_LE(0, efd);
	ASSERT_LE(0, file);
	for (i = 0; i < 2; i++) {
		every_op_fails(_metadata, self->map[i], efd, ENOTSOCK);
		every_op_fails(_metadata, self->map[i], file, ENOTSOCK);
		every_op_fails(_metadata, self->map[i], self->map[i], ENOTSOCK);
	}
	close(efd);
	close(file);
}

TEST_F(fds, a_closed_descriptor_is_a_bad_one_on_either_path)
{
	int i, fd = socket(AF_INET, SOCK_DGRAM, 0);

	ASSERT_LE(0, fd);
	close(fd);
	for (i = 0; i < 2; i++)
		every_op_fails(_metadata, self->map[i], fd, EBADF);
}

TEST_F(fds, a_negative_descriptor_is_a_bad_one_on_either_path)
{
	int i;

	for (i = 0; i < 2; i++) {
		every_op_fails(_metadata, self->map[i], -1, EBADF);
		every_op_fails(_metadata, self->map[i], -12345, EBADF);
	}
}

/* Unknown update flags, and BPF_F_LOCK on a value without a spin lock. */
TEST_F(fds, bad_update_flags_are_refused_on_either_path)
{
	static const __u64 bad[] = { BPF_EXIST + 1, BPF_F_LOCK,
				     BPF_F_LOCK | BPF_EXIST, 1ULL << 40 };
	__u64 value[2] = { 7, 7 };
	unsigned int i, k;

	for (i = 0; i < 2; i++) {
		for (k = 0; k < ARRAY_SIZE(bad); k++) {
			ASSERT_NE(0, bpf_map_update_elem(self->map[i], &self->sk,
							 value, bad[k]));
			ASSERT_EQ(EINVAL, errno) {
				TH_LOG("map %u flags %#llx", i,
				       (unsigned long long)bad[k]);
			}
		}
		ASSERT_NE(0, bpf_map_lookup_elem_flags(self->map[i], &self->sk,
						       value, BPF_F_LOCK));
		ASSERT_EQ(EINVAL, errno);
	}
}

/*
 * Sockets of every family take, refuse, replace and drop values on both
 * paths with the same results.
 */
TEST_F(fds, sockets_of_every_family_behave_alike_on_either_path)
{
	static const struct { int family, type; const char *name; } kinds[] = {
		{ AF_INET, SOCK_STREAM, "tcp" }, { AF_INET, SOCK_DGRAM, "udp" },
		{ AF_INET6, SOCK_STREAM, "tcp6" }, { AF_INET6, SOCK_DGRAM, "udp6" },
		{ AF_UNIX, SOCK_STREAM, "unix stream" },
		{ AF_UNIX, SOCK_DGRAM, "unix dgram" },
		{ AF_NETLINK, SOCK_RAW, "netlink" },
		{ AF_PACKET, SOCK_DGRAM, "packet dgram" },
		{ AF_PACKET, SOCK_RAW, "packet raw" },
	};
	__u64 in[2], out[2];
	unsigned int k;
	int i, fd;

	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		fd = socket(kinds[k].family, kinds[k].type, 0);
		ASSERT_LE(0, fd) {
			TH_LOG("%s: %s", kinds[k].name, strerror(errno));
		}
		for (i = 0; i < 2; i++) {
			in[0] = k;
			in[1] = i;
			ASSERT_NE(0, bpf_map_lookup_elem(self->map[i], &fd, out));
			ASSERT_EQ(ENOENT, errno);
			ASSERT_NE(0, bpf_map_update_elem(self->map[i], &fd, in,
							 BPF_EXIST));
			ASSERT_EQ(ENOENT, errno);
			ASSERT_EQ(0, bpf_map_update_elem(self->map[i], &fd, in,
							 BPF_NOEXIST)) {
				TH_LOG("%s, map %d: %s", kinds[k].name, i,
				       strerror(errno));
			}
			ASSERT_NE(0, bpf_map_update_elem(self->map[i], &fd, out,
							 BPF_NOEXIST));
			ASSERT_EQ(EEXIST, errno);
			ASSERT_EQ(0, bpf_map_lookup_elem(self->map[i], &fd, out));
			ASSERT_EQ(0, memcmp(in, out, sizeof(in)));
			in[1] += 100;
			ASSERT_EQ(0, bpf_map_update_elem(self->map[i], &fd, in,
							 BPF_EXIST));
			ASSERT_EQ(0, bpf_map_lookup_elem(self->map[i], &fd, out));
			ASSERT_EQ(0, memcmp(in, out, sizeof(in)));
		}
		/* Deleting one map's value leaves the other's. */
		ASSERT_EQ(0, bpf_map_delete_elem(self->map[0], &fd));
		ASSERT_NE(0, bpf_map_delete_elem(self->map[0], &fd));
		ASSERT_EQ(ENOENT, errno);
		ASSERT_NE(0, bpf_map_lookup_elem(self->map[0], &fd, out));
		ASSERT_EQ(ENOENT, errno);
		ASSERT_EQ(0, bpf_map_lookup_elem(self->map[1], &fd, out));
		ASSERT_EQ(101, out[1]);
		ASSERT_EQ(0, bpf_map_delete_elem(self->map[1], &fd));
		close(fd);
	}
}

TEST_HARNESS_MAIN
