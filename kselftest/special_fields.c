// SPDX-License-Identifier: GPL-2.0
/*
 * sk storage maps whose value holds a BTF special field other than
 * bpf_spin_lock: a kptr, a bpf_refcount, a bpf_timer or a bpf_wq.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "special_fields.skel.h"

/*
 * BTF special fields other than bpf_spin_lock. A map with any of them is
 * dynamic whatever the tail (their destructors are the dynamic path's);
 * the map types that refuse timers and workqueues refuse them the same.
 */
#define KPTR_TYPE	"cgroup"	/* the kernel type a kptr points to */

/*
 * Create an sk storage map whose value is a u64 counter, then one special
 * field: a struct @type of @size bytes, or with @ptr_tag a tagged pointer
 * to KPTR_TYPE (struct val_kptr of special_fields.bpf.c). Its fd or -errno.
 */
static int create_special_map(const char *type, unsigned int size,
			      const char *ptr_tag)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts,
		    .map_flags = BPF_F_NO_PREALLOC,
		    .map_extra = SK_INLINE_REQUEST);
	int int_id, u64_id, field_id, val_id, fd = -EINVAL;
	struct btf *btf = btf__new_empty();

	if (!btf)
		return -ENOMEM;
	int_id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	u64_id = btf__add_int(btf, "unsigned long long", 8, 0);
	if (ptr_tag) {
		field_id = btf__add_struct(btf, KPTR_TYPE, 0);
		field_id = btf__add_type_tag(btf, ptr_tag, field_id);
		field_id = btf__add_ptr(btf, field_id);
		size = 8;
	} else {
		/* The kernel knows these fields by name and size. */
		field_id = btf__add_struct(btf, type, size);
		if (field_id > 0 &&
		    btf__add_field(btf, "opaque", size == 8 || size == 16 ?
				   u64_id : int_id, 0, 0))
			field_id = -EINVAL;
	}
	val_id = field_id < 0 ? field_id :
		 btf__add_struct(btf, "val", 8 + size);
	if (int_id < 0 || u64_id < 0 || val_id < 0 ||
	    btf__add_field(btf, "stores", u64_id, 0, 0) ||
	    btf__add_field(btf, "field", field_id, 64, 0) ||
	    btf__load_into_kernel(btf))
		goto out;
	opts.btf_fd = btf__fd(btf);
	opts.btf_key_type_id = int_id;
	opts.btf_value_type_id = val_id;
	fd = bpf_map_create(BPF_MAP_TYPE_SK_STORAGE, "special", 4, 8 + size,
			    0, &opts);
	fd = fd < 0 ? -errno : fd;
out:
	btf__free(btf);
	return fd;
}

FIXTURE(special_field)
{
	int fd;
};

FIXTURE_VARIANT(special_field)
{
	const char *type;
	unsigned int size;
	const char *ptr_tag;
	int create_err;
};

FIXTURE_VARIANT_ADD(special_field, kptr)
{
	.ptr_tag = "kptr",
};

FIXTURE_VARIANT_ADD(special_field, kptr_untrusted)
{
	.ptr_tag = "kptr_untrusted",
};

FIXTURE_VARIANT_ADD(special_field, refcount)
{
	.type = "bpf_refcount",
	.size = 4,
};

FIXTURE_VARIANT_ADD(special_field, timer)
{
	.type = "bpf_timer",
	.size = 16,
	.create_err = -EOPNOTSUPP,
};

FIXTURE_VARIANT_ADD(special_field, wq)
{
	.type = "bpf_wq",
	.size = 16,
	.create_err = -EOPNOTSUPP,
};

FIXTURE_SETUP(special_field)
{
	self->fd = create_special_map(variant->type, variant->size,
				      variant->ptr_tag);
}

FIXTURE_TEARDOWN(special_field)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(special_field, map_holding_it_is_dynamic_or_refused_whatever_the_tail)
{
	unsigned int size = 8 + (variant->ptr_tag ? 8 : variant->size);
	unsigned int off, slot;
	int plain;

	if (variant->create_err) {
		EXPECT_EQ(variant->create_err, self->fd);
		return;
	}
	ASSERT_LE(0, self->fd) TH_LOG("create: %s", strerror(-self->fd));
	EXPECT_EQ(0, map_slot(self->fd, &off, &slot));
	/* The field, not the size, keeps it out: a plain value fits. */
	if (tail_bytes() >= slot_size(size)) {
		plain = create_sk_map(size, 0);
		ASSERT_LE(0, plain);
		EXPECT_EQ(1, map_slot(plain, &off, &slot));
		EXPECT_EQ(0, free_map(plain));
	}
}

/*
 * A kptr to a cgroup, stored by a program in a socket's value: the cgroup
 * stays a dying descendant of its parent after rmdir for as long as the
 * kptr holds it. A second cgroup, removed at the same time and never
 * referenced, shows when an unreferenced one would be gone.
 */
#define KPTR_WAIT_MS	20000

FIXTURE(kptr)
{
	struct special_fields *skel;
	struct bpf_link *link;
	char held_parent[64], held[80], control_parent[64], control[80];
	int rx, tx;
};

