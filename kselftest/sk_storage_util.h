/* SPDX-License-Identifier: GPL-2.0 */
/* User-space side of the sk storage tests: drive the helpers and syscalls. */
#ifndef SK_STORAGE_UTIL_H
#define SK_STORAGE_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "sk_inline_util.h"
#include "sk_storage_test.h"
#include "sk_storage.skel.h"

#define REUSE_SYSCTL	"/proc/sys/net/core/bpf_sk_inline_reuse"
#define SLOT_HDR	8

#ifndef SO_COOKIE
#define SO_COOKIE	57
#endif

/* Bytes a map with @value_size takes in the tail: owner tag + value. */
static inline unsigned int slot_size(unsigned int value_size)
{
	return align_up(SLOT_HDR + value_size, INLINE_ALIGN);
}

/* Helper side: bpf_sk_storage_get()/delete() run by the cgroup programs. */
static inline int helper_create(int fd, int map, const void *val, socklen_t len)
{
	return setsockopt(fd, SOL_SK_STORAGE_TEST, OPTNAME(map, OP_CREATE),
			  val, len) ? -errno : 0;
}

static inline int helper_create_zero(int fd, int map)
{
	char dummy = 0;

	return setsockopt(fd, SOL_SK_STORAGE_TEST,
			  OPTNAME(map, OP_CREATE_ZERO), &dummy, 1) ? -errno : 0;
}

static inline int helper_delete(int fd, int map)
{
	char dummy = 0;

	return setsockopt(fd, SOL_SK_STORAGE_TEST, OPTNAME(map, OP_DELETE),
			  &dummy, 1) ? -errno : 0;
}

static inline int helper_race(int fd, int map, const struct race_cmd *cmd)
{
	return setsockopt(fd, SOL_SK_STORAGE_TEST, OPTNAME(map, OP_RACE),
			  cmd, sizeof(*cmd)) ? -errno : 0;
}

static inline int helper_get(int fd, int map, void *out, socklen_t len)
{
	socklen_t got = len;

	if (getsockopt(fd, SOL_SK_STORAGE_TEST, OPTNAME(map, OP_GET), out, &got))
		return -errno;
	return got == len ? 0 : -EMSGSIZE;
}

/* Syscall side: BPF_MAP_*_ELEM keyed by socket fd; 0 or -errno. */
/*
 * The dynamic path returns EAGAIN when the socket's storage is being
 * installed by another CPU or torn down by a map free: retry, as user space
 * has to. The inline path never returns it.
 */
static inline int sys_update(int map_fd, int fd, const void *val, __u64 flags)
{
	int err, tries = 0;

	do {
		err = bpf_map_update_elem(map_fd, &fd, val, flags) ? -errno : 0;
	} while (err == -EAGAIN && ++tries < 1000);
	return err;
}

static inline int sys_lookup(int map_fd, int fd, void *val)
{
	return bpf_map_lookup_elem(map_fd, &fd, val) ? -errno : 0;
}

static inline int sys_delete(int map_fd, int fd)
{
	return bpf_map_delete_elem(map_fd, &fd) ? -errno : 0;
}

/* A __u64 SOL_SOCKET option (SO_COOKIE, SO_NETNS_COOKIE) of @fd, or 0. */
static inline __u64 sockopt_u64(int fd, int optname)
{
	socklen_t len = sizeof(__u64);
	__u64 val = 0;

	if (getsockopt(fd, SOL_SOCKET, optname, &val, &len))
		return 0;
	return val;
}

static inline __u64 sk_cookie(int fd)
{
	return sockopt_u64(fd, SO_COOKIE);
}

/* Send @fd over the UNIX socket @via; 0 or -errno. */
static inline int send_fd(int via, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(via, &msg, 0) == 1 ? 0 : -errno;
}

/* The descriptor send_fd() sent over @via, or -errno. */
static inline int recv_fd(int via)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	ssize_t n;
	int fd;

	n = recvmsg(via, &msg, 0);
	if (n != 1)
		return n < 0 ? -errno : -EIO;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EBADMSG;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * Start @fn(@arg) in a thread that runs on CPU 1 from the start, never
 * first on its creator's CPU, which the test may be holding busy.
 */
