/* SPDX-License-Identifier: GPL-2.0 */
/* sk-many-maps: what the BPF side and the guest tool share. */
#ifndef SK_MANY_MAPS_H
#define SK_MANY_MAPS_H

/*
 * Maps of each kind: 64 slots of 16 bytes (a tag and a __u64) fill a
 * 1024-byte tail, the largest there is.
 */
#define MANY_MAPS	64

/* What the iterator writes per socket. */
struct many_record {
	__u64 ns;		/* its lookups took, all of them */
	__u64 missed;		/* values not found */
};

/* The counts of maps the programs look up (walk_in_M, walk_dy_M). */
#define MANY_COUNTS	1, 4, 8, 16, 17, 32, 64

#endif /* SK_MANY_MAPS_H */
