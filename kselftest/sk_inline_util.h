/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the inline sk storage selftests. */
#ifndef SK_INLINE_UTIL_H
#define SK_INLINE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/klog.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#define INLINE_BYTES_SYSCTL	"/proc/sys/net/core/bpf_sk_inline_bytes"
#define INLINE_PROTOS_SYSCTL	"/proc/sys/net/core/bpf_sk_inline_protos"
/*
 * Both are set only on the kernel command line, as sysctl arguments
 * (sysctl.net.core.bpf_sk_inline_bytes=N and its other spellings): their
 * paths under /proc/sys, as sysctl_word_sets() matches them.
 */
#define INLINE_BYTES_BOOT_ARG	"net/core/bpf_sk_inline_bytes"
#define INLINE_PROTOS_BOOT_ARG	"net/core/bpf_sk_inline_protos"
/* The longest protocol list the kernel takes is one less. */
#define INLINE_PROTOS_LEN	256
#define INLINE_MAX_BYTES	1024
#define SYSLOG_ACTION_READ_ALL		3
#define SYSLOG_ACTION_SIZE_BUFFER	10
#define INLINE_ALIGN		8
/* In front of the tail: the pointer to the socket's registry entry. */
#define INLINE_LINK_BYTES	8
#define INLINE_DEBUGFS		"/sys/kernel/debug/bpf_sk_inline"
#define INLINE_LAYOUT		INLINE_DEBUGFS "/slots"
/*
 * The host switch of earlier versions that made every map a candidate for
 * a slot, asking or not: gone, and the tests check that it stays gone.
 */
#define OLD_ALL_MAPS_SYSCTL	"/proc/sys/net/core/bpf_sk_inline_all_maps"
/* map_extra of an sk storage map that asks for a slot in the tail. */
#define SK_INLINE_REQUEST	BPF_SK_STORAGE_F_INLINE
/* ... and of one whose creation fails if it gets none. */
#define SK_INLINE_REQUIRE	(BPF_SK_STORAGE_F_INLINE | \
				 BPF_SK_STORAGE_F_INLINE_REQUIRED)
/* The smallest slot is 16 bytes: a tail holds at most this many. */
#define MAX_FILLERS		(INLINE_MAX_BYTES / 16)

#ifdef __KSELFTEST_HARNESS_H
/*
 * A test binary on a kernel without the series has nothing to test: skip
 * it as a whole, in TAP, before the harness prints its plan. Only test
 * binaries: the tools that include this file also run on such kernels.
 */
static void __attribute__((constructor)) sk_inline_require_series(void)
{
	if (!access(INLINE_BYTES_SYSCTL, F_OK) || errno != ENOENT)
		return;
	ksft_print_header();
	ksft_exit_skip("this kernel has no inline sk storage (no %s)\n",
		       INLINE_BYTES_SYSCTL);
}

/*
 * Skip the test, from its body or its fixture's setup, when fewer than
 * @n CPUs are online: for tests whose threads run pinned to CPUs 0 and 1.
 */
#define REQUIRE_CPUS(n) do {						\
	long __cpus = sysconf(_SC_NPROCESSORS_ONLN);			\
									\
	if (__cpus < (n))						\
		SKIP(return, "needs %d CPUs, this guest has %ld", (n), __cpus); \
} while (0)

/*
 * The variant of @fixture, one bool @field, and its two variants: @off
 * (false), then @on (true).
 */
#define FIXTURE_BOOL_VARIANTS(fixture, field, off, on)			\
	FIXTURE_VARIANT(fixture) { bool field; };			\
	FIXTURE_VARIANT_ADD(fixture, off) { .field = false };		\
	FIXTURE_VARIANT_ADD(fixture, on) { .field = true }
#endif

static inline unsigned int align_up(unsigned int v, unsigned int a)
{
	return (v + a - 1) / a * a;
}

/*
 * Read @read(@arg) until it is within [@lo, @hi], at most @tries times
 * @us apart, for what deferred frees bring down: the last reading.
 */