static long nr_dying_descendants(const char *cgroup)
{
	char path[96], buf[512], *p;

	snprintf(path, sizeof(path), "%s/cgroup.stat", cgroup);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "nr_dying_descendants ");
	return p ? strtol(p + strlen("nr_dying_descendants "), NULL, 10) : -1;
}

/* Wait for @cgroup's dying descendants to be @want; the last count. */
static long wait_dying(const char *cgroup, long want)
{
	long n = nr_dying_descendants(cgroup);
	int ms;

	for (ms = 0; n != want && ms < KPTR_WAIT_MS; ms += 10) {
		usleep(10000);
		n = nr_dying_descendants(cgroup);
	}
	return n;
}

FIXTURE_SETUP(kptr)
{
	struct sockaddr_in addr;
	struct stat st;
	int map;

	self->rx = self->tx = -1;
	snprintf(self->held_parent, sizeof(self->held_parent),
		 "/sys/fs/cgroup/sk-kptr-held-%d", getpid());
	snprintf(self->control_parent, sizeof(self->control_parent),
		 "/sys/fs/cgroup/sk-kptr-control-%d", getpid());
	snprintf(self->held, sizeof(self->held), "%s/c", self->held_parent);
	snprintf(self->control, sizeof(self->control), "%s/c",
		 self->control_parent);
	ASSERT_EQ(0, mkdir(self->held_parent, 0755));
	ASSERT_EQ(0, mkdir(self->held, 0755));
	ASSERT_EQ(0, mkdir(self->control_parent, 0755));
	ASSERT_EQ(0, mkdir(self->control, 0755));
	ASSERT_EQ(0, stat(self->held, &st));

	map = create_special_map(NULL, 0, "kptr");
	ASSERT_LE(0, map);
	self->skel = special_fields__open();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, bpf_map__reuse_fd(self->skel->maps.map_kptr, map));
	close(map);
	ASSERT_EQ(0, special_fields__load(self->skel));
	/* A cgroup2 directory's inode number is the cgroup's id. */
	self->skel->bss->cgroup_id = st.st_ino;

	self->rx = loopback_socket(SOCK_DGRAM, &addr);
	self->tx = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, self->rx);
	ASSERT_LE(0, self->tx);
	ASSERT_EQ(0, connect(self->tx, (struct sockaddr *)&addr, sizeof(addr)));
	self->skel->bss->port = ntohs(addr.sin_port);

	self->link = attach_root_cgroup(self->skel->progs.hold_cgroup);
	ASSERT_NE(NULL, self->link);
}

FIXTURE_TEARDOWN(kptr)
{
	if (self->tx >= 0)
		close(self->tx);
	if (self->rx >= 0)
		close(self->rx);
	bpf_link__destroy(self->link);
	special_fields__destroy(self->skel);
	rmdir(self->held);
	rmdir(self->control);
	wait_dying(self->held_parent, 0);
	wait_dying(self->control_parent, 0);
	EXPECT_EQ(0, rmdir(self->held_parent));
	EXPECT_EQ(0, rmdir(self->control_parent));
}

/*
 * Store a reference to the held cgroup in tx's value, remove both cgroups
 * and wait for the control to be gone: 0 with the held one still dying.
 */
static int hold_and_remove(FIXTURE_DATA(kptr) *self)
{
	if (send(self->tx, "k", 1, 0) != 1)
		return -errno;
	if (self->skel->bss->stored != 1)
		return -ENOENT;
	if (rmdir(self->held) || rmdir(self->control))
		return -errno;
	if (wait_dying(self->control_parent, 0) != 0)
		return -ETIMEDOUT;
	return nr_dying_descendants(self->held_parent) == 1 ? 0 : -ESRCH;
}

TEST_F(kptr, map_holding_one_is_dynamic_whatever_the_tail)
{
	unsigned int off, size;

	EXPECT_EQ(0, map_slot(bpf_map__fd(self->skel->maps.map_kptr), &off,
			      &size));
}

TEST_F(kptr, stored_in_a_socket_value_is_released_when_the_socket_closes)
{
	ASSERT_EQ(0, hold_and_remove(self));
	close(self->tx);
	self->tx = -1;
	EXPECT_EQ(0, wait_dying(self->held_parent, 0));
}

TEST_F(kptr, stored_in_a_socket_value_is_released_when_the_value_is_deleted)
{
	ASSERT_EQ(0, hold_and_remove(self));
	ASSERT_EQ(0, sys_delete(bpf_map__fd(self->skel->maps.map_kptr),
				self->tx));
	EXPECT_EQ(0, wait_dying(self->held_parent, 0));
}

TEST_F(kptr, stored_in_a_socket_value_is_released_when_the_map_is_freed)
{
	ASSERT_EQ(0, hold_and_remove(self));
	bpf_link__destroy(self->link);
	self->link = NULL;
	special_fields__destroy(self->skel);
	self->skel = NULL;
	/* The socket stays open: only the map's going releases it. */
	EXPECT_EQ(0, wait_dying(self->held_parent, 0));
	EXPECT_EQ(1, send(self->tx, "k", 1, 0));
}

TEST_HARNESS_MAIN
