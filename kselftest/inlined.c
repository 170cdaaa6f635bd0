// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier emits bpf_sk_storage_get() as instructions for a map with a
 * slot (x86-64, JIT on): the translated program (xlated) reads the tag and
 * compares it with an immediate; the call is left only for a socket without
 * a tail and, with F_CREATE, for a miss. A dynamic map, an inner map, two
 * maps at one call and a boot without a tail keep the plain call. A socket
 * the verifier knows not to be NULL (a sockopt program's,
 * bpf_skc_lookup_tcp()'s) is tested only for its state, which other
 * families number as TCP does, as the helper's sk_fullsock() tests it.
 * The programs behave as the helper does, and a counter on the helper
 * shows it is called exactly where the instructions say.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "inlined.h"
#include "inlined.skel.h"

#define MAX_INSNS	4096

/* Opcodes and registers of the emitted sequence (bpf_sk_storage_gen_get). */
#define LD_IMM64	(BPF_LD | BPF_IMM | BPF_DW)
#define CALL		(BPF_JMP | BPF_CALL)

struct xlated {
	struct bpf_insn insn[MAX_INSNS];
	int cnt;
};

static int get_xlated(const struct bpf_program *prog, struct xlated *x)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	info.xlated_prog_len = sizeof(x->insn);
	info.xlated_prog_insns = (__u64)(unsigned long)x->insn;
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return -errno;
	if (info.xlated_prog_len > sizeof(x->insn))
		return -E2BIG;
	x->cnt = info.xlated_prog_len / sizeof(struct bpf_insn);
	return 0;
}

static bool is_jump(const struct bpf_insn *i)
{
	__u8 class = BPF_CLASS(i->code);

	return (class == BPF_JMP || class == BPF_JMP32) &&
	       BPF_OP(i->code) != BPF_CALL && BPF_OP(i->code) != BPF_EXIT;
}

static int target(const struct xlated *x, int at)
{
	return at + 1 + x->insn[at].off;
}

/* The tag compare "if r1 != r5" right after "r5 = <tag> ll", or -1. */
static int tag_compare(const struct xlated *x)
{
	int i;

	for (i = 2; i < x->cnt; i++)
		if (x->insn[i].code == (BPF_JMP | BPF_JNE | BPF_X) &&
		    x->insn[i].dst_reg == BPF_REG_1 && x->insn[i].src_reg == BPF_REG_5 &&
		    x->insn[i - 2].code == LD_IMM64 && x->insn[i - 2].dst_reg == BPF_REG_5)
			return i;
	return -1;
}

static int find_insn(const struct xlated *x, __u8 code, __u8 dst, __s32 imm)
{
	int i;

	for (i = 0; i < x->cnt; i++)
		if (x->insn[i].code == code && x->insn[i].dst_reg == dst &&
		    x->insn[i].imm == imm)
			return i;
	return -1;
}

static int count_tag_compares(const struct xlated *x)
{
	struct xlated rest = *x;
	int n = 0, at;

	while ((at = tag_compare(&rest)) >= 0) {
		n++;
		rest.insn[at].code = 0;
	}
	return n;
}

/* How many helper calls @x makes; *@last is the last one, -1 if none. */
static int count_calls(const struct xlated *x, int *last)
{
	int i, n = 0;

	*last = -1;
	for (i = 0; i < x->cnt; i++)
		if (x->insn[i].code == CALL && x->insn[i].src_reg == 0) {
			*last = i;
			n++;
		}
	return n;
}

/*
 * An inlined lookup's call comes after "r1 = map ll; r5 = gfp": return
 * where that block starts, or -1.
 */
static int call_block(const struct xlated *x, int call)
{
	int block = call - 3;

	if (block < 1 || x->insn[block].code != LD_IMM64 ||
	    x->insn[block].dst_reg != BPF_REG_1)
		return -1;
	return block;
}

