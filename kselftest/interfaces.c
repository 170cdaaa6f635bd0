// SPDX-License-Identifier: GPL-2.0
/*
 * The interfaces around sk storage that are not the helpers: BPF_F_CLONE
 * on accept(), maps whose value holds a bpf_spin_lock (BPF_F_LOCK, and
 * sock_diag of such a value), the map syscalls on sockets of another
 * network namespace and on UNIX sockets, the iter/bpf_sk_storage_map
 * iterator, optmem_max and bpftool. sock_diag is diag.c's, other special
 * fields special_fields.c's.
 *
 * Every test runs in every boot and asserts the same behaviour: without a
 * tail all maps are dynamic, with one the maps that fit are inline. Where
 * the path matters, the test also asserts which one the map is on.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "sk_diag.h"
#include "interfaces.skel.h"
#include "expect_paths.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE		71
#endif

/* As in interfaces.bpf.c: the lock, then two counters. */
struct val_lock {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 a;
	__u64 b;
};

FIXTURE(interfaces)
{
	struct interfaces *skel;
	int map_inline, map_dyn, map_clone, map_lock;
};

FIXTURE_SETUP(interfaces)
{
	/* The inline map first, then the dynamic one with the tail full. */
	self->skel = interfaces__open();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, reuse_sk_map(self->skel->maps.map_inline, false));
	ASSERT_EQ(0, reuse_sk_map(self->skel->maps.map_dyn, true));
	ASSERT_EQ(0, interfaces__load(self->skel));
	self->map_inline = bpf_map__fd(self->skel->maps.map_inline);
	self->map_dyn = bpf_map__fd(self->skel->maps.map_dyn);
	self->map_clone = bpf_map__fd(self->skel->maps.map_clone);
	self->map_lock = bpf_map__fd(self->skel->maps.map_lock);
}

FIXTURE_TEARDOWN(interfaces)
{
	struct slot_ref r = slot_ref(self->map_inline);

	interfaces__destroy(self->skel);
	EXPECT_EQ(0, wait_released(r));
}

TEST_F(interfaces, clone_map_is_dynamic_even_when_the_tail_has_room)
{
	unsigned int off, size;

	EXPECT_EQ(0, map_slot(self->map_clone, &off, &size));
	if (tail_bytes() >= slot_size(sizeof(struct val16)))
		EXPECT_EQ(1, map_slot(self->map_inline, &off, &size));
}

TEST_F(interfaces, accepted_child_gets_the_clone_map_value_but_not_the_inline_one)
{
	struct val16 vc = { 0xc10e, 1 }, vi = { 0x1e1e, 2 }, out;
	struct sockaddr_in addr;
	struct tcp_conn c;

	ASSERT_EQ(0, tcp_listen(&c, &addr));
	ASSERT_EQ(0, sys_update(self->map_clone, c.lfd, &vc, BPF_NOEXIST));
	ASSERT_EQ(0, sys_update(self->map_inline, c.lfd, &vi, BPF_NOEXIST));
	ASSERT_EQ(0, tcp_accept(&c, &addr));

	ASSERT_EQ(0, sys_lookup(self->map_clone, c.afd, &out));
	EXPECT_EQ(0, memcmp(&vc, &out, sizeof(out)));
	EXPECT_EQ(-ENOENT, sys_lookup(self->map_inline, c.afd, &out));
	/* The child's copy is its own; the listener keeps both values. */
	out.b = 99;
	ASSERT_EQ(0, sys_update(self->map_clone, c.afd, &out, BPF_EXIST));
	ASSERT_EQ(0, sys_lookup(self->map_clone, c.lfd, &out));
	EXPECT_EQ(0, memcmp(&vc, &out, sizeof(out)));
	ASSERT_EQ(0, sys_lookup(self->map_inline, c.lfd, &out));
	EXPECT_EQ(0, memcmp(&vi, &out, sizeof(out)));
	/* The connecting side was never given a value. */
	EXPECT_EQ(-ENOENT, sys_lookup(self->map_clone, c.cfd, &out));
	tcp_close(&c);
}

TEST_F(interfaces, spin_lock_map_is_dynamic_even_when_the_tail_has_room)
{
	unsigned int off, size;

	EXPECT_EQ(0, map_slot(self->map_lock, &off, &size));
}

