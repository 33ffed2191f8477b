// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce memory windows, type 1 and type 2B, for userspace consumers
 * (kernel ULPs use fast registration, mroce_mr.c).
 *
 * Keys.  A window's rkey is random like a region's: its upper 24 bits are
 * an index reserved in rkey_xa (so no region's rkey ever has it) under
 * which the window sits in the MW pool; the whole key must match.  A bind
 * may change only the low 8 bits: ibv_bind_mw() picks them for a type 1
 * window, the consumer for a type 2 one.
 *
 * States.  A type 1 window is valid from allocation; a bind gives it a
 * range of a region (and a new key), a bind of length 0 takes the range
 * away.  A type 2 window is free until a BIND_MW WQE binds it to a range
 * and to the QP it was posted on (type 2B: only requests arriving on that
 * QP may use it); LOCAL_INV or a peer's SEND_WITH_INV naming its key frees
 * it again.  Every bind is a WQE executed by the send engine in send
 * queue order (mroce_req_local()), and a bad one completes with
 * IB_WC_MW_BIND_ERR.
 *
 * Lifetime.  A bound window holds a reference on its region and counts
 * in its num_mw, so the region cannot be deregistered (IBA 10.6.7.2.6:
 * the dereg fails) until the window is unbound, invalidated or
 * deallocated.  The window's state is in struct mroce_win, which lookups
 * take a reference on under RCU and which is freed after a grace period,
 * as regions are: dealloc_mw does not wait for the responder.  A
 * responder's lookup checks the window under its lock and comes back
 * with a reference on the region, so the pages stay pinned for the copy
 * even if the window goes meanwhile; the next packet looks up again.  A
 * QP being destroyed frees the type 2 windows bound to it.
 *
 * Lock order: sq.lock or rq.lock -> win->lock -> mr->lock, qp->mw_lock.
 */

#include "mroce.h"

/* the ring's BIND_MW fields (uapi/rdma/mroce-abi.h) fit the WQE header */
static_assert(sizeof(((struct mroce_send_wqe *)0)->wr.bind) == 32);
static_assert(sizeof(struct mroce_send_wqe) == 64);

#define MROCE_MW_ACCESS_OK (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
			    IB_ACCESS_REMOTE_ATOMIC)

static void mroce_win_put(struct mroce_win *win)
{
	if (refcount_dec_and_test(&win->elem.ref))
		kfree_rcu(win, rcu);
}

/* The window whose rkey index @rkey has (any key byte), referenced, or NULL. */
static struct mroce_win *mroce_win_get(struct mroce_dev *mdev, u32 rkey)
{
	struct mroce_pool_elem *e = mroce_pool_get(&mdev->pool[MROCE_POOL_MW],
						   rkey >> 8);

	return e ? container_of(e, struct mroce_win, elem) : NULL;
}

int mroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibmw->device);
	struct mroce_mw *mw = to_mmw(ibmw);
	struct mroce_win *win;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	err = mroce_pool_add(&mdev->pool[MROCE_POOL_MW]);
	if (err)
		return err;
	win = kzalloc(sizeof(*win), GFP_KERNEL_ACCOUNT);
	if (!win) {
		err = -ENOMEM;
		goto err_count;
	}
	refcount_set(&win->elem.ref, 1);
	spin_lock_init(&win->lock);
	INIT_LIST_HEAD(&win->qp_node);
	win->pd = ibmw->pd;
	win->type = ibmw->type;
	/* a random rkey whose index no region's or window's rkey has */
	do {
		win->rkey = get_random_u32();
		err = win->rkey >> 8 ? xa_insert(&mdev->rkey_xa, win->rkey >> 8,
						 NULL, GFP_KERNEL) : -EBUSY;
	} while (err == -EBUSY);
	if (err)
		goto err_free;
	err = mroce_pool_insert(&mdev->pool[MROCE_POOL_MW], win->rkey >> 8,
				&win->elem);
	if (err) {
		xa_erase(&mdev->rkey_xa, win->rkey >> 8);
		goto err_free;
	}
	mw->win = win;
	ibmw->rkey = win->rkey;
	return 0;

err_free:
	kfree(win);
