// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce memory regions: registration, key lookup, access checks and the
 * copies in and out of registered memory.
 *
 * lkey == rkey == (table index << 8 | generation byte), so a stale key of
 * a deregistered region does not match its successor in the same slot.
 * Lookups run in softirq under RCU and take a reference; deregistration
 * waits for those references to drain before the pages are unpinned.
 * Nothing outside a region's [iova, iova + length) is ever touched.
 */

#include <linux/highmem.h>
#include <linux/skbuff.h>
#include <rdma/ib_umem.h>

#include "mroce.h"

#define MROCE_MR_ACCESS_OK (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			    IB_ACCESS_OPTIONAL)

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
	if (atomic_inc_return(&mdev->num_mrs) > MROCE_MAX_MR) {
		atomic_dec(&mdev->num_mrs);
		return ERR_PTR(-ENOMEM);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		err = -ENOMEM;
		goto err_count;
	}
	/* Relaxed ordering and the other optional bits change nothing here. */
	mr->access = access & ~IB_ACCESS_OPTIONAL;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);

	err = xa_alloc_cyclic(&mdev->mr_xa, &idx, NULL,
			      XA_LIMIT(1, (1U << 24) - 1), &mdev->next_mr,
			      GFP_KERNEL);
	if (err < 0)
		goto err_free;
	mr->ibmr.lkey = idx << 8 | (get_random_u32() & 0xff);
	mr->ibmr.rkey = mr->ibmr.lkey;
	return mr;

err_free:
	kfree(mr);
err_count:
	atomic_dec(&mdev->num_mrs);
	return ERR_PTR(err);
}

/* Make @mr visible to lookups; until now its slot held NULL. */
static void mroce_mr_publish(struct mroce_dev *mdev, struct mroce_mr *mr)
{
	xa_store(&mdev->mr_xa, mr->ibmr.lkey >> 8, mr, GFP_KERNEL);
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
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
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
	xa_erase(&mdev->mr_xa, mr->ibmr.lkey >> 8);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree(mr);
	atomic_dec(&mdev->num_mrs);
	return ERR_PTR(err);
}

int mroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibmr->device);
	struct mroce_mr *mr = to_mmr(ibmr);

	/* No new lookups, then wait for the ones in flight (short: they
	 * only copy one packet or hold a posted WQE's SGE).
	 */
	xa_erase(&mdev->mr_xa, ibmr->lkey >> 8);
	mroce_mr_put(mr);
	wait_for_completion(&mr->released);

	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree_rcu(mr, rcu);
	atomic_dec(&mdev->num_mrs);
	return 0;
}

struct mroce_mr *mroce_mr_get(struct mroce_dev *mdev, u32 key)
{
	struct mroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&mdev->mr_xa, key >> 8);
	if (mr && (mr->ibmr.lkey != key || !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

void mroce_mr_put(struct mroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
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

/* Copy between @buf and a range of @mr already checked with mroce_mr_check(). */
void mroce_mr_copy(struct mroce_mr *mr, u64 iova, void *buf, u32 len,
		   bool to_mr)
{
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
			return;
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
}

/* Copy @len bytes at @skb_off of @skb into a checked range of @mr. */
int mroce_mr_copy_skb(struct mroce_mr *mr, u64 iova, struct sk_buff *skb,
		      u32 skb_off, u32 len)
{
	int err;

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
void mroce_sgl_copy(const struct mroce_sge *sge, struct mroce_mr *const *mr,
		    u32 nsge, u32 off, void *buf, u32 len, bool to_sgl)
{
	u32 i, n;

	for (i = 0; i < nsge && len; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min(len, sge[i].length - off);
		mroce_mr_copy(mr[i], sge[i].addr + off, buf, n, to_sgl);
		buf += n;
		len -= n;
		off = 0;
	}
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
		mr[i] = mroce_mr_get(mdev, sge[i].lkey);
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
