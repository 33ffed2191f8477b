// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce soft packet I/O: MetaRoCE over UDP sockets, one socket set per
 * network namespace.
 *
 * A device lives in the namespace of its netdev, so its packets must be
 * sent and received by sockets of that namespace (rxe in Linux 6.1 only
 * has init_net sockets, which is why two rxe devices cannot talk over a
 * veth pair between namespaces).
 *
 * The MetaRoCE port belongs to the module in every namespace, as a RoCE
 * NIC owns 4791 and rxe binds it at load: the set is bound when the
 * namespace is created (for those that exist, when the module loads),
 * before any process there could take the port and receive, or refuse,
 * our peers' packets.  If a process held it already at load, the set is
 * created when a device attaches instead (which fails while it is taken).
 * The set lives as long as its namespace; kernel sockets do not pin
 * their namespace, and every device detaches on NETDEV_UNREGISTER, which
 * the namespace's teardown sends before it reaches our pernet exit.
 */

#include <linux/inetdevice.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <net/addrconf.h>
#include <net/inet_ecn.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>

#include "mroce.h"
#include "mroce_net.h"

static unsigned short udp_port = 4792;
module_param(udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port, "UDP destination port of MetaRoCE packets (default 4792)");

/*
 * Off by default: under TCG no gain has been measured yet (see
 * Documentation/bench/2026-12-06-gro.md).
 */
static bool gro;
module_param(gro, bool, 0444);
MODULE_PARM_DESC(gro, "Merge MetaRoCE packets in GRO (IPv4, default off)");

struct mroce_net {
	struct mroce_sockset *set;	/* under mroce_net_mutex */
};

static unsigned int mroce_net_id __read_mostly;
static DEFINE_MUTEX(mroce_net_mutex);

/*
 * Which device does a packet belong to?  The netdev it arrived on, or for
 * traffic between two local addresses (it arrives on lo), the netdev that
 * owns the destination address.
 */
static struct mroce_dev *mroce_sockset_find(struct mroce_sockset *set,
					    struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct mroce_dev *mdev;

	if (ndev && (ndev->flags & IFF_LOOPBACK)) {
		if (ip_hdr(skb)->version == 4)
			ndev = __ip_dev_find(set->net, ip_hdr(skb)->daddr, false);
#if IS_ENABLED(CONFIG_IPV6)
		else
			ndev = ipv6_dev_find(set->net, &ipv6_hdr(skb)->daddr,
					     NULL);
#endif
	}
	hlist_for_each_entry_rcu(mdev, &set->devs, xport_node)
		if (mdev->ndev == ndev)
			return mdev;
	return NULL;
}

/*
 * UDP encap_rcv: softirq, checksum already verified by the UDP layer, or
 * for a GRO batch (mroce_gro.c) every packet's as it was merged.
 */
static int mroce_udp_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct mroce_sockset *set = rcu_dereference_sk_user_data(sk);
	struct mroce_dev *mdev;
	bool chunk;
	int pkts;

	if (!set)
		goto drop;
	mdev = mroce_sockset_find(set, skb);
	if (!mdev)
		goto drop;
	/* The UDP checksum is MetaRoCE's only integrity check: a packet
	 * without one (legal in UDP over IPv4) is dropped.  The IPv6 socket
	 * has zero checksums refused by the stack already.
	 */
	if (!udp_hdr(skb)->check) {
		mroce_count(mdev, MROCE_CNT_RX_DROP_NO_CSUM, 1);
		goto drop;
	}
	/* Strip the UDP header: providers hand over the MetaRoCE header,
	 * with the source port (path entropy) in the control block.
	 */
	MROCE_SKB_CB(skb)->sport = ntohs(udp_hdr(skb)->source);
	__skb_pull(skb, sizeof(struct udphdr));
	skb_reset_transport_header(skb);
	if (!skb_is_gso(skb)) {
		mroce_xport_rcv(mdev, skb);
		return 0;
	}
	/*
	 * The UDP layer hands an encapsulation socket only GSO skbs of a
	 * tunnel type whole (udp_unexpected_gso()), with their packets on
	 * the frag_list: a batch of mroce_gro_receive(), or a chunk of the
	 * GSO provider (mroce_gso.c) of an mroce device on this host, which
	 * a veth carried whole (also UDP_L4 and FRAGLIST, which this socket
	 * accepts).  Any other (a local sender's) is not ours.
	 */
	if (!skb_has_frag_list(skb)) {
		mroce_count(mdev, MROCE_CNT_RX_DROP_GSO, 1);
		goto drop;
	}
	chunk = skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST;
	pkts = mroce_gro_unchain(skb);
	if (pkts < 0)
		return 0;
	mroce_count(mdev, chunk ? MROCE_CNT_RX_GSO_SKBS :
				  MROCE_CNT_RX_GRO_SKBS, 1);
	mroce_count(mdev, chunk ? MROCE_CNT_RX_GSO_PKTS :
				  MROCE_CNT_RX_GRO_PKTS, pkts);
	mroce_xport_rcv_list(mdev, skb);
	return 0;
