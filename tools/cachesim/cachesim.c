// SPDX-License-Identifier: GPL-2.0
/*
 * cachesim: a QEMU TCG plugin (QEMU 7.2, system emulation) that runs every
 * guest data access through a simulated cache hierarchy and counts, for
 * phases the guest marks, the accesses and the misses at each level.
 *
 * Hierarchy: a private L1D and L2 per vCPU and one LLC shared by all, each
 * set-associative with 64-byte lines and true LRU replacement. A lookup
 * goes L1, then L2, then LLC; a miss fills every level it passed (no
 * inclusion enforced, no back-invalidation, no prefetcher). Loads and
 * stores are alike (write-allocate). An access that spans two lines is two
 * accesses. With coherence=on, a store invalidates its line in the other
 * vCPUs' L1 and L2, and the next access there to the line is a coherence
 * miss (counted as a miss at both levels, and on its own, by line).
 * Instruction fetches and MMIO are not simulated; a phase counts the
 * instructions its vCPU executed (whole translation blocks: one that an
 * interrupt cuts short counts in full).
 *
 * Addresses are physical (qemu_plugin_get_hwaddr()): real L2 and LLC are
 * indexed physically, and the L1D's index bits lie inside the page offset,
 * so physical is what real hardware sees; it also keeps the kernel's
 * direct map and user space's mappings of one page one line, and different
 * processes' equal virtual addresses apart. addr=virt uses virtual
 * addresses instead.
 *
 * Phases: the guest calls two empty functions of a static (non-PIE)
 * binary, whose addresses are given as begin= and end=. The n-th call of
 * begin (counted from 0 over the whole run) opens phase n on the vCPU that
 * made it; the next end on that vCPU closes it. A phase counts the
 * accesses of that vCPU only, kernel and user; the caches themselves see
 * every access of every vCPU all the time (sim=phase: only in phases). A
 * phase that ends on another vCPU than it began on is reported "lost".
 *
 * Options (-plugin cachesim.so,opt=val,...):
 *   out=FILE             results, written as phases end (default: QEMU's log)
 *   begin=ADDR end=ADDR  the marker functions' addresses (nm)
 *   l1=SIZE l1assoc=N    default 32K, 8
 *   l2=SIZE l2assoc=N    default 1M, 16
 *   llc=SIZE llcassoc=N  default 32M, 16
 *   addr=phys|virt       default phys
 *   sim=all|phase        default all
 *   profile=on|off       misses per instruction per phase (default on)
 *   coherence=on|off     stores invalidate other vCPUs' copies (default off)
 *
 * Output lines:
 *   # config ...
 *   phase ID vcpu V all ACC L1M L2M LLCM user ACC L1M L2M LLCM insns N
 *   insn ID VADDR L1M L2M LLCM      (instructions that missed L1, ID's phase)
 *   coh ID LINEADDR N    (coherence=on: coherence misses on a line in ID;
 *                        after a phase line, which then ends "coh N")
 *   lost ID begin-vcpu U end-vcpu V
 *   total vcpu V ACC L1M L2M LLCM   (the whole run, at exit)
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define LINE_SHIFT	6
#define NR_LEVELS	3		/* L1, L2, LLC */
#define PROF_BITS	15
#define PROF_SIZE	(1u << PROF_BITS)
#define PROF_MAX	(PROF_SIZE / 2)
#define KERNEL_START	0xffff800000000000ULL
/* A tag whose line another vCPU's store invalidated. */
#define TAG_INVALID	(1ULL << 63)

struct cache {
	uint64_t *tags;			/* sets x ways, line + 1, MRU first */
	uint64_t set_mask;
	unsigned int ways;
	uint64_t size;
};

struct counts {
	uint64_t acc;
	uint64_t miss[NR_LEVELS];	/* L1, L2, LLC */
};

struct prof_entry {
	uint64_t pc;
	uint64_t miss[NR_LEVELS];
};

