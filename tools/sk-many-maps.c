// SPDX-License-Identifier: GPL-2.0
/*
 * sk-many-maps: the time of an sk storage lookup as the number of maps
 * holding values in each socket grows, inline against dynamic.
 *
 * The dynamic storage caches 16 maps per socket (BPF_LOCAL_STORAGE_CACHE_SIZE):
 * a map's lookup reads its cache slot, and a map whose slot another map
 * took walks the socket's list of values and takes the storage's lock to
 * cache itself. Beyond 16 maps looked up in turn, maps that share a slot
 * evict each other: every lookup walks. An inline lookup reads the map's
 * own slot in the socket, whatever the other maps. For each count of maps,
 * an iterator looks up every one of them in every socket and times the
 * socket's lookups; the same window with no lookup in it is subtracted,
 * and the rest divided by the maps. Windows something interrupted (over
 * WINDOW_MAX_NS) are left out and counted. Every value must be found.
 */
#define TOOL_NAME "sk-many-maps"
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tool_util.h"
#include "sk-many-maps.h"
#include "sk-many-maps.skel.h"

#define TAIL_SYSCTL	"/proc/sys/net/core/bpf_sk_inline_bytes"
#define WINDOW_MAX_NS	200000

static const int known_counts[] = { MANY_COUNTS };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sk-many-maps [options]\n"
		"In the guest, booted with sysctl.net.core.bpf_sk_inline_bytes=1024\n"
		"and UDP among the protocols with a tail: N bound UDP sockets, each\n"
		"given a value in the first M of %d maps that ask for a slot (inline)\n"
		"and of %d that do not (dynamic); an iterator looks up all M in every\n"
		"socket, timing them per socket. Prints ns per lookup for each M, min\n"
		"and median of the passes, less the same window without lookups, and\n"
		"the goals.\n"
		"\n"
		"  -n, --sockets N       UDP sockets (default 5000)\n"
		"  -m, --maps M[,M...]   counts of maps, growing, among\n"
		"                        1,4,8,16,17,32,64 (default all)\n"
		"  -p, --passes P        passes per count and kind (default 5)\n"
		"  -h, --help\n", MANY_MAPS, MANY_MAPS);
}

static struct bpf_map *map_of(struct sk_many_maps *skel, const char *kind, int i)
{
	char name[16];
	struct bpf_map *m;

	snprintf(name, sizeof(name), "%s%d", kind, i);
	m = bpf_object__find_map_by_name(skel->obj, name);
	if (!m)
		die("no map %s", name);
	return m;
}

/* What bpf_map_info says the map got: enum bpf_sk_storage_placement. */
static __u32 placement(struct bpf_map *m)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_map__fd(m), &info, &len))
		die("map info: %s", strerror(errno));
	return info.sk_storage_placement;
}

/* The iterator program @name, attached. */
static struct bpf_link *walker(struct sk_many_maps *skel, const char *name)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(skel->obj, name);
	struct bpf_link *link;

	if (!prog)
		die("no program %s", name);
	link = bpf_program__attach_iter(prog, NULL);
	if (!link)
		die("attaching %s: %s", name, strerror(errno));
	return link;
}

struct walk {
	double ns;		/* per socket, mean of the windows kept */
	long kept, dropped, missed;
};

/* One walk of every UDP socket by @link's iterator. */
static struct walk walk(struct bpf_link *link)
{
	struct many_record rec[256];
	struct walk w = {};
	int fd = bpf_iter_create(bpf_link__fd(link));
	double sum = 0;
	ssize_t r;
	int i;

	if (fd < 0)
		die("bpf_iter_create: %s", strerror(errno));
	while ((r = read(fd, rec, sizeof(rec))) > 0) {
		if (r % sizeof(rec[0]))
			die("iterator read: %zd bytes, not whole records", r);
		for (i = 0; i < r / (ssize_t)sizeof(rec[0]); i++) {
			w.missed += rec[i].missed;
			if (rec[i].ns > WINDOW_MAX_NS) {
				w.dropped++;
				continue;
			}
			sum += rec[i].ns;
			w.kept++;
		}
	}
	if (r < 0)
		die("iterator read: %s", strerror(errno));
	close(fd);
	w.ns = w.kept ? sum / w.kept : 0;
	return w;
}

