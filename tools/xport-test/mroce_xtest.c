// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce_xtest: a test offload provider for mroce (tools/tests/t-44-xport.sh,
 * Documentation/offload.rst).
 *
 * It is the second user of the provider seam (mroce_xport.h): it registers
 * through the public API only, as an mlx5- or irdma-class driver would,
 * and emulates a NIC that takes over segmentation (MROCE_XPORT_CAP_SEG).
 *
 *   probe       claims the netdevs whose name starts with the module
 *               parameter claim (default "xt"); claim=* claims every one
 *   attach, detach, xmit
 *               delegate to the soft UDP provider (mroce_xport_soft()):
 *               the emulated NIC's wire is the soft provider's UDP
 *               socket.  A real NIC would not: its attach sets up its own
 *               queues and steering for the device's GIDs, its detach
 *               quiesces them, its xmit posts the packet to a send queue.
 *   xmit_seg    cuts a chunk into packets in software, as the NIC's
 *               segmentation engine would in hardware: one sk_buff per
 *               segment, its headers from mroce_wire_seg_build(), its
 *               payload copied from the chunk, each handed to the soft
 *               provider's xmit.
 *
 * Counters, read-only, in /sys/module/mroce_xtest/parameters/:
 *   xmits        packets the engine sent through xmit
 *   chunks       chunks the engine handed to xmit_seg
 *   segs         segments cut from them and handed to the wire
 *   seg_drops    segments dropped (no memory, a bad template, the wire
 *                refused them)
 *   chunk_drops  chunks dropped whole because they were malformed
 */

#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "mroce_xport.h"

static char *claim = "xt";
module_param(claim, charp, 0444);
MODULE_PARM_DESC(claim,
		 "claim netdevs whose name starts with this (\"*\": all; default \"xt\")");

static atomic64_t xtest_xmits = ATOMIC64_INIT(0);
static atomic64_t xtest_chunks = ATOMIC64_INIT(0);
static atomic64_t xtest_segs = ATOMIC64_INIT(0);
static atomic64_t xtest_seg_drops = ATOMIC64_INIT(0);
static atomic64_t xtest_chunk_drops = ATOMIC64_INIT(0);

static int xtest_counter_get(char *buf, const struct kernel_param *kp)
{
	atomic64_t *v = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%lld\n", (long long)atomic64_read(v));
}

/* no .set: writing a counter fails (the files are 0444 anyway) */
static const struct kernel_param_ops xtest_counter_ops = {
	.get = xtest_counter_get,
};

module_param_cb(xmits, &xtest_counter_ops, &xtest_xmits, 0444);
MODULE_PARM_DESC(xmits, "packets sent through xmit (read-only)");
module_param_cb(chunks, &xtest_counter_ops, &xtest_chunks, 0444);
MODULE_PARM_DESC(chunks, "chunks handed to xmit_seg (read-only)");
module_param_cb(segs, &xtest_counter_ops, &xtest_segs, 0444);
MODULE_PARM_DESC(segs, "segments cut from chunks and sent (read-only)");
module_param_cb(seg_drops, &xtest_counter_ops, &xtest_seg_drops, 0444);
MODULE_PARM_DESC(seg_drops, "segments dropped (read-only)");
module_param_cb(chunk_drops, &xtest_counter_ops, &xtest_chunk_drops, 0444);
MODULE_PARM_DESC(chunk_drops, "malformed chunks dropped whole (read-only)");

/* The soft provider, our wire; set before we register. */
static const struct mroce_xport_ops *xtest_wire;

/*
 * Headroom of a segment: the provider's view of a device is the opaque
 * struct mroce_dev, so it cannot ask for the netdev's LL_RESERVED_SPACE()
 * as mroce_pkt_alloc() does.  LL_MAX_HEADER covers the link layer of any
 * netdev this kernel knows, and the IP stack reallocates the head should
 * it not suffice; the MetaRoCE headers go into the linear part too.
 */
#define XTEST_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
			 sizeof(struct udphdr))

