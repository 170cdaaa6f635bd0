// SPDX-License-Identifier: GPL-2.0
/*
 * net.core.bpf_sk_inline_protos, set on the command line
 * (sysctl.net.core.bpf_sk_inline_protos=LIST, in any spelling "sysctl."
 * takes) and read-only after boot, chooses the protocols whose sockets
 * carry the tail; a map with a slot keeps the values of other protocols'
 * sockets dynamically.
 * Programs (bpf_sk_storage_get()/delete() from cgroup sockopt programs) and
 * syscalls see the same values either way, and the map's iterator visits
 * every value once, in a slot of the socket's tail exactly where the
 * socket's protocol has one. Object sizes are checked by inline_bytes.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/if_ether.h>
#include <arpa/inet.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "sock_kinds.h"
#include "protocols.skel.h"

#define NR_KINDS	NR_SOCK_KINDS	/* at most */
#define PER_KIND	4

/* The kinds this test opens, set up with the fixture. */
static const struct sock_kind *kinds[NR_KINDS];
static int nr_kinds;

/* obj_size of protocol @name from /proc/net/protocols, or -1. */
static long proto_obj_size(const char *name)
{
	char line[512], n[64];
	unsigned int size;
	long found = -1;
	FILE *f = fopen("/proc/net/protocols", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %u", n, &size) == 2 && !strcmp(n, name))
			found = size;
	fclose(f);
	return found;
}

FIXTURE(protocols) {
	struct attached drv;
	struct protocols *iter;
	int map;
	int fds[NR_KINDS][PER_KIND];
	__u64 cookies[NR_KINDS][PER_KIND];
	int seen[NR_KINDS][PER_KIND];
	long offsets[NR_KINDS][PER_KIND];
};

FIXTURE_SETUP(protocols)
{
	int k, i;

	memset(self->fds, -1, sizeof(self->fds));
	nr_kinds = sock_kinds_of(KIND_PROTOCOLS, kinds);
	ASSERT_EQ(0, attach_driver(&self->drv));
	self->map = bpf_map__fd(self->drv.skel->maps.map_a);
	self->iter = protocols__open_and_load();
	ASSERT_NE(NULL, self->iter);
	for (k = 0; k < nr_kinds; k++)
		for (i = 0; i < PER_KIND; i++) {
			self->fds[k][i] = socket(kinds[k]->family, kinds[k]->type,
						 kinds[k]->family == AF_PACKET ?
						 htons(ETH_P_ALL) : kinds[k]->protocol);
			ASSERT_LE(0, self->fds[k][i]) TH_LOG("%s", kinds[k]->proto);
			self->cookies[k][i] = sk_cookie(self->fds[k][i]);
			ASSERT_NE(0, self->cookies[k][i]);
		}
}

FIXTURE_TEARDOWN(protocols)
{
	struct slot_ref a = slot_ref(self->map);
	int k, i;

	for (k = 0; k < nr_kinds; k++)
		for (i = 0; i < PER_KIND; i++)
			if (self->fds[k][i] >= 0)
				close(self->fds[k][i]);
	protocols__destroy(self->iter);
	detach_driver(&self->drv);
	EXPECT_EQ(0, wait_released(a));
}

/* Read the map's iterator to its end, 64 bytes a read(): resumed walks. */
static int walk(FIXTURE_DATA(protocols) *self, int *others)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = { .map.map_fd = self->map };
	char buf[4096] = "", *line, *save;
	struct bpf_link *link;
	size_t len = 0;
	ssize_t n;
	int fd, k, i;

	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(self->iter->progs.print_offsets, &opts);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		bpf_link__destroy(link);
		return -errno;
	}
	while (len < sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len < 64 ?
			 sizeof(buf) - 1 - len : 64)) > 0)
		len += n;
	buf[len] = 0;
	close(fd);
	bpf_link__destroy(link);
	memset(self->seen, 0, sizeof(self->seen));
	*others = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long cookie;
		long long off;
		bool ours = false;

		if (sscanf(line, "%llu %lld", &cookie, &off) != 2)
			return -EINVAL;
		for (k = 0; k < nr_kinds; k++)
			for (i = 0; i < PER_KIND; i++)
				if (self->cookies[k][i] == cookie) {
					self->seen[k][i]++;
					self->offsets[k][i] = off;
					ours = true;
				}
		*others += !ours;
	}
	return 0;
}

/*
 * The file shows the list in effect and is read-only (0444), for root
 * too: a write fails with EACCES when the file is opened, whatever it
 * writes, and changes nothing.
 */
TEST(sysctl_shows_the_protocols_chosen_at_boot)
{
	char now[512] = "";
	struct stat st;

	ASSERT_LT(0, read_file(INLINE_PROTOS_SYSCTL, now, sizeof(now)));
	now[strcspn(now, "\n")] = 0;
	EXPECT_STREQ(expected_inline_protos(), now);
	ASSERT_EQ(0, stat(INLINE_PROTOS_SYSCTL, &st));
	EXPECT_EQ(0444, st.st_mode & 07777);
	ASSERT_EQ(0, geteuid());
	EXPECT_EQ(-EACCES, write_file(INLINE_PROTOS_SYSCTL, now));
	EXPECT_EQ(-EACCES, write_file(INLINE_PROTOS_SYSCTL,
				      strcmp(now, "TCP") ? "TCP" : "all"));
	EXPECT_EQ(-EACCES, write_file(INLINE_PROTOS_SYSCTL, "\n"));
	ASSERT_LT(0, read_file(INLINE_PROTOS_SYSCTL, now, sizeof(now)));
	now[strcspn(now, "\n")] = 0;
	EXPECT_STREQ(expected_inline_protos(), now);
}

