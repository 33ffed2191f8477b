// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce-sim PARAMFILE [key=value ...]: one scenario, its statistics on
 * stdout ("key value" lines under headings) and as CSV in out=DIR.
 */
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>

#include <ns3/applications-module.h>

#include "sim.h"

using namespace ns3;
using namespace mrsim;

static Params load(int argc, char **argv)
{
	Params p;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		std::vector<std::string> lines;

		if (a.find('=') != std::string::npos) {
			lines.push_back(a);
		} else {
			std::ifstream in(a);
			std::string l;

			if (!in) {
				std::cerr << "mroce-sim: cannot read " << a << "\n";
				exit(2);
			}
			while (std::getline(in, l))
				lines.push_back(l);
		}
		for (auto l : lines) {
			size_t h = l.find('#');

			if (h != std::string::npos)
				l.resize(h);
			size_t eq = l.find('=');

			if (eq == std::string::npos)
				continue;
			auto trim = [](std::string s) {
				size_t b = s.find_first_not_of(" \t");
				size_t e = s.find_last_not_of(" \t\r");

				return b == std::string::npos ? std::string() :
								 s.substr(b, e - b + 1);
			};
			p.kv[trim(l.substr(0, eq))] = trim(l.substr(eq + 1));
		}
	}
	return p;
}

static double pct(std::vector<double> v, double q)
{
	if (v.empty())
		return NAN;
	std::sort(v.begin(), v.end());
	size_t i = (size_t)std::ceil(q * v.size()) - 1;

	return v[std::min(i, v.size() - 1)];
}

static double jain(const std::vector<double> &x)
{
	double s = 0, s2 = 0;

	for (double v : x) {
		s += v;
		s2 += v * v;
	}
	return s2 > 0 ? s * s / (x.size() * s2) : NAN;
}

/* ---- the DCTCP baseline: ns-3's own TcpDctcp over the same fabric ---- */

/*
 * ns-3 3.37's TcpDctcp::GetSsThresh() returns (1 - alpha/2) * cwnd with no
 * floor, so at a one-segment window it goes below one segment.  Linux's
 * dctcp_ssthresh() keeps two segments (RFC 5681's floor for ssthresh).
 */
class MrDctcp : public TcpDctcp {
public:
	static TypeId GetTypeId()
	{
		static TypeId tid = TypeId("mrsim::MrDctcp")
					    .SetParent<TcpDctcp>()
					    .AddConstructor<MrDctcp>()
					    .AddAttribute("Floor", "ssthresh floor, segments",
							  UintegerValue(2),
							  MakeUintegerAccessor(&MrDctcp::m_floor),
							  MakeUintegerChecker<uint32_t>());
		return tid;
	}
	MrDctcp() = default;
	MrDctcp(const MrDctcp &o) : TcpDctcp(o), m_floor(o.m_floor) {}
	std::string GetName() const override { return "MrDctcp"; }
	uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t inflight) override
	{
		return std::max(TcpDctcp::GetSsThresh(tcb, inflight),
				m_floor * tcb->m_segmentSize);
	}
	Ptr<TcpCongestionOps> Fork() override { return CopyObject<MrDctcp>(this); }

private:
	uint32_t m_floor = 2;
};

NS_OBJECT_ENSURE_REGISTERED(MrDctcp);

struct TcpFlow {
	MrNet *net = nullptr;
	uint32_t id = 0;
	Ptr<Socket> sock;
	Address peer;
	bool connected = false, started = false, closed = false;
	uint64_t queued = 0;		/* bytes handed to the socket */
	uint32_t syns = 0;		/* SYNs sent, the first included */
	uint64_t tx_high = 0;		/* highest data sequence sent */
	uint32_t cwnd = 0, ssthresh = 0;
	int cong_state = 0, state = 0;
	bool aborted = false;		/* the socket closed before the end */
	double last_tx_s = 0;
};

static void tcp_rx(TcpFlow *tf, Ptr<const Packet> p, const Address &)
{
	FlowRec &f = tf->net->flows[tf->id];
	size_t bin = (size_t)(Simulator::Now().GetSeconds() / tf->net->cfg.bin_s);

	f.rx_bytes += p->GetSize();
	if (f.rx_bins.size() <= bin)
		f.rx_bins.resize(bin + 1);
	f.rx_bins[bin] += p->GetSize();
	if (f.end_s < 0 && f.rx_bytes >= f.bytes)
		f.end_s = Simulator::Now().GetSeconds();
}

