// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce: MetaRoCE soft RDMA transport - module and device lifecycle.
 *
 * "rdma link add NAME type mroce netdev DEV" creates one ib_device bound
 * to DEV, in whatever network namespace DEV lives in.  The device follows
 * its netdev: link state and MTU changes show up in the port attributes,
 * and removing the netdev (or its namespace) removes the device.
 */

#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <net/addrconf.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_netlink.h>

#include "mroce.h"

MODULE_AUTHOR("mroce developers");
MODULE_DESCRIPTION("MetaRoCE soft RDMA transport over UDP/IP");
MODULE_LICENSE("GPL");
#ifdef MROCE_VERSION
/* the top-level VERSION file, passed in by the out-of-tree Kbuild */
MODULE_VERSION(MROCE_VERSION);
#endif

static char *cc_algo = "metaroce";
/*
 * writable: each new device takes the algorithm named at its creation, as
 * the default of its QPs (a user QP may name another, MROCE_CC)
 */
module_param(cc_algo, charp, 0644);

unsigned int mroce_num_paths = MROCE_PATHS_DEF;
static int mroce_set_paths(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int err = kstrtouint(val, 0, &n);

	if (err)
		return err;
	if (n < 1 || n > MROCE_PATHS_MAX)
		return -EINVAL;
	*(unsigned int *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops mroce_paths_ops = {
	.set = mroce_set_paths,
	.get = param_get_uint,
};
module_param_cb(paths, &mroce_paths_ops, &mroce_num_paths, 0644);
/*
 * The delay signal's target.  Higher than the spec's 25 us: a software
 * host's RTT includes softirq and scheduling delays, which a round's
 * smallest sample filters only in part.
 */
unsigned int mroce_qdelay_target_us = MROCE_QDELAY_TARGET_DEF_US;
module_param_named(qdelay_target_us, mroce_qdelay_target_us, uint, 0644);
MODULE_PARM_DESC(qdelay_target_us,
		 "standing queueing delay (us) above which metaroce slows down, 0: off (default "
		 __stringify(MROCE_QDELAY_TARGET_DEF_US) ")");

/*
 * The rate hint's epoch.  The spec's 100 us is two base RTTs of a
 * hardware fabric; at the rates a software host moves, such an epoch
 * holds zero or one packet and the receiver's capacity estimate is
 * coarse, so it can be set longer.
 */
unsigned int mroce_hint_epoch_us = MROCE_HINT_EPOCH_US;
module_param_named(hint_epoch_us, mroce_hint_epoch_us, uint, 0644);
MODULE_PARM_DESC(hint_epoch_us,
		 "rate hint epoch (us) of devices created from now on (default "
		 __stringify(MROCE_HINT_EPOCH_US) ")");

/*
 * Piggybacked ACKs (spec: "Piggybacked acknowledgment"): a request packet
 * carries the ACK its QP's responder owes.  A peer without the revision
 * drops such packets (rx_drop_hdr_len), so a connection piggybacks only
 * with agreement: 1 (default) after the peer answered the capability
 * PROBE, 2 always (the operator knows every peer accepts them), 0 never.
 */
unsigned int mroce_pb_ack = MROCE_PB_AUTO;

/* pb_ack and seg: MROCE_PB_OFF, MROCE_PB_AUTO or MROCE_PB_ALWAYS */
static int mroce_set_mode(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int err = kstrtouint(val, 0, &n);

	if (err)
		return err;
	if (n > MROCE_PB_ALWAYS)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static const struct kernel_param_ops mroce_mode_ops = {
	.set = mroce_set_mode,
	.get = param_get_uint,
};
module_param_cb(pb_ack, &mroce_mode_ops, &mroce_pb_ack, 0644);
MODULE_PARM_DESC(pb_ack,
		 "ACKs on request packets: 0 never, 1 with peers that answer the capability probe (default), 2 always");

/*
 * Large segments (spec "Large segments"): SEND and WRITE packets carry as
 * much payload as the netdev MTU holds (1388 bytes on a 1500-byte link
 * rather than the PMTU's 1024; at most MROCE_SEG_MAX, 9216, and at most
 * what the peer's seg_max says it takes) on connections whose path MTU is
 * the port's active MTU.  A receiver of an earlier revision fails such a
 * message (NAK INVALID_REQUEST), so with agreement only: 1 (default) after
 * the peer answered the capability PROBE with ECHO_SEG, 2 always, 0 never.
 */
unsigned int mroce_seg = MROCE_PB_AUTO;
module_param_cb(seg, &mroce_mode_ops, &mroce_seg, 0644);
MODULE_PARM_DESC(seg,
		 "SEND/WRITE payload per packet beyond the path MTU, as the netdev MTU allows: 0 never, 1 with peers that answer the capability probe (default), 2 always");

/* Zero-copy transmit's smallest payload (mroce_sgl_zcopy_ok()). */
unsigned int mroce_zcopy_min = MROCE_ZCOPY_MIN_DEF;
module_param_named(zcopy_min, mroce_zcopy_min, uint, 0644);
MODULE_PARM_DESC(zcopy_min,
		 "send request and READ response payloads of at least this many bytes from user memory without copying them, 0: always copy (default "
		 __stringify(MROCE_ZCOPY_MIN_DEF) ")");

MODULE_PARM_DESC(paths, "paths (UDP source ports) per RC connection, 1..64, taken at QP creation (default 16)");
MODULE_PARM_DESC(cc_algo, "Default congestion control of the QPs of devices created from now on: metaroce (default), dcqcn, none");

/* Serialises device creation, so one netdev never gets two devices. */
static DEFINE_MUTEX(mroce_dev_mutex);

enum ib_port_state mroce_port_state(const struct mroce_dev *mdev)
{
	struct net_device *ndev = mdev->ndev;

	return netif_running(ndev) && netif_carrier_ok(ndev) ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;
}

/*
 * Large segments: the largest SEND or WRITE payload whose packets, with
 * all headers, fit the netdev MTU (at most MROCE_SEG_MAX).
 */
u32 mroce_port_seg(const struct mroce_dev *mdev)
{
	int room = (int)READ_ONCE(mdev->ndev->mtu) - (int)mroce_wire_pkt_bytes(0);

	return clamp(room, 0, MROCE_SEG_MAX);
}

/* Largest IB MTU whose packets, with all headers, fit the netdev MTU. */
enum ib_mtu mroce_port_mtu(const struct mroce_dev *mdev)
{
	u32 room = mroce_port_seg(mdev);	/* MROCE_SEG_MAX > 4096 */

	if (room >= 4096)
		return IB_MTU_4096;
	if (room >= 2048)
		return IB_MTU_2048;
	if (room >= 1024)
		return IB_MTU_1024;
	if (room >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

/* Tell ib_core consumers when the port goes up or down.  Under RTNL. */
void mroce_port_update(struct mroce_dev *mdev)
{
	enum ib_port_state state = mroce_port_state(mdev);
	struct ib_event ev = {
		.device = &mdev->ib_dev,
		.element.port_num = MROCE_PORT,
	};

	if (state == mdev->port_state)
		return;
	mdev->port_state = state;
	mroce_count(mdev, MROCE_CNT_PORT_STATE_CHANGES, 1);
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

static int mroce_dev_init(struct mroce_dev *mdev, struct net_device *ndev)
{
	struct ib_device *ibdev = &mdev->ib_dev;
	char algo[MROCE_CC_NAME_MAX];
	int err;

	/* First, so that ib_dealloc_device() undoes a partial init. */
	ib_set_device_ops(ibdev, &mroce_dev_ops);
	mdev->ndev = ndev;
	mroce_pools_init(mdev);
	xa_init(&mdev->rkey_xa);
	spin_lock_init(&mdev->atomic_lock);
	mdev->stats = alloc_percpu(struct mroce_counters);
	if (!mdev->stats)
		return -ENOMEM;

	spin_lock_init(&mdev->rh_lock);
	/* line rate unknown (100G) */
	mroce_hint_init(&mdev->rh, 0, READ_ONCE(mroce_hint_epoch_us));
	/*
	 * The parameter may be rewritten meanwhile (sysfs, "echo" adds a
	 * newline): copy it under the lock, trimmed.
	 */
	kernel_param_lock(THIS_MODULE);
	strscpy(algo, cc_algo, sizeof(algo));
	kernel_param_unlock(THIS_MODULE);
	mdev->cc = mroce_cc_get(strim(algo));
	if (!mdev->cc) {
		pr_err("mroce: unknown congestion control algorithm '%s'\n",
		       algo);
		return -ENOENT;
	}

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	/*
	 * One completion vector per CPU, as consumers expect: nvme-rdma and
	 * the RDMA CQ pool size their queue count by it (one I/O queue with
	 * 1).  A completion runs where the CQE is made (softirq or the
	 * poster's context) whichever vector the CQ names.
	 */
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	/* The provider's doorbells and CQ arming are legacy write commands. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);
	strscpy(ibdev->node_desc, "mroce", sizeof(ibdev->node_desc));

	err = ib_device_set_netdev(ibdev, ndev, MROCE_PORT);
	if (err)
		return err;

	mdev->port_state = mroce_port_state(mdev);
	return mroce_xport_attach(mdev);
}

/*
 * ib_core calls this from ib_dealloc_device(): after unregistration, or
 * when registration failed part way.
 */
void mroce_dealloc_driver(struct ib_device *ibdev)
{
	struct mroce_dev *mdev = to_mdev(ibdev);

	mroce_xport_detach(mdev);
	if (mdev->cc)
		mroce_cc_put(mdev->cc);
	free_percpu(mdev->stats);
	mroce_mr_flush();
	mroce_pools_destroy(mdev);
	xa_destroy(&mdev->rkey_xa);
}

static int mroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	char what[64];
	struct ib_device *other;
	struct mroce_dev *mdev;
	int err;

	if (ndev->type != ARPHRD_ETHER) {
		pr_err("mroce: %s is not an Ethernet netdev\n", ndev->name);
		return -EINVAL;
	}

	mutex_lock(&mroce_dev_mutex);
	other = ib_device_get_by_netdev(ndev, MROCE_DRIVER_ID);
	if (other) {
		pr_err("mroce: %s already has device %s\n", ndev->name,
		       dev_name(&other->dev));
		ib_device_put(other);
		err = -EEXIST;
		goto out;
	}
	other = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		pr_err("mroce: an RDMA device named %s exists\n", ibdev_name);
		ib_device_put(other);
		err = -EEXIST;
		goto out;
	}

	mdev = ib_alloc_device(mroce_dev, ib_dev);
	if (!mdev) {
		err = -ENOMEM;
		goto out;
	}
	err = mroce_dev_init(mdev, ndev);
	if (err) {
		ib_dealloc_device(&mdev->ib_dev);
		goto out;
	}
	/*
	 * Once registered, the device is the netdev's: the netdev's
	 * unregistration may detach it and queue its release before we
	 * print, so the names are taken now and the memory is held.
	 */
	snprintf(what, sizeof(what), "transport %s, cc %s", mdev->xport->name,
		 mdev->cc->name);
	get_device(&mdev->ib_dev.dev);
	err = ib_register_device(&mdev->ib_dev, ibdev_name, NULL);
	if (err)
		ib_dealloc_device(&mdev->ib_dev);
	else
		dev_info(&mdev->ib_dev.dev, "added on %s (%s)\n", ndev->name,
			 what);
	put_device(&mdev->ib_dev.dev);
out:
	mutex_unlock(&mroce_dev_mutex);
	return err;
}

static struct rdma_link_ops mroce_link_ops = {
	.type = "mroce",
	.newlink = mroce_newlink,
};

static int mroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct ib_device *ibdev;
	struct mroce_dev *mdev;

	/*
	 * Stop packet I/O now, whether or not ib_core still hands the
	 * device out (it does not while an unregistration, by rdma link
	 * delete or rmmod, is under way): our sockets must not outlive the
	 * namespace, and the device's release may come after it.
	 */
	if (event == NETDEV_UNREGISTER)
		mroce_xport_detach_netdev(ndev);
	ibdev = ib_device_get_by_netdev(ndev, MROCE_DRIVER_ID);
	if (!ibdev)
		return NOTIFY_DONE;
	mdev = to_mdev(ibdev);

	switch (event) {
	case NETDEV_UNREGISTER:
		/* detached above; the ib_device goes away asynchronously */
		ib_unregister_device_queued(ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		mroce_port_update(mdev);
		break;
	case NETDEV_CHANGEMTU:
		dev_info(&ibdev->dev, "netdev MTU %u, active MTU %d\n",
			 ndev->mtu, ib_mtu_enum_to_int(mroce_port_mtu(mdev)));
		break;
	default:
		break;
	}
	ib_device_put(ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block mroce_netdev_notifier = {
	.notifier_call = mroce_netdev_event,
};

static int __init mroce_init(void)
{
	int err;

	mroce_counters_init();
	err = mroce_mr_init();
	if (err)
		return err;
	err = mroce_cc_init();
	if (err)
		goto err_mr;
	err = mroce_net_init();
	if (err)
		goto err_cc;
	err = register_netdevice_notifier(&mroce_netdev_notifier);
	if (err)
		goto err_net;
	rdma_link_register(&mroce_link_ops);
	pr_info("mroce: loaded\n");
	return 0;

err_net:
	mroce_net_exit();
err_cc:
	mroce_cc_exit();
err_mr:
	mroce_mr_exit();
	return err;
}

static void __exit mroce_exit(void)
{
	rdma_link_unregister(&mroce_link_ops);
	ib_unregister_driver(MROCE_DRIVER_ID);
	unregister_netdevice_notifier(&mroce_netdev_notifier);
	mroce_net_exit();
	mroce_cc_exit();
	mroce_mr_exit();
	pr_info("mroce: unloaded\n");
}

module_init(mroce_init);
module_exit(mroce_exit);
MODULE_ALIAS_RDMA_LINK("mroce");
