/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce_compat.h - every difference between the kernels mroce builds
 * against (Debian bookworm's 6.1 and 6.12 LTS), in one place.
 *
 * Each shim is keyed on LINUX_VERSION_CODE and names the upstream commit
 * that made it necessary, so it can go when the oldest kernel supported
 * has that commit.  The rest of the driver is written against the newest
 * API and calls the mroce_compat_*() names below where the two differ.
 *
 * Two parts:
 *   - the first is plain kernel C without ib_core: the pure protocol code
 *     (mroce_wire.h, ...) includes this header, and tools/lint.sh checks
 *     that it pulls in no rdma or net header;
 *   - the second is for the ib_core glue only: mroce.h includes this
 *     header again at its end, after its own prototypes and
 *     <rdma/uverbs_ioctl.h>, with MROCE_COMPAT_IB defined.
 */
#ifndef MROCE_COMPAT_H
#define MROCE_COMPAT_H

#include <linux/version.h>

/*
 * get/put_unaligned_be*(): commit 5f60d5f6bbc1 ("move asm/unaligned.h to
 * linux/unaligned.h", v6.12-rc2) moved the header; 6.1 has no
 * <linux/unaligned.h>, 6.12 no <asm/unaligned.h>.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#endif /* MROCE_COMPAT_H */

#if defined(MROCE_COMPAT_IB) && !defined(MROCE_COMPAT_IB_H)
#define MROCE_COMPAT_IB_H

/*
 * ib_device_ops.create_cq: commit dd6d7f8574d7 ("RDMA: Pass entire uverbs
 * attr bundle to create cq function", v6.11) passes the whole
 * struct uverbs_attr_bundle instead of its driver_udata; NULL for a
 * kernel CQ (ib_create_cq()) as udata was.  mroce_create_cq() keeps the
 * udata form; mroce_dev_ops points at mroce_compat_create_cq.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static inline int mroce_compat_create_cq(struct ib_cq *ibcq,
					 const struct ib_cq_init_attr *attr,
					 struct uverbs_attr_bundle *attrs)
{
	return mroce_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
#define mroce_compat_create_cq mroce_create_cq
#endif

#endif /* MROCE_COMPAT_IB */
