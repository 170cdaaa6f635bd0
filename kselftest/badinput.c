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

/*
 * The verifier sees an sk storage map, inline or not: a program that reads
 * or writes past the value is rejected the same way for both.
 */
#define INSN(c, d, s, o, i)	((struct bpf_insn){ .code = (c), .dst_reg = (d), \
				  .src_reg = (s), .off = (o), .imm = (i) })

enum access { READ_LAST_WORD, READ_PAST_END, WRITE_PAST_END };

static int load_sk_storage_prog(int map, unsigned int value_size,
				enum access access, char *log, size_t log_size)
{
	int off = access == READ_LAST_WORD ? value_size - 8 : value_size;
	struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_6,
		     offsetof(struct __sk_buff, sk), 0),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_1, 0, 12, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_fullsock),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 10, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_0, 0, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_storage_get),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 3, 0),
		access == WRITE_PAST_END ?
		INSN(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_0, 0, off, 1) :
		INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, off, 0),
		INSN(BPF_JMP | BPF_JA, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_JA, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = log,
		    .log_size = log_size, .log_level = 1);
	int fd;

	log[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "sk_storage_oob", "GPL",
			   insns, sizeof(insns) / sizeof(insns[0]), &opts);
	return fd < 0 ? -errno : fd;
}

FIXTURE(verifier) {
	int map[2];
	char log[2][65536];
};

FIXTURE_SETUP(verifier)
{
	self->map[0] = sk_map_create(16, 0);
	self->map[1] = sk_map_create(16, BPF_F_NO_INLINE);
	ASSERT_LE(0, self->map[0]);
	ASSERT_LE(0, self->map[1]);
}

FIXTURE_TEARDOWN(verifier)
{
	close(self->map[0]);
	close(self->map[1]);
}

static void same_verdict(struct __test_metadata *_metadata,
			 FIXTURE_DATA(verifier) *self, enum access access,
			 int expected)
{
	int fd[2], i;

	for (i = 0; i < 2; i++) {
		fd[i] = load_sk_storage_prog(self->map[i], 16, access,
					     self->log[i], sizeof(self->log[i]));
		if (fd[i] >= 0) {
			close(fd[i]);
			fd[i] = 0;
		}
	}
	TH_LOG("inline map (%s): %d; dynamic map: %d",
	       map_storage(self->map[0]), fd[0], fd[1]);
	ASSERT_EQ(expected, fd[0]) {
		TH_LOG("%s", self->log[0]);
	}
	ASSERT_EQ(fd[0], fd[1]);
	if (expected)
		ASSERT_NE(NULL, strstr(self->log[0], "invalid access to map value"));
}

TEST_F(verifier, reading_the_last_word_of_the_value_is_accepted_on_both_paths)
{
	same_verdict(_metadata, self, READ_LAST_WORD, 0);
}

TEST_F(verifier, reading_past_the_value_is_rejected_on_both_paths)
{
	same_verdict(_metadata, self, READ_PAST_END, -EACCES);
}

TEST_F(verifier, writing_past_the_value_is_rejected_on_both_paths)
{
	same_verdict(_metadata, self, WRITE_PAST_END, -EACCES);
}

TEST_HARNESS_MAIN
