// SPDX-License-Identifier: GPL-2.0
/*
 * A protocol module unloads while its sockets' memory waits for a grace
 * period. qrtr's init creates a kernel socket of its own protocol; an LSM
 * program gives every new socket an inline value, that one too. rmmod
 * releases the socket, then destroys the protocol's slab cache and the
 * module: a socket whose memory is freed only after a grace period (it
 * held inline values) must not outlive either, or the cache "still has
 * objects" and the deferred free runs on freed module memory. The free
 * is held in its RCU callback for a while, so that the exit has to wait
 * for it rather than happen to run after it.
 */
#include <sys/syscall.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "unload.skel.h"

/* Where vm/mkroot puts the module, when the kernel build made it. */
#define QRTR_KO		"/lib/modules/qrtr.ko"
#define QRTR		"qrtr"

/*
 * A normal synchronize_rcu() waits behind the callbacks queued on its CPU
 * before it: the one in qrtr's sock_unregister() would run the socket's
 * deferred free, queued just before, which proto_unregister() must not
 * count on. Expedited, it leaves the free pending.
 */
#define RCU_EXPEDITED	"/sys/kernel/rcu_expedited"

#ifndef MEMBARRIER_CMD_GLOBAL
#define MEMBARRIER_CMD_GLOBAL	1	/* synchronize_rcu() */
#endif

static bool module_loaded(const char *name)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/modules", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, name, strlen(name)) &&
			line[strlen(name)] == ' ';
	fclose(f);
	return found;
}

/* A few grace periods, and time for their callbacks to run. */
static void wait_rcu(void)
{
	int i;

	for (i = 0; i < 5; i++) {
		syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0);
		usleep(100000);
	}
}

TEST(qrtr_unloads_while_its_socket_waits_for_a_grace_period)
{
	unsigned int off, size;
	struct unload *skel;
	int kmsg, ko, err;
	long expedited;
	char report[256];

	if (!tail_bytes())
		SKIP(return, "no inline tail in this boot");
	if (!proto_has_tail("QIPCRTR"))
		SKIP(return, "QIPCRTR sockets have no tail in this boot");
	if (access(QRTR_KO, R_OK))
		SKIP(return, "no %s (a kernel built with CONFIG_QRTR=m)", QRTR_KO);
	ASSERT_FALSE(module_loaded(QRTR)) TH_LOG("qrtr loaded before the test");
	skel = unload__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(1, map_slot(bpf_map__fd(skel->maps.map), &off, &size))
		TH_LOG("the map got no slot");
	ASSERT_EQ(0, unload__attach(skel));
	kmsg = kmsg_open();
	ASSERT_LE(0, kmsg);

	ko = open(QRTR_KO, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ko);
	err = syscall(__NR_finit_module, ko, "", 0);
	close(ko);
	if (err && errno == ENOSYS)
		SKIP(goto out, "this kernel loads no modules");
	ASSERT_EQ(0, err) TH_LOG("finit_module: %s", strerror(errno));
	/* Its name service's socket holds a value: what the test is about. */
	EXPECT_LE(1, skel->bss->qrtr_values);

	expedited = read_ulong(RCU_EXPEDITED);
	if (expedited >= 0)
		EXPECT_EQ(0, write_file(RCU_EXPEDITED, "1"));
	skel->bss->hold_free = true;
	err = syscall(__NR_delete_module, QRTR, O_NONBLOCK);
	EXPECT_EQ(0, err) TH_LOG("delete_module: %s", strerror(errno));
	skel->bss->hold_free = false;
	if (expedited >= 0)
		write_file(RCU_EXPEDITED, expedited ? "1" : "0");
	wait_rcu();
	EXPECT_FALSE(module_loaded(QRTR));
	/* The window was held open: the socket's memory was freed late. */
	EXPECT_EQ(1, skel->bss->held);
	EXPECT_FALSE(kmsg_report(kmsg, report, sizeof(report)))
		TH_LOG("kernel log: %s", report);
out:
	close(kmsg);
	unload__destroy(skel);
}

TEST_HARNESS_MAIN