/*
 * The inlined sequence's "r0 = 0" (NULL): after its call and the jump over
 * it, "call; goto done; null: r0 = 0; done:". -1 without a sequence.
 */
static int null_label(const struct xlated *x)
{
	int i;

	for (i = 0; i + 2 < x->cnt; i++)
		if (x->insn[i].code == CALL && x->insn[i].src_reg == 0 &&
		    call_block(x, i) >= 1 && x->insn[i + 1].code == (BPF_JMP | BPF_JA) &&
		    x->insn[i + 2].code == (BPF_ALU64 | BPF_MOV | BPF_K))
			return i + 2;
	return -1;
}

static bool is_jeq_to(const struct xlated *x, int at, __u8 reg, __s32 imm, int to)
{
	return x->insn[at].code == (BPF_JMP | BPF_JEQ | BPF_K) &&
	       x->insn[at].dst_reg == reg && x->insn[at].imm == imm && target(x, at) == to;
}

/* "if r2 == 0 goto null": the sequence tests the socket for NULL. */
static bool null_test(const struct xlated *x)
{
	int i, null = null_label(x);

	for (i = 0; i < x->cnt; i++)
		if (is_jeq_to(x, i, BPF_REG_2, 0, null))
			return true;
	return false;
}

/* "r0 = sk_state; if r0 == TCP_TIME_WAIT or TCP_NEW_SYN_RECV goto null" */
static bool state_test(const struct xlated *x)
{
	int i, null = null_label(x);

	for (i = 0; i + 2 < x->cnt; i++)
		if (x->insn[i].code == (BPF_LDX | BPF_MEM | BPF_B) &&
		    x->insn[i].dst_reg == BPF_REG_0 && x->insn[i].src_reg == BPF_REG_2 &&
		    is_jeq_to(x, i + 1, BPF_REG_0, BPF_TCP_TIME_WAIT, null) &&
		    is_jeq_to(x, i + 2, BPF_REG_0, BPF_TCP_NEW_SYN_RECV, null))
			return true;
	return false;
}

/* How many jumps lead to instruction @to. */
static int jumps_to(const struct xlated *x, int to)
{
	int i, n = 0;

	for (i = 0; i < x->cnt; i++)
		if (is_jump(&x->insn[i]) && target(x, i) == to)
			n++;
	return n;
}

/* How the call of a program without the inline sequence looks. */
static bool plain_call(const struct xlated *x)
{
	int call, i;

	if (tag_compare(x) >= 0 || count_calls(x, &call) < 1)
		return false;
	for (i = 0; i < x->cnt; i++)
		if (x->insn[i].code == CALL && x->insn[i].src_reg == 0 && i > 0 &&
		    x->insn[i - 1].code == (BPF_ALU64 | BPF_MOV | BPF_K) &&
		    x->insn[i - 1].dst_reg == BPF_REG_5)
			return true;
	return false;
}

FIXTURE(inlined) {
	struct inlined *skel;
	struct bpf_link *links[12];
	bool inline_map;	/* inl has a slot */
	int inner;
};

FIXTURE_SETUP(inlined)
{
	struct bpf_program *prog;
	unsigned int off, size;
	int n = 0, zero = 0, cg;

	self->skel = inlined__open_and_load();
	ASSERT_NE(NULL, self->skel);
	self->inline_map = map_slot(bpf_map__fd(self->skel->maps.inl), &off, &size) == 1;
	/* The inner map has a slot like inl when the boot has room. */
	self->inner = create_sk_map(sizeof(struct inlined_val), 0);
	ASSERT_LE(0, self->inner);
	ASSERT_EQ(0, bpf_map_update_elem(bpf_map__fd(self->skel->maps.outer),
					 &zero, &self->inner, 0));
	cg = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, cg);
	bpf_object__for_each_program(prog, self->skel->obj) {
		if (bpf_program__type(prog) == BPF_PROG_TYPE_TRACING)
			self->links[n] = bpf_program__attach(prog);
		else
			self->links[n] = bpf_program__attach_cgroup(prog, cg);
		ASSERT_NE(NULL, self->links[n]) TH_LOG("%s", bpf_program__name(prog));
		ASSERT_GT(12, ++n);
	}
	close(cg);
}

