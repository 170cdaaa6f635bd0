/* SPDX-License-Identifier: GPL-2.0 */
/* Which path the tests' default and dynamic maps are on, as this boot gives them. */
#ifndef SK_EXPECT_PATHS_H
#define SK_EXPECT_PATHS_H

#include "../kselftest_harness.h"
#include "sk_storage_util.h"


/*
 * The maps are on the path this boot gives them: the default one inline
 * when the tail has room for its slot, dynamic without a tail; the other,
 * created after it with the tail full, always dynamic.
 */
static inline void expect_paths(struct __test_metadata *_metadata, int map_inline,
			 int map_dyn)
{
	unsigned int tail = tail_bytes(), off, size;

	if (tail >= slot_size(sizeof(struct val16))) {
		EXPECT_EQ(1, map_slot(map_inline, &off, &size));
	} else if (!tail) {
		EXPECT_EQ(0, map_slot(map_inline, &off, &size));
	}
	EXPECT_EQ(0, map_slot(map_dyn, &off, &size));
}

#endif
