/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: time unit constants */
#ifndef SIM_LINUX_TIME64_H
#define SIM_LINUX_TIME64_H

#define MSEC_PER_SEC	1000L
#define USEC_PER_MSEC	1000L
#define USEC_PER_SEC	1000000L
#define NSEC_PER_USEC	1000L
#define NSEC_PER_MSEC	1000000L
#define NSEC_PER_SEC	1000000000L
#endif
