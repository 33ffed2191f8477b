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

struct dst_cache;
struct mroce_av;
struct mroce_dev;

struct mroce_xport_ops {
	struct list_head list;
	const char *name;
	struct module *owner;

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
};

int mroce_register_offload(struct mroce_xport_ops *ops);
void mroce_unregister_offload(struct mroce_xport_ops *ops);

int mroce_xport_attach(struct mroce_dev *mdev);
void mroce_xport_detach(struct mroce_dev *mdev);

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
int mroce_net_init(void);
void mroce_net_exit(void);

#endif /* MROCE_XPORT_H */
