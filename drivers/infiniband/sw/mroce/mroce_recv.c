// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce receive demultiplexer: every packet a packet I/O provider
 * delivers enters here, is parsed and checked by mroce_wire_parse(), and
 * goes to the engine its opcode names: the responder (requests and
 * datagrams, mroce_resp.c) or the completer (ACK, NAK and responses,
 * mroce_comp.c) of the QP it is for.  Every rejection is counted by
 * reason.
 */

#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "mroce.h"
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

void mroce_xport_rcv(struct mroce_dev *mdev, struct sk_buff *skb)
{
	const struct mroce_pkt_info *outer = NULL;
	const struct mroce_wire_opinfo *op;
	struct mroce_pkt_info info;
	bool datagram, rc, trace;
	struct mroce_qp *qp;
	int err;

	/* mroce_drop names the packet whose drop it reports */
	trace = tracepoint_enabled(mroce_drop) && in_softirq();
	if (trace) {
		outer = this_cpu_read(mroce_rx_pkt);
		this_cpu_write(mroce_rx_pkt, &info);
	}
	mroce_count(mdev, MROCE_CNT_RX_PKTS, 1);
	mroce_count(mdev, MROCE_CNT_RX_BYTES, skb->len);

	/* The parser reads the headers only; make them linear. */
	if (!pskb_may_pull(skb, min_t(unsigned int, skb->len, MROCE_HLEN_MAX)))
		err = -MROCE_WIRE_ERR_SHORT;
	else
		err = mroce_wire_parse(skb->data, skb->len, &info);
	if (err) {
		mroce_count(mdev, mroce_wire_drop_counter(err), 1);
		goto drop;
	}
	op = mroce_wire_opinfo(info.opcode);
	info.rx_ce = mroce_skb_ce(skb);
	info.rx_sport = MROCE_SKB_CB(skb)->sport;
	trace_mroce_rx(mdev, &info);
	qp = mroce_qp_get(mdev, info.dest_qpn);
	if (!qp) {
		mroce_count(mdev, MROCE_CNT_RX_DROP_UNKNOWN_QP, 1);
		goto drop;
	}
	rc = qp->ibqp.qp_type == IB_QPT_RC;
	info.rx_from_peer = rc && mroce_rc_from_peer(qp, skb, &info);
	if (info.opcode == MROCE_OP_PROBE) {
		if (rc)
			mroce_resp_probe(qp, &info);
		else
			mroce_count(mdev, MROCE_CNT_RX_DROP_QP_TYPE, 1);
		mroce_qp_put(qp);
		goto drop;
	}
	datagram = op->props & MROCE_OPP_DATAGRAM;
	if (datagram == rc)
		mroce_count(mdev, MROCE_CNT_RX_DROP_QP_TYPE, 1);
	else if (op->props & MROCE_OPP_DATAGRAM)
		mroce_resp_rcv_ud(qp, &info, skb);
	else if (op->props & MROCE_OPP_REQUEST)
		mroce_resp_rcv(qp, &info, skb);
	else
		mroce_comp_rcv(qp, &info, skb);
	mroce_qp_put(qp);
drop:
	if (trace)
		this_cpu_write(mroce_rx_pkt, outer);
	kfree_skb(skb);
}
EXPORT_SYMBOL_GPL(mroce_xport_rcv);
