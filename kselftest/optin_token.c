// SPDX-License-Identifier: GPL-2.0
/*
 * A slot is a share of every socket on the host: only a creator with
 * CAP_BPF or CAP_SYS_ADMIN in the initial user namespace gets one. A
 * process that creates its maps through a BPF token, root only in a user
 * namespace of its own, gets a dynamic map whether it asks or not, at any
 * tail and with room in it (no switch of the host changes that);
 * bpf_map_info's sk_storage_placement and the map's fdinfo say why. One
 * that requires a slot is refused with EPERM.
 *
 * The child enters a new user and mount namespace and opens a bpffs
 * context; the parent, privileged in the initial namespace, delegates map
 * creation on it (as upstream's prog_tests/token.c does) and hands back
 * the mount, from which the child makes its token.
 */
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/mount.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"

#define VALUE_SIZE	8

/* What the child saw, sent to the parent over the socket pair. */
struct token_result {
	int token;		/* token fd, or -errno */
	int asked;		/* map create that asks: fd, or -errno */
	int not_asked;		/* one that does not: fd, or -errno */
	int required;		/* one that requires a slot: fd, or -errno */
	int asked_slot;		/* map_slot() of each */
	int not_asked_slot;
	int asked_placement;	/* map_placement() of each */
	int not_asked_placement;
	char asked_status[32];	/* sk_inline_status: of each */
	char not_asked_status[32];
};

