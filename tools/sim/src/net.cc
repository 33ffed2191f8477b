// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fabric: switch ports that mark ECN above a step threshold and drop
 * when full, ECMP by a hash of the 5-tuple (so the UDP source port, the
 * MetaRoCE path, picks the route), leaf-spine and three-tier fat-tree
 * generators, link failures with a routing reconvergence delay.
 */
#include <algorithm>
#include <deque>
#include <memory>

#include "sim.h"

using namespace ns3;

namespace mrsim {

std::string Params::str(const std::string &k, const std::string &def) const
{
	auto it = kv.find(k);

	return it == kv.end() ? def : it->second;
}

double Params::num(const std::string &k, double def) const
{
	auto it = kv.find(k);

	return it == kv.end() ? def : std::stod(it->second);
}

/* ---- the switch port ---------------------------------------------- */

NS_OBJECT_ENSURE_REGISTERED(StepEcnQueueDisc);

TypeId StepEcnQueueDisc::GetTypeId()
{
	static TypeId tid =
		TypeId("mrsim::StepEcnQueueDisc")
			.SetParent<QueueDisc>()
			.AddConstructor<StepEcnQueueDisc>()
			.AddAttribute("Limit", "port buffer, packets",
				      UintegerValue(1000),
				      MakeUintegerAccessor(&StepEcnQueueDisc::m_limit),
				      MakeUintegerChecker<uint32_t>())
			.AddAttribute("K", "ECN step threshold, packets",
				      UintegerValue(1000000),
				      MakeUintegerAccessor(&StepEcnQueueDisc::m_k),
				      MakeUintegerChecker<uint32_t>());
	return tid;
}

StepEcnQueueDisc::StepEcnQueueDisc()
	: QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE),
	  m_limit(1000), m_k(1000000)
{
}

bool StepEcnQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
	uint32_t depth = GetInternalQueue(0)->GetNPackets();

	if (stats && depth >= stats->high)
		stats->high_at.push_back(Simulator::Now().GetSeconds());

	if (stats && Simulator::Now().GetSeconds() < stats->from_s) {
		/* not counted, but the port behaves the same */
	} else if (stats) {
		if (stats->depth_hist.size() <= depth)
			stats->depth_hist.resize(depth + 1);
		stats->depth_hist[depth]++;
		stats->max_depth = std::max(stats->max_depth, depth);
		stats->enq++;
	}
	if (depth >= m_limit) {
		if (stats)
			stats->drops_total++;
		if (stats && Simulator::Now().GetSeconds() >= stats->from_s)
			stats->drops++;
		DropBeforeEnqueue(item, "full");
		return false;
	}
	/* step marking (DCQCN's and DCTCP's K): ECT packets only */
	if (depth >= m_k && Mark(item, "step") && stats) {
		stats->marks_total++;
		if (Simulator::Now().GetSeconds() >= stats->from_s)
			stats->marks++;
	}
	return GetInternalQueue(0)->Enqueue(item);
}

Ptr<QueueDiscItem> StepEcnQueueDisc::DoDequeue()
{
	return GetInternalQueue(0)->Dequeue();
}

bool StepEcnQueueDisc::CheckConfig()
{
	if (GetNInternalQueues() == 0)
		AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
			"MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS,
							    m_limit + 1))));
	return GetNQueueDiscClasses() == 0 && GetNPacketFilters() == 0;
}

void StepEcnQueueDisc::InitializeParams()
{
}

/* ---- flow-hash ECMP ----------------------------------------------- */

class FlowHashRouting : public Ipv4RoutingProtocol {
public:
	static TypeId GetTypeId()
	{
		static TypeId tid = TypeId("mrsim::FlowHashRouting")
					    .SetParent<Ipv4RoutingProtocol>()
					    .AddConstructor<FlowHashRouting>();
		return tid;
	}

	/* host address -> interfaces on shortest paths to it */
	std::map<uint32_t, std::vector<uint32_t>> table;
	uint64_t seed = 0;
	Topology *topo = nullptr;