static void count_invalid_list(const char *val, void *arg)
{
	*(int *)arg += !inline_protos_valid(val);
}

/*
 * Each empty or overlong list given is reported once and leaves the list
 * in effect as it was (the default, or an earlier argument's); with a tail,
 * each name of the list in effect that no protocol registered by the end
 * of the boot is reported once, and no other.
 */
TEST(boot_log_reports_a_bad_list_and_unknown_names)
{
	const char *p = expected_inline_protos();
	int bad = 0, unknown = 0;
	char name[64], needle[80];
	size_t n;

	ASSERT_LE(0, boot_sysctl_each(INLINE_PROTOS_BOOT_ARG, count_invalid_list, &bad));
	EXPECT_EQ(bad, count_log_lines("bpf_sk_inline_protos", "invalid list"));
	if (!expected_inline_bytes() || !strcmp(p, "all")) {
		EXPECT_EQ(0, count_log_lines("bpf_sk_inline_protos", "registered"));
		return;
	}
	for (; *p; p += n + !!p[n]) {
		n = strcspn(p, ",");
		snprintf(name, sizeof(name), "%.*s", (int)n, p);
		snprintf(needle, sizeof(needle), "no protocol \"%s\"", name);
		if (proto_obj_size(name) < 0) {
			EXPECT_EQ(1, count_log_lines("bpf_sk_inline_protos", needle))
				TH_LOG("%s", name);
			unknown++;
		}
	}
	EXPECT_EQ(unknown, count_log_lines("bpf_sk_inline_protos", "registered"));
}

TEST_F(protocols, values_live_in_the_tail_exactly_where_the_protocol_has_one)
{
	unsigned int off, size;
	int k, i, others, tailed = 0, tailless = 0;
	struct val16 in, out;

	if (map_slot(self->map, &off, &size) != 1) {
		ASSERT_EQ(0, tail_bytes());
		off = 0;
	}
	/* Even sockets get their value from a program, odd ones from a syscall. */
	for (k = 0; k < nr_kinds; k++)
		for (i = 0; i < PER_KIND; i++) {
			in = (struct val16){ k, i };
			if (i % 2) {
				ASSERT_EQ(0, sys_update(self->map, self->fds[k][i], &in,
							BPF_NOEXIST))
					TH_LOG("%s", kinds[k]->proto);
			} else {
				ASSERT_EQ(0, helper_create(self->fds[k][i], MAP_A, &in,
							   sizeof(in)))
					TH_LOG("%s", kinds[k]->proto);
			}
		}
	/* Each side sees what the other wrote. */
	for (k = 0; k < nr_kinds; k++)
		for (i = 0; i < PER_KIND; i++) {
			ASSERT_EQ(0, sys_lookup(self->map, self->fds[k][i], &out));
			EXPECT_EQ(k, out.a);
			EXPECT_EQ(i, out.b);
			memset(&out, 0, sizeof(out));
			ASSERT_EQ(0, helper_get(self->fds[k][i], MAP_A, &out, sizeof(out)));
			EXPECT_EQ(k, out.a);
			EXPECT_EQ(i, out.b);
		}

	ASSERT_EQ(0, walk(self, &others));
	EXPECT_EQ(0, others);
	for (k = 0; k < nr_kinds; k++) {
		long obj = proto_obj_size(kinds[k]->proto);
		long slot = align_up(obj, INLINE_ALIGN) + INLINE_LINK_BYTES + off + SLOT_HDR;
		bool tail = proto_has_tail(kinds[k]->proto);

		ASSERT_LT(0, obj) TH_LOG("%s", kinds[k]->proto);
		tailed += tail;
		tailless += !tail;
		for (i = 0; i < PER_KIND; i++) {
			EXPECT_EQ(1, self->seen[k][i]) TH_LOG("%s %d", kinds[k]->proto, i);
			if (tail) {
				EXPECT_EQ(slot, self->offsets[k][i]);
			} else {
				EXPECT_NE(slot, self->offsets[k][i]);
			}
		}
		TH_LOG("%s: %s", kinds[k]->proto, tail ? "inline" : "dynamic");
	}
	TH_LOG("%d kinds with a tail, %d without", tailed, tailless);

	/* Deletes from either side; the walk then finds none of them. */
	for (k = 0; k < nr_kinds; k++)
		for (i = 0; i < PER_KIND; i++)
			if (i % 2) {
				ASSERT_EQ(0, helper_delete(self->fds[k][i], MAP_A));
			} else {
				ASSERT_EQ(0, sys_delete(self->map, self->fds[k][i]));
			}
	ASSERT_EQ(0, walk(self, &others));
	for (k = 0; k < nr_kinds; k++)
		for (i = 0; i < PER_KIND; i++) {
			EXPECT_EQ(0, self->seen[k][i]);
			EXPECT_EQ(-ENOENT, sys_lookup(self->map, self->fds[k][i], &out));
		}
}

TEST_HARNESS_MAIN