err_count:
	mroce_pool_del(&mdev->pool[MROCE_POOL_MW]);
	return err;
}

/* Take @win's range away (bound or not).  Under win->lock. */
static void mroce_win_unbind(struct mroce_win *win)
{
	struct mroce_mr *mr = win->mr;

	if (win->qp) {
		spin_lock_bh(&win->qp->mw_lock);
		list_del_init(&win->qp_node);
		spin_unlock_bh(&win->qp->mw_lock);
		win->qp = NULL;
	}
	if (mr) {
		atomic_dec(&mr->num_mw);
		win->mr = NULL;
		mroce_mr_put(mr);
	}
	win->bound = false;
	win->access = 0;
	win->addr = 0;
	win->length = 0;
}

int mroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct mroce_dev *mdev = to_mdev(ibmw->device);
	struct mroce_win *win = to_mmw(ibmw)->win;
	u32 idx = win->rkey >> 8;

	/* no new lookups; those under way find it dead */
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_MW], idx);
	spin_lock_bh(&win->lock);
	win->dead = true;
	mroce_win_unbind(win);
	spin_unlock_bh(&win->lock);
	xa_erase(&mdev->rkey_xa, idx);
	mroce_pool_del(&mdev->pool[MROCE_POOL_MW]);
	mroce_win_put(win);
	return 0;
}

/*
 * May @win be bound through @qp to @mr (NULL: length 0) as @b asks?
 * Under win->lock.  Every field of @b came from the process.
 */
static bool mroce_win_bind_ok(const struct mroce_qp *qp,
			      const struct mroce_win *win,
			      const struct mroce_mr *mr,
			      const struct mroce_send_wqe *w)
{
	u64 addr = w->wr.bind.addr, len = w->wr.bind.length;
	u32 access = w->wr.bind.access;

	if (win->dead || win->pd != qp->ibqp.pd)
		return false;
	/* the index bits name the window: only the key byte may change */
	if ((w->wr.bind.rkey >> 8) != (win->rkey >> 8))
		return false;
	/* remote rights only; no zero-based windows */
	if (access & ~MROCE_MW_ACCESS_OK)
		return false;
	/* a type 2 window is bound from the free state, to a range */
	if (win->type == IB_MW_TYPE_2 && (win->bound || !len))
		return false;
	if (!len)
		return true;	/* type 1: unbind */
	if (!mr || mr->type != MROCE_MR_USER || mr->ibmr.pd != win->pd)
		return false;
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return false;
	/* remote write or atomic through a window needs local write */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return false;
	/* within the region, no wrap */
	return addr >= mr->iova && addr + len > addr &&
	       addr + len <= mr->iova + mr->length;
}

/*
 * BIND_MW WQE @w on @qp, executed by the send engine in send queue order
 * (under sq.lock).  IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
enum ib_wc_status mroce_mw_bind(struct mroce_qp *qp,
				const struct mroce_send_wqe *w)
{
	struct mroce_dev *mdev = qp->mdev;
	enum ib_wc_status st = IB_WC_MW_BIND_ERR;
	struct mroce_mr *mr = NULL;
	struct mroce_win *win;
	bool held = false;

	win = mroce_win_get(mdev, w->wr.bind.mw_rkey);
	if (!win)
		return IB_WC_MW_BIND_ERR;
	if (w->wr.bind.length) {
		mr = mroce_mr_get_lkey(mdev, w->wr.bind.mr_lkey);
		if (!mr)
			goto out;
	}
	spin_lock_bh(&win->lock);
	if (!mroce_win_bind_ok(qp, win, mr, w))
		goto unlock;
	if (mr) {
		/* a region being deregistered takes no new window */
		write_lock_bh(&mr->lock);
		held = !mr->dead;
		if (held)
			atomic_inc(&mr->num_mw);
		write_unlock_bh(&mr->lock);
		if (!held)
			goto unlock;
	}
	mroce_win_unbind(win);		/* type 1: the old range goes */
	win->rkey = (win->rkey & ~0xffU) | (w->wr.bind.rkey & 0xff);
	if (mr) {
		win->mr = mr;		/* the lookup's reference */
		mr = NULL;
		win->addr = w->wr.bind.addr;
		win->length = w->wr.bind.length;
		win->access = w->wr.bind.access;
		win->bound = true;
		if (win->type == IB_MW_TYPE_2) {
			win->qp = qp;
			spin_lock_bh(&qp->mw_lock);
			list_add_tail(&win->qp_node, &qp->mw_list);
			spin_unlock_bh(&qp->mw_lock);
		}
	}
	st = IB_WC_SUCCESS;
