/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory cgroup charges of sk storage, measured: an "agent" cgroup creates
 * the maps, a "workload" cgroup creates the sockets and gives each a value
 * through the map syscall. Shared by kselftest/memcg_charge.c and
 * tools/sk-memcg-compare.c.
 */
#ifndef SK_MEMCG_H
#define SK_MEMCG_H

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "sk_inline_util.h"

#define CG_ROOT			"/sys/fs/cgroup"
#define CG_AGENT		CG_ROOT "/sk-memcg-agent"
#define CG_WORK			CG_ROOT "/sk-memcg-workload"
#define CHARGE_SYSCTL		"/proc/sys/net/core/bpf_sk_inline_charge"
#define MEMCG_PAGE		4096L
/* memory.stat is flushed at least every 2 s. */
#define STATS_SETTLE_US		2200000

enum sk_path { PATH_DYNAMIC, PATH_INLINE_SOCKET, PATH_INLINE_OWNER, NR_PATHS };

static const char *const sk_path_name[NR_PATHS] = {
	"dynamic", "inline/socket", "inline/owner",
};

struct cg_snap {
	long current, slab, sock, kernel, percpu;
};

static inline int cg_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static inline long cg_read_long(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY), n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atol(buf) : -1;
}

/* Whether this boot has an inline tail. */
static inline bool tail_on(void)
{
	return cg_read_long(INLINE_BYTES_SYSCTL) > 0;
}

/*
 * memcg keeps pages charged ahead in per-cpu stocks (a batch of 64 for
 * allocations that may sleep), which later charges consume without moving
 * memory.current. Writing memory.high drains them; the cgroup is left with
 * no high limit.
 */
static inline void cg_drain(const char *cg)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/memory.high", cg);
	cg_write(path, "0");
	cg_write(path, "max");
	/* Other CPUs' stocks are drained by work queued on them. */
	usleep(100000);
}

/* memory.current once the stocks are drained and two readings agree. */
static inline long cg_current(const char *cg)
{
	char path[256];
	long prev, cur;
	int i;

	snprintf(path, sizeof(path), "%s/memory.current", cg);
	cg_drain(cg);
	cur = cg_read_long(path);
	for (i = 0; i < 10; i++) {
		prev = cur;
		usleep(200000);
		cg_drain(cg);
		cur = cg_read_long(path);
		if (cur == prev)
			break;
	}
	return cur;
}

/* memory.current and the memory.stat entries sk storage can move. */
static inline int cg_snapshot(const char *cg, struct cg_snap *s)
{
	char path[256], key[64];
	long val;
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->current = cg_current(cg);
	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	f = fopen(path, "r");
	if (!f || s->current < 0)
		return -1;
	while (fscanf(f, "%63s %ld", key, &val) == 2) {
		if (!strcmp(key, "slab_unreclaimable"))
			s->slab = val;
		else if (!strcmp(key, "sock"))
			s->sock = val;
		else if (!strcmp(key, "kernel"))
			s->kernel = val;
		else if (!strcmp(key, "percpu"))
			s->percpu = val;
	}
	fclose(f);
	return 0;
}

static inline void cg_delta(const struct cg_snap *a, const struct cg_snap *b,
			    struct cg_snap *d)
{
	d->current = b->current - a->current;
	d->slab = b->slab - a->slab;
	d->sock = b->sock - a->sock;
	d->kernel = b->kernel - a->kernel;
	d->percpu = b->percpu - a->percpu;
}

static inline int cg_enter(const char *cg)
{
	char path[256], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return cg_write(path, pid);
}

/*
 * The two cgroups, with the memory controller and no limits (whatever an
 * earlier run left); the caller joins neither.
 */
static inline int cg_setup(void)
{
	int err = cg_write(CG_ROOT "/cgroup.subtree_control", "+memory");

	if (err)
		return err;
	if ((mkdir(CG_AGENT, 0755) && errno != EEXIST) ||
	    (mkdir(CG_WORK, 0755) && errno != EEXIST))
		return -errno;
	if (cg_write(CG_AGENT "/memory.max", "max") ||
	    cg_write(CG_AGENT "/memory.high", "max") ||
	    cg_write(CG_WORK "/memory.max", "max") ||
	    cg_write(CG_WORK "/memory.high", "max"))
		return -EIO;
	return 0;
}

static inline void cg_teardown(void)
{
	cg_enter(CG_ROOT);
	rmdir(CG_AGENT);
	rmdir(CG_WORK);
}

