// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce receive demultiplexer: every packet a packet I/O provider
 * delivers enters here, is parsed and checked by mroce_wire_parse(), and
 * goes to the engine its opcode names: the responder (requests and
 * datagrams, mroce_resp.c) or the completer (ACK, NAK and responses,
 * mroce_comp.c) of the QP it is for.  Every rejection is counted by
 * reason.
 *
 * Packets come one at a time, or as a GRO batch (mroce_gro.c): a flow's
 * packets of one NAPI poll, taken off their chain by the socket.  A batch
 * looks each run of one QP's packets up once, and the responder takes
 * one ACK decision per run of its requests (rx_more).
 */

#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "mroce.h"
#include "mroce_net.h"
#include "mroce_trace.h"

/* Did a switch mark the packet Congestion Experienced (IP ECN = 11)? */
static bool mroce_skb_ce(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return INET_ECN_is_ce(ipv4_get_dsfield(ip_hdr(skb)));
	if (skb->protocol == htons(ETH_P_IPV6))
		return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
	return false;
}

/*
 * C5: does an RC packet come from the connected peer, its QPN from the
 * address vector's GIDs to ours?  A lockless read of the connection
 * attributes: they change only in modify_qp, never under traffic.
 */
static bool mroce_rc_from_peer(const struct mroce_qp *qp,
			       const struct sk_buff *skb,
			       const struct mroce_pkt_info *pi)
{
	const struct mroce_av *av = &qp->av;

	if (pi->src_qpn != READ_ONCE(qp->dest_qpn))
		return false;
	if (skb->protocol == htons(ETH_P_IP))
		return av->family == AF_INET &&
		       ip_hdr(skb)->saddr == av->daddr.v4.sin_addr.s_addr &&
		       ip_hdr(skb)->daddr == av->saddr.v4.sin_addr.s_addr;
	if (skb->protocol == htons(ETH_P_IPV6))
		return av->family == AF_INET6 &&
		       ipv6_addr_equal(&ipv6_hdr(skb)->saddr,
				       &av->daddr.v6.sin6_addr) &&
		       ipv6_addr_equal(&ipv6_hdr(skb)->daddr,
				       &av->saddr.v6.sin6_addr);
	return false;
}

/*
 * Parse @skb (data at its MetaRoCE header) into @pi.  Counts the packet,
 * and its drop by reason.
 */
static int mroce_rcv_parse(struct mroce_dev *mdev, struct sk_buff *skb,
			   struct mroce_pkt_info *pi)
{
	int err;

	mroce_count(mdev, MROCE_CNT_RX_PKTS, 1);
	mroce_count(mdev, MROCE_CNT_RX_BYTES, skb->len);
	/* The parser reads the headers only; make them linear. */
	if (!pskb_may_pull(skb, min_t(unsigned int, skb->len, MROCE_HLEN_MAX)))
		err = -MROCE_WIRE_ERR_SHORT;
	else
		err = mroce_wire_parse(skb->data, skb->len, pi);
	if (err) {
		mroce_count(mdev, mroce_wire_drop_counter(err), 1);
		return err;
	}
	pi->rx_ce = mroce_skb_ce(skb);
	pi->rx_sport = MROCE_SKB_CB(skb)->sport;
	return 0;
}

/*
 * Hand the parsed packet @pi to the engine of its QP.  *@qpp is the QP of
 * the previous packet of the batch (referenced, or NULL), kept while the
 * packets are for it: one lookup per run of a QP's packets.
 */
static void mroce_rcv_dispatch(struct mroce_dev *mdev, struct sk_buff *skb,
			       struct mroce_pkt_info *pi, struct mroce_qp **qpp)
{
	const struct mroce_wire_opinfo *op = mroce_wire_opinfo(pi->opcode);
	struct mroce_qp *qp = *qpp;
	bool datagram, rc;