FIXTURE_TEARDOWN(inlined)
{
	int i;

	for (i = 0; i < 12; i++)
		bpf_link__destroy(self->links[i]);
	inlined__destroy(self->skel);
	if (self->inner >= 0)
		close(self->inner);
}

/* Whether the verifier inlines here: a slot, on x86-64 with the JIT on. */
static bool inlining_expected(FIXTURE_DATA(inlined) *self)
{
#ifdef __x86_64__
	return self->inline_map && read_ulong("/proc/sys/net/core/bpf_jit_enable") > 0;
#else
	return false;
#endif
}

/*
 * Translate @prog into @x. Where no inlining is expected, check that it
 * kept the plain call and return false; else check that it has the tag
 * compare.
 */
static bool xlated_inlined(struct __test_metadata *_metadata,
			   FIXTURE_DATA(inlined) *self,
			   const struct bpf_program *prog, struct xlated *x)
{
	ASSERT_EQ(0, get_xlated(prog, x));
	if (!inlining_expected(self)) {
		EXPECT_TRUE(plain_call(x));
		return false;
	}
	ASSERT_LE(0, tag_compare(x));
	return true;
}

/*
 * xlated_inlined(), then where inlining is expected: @prog has one call,
 * whose block, in @block, @jumps jumps lead to.
 */
static bool inlined_call(struct __test_metadata *_metadata,
			 FIXTURE_DATA(inlined) *self,
			 const struct bpf_program *prog, struct xlated *x,
			 int jumps, int *block)
{
	int call;

	if (!xlated_inlined(_metadata, self, prog, x))
		return false;
	ASSERT_EQ(1, count_calls(x, &call));
	*block = call_block(x, call);
	ASSERT_LE(1, *block);
	EXPECT_EQ(jumps, jumps_to(x, *block));
	return true;
}

/*
 * Whatever the verifier knows of the flags (0, F_CREATE or unknown), they
 * are tested as the helper tests them, so that it need not mark them
 * precise: "if r4 > F_CREATE goto null" first, and on a miss "if r4 == 0
 * goto null", which falls into the call. One jump to the call: for a tail
 * offset of 0; the hit path jumps over it.
 */
TEST_F(inlined, flags_are_tested_as_the_helper_does)
{
	struct bpf_program *progs[] = {
		self->skel->progs.get_flags_zero,
		self->skel->progs.get_flags_create,
		self->skel->progs.get_flags_unknown,
	};
	int block, i, p, flag_tests;
	struct xlated x;

	for (p = 0; p < ARRAY_SIZE(progs); p++) {
		if (!inlined_call(_metadata, self, progs[p], &x, 1, &block))
			return;
		flag_tests = 0;
		for (i = 0; i < x.cnt; i++)
			if (is_jump(&x.insn[i]) && BPF_SRC(x.insn[i].code) == BPF_K &&
			    x.insn[i].dst_reg == BPF_REG_4)
				flag_tests++;
		EXPECT_EQ(2, flag_tests);
		EXPECT_EQ(block - 1, target(&x, tag_compare(&x)));
		EXPECT_EQ((BPF_JMP | BPF_JEQ | BPF_K), x.insn[block - 1].code);
		EXPECT_EQ(BPF_REG_4, (int)x.insn[block - 1].dst_reg);
	}
}

