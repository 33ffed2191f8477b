// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: address handles.  The kernel object holds the address (it
 * resolves the GID to an IP destination); a UD send WQE names it by the
 * number the kernel returned (struct mroce_create_ah_resp), which the
 * kernel looks up in the QP's PD, so a ring slot carries no pointer and
 * an AH of another PD is refused.  RC QPs take their address vector from
 * modify_qp.
 */
#include <errno.h>
#include <stdlib.h>

#include "mroce.h"

struct ibv_ah *mroce_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct mroce_create_ah_full_resp resp = {};
	struct mroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_create_ah(ibpd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	/* AH numbers start at 1: a kernel that gave none is caught here */
	if (!resp.drv.ah_num) {
		mroce_abi_err("kernel gave AH %u no number", ah->ibv_ah.handle);
		ibv_cmd_destroy_ah(&ah->ibv_ah);
		free(ah);
		errno = EPROTO;
		return NULL;
	}
	ah->ah_num = resp.drv.ah_num;

	return &ah->ibv_ah;
}

int mroce_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;

	free(to_mah(ibah));
	return 0;
}
