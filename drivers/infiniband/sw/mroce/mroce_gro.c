// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce GRO: receive batching on the MetaRoCE UDP port.
 *
 * A NAPI netdev (virtio-net, a physical NIC, veth with GRO on) hands its
 * packets to GRO, which lets the UDP socket that owns a port merge them
 * (udp_tunnel_sock_cfg.gro_receive).  mroce merges a flow's packets of
 * one poll (the same addresses, UDP ports, TOS and TTL, so the same path
 * and the same ECN mark) by chaining each, whole, on the first one's
 * frag_list: the batch goes up the IP stack and through the socket
 * lookup once, and mroce_udp_rcv() takes the packets off the chain and
 * hands them to mroce_xport_rcv_list(), which looks each run of one QP's
 * packets up once and takes one ACK decision per run.
 *
 * Why not the kernel's own UDP GRO (the UDP_GRO socket option)?  It
 * merges only packets whose IPv4 IDs follow each other, and the IDs of a
 * sprayed connection's packets interleave over its paths (one counter
 * per address pair, sixteen source ports); and an encapsulation socket
 * is handed its packets one by one again.  Here the IP ID is not looked
 * at, and every packet keeps its own headers, length and checksum state.
 *
 * What is merged is checked first, since GRO runs before routing:
 *   - the packet carries a UDP checksum, verified by GRO (udp_gro_receive
 *     merges nothing else); packets without one go up alone and are
 *     dropped and counted as they are today (rx_drop_no_csum);
 *   - its UDP and IPv4 lengths are its own: the IP and UDP layers never
 *     trim a chained packet;
 *   - it is addressed to this host (an IPv4 address of a local device)
 *     and arrived on a netdev with an mroce device: a batch is never
 *     forwarded, since the stack could not cut it back into packets;
 *   - the batch stays under 64 KiB, the IPv4 total length.
 * IPv6 is not merged.
 */

#include <linux/inetdevice.h>
#include <net/gro.h>
#include <net/udp.h>

#include "mroce.h"
#include "mroce_net.h"

/* A batch's bytes from its IP header on: IPv4's total length. */
static const unsigned int mroce_gro_max_len = 65535;

/* Is the packet for this host, on a netdev with an mroce device? */
static bool mroce_gro_ours(struct sock *sk, struct sk_buff *skb)
{
	struct mroce_sockset *set = rcu_dereference_sk_user_data(sk);
	const struct iphdr *iph = skb_gro_network_header(skb);
	struct mroce_dev *mdev;

	if (!set || NAPI_GRO_CB(skb)->is_ipv6)
		return false;
	if (!__ip_dev_find(set->net, iph->daddr, false))
		return false;
	hlist_for_each_entry_rcu(mdev, &set->devs, xport_node)
		if (mdev->ndev == skb->dev)
			return true;
	return false;
}

/*
 * Chain @skb, whole, after the packets of batch @p; its headers stay in
 * its headroom, its data starts at its MetaRoCE header.
 */
static int mroce_gro_chain(struct sk_buff *p, struct sk_buff *skb)
{
	unsigned int off = skb_gro_offset(skb);

	/* p->len counts from the IP header, or from before it */
	if (p->len + skb_gro_len(skb) > mroce_gro_max_len)
		return -E2BIG;
	/* a chained packet's headers must be in its linear part */
	if (!pskb_may_pull(skb, off))
		return -ENOMEM;
	if (NAPI_GRO_CB(p)->last == p)
		skb_shinfo(p)->frag_list = skb;
	else
		NAPI_GRO_CB(p)->last->next = skb;
	/*
	 * Its own headers, for the receive path (ECN, source check):
	 * inet_gro_receive() merges only 20-byte IPv4 headers.
	 */
	skb_set_transport_header(skb, off - sizeof(struct udphdr));
	skb_set_network_header(skb, off - sizeof(struct udphdr) -
			       sizeof(struct iphdr));
	__skb_pull(skb, off);
	NAPI_GRO_CB(p)->last = skb;
	NAPI_GRO_CB(p)->count++;
	p->data_len += skb->len;
	p->len += skb->len;
	p->truesize += skb->truesize;
	skb->destructor = NULL;
	skb->sk = NULL;
	skb_shinfo(p)->flags |= skb_shinfo(skb)->flags & SKBFL_SHARED_FRAG;
	NAPI_GRO_CB(skb)->same_flow = 1;
	return 0;
}