/* The tracing variant first bails out in hardirq and NMI context. */
TEST_F(inlined, tracing_programs_are_inlined_with_the_context_check)
{
	struct xlated x;
	int block;

	if (!inlined_call(_metadata, self, self->skel->progs.get_tracing, &x, 1, &block))
		return;
	/* "r0 &= HARDIRQ_MASK | NMI_MASK; if r0 != 0 goto null" */
	EXPECT_LE(0, find_insn(&x, BPF_ALU | BPF_AND | BPF_K, BPF_REG_0, 0x00ff0000));
}

/* An iterator runs in read(), never in hardirq or NMI: no check there. */
TEST_F(inlined, iterators_are_inlined_without_the_context_check)
{
	struct xlated x;
	int call;

	if (!xlated_inlined(_metadata, self, self->skel->progs.get_iter, &x))
		return;
	ASSERT_EQ(1, count_calls(&x, &call));
	EXPECT_EQ(-1, find_insn(&x, BPF_ALU | BPF_AND | BPF_K, BPF_REG_0, 0x00ff0000));
}

/*
 * What the verifier knows of the socket is not tested again: a sockopt
 * program's and bpf_skc_lookup_tcp()'s (tested) are not NULL; their state
 * is read, as the helper reads it for every family; a BTF pointer may be
 * NULL whatever the verifier thinks.
 */
TEST_F(inlined, what_the_verifier_knows_of_the_socket_is_not_tested_again)
{
	static const struct {
		const char *name;
		bool null_test, state_test;
	} progs[] = {
		{ "get_flags_zero", false, true },
		{ "get_flags_unknown", false, true },
		{ "get_sock_common", false, true },
		{ "get_tracing", true, true },
		{ "get_iter", true, true },
	};
	struct xlated x;
	unsigned int i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_program *prog;

		prog = bpf_object__find_program_by_name(self->skel->obj, progs[i].name);
		ASSERT_NE(NULL, prog);
		ASSERT_EQ(0, get_xlated(prog, &x));
		if (!inlining_expected(self)) {
			EXPECT_TRUE(plain_call(&x)) TH_LOG("%s", progs[i].name);
			continue;
		}
		ASSERT_LE(0, tag_compare(&x)) TH_LOG("%s", progs[i].name);
		ASSERT_LE(0, null_label(&x)) TH_LOG("%s", progs[i].name);
		EXPECT_EQ(progs[i].null_test, null_test(&x)) TH_LOG("%s", progs[i].name);
		EXPECT_EQ(progs[i].state_test, state_test(&x)) TH_LOG("%s", progs[i].name);
	}
}

/* Look up the client's socket of @client -> @server by bpf_skc_lookup_tcp(). */
static int lookup_client(FIXTURE_DATA(inlined) *self, const struct sockaddr_in *client,
			 const struct sockaddr_in *server)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	ssize_t sent;

	if (fd < 0)
		return -errno;
	/* As a packet from the server to the client has them. */
	self->skel->bss->skc_sport = server->sin_port;
	self->skel->bss->skc_dport = client->sin_port;
	self->skel->bss->skc_state = 0;
	self->skel->bss->skc_found = -1;
	/* Any packet sent runs the egress program. */
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons(9);
	sent = sendto(fd, "x", 1, 0, (struct sockaddr *)&to, sizeof(to));
	self->skel->bss->skc_dport = 0;
	close(fd);
	return sent == 1 ? 0 : -EIO;
}

/*
 * A timewait socket has no value: the state test the verifier keeps for a
 * socket that is only known not to be NULL returns NULL, as the helper
 * does, where the tail offset would be read past the smaller object.
 */
