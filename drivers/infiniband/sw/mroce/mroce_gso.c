// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce GSO provider: the soft UDP provider, with each chunk of a message
 * handed to the IP stack as one UDP fraglist GSO sk_buff.
 *
 * The model.  A chunk (MROCE_XPORT_CAP_SEG) is up to MROCE_XPORT_SEG_MAX
 * packets of one SEND or WRITE.  This provider builds every packet whole
 * (its MetaRoCE header from mroce_wire_seg_build(), its payload as page
 * fragments of the chunk's when the requester sent it zero-copy, its UDP
 * header, its IPv4 header) and chains packets 1..n-1 on packet 0's
 * frag_list, marked SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST.  The stack routes,
 * filters, queues and resolves the neighbour once per chunk.  Where the
 * skb has to become packets, the kernel's fraglist segmentation
 * (skb_segment_list()) unchains them, keeping each one's own headers (it
 * fixes the IPv4 id, length and header checksum): on transmit, when the
 * netdev cannot take fraglist GSO (virtio-net, physical NICs).  A veth
 * carries the chain whole into the peer namespace, where the receiving
 * mroce socket takes it whole too (marked a UDP tunnel type, which the
 * UDP layer hands an encapsulation socket uncut) and unchains it itself
 * (mroce_gro_unchain()): one trip up the IP and UDP layers for the
 * chunk, and one QP lookup and one ACK decision for its packets
 * (rx_gso_skbs, rx_gso_pkts).
 *
 * What the kernel's fraglist segmentation (__udp_gso_segment_list())
 * takes for granted, and how each holds here:
 *  - every segment carries the head's UDP ports (it rewrites the others'
 *    if the first two differ): a chunk runs on one path
 *    (MROCE_XPORT_CAP_SEG_PATH); a chunk that does not is sent in runs;
 *  - the head's UDP payload is exactly gso_size (else it linearizes and
 *    cuts by size): gso_size is packet 0's UDP payload, which is the
 *    chunk's largest (the template's header, a full mss);
 *  - checksums are not completed after segmentation: when the egress
 *    device offloads IPv4 checksums, every packet is CHECKSUM_PARTIAL
 *    with its own pseudo-header seed (the head's for its own length);
 *    else every UDP checksum is complete when built (the skb is
 *    CHECKSUM_UNNECESSARY).  A device whose offload is switched off
 *    while a chunk is in flight gets that chunk's checksums wrong: the
 *    receiver drops it, loss recovery resends it;
 *  - the head's IPv4 total length covers the chain: at most
 *    MROCE_GSO_MAX_BYTES per skb, a longer chunk is sent as several.
 *
 * IPv6, loopback destinations and chunks of one packet take the soft
 * provider's path, one packet at a time.  Receiving is the soft
 * provider's.
 *
 * Which devices: those on a netdev the module parameter gso names (name
 * prefixes, "*" for all, "auto" for every veth: the default), chosen when
 * the device is added.  Why veth by default: it carries the chunk whole to
 * the receiving mroce, which is where the provider pays (write_bw 64 KiB
 * about +40 % for about a quarter less CPU per byte,
 * Documentation/bench/2026-12-07-gso-whole.md); between two guests over
 * virtio-net, which cuts it on transmit, it measured no better than the
 * soft provider, and on the device loopback (dummy) it would only add
 * the chunk's bookkeeping.
 */

#include <linux/ip.h>
#include <linux/udp.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip_tunnels.h>
#include <net/udp.h>

#include "mroce.h"
#include "mroce_net.h"

/* The IPv4 total length of one GSO skb (its head's header covers all). */
#define MROCE_GSO_MAX_BYTES	(U16_MAX - sizeof(struct iphdr))

static char *gso = "auto";
module_param(gso, charp, 0644);
MODULE_PARM_DESC(gso, "netdevs whose mroce devices send chunks as UDP fraglist GSO: name prefixes separated by commas, * for all, auto for veths (default: auto, \"\" for none); read when a device is added");

/* "auto": a veth, which carries a chunk whole to the peer namespace. */
static bool mroce_gso_auto(const struct net_device *ndev)
{
	return ndev->rtnl_link_ops &&
	       !strcmp(ndev->rtnl_link_ops->kind, "veth");
}

static bool mroce_gso_probe(struct net_device *ndev)
{
	const char *p, *end;
	bool match = false;
	size_t len;

	kernel_param_lock(THIS_MODULE);
	for (p = gso; *p && !match; p = *end ? end + 1 : end) {
		/* "echo veth >" leaves its newline: a separator too */
		len = strcspn(p, ", \t\n");
		end = p + len;
		if (len == 1 && *p == '*')
			match = true;
		else if (len == 4 && !strncmp(p, "auto", len))
			match = mroce_gso_auto(ndev);
		else if (len && !strncmp(ndev->name, p, len))
			match = true;
	}
	kernel_param_unlock(THIS_MODULE);
	return match;
}

/*
 * Reference bytes [@off, @off + @len) of @from, which lie in its page
 * fragments, as page fragments of @to (no copy; each takes a page
 * reference, as skb_segment() does).
 */
static int mroce_gso_ref_frags(struct sk_buff *to, const struct sk_buff *from,
			       u32 off, u32 len)
{
	const struct skb_shared_info *sh = skb_shinfo(from);
	u32 pos = skb_headlen(from), fsz, fo, n;
	int i;

	skb_shinfo(to)->flags |= sh->flags & SKBFL_SHARED_FRAG;
	for (i = 0; i < sh->nr_frags && len; i++, pos += fsz) {
		const skb_frag_t *f = &sh->frags[i];

		fsz = skb_frag_size(f);
		if (off >= pos + fsz)
			continue;
		if (skb_shinfo(to)->nr_frags >= MAX_SKB_FRAGS)
			return -EMSGSIZE;
		fo = off - pos;
		n = min(fsz - fo, len);
		get_page(skb_frag_page(f));
		skb_fill_page_desc(to, skb_shinfo(to)->nr_frags,
				   skb_frag_page(f), skb_frag_off(f) + fo, n);
		skb_len_add(to, n);
		off += n;
		len -= n;
	}
	return len ? -EINVAL : 0;
}

/*
 * Packet @i of chunk @c (template @tmpl, payload in @chunk): headroom
 * @room, the MetaRoCE header, then the payload, as page fragments of the
 * chunk's when it has them and @frags_ok (zero-copy transmit), else
 * copied.  With @csum, *@csum gets the checksum of header and payload
 * (computed while copying, or over the fragments).
 */
static struct sk_buff *mroce_gso_seg(const struct mroce_xport_chunk *c,
				     const u8 *tmpl, struct sk_buff *chunk,
				     u32 i, unsigned int room, bool frags_ok,
				     __wsum *csum)
{
	u32 off = c->hdr_len + i * c->mss, built;
	u32 plen = min(c->mss, c->len - i * c->mss);
	bool frags = frags_ok && off >= skb_headlen(chunk);
	struct sk_buff *skb;
	__wsum pcsum = 0;
	void *hdr;
	int hlen;

	skb = alloc_skb(room + c->hdr_len + (frags ? 0 : plen), GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, room);
	hdr = skb_put(skb, c->hdr_len);
	hlen = mroce_wire_seg_build(hdr, c->hdr_len, tmpl, c->hdr_len, c->mss,
				    c->len, i, &c->seg[i], &built);
	if (hlen != c->hdr_len || built != plen)
		goto drop;
	if (frags) {
		if (mroce_gso_ref_frags(skb, chunk, off, plen))
			goto drop;
		if (csum)
			pcsum = skb_checksum(skb, hlen, plen, 0);
	} else if (csum) {
		pcsum = skb_copy_and_csum_bits(chunk, off, skb_put(skb, plen),
					       plen);
	} else if (skb_copy_bits(chunk, off, skb_put(skb, plen), plen)) {
		goto drop;
	}
	if (csum)
		*csum = csum_block_add(csum_partial(hdr, hlen, 0), pcsum, hlen);
	skb->priority = chunk->priority;
	return skb;

drop:
	kfree_skb(skb);
	return NULL;
}

/*
 * Put a UDP header in front of @skb's data: with @csum, a complete
 * checksum; without, CHECKSUM_PARTIAL (the checksum field seeded with the
 * pseudo-header's sum, for the NIC or the stack to complete).
 */
static void mroce_gso_push_udp(struct sk_buff *skb, __be32 saddr,
			       __be32 daddr, __be16 sport, const __wsum *csum)
{
	unsigned int ulen = sizeof(struct udphdr) + skb->len;
	struct udphdr *uh = __skb_push(skb, sizeof(*uh));

	uh->source = sport;
	uh->dest = mroce_net_port();
	uh->len = htons(ulen);
	skb_reset_transport_header(skb);
	if (!csum) {
		uh->check = ~udp_v4_check(ulen, saddr, daddr, 0);
		skb->ip_summed = CHECKSUM_PARTIAL;
		skb->csum_start = skb_transport_header(skb) - skb->head;
		skb->csum_offset = offsetof(struct udphdr, check);
		return;
	}
	uh->check = 0;
	uh->check = udp_v4_check(ulen, saddr, daddr,
				 csum_partial(uh, sizeof(*uh), *csum));
	if (!uh->check)
		uh->check = CSUM_MANGLED_0;
}

struct mroce_gso_ctx {
	struct mroce_dev *mdev;
	const struct mroce_av *av;
	struct mroce_sockset *set;
	struct dst_cache *route;
	const struct mroce_xport_chunk *c;
	const u8 *tmpl;
	struct sk_buff *chunk;
	unsigned int room;	/* headroom of every packet */
	bool frags_ok;		/* the netdev takes page fragments as they are */
	u8 tos;
};

/*
 * Send packets @first .. @first + @n - 1 of the chunk (n >= 2, one source
 * port) as one fraglist GSO skb.  Returns the packets sent (all or none).
 */
static u32 mroce_gso_send(struct mroce_gso_ctx *x, u32 first, u32 n)
{
	const struct mroce_xport_chunk *c = x->c;
	__be16 sport = htons(c->seg[first].sport);
	__be32 daddr = x->av->daddr.v4.sin_addr.s_addr;
	struct sk_buff *head = NULL, *tail = NULL, *skb;
	unsigned int seg0 = 0;
	struct rtable *rt;
	struct iphdr *iph;
	bool partial;
	__be16 df;
	__be32 saddr;
	__wsum csum;
	u8 ttl;
	u32 i;

	rt = mroce_net_route4(x->mdev, x->set, x->av, x->route, sport, &saddr);
	if (IS_ERR(rt))
		return 0;
	ttl = x->av->hop_limit ?: ip4_dst_hoplimit(&rt->dst);
	df = ip_mtu_locked(&rt->dst) ? 0 : htons(IP_DF);	/* as the head's */
	/*
	 * Checksums: the segmentation leaves them as they are, so complete
	 * them here unless the egress device will (IPv4 checksum offload;
	 * a veth or lo hands CHECKSUM_PARTIAL to the peer as verified).
	 */
	partial = rt->dst.dev->features & (NETIF_F_HW_CSUM | NETIF_F_IP_CSUM);
	for (i = first; i < first + n; i++) {
		skb = mroce_gso_seg(c, x->tmpl, x->chunk, i, x->room,
				    x->frags_ok, partial ? NULL : &csum);
		if (!skb)
			goto drop;
		mroce_gso_push_udp(skb, saddr, daddr, sport,
				   partial ? NULL : &csum);
		if (!head) {
			head = skb;
			/* its UDP payload, linear and fragments */
			seg0 = head->len - sizeof(struct udphdr);
			continue;
		}
		/*
		 * A chained packet: its own IPv4 header (id, total length
		 * and header checksum are the segmentation's), data left at
		 * its UDP payload as the GSO skb's length counts it.
		 */
		iph = __skb_push(skb, sizeof(*iph));
		*iph = (struct iphdr) {
			.version = 4,
			.ihl = sizeof(*iph) / 4,
			.tos = x->tos,
			.frag_off = df,
			.ttl = ttl,
			.protocol = IPPROTO_UDP,
			.saddr = saddr,
			.daddr = daddr,
		};
		skb_reset_network_header(skb);
		__skb_pull(skb, sizeof(*iph) + sizeof(struct udphdr));
		if (tail)
			tail->next = skb;
		else
			skb_shinfo(head)->frag_list = skb;
		tail = skb;
		head->len += skb->len;
		head->data_len += skb->len;
		head->truesize += skb->truesize;
	}
	/* the head's UDP header covers the chain until it is cut */
	udp_hdr(head)->len = htons(head->len);
	if (!partial)
		head->ip_summed = CHECKSUM_UNNECESSARY;
	/*
	 * UDP_TUNNEL_CSUM has a receiving mroce socket take the chunk whole
	 * (udp_unexpected_gso()); with skb->encapsulation clear, anything
	 * that must cut it still does so as UDP_L4 | FRAGLIST.
	 */
	skb_shinfo(head)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST |
				     SKB_GSO_UDP_TUNNEL_CSUM;
	skb_shinfo(head)->gso_size = seg0;
	skb_shinfo(head)->gso_segs = n;
	/* consumes @head and the route; no device: mroce counts its own */
	iptunnel_xmit(x->set->sock4->sk, rt, head, saddr, daddr, IPPROTO_UDP,
		      x->tos, ttl, htons(IP_DF), false);
	mroce_count(x->mdev, MROCE_CNT_TX_GSO_SKBS, 1);
	return n;

drop:
	kfree_skb(head);	/* and its chain */
	ip_rt_put(rt);
	return 0;
}

/*
 * Packet @i alone, through the soft provider.  False if it could not be
 * built (a drop the soft provider did not count).
 */
static bool mroce_gso_send_one(struct mroce_gso_ctx *x, u32 i)
{
	struct sk_buff *skb;

	skb = mroce_gso_seg(x->c, x->tmpl, x->chunk, i, x->room, x->frags_ok,
			    NULL);
	if (!skb)
		return false;
	/* consumed, and counted if dropped, whatever it returns */
	mroce_soft_xmit(x->mdev, x->av, x->route, x->c->seg[i].sport,
			x->c->ecn, skb);
	return true;
}

/*
 * How many packets from @first on may share one GSO skb: one source port,
 * the IPv4 total length of the whole.
 */
static u32 mroce_gso_run(const struct mroce_xport_chunk *c, u32 first)
{
	u32 pkt = sizeof(struct udphdr) + c->hdr_len + c->mss;
	u32 max = MROCE_GSO_MAX_BYTES / pkt, n = 1;

	while (first + n < c->nsegs && n < max &&
	       c->seg[first + n].sport == c->seg[first].sport)
		n++;
	return n;
}

static int mroce_gso_xmit_seg(struct mroce_dev *mdev,
			      const struct mroce_av *av,
			      struct dst_cache *route,
			      const struct mroce_xport_chunk *c,
			      struct sk_buff *chunk)
{
	u8 tmpl[MROCE_HLEN_MAX];
	struct mroce_gso_ctx x = {
		.mdev = mdev,
		.av = av,
		.route = route,
		.c = c,
		.tmpl = tmpl,
		.chunk = chunk,
		.room = LL_MAX_HEADER + sizeof(struct ipv6hdr) +
			sizeof(struct udphdr),
	};
	u32 i, n, sent, lost = 0;
	bool whole;

	if (!mroce_xport_chunk_ok(c, chunk) ||
	    skb_copy_bits(chunk, 0, tmpl, c->hdr_len)) {
		mroce_count(mdev, MROCE_CNT_TX_DROP, c->nsegs);
		kfree_skb(chunk);
		return -EINVAL;
	}
	whole = av->family == AF_INET && !mroce_net_loop_av(av);
	/* the stack would copy fragments into each cut packet: copy here */
	x.frags_ok = mroce_av_frags_pay(mdev, av);
	x.tos = (av->tclass & ~INET_ECN_MASK) | c->ecn;
	rcu_read_lock_bh();
	x.set = READ_ONCE(mdev->xport_priv);
	if (!x.set) {
		lost = c->nsegs;
		goto out;
	}
	for (i = 0; i < c->nsegs; i += n) {
		n = whole ? mroce_gso_run(c, i) : 1;
		if (n == 1) {
			lost += !mroce_gso_send_one(&x, i);
			continue;
		}
		sent = mroce_gso_send(&x, i, n);
		lost += n - sent;
	}
out:
	rcu_read_unlock_bh();
	consume_skb(chunk);
	if (lost)
		mroce_count(mdev, MROCE_CNT_TX_DROP, lost);
	return lost ? -ENOBUFS : 0;
}

const struct mroce_xport_ops mroce_gso_xport = {
	.name = "gso",
	.caps = MROCE_XPORT_CAP_SEG | MROCE_XPORT_CAP_SEG_PATH,
	.probe = mroce_gso_probe,
	.attach = mroce_soft_attach,
	.detach = mroce_soft_detach,
	.xmit = mroce_soft_xmit,
	.xmit_seg = mroce_gso_xmit_seg,
};
