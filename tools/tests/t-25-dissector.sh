#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 900
#
# The Wireshark dissector (tools/wireshark/metaroce.lua) on real mroce
# traffic, and the mroce tracepoints (mroce_trace.h) on the same run.
# dumpcap captures veth1 (h1's side of the h1-h2 link) while
#   ibv_rc_pingpong -s 3000   SENDs of 3000 bytes
#   ib_write_bw -s 5000 -q 2  RDMA WRITEs of 5000 bytes on two QPs
#   ib_read_bw -s 8192        RDMA READs of 8192 bytes
#   ib_atomic_bw (FETCH_AND_ADD, CMP_AND_SWAP)
#   two malformed UDP packets to port 4792 from h2 (10 bytes; opcode 0x13)
#   mroce-verify (write, send, read, atomics) with netem loss 4 % on both
#   veth ends: SACKs, losses, retransmissions
# run, with every mroce trace event enabled.  Then tshark with the
# dissector must decode every packet; only the two malformed ones may
# carry expert info of the group "malformed", and their drop reasons are
# rx_drop_short and rx_drop_opcode; the opcodes SEND, RDMA_WRITE,
# RDMA_READ_REQ/RESP, ATOMIC_CMP_SWP/FETCH_ADD/RESP, ACK appear; new
# request PSNs increase per destination QP; the QPNs, first PSNs, rkeys,
# addresses and message lengths are the ones the tools printed and used;
# ACKs with SACK bits appear under loss, and every PSN an ACK reports
# SACKed was captured as a request to that QP before it; ACKs carry a rate
# hint (two WRITE QPs into one port, hint epoch 20 ms).  The trace must
# hold mroce_tx/mroce_rx, mroce_qp_state INIT, RTR
# and RTS for the pingpong QPs, mroce_drop with reasons rx_drop_short and
# rx_drop_opcode (opcode 0x13), mroce_loss with a rule, mroce_retx with a
# cause and a PSN already sent (before nxt), mroce_cc with a window 1..256,
# and as many mroce_drop events as the rx_drop_*/rx_dup_* counters grew.
# Artifacts: $MROCE_RESULTS/t-25-dissector/{capture.pcap,decoded.txt,
# fields.tsv,trace.txt}.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

need_cmd tshark dumpcap python3 tc ibv_rc_pingpong ib_write_bw ib_read_bw \
	ib_atomic_bw timeout ss
LUA=$MROCE_TOP/tools/wireshark/metaroce.lua
V=$MROCE_TOP/tools/mroce-verify/mroce-verify
[ -f "$LUA" ] || fail "$LUA missing"
[ -x "$V" ] || fail "$V not built (make tools)"

# The rate hint's epoch: 20 ms, not 100 us.  Connections count as active
# per epoch, from their ACKs; under TCG a 100 us epoch rarely holds ACKs of
# both WRITE QPs (or of one and the epoch after the other's last), and the
# hint then stays 0 by chance.  A 20 ms epoch spans the two QPs' overlap
# however the host schedules them.  The parameter applies to devices
# created afterwards (setup_rdma_pair's).
load_mroce
echo 20000 >/sys/module/mroce/parameters/hint_epoch_us
setup_rdma_pair
OUT=$RDMA_OUTDIR

# --- tracing: every mroce event, a buffer that holds the whole run
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null
[ -d "$T/events/mroce" ] || fail "no $T/events/mroce: tracepoints missing"
on_exit "echo 0 > $T/events/mroce/enable; echo 1408 > $T/buffer_size_kb"
echo 0 >"$T/events/mroce/enable"
echo 16384 >"$T/buffer_size_kb"
: >"$T/trace"
# rx_drop_* and rx_dup_* of both devices, summed
drop_sum() {
	local d n s=0
	for d in "$DEV_S" "$DEV_C"; do
		n=$(rdma statistic show link "$d/1" | tr ' ' '\n' |
			awk 'p { s += $1; p = 0 } /^rx_d(rop|up)_/ { p = 1 } END { print s + 0 }')
		s=$((s + n))
	done
	echo "$s"
}
drops0=$(drop_sum)
require "enable the mroce trace events" sh -c "echo 1 > $T/events/mroce/enable"