static inline long settle_within(long (*read)(const char *arg), const char *arg,
				 long lo, long hi, int tries, unsigned int us)
{
	long now = 0;
	int i;

	for (i = 0; i < tries; i++) {
		now = read(arg);
		if (lo <= now && now <= hi)
			break;
		usleep(us);
	}
	return now;
}

/* Read a whole small file into buf; return its length or -errno. */
static inline int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

static inline long read_ulong(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 0);
}

/* Write a string to a file; return 0 or -errno of the write. */
static inline int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/*
 * What follows the name if the command-line word @w sets the sysctl at
 * @path ("net/core/name") the way the kernel reads "sysctl" arguments:
 * "sysctl", a '.' or '/', then the names separated by any run of '.' and
 * '/' (process_sysctl_arg() turns '.' into '/', the path walk collapses
 * repeated '/'), so sysctl.net.core.name=, sysctl/net/core/name=,
 * sysctl..net.core.name=, sysctl./net//core/name= and
 * sysctl.net/core.name= all set it. Returns "=value", "" (no value, which
 * the kernel refuses without calling the setter) or NULL. A plain
 * "name=" word is no parameter of the kernel: it never matches.
 */
static inline const char *sysctl_word_sets(const char *w, const char *path)
{
	if (strncmp(w, "sysctl", 6))
		return NULL;
	w += 6;
	if (*w != '.' && *w != '/')
		return NULL;
	for (;;) {
		while (*w == '.' || *w == '/')
			w++;
		while (*path == '/')
			path++;
		while (*path && *path != '/' && *w == *path) {
			w++;
			path++;
		}
		if (!*path)
			return *w == '=' || !*w ? w : NULL;
		if (*path != '/' || (*w != '.' && *w != '/'))
			return NULL;
	}
}

/*
 * Split this boot's /proc/cmdline, read into @buf, into at most @max
 * words: the kernel's, up to a "--" (what follows it is init's). Their
 * number, or -1.
 */
static inline int cmdline_words(char *buf, size_t len, char **words, int max)
{
	char *w, *save;
	int n = 0;

	if (read_file("/proc/cmdline", buf, len) < 0)
		return -1;
	for (w = strtok_r(buf, " \n", &save); w && n < max;
	     w = strtok_r(NULL, " \n", &save)) {
		if (!strcmp(w, "--"))
			break;
		words[n++] = w;
	}
	return n;
}

/*
 * Call @fn(value, @arg) for each value this boot's command line gives the
 * sysctl at @path, in the order the kernel's setter got them (words with
 * no '=' never reach it). Their number, or -1 without /proc/cmdline.
 */
static inline int boot_sysctl_each(const char *path,
				   void (*fn)(const char *val, void *arg),
				   void *arg)
{
	char buf[4096], *words[256];
	int i, n, found = 0;
	const char *v;

	n = cmdline_words(buf, sizeof(buf), words, 256);
	for (i = 0; i < n; i++) {
		v = sysctl_word_sets(words[i], path);
		if (!v || *v != '=')
			continue;
		fn(v + 1, arg);
		found++;
	}
	return n < 0 ? -1 : found;
}

/* boot_sysctl_each()'s callback keeps the last value @valid accepts here. */
struct boot_value {
	char *val;
	size_t len;
	bool found;
	bool (*valid)(const char *val);		/* NULL: any */
};

static inline void boot_value_keep(const char *val, void *arg)
{
	struct boot_value *b = arg;

	if (b->valid && !b->valid(val))
		return;
	snprintf(b->val, b->len, "%s", val);
	b->found = true;
}

/*
 * The last value the command line gives the sysctl at @path, in @val, or
 * NULL: when a sysctl is given more than once, the last one counts.
 */
static inline const char *boot_sysctl(const char *path, char *val, size_t len)
{
	struct boot_value b = { .val = val, .len = len };

	boot_sysctl_each(path, boot_value_keep, &b);
	return b.found ? val : NULL;
}

/* The last net.core.bpf_sk_inline_bytes argument, valid or not, or NULL. */
static inline const char *inline_bytes_boot_arg(void)
{
	static char val[256];

	return boot_sysctl(INLINE_BYTES_BOOT_ARG, val, sizeof(val));
}

