/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sk-workload: what the request/response part (sk-workload.c) and the
 * churn part (sk-workload-churn.c) of the guest tool share.
 */
#ifndef SK_WORKLOAD_USER_H
#define SK_WORKLOAD_USER_H

#include <stdbool.h>
#include <bpf/libbpf.h>

#define TOOL_NAME "sk-workload"
#include "tool_util.h"
#include "../kselftest/sk_memcg.h"
#include "sk-workload.h"

#define MAX_STEPS	8

struct wl_cfg {
	long steps[MAX_STEPS];
	int nr_steps;
	int passes;
	long segment;
	int churn_seconds;
	bool reqresp, churn, hot, cachesim, check;
};

/* A connection over loopback: both ends are ours. */
struct conn {
	int client, server;
};

extern struct wl_cfg cfg;
extern struct sk_workload *skel;
extern bool have_variant[NR_WL_VARIANTS];
extern const char *const variant_name[NR_WL_VARIANTS];
/* Records (or churn counts) that did not match what was done. */
extern long record_errors;

double median(double *v, int n);
int pin_to_cpu(int cpu);
bool churn_prog(const struct bpf_program *p);
void variant_attach(int v);
void variant_detach(void);
void conn_open(struct conn *c, long slot);
void conn_close(struct conn *c);
void transaction(const struct conn *c);
void churn(void);
void hot(void);
void cachesim_begin(void);
void cachesim_end(void);

#endif /* SK_WORKLOAD_USER_H */