TEST_F(inlined, a_timewait_socket_finds_no_value)
{
	struct sockaddr_in server = { .sin_family = AF_INET }, client;
	int map = bpf_map__fd(self->skel->maps.inl);
	struct inlined_val v = { .a = 99 };
	socklen_t len = sizeof(server);
	int lfd, cfd, afd, i;

	server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, bind(lfd, (struct sockaddr *)&server, sizeof(server)));
	ASSERT_EQ(0, getsockname(lfd, (struct sockaddr *)&server, &len));
	ASSERT_EQ(0, listen(lfd, 1));
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, connect(cfd, (struct sockaddr *)&server, sizeof(server)));
	len = sizeof(client);
	ASSERT_EQ(0, getsockname(cfd, (struct sockaddr *)&client, &len));
	afd = accept(lfd, NULL, NULL);
	ASSERT_LE(0, afd);
	ASSERT_EQ(0, bpf_map_update_elem(map, &cfd, &v, 0));

	ASSERT_EQ(0, lookup_client(self, &client, &server));
	EXPECT_EQ(BPF_TCP_ESTABLISHED, self->skel->bss->skc_state);
	EXPECT_EQ(1, self->skel->bss->skc_found);

	/* The client closes first: its side waits in TIME_WAIT. */
	close(cfd);
	close(afd);
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, lookup_client(self, &client, &server));
		if (self->skel->bss->skc_state == BPF_TCP_TIME_WAIT)
			break;
		usleep(10000);
	}
	ASSERT_EQ(BPF_TCP_TIME_WAIT, self->skel->bss->skc_state);
	EXPECT_EQ(0, self->skel->bss->skc_found);
	close(lfd);
}

TEST_F(inlined, dynamic_inner_and_two_maps_keep_the_call)
{
	struct xlated x;

	ASSERT_EQ(0, get_xlated(self->skel->progs.get_dynamic, &x));
	EXPECT_TRUE(plain_call(&x));
	ASSERT_EQ(0, get_xlated(self->skel->progs.get_inner, &x));
	EXPECT_TRUE(plain_call(&x));
	ASSERT_EQ(0, get_xlated(self->skel->progs.get_two_maps, &x));
	EXPECT_TRUE(plain_call(&x));
}

/* One run of program @prog on @fd: returns the helper calls it made. */
static long run(FIXTURE_DATA(inlined) *self, int fd, int prog, __u64 flags,
		__u64 write, bool *found, __u64 *seen)
{
	__u64 before = self->skel->bss->helper_calls;
	socklen_t len = sizeof(int);
	int out = 0;

	self->skel->bss->flags_in = flags;
	self->skel->bss->write_value = write;
	self->skel->bss->found = -1;
	/* The tracing program leaves the kernel's error in place. */
	if (getsockopt(fd, SOL_INLINED_TEST, prog, &out, &len) && prog != PROG_TRACING)
		return -errno;
	if (self->skel->bss->found < 0)
		return -ENOENT;
	*found = self->skel->bss->found;
	*seen = self->skel->bss->seen;
	return self->skel->bss->helper_calls - before;
}

struct kind {
	int family, type;
	const char *name;	/* as /proc/net/protocols names it */
};

static const struct kind kinds[] = {
	{ AF_INET, SOCK_STREAM, "TCP" },
	{ AF_INET6, SOCK_DGRAM, "UDPv6" },
	{ AF_UNIX, SOCK_STREAM, "UNIX-STREAM" },
};

/*
 * Create, find, overwrite, miss and bad flags on sockets with and without
 * a tail: the results are the helper's, and the helper runs only where the
 * instructions leave the call. The syscall sees what the program wrote.
 */
