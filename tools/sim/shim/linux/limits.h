/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: U*_MAX, S*_MAX */
#ifndef SIM_LINUX_LIMITS_H
#define SIM_LINUX_LIMITS_H

/* glibc's <limits.h> reaches the uAPI header too: keep its values */
#include_next <linux/limits.h>
#include <linux/types.h>

#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)
#define S32_MAX		((s32)(U32_MAX >> 1))
#define S64_MAX		((s64)(U64_MAX >> 1))
#define S64_MIN		(-S64_MAX - 1)
#endif