# --- capture on veth1 in h1: both directions of the link
PCAP=/tmp/$TEST_NAME.pcap
rm -f "$PCAP"
dumpcap_start h1 veth1 'udp port 4792' "$PCAP" 0

# hex QPN/PSN/RKey/VAddr of an "address" line of perftest or pingpong
addr_field() {	# addr_field FILE local|remote FIELD
	sed -n "s/.*$2 address:.*$3[: ]*\(0x[0-9a-fA-F]*\).*/\1/p" "$1" | head -n 1
}

port=18600
run_pair pingpong $port 120 \
	ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p $port -s 3000 -n 8 -- \
	ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p $port -s 3000 -n 8 "$ADDR_S"
pair_ok "ibv_rc_pingpong -s 3000 -n 8"
PP_QS=$(addr_field "$SRV_OUT" local QPN)
PP_QC=$(addr_field "$CLI_OUT" local QPN)
PP_PC=$(addr_field "$CLI_OUT" local PSN)
PP_PS=$(addr_field "$SRV_OUT" local PSN)

perf() {	# perf NAME TOOL ARGS...: server in h1, client in h2
	local name=$1 tool=$2
	shift 2
	port=$((port + 1))
	run_pair "$name" $port 120 \
		"$tool" -d "$DEV_S" -x "$GID_S" -F -p $port "$@" -- \
		"$tool" -d "$DEV_C" -x "$GID_C" -F -p $port "$@" "$ADDR_S"
	pair_ok "$tool $*"
}
# two QPs: the receiver's rate hint is 0 with one sender (spec, "Rate
# hint": the fair share of n >= 2 heavy senders)
perf write ib_write_bw -s 5000 -n 64 -q 2
W_Q=$(addr_field "$SRV_OUT" local QPN)
W_RKEY=$(addr_field "$CLI_OUT" remote RKey)
perf read ib_read_bw -s 8192 -n 16
R_Q=$(addr_field "$SRV_OUT" local QPN)
R_RKEY=$(addr_field "$CLI_OUT" remote RKey)
R_VA=$(addr_field "$CLI_OUT" remote VAddr)
perf fadd ib_atomic_bw -n 16 -A FETCH_AND_ADD
perf cswap ib_atomic_bw -n 16 -A CMP_AND_SWAP
A_Q=$(addr_field "$SRV_OUT" local QPN)	# ib_atomic_bw prints no RKey
log "pingpong QPN server $PP_QS PSN $PP_PS, client $PP_QC PSN $PP_PC; write QPN $W_Q rkey $W_RKEY; read QPN $R_Q rkey $R_RKEY va $R_VA; atomic QPN $A_Q"

# two malformed packets: shorter than a Base Header, and opcode 0x13
check "send two malformed packets from h2" in_h2 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(bytes(10), ("192.0.2.1", 4792))
s.sendto(bytes([1, 0x13, 0, 0, 4, 0, 0, 0x11, 0, 0, 0, 0x12]) + bytes(20),
         ("192.0.2.1", 4792))'

# lossy: SACKs, loss detection, retransmissions
in_h1 tc qdisc replace dev veth1 root netem loss 4%
in_h2 tc qdisc replace dev veth2 root netem loss 4%
port=$((port + 1))
run_pair verify $port 240 \
	"$V" -d "$DEV_S" -g "$GID_S" --server -p $port -- \
	"$V" -d "$DEV_C" -g "$GID_C" --client "$ADDR_S" -p $port --seed 25 \
		--iters 24 --max-size 16384 --ops write,write_imm,send,read,atomic
pair_ok "mroce-verify over 4 % loss"
in_h1 tc qdisc del dev veth1 root
in_h2 tc qdisc del dev veth2 root

dumpcap_stop
echo 0 >"$T/events/mroce/enable"
drops1=$(drop_sum)
cp "$T/trace" "$OUT/trace.txt"
overrun=$(awk '/^overrun:/ { s += $2 } END { print s + 0 }' "$T"/per_cpu/cpu*/stats)
cp "$PCAP" "$OUT/capture.pcap"
log "capture $(stat -c %s "$PCAP") bytes, trace $(wc -l <"$OUT/trace.txt") lines, overrun $overrun"

