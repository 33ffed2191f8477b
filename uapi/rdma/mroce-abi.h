/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * Kernel <-> rdma-core provider ABI of the mroce (MetaRoCE) soft RDMA driver.
 *
 * This header is shared verbatim by the kernel module and the userspace
 * provider (libmroce-rdmav34.so); keep it free of kernel-only types.
 */
#ifndef MROCE_ABI_USER_H
#define MROCE_ABI_USER_H

#include <linux/types.h>

/*
 * Private driver id carried in every uverbs ioctl and reported over
 * netlink so libibverbs can match our provider.  enum rdma_driver_id ends
 * at RDMA_DRIVER_ERDMA (19) in Linux 6.1; we stay far above it and never
 * use 0 (matches any provider) or RDMA_DRIVER_RXE (rxe would claim us).
 */
#define MROCE_DRIVER_ID			0x4d52	/* "MR" */

/* Bumped on any incompatible change of the structures below. */
#define MROCE_UVERBS_ABI_VERSION	1

/* Response to ibv_get_context(): what the provider may rely on. */
struct mroce_alloc_ucontext_resp {
	__u32 abi_version;	/* MROCE_UVERBS_ABI_VERSION */
	__u32 reserved;		/* must be zero */
};

#endif /* MROCE_ABI_USER_H */