	trace_mroce_rx(mdev, pi);
	if (!qp || qp->ibqp.qp_num != pi->dest_qpn) {
		if (qp)
			mroce_qp_put(qp);
		qp = mroce_qp_get(mdev, pi->dest_qpn);
		*qpp = qp;
	}
	if (!qp) {
		mroce_count(mdev, MROCE_CNT_RX_DROP_UNKNOWN_QP, 1);
		return;
	}
	rc = qp->ibqp.qp_type == IB_QPT_RC;
	pi->rx_from_peer = rc && mroce_rc_from_peer(qp, skb, pi);
	if (pi->opcode == MROCE_OP_PROBE) {
		if (rc)
			mroce_resp_probe(qp, pi);
		else
			mroce_count(mdev, MROCE_CNT_RX_DROP_QP_TYPE, 1);
		return;
	}
	datagram = op->props & MROCE_OPP_DATAGRAM;
	if (datagram == rc) {
		mroce_count(mdev, MROCE_CNT_RX_DROP_QP_TYPE, 1);
	} else if (datagram) {
		mroce_resp_rcv_ud(qp, pi, skb);
	} else if (op->props & MROCE_OPP_REQUEST) {
		/* the ACK a request carries first: it may free the window */
		if (pi->flags & MROCE_F_PB_ACK)
			mroce_comp_pb_ack(qp, pi);
		mroce_resp_rcv(qp, pi, skb);
	} else {
		mroce_comp_rcv(qp, pi, skb);
	}
}

/* Do @pi and @pn go to the same engine of the same QP? */
static bool mroce_rcv_same_run(const struct mroce_pkt_info *pi,
			       const struct mroce_pkt_info *pn)
{
	u16 mask = MROCE_OPP_REQUEST | MROCE_OPP_DATAGRAM;

	return pi->dest_qpn == pn->dest_qpn &&
	       !((mroce_wire_opinfo(pi->opcode)->props ^
		  mroce_wire_opinfo(pn->opcode)->props) & mask);
}

/*
 * The packets @skb and those on its ->next, in order.  Each is parsed
 * before the one ahead of it is dispatched, so that the responder knows
 * whether more of its QP's requests follow in this batch (rx_more) and
 * takes one ACK decision for the run instead of one every few packets.
 */
void mroce_xport_rcv_list(struct mroce_dev *mdev, struct sk_buff *skb)
{
	const struct mroce_pkt_info *outer = NULL;
	struct mroce_pkt_info info[2];
	struct mroce_qp *qp = NULL;
	struct sk_buff *next;
	bool trace, ok, ok_next;
	int cur = 0;

	/* mroce_drop names the packet whose drop it reports */
	trace = tracepoint_enabled(mroce_drop) && in_softirq();
	if (trace) {
		outer = this_cpu_read(mroce_rx_pkt);
		this_cpu_write(mroce_rx_pkt, &info[cur]);
	}
	ok = !mroce_rcv_parse(mdev, skb, &info[cur]);
	for (; skb; skb = next, cur = !cur, ok = ok_next) {
		struct mroce_pkt_info *pi = &info[cur], *pn = &info[!cur];

		next = skb->next;
		skb_mark_not_on_list(skb);
		ok_next = false;
		if (next) {
			if (trace)
				this_cpu_write(mroce_rx_pkt, pn);
			ok_next = !mroce_rcv_parse(mdev, next, pn);
		}
		if (ok) {
			pi->rx_more = ok_next && mroce_rcv_same_run(pi, pn);
			if (trace)
				this_cpu_write(mroce_rx_pkt, pi);
			mroce_rcv_dispatch(mdev, skb, pi, &qp);
		}
		kfree_skb(skb);
	}
	if (qp)
		mroce_qp_put(qp);
	if (trace)
		this_cpu_write(mroce_rx_pkt, outer);
}

/*
 * One packet, the MetaRoCE header at @skb->data.  Consumes @skb.  Its
 * ->next is not looked at: the UDP layer may leave a segment's there.
 */
void mroce_xport_rcv(struct mroce_dev *mdev, struct sk_buff *skb)
{
	skb->next = NULL;
	mroce_xport_rcv_list(mdev, skb);
}
EXPORT_SYMBOL_GPL(mroce_xport_rcv);