drop:
	kfree_skb(skb);
	return 0;
}

static struct socket *mroce_sock_open(struct net *net, int family)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = mroce_udp_rcv,
	};
	struct udp_port_cfg cfg = {
		.family = family,
		.local_udp_port = htons(udp_port),
		.ipv6_v6only = family == AF_INET6,
		.use_udp6_tx_checksums = true,
		.use_udp6_rx_checksums = true,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(net, &cfg, &sock);
	if (err) {
		pr_err("mroce: cannot bind UDP port %u (%s): %d\n", udp_port,
		       family == AF_INET ? "IPv4" : "IPv6", err);
		return ERR_PTR(err);
	}
	/* receive batching: IPv4 only (mroce_gro.c) */
	if (gro && family == AF_INET) {
		tcfg.gro_receive = mroce_gro_receive;
		tcfg.gro_complete = mroce_gro_complete;
	}
	setup_udp_tunnel_sock(net, sock, &tcfg);
	/*
	 * A GSO provider's chunk that a veth carried whole comes whole
	 * (mroce_udp_rcv()); other UDP_L4 or FRAGLIST buffers, with no
	 * tunnel type, the UDP layer still cuts for us.
	 */
	udp_allow_gso(sock->sk);
	return sock;
}

static void mroce_sockset_free(struct mroce_sockset *set)
{
	if (set->sock4)
		udp_tunnel_sock_release(set->sock4);
	if (set->sock6)
		udp_tunnel_sock_release(set->sock6);
	kfree(set);
}

static struct mroce_sockset *mroce_sockset_create(struct net *net)
{
	struct mroce_sockset *set;
	struct socket *sock;

	set = kzalloc(sizeof(*set), GFP_KERNEL);
	if (!set)
		return ERR_PTR(-ENOMEM);
	set->net = net;
	INIT_HLIST_HEAD(&set->devs);

	sock = mroce_sock_open(net, AF_INET);
	if (IS_ERR(sock))
		goto err;
	set->sock4 = sock;
	rcu_assign_sk_user_data(sock->sk, set);

	if (IS_ENABLED(CONFIG_IPV6) && ipv6_mod_enabled()) {
		sock = mroce_sock_open(net, AF_INET6);
		if (IS_ERR(sock))
			goto err;
		set->sock6 = sock;
		rcu_assign_sk_user_data(sock->sk, set);
	}
	return set;
err:
	mroce_sockset_free(set);
	return ERR_CAST(sock);
}

/*
 * Same-device loopback.  A packet from a QP of this device to the
 * device's own address (a QP connected to itself, or to another QP of
 * the device) would go down the IP stack to lo and come straight back
 * to this socket.  It skips the stack instead, as rdma_rxe's loopback
 * does: so it is not seen by packet captures or netfilter on lo.  It
 * keeps an IP header, which the receive path reads (addresses, ECN; a
 * UD receive builds its GRH from it), and is received from a tasklet,
 * never from the sender's call: the sender may hold locks of a QP that
 * the receive takes.  The queue and its tasklet are per CPU, as the
 * kernel's receive backlog is: a packet is received on the CPU that
 * sent it, as soon as that CPU enables bottom halves again (a post_send
 * returns with its packet placed and, with luck, acknowledged), and one
 * CPU never works through what another CPU sent while its own process
 * waits.
 */
static void mroce_loop_task(struct tasklet_struct *t)
{
	struct mroce_loop *l = from_tasklet(l, t, task);
	struct sk_buff *skb;
	int budget = MROCE_TX_BUDGET;

	/*
	 * What the receive sends back to this device (an ACK, a READ
	 * response) joins the queue and is received in this same run, not
	 * in another run of the task: a task that schedules itself again
	 * keeps the softirq pending, and a softirq pending across a jiffy
	 * goes to ksoftirqd, a wake-up and a context switch later.
	 */
	l->running = true;
	while (budget-- && (skb = skb_dequeue(&l->q)))
		mroce_xport_rcv(l->mdev, skb);
	l->running = false;
	if (!skb_queue_empty(&l->q))
		tasklet_schedule(&l->task);
}

