/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce-sim shim: Kconfig tests.  The kernel build force-includes its
 * kconfig.h in every file; the simulator's Makefile does the same with
 * this one.  Userspace has no Kconfig: every option is off (the KUnit
 * suites the pure files include under CONFIG_RDMA_MROCE_KUNIT_TEST stay
 * out of the library).
 */
#ifndef SIM_LINUX_KCONFIG_H
#define SIM_LINUX_KCONFIG_H

#define IS_ENABLED(option)	0
#define IS_BUILTIN(option)	0
#define IS_MODULE(option)	0

#endif
