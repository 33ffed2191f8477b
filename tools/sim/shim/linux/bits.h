/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: BIT(), GENMASK() */
#ifndef SIM_LINUX_BITS_H
#define SIM_LINUX_BITS_H

#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))
#define GENMASK(h, l)		((~0UL << (l)) & (~0UL >> (63 - (h))))
#define GENMASK_ULL(h, l)	((~0ULL << (l)) & (~0ULL >> (63 - (h))))
#endif
