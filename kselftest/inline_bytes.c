// SPDX-License-Identifier: GPL-2.0
/*
 * net.core.bpf_sk_inline_bytes is set on the command line, in any spelling
 * "sysctl." takes ('.' or '/' between the names, repeated or leading
 * separators), before the initcalls, and read-only after boot: the file is
 * 0444 and do_sysctl_args() neither writes it again nor logs anything for
 * it. There is no plain bpf_sk_inline_bytes= parameter. Every full socket
 * cache is sized from it.
 *
 * The expected value is derived from this boot's /proc/cmdline, parsed as
 * the kernel parses it (sk_inline_util.h), so the same binary checks every
 * boot configuration. Base sizes come from the kernel
 * itself: /proc/net/protocols reports each protocol's obj_size, which does
 * not depend on the tail, and BTF reports the request and timewait socks.
 */
#include <sys/stat.h>
#include <bpf/btf.h>

#include "../kselftest_harness.h"
#include "sk_inline_util.h"

/* The plain spelling of earlier versions, now no parameter at all. */
#define PLAIN_BYTES_ARG		"bpf_sk_inline_bytes="

static long sysctl_now(void)
{
	return read_ulong(INLINE_BYTES_SYSCTL);
}

static long slab_object_size(const char *cache)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/object_size", cache);
	return read_ulong(path);
}

TEST(sysctl_reports_the_value_chosen_at_boot)
{
	ASSERT_EQ((long)expected_inline_bytes(), sysctl_now());
}

/* The plain spelling is no parameter: it goes to init, and sets nothing. */
TEST(the_plain_spelling_sets_nothing)
{
	char buf[4096], *words[256];
	int i, n, plain = 0;

	n = cmdline_words(buf, sizeof(buf), words, 256);
	ASSERT_LE(0, n);
	for (i = 0; i < n; i++)
		plain += !strncmp(words[i], PLAIN_BYTES_ARG,
				  strlen(PLAIN_BYTES_ARG));
	if (!plain)
		SKIP(return, "no plain bpf_sk_inline_bytes= on the command line");
	if (inline_bytes_boot_arg())
		SKIP(return, "a sysctl spelling sets the tail");
	ASSERT_EQ(0, sysctl_now());
	EXPECT_EQ(0, count_log_lines("bpf_sk_inline_bytes: ", NULL));
}

/*
 * Both files are read-only, for root too: a write fails with EACCES when
 * the file is opened, whatever the value, and nothing changes.
 */
TEST(the_sysctls_are_read_only)
{
	const char *files[] = { INLINE_BYTES_SYSCTL, INLINE_PROTOS_SYSCTL };
	char before[512], after[512];
	struct stat st;
	int i;

	ASSERT_EQ(0, geteuid());
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, stat(files[i], &st));
		EXPECT_EQ(0444, st.st_mode & 07777) TH_LOG("%s", files[i]);
		ASSERT_LT(0, read_file(files[i], before, sizeof(before)));
		EXPECT_EQ(-EACCES, write_file(files[i], before));
		EXPECT_EQ(-EACCES, write_file(files[i], i ? "TCP" : "64"));
		ASSERT_LT(0, read_file(files[i], after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}
}

/* Only protocols net.core.bpf_sk_inline_protos names do (all by default). */
TEST(every_full_socket_cache_grew_by_exactly_the_tail_and_its_link)
{
	const char *required[] = { "TCP", "TCPv6", "UDP", "UDPv6", "UNIX",
				   "UNIX-STREAM", "RAW", "PING" };
	unsigned int tail = expected_inline_bytes();
	char name[64], slab[8], line[512];
	int checked = 0, i, found;
	unsigned int obj_size;
	FILE *f;

	f = fopen("/proc/net/protocols", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));	/* header */
	while (fgets(line, sizeof(line), f)) {
		long want, got;

		ASSERT_EQ(3, sscanf(line, "%63s %u %*d %*d %*s %*u %7s", name,
				    &obj_size, slab)) TH_LOG("line: %s", line);
		if (strcmp(slab, "yes"))
			continue;
		want = proto_has_tail(name) ? align_up(obj_size, INLINE_ALIGN) +
					      INLINE_LINK_BYTES + tail : obj_size;
		got = slab_object_size(name);
		EXPECT_EQ(want, got)
			TH_LOG("%s: obj_size %u, tail %u", name, obj_size, tail);
		checked++;
	}
	fclose(f);
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		found = slab_object_size(required[i]) > 0;
		EXPECT_TRUE(found) {
			TH_LOG("no slab cache for %s", required[i]);
		}
	}
	ASSERT_LE(8, checked);
}