struct result {
	double min, med;
};

/*
 * @passes walks of program @name: min and median of the per-socket window,
 * in ns; the windows left out are added to *@dropped, of *@windows.
 */
static struct result timed(struct sk_many_maps *skel, const char *name, int passes,
			   long *dropped, long *windows)
{
	struct bpf_link *link = walker(skel, name);
	struct walk w;
	double t[64];
	struct result r;
	int i;

	walk(link);		/* once untimed */
	for (i = 0; i < passes; i++) {
		w = walk(link);
		if (w.missed)
			die("%s: %ld values not found", name, w.missed);
		if (!w.kept)
			die("%s: every window interrupted", name);
		t[i] = w.ns;
		*dropped += w.dropped;
		*windows += w.kept + w.dropped;
	}
	bpf_link__destroy(link);
	qsort(t, passes, sizeof(t[0]), cmp_double);
	r.min = t[0];
	r.med = passes % 2 ? t[passes / 2] : (t[passes / 2 - 1] + t[passes / 2]) / 2;
	return r;
}

static bool known_count(long v)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(known_counts); i++)
		if (known_counts[i] == v)
			return true;
	return false;
}

static int parse_counts(const char *s, int *out)
{
	int n = 0, prev = 0;
	char *end;
	long v;

	while (*s) {
		v = strtol(s, &end, 10);
		if (end == s || v <= prev || !known_count(v) || n == MANY_MAPS)
			die("-m: growing counts among 1,4,8,16,17,32,64");
		out[n++] = prev = v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			die("-m: not a list of numbers");
	}
	if (!n)
		die("-m: no count");
	return n;
}

/* The time of @ns at count @m of @counts, or -1 without that count. */
static double at(const int *counts, int ncounts, const double *ns, int m)
{
	int k;

	for (k = 0; k < ncounts; k++)
		if (counts[k] == m)
			return ns[k];
	return -1;
}

/*
 * Below 16 maps the first lookup of a socket, which reaches its lines
 * first, is spread over more lookups as maps are added, on either path;
 * from 16 on the dynamic storage's cache is full. So the goals compare 64
 * maps with 16: inline flat, dynamic's cliff.
 */