/* Is @av's destination the device's own address? */
bool mroce_net_loop_av(const struct mroce_av *av)
{
	if (av->family == AF_INET)
		return av->daddr.v4.sin_addr.s_addr ==
		       av->saddr.v4.sin_addr.s_addr;
	return ipv6_addr_equal(&av->daddr.v6.sin6_addr,
			       &av->saddr.v6.sin6_addr);
}

/* The IP header a packet to @av would have carried, then the queue. */
static int mroce_loop_xmit(struct mroce_dev *mdev, const struct mroce_av *av,
			   u16 sport, u8 ecn, struct sk_buff *skb)
{
	unsigned int len = sizeof(struct udphdr) + skb->len;
	u8 tos = (av->tclass & ~INET_ECN_MASK) | ecn;
	unsigned int hlen = av->family == AF_INET ? sizeof(struct iphdr) :
						    sizeof(struct ipv6hdr);
	struct mroce_loop *l;

	if (skb_cow_head(skb, hlen))
		return -ENOMEM;
	if (av->family == AF_INET) {
		struct iphdr *iph = skb_push(skb, hlen);

		*iph = (struct iphdr) {
			.version = 4,
			.ihl = sizeof(*iph) / 4,
			.tos = tos,
			.tot_len = htons(sizeof(*iph) + len),
			.frag_off = htons(IP_DF),
			.ttl = av->hop_limit ?: 64,
			.protocol = IPPROTO_UDP,
			.saddr = av->saddr.v4.sin_addr.s_addr,
			.daddr = av->daddr.v4.sin_addr.s_addr,
		};
		ip_send_check(iph);
		skb->protocol = htons(ETH_P_IP);
	} else {
		struct ipv6hdr *ip6h = skb_push(skb, hlen);

		ip6_flow_hdr(ip6h, tos, cpu_to_be32(av->flow_label));
		ip6h->payload_len = htons(len);
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = av->hop_limit ?: 64;
		ip6h->saddr = av->saddr.v6.sin6_addr;
		ip6h->daddr = av->daddr.v6.sin6_addr;
		skb->protocol = htons(ETH_P_IPV6);
	}
	skb_reset_network_header(skb);
	/* as the UDP provider hands packets over: data at the MetaRoCE header */
	__skb_pull(skb, hlen);
	skb_reset_transport_header(skb);
	skb->dev = mdev->ndev;
	MROCE_SKB_CB(skb)->sport = sport;
	mroce_count(mdev, MROCE_CNT_TX_LOOPBACK_PKTS, 1);
	l = get_cpu_ptr(mdev->loop);
	skb_queue_tail(&l->q, skb);
	if (!l->running)
		tasklet_schedule(&l->task);
	put_cpu_ptr(mdev->loop);
	return 0;
}

int mroce_soft_attach(struct mroce_dev *mdev)
{
	struct net *net = dev_net(mdev->ndev);
	struct mroce_net *mn = net_generic(net, mroce_net_id);
	struct mroce_sockset *set;
	int cpu;

	mdev->loop = alloc_percpu(struct mroce_loop);
	if (!mdev->loop)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct mroce_loop *l = per_cpu_ptr(mdev->loop, cpu);

		skb_queue_head_init(&l->q);
		tasklet_setup(&l->task, mroce_loop_task);
		l->mdev = mdev;
	}
	mutex_lock(&mroce_net_mutex);
	set = mn->set;
	if (!set) {
		set = mroce_sockset_create(net);
		if (IS_ERR(set)) {
			mutex_unlock(&mroce_net_mutex);
			free_percpu(mdev->loop);
			mdev->loop = NULL;
			return PTR_ERR(set);
		}
		mn->set = set;
	}
	set->users++;
	hlist_add_head_rcu(&mdev->xport_node, &set->devs);
	mdev->xport_priv = set;
	mutex_unlock(&mroce_net_mutex);
	return 0;
}

