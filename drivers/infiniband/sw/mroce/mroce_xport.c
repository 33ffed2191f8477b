// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce packet I/O provider registry.
 *
 * A device is bound to the first registered offload provider that claims
 * its netdev, else to the soft UDP provider.  The provider's module is
 * pinned for as long as a device uses it.
 */

#include <linux/mutex.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "mroce.h"

static LIST_HEAD(mroce_offload_list);
static DEFINE_MUTEX(mroce_xport_mutex);

int mroce_register_offload(struct mroce_xport_ops *ops)
{
	if (!ops->name || !ops->probe || !ops->attach || !ops->detach)
		return -EINVAL;

	mutex_lock(&mroce_xport_mutex);
	list_add_tail(&ops->list, &mroce_offload_list);
	mutex_unlock(&mroce_xport_mutex);
	pr_info("mroce: offload provider %s registered\n", ops->name);
	return 0;
}
EXPORT_SYMBOL_GPL(mroce_register_offload);

void mroce_unregister_offload(struct mroce_xport_ops *ops)
{
	mutex_lock(&mroce_xport_mutex);
	list_del(&ops->list);
	mutex_unlock(&mroce_xport_mutex);
}
EXPORT_SYMBOL_GPL(mroce_unregister_offload);

static const struct mroce_xport_ops *mroce_xport_select(struct net_device *ndev)
{
	struct mroce_xport_ops *ops;

	list_for_each_entry(ops, &mroce_offload_list, list)
		if (ops->probe(ndev) && try_module_get(ops->owner))
			return ops;
	return &mroce_soft_xport;
}

int mroce_xport_attach(struct mroce_dev *mdev)
{
	const struct mroce_xport_ops *ops;
	int err;

	mutex_lock(&mroce_xport_mutex);
	ops = mroce_xport_select(mdev->ndev);
	err = ops->attach(mdev);
	if (err) {
		if (ops != &mroce_soft_xport)
			module_put(ops->owner);
	} else {
		mdev->xport = ops;
	}
	mutex_unlock(&mroce_xport_mutex);
	return err;
}

/* Called on netdev unregister (under RTNL) and again on device release. */
void mroce_xport_detach(struct mroce_dev *mdev)
{
	const struct mroce_xport_ops *ops;

	mutex_lock(&mroce_xport_mutex);
	ops = mdev->xport;
	if (ops) {
		ops->detach(mdev);
		mdev->xport = NULL;
		if (ops != &mroce_soft_xport)
			module_put(ops->owner);
	}
	mutex_unlock(&mroce_xport_mutex);
}

/* Did a switch mark the packet Congestion Experienced (IP ECN = 11)? */
static bool mroce_skb_ce(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return INET_ECN_is_ce(ipv4_get_dsfield(ip_hdr(skb)));
	if (skb->protocol == htons(ETH_P_IPV6))
		return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
	return false;
}

void mroce_xport_rcv(struct mroce_dev *mdev, struct sk_buff *skb)
{
	const struct mroce_wire_opinfo *op;
	struct mroce_pkt_info info;
	struct mroce_qp *qp;
	bool datagram, rc;
	int err;

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
	qp = mroce_qp_get(mdev, info.dest_qpn);
	if (!qp) {
		mroce_count(mdev, MROCE_CNT_RX_DROP_UNKNOWN_QP, 1);
		goto drop;
	}
	if (info.opcode == MROCE_OP_PROBE) {
		if (qp->ibqp.qp_type == IB_QPT_RC)
			mroce_resp_probe(qp, &info);
		else
			mroce_count(mdev, MROCE_CNT_RX_DROP_QP_TYPE, 1);
		mroce_qp_put(qp);
		goto drop;
	}
	datagram = op->props & MROCE_OPP_DATAGRAM;
	rc = qp->ibqp.qp_type == IB_QPT_RC;
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
	kfree_skb(skb);
}
EXPORT_SYMBOL_GPL(mroce_xport_rcv);