/* the sender's segments: sent, resent (below the highest sent) */
static void tcp_tx(TcpFlow *tf, Ptr<const Packet> p, const TcpHeader &h,
		   Ptr<const TcpSocketBase>)
{
	FlowRec &f = tf->net->flows[tf->id];
	uint64_t seq = h.GetSequenceNumber().GetValue();

	if (h.GetFlags() & TcpHeader::SYN)
		tf->syns++;
	if (p->GetSize() == 0)
		return;
	f.pkts++;
	tf->last_tx_s = Simulator::Now().GetSeconds();
	if (seq + p->GetSize() <= tf->tx_high)
		f.retx++;
	tf->tx_high = std::max<uint64_t>(tf->tx_high, seq + p->GetSize());
}

static void tcp_cong_state(TcpFlow *tf, TcpSocketState::TcpCongState_t,
			   TcpSocketState::TcpCongState_t s)
{
	tf->cong_state = s;
}

/* RTO expiries: each doubles the RTO (an expiry in CA_LOSS, backing off,
 * does not change the congestion state); RTT samples set it anew
 */
static void tcp_rto(TcpFlow *tf, Time old, Time now)
{
	if (now == old * 2 || (now > old && now >= Seconds(60)))
		tf->net->flows[tf->id].rtos++;
}

static void tcp_cwnd(TcpFlow *tf, uint32_t, uint32_t v)
{
	tf->cwnd = v;
}

static void tcp_ssthresh(TcpFlow *tf, uint32_t, uint32_t v)
{
	tf->ssthresh = v;
}

static void tcp_state(TcpFlow *tf, TcpSocket::TcpStates_t, TcpSocket::TcpStates_t s)
{
	tf->state = s;
	if (s == TcpSocket::CLOSED && tf->net->flows[tf->id].end_s < 0)
		tf->aborted = true;
}

/*
 * The sender.  Its connection is set up ahead of the flow, as a QP is
 * connected before its first WRITE (and as partition/aggregate services
 * keep their connections): a flow starts at its start time or once
 * connected, whichever is later, and hands the socket all its bytes
 * (BulkSendApplication would connect at the start time and add a
 * handshake MetaRoCE does not have).
 */
static void tcp_fill(TcpFlow *tf)
{
	uint64_t bytes = tf->net->flows[tf->id].bytes;

	if (!tf->connected || !tf->started || tf->closed)
		return;
	while (tf->queued < bytes) {
		uint32_t n = (uint32_t)std::min<uint64_t>(
			{ bytes - tf->queued, 65536, tf->sock->GetTxAvailable() });

		if (n == 0)
			break;
		int r = tf->sock->Send(Create<Packet>(n));

		if (r <= 0)
			break;
		tf->queued += (uint32_t)r;
	}
	if (tf->queued >= bytes) {
		tf->sock->Close();
		tf->closed = true;
	}
}

static void tcp_more(TcpFlow *tf, Ptr<Socket>, uint32_t)
{
	tcp_fill(tf);
}

static void tcp_begin(TcpFlow *tf)
{
	tf->started = true;
	tcp_fill(tf);
}

static void tcp_connected(TcpFlow *tf, Ptr<Socket> sock)
{
	tf->connected = true;
	/*
	 * ns-3 3.37 marks a resent SYN in the RTT history by its sequence
	 * range, which for a SYN is empty, so the SYN-ACK gives an RTT sample
	 * from the first SYN (Karn's rule broken): a SYN lost once in an
	 * incast made RTT 3 ms and the RTO 9 ms.  Linux takes no sample from
	 * a resent SYN; neither does this, by starting the estimate afresh.
	 */
	if (tf->syns > 1)
		DynamicCast<TcpSocketBase>(sock)->SetRtt(CreateObject<RttMeanDeviation>());
	tcp_fill(tf);
}

static void tcp_connect_failed(TcpFlow *tf, Ptr<Socket>)
{
	tf->aborted = true;
}