TEST_F(interfaces, spin_lock_map_takes_lock_flagged_update_and_lookup)
{
	struct val_lock in = { .a = 5, .b = 6 }, out;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), key = fd;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sys_update(self->map_lock, fd, &in, BPF_F_LOCK));
	memset(&out, 0xff, sizeof(out));
	ASSERT_EQ(0, bpf_map_lookup_elem_flags(self->map_lock, &key, &out,
					       BPF_F_LOCK));
	EXPECT_EQ(5, out.a);
	EXPECT_EQ(6, out.b);
	in.a = 7;
	ASSERT_EQ(0, sys_update(self->map_lock, fd, &in, BPF_F_LOCK | BPF_EXIST));
	ASSERT_EQ(0, bpf_map_lookup_elem_flags(self->map_lock, &key, &out,
					       BPF_F_LOCK));
	EXPECT_EQ(7, out.a);
	ASSERT_EQ(0, sys_lookup(self->map_lock, fd, &out));
	EXPECT_EQ(7, out.a);
	EXPECT_EQ(6, out.b);
	ASSERT_EQ(0, sys_delete(self->map_lock, fd));
	EXPECT_EQ(-ENOENT, sys_lookup(self->map_lock, fd, &out));
	close(fd);
}

TEST_F(interfaces, sock_diag_reports_the_spin_lock_map_value)
{
	struct val_lock in = { .a = 0x10c4, .b = 0x10c5 }, got;
	const struct diag_value *v;
	struct diag_result res;
	int fd = diag_socket(AF_INET, SOCK_STREAM);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sys_update(self->map_lock, fd, &in, BPF_F_LOCK));
	ASSERT_EQ(0, diag_storages(AF_INET, IPPROTO_TCP, sock_ino(fd),
				   &self->map_lock, 1, &res));
	ASSERT_TRUE(res.found);
	v = diag_find(&res, map_id(self->map_lock));
	ASSERT_NE(NULL, v);
	ASSERT_EQ(sizeof(got), v->len);
	memcpy(&got, v->data, sizeof(got));
	EXPECT_EQ(in.a, got.a);
	EXPECT_EQ(in.b, got.b);
	close(fd);
}

static __u64 netns_cookie(int fd)
{
	return sockopt_u64(fd, SO_NETNS_COOKIE);
}

/*
 * In a new network namespace: update, lookup and delete through a UDP and
 * a TCP socket of that namespace, then hand a socket with a value to the
 * parent. Returns the number of the step that failed, 0 if none.
 */
static int netns_child(int map, int via)
{
	struct val16 in = { 0x4e7, 0 }, out;
	int types[] = { SOCK_DGRAM, SOCK_STREAM };
	int i, fd;

	if (unshare(CLONE_NEWNET))
		return 1;
	for (i = 0; i < 2; i++) {
		fd = socket(AF_INET, types[i], 0);
		in.b = i;
		if (fd < 0)
			return 2;
		if (sys_lookup(map, fd, &out) != -ENOENT)
			return 3;
		if (sys_update(map, fd, &in, BPF_NOEXIST))
			return 4;
		if (sys_lookup(map, fd, &out) || memcmp(&in, &out, sizeof(in)))
			return 5;
		if (sys_update(map, fd, &in, BPF_NOEXIST) != -EEXIST)
			return 6;
		if (sys_delete(map, fd) || sys_lookup(map, fd, &out) != -ENOENT)
			return 7;
		close(fd);
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	in.b = 0x600d;
	if (fd < 0 || sys_update(map, fd, &in, BPF_NOEXIST))
		return 8;
	if (send_fd(via, fd))
		return 9;
	close(fd);
	return 0;
}

TEST_F(interfaces, syscalls_on_an_inline_map_work_on_sockets_of_another_netns)
{
	struct val16 want = { 0x4e7, 0x600d }, out;
	int sv[2], status, fd, here;
	pid_t pid;

	expect_paths(_metadata, self->map_inline, self->map_dyn);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		_exit(netns_child(self->map_inline, sv[1]));
	}
	close(sv[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	fd = recv_fd(sv[0]);
	ASSERT_LE(0, fd);
	close(sv[0]);

	/* It really is another namespace's socket. */
	here = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, here);
	EXPECT_NE(netns_cookie(here), netns_cookie(fd));
	EXPECT_EQ(-ENOENT, sys_lookup(self->map_inline, here, &out));
	close(here);

	ASSERT_EQ(0, sys_lookup(self->map_inline, fd, &out));
	EXPECT_EQ(0, memcmp(&want, &out, sizeof(out)));
	ASSERT_EQ(0, sys_delete(self->map_inline, fd));
	EXPECT_EQ(-ENOENT, sys_lookup(self->map_inline, fd, &out));
	close(fd);
}

TEST_F(interfaces, syscalls_on_an_inline_map_work_on_unix_sockets)
{
	int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };
	struct val16 in, out;
	int i, sv[2];

	expect_paths(_metadata, self->map_inline, self->map_dyn);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, socketpair(AF_UNIX, types[i], 0, sv));
		in = (struct val16){ 0x0417, i };
		ASSERT_EQ(-ENOENT, sys_lookup(self->map_inline, sv[0], &out));
		ASSERT_EQ(0, sys_update(self->map_inline, sv[0], &in, BPF_NOEXIST));
		ASSERT_EQ(0, sys_lookup(self->map_inline, sv[0], &out));
		EXPECT_EQ(0, memcmp(&in, &out, sizeof(out)));
		/* The peer is a socket of its own. */
		EXPECT_EQ(-ENOENT, sys_lookup(self->map_inline, sv[1], &out));
		in.a = 0x0418;
		ASSERT_EQ(0, sys_update(self->map_inline, sv[0], &in, BPF_EXIST));
		ASSERT_EQ(0, sys_lookup(self->map_inline, sv[0], &out));
		EXPECT_EQ(0x0418, out.a);
		ASSERT_EQ(0, sys_delete(self->map_inline, sv[0]));
		EXPECT_EQ(-ENOENT, sys_lookup(self->map_inline, sv[0], &out));
		EXPECT_EQ(-ENOENT, sys_delete(self->map_inline, sv[0]));
		close(sv[0]);
		close(sv[1]);
	}
}

