/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce packet I/O providers.
 *
 * Every MetaRoCE packet enters and leaves a device through one
 * struct mroce_xport_ops.  The soft provider (mroce_net.c) carries packets
 * in UDP over the netdev's network namespace; a capable NIC driver (mlx5,
 * irdma, ...) may register an offload provider that claims the netdevs it
 * drives.  The protocol engine above never knows which one it talks to.
 */
#ifndef MROCE_XPORT_H
#define MROCE_XPORT_H

#include <linux/list.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "mroce_wire.h"

struct dst_cache;
struct mroce_av;
struct mroce_dev;

/*
 * What a provider takes over from the host (ops->caps).  The protocol
 * state machines (PSN window, SACK scoreboard, loss detection, timers,
 * congestion control, path choice) stay on the host either way; a
 * capability moves per-packet work to the provider.  Documentation/
 * offload.rst says which a NIC would implement and how.
 *
 * MROCE_XPORT_CAP_SEG: the provider cuts message chunks into packets
 *	(ops->xmit_seg, mroce_wire_seg_build()), as TSO does for TCP.  The
 *	requester then builds one sk_buff per run of a message's packets
 *	instead of one per packet.
 */
#define MROCE_XPORT_CAP_SEG		BIT(0)

/*
 * MROCE_XPORT_CAP_SEG_PATH (with CAP_SEG): every segment of a chunk must
 *	leave on the chunk's first path, with its UDP source port, as the
 *	kernel's UDP fraglist GSO sends them (the GSO provider, mroce_gso.c).
 *	The requester then keeps a chunk on one path: it asks the path
 *	table for that path again (mroce_paths_pick_again(), which keeps
 *	the weights' shares) and starts a new chunk when the path has no
 *	room.  Spraying becomes per burst of up to MROCE_XPORT_SEG_MAX
 *	packets instead of per packet.
 */
#define MROCE_XPORT_CAP_SEG_PATH	BIT(1)

/* The most segments one chunk may hold (64 KiB of 4 KiB packets). */
#define MROCE_XPORT_SEG_MAX		16

/*
 * A chunk handed to ops->xmit_seg: segment i of the sk_buff (headers of
 * the template, then @len payload bytes) goes out with seg[i]'s flags,
 * path and UDP source port (mroce_wire.h, "Segmentation").
 */
struct mroce_xport_chunk {
	u32 mss;		/* payload bytes per segment, the last fewer */
	u32 len;		/* payload bytes of the chunk */
	u8 hdr_len;		/* bytes of template headers at skb->data */
	u8 nsegs;		/* 1 .. MROCE_XPORT_SEG_MAX */
	u8 ecn;			/* IP ECN codepoint of every segment */
	struct mroce_wire_seg seg[MROCE_XPORT_SEG_MAX];
};

struct mroce_xport_ops {
	struct list_head list;
	const char *name;
	struct module *owner;
	u32 caps;		/* MROCE_XPORT_CAP_* */

	/* Offload providers only: true if this provider drives @ndev. */
	bool (*probe)(struct net_device *ndev);

	/* Bind @mdev to the provider; may sleep.  Called before the
	 * ib_device is registered.
	 */
	int (*attach)(struct mroce_dev *mdev);

	/* Stop delivering packets to @mdev; after return no receive
	 * callback for @mdev is running or will run.  May be called under
	 * RTNL (netdev unregister) and must tolerate a second call.
	 */
	void (*detach)(struct mroce_dev *mdev);

	/* Send one packet (skb->data at the MetaRoCE header, headroom for
	 * the outer headers reserved) along @av with UDP source port
	 * @sport and IP ECN codepoint @ecn.  Consumes @skb.  Softirq or
	 * process context, bottom halves off.  @route, if not NULL, is
	 * the QP's cache for routes to @av, which the provider may use (and
	 * must revalidate) instead of a lookup per packet; NULL for
	 * datagrams, whose address changes per WQE.
	 */
	int (*xmit)(struct mroce_dev *mdev, const struct mroce_av *av,
		    struct dst_cache *route, u16 sport, u8 ecn,
		    struct sk_buff *skb);

	/* MROCE_XPORT_CAP_SEG: send the nsegs packets of chunk @c, whose
	 * template headers start at skb->data (payload after them, linear
	 * or in page fragments), along @av; @route as for xmit.  Consumes
	 * @skb.  Same context as xmit.  A segment the provider cannot send
	 * is dropped and counted, as xmit drops a packet: the requester's
	 * loss recovery resends it.
	 */
	int (*xmit_seg)(struct mroce_dev *mdev, const struct mroce_av *av,
			struct dst_cache *route,
			const struct mroce_xport_chunk *c, struct sk_buff *skb);
};

/*
 * Is chunk @c with sk_buff @skb one the requester builds: 1 ..
 * MROCE_XPORT_SEG_MAX segments, template headers of at most
 * MROCE_HLEN_MAX bytes, @skb holding them and c->len payload bytes, which
 * cut by c->mss give c->nsegs segments?  A provider drops (and counts)
 * any other, never warns.
 */
bool mroce_xport_chunk_ok(const struct mroce_xport_chunk *c,
			  const struct sk_buff *skb);

int mroce_register_offload(struct mroce_xport_ops *ops);
void mroce_unregister_offload(struct mroce_xport_ops *ops);

int mroce_xport_attach(struct mroce_dev *mdev);
void mroce_xport_detach(struct mroce_dev *mdev);
void mroce_xport_detach_netdev(struct net_device *ndev);

/* Providers hand every received MetaRoCE packet (data at the MetaRoCE
 * header, network and transport headers set) to this function, in softirq
 * context.  It consumes @skb.
 */
/*
 * What a provider tells the receive path besides the packet: the UDP
 * source port it arrived with (answers are sent with the same entropy,
 * so they follow the sender's choice of path).
 */
struct mroce_skb_cb {
	u16 sport;
};

#define MROCE_SKB_CB(skb)	((struct mroce_skb_cb *)(skb)->cb)

void mroce_xport_rcv(struct mroce_dev *mdev, struct sk_buff *skb);

/* The soft UDP provider, always present (mroce_net.c). */
extern const struct mroce_xport_ops mroce_soft_xport;

/*
 * The soft provider, for a provider that emulates a NIC on top of it (the
 * test provider in tools/xport-test): its attach, detach and xmit carry
 * packets in UDP as the soft provider's do.
 */
const struct mroce_xport_ops *mroce_xport_soft(void);
int mroce_net_init(void);
void mroce_net_exit(void);

#endif /* MROCE_XPORT_H */
