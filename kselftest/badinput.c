// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input gets a clear error and changes nothing: the sysctls of inline
 * sk storage, sk storage map value sizes around the space left in the tail
 * and at the upstream maximum, and map syscalls on descriptors that are
 * not sockets.
 */
#include "../kselftest_harness.h"
#include "sk_inline_util.h"
#include "sk_memcg.h"

#define REUSE_PATH	"/proc/sys/net/core/bpf_sk_inline_reuse"
#define LAYOUT_PATH	"/sys/kernel/debug/bpf_sk_inline"
#define SLOT_HDR	8

/* Write @input (@len bytes) to @path: 0 or -errno. */
static int write_raw(const char *path, const char *input, size_t len)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, input, len) < 0)
		err = -errno;
	close(fd);
	return err;
}

FIXTURE(knob) {
	char before[64];
};

FIXTURE_VARIANT(knob) {
	const char *path;
};

FIXTURE_VARIANT_ADD(knob, inline_bytes) {
	.path = INLINE_BYTES_SYSCTL,
};

FIXTURE_VARIANT_ADD(knob, reuse) {
	.path = REUSE_PATH,
};

FIXTURE_VARIANT_ADD(knob, charge) {
	.path = CHARGE_SYSCTL,
};

FIXTURE_SETUP(knob)
{
	ASSERT_LE(0, read_file(variant->path, self->before, sizeof(self->before)));
}

FIXTURE_TEARDOWN(knob)
{
	char now[64];

	/* Every row leaves the value as it found it. */
	ASSERT_LE(0, read_file(variant->path, now, sizeof(now)));
	ASSERT_STREQ(self->before, now);
}

static void reject(struct __test_metadata *_metadata, const char *path,
		   const char *input, int expected)
{
	ASSERT_EQ(expected, write_raw(path, input, strlen(input))) {
		TH_LOG("writing \"%s\" to %s", input, path);
	}
}

TEST_F(knob, minus_one_is_refused)
{
	reject(_metadata, variant->path, "-1\n", -EINVAL);
}

TEST_F(knob, a_value_beyond_32_bits_is_refused)
{
	reject(_metadata, variant->path, "4294967296\n", -EINVAL);
}

TEST_F(knob, a_value_beyond_64_bits_is_refused)
{
	reject(_metadata, variant->path, "99999999999999999999\n", -EINVAL);
}

TEST_F(knob, non_numeric_text_is_refused)
{
	reject(_metadata, variant->path, "abc\n", -EINVAL);
}

TEST_F(knob, a_number_followed_by_text_is_refused)
{
	reject(_metadata, variant->path, "1abc\n", -EINVAL);
}

TEST_F(knob, an_empty_line_is_refused)
{
	reject(_metadata, variant->path, "\n", -EINVAL);
}

TEST_F(knob, a_zero_length_write_changes_nothing)
{
	ASSERT_EQ(0, write_raw(variant->path, "", 0));
}

/* The runtime policies take 0 and 1 only; the tail takes no new value. */
TEST_F(knob, the_first_value_out_of_range_is_refused)
{
	if (!strcmp(variant->path, INLINE_BYTES_SYSCTL))
		reject(_metadata, variant->path, "1025\n", -EINVAL);
	else
		reject(_metadata, variant->path, "2\n", -EINVAL);
}

TEST_F(knob, an_unaligned_tail_after_boot_is_refused)
{
	if (strcmp(variant->path, INLINE_BYTES_SYSCTL))
		SKIP(return, "only the tail size is aligned");
	reject(_metadata, variant->path, "12\n", -EPERM);
}

/* Value sizes around the free space of the tail, and the upstream limit. */
FIXTURE(sizes) {
	long tail, free;
	int fds[4];
};

FIXTURE_SETUP(sizes)
{
	int i;

	for (i = 0; i < 4; i++)
		self->fds[i] = -1;
	self->tail = read_ulong(INLINE_BYTES_SYSCTL);
	ASSERT_LE(0, self->tail);
	self->free = 0;
	if (self->tail) {
		char buf[4096], *p;

		/* Maps of earlier tests are freed by a workqueue. */
		for (i = 0; i < 200; i++) {
			ASSERT_LE(0, read_file(LAYOUT_PATH, buf, sizeof(buf)));
			if (!strstr(buf, " dying "))
				break;
			usleep(50000);
		}
		p = strstr(buf, "free_bytes:");
		ASSERT_NE(NULL, p);
		self->free = strtol(p + strlen("free_bytes:"), NULL, 10);
	}
}

FIXTURE_TEARDOWN(sizes)
{
	int i;

	for (i = 0; i < 4; i++)
		if (self->fds[i] >= 0)
			close(self->fds[i]);
}

/* A map of @size: inline or dynamic as expected, and a value round-trips. */
static void check_map(struct __test_metadata *_metadata, int *fdp,
		      unsigned int size, const char *storage)
{
	unsigned char *in = malloc(size), *out = malloc(size);
	int sk = socket(AF_INET, SOCK_DGRAM, 0);

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	ASSERT_LE(0, sk);
	*fdp = sk_map_create(size, 0);
	ASSERT_LE(0, *fdp) {
		TH_LOG("value_size %u: %s", size, strerror(-*fdp));
	}
	ASSERT_STREQ(storage, map_storage(*fdp)) {
		TH_LOG("value_size %u", size);
	}
	memset(in, 0xa5, size);
	ASSERT_EQ(0, bpf_map_update_elem(*fdp, &sk, in, BPF_NOEXIST));
	ASSERT_EQ(0, bpf_map_lookup_elem(*fdp, &sk, out));
	ASSERT_EQ(0, memcmp(in, out, size));
	close(sk);
	free(in);
	free(out);
}