struct vcpu {
	struct cache l1, l2;
	pthread_mutex_t lock;		/* coherence=on: other vCPUs invalidate */
	uint64_t coh;			/* coherence misses in the open phase */
	struct prof_entry *coh_lines;	/* by line: pc is the line's address */
	uint32_t *coh_used;
	unsigned int nr_coh;
	uint64_t coh_dropped;
	long phase;			/* open phase, or -1 */
	uint64_t insns;			/* executed in the open phase */
	struct counts all, user, total;
	struct prof_entry *prof;
	uint32_t *prof_used;
	unsigned int nr_prof;
	uint64_t prof_dropped;
} __attribute__((aligned(64)));

static struct vcpu *vcpus;
static int nr_vcpus;
static struct cache llc;
static pthread_mutex_t llc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static uint64_t begin_pc, end_pc;
static long next_phase;
static bool use_phys = true, sim_all = true, profile = true, coherence;

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void emit(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	if (out) {
		vfprintf(out, fmt, ap);
	} else {
		vsnprintf(buf, sizeof(buf), fmt, ap);
		qemu_plugin_outs(buf);
	}
	va_end(ap);
}

static int cache_init(struct cache *c, const char *name, uint64_t size,
		      unsigned int ways)
{
	uint64_t sets;

	if (!ways || size % ((uint64_t)ways << LINE_SHIFT)) {
		fprintf(stderr, "cachesim: %s: %" PRIu64 " bytes is not a multiple of %u ways of 64 bytes\n",
			name, size, ways);
		return -1;
	}
	sets = size / ways >> LINE_SHIFT;
	if (sets & (sets - 1)) {
		fprintf(stderr, "cachesim: %s: %" PRIu64 " sets, not a power of two\n",
			name, sets);
		return -1;
	}
	c->tags = calloc(sets * ways, sizeof(*c->tags));
	if (!c->tags) {
		fprintf(stderr, "cachesim: %s: out of memory\n", name);
		return -1;
	}
	c->set_mask = sets - 1;
	c->ways = ways;
	c->size = size;
	return 0;
}

/*
 * Look @line up in @c and make it the set's most recent; true on a hit.
 * *@invalid is set when the line was there, invalidated by another vCPU.
 */
static bool cache_access(struct cache *c, uint64_t line, bool *invalid)
{
	uint64_t *set = c->tags + (line & c->set_mask) * c->ways;
	uint64_t tag = line + 1;
	unsigned int i;

	for (i = 0; i < c->ways; i++) {
		if ((set[i] & ~TAG_INVALID) == tag) {
			*invalid |= set[i] != tag;
			memmove(set + 1, set, i * sizeof(*set));
			set[0] = tag;
			return !(*invalid);
		}
	}
	memmove(set + 1, set, (c->ways - 1) * sizeof(*set));
	set[0] = tag;
	return false;
}

/* Another vCPU stored to @line: mark @c's copy, if any, invalid. */
static void cache_invalidate(struct cache *c, uint64_t line)
{
	uint64_t *set = c->tags + (line & c->set_mask) * c->ways;
	unsigned int i;

	for (i = 0; i < c->ways; i++)
		if (set[i] == line + 1)
			set[i] |= TAG_INVALID;
}

/*
 * The level that served @line: 0 L1, 1 L2, 2 LLC, 3 memory; *@invalid
 * when L1 had it invalidated by another vCPU.
 */
static int hierarchy_access(struct vcpu *v, uint64_t line, bool *invalid)
{
	bool hit, l2_invalid = false;

	*invalid = false;
	if (cache_access(&v->l1, line, invalid))
		return 0;
	if (cache_access(&v->l2, line, &l2_invalid) && !*invalid)
		return 1;
	/* An invalidated line comes from the LLC, as from another core. */
	pthread_mutex_lock(&llc_lock);
	hit = cache_access(&llc, line, &l2_invalid);
	pthread_mutex_unlock(&llc_lock);
	return hit ? 2 : 3;
}

static void count(struct counts *c, int level)
{
	int i;

	c->acc++;
	for (i = 0; i < level; i++)
		c->miss[i]++;
}