/* Is the boot argument a valid tail size, as documented? */
static inline bool inline_bytes_valid(const char *arg, unsigned int *bytes)
{
	unsigned long v;
	char *end;

	if (!arg || !*arg || arg[0] == '-' || arg[0] == ' ')
		return false;
	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno || *end || v > INLINE_MAX_BYTES)
		return false;
	*bytes = v;
	return true;
}

/*
 * The tail this boot should have: the last argument rounded up, or 0 when
 * there is none or it is invalid (an invalid value turns the tail off,
 * whatever came before it).
 */
static inline unsigned int expected_inline_bytes(void)
{
	unsigned int bytes;

	if (!inline_bytes_valid(inline_bytes_boot_arg(), &bytes))
		return 0;
	return align_up(bytes, INLINE_ALIGN);
}

/* Count kernel log lines that contain both needles (needle2 may be NULL). */
static inline int count_log_lines(const char *needle1, const char *needle2)
{
	int size = klogctl(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0);
	char *buf, *line, *save;
	int n, count = 0;

	if (size <= 0)
		return -1;
	buf = calloc(1, size + 1);
	if (!buf)
		return -1;
	n = klogctl(SYSLOG_ACTION_READ_ALL, buf, size);
	if (n < 0) {
		free(buf);
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, needle1) && (!needle2 || strstr(line, needle2)))
			count++;
	free(buf);
	return count;
}

/* Does the kernel take @arg as the protocol list (1 to 255 characters)? */
static inline bool inline_protos_valid(const char *arg)
{
	return arg && *arg && strlen(arg) < INLINE_PROTOS_LEN;
}

/* The kernel's list when the command line gives none. */
#define INLINE_PROTOS_DEFAULT	"TCP,TCPv6,UDP,UDPv6"

/*
 * The protocol list this boot should show: the last valid argument (an
 * invalid one leaves the list in effect as it was), else the default.
 */
static inline const char *expected_inline_protos(void)
{
	static char val[512];
	struct boot_value b = {
		.val = val, .len = sizeof(val), .valid = inline_protos_valid,
	};

	boot_sysctl_each(INLINE_PROTOS_BOOT_ARG, boot_value_keep, &b);
	return b.found ? val : INLINE_PROTOS_DEFAULT;
}

/* Whether sockets of the protocol /proc/net/protocols calls @name have a tail. */
static inline bool proto_has_tail(const char *name)
{
	const char *p = expected_inline_protos();
	size_t n;

	if (!expected_inline_bytes())
		return false;
	if (!strcmp(p, "all"))
		return true;
	for (; *p; p += n + !!p[n]) {
		n = strcspn(p, ",");
		if (n == strlen(name) && !strncmp(p, name, n))
			return true;
	}
	return false;
}

/*
 * The value of the "@key:" line of map @map_fd's fdinfo, to the end of
 * the line, in @val: 0, or -1 without such a line (@val is then ""). The
 * one parser of map fdinfo for the tests and tools.
 */
static inline int map_fdinfo(int map_fd, const char *key, char *val, size_t len)
{
	size_t klen = strlen(key);
	char path[64], buf[4096];
	const char *p;

	val[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", map_fd);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) || p[klen] != ':')
			continue;
		p += klen + 1;
		p += strspn(p, " \t");
		snprintf(val, len, "%.*s", (int)strcspn(p, "\n"), p);
		return 0;
	}
	return -1;
}

/* The number on the "@key:" line of map @map_fd's fdinfo, or -1. */
static inline long map_fdinfo_long(int map_fd, const char *key)
{
	char val[32], *end;
	long v;

	if (map_fdinfo(map_fd, key, val, sizeof(val)))
		return -1;
	v = strtol(val, &end, 10);
	return end == val ? -1 : v;
}

/*
 * Read the map's slot from its fdinfo: 1 inline (offset and size set),
 * 0 dynamic, -1 when fdinfo says neither (a kernel without the series);
 * both are 0 unless inline.
 */
