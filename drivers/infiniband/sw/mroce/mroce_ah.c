// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce address handles and address vectors: where the packets of an RC
 * connection (its QP's GRH) or of a UD send (the AH it names) go.  A UD
 * send WQE names its AH by number, so that user WQEs in a shared ring
 * carry no kernel pointer; the number is looked up under RCU.
 */

#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "mroce.h"

/* The address vector of a RoCE v2 GRH: IPv4 or IPv6, from the GIDs. */
int mroce_av_from_ah_attr(struct mroce_av *av, const struct rdma_ah_attr *ah)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(ah);
	const struct ib_gid_attr *sgid_attr = ah->grh.sgid_attr;

	if (!(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) || !sgid_attr)
		return -EINVAL;
	if (sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;	/* MetaRoCE runs over UDP/IP only */

	memset(av, 0, sizeof(*av));
	switch (rdma_gid_attr_network_type(sgid_attr)) {
	case RDMA_NETWORK_IPV4:
		av->family = AF_INET;
		if (!ipv6_addr_v4mapped((struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
		break;
	case RDMA_NETWORK_IPV6:
		av->family = AF_INET6;
		if (ipv6_addr_v4mapped((struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	rdma_gid2ip((struct sockaddr *)&av->saddr, &sgid_attr->gid);
	rdma_gid2ip((struct sockaddr *)&av->daddr, &grh->dgid);
	av->tclass = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	av->flow_label = grh->flow_label;
	return 0;
}

int mroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							       GFP_ATOMIC;
	struct mroce_dev *mdev = to_mdev(ibah->device);
	struct mroce_ah *ah = to_mah(ibah);
	struct mroce_create_ah_resp resp = {};
	int err;

	err = mroce_pool_add(&mdev->pool[MROCE_POOL_AH]);
	if (err)
		return err;
	ah->ref = kzalloc(sizeof(*ah->ref), gfp);
	if (!ah->ref) {
		err = -ENOMEM;
		goto err_count;
	}
	err = mroce_av_from_ah_attr(&ah->ref->av, init->ah_attr);
	if (err)
		goto err_free;
	ah->ref->pd = ibah->pd;
	err = mroce_pool_index(&mdev->pool[MROCE_POOL_AH], ah->ref, &ah->ah_num,
			       gfp);
	if (err)
		goto err_free;
	/* only UD senders need the number; RC-only providers ask for none */
	if (udata && udata->outlen >= sizeof(resp)) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_xa;
	}
	return 0;

err_xa:
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_AH], ah->ah_num);
err_free:
	kfree_rcu(ah->ref, rcu);
err_count:
	mroce_pool_del(&mdev->pool[MROCE_POOL_AH]);
	return err;
}

int mroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct mroce_dev *mdev = to_mdev(ibah->device);
	struct mroce_ah *ah = to_mah(ibah);

	/* WQEs naming it from now on fail; readers finish under RCU */
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_AH], ah->ah_num);
	kfree_rcu(ah->ref, rcu);
	mroce_pool_del(&mdev->pool[MROCE_POOL_AH]);
	return 0;
}

/* The address of AH @ah_num, if it exists and belongs to @pd. */
int mroce_ah_av(struct mroce_dev *mdev, u32 ah_num, struct ib_pd *pd,
		struct mroce_av *av)
{
	struct mroce_av_ref *ref;
	int err = -EINVAL;

	rcu_read_lock();
	ref = xa_load(&mdev->pool[MROCE_POOL_AH].xa, ah_num);
	if (ref && ref->pd == pd) {
		*av = ref->av;
		err = 0;
	}
	rcu_read_unlock();
	return err;
}
