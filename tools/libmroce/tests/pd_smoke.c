// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * pd_smoke - smoke test of the control path of an mroce device through
 * libibverbs and libmroce: open, query device/ports/GID, alloc/free PDs.
 *
 * usage: pd_smoke [DEVICE]
 *   DEVICE defaults to the first device whose name starts with "mroce".
 *
 * Prints one line per check and a summary; exit status 0 only if every
 * check passed, 1 if one failed, 2 on usage error.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define NUM_PDS 100
#define MAX_GIDS_SHOWN 16

static const char *link_layer_str(uint8_t ll)
{
	switch (ll) {
	case IBV_LINK_LAYER_INFINIBAND:
		return "InfiniBand";
	case IBV_LINK_LAYER_ETHERNET:
		return "Ethernet";
	default:
		return "unspecified";
	}
}

static void format_gid(const union ibv_gid *gid, char *buf, size_t len)
{
	const uint8_t *r = gid->raw;

	snprintf(buf, len,
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
		 r[10], r[11], r[12], r[13], r[14], r[15]);
}

static bool gid_is_zero(const union ibv_gid *gid)
{
	static const union ibv_gid zero;

	return !memcmp(gid, &zero, sizeof(zero));
}

static void test_ports(struct ibv_context *ctx, unsigned int nports)
{
	for (unsigned int port = 1; port <= nports; port++) {
		struct ibv_port_attr pattr;
		union ibv_gid gid;
		char gidstr[64];
		int ret, n, nonzero = 0;

		memset(&pattr, 0, sizeof(pattr));
		ret = ibv_query_port(ctx, port, &pattr);
		if (!mtest_check(ret == 0, "ibv_query_port(%u): %s", port,
				 ret ? strerror(ret) : "ok"))
			continue;
		printf("       state %s, max_mtu %d, active_mtu %d, ",
		       ibv_port_state_str(pattr.state), 128 << pattr.max_mtu,
		       128 << pattr.active_mtu);
		printf("gid_tbl_len %d, link_layer %s\n", pattr.gid_tbl_len,
		       link_layer_str(pattr.link_layer));
		mtest_check(pattr.gid_tbl_len > 0, "port %u has a GID table (%d entries)",
			    port, pattr.gid_tbl_len);

		ret = ibv_query_gid(ctx, port, 0, &gid);
		if (mtest_check(ret == 0, "ibv_query_gid(port %u, index 0): %s",
				port, ret ? strerror(errno) : "ok")) {
			format_gid(&gid, gidstr, sizeof(gidstr));
			printf("       gid[0] %s%s\n", gidstr,
			       gid_is_zero(&gid) ? " (empty)" : "");
		}

		/* Informational: how many of the first entries are populated. */
		n = pattr.gid_tbl_len < MAX_GIDS_SHOWN ? pattr.gid_tbl_len :
							 MAX_GIDS_SHOWN;
		for (int i = 0; i < n; i++)
			if (!ibv_query_gid(ctx, port, i, &gid) &&
			    !gid_is_zero(&gid))
				nonzero++;
		printf("       %d of the first %d GID entries are populated\n",
		       nonzero, n);
	}
}

static void test_pds(struct ibv_context *ctx)
{
	struct ibv_pd *pds[NUM_PDS] = {};
	int allocated = 0, freed = 0, bad_ctx = 0, dup = 0, err = 0;

	for (int i = 0; i < NUM_PDS; i++) {
		pds[i] = ibv_alloc_pd(ctx);
		if (!pds[i]) {
			err = errno;
			break;
		}
		allocated++;
		if (pds[i]->context != ctx)
			bad_ctx++;
	}
	mtest_check(allocated == NUM_PDS, "allocated %d/%d PDs%s%s", allocated,
		    NUM_PDS, err ? ": " : "", err ? strerror(err) : "");
	mtest_check(bad_ctx == 0, "every PD points back to its context (%d wrong)",
		    bad_ctx);

	for (int i = 0; i < allocated; i++)
		for (int j = i + 1; j < allocated; j++)
			if (pds[i]->handle == pds[j]->handle)
				dup++;
	mtest_check(dup == 0, "PD handles are distinct (%d duplicates)", dup);

	err = 0;
	for (int i = allocated - 1; i >= 0; i--) {
		int ret = ibv_dealloc_pd(pds[i]);

		if (ret) {
			if (!err)
				err = ret;
			continue;
		}
		freed++;
	}
	mtest_check(freed == allocated, "freed %d/%d PDs%s%s", freed, allocated,
		    err ? ": " : "", err ? strerror(err) : "");

	/* Allocation still works after everything was released. */
	pds[0] = ibv_alloc_pd(ctx);
	if (mtest_check(pds[0], "PD allocation after freeing all: %s",
			pds[0] ? "ok" : strerror(errno)))
		mtest_check(ibv_dealloc_pd(pds[0]) == 0, "ibv_dealloc_pd of that PD");
}

int main(int argc, char **argv)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_device_attr attr;
	struct ibv_context *ctx;
	const char *want = NULL;
	int num, ret;

	mtest_init("pd_smoke", 0);
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [DEVICE]\n", argv[0]);
		return 2;
	}
	if (argc == 2)
		want = argv[1];

	list = ibv_get_device_list(&num);
	if (!mtest_check(list, "ibv_get_device_list: %s",
			 list ? "ok" : strerror(errno)))
		goto out;

	for (int i = 0; i < num; i++) {
		const char *name = ibv_get_device_name(list[i]);

		if (want ? !strcmp(name, want) : !strncmp(name, "mroce", 5)) {
			dev = list[i];
			break;
		}
	}
	if (!mtest_check(dev, "found device %s among %d device(s)",
			 want ? want : "mroce*", num))
		goto out_list;

	ctx = ibv_open_device(dev);
	if (!mtest_check(ctx, "ibv_open_device(%s): %s",
			 ibv_get_device_name(dev), ctx ? "ok" : strerror(errno)))
		goto out_list;

	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_device(ctx, &attr);
	if (mtest_check(ret == 0, "ibv_query_device: %s",
			ret ? strerror(ret) : "ok")) {
		printf("       fw_ver %s, node_guid 0x%016" PRIx64
		       ", max_pd %d, max_qp %d, max_cq %d, max_mr %d, ports %u\n",
		       attr.fw_ver, (uint64_t)be64toh(attr.node_guid),
		       attr.max_pd, attr.max_qp, attr.max_cq, attr.max_mr,
		       attr.phys_port_cnt);
		if (mtest_check(attr.phys_port_cnt >= 1, "device has %u port(s)",
				attr.phys_port_cnt))
			test_ports(ctx, attr.phys_port_cnt);
	}

	test_pds(ctx);

	ret = ibv_close_device(ctx);
	mtest_check(ret == 0, "ibv_close_device");

out_list:
	ibv_free_device_list(list);
out:
	mtest_summary();
	printf("pd_smoke: %s\n", mtest_failed ? "FAIL" : "PASS");
	return mtest_failed ? 1 : 0;
}