static void tcp_connect(TcpFlow *tf)
{
	const FlowRec &f = tf->net->flows[tf->id];
	Ptr<Socket> sock = Socket::CreateSocket(tf->net->topo.nodes.Get(f.src),
						TcpSocketFactory::GetTypeId());
	Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(sock);

	tf->sock = sock;
	s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&tcp_tx, tf));
	s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&tcp_cong_state, tf));
	s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&tcp_cwnd, tf));
	s->TraceConnectWithoutContext("SlowStartThreshold",
				      MakeBoundCallback(&tcp_ssthresh, tf));
	s->TraceConnectWithoutContext("State", MakeBoundCallback(&tcp_state, tf));
	s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&tcp_rto, tf));
	sock->Bind();
	sock->SetConnectCallback(MakeBoundCallback(&tcp_connected, tf),
				 MakeBoundCallback(&tcp_connect_failed, tf));
	sock->SetSendCallback(MakeBoundCallback(&tcp_more, tf));
	sock->Connect(tf->peer);
}

static void start_tcp_flows(MrNet &net, std::vector<std::unique_ptr<TcpFlow>> &keep,
			    double connect_gap_s)
{
	std::map<uint32_t, uint32_t> to_dst;	/* connections per receiver so far */

	for (FlowRec &f : net.flows) {
		uint16_t port = (uint16_t)(10000 + f.id % 50000);
		PacketSinkHelper sink("ns3::TcpSocketFactory",
				      InetSocketAddress(Ipv4Address::GetAny(), port));
		ApplicationContainer sa = sink.Install(net.topo.nodes.Get(f.dst));

		keep.push_back(std::make_unique<TcpFlow>());
		TcpFlow *tf = keep.back().get();

		tf->net = &net;
		tf->id = f.id;
		tf->peer = InetSocketAddress(net.topo.host_addr[f.dst], port);
		/* a receiver's SYNs spaced apart, so that an incast's do not
		 * overflow its port at once
		 */
		Simulator::Schedule(Seconds(connect_gap_s * to_dst[f.dst]++), &tcp_connect, tf);
		Simulator::Schedule(Seconds(f.start_s), &tcp_begin, tf);
		sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&tcp_rx, tf));
	}
}

/* ---- workloads ----------------------------------------------------- */

static void add_workloads(const Params &p, MrNet &net, std::mt19937_64 &rng)
{
	std::string wl = p.str("workload", "incast");
	uint32_t n = net.topo.n_hosts;
	uint64_t bytes = (uint64_t)p.num("flow_bytes", 1 << 20);
	double t0 = p.num("start_us", 10) * 1e-6;
	std::stringstream ss(wl);
	std::string w;

	while (std::getline(ss, w, ',')) {
		if (w == "incast") {
			/* senders spread over the leaves, receiver host 0 */
			uint32_t k = std::min<uint32_t>((uint32_t)p.num("incast_n", 8),
							n - 1);
			uint32_t dst = (uint32_t)p.num("incast_dst", 0);
			uint32_t stride = std::max<uint32_t>(1, (n - 1) / k);

			for (uint32_t i = 0; i < k; i++)
				net.add_flow((dst + 1 + i * stride) % n, dst, bytes, t0,
					     "incast");
		} else if (w == "perm") {
			std::vector<uint32_t> perm(n);

			std::iota(perm.begin(), perm.end(), 0);
			do {
				std::shuffle(perm.begin(), perm.end(), rng);
			} while ([&] {
				for (uint32_t i = 0; i < n; i++)
					if (perm[i] == i)
						return true;
				return false;
			}() && n > 1);
			for (uint32_t i = 0; i < n; i++)
				net.add_flow(i, perm[i], bytes, t0, "perm");
		} else if (w == "alltoall") {
			/* MoE-style: each host's bytes split over all the others */
			uint64_t each = std::max<uint64_t>(bytes / (n - 1), 1);

			for (uint32_t i = 0; i < n; i++)
				for (uint32_t j = 0; j < n; j++)
					if (i != j)
						net.add_flow(i, j, each, t0, "alltoall");
		} else if (w == "ring") {
			/* one step of a ring allreduce: each host to its successor */
			for (uint32_t i = 0; i < n; i++)
				net.add_flow(i, (i + 1) % n, bytes, t0, "ring");
		} else if (w == "tree") {
			/* one step of a binary-tree reduce: each host to its parent */
			for (uint32_t i = 1; i < n; i++)
				net.add_flow(i, (i - 1) / 2, bytes, t0, "tree");
		} else if (w == "background") {
			/* random pairs, sizes log-uniform 4 KiB .. bg_max_bytes,
			 * starts uniform over [0, bg_span_us)
			 */
			uint32_t cnt = (uint32_t)p.num("bg_flows", n);
			double lo = std::log(4096.0);
			double hi = std::log(p.num("bg_max_bytes", 4 << 20));
			double span = p.num("bg_span_us", 200) * 1e-6;
			std::uniform_real_distribution<double> u(0, 1);

			for (uint32_t i = 0; i < cnt; i++) {
				uint32_t s = rng() % n, d = rng() % n;

				if (s == d)
					d = (d + 1) % n;
				net.add_flow(s, d, (uint64_t)std::exp(lo + (hi - lo) * u(rng)),
					     t0 + span * u(rng), "background");
			}
		} else {
			std::cerr << "mroce-sim: unknown workload " << w << "\n";
			exit(2);
		}
	}
}

