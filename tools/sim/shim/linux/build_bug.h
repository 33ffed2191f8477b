/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: static_assert with an optional message, BUILD_BUG_ON */
#ifndef SIM_LINUX_BUILD_BUG_H
#define SIM_LINUX_BUILD_BUG_H

#ifndef __cplusplus
#define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
#define __static_assert(expr, msg, ...) _Static_assert(expr, msg)
#endif
#define BUILD_BUG_ON(cond) ((void)sizeof(char[1 - 2 * !!(cond)]))
#endif