/* Attach the iterator to @map_fd: the link, or NULL with errno set. */
static struct bpf_link *attach_map_iter(struct interfaces *skel, int map_fd)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = {};

	linfo.map.map_fd = map_fd;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	return bpf_program__attach_iter(skel->progs.visit_values, &opts);
}

/* Run the iterator to its end; 0 or -errno. */
static int run_iter(struct bpf_link *link)
{
	char buf[64];
	int fd = bpf_iter_create(bpf_link__fd(link)), n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/*
 * Values in @map for three sockets (UDP, UDP6, TCP), one in @other for a
 * fourth: the iterator on @map visits the three, then, after a delete and a
 * close, the one left.
 */
static void expect_iter_visits(struct __test_metadata *_metadata,
			       struct interfaces *skel, int map, int other_map)
{
	enum { N = 3 };
	struct val16 v = {};
	struct bpf_link *link;
	int fds[N], i, other;

	/* One socket with a value in another map only: not visited. */
	other = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, sys_update(other_map, other, &v, BPF_NOEXIST));
	for (i = 0; i < N; i++) {
		fds[i] = socket(i == 1 ? AF_INET6 : AF_INET,
				i == 2 ? SOCK_STREAM : SOCK_DGRAM, 0);
		ASSERT_LE(0, fds[i]);
		v.a = 1 << i;
		ASSERT_EQ(0, sys_update(map, fds[i], &v, BPF_NOEXIST));
	}
	link = attach_map_iter(skel, map);
	ASSERT_NE(NULL, link);
	skel->bss->visits = skel->bss->sum = skel->bss->ends = 0;
	ASSERT_EQ(0, run_iter(link));
	EXPECT_EQ(N, skel->bss->visits);
	EXPECT_EQ((1 << N) - 1, skel->bss->sum);
	EXPECT_EQ(1, skel->bss->ends);

	/* A deleted value and a closed socket are no longer visited. */
	skel->bss->visits = skel->bss->sum = 0;
	ASSERT_EQ(0, sys_delete(map, fds[0]));
	close(fds[2]);
	ASSERT_EQ(0, run_iter(link));
	EXPECT_EQ(1, skel->bss->visits);
	EXPECT_EQ(2, skel->bss->sum);
	bpf_link__destroy(link);
	close(fds[0]);
	close(fds[1]);
	close(other);
}

TEST_F(interfaces, map_iterator_visits_every_value_of_a_dynamic_map)
{
	expect_paths(_metadata, self->map_inline, self->map_dyn);
	expect_iter_visits(_metadata, self->skel, self->map_dyn,
			   self->map_inline);
}

