/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: ARRAY_SIZE, DIV_ROUND_UP, container_of */
#ifndef SIM_LINUX_KERNEL_H
#define SIM_LINUX_KERNEL_H

#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/stddef.h>
#include <linux/types.h>

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define DIV_ROUND_UP_ULL(n, d)	((unsigned long long)DIV_ROUND_UP((unsigned long long)(n), (d)))
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif
