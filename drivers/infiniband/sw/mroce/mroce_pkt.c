// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce packet construction: one sk_buff per MetaRoCE packet, headers
 * written by mroce_wire_build() (so nothing leaves that a conforming
 * receiver would drop), handed to the device's packet I/O provider.
 */

#include <linux/ipv6.h>
#include <linux/ktime.h>
#include <net/inet_ecn.h>
#include <net/udp.h>

#include "mroce.h"
#include "mroce_net.h"
#include "mroce_trace.h"

/*
 * An skb for a packet with @payload bytes of payload: skb->data is where
 * the payload goes; the MetaRoCE, UDP, IP and link headers are pushed in
 * front of it.
 */
struct sk_buff *mroce_pkt_alloc(struct mroce_qp *qp, u32 payload)
{
	struct net_device *ndev = qp->mdev->ndev;
	unsigned int room = LL_RESERVED_SPACE(ndev) + sizeof(struct ipv6hdr) +
			    sizeof(struct udphdr) + MROCE_HLEN_MAX;
	struct sk_buff *skb;

	skb = alloc_skb(room + payload + ndev->needed_tailroom, GFP_ATOMIC);
	if (skb)
		skb_reserve(skb, room);
	return skb;
}

/*
 * Is zero-copy worth it for a packet of @mdev to @av, sent on its own (or
 * by the GSO provider, whose packets the stack cuts apart for such a
 * netdev and then treats as sent on their own)?  Page
 * fragments save the copy of the payload only where the netdev takes them
 * as they are: with scatter-gather and checksum offload for the packet's
 * family.  Without either the stack undoes them before the driver sees
 * the packet (validate_xmit_skb() linearizes a fragmented packet for a
 * netdev without NETIF_F_SG; skb_checksum_help() linearizes one with
 * shared fragments): a new head, the same copy, and the page references
 * for nothing.  A virtio NIC whose host offers no offloads is such a
 * netdev.  The device loopback takes fragments as they are.  The netdev
 * is the one the device is bound to, which a route almost always leaves
 * by; a stale answer (features changed meanwhile) costs speed, not data.
 */
bool mroce_av_frags_pay(const struct mroce_dev *mdev,
			const struct mroce_av *av)
{
	netdev_features_t f = READ_ONCE(mdev->ndev->features);
	__be16 proto = av->family == AF_INET ? htons(ETH_P_IP) :
					       htons(ETH_P_IPV6);

	return mroce_net_loop_av(av) ||
	       ((f & NETIF_F_SG) && can_checksum_protocol(f, proto));
}

bool mroce_pkt_frags_pay(const struct mroce_qp *qp)
{
	return mroce_av_frags_pay(qp->mdev, &qp->av);
}

/*
 * Write the headers @pi describes in front of the payload already in
 * @skb (skb->data) and send to @dest_qpn along @av.  @pi's path id, path
 * sequence number and timestamp are the caller's.  Consumes @skb.
 */
/*
 * Push the headers @pi describes (to @dest_qpn, from @qp) in front of
 * skb->data.  Returns their length, or a negative value if they do not
 * fit or would not pass mroce_wire_parse(): the caller drops the packet.
 */
static int mroce_pkt_push_hdr(struct mroce_qp *qp, u32 dest_qpn,
			      struct sk_buff *skb, struct mroce_pkt_info *pi)
{
	const struct mroce_wire_opinfo *op = mroce_wire_opinfo(pi->opcode);
	unsigned int hlen = mroce_wire_hdr_len(op, pi->flags);
	int len;

	pi->dest_qpn = dest_qpn;
	pi->src_qpn = qp->ibqp.qp_num;
	if (skb_headroom(skb) < hlen)
		return -ENOSPC;
	len = mroce_wire_build(skb_push(skb, hlen), hlen, pi);
	if (len < 0)
		/* a bug, or a WQE field the requester failed to check */
		dev_err_ratelimited(&qp->mdev->ib_dev.dev,
				    "qp %u: not sending an invalid %s packet: %s\n",
				    qp->ibqp.qp_num, op->name,
				    mroce_wire_err_name(len));
	return len;
}

static int mroce_pkt_emit(struct mroce_qp *qp, const struct mroce_av *av,
			  u32 dest_qpn, u16 sport, struct sk_buff *skb,
			  struct mroce_pkt_info *pi)
{
	struct mroce_dev *mdev = qp->mdev;
	const struct mroce_xport_ops *xport;

