// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Print sizeof/offsetof of every provider-ABI structure member libmroce
 * declares in mroce_verbs_provider.h, one "name value" per line.
 *
 * Built twice by tests/check_abi_vs_upstream.sh: once against our header and
 * once (-DMROCE_DUMP_UPSTREAM) against rdma-core's own <infiniband/driver.h>
 * from a configured rdma-core source tree.  The two outputs must be equal.
 * Members are looked up by name, so a missing, extra or reordered member
 * shows up as a differing offset or size.
 */
#include <stdio.h>
#include <stddef.h>

#ifdef MROCE_DUMP_UPSTREAM
#include <infiniband/driver.h>
#else
#include "../mroce_verbs_provider.h"
#endif

#define SZ(type) printf("sizeof(" #type ") %zu\n", sizeof(type))
#define OFF(type, memb) \
	printf("offsetof(" #type ", " #memb ") %zu\n", offsetof(type, memb))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct ops_member {
	const char *name;
	size_t offset;
};

#define OPS_ENT(memb) { #memb, offsetof(struct verbs_context_ops, memb) }

/* Every member of v44's struct verbs_context_ops, by name. */
static const struct ops_member context_ops[] = {
	OPS_ENT(advise_mr),
	OPS_ENT(alloc_dm),
	OPS_ENT(alloc_mw),
	OPS_ENT(alloc_null_mr),
	OPS_ENT(alloc_parent_domain),
	OPS_ENT(alloc_pd),
	OPS_ENT(alloc_td),
	OPS_ENT(async_event),
	OPS_ENT(attach_counters_point_flow),
	OPS_ENT(attach_mcast),
	OPS_ENT(bind_mw),
	OPS_ENT(close_xrcd),
	OPS_ENT(cq_event),
	OPS_ENT(create_ah),
	OPS_ENT(create_counters),
	OPS_ENT(create_cq),
	OPS_ENT(create_cq_ex),
	OPS_ENT(create_flow),
	OPS_ENT(create_flow_action_esp),
	OPS_ENT(create_qp),
	OPS_ENT(create_qp_ex),
	OPS_ENT(create_rwq_ind_table),
	OPS_ENT(create_srq),
	OPS_ENT(create_srq_ex),
	OPS_ENT(create_wq),
	OPS_ENT(dealloc_mw),
	OPS_ENT(dealloc_pd),
	OPS_ENT(dealloc_td),
	OPS_ENT(dereg_mr),
	OPS_ENT(destroy_ah),
	OPS_ENT(destroy_counters),
	OPS_ENT(destroy_cq),
	OPS_ENT(destroy_flow),
	OPS_ENT(destroy_flow_action),
	OPS_ENT(destroy_qp),
	OPS_ENT(destroy_rwq_ind_table),
	OPS_ENT(destroy_srq),
	OPS_ENT(destroy_wq),
	OPS_ENT(detach_mcast),
	OPS_ENT(free_context),
	OPS_ENT(free_dm),
	OPS_ENT(get_srq_num),
	OPS_ENT(import_dm),
	OPS_ENT(import_mr),
	OPS_ENT(import_pd),
	OPS_ENT(modify_cq),
	OPS_ENT(modify_flow_action_esp),
	OPS_ENT(modify_qp),
	OPS_ENT(modify_qp_rate_limit),
	OPS_ENT(modify_srq),
	OPS_ENT(modify_wq),
	OPS_ENT(open_qp),
	OPS_ENT(open_xrcd),
	OPS_ENT(poll_cq),
	OPS_ENT(post_recv),
	OPS_ENT(post_send),
	OPS_ENT(post_srq_ops),
	OPS_ENT(post_srq_recv),
	OPS_ENT(query_device_ex),
	OPS_ENT(query_ece),
	OPS_ENT(query_port),
	OPS_ENT(query_qp),
	OPS_ENT(query_qp_data_in_order),
	OPS_ENT(query_rt_values),
	OPS_ENT(query_srq),
	OPS_ENT(read_counters),
	OPS_ENT(reg_dm_mr),
	OPS_ENT(reg_dmabuf_mr),
	OPS_ENT(reg_mr),
	OPS_ENT(req_notify_cq),
	OPS_ENT(rereg_mr),
	OPS_ENT(resize_cq),
	OPS_ENT(set_ece),
	OPS_ENT(unimport_dm),
	OPS_ENT(unimport_mr),
	OPS_ENT(unimport_pd),
};

