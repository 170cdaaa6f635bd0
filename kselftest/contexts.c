// SPDX-License-Identifier: GPL-2.0
/*
 * Which tracing programs may call bpf_sk_storage_get(): not those attached
 * to the sk storage code itself (bpf_sk_storage*() upstream, and the inline
 * storage's bpf_sk_inline*() alike), where the helper would run inside the
 * operation it interrupted, on the same socket or slot. Elsewhere they may.
 */
#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "contexts.skel.h"

/* Load only @name's program: 0 or the load's error. */
static int load_only(const char *name)
{
	struct contexts *skel = contexts__open();
	struct bpf_program *prog;
	int err;

	if (!skel)
		return -ENOMEM;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, !strcmp(bpf_program__name(prog), name));
	libbpf_set_print(NULL);
	err = contexts__load(skel);
	contexts__destroy(skel);
	return err;
}

TEST(helper_refused_in_programs_on_bpf_sk_storage_functions)
{
	EXPECT_NE(0, load_only("get_on_bpf_sk_storage_free"));
}

TEST(helper_refused_in_programs_on_bpf_sk_inline_functions)
{
	EXPECT_NE(0, load_only("get_on_bpf_sk_inline_link"));
	EXPECT_NE(0, load_only("get_on_bpf_sk_inline_unlink"));
}

TEST(helper_allowed_in_programs_on_other_functions)
{
	EXPECT_EQ(0, load_only("get_on_udp_destroy_sock"));
}

TEST_HARNESS_MAIN