unlock:
	spin_unlock_bh(&win->lock);
out:
	if (mr)
		mroce_mr_put(mr);
	mroce_win_put(win);
	return st;
}

/*
 * IB_WR_LOCAL_INV of @rkey on @qp: -ENOENT if it names no window of the
 * QP's PD (it may be a region's key), -EINVAL if it names one that cannot
 * be invalidated so (a type 1 window, a key not current), 0 when done.
 * Invalidating a free type 2 window again is allowed.
 */
int mroce_mw_local_inv(struct mroce_qp *qp, u32 rkey)
{
	struct mroce_win *win = mroce_win_get(qp->mdev, rkey);
	int err = -ENOENT;

	if (!win)
		return -ENOENT;
	spin_lock_bh(&win->lock);
	if (!win->dead && win->pd == qp->ibqp.pd) {
		err = -EINVAL;
		if (win->type == IB_MW_TYPE_2 && win->rkey == rkey) {
			mroce_win_unbind(win);
			err = 0;
		}
	}
	spin_unlock_bh(&win->lock);
	mroce_win_put(win);
	return err;
}

/*
 * A peer's SEND_WITH_INV naming @rkey, when its message completes on @qp:
 * a bound type 2 window of the QP's PD, bound through this QP.  0 or
 * -EACCES.
 */
int mroce_mw_remote_inv(struct mroce_qp *qp, u32 rkey)
{
	struct mroce_win *win = mroce_win_get(qp->mdev, rkey);
	int err = -EACCES;

	if (!win)
		return -EACCES;
	spin_lock_bh(&win->lock);
	if (!win->dead && win->bound && win->type == IB_MW_TYPE_2 &&
	    win->rkey == rkey && win->pd == qp->ibqp.pd && win->qp == qp) {
		mroce_win_unbind(win);
		err = 0;
	}
	spin_unlock_bh(&win->lock);
	mroce_win_put(win);
	return err;
}

/*
 * C12 through a window: the region behind @rkey, with a reference, if
 * it is a bound window of @qp's PD (type 2: bound through @qp) that
 * allows @access to [@va, @va + @len); else NULL.
 */
struct mroce_mr *mroce_mw_resolve(struct mroce_qp *qp, u32 rkey, u64 va,
				  u64 len, int access)
{
	struct mroce_win *win = mroce_win_get(qp->mdev, rkey);
	struct mroce_mr *mr = NULL;

	if (!win)
		return NULL;
	spin_lock_bh(&win->lock);
	if (!win->dead && win->bound && win->rkey == rkey &&
	    win->pd == qp->ibqp.pd &&
	    (win->type != IB_MW_TYPE_2 || win->qp == qp) &&
	    (win->access & access) == access &&
	    va >= win->addr && va + len >= va &&
	    va + len <= win->addr + win->length) {
		mr = win->mr;
		refcount_inc(&mr->elem.ref);
	}
	spin_unlock_bh(&win->lock);
	mroce_win_put(win);
	return mr;
}

/*
 * @qp is being destroyed (no packet reaches it any more): the type 2
 * windows bound through it are free again.
 */
void mroce_mw_qp_destroy(struct mroce_qp *qp)
{
	struct mroce_win *win;

	for (;;) {
		spin_lock_bh(&qp->mw_lock);
		win = list_first_entry_or_null(&qp->mw_list, struct mroce_win,
					       qp_node);
		/* on the list: bound, so not yet deallocated */
		if (win)
			refcount_inc(&win->elem.ref);
		spin_unlock_bh(&qp->mw_lock);
		if (!win)
			break;
		spin_lock_bh(&win->lock);
		if (win->qp == qp)
			mroce_win_unbind(win);
		spin_unlock_bh(&win->lock);
		mroce_win_put(win);
	}
}
