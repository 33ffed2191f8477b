/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce-sim: the MetaRoCE transport model on ns-3.
 *
 *   net.cc    switch queue (step ECN marking, tail drop), flow-hash ECMP
 *             routing, leaf-spine and fat-tree generators, link failure
 *   model.cc  the MetaRoCE endpoint: requester and responder over UDP,
 *             driven by libmrproto (the driver's own state machines)
 *   main.cc   parameters, workloads, the DCTCP baseline, statistics
 */
#ifndef MRSIM_SIM_H
#define MRSIM_SIM_H

#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>
#include <ns3/traffic-control-module.h>

namespace mrsim {

/* Parameters: key=value, see tools/sim/README.md for the list. */
struct Params {
	std::map<std::string, std::string> kv;

	std::string str(const std::string &k, const std::string &def) const;
	double num(const std::string &k, double def) const;
	bool has(const std::string &k) const { return kv.count(k); }
};

/* ---- net.cc ------------------------------------------------------- */

/* Queue occupancy as packets arriving at a port find it. */
struct QueueStats {
	std::vector<uint64_t> depth_hist;	/* index: packets queued */
	uint64_t enq = 0, marks = 0, drops = 0;	/* from from_s on */
	uint64_t marks_total = 0, drops_total = 0;	/* the whole run */
	uint32_t max_depth = 0;
	double from_s = 0;	/* arrivals before are not counted */
	uint32_t high = UINT32_MAX;	/* "high": depth at or above, packets */
	std::vector<double> high_at;	/* times of arrivals that found it high
					 * or were dropped (not subject to from_s)
					 */
};

class StepEcnQueueDisc : public ns3::QueueDisc {
public:
	static ns3::TypeId GetTypeId();
	StepEcnQueueDisc();
	QueueStats *stats = nullptr;	/* shared per port class */

private:
	bool DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) override;
	ns3::Ptr<ns3::QueueDiscItem> DoDequeue() override;
	bool CheckConfig() override;
	void InitializeParams() override;

	uint32_t m_limit;	/* packets */
	uint32_t m_k;		/* mark at or above, packets */
};

struct Link {
	uint32_t a, b;		/* node indices */
	uint32_t if_a, if_b;	/* their Ipv4 interfaces */
	ns3::Ptr<ns3::NetDevice> dev_a, dev_b;
	bool spine;		/* a link above the leaves (ToR) */
	double bps;
	uint64_t *tx[2];	/* bytes sent by each end */
	bool up = true;
};

struct Topology {
	ns3::NodeContainer nodes;	/* hosts first, then switches */
	uint32_t n_hosts = 0;
	std::vector<uint32_t> host_leaf;	/* leaf switch of each host */
	std::vector<Link> links;
	std::vector<ns3::Ipv4Address> host_addr;
	uint64_t host_bps = 0;
	double base_rtt_us = 0;	/* longest host-to-host RTT, unloaded */
	QueueStats switch_q, host_q;
	QueueStats bottleneck_q;	/* the port toward bottleneck_host */
	uint64_t noroute_drops = 0;
	double last_noroute_s = -1;	/* when the last of them was dropped */
	std::string describe;
};

Topology build_topology(const Params &p);
/* Fail (up = false) or restore link @i at @at; routes reconverge after
 * @reconverge: until then only the two ends know.
 */
void schedule_link_event(Topology &t, uint32_t i, ns3::Time at, bool up,
			 ns3::Time reconverge);
uint64_t link_tx_bytes(const Link &l);

/* ---- model.cc ----------------------------------------------------- */

struct FlowRec {
	uint32_t id, src, dst;
	uint64_t bytes;
	double start_s, end_s = -1;	/* end: last byte acknowledged */
	uint64_t rx_bytes = 0;		/* new bytes the receiver placed */
	std::vector<uint64_t> rx_bins;	/* rx bytes per bin (Stats::bin_s) */
	uint64_t retx = 0, rtos = 0, tlps = 0, pkts = 0, path_deaths = 0;
	uint64_t rnd_drops = 0;		/* request packets loss_pct dropped */
	uint64_t lost_pseq = 0, lost_rack = 0;	/* declared lost, by rule */
	uint64_t stall_win = 0, stall_path = 0;	/* new packet held: window */
	std::string kind;		/* "incast", "perm", ... */
};

struct ModelCfg {
	std::string cc = "metaroce";
	uint32_t paths = 16;
	uint32_t mtu = 4096;		/* payload bytes per packet */
	uint32_t qdelay_target_us = 0;	/* the cc's delay signal; 0: off */
	uint32_t path_qdelay_target_us = 0;	/* the path table's; the driver's is 0 */
	uint32_t hint_epoch_us = 100;	/* MROCE_HINT_EPOCH_US */
	bool hint = true;		/* receiver sends rate hints */
	double bin_s = 1e-5;		/* receive-rate bins */
	double loss = 0;		/* request packets dropped at random */
	double ack_loss = 0;		/* ACKs dropped at random */
	uint64_t seed = 1;
	/*
	 * window_inflight: the congestion and path windows bound the packets
	 * in flight (the spec's "Sender state and windows"), not the PSNs
	 * after the cumulative point (mroce_req_window_open()); an
	 * experiment, off: the model follows the driver
	 */
	bool window_inflight = false;
	/*
	 * burst_pkts: new packets of one message run on one path in bursts
	 * of up to this many (mroce_paths_pick_again(), as the requester does
	 * for a provider with MROCE_XPORT_CAP_SEG_PATH, the GSO provider:
	 * 16); 1: a path per packet (the soft provider)
	 */
	uint32_t burst_pkts = 1;
};

class MrHost;

/* Every endpoint of the run; flows are started through it. */
class MrNet {
public:
	MrNet(Topology &t, const ModelCfg &cfg);
	~MrNet();
	void add_flow(uint32_t src, uint32_t dst, uint64_t bytes, double at,
		      const std::string &kind);
	std::vector<FlowRec> flows;
	Topology &topo;
	ModelCfg cfg;
	std::vector<ns3::Ptr<MrHost>> hosts;
	std::mt19937_64 loss_rng;	/* loss_pct, ack_loss_pct */
	bool drop(double prob)
	{
		return std::uniform_real_distribution<double>(0, 1)(loss_rng) < prob;
	}
	uint64_t ack_drops = 0;
};

} /* namespace mrsim */

#endif
