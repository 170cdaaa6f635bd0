// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_sk_inline_bytes is chosen on the command line, as
 * sysctl.net.core.bpf_sk_inline_bytes= (dots or slashes) or
 * bpf_sk_inline_bytes=, and fixed after boot: net.core.bpf_sk_inline_bytes
 * takes only the value it has. Every full socket cache is sized from it.
 *
 * The expected value is derived from this boot's /proc/cmdline, so the same
 * binary checks every boot configuration. Base sizes come from the kernel
 * itself: /proc/net/protocols reports each protocol's obj_size, which does
 * not depend on the tail, and BTF reports the request and timewait socks.
 */
#include <sys/stat.h>
#include <bpf/btf.h>

#include "../kselftest_harness.h"
#include "sk_inline_util.h"

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

TEST(sysctl_is_writable_by_root)
{
	struct stat st;

	ASSERT_EQ(0, stat(INLINE_BYTES_SYSCTL, &st));
	ASSERT_EQ(0644, st.st_mode & 07777);
}

/*
 * After boot the value in effect can be written back (do_sysctl_args()
 * does, for the sysctl. spelling), also unaligned if it rounds up to it;
 * any other value fails with EPERM, a malformed one with EINVAL, and
 * nothing changes.
 */
TEST(only_the_value_in_effect_can_be_written)
{
	const char *invalid[] = { "1025", "-8", "abc", "12abc", "\n" };
	long before = sysctl_now();
	char val[32];
	int i;

	ASSERT_LE(0, before);
	snprintf(val, sizeof(val), "%ld\n", before);
	EXPECT_EQ(0, write_file(INLINE_BYTES_SYSCTL, val));
	if (before) {
		snprintf(val, sizeof(val), "%ld", before - INLINE_ALIGN + 1);
		EXPECT_EQ(0, write_file(INLINE_BYTES_SYSCTL, val));
	}
	snprintf(val, sizeof(val), "%ld", before ? 0L : (long)INLINE_ALIGN);
	EXPECT_EQ(-EPERM, write_file(INLINE_BYTES_SYSCTL, val));
	snprintf(val, sizeof(val), "%ld", before == INLINE_MAX_BYTES ?
		 (long)INLINE_ALIGN : before + INLINE_ALIGN);
	EXPECT_EQ(-EPERM, write_file(INLINE_BYTES_SYSCTL, val));
	for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		EXPECT_EQ(-EINVAL, write_file(INLINE_BYTES_SYSCTL, invalid[i])) {
			TH_LOG("writing \"%s\"", invalid[i]);
		}
	}
	ASSERT_EQ(before, sysctl_now());
}

/* Only protocols bpf_sk_inline_protos= names do (all by default). */
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

TEST(boot_log_reports_a_bad_value_exactly_once)
{
	const char *arg = inline_bytes_boot_arg();
	unsigned int bytes;
	int want = arg && !inline_bytes_valid(arg, &bytes) ? 1 : 0;

	ASSERT_EQ(want, count_log_lines("bpf_sk_inline_bytes: ", "invalid value"));
}

TEST(boot_log_reports_rounding_of_an_unaligned_value)
{
	const char *arg = inline_bytes_boot_arg();
	unsigned int bytes = 0;
	int want = 0;

	if (inline_bytes_valid(arg, &bytes) && bytes % INLINE_ALIGN)
		want = 1;
	ASSERT_EQ(want, count_log_lines("bpf_sk_inline_bytes: ", "rounded up"));
}

/*
 * do_sysctl_args() writes each sysctl. spelling of the argument to the
 * file after the boot: it logs a failure only for a value the kernel did
 * not take, malformed or overridden by a later spelling. The tail is the
 * last spelling's in either case.
 */
TEST(the_sysctl_spellings_set_the_tail_with_no_error_logged)
{
	unsigned int want = expected_inline_bytes(), bytes;
	char cmdline[4096], *w, *save;
	const char *v;
	int failures = 0;

	ASSERT_LT(0, read_file("/proc/cmdline", cmdline, sizeof(cmdline)));
	for (w = strtok_r(cmdline, " \n", &save); w;
	     w = strtok_r(NULL, " \n", &save)) {
		v = boot_word_sets(w, INLINE_BYTES_BOOT_ARG);
		if (!v || v == w + strlen(INLINE_BYTES_BOOT_ARG))
			continue;	/* not a sysctl. spelling */
		if (!inline_bytes_valid(v, &bytes) ||
		    align_up(bytes, INLINE_ALIGN) != want)
			failures++;
	}
	EXPECT_EQ(failures, count_log_lines("sysctl parameter",
					    "bpf_sk_inline_bytes"));
	ASSERT_EQ((long)want, sysctl_now());
}

TEST_HARNESS_MAIN
