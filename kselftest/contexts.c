// SPDX-License-Identifier: GPL-2.0
/*
 * Which tracing programs may call bpf_sk_storage_get(): not those attached
 * to the sk storage code itself (bpf_sk_storage*() upstream, and the
 * functions the inline storage runs for the helpers, all named
 * bpf_sk_inline*(), __bpf_sk_inline*() or sk_inline_*()), where the helper
 * would run inside the operation it interrupted, on the same socket, slot
 * or lock. Elsewhere they may. The functions are taken from the running
 * kernel's symbols, so each refusal is tested against a target that
 * exists (__bpf_sk_inline_destruct() among them), and must be the verifier's
 * refusal of the helper, not any failure.
 */
#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "contexts.skel.h"

#define REFUSAL		"helper call is not allowed in probe"
#define MAX_FUNCS	256

static char log_buf[1 << 16];

/* Load the program attached to @func: 0 or -errno, the log in log_buf. */
static int load_on(const char *func)
{
	struct contexts *skel = contexts__open();
	int err;

	if (!skel)
		return -ENOMEM;
	log_buf[0] = 0;
	bpf_program__set_log_buf(skel->progs.get_on_target, log_buf, sizeof(log_buf));
	err = bpf_program__set_attach_target(skel->progs.get_on_target, 0, func);
	libbpf_set_print(NULL);
	if (!err)
		err = contexts__load(skel);
	contexts__destroy(skel);
	return err;
}

/* Functions of the inline storage: every text symbol with its prefixes. */
static int series_funcs(char names[][128], int max)
{
	static const char * const prefixes[] = {
		"bpf_sk_inline", "__bpf_sk_inline", "sk_inline_",
	};
	char line[512], type, name[128];
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "r");
	int n = 0;
	size_t i;

	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &addr, &type, name) != 3 ||
		    (type != 't' && type != 'T') || strchr(line, '['))
			continue;
		for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
				break;
		if (i < sizeof(prefixes) / sizeof(prefixes[0]))
			strcpy(names[n++], name);
	}
	fclose(f);
	return n;
}

/* Each load reads the kernel's BTF: slow on a debug kernel. */
FIXTURE(contexts) {
	int unused;
};

FIXTURE_SETUP(contexts)
{
}

FIXTURE_TEARDOWN(contexts)
{
}

TEST_F_TIMEOUT(contexts, helper_refused_in_programs_on_bpf_sk_storage_functions, 300)
{
	EXPECT_EQ(-EINVAL, load_on("bpf_sk_storage_free"));
	EXPECT_NE(NULL, strstr(log_buf, REFUSAL)) TH_LOG("%s", log_buf);
}

TEST_F_TIMEOUT(contexts, helper_refused_in_programs_on_every_inline_storage_function, 300)
{
	static char names[MAX_FUNCS][128];
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool destruct_seen = false;
	int n, i, tested = 0;

	ASSERT_NE(NULL, vmlinux);
	n = series_funcs(names, MAX_FUNCS);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++) {
		/* Without BTF no tracing program attaches at all. */
		if (btf__find_by_name_kind(vmlinux, names[i], BTF_KIND_FUNC) < 0) {
			TH_LOG("%s: no BTF, nothing attaches", names[i]);
			continue;
		}
		EXPECT_EQ(-EINVAL, load_on(names[i])) TH_LOG("%s", names[i]);
		EXPECT_NE(NULL, strstr(log_buf, REFUSAL)) TH_LOG("%s: %s", names[i], log_buf);
		destruct_seen |= !strcmp(names[i], "__bpf_sk_inline_destruct");
		tested++;
	}
	TH_LOG("%d functions tested", tested);
	EXPECT_TRUE(destruct_seen);
	btf__free(vmlinux);
}

TEST_F_TIMEOUT(contexts, helper_allowed_in_programs_on_other_functions, 300)
{
	EXPECT_EQ(0, load_on("udp_destroy_sock")) TH_LOG("%s", log_buf);
	EXPECT_EQ(0, load_on("security_sk_free")) TH_LOG("%s", log_buf);
}

TEST_HARNESS_MAIN