TEST_F(inlined, programs_behave_as_the_helper_and_call_it_only_on_the_slow_path)
{
	int map = bpf_map__fd(self->skel->maps.inl);
	unsigned int k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		bool fast = inlining_expected(self) && proto_has_tail(kinds[k].name);
		int fd = socket(kinds[k].family, kinds[k].type, 0);
		struct inlined_val v;
		bool found;
		__u64 seen;

		ASSERT_LE(0, fd);
		TH_LOG("%s: %s", kinds[k].name, fast ? "inlined" : "call");
		/* Absent: NULL, and no call unless the value may be dynamic. */
		EXPECT_EQ(fast ? 0 : 1, run(self, fd, PROG_ZERO, 0, 0, &found, &seen));
		EXPECT_FALSE(found);
		/* Created by the helper, zeroed; the program writes 41. */
		EXPECT_EQ(1, run(self, fd, PROG_CREATE, 0, 41, &found, &seen));
		EXPECT_TRUE(found);
		EXPECT_EQ(0, seen);
		/* Present: found without a call, with F_CREATE too. */
		EXPECT_EQ(fast ? 0 : 1, run(self, fd, PROG_ZERO, 0, 42, &found, &seen));
		EXPECT_TRUE(found);
		EXPECT_EQ(41, seen);
		EXPECT_EQ(fast ? 0 : 1, run(self, fd, PROG_CREATE, 0, 0, &found, &seen));
		EXPECT_TRUE(found);
		EXPECT_EQ(42, seen);
		EXPECT_EQ(0, bpf_map_lookup_elem(map, &fd, &v));
		EXPECT_EQ(42, v.a);
		EXPECT_EQ(fast ? 0 : 1, run(self, fd, PROG_TRACING, 0, 0, &found, &seen));
		EXPECT_TRUE(found);
		EXPECT_EQ(42, seen);
		/* Flags unknown to the verifier: 0 and F_CREATE find it,
		 * anything else is NULL before any lookup, as in the helper.
		 */
		EXPECT_EQ(fast ? 0 : 1, run(self, fd, PROG_UNKNOWN, 0, 0, &found, &seen));
		EXPECT_TRUE(found);
		EXPECT_EQ(fast ? 0 : 1, run(self, fd, PROG_UNKNOWN, 1, 0, &found, &seen));
		EXPECT_TRUE(found);
		EXPECT_EQ(inlining_expected(self) ? 0 : 1,
			  run(self, fd, PROG_UNKNOWN, 2, 0, &found, &seen));
		EXPECT_FALSE(found);
		/* Deleted by the syscall: absent to the program. */
		EXPECT_EQ(0, bpf_map_delete_elem(map, &fd));
		EXPECT_EQ(fast ? 0 : 1, run(self, fd, PROG_ZERO, 0, 0, &found, &seen));
		EXPECT_FALSE(found);
		EXPECT_EQ(fast ? 0 : 1, run(self, fd, PROG_TRACING, 0, 0, &found, &seen));
		EXPECT_FALSE(found);
		/* Unknown flags F_CREATE on a miss: the call creates it. */
		EXPECT_EQ(1, run(self, fd, PROG_UNKNOWN, 1, 7, &found, &seen));
		EXPECT_TRUE(found);
		EXPECT_EQ(0, bpf_map_lookup_elem(map, &fd, &v));
		EXPECT_EQ(7, v.a);
		close(fd);
	}
}

/* The maps that keep the call still serve values, through it. */
TEST_F(inlined, dynamic_inner_and_two_maps_serve_values_through_the_call)
{
	int inl2 = bpf_map__fd(self->skel->maps.inl2);
	int dyn = bpf_map__fd(self->skel->maps.dyn);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct inlined_val v = { .a = 5 };
	bool found;
	__u64 seen;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bpf_map_update_elem(dyn, &fd, &v, 0));
	EXPECT_EQ(1, run(self, fd, PROG_DYNAMIC, 0, 0, &found, &seen));
	EXPECT_TRUE(found);
	EXPECT_EQ(5, seen);
	v.a = 6;
	ASSERT_EQ(0, bpf_map_update_elem(self->inner, &fd, &v, 0));
	EXPECT_EQ(1, run(self, fd, PROG_INNER, 0, 0, &found, &seen));
	EXPECT_TRUE(found);
	EXPECT_EQ(6, seen);
	v.a = 8;
	ASSERT_EQ(0, bpf_map_update_elem(inl2, &fd, &v, 0));
	self->skel->bss->pick_second = 1;
	EXPECT_EQ(1, run(self, fd, PROG_TWO_MAPS, 0, 0, &found, &seen));
	EXPECT_TRUE(found);
	EXPECT_EQ(8, seen);
	self->skel->bss->pick_second = 0;
	EXPECT_EQ(1, run(self, fd, PROG_TWO_MAPS, 0, 0, &found, &seen));
	EXPECT_FALSE(found);
	close(fd);
}

