// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce packet I/O provider registry.
 *
 * A device is bound to the first registered offload provider that claims
 * its netdev, else to the soft UDP provider.  The provider's module is
 * pinned for as long as a device uses it.
 *
 * Every attached device is on mroce_xport_devs, so that a netdev's
 * unregistration detaches its device even when ib_core no longer hands
 * the device out (ib_device_get_by_netdev() fails once an unregistration
 * has dropped its refcount to zero, and the device's release, which
 * detaches too, may come after the namespace and its sockets are gone).
 */

#include <linux/mutex.h>

#include "mroce.h"
#include "mroce_net.h"

static LIST_HEAD(mroce_offload_list);
static LIST_HEAD(mroce_xport_devs);
static DEFINE_MUTEX(mroce_xport_mutex);

int mroce_register_offload(struct mroce_xport_ops *ops)
{
	if (!ops->name || !ops->probe || !ops->attach || !ops->detach ||
	    !ops->xmit)
		return -EINVAL;
	if (ops->caps & ~(MROCE_XPORT_CAP_SEG | MROCE_XPORT_CAP_SEG_PATH))
		return -EOPNOTSUPP;	/* a capability this build lacks */
	if ((ops->caps & MROCE_XPORT_CAP_SEG) && !ops->xmit_seg)
		return -EINVAL;
	if ((ops->caps & MROCE_XPORT_CAP_SEG_PATH) &&
	    !(ops->caps & MROCE_XPORT_CAP_SEG))
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

bool mroce_xport_chunk_ok(const struct mroce_xport_chunk *c,
			  const struct sk_buff *skb)
{
	if (c->nsegs < 1 || c->nsegs > MROCE_XPORT_SEG_MAX)
		return false;
	if (!c->mss || !c->len || !c->hdr_len || c->hdr_len > MROCE_HLEN_MAX)
		return false;
	if (skb->len != c->hdr_len + c->len)
		return false;
	return DIV_ROUND_UP(c->len, c->mss) == c->nsegs;
}
EXPORT_SYMBOL_GPL(mroce_xport_chunk_ok);

const struct mroce_xport_ops *mroce_xport_soft(void)
{
	return &mroce_soft_xport;
}
EXPORT_SYMBOL_GPL(mroce_xport_soft);

static bool mroce_xport_builtin(const struct mroce_xport_ops *ops)
{
	return ops == &mroce_soft_xport || ops == &mroce_gso_xport;
}

static const struct mroce_xport_ops *mroce_xport_select(struct net_device *ndev)
{
	struct mroce_xport_ops *ops;

	list_for_each_entry(ops, &mroce_offload_list, list)
		if (ops->probe(ndev) && try_module_get(ops->owner))
			return ops;
	/* the built-in providers: no module reference to take */
	if (mroce_gso_xport.probe(ndev))
		return &mroce_gso_xport;
	return &mroce_soft_xport;
}

int mroce_xport_attach(struct mroce_dev *mdev)
{
	const struct mroce_xport_ops *ops;
	int err;

	mutex_lock(&mroce_xport_mutex);
	/*
	 * A netdev being unregistered has sent, or is about to send,
	 * NETDEV_UNREGISTER (its state changes before the notifiers run):
	 * a device attached now would hold sockets of a namespace that may
	 * be gone before the device is released.
	 */
	if (READ_ONCE(mdev->ndev->reg_state) != NETREG_REGISTERED) {
		err = -ENODEV;
		goto out;
	}
	ops = mroce_xport_select(mdev->ndev);
	err = ops->attach(mdev);
	if (err) {
		if (!mroce_xport_builtin(ops))
			module_put(ops->owner);
	} else {
		mdev->xport = ops;
		list_add_tail(&mdev->xport_entry, &mroce_xport_devs);
	}
out:
	mutex_unlock(&mroce_xport_mutex);
	return err;
}

static void __mroce_xport_detach(struct mroce_dev *mdev)
{
	const struct mroce_xport_ops *ops = mdev->xport;

	lockdep_assert_held(&mroce_xport_mutex);
	if (!ops)
		return;
	ops->detach(mdev);
	mdev->xport = NULL;
	list_del(&mdev->xport_entry);
	if (!mroce_xport_builtin(ops))
		module_put(ops->owner);
}

/* Called on device release (a device that never attached too). */
void mroce_xport_detach(struct mroce_dev *mdev)
{
	mutex_lock(&mroce_xport_mutex);
	__mroce_xport_detach(mdev);
	mutex_unlock(&mroce_xport_mutex);
}

/*
 * Called on NETDEV_UNREGISTER (under RTNL): detach every device of @ndev,
 * found on our own list.  A device found there is alive: its release
 * detaches it, under the same mutex, before it is freed.
 */
void mroce_xport_detach_netdev(struct net_device *ndev)
{
	struct mroce_dev *mdev, *next;

	mutex_lock(&mroce_xport_mutex);
	list_for_each_entry_safe(mdev, next, &mroce_xport_devs, xport_entry)
		if (mdev->ndev == ndev)
			__mroce_xport_detach(mdev);
	mutex_unlock(&mroce_xport_mutex);
}
