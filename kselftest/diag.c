// SPDX-License-Identifier: GPL-2.0
/*
 * sock_diag's INET_DIAG_REQ_SK_BPF_STORAGES over TCP and UDP, IPv4 and
 * IPv6: named maps and the dump of every map report inline values as
 * dynamic ones, never a freed map's under the map that reuses its slot.
 *
 * Every test runs in every boot: without a tail all maps are dynamic,
 * with one the maps that fit are inline.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include "../kselftest_harness.h"
#include "sk_storage_util.h"
#include "sk_diag.h"
#include "expect_paths.h"

FIXTURE(diag)
{
	int fd;
	ino_t ino;
	int map_inline, map_dyn;
};

/*
 * inet_diag puts sk storage only in the replies for connection sockets:
 * UDP sockets get none, inline or dynamic alike, as before inline storage.
 */
FIXTURE_VARIANT(diag)
{
	int family;
	int type;
	int protocol;
	bool reports;
};

#define DIAG_VARIANT(name, fam, ty, proto, rep)				\
	FIXTURE_VARIANT_ADD(diag, name)					\
	{								\
		.family = fam, .type = ty, .protocol = proto,		\
		.reports = rep,						\
	}

DIAG_VARIANT(tcp4, AF_INET, SOCK_STREAM, IPPROTO_TCP, true);
DIAG_VARIANT(tcp6, AF_INET6, SOCK_STREAM, IPPROTO_TCP, true);
DIAG_VARIANT(udp4, AF_INET, SOCK_DGRAM, IPPROTO_UDP, false);
DIAG_VARIANT(udp6, AF_INET6, SOCK_DGRAM, IPPROTO_UDP, false);

FIXTURE_SETUP(diag)
{
	struct sk_fillers f;

	self->map_inline = create_sk_map(sizeof(struct val16), 0);
	ASSERT_LE(0, self->map_inline);
	self->map_dyn = create_dynamic_sk_map(sizeof(struct val16), &f);
	ASSERT_LE(0, self->map_dyn);
	ASSERT_EQ(0, release_fillers(&f));
	self->fd = diag_socket(variant->family, variant->type);
	ASSERT_LE(0, self->fd);
	self->ino = sock_ino(self->fd);
	ASSERT_NE(0, self->ino);
}

FIXTURE_TEARDOWN(diag)
{
	close(self->fd);
	/* Map free is deferred: let the next test start with an empty tail. */
	EXPECT_EQ(0, free_map(self->map_inline));
	EXPECT_EQ(0, free_map(self->map_dyn));
}

static int diag_named(FIXTURE_DATA(diag) *self,
		      const FIXTURE_VARIANT(diag) *variant,
		      struct diag_result *res)
{
	int maps[] = { self->map_inline, self->map_dyn };

	return diag_storages(variant->family, variant->protocol, self->ino,
			     maps, 2, res);
}

static int diag_all(FIXTURE_DATA(diag) *self,
		    const FIXTURE_VARIANT(diag) *variant,
		    struct diag_result *res)
{
	return diag_storages(variant->family, variant->protocol, self->ino,
			     NULL, 0, res);
}

/*
 * The dump found the socket and reported @nr values for it, or, for a
 * protocol whose replies carry no sk storage, none at all.
 */
static void expect_nr(struct __test_metadata *_metadata,
		      const FIXTURE_VARIANT(diag) *variant,
		      const struct diag_result *res, int nr)
{
	ASSERT_TRUE(res->found);
	if (!variant->reports) {
		EXPECT_FALSE(res->has_storages);
		return;
	}
	EXPECT_EQ(nr > 0, res->has_storages);
	EXPECT_EQ(nr, res->nr);
}