/* The id of the map loaded into r1 shortly before @call, or 0. */
static __u32 call_map_id(const struct xlated *x, int call)
{
	int i;

	for (i = call - 1; i >= 0 && i >= call - 8; i--)
		if (x->insn[i].code == LD_IMM64 && x->insn[i].dst_reg == BPF_REG_1)
			return x->insn[i].src_reg == BPF_PSEUDO_MAP_FD ? x->insn[i].imm : 0;
	return 0;
}

/*
 * Count @map_id's bpf_sk_storage_get() calls in @x: those of an inlined
 * lookup (a tag compare shortly before) and the plain ones, told from
 * other helpers' calls by the inlined calls' target.
 */
static void count_lookups(const struct xlated *x, __u32 map_id, int *inlined, int *plain)
{
	int i, t, helper = 0;
	bool in_sequence;

	*inlined = *plain = 0;
	for (i = 0; i < x->cnt; i++) {
		if (x->insn[i].code != CALL || x->insn[i].src_reg)
			continue;
		in_sequence = false;
		for (t = i - 1; t >= 0 && t > i - 24; t--)
			if (x->insn[t].code == (BPF_JMP | BPF_JNE | BPF_X) &&
			    x->insn[t].dst_reg == BPF_REG_1 && x->insn[t].src_reg == BPF_REG_5)
				in_sequence = true;
		if (in_sequence)
			helper = x->insn[i].imm;
		if (call_map_id(x, i) != map_id)
			continue;
		if (in_sequence)
			(*inlined)++;
		else if (helper && x->insn[i].imm == helper)
			(*plain)++;
	}
}

/*
 * The semantics tests (storage, reload, concurrency, lifetime, ...) drive
 * sk_storage.bpf.c: its lookups on the inline maps are inlined, so those
 * tests run the emitted instructions, with the helper behind them.
 */
TEST(semantics_tests_drive_inlined_programs)
{
	struct bpf_program *progs[2];
	unsigned int off, size;
	struct attached drv;
	struct xlated x;
	bool inlined;
	int p, m;

	ASSERT_EQ(0, attach_driver(&drv));
	progs[0] = drv.skel->progs.sk_storage_set;
	progs[1] = drv.skel->progs.sk_storage_get;
	inlined = map_slot(bpf_map__fd(drv.skel->maps.map_a), &off, &size) == 1 &&
		  map_slot(bpf_map__fd(drv.skel->maps.map_b), &off, &size) == 1;
#ifdef __x86_64__
	inlined = inlined && read_ulong("/proc/sys/net/core/bpf_jit_enable") > 0;
#else
	inlined = false;
#endif
	for (p = 0; p < 2; p++) {
		ASSERT_EQ(0, get_xlated(progs[p], &x));
		if (!inlined) {
			EXPECT_EQ(0, count_tag_compares(&x));
			continue;
		}
		for (m = 0; m < 2; m++) {
			struct bpf_map *map = m ? drv.skel->maps.map_b : drv.skel->maps.map_a;
			int n_inlined, n_plain;

			count_lookups(&x, map_id(bpf_map__fd(map)), &n_inlined, &n_plain);
			TH_LOG("%s, %s: %d inlined, %d calls", bpf_program__name(progs[p]),
			       m ? "map_b" : "map_a", n_inlined, n_plain);
			EXPECT_LE(1, n_inlined);
			EXPECT_EQ(0, n_plain);
		}
	}
	detach_driver(&drv);
}

TEST_HARNESS_MAIN
