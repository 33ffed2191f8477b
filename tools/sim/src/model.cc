// SPDX-License-Identifier: GPL-2.0-only
/*
 * The MetaRoCE endpoint model: one MrHost application per host, with a
 * UDP socket on port 4792 for everything that arrives and the host's
 * UdpL4Protocol for sending, so that each packet can carry the source
 * port of its path (mroce_wire_sport()).  Packets carry the spec's
 * headers, built by mroce_wire_build() and checked by mroce_wire_parse();
 * the payload is zero bytes of the right length.
 *
 * The requester composes the driver's pure state machines the way
 * mroce_req.c, mroce_comp.c, mroce_recovery.c and mroce_timer.c do: the
 * scoreboard (mroce_sb_*) records every transmission and decides what is
 * lost, the path table (mroce_paths_*) picks each packet's path, the
 * congestion control (mroce_cc_*) sets the window and the rate, the
 * pacer (mroce_pacer_*) spaces packets, the RTO, tail probe and path
 * probes run on the driver's timer rules.  The responder keeps the
 * receive window and answers as mroce_resp.c does: ACK on request,
 * on CE, every 8 packets (4 while a hole exists) or when ePSN jumps, with
 * the SACK bitmap, the echo of the triggering packet, CE counts and the
 * port's rate hint (mroce_hint_rx()).
 *
 * One flow is one RDMA WRITE of its size.  Not modelled: host CPU and
 * scheduling, verbs, completions, READ/ATOMIC, RNR.
 */
#include <bitset>
#include <iostream>
#include <cstdlib>
#include <memory>

#include "sim.h"
#include "mrproto.h"

using namespace ns3;

namespace mrsim {

static constexpr uint16_t MR_PORT = MROCE_WIRE_UDP_PORT;

static uint64_t now_us()
{
	return (uint64_t)Simulator::Now().GetMicroSeconds();
}

struct SendConn;

struct RecvConn {
	uint32_t flow;
	uint32_t peer_qpn;
	Ipv4Address peer;
	uint32_t epsn = 0, high = 0;
	std::bitset<MROCE_WINDOW> seen;
	struct mroce_ack_count ackc = {};
	uint64_t hint_bytes = 0;
	struct mroce_hint_conn rhc;
};

class MrHost : public Application {
public:
	MrHost(MrNet *net, uint32_t id) : m_net(net), m_id(id)
	{
		mroce_hint_init(&m_rh, net->topo.host_bps / 1000000,
				net->cfg.hint_epoch_us);
	}

	void StartApplication() override
	{
		m_sock = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
		m_sock->SetIpRecvTos(true);
		m_sock->Bind(InetSocketAddress(Ipv4Address::GetAny(), MR_PORT));
		m_sock->SetRecvCallback(MakeCallback(&MrHost::rx, this));
		m_udp = GetNode()->GetObject<UdpL4Protocol>();
	}

	void StopApplication() override {}

	void start_flow(uint32_t flow);
	void send_pkt(struct mroce_pkt_info &pi, Ipv4Address dst, uint16_t sport,
		      bool ect);

	MrNet *m_net;
	uint32_t m_id;
	struct mroce_hint m_rh;
	std::map<uint32_t, std::unique_ptr<SendConn>> m_send;	/* by our QPN */
	std::map<uint32_t, RecvConn> m_recv;			/* by our QPN */

private:
	void rx(Ptr<Socket> s);
	void rx_request(RecvConn &rc, const struct mroce_pkt_info &pi,
			Ipv4Address from, uint16_t sport, uint32_t pkt_len);
	void ack(RecvConn &rc, const struct mroce_pkt_info *trig, uint16_t sport,
		 uint8_t echo_flags);

	Ptr<Socket> m_sock;
	Ptr<UdpL4Protocol> m_udp;
};

/* ---- requester ----------------------------------------------------- */

struct SendConn {
	MrHost *h;
	FlowRec *f;
	uint32_t qpn, dqpn;
	Ipv4Address dst;
	uint32_t npkts, psn0, sent_new = 0;
	uint16_t sport_base;
	struct mroce_sb sb;
	struct mroce_paths *ps = nullptr;
	struct mroce_cc_state cc;
	const struct mroce_cc_ops *ops;
	struct mroce_rto rto;
	struct mroce_pacer pacer;
	uint32_t min_rtt_us = 0, hint_mbps = 0;
	uint64_t min_rtt_at = 0;
	uint64_t rto_at = 0, tlp_at = 0, reo_at = 0, probe_at = 0;	/* ns */
	bool tlp_out = false, done = false;
	EventId timer, pace;
	uint64_t timer_at = 0;