TEST_F(interfaces, map_iterator_visits_every_value_of_an_inline_map)
{
	expect_paths(_metadata, self->map_inline, self->map_dyn);
	expect_iter_visits(_metadata, self->skel, self->map_inline,
			   self->map_dyn);
}

/* Run the printing iterator on @map_fd; its whole output in @out. */
static ssize_t print_iter(struct interfaces *skel, int map_fd, char *out,
			  size_t size)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = {};
	struct bpf_link *link;
	size_t len = 0;
	ssize_t n = 0;
	int fd;

	linfo.map.map_fd = map_fd;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(skel->progs.print_values, &opts);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd >= 0) {
		while (len + 100 < size && (n = read(fd, out + len, 100)) > 0)
			len += n;
		close(fd);
	}
	bpf_link__destroy(link);
	if (fd < 0 || n < 0)
		return -errno;
	out[len] = '\0';
	return len;
}

TEST_F(interfaces, map_iterator_resumed_across_reads_shows_each_value_once)
{
	enum { N = 300 };
	unsigned long long a, b;
	static char out[N * 64];
	int fds[N], seen[N] = {}, i, lines = 0;
	struct val16 v;
	char *line;

	expect_paths(_metadata, self->map_inline, self->map_dyn);
	for (i = 0; i < N; i++) {
		fds[i] = socket(i % 2 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
		ASSERT_LE(0, fds[i]);
		v = (struct val16){ i, ~0ULL - i };
		ASSERT_EQ(0, sys_update(self->map_inline, fds[i], &v,
					BPF_NOEXIST));
	}
	/* A read of 100 bytes stops the walk after two or three values. */
	ASSERT_LT(0, print_iter(self->skel, self->map_inline, out, sizeof(out)));
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		ASSERT_EQ(2, sscanf(line, "%llu %llu", &a, &b));
		ASSERT_GT(N, a);
		EXPECT_EQ(~0ULL - a, b);
		seen[a]++;
		lines++;
	}
	EXPECT_EQ(N, lines);
	for (i = 0; i < N; i++) {
		if (seen[i] != 1)
			TH_LOG("value %d seen %d times", i, seen[i]);
		EXPECT_EQ(1, seen[i]);
	}
	for (i = 0; i < N; i++)
		close(fds[i]);
}

TEST_F(interfaces, map_iterator_shows_nothing_a_freed_map_left_in_its_slot)
{
	struct val16 v = { 0x5eed, 1 };
	unsigned int off_a, off_b, size;
	struct bpf_link *link;
	int fd, a, b, inl;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, fd);
	a = create_sk_map(sizeof(struct val16), 0);
	ASSERT_LE(0, a);
	inl = map_slot(a, &off_a, &size);
	ASSERT_LE(0, inl);
	ASSERT_EQ(0, sys_update(a, fd, &v, BPF_NOEXIST));
	ASSERT_EQ(0, free_map(a));
	b = create_sk_map(sizeof(struct val16), 0);
	ASSERT_LE(0, b);
	ASSERT_EQ(inl, map_slot(b, &off_b, &size));
	/* The freed map's slot, with its value still in the socket. */
	if (inl)
		ASSERT_EQ(off_a, off_b);
	link = attach_map_iter(self->skel, b);
	ASSERT_NE(NULL, link);
	self->skel->bss->visits = self->skel->bss->sum = 0;
	ASSERT_EQ(0, run_iter(link));
	EXPECT_EQ(0, self->skel->bss->visits);
	/* Its own value, once stored, is. */
	v.a = 7;
	ASSERT_EQ(0, sys_update(b, fd, &v, BPF_NOEXIST));
	ASSERT_EQ(0, run_iter(link));
	EXPECT_EQ(1, self->skel->bss->visits);
	EXPECT_EQ(7, self->skel->bss->sum);
	bpf_link__destroy(link);
	close(fd);
	EXPECT_EQ(0, free_map(b));
}

#define OPTMEM_MAX	"/proc/sys/net/core/optmem_max"

/*
 * A dynamic value is charged to its socket's option memory (sk_omem_alloc)
 * and bounded by net.core.optmem_max, as sock_kmalloc() is. An inline
 * value is part of the socket object: the tail bounds it, optmem_max
 * does not, and it charges nothing there.
 */
