// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: protection domains.  A PD has no user-space state yet; the
 * kernel object is all there is.
 */
#include <errno.h>
#include <stdlib.h>

#include "mroce.h"

struct ibv_pd *mroce_alloc_pd(struct ibv_context *ibctx)
{
	struct ibv_alloc_pd cmd = {};
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct mroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}

	return &pd->ibv_pd;
}

int mroce_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(to_mpd(ibpd));
	return 0;
}
