/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: branch hints, attributes, READ_ONCE */
#ifndef SIM_LINUX_COMPILER_H
#define SIM_LINUX_COMPILER_H

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define __maybe_unused		__attribute__((__unused__))
#define __always_unused		__attribute__((__unused__))
#define __must_check		__attribute__((__warn_unused_result__))
#define __packed		__attribute__((__packed__))
#ifndef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#endif
#ifndef fallthrough
#define fallthrough		__attribute__((__fallthrough__))
#endif
#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#endif
