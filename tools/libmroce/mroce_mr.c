// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: memory regions.  The kernel pins and translates; the provider
 * only keeps the verbs_mr libibverbs expects behind every ibv_mr.
 *
 * reg_mr serves ibv_reg_mr(), ibv_reg_mr_iova() and ibv_reg_mr_iova2():
 * libibverbs routes all of them to this op with hca_va (the iova; the
 * buffer address for plain ibv_reg_mr).  The access flags go to the kernel
 * as given, optional ones (IBV_ACCESS_RELAXED_ORDERING and the rest of
 * IBV_ACCESS_OPTIONAL_RANGE) included: libibverbs already drops those when
 * the kernel does not advertise IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS,
 * and the kernel driver ignores the ones it does not implement.
 *
 * rereg_mr (ibv_rereg_mr: new translation, access or PD) asks the kernel,
 * which registers the region anew: the MR gets new keys, and what used the
 * old ones fails from then on.
 *
 * reg_dmabuf_mr stays NULL: ibv_reg_dmabuf_mr() fails with EOPNOTSUPP.
 *
 * Memory windows (type 1 and type 2B): alloc_mw and dealloc_mw ask the
 * kernel; bind_mw (ibv_bind_mw(), type 1 only) posts a BIND_MW WQE with
 * the next key byte (ibv_inc_rkey()) and, once it is posted, gives the
 * window that rkey, as the verb says.  The bind itself runs in send queue
 * order; its failure is a completion with IBV_WC_MW_BIND_ERR.  Type 2
 * windows are bound with IBV_WR_BIND_MW / ibv_wr_bind_mw (mroce_qp.c,
 * mroce_qp_ex.c), where the consumer picks the rkey.
 */
#include <errno.h>
#include <stdlib.h>

#include "mroce.h"

struct ibv_mr *mroce_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct mroce_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, &mr->vmr,
			     &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}

	return &mr->vmr.ibv_mr;
}

int mroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		   void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp = {};
	struct ibv_rereg_mr cmd = {};

	if (ibv_cmd_rereg_mr(vmr, (uint32_t)flags, addr, length,
			     (uintptr_t)addr, access, pd, &cmd, sizeof(cmd),
			     &resp, sizeof(resp)))
		return IBV_REREG_MR_ERR_CMD;
	return 0;
}

int mroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(to_mmr(vmr));
	return 0;
}

struct ibv_mw *mroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	mw->type = type;
	return mw;
}

int mroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (ret)
		return ret;
	free(mw);
	return 0;
}

int mroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind)
{
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = rkey,
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1 || mw->context != qp->context)
		return EINVAL;
	ret = mroce_post_send_wrs(qp, &wr, &bad, true);
	if (!ret)
		mw->rkey = rkey;
	return ret;
}
