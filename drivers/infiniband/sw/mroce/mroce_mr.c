// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce memory regions: registration, key lookup, access checks and the
 * copies in and out of registered memory.
 *
 * Keys.  An lkey is (table index << 8 | generation byte), so a stale key
 * of a deregistered region does not match its successor in the same
 * slot; lkeys are found only in the MR pool and never accepted from the
 * wire.
 * An rkey is a random 32-bit number of its own, found only in rkey_xa:
 * the peer sees rkeys (and the lkeys the spec puts in a READ's sink) but
 * cannot turn one into the other or guess another region's.
 *
 * Lifetime.  Lookups run in softirq under RCU and take a reference, and
 * fetched WQEs hold one per SGE for as long as they are outstanding, which
 * a peer can make forever (half a message).  So dereg does not wait: it
 * takes the region out of both tables, marks it dead (every later copy
 * through a held reference fails, a protection error for its WQE, as the
 * IB spec says of access after deregistration) and drops its reference;
 * the last holder's put unpins the pages from a work item.  Nothing
 * outside a region's [iova, iova + length) is ever touched.
 */

#include <linux/highmem.h>
#include <linux/skbuff.h>
#include <rdma/ib_umem.h>

#include "mroce.h"

#define MROCE_MR_ACCESS_OK (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			    IB_ACCESS_OPTIONAL)

/* The pages go, from a work item: ib_umem_release() may sleep. */
static void mroce_mr_free_work(struct work_struct *work)
{
	struct mroce_mr *mr = container_of(work, struct mroce_mr, free_work);

	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree_rcu(mr, rcu);
}

static struct workqueue_struct *mroce_mr_wq;

/* Every deferred release done: before the device or the module goes. */
void mroce_mr_flush(void)
{
	flush_workqueue(mroce_mr_wq);
}

int mroce_mr_init(void)
{
	mroce_mr_wq = alloc_workqueue("mroce_mr", WQ_UNBOUND, 0);
	return mroce_mr_wq ? 0 : -ENOMEM;
}

void mroce_mr_exit(void)
{
	destroy_workqueue(mroce_mr_wq);	/* drains it */
}

static struct mroce_mr *mroce_mr_new(struct ib_pd *pd, int access)
{
	struct mroce_dev *mdev = to_mdev(pd->device);
	struct mroce_mr *mr;
	u32 idx;
	int err;

	if (access & ~MROCE_MR_ACCESS_OK)
		return ERR_PTR(-EINVAL);
	/* IB: remote write or atomic access requires local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return ERR_PTR(-EINVAL);
	err = mroce_pool_add(&mdev->pool[MROCE_POOL_MR]);
	if (err)
		return ERR_PTR(err);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr) {
		err = -ENOMEM;
		goto err_count;
	}
	/* Relaxed ordering and the other optional bits change nothing here. */
	mr->access = access & ~IB_ACCESS_OPTIONAL;
	refcount_set(&mr->elem.ref, 1);
	INIT_WORK(&mr->free_work, mroce_mr_free_work);

	err = mroce_pool_index(&mdev->pool[MROCE_POOL_MR], NULL, &idx,
			       GFP_KERNEL);
	if (err)
		goto err_free;
	mr->ibmr.lkey = idx << 8 | (get_random_u32() & 0xff);
	/* a fresh random rkey; a collision just draws again */
	do {
		mr->ibmr.rkey = get_random_u32();
		err = mr->ibmr.rkey ? xa_insert(&mdev->rkey_xa, mr->ibmr.rkey,
						NULL, GFP_KERNEL) : -EBUSY;
	} while (err == -EBUSY);
	if (err)
		goto err_idx;
	return mr;

err_idx:
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_MR], idx);
err_free:
	kfree(mr);
err_count:
	mroce_pool_del(&mdev->pool[MROCE_POOL_MR]);
	return ERR_PTR(err);
}

/* Make @mr visible to lookups; until now its slots held NULL. */
static void mroce_mr_publish(struct mroce_dev *mdev, struct mroce_mr *mr)
{
	mroce_pool_publish(&mdev->pool[MROCE_POOL_MR], mr->ibmr.lkey >> 8,
			   &mr->elem);
	xa_store(&mdev->rkey_xa, mr->ibmr.rkey, &mr->elem, GFP_KERNEL);
}