/* The dump reported @want for the map, where the protocol reports any. */
static void expect_value(struct __test_metadata *_metadata,
			 const FIXTURE_VARIANT(diag) *variant,
			 const struct diag_result *res, int map_fd,
			 const struct val16 *want)
{
	const struct diag_value *v = diag_find(res, map_id(map_fd));

	if (!variant->reports) {
		EXPECT_EQ(NULL, v);
		return;
	}
	ASSERT_NE(NULL, v);
	ASSERT_EQ(sizeof(*want), v->len);
	EXPECT_EQ(0, memcmp(want, v->data, sizeof(*want)));
}

typedef int (*diag_fn)(FIXTURE_DATA(diag) *self,
		       const FIXTURE_VARIANT(diag) *variant,
		       struct diag_result *res);

/*
 * Give the socket @vi in the inline map and, unless NULL, @vd in the
 * dynamic one: @dump reports each value, and no other.
 */
static void expect_reported(struct __test_metadata *_metadata,
			    FIXTURE_DATA(diag) *self,
			    const FIXTURE_VARIANT(diag) *variant, diag_fn dump,
			    const struct val16 *vi, const struct val16 *vd)
{
	struct diag_result res;

	expect_paths(_metadata, self->map_inline, self->map_dyn);
	ASSERT_EQ(0, sys_update(self->map_inline, self->fd, vi, BPF_NOEXIST));
	if (vd)
		ASSERT_EQ(0, sys_update(self->map_dyn, self->fd, vd, BPF_NOEXIST));
	ASSERT_EQ(0, dump(self, variant, &res));
	expect_nr(_metadata, variant, &res, vd ? 2 : 1);
	expect_value(_metadata, variant, &res, self->map_inline, vi);
	if (vd)
		expect_value(_metadata, variant, &res, self->map_dyn, vd);
}

TEST_F(diag, named_maps_report_the_inline_and_the_dynamic_value)
{
	struct val16 vi = { 0x1111222233334444ULL, 1 }, vd = { 0x5555, 2 };

	expect_reported(_metadata, self, variant, diag_named, &vi, &vd);
}

TEST_F(diag, named_maps_report_the_value_as_it_is_now)
{
	struct val16 v = { 1, 1 };
	struct diag_result res;

	ASSERT_EQ(0, sys_update(self->map_inline, self->fd, &v, BPF_NOEXIST));
	v.b = 0xabcdef;
	ASSERT_EQ(0, sys_update(self->map_inline, self->fd, &v, BPF_EXIST));
	ASSERT_EQ(0, diag_named(self, variant, &res));
	expect_nr(_metadata, variant, &res, 1);
	expect_value(_metadata, variant, &res, self->map_inline, &v);
}

TEST_F(diag, all_maps_dump_reports_the_inline_and_the_dynamic_value)
{
	struct val16 vi = { 0x0123456789abcdefULL, 3 }, vd = { 0x6666, 4 };

	expect_reported(_metadata, self, variant, diag_all, &vi, &vd);
}

/* Inline when there is a tail: no dynamic storage at all then. */
TEST_F(diag, all_maps_dump_reports_a_socket_whose_only_value_is_in_the_default_map)
{
	struct val16 vi = { 77, 78 };

	expect_reported(_metadata, self, variant, diag_all, &vi, NULL);
}

TEST_F(diag, deleted_value_is_reported_by_neither_request)
{
	struct val16 vi = { 9, 10 }, vd = { 11, 12 };
	struct diag_result res;

	ASSERT_EQ(0, sys_update(self->map_inline, self->fd, &vi, BPF_NOEXIST));
	ASSERT_EQ(0, sys_update(self->map_dyn, self->fd, &vd, BPF_NOEXIST));
	ASSERT_EQ(0, sys_delete(self->map_inline, self->fd));

	ASSERT_EQ(0, diag_named(self, variant, &res));
	expect_nr(_metadata, variant, &res, 1);
	EXPECT_EQ(NULL, diag_find(&res, map_id(self->map_inline)));
	expect_value(_metadata, variant, &res, self->map_dyn, &vd);

	ASSERT_EQ(0, diag_all(self, variant, &res));
	expect_nr(_metadata, variant, &res, 1);
	EXPECT_EQ(NULL, diag_find(&res, map_id(self->map_inline)));
	expect_value(_metadata, variant, &res, self->map_dyn, &vd);

	/* Without any value left, no storage attribute at all. */
	ASSERT_EQ(0, sys_delete(self->map_dyn, self->fd));
	ASSERT_EQ(0, diag_all(self, variant, &res));
	expect_nr(_metadata, variant, &res, 0);
	ASSERT_EQ(0, diag_named(self, variant, &res));
	expect_nr(_metadata, variant, &res, 0);
}