void mroce_soft_detach(struct mroce_dev *mdev)
{
	struct mroce_sockset *set = mdev->xport_priv;
	int cpu;

	mutex_lock(&mroce_net_mutex);
	hlist_del_rcu(&mdev->xport_node);
	WRITE_ONCE(mdev->xport_priv, NULL);
	set->users--;
	mutex_unlock(&mroce_net_mutex);
	/* no receive or transmit still looks at @mdev through the set */
	synchronize_rcu();
	/* nor a loopback packet, which a transmit queued before */
	for_each_possible_cpu(cpu) {
		struct mroce_loop *l = per_cpu_ptr(mdev->loop, cpu);

		tasklet_kill(&l->task);
		skb_queue_purge(&l->q);
	}
	free_percpu(mdev->loop);
	mdev->loop = NULL;
}

/*
 * The route cache (a QP's, for the connection's address) is keyed by the
 * address alone.  That is right unless the namespace hashes multipath
 * routes on the transport ports (policy 1, or 3 with its custom fields):
 * then each path's source port may leave by another nexthop, and only a
 * lookup with that port finds it.
 */
static bool mroce_route_by_port4(const struct net *net)
{
#ifdef CONFIG_IP_ROUTE_MULTIPATH
	u8 policy = READ_ONCE(net->ipv4.sysctl_fib_multipath_hash_policy);

	return policy == 1 || policy == 3;
#else
	return false;
#endif
}

__be16 mroce_net_port(void)
{
	return htons(udp_port);
}

struct rtable *mroce_net_route4(struct mroce_dev *mdev,
				struct mroce_sockset *set,
				const struct mroce_av *av,
				struct dst_cache *route, __be16 sport,
				__be32 *saddr)
{
	struct flowi4 fl4 = {
		.flowi4_oif = mdev->ndev->ifindex,
		.daddr = av->daddr.v4.sin_addr.s_addr,
		.saddr = av->saddr.v4.sin_addr.s_addr,
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_tos = RT_TOS(av->tclass),
		.fl4_sport = sport,
		.fl4_dport = htons(udp_port),
	};
	struct rtable *rt = NULL;

	if (route && mroce_route_by_port4(set->net))
		route = NULL;
	/* revalidated: a route or address change makes it miss */
	if (route)
		rt = dst_cache_get_ip4(route, &fl4.saddr);
	if (!rt) {
		mroce_count(mdev, MROCE_CNT_TX_ROUTE_LOOKUPS, 1);
		rt = ip_route_output_key(set->net, &fl4);
		if (IS_ERR(rt))
			return rt;
		if (route)
			dst_cache_set_ip4(route, &rt->dst, fl4.saddr);
	}
	*saddr = fl4.saddr;
	return rt;
}

static int mroce_soft_xmit4(struct mroce_dev *mdev, struct mroce_sockset *set,
			    const struct mroce_av *av, struct dst_cache *route,
			    __be16 sport, u8 ecn, struct sk_buff *skb)
{
	struct rtable *rt;
	__be32 saddr;
	u8 ttl;

	rt = mroce_net_route4(mdev, set, av, route, sport, &saddr);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	ttl = av->hop_limit ? av->hop_limit : ip4_dst_hoplimit(&rt->dst);
	udp_tunnel_xmit_skb(rt, set->sock4->sk, skb, saddr,
			    av->daddr.v4.sin_addr.s_addr,
			    (av->tclass & ~INET_ECN_MASK) | ecn, ttl,
			    htons(IP_DF), sport, htons(udp_port), false, false);
	return 0;
}

#if IS_ENABLED(CONFIG_IPV6)
static bool mroce_route_by_port6(const struct net *net)
{
	int policy = ip6_multipath_hash_policy(net);

	return policy == 1 || policy == 3;
}

