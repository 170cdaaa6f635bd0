// SPDX-License-Identifier: GPL-2.0
/*
 * sk-bench: the measured sockets, spread over memory by filler sockets,
 * and their values in the maps the lookups read.
 */
#include <arpa/inet.h>

#include "sk-bench-user.h"

#ifndef SO_COOKIE
#define SO_COOKIE		57
#endif

#define LISTEN_PORT		10000
#define PORT_BASE		20000
#define PORTS_PER_ADDR		40000
#define UDP_NET			0x7f010001	/* 127.1.0.1 and up */
#define TCP_NET			0x7f020001	/* 127.2.0.1 and up */

static void set_addr(struct sockaddr_in *a, __u32 net, long slot)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(net + slot / PORTS_PER_ADDR);
	a->sin_port = htons(PORT_BASE + slot % PORTS_PER_ADDR);
}

static int udp_bound(long slot)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	set_addr(&a, UDP_NET, slot);
	if (fd < 0 || bind(fd, (void *)&a, sizeof(a)))
		die("UDP socket %ld: %s", slot, strerror(errno));
	return fd;
}

int listener(void)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons(LISTEN_PORT),
	};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (void *)&a, sizeof(a)) || listen(fd, 1024))
		die("TCP listener: %s", strerror(errno));
	return fd;
}

/* A connected pair over loopback; the client bound to @slot's address. */
void tcp_pair(int lfd, long slot, int *client, int *server)
{
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons(LISTEN_PORT),
	};
	struct sockaddr_in a;
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (c < 0)
		die("TCP socket: %s", strerror(errno));
	if (slot >= 0) {
		set_addr(&a, TCP_NET, slot);
		if (bind(c, (void *)&a, sizeof(a)))
			die("TCP bind %ld: %s", slot, strerror(errno));
	}
	if (connect(c, (void *)&dst, sizeof(dst)))
		die("TCP connect: %s", strerror(errno));
	*server = accept(lfd, NULL, NULL);
	if (*server < 0)
		die("TCP accept: %s", strerror(errno));
	*client = c;
}

/* Close without leaving a TCP socket in timewait. */
void close_now(int fd)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
	close(fd);
}

static void add_fillers(struct sockset *s, int type)
{
	int k = rnd() % (2 * cfg.spread + 1), fd;

	while (k--) {
		fd = socket(AF_INET, type, 0);
		if (fd < 0)
			die("filler socket: %s", strerror(errno));
		s->filler[s->n_filler++] = fd;
	}
}

/*
 * @n_udp bound UDP sockets and @n_tcp / 2 TCP pairs, interleaved with each
 * other and with filler sockets of the same protocol. Addresses (and so
 * the iterators' order) follow a random permutation, unrelated to the
 * order the sockets were allocated in.
 */
void sockets_open(struct sockset *s, long n_udp, long n_tcp)
{
	long pairs = n_tcp / 2, steps = n_udp > pairs ? n_udp : pairs, i;
	long *pu = permutation(n_udp), *pt = permutation(pairs ? pairs : 1);
	long max_fillers = (n_udp + 2 * pairs) * 2 * cfg.spread;

	memset(s, 0, sizeof(*s));
	raise_nofile(n_udp + 2 * pairs + max_fillers + 64);
	s->udp = calloc(n_udp + 1, sizeof(int));
	s->tcp = calloc(2 * pairs + 1, sizeof(int));
	s->filler = calloc(max_fillers + 1, sizeof(int));
	if (!s->udp || !s->tcp || !s->filler)
		die("out of memory");
	s->listener = listener();
	for (i = 0; i < steps; i++) {
		if (i < n_udp) {
			s->udp[s->n_udp++] = udp_bound(pu[i]);
			add_fillers(s, SOCK_DGRAM);
		}
		if (i < pairs) {
			tcp_pair(s->listener, pt[i], &s->tcp[s->n_tcp],
				 &s->tcp[s->n_tcp + 1]);
			s->n_tcp += 2;
			add_fillers(s, SOCK_STREAM);
			add_fillers(s, SOCK_STREAM);
		}
	}
	free(pu);
	free(pt);
}

void fillers_close(struct sockset *s)
{
	long i;

	for (i = 0; i < s->n_filler; i++)
		close(s->filler[i]);
	s->n_filler = 0;
}

void sockets_close(struct sockset *s)
{
	long i;

	fillers_close(s);
	for (i = 0; i < s->n_udp; i++)
		close(s->udp[i]);
	for (i = 0; i < s->n_tcp; i++)
		close_now(s->tcp[i]);
	close(s->listener);
	free(s->udp);
	free(s->tcp);
	free(s->filler);
}

/*
 * Values for every measured socket in the three maps, and for every filler
 * in the dynamic map, in a random order, so that the dynamic path's
 * storages and elements are spread over their slabs too; the fillers'
 * go away with them.
 */
void values_fill(struct sk_bench *skel, struct sockset *s)
{
	int inl = bpf_map__fd(skel->maps.inline_map);
	int dyn = bpf_map__fd(skel->maps.dyn_map);
	int hash = bpf_map__fd(skel->maps.cookie_map);
	long total = s->n_udp + s->n_tcp + s->n_filler, i, k;
	long *order = permutation(total);
	socklen_t len;
	__u64 cookie, v;
	int fd;

	for (i = 0; i < total; i++) {
		k = order[i];
		v = k + 1;
		if (k < s->n_udp)
			fd = s->udp[k];
		else if (k < s->n_udp + s->n_tcp)
			fd = s->tcp[k - s->n_udp];
		else
			fd = s->filler[k - s->n_udp - s->n_tcp];
		if (bpf_map_update_elem(dyn, &fd, &v, BPF_NOEXIST))
			die("dynamic value: %s", strerror(errno));
		if (k >= s->n_udp + s->n_tcp || cfg.dynref)
			continue;
		len = sizeof(cookie);
		if (bpf_map_update_elem(inl, &fd, &v, BPF_NOEXIST) ||
		    getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len) ||
		    bpf_map_update_elem(hash, &cookie, &v, BPF_NOEXIST))
			die("inline or hash value: %s", strerror(errno));
	}
	free(order);
}
