// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce shared rings: allocation and mmap.
 *
 * A ring lives in vmalloc_user() memory.  For a user object the buffer is
 * owned by an rdma_user_mmap_entry, so it is freed only once the object
 * is destroyed *and* the process has unmapped it (mmap_free), never while
 * a mapping could still reach it.
 */

#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "mroce.h"

int mroce_ring_alloc(struct mroce_ring *r, u32 num_slots, u32 stride,
		     struct ib_ucontext *uctx, struct mroce_ring_info *info)
{
	struct mroce_mmap_entry *e;
	int err;

	if (!num_slots || !is_power_of_2(num_slots) || stride % 8)
		return -EINVAL;
	r->num_slots = num_slots;
	r->mask = num_slots - 1;
	r->stride = stride;
	r->size = PAGE_ALIGN(MROCE_RING_DATA_OFFSET + (size_t)num_slots * stride);
	r->buf = vmalloc_user(r->size);
	if (!r->buf)
		return -ENOMEM;
	r->hdr = r->buf;
	r->mmap = NULL;
	if (!uctx)
		return 0;

	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e) {
		err = -ENOMEM;
		goto err_buf;
	}
	e->buf = r->buf;
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma_entry, r->size);
	if (err) {
		kfree(e);
		goto err_buf;
	}
	r->mmap = e;
	info->mmap_offset = rdma_user_mmap_get_offset(&e->rdma_entry);
	info->mmap_size = r->size;
	info->num_slots = num_slots;
	info->stride = stride;
	return 0;

err_buf:
	vfree(r->buf);
	r->buf = NULL;
	return err;
}

/* The object is going away: user rings live on until unmapped. */
void mroce_ring_free(struct mroce_ring *r)
{
	if (!r->buf)
		return;
	if (r->mmap)
		rdma_user_mmap_entry_remove(&r->mmap->rdma_entry);
	else
		vfree(r->buf);
	r->buf = NULL;
	r->hdr = NULL;
	r->mmap = NULL;
}

int mroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct mroce_mmap_entry *e;
	int err;

	rdma_entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	e = container_of(rdma_entry, struct mroce_mmap_entry, rdma_entry);
	if (vma->vm_end - vma->vm_start > rdma_entry->npages << PAGE_SHIFT)
		err = -EINVAL;
	else
		err = remap_vmalloc_range(vma, e->buf, 0);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

void mroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct mroce_mmap_entry *e =
		container_of(rdma_entry, struct mroce_mmap_entry, rdma_entry);

	vfree(e->buf);
	kfree(e);
}

/*
 * Kernel consumers' receive WRs into ring @r (a QP's RQ or an SRQ),
 * under the lock that serialises its producer: from prod on, while there
 * is room before @cons (the consumer's index) and each WR fits in
 * @max_sge, published together with one release of prod.  0, or -ENOMEM
 * (full) / -EINVAL (too many SGEs) with *@bad_wr at the WR that did not
 * go in.
 */
int mroce_ring_post_recv(struct mroce_ring *r, u32 cons, u32 max_sge,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	u32 prod = r->hdr->prod;
	int err = 0;
	int i;

	for (; wr; wr = wr->next) {
		struct mroce_recv_wqe *w = mroce_ring_slot(r, prod);
		struct mroce_sge *sge = (void *)(w + 1);

		if (prod - cons >= r->num_slots) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > max_sge) {
			err = -EINVAL;
			break;
		}
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		w->reserved = 0;
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		prod++;
	}
	/* WQEs are written before the index that publishes them */
	smp_store_release(&r->hdr->prod, prod);
	if (err)
		*bad_wr = wr;
	return err;
}
