/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: errno values */
#ifndef SIM_LINUX_ERRNO_H
#define SIM_LINUX_ERRNO_H

/* the uAPI header glibc uses too: every E* value */
#include_next <linux/errno.h>
#endif
