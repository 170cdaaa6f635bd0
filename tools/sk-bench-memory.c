// SPDX-License-Identifier: GPL-2.0
/*
 * sk-bench: the bytes one value costs (slab objects and pages, memcg) and
 * the time a map's deferred free takes with a value in every UDP socket.
 */
#include <dirent.h>

#include "sk-bench-user.h"

#define FREE_MAP_NAME		"sk_memcg"	/* sk_map_create() names it so */

static const unsigned int value_sizes[NR_SIZES] = { 8, 64, 100 };

struct slab_snap {
	double objects, pages;
};

long slab_attr(const char *cache, const char *attr)
{
	char path[512];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, attr);
	return cg_read_long(path);
}

/*
 * Bytes of all slab objects in use, and of all slab pages. Each cache is
 * shrunk first: free objects in per-CPU slabs would count as in use.
 */
static void slab_snapshot(struct slab_snap *s)
{
	char path[512];
	struct dirent *e;
	long objs, slabs, size, order;
	DIR *d = opendir("/sys/kernel/slab");

	memset(s, 0, sizeof(*s));
	if (!d)
		die("/sys/kernel/slab: %s", strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || e->d_name[0] == ':')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", e->d_name);
		cg_write(path, "1");
		objs = slab_attr(e->d_name, "objects");
		slabs = slab_attr(e->d_name, "slabs");
		size = slab_attr(e->d_name, "object_size");
		order = slab_attr(e->d_name, "order");
		if (objs < 0 || slabs < 0 || size < 0 || order < 0)
			continue;
		s->objects += (double)objs * size;
		s->pages += (double)slabs * (4096L << order);
	}
	closedir(d);
}

/*
 * Wait (up to ~10 s) until slab use stops moving: frees of sockets and
 * values run after RCU grace periods.
 */
static void slab_settle(void)
{
	struct slab_snap a, b;
	int i;

	slab_snapshot(&a);
	for (i = 0; i < 40; i++) {
		usleep(250000);
		slab_snapshot(&b);
		if (b.objects - a.objects < 16384 && a.objects - b.objects < 16384)
			return;
		a = b;
	}
}

/*
 * Wait (up to ~30 s) until slab objects are back within @tol bytes of
 * @base; ms waited, or -1.
 */
static double slab_back_to(double base, double tol)
{
	struct slab_snap s;
	__u64 t0 = now_ns();
	int i;

	for (i = 0; i < 300; i++) {
		slab_snapshot(&s);
		if (s.objects <= base + tol)
			return (now_ns() - t0) / 1e6;
		usleep(100000);
	}
	return -1;
}

/*
 * Close @map, the last reference, and time its deferred free: its id is
 * released at once, the work (bpf_sk_storage_map_free()) runs later from a
 * workqueue and is timed by the fentry and fexit programs.
 */
static void map_free_timed(struct sk_bench *skel, int map, struct free_result *r)
{
	struct sk_bench__bss *b = skel->bss;
	__u32 id = map_id(map), count = b->free_count;
	__u64 t0, t_id = 0;
	int fd, i;

	b->free_map = 0;
	memset(b->free_name, 0, sizeof(b->free_name));
	memcpy(b->free_name, FREE_MAP_NAME, strlen(FREE_MAP_NAME));
	t0 = now_ns();
	close(map);
	for (i = 0; i < 600000; i++) {
		if (!t_id) {
			fd = bpf_map_get_fd_by_id(id);
			if (fd < 0 && errno == ENOENT)
				t_id = now_ns();
			else if (fd >= 0)
				close(fd);
		}
		if (t_id && __atomic_load_n(&b->free_count, __ATOMIC_ACQUIRE) != count)
			break;
		usleep(100);
	}
	if (__atomic_load_n(&b->free_count, __ATOMIC_ACQUIRE) == count)
		die("map free: bpf_sk_storage_map_free() not seen within a minute");
	/* Filler maps bear the same name: time no other free. */
	memset(b->free_name, 0, sizeof(b->free_name));
	r->id_ms = (t_id - t0) / 1e6;
	r->work_ms = (b->free_exit_ns - b->free_enter_ns) / 1e6;
	r->done_ms = (b->free_exit_ns - t0) / 1e6;
}