static void goals(const int *counts, int ncounts, const double *inline_ns,
		  const double *dynamic_ns)
{
	double i16 = at(counts, ncounts, inline_ns, 16);
	double i64 = at(counts, ncounts, inline_ns, 64);
	double d16 = at(counts, ncounts, dynamic_ns, 16);
	double d64 = at(counts, ncounts, dynamic_ns, 64);

	if (i16 <= 0 || i64 <= 0)
		printf("goal: inline flat past 16 maps (ns per lookup at 64 within 1.2x of that at 16): "
		       "not measured\n");
	else
		printf("goal: inline flat past 16 maps (ns per lookup at 64 within 1.2x of that at 16): "
		       "%s (%.2f)\n", i64 / i16 <= 1.2 ? "holds" : "does not hold", i64 / i16);
	if (d16 <= 0 || d64 <= 0)
		printf("goal: dynamic's cliff past 16 maps (ns per lookup at 64 at least 1.5x that at 16): "
		       "not measured\n");
	else
		printf("goal: dynamic's cliff past 16 maps (ns per lookup at 64 at least 1.5x that at 16): "
		       "%s (%.2f)\n", d64 / d16 >= 1.5 ? "holds" : "does not hold", d64 / d16);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sockets", required_argument, NULL, 'n' },
		{ "maps", required_argument, NULL, 'm' },
		{ "passes", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct sockaddr_in addr = { .sin_family = AF_INET };
	int counts[MANY_MAPS], ncounts, passes = 5, o, i, j, k, done = 0;
	double inline_ns[MANY_MAPS], dynamic_ns[MANY_MAPS];
	struct sk_many_maps *skel;
	long dropped = 0, windows = 0;
	struct rlimit rl;
	char name[32];
	long n = 5000, tail;
	FILE *f;
	int *fds;

	memcpy(counts, known_counts, sizeof(known_counts));
	ncounts = ARRAY_SIZE(known_counts);
	while ((o = getopt_long(argc, argv, "n:m:p:h", opts, NULL)) != -1) {
		switch (o) {
		case 'n':
			n = atol(optarg);
			if (n < 1 || n > 1000000)
				die("-n: 1 to 1000000 sockets");
			break;
		case 'm':
			ncounts = parse_counts(optarg, counts);
			break;
		case 'p':
			passes = atoi(optarg);
			if (passes < 1 || passes > 64)
				die("-p: 1 to 64 passes");
			break;
		default:
			usage_exit(usage, o);
		}
	}
	if (optind != argc)
		usage_exit(usage, '?');

	f = fopen(TAIL_SYSCTL, "r");
	if (!f || fscanf(f, "%ld", &tail) != 1)
		die("%s: not a kernel with the series", TAIL_SYSCTL);
	fclose(f);
	if (tail < MANY_MAPS * 16)
		die("a tail of %ld bytes: boot with sysctl.net.core.bpf_sk_inline_bytes=%d",
		    tail, MANY_MAPS * 16);

	rl.rlim_cur = rl.rlim_max = n + 256;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("RLIMIT_NOFILE %ld: %s", n + 256, strerror(errno));
	skel = sk_many_maps__open_and_load();
	if (!skel)
		die("loading the BPF programs: %s", strerror(errno));
	for (i = 0; i < MANY_MAPS; i++) {
		if (placement(map_of(skel, "in", i)) != BPF_SK_STORAGE_INLINE)
			die("map in%d got no slot (placement %u): the tail is not free",
			    i, placement(map_of(skel, "in", i)));
		if (placement(map_of(skel, "dy", i)) != BPF_SK_STORAGE_DYNAMIC)
			die("map dy%d is not dynamic", i);
	}
	fds = calloc(n, sizeof(*fds));
	if (!fds)
		die("no memory for %ld sockets", n);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&addr, sizeof(addr)))
			die("UDP socket %d: %s", i, strerror(errno));
	}

	printf("sk-many-maps: %ld UDP sockets, tail %ld bytes, %d passes; ns per lookup, "
	       "min and median of the passes' mean per socket, less the same window "
	       "without lookups\n", n, tail, passes);
	printf("%5s %8s %8s %8s %8s %9s\n", "maps", "inl min", "inl med",
	       "dyn min", "dyn med", "dyn/inl");
	for (k = 0; k < ncounts; k++) {
		struct result v, in, dy;
		int m = counts[k];
		__u64 val;

		/* Values in the maps this count adds, in every socket. */
		for (j = done; j < m; j++) {
			int in_fd = bpf_map__fd(map_of(skel, "in", j));
			int dy_fd = bpf_map__fd(map_of(skel, "dy", j));

			for (i = 0; i < n; i++) {
				val = i + 1;
				if (bpf_map_update_elem(in_fd, &fds[i], &val, BPF_NOEXIST) ||
				    bpf_map_update_elem(dy_fd, &fds[i], &val, BPF_NOEXIST))
					die("value %d of socket %d: %s", j, i, strerror(errno));
			}
		}
		done = m;
		v = timed(skel, "walk_in_0", passes, &dropped, &windows);
		snprintf(name, sizeof(name), "walk_in_%d", m);
		in = timed(skel, name, passes, &dropped, &windows);
		snprintf(name, sizeof(name), "walk_dy_%d", m);
		dy = timed(skel, name, passes, &dropped, &windows);
		inline_ns[k] = (in.med - v.med) / m;
		dynamic_ns[k] = (dy.med - v.med) / m;
		printf("%5d %8.1f %8.1f %8.1f %8.1f %9.2f\n", m,
		       (in.min - v.min) / m, inline_ns[k],
		       (dy.min - v.min) / m, dynamic_ns[k],
		       dynamic_ns[k] / inline_ns[k]);
		printf("data: many-maps %d %.2f %.2f\n", m, inline_ns[k], dynamic_ns[k]);
	}

	printf("windows over %d us (interrupted), left out: %ld of %ld\n",
	       WINDOW_MAX_NS / 1000, dropped, windows);
	/* The goals, on medians: inline flat, dynamic's cliff past 16. */
	goals(counts, ncounts, inline_ns, dynamic_ns);
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	sk_many_maps__destroy(skel);
	return 0;
}
