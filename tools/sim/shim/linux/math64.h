/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: 64-bit division helpers */
#ifndef SIM_LINUX_MATH64_H
#define SIM_LINUX_MATH64_H

#include <linux/types.h>

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *rem)
{
	*rem = (u32)(dividend % divisor);
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

/* (a * mul) >> shift without overflowing 64 bits */
static inline u64 mul_u64_u32_shr(u64 a, u32 mul, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * mul) >> shift);
}

/* a * mul / divisor, the product kept in 96 bits */
static inline u64 mul_u64_u32_div(u64 a, u32 mul, u32 divisor)
{
	return (u64)(((unsigned __int128)a * mul) / divisor);
}

static inline s64 div_s64(s64 dividend, s32 divisor)
{
	return dividend / divisor;
}
#endif