/*
 * Signatures of the entry points and of the ops members libmroce uses.
 * The same expected types are checked against both headers.
 */
#define SAME_TYPE(expr, type) \
	_Static_assert(__builtin_types_compatible_p(__typeof__(expr), type), \
		       #expr " has an unexpected type")

/* Only used inside __typeof__. */
static const struct verbs_device_ops dev_ops_probe __attribute__((unused));
static const struct verbs_context_ops ctx_ops_probe __attribute__((unused));

SAME_TYPE(verbs_register_driver, void(const struct verbs_device_ops *));
SAME_TYPE(_verbs_init_and_alloc_context,
	  void *(struct ibv_device *, int, size_t, struct verbs_context *,
		 uint32_t));
SAME_TYPE(verbs_uninit_context, void(struct verbs_context *));
SAME_TYPE(verbs_set_ops,
	  void(struct verbs_context *, const struct verbs_context_ops *));
SAME_TYPE(__verbs_log,
	  void(struct verbs_context *, uint32_t, const char *, ...));
SAME_TYPE(ibv_cmd_get_context,
	  int(struct verbs_context *, struct ibv_get_context *, size_t,
	      struct ib_uverbs_get_context_resp *, size_t));
SAME_TYPE(ibv_cmd_query_device_any,
	  int(struct ibv_context *, const struct ibv_query_device_ex_input *,
	      struct ibv_device_attr_ex *, size_t,
	      struct ib_uverbs_ex_query_device_resp *, size_t *));
SAME_TYPE(ibv_cmd_query_port,
	  int(struct ibv_context *, uint8_t, struct ibv_port_attr *,
	      struct ibv_query_port *, size_t));
SAME_TYPE(ibv_cmd_alloc_pd,
	  int(struct ibv_context *, struct ibv_pd *, struct ibv_alloc_pd *,
	      size_t, struct ib_uverbs_alloc_pd_resp *, size_t));
SAME_TYPE(ibv_cmd_dealloc_pd, int(struct ibv_pd *));
SAME_TYPE(ibv_cmd_create_cq,
	  int(struct ibv_context *, int, struct ibv_comp_channel *, int,
	      struct ibv_cq *, struct ibv_create_cq *, size_t,
	      struct ib_uverbs_create_cq_resp *, size_t));
SAME_TYPE(ibv_cmd_req_notify_cq, int(struct ibv_cq *, int));
SAME_TYPE(ibv_cmd_resize_cq,
	  int(struct ibv_cq *, int, struct ibv_resize_cq *, size_t,
	      struct ib_uverbs_resize_cq_resp *, size_t));
SAME_TYPE(ibv_cmd_destroy_cq, int(struct ibv_cq *));
SAME_TYPE(ibv_cmd_create_qp,
	  int(struct ibv_pd *, struct ibv_qp *, struct ibv_qp_init_attr *,
	      struct ibv_create_qp *, size_t,
	      struct ib_uverbs_create_qp_resp *, size_t));
SAME_TYPE(ibv_cmd_query_qp,
	  int(struct ibv_qp *, struct ibv_qp_attr *, int,
	      struct ibv_qp_init_attr *, struct ibv_query_qp *, size_t));
SAME_TYPE(ibv_cmd_modify_qp,
	  int(struct ibv_qp *, struct ibv_qp_attr *, int,
	      struct ibv_modify_qp *, size_t));
SAME_TYPE(ibv_cmd_destroy_qp, int(struct ibv_qp *));
SAME_TYPE(ibv_cmd_reg_mr,
	  int(struct ibv_pd *, void *, size_t, uint64_t, int,
	      struct verbs_mr *, struct ibv_reg_mr *, size_t,
	      struct ib_uverbs_reg_mr_resp *, size_t));
SAME_TYPE(ibv_cmd_dereg_mr, int(struct verbs_mr *));
SAME_TYPE(ibv_cmd_create_ah,
	  int(struct ibv_pd *, struct ibv_ah *, struct ibv_ah_attr *,
	      struct ib_uverbs_create_ah_resp *, size_t));
SAME_TYPE(ibv_cmd_destroy_ah, int(struct ibv_ah *));

SAME_TYPE(dev_ops_probe.match_device,
	  bool (*)(struct verbs_sysfs_dev *));
SAME_TYPE(dev_ops_probe.alloc_context,
	  struct verbs_context *(*)(struct ibv_device *, int, void *));
SAME_TYPE(dev_ops_probe.import_context,
	  struct verbs_context *(*)(struct ibv_device *, int));
SAME_TYPE(dev_ops_probe.alloc_device,
	  struct verbs_device *(*)(struct verbs_sysfs_dev *));
SAME_TYPE(dev_ops_probe.uninit_device,
	  void (*)(struct verbs_device *));

SAME_TYPE(ctx_ops_probe.alloc_pd,
	  struct ibv_pd *(*)(struct ibv_context *));
SAME_TYPE(ctx_ops_probe.dealloc_pd,
	  int (*)(struct ibv_pd *));
SAME_TYPE(ctx_ops_probe.free_context,
	  void (*)(struct ibv_context *));
SAME_TYPE(ctx_ops_probe.query_device_ex,
	  int (*)(struct ibv_context *, const struct ibv_query_device_ex_input *,
		  struct ibv_device_attr_ex *, size_t));
SAME_TYPE(ctx_ops_probe.query_port,
	  int (*)(struct ibv_context *, uint8_t, struct ibv_port_attr *));
SAME_TYPE(ctx_ops_probe.create_cq,
	  struct ibv_cq *(*)(struct ibv_context *, int,
			     struct ibv_comp_channel *, int));
SAME_TYPE(ctx_ops_probe.destroy_cq, int (*)(struct ibv_cq *));
SAME_TYPE(ctx_ops_probe.poll_cq, int (*)(struct ibv_cq *, int, struct ibv_wc *));
SAME_TYPE(ctx_ops_probe.req_notify_cq, int (*)(struct ibv_cq *, int));
SAME_TYPE(ctx_ops_probe.resize_cq, int (*)(struct ibv_cq *, int));
SAME_TYPE(ctx_ops_probe.create_qp,
	  struct ibv_qp *(*)(struct ibv_pd *, struct ibv_qp_init_attr *));
SAME_TYPE(ctx_ops_probe.query_qp,
	  int (*)(struct ibv_qp *, struct ibv_qp_attr *, int,
		  struct ibv_qp_init_attr *));
SAME_TYPE(ctx_ops_probe.modify_qp,
	  int (*)(struct ibv_qp *, struct ibv_qp_attr *, int));
SAME_TYPE(ctx_ops_probe.destroy_qp, int (*)(struct ibv_qp *));
SAME_TYPE(ctx_ops_probe.post_send,
	  int (*)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **));
