/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce tracepoints: /sys/kernel/tracing/events/mroce/.  Recipes in
 * Documentation/mroce-tracing.rst.
 *
 *   mroce_tx, mroce_rx   every packet sent / every packet that passed
 *                        mroce_wire_parse(): QPNs, opcode, flags, PSN,
 *                        path, path sequence number, payload length,
 *                        rate hint (ACK/NAK)
 *   mroce_drop           every increment of an rx_drop_* or rx_dup_*
 *                        counter, with the counter's name as the reason
 *                        and the packet's header fields when known
 *   mroce_loss           a PSN declared lost: rule 1 (path_seq) or
 *                        rule 2 (rack)
 *   mroce_retx           a request packet resent, by cause: loss (what
 *                        mroce_loss declared), tlp, rto, rnr
 *   mroce_cc             the congestion controller's state after an
 *                        ACK, a loss or an RTO: rate, window, hint
 *   mroce_path           a path declared dead or revived
 *   mroce_qp_state       a QP changed state
 *
 * Only mroce_trace.c defines CREATE_TRACE_POINTS.  The pure protocol
 * files never include this header: the glue calls the tracepoints
 * around them.  A disabled tracepoint costs a patched-out branch; every
 * field is computed only when it is enabled.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mroce

/* The callers' argument types: read once, not in every pass. */
#ifndef MROCE_TRACE_TYPES_H
#define MROCE_TRACE_TYPES_H

#include "mroce.h"

/* Why a request packet is resent (mroce_retx). */
enum mroce_retx_cause {
	MROCE_RETX_LOSS,	/* declared lost (mroce_loss), SACK-driven */
	MROCE_RETX_TLP,		/* tail probe */
	MROCE_RETX_RTO,		/* retransmission timeout */
	MROCE_RETX_RNR,		/* RNR wait over: the window again */
};

/* What the congestion controller just saw (mroce_cc). */
enum mroce_cc_event {
	MROCE_CC_EV_ACK,
	MROCE_CC_EV_LOSS,
	MROCE_CC_EV_RTO,
};

/* Path state change (mroce_path). */
enum mroce_path_event {
	MROCE_PATH_EV_DEAD,
	MROCE_PATH_EV_REVIVED,
};

static inline const struct mroce_path *
mroce_trace_path(const struct mroce_qp *qp, unsigned int id)
{
	return &qp->sq.paths->path[id % qp->sq.paths->n];
}

#endif /* MROCE_TRACE_TYPES_H */

#if !defined(MROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define MROCE_TRACE_H

#include <linux/string.h>
#include <linux/tracepoint.h>

TRACE_DEFINE_ENUM(MROCE_RETX_LOSS);
TRACE_DEFINE_ENUM(MROCE_RETX_TLP);
TRACE_DEFINE_ENUM(MROCE_RETX_RTO);
TRACE_DEFINE_ENUM(MROCE_RETX_RNR);
TRACE_DEFINE_ENUM(MROCE_CC_EV_ACK);
TRACE_DEFINE_ENUM(MROCE_CC_EV_LOSS);
TRACE_DEFINE_ENUM(MROCE_CC_EV_RTO);
TRACE_DEFINE_ENUM(MROCE_PATH_EV_DEAD);
TRACE_DEFINE_ENUM(MROCE_PATH_EV_REVIVED);
TRACE_DEFINE_ENUM(MROCE_SB_LOST_PATH_SEQ);
TRACE_DEFINE_ENUM(MROCE_SB_LOST_RACK);
TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);

/* Device name into a fixed array: stable across kernel versions. */
#define MROCE_TRACE_DEV_LEN	16
#define mroce_trace_dev(dst, mdev) \
	strscpy(dst, dev_name(&(mdev)->ib_dev.dev), MROCE_TRACE_DEV_LEN)