# --- the capture, decoded
TS=(tshark -n -X "lua_script:$LUA" -r "$PCAP")
"${TS[@]}" -V -O metaroce >"$OUT/decoded.txt" 2>"$OUT/tshark.err"
check "tshark decodes the capture" test -s "$OUT/decoded.txt"
check_eq "tshark says nothing on stderr" "" \
	"$(grep -v '^Running as user' "$OUT/tshark.err")"
"${TS[@]}" -T fields -E separator=/t -E occurrence=a -E aggregator=, \
	-e frame.number -e ip.src -e ip.dst -e metaroce.opcode -e metaroce.flags \
	-e metaroce.dqpn -e metaroce.sqpn -e metaroce.psn -e metaroce.path_id \
	-e metaroce.dh.msg_len -e metaroce.mh.rkey -e metaroce.mh.va \
	-e metaroce.rh.msg_len -e metaroce.kh.sack.psn \
	-e metaroce.kh.rate_hint -e metaroce.drop_reason -e _ws.expert.group \
	-e _ws.expert.message >"$OUT/fields.tsv" 2>/dev/null

# one line per finding "name|value", checked below
python3 - "$OUT/fields.tsv" "$ADDR_S" "$ADDR_C" "$PP_QS" "$PP_QC" "$PP_PS" \
	"$PP_PC" "$W_Q" "$W_RKEY" "$R_Q" "$R_RKEY" "$R_VA" "$A_Q" \
	>"$OUT/capture-facts.txt" <<'EOF'
import sys
(fields, addr_s, addr_c, pp_qs, pp_qc, pp_ps, pp_pc, w_q, w_rkey, r_q, r_rkey,
 r_va, a_q) = sys.argv[1:]
# Both devices number their QPs alike (from 16): a QP is (address, QPN).
def h(s):
    """A hex field's first value (None if absent)."""
    return int(s.split(",")[0], 16) if s else None
rows = []
for line in open(fields):
    c = line.rstrip("\n").split("\t")
    c += [""] * (18 - len(c))
    rows.append(dict(zip(("n", "src", "dst", "op", "flags", "dqpn", "sqpn", "psn",
                          "path", "dh_len", "rkey", "va", "rh_len", "sack",
                          "hint", "drop", "groups", "msgs"), c)))
out = []
def fact(k, v):
    out.append("%s|%s" % (k, v))
fact("packets", len(rows))
mal = [r for r in rows if str(0x07000000) in r["groups"].split(",")]
fact("malformed", " ".join(sorted(r["drop"] for r in mal)))
fact("lua_errors", sum("Lua Error" in r["msgs"] for r in rows))
fact("undecoded", sum(not r["op"] and not r["drop"] for r in rows))
ops = sorted({r["op"] for r in rows if r["op"]})
fact("opcodes", " ".join(ops))
REQ = {0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x08, 0x0a}
# new request PSNs increase per destination QP (mod 2^24, capture order)
last, bad = {}, 0
for r in rows:
    if r["drop"] or not r["op"] or h(r["op"]) not in REQ:
        continue
    q, p = (r["dst"], h(r["dqpn"])), h(r["psn"])
    if h(r["flags"]) & 0x10:
        continue
    if q in last and not 0 < (p - last[q]) % (1 << 24) < (1 << 23):
        bad += 1
    last[q] = p
fact("psn_order_violations", bad)
# pingpong: SENDs between its two QPs, 3000 bytes, first PSNs as printed
pp = [r for r in rows if not r["drop"] and h(r["op"]) == 0x01 and
      (r["dst"], h(r["dqpn"])) in ((addr_s, h(pp_qs)), (addr_c, h(pp_qc)))]
fact("pp_sends", len(pp))
fact("pp_lens", " ".join(sorted({r["dh_len"] for r in pp})))
firsts = {}
for r in pp:
    firsts.setdefault(r["src"], h(r["psn"]))
fact("pp_first_psn_client", firsts.get(addr_c) == h(pp_pc))
fact("pp_first_psn_server", firsts.get(addr_s) == h(pp_ps))
# the perftest clients' requests, to the server's QP
def reqs(q, op):
    return [r for r in rows if not r["drop"] and h(r["op"]) in op and
            r["dst"] == addr_s and h(r["dqpn"]) == h(q)]
