// SPDX-License-Identifier: GPL-2.0
/*
 * The workload of "make workload" (tools/sk-workload.c), small: its
 * request/response run checks every per-connection record, inline,
 * dynamic and in the hash map, against the transactions it made, and the
 * raw program's total; its churn run checks that exactly the sockets
 * that held an inline value, both of every connection, had their memory
 * freed after a grace period, and no socket in the other variants.
 */
#include "../kselftest_harness.h"

#define WORKLOAD_TOOL	"/tools/sk-workload"

/* Run the tool with @args; its status, its output in @out. */
static int run_tool(const char *args, char *out, size_t len)
{
	char cmd[256];
	size_t got = 0, n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", WORKLOAD_TOOL, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (got < len - 1 && (n = fread(out + got, 1, len - 1 - got, f)) > 0)
		got += n;
	out[got] = '\0';
	return pclose(f);
}

static void show(struct __test_metadata *_metadata, const char *out)
{
	const char *line = out, *nl;

	for (; *line; line = nl + 1) {
		nl = strchrnul(line, '\n');
		TH_LOG("%.*s", (int)(nl - line), line);
		if (!*nl)
			break;
	}
}

static char out[1 << 16];

/* Slow kernels (KASAN, lockdep) take longer than the default 30 s. */
FIXTURE(workload) {};
FIXTURE_SETUP(workload) {}
FIXTURE_TEARDOWN(workload) {}

TEST_F_TIMEOUT(workload, reqresp_records, 300)
{
	long records = -1, wrong = -1;
	const char *check;

	if (access(WORKLOAD_TOOL, X_OK))
		SKIP(return, "no %s in this guest (make rootfs puts it there)", WORKLOAD_TOOL);
	ASSERT_EQ(0, run_tool("--only reqresp -n 100,300 --passes 2 --segment 100",
			      out, sizeof(out))) show(_metadata, out);
	check = strstr(out, "check: reqresp ");
	ASSERT_NE(NULL, check) show(_metadata, out);
	ASSERT_EQ(2, sscanf(check, "check: reqresp %ld records, %ld wrong", &records, &wrong));
	/* inline (where there is room), dynamic and hash: both sockets of 300 */
	EXPECT_GE(records, 2 * 2 * 300 + 1);
	EXPECT_EQ(0, wrong) show(_metadata, out);
	/* A transactions/s line per variant and N. */
	EXPECT_NE(NULL, strstr(out, "reqresp 300 dynamic "));
	EXPECT_NE(NULL, strstr(out, "reqresp 300 hash "));
}

TEST_F_TIMEOUT(workload, churn_deferred_frees, 300)
{
	if (access(WORKLOAD_TOOL, X_OK))
		SKIP(return, "no %s in this guest (make rootfs puts it there)", WORKLOAD_TOOL);
	ASSERT_EQ(0, run_tool("--only churn --churn-seconds 2", out, sizeof(out)))
		show(_metadata, out);
	EXPECT_NE(NULL, strstr(out, "check: churn ok")) show(_metadata, out);
	EXPECT_NE(NULL, strstr(out, "churn dynamic conns/s "));
	if (!strstr(out, "# inline: not run"))
		EXPECT_NE(NULL, strstr(out, "churn inline conns/s "));
}

TEST_HARNESS_MAIN