DECLARE_EVENT_CLASS(mroce_pkt_class,
		    TP_PROTO(const struct mroce_dev *mdev,
			     const struct mroce_pkt_info *pi),
		    TP_ARGS(mdev, pi),
		    TP_STRUCT__entry(__array(char, dev, MROCE_TRACE_DEV_LEN)
				     __field(u32, sqpn)
				     __field(u32, dqpn)
				     __field(u32, psn)
				     __field(u32, path_seq)
				     __field(u32, msn)
				     __field(u32, len)
				     __field(u32, hint)
				     __field(u16, flags)
				     __field(u8, opcode)
				     __field(u8, path)
				     __field(bool, ce)),
		    TP_fast_assign(mroce_trace_dev(__entry->dev, mdev);
				   __entry->sqpn = pi->src_qpn;
				   __entry->dqpn = pi->dest_qpn;
				   __entry->psn = pi->psn;
				   __entry->path_seq = pi->path_seq;
				   __entry->msn = pi->msn;
				   __entry->len = pi->payload_len;
				   __entry->hint = pi->rate_hint_mbps;
				   __entry->flags = pi->flags;
				   __entry->opcode = pi->opcode;
				   __entry->path = pi->path_id;
				   __entry->ce = pi->rx_ce;),
		    TP_printk("%s %s sqpn=%u dqpn=%u psn=%u path=%u path_seq=%u msn=%u len=%u flags=%s hint=%u ce=%u",
			      __entry->dev,
			      __print_symbolic(__entry->opcode,
					       { MROCE_OP_SEND, "SEND" },
					       { MROCE_OP_SEND_IMM, "SEND_WITH_IMM" },
					       { MROCE_OP_WRITE, "RDMA_WRITE" },
					       { MROCE_OP_WRITE_IMM, "RDMA_WRITE_WITH_IMM" },
					       { MROCE_OP_READ_REQ, "RDMA_READ_REQ" },
					       { MROCE_OP_READ_RESP, "RDMA_READ_RESP" },
					       { MROCE_OP_ATOMIC_CMP_SWP, "ATOMIC_CMP_SWP" },
					       { MROCE_OP_ATOMIC_FETCH_ADD, "ATOMIC_FETCH_ADD" },
					       { MROCE_OP_ATOMIC_RESP, "ATOMIC_RESP" },
					       { MROCE_OP_SEND_INV, "SEND_WITH_INV" },
					       { MROCE_OP_ACK, "ACK" },
					       { MROCE_OP_NAK, "NAK" },
					       { MROCE_OP_PROBE, "PROBE" },
					       { MROCE_OP_UD_SEND, "UD_SEND" },
					       { MROCE_OP_UD_SEND_IMM, "UD_SEND_WITH_IMM" }),
			      __entry->sqpn, __entry->dqpn, __entry->psn,
			      __entry->path, __entry->path_seq, __entry->msn,
			      __entry->len,
			      __print_flags(__entry->flags, "|",
					    { MROCE_F_ACK_REQ, "ACK_REQ" },
					    { MROCE_F_SOLICITED, "SOLICITED" },
					    { MROCE_F_FIRST, "FIRST" },
					    { MROCE_F_LAST, "LAST" },
					    { MROCE_F_RETRANSMIT, "RETRANSMIT" }),
			      __entry->hint, __entry->ce)
);

DEFINE_EVENT(mroce_pkt_class, mroce_tx,
	     TP_PROTO(const struct mroce_dev *mdev,
		      const struct mroce_pkt_info *pi),
	     TP_ARGS(mdev, pi)
);

DEFINE_EVENT(mroce_pkt_class, mroce_rx,
	     TP_PROTO(const struct mroce_dev *mdev,
		      const struct mroce_pkt_info *pi),
	     TP_ARGS(mdev, pi)
);

/*
 * @pi: the packet being received, or NULL (a checksum drop, or a drop
 * counted outside the receive path); a packet mroce_wire_parse()
 * rejected has only the fields it read before the failing check.
 */
TRACE_EVENT(mroce_drop,
	    TP_PROTO(const struct mroce_dev *mdev, enum mroce_counter c,
		     const struct mroce_pkt_info *pi),
	    TP_ARGS(mdev, c, pi),
	    TP_STRUCT__entry(__array(char, dev, MROCE_TRACE_DEV_LEN)
			     __array(char, reason, 32)
			     __field(u32, sqpn)
			     __field(u32, dqpn)
			     __field(u32, psn)
			     __field(u8, opcode)),
	    TP_fast_assign(mroce_trace_dev(__entry->dev, mdev);
			   strscpy(__entry->reason, mroce_counter_name(c),
				   sizeof(__entry->reason));
			   __entry->sqpn = pi ? pi->src_qpn : 0;
			   __entry->dqpn = pi ? pi->dest_qpn : 0;
			   __entry->psn = pi ? pi->psn : 0;
			   __entry->opcode = pi ? pi->opcode : 0;),
	    TP_printk("%s reason=%s opcode=0x%02x sqpn=%u dqpn=%u psn=%u",
		      __entry->dev, __entry->reason, __entry->opcode,
		      __entry->sqpn, __entry->dqpn, __entry->psn)
);