/* @key's entry in a profile table, or NULL when the table is full. */
static struct prof_entry *prof_entry(struct prof_entry *table, uint32_t *used,
				     unsigned int *nr, uint64_t *dropped,
				     uint64_t key)
{
	uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ULL) >> (64 - PROF_BITS));
	struct prof_entry *e;

	for (;;) {
		e = &table[h];
		if (e->pc == key)
			return e;
		if (!e->pc) {
			if (*nr == PROF_MAX) {
				(*dropped)++;
				return NULL;
			}
			e->pc = key;
			used[(*nr)++] = h;
			return e;
		}
		h = (h + 1) & (PROF_SIZE - 1);
	}
}

static void prof_count(struct vcpu *v, uint64_t pc, int level)
{
	struct prof_entry *e;
	int i;

	e = prof_entry(v->prof, v->prof_used, &v->nr_prof, &v->prof_dropped, pc);
	for (i = 0; e && i < level; i++)
		e->miss[i]++;
}

static void coh_count(struct vcpu *v, uint64_t line)
{
	struct prof_entry *e;

	v->coh++;
	e = prof_entry(v->coh_lines, v->coh_used, &v->nr_coh, &v->coh_dropped,
		       line << LINE_SHIFT);
	if (e)
		e->miss[0]++;
}

/* @line was stored to by @cpu: no other vCPU's private copy stays valid. */
static void invalidate_others(unsigned int cpu, uint64_t line)
{
	struct vcpu *w;
	int i;

	for (i = 0; i < nr_vcpus; i++) {
		if (i == (int)cpu)
			continue;
		w = &vcpus[i];
		pthread_mutex_lock(&w->lock);
		cache_invalidate(&w->l1, line);
		cache_invalidate(&w->l2, line);
		pthread_mutex_unlock(&w->lock);
	}
}

static void vcpu_mem(unsigned int cpu, qemu_plugin_meminfo_t info,
		     uint64_t vaddr, void *udata)
{
	struct vcpu *v = &vcpus[cpu];
	long phase = __atomic_load_n(&v->phase, __ATOMIC_RELAXED);
	struct qemu_plugin_hwaddr *hw;
	uint64_t addr = vaddr, line, last;
	bool store = qemu_plugin_mem_is_store(info), invalid;
	unsigned int size;
	int level;

	if (!sim_all && phase < 0)
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (hw && qemu_plugin_hwaddr_is_io(hw))
		return;
	if (hw && use_phys)
		addr = qemu_plugin_hwaddr_phys_addr(hw);
	size = 1u << qemu_plugin_mem_size_shift(info);
	last = (addr + size - 1) >> LINE_SHIFT;
	for (line = addr >> LINE_SHIFT; line <= last; line++) {
		if (coherence)
			pthread_mutex_lock(&v->lock);
		level = hierarchy_access(v, line, &invalid);
		if (coherence) {
			if (invalid && phase >= 0)
				coh_count(v, line);
			pthread_mutex_unlock(&v->lock);
			if (store)
				invalidate_others(cpu, line);
		}
		count(&v->total, level);
		if (phase < 0)
			continue;
		count(&v->all, level);
		if (vaddr < KERNEL_START)
			count(&v->user, level);
		if (profile && level)
			prof_count(v, (uintptr_t)udata, level);
	}
}

static void prof_clear(struct vcpu *v)
{
	unsigned int i;

	for (i = 0; i < v->nr_prof; i++)
		memset(&v->prof[v->prof_used[i]], 0, sizeof(*v->prof));
	v->nr_prof = 0;
	v->prof_dropped = 0;
	for (i = 0; i < v->nr_coh; i++)
		memset(&v->coh_lines[v->coh_used[i]], 0, sizeof(*v->coh_lines));
	v->nr_coh = 0;
	v->coh_dropped = 0;
	v->coh = 0;
}