/* ---- statistics ---------------------------------------------------- */

struct Out {
	std::ostringstream csv;

	void kv(const std::string &k, double v)
	{
		std::cout << std::left << std::setw(28) << k << " " << v << "\n";
		csv << k << "," << v << "\n";
	}
};

/* Per-window rates of @ids from their receive bins; window of @w bins. */
static std::vector<std::vector<double>> windows(const MrNet &net,
						const std::vector<uint32_t> &ids,
						size_t from, size_t to, size_t w)
{
	std::vector<std::vector<double>> r;

	for (size_t b = from; b + w <= to; b += w) {
		std::vector<double> x;

		for (uint32_t id : ids) {
			const FlowRec &f = net.flows[id];
			double s = 0;

			for (size_t i = b; i < b + w && i < f.rx_bins.size(); i++)
				s += f.rx_bins[i];
			x.push_back(s);
		}
		r.push_back(x);
	}
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		std::cerr << "usage: mroce-sim PARAMFILE|key=value ...\n";
		return 2;
	}
	Params p = load(argc, argv);
	std::mt19937_64 rng((uint64_t)p.num("seed", 1));
	ModelCfg cfg;

	cfg.cc = p.str("cc", "metaroce");
	cfg.paths = (uint32_t)p.num("paths", 16);
	cfg.mtu = (uint32_t)p.num("mtu", 4096);
	cfg.qdelay_target_us = (uint32_t)p.num("qdelay_target_us", 0);
	cfg.path_qdelay_target_us = (uint32_t)p.num("path_qdelay_target_us", 0);
	cfg.hint = p.num("rate_hint", 1) != 0;
	cfg.loss = p.num("loss_pct", 0) / 100;
	cfg.ack_loss = p.num("ack_loss_pct", 0) / 100;
	cfg.seed = (uint64_t)p.num("seed", 1);
	cfg.window_inflight = p.num("window_inflight", 0) != 0;
	cfg.burst_pkts = (uint32_t)std::max(1.0, p.num("burst_pkts", 1));
	bool tcp = cfg.cc == "dctcp";

	if (tcp) {
		/*
		 * A datacenter TCP, as the DCTCP paper and Linux run it.  ns-3
		 * 3.37's defaults are for the wide area, and with them flows
		 * crawled at one segment per RTO: the receiver holds the ACK of
		 * a lone segment for DelAckTimeout (200 ms), far past the RTO,
		 * and after the RTO, leaving CA_LOSS on the resent segment's ACK
		 * counts no segment acked, so the window stays at one segment and
		 * the next lone segment waits again (Linux would grow the window
		 * and its receiver quick-ACKs a duplicate).  Documentation/
		 * simulation.rst, "The DCTCP baseline", gives the values and why.
		 */
		Config::SetDefault("ns3::TcpL4Protocol::SocketType",
				   TypeIdValue(MrDctcp::GetTypeId()));
		Config::SetDefault("mrsim::MrDctcp::Floor",
				   UintegerValue((uint32_t)p.num("tcp_ssthresh_floor", 2)));
		/* the model's packet size, so ports hold as many bytes */
		Config::SetDefault("ns3::TcpSocket::SegmentSize",
				   UintegerValue((uint32_t)p.num("tcp_mss", cfg.mtu)));
		Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 24));
		Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 24));
		/* every segment ACKed at once: no ACK waits on a timer */
		Config::SetDefault("ns3::TcpSocket::DelAckCount",
				   UintegerValue((uint32_t)p.num("tcp_delack", 1)));
		Config::SetDefault("ns3::TcpSocket::DelAckTimeout",
				   TimeValue(MicroSeconds(p.num("tcp_delack_us", 200000))));
		/* RTO = max(MinRto, SRTT + max(ClockGranularity, 4 RTTVAR)) */
		Config::SetDefault("ns3::TcpSocketBase::MinRto",
				   TimeValue(MicroSeconds(p.num("tcp_min_rto_us", 1000))));
		Config::SetDefault("ns3::TcpSocketBase::ClockGranularity",
				   TimeValue(MicroSeconds(p.num("tcp_clock_us", 1000))));
		/* a lost SYN or SYN-ACK waits as long as a lost segment */
		Config::SetDefault("ns3::TcpSocket::ConnTimeout",
				   TimeValue(MicroSeconds(p.num("tcp_conn_timeout_us", 1000))));
		/* Linux's tcp_retries2: no flow gives up within a run */
		Config::SetDefault("ns3::TcpSocket::DataRetries",
				   UintegerValue((uint32_t)p.num("tcp_data_retries", 15)));
		/* ns-3's timestamps tick in ms: RTT samples from the send
		 * times instead (Karn), to the ns
		 */
		Config::SetDefault("ns3::TcpSocketBase::Timestamp",
				   BooleanValue(p.num("tcp_ts", 0) != 0));
		Config::SetDefault("ns3::TcpSocketBase::UseEcn",
				   StringValue(p.num("tcp_ecn", 1) ? "On" : "Off"));
	}
	/* incast: the receiver's port is the one to watch */
	if (!p.has("bottleneck_host") && p.str("workload", "incast").find("incast") !=
						 std::string::npos)
		p.kv["bottleneck_host"] = p.str("incast_dst", "0");
	Topology topo = build_topology(p);
	double bin_us = p.num("bin_us", std::max(1.0, std::round(topo.base_rtt_us / 4)));

	cfg.bin_s = bin_us * 1e-6;
	/* queue statistics from qstats_from_us on (default: from the start) */
	topo.switch_q.from_s = topo.host_q.from_s = topo.bottleneck_q.from_s =
		p.num("qstats_from_us", 0) * 1e-6;
	MrNet net(topo, cfg);

	add_workloads(p, net, rng);
	std::vector<std::unique_ptr<TcpFlow>> tcp_keep;

	if (tcp)
		/* a SYN's 100 bytes at the host link's rate */
		start_tcp_flows(net, tcp_keep,
				p.num("tcp_syn_gap_ns", 800e9 / topo.host_bps) * 1e-9);
	if (p.has("fail_link")) {
		/* fail_link=spine: the first leaf's first uplink */
		uint32_t li = 0;

		while (li < topo.links.size() && !topo.links[li].spine)
			li++;
		if (p.str("fail_link", "spine") != "spine")
			li = (uint32_t)p.num("fail_link", li);
		schedule_link_event(topo, li, MicroSeconds(p.num("fail_at_us", 100)),
				    false, MicroSeconds(p.num("reconverge_us", 1000)));
		if (p.has("restore_at_us"))
			schedule_link_event(topo, li,
					    MicroSeconds(p.num("restore_at_us", 0)), true,
					    MicroSeconds(p.num("reconverge_us", 1000)));
	}
	if (getenv("MRSIM_DROPS"))
		Config::ConnectWithoutContext(
			"/NodeList/*/$ns3::Ipv4L3Protocol/Drop",
			MakeCallback(+[](const Ipv4Header &h, Ptr<const Packet>,
					 Ipv4L3Protocol::DropReason r, Ptr<Ipv4>, uint32_t) {
				std::cerr << "ip drop " << r << " " << h.GetSource() << " > "
					  << h.GetDestination() << "\n";
			}));
	if (getenv("MRSIM_DROPS")) {
		Config::ConnectWithoutContext(
			"/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/MacTxDrop",
			MakeCallback(+[](Ptr<const Packet>) { std::cerr << "mac tx drop\n"; }));
		Config::ConnectWithoutContext(
			"/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/PhyRxDrop",
			MakeCallback(+[](Ptr<const Packet>) { std::cerr << "phy rx drop\n"; }));
		Config::ConnectWithoutContext(
			"/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/TxQueue/Drop",
			MakeCallback(+[](Ptr<const Packet>) { std::cerr << "dev queue drop\n"; }));
	}
	double stop = p.num("stop_ms", 100) * 1e-3;

	Simulator::Stop(Seconds(stop));
	auto t_wall = std::chrono::steady_clock::now();

	Simulator::Run();
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() -
						    t_wall).count();

	/* ---- report ---- */
	Out o;
	uint32_t done = 0, n = (uint32_t)net.flows.size();
	double first = 1e9, last = 0;
	std::map<std::string, std::vector<uint32_t>> by_kind;

	std::cout << "# mroce-sim: " << topo.describe << ", cc " << cfg.cc
		  << ", paths " << cfg.paths << ", " << n << " flows\n";
	for (auto &f : net.flows) {
		by_kind[f.kind].push_back(f.id);
		first = std::min(first, f.start_s);
		if (f.end_s >= 0) {
			done++;
			last = std::max(last, f.end_s);
		}
	}
	o.kv("flows", n);
	o.kv("flows_done", done);
	o.kv("base_rtt_us", topo.base_rtt_us);
	o.kv("sim_time_ms", Simulator::Now().GetSeconds() * 1e3);
	o.kv("wall_s", wall);

	/* FCT by size bucket */
	static const std::pair<uint64_t, const char *> buckets[] = {
		{ 64 << 10, "le64K" }, { 1 << 20, "le1M" }, { 16 << 20, "le16M" },
		{ UINT64_MAX, "gt16M" },
	};
	std::vector<double> fct_all;

	for (auto &b : buckets) {
		std::vector<double> v;
		static uint64_t lo;

		for (auto &f : net.flows)
			if (f.end_s >= 0 && f.bytes <= b.first &&
			    (&b == &buckets[0] || f.bytes > (&b - 1)->first))
				v.push_back((f.end_s - f.start_s) * 1e6);
		(void)lo;
		if (v.empty())
			continue;
		fct_all.insert(fct_all.end(), v.begin(), v.end());
		std::string k = std::string("fct_") + b.second;

		o.kv(k + "_n", v.size());
		o.kv(k + "_p50_us", pct(v, 0.5));
		o.kv(k + "_p99_us", pct(v, 0.99));
		o.kv(k + "_p999_us", pct(v, 0.999));
	}
	if (!fct_all.empty()) {
		o.kv("fct_p50_us", pct(fct_all, 0.5));
		o.kv("fct_p99_us", pct(fct_all, 0.99));
		o.kv("fct_max_us", pct(fct_all, 1));
	}

	/* goodput and fairness, per workload */
	std::ofstream fcsv;
	std::string outdir = p.str("out", "");

	if (!outdir.empty()) {
		fcsv.open(outdir + "/flows.csv");
		fcsv << "id,kind,src,dst,bytes,rx_bytes,start_us,fct_us,goodput_gbps,pkts,retx,rtos,path_deaths\n";
	}
	uint64_t retx = 0, pkts = 0, rtos = 0, tlps = 0, deaths = 0;
	uint64_t rnd = 0, lpseq = 0, lrack = 0, swin = 0, spath = 0;

	for (auto &f : net.flows) {
		double fct = f.end_s >= 0 ? (f.end_s - f.start_s) : NAN;

		retx += f.retx;
		pkts += f.pkts;
		rtos += f.rtos;
		tlps += f.tlps;
		deaths += f.path_deaths;
		rnd += f.rnd_drops;
		lpseq += f.lost_pseq;
		lrack += f.lost_rack;
		swin += f.stall_win;
		spath += f.stall_path;
		if (fcsv)
			fcsv << f.id << "," << f.kind << "," << f.src << "," << f.dst
			     << "," << f.bytes << "," << f.rx_bytes << ","
			     << f.start_s * 1e6 << ","
			     << fct * 1e6 << "," << f.bytes * 8 / fct / 1e9 << ","
			     << f.pkts << "," << f.retx << "," << f.rtos << ","
			     << f.path_deaths << "\n";
	}
	o.kv("pkts_sent", pkts);
	o.kv("retx_pkts", retx);
	o.kv("tail_probes", tlps);
	o.kv("rto_expiries", rtos);
	o.kv("path_deaths", deaths);
	if (cfg.loss || cfg.ack_loss) {
		o.kv("random_drops", rnd);
		o.kv("random_ack_drops", net.ack_drops);
	}
	if (!tcp) {
		o.kv("lost_path_seq", lpseq);
		o.kv("lost_rack", lrack);
		o.kv("stalls_window", swin);
		o.kv("stalls_path_window", spath);
	}
	if (tcp) {
		uint32_t aborted = 0;
		uint64_t syn_resent = 0;

		for (auto &tf : tcp_keep) {
			const FlowRec &f = net.flows[tf->id];

			aborted += tf->aborted;
			syn_resent += tf->syns > 1 ? tf->syns - 1 : 0;
			if (getenv("MRSIM_TCPTRACE") && f.end_s < 0)
				std::cerr << "tcp flow " << f.id << " " << f.src << ">" << f.dst
					  << " rx " << f.rx_bytes << " sent " << tf->tx_high
					  << " cwnd " << tf->cwnd << " ssthresh " << tf->ssthresh
					  << " ca_state " << tf->cong_state << " state "
					  << tf->state << " rtos " << f.rtos << " retx "
					  << f.retx << " last_tx_us " << tf->last_tx_s * 1e6
					  << (tf->aborted ? " aborted" : "") << "\n";
		}
		o.kv("tcp_aborted", aborted);
		o.kv("tcp_syn_resent", syn_resent);
	}
	for (auto &k : by_kind) {
		std::vector<double> g;

		for (uint32_t id : k.second) {
			const FlowRec &f = net.flows[id];

			/* unfinished flows count with what they delivered */
			double end = f.end_s >= 0 ? f.end_s : Simulator::Now().GetSeconds();

			g.push_back(f.rx_bytes * 8 / std::max(end - f.start_s, 1e-9) / 1e9);
		}
		o.kv(k.first + "_goodput_min_gbps", *std::min_element(g.begin(), g.end()));
		o.kv(k.first + "_goodput_mean_gbps",
		     std::accumulate(g.begin(), g.end(), 0.0) / g.size());
		o.kv(k.first + "_jain", jain(g));
	}

	/* incast: fairness while all senders run, and convergence in RTTs */
	if (by_kind.count("incast")) {
		auto &ids = by_kind["incast"];
		double t0 = net.flows[ids[0]].start_s, t1 = 1e9;

		for (uint32_t id : ids)
			t1 = std::min(t1, net.flows[id].end_s >= 0 ? net.flows[id].end_s :
								     Simulator::Now().GetSeconds());
		size_t w = std::max<size_t>(1, (size_t)std::round(
						       p.num("conv_window_rtts", 4) *
						       topo.base_rtt_us / bin_us));
		size_t b0 = (size_t)(t0 / cfg.bin_s), b1 = (size_t)(t1 / cfg.bin_s);
		auto win = windows(net, ids, b0, b1, w);
		double jmin = p.num("conv_jain", 0.9);
		double line_b = topo.host_bps / 8.0 * w * cfg.bin_s;
		size_t conv = win.size();
		std::vector<double> rates;

		/* the first window from which every window is fair and full */
		for (size_t i = win.size(); i-- > 0;) {
			double s = std::accumulate(win[i].begin(), win[i].end(), 0.0);

			if (jain(win[i]) < jmin || s < 0.8 * line_b)
				break;
			conv = i;
		}
		for (uint32_t id : ids) {
			const FlowRec &f = net.flows[id];
			double s = 0;

			for (size_t i = b0; i < b1 && i < f.rx_bins.size(); i++)
				s += f.rx_bins[i];
			rates.push_back(s * 8 / std::max(t1 - t0, 1e-9) / 1e9);
		}
		o.kv("incast_contended_jain", jain(rates));
		o.kv("incast_contended_sum_gbps",
		     std::accumulate(rates.begin(), rates.end(), 0.0));
		o.kv("incast_converge_rtts",
		     conv < win.size() ? (double)conv * w * bin_us / topo.base_rtt_us : NAN);
		/*
		 * the receiver's port settled: the last arrival that found it at
		 * twice the marking threshold or more (or full), while every
		 * sender still ran, after the start, in base RTTs
		 */
		double last_high = t0;

		for (double at : topo.bottleneck_q.high_at)
			if (at <= t1)
				last_high = std::max(last_high, at);
		o.kv("incast_queue_settle_rtts", (last_high - t0) * 1e6 / topo.base_rtt_us);
	}

	/* queues */
	auto qreport = [&](const std::string &name, const QueueStats &q) {
		uint64_t tot = 0, acc = 0;
		double p50 = 0, p99 = 0, p999 = 0, sum = 0;

		for (size_t d = 0; d < q.depth_hist.size(); d++) {
			tot += q.depth_hist[d];
			sum += (double)d * q.depth_hist[d];
		}
		o.kv(name + "_depth_mean_pkts", tot ? sum / tot : 0);
		for (size_t d = 0; d < q.depth_hist.size(); d++) {
			uint64_t before = acc;

			acc += q.depth_hist[d];
			if (before < 0.5 * tot && acc >= 0.5 * tot)
				p50 = d;
			if (before < 0.99 * tot && acc >= 0.99 * tot)
				p99 = d;
			if (before < 0.999 * tot && acc >= 0.999 * tot)
				p999 = d;
		}
		o.kv(name + "_depth_p50_pkts", p50);
		o.kv(name + "_depth_p99_pkts", p99);
		o.kv(name + "_depth_p999_pkts", p999);
		o.kv(name + "_depth_max_pkts", q.max_depth);
		o.kv(name + "_marks", q.marks);
		o.kv(name + "_drops", q.drops);
		o.kv(name + "_marks_total", q.marks_total);
		o.kv(name + "_drops_total", q.drops_total);
		if (!outdir.empty()) {
			std::ofstream qc(outdir + "/" + name + "_depth.csv");

			qc << "depth_pkts,arrivals\n";
			for (size_t d = 0; d < q.depth_hist.size(); d++)
				qc << d << "," << q.depth_hist[d] << "\n";
		}
	};
	qreport("switch_q", topo.switch_q);
	qreport("host_q", topo.host_q);
	if (p.has("bottleneck_host"))
		qreport("bottleneck_q", topo.bottleneck_q);
	o.kv("noroute_drops", topo.noroute_drops);

	/* spine links: utilisation over the active period */
	double span = std::max(last, Simulator::Now().GetSeconds() * (done < n)) - first;
	double umax = 0, usum = 0;
	uint32_t nspine = 0;

	for (auto &l : topo.links) {
		if (!l.spine)
			continue;
		for (int e = 0; e < 2; e++) {
			double u = *l.tx[e] * 8 / (l.bps * span);

			umax = std::max(umax, u);
			usum += u;
			nspine++;
		}
	}
	if (nspine) {
		o.kv("spine_util_mean", usum / nspine);
		o.kv("spine_util_max", umax);
	}

	/* link failure: aggregate goodput back to 90 % of before */
	if (p.has("fail_link")) {
		double fail = p.num("fail_at_us", 100) * 1e-6;
		size_t bf = (size_t)(fail / cfg.bin_s);
		size_t w = std::max<size_t>(1, (size_t)std::round(4 * topo.base_rtt_us / bin_us));
		std::vector<double> agg;

		for (auto &f : net.flows)
			for (size_t i = 0; i < f.rx_bins.size(); i++) {
				if (agg.size() <= i)
					agg.resize(i + 1);
				agg[i] += f.rx_bins[i];
			}
		auto sum = [&](size_t a, size_t b) {
			double s = 0;

			for (size_t i = a; i < b && i < agg.size(); i++)
				s += agg[i];
			return s;
		};
		double before = bf >= w ? sum(bf - w, bf) : NAN;
		double rec = NAN, dip = before;

		for (size_t b = bf; b + w <= agg.size(); b++) {
			dip = std::min(dip, sum(b, b + w));
			if (sum(b, b + w) >= 0.9 * before && b > bf) {
				rec = (b + w - bf) * bin_us;
				break;
			}
		}
		o.kv("failure_goodput_dip", dip / before);
		/* how long packets kept going into the hole the failure made */
		o.kv("failure_blackholed_pkts", topo.noroute_drops);
		o.kv("failure_blackhole_us", topo.last_noroute_s >= 0 ?
						     (topo.last_noroute_s - fail) * 1e6 : 0);
		o.kv("failure_recovery_us", rec);
		o.kv("failure_recovery_rtts", rec / topo.base_rtt_us);
	}
	if (!outdir.empty()) {
		std::ofstream s(outdir + "/summary.csv");

		s << "key,value\n" << o.csv.str();
	}
	Simulator::Destroy();
	return 0;
}
