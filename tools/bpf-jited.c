// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-jited: print a loaded BPF program's JIT image as hex, for objdump on
 * the host (Debian's bpftool has no disassembler in the guest):
 *
 *   bpf-jited NAME > img.hex        (in the guest)
 *   xxd -r -p img.hex > img.bin
 *   objdump -D -b binary -mi386:x86-64 img.bin
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: bpf-jited NAME\n"
		"Print the JIT image of the loaded BPF program named NAME (the\n"
		"first one found) as hex, 32 bytes a line; its size and address\n"
		"go to stderr. Exit status 1 when no such program is loaded.\n");
}

int main(int argc, char **argv)
{
	struct bpf_prog_info info;
	__u32 id = 0, len, img_len, i;
	unsigned char *img;
	__u64 addr = 0;
	int fd;

	if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc == 2 ? stdout : stderr);
		return argc == 2 ? 0 : 2;
	}
	while (!bpf_prog_get_next_id(id, &id)) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
		    strncmp(info.name, argv[1], sizeof(info.name))) {
			close(fd);
			continue;
		}
		img_len = info.jited_prog_len;
		img = calloc(1, img_len ? img_len : 1);
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		info.jited_prog_len = img_len;
		info.jited_prog_insns = (__u64)(unsigned long)img;
		info.nr_jited_ksyms = 1;
		info.jited_ksyms = (__u64)(unsigned long)&addr;
		if (!img || bpf_obj_get_info_by_fd(fd, &info, &len)) {
			fprintf(stderr, "bpf-jited: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		fprintf(stderr, "bpf-jited: %s: id %u, %u bytes at 0x%llx\n", argv[1], id,
			info.jited_prog_len, (unsigned long long)addr);
		for (i = 0; i < info.jited_prog_len; i++)
			printf("%02x%s", img[i], i % 32 == 31 ? "\n" : "");
		printf("\n");
		return 0;
	}
	fprintf(stderr, "bpf-jited: no program named %s\n", argv[1]);
	return 1;
}