static inline void wait_stats(void)
{
	usleep(STATS_SETTLE_US);
}

#define SETTLE_PAGES	4

/* Wait (up to ~60 s) for deferred frees to bring @cg within @tol of @target. */
static inline long settle_to(const char *cg, long target, long tol)
{
	return settle_within(cg_current, cg, target - tol, target + tol, 60, 500000);
}

/*
 * memory.current of @cg once two readings 300 ms apart agree. Draining
 * the stocks of other CPUs is only scheduled, and entering the agent
 * cgroup charges it for dentries and inodes that reclaim and RCU free
 * later: a single reading can be pages off either way.
 */
static inline long stable_current(const char *cg)
{
	long prev = cg_current(cg), cur = prev;
	int i;

	for (i = 0; i < 20; i++) {
		usleep(300000);
		cur = cg_current(cg);
		if (cur == prev)
			break;
		prev = cur;
	}
	return cur;
}

static inline int sk_map_create(unsigned int value_size, __u32 flags)
{
	/* Asking is refused (EINVAL) by a kernel without the series. */
	return create_sk_map_named("sk_memcg", value_size, flags,
				   access(INLINE_BYTES_SYSCTL, F_OK) ? 0 : SK_INLINE_REQUEST);
}

/*
 * A dynamic map of @value_size in any boot, created after the maps the
 * caller wants inline: the tail is filled first (see fill_tail()); the
 * fillers are freed, and their slots free again, before this returns.
 * Its fd or -errno.
 */
static inline int sk_map_create_dynamic(unsigned int value_size)
{
	struct sk_fillers f;
	int map = fill_tail(sk_map_create, value_size, &f);

	if (map >= 0 && release_fillers(&f)) {
		close(map);
		map = -ETIMEDOUT;
	}
	return map;
}

/*
 * A map for @path created from the agent cgroup, so that the map's memcg
 * is the agent's; the caller returns to the workload cgroup. A dynamic map
 * is made with the tail full (its fillers, the agent's too, are freed
 * again before this returns). Returns the map fd, or -errno.
 */
static inline int agent_map_create(enum sk_path path, unsigned int value_size)
{
	int map, err;

	err = cg_enter(CG_AGENT);
	if (err)
		return err;
	err = cg_write(CHARGE_SYSCTL, path == PATH_INLINE_OWNER ? "1" : "0");
	if (path == PATH_DYNAMIC)
		map = sk_map_create_dynamic(value_size);
	else if (!err)
		map = sk_map_create(value_size, 0);
	else
		map = err;
	cg_write(CHARGE_SYSCTL, "0");
	err = cg_enter(CG_WORK);
	if (err && map >= 0) {
		close(map);
		map = err;
	}
	return map;
}

/* "inline" or "dynamic" from the map's fdinfo, or "?" */
static inline const char *map_storage(int map)
{
	static char storage[16];

	if (map_fdinfo(map, "sk_storage", storage, sizeof(storage)))
		strcpy(storage, "?");
	return storage;
}

/* The map's sk_inline_charge fdinfo line ("socket", "owner"), or "". */
static inline const char *map_charge(int map)
{
	static char charge[16];

	map_fdinfo(map, "sk_inline_charge", charge, sizeof(charge));
	charge[strcspn(charge, " ")] = '\0';
	return charge;
}

/* The map's slot size from its fdinfo; 0 if it has none. */
static inline unsigned int map_inline_size(int map)
{
	long size = map_fdinfo_long(map, "sk_inline_size");

	return size < 0 ? 0 : size;
}

/*
 * The workload: @n connected TCP pairs over loopback and @n UDP sockets,
 * 3 * @n sockets in all, created by the caller in the workload cgroup.
 */
struct workload {
	int n, nr_fds, *fds;
};

static inline void raise_nofile(int n)
{
	struct rlimit rl = { n, n };

	setrlimit(RLIMIT_NOFILE, &rl);
}

static inline int workload_open(struct workload *w, int n)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int lfd, i, c, a;

	raise_nofile(3 * n + 64);
	w->n = n;
	w->nr_fds = 0;
	w->fds = calloc(3 * n, sizeof(int));
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (!w->fds || lfd < 0 || bind(lfd, (void *)&addr, len) ||
	    getsockname(lfd, (void *)&addr, &len) || listen(lfd, 128))
		return -errno;
	for (i = 0; i < n; i++) {
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (void *)&addr, sizeof(addr)))
			goto err;
		w->fds[w->nr_fds++] = c;
		a = accept(lfd, NULL, NULL);
		if (a < 0)
			goto err;
		w->fds[w->nr_fds++] = a;
		c = socket(AF_INET, SOCK_DGRAM, 0);
		if (c < 0)
			goto err;
		w->fds[w->nr_fds++] = c;
	}
	close(lfd);
	return 0;