static inline int map_slot(int map_fd, unsigned int *off, unsigned int *size)
{
	char storage[16];
	long o, s;

	*off = 0;
	*size = 0;
	if (map_fdinfo(map_fd, "sk_storage", storage, sizeof(storage)))
		return -1;
	if (!strcmp(storage, "dynamic"))
		return 0;
	o = map_fdinfo_long(map_fd, "sk_inline_offset");
	s = map_fdinfo_long(map_fd, "sk_inline_size");
	if (strcmp(storage, "inline") || o < 0 || s < 0)
		return -1;
	*off = o;
	*size = s;
	return 1;
}

/*
 * Why a dynamic map has no slot: its fdinfo's "sk_inline_status:", in
 * @out ("" for an inline map, or a kernel without the opt-in).
 */
static inline void map_inline_status(int map_fd, char *out, size_t len)
{
	map_fdinfo(map_fd, "sk_inline_status", out, len);
}

static inline __u32 map_id(int map_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return 0;
	return info.id;
}

/*
 * The slots view, as layout_show() prints it: "name: value" lines, a line
 * of column names, then every range of the tail in order, one a line:
 *
 *	offset size state map_id value_size charged
 *
 * where state is map, dying, leaked or free, and the last three are "-"
 * but on a map's row ("charged" also when sockets pay). The one parser of
 * the view for the tests.
 */
#define LAYOUT_MAX_RANGES	(INLINE_MAX_BYTES / INLINE_ALIGN)

struct layout_range {
	unsigned int off, size;
	__u32 id;			/* 0 for "-" */
	unsigned int value_size;	/* 0 for "-" */
	long charged;			/* -1 for "-" */
	char state[8];
};

struct layout {
	long tail, used, leaked, free;	/* *_bytes lines, -1 if absent */
	char policy[16], charge[16];
	int nr;
	struct layout_range r[LAYOUT_MAX_RANGES];
};

static inline void layout_parse_header(struct layout *l, const char *key,
				       const char *val)
{
	if (!strcmp(key, "tail_bytes"))
		l->tail = strtol(val, NULL, 10);
	else if (!strcmp(key, "used_bytes"))
		l->used = strtol(val, NULL, 10);
	else if (!strcmp(key, "leaked_bytes"))
		l->leaked = strtol(val, NULL, 10);
	else if (!strcmp(key, "free_bytes"))
		l->free = strtol(val, NULL, 10);
	else if (!strcmp(key, "policy"))
		snprintf(l->policy, sizeof(l->policy), "%s", val);
	else if (!strcmp(key, "charge"))
		snprintf(l->charge, sizeof(l->charge), "%s", val);
}

/* Parse one row into @r: 0, or -1 for a line that is not a row. */
static inline int layout_parse_range(const char *line, struct layout_range *r)
{
	char id[16], value_size[16], charged[24];
	int n;

	n = sscanf(line, "%u %u %7s %15s %15s %23s", &r->off, &r->size,
		   r->state, id, value_size, charged);
	if (n < 3)
		return -1;
	r->id = n > 3 ? strtoul(id, NULL, 10) : 0;
	r->value_size = n > 4 ? strtoul(value_size, NULL, 10) : 0;
	r->charged = n > 5 && strcmp(charged, "-") ?
		     strtol(charged, NULL, 10) : -1;
	return 0;
}

/* Whether @r's bytes belong to a map, live or dying (freed, not yet free). */
static inline bool range_held(const struct layout_range *r)
{
	return !strcmp(r->state, "map") || !strcmp(r->state, "dying");
}

/*
 * Read the view, in one read so that the totals and the ranges are of the
 * same moment: 0; -ENOENT when it cannot be read, and then the totals are
 * -1 and there is no range; -EBADMSG when the ranges do not tile the tail
 * or do not add up to its totals, with @l filled in still.
 */