SAME_TYPE(ctx_ops_probe.post_recv,
	  int (*)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **));
SAME_TYPE(ctx_ops_probe.reg_mr,
	  struct ibv_mr *(*)(struct ibv_pd *, void *, size_t, uint64_t, int));
SAME_TYPE(ctx_ops_probe.dereg_mr, int (*)(struct verbs_mr *));
SAME_TYPE(ctx_ops_probe.create_ah,
	  struct ibv_ah *(*)(struct ibv_pd *, struct ibv_ah_attr *));
SAME_TYPE(ctx_ops_probe.destroy_ah, int (*)(struct ibv_ah *));

int main(void)
{
	SZ(struct verbs_match_ent);
	OFF(struct verbs_match_ent, driver_data);
	OFF(struct verbs_match_ent, u.modalias);
	OFF(struct verbs_match_ent, u.driver_id);
	OFF(struct verbs_match_ent, vendor);
	OFF(struct verbs_match_ent, device);
	OFF(struct verbs_match_ent, kind);
	printf("VERBS_MATCH_SENTINEL %d\n", VERBS_MATCH_SENTINEL);
	printf("VERBS_MATCH_PCI %d\n", VERBS_MATCH_PCI);
	printf("VERBS_MATCH_MODALIAS %d\n", VERBS_MATCH_MODALIAS);
	printf("VERBS_MATCH_DRIVER_ID %d\n", VERBS_MATCH_DRIVER_ID);
	{
		static const struct verbs_match_ent byid = VERBS_DRIVER_ID(7);
		static const struct verbs_match_ent byname =
			VERBS_NAME_MATCH("mroce", NULL);

		printf("VERBS_DRIVER_ID(7) kind=%u id=%llu\n", byid.kind,
		       (unsigned long long)byid.u.driver_id);
		printf("VERBS_NAME_MATCH(\"mroce\") kind=%u pattern=%s\n",
		       byname.kind, byname.u.modalias);
	}

	SZ(struct verbs_device_ops);
	OFF(struct verbs_device_ops, name);
	OFF(struct verbs_device_ops, match_min_abi_version);
	OFF(struct verbs_device_ops, match_max_abi_version);
	OFF(struct verbs_device_ops, match_table);
	OFF(struct verbs_device_ops, static_providers);
	OFF(struct verbs_device_ops, match_device);
	OFF(struct verbs_device_ops, alloc_context);
	OFF(struct verbs_device_ops, import_context);
	OFF(struct verbs_device_ops, alloc_device);
	OFF(struct verbs_device_ops, uninit_device);

	SZ(struct ibv_device);
	SZ(struct verbs_device);
	OFF(struct verbs_device, device);
	OFF(struct verbs_device, ops);
	OFF(struct verbs_device, refcount);
	OFF(struct verbs_device, entry);
	OFF(struct verbs_device, entry.next);
	OFF(struct verbs_device, entry.prev);
	OFF(struct verbs_device, sysfs);
	OFF(struct verbs_device, core_support);

	SZ(struct verbs_context);
	SZ(struct verbs_context_ops);
	for (size_t i = 0; i < ARRAY_SIZE(context_ops); i++)
		printf("offsetof(struct verbs_context_ops, %s) %zu\n",
		       context_ops[i].name, context_ops[i].offset);

	SZ(struct ibv_get_context);
	OFF(struct ibv_get_context, hdr);
	OFF(struct ibv_get_context, core_payload);
	SZ(struct ibv_query_port);
	OFF(struct ibv_query_port, hdr);
	OFF(struct ibv_query_port, core_payload);
	OFF(struct ibv_query_port, core_payload.port_num);
	SZ(struct ibv_alloc_pd);
	OFF(struct ibv_alloc_pd, hdr);
	OFF(struct ibv_alloc_pd, core_payload);
	SZ(struct ibv_create_cq);
	OFF(struct ibv_create_cq, core_payload);
	OFF(struct ibv_create_cq, core_payload.cqe);
	SZ(struct ibv_resize_cq);
	OFF(struct ibv_resize_cq, core_payload);
	OFF(struct ibv_resize_cq, core_payload.cq_handle);
	SZ(struct ibv_create_qp);
	OFF(struct ibv_create_qp, core_payload);
	OFF(struct ibv_create_qp, core_payload.max_inline_data);
	SZ(struct ibv_query_qp);
	OFF(struct ibv_query_qp, core_payload);
	SZ(struct ibv_modify_qp);
	OFF(struct ibv_modify_qp, core_payload);
	OFF(struct ibv_modify_qp, core_payload.qp_handle);
	SZ(struct ibv_reg_mr);
	OFF(struct ibv_reg_mr, core_payload);
	OFF(struct ibv_reg_mr, core_payload.access_flags);
	SZ(struct ib_uverbs_create_cq_resp);
	SZ(struct ib_uverbs_resize_cq_resp);
	SZ(struct ib_uverbs_create_qp_resp);
	SZ(struct ib_uverbs_reg_mr_resp);
	SZ(struct ib_uverbs_create_ah_resp);

	SZ(struct verbs_mr);
	OFF(struct verbs_mr, ibv_mr);
	OFF(struct verbs_mr, mr_type);
	OFF(struct verbs_mr, access);
	printf("IBV_MR_TYPE_MR %d\n", IBV_MR_TYPE_MR);
	printf("IBV_MR_TYPE_DMABUF_MR %d\n", IBV_MR_TYPE_DMABUF_MR);
	SZ(struct verbs_qp);
	OFF(struct verbs_qp, qp);
	OFF(struct verbs_qp, qp_ex);
	OFF(struct verbs_qp, comp_mask);
	OFF(struct verbs_qp, xrcd);

	SZ(struct ib_uverbs_get_context_resp);
	SZ(struct ib_uverbs_alloc_pd_resp);
	SZ(struct ib_uverbs_ex_query_device_resp);

	printf("VERBS_LOG_ERR %d\n", VERBS_LOG_ERR);
	printf("VERBS_LOG_DEBUG %d\n", VERBS_LOG_DEBUG);
	return 0;
}
