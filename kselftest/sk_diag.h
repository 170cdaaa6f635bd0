/* SPDX-License-Identifier: GPL-2.0 */
/* sock_diag's INET_DIAG_REQ_SK_BPF_STORAGES over raw netlink. */
#ifndef SK_DIAG_H
#define SK_DIAG_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/stat.h>

#define DIAG_MAX_VALUES		8
#define DIAG_MAX_VALUE_SIZE	64

struct diag_value {
	__u32 map_id;
	__u32 len;
	__u8 data[DIAG_MAX_VALUE_SIZE];
};

/* What a dump said about one socket. */
struct diag_result {
	bool found;		/* the socket was in the dump */
	bool has_storages;	/* it had INET_DIAG_SK_BPF_STORAGES */
	int nr;
	struct diag_value v[DIAG_MAX_VALUES];
};

static inline struct rtattr *add_attr(char *buf, size_t *len, unsigned short type,
			       const void *data, unsigned short size)
{
	struct rtattr *rta = (struct rtattr *)(buf + NLMSG_ALIGN(*len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(size);
	if (size)
		memcpy(RTA_DATA(rta), data, size);
	*len = NLMSG_ALIGN(*len) + RTA_ALIGN(rta->rta_len);
	return rta;
}

static inline int parse_storages(struct rtattr *stgs, struct diag_result *res)
{
	int rem = RTA_PAYLOAD(stgs), rem2;
	struct rtattr *stg, *a;
	struct diag_value *v;

	res->has_storages = true;
	for (stg = RTA_DATA(stgs); RTA_OK(stg, rem); stg = RTA_NEXT(stg, rem)) {
		if ((stg->rta_type & NLA_TYPE_MASK) != SK_DIAG_BPF_STORAGE)
			return -EPROTO;
		if (res->nr == DIAG_MAX_VALUES)
			return -E2BIG;
		v = &res->v[res->nr++];
		memset(v, 0, sizeof(*v));
		rem2 = RTA_PAYLOAD(stg);
		for (a = RTA_DATA(stg); RTA_OK(a, rem2); a = RTA_NEXT(a, rem2)) {
			switch (a->rta_type & NLA_TYPE_MASK) {
			case SK_DIAG_BPF_STORAGE_MAP_ID:
				memcpy(&v->map_id, RTA_DATA(a), sizeof(__u32));
				break;
			case SK_DIAG_BPF_STORAGE_MAP_VALUE:
				v->len = RTA_PAYLOAD(a);
				if (v->len > DIAG_MAX_VALUE_SIZE)
					return -E2BIG;
				memcpy(v->data, RTA_DATA(a), v->len);
				break;
			}
		}
		/* A map being freed is reported with id 0 until it goes. */
		if (!v->len)
			return -EPROTO;
	}
	return 0;
}

/*
 * Dump the sockets of @family/@protocol with INET_DIAG_REQ_SK_BPF_STORAGES
 * naming @map_fds (all maps when @nr_maps is 0) and report what the dump
 * said about the socket with inode @ino. 0 or -errno.
 */
static inline int diag_storages(int family, int protocol, ino_t ino,
			 const int *map_fds, int nr_maps,
			 struct diag_result *res)
{
	static char buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct inet_diag_req_v2 *req;
	struct rtattr *nest;
	struct nlmsghdr *nlh;
	int nl, i, err = 0;
	bool done = false;
	size_t len;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;

	memset(buf, 0, 4096);
	nlh = (struct nlmsghdr *)buf;
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = 1;
	req = NLMSG_DATA(nlh);
	req->sdiag_family = family;
	req->sdiag_protocol = protocol;
	req->idiag_states = ~0U;
	len = NLMSG_LENGTH(sizeof(*req));
	nest = add_attr(buf, &len, INET_DIAG_REQ_SK_BPF_STORAGES | NLA_F_NESTED,
			NULL, 0);
	for (i = 0; i < nr_maps; i++) {
		__u32 fd = map_fds[i];

		add_attr(buf, &len, SK_DIAG_BPF_STORAGE_REQ_MAP_FD, &fd,
			 sizeof(fd));
	}
	nest->rta_len = buf + len - (char *)nest;
	nlh->nlmsg_len = len;

	if (sendto(nl, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto out;
	}
	while (!done) {
		n = recv(nl, buf, sizeof(buf), 0);
		if (n < 0) {
			err = -errno;
			goto out;
		}
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, n);
		     nlh = NLMSG_NEXT(nlh, n)) {
			struct inet_diag_msg *m = NLMSG_DATA(nlh);
			struct rtattr *a;
			int rem;

			if (nlh->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				err = ((struct nlmsgerr *)NLMSG_DATA(nlh))->error;
				goto out;
			}
			if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    m->idiag_inode != ino)
				continue;
			if (res->found) {
				err = -EEXIST;
				goto out;
			}
			res->found = true;
			rem = nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
			for (a = (struct rtattr *)(m + 1); RTA_OK(a, rem);
			     a = RTA_NEXT(a, rem)) {
				if ((a->rta_type & NLA_TYPE_MASK) !=
				    INET_DIAG_SK_BPF_STORAGES)
					continue;
				err = parse_storages(a, res);
				if (err)
					goto out;
			}
		}
	}
out:
	close(nl);
	return err;
}

/* The value the dump reported for map @id, or NULL. */
static inline const struct diag_value *diag_find(const struct diag_result *res,
					  __u32 id)
{
	int i;

	for (i = 0; i < res->nr; i++)
		if (res->v[i].map_id == id)
			return &res->v[i];
	return NULL;
}

static inline ino_t sock_ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* Bound to loopback (and listening, for TCP): in the family's dump. */
static inline int diag_socket(int family, int type)
{
	struct sockaddr_in6 a6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_LOOPBACK_INIT,
	};
	struct sockaddr_in a4 = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct sockaddr *sa = family == AF_INET6 ? (struct sockaddr *)&a6 :
						    (struct sockaddr *)&a4;
	socklen_t len = family == AF_INET6 ? sizeof(a6) : sizeof(a4);
	int fd = socket(family, type, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, sa, len) || (type == SOCK_STREAM && listen(fd, 4))) {
		close(fd);
		return -errno;
	}
	return fd;
}

#endif