static bool xtest_probe(struct net_device *ndev)
{
	if (!strcmp(claim, "*"))
		return true;
	return !strncmp(ndev->name, claim, strlen(claim));
}

static int xtest_attach(struct mroce_dev *mdev)
{
	return xtest_wire->attach(mdev);
}

static void xtest_detach(struct mroce_dev *mdev)
{
	xtest_wire->detach(mdev);
}

static int xtest_xmit(struct mroce_dev *mdev, const struct mroce_av *av,
		      struct dst_cache *route, u16 sport, u8 ecn,
		      struct sk_buff *skb)
{
	atomic64_inc(&xtest_xmits);
	return xtest_wire->xmit(mdev, av, route, sport, ecn, skb);
}

/* Segment @i of chunk @c, whose template is @tmpl: an sk_buff or NULL. */
static struct sk_buff *xtest_seg(const struct mroce_xport_chunk *c,
				 const u8 *tmpl, struct sk_buff *chunk, u32 i)
{
	u32 off = i * c->mss;
	u32 plen = min(c->mss, c->len - off);
	u32 built_plen;
	struct sk_buff *skb;
	int hlen;

	skb = alloc_skb(XTEST_HEADROOM + c->hdr_len + plen, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, XTEST_HEADROOM);
	hlen = mroce_wire_seg_build(skb_put(skb, c->hdr_len), c->hdr_len,
				    tmpl, c->hdr_len, c->mss, c->len, i,
				    &c->seg[i], &built_plen);
	if (hlen != c->hdr_len || built_plen != plen)
		goto drop;
	if (skb_copy_bits(chunk, c->hdr_len + off, skb_put(skb, plen), plen))
		goto drop;
	skb->priority = chunk->priority;
	return skb;

drop:
	kfree_skb(skb);
	return NULL;
}

static int xtest_xmit_seg(struct mroce_dev *mdev, const struct mroce_av *av,
			  struct dst_cache *route,
			  const struct mroce_xport_chunk *c, struct sk_buff *chunk)
{
	u8 tmpl[MROCE_HLEN_MAX];
	struct sk_buff *skb;
	int err = 0, ret;
	u32 i;

	atomic64_inc(&xtest_chunks);
	if (!mroce_xport_chunk_ok(c, chunk) ||
	    skb_copy_bits(chunk, 0, tmpl, c->hdr_len)) {
		atomic64_inc(&xtest_chunk_drops);
		kfree_skb(chunk);
		return -EINVAL;
	}

	for (i = 0; i < c->nsegs; i++) {
		skb = xtest_seg(c, tmpl, chunk, i);
		if (!skb) {
			atomic64_inc(&xtest_seg_drops);
			if (!err)
				err = -ENOMEM;
			continue;
		}
		/* the wire consumes the segment whatever it returns */
		ret = xtest_wire->xmit(mdev, av, route, c->seg[i].sport,
				       c->ecn, skb);
		if (ret) {
			atomic64_inc(&xtest_seg_drops);
			if (!err)
				err = ret;
			continue;
		}
		atomic64_inc(&xtest_segs);
	}
	consume_skb(chunk);
	return err;
}

static struct mroce_xport_ops xtest_ops = {
	.name = "xtest",
	.owner = THIS_MODULE,
	.caps = MROCE_XPORT_CAP_SEG,
	.probe = xtest_probe,
	.attach = xtest_attach,
	.detach = xtest_detach,
	.xmit = xtest_xmit,
	.xmit_seg = xtest_xmit_seg,
};

static int __init xtest_init(void)
{
	xtest_wire = mroce_xport_soft();
	return mroce_register_offload(&xtest_ops);
}

/*
 * mroce pins this module while a device is bound to it, so no device uses
 * the provider any more when this runs.
 */
static void __exit xtest_exit(void)
{
	mroce_unregister_offload(&xtest_ops);
}

module_init(xtest_init);
module_exit(xtest_exit);

MODULE_DESCRIPTION("mroce test offload provider: emulated segmentation offload");
MODULE_LICENSE("GPL");