	Ptr<Ipv4Route> RouteOutput(Ptr<Packet>, const Ipv4Header &, Ptr<NetDevice>,
				   Socket::SocketErrno &err) override
	{
		err = Socket::ERROR_NOROUTETOHOST;	/* switches originate nothing */
		return nullptr;
	}

	bool RouteInput(Ptr<const Packet> p, const Ipv4Header &h,
			Ptr<const NetDevice> idev, UnicastForwardCallback ucb,
			MulticastForwardCallback, LocalDeliverCallback lcb,
			ErrorCallback ecb) override
	{
		uint32_t iif = m_ipv4->GetInterfaceForDevice(idev);

		for (uint32_t i = 0; i < m_ipv4->GetNInterfaces(); i++)
			for (uint32_t j = 0; j < m_ipv4->GetNAddresses(i); j++)
				if (m_ipv4->GetAddress(i, j).GetLocal() ==
				    h.GetDestination()) {
					lcb(p, h, iif);
					return true;
				}
		auto it = table.find(h.GetDestination().Get());
		std::vector<uint32_t> up;

		if (it != table.end())
			for (uint32_t ifx : it->second)
				if (m_ipv4->IsUp(ifx))
					up.push_back(ifx);
		if (up.empty()) {
			if (topo) {
				topo->noroute_drops++;
				topo->last_noroute_s = Simulator::Now().GetSeconds();
			}
			ecb(p, h, Socket::ERROR_NOROUTETOHOST);
			return true;
		}
		uint8_t ports[4] = { 0, 0, 0, 0 };

		if (p->GetSize() >= 4)
			p->CopyData(ports, 4);
		uint64_t x = seed ^ ((uint64_t)h.GetSource().Get() << 32 |
				     h.GetDestination().Get());

		x ^= (uint64_t)h.GetProtocol() << 56 ^
		     (uint64_t)(ports[0] << 24 | ports[1] << 16 | ports[2] << 8 |
				ports[3]) << 8;
		/* a 64-bit finaliser (murmur3's), so nearby ports spread */
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdULL;
		x ^= x >> 33;
		x *= 0xc4ceb9fe1a85ec53ULL;
		x ^= x >> 33;
		uint32_t ifx = up[x % up.size()];
		Ptr<Ipv4Route> r = Create<Ipv4Route>();

		r->SetDestination(h.GetDestination());
		r->SetSource(h.GetSource());
		r->SetGateway(Ipv4Address("0.0.0.0"));
		r->SetOutputDevice(m_ipv4->GetNetDevice(ifx));
		ucb(r, p, h);
		return true;
	}

	void NotifyInterfaceUp(uint32_t) override {}
	void NotifyInterfaceDown(uint32_t) override {}
	void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
	void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
	void SetIpv4(Ptr<Ipv4> ipv4) override { m_ipv4 = ipv4; }
	void PrintRoutingTable(Ptr<OutputStreamWrapper>, Time::Unit) const override {}

private:
	Ptr<Ipv4> m_ipv4;
};

NS_OBJECT_ENSURE_REGISTERED(FlowHashRouting);

class FlowHashRoutingHelper : public Ipv4RoutingHelper {
public:
	FlowHashRoutingHelper *Copy() const override
	{
		return new FlowHashRoutingHelper(*this);
	}
	Ptr<Ipv4RoutingProtocol> Create(Ptr<Node>) const override
	{
		return CreateObject<FlowHashRouting>();
	}
};

/* ---- routes: shortest paths over the links that are up -------------- */