struct ib_mr *mroce_get_dma_mr(struct ib_pd *pd, int access)
{
	struct mroce_mr *mr = mroce_mr_new(pd, access);

	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->type = MROCE_MR_DMA;
	mr->iova = 0;
	mr->length = U64_MAX;
	mroce_mr_publish(to_mdev(pd->device), mr);
	return &mr->ibmr;
}

struct ib_mr *mroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(pd->device);
	struct sg_page_iter piter;
	struct mroce_mr *mr;
	unsigned int i = 0;
	int err;

	if (!length || iova + length < iova)
		return ERR_PTR(-EINVAL);
	mr = mroce_mr_new(pd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->umem = ib_umem_get(pd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err;
	}
	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages),
			     GFP_KERNEL_ACCOUNT);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err;
	}
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &piter, 0) {
		if (i >= mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	if (i != mr->npages) {
		err = -EFAULT;
		goto err;
	}
	mr->type = MROCE_MR_USER;
	mr->iova = iova;
	mr->length = length;
	mr->page_offset = ib_umem_offset(mr->umem);
	mroce_mr_publish(mdev, mr);
	return &mr->ibmr;

err:
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_MR], mr->ibmr.lkey >> 8);
	xa_erase(&mdev->rkey_xa, mr->ibmr.rkey);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree(mr);
	mroce_pool_del(&mdev->pool[MROCE_POOL_MR]);
	return ERR_PTR(err);
}

int mroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibmr->device);
	struct mroce_mr *mr = to_mmr(ibmr);

	/* no new lookups; held references find it dead and fail */
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_MR], ibmr->lkey >> 8);
	xa_erase(&mdev->rkey_xa, ibmr->rkey);
	WRITE_ONCE(mr->dead, true);
	mroce_pool_del(&mdev->pool[MROCE_POOL_MR]);
	mroce_mr_put(mr);
	return 0;
}

/* The region of a local key, with a reference, or NULL. */
struct mroce_mr *mroce_mr_get_lkey(struct mroce_dev *mdev, u32 lkey)
{
	struct mroce_pool_elem *e = mroce_pool_get(&mdev->pool[MROCE_POOL_MR],
						   lkey >> 8);
	struct mroce_mr *mr = e ? container_of(e, struct mroce_mr, elem) : NULL;

	if (mr && mr->ibmr.lkey != lkey) {	/* another generation */
		mroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/* The region of a remote key (from the wire), with a reference, or NULL. */
struct mroce_mr *mroce_mr_get_rkey(struct mroce_dev *mdev, u32 rkey)
{
	struct mroce_pool_elem *e = mroce_elem_get(&mdev->rkey_xa, rkey);

	return e ? container_of(e, struct mroce_mr, elem) : NULL;
}

void mroce_mr_put(struct mroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->elem.ref))
		queue_work(mroce_mr_wq, &mr->free_work);
}

/*
 * May @len bytes at @iova of @mr be accessed by a QP of @pd with @access
 * (IB_ACCESS_* bits, 0 for a local read)?  Returns 0 or -EACCES.
 */
int mroce_mr_check(struct mroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access)
{
	if (mr->ibmr.pd != pd)
		return -EACCES;
	if ((mr->access & access) != access)
		return -EACCES;
	if (mr->type == MROCE_MR_DMA)
		return 0;
	if (iova < mr->iova || iova + len < iova ||
	    iova + len > mr->iova + mr->length)
		return -EACCES;
	return 0;
}

/* Byte @iova of a checked user MR: page and offset in it. */
static struct page *mroce_mr_page(struct mroce_mr *mr, u64 iova,
				  unsigned int *off)
{
	u64 pos = iova - mr->iova + mr->page_offset;

	*off = offset_in_page(pos);
	return mr->pages[pos >> PAGE_SHIFT];
}

/*
 * Copy between @buf and a range of @mr already checked with
 * mroce_mr_check(); -EACCES once the region is deregistered.
 */
