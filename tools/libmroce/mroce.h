/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libmroce - rdma-core (libibverbs) provider for the mroce soft RDMA device.
 *
 * Internal declarations shared by the provider's source files.  One source
 * file per object family:
 *
 *   mroce_provider.c  device matching, device and context life cycle,
 *                     query_device_ex / query_port, the context ops table
 *   mroce_pd.c        protection domains
 *
 * Not implemented yet (their verbs_context_ops members stay NULL, so
 * libibverbs fails those verbs with EOPNOTSUPP): CQ, QP with the rings
 * shared with the kernel through mmap, post_send / post_recv, poll_cq, MR,
 * AH.  When a family is added, give it its own mroce_<family>.c, declare its
 * ops below and fill them into mroce_ctx_ops in mroce_provider.c.
 */
#ifndef MROCE_H
#define MROCE_H

#include <stdint.h>

#include "mroce_verbs_provider.h"
#include <rdma/mroce-abi.h>	/* uapi/rdma/mroce-abi.h of this repository */

struct mroce_device {
	struct verbs_device vdev;
};

struct mroce_context {
	struct verbs_context vctx;
	uint32_t kernel_abi_version;	/* from mroce_alloc_ucontext_resp */
};

struct mroce_pd {
	struct ibv_pd ibv_pd;
};

/*
 * GET_CONTEXT response as the kernel writes it: the core part followed
 * directly by the driver part (alloc_ucontext's udata output).
 */
struct mroce_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct mroce_alloc_ucontext_resp drv;
};

_Static_assert(offsetof(struct mroce_get_context_resp, drv) ==
		       sizeof(struct ib_uverbs_get_context_resp),
	       "padding between core and driver GET_CONTEXT response");
_Static_assert(sizeof(struct mroce_get_context_resp) ==
		       sizeof(struct ib_uverbs_get_context_resp) +
			       sizeof(struct mroce_alloc_ucontext_resp),
	       "padding after driver GET_CONTEXT response");

static inline struct mroce_device *to_mdev(struct ibv_device *ibdev)
{
	return container_of(verbs_get_device(ibdev), struct mroce_device, vdev);
}

static inline struct mroce_context *to_mctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct mroce_context, vctx.context);
}

static inline struct mroce_pd *to_mpd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct mroce_pd, ibv_pd);
}

/* mroce_pd.c */
struct ibv_pd *mroce_alloc_pd(struct ibv_context *ibctx);
int mroce_dealloc_pd(struct ibv_pd *ibpd);

#endif /* MROCE_H */
