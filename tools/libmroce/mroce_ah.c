// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: address handles.  Only the kernel object exists (the kernel
 * resolves the GID to a destination MAC); nothing refers to an AH from
 * the rings yet, because UD QPs are not supported.  RC QPs take their
 * address vector from modify_qp.
 */
#include <errno.h>
#include <stdlib.h>

#include "mroce.h"

struct ibv_ah *mroce_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct ib_uverbs_create_ah_resp resp = {};
	struct mroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_create_ah(ibpd, &ah->ibv_ah, attr, &resp, sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}

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
