// SPDX-License-Identifier: GPL-2.0
/*
 * test_maps' sk_storage_map case on its own (test/bpf-selftests): linked
 * with the kernel tree's tools/testing/selftests/bpf/map_tests/
 * sk_storage_map.c unchanged. test_maps.c's main() runs every map type's
 * tests twice before it; this one runs only test_sk_storage_map() (basic,
 * stress_free and stress_change; BPF_SK_STORAGE_MAP_TEST_* in the
 * environment as for test_maps), and exits non-zero when a CHECK() fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <bpf/libbpf.h>

int skips;

void test_sk_storage_map(void);

int main(void)
{
	srand(time(NULL));
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	test_sk_storage_map();
	printf("test_maps: OK, %d SKIPPED\n", skips);
	return 0;
}
