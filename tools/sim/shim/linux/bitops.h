/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: bit counting */
#ifndef SIM_LINUX_BITOPS_H
#define SIM_LINUX_BITOPS_H

#include <linux/bits.h>
#include <linux/types.h>

static inline unsigned int hweight64(u64 w)
{
	return (unsigned int)__builtin_popcountll(w);
}

static inline unsigned int hweight32(u32 w)
{
	return (unsigned int)__builtin_popcount(w);
}

/* 1-based index of the most significant set bit, 0 for 0 */
static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}
#endif