	~SendConn() { free(ps); }

	uint32_t payload(uint32_t psn) const
	{
		uint64_t off = (uint64_t)mroce_psn_fwd(psn0, psn) * h->m_net->cfg.mtu;

		return (uint32_t)std::min<uint64_t>(h->m_net->cfg.mtu, f->bytes - off);
	}

	void xmit(uint32_t psn, bool retx, int path);
	void try_send();
	void on_ack(const struct mroce_pkt_info &pi);
	void recover(uint64_t now_ns);
	void arm();
	void fire();
	bool tlp();
	void rto_fire(uint64_t now);
	void finish();
	void send_probe(int id, uint32_t path_seq);
	bool missing(uint32_t psn)
	{
		return !(mroce_sb_slot(&sb, psn)->flags & MROCE_SB_SACKED);
	}
};

static void sb_event(void *ctx, u32 psn, const struct mroce_sb_slot *s,
		     enum mroce_sb_event ev)
{
	SendConn *c = (SendConn *)ctx;

	(void)psn;
	if (ev == MROCE_SB_LOST_PATH_SEQ)
		c->f->lost_pseq++;
	else if (ev == MROCE_SB_LOST_RACK)
		c->f->lost_rack++;
	if (ev == MROCE_SB_DELIVERED) {
		mroce_paths_delivered(c->ps, s->path, !(s->flags & MROCE_SB_LOST),
				      now_us());
		return;
	}
	if (mroce_paths_lost(c->ps, s->path, mroce_sb_passed(&c->sb, s),
			     s->xmit_us, now_us())) {
		c->f->path_deaths++;
		uint64_t at = mroce_paths_next_probe_us(c->ps);

		c->probe_at = at == U64_MAX ? 0 : at * 1000;
	}
}

void SendConn::xmit(uint32_t psn, bool retx, int path)
{
	struct mroce_pkt_info pi = {};
	uint64_t off = (uint64_t)mroce_psn_fwd(psn0, psn) * h->m_net->cfg.mtu;
	uint64_t t = now_us();

	pi.opcode = MROCE_OP_WRITE;
	pi.dest_qpn = dqpn;
	pi.src_qpn = qpn;
	pi.psn = psn;
	pi.msn = 0;
	pi.va = 0x10000000ULL + off;
	pi.rkey = 0x100 + dqpn;
	pi.offset = (u32)off;
	pi.msg_len = (u32)f->bytes;
	pi.payload_len = payload(psn);
	if (off == 0)
		pi.flags |= MROCE_F_FIRST;
	if (off + pi.payload_len >= f->bytes)
		pi.flags |= MROCE_F_LAST;
	if (retx)
		pi.flags |= MROCE_F_RETRANSMIT;
	/* mroce_req_xmit(): when an ACK is asked for at once */
	if (retx || (pi.flags & MROCE_F_LAST) ||
	    (path >= 0 && mroce_paths_want_echo(ps, path, t, rto.srtt_us)))
		pi.flags |= MROCE_F_ACK_REQ;
	if (retx)
		path = mroce_paths_pick_retx(ps, mroce_sb_slot(&sb, psn)->path);
	pi.path_id = (u8)path;
	pi.path_seq = mroce_paths_sent(ps, path, retx);
	pi.ts_us = (u32)t;
	if (!mroce_sb_sent(&sb, psn, pi.path_id, pi.path_seq, pi.ts_us))
		NS_FATAL_ERROR("PSN outside the send window");
	f->pkts++;
	if (retx)
		f->retx++;
	h->send_pkt(pi, dst,
		    mroce_wire_sport(sport_base, (u8)path, ps->path[path].gen), true);
}

void SendConn::send_probe(int id, uint32_t path_seq)
{
	struct mroce_pkt_info pi = {};

	pi.opcode = MROCE_OP_PROBE;
	pi.dest_qpn = dqpn;
	pi.src_qpn = qpn;
	pi.path_id = (u8)id;
	pi.path_seq = path_seq;
	pi.ts_us = (u32)now_us();
	h->send_pkt(pi, dst, mroce_wire_sport(sport_base, (u8)id, ps->path[id].gen),
		    true);
}

/* mroce_req_run(): new packets while the window, pacer and paths allow */
void SendConn::try_send()
{
	u32 burst = h->m_net->cfg.burst_pkts, burst_n = 0;
	int burst_path = -1;
	bool sent = false;

	while (!done && sent_new < npkts) {
		u32 win = std::min<u32>(MROCE_WINDOW, cc.cwnd_pkts);

		if (ps->windowed)
			win = std::min(win, mroce_paths_window(ps));
		u32 used = mroce_psn_fwd(sb.una, sb.nxt);

		if (h->m_net->cfg.window_inflight) {
			if (used >= MROCE_WINDOW) {
				f->stall_win++;	/* the SACK span */
				break;
			}
			used = mroce_sb_outstanding(&sb);
		}
		if (used >= std::max(win, 1U)) {
			if (win < std::min<u32>(MROCE_WINDOW, cc.cwnd_pkts))
				f->stall_path++;	/* the path windows */
			else
				f->stall_win++;	/* cwnd or the 256-PSN window */
			break;
		}
		if (cc.rate_bps) {
			u64 wait = mroce_pacer_next_us(&pacer, cc.rate_bps,
						       cc.pkt_bytes, now_us());

			if (wait) {
				if (!pace.IsRunning())
					pace = Simulator::Schedule(MicroSeconds(wait),
								   &SendConn::try_send,
								   this);
				break;
			}
		}
		int path = -1;

		/* a chunk open on burst_path (it ends with the run, as the
		 * driver's mroce_req_chunk_flush() at the end of a run)
		 */
		if (burst_n && burst_n < burst)
			path = mroce_paths_pick_again(ps, burst_path);
		if (path >= 0) {
			burst_n++;
		} else {
			path = mroce_paths_pick(ps);
			burst_n = 0;
		}
		if (path < 0 && ps->windowed) {
			/* mroce_req_paths_resync() */
			for (u32 id = 0; id < ps->n; id++)
				ps->path[id].inflight = 0;
			for (u32 p = sb.una; p != sb.nxt; p = mroce_psn_add(p, 1)) {
				const struct mroce_sb_slot *s = mroce_sb_slot(&sb, p);

				if (!(s->flags & (MROCE_SB_SACKED | MROCE_SB_LOST)) &&
				    s->path < ps->n)
					ps->path[s->path].inflight++;
			}
			path = mroce_paths_pick(ps);
		}
		if (path < 0) {
			f->stall_path++;
			break;
		}
		if (!burst_n) {
			burst_path = path;
			burst_n = 1;
		}
		if (!sent)
			mroce_cc_tx(ops, &cc, sb.una != sb.nxt, now_us(),
				    mroce_rto_us(&rto), (u64)hint_mbps * 1000000);
		xmit(sb.nxt, false, path);
		if (cc.rate_bps)
			mroce_pacer_sent(&pacer, cc.rate_bps, cc.pkt_bytes, cc.pkt_bytes,
					 now_us());
		sent_new++;
		sent = true;
	}
	if (sent) {
		/* mroce_timer_sent() */
		uint64_t now = now_us() * 1000;

		if (!rto_at)
			rto_at = now + (uint64_t)mroce_rto_us(&rto) * 1000;
		tlp_at = tlp_out ? 0 : mroce_tlp_at(&rto, now, rto_at);
		arm();
	}
}

/* mroce_req_recover() */
void SendConn::recover(uint64_t now_ns)
{
	struct mroce_sb_clock c = {};
	u32 lost, wait, psn;

	c.now_us = (u32)(now_ns / 1000);
	c.srtt_us = rto.srtt_us;
	c.rttvar_us = rto.rttvar_us;
	c.min_rtt_us = min_rtt_us;
	c.spread_us = mroce_paths_srtt_spread_us(ps);
	lost = mroce_sb_detect(&sb, &c, sb_event, this, &wait);
	reo_at = wait == U32_MAX ? 0 : now_ns + (uint64_t)wait * 1000;
	if (!lost)
		return;
	if (ops->on_loss)
		ops->on_loss(&cc, lost, false, now_ns / 1000, 0);
	psn = sb.una;
	while (mroce_sb_next_lost(&sb, psn, &psn))
		xmit(psn, true, -1);
}

void SendConn::finish()
{
	done = true;
	f->end_s = Simulator::Now().GetSeconds();
	timer.Cancel();
	pace.Cancel();
}

/* mroce_comp_ack() */
void SendConn::on_ack(const struct mroce_pkt_info &pi)
{
	struct mroce_cc_ack a = {};
	uint64_t now = now_us(), now_ns = now * 1000;
	int delivered;

	if (done || !mroce_psn_between(pi.psn, sb.una, sb.nxt))
		return;	/* R1 */
	if ((pi.echo_flags & MROCE_ECHO_DUP))
		mroce_sb_dup_echo(&sb, pi.echo_psn);
	if (pi.rx_count) {
		u32 rtt = (u32)now - pi.echo_ts - pi.ack_delay_us;

		if (rtt < 1000000) {
			mroce_rto_sample(&rto, rtt);
			if (!min_rtt_us || rtt <= min_rtt_us ||
			    now - min_rtt_at > 10000000) {
				min_rtt_us = std::max(rtt, 1U);
				min_rtt_at = now;
			}
			a.rtt_us = rtt;
		}
		if (mroce_paths_probe_acked(ps, pi.echo_path_id, pi.echo_path_seq,
					    now)) {
			uint64_t at = mroce_paths_next_probe_us(ps);

			probe_at = at == U64_MAX ? 0 : at * 1000;
		}
		if (pi.opcode == MROCE_OP_ACK)
			mroce_sb_echo(&sb, pi.echo_path_id, pi.echo_path_seq,
				      pi.echo_ts);
	}
	delivered = mroce_sb_ack(&sb, pi.psn, pi.sack, sb_event, this);
	if (pi.rx_count)
		mroce_paths_echo(ps, pi.echo_path_id, a.rtt_us,
				 pi.echo_flags & MROCE_ECHO_CE, now);
	if (delivered > 0) {
		mroce_rto_progress(&rto);
		rto_at = now_ns + (uint64_t)mroce_rto_us(&rto) * 1000;
	}
	tlp_out = false;
	if (mroce_psn_before(sb.una, sb.nxt)) {
		recover(now_ns);
		tlp_at = mroce_tlp_at(&rto, now_ns, rto_at);
	} else {
		reo_at = tlp_at = rto_at = 0;
	}
	if (pi.rate_hint_mbps)
		hint_mbps = pi.rate_hint_mbps;
	if (ops->on_ack) {
		a.now_us = now;
		a.path = pi.echo_path_id;
		a.acked_pkts = std::max(delivered, 0);
		a.inflight_pkts = mroce_sb_outstanding(&sb);
		a.rx_count = pi.rx_count;
		a.ce_count = pi.ce_count;
		a.echo_ce = pi.echo_flags & MROCE_ECHO_CE;
		a.srtt_us = rto.srtt_us;
		a.qdelay_target_us = h->m_net->cfg.qdelay_target_us;
		a.min_rtt_us = a.qdelay_target_us ? min_rtt_us : 0;
		a.base_rtt_us = min_rtt_us ? min_rtt_us + a.qdelay_target_us : 0;
		a.rate_hint_bps = (u64)pi.rate_hint_mbps * 1000000;
		ops->on_ack(&cc, &a);
	}
	if (getenv("MRSIM_TRACE"))
		std::cerr << now << " flow " << f->id << " cum " << mroce_psn_fwd(psn0, pi.psn)
			  << " rtt " << a.rtt_us << " ce " << pi.ce_count << "/"
			  << pi.rx_count << " hint " << pi.rate_hint_mbps
			  << " rate " << cc.rate_bps / 1000000 << " cwnd " << cc.cwnd_pkts
			  << " out " << mroce_sb_outstanding(&sb) << "\n";
	if (sent_new == npkts && sb.una == sb.nxt) {
		finish();
		return;
	}
	try_send();
	arm();
}

/* mroce_timer_arm(): one event at the earliest deadline */
void SendConn::arm()
{
	uint64_t at = UINT64_MAX;

	if (done)
		return;
	for (uint64_t d : { rto_at, tlp_at, reo_at, probe_at })
		if (d && d < at)
			at = d;
	if (at == UINT64_MAX) {
		timer.Cancel();
		return;
	}
	if (timer.IsRunning() && timer_at == at)
		return;
	timer.Cancel();
	timer_at = at;
	uint64_t now = (uint64_t)Simulator::Now().GetNanoSeconds();

	timer = Simulator::Schedule(NanoSeconds(at > now ? at - now : 0),
				    &SendConn::fire, this);
}

/* mroce_req_tlp(): resend the newest packet still missing */
bool SendConn::tlp()
{
	for (u32 psn = sb.nxt; psn != sb.una;) {
		psn = mroce_psn_add(psn, MROCE_PSN_MASK);	/* - 1 */
		if (missing(psn)) {
			f->tlps++;
			tlp_out = true;
			xmit(psn, true, -1);
			return true;
		}
	}
	return false;
}

/* mroce_req_rto() */
void SendConn::rto_fire(uint64_t now)
{
	u32 psn = sb.una;

	f->rtos++;
	if (ops->on_loss)
		ops->on_loss(&cc, 1, true, now / 1000, 0);
	while (psn != sb.nxt && !missing(psn))
		psn = mroce_psn_add(psn, 1);
	if (psn != sb.nxt) {
		if (mroce_paths_kill(ps, mroce_sb_slot(&sb, psn)->path, now / 1000)) {
			f->path_deaths++;
			uint64_t at = mroce_paths_next_probe_us(ps);

			probe_at = at == U64_MAX ? 0 : at * 1000;
		}
		xmit(psn, true, -1);
	}
	mroce_rto_expired(&rto);
	rto_at = now + (uint64_t)mroce_rto_us(&rto) * 1000;
}

/* mroce_timer_fire() */
void SendConn::fire()
{
	uint64_t now = (uint64_t)Simulator::Now().GetNanoSeconds();

	if (done)
		return;
	if (probe_at && probe_at <= now) {
		u32 seq;
		int id;

		while ((id = mroce_paths_probe_due(ps, now / 1000, rto.srtt_us,
						   &seq)) >= 0)
			send_probe(id, seq);
		uint64_t at = mroce_paths_next_probe_us(ps);

		probe_at = at == U64_MAX ? 0 : at * 1000;
	}
	if (reo_at && reo_at <= now) {
		reo_at = 0;
		recover(now);
	}
	if (tlp_at && tlp_at <= now) {
		/*
		 * The probe first, even when the RTO is due as well (it took
		 * the RTO's place); then the RTO runs again from the probe.
		 */
		tlp_at = 0;
		if (tlp())
			rto_at = now + (uint64_t)mroce_rto_us(&rto) * 1000;
		else if (rto_at && rto_at <= now)
			rto_fire(now);	/* nothing to probe */
	} else if (rto_at && rto_at <= now) {
		tlp_at = 0;
		rto_fire(now);
	}
	if (sb.una == sb.nxt)
		rto_at = tlp_at = reo_at = 0;
	try_send();
	arm();
}

void MrHost::start_flow(uint32_t flow)
{
	FlowRec &f = m_net->flows[flow];
	auto c = std::make_unique<SendConn>();
	const ModelCfg &cfg = m_net->cfg;
	uint32_t qpn = 0x100 + flow * 2;

	c->h = this;
	c->f = &f;
	c->qpn = qpn;
	c->dqpn = qpn + 1;
	c->dst = m_net->topo.host_addr[f.dst];
	c->npkts = (uint32_t)((f.bytes + cfg.mtu - 1) / cfg.mtu);
	c->psn0 = (flow * 7919) & MROCE_PSN_MASK;	/* wraps for some */
	c->sport_base = (uint16_t)(flow * 2654435761u >> 8);
	mroce_sb_init(&c->sb, c->psn0);
	c->ops = mroce_cc_get(cfg.cc.c_str());
	if (!c->ops)
		NS_FATAL_ERROR("unknown cc " << cfg.cc);
	c->ps = (struct mroce_paths *)calloc(1, mroce_paths_size(cfg.paths));
	mroce_paths_init(c->ps, cfg.paths, MROCE_WINDOW, c->ops->path_windows,
			 now_us());
	/* mroce_qp_paths_init() sets 0: a software host's RTT jitter */
	c->ps->qdelay_target_us = cfg.path_qdelay_target_us;
	memset(&c->cc, 0, sizeof(c->cc));
	c->cc.pkt_bytes = mroce_wire_pkt_bytes(cfg.mtu);
	mroce_cc_init_conn(c->ops, &c->cc, m_net->topo.host_bps, 0);
	c->cc.pkt_bytes = mroce_wire_pkt_bytes(cfg.mtu);
	mroce_rto_init(&c->rto);
	mroce_pacer_init(&c->pacer);
	SendConn *raw = c.get();

	m_send[qpn] = std::move(c);
	/* the responder side knows the connection from its setup */
	Ptr<MrHost> peer = m_net->hosts[f.dst];
	RecvConn &rc = peer->m_recv[qpn + 1];

	rc.flow = flow;
	rc.peer_qpn = qpn;
	rc.peer = m_net->topo.host_addr[f.src];
	rc.epsn = raw->psn0;
	rc.high = raw->psn0;
	mroce_hint_conn_init(&rc.rhc);
	raw->try_send();
}

void MrHost::send_pkt(struct mroce_pkt_info &pi, Ipv4Address dst,
		      uint16_t sport, bool ect)
{
	uint8_t buf[MROCE_HLEN_MAX];
	int len = mroce_wire_build(buf, sizeof(buf), &pi);

	if (len < 0)
		NS_FATAL_ERROR("mroce_wire_build: " << mroce_wire_err_name(len));
	Ptr<Packet> p = Create<Packet>(buf, len);

	if (pi.payload_len)
		p->AddAtEnd(Create<Packet>(pi.payload_len));
	if (ect) {
		SocketIpTosTag tos;

		tos.SetTos(0x02);	/* ECT(0) */
		p->AddPacketTag(tos);
	}
	m_udp->Send(p, m_net->topo.host_addr[m_id], dst, sport, MR_PORT);
}

/* ---- responder ----------------------------------------------------- */

void MrHost::ack(RecvConn &rc, const struct mroce_pkt_info *trig,
		 uint16_t sport, uint8_t echo_flags)
{
	struct mroce_pkt_info pi = {};

	pi.opcode = MROCE_OP_ACK;
	pi.dest_qpn = rc.peer_qpn;
	pi.src_qpn = rc.peer_qpn + 1;
	pi.psn = rc.epsn;
	for (u32 i = 1; i < MROCE_WINDOW; i++)
		if (rc.seen[(rc.epsn + i) % MROCE_WINDOW])
			mroce_wire_sack_set(pi.sack, i);
	if (m_net->cfg.hint) {
		uint64_t now = now_us();

		if (rc.hint_bytes)
			pi.rate_hint_mbps = mroce_hint_rx(&m_rh, &rc.rhc,
							  (u32)rc.hint_bytes,
							  rc.ackc.ce, now);
		else
			pi.rate_hint_mbps = mroce_hint_current(&m_rh, now);
	}
	rc.hint_bytes = 0;
	/* mroce_resp_kh_fill() */
	mroce_ack_count_report(&rc.ackc, trig, &pi.rx_count, &pi.ce_count);
	if (trig) {
		pi.echo_ts = trig->ts_us;
		pi.echo_path_seq = trig->path_seq;
		pi.echo_psn = trig->psn;
		pi.echo_path_id = trig->path_id;
		pi.echo_flags = echo_flags | (trig->rx_ce ? MROCE_ECHO_CE : 0);
	}
	/* back on the entropy the triggering packet came with */
	send_pkt(pi, rc.peer, sport, false);
}

void MrHost::rx_request(RecvConn &rc, const struct mroce_pkt_info &pi,
			Ipv4Address from, uint16_t sport, uint32_t pkt_len)
{
	FlowRec &f = m_net->flows[rc.flow];
	u32 d = mroce_psn_fwd(rc.epsn, pi.psn), epsn = rc.epsn;

	(void)from;
	if (d >= MROCE_PSN_HALF || (d < MROCE_WINDOW && rc.seen[pi.psn % MROCE_WINDOW])) {
		/* a duplicate: answered at once, flagged (C8) */
		mroce_ack_count_arrival(&rc.ackc, false);
		ack(rc, &pi, sport, MROCE_ECHO_DUP);
		return;
	}
	if (d >= MROCE_WINDOW)
		return;		/* ahead of the window (C7) */
	rc.seen[pi.psn % MROCE_WINDOW] = true;
	if (mroce_psn_after(mroce_psn_add(pi.psn, 1), rc.high))
		rc.high = mroce_psn_add(pi.psn, 1);
	while (rc.seen[rc.epsn % MROCE_WINDOW]) {
		rc.seen[rc.epsn % MROCE_WINDOW] = false;
		rc.epsn = mroce_psn_add(rc.epsn, 1);
	}
	mroce_ack_count_arrival(&rc.ackc, pi.rx_ce);
	rc.hint_bytes += pkt_len;
	f.rx_bytes += pi.payload_len;
	size_t bin = (size_t)(Simulator::Now().GetSeconds() / m_net->cfg.bin_s);

	if (f.rx_bins.size() <= bin)
		f.rx_bins.resize(bin + 1);
	f.rx_bins[bin] += pi.payload_len;
	/* mroce_resp_ack_due() */
	if ((pi.flags & MROCE_F_ACK_REQ) || pi.rx_ce ||
	    rc.ackc.rx >= (rc.high != rc.epsn ? 4U : 8U) ||
	    mroce_psn_fwd(epsn, rc.epsn) > 1)
		ack(rc, &pi, sport, 0);
}

void MrHost::rx(Ptr<Socket> s)
{
	Address from;
	Ptr<Packet> p;

	while ((p = s->RecvFrom(from))) {
		uint8_t buf[MROCE_HLEN_MAX];
		struct mroce_pkt_info pi = {};
		uint32_t n = std::min<uint32_t>(p->GetSize(), sizeof(buf));
		SocketIpTosTag tos;
		InetSocketAddress src = InetSocketAddress::ConvertFrom(from);

		p->CopyData(buf, n);
		/* parse reads only the headers of a packet with payload */
		if (mroce_wire_parse(buf, p->GetSize(), &pi) < 0)
			continue;
		pi.rx_ce = p->PeekPacketTag(tos) && (tos.GetTos() & 3) == 3;
		pi.rx_sport = src.GetPort();
		auto sc = m_send.find(pi.dest_qpn);

		if (pi.opcode == MROCE_OP_ACK || pi.opcode == MROCE_OP_NAK) {
			/* ack_loss_pct: as netem on the responder's egress */
			if (m_net->cfg.ack_loss && m_net->drop(m_net->cfg.ack_loss)) {
				m_net->ack_drops++;
				continue;
			}
			if (sc != m_send.end())
				sc->second->on_ack(pi);
			continue;
		}
		auto rc = m_recv.find(pi.dest_qpn);

		if (rc == m_recv.end())
			continue;
		/* loss_pct: as netem on the requester's egress */
		if (m_net->cfg.loss && m_net->drop(m_net->cfg.loss)) {
			m_net->flows[rc->second.flow].rnd_drops++;
			continue;
		}
		if (pi.opcode == MROCE_OP_PROBE) {
			/* mroce_resp_probe() */
			mroce_ack_count_arrival(&rc->second.ackc, false);
			ack(rc->second, &pi, pi.rx_sport, 0);
		} else {
			rx_request(rc->second, pi, src.GetIpv4(), pi.rx_sport,
				   p->GetSize() + 28);
		}
	}
}

/* ---- the run's endpoints --------------------------------------------- */

MrNet::MrNet(Topology &t, const ModelCfg &c)
	: topo(t), cfg(c), loss_rng(c.seed * 0x9e3779b97f4a7c15ULL + 1)
{
	static bool registered;

	if (!registered) {
		mroce_cc_init();
		registered = true;
	}
	for (uint32_t i = 0; i < t.n_hosts; i++) {
		Ptr<MrHost> h = CreateObject<MrHost>(this, i);

		t.nodes.Get(i)->AddApplication(h);
		h->SetStartTime(Seconds(0));
		hosts.push_back(h);
	}
}

MrNet::~MrNet() = default;

static void start_flow_ev(MrNet *net, uint32_t id)
{
	net->hosts[net->flows[id].src]->start_flow(id);
}

void MrNet::add_flow(uint32_t src, uint32_t dst, uint64_t bytes, double at,
		     const std::string &kind)
{
	FlowRec f;

	f.id = (uint32_t)flows.size();
	f.src = src;
	f.dst = dst;
	f.bytes = bytes;
	f.start_s = at;
	f.kind = kind;
	flows.push_back(f);
	if (cfg.cc != "dctcp")	/* ns-3's TCP carries those (main.cc) */
		Simulator::Schedule(Seconds(at), &start_flow_ev, this, f.id);
}

} /* namespace mrsim */
