// SPDX-License-Identifier: GPL-2.0
/*
 * sk-memcg-compare: who pays for sk storage values, side by side.
 *
 * An agent cgroup creates an sk storage map; a workload cgroup creates N TCP
 * pairs and N UDP sockets and gives each a value through the map syscall.
 * For the dynamic path, inline with net.core.bpf_sk_inline_charge = 0
 * (socket) and inline with 1 (owner), print how memory.current and
 * memory.stat moved in each cgroup, and what is left once the sockets are
 * closed and the map is freed.
 */
#include <getopt.h>

#include "../kselftest/sk_memcg.h"
#define TOOL_NAME "sk-memcg-compare"
#include "tool_util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sk-memcg-compare [-n PAIRS] [-s VALUE_SIZE]\n"
		"In the guest: for the dynamic path, inline/socket and inline/owner\n"
		"charging, create an sk storage map in an agent cgroup and 3*PAIRS\n"
		"sockets (PAIRS TCP pairs and PAIRS UDP sockets, default 1000) in a\n"
		"workload cgroup, give each a VALUE_SIZE-byte value (default 16), and\n"
		"print the change of memory.current and memory.stat per cgroup.\n");
}

struct result {
	struct cg_snap sockets[2], values[2], left[2];
	const char *storage;
	unsigned int slot;
};

static int measure(enum sk_path path, int pairs, unsigned int value_size,
		   struct result *r)
{
	struct cg_snap base[2], s1[2], s2[2], s3[2];
	const char *cgs[2] = { CG_AGENT, CG_WORK };
	struct workload w;
	int map, err, i;
	__u32 id;

	wait_stats();
	for (i = 0; i < 2; i++)
		cg_snapshot(cgs[i], &base[i]);
	map = agent_map_create(path, value_size);
	if (map < 0)
		return map;
	id = map_id(map);
	r->storage = strdup(map_storage(map));
	r->slot = map_inline_size(map);

	wait_stats();
	for (i = 0; i < 2; i++)
		cg_snapshot(cgs[i], &s1[i]);
	err = workload_open(&w, pairs);
	if (err)
		return err;
	wait_stats();
	for (i = 0; i < 2; i++)
		cg_snapshot(cgs[i], &s2[i]);
	err = workload_store_range(&w, map, value_size, 0, w.nr_fds);
	if (err)
		return err;
	wait_stats();
	for (i = 0; i < 2; i++)
		cg_snapshot(cgs[i], &s3[i]);

	workload_close(&w);
	close(map);
	err = wait_map_freed(id);
	if (err)
		return err;
	/* Sockets and values are freed after RCU grace periods. */
	settle_to(CG_AGENT, base[0].current, SETTLE_PAGES * MEMCG_PAGE);
	for (i = 0; i < 2; i++) {
		struct cg_snap end;

		cg_snapshot(cgs[i], &end);
		cg_delta(&s1[i], &s2[i], &r->sockets[i]);
		cg_delta(&s2[i], &s3[i], &r->values[i]);
		cg_delta(&base[i], &end, &r->left[i]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	unsigned int value_size = 16;
	struct result r[NR_PATHS];
	int pairs = 1000, opt, err, nr, p, i;
	char tail[32] = "?";

	while ((opt = getopt_long(argc, argv, "n:s:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			pairs = atoi(optarg);
			break;
		case 's':
			value_size = atoi(optarg);
			break;
		default:
			usage_exit(usage, opt);
		}
	}
	if (pairs < 1 || pairs > 100000 || !value_size || value_size > 4096) {
		fprintf(stderr, "sk-memcg-compare: PAIRS must be 1..100000, VALUE_SIZE 1..4096\n");
		return 2;
	}
	nr = 3 * pairs;
	err = cg_setup();
	if (err || cg_enter(CG_WORK)) {
		fprintf(stderr, "sk-memcg-compare: cgroup setup: %s\n", strerror(-err));
		return 1;
	}
	/* Warm up: the first map and sockets set up caches for good. */
	{
		struct workload w;
		int map = agent_map_create(PATH_DYNAMIC, value_size);

		if (map < 0 || workload_open(&w, 16)) {
			fprintf(stderr, "sk-memcg-compare: warm-up failed\n");
			return 1;
		}
		workload_store_range(&w, map, value_size, 0, w.nr_fds);
		workload_close(&w);
		close(map);
	}
	for (p = 0; p < NR_PATHS; p++) {
		err = measure(p, pairs, value_size, &r[p]);
		if (err) {
			fprintf(stderr, "sk-memcg-compare: %s: %s\n",
				sk_path_name[p], strerror(-err));
			return 1;
		}
	}
	{
		int fd = open("/proc/sys/net/core/bpf_sk_inline_bytes", O_RDONLY);

		if (fd >= 0 && read(fd, tail, sizeof(tail) - 1) > 0)
			tail[strcspn(tail, "\n")] = 0;
		close(fd);
	}

	printf("memory cgroup charges of sk storage: %d sockets (%d TCP pairs, %d UDP), %u-byte values, tail %s bytes\n",
	       nr, pairs, pairs, value_size, tail);
	printf("slab objects: TCP %ld, UDP %ld bytes\n\n",
	       slab_object_size("TCP"), slab_object_size("UDP"));
	printf("%-14s %-10s %-9s | %10s %7s %7s | %9s %6s %9s %9s | %9s\n",
	       "path", "slot", "cgroup", "sockets", "/socket", "sock",
	       "values", "/value", "slab", "kernel", "left");
	for (p = 0; p < NR_PATHS; p++) {
		for (i = 0; i < 2; i++) {
			char slot[24];

			if (r[p].slot)
				snprintf(slot, sizeof(slot), "inline:%u", r[p].slot);
			else
				snprintf(slot, sizeof(slot), "%s", r[p].storage);
			printf("%-14s %-10s %-9s | %10ld %7ld %7ld | %9ld %6ld %9ld %9ld | %9ld\n",
			       i ? "" : sk_path_name[p], i ? "" : slot,
			       i ? "workload" : "agent",
			       r[p].sockets[i].current, r[p].sockets[i].current / nr,
			       r[p].sockets[i].sock,
			       r[p].values[i].current, r[p].values[i].current / nr,
			       r[p].values[i].slab, r[p].values[i].kernel,
			       r[p].left[i].current);
		}
	}
	printf("\nsockets: memory.current change while the sockets were created (no value yet),\n"
	       "with memory.stat sock (socket buffers);\n"
	       "values: change while each socket got a value, with the memory.stat\n"
	       "slab_unreclaimable and kernel entries; left: memory.current after the\n"
	       "sockets were closed and the map freed, against before the map existed\n"
	       "(memcg charges pages: expect a few pages of noise, not bytes per socket).\n");
	cg_teardown();
	return 0;
}
