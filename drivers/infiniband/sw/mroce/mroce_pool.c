// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce object pools: one mechanism for the bookkeeping every verbs
 * object needs, as rxe_pool.c is rxe's.  A pool counts its objects
 * against the limit the device advertises (query_device's max_pd,
 * max_qp, ...), and an indexed pool gives each object a number
 * (QPN, MR table index, AH number) that packets and ring slots name it
 * by, looked up in softirq under RCU.  Objects that lookups may hold
 * embed a struct mroce_pool_elem: its reference count is what a lookup
 * takes; what the last put does is the object's business.
 */

#include "mroce.h"

static const struct {
	const char *name;
	u32 max;
	u32 min_idx, max_idx;		/* indexed pools: the numbers */
} mroce_pool_info[MROCE_NUM_POOLS] = {
	[MROCE_POOL_PD] = { "pd", MROCE_MAX_PD },
	[MROCE_POOL_CQ] = { "cq", MROCE_MAX_CQ },
	[MROCE_POOL_QP] = { "qp", MROCE_MAX_QP, MROCE_MIN_QPN,
			    MROCE_WIRE_U24_MASK },
	/* lkey = index << 8 | generation */
	[MROCE_POOL_MR] = { "mr", MROCE_MAX_MR, 1, (1U << 24) - 1 },
	[MROCE_POOL_AH] = { "ah", MROCE_MAX_AH, 1, INT_MAX },
	[MROCE_POOL_SRQ] = { "srq", MROCE_MAX_SRQ },
	/* numbered by rkey index (mroce_pool_insert()), as rkey_xa */
	[MROCE_POOL_MW] = { "mw", MROCE_MAX_MW },
};

void mroce_pools_init(struct mroce_dev *mdev)
{
	int t;

	for (t = 0; t < MROCE_NUM_POOLS; t++) {
		struct mroce_pool *p = &mdev->pool[t];

		p->name = mroce_pool_info[t].name;
		p->max = mroce_pool_info[t].max;
		atomic_set(&p->count, 0);
		p->limit = XA_LIMIT(mroce_pool_info[t].min_idx,
				    mroce_pool_info[t].max_idx);
		p->next = 0;
		xa_init_flags(&p->xa, XA_FLAGS_ALLOC);
	}
}

void mroce_pools_destroy(struct mroce_dev *mdev)
{
	int t;

	for (t = 0; t < MROCE_NUM_POOLS; t++)
		xa_destroy(&mdev->pool[t].xa);
}

/* Count a new object; -ENOMEM past the device's limit. */
int mroce_pool_add(struct mroce_pool *pool)
{
	if (atomic_inc_return(&pool->count) > pool->max) {
		atomic_dec(&pool->count);
		return -ENOMEM;
	}
	return 0;
}

void mroce_pool_del(struct mroce_pool *pool)
{
	atomic_dec(&pool->count);
}

/*
 * Give @entry (NULL: reserve, publish later with mroce_pool_publish())
 * the next free number of the pool's range, cyclically, so that a
 * number freed now is not reused at once.
 */
int mroce_pool_index(struct mroce_pool *pool, void *entry, u32 *idx,
		     gfp_t gfp)
{
	int err = xa_alloc_cyclic(&pool->xa, idx, entry, pool->limit,
				  &pool->next, gfp);

	return err < 0 ? err : 0;
}

/* Give @entry the fixed number @idx (QP1); -EBUSY if it is taken. */
int mroce_pool_insert(struct mroce_pool *pool, u32 idx, void *entry)
{
	return xa_insert(&pool->xa, idx, entry, GFP_KERNEL);
}

/* Publish @entry at a number mroce_pool_index() reserved. */
void mroce_pool_publish(struct mroce_pool *pool, u32 idx, void *entry)
{
	xa_store(&pool->xa, idx, entry, GFP_KERNEL);
}

/*
 * No new lookups find number @idx; lookups already running finish under
 * RCU (the caller waits for them, synchronize_rcu(), or frees with RCU).
 */
void mroce_pool_unindex(struct mroce_pool *pool, u32 idx)
{
	xa_erase(&pool->xa, idx);
}

/*
 * The element at @idx of @xa (a pool's, or another table of the same
 * elements) with a reference taken, or NULL.  Any context.
 */
struct mroce_pool_elem *mroce_elem_get(struct xarray *xa, unsigned long idx)
{
	struct mroce_pool_elem *e;

	rcu_read_lock();
	e = xa_load(xa, idx);
	if (e && !refcount_inc_not_zero(&e->ref))
		e = NULL;
	rcu_read_unlock();
	return e;
}

struct mroce_pool_elem *mroce_pool_get(struct mroce_pool *pool, u32 idx)
{
	return mroce_elem_get(&pool->xa, idx);
}