TEST_F(interfaces, optmem_max_bounds_dynamic_values_but_not_inline_ones)
{
	struct val16 v = { .a = 1, .b = 2 }, out = {};
	unsigned int off, size;
	char old[32];
	int fd, inl, err_dyn, err_inl;

	inl = map_slot(self->map_inline, &off, &size);
	ASSERT_LE(0, inl);
	ASSERT_LT(0, read_file(OPTMEM_MAX, old, sizeof(old)));
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, fd);
	/* Smaller than any dynamic element, larger than none. */
	ASSERT_EQ(0, write_file(OPTMEM_MAX, "32"));
	err_dyn = sys_update(self->map_dyn, fd, &v, BPF_NOEXIST);
	err_inl = sys_update(self->map_inline, fd, &v, BPF_NOEXIST);
	ASSERT_EQ(0, write_file(OPTMEM_MAX, old));
	EXPECT_EQ(-ENOMEM, err_dyn);
	EXPECT_EQ(inl ? 0 : -ENOMEM, err_inl);
	if (inl) {
		ASSERT_EQ(0, sys_lookup(self->map_inline, fd, &out));
		EXPECT_EQ(v.b, out.b);
	}
	/* With the limit back, the dynamic value fits again. */
	EXPECT_EQ(0, sys_update(self->map_dyn, fd, &v, BPF_NOEXIST));
	close(fd);
}

/*
 * Run "bpftool ARGS" (split at spaces) with its stdout in @out, and return
 * its exit status; 127 when there is no bpftool in PATH. bpftool inherits
 * the test's descriptors, so a socket it names as a key is the test's.
 */
static int bpftool(char *out, size_t size, const char *fmt, ...)
{
	char cmd[512], *argv[64], *save, *tok, sink[256];
	int pipefd[2], status, argc = 0;
	size_t len = 0;
	va_list ap;
	ssize_t n;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	argv[argc++] = "bpftool";
	for (tok = strtok_r(cmd, " ", &save); tok && argc < 63;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (pipe(pipefd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		dup2(pipefd[1], STDOUT_FILENO);
		close(pipefd[0]);
		close(pipefd[1]);
		execvp("bpftool", argv);
		_exit(127);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], len + 1 < size ? out + len : sink,
			 len + 1 < size ? size - 1 - len : sizeof(sink))) > 0)
		if (len + 1 < size)
			len += n;
	out[len] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* "key B0 B1 B2 B3": socket @fd as bpftool takes an sk storage key. */
static const char *bpftool_key(int fd)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "key %d %d %d %d", fd & 0xff,
		 (fd >> 8) & 0xff, (fd >> 16) & 0xff, (fd >> 24) & 0xff);
	return buf;
}

/* "value 0xNN ..." or, for @json, the "value":["0xNN",...] it prints. */
static const char *bpftool_value(const struct val16 *v, bool json)
{
	static char buf[256];
	const unsigned char *b = (const void *)v;
	size_t i, len;

	len = snprintf(buf, sizeof(buf), json ? "\"value\":[" : "value");
	for (i = 0; i < sizeof(*v); i++)
		len += snprintf(buf + len, sizeof(buf) - len,
				json ? "%s\"0x%02x\"" : "%s0x%02x",
				!json ? " " : i ? "," : "", b[i]);
	if (json)
		snprintf(buf + len, sizeof(buf) - len, "]");
	return buf;
}

#define BPFTOOL_OUT	4096

/* bpftool must be there: a missing one fails the tests that need it. */
#define ASSERT_BPFTOOL(status)						\
	do {								\
		if ((status) == 127)					\
			TH_LOG("no bpftool in PATH");			\
		ASSERT_NE(127, (status));				\
	} while (0)

/*
 * A socket for a bpftool test, the maps on their paths; with @v, the
 * socket has @v in both maps.
 */
static int bpftool_socket(struct __test_metadata *_metadata,
			  FIXTURE_DATA(interfaces) *self, int family, int type,
			  const struct val16 *v)
{
	int fd;

	expect_paths(_metadata, self->map_inline, self->map_dyn);
	fd = socket(family, type, 0);
	ASSERT_LE(0, fd);
	if (v) {
		ASSERT_EQ(0, sys_update(self->map_inline, fd, v, BPF_NOEXIST));
		ASSERT_EQ(0, sys_update(self->map_dyn, fd, v, BPF_NOEXIST));
	}
	return fd;
}