/* One @size-byte value in each UDP socket: bytes per value, then the free. */
static void memory_one(struct sk_bench *skel, struct sockset *s,
		       unsigned int size, bool inl, struct mem_result *r)
{
	struct slab_snap a, b;
	unsigned char value[128];
	long cg0 = 0, cg1 = 0, i;
	__u64 t0;
	int map;

	memset(value, 0x5a, sizeof(value));
	memset(r, 0, sizeof(*r));
	r->size = size;
	map = inl ? sk_map_create(size, 0) : sk_map_create_dynamic(size);
	if (map < 0)
		die("sk storage map of %u bytes: %s", size, strerror(-map));
	expect_storage(map, inl ? "inline" : "dynamic", inl ? "inline" : "dynamic");
	r->slot = map_inline_size(map);

	/*
	 * memory.current as it is: draining the per-CPU charge stocks takes
	 * a reclaim (memory.high), which frees slab objects of its own.
	 */
	slab_settle();
	slab_snapshot(&a);
	if (have_memcg)
		cg0 = cg_read_long(CG_BENCH "/memory.current");
	t0 = now_ns();
	for (i = 0; i < s->n_udp; i++)
		if (bpf_map_update_elem(map, &s->udp[i], value, BPF_NOEXIST))
			die("%u-byte value: %s", size, strerror(errno));
	r->update_ns = (double)(now_ns() - t0) / s->n_udp;
	if (have_memcg)
		cg1 = cg_read_long(CG_BENCH "/memory.current");
	slab_snapshot(&b);
	r->objects = (b.objects - a.objects) / s->n_udp;
	r->pages = (b.pages - a.pages) / s->n_udp;
	r->memcg = have_memcg ? (double)(cg1 - cg0) / s->n_udp : 0;
	t0 = now_ns();
	map_free_timed(skel, map, &r->fr);
	/* The values themselves go after grace periods: wait for them. */
	if (slab_back_to(a.objects, 65536 + (b.objects - a.objects) / 50) < 0)
		r->fr.back_ms = -1;
	else
		r->fr.back_ms = (now_ns() - t0) / 1e6;
}

/* Each value size, dynamic and inline, after a warm-up round. */
void memory_section(struct sk_bench *skel, struct sockset *s,
		    struct mem_result r[NR_SIZES][2])
{
	struct mem_result warm;
	unsigned int i;
	int p;

	/* Once unrecorded: first-time allocations are not a value's. */
	memory_one(skel, s, 8, false, &warm);
	for (i = 0; i < NR_SIZES; i++)
		for (p = 0; p < 2; p++)
			memory_one(skel, s, value_sizes[i], p, &r[i][p]);
}

void print_memory(const struct sockset *s, struct mem_result r[NR_SIZES][2])
{
	double stock = 64.0 * 4096 * sysconf(_SC_NPROCESSORS_ONLN) / s->n_udp;

	char memcg[16], slot[16];
	unsigned int i, p;

	printf("\nmemory and map free: one value in each of the %ld UDP sockets, through the map syscall\n",
	       s->n_udp);
	printf("objects, pages: growth of slab objects in use and of slab pages (/sys/kernel/slab,\n"
	       "each cache shrunk first); memcg: of memory.current of the benchmark's cgroup, within\n"
	       "+-%.0f B/value (charges are cached per CPU, 64 pages each); overhead: objects less the\n"
	       "value, inline: the slot less the value. Free, from close() of the last reference: id\n"
	       "gone (bpf_map_get_fd_by_id() fails with ENOENT), work (fentry to fexit of\n"
	       "bpf_sk_storage_map_free(), from a workqueue), freed (its fexit), slab back (objects\n"
	       "within 2%% of before the values, after the RCU callbacks freed the values)\n", stock);
	printf("%-5s %-8s %5s | %8s %8s %8s %8s | %9s | %7s %7s %7s %7s\n",
	       "value", "storage", "slot", "objects", "pages", "memcg", "overhead",
	       "update", "id gone", "work", "freed", "slab");
	printf("%-5s %-8s %5s | %8s %8s %8s %8s | %9s | %7s %7s %7s %7s\n",
	       "bytes", "", "bytes", "B/value", "B/value", "B/value", "B/value",
	       "ns/value", "ms", "ms", "ms", "back ms");
	for (i = 0; i < NR_SIZES; i++) {
		for (p = 0; p < 2; p++) {
			const struct mem_result *m = &r[i][p];
			double over = p ? (double)m->slot - m->size : m->objects - m->size;

			if (have_memcg)
				snprintf(memcg, sizeof(memcg), "%.0f", m->memcg);
			else
				snprintf(memcg, sizeof(memcg), "-");
			if (p)
				snprintf(slot, sizeof(slot), "%u", m->slot);
			else
				snprintf(slot, sizeof(slot), "-");
			printf("%-5u %-8s %5s | %8.0f %8.0f %8s %8.0f | %9.0f | %7.1f %7.1f %7.1f %7.0f\n",
			       m->size, p ? "inline" : "dynamic", slot, m->objects,
			       m->pages, memcg, over, m->update_ns, m->fr.id_ms,
			       m->fr.work_ms, m->fr.done_ms, m->fr.back_ms);
		}
	}
}