static inline int start_on_cpu1(pthread_t *th, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(1, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return err;
}

static inline unsigned int tail_bytes(void)
{
	return read_ulong(INLINE_BYTES_SYSCTL);
}

/* Would a map of @value_size that asks now get a slot? */
static inline bool tail_has_room(unsigned int value_size)
{
	struct layout l;

	if (!tail_bytes())
		return false;
	layout_read(&l);	/* no range if unreadable */
	return layout_capacity(&l, slot_size(value_size)) > 0;
}

/* Write back a REUSE_SYSCTL value saved with read_ulong(). */
static inline void restore_reuse(long policy)
{
	char val[8];

	snprintf(val, sizeof(val), "%ld", policy);
	write_file(REUSE_SYSCTL, val);
}

#ifdef __KSELFTEST_HARNESS_H
/*
 * Fixture setup of the reload tests: the reuse policy saved in @saved for
 * reload_sockets_close(), and @n sockets in @fds, the i-th from
 * @open_socket(i).
 */
static inline void reload_sockets_open(struct __test_metadata *_metadata,
				       long *saved, int *fds, int n,
				       int (*open_socket)(int i))
{
	int i;

	*saved = read_ulong(REUSE_SYSCTL);
	ASSERT_LE(0, *saved);
	for (i = 0; i < n; i++) {
		fds[i] = open_socket(i);
		ASSERT_LE(0, fds[i]);
	}
}
#endif

/* Fixture teardown of the reload tests: close the sockets, restore the policy. */
static inline void reload_sockets_close(long saved, const int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
	restore_reuse(saved);
}

/* A map's slot, remembered before the map is closed. */
struct slot_ref {
	__u32 id;
	int is_inline;
	unsigned int off;
};

static inline struct slot_ref slot_ref(int map_fd)
{
	struct slot_ref r = { .id = map_id(map_fd) };
	unsigned int size;

	r.is_inline = map_slot(map_fd, &r.off, &size) == 1;
	return r;
}

/* Is the range at @off still @r's map, alive or dying? -1: no view. */
static inline int slot_held(const struct slot_ref *r)
{
	const struct layout_range *range;
	struct layout l;

	if (layout_read(&l) == -ENOENT)
		return -1;
	range = layout_at(&l, r->off);
	if (!range)
		return 0;
	/* Dying: its map's id is gone, or the map is gone and its bytes wait
	 * for a grace period before they are free.
	 */
	if (!strcmp(range->state, "dying"))
		return 1;
	return !strcmp(range->state, "map") && range->id == r->id;
}

/* Wait until a freed map's slot left it (map free is deferred). */
static inline int wait_released(struct slot_ref r)
{
	int i;

	if (!r.is_inline)
		return 0;
	for (i = 0; i < 2000; i++) {
		if (!slot_held(&r))
			return 0;
		usleep(5000);
	}
	return -ETIMEDOUT;
}

/* Close a map and wait until its slot is free or leaked. */
static inline int free_map(int map_fd)
{
	struct slot_ref r = slot_ref(map_fd);

	close(map_fd);
	return wait_released(r);
}

static inline int create_sk_map_extra(unsigned int value_size,
				      __u32 extra_flags, __u64 map_extra)
{
	return create_sk_map_named("sk_inline_test", value_size, extra_flags,
				   map_extra);
}

/*
 * Where map @map_fd's values live, as bpf_map_info's sk_storage_placement
 * says (enum bpf_sk_storage_placement), or -errno. libbpf's
 * bpf_obj_get_info_by_fd(): the system's libbpf may predate
 * bpf_map_get_info_by_fd().
 */
static inline int map_placement(int map_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	return info.sk_storage_placement;
}

/* An sk storage map that asks for a slot; its fd or -errno. */
static inline int create_sk_map(unsigned int value_size, __u32 extra_flags)
{
	return create_sk_map_extra(value_size, extra_flags, SK_INLINE_REQUEST);
}

/*
 * A dynamic map of @value_size beside maps created before it, inline or
 * not: the tail is filled first (see fill_tail()); release_fillers(@f)
 * once the map exists.
 */
static inline int create_dynamic_sk_map(unsigned int value_size,
					struct sk_fillers *f)
{
	return fill_tail(create_sk_map, value_size, f);
}

/*
 * Before @m's BPF object loads, hand it a new map of its value size:
 * dynamic with @dynamic, else inline while the tail has room. Maps meant
 * to be inline are to be handed over first.
 */
static inline int reuse_sk_map(struct bpf_map *m, bool dynamic)
{
	unsigned int size = bpf_map__value_size(m);
	struct sk_fillers f = {};
	int fd, err;

	fd = dynamic ? create_dynamic_sk_map(size, &f) : create_sk_map(size, 0);
	if (fd < 0)
		return fd;
	err = bpf_map__reuse_fd(m, fd);
	close(fd);
	if (release_fillers(&f) && !err)
		err = -ETIMEDOUT;
	return err;
}

/* A socket of @type bound to a free port of 127.0.0.1, @addr; fd or -errno. */
static inline int loopback_socket(int type, struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, type, 0), err;

	*addr = (struct sockaddr_in){
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)addr, len) ||
	    getsockname(fd, (struct sockaddr *)addr, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* A connected pair through a loopback listener; the child is accepted. */
struct tcp_conn {
	int lfd, cfd, afd;
};

static inline int tcp_listen(struct tcp_conn *c, struct sockaddr_in *addr)
{
	memset(c, 0xff, sizeof(*c));
	c->lfd = loopback_socket(SOCK_STREAM, addr);
	if (c->lfd < 0)
		return c->lfd;
	return listen(c->lfd, 4) ? -errno : 0;
}

static inline int tcp_accept(struct tcp_conn *c, const struct sockaddr_in *addr)
{
	c->cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (c->cfd < 0 ||
	    connect(c->cfd, (const struct sockaddr *)addr, sizeof(*addr)))
		return -errno;
	c->afd = accept(c->lfd, NULL, NULL);
	return c->afd < 0 ? -errno : 0;
}

static inline void tcp_close(struct tcp_conn *c)
{
	close(c->afd);
	close(c->cfd);
	close(c->lfd);
}

/* Attach @prog to the root cgroup: the link, or NULL with errno set. */
static inline struct bpf_link *attach_root_cgroup(const struct bpf_program *prog)
{
	struct bpf_link *link;
	int cg = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY);

	if (cg < 0)
		return NULL;
	link = bpf_program__attach_cgroup(prog, cg);
	close(cg);
	return link;
}