/* bpftool's exit status for "map update" of @v for @fd in @map, noexist. */
static int bpftool_update(int map, int fd, const struct val16 *v)
{
	char buf[BPFTOOL_OUT];

	return bpftool(buf, sizeof(buf), "map update id %u %s %s noexist",
		       map_id(map), bpftool_key(fd), bpftool_value(v, false));
}

/* bpftool's exit status for "map delete" of @fd in @map. */
static int bpftool_delete(int map, int fd)
{
	char buf[BPFTOOL_OUT];

	return bpftool(buf, sizeof(buf), "map delete id %u %s", map_id(map),
		       bpftool_key(fd));
}

TEST_F(interfaces, bpftool_update_stores_what_the_syscall_reads_on_both_paths)
{
	int maps[] = { self->map_inline, self->map_dyn };
	struct val16 v, out;
	int i, fd, st;

	fd = bpftool_socket(_metadata, self, AF_INET, SOCK_DGRAM, NULL);
	for (i = 0; i < 2; i++) {
		v = (struct val16){ 0x1020304050607080ULL + i, 0xa5 };
		st = bpftool_update(maps[i], fd, &v);
		ASSERT_BPFTOOL(st);
		ASSERT_EQ(0, st);
		ASSERT_EQ(0, sys_lookup(maps[i], fd, &out));
		EXPECT_EQ(0, memcmp(&v, &out, sizeof(v)));
		/* noexist on a present value fails, and changes nothing. */
		v.b = 0x5a;
		EXPECT_NE(0, bpftool_update(maps[i], fd, &v));
		ASSERT_EQ(0, sys_lookup(maps[i], fd, &out));
		EXPECT_EQ(0xa5, out.b);
	}
	close(fd);
}

TEST_F(interfaces, bpftool_lookup_prints_the_same_value_on_both_paths)
{
	struct val16 v = { 0xfeedULL << 32 | 0xbeef, 7 };
	char in[BPFTOOL_OUT], dyn[BPFTOOL_OUT];
	int fd, st;

	fd = bpftool_socket(_metadata, self, AF_INET6, SOCK_STREAM, &v);
	st = bpftool(in, sizeof(in), "-j map lookup id %u %s",
		     map_id(self->map_inline), bpftool_key(fd));
	ASSERT_BPFTOOL(st);
	ASSERT_EQ(0, st);
	st = bpftool(dyn, sizeof(dyn), "-j map lookup id %u %s",
		     map_id(self->map_dyn), bpftool_key(fd));
	ASSERT_EQ(0, st);
	TH_LOG("inline: %s", in);
	EXPECT_NE(NULL, strstr(in, bpftool_value(&v, true)));
	EXPECT_STREQ(dyn, in);
	close(fd);
}

TEST_F(interfaces, bpftool_delete_removes_the_value_on_both_paths)
{
	int maps[] = { self->map_inline, self->map_dyn };
	struct val16 v = { 1, 2 }, out;
	int i, fd, st;

	fd = bpftool_socket(_metadata, self, AF_INET, SOCK_STREAM, NULL);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, sys_update(maps[i], fd, &v, BPF_NOEXIST));
		st = bpftool_delete(maps[i], fd);
		ASSERT_BPFTOOL(st);
		EXPECT_EQ(0, st);
		EXPECT_EQ(-ENOENT, sys_lookup(maps[i], fd, &out));
		/* A second delete finds nothing, on either path. */
		EXPECT_NE(0, bpftool_delete(maps[i], fd));
	}
	close(fd);
}

TEST_F(interfaces, bpftool_dump_behaves_alike_on_both_paths)
{
	struct val16 v = { 3, 4 };
	char in[BPFTOOL_OUT], dyn[BPFTOOL_OUT];
	int fd, st_in, st_dyn;

	fd = bpftool_socket(_metadata, self, AF_INET, SOCK_DGRAM, &v);
	st_in = bpftool(in, sizeof(in), "-j map dump id %u",
			map_id(self->map_inline));
	ASSERT_BPFTOOL(st_in);
	st_dyn = bpftool(dyn, sizeof(dyn), "-j map dump id %u",
			 map_id(self->map_dyn));
	TH_LOG("dump: inline %d '%s', dynamic %d '%s'", st_in, in, st_dyn, dyn);
	EXPECT_EQ(st_dyn, st_in);
	EXPECT_STREQ(dyn, in);
	close(fd);
}

TEST_HARNESS_MAIN