static long btf_struct_size(const char *name)
{
	struct btf *btf = btf__load_vmlinux_btf();
	long size = -1;
	int id;

	if (!btf)
		return -1;
	id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);
	if (id > 0)
		size = btf__resolve_size(btf, id);
	btf__free(btf);
	return size;
}

TEST(request_and_timewait_socket_caches_keep_their_size)
{
	long req = btf_struct_size("tcp_request_sock");
	long tw = btf_struct_size("tcp_timewait_sock");

	ASSERT_LT(0, req);
	ASSERT_LT(0, tw);
	EXPECT_EQ(req, slab_object_size("request_sock_TCP"));
	EXPECT_EQ(req, slab_object_size("request_sock_TCPv6"));
	EXPECT_EQ(tw, slab_object_size("tw_sock_TCP"));
	EXPECT_EQ(tw, slab_object_size("tw_sock_TCPv6"));
}

/*
 * The setter runs for every spelling of the argument on the command line,
 * in order: each invalid value is reported once, and each valid unaligned
 * one's rounding, whichever argument is the last.
 */
static void count_bytes_args(int *invalid, int *unaligned)
{
	char buf[4096], *words[256];
	unsigned int bytes;
	const char *v;
	int i, n;

	*invalid = *unaligned = 0;
	n = cmdline_words(buf, sizeof(buf), words, 256);
	for (i = 0; i < n; i++) {
		v = sysctl_word_sets(words[i], INLINE_BYTES_BOOT_ARG);
		if (!v || *v != '=')
			continue;
		if (!inline_bytes_valid(v + 1, &bytes))
			(*invalid)++;
		else if (bytes % INLINE_ALIGN)
			(*unaligned)++;
	}
}

TEST(boot_log_reports_each_bad_value_once)
{
	int invalid, unaligned;

	count_bytes_args(&invalid, &unaligned);
	ASSERT_EQ(invalid, count_log_lines("bpf_sk_inline_bytes: ", "invalid value"));
}

TEST(boot_log_reports_rounding_of_each_unaligned_value)
{
	int invalid, unaligned;

	count_bytes_args(&invalid, &unaligned);
	ASSERT_EQ(unaligned, count_log_lines("bpf_sk_inline_bytes: ", "rounded up"));
}

/*
 * Each sysctl spelling of the argument is taken while the command line is
 * parsed: the last one counts, an invalid one is reported as a failed
 * sysctl setting (once), and nothing else is logged about it, neither by
 * do_sysctl_args() after the initcalls nor as an unknown parameter passed
 * to init.
 */
TEST(the_sysctl_spellings_set_the_tail_with_no_error_logged)
{
	const char *paths[] = { INLINE_BYTES_BOOT_ARG, INLINE_PROTOS_BOOT_ARG };
	char buf[4096], *words[256];
	int i, j, n, invalid = 0, plain = 0;
	unsigned int bytes;
	const char *v;

	n = cmdline_words(buf, sizeof(buf), words, 256);
	ASSERT_LE(0, n);
	for (i = 0; i < n; i++) {
		plain += !strncmp(words[i], "bpf_sk_inline_", 14);
		for (j = 0; j < 2; j++) {
			v = sysctl_word_sets(words[i], paths[j]);
			if (!v)
				continue;
			if (*v != '=')
				invalid++;
			else if (!j && !inline_bytes_valid(v + 1, &bytes))
				invalid++;
			else if (j && !inline_protos_valid(v + 1))
				invalid++;
		}
	}
	EXPECT_EQ(invalid, count_log_lines("sysctl parameter", "bpf_sk_inline_"));
	EXPECT_EQ(invalid, count_log_lines("sysctl parameter", "invalid value"));
	/* Only a plain spelling is unknown, and passed to init. */
	EXPECT_EQ(!!plain, count_log_lines("Unknown kernel command line",
					   "bpf_sk_inline_"));
	ASSERT_EQ((long)expected_inline_bytes(), sysctl_now());
}

TEST_HARNESS_MAIN