static void compute_routes(Topology &t)
{
	uint32_t n = t.nodes.GetN();
	std::vector<std::vector<uint32_t>> adj(n);	/* link indices */

	for (uint32_t i = 0; i < t.links.size(); i++) {
		if (!t.links[i].up)
			continue;
		adj[t.links[i].a].push_back(i);
		adj[t.links[i].b].push_back(i);
	}
	std::vector<Ptr<FlowHashRouting>> rt(n);

	for (uint32_t s = t.n_hosts; s < n; s++) {
		rt[s] = DynamicCast<FlowHashRouting>(
			t.nodes.Get(s)->GetObject<Ipv4>()->GetRoutingProtocol());
		rt[s]->table.clear();
	}
	std::vector<uint32_t> dist(n);
	std::deque<uint32_t> q;

	for (uint32_t h = 0; h < t.n_hosts; h++) {
		std::fill(dist.begin(), dist.end(), UINT32_MAX);
		dist[h] = 0;
		q.assign(1, h);
		while (!q.empty()) {
			uint32_t u = q.front();

			q.pop_front();
			/* hosts do not forward */
			if (u < t.n_hosts && u != h)
				continue;
			for (uint32_t li : adj[u]) {
				uint32_t v = t.links[li].a == u ? t.links[li].b :
								  t.links[li].a;

				if (dist[v] == UINT32_MAX) {
					dist[v] = dist[u] + 1;
					q.push_back(v);
				}
			}
		}
		uint32_t key = t.host_addr[h].Get();

		for (uint32_t s = t.n_hosts; s < n; s++) {
			if (dist[s] == UINT32_MAX)
				continue;
			for (uint32_t li : adj[s]) {
				const Link &l = t.links[li];
				uint32_t v = l.a == s ? l.b : l.a;

				if (dist[v] + 1 == dist[s])
					rt[s]->table[key].push_back(l.a == s ? l.if_a : l.if_b);
			}
		}
	}
}

/* ---- generators ---------------------------------------------------- */

static void on_tx(uint64_t *ctr, Ptr<const Packet> p)
{
	*ctr += p->GetSize();
}

static std::deque<uint64_t> g_tx;	/* stable addresses for the counters */

uint64_t link_tx_bytes(const Link &l)
{
	return *l.tx[0] + *l.tx[1];
}