static int enter_userns(void)
{
	if (unshare(CLONE_NEWUSER))
		return -errno;
	if (write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", "0 0 1") ||
	    write_file("/proc/self/gid_map", "0 0 1"))
		return -EPERM;
	if (setgid(0) || setuid(0))
		return -errno;
	if (unshare(CLONE_NEWNS) ||
	    syscall(__NR_mount, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	return 0;
}

/* Raw bpf(2): the system libbpf may predate BPF tokens. */
static int sys_bpf(int cmd, union bpf_attr *attr)
{
	int fd = syscall(__NR_bpf, cmd, attr, sizeof(*attr));

	return fd < 0 ? -errno : fd;
}

static int token_create(int bpffs_fd)
{
	union bpf_attr attr = { .token_create.bpffs_fd = bpffs_fd };

	return sys_bpf(BPF_TOKEN_CREATE, &attr);
}

static int map_with_token(int btf_fd, __u32 key_id, __u32 value_id,
			  int token, __u64 map_extra)
{
	union bpf_attr attr = {
		.map_type = BPF_MAP_TYPE_SK_STORAGE,
		.key_size = 4,
		.value_size = VALUE_SIZE,
		.map_flags = BPF_F_NO_PREALLOC | BPF_F_TOKEN_FD,
		.btf_fd = btf_fd,
		.btf_key_type_id = key_id,
		.btf_value_type_id = value_id,
		.map_extra = map_extra,
		.map_token_fd = token,
	};

	return sys_bpf(BPF_MAP_CREATE, &attr);
}

/* In the child: namespaces, token, then the two creates. */
static void child(int sock, int btf_fd, __u32 key_id, __u32 value_id)
{
	struct token_result r = { .token = -1, .asked = -1, .not_asked = -1,
				  .required = -1 };
	unsigned int off, size;
	int fs_fd, mnt_fd, bpffs;

	r.token = enter_userns();
	if (!r.token) {
		fs_fd = syscall(__NR_fsopen, "bpf", 0);
		r.token = fs_fd < 0 ? -errno : send_fd(sock, fs_fd);
	}
	/* No bpffs context to delegate: the parent still reads one byte. */
	if (r.token && write(sock, "", 1) != 1)
		_exit(1);
	if (!r.token) {
		mnt_fd = recv_fd(sock);
		bpffs = mnt_fd < 0 ? mnt_fd : openat(mnt_fd, ".", O_RDONLY);
		r.token = bpffs < 0 ? -errno : token_create(bpffs);
	}
	if (r.token >= 0) {
		r.asked = map_with_token(btf_fd, key_id, value_id, r.token,
					 SK_INLINE_REQUEST);
		r.not_asked = map_with_token(btf_fd, key_id, value_id, r.token, 0);
		r.required = map_with_token(btf_fd, key_id, value_id, r.token,
					    SK_INLINE_REQUIRE);
		if (r.asked >= 0) {
			r.asked_slot = map_slot(r.asked, &off, &size);
			r.asked_placement = map_placement(r.asked);
			map_inline_status(r.asked, r.asked_status, sizeof(r.asked_status));
		}
		if (r.not_asked >= 0) {
			r.not_asked_slot = map_slot(r.not_asked, &off, &size);
			r.not_asked_placement = map_placement(r.not_asked);
			map_inline_status(r.not_asked, r.not_asked_status,
				   sizeof(r.not_asked_status));
		}
	}
	_exit(write(sock, &r, sizeof(r)) == sizeof(r) ? 0 : 1);
}

/* In the parent: delegate map creation on the child's bpffs context. */
static int delegate(int sock)
{
	int fs_fd = recv_fd(sock), mnt_fd;

	if (fs_fd < 0)
		return fs_fd;
	if (syscall(__NR_fsconfig, fs_fd, FSCONFIG_SET_STRING, "delegate_cmds",
		    "any", 0) ||
	    syscall(__NR_fsconfig, fs_fd, FSCONFIG_SET_STRING, "delegate_maps",
		    "any", 0) ||
	    syscall(__NR_fsconfig, fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		return -errno;
	mnt_fd = syscall(__NR_fsmount, fs_fd, 0, 0);
	if (mnt_fd < 0)
		return -errno;
	close(fs_fd);
	return send_fd(sock, mnt_fd);
}

FIXTURE(token) {
	struct token_result r;
};

static void run_child(struct __test_metadata *_metadata,
		      FIXTURE_DATA(token) *self)
{
	__u32 key_id, value_id;
	struct btf *btf;
	int sv[2], status;
	pid_t pid;

	/* Loaded here: BTF needs no token once its fd is passed on. */
	btf = sk_map_btf(VALUE_SIZE, &key_id, &value_id);
	ASSERT_NE(NULL, btf);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		child(sv[1], btf__fd(btf), key_id, value_id);
	}
	close(sv[1]);
	/* A child that could not enter a user namespace sends no bpffs. */
	if (delegate(sv[0]))
		shutdown(sv[0], SHUT_WR);
	ASSERT_EQ(sizeof(self->r), read(sv[0], &self->r, sizeof(self->r)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(sv[0]);
	btf__free(btf);
	if (self->r.token == -EINVAL)
		SKIP(return, "no user namespaces (CONFIG_USER_NS)");
	ASSERT_LE(0, self->r.token);
}

FIXTURE_SETUP(token)
{
}

FIXTURE_TEARDOWN(token)
{
}

/* Both maps are dynamic; the one that asked says it was not permitted. */
static void expect_dynamic(struct __test_metadata *_metadata,
			   const struct token_result *r)
{
	ASSERT_LE(0, r->asked);
	EXPECT_EQ(0, r->asked_slot);
	EXPECT_EQ(BPF_SK_STORAGE_NOT_PERMITTED, r->asked_placement);
	EXPECT_STREQ("not permitted", r->asked_status);
	ASSERT_LE(0, r->not_asked);
	EXPECT_EQ(0, r->not_asked_slot);
	EXPECT_EQ(BPF_SK_STORAGE_DYNAMIC, r->not_asked_placement);
	EXPECT_STREQ("not requested", r->not_asked_status);
}

TEST_F(token, a_token_holder_that_asks_gets_a_dynamic_map)
{
	run_child(_metadata, self);
	expect_dynamic(_metadata, &self->r);
}

/*
 * With room in the tail, and no switch of the host (the one that made
 * every map a candidate is gone), a token holder's maps are dynamic still.
 */
TEST_F(token, no_switch_of_the_host_gives_a_token_holder_a_slot)
{
	int err = access(OLD_ALL_MAPS_SYSCTL, F_OK) ? errno : 0;

	EXPECT_EQ(ENOENT, err) {
		TH_LOG("%s is back", OLD_ALL_MAPS_SYSCTL);
	}
	if (!tail_has_room(VALUE_SIZE))
		SKIP(return, "no room for a %d-byte value in the tail", VALUE_SIZE);
	run_child(_metadata, self);
	expect_dynamic(_metadata, &self->r);
}

/* EPERM at every tail: the creator's right comes before the tail's room. */
TEST_F(token, a_token_holder_that_requires_a_slot_is_refused_with_eperm)
{
	run_child(_metadata, self);
	EXPECT_EQ(-EPERM, self->r.required);
}

TEST_HARNESS_MAIN
