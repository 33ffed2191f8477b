/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the soft UDP provider (mroce_net.c) shares with the GSO provider
 * (mroce_gso.c), which sends through the same sockets and routes.
 */
#ifndef MROCE_NET_H
#define MROCE_NET_H

#include <linux/netdevice.h>
#include <net/route.h>

struct dst_cache;
struct mroce_av;
struct mroce_dev;

/* One per network namespace: the MetaRoCE port's sockets. */
struct mroce_sockset {
	struct net *net;
	struct socket *sock4;
	struct socket *sock6;		/* NULL when IPv6 is disabled */
	struct hlist_head devs;		/* attached mroce_devs, RCU */
	unsigned int users;
};

/* The MetaRoCE UDP destination port (module parameter udp_port). */
__be16 mroce_net_port(void);

/* Is @av's destination the device's own address (the loopback queue)? */
bool mroce_net_loop_av(const struct mroce_av *av);

/*
 * The IPv4 route out of @mdev's netdev to @av for source port @sport,
 * from @route when it is still valid; *@saddr gets the source address.
 * A reference the caller passes on (to the sk_buff) or drops.  Under
 * rcu_read_lock_bh().
 */
struct rtable *mroce_net_route4(struct mroce_dev *mdev,
				struct mroce_sockset *set,
				const struct mroce_av *av,
				struct dst_cache *route, __be16 sport,
				__be32 *saddr);

/* The soft provider's ops (struct mroce_xport_ops). */
int mroce_soft_attach(struct mroce_dev *mdev);
void mroce_soft_detach(struct mroce_dev *mdev);
int mroce_soft_xmit(struct mroce_dev *mdev, const struct mroce_av *av,
		    struct dst_cache *route, u16 sport, u8 ecn,
		    struct sk_buff *skb);

/*
 * GRO on the MetaRoCE sockets (mroce_gro.c): udp_tunnel_sock_cfg's
 * gro_receive and gro_complete, and taking a batch apart in encap_rcv.
 */
struct sk_buff *mroce_gro_receive(struct sock *sk, struct list_head *head,
				  struct sk_buff *skb);
int mroce_gro_complete(struct sock *sk, struct sk_buff *skb, int nhoff);
int mroce_gro_unchain(struct sk_buff *skb);	/* packets, or -ENOMEM */

/*
 * The packets of a GRO batch, @skb and those on its ->next (mroce_recv.c).
 * Consumes them all.
 */
void mroce_xport_rcv_list(struct mroce_dev *mdev, struct sk_buff *skb);

/* The GSO provider (mroce_gso.c): devices of the netdevs it claims. */
extern const struct mroce_xport_ops mroce_gso_xport;

#endif /* MROCE_NET_H */