w = reqs(w_q, {0x03})
fact("write_pkts", len(w))
fact("write_lens", " ".join(sorted({r["dh_len"] for r in w})))
fact("write_rkeys_ok", bool(w) and all(h(r["rkey"]) == h(w_rkey) for r in w))
rd = reqs(r_q, {0x05})
fact("read_reqs", len(rd))
fact("read_lens", " ".join(sorted({r["rh_len"] for r in rd})))
fact("read_rkeys_ok", bool(rd) and all(h(r["rkey"]) == h(r_rkey) for r in rd))
# perftest may step through its buffer: inside it, not below
fact("read_va_ok", bool(rd) and
     all(0 <= h(r["va"]) - h(r_va) < (1 << 20) for r in rd))
at = reqs(a_q, {0x07, 0x08})
fact("atomic_ops", " ".join(sorted({r["op"] for r in at})))
# one target: one rkey, 8-byte aligned (ib_atomic_bw does not print them)
fact("atomic_pkts", len(at))
fact("atomic_one_rkey_aligned", bool(at) and
     len({r["rkey"] for r in at}) == 1 and
     all(h(r["va"]) % 8 == 0 for r in at))
# ACKs: SACK bits, each SACKed PSN captured before as a request to the
# QP that sent the ACK (the ACK's source address and QP)
sent, acks_sack, sack_unknown = {}, 0, 0
for r in rows:
    if r["drop"] or not r["op"]:
        continue
    if h(r["op"]) in REQ:
        sent.setdefault((r["dst"], h(r["dqpn"])), set()).add(h(r["psn"]))
    elif h(r["op"]) in (0x10, 0x11) and r["sack"]:
        acks_sack += 1
        for p in r["sack"].split(","):
            if h(p) not in sent.get((r["src"], h(r["sqpn"])), ()):
                sack_unknown += 1
fact("acks_with_sack", acks_sack)
fact("sack_psns_not_sent", sack_unknown)
acks = [r for r in rows if h(r["op"] or "0") == 0x10]
fact("acks", len(acks))
fact("acks_with_hint", sum(r["hint"] not in ("", "0") for r in acks))
print("\n".join(out))
EOF
sed 's/^/  capture| /' "$OUT/capture-facts.txt"
facts() { sed -n "s/^$1|//p" "$OUT/capture-facts.txt"; }

check_match "capture holds MetaRoCE packets" '^[0-9]{3,}$' "$(facts packets)"
check_eq "only the two crafted packets are malformed, with their drop reasons" \
	"rx_drop_opcode rx_drop_short" "$(facts malformed)"
check_eq "no Lua error" 0 "$(facts lua_errors)"
check_eq "every packet decoded" 0 "$(facts undecoded)"
for op in 0x01 0x03 0x05 0x06 0x07 0x08 0x09 0x10; do
	check_match "opcode $op seen" "(^| )$op( |$)" "$(facts opcodes)"
done
check_eq "new request PSNs increase per destination QP" 0 \
	"$(facts psn_order_violations)"
check_match "pingpong SENDs decoded" '^(1[6-9]|[2-9][0-9]|[0-9]{3,})$' \
	"$(facts pp_sends)"
check_eq "pingpong SENDs are 3000 bytes" 3000 "$(facts pp_lens)"
check_eq "client's first SEND has the PSN pingpong printed" True \
	"$(facts pp_first_psn_client)"
check_eq "server's first SEND has the PSN pingpong printed" True \
	"$(facts pp_first_psn_server)"
check_match "WRITEs to ib_write_bw's server QP" '^[0-9]{2,}$' \
	"$(facts write_pkts)"
check_eq "WRITE message length 5000" 5000 "$(facts write_lens)"
check_eq "WRITE rkey is ib_write_bw's" True "$(facts write_rkeys_ok)"
check_match "READ requests to ib_read_bw's server QP" '^[0-9]{2,}$' \
	"$(facts read_reqs)"
check_eq "READ length 8192" 8192 "$(facts read_lens)"
check_eq "READ rkey is ib_read_bw's" True "$(facts read_rkeys_ok)"
check_eq "READ address is in ib_read_bw's buffer" True "$(facts read_va_ok)"
check_match "ib_atomic_bw's CMP_SWPs (0x07) to its server QP" \
	'^(1[6-9]|[2-9][0-9]|[0-9]{3,})$' "$(facts atomic_pkts)"