static inline int layout_read(struct layout *l)
{
	long sum[3] = {}, end = 0;	/* held, leaked, free */
	char buf[16384], *line, *save, key[16], val[16];
	struct layout_range *r;
	int i;

	memset(l, 0, sizeof(*l));
	l->tail = l->used = l->leaked = l->free = -1;
	if (read_file(INLINE_LAYOUT, buf, sizeof(buf)) < 0)
		return -ENOENT;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%15[a-z_]: %15s", key, val) == 2)
			layout_parse_header(l, key, val);
		else if (l->nr == LAYOUT_MAX_RANGES)
			return -EBADMSG;
		else if (!layout_parse_range(line, &l->r[l->nr]))
			l->nr++;
	}
	for (i = 0; i < l->nr; i++) {
		r = &l->r[i];
		if (r->off != end || !r->size)
			return -EBADMSG;
		end += r->size;
		if (range_held(r))
			sum[0] += r->size;
		else if (!strcmp(r->state, "leaked"))
			sum[1] += r->size;
		else if (!strcmp(r->state, "free"))
			sum[2] += r->size;
		else
			return -EBADMSG;
	}
	if (l->tail < 0 || end != l->tail || sum[0] != l->used ||
	    sum[1] != l->leaked || sum[2] != l->free)
		return -EBADMSG;
	return 0;
}

/* The range that holds byte @off of the tail, or NULL. */
static inline const struct layout_range *layout_at(const struct layout *l,
						   unsigned int off)
{
	int i;

	for (i = 0; i < l->nr; i++)
		if (l->r[i].off <= off && off < l->r[i].off + l->r[i].size)
			return &l->r[i];
	return NULL;
}

/* The slot of live map @id, or NULL. */
static inline const struct layout_range *layout_find(const struct layout *l,
						     __u32 id)
{
	int i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->r[i].state, "map") && l->r[i].id == id)
			return &l->r[i];
	return NULL;
}

/*
 * The largest free range, what a new slot can take, and in @off (unless
 * NULL) where the first of that size starts.
 */
static inline unsigned int layout_room(const struct layout *l, unsigned int *off)
{
	unsigned int room = 0, at = 0;
	int i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->r[i].state, "free") && l->r[i].size > room) {
			room = l->r[i].size;
			at = l->r[i].off;
		}
	if (off)
		*off = at;
	return room;
}

/* How many slots of @slot bytes the free ranges can hold. */
static inline long layout_capacity(const struct layout *l, unsigned int slot)
{
	long n = 0;
	int i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->r[i].state, "free"))
			n += l->r[i].size / slot;
	return n;
}

/*
 * Close sk storage map @map_fd and wait until its slot, if it has one, is
 * back (free, or leaked): the map's free is deferred, and its slot returns
 * a grace period after that starts. 0, or -ETIMEDOUT.
 */
static inline int close_sk_map(int map_fd)
{
	const struct layout_range *r;
	unsigned int off, size;
	struct layout l;
	int i;

	if (map_slot(map_fd, &off, &size) != 1) {
		close(map_fd);
		return 0;
	}
	close(map_fd);
	for (i = 0; i < 2000; i++) {
		if (layout_read(&l) == -ENOENT)
			return 0;	/* no debugfs: nothing to wait on */
		r = layout_at(&l, off);
		if (!r || !range_held(r))
			return 0;
		usleep(5000);
	}
	return -ETIMEDOUT;
}

/*
 * A map that asks for a slot is dynamic when no free range of the tail
 * fits its slot. Fillers are maps that take the room, so that the next map
 * of their value size that asks is dynamic.
 */
struct sk_fillers {
	int nr;
	int fd[MAX_FILLERS];
	unsigned int off[MAX_FILLERS];
};

/* Are the fillers' slots free (or leaked) again? Yes if no layout view. */
static inline bool fillers_released(const struct sk_fillers *f)
{
	const struct layout_range *r;
	struct layout l;
	int i;

	if (layout_read(&l) == -ENOENT)
		return true;
	for (i = 0; i < f->nr; i++) {
		r = layout_at(&l, f->off[i]);
		if (r && range_held(r))
			return false;
	}
	return true;
}

/*
 * Close the fillers and wait until their slots are free again: a freed
 * map's slot is free only a grace period after the map's free starts.
 */
