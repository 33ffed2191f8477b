// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: extended completion queues (ibv_create_cq_ex, then
 * ibv_start_poll / ibv_next_poll / ibv_end_poll and the ibv_wc_read_*
 * accessors).
 *
 * The same kernel CQ and ring as ibv_create_cq: only the way the process
 * reads it differs.  start_poll takes the CQ lock and the first CQE (or
 * returns ENOENT and keeps no lock), next_poll the next one, end_poll
 * drops the lock.  Each CQE is consumed as it is taken (cons moves on),
 * converted once into cq->cur, which the accessors read.
 *
 * The attributes a consumer can ask for (wc_flags) are the standard ones;
 * a completion timestamp, a VLAN, a flow tag or tag matching are refused
 * with EOPNOTSUPP, as is IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "mroce.h"

#define MROCE_CQ_EX_WC_FLAGS	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
				 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
				 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
				 IBV_WC_EX_WITH_DLID_PATH_BITS)

static inline struct mroce_cq *cq_of(struct ibv_cq_ex *cq_ex)
{
	return container_of(cq_ex, struct mroce_cq, cq_ex);
}

/*
 * Take one CQE off @ring into @wc.  Returns 0, ENOENT (none), or EIO
 * (the kernel's prod is not within num_slots of cons).  The caller holds
 * the CQ lock.
 */
int mroce_cq_take(struct mroce_ring *ring, struct ibv_wc *wc)
{
	int n = ring->map ? mroce_cq_poll_ring(ring, 1, wc) : -EIO;

	if (n < 0)
		return EIO;
	return n ? 0 : ENOENT;
}

static int mroce_start_poll(struct ibv_cq_ex *cq_ex,
			    struct ibv_poll_cq_attr *attr)
{
	struct mroce_cq *cq = cq_of(cq_ex);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	ret = mroce_cq_take(&cq->ring, &cq->cur);
	if (ret) {
		/* the consumer calls no end_poll after a failed start */
		pthread_spin_unlock(&cq->lock);
		return ret;
	}
	cq_ex->status = cq->cur.status;
	cq_ex->wr_id = cq->cur.wr_id;
	return 0;
}

static int mroce_next_poll(struct ibv_cq_ex *cq_ex)
{
	struct mroce_cq *cq = cq_of(cq_ex);
	int ret;

	ret = mroce_cq_take(&cq->ring, &cq->cur);
	if (ret)
		return ret;
	cq_ex->status = cq->cur.status;
	cq_ex->wr_id = cq->cur.wr_id;
	return 0;
}

static void mroce_end_poll(struct ibv_cq_ex *cq_ex)
{
	pthread_spin_unlock(&cq_of(cq_ex)->lock);
}

static enum ibv_wc_opcode mroce_read_opcode(struct ibv_cq_ex *cq_ex)
{
	return cq_of(cq_ex)->cur.opcode;
}

static uint32_t mroce_read_vendor_err(struct ibv_cq_ex *cq_ex)
{
	return cq_of(cq_ex)->cur.vendor_err;
}

static uint32_t mroce_read_byte_len(struct ibv_cq_ex *cq_ex)
{
	return cq_of(cq_ex)->cur.byte_len;
}

/* The immediate, or (IBV_WC_WITH_INV) the invalidated rkey, big endian. */
static __be32 mroce_read_imm_data(struct ibv_cq_ex *cq_ex)
{
	const struct ibv_wc *wc = &cq_of(cq_ex)->cur;

	if (wc->wc_flags & IBV_WC_WITH_INV)
		return htobe32(wc->invalidated_rkey);
	return wc->imm_data;
}

static uint32_t mroce_read_qp_num(struct ibv_cq_ex *cq_ex)
{
	return cq_of(cq_ex)->cur.qp_num;
}

static uint32_t mroce_read_src_qp(struct ibv_cq_ex *cq_ex)
{
	return cq_of(cq_ex)->cur.src_qp;
}

static unsigned int mroce_read_wc_flags(struct ibv_cq_ex *cq_ex)
{
	return cq_of(cq_ex)->cur.wc_flags;
}

/* RoCE: no LIDs, service level 0 */
static uint32_t mroce_read_slid(struct ibv_cq_ex *cq_ex)
{
	return cq_of(cq_ex)->cur.slid;
}

static uint8_t mroce_read_sl(struct ibv_cq_ex *cq_ex)
{
	return cq_of(cq_ex)->cur.sl;
}

static uint8_t mroce_read_dlid_path_bits(struct ibv_cq_ex *cq_ex)
{
	return cq_of(cq_ex)->cur.dlid_path_bits;
}

struct ibv_cq_ex *mroce_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *cq_ex;
	struct ibv_cq *ibcq;

	if (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) {
		errno = EOPNOTSUPP;	/* a parent domain */
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		errno = EOPNOTSUPP;	/* IGNORE_OVERRUN */
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)MROCE_CQ_EX_WC_FLAGS) {
		errno = EOPNOTSUPP;	/* timestamps, VLAN, flow tag, TM */
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	ibcq = mroce_create_cq(ibctx, (int)attr->cqe, attr->channel,
			       (int)attr->comp_vector);
	if (!ibcq)
		return NULL;

	/*
	 * What libibverbs' ibv_create_cq does after the provider returns,
	 * and ibv_create_cq_ex leaves to the provider: ibv_destroy_cq gives
	 * the channel reference back.
	 */
	ibcq->context = ibctx;
	ibcq->channel = attr->channel;
	if (ibcq->channel) {
		pthread_mutex_lock(&ibctx->mutex);
		ibcq->channel->refcnt++;
		pthread_mutex_unlock(&ibctx->mutex);
	}
	ibcq->cq_context = attr->cq_context;
	ibcq->comp_events_completed = 0;
	ibcq->async_events_completed = 0;
	pthread_mutex_init(&ibcq->mutex, NULL);
	pthread_cond_init(&ibcq->cond, NULL);

	cq_ex = &to_mcq(ibcq)->cq_ex;
	cq_ex->comp_mask = 0;
	cq_ex->start_poll = mroce_start_poll;
	cq_ex->next_poll = mroce_next_poll;
	cq_ex->end_poll = mroce_end_poll;
	cq_ex->read_opcode = mroce_read_opcode;
	cq_ex->read_vendor_err = mroce_read_vendor_err;
	cq_ex->read_wc_flags = mroce_read_wc_flags;
	cq_ex->read_byte_len = mroce_read_byte_len;
	cq_ex->read_imm_data = mroce_read_imm_data;
	cq_ex->read_qp_num = mroce_read_qp_num;
	cq_ex->read_src_qp = mroce_read_src_qp;
	cq_ex->read_slid = mroce_read_slid;
	cq_ex->read_sl = mroce_read_sl;
	cq_ex->read_dlid_path_bits = mroce_read_dlid_path_bits;
	return cq_ex;
}
