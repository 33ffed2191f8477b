// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce memory regions: registration, key lookup, access checks and the
 * copies in and out of registered memory.
 *
 * Keys.  An lkey is (table index << 8 | key byte), so a stale key of a
 * deregistered region does not match its successor in the same slot;
 * lkeys are found only in the MR pool and never accepted from the wire.
 * An rkey is a random 32-bit number of its own: its upper 24 bits index
 * rkey_xa, and the whole key must match.  The peer sees rkeys (and the
 * lkeys the spec puts in a READ's sink) but cannot turn one into the
 * other or guess another region's.  The key byte is random too, except
 * for fast-registration MRs, whose consumer picks it for each
 * registration (ib_update_fast_reg_key()), so that a key of an earlier
 * registration no longer matches.
 *
 * Lifetime.  Lookups run in softirq under RCU and take a reference, and
 * fetched WQEs hold one per SGE for as long as they are outstanding, which
 * a peer can make forever (half a message).  So dereg does not wait: it
 * takes the region out of both tables, marks it dead (every later copy
 * through a held reference fails, a protection error for its WQE, as the
 * IB spec says of access after deregistration) and drops its reference;
 * the last holder's put unpins the pages from a work item.  Nothing
 * outside a region's [iova, iova + length) is ever touched.
 *
 * A fast-registration MR maps memory of a kernel consumer, which frees
 * it once an invalidation (or the dereg) returns: so copies through it
 * run under the MR's lock, after checking the state, key and range the
 * mapping has then, and an invalidation takes the lock for writing.
 */

#include <linux/highmem.h>
#include <linux/skbuff.h>
#include <rdma/ib_umem.h>

#include "mroce.h"

/* IB_ACCESS_MW_BIND: memory windows may be bound to it (mroce_mw.c). */
#define MROCE_MR_ACCESS_OK (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			    IB_ACCESS_MW_BIND | IB_ACCESS_OPTIONAL)

/* The pages go, from a work item: ib_umem_release() may sleep. */
static void mroce_mr_free_work(struct work_struct *work)
{
	struct mroce_mr *mr = container_of(work, struct mroce_mr, free_work);

	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kvfree(mr->page_va);
	kvfree(mr->stage_va);
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
	rwlock_init(&mr->lock);

	err = mroce_pool_index(&mdev->pool[MROCE_POOL_MR], NULL, &idx,
			       GFP_KERNEL);
	if (err)
		goto err_free;
	mr->lkey = idx << 8 | (get_random_u32() & 0xff);
	/* a fresh random rkey; a collision of its upper bits draws again */
	do {
		mr->rkey = get_random_u32();
		err = mr->rkey >> 8 ? xa_insert(&mdev->rkey_xa, mr->rkey >> 8,
						NULL, GFP_KERNEL) : -EBUSY;
	} while (err == -EBUSY);
	if (err)
		goto err_idx;
	mr->ibmr.lkey = mr->lkey;
	mr->ibmr.rkey = mr->rkey;
	return mr;

err_idx:
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_MR], idx);
err_free:
	kfree(mr);
err_count:
	mroce_pool_del(&mdev->pool[MROCE_POOL_MR]);
	return ERR_PTR(err);
}

/* Undo mroce_mr_new() and what was set up since, before publication. */
static void mroce_mr_unnew(struct mroce_dev *mdev, struct mroce_mr *mr)
{
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_MR], mr->lkey >> 8);
	xa_erase(&mdev->rkey_xa, mr->rkey >> 8);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kvfree(mr->page_va);
	kvfree(mr->stage_va);
	kfree(mr);
	mroce_pool_del(&mdev->pool[MROCE_POOL_MR]);
}

/* Make @mr visible to lookups; until now its slots held NULL. */
static void mroce_mr_publish(struct mroce_dev *mdev, struct mroce_mr *mr)
{
	mroce_pool_publish(&mdev->pool[MROCE_POOL_MR], mr->lkey >> 8,
			   &mr->elem);
	xa_store(&mdev->rkey_xa, mr->rkey >> 8, &mr->elem, GFP_KERNEL);
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
	mroce_mr_unnew(mdev, mr);
	return ERR_PTR(err);
}