	pi->payload_len = skb->len;
	if (mroce_pkt_push_hdr(qp, dest_qpn, skb, pi) < 0)
		goto drop;

	xport = READ_ONCE(mdev->xport);
	if (!xport)
		goto drop;
	mroce_qcount(qp, MROCE_CNT_TX_PKTS, 1);
	mroce_qcount(qp, MROCE_CNT_TX_BYTES, skb->len);
	trace_mroce_tx(mdev, pi);
	/* the connection's own address has a route cache; a datagram's not */
	return xport->xmit(mdev, av, av == &qp->av ? &qp->route : NULL, sport,
			   INET_ECN_ECT_0, skb);

drop:
	mroce_count(mdev, MROCE_CNT_TX_DROP, 1);
	kfree_skb(skb);
	return -EINVAL;
}

/*
 * Send the packet @pi describes (payload in @skb) to @dest_qpn along @av,
 * on path 0 with the QP's response/ACK path sequence.  Consumes @skb.
 */
int mroce_pkt_send_to(struct mroce_qp *qp, const struct mroce_av *av,
		      u32 dest_qpn, u16 sport, struct sk_buff *skb,
		      struct mroce_pkt_info *pi)
{
	const struct mroce_wire_opinfo *op = mroce_wire_opinfo(pi->opcode);

	pi->path_id = 0;
	pi->ts_us = mroce_now_us();
	if (!(op->props & (MROCE_OPP_ACKNOWLEDGE | MROCE_OPP_DATAGRAM)))
		pi->path_seq = atomic_inc_return(&qp->path_seq) - 1;
	return mroce_pkt_emit(qp, av, dest_qpn, sport, skb, pi);
}

/*
 * The peer acknowledged progress since the QP's last request packet: this
 * one has the IP layer confirm the neighbour it leaves by (the soft
 * provider's IPv4 and IPv6 output; sock_confirm_neigh()).  Under sq.lock.
 */
static void mroce_pkt_neigh_confirm(struct mroce_qp *qp, struct sk_buff *skb)
{
	if (qp->sq.neigh_confirm) {
		qp->sq.neigh_confirm = false;
		skb_set_dst_pending_confirm(skb, 1);
	}
}

/*
 * A request packet on the connection: the requester has set the path id,
 * path sequence number and timestamp, and @sport is the path's entropy.
 */
int mroce_pkt_send_path(struct mroce_qp *qp, struct sk_buff *skb,
			struct mroce_pkt_info *pi, u16 sport)
{
	mroce_pkt_neigh_confirm(qp, skb);
	return mroce_pkt_emit(qp, &qp->av, qp->dest_qpn, sport, skb, pi);
}

/*
 * Segmentation offload: write the template headers @tmpl describes in
 * front of the chunk's payload (in @skb) and hand the chunk to @xport,
 * which cuts it into c->nsegs packets (mroce_wire_seg_build()).  The
 * counters and the trace see every packet, as if each had been built
 * here.  Consumes @skb.
 */
void mroce_pkt_send_chunk(struct mroce_qp *qp,
			  const struct mroce_xport_ops *xport,
			  struct mroce_pkt_info *tmpl,
			  struct mroce_xport_chunk *c, struct sk_buff *skb)
{
	struct mroce_dev *mdev = qp->mdev;
	int hlen, i;

	tmpl->payload_len = min(c->mss, c->len);
	mroce_pkt_neigh_confirm(qp, skb);
	hlen = mroce_pkt_push_hdr(qp, qp->dest_qpn, skb, tmpl);
	if (hlen < 0)
		goto drop;
	c->hdr_len = hlen;
	c->ecn = INET_ECN_ECT_0;
	mroce_qcount(qp, MROCE_CNT_TX_PKTS, c->nsegs);
	mroce_qcount(qp, MROCE_CNT_TX_BYTES, c->nsegs * hlen + c->len);
	mroce_count(mdev, MROCE_CNT_TX_SEG_CHUNKS, 1);
	if (trace_mroce_tx_enabled()) {
		struct mroce_pkt_info pi;

		for (i = 0; i < c->nsegs; i++) {
			pi = *tmpl;
			mroce_wire_seg_info(&pi, c->mss, c->len, i, &c->seg[i]);
			trace_mroce_tx(mdev, &pi);
		}
	}
	xport->xmit_seg(mdev, &qp->av, &qp->route, c, skb);
	return;

drop:
	mroce_count(mdev, MROCE_CNT_TX_DROP, c->nsegs);
	kfree_skb(skb);
}
