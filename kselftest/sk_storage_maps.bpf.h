/* SPDX-License-Identifier: GPL-2.0 */
/* sk storage map definitions shared by the BPF programs of the tests. */
#ifndef SK_STORAGE_MAPS_BPF_H
#define SK_STORAGE_MAPS_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/*
 * An sk storage map keyed by socket that asks for a slot in the inline
 * tail; @flags are map_flags beside BPF_F_NO_PREALLOC.
 */
#define SK_STORAGE_MAP_FLAGS(name, value_type, flags)			\
	struct {							\
		__uint(type, BPF_MAP_TYPE_SK_STORAGE);			\
		__uint(map_flags, BPF_F_NO_PREALLOC | (flags));		\
		__uint(map_extra, 1);	/* a slot in the inline tail */	\
		__type(key, int);					\
		__type(value, value_type);				\
	} name SEC(".maps")

#define SK_STORAGE_MAP(name, value_type)				\
	SK_STORAGE_MAP_FLAGS(name, value_type, 0)

#endif