/*
 * ibv_rereg_mr: a new registration with what changes (IB_MR_REREG_TRANS:
 * the range, _ACCESS: the access, _PD: the PD) and the rest of the old
 * one.  ib_core puts the new MR in the old one's place and deregisters
 * the old: the keys change, and WQEs or peers using the old ones fail, as
 * after a deregistration.
 */
struct ib_mr *mroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata)
{
	struct mroce_mr *mr = to_mmr(ibmr);

	if (mr->type != MROCE_MR_USER || !mr->umem)
		return ERR_PTR(-EINVAL);
	/* ib_core deregisters the old one, which fails while windows are bound */
	if (atomic_read(&mr->num_mw))
		return ERR_PTR(-EBUSY);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->umem->address;
		length = mr->length;
		iova = mr->iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (!(flags & IB_MR_REREG_PD))
		pd = ibmr->pd;
	return mroce_reg_user_mr(pd, start, length, iova, access, udata);
}

int mroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibmr->device);
	struct mroce_mr *mr = to_mmr(ibmr);

	/*
	 * Not while memory windows are bound to it (IBA 10.6.7.2.6); a
	 * bind checks dead under the same lock.  A fast MR's memory may be
	 * freed on return: no copy under way.
	 */
	write_lock_bh(&mr->lock);
	if (atomic_read(&mr->num_mw)) {
		write_unlock_bh(&mr->lock);
		return -EBUSY;
	}
	WRITE_ONCE(mr->dead, true);
	mr->state = MROCE_MR_FREE;
	write_unlock_bh(&mr->lock);
	/* no new lookups; held references find it dead and fail */
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_MR], mr->lkey >> 8);
	xa_erase(&mdev->rkey_xa, mr->rkey >> 8);
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

	/* another generation, or another registration of a fast MR */
	if (mr && READ_ONCE(mr->lkey) != lkey) {
		mroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/* The region of a remote key (from the wire), with a reference, or NULL. */
struct mroce_mr *mroce_mr_get_rkey(struct mroce_dev *mdev, u32 rkey)
{
	struct mroce_pool_elem *e = mroce_elem_get(&mdev->rkey_xa, rkey >> 8);
	struct mroce_mr *mr = e ? container_of(e, struct mroce_mr, elem) : NULL;

	if (mr && READ_ONCE(mr->rkey) != rkey) {
		mroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
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
static bool mroce_mr_in(const struct mroce_mr *mr, u64 iova, u64 len)
{
	return iova >= mr->iova && iova + len >= iova &&
	       iova + len <= mr->iova + mr->length;
}

int mroce_mr_check(struct mroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access)
{
	int err = 0;

	if (mr->ibmr.pd != pd)
		return -EACCES;
	if (mr->type == MROCE_MR_FAST) {
		read_lock_bh(&mr->lock);
		if (mr->state != MROCE_MR_VALID ||
		    (mr->access & access) != access || !mroce_mr_in(mr, iova, len))
			err = -EACCES;
		read_unlock_bh(&mr->lock);
		return err;
	}
	if ((mr->access & access) != access)
		return -EACCES;
	if (mr->type == MROCE_MR_DMA)
		return 0;
	return mroce_mr_in(mr, iova, len) ? 0 : -EACCES;
}

/*
 * Under a fast MR's lock: may a copy of @len bytes at @iova that came
 * with @key go ahead?  The registration it was checked against may have
 * been invalidated, or replaced by one with another key, since.
 */
static bool mroce_mr_fast_ok(const struct mroce_mr *mr, u32 key, u64 iova,
			     u32 len)
{
	return !mr->dead && mr->state == MROCE_MR_VALID &&
	       (key == mr->lkey || key == mr->rkey) &&
	       mroce_mr_in(mr, iova, len);
}

/* Byte @iova of a fast MR, checked: its address and the bytes left in its page. */
static void *mroce_mr_fast_va(const struct mroce_mr *mr, u64 iova, u32 *room)
{
	u64 mask = (1ULL << mr->page_shift) - 1;
	u64 pos = iova - mr->iova + (mr->iova & mask);

	*room = (u32)min_t(u64, U32_MAX, mask + 1 - (pos & mask));
	return (void *)(uintptr_t)(mr->page_va[pos >> mr->page_shift] +
				   (pos & mask));
}

/* Copy between @buf and a fast MR; see mroce_mr_copy(). */
static int mroce_mr_fast_copy(struct mroce_mr *mr, u32 key, u64 iova,
			      void *buf, struct sk_buff *skb, u32 skb_off,
			      u32 len, bool to_mr)
{
	int err = 0;

	read_lock_bh(&mr->lock);
	if (!mroce_mr_fast_ok(mr, key, iova, len))
		err = -EACCES;
	while (!err && len) {
		u32 n;
		void *va = mroce_mr_fast_va(mr, iova, &n);

		n = min(n, len);
		if (skb)
			err = skb_copy_bits(skb, skb_off, va, n);
		else if (to_mr)
			memcpy(va, buf, n);
		else
			memcpy(buf, va, n);
		iova += n;
		buf += n;
		skb_off += n;
		len -= n;
	}
	read_unlock_bh(&mr->lock);
	return err;
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
 * mroce_mr_check(); -EACCES once the region is deregistered, or for a
 * fast MR, once @key (the one the access came with) is no longer its
 * registration's.
 */
int mroce_mr_copy(struct mroce_mr *mr, u32 key, u64 iova, void *buf, u32 len,
		  bool to_mr)
{
	if (READ_ONCE(mr->dead))
		return -EACCES;
	if (mr->type == MROCE_MR_FAST)
		return mroce_mr_fast_copy(mr, key, iova, buf, NULL, 0, len,
					  to_mr);
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
int mroce_mr_copy_skb(struct mroce_mr *mr, u32 key, u64 iova,
		      struct sk_buff *skb, u32 skb_off, u32 len)
{
	int err;

	if (READ_ONCE(mr->dead))
		return -EACCES;
	if (mr->type == MROCE_MR_FAST)
		return mroce_mr_fast_copy(mr, key, iova, NULL, skb, skb_off,
					  len, true);
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

/* One ATOMIC on the word at @p; returns its original value. */
static u64 mroce_word_atomic(u64 *p, bool cmp_swap, u64 compare, u64 swap_add)
{
	u64 orig = READ_ONCE(*p);

	if (!cmp_swap)
		WRITE_ONCE(*p, orig + swap_add);
	else if (orig == compare)
		WRITE_ONCE(*p, swap_add);
	return orig;
}

/*
 * Execute an ATOMIC on the 8-byte aligned word at @iova of a checked MR,
 * which came with @key: compare-and-swap (@cmp_swap) or fetch-and-add, the
 * original value in *@orig.  The caller serialises the device's atomics.
 * -EACCES if the region went (see mroce_mr_copy()).
 */
int mroce_mr_atomic(struct mroce_mr *mr, u32 key, u64 iova, bool cmp_swap,
		    u64 compare, u64 swap_add, u64 *orig)
{
	unsigned int off;
	int err = 0;
	void *map;
	u32 room;

	if (READ_ONCE(mr->dead))
		return -EACCES;
	switch (mr->type) {
	case MROCE_MR_DMA:
		*orig = mroce_word_atomic((u64 *)(uintptr_t)iova, cmp_swap,
					  compare, swap_add);
		break;
	case MROCE_MR_FAST:
		read_lock_bh(&mr->lock);
		if (mroce_mr_fast_ok(mr, key, iova, sizeof(u64)))
			*orig = mroce_word_atomic(mroce_mr_fast_va(mr, iova, &room),
						  cmp_swap, compare, swap_add);
		else
			err = -EACCES;
		read_unlock_bh(&mr->lock);
		break;
	default:
		map = kmap_local_page(mroce_mr_page(mr, iova, &off));
		*orig = mroce_word_atomic(map + off, cmp_swap, compare,
					  swap_add);
		kunmap_local(map);
	}
	return err;
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
		err = mroce_mr_copy(mr[i], sge[i].lkey, sge[i].addr + off, buf,
				    n, to_sgl);
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
		err = mroce_mr_copy_skb(mr[i], sge[i].lkey, sge[i].addr + off,
					skb, skb_off, n);
		if (err)
			return err;
		skb_off += n;
		len -= n;
		off = 0;
	}
	return len ? -EINVAL : 0;
}

/*
 * Zero-copy transmit.  Should bytes [@off, @off + @len) of a resolved SGL
 * go into an skb as page fragments rather than a copy?  Only payloads of
 * at least zcopy_min bytes (below it a copy costs less than the page
 * references and the receiver's fragment walk), that fit in one skb's
 * fragments, from user MRs: their pages are pinned by the umem, and a
 * page reference keeps one alive as long as a packet needs it.  DMA and
 * fast MRs name kernel memory, which may be slab and must not be lent to
 * the network stack.
 */
bool mroce_sgl_zcopy_ok(const struct mroce_sge *sge,
			struct mroce_mr *const *mr, u32 nsge, u32 off, u32 len)
{
	unsigned int min = READ_ONCE(mroce_zcopy_min), frags = 0;
	u32 i, n;
	u64 pos;

	if (!min || len < min)
		return false;
	for (i = 0; i < nsge && len; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		if (mr[i]->type != MROCE_MR_USER)
			return false;
		n = min(len, sge[i].length - off);
		pos = sge[i].addr + off - mr[i]->iova + mr[i]->page_offset;
		frags += DIV_ROUND_UP(offset_in_page(pos) + n, PAGE_SIZE);
		if (frags > MAX_SKB_FRAGS)
			return false;
		len -= n;
		off = 0;
	}
	return !len;
}

/*
 * Append bytes [@off, @off + @len) of a resolved SGL, which
 * mroce_sgl_zcopy_ok() accepted, to @skb as page fragments.  Each holds
 * a page reference: the packet may outlive its WQE (a clone in a qdisc,
 * a capture) and the region's deregistration.  The pages remain the
 * process's to write, so the skb is marked SKBFL_SHARED_FRAG: whatever
 * would change or checksum the payload in place copies it first.
 * -EACCES once a region is deregistered (the caller frees @skb and the
 * references taken so far with it).
 */
int mroce_sgl_attach_skb(const struct mroce_sge *sge,
			 struct mroce_mr *const *mr, u32 nsge, u32 off,
			 struct sk_buff *skb, u32 len)
{
	u32 i, n, c;
	u64 iova;

	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	for (i = 0; i < nsge && len; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		if (READ_ONCE(mr[i]->dead))
			return -EACCES;
		n = min(len, sge[i].length - off);
		len -= n;
		for (iova = sge[i].addr + off; n; iova += c, n -= c) {
			unsigned int poff;
			struct page *page = mroce_mr_page(mr[i], iova, &poff);

			c = min_t(u32, n, PAGE_SIZE - poff);
			get_page(page);
			skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page,
					   poff, c);
			skb_len_add(skb, c);
		}
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

/* --- fast registration (kernel consumers) ------------------------------ */

struct ib_mr *mroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct mroce_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > MROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = mroce_mr_new(pd, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->type = MROCE_MR_FAST;
	mr->state = MROCE_MR_FREE;
	mr->max_pages = max_num_sg;
	mr->page_va = kvcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	mr->stage_va = kvcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->page_va || !mr->stage_va) {
		mroce_mr_unnew(to_mdev(pd->device), mr);
		return ERR_PTR(-ENOMEM);
	}
	mroce_mr_publish(to_mdev(pd->device), mr);
	return &mr->ibmr;
}

static int mroce_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct mroce_mr *mr = to_mmr(ibmr);

	if (mr->stage_npages >= mr->max_pages)
		return -ENOMEM;
	mr->stage_va[mr->stage_npages++] = addr;
	return 0;
}

/*
 * The consumer's page list for the next IB_WR_REG_MR; the live mapping
 * does not change until that WQE executes.  mroce uses virtual DMA, so
 * the DMA addresses are kernel addresses.
 */
int mroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct mroce_mr *mr = to_mmr(ibmr);

	if (mr->type != MROCE_MR_FAST || !is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < SZ_4K)
		return -EINVAL;
	mr->stage_npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, mroce_mr_set_page);
}

/* A fast MR of @pd by a key's index (any key byte), with a reference. */
static struct mroce_mr *mroce_mr_get_fast(struct mroce_dev *mdev,
					  struct ib_pd *pd, u32 lkey)
{
	struct mroce_pool_elem *e = mroce_pool_get(&mdev->pool[MROCE_POOL_MR],
						   lkey >> 8);
	struct mroce_mr *mr = e ? container_of(e, struct mroce_mr, elem) : NULL;

	if (mr && (mr->type != MROCE_MR_FAST || mr->ibmr.pd != pd)) {
		mroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/*
 * IB_WR_REG_MR on a QP of @pd: MR @lkey's index (the consumer may have
 * changed its key byte already) becomes VALID with @key's key byte,
 * @access and the page list map_mr_sg() staged.  The MR must be FREE
 * (the IBA's fast register needs the Free state: registering over a
 * valid registration is an error), and @key one of this MR's.
 */
enum ib_wc_status mroce_mr_fast_reg(struct ib_pd *pd, u32 lkey, u32 key,
				    int access)
{
	struct mroce_mr *mr = mroce_mr_get_fast(to_mdev(pd->device), pd, lkey);
	enum ib_wc_status st = IB_WC_MW_BIND_ERR;
	struct ib_mr *ibmr;
	u64 span;

	if (!mr)
		return IB_WC_MW_BIND_ERR;
	ibmr = &mr->ibmr;
	if ((access & ~MROCE_MR_ACCESS_OK) ||
	    ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IB_ACCESS_LOCAL_WRITE)))
		goto out;
	if ((key >> 8) != (mr->rkey >> 8) && (key >> 8) != (mr->lkey >> 8))
		goto out;
	if (!mr->stage_npages || !ibmr->length ||
	    ibmr->iova + ibmr->length < ibmr->iova)
		goto out;
	/* the staged pages cover [iova, iova + length) */
	span = (u64)mr->stage_npages * ibmr->page_size -
	       (ibmr->iova & (ibmr->page_size - 1));
	if (ibmr->length > span)
		goto out;

	write_lock_bh(&mr->lock);
	if (mr->state == MROCE_MR_FREE && !mr->dead) {
		memcpy(mr->page_va, mr->stage_va,
		       mr->stage_npages * sizeof(u64));
		mr->npages = mr->stage_npages;
		mr->page_shift = ilog2(ibmr->page_size);
		mr->iova = ibmr->iova;
		mr->length = ibmr->length;
		mr->access = access & ~IB_ACCESS_OPTIONAL;
		WRITE_ONCE(mr->lkey, (mr->lkey & ~0xffU) | (key & 0xff));
		WRITE_ONCE(mr->rkey, (mr->rkey & ~0xffU) | (key & 0xff));
		mr->state = MROCE_MR_VALID;
		st = IB_WC_SUCCESS;
	}
	write_unlock_bh(&mr->lock);
out:
	mroce_mr_put(mr);
	return st;
}

/* Invalidate @mr if @key is its current lkey or rkey; 0 or -EINVAL. */
static int mroce_mr_invalidate(struct mroce_mr *mr, u32 key, bool remote)
{
	int err = -EINVAL;

	write_lock_bh(&mr->lock);
	if ((key == mr->rkey || (!remote && key == mr->lkey)) &&
	    (mr->state == MROCE_MR_VALID || !remote)) {
		mr->state = MROCE_MR_FREE;
		err = 0;
	}
	write_unlock_bh(&mr->lock);
	return err;
}

/*
 * IB_WR_LOCAL_INV of @key (an lkey or an rkey of a fast MR of @pd).
 * Invalidating a FREE region again is allowed; when it returns no
 * access through the region is under way.
 */
enum ib_wc_status mroce_mr_local_inv(struct mroce_dev *mdev, struct ib_pd *pd,
				     u32 key)
{
	struct mroce_mr *mr = mroce_mr_get_rkey(mdev, key);
	int err = -EINVAL;

	if (mr && (mr->type != MROCE_MR_FAST || mr->ibmr.pd != pd)) {
		mroce_mr_put(mr);
		mr = NULL;
	}
	if (!mr) {
		mr = mroce_mr_get_fast(mdev, pd, key);
		if (mr && READ_ONCE(mr->lkey) != key) {
			mroce_mr_put(mr);
			mr = NULL;
		}
	}
	if (mr) {
		err = mroce_mr_invalidate(mr, key, false);
		mroce_mr_put(mr);
	}
	return err ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

/*
 * SEND_WITH_INV from the peer, when its message completes: @rkey must be
 * the rkey of a VALID fast MR of the QP's @pd.  0 or -EACCES.
 */
int mroce_mr_remote_inv(struct mroce_dev *mdev, struct ib_pd *pd, u32 rkey)
{
	struct mroce_mr *mr = mroce_mr_get_rkey(mdev, rkey);
	int err = -EACCES;

	if (!mr)
		return -EACCES;
	if (mr->type == MROCE_MR_FAST && mr->ibmr.pd == pd &&
	    !mroce_mr_invalidate(mr, rkey, true))
		err = 0;
	mroce_mr_put(mr);
	return err;
}
