// SPDX-License-Identifier: GPL-2.0
/*
 * Programs that reach past an sk storage value, into the slot's padding
 * or its owner tag, are rejected alike whether the map is inline or not.
 * What is expected follows the tail in effect.
 */
#include "badinput.h"

/*
 * The verifier sees an sk storage map, inline or not: a program that
 * reads or writes past the value is rejected the same way for both. A
 * 12-byte value leaves 4 bytes of padding in its 24-byte slot, and the
 * owner tag sits right before it: neither is the program's.
 */
#define INSN(c, d, s, o, i)	((struct bpf_insn){ .code = (c), .dst_reg = (d), \
				  .src_reg = (s), .off = (o), .imm = (i) })
#define VALUE_SIZE	12

struct access {
	const char *what;
	bool write;
	int size;	/* BPF_W or BPF_DW */
	int off;
};

static int load_sk_storage_prog(int map, const struct access *a, char *log,
				size_t log_size)
{
	struct bpf_insn access = a->write ?
		INSN(BPF_ST | BPF_MEM | a->size, BPF_REG_0, 0, a->off, 1) :
		INSN(BPF_LDX | BPF_MEM | a->size, BPF_REG_1, BPF_REG_0, a->off, 0);
	struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_6,
		     offsetof(struct __sk_buff, sk), 0),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_1, 0, 10, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_fullsock),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 8, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_0, 0, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0,
		     BPF_SK_STORAGE_GET_F_CREATE),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_storage_get),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 1, 0),
		access,
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = log,
		    .log_size = log_size, .log_level = 1);
	int fd;

	log[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "sk_storage_oob", "GPL",
			   insns, ARRAY_SIZE(insns), &opts);
	return fd < 0 ? -errno : fd;
}

/* The verifier's complaint, the line that names the access. */
static const char *complaint(const char *log, char *line, size_t size)
{
	const char *p = strstr(log, "invalid access to map value");
	size_t n;

	if (!p)
		return "";
	n = strcspn(p, "\n");
	snprintf(line, size, "%.*s", (int)n, p);
	return line;
}

FIXTURE(verifier) {
	int map[2];
	char log[2][65536];
};

FIXTURE_SETUP(verifier)
{
	unsigned int off, size, room;
	struct layout l;
	long tail;

	tail = tail_in_effect(_metadata, &l);
	room = layout_room(&l, &off);
	self->map[0] = sk_map_create(VALUE_SIZE, 0);
	self->map[1] = sk_map_create_dynamic(VALUE_SIZE);
	ASSERT_LE(0, self->map[0]);
	ASSERT_LE(0, self->map[1]);
	/* Not vacuous: the first map is inline whenever the tail has room. */
	ASSERT_EQ(room >= slot_bytes(VALUE_SIZE),
		  map_slot(self->map[0], &off, &size)) {
		TH_LOG("tail %ld, room %u: the map is %s", tail, room,
		       map_storage(self->map[0]));
	}
	ASSERT_EQ(0, map_slot(self->map[1], &off, &size));
}

FIXTURE_TEARDOWN(verifier)
{
	close(self->map[0]);
	close(self->map[1]);
}

static void same_verdict(struct __test_metadata *_metadata,
			 FIXTURE_DATA(verifier) *self, const struct access *a,
			 int expected)
{
	char line[2][256];
	int fd[2], i;

	for (i = 0; i < 2; i++) {
		fd[i] = load_sk_storage_prog(self->map[i], a, self->log[i],
					     sizeof(self->log[i]));
		if (fd[i] >= 0) {
			close(fd[i]);
			fd[i] = 0;
		}
	}
	TH_LOG("%s: %s map %d, dynamic map %d", a->what,
	       map_storage(self->map[0]), fd[0], fd[1]);
	ASSERT_EQ(expected, fd[0]) {
		TH_LOG("%s", self->log[0]);
	}
	ASSERT_EQ(fd[0], fd[1]) {
		TH_LOG("%s", self->log[1]);
	}
	if (!expected)
		return;
	complaint(self->log[0], line[0], sizeof(line[0]));
	complaint(self->log[1], line[1], sizeof(line[1]));
	TH_LOG("%s", line[0]);
	ASSERT_NE(0, line[0][0]);
	ASSERT_STREQ(line[0], line[1]);
}

TEST_F(verifier, the_last_word_of_the_value_is_the_programs_on_both_paths)
{
	const struct access rd = { "read at 8", false, BPF_W, VALUE_SIZE - 4 };
	const struct access wr = { "write at 8", true, BPF_W, VALUE_SIZE - 4 };

	same_verdict(_metadata, self, &rd, 0);
	same_verdict(_metadata, self, &wr, 0);
}

TEST_F(verifier, reading_the_slot_padding_past_the_value_is_rejected_on_both_paths)
{
	const struct access a = { "read at 12", false, BPF_W, VALUE_SIZE };

	same_verdict(_metadata, self, &a, -EACCES);
}

TEST_F(verifier, writing_the_slot_padding_past_the_value_is_rejected_on_both_paths)
{
	const struct access a = { "write at 12", true, BPF_W, VALUE_SIZE };

	same_verdict(_metadata, self, &a, -EACCES);
}

TEST_F(verifier, a_word_straddling_the_end_is_rejected_on_both_paths)
{
	const struct access a = { "8-byte read at 8", false, BPF_DW, VALUE_SIZE - 4 };

	same_verdict(_metadata, self, &a, -EACCES);
}

TEST_F(verifier, reading_the_owner_tag_before_the_value_is_rejected_on_both_paths)
{
	const struct access a = { "read at -8", false, BPF_DW, -SLOT_HDR };

	same_verdict(_metadata, self, &a, -EACCES);
}

TEST_F(verifier, writing_the_owner_tag_before_the_value_is_rejected_on_both_paths)
{
	const struct access a = { "write at -8", true, BPF_DW, -SLOT_HDR };

	same_verdict(_metadata, self, &a, -EACCES);
}

TEST_HARNESS_MAIN
