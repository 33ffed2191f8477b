// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: provider registration, device matching, device and context
 * life cycle, device/port queries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "mroce.h"

static const struct verbs_match_ent mroce_match_table[] = {
	/* What the kernel reports over netlink (ops.driver_id). */
	VERBS_DRIVER_ID(MROCE_DRIVER_ID),
	/* Fallback when no driver id is available (sysfs-only discovery). */
	VERBS_NAME_MATCH("mroce", NULL),
	{ .kind = VERBS_MATCH_SENTINEL },
};

static int mroce_query_device_ex(struct ibv_context *ibctx,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp = {};
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;

	/* The generic code leaves the firmware string to the provider. */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)((fw >> 32) & 0xffff),
		 (unsigned int)((fw >> 16) & 0xffff),
		 (unsigned int)(fw & 0xffff));
	return 0;
}

static int mroce_query_port(struct ibv_context *ibctx, uint8_t port_num,
			    struct ibv_port_attr *port_attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port_num, port_attr, &cmd,
				  sizeof(cmd));
}

static void mroce_free_context(struct ibv_context *ibctx)
{
	struct mroce_context *ctx = to_mctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/*
 * Everything not listed is NULL on purpose: libibverbs then answers the
 * verb with EOPNOTSUPP (XRC, reg_dmabuf_mr, ECE, ...).  See mroce.h.
 */
static const struct verbs_context_ops mroce_ctx_ops = {
	/* device / context: mroce_provider.c */
	.free_context = mroce_free_context,
	.query_device_ex = mroce_query_device_ex,
	.query_port = mroce_query_port,

	/* protection domains: mroce_pd.c */
	.alloc_pd = mroce_alloc_pd,
	.dealloc_pd = mroce_dealloc_pd,

	/* completion queues: mroce_cq.c */
	.create_cq = mroce_create_cq,
	.create_cq_ex = mroce_create_cq_ex,
	.destroy_cq = mroce_destroy_cq,
	.poll_cq = mroce_poll_cq,
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.resize_cq = mroce_resize_cq,

	/* queue pairs and their data path: mroce_qp.c */
	.create_qp = mroce_create_qp,
	.create_qp_ex = mroce_create_qp_ex,
	.query_qp = mroce_query_qp,
	.modify_qp = mroce_modify_qp,
	.destroy_qp = mroce_destroy_qp,
	.post_send = mroce_post_send,
	.post_recv = mroce_post_recv,

	/* shared receive queues: mroce_srq.c */
	.create_srq = mroce_create_srq,
	.modify_srq = mroce_modify_srq,
	.query_srq = mroce_query_srq,
	.destroy_srq = mroce_destroy_srq,
	.post_srq_recv = mroce_post_srq_recv,

	/* memory regions: mroce_mr.c */
	.reg_mr = mroce_reg_mr,
	.rereg_mr = mroce_rereg_mr,
	.dereg_mr = mroce_dereg_mr,

	/* memory windows: mroce_mr.c */
	.alloc_mw = mroce_alloc_mw,
	.dealloc_mw = mroce_dealloc_mw,
	.bind_mw = mroce_bind_mw,

	/* address handles: mroce_ah.c */
	.create_ah = mroce_create_ah,
	.destroy_ah = mroce_destroy_ah,
};

static struct verbs_context *mroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct mroce_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct mroce_context *ctx;
	int err;

	(void)private_data;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   MROCE_DRIVER_ID);
	if (!ctx)
		return NULL;

	err = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_uninit;

	/*
	 * The driver part of the response is zero-initialised above, so a
	 * kernel that does not fill it in is caught here as well.
	 */
	if (resp.drv.abi_version != MROCE_UVERBS_ABI_VERSION) {
		fprintf(stderr,
			"libmroce: %s: kernel driver speaks mroce ABI %u, this provider needs %u\n",
			ibdev->name, resp.drv.abi_version,
			MROCE_UVERBS_ABI_VERSION);
		err = EPROTO;
		goto err_uninit;
	}
	ctx->kernel_abi_version = resp.drv.abi_version;

	verbs_set_ops(&ctx->vctx, &mroce_ctx_ops);
	return &ctx->vctx;

err_uninit:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = err;
	return NULL;
}

static struct verbs_device *mroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct mroce_device *dev;

	(void)sysfs_dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	return &dev->vdev;
}

static void mroce_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct mroce_device, vdev));
}

static const struct verbs_device_ops mroce_dev_ops = {
	.name = "mroce",
	.match_min_abi_version = MROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = MROCE_UVERBS_ABI_VERSION,
	.match_table = mroce_match_table,
	.alloc_device = mroce_alloc_device,
	.uninit_device = mroce_uninit_device,
	.alloc_context = mroce_alloc_context,
};

PROVIDER_DRIVER(mroce, mroce_dev_ops)
