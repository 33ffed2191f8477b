/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: the kernel's integer types, for userspace */
#ifndef SIM_LINUX_TYPES_H
#define SIM_LINUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef u8 __u8;
typedef u16 __u16;
typedef u32 __u32;
typedef u64 __u64;
/* byte order is the code's business (get/put_unaligned_be*) */
typedef u16 __be16;
typedef u32 __be32;
typedef u64 __be64;
#endif