/*
 * udp_tunnel gro_receive, from udp_gro_receive() with the UDP header
 * pulled: skb_gro_offset() is the MetaRoCE header.  Returns the batch to
 * complete now, if any; @skb is merged (same_flow), starts a batch, or
 * with flush set goes up alone.
 */
struct sk_buff *mroce_gro_receive(struct sock *sk, struct list_head *head,
				  struct sk_buff *skb)
{
	unsigned int off = skb_gro_offset(skb);
	const struct udphdr *uh;
	struct sk_buff *p;
	int err;

	if (!mroce_gro_ours(sk, skb))
		goto alone;
	/*
	 * A checksum, and a UDP length that is the packet's: a chained
	 * packet is never trimmed by the IP and UDP layers.  (An IPv4 total
	 * length that is not, or a fragment, inet_gro_receive() flushes.)
	 */
	uh = skb_gro_header(skb, off, off - sizeof(*uh));
	if (!uh || !uh->check ||
	    ntohs(uh->len) != sizeof(*uh) + skb_gro_len(skb))
		goto alone;
	list_for_each_entry(p, head, list) {
		if (!NAPI_GRO_CB(p)->same_flow)
			continue;
		/* the TTL, TOS or DF changed (inet_gro_receive), or @skb
		 * may not be merged: the batch so far goes up now
		 */
		if (NAPI_GRO_CB(p)->flush || NAPI_GRO_CB(skb)->flush)
			return p;
		err = mroce_gro_chain(p, skb);
		if (err == -E2BIG)
			return p;	/* full; @skb starts the next batch */
		if (err)
			goto alone;
		return NULL;
	}
	return NULL;
alone:
	NAPI_GRO_CB(skb)->flush = 1;
	return NULL;
}

/*
 * udp_tunnel gro_complete: udp_gro_complete() has set the UDP length and
 * the GSO type (UDP_TUNNEL_CSUM, which has the UDP layer hand the batch
 * to mroce_udp_rcv() whole).  Every packet's checksum was verified as it
 * was merged; the batch's own is not computed again.
 */
int mroce_gro_complete(struct sock *sk, struct sk_buff *skb, int nhoff)
{
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb->csum_level = 0;
	return 0;
}

/*
 * Take a batch (or a GSO provider's chunk, which has the same shape) apart:
 * @skb keeps its own packet, the chained ones follow it on ->next (each
 * with its own headers, data at its MetaRoCE header, and @skb's source
 * port and protocol: one flow).
 * The batch may be shared with a packet tap: the head's shared info is
 * made private first, and a chained packet still held elsewhere is
 * replaced by a clone.  Returns the number of packets, or -ENOMEM with
 * @skb and its chain freed.
 */
int mroce_gro_unchain(struct sk_buff *skb)
{
	struct sk_buff *list, *n, *next, **tail = &skb->next;
	int pkts = 1;

	if (skb_unclone(skb, GFP_ATOMIC)) {
		kfree_skb(skb);
		return -ENOMEM;
	}
	list = skb_shinfo(skb)->frag_list;
	skb_shinfo(skb)->frag_list = NULL;
	skb_shinfo(skb)->gso_size = 0;
	skb_shinfo(skb)->gso_segs = 0;
	skb_shinfo(skb)->gso_type = 0;
	skb->next = NULL;
	for (n = list; n; n = next) {
		next = n->next;
		skb->len -= n->len;
		skb->data_len -= n->len;
		skb->truesize -= n->truesize;
		/*
		 * A shared packet stays as it is, ->next included: the
		 * other holder's frag_list runs through it.
		 */
		if (skb_shared(n)) {
			struct sk_buff *c = skb_clone(n, GFP_ATOMIC);

			consume_skb(n);
			n = c;
			if (!n)
				continue;
		}
		n->next = NULL;
		/* a GSO provider's chained packet was never set these */
		n->protocol = skb->protocol;
		MROCE_SKB_CB(n)->sport = MROCE_SKB_CB(skb)->sport;
		*tail = n;
		tail = &n->next;
		pkts++;
	}
	return pkts;
}