static inline int release_fillers(struct sk_fillers *f)
{
	int i, err = -ETIMEDOUT;

	for (i = 0; i < f->nr; i++)
		close(f->fd[i]);
	for (i = 0; i < 2000; i++) {
		if (fillers_released(f)) {
			err = 0;
			break;
		}
		usleep(5000);
	}
	f->nr = 0;
	return err;
}

/*
 * A dynamic sk storage map of @value_size in any boot: @create makes maps
 * of that size until one gets no slot, which is returned; the ones before
 * it stay open in @f until release_fillers(). Without a tail the first map
 * is dynamic; a kernel without the series counts as dynamic too. Maps the
 * caller wants inline must be created first. Its fd or -errno.
 */
static inline int fill_tail(int (*create)(unsigned int value_size, __u32 flags),
			    unsigned int value_size, struct sk_fillers *f)
{
	unsigned int off, size;
	int fd;

	f->nr = 0;
	for (;;) {
		fd = create(value_size, 0);
		if (fd < 0 || map_slot(fd, &off, &size) != 1)
			break;
		if (f->nr == MAX_FILLERS) {
			close(fd);
			fd = -ENOSPC;
			break;
		}
		f->off[f->nr] = off;
		f->fd[f->nr++] = fd;
	}
	if (fd < 0)
		release_fillers(f);
	return fd;
}

/* What a kernel report in the log starts with or contains. */
static const char *const kmsg_reports[] = {
	"Slab cache still has objects", "BUG:", "kernel BUG", "KASAN:",
	"WARNING:", "Oops", "refcount_t:", "possible recursive locking",
	"circular locking", "INFO: ", "lockdep",
};

/* /dev/kmsg, positioned after the records logged so far. */
static inline int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * The first record read from @fd that holds a kernel report, in @out;
 * false if none. EPIPE: records overwritten meanwhile, read on.
 */
static inline bool kmsg_report(int fd, char *out, size_t len)
{
	char rec[2048];
	unsigned int i;
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			return false;
		rec[n] = '\0';
		for (i = 0; i < sizeof(kmsg_reports) / sizeof(kmsg_reports[0]); i++) {
			if (!strstr(rec, kmsg_reports[i]))
				continue;
			snprintf(out, len, "%.*s", (int)strcspn(rec, "\n"), rec);
			return true;
		}
	}
}

/* BTF for an sk storage map: int key, value of @value_size bytes. */
static inline struct btf *sk_map_btf(unsigned int value_size, __u32 *key_id,
				     __u32 *value_id)
{
	struct btf *btf = btf__new_empty();
	int int_id, u8_id, arr_id;

	if (!btf)
		return NULL;
	int_id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	u8_id = btf__add_int(btf, "unsigned char", 1, 0);
	arr_id = btf__add_array(btf, int_id, u8_id, value_size);
	if (int_id < 0 || u8_id < 0 || arr_id < 0 || btf__load_into_kernel(btf)) {
		btf__free(btf);
		return NULL;
	}
	*key_id = int_id;
	*value_id = arr_id;
	return btf;
}

/*
 * Create an sk storage map named @name with a @value_size value, asking
 * for a slot with @map_extra SK_INLINE_REQUEST (SK_INLINE_REQUIRE: or
 * failing); its fd or -errno.
 */
static inline int create_sk_map_named(const char *name, unsigned int value_size,
				      __u32 extra_flags, __u64 map_extra)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	__u32 key_id, value_id;
	struct btf *btf;
	int fd;

	btf = sk_map_btf(value_size, &key_id, &value_id);
	if (!btf)
		return -EINVAL;
	opts.btf_fd = btf__fd(btf);
	opts.btf_key_type_id = key_id;
	opts.btf_value_type_id = value_id;
	opts.map_flags = BPF_F_NO_PREALLOC | extra_flags;
	opts.map_extra = map_extra;
	fd = bpf_map_create(BPF_MAP_TYPE_SK_STORAGE, name, 4, value_size, 0,
			    &opts);
	fd = fd < 0 ? -errno : fd;
	btf__free(btf);
	return fd;
}

#endif