static int mroce_soft_xmit6(struct mroce_dev *mdev, struct mroce_sockset *set,
			    const struct mroce_av *av, struct dst_cache *route,
			    __be16 sport, u8 ecn, struct sk_buff *skb)
{
	struct flowi6 fl6 = {
		.flowi6_oif = mdev->ndev->ifindex,
		.daddr = av->daddr.v6.sin6_addr,
		.saddr = av->saddr.v6.sin6_addr,
		.flowi6_proto = IPPROTO_UDP,
		.flowlabel = ip6_make_flowinfo(av->tclass,
					       cpu_to_be32(av->flow_label)),
		.fl6_sport = sport,
		.fl6_dport = htons(udp_port),
	};
	struct in6_addr saddr = av->saddr.v6.sin6_addr;
	struct in6_addr daddr = av->daddr.v6.sin6_addr;
	struct dst_entry *dst = NULL;
	u8 ttl;

	if (!set->sock6)
		return -EAFNOSUPPORT;
	if (route && mroce_route_by_port6(set->net))
		route = NULL;
	if (route)
		dst = dst_cache_get_ip6(route, &saddr);
	if (!dst) {
		mroce_count(mdev, MROCE_CNT_TX_ROUTE_LOOKUPS, 1);
		dst = ipv6_stub->ipv6_dst_lookup_flow(set->net, set->sock6->sk,
						      &fl6, NULL);
		if (IS_ERR(dst))
			return PTR_ERR(dst);
		if (route)
			dst_cache_set_ip6(route, dst, &fl6.saddr);
	}
	ttl = av->hop_limit ? av->hop_limit : ip6_dst_hoplimit(dst);
	/*
	 * Consumes @skb whatever it returns.  No device for the tunnel
	 * statistics: ip6tunnel_xmit() would add to dev->tstats, a
	 * struct pcpu_sw_netstats that only tunnel devices have; on veth or
	 * lo that union member is their smaller per-CPU stats, and the add
	 * wrote past them into a neighbouring per-CPU allocation (a route
	 * cache slot, seen as a KASAN GPF in free_fib_info_rcu()).  mroce
	 * counts its own packets.
	 */
	udp_tunnel6_xmit_skb(dst, set->sock6->sk, skb, NULL, &saddr, &daddr,
			     (av->tclass & ~INET_ECN_MASK) | ecn, ttl,
			     cpu_to_be32(av->flow_label), sport,
			     htons(udp_port), false);
	return 0;
}
#endif

int mroce_soft_xmit(struct mroce_dev *mdev, const struct mroce_av *av,
		    struct dst_cache *route, u16 sport, u8 ecn,
		    struct sk_buff *skb)
{
	struct mroce_sockset *set;
	int err = -ENODEV;

	/*
	 * Out of the device's own netdev (flowi oif): the routing table of
	 * the namespace alone could pick another interface for the peer.
	 */
	rcu_read_lock_bh();
	set = READ_ONCE(mdev->xport_priv);
	if (set) {
		if (mroce_net_loop_av(av))
			err = mroce_loop_xmit(mdev, av, sport, ecn, skb);
		else if (av->family == AF_INET)
			err = mroce_soft_xmit4(mdev, set, av, route,
					       htons(sport), ecn, skb);
#if IS_ENABLED(CONFIG_IPV6)
		else
			err = mroce_soft_xmit6(mdev, set, av, route,
					       htons(sport), ecn, skb);
#endif
	}
	rcu_read_unlock_bh();
	if (err) {
		mroce_count(mdev, MROCE_CNT_TX_DROP, 1);
		kfree_skb(skb);
	}
	return err;
}

const struct mroce_xport_ops mroce_soft_xport = {
	.name = "udp",
	.attach = mroce_soft_attach,
	.detach = mroce_soft_detach,
	.xmit = mroce_soft_xmit,
};

/* A new namespace (or one that exists at load): take the port now. */
static int __net_init mroce_net_init_net(struct net *net)
{
	struct mroce_net *mn = net_generic(net, mroce_net_id);
	struct mroce_sockset *set;

	mutex_lock(&mroce_net_mutex);
	set = mroce_sockset_create(net);
	/* never fail the namespace: a device attaching there tries again */
	if (!IS_ERR(set))
		mn->set = set;
	mutex_unlock(&mroce_net_mutex);
	return 0;
}

static void __net_exit mroce_net_exit_net(struct net *net)
{
	struct mroce_net *mn = net_generic(net, mroce_net_id);
	struct mroce_sockset *set;

	mutex_lock(&mroce_net_mutex);
	set = mn->set;
	mn->set = NULL;
	mutex_unlock(&mroce_net_mutex);
	if (!set)
		return;
	/* Every netdev of @net is gone, so every device has detached. */
	WARN_ON_ONCE(set->users);
	/* udp_tunnel_sock_release() waits for readers (synchronize_rcu) */
	mroce_sockset_free(set);
}

static struct pernet_operations mroce_net_ops = {
	.init = mroce_net_init_net,
	.exit = mroce_net_exit_net,
	.id = &mroce_net_id,
	.size = sizeof(struct mroce_net),
};

int mroce_net_init(void)
{
	return register_pernet_subsys(&mroce_net_ops);
}

void mroce_net_exit(void)
{
	unregister_pernet_subsys(&mroce_net_ops);
}