check_eq "the CMP_SWPs have one rkey and 8-byte aligned addresses" True \
	"$(facts atomic_one_rkey_aligned)"
check_match "ACKs with SACK bits under loss" '^[1-9][0-9]*$' \
	"$(facts acks_with_sack)"
check_eq "every SACKed PSN was sent to the ACK's source QP before" 0 \
	"$(facts sack_psns_not_sent)"
check_match "ACKs carry a rate hint" '^[1-9][0-9]*$' "$(facts acks_with_hint)"

# --- the trace
TR=$OUT/trace.txt
n_ev() { grep -c " $1: " "$TR"; }
log "events: tx $(n_ev mroce_tx) rx $(n_ev mroce_rx) drop $(n_ev mroce_drop) loss $(n_ev mroce_loss) retx $(n_ev mroce_retx) cc $(n_ev mroce_cc) path $(n_ev mroce_path) qp_state $(n_ev mroce_qp_state)"
check_eq "trace buffer did not overrun" 0 "$overrun"
check_match "mroce_tx events" '^[0-9]{3,}$' "$(n_ev mroce_tx)"
check_match "mroce_rx events" '^[0-9]{3,}$' "$(n_ev mroce_rx)"
# len is a packet's payload: the pingpong client's SEND packets add up to
# 3000 bytes per message (one LAST each)
check_eq "mroce_tx of the pingpong client's SENDs: 3000 bytes a message" \
	"3000 x 8" "$(grep " mroce_tx: $DEV_C SEND sqpn=$((PP_QC)) dqpn=$((PP_QS)) " "$TR" |
	sed -n 's/.* len=\([0-9]*\) flags=\([A-Z_|]*\) .*/\1 \2/p' |
	awk '{ b += $1 } $2 ~ /LAST/ { m++ } END { printf "%d x %d", m ? b / m : 0, m }')"
for s in INIT RTR RTS; do
	check_match "mroce_qp_state -> $s for the pingpong client QP" '^[1-9]' \
		"$(grep -c "mroce_qp_state: $DEV_C qpn=$((PP_QC)) type=RC [A-Z]* -> $s " "$TR")"
done
check_match "mroce_drop reason=rx_drop_short" '^[1-9]' \
	"$(grep -c 'mroce_drop: mroce1 reason=rx_drop_short ' "$TR")"
check_match "mroce_drop reason=rx_drop_opcode names opcode 0x13" '^[1-9]' \
	"$(grep -c 'mroce_drop: mroce1 reason=rx_drop_opcode opcode=0x13 ' "$TR")"
check_eq "one mroce_drop event per rx_drop_*/rx_dup_* increment" \
	"$((drops1 - drops0))" "$(n_ev mroce_drop)"
check_match "mroce_loss with a loss rule" '^[1-9]' \
	"$(grep -cE 'mroce_loss: qpn=[0-9]+ psn=[0-9]+ cause=(path_seq|rack) ' "$TR")"
check_match "mroce_retx with a cause" '^[1-9]' \
	"$(grep -cE 'mroce_retx: qpn=[0-9]+ psn=[0-9]+ cause=(loss|tlp|rto|rnr) ' "$TR")"
# a resent PSN was sent before: before nxt (a READ or ATOMIC whose
# response is incomplete may lie before una)
bad=$(sed -n 's/.*mroce_retx: .* psn=\([0-9]*\) .* nxt=\([0-9]*\) .*/\1 \2/p' "$TR" |
	awk '{ d = ($2 - $1 + 16777216) % 16777216; if (d == 0 || d >= 8388608) n++ } END { print n + 0 }')
check_eq "every retransmitted PSN lies before nxt" 0 "$bad"
check_match "mroce_cc after ACKs, metaroce, window 1..256" '^[1-9]' \
	"$(grep -cE 'mroce_cc: qpn=[0-9]+ algo=metaroce ev=ack rate_bps=[0-9]+ cwnd=([1-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-6]) ' "$TR")"
log "mroce_path events (paths declared dead or revived): $(n_ev mroce_path)"