TEST_F(diag, socket_without_values_reports_none_while_another_socket_has_some)
{
	struct val16 v = { 13, 14 };
	struct diag_result res;
	int other;

	other = diag_socket(variant->family, variant->type);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, sys_update(self->map_inline, other, &v, BPF_NOEXIST));
	ASSERT_EQ(0, sys_update(self->map_dyn, other, &v, BPF_NOEXIST));
	ASSERT_EQ(0, diag_named(self, variant, &res));
	expect_nr(_metadata, variant, &res, 0);
	ASSERT_EQ(0, diag_all(self, variant, &res));
	expect_nr(_metadata, variant, &res, 0);
	/* The other socket's values are reported for it. */
	ASSERT_EQ(0, diag_storages(variant->family, variant->protocol,
				   sock_ino(other), NULL, 0, &res));
	expect_nr(_metadata, variant, &res, 2);
	expect_value(_metadata, variant, &res, self->map_inline, &v);
	expect_value(_metadata, variant, &res, self->map_dyn, &v);
	close(other);
}

/* Wait until the dump reports no value for the socket; 0 or -errno. */
static int wait_no_storages(FIXTURE_DATA(diag) *self,
			    const FIXTURE_VARIANT(diag) *variant)
{
	struct diag_result res;
	int i, err;

	for (i = 0; i < 2000; i++) {
		err = diag_all(self, variant, &res);
		if (err)
			return err;
		if (!res.has_storages)
			return 0;
		usleep(5000);
	}
	return -ETIMEDOUT;
}

TEST_F(diag, value_of_a_freed_map_is_not_reported_under_the_map_that_reuses_its_slot)
{
	struct val16 v = { 0xdead, 0xbeef };
	unsigned int off_old = 0, off_new = 0, size;
	int was_inline, successor;
	struct diag_result res;
	__u32 old_id;

	was_inline = map_slot(self->map_inline, &off_old, &size) == 1;
	old_id = map_id(self->map_inline);
	ASSERT_EQ(0, sys_update(self->map_inline, self->fd, &v, BPF_NOEXIST));
	ASSERT_EQ(0, free_map(self->map_inline));
	/*
	 * Map free is deferred: until it ran, the freed map's value may be
	 * reported with id 0. An inline map's ran when its slot was released
	 * (free_map() waited for it); a dynamic one's is waited for here.
	 */
	ASSERT_EQ(0, wait_no_storages(self, variant));
	/* Same size: first fit gives it the freed slot, in every socket. */
	successor = create_sk_map(sizeof(struct val16), 0);
	self->map_inline = successor;
	ASSERT_LE(0, successor);
	if (was_inline) {
		ASSERT_EQ(1, map_slot(successor, &off_new, &size));
		EXPECT_EQ(off_old, off_new);
	}
	ASSERT_EQ(0, diag_all(self, variant, &res));
	expect_nr(_metadata, variant, &res, 0);
	EXPECT_EQ(NULL, diag_find(&res, old_id));
	EXPECT_EQ(NULL, diag_find(&res, map_id(successor)));
	ASSERT_EQ(0, diag_named(self, variant, &res));
	expect_nr(_metadata, variant, &res, 0);
}

TEST_HARNESS_MAIN
