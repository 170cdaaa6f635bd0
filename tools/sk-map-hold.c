// SPDX-License-Identifier: GPL-2.0
/*
 * sk-map-hold: create sk storage maps of the given value sizes, run a
 * command while they exist, then free them. Shows which maps get an
 * inline slot:  sk-map-hold 16 8 dynamic:16 2048 -- sk-inline-slots
 * A map of SIZE asks for a slot (map_extra BPF_SK_STORAGE_F_INLINE);
 * dynamic:SIZE does not, and keeps upstream's dynamic storage;
 * required:SIZE fails, with the reason's errno, if it gets no slot
 * (BPF_SK_STORAGE_F_INLINE_REQUIRED as well). Each map's line says where
 * its values live (bpf_map_info's sk_storage_placement).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "../kselftest/sk_inline_util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: sk-map-hold [dynamic:|required:]SIZE... [-- COMMAND [ARGS...]]\n"
		"Create one BPF_MAP_TYPE_SK_STORAGE map per SIZE (value bytes,\n"
		"1..65535), run COMMAND while they exist, then free them.\n"
		"A map of SIZE asks for a slot in the inline tail (map_extra 1)\n"
		"and is dynamic if it gets none; one of dynamic:SIZE does not ask,\n"
		"and keeps the dynamic storage; one of required:SIZE (map_extra 3)\n"
		"is not created if it gets none. Each map's line says what it got.\n");
}

/* bpf_map_info's sk_storage_placement, as the line of each map says it. */
static const char *const placements[] = {
	[BPF_SK_STORAGE_DYNAMIC]	= "dynamic",
	[BPF_SK_STORAGE_INLINE]		= "inline",
	[BPF_SK_STORAGE_NO_AREA]	= "dynamic: no tail",
	[BPF_SK_STORAGE_NOT_INLINABLE]	= "dynamic: BPF_F_CLONE or special fields",
	[BPF_SK_STORAGE_TOO_LARGE]	= "dynamic: larger than the tail",
	[BPF_SK_STORAGE_NO_ROOM]	= "dynamic: no room left in the tail",
	[BPF_SK_STORAGE_NOT_PERMITTED]	= "dynamic: creator not permitted",
	[BPF_SK_STORAGE_NO_MEMORY]	= "dynamic: no memory",
};

static const char *placement(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return "unknown";
	if (info.sk_storage_placement >= sizeof(placements) / sizeof(placements[0]) ||
	    !placements[info.sk_storage_placement])
		return "unknown";
	return placements[info.sk_storage_placement];
}

static int create_map(unsigned int size, __u64 map_extra)
{
	return create_sk_map_named("sk_map_hold", size, 0, map_extra);
}

int main(int argc, char **argv)
{
	int i, status = 0;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *arg = argv[i], *what = "asking for a slot";
		__u64 map_extra = SK_INLINE_REQUEST;
		char *end;
		unsigned long size;
		int fd;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strncmp(arg, "dynamic:", 8)) {
			map_extra = 0;
			what = "not asking for a slot";
			arg += 8;
		} else if (!strncmp(arg, "required:", 9)) {
			map_extra = SK_INLINE_REQUIRE;
			what = "requiring a slot";
			arg += 9;
		}
		errno = 0;
		size = strtoul(arg, &end, 10);
		if (errno || *end || !size || size > 65535 || *arg == '-') {
			fprintf(stderr, "sk-map-hold: bad size '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
		fd = create_map(size, map_extra);
		if (fd < 0) {
			fprintf(stderr, "sk-map-hold: map of %lu bytes, %s: %s\n", size,
				what, strerror(-fd));
			return 1;
		}
		printf("map fd %d: value %lu bytes, %s: %s\n", fd, size, what,
		       placement(fd));
	}
	fflush(stdout);
	if (i < argc - 1) {
		pid_t pid = fork();

		if (!pid) {
			execvp(argv[i + 1], argv + i + 1);
			perror("sk-map-hold: exec");
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0)
			return 1;
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	return 0;
}