TEST_F(sizes, a_value_that_exactly_fills_the_free_space_is_inline)
{
	if (self->free <= SLOT_HDR)
		SKIP(return, "no room in the tail (%ld bytes free)", self->free);
	check_map(_metadata, &self->fds[0], self->free - SLOT_HDR, "inline");
}

TEST_F(sizes, a_value_one_byte_smaller_is_inline)
{
	if (self->free <= SLOT_HDR + 1)
		SKIP(return, "no room in the tail (%ld bytes free)", self->free);
	check_map(_metadata, &self->fds[0], self->free - SLOT_HDR - 1, "inline");
}

TEST_F(sizes, a_value_one_byte_larger_than_the_space_is_dynamic)
{
	check_map(_metadata, &self->fds[0],
		  self->free > SLOT_HDR ? self->free - SLOT_HDR + 1 : 1, "dynamic");
}

/* The largest value upstream accepts: found by search, dynamic, working. */
TEST_F(sizes, the_upstream_maximum_is_accepted_and_one_more_byte_is_not)
{
	unsigned int lo = 1, hi = 65535, mid;
	int fd;

	fd = sk_map_create(65535, 0);
	ASSERT_EQ(-E2BIG, fd);
	while (lo + 1 < hi) {
		mid = (lo + hi) / 2;
		fd = sk_map_create(mid, 0);
		if (fd >= 0) {
			close(fd);
			lo = mid;
		} else {
			ASSERT_EQ(-E2BIG, fd);
			hi = mid;
		}
	}
	TH_LOG("largest value: %u bytes", lo);
	/* Below it, local storage allows a value close to 64 KiB. */
	ASSERT_LT(60000, lo);
	check_map(_metadata, &self->fds[0], lo, "dynamic");
	ASSERT_EQ(-E2BIG, sk_map_create(lo + 1, 0));
}

/* Map syscalls on descriptors that are not sockets, inline or not. */
FIXTURE(fds) {
	int map[2];
	int pipe[2];
};

FIXTURE_SETUP(fds)
{
	self->map[0] = sk_map_create(16, 0);
	self->map[1] = sk_map_create(16, BPF_F_NO_INLINE);
	ASSERT_LE(0, self->map[0]);
	ASSERT_LE(0, self->map[1]);
	ASSERT_EQ(0, pipe(self->pipe));
}

FIXTURE_TEARDOWN(fds)
{
	close(self->map[0]);
	close(self->map[1]);
	close(self->pipe[0]);
	close(self->pipe[1]);
}

static void every_op_fails(struct __test_metadata *_metadata, int map, int fd,
			   int expected)
{
	char value[16] = { 1 };

	ASSERT_NE(0, bpf_map_update_elem(map, &fd, value, BPF_ANY));
	ASSERT_EQ(expected, errno);
	ASSERT_NE(0, bpf_map_lookup_elem(map, &fd, value));
	ASSERT_EQ(expected, errno);
	ASSERT_NE(0, bpf_map_delete_elem(map, &fd));
	ASSERT_EQ(expected, errno);
}

TEST_F(fds, a_pipe_is_not_a_socket_on_either_path)
{
	int i;

	for (i = 0; i < 2; i++)
		every_op_fails(_metadata, self->map[i], self->pipe[0], ENOTSOCK);
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

	for (i = 0; i < 2; i++)
		every_op_fails(_metadata, self->map[i], -1, EBADF);
}

/* Sockets of every family take values on both paths. */
TEST_F(fds, sockets_of_every_family_take_values_on_either_path)
{
	static const int kinds[][3] = {
		{ AF_INET, SOCK_STREAM, 0 }, { AF_INET, SOCK_DGRAM, 0 },
		{ AF_INET6, SOCK_STREAM, 0 }, { AF_INET6, SOCK_DGRAM, 0 },
		{ AF_UNIX, SOCK_STREAM, 0 }, { AF_UNIX, SOCK_DGRAM, 0 },
		{ AF_NETLINK, SOCK_RAW, 0 }, { AF_PACKET, SOCK_DGRAM, 0 },
	};
	char in[16], out[16];
	unsigned int k;
	int i, fd;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		fd = socket(kinds[k][0], kinds[k][1], kinds[k][2]);
		ASSERT_LE(0, fd) {
			TH_LOG("family %d type %d", kinds[k][0], kinds[k][1]);
		}
		for (i = 0; i < 2; i++) {
			memset(in, k * 2 + i + 1, sizeof(in));
			ASSERT_EQ(0, bpf_map_update_elem(self->map[i], &fd, in,
							 BPF_NOEXIST)) {
				TH_LOG("family %d type %d: %s", kinds[k][0],
				       kinds[k][1], strerror(errno));
			}
			ASSERT_EQ(0, bpf_map_lookup_elem(self->map[i], &fd, out));
			ASSERT_EQ(0, memcmp(in, out, sizeof(in)));
		}
		close(fd);
	}
}

TEST_HARNESS_MAIN