err:
	close(lfd);
	return -errno;
}

/* Close sockets [from, to) without leaving TCP timewait sockets behind. */
static inline void workload_close_range(struct workload *w, int from, int to)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };
	int i;

	for (i = from; i < to && i < w->nr_fds; i++) {
		if (w->fds[i] < 0)
			continue;
		setsockopt(w->fds[i], SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
		close(w->fds[i]);
		w->fds[i] = -1;
	}
}

static inline void workload_close(struct workload *w)
{
	workload_close_range(w, 0, w->nr_fds);
	free(w->fds);
	w->fds = NULL;
}

/* Give every socket in [from, to) a value in @map; -errno of the first failure. */
static inline int workload_store_range(struct workload *w, int map,
				       unsigned int value_size, int from, int to)
{
	unsigned char value[4096];
	int i;

	memset(value, 0x5a, sizeof(value));
	if (value_size > sizeof(value))
		return -E2BIG;
	for (i = from; i < to && i < w->nr_fds; i++)
		if (bpf_map_update_elem(map, &w->fds[i], value, BPF_NOEXIST))
			return -errno;
	return 0;
}

static inline int workload_delete_range(struct workload *w, int map,
					int from, int to)
{
	int i;

	for (i = from; i < to && i < w->nr_fds; i++)
		if (bpf_map_delete_elem(map, &w->fds[i]))
			return -errno;
	return 0;
}

/* Wait until the map with @id is gone: its free is deferred to a workqueue. */
static inline int wait_map_freed(__u32 id)
{
	int i, fd;

	for (i = 0; i < 500; i++) {
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0 && errno == ENOENT)
			return 0;
		if (fd >= 0)
			close(fd);
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* Bytes of one object of slab cache @name, or -1. */
static inline long slab_object_size(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/object_size", name);
	return cg_read_long(path);
}

#ifdef __KSELFTEST_HARNESS_H
/*
 * Fixture setup: no sockets in @w, no map in @map (unless NULL), the two
 * cgroups, this process in the workload's.
 */
static inline void memcg_test_setup(struct __test_metadata *_metadata,
				    struct workload *w, int *map)
{
	w->fds = NULL;
	if (map)
		*map = -1;
	ASSERT_EQ(0, cg_setup());
	ASSERT_EQ(0, cg_enter(CG_WORK));
}

/* Fixture teardown, first: close the sockets and @map, if open. */
static inline void memcg_test_close(struct workload *w, int map)
{
	if (w->fds)
		workload_close(w);
	if (map >= 0)
		close_sk_map(map);
}

/* Fixture teardown, last: no limit on the agent, charge policy 0, no cgroups. */
static inline void memcg_test_teardown(void)
{
	cg_write(CG_AGENT "/memory.max", "max");
	cg_write(CHARGE_SYSCTL, "0");
	cg_teardown();
}

/*
 * With no tail every map is dynamic and names no policy: check it on a map
 * for @path, skip and return false. True with a tail.
 */
static inline bool require_inline(struct __test_metadata *_metadata,
				  enum sk_path path, unsigned int value_size)
{
	int m;

	if (tail_on())
		return true;
	m = agent_map_create(path, value_size);
	ASSERT_LE(0, m);
	ASSERT_STREQ("dynamic", map_storage(m));
	ASSERT_STREQ("", map_charge(m));
	close(m);
	SKIP(return false, "tail 0: sk storage maps are all dynamic");
}

#define REQUIRE_INLINE(path, value_size)				\
	do {								\
		if (!require_inline(_metadata, path, value_size))	\
			return;						\
	} while (0)

/*
 * @map, of a BPF object loaded under charge policy 1, charges its owner;
 * with no tail it is dynamic: skip and return false.
 */
static inline bool require_owner_map(struct __test_metadata *_metadata, int map)
{
	if (!tail_on()) {
		ASSERT_STREQ("dynamic", map_storage(map));
		SKIP(return false, "tail 0: sk storage maps are all dynamic");
	}
	ASSERT_STREQ("inline", map_storage(map));
	ASSERT_STREQ("owner", map_charge(map));
	return true;
}
#endif

#endif /* SK_MEMCG_H */
