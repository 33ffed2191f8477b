// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: extended QPs (ibv_create_qp_ex) and the ibv_wr_* post-send
 * API.
 *
 * An extended QP is the same kernel QP, with the same SQ ring, as one
 * made by ibv_create_qp.  wr_start takes the SQ lock and notes prod; each
 * builder (ibv_wr_send, ibv_wr_rdma_write, ...) begins a WQE in the next
 * unpublished slot from qp_ex->wr_id and wr_flags, and the setters
 * (ibv_wr_set_sge, _sge_list, _inline_data, _inline_data_list,
 * _ud_addr) complete it.  wr_complete publishes every WQE built since
 * wr_start with one store of prod and rings the doorbell if the kernel
 * asked for one; wr_abort publishes nothing.  The kernel never sees a
 * WQE half built: until prod moves, the slots are the process's.
 *
 * A builder that fails (SQ full, an opcode not asked for at creation, too
 * many SGEs, inline data too long, a setter with no WQE begun) is
 * remembered; wr_complete then publishes nothing and returns that error,
 * as ibv_post_send's bad_wr would have stopped at it.
 *
 * Supported send_ops_flags: RC: SEND, SEND_WITH_IMM, SEND_WITH_INV,
 * RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ, ATOMIC_CMP_AND_SWP,
 * ATOMIC_FETCH_AND_ADD, BIND_MW (type 2 windows) and LOCAL_INV (a type 2
 * window's rkey); UD: SEND, SEND_WITH_IMM.  TSO and ATOMIC_WRITE are
 * refused with EOPNOTSUPP, as are the comp_mask bits for XRC, RSS and
 * TSO.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "mroce.h"

#define MROCE_QP_EX_RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			    IBV_QP_EX_WITH_SEND_WITH_INV |			\
			    IBV_QP_EX_WITH_RDMA_WRITE |				\
			    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |		\
			    IBV_QP_EX_WITH_RDMA_READ |				\
			    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |			\
			    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |		\
			    IBV_QP_EX_WITH_BIND_MW |				\
			    IBV_QP_EX_WITH_LOCAL_INV)
#define MROCE_QP_EX_UD_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

static inline struct mroce_qp *qp_of(struct ibv_qp_ex *qp_ex)
{
	return container_of(qp_ex, struct mroce_qp, vqp.qp_ex);
}