/* @s: the slot of the lost transmission, @ev its loss rule. */
TRACE_EVENT(mroce_loss,
	    TP_PROTO(const struct mroce_qp *qp, u32 psn,
		     const struct mroce_sb_slot *s, enum mroce_sb_event ev),
	    TP_ARGS(qp, psn, s, ev),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u32, psn)
			     __field(u32, path_seq)
			     __field(u32, una)
			     __field(u32, nxt)
			     __field(u8, path)
			     __field(u8, nretx)
			     __field(u8, cause)),
	    TP_fast_assign(__entry->qpn = qp->ibqp.qp_num;
			   __entry->psn = psn;
			   __entry->path_seq = s->path_seq;
			   __entry->una = qp->sq.sb.una;
			   __entry->nxt = qp->sq.sb.nxt;
			   __entry->path = s->path;
			   __entry->nretx = s->nretx;
			   __entry->cause = ev;),
	    TP_printk("qpn=%u psn=%u cause=%s path=%u path_seq=%u nretx=%u una=%u nxt=%u",
		      __entry->qpn, __entry->psn,
		      __print_symbolic(__entry->cause,
				       { MROCE_SB_LOST_PATH_SEQ, "path_seq" },
				       { MROCE_SB_LOST_RACK, "rack" }),
		      __entry->path, __entry->path_seq, __entry->nretx,
		      __entry->una, __entry->nxt)
);

/* Before the resend: path and nretx are the previous transmission's. */
TRACE_EVENT(mroce_retx,
	    TP_PROTO(const struct mroce_qp *qp, u32 psn,
		     enum mroce_retx_cause cause),
	    TP_ARGS(qp, psn, cause),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u32, psn)
			     __field(u32, una)
			     __field(u32, nxt)
			     __field(u32, rto_us)
			     __field(u8, path)
			     __field(u8, nretx)
			     __field(u8, cause)),
	    TP_fast_assign(__entry->qpn = qp->ibqp.qp_num;
			   __entry->psn = psn;
			   __entry->una = qp->sq.sb.una;
			   __entry->nxt = qp->sq.sb.nxt;
			   __entry->rto_us = mroce_rto_us(&qp->sq.rto);
			   __entry->path = qp->sq.sb.s[psn % MROCE_WINDOW].path;
			   __entry->nretx = qp->sq.sb.s[psn % MROCE_WINDOW].nretx;
			   __entry->cause = cause;),
	    TP_printk("qpn=%u psn=%u cause=%s path=%u nretx=%u una=%u nxt=%u rto_us=%u",
		      __entry->qpn, __entry->psn,
		      __print_symbolic(__entry->cause,
				       { MROCE_RETX_LOSS, "loss" },
				       { MROCE_RETX_TLP, "tlp" },
				       { MROCE_RETX_RTO, "rto" },
				       { MROCE_RETX_RNR, "rnr" }),
		      __entry->path, __entry->nretx, __entry->una,
		      __entry->nxt, __entry->rto_us)
);

/* After the algorithm ran; @hint_bps: the ACK's rate hint (0: none). */
TRACE_EVENT(mroce_cc,
	    TP_PROTO(const struct mroce_qp *qp, enum mroce_cc_event ev,
		     u64 hint_bps),
	    TP_ARGS(qp, ev, hint_bps),
	    TP_STRUCT__entry(__array(char, algo, MROCE_CC_NAME_MAX)
			     __field(u64, rate_bps)
			     __field(u64, hint_bps)
			     __field(u32, qpn)
			     __field(u32, cwnd)
			     __field(u32, srtt_us)
			     __field(u32, min_rtt_us)
			     __field(u32, qdelay_us)
			     __field(u32, inflight)
			     __field(u8, ev)),
	    TP_fast_assign(strscpy(__entry->algo, qp->sq.cc_ops->name,
				   sizeof(__entry->algo));
			   __entry->rate_bps = qp->sq.cc.rate_bps;
			   __entry->hint_bps = hint_bps;
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->cwnd = qp->sq.cc.cwnd_pkts;
			   __entry->srtt_us = qp->sq.rto.srtt_us;
			   __entry->min_rtt_us = qp->sq.min_rtt_us;
			   __entry->qdelay_us = qp->sq.cc.qdelay_us;
			   __entry->inflight =
				mroce_sb_outstanding(&qp->sq.sb);
			   __entry->ev = ev;),
	    TP_printk("qpn=%u algo=%s ev=%s rate_bps=%llu cwnd=%u hint_bps=%llu srtt_us=%u min_rtt_us=%u qdelay_us=%u inflight=%u",
		      __entry->qpn, __entry->algo,
		      __print_symbolic(__entry->ev,
				       { MROCE_CC_EV_ACK, "ack" },
				       { MROCE_CC_EV_LOSS, "loss" },
				       { MROCE_CC_EV_RTO, "rto" }),
		      __entry->rate_bps, __entry->cwnd, __entry->hint_bps,
		      __entry->srtt_us, __entry->min_rtt_us,
		      __entry->qdelay_us, __entry->inflight)
);