int mroce_mr_copy(struct mroce_mr *mr, u64 iova, void *buf, u32 len,
		  bool to_mr)
{
	if (READ_ONCE(mr->dead))
		return -EACCES;
	while (len) {
		unsigned int off, n;
		struct page *page;
		void *va;

		if (mr->type == MROCE_MR_DMA) {
			va = (void *)(uintptr_t)iova;
			if (to_mr)
				memcpy(va, buf, len);
			else
				memcpy(buf, va, len);
			return 0;
		}
		page = mroce_mr_page(mr, iova, &off);
		n = min_t(u32, len, PAGE_SIZE - off);
		va = kmap_local_page(page);
		if (to_mr)
			memcpy(va + off, buf, n);
		else
			memcpy(buf, va + off, n);
		kunmap_local(va);
		iova += n;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Copy @len bytes at @skb_off of @skb into a checked range of @mr. */
int mroce_mr_copy_skb(struct mroce_mr *mr, u64 iova, struct sk_buff *skb,
		      u32 skb_off, u32 len)
{
	int err;

	if (READ_ONCE(mr->dead))
		return -EACCES;
	while (len) {
		unsigned int off, n;
		struct page *page;
		void *va;

		if (mr->type == MROCE_MR_DMA)
			return skb_copy_bits(skb, skb_off,
					     (void *)(uintptr_t)iova, len);
		page = mroce_mr_page(mr, iova, &off);
		n = min_t(u32, len, PAGE_SIZE - off);
		va = kmap_local_page(page);
		err = skb_copy_bits(skb, skb_off, va + off, n);
		kunmap_local(va);
		if (err)
			return err;
		iova += n;
		skb_off += n;
		len -= n;
	}
	return 0;
}

/*
 * The 8-byte aligned word at @iova of a checked MR, mapped; the caller
 * unmaps *@map with kunmap_local() (NULL for a DMA MR).
 */
u64 *mroce_mr_atomic_ptr(struct mroce_mr *mr, u64 iova, void **map)
{
	unsigned int off;

	if (mr->type == MROCE_MR_DMA) {
		*map = NULL;
		return (u64 *)(uintptr_t)iova;
	}
	*map = kmap_local_page(mroce_mr_page(mr, iova, &off));
	return *map + off;
}

/*
 * Copy between @buf and bytes [@off, @off + @len) of a scatter/gather list
 * whose regions were resolved and checked when its WQE was fetched.
 */
int mroce_sgl_copy(const struct mroce_sge *sge, struct mroce_mr *const *mr,
		   u32 nsge, u32 off, void *buf, u32 len, bool to_sgl)
{
	u32 i, n;
	int err;

	for (i = 0; i < nsge && len; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min(len, sge[i].length - off);
		err = mroce_mr_copy(mr[i], sge[i].addr + off, buf, n, to_sgl);
		if (err)
			return err;
		buf += n;
		len -= n;
		off = 0;
	}
	return len ? -EINVAL : 0;
}

/* Copy @len bytes at @skb_off of @skb to bytes [@off, ...) of an SGL. */
int mroce_sgl_copy_skb(const struct mroce_sge *sge, struct mroce_mr *const *mr,
		       u32 nsge, u32 off, struct sk_buff *skb, u32 skb_off,
		       u32 len)
{
	u32 i, n;
	int err;

	for (i = 0; i < nsge && len; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min(len, sge[i].length - off);
		err = mroce_mr_copy_skb(mr[i], sge[i].addr + off, skb, skb_off,
					n);
		if (err)
			return err;
		skb_off += n;
		len -= n;
		off = 0;
	}
	return len ? -EINVAL : 0;
}

/*
 * Resolve the lkeys of an SGL for a QP of @pd: take a reference on each
 * region and check the range and @access.  On failure the references
 * taken so far stay in @mr (NULL elsewhere) for the caller to release.
 */
int mroce_sgl_resolve(struct mroce_dev *mdev, struct ib_pd *pd,
		      const struct mroce_sge *sge, struct mroce_mr **mr,
		      u32 nsge, int access, u32 *total)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < nsge; i++)
		mr[i] = NULL;
	for (i = 0; i < nsge; i++) {
		if (!sge[i].length)
			continue;
		mr[i] = mroce_mr_get_lkey(mdev, sge[i].lkey);
		if (!mr[i] || mroce_mr_check(mr[i], pd, sge[i].addr,
					     sge[i].length, access))
			return -EACCES;
		sum += sge[i].length;
	}
	if (sum > MROCE_WIRE_MAX_MSG_LEN)
		return -EMSGSIZE;
	*total = sum;
	return 0;
}

void mroce_sgl_release(struct mroce_mr **mr, u32 nsge)
{
	u32 i;

	for (i = 0; i < nsge; i++) {
		if (mr[i])
			mroce_mr_put(mr[i]);
		mr[i] = NULL;
	}
}
