/* SPDX-License-Identifier: GPL-2.0 */
/* sk storage map definitions shared by the BPF programs of the tests. */
#ifndef SK_STORAGE_MAPS_BPF_H
#define SK_STORAGE_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/*
 * An sk storage map keyed by socket; @flags are map_flags beside
 * BPF_F_NO_PREALLOC, @extra its map_extra (1: a slot in the inline tail).
 */
#define SK_STORAGE_MAP_EXTRA(name, value_type, flags, extra)		\
	struct {							\
		__uint(type, BPF_MAP_TYPE_SK_STORAGE);			\
		__uint(map_flags, BPF_F_NO_PREALLOC | (flags));		\
		__uint(map_extra, extra);				\
		__type(key, int);					\
		__type(value, value_type);				\
	} name SEC(".maps")

/* One that asks for a slot in the inline tail. */
#define SK_STORAGE_MAP_FLAGS(name, value_type, flags)			\
	SK_STORAGE_MAP_EXTRA(name, value_type, flags, 1)

#define SK_STORAGE_MAP(name, value_type)				\
	SK_STORAGE_MAP_FLAGS(name, value_type, 0)

#endif