static void mroce_wr_fail(struct mroce_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/* Begin a WQE of @opcode in the next free slot; NULL after an error. */
static struct mroce_send_wqe *mroce_wr_begin(struct ibv_qp_ex *qp_ex,
					     enum ibv_wr_opcode opcode)
{
	struct mroce_qp *qp = qp_of(qp_ex);
	struct mroce_ring *ring = &qp->sq.ring;
	struct mroce_send_wqe *w;
	uint32_t idx = qp->wr_prod + qp->wr_count;

	if (qp->wr_err)
		return NULL;
	if (qp_ex->wr_flags & ~(unsigned int)MROCE_SEND_FLAGS_SUPPORTED) {
		mroce_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (idx - mroce_load_acquire(&ring->hdr->cons) >= ring->num_slots) {
		mroce_wr_fail(qp, ENOMEM);
		return NULL;
	}
	w = mroce_ring_slot(ring, idx);
	memset(w, 0, sizeof(*w));
	w->wr_id = qp_ex->wr_id;
	w->opcode = opcode;
	w->flags = mroce_wqe_flags(qp_ex->wr_flags, qp->sq_sig_all);
	qp->wr_count++;
	qp->wr_cur = w;
	return w;
}

static void mroce_wr_send(struct ibv_qp_ex *qp_ex)
{
	mroce_wr_begin(qp_ex, IBV_WR_SEND);
}

static void mroce_wr_send_imm(struct ibv_qp_ex *qp_ex, __be32 imm_data)
{
	struct mroce_send_wqe *w = mroce_wr_begin(qp_ex, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->imm_data = (uint32_t)imm_data;	/* stays big endian */
}

static void mroce_wr_send_inv(struct ibv_qp_ex *qp_ex, uint32_t rkey)
{
	struct mroce_send_wqe *w = mroce_wr_begin(qp_ex, IBV_WR_SEND_WITH_INV);

	if (w)
		w->imm_data = rkey;			/* host order */
}

/*
 * Bind type 2 window @mw to @info with @rkey.  What only the kernel can
 * check fails the WQE with IBV_WC_MW_BIND_ERR.
 */
static void mroce_wr_bind_mw(struct ibv_qp_ex *qp_ex, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *info)
{
	struct mroce_qp *qp = qp_of(qp_ex);
	struct mroce_send_wqe *w;

	if (!mw || mw->type != IBV_MW_TYPE_2 ||
	    mw->context != qp_ex->qp_base.context ||
	    (info->length && !info->mr) ||
	    (qp_ex->wr_flags & (IBV_SEND_INLINE | IBV_SEND_SOLICITED))) {
		mroce_wr_fail(qp, EINVAL);
		return;
	}
	w = mroce_wr_begin(qp_ex, IBV_WR_BIND_MW);
	if (!w)
		return;
	w->wr.bind.mw_rkey = mw->rkey;
	w->wr.bind.rkey = rkey;
	w->wr.bind.addr = info->addr;
	w->wr.bind.length = info->length;
	w->wr.bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	w->wr.bind.access = info->mw_access_flags;
	/* no SGEs or inline data to follow */
	qp->wr_cur = NULL;
}

static void mroce_wr_local_inv(struct ibv_qp_ex *qp_ex,
			       uint32_t invalidate_rkey)
{
	struct mroce_qp *qp = qp_of(qp_ex);
	struct mroce_send_wqe *w;

	if (qp_ex->wr_flags & (IBV_SEND_INLINE | IBV_SEND_SOLICITED)) {
		mroce_wr_fail(qp, EINVAL);
		return;
	}
	w = mroce_wr_begin(qp_ex, IBV_WR_LOCAL_INV);
	if (!w)
		return;
	w->imm_data = invalidate_rkey;		/* host order */
	qp->wr_cur = NULL;
}

static void mroce_wr_rdma(struct ibv_qp_ex *qp_ex, enum ibv_wr_opcode op,
			  uint32_t rkey, uint64_t remote_addr, uint32_t imm)
{
	struct mroce_send_wqe *w = mroce_wr_begin(qp_ex, op);

	if (!w)
		return;
	w->wr.rdma.remote_addr = remote_addr;
	w->wr.rdma.rkey = rkey;
	w->imm_data = imm;
}

static void mroce_wr_rdma_write(struct ibv_qp_ex *qp_ex, uint32_t rkey,
				uint64_t remote_addr)
{
	mroce_wr_rdma(qp_ex, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void mroce_wr_rdma_write_imm(struct ibv_qp_ex *qp_ex, uint32_t rkey,
				    uint64_t remote_addr, __be32 imm_data)
{
	mroce_wr_rdma(qp_ex, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		      (uint32_t)imm_data);
}

static void mroce_wr_rdma_read(struct ibv_qp_ex *qp_ex, uint32_t rkey,
			       uint64_t remote_addr)
{
	mroce_wr_rdma(qp_ex, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void mroce_wr_atomic(struct ibv_qp_ex *qp_ex, enum ibv_wr_opcode op,
			    uint32_t rkey, uint64_t remote_addr,
			    uint64_t compare_add, uint64_t swap)
{
	struct mroce_send_wqe *w = mroce_wr_begin(qp_ex, op);

	if (!w)
		return;
	w->wr.atomic.remote_addr = remote_addr;
	w->wr.atomic.compare_add = compare_add;
	w->wr.atomic.swap = swap;
	w->wr.atomic.rkey = rkey;
}

static void mroce_wr_atomic_cmp_swp(struct ibv_qp_ex *qp_ex, uint32_t rkey,
				    uint64_t remote_addr, uint64_t compare,
				    uint64_t swap)
{
	mroce_wr_atomic(qp_ex, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
			compare, swap);
}

static void mroce_wr_atomic_fetch_add(struct ibv_qp_ex *qp_ex, uint32_t rkey,
				      uint64_t remote_addr, uint64_t add)
{
	mroce_wr_atomic(qp_ex, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
			add, 0);
}

static void mroce_wr_set_ud_addr(struct ibv_qp_ex *qp_ex, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct mroce_qp *qp = qp_of(qp_ex);
	struct mroce_send_wqe *w = qp->wr_cur;

	if (!w) {
		mroce_wr_fail(qp, qp->wr_err ? qp->wr_err : EINVAL);
		return;
	}
	if (!ah || ah->pd != qp_ex->qp_base.pd) {
		mroce_wr_fail(qp, EINVAL);
		return;
	}
	w->wr.ud.ah_num = to_mah(ah)->ah_num;
	w->wr.ud.remote_qpn = remote_qpn;
	w->wr.ud.remote_qkey = remote_qkey;
}

/* The data setters: of the WQE begun last; a later call replaces the data. */
static void mroce_wr_set_sge_list(struct ibv_qp_ex *qp_ex, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct mroce_qp *qp = qp_of(qp_ex);
	struct mroce_send_wqe *w = qp->wr_cur;
	struct mroce_sge *sge;
	size_t i;

	if (!w) {
		mroce_wr_fail(qp, qp->wr_err ? qp->wr_err : EINVAL);
		return;
	}
	if (num_sge > qp->sq.max_sge) {
		mroce_wr_fail(qp, EINVAL);
		return;
	}
	sge = (struct mroce_sge *)(w + 1);
	for (i = 0; i < num_sge; i++)
		sge[i] = (struct mroce_sge){
			.addr = sg_list[i].addr,
			.length = sg_list[i].length,
			.lkey = sg_list[i].lkey,
		};
	w->num_sge = (uint8_t)num_sge;
	w->flags &= ~MROCE_WQE_INLINE;
	w->inline_len = 0;
}

static void mroce_wr_set_sge(struct ibv_qp_ex *qp_ex, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	mroce_wr_set_sge_list(qp_ex, 1, &sge);
}

static void mroce_wr_set_inline_data_list(struct ibv_qp_ex *qp_ex,
					  size_t num_buf,
					  const struct ibv_data_buf *buf)
{
	struct mroce_qp *qp = qp_of(qp_ex);
	struct mroce_send_wqe *w = qp->wr_cur;
	uint8_t *p;
	size_t i, len = 0;

	if (!w) {
		mroce_wr_fail(qp, qp->wr_err ? qp->wr_err : EINVAL);
		return;
	}
	/* READ and atomics bring data back: nothing to send inline */
	if (w->opcode == IBV_WR_RDMA_READ ||
	    w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		mroce_wr_fail(qp, EINVAL);
		return;
	}
	for (i = 0; i < num_buf; i++) {
		len += buf[i].length;
		if (len > qp->sq.max_inline) {
			mroce_wr_fail(qp, EINVAL);
			return;
		}
	}
	p = (uint8_t *)(w + 1);
	for (i = 0; i < num_buf; i++) {
		memcpy(p, buf[i].addr, buf[i].length);
		p += buf[i].length;
	}
	w->flags |= MROCE_WQE_INLINE;
	w->inline_len = (uint32_t)len;
	w->num_sge = 0;
}

static void mroce_wr_set_inline_data(struct ibv_qp_ex *qp_ex, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	mroce_wr_set_inline_data_list(qp_ex, 1, &buf);
}

static void mroce_wr_start(struct ibv_qp_ex *qp_ex)
{
	struct mroce_qp *qp = qp_of(qp_ex);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_prod = mroce_load_relaxed(&qp->sq.ring.hdr->prod);
	qp->wr_count = 0;
	qp->wr_err = 0;
	qp->wr_cur = NULL;
	/* posting before RTS is an error (IBA 10.3.1), found at complete */
	switch (qp_ex->qp_base.state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		qp->wr_err = EINVAL;
		break;
	default:
		break;
	}
}

static int mroce_wr_complete(struct ibv_qp_ex *qp_ex)
{
	struct mroce_qp *qp = qp_of(qp_ex);
	uint32_t n = qp->wr_count;
	int ret = qp->wr_err;

	if (!ret && n)
		mroce_store_release(&qp->sq.ring.hdr->prod, qp->wr_prod + n);
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
	if (ret || !n)
		return ret;
	if (mroce_ring_need_kick(&qp->sq.ring))
		return mroce_sq_doorbell(&qp_ex->qp_base);
	return 0;
}

static void mroce_wr_abort(struct ibv_qp_ex *qp_ex)
{
	struct mroce_qp *qp = qp_of(qp_ex);

	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static void mroce_qp_ex_set_ops(struct ibv_qp_ex *q, uint64_t ops)
{
	q->wr_start = mroce_wr_start;
	q->wr_complete = mroce_wr_complete;
	q->wr_abort = mroce_wr_abort;
	q->wr_set_sge = mroce_wr_set_sge;
	q->wr_set_sge_list = mroce_wr_set_sge_list;
	q->wr_set_inline_data = mroce_wr_set_inline_data;
	q->wr_set_inline_data_list = mroce_wr_set_inline_data_list;
	if (q->qp_base.qp_type == IBV_QPT_UD)
		q->wr_set_ud_addr = mroce_wr_set_ud_addr;
	if (ops & IBV_QP_EX_WITH_SEND)
		q->wr_send = mroce_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		q->wr_send_imm = mroce_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		q->wr_send_inv = mroce_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		q->wr_rdma_write = mroce_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		q->wr_rdma_write_imm = mroce_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		q->wr_rdma_read = mroce_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		q->wr_atomic_cmp_swp = mroce_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		q->wr_atomic_fetch_add = mroce_wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		q->wr_bind_mw = mroce_wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		q->wr_local_inv = mroce_wr_local_inv;
}

struct ibv_qp *mroce_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr)
{
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_qp_init_attr a;
	uint64_t ops = 0, allowed;
	struct ibv_qp *ibqp;
	struct mroce_qp *qp;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ibctx) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags)) {
		errno = EOPNOTSUPP;	/* XRC, RSS, TSO, create flags */
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		allowed = attr->qp_type == IBV_QPT_UD ? MROCE_QP_EX_UD_OPS :
							MROCE_QP_EX_RC_OPS;
		if (ops & ~allowed) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}

	a = (struct ibv_qp_init_attr){
		.qp_context = attr->qp_context, .send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq, .srq = attr->srq, .cap = attr->cap,
		.qp_type = attr->qp_type, .sq_sig_all = attr->sq_sig_all,
	};
	ibqp = mroce_create_qp(attr->pd, &a);
	if (!ibqp)
		return NULL;
	attr->cap = a.cap;
	qp = to_mqp(ibqp);
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		mroce_qp_ex_set_ops(&qp->vqp.qp_ex, ops);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	return ibqp;
}