/* After the change: the path's new state, generation and source port. */
TRACE_EVENT(mroce_path,
	    TP_PROTO(const struct mroce_qp *qp, unsigned int id,
		     enum mroce_path_event ev),
	    TP_ARGS(qp, id, ev),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u32, cwnd)
			     __field(u32, nr_active)
			     __field(u32, n)
			     __field(u16, sport)
			     __field(u8, path)
			     __field(u8, ev)
			     __field(u8, state)
			     __field(u8, gen)
			     __field(u8, weight)),
	    TP_fast_assign(__entry->qpn = qp->ibqp.qp_num;
			   __entry->cwnd = mroce_trace_path(qp, id)->cwnd;
			   __entry->nr_active =
				mroce_paths_nr_active(qp->sq.paths);
			   __entry->n = qp->sq.paths->n;
			   __entry->gen = mroce_trace_path(qp, id)->gen;
			   __entry->sport = mroce_wire_sport(qp->sq.path_hash,
							     id, __entry->gen);
			   __entry->path = id;
			   __entry->ev = ev;
			   __entry->state = mroce_trace_path(qp, id)->state;
			   __entry->weight = mroce_trace_path(qp, id)->w;),
	    TP_printk("qpn=%u path=%u ev=%s state=%s gen=%u sport=%u weight=%u/16 cwnd=%u active=%u/%u",
		      __entry->qpn, __entry->path,
		      __print_symbolic(__entry->ev,
				       { MROCE_PATH_EV_DEAD, "dead" },
				       { MROCE_PATH_EV_REVIVED, "revived" }),
		      __print_symbolic(__entry->state,
				       { MROCE_PATH_ACTIVE, "active" },
				       { MROCE_PATH_DEAD, "dead" }),
		      __entry->gen, __entry->sport, __entry->weight,
		      __entry->cwnd, __entry->nr_active, __entry->n)
);

TRACE_EVENT(mroce_qp_state,
	    TP_PROTO(const struct mroce_qp *qp, enum ib_qp_state old,
		     enum ib_qp_state new),
	    TP_ARGS(qp, old, new),
	    TP_STRUCT__entry(__array(char, dev, MROCE_TRACE_DEV_LEN)
			     __field(u32, qpn)
			     __field(u32, dest_qpn)
			     __field(u8, type)
			     __field(u8, old)
			     __field(u8, new)),
	    TP_fast_assign(mroce_trace_dev(__entry->dev, qp->mdev);
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->dest_qpn = qp->dest_qpn;
			   __entry->type = qp->ibqp.qp_type;
			   __entry->old = old;
			   __entry->new = new;),
	    TP_printk("%s qpn=%u type=%s %s -> %s dest_qpn=%u",
		      __entry->dev, __entry->qpn,
		      __print_symbolic(__entry->type,
				       { IB_QPT_RC, "RC" }, { IB_QPT_UD, "UD" },
				       { IB_QPT_GSI, "GSI" }),
		      __print_symbolic(__entry->old,
				       { IB_QPS_RESET, "RESET" },
				       { IB_QPS_INIT, "INIT" },
				       { IB_QPS_RTR, "RTR" },
				       { IB_QPS_RTS, "RTS" },
				       { IB_QPS_SQD, "SQD" },
				       { IB_QPS_SQE, "SQE" },
				       { IB_QPS_ERR, "ERR" }),
		      __print_symbolic(__entry->new,
				       { IB_QPS_RESET, "RESET" },
				       { IB_QPS_INIT, "INIT" },
				       { IB_QPS_RTR, "RTR" },
				       { IB_QPS_RTS, "RTS" },
				       { IB_QPS_SQD, "SQD" },
				       { IB_QPS_SQE, "SQE" },
				       { IB_QPS_ERR, "ERR" }),
		      __entry->dest_qpn)
);

#endif /* MROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE mroce_trace
#include <trace/define_trace.h>