/* Another vCPU's open phase, closed as lost; under out_lock. */
static void close_lost(unsigned int cpu)
{
	int i;

	for (i = 0; i < nr_vcpus; i++) {
		long phase = __atomic_load_n(&vcpus[i].phase, __ATOMIC_RELAXED);

		if (i == (int)cpu || phase < 0)
			continue;
		emit("lost %ld begin-vcpu %d end-vcpu %u\n", phase, i, cpu);
		__atomic_store_n(&vcpus[i].phase, -1, __ATOMIC_RELAXED);
	}
}

static void phase_begin(unsigned int cpu, void *udata)
{
	struct vcpu *v = &vcpus[cpu];

	pthread_mutex_lock(&out_lock);
	close_lost(cpu);
	if (v->phase >= 0)
		emit("lost %ld begin-vcpu %u end-vcpu none\n", v->phase, cpu);
	memset(&v->all, 0, sizeof(v->all));
	memset(&v->user, 0, sizeof(v->user));
	v->insns = 0;
	prof_clear(v);
	__atomic_store_n(&v->phase, next_phase++, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&out_lock);
}

static void phase_end(unsigned int cpu, void *udata)
{
	struct vcpu *v = &vcpus[cpu];
	struct counts a = v->all, u = v->user;
	struct prof_entry *e;
	unsigned int i;

	pthread_mutex_lock(&out_lock);
	if (v->phase < 0) {
		close_lost(cpu);
		pthread_mutex_unlock(&out_lock);
		return;
	}
	emit("phase %ld vcpu %u all %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
	     " user %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " insns %" PRIu64 "%s",
	     v->phase, cpu, a.acc, a.miss[0], a.miss[1], a.miss[2],
	     u.acc, u.miss[0], u.miss[1], u.miss[2], v->insns,
	     coherence ? "" : "\n");
	if (coherence) {
		emit(" coh %" PRIu64 "\n", v->coh);
		for (i = 0; i < v->nr_coh; i++) {
			e = &v->coh_lines[v->coh_used[i]];
			emit("coh %ld 0x%" PRIx64 " %" PRIu64 "\n",
			     v->phase, e->pc, e->miss[0]);
		}
		if (v->coh_dropped)
			emit("coh %ld dropped %" PRIu64 "\n", v->phase, v->coh_dropped);
	}
	for (i = 0; profile && i < v->nr_prof; i++) {
		e = &v->prof[v->prof_used[i]];
		emit("insn %ld 0x%" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		     v->phase, e->pc, e->miss[0], e->miss[1], e->miss[2]);
	}
	if (v->prof_dropped)
		emit("insn %ld dropped %" PRIu64 "\n", v->phase, v->prof_dropped);
	__atomic_store_n(&v->phase, -1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&out_lock);
}