Topology build_topology(const Params &p)
{
	Topology t;
	std::string kind = p.str("topo", "leafspine");
	uint32_t hosts = (uint32_t)p.num("hosts", 16);
	double gbps = p.num("link_gbps", 100);
	double up_gbps = p.num("uplink_gbps", gbps);
	double oversub = p.num("oversub", 1);
	double hop_us = p.num("hop_delay_us", 1);
	uint32_t n_sw = 0, hops = 0;
	std::vector<std::tuple<uint32_t, uint32_t, bool>> edges;	/* a, b, spine */

	t.host_bps = (uint64_t)(gbps * 1e9);
	if (kind == "leafspine") {
		uint32_t per_leaf = (uint32_t)p.num("hosts_per_leaf",
						    std::min<uint32_t>(16, std::max<uint32_t>(2, hosts / 4)));
		uint32_t leaves = (hosts + per_leaf - 1) / per_leaf;
		uint32_t spines = (uint32_t)p.num(
			"spines", std::max(1.0, per_leaf * gbps / up_gbps / oversub));

		n_sw = leaves + spines;
		for (uint32_t h = 0; h < hosts; h++) {
			edges.emplace_back(h, hosts + h / per_leaf, false);
			t.host_leaf.push_back(hosts + h / per_leaf);
		}
		for (uint32_t l = 0; l < leaves; l++)
			for (uint32_t s = 0; s < spines; s++)
				edges.emplace_back(hosts + l, hosts + leaves + s, true);
		hops = leaves > 1 ? 4 : 2;
		t.describe = "leaf-spine: " + std::to_string(hosts) + " hosts, " +
			     std::to_string(leaves) + " leaves x " +
			     std::to_string(per_leaf) + " hosts, " +
			     std::to_string(spines) + " spines";
	} else if (kind == "fattree") {
		/* k-ary three-tier fat-tree: k pods of k/2 edge + k/2 aggregation
		 * switches, (k/2)^2 cores; hosts per edge k/2 x oversub
		 */
		uint32_t k = (uint32_t)p.num("k", 4);
		uint32_t half = k / 2;
		uint32_t per_edge = (uint32_t)(half * oversub);
		uint32_t edges_n = k * half, aggs = k * half, cores = half * half;
		uint32_t e0 = hosts, a0 = e0 + edges_n, c0 = a0 + aggs;

		hosts = std::min<uint32_t>(hosts, edges_n * per_edge);
		e0 = hosts;
		a0 = e0 + edges_n;
		c0 = a0 + aggs;
		n_sw = edges_n + aggs + cores;
		for (uint32_t h = 0; h < hosts; h++) {
			edges.emplace_back(h, e0 + h / per_edge, false);
			t.host_leaf.push_back(e0 + h / per_edge);
		}
		for (uint32_t pod = 0; pod < k; pod++)
			for (uint32_t e = 0; e < half; e++)
				for (uint32_t a = 0; a < half; a++)
					edges.emplace_back(e0 + pod * half + e,
							   a0 + pod * half + a, true);
		for (uint32_t pod = 0; pod < k; pod++)
			for (uint32_t a = 0; a < half; a++)
				for (uint32_t c = 0; c < half; c++)
					edges.emplace_back(a0 + pod * half + a,
							   c0 + a * half + c, true);
		hops = 6;
		t.describe = "fat-tree k=" + std::to_string(k) + ": " +
			     std::to_string(hosts) + " hosts, " +
			     std::to_string(n_sw) + " switches";
	} else {
		NS_FATAL_ERROR("topo must be leafspine or fattree");
	}
	t.n_hosts = hosts;
	t.nodes.Create(hosts + n_sw);

	InternetStackHelper host_stack, sw_stack;
	FlowHashRoutingHelper fh;
	NodeContainer hn, sn;

	for (uint32_t i = 0; i < hosts; i++)
		hn.Add(t.nodes.Get(i));
	for (uint32_t i = hosts; i < hosts + n_sw; i++)
		sn.Add(t.nodes.Get(i));
	host_stack.SetRoutingHelper(Ipv4StaticRoutingHelper());
	host_stack.Install(hn);
	sw_stack.SetRoutingHelper(fh);
	sw_stack.Install(sn);

	PointToPointHelper p2p;
	Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
	TrafficControlHelper tc_sw, tc_host;
	uint32_t limit = (uint32_t)p.num("buffer_pkts", 100);
	uint32_t k_pkts = (uint32_t)p.num("ecn_k_pkts", 20);

	tc_sw.SetRootQueueDisc("mrsim::StepEcnQueueDisc", "Limit",
			       UintegerValue(limit), "K", UintegerValue(k_pkts));
	/* a host's NIC queue: the sender's pacer and window keep it short */
	tc_host.SetRootQueueDisc("mrsim::StepEcnQueueDisc", "Limit",
				 UintegerValue(10000));
	p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(hop_us)));
	p2p.SetDeviceAttribute("Mtu", UintegerValue(9000));
	p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
		     QueueSizeValue(QueueSize("1p")));
	t.host_addr.resize(hosts);
	for (auto &e : edges) {
		uint32_t a = std::get<0>(e), b = std::get<1>(e);
		bool spine = std::get<2>(e);

		p2p.SetDeviceAttribute("DataRate",
				       StringValue(std::to_string(spine ? up_gbps : gbps) +
						   "Gbps"));
		NetDeviceContainer d = p2p.Install(t.nodes.Get(a), t.nodes.Get(b));
		QueueDiscContainer qa = (a < hosts ? tc_host : tc_sw).Install(d.Get(0));
		QueueDiscContainer qb = tc_sw.Install(d.Get(1));

		DynamicCast<StepEcnQueueDisc>(qa.Get(0))->stats =
			a < hosts ? &t.host_q : &t.switch_q;
		DynamicCast<StepEcnQueueDisc>(qb.Get(0))->stats = &t.switch_q;
		/* one port set apart: its own rate, threshold, buffer, statistics
		 * (the agreement scenario's shaped port toward the receiver)
		 */
		if (p.has("bottleneck_host") && !spine &&
		    a == (uint32_t)p.num("bottleneck_host", 0)) {
			Ptr<StepEcnQueueDisc> q = DynamicCast<StepEcnQueueDisc>(qb.Get(0));

			d.Get(1)->SetAttribute("DataRate", StringValue(
				std::to_string(p.num("bottleneck_gbps", gbps)) + "Gbps"));
			q->SetAttribute("K", UintegerValue((uint32_t)p.num("bottleneck_k_pkts",
									    k_pkts)));
			q->SetAttribute("Limit", UintegerValue((uint32_t)p.num(
							     "bottleneck_buffer_pkts", limit)));
			q->stats = &t.bottleneck_q;
			/* twice the marking threshold is "high" */
			t.bottleneck_q.high = 2 * (uint32_t)p.num("bottleneck_k_pkts", k_pkts);
		}
		Ipv4InterfaceContainer ifs = addr.Assign(d);

		addr.NewNetwork();
		Link l;

		l.a = a;
		l.b = b;
		l.dev_a = d.Get(0);
		l.dev_b = d.Get(1);
		l.if_a = ifs.Get(0).second;
		l.if_b = ifs.Get(1).second;
		l.spine = spine;
		l.bps = (spine ? up_gbps : gbps) * 1e9;
		g_tx.push_back(0);
		g_tx.push_back(0);
		d.Get(0)->TraceConnectWithoutContext(
			"PhyTxEnd", MakeBoundCallback(&on_tx, &g_tx[g_tx.size() - 2]));
		d.Get(1)->TraceConnectWithoutContext(
			"PhyTxEnd", MakeBoundCallback(&on_tx, &g_tx[g_tx.size() - 1]));
		l.tx[0] = &g_tx[g_tx.size() - 2];
		l.tx[1] = &g_tx[g_tx.size() - 1];
		if (a < hosts) {
			Ipv4StaticRoutingHelper srh;
			Ptr<Ipv4> ip = t.nodes.Get(a)->GetObject<Ipv4>();

			t.host_addr[a] = ifs.GetAddress(0);
			srh.GetStaticRouting(ip)->SetDefaultRoute(ifs.GetAddress(1),
								  ifs.Get(0).second);
		}
		t.links.push_back(l);
	}
	for (uint32_t s = hosts; s < hosts + n_sw; s++) {
		auto r = DynamicCast<FlowHashRouting>(
			t.nodes.Get(s)->GetObject<Ipv4>()->GetRoutingProtocol());

		r->seed = 0x9e3779b97f4a7c15ULL * (s + 1);
		r->topo = &t;
	}
	compute_routes(t);
	/* unloaded RTT of the longest path: propagation and store-and-forward
	 * of a full data packet each way (the ACK's serialisation is small)
	 */
	double pkt_bits = (p.num("mtu", 4096) + 64 + 48) * 8;

	t.base_rtt_us = 2 * hops * hop_us + hops * pkt_bits / (gbps * 1e3);
	return t;
}

static void recompute(Topology *t)
{
	compute_routes(*t);
}

static void set_link(Topology *t, uint32_t i, bool up)
{
	Link &l = t->links[i];
	Ptr<Ipv4> a = t->nodes.Get(l.a)->GetObject<Ipv4>();
	Ptr<Ipv4> b = t->nodes.Get(l.b)->GetObject<Ipv4>();

	l.up = up;
	if (up) {
		a->SetUp(l.if_a);
		b->SetUp(l.if_b);
	} else {
		a->SetDown(l.if_a);
		b->SetDown(l.if_b);
	}
}

void schedule_link_event(Topology &t, uint32_t i, Time at, bool up,
			 Time reconverge)
{
	Simulator::Schedule(at, &set_link, &t, i, up);
	Simulator::Schedule(at + reconverge, &recompute, &t);
}

} /* namespace mrsim */
