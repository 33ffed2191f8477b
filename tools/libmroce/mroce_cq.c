// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: completion queues.
 *
 * The kernel writes struct mroce_cqe into the CQ ring and publishes them by
 * store-releasing prod; poll_cq consumes them without a system call.
 * req_notify_cq is the generic write() command (ibv_cmd_req_notify_cq),
 * the kernel arms the CQ.  resize_cq moves the CQ to a new ring: the
 * kernel copies the unpolled CQEs over, the provider maps the new ring and
 * unmaps the old one with the CQ lock held so no poller sees either half.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mroce.h"

/*
 * The kernel writes ib_wc_status / ib_wc_opcode values, which are the
 * libibverbs numbers (enum ibv_wc_status / ibv_wc_opcode): CQEs map 1:1.
 * Pin the values a CQE can carry.
 */
_Static_assert(IBV_WC_SUCCESS == 0 && IBV_WC_LOC_LEN_ERR == 1 &&
	       IBV_WC_LOC_QP_OP_ERR == 2 && IBV_WC_LOC_PROT_ERR == 4 &&
	       IBV_WC_WR_FLUSH_ERR == 5 && IBV_WC_REM_ACCESS_ERR == 10 &&
	       IBV_WC_RETRY_EXC_ERR == 12 && IBV_WC_RNR_RETRY_EXC_ERR == 13 &&
	       IBV_WC_GENERAL_ERR == 21,
	       "enum ibv_wc_status is the kernel's enum ib_wc_status");
_Static_assert((int)IBV_WC_SEND == (int)IB_UVERBS_WC_SEND &&
	       (int)IBV_WC_RDMA_WRITE == (int)IB_UVERBS_WC_RDMA_WRITE &&
	       (int)IBV_WC_RDMA_READ == (int)IB_UVERBS_WC_RDMA_READ &&
	       (int)IBV_WC_COMP_SWAP == (int)IB_UVERBS_WC_COMP_SWAP &&
	       (int)IBV_WC_FETCH_ADD == (int)IB_UVERBS_WC_FETCH_ADD,
	       "send completion opcodes are enum ib_uverbs_wc_opcode");
/* each CQE flag is a bit of its own: a UD IPv6 receive is no WITH_INV */
_Static_assert(__builtin_popcount(MROCE_CQE_WITH_IMM | MROCE_CQE_GRH |
				  MROCE_CQE_NET_IPV6 | MROCE_CQE_WITH_INV) == 4,
	       "CQE flags overlap");
_Static_assert(IBV_WC_RECV == 128 && IBV_WC_RECV_RDMA_WITH_IMM == 129,
	       "receive completion opcodes are IB_WC_RECV(_RDMA_WITH_IMM)");

void mroce_cqe_to_wc(const struct mroce_cqe *cqe, struct ibv_wc *wc)
{
	bool imm = cqe->flags & MROCE_CQE_WITH_IMM;
	bool inv = cqe->flags & MROCE_CQE_WITH_INV;

	*wc = (struct ibv_wc){
		.wr_id = cqe->wr_id,
		/* Same numbering on both sides, see the asserts above. */
		.status = (enum ibv_wc_status)cqe->status,
		.opcode = (enum ibv_wc_opcode)cqe->opcode,
		.vendor_err = cqe->vendor_err,
		.byte_len = cqe->byte_len,
		/* Network byte order in the CQE and in ibv_wc alike. */
		.imm_data = imm ? cqe->imm_data : 0,
		.qp_num = cqe->qp_num,
		.src_qp = cqe->src_qp,
		.wc_flags = imm ? IBV_WC_WITH_IMM : 0,
	};
	if (inv) {
		wc->invalidated_rkey = cqe->imm_data;	/* host order */
		wc->wc_flags |= IBV_WC_WITH_INV;
	}
	/* UD: a 40-byte GRH, built from the IP header, precedes the data */
	if (cqe->flags & MROCE_CQE_GRH)
		wc->wc_flags |= IBV_WC_GRH;
}

/*
 * Consume up to ne CQEs.  The caller holds the CQ lock (or owns the ring).
 * Returns how many were consumed, or -EIO when the kernel's prod is not
 * within num_slots of cons (the ring is corrupt; nothing is consumed).
 */
int mroce_cq_poll_ring(struct mroce_ring *ring, int ne, struct ibv_wc *wc)
{
	struct mroce_ring_hdr *hdr = ring->hdr;
	uint32_t cons, prod, avail, n;
	struct mroce_cqe cqe;

	if (ne <= 0)
		return 0;

	cons = mroce_load_relaxed(&hdr->cons);
	prod = mroce_load_acquire(&hdr->prod);
	avail = prod - cons;
	if (avail > ring->num_slots)
		return -EIO;
	if (avail > (uint32_t)ne)
		avail = ne;

	for (n = 0; n < avail; n++) {
		/* One copy of the slot, then convert. */
		memcpy(&cqe, mroce_ring_slot(ring, cons + n), sizeof(cqe));
		mroce_cqe_to_wc(&cqe, &wc[n]);
	}
	if (n)
		mroce_store_release(&hdr->cons, cons + n);

	return n;
}

int mroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	int ret;

	pthread_spin_lock(&cq->lock);
	/* No ring: a resize_cq failed to map the new one. */
	ret = cq->ring.map ? mroce_cq_poll_ring(&cq->ring, ne, wc) : -EIO;
	pthread_spin_unlock(&cq->lock);

	return ret;
}

/* A ring must hold every CQE the kernel said the CQ has room for. */
static int mroce_cq_check_ring(const struct mroce_ring_info *info, int cqe)
{
	int ret;

	ret = mroce_ring_check(info, sizeof(struct mroce_cqe), "CQ");
	if (ret)
		return ret;
	if (cqe < 0 || info->num_slots < (uint32_t)cqe) {
		mroce_abi_err("kernel CQ ring: %u slots for a CQ of %d entries",
			      info->num_slots, cqe);
		return EPROTO;
	}
	return 0;
}

struct ibv_cq *mroce_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct mroce_create_cq_full_resp resp = {};
	struct ibv_create_cq cmd = {};
	struct mroce_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->ibv_cq,
				&cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_free;

	ret = mroce_cq_check_ring(&resp.drv.cq, cq->ibv_cq.cqe);
	if (!ret)
		ret = mroce_ring_map(&cq->ring, ibctx->cmd_fd, &resp.drv.cq,
				     sizeof(struct mroce_cqe), "CQ");
	if (ret)
		goto err_destroy;

	ret = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_unmap;

	return &cq->ibv_cq;

err_unmap:
	mroce_ring_unmap(&cq->ring);
err_destroy:
	ibv_cmd_destroy_cq(&cq->ibv_cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

int mroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	mroce_ring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

int mroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	struct mroce_resize_cq_full_resp resp = {};
	struct ibv_resize_cq cmd = {};
	struct mroce_ring new_ring = {};
	int ret;

	pthread_spin_lock(&cq->lock);

	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto out;

	/*
	 * The kernel has switched to the new ring.  Whatever happens below,
	 * the old one is dead; without a new one poll_cq reports an error.
	 */
	ret = mroce_cq_check_ring(&resp.drv.cq, ibcq->cqe);
	if (!ret)
		ret = mroce_ring_map(&new_ring, ibcq->context->cmd_fd,
				     &resp.drv.cq, sizeof(struct mroce_cqe),
				     "CQ");
	mroce_ring_unmap(&cq->ring);
	cq->ring = new_ring;
out:
	pthread_spin_unlock(&cq->lock);
	return ret;
}