static void tb_exec(unsigned int cpu, void *udata)
{
	struct vcpu *v = &vcpus[cpu];

	if (__atomic_load_n(&v->phase, __ATOMIC_RELAXED) >= 0)
		v->insns += (uintptr_t)udata;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct qemu_plugin_insn *insn;
	uint64_t pc;

	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)n);

	for (i = 0; i < n; i++) {
		insn = qemu_plugin_tb_get_insn(tb, i);
		pc = qemu_plugin_insn_vaddr(insn);
		if (pc == begin_pc)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, phase_begin,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
		else if (pc == end_pc)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, phase_end,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
		qemu_plugin_register_vcpu_mem_cb(insn, vcpu_mem, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 (void *)(uintptr_t)pc);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	struct counts *t;
	int i;

	pthread_mutex_lock(&out_lock);
	for (i = 0; i < nr_vcpus; i++) {
		t = &vcpus[i].total;
		emit("total vcpu %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		     i, t->acc, t->miss[0], t->miss[1], t->miss[2]);
	}
	if (out)
		fflush(out);
	pthread_mutex_unlock(&out_lock);
}

static bool parse_size(const char *s, uint64_t *size)
{
	char *end;

	*size = strtoull(s, &end, 0);
	switch (*end) {
	case 'k': case 'K':
		*size <<= 10, end++;
		break;
	case 'm': case 'M':
		*size <<= 20, end++;
		break;
	case 'g': case 'G':
		*size <<= 30, end++;
		break;
	}
	return end != s && !*end && *size;
}

struct number_option {
	const char *name;
	uint64_t *value;
};

/* NAME=VALUE for an option of the table OPTS: false if none or a bad value. */
static bool parse_number_option(const char *name, const char *val,
				const struct number_option *opts)
{
	for (; opts->name; opts++)
		if (!strcmp(name, opts->name))
			return parse_size(val, opts->value);
	return false;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	uint64_t size[NR_LEVELS] = { 32 << 10, 1 << 20, 32 << 20 };
	uint64_t ways[NR_LEVELS] = { 8, 16, 16 };
	const struct number_option numbers[] = {
		{ "begin", &begin_pc }, { "end", &end_pc },
		{ "l1", &size[0] }, { "l2", &size[1] }, { "llc", &size[2] },
		{ "l1assoc", &ways[0] }, { "l2assoc", &ways[1] }, { "llcassoc", &ways[2] },
		{ NULL, NULL },
	};
	const char *out_path = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		char *opt = argv[i], *val = strchr(opt, '=');
		bool ok = val;

		if (val)
			*val++ = 0;
		if (!ok)
			;
		else if (!strcmp(opt, "out"))
			out_path = val;
		else if (!strcmp(opt, "addr"))
			ok = (use_phys = !strcmp(val, "phys")) || !strcmp(val, "virt");
		else if (!strcmp(opt, "sim"))
			ok = (sim_all = !strcmp(val, "all")) || !strcmp(val, "phase");
		else if (!strcmp(opt, "profile"))
			ok = (profile = !strcmp(val, "on")) || !strcmp(val, "off");
		else if (!strcmp(opt, "coherence"))
			ok = (coherence = !strcmp(val, "on")) || !strcmp(val, "off");
		else
			ok = parse_number_option(opt, val, numbers);
		if (!ok) {
			fprintf(stderr, "cachesim: bad option '%s'\n", argv[i]);
			return -1;
		}
	}
	if (!info->system_emulation) {
		fprintf(stderr, "cachesim: system emulation only\n");
		return -1;
	}
	if (!begin_pc || !end_pc || begin_pc == end_pc) {
		fprintf(stderr, "cachesim: begin= and end= must be two different addresses\n");
		return -1;
	}
	if (out_path) {
		out = fopen(out_path, "w");
		if (!out) {
			perror(out_path);
			return -1;
		}
	}
	nr_vcpus = info->system.max_vcpus;
	vcpus = aligned_alloc(64, nr_vcpus * sizeof(*vcpus));
	if (!vcpus)
		return -1;
	memset(vcpus, 0, nr_vcpus * sizeof(*vcpus));
	for (i = 0; i < nr_vcpus; i++) {
		struct vcpu *v = &vcpus[i];

		v->phase = -1;
		if (cache_init(&v->l1, "l1", size[0], ways[0]) ||
		    cache_init(&v->l2, "l2", size[1], ways[1]))
			return -1;
		v->prof = calloc(PROF_SIZE, sizeof(*v->prof));
		v->prof_used = calloc(PROF_MAX, sizeof(*v->prof_used));
		v->coh_lines = calloc(PROF_SIZE, sizeof(*v->coh_lines));
		v->coh_used = calloc(PROF_MAX, sizeof(*v->coh_used));
		if (!v->prof || !v->prof_used || !v->coh_lines || !v->coh_used)
			return -1;
		pthread_mutex_init(&v->lock, NULL);
	}
	if (cache_init(&llc, "llc", size[2], ways[2]))
		return -1;
	emit("# config line 64 l1 %" PRIu64 " %" PRIu64 " l2 %" PRIu64 " %" PRIu64
	     " llc %" PRIu64 " %" PRIu64 " vcpus %d addr %s sim %s begin 0x%" PRIx64
	     " end 0x%" PRIx64 " coherence %s\n", size[0], ways[0], size[1], ways[1],
	     size[2], ways[2], nr_vcpus, use_phys ? "phys" : "virt",
	     sim_all ? "all" : "phase", begin_pc, end_pc, coherence ? "on" : "off");
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