struct attached {
	struct sk_storage *skel;
	struct bpf_link *set, *get;
};

/* Attach the loaded driver programs to the root cgroup. */
static inline int attach_progs(struct attached *a)
{
	a->set = attach_root_cgroup(a->skel->progs.sk_storage_set);
	a->get = attach_root_cgroup(a->skel->progs.sk_storage_get);
	return a->set && a->get ? 0 : -1;
}

/*
 * Load the driver programs and attach them to the root cgroup. map_dyn is
 * dynamic in any boot: map_a and map_b are created first, inline while the
 * tail has room, then map_dyn with the tail filled.
 */
static inline int attach_driver(struct attached *a)
{
	memset(a, 0, sizeof(*a));
	a->skel = sk_storage__open();
	if (!a->skel)
		return -1;
	if (reuse_sk_map(a->skel->maps.map_a, false) ||
	    reuse_sk_map(a->skel->maps.map_b, false) ||
	    reuse_sk_map(a->skel->maps.map_dyn, true) ||
	    sk_storage__load(a->skel))
		return -1;
	return attach_progs(a);
}

static inline void detach_driver(struct attached *a)
{
	bpf_link__destroy(a->set);
	bpf_link__destroy(a->get);
	sk_storage__destroy(a->skel);
}

#endif
