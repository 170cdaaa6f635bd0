// SPDX-License-Identifier: GPL-2.0
/*
 * The inlined lookup's bookkeeping must not cost the verifier its state
 * pruning: a program with 60 blocks of 32 bpf_sk_storage_get() calls,
 * whose flags are 0 or F_CREATE by a branch per block taken before any of
 * them (verifier_flags.bpf.c), loads on a map with a slot as it does on a
 * dynamic one. Were the flags told apart per path, the blocks up to each
 * branch's would be verified again for every branch, past the 1M
 * instruction limit ("BPF program is too large", E2BIG).
 */
#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "verifier_flags.skel.h"

#define LOG_BYTES	(64 * 1024)
#define LOG_STATS	4	/* BPF_LOG_STATS */

FIXTURE(verifier_flags) {
	struct verifier_flags *skel;
	char log[LOG_BYTES];
};

FIXTURE_BOOL_VARIANTS(verifier_flags, dynamic, inline, dynamic);

FIXTURE_SETUP(verifier_flags)
{
	self->skel = verifier_flags__open();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, reuse_sk_map(self->skel->maps.map, variant->dynamic));
}

FIXTURE_TEARDOWN(verifier_flags)
{
	verifier_flags__destroy(self->skel);
}

/* "processed N insns" of the verifier's statistics, or -1. */
static long processed_insns(const char *log)
{
	const char *p = strstr(log, "processed ");
	long n;

	return p && sscanf(p, "processed %ld insns", &n) == 1 ? n : -1;
}

/* The log's line that starts with @key, for the record; "" if none. */
static const char *log_line(const char *log, const char *key, char *out,
			    size_t len)
{
	const char *p = strstr(log, key);

	snprintf(out, len, "%.*s", p ? (int)strcspn(p, "\n") : 0, p ? p : "");
	return out;
}

TEST_F_TIMEOUT(verifier_flags, runtime_flags_at_many_call_sites_load, 300)
{
	struct bpf_program *prog = self->skel->progs.many_gets;
	int map = bpf_map__fd(self->skel->maps.map);
	bool want_slot = !variant->dynamic && tail_bytes();
	unsigned int off, size;
	char line[256];
	long insns;
	int err;

	/* Without a slot the test shows nothing of the inline path. */
	ASSERT_EQ(want_slot, map_slot(map, &off, &size) == 1);
	bpf_program__set_log_level(prog, LOG_STATS);
	bpf_program__set_log_buf(prog, self->log, sizeof(self->log));
	err = verifier_flags__load(self->skel);
	insns = processed_insns(self->log);
	TH_LOG("%s map: %s", want_slot ? "inline" : "dynamic",
	       log_line(self->log, "processed ", line, sizeof(line)));
	TH_LOG("%s", log_line(self->log, "verification time", line, sizeof(line)));
	if (err)
		TH_LOG("%s", log_line(self->log, "BPF program is too large", line,
				      sizeof(line)));
	EXPECT_EQ(0, err);
	EXPECT_LT(0, insns);
	EXPECT_GT(1000000, insns);
}

TEST_HARNESS_MAIN
