-- SPDX-License-Identifier: GPL-2.0-only
--
-- Wireshark / tshark dissector for MetaRoCE v1 (the wire format of
-- Documentation/metaroce-spec.rst, "Packet format").
--
-- Written from the specification, not from the driver: every header,
-- opcode and field of the spec is decoded, and the packet-level checks
-- P1..P12 ("Packet-level validation") run in the spec's order, so that
-- metaroce.drop_reason names the counter a conforming receiver would
-- increment (rx_drop_short, rx_drop_reserved, ...) and an expert item of
-- the group "malformed" marks the offending field.
--
-- Use:
--   tshark -X lua_script:metaroce.lua -r capture.pcap
--   tshark -X lua_script:metaroce.lua -r capture.pcap -Y 'metaroce.opcode == 0x10'
--   or copy it into ~/.local/lib/wireshark/plugins/ (the mroce-tools
--   package installs it into Wireshark's global plugin folder).
-- Preference: metaroce.udp_port (default 4792, the driver's udp_port).
--
-- Field reference: Documentation/wireshark.rst.

local VERSION = 1
local DEFAULT_PORT = 4792

local bitlib = rawget(_G, "bit32") or rawget(_G, "bit")
local band, btest = bitlib.band, bitlib.btest

local p = Proto("metaroce", "MetaRoCE")

---------------------------------------------------------------------------
-- Tables of the specification

-- BH.flags
local F_AR, F_SE, F_FI, F_LA, F_RT, F_PB = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
local F_DEFINED = 0x3f
local F_FL = F_FI + F_LA

-- BH fields an opcode leaves unused (reserved, zero)
local Z_PSN, Z_PATH_SEQ, Z_MSN = 1, 2, 4

-- Opcode table.  hdr: BH + extension headers (bytes); ext: extension
-- headers in order; flags: allowed flags; zero: unused BH fields;
-- payload: carries payload; msg: DH with offset/length and FIRST/LAST;
-- rwqe: DH.rq_seq used; imm: DH/DGH immediate used; inv: DH.imm is the
-- invalidated rkey; datagram: a UD opcode.
local OPS = {
	[0x01] = { req = true, name = "SEND", hdr = 48, ext = { "DH" },
		flags = F_AR + F_SE + F_FL + F_RT + F_PB, payload = true, msg = true,
		rwqe = true },
	[0x02] = { req = true, name = "SEND_WITH_IMM", hdr = 48, ext = { "DH" },
		flags = F_AR + F_SE + F_FL + F_RT + F_PB, payload = true, msg = true,
		rwqe = true, imm = true },
	[0x03] = { req = true, name = "RDMA_WRITE", hdr = 64, ext = { "MH", "DH" },
		flags = F_AR + F_FL + F_RT + F_PB, payload = true, msg = true },
	[0x04] = { req = true, name = "RDMA_WRITE_WITH_IMM", hdr = 64, ext = { "MH", "DH" },
		flags = F_AR + F_SE + F_FL + F_RT + F_PB, payload = true, msg = true,
		rwqe = true, imm = true },
	[0x05] = { req = true, name = "RDMA_READ_REQ", hdr = 72, ext = { "MH", "RH" },
		flags = F_RT + F_PB },
	[0x06] = { name = "RDMA_READ_RESP", hdr = 64, ext = { "MH", "DH" },
		flags = F_AR + F_FL + F_RT, payload = true, msg = true },
	[0x07] = { req = true, name = "ATOMIC_CMP_SWP", hdr = 64, ext = { "MH", "ATH" },
		flags = F_RT + F_PB },
	[0x08] = { req = true, name = "ATOMIC_FETCH_ADD", hdr = 64, ext = { "MH", "ATH" },
		flags = F_RT + F_PB },
	[0x09] = { name = "ATOMIC_RESP", hdr = 40, ext = { "ARH" },
		flags = F_RT },
	[0x0a] = { req = true, name = "SEND_WITH_INV", hdr = 48, ext = { "DH" },
		flags = F_AR + F_SE + F_FL + F_RT + F_PB, payload = true, msg = true,
		rwqe = true, inv = true },
	[0x10] = { name = "ACK", hdr = 88, ext = { "KH" }, flags = 0,
		zero = Z_PATH_SEQ + Z_MSN },
	[0x11] = { name = "NAK", hdr = 96, ext = { "KH", "NKH" }, flags = 0,
		zero = Z_PATH_SEQ + Z_MSN },
	[0x12] = { name = "PROBE", hdr = 32, ext = {}, flags = F_PB,
		zero = Z_PSN + Z_MSN },
	[0x20] = { name = "UD_SEND", hdr = 40, ext = { "DGH" }, flags = F_SE,
		zero = Z_PATH_SEQ + Z_MSN, payload = true, datagram = true },
	[0x21] = { name = "UD_SEND_WITH_IMM", hdr = 40, ext = { "DGH" },
		flags = F_SE, zero = Z_PATH_SEQ + Z_MSN, payload = true,
		datagram = true, imm = true },
}

local opcode_names = {}
for v, op in pairs(OPS) do
	opcode_names[v] = op.name
end

local nak_codes = {
	[1] = "PSN_SEQ_ERR",
	[2] = "RNR",
	[3] = "REMOTE_ACCESS",
	[4] = "REMOTE_OP",
	[5] = "INVALID_REQUEST",
}

-- Appendix B: RNR timer codes in microseconds
local RNR_US = {
	[0] = 655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
}

-- P11: the largest payload of any packet (the largest large segment),
-- and of a datagram (one packet of at most the largest path MTU)
local MAX_PAYLOAD = 9216
local MAX_DATAGRAM = 4096
-- KH.seg_max, with ECHO_SEG: the largest segment taken, in these units
local SEG_UNIT = 32
local ECHO_SEG = 0x08
local MAX_MSG_LEN = 0x80000000
local MAX_PATHS = 64
local WINDOW = 256
local PSN_HALF = 0x800000
local QPN_GSI = 1

-- Header sizes
local LEN = { BH = 32, DH = 16, MH = 16, RH = 24, ATH = 16, ARH = 8,
	KH = 56, NKH = 8, DGH = 8, PBH = 8 }

-- Header bytes of a packet of @op with BH.flags @flags: PB_ACK adds PBH
-- and KH where the opcode allows it
local function hdr_len(op, flags)
	if op.req and band(flags, F_PB) ~= 0 then
		return op.hdr + LEN.PBH + LEN.KH
	end
	return op.hdr
end

---------------------------------------------------------------------------
-- Fields

local f = {}
local function field(key, ctor, abbr, ...)
	f[key] = ctor("metaroce." .. abbr, ...)
end
local U8, U16, U24, U32, U64 = ProtoField.uint8, ProtoField.uint16,
	ProtoField.uint24, ProtoField.uint32, ProtoField.uint64
local DEC, HEX = base.DEC, base.HEX

-- BH
field("version", U8, "version", "Version", DEC)
field("opcode", U8, "opcode", "Opcode", HEX, opcode_names)
field("flags", U16, "flags", "Flags", HEX)
field("f_ar", ProtoField.bool, "flags.ack_req", "ACK_REQ", 16, nil, F_AR)
field("f_se", ProtoField.bool, "flags.solicited", "SOLICITED", 16, nil, F_SE)
field("f_fi", ProtoField.bool, "flags.first", "FIRST", 16, nil, F_FI)
field("f_la", ProtoField.bool, "flags.last", "LAST", 16, nil, F_LA)
field("f_rt", ProtoField.bool, "flags.retransmit", "RETRANSMIT", 16, nil, F_RT)
field("f_pb", ProtoField.bool, "flags.pb_ack", "PB_ACK", 16, nil, F_PB)
field("f_rsv", U16, "flags.reserved", "Reserved flags", HEX, nil, 0xffc0)
field("hdr_words", U8, "hdr_words", "Header words", DEC)
field("dqpn", U24, "dqpn", "Destination QPN", HEX)
field("path_id", U8, "path_id", "Path ID", DEC)
field("sqpn", U24, "sqpn", "Source QPN", HEX)
field("bh_rsv12", U8, "bh.reserved12", "Reserved (byte 12)", HEX)
field("psn", U24, "psn", "PSN", HEX)
field("path_seq", U32, "path_seq", "Path sequence number", DEC)
field("bh_rsv20", U8, "bh.reserved20", "Reserved (byte 20)", HEX)
field("msn", U24, "msn", "MSN", DEC)
field("ts", U32, "timestamp", "Timestamp (us)", DEC)
field("bh_rsv28", U32, "bh.reserved28", "Reserved (bytes 28-31)", HEX)
-- DH
field("dh_offset", U32, "dh.offset", "Offset in message", DEC)
field("dh_msg_len", U32, "dh.msg_len", "Message length", DEC)
field("dh_rq_seq", U32, "dh.rq_seq", "Receive-queue sequence (rq_seq)", DEC)
field("dh_rq_rsv", U32, "dh.rq_seq_reserved", "Reserved (rq_seq)", HEX)
field("dh_imm", U32, "dh.imm", "Immediate data", HEX)
field("dh_inv", U32, "dh.inv_rkey", "Invalidated rkey", HEX)
field("dh_imm_rsv", U32, "dh.imm_reserved", "Reserved (immediate)", HEX)
-- MH
field("mh_va", U64, "mh.va", "Virtual address", HEX)
field("mh_rkey", U32, "mh.rkey", "rkey", HEX)
field("mh_rsv", U32, "mh.reserved", "Reserved", HEX)
-- RH
field("rh_sink_va", U64, "rh.sink_va", "Sink virtual address", HEX)
field("rh_sink_key", U32, "rh.sink_key", "Sink key", HEX)
field("rh_msg_len", U32, "rh.msg_len", "READ length (whole message)", DEC)
field("rh_offset", U32, "rh.offset", "Requested offset", DEC)
field("rh_length", U32, "rh.length", "Requested length", DEC)
-- ATH / ARH
field("ath_swap", U64, "ath.swap", "Swap value", HEX)
field("ath_add", U64, "ath.add", "Add value", HEX)
field("ath_compare", U64, "ath.compare", "Compare value", HEX)
field("ath_rsv", U64, "ath.reserved", "Reserved (compare)", HEX)
field("arh_orig", U64, "arh.orig", "Original value", HEX)
-- KH
field("kh_echo_ts", U32, "kh.echo_ts", "Echo timestamp (us)", DEC)
field("kh_echo_path_seq", U32, "kh.echo_path_seq", "Echo path sequence number", DEC)
field("kh_echo_path_id", U8, "kh.echo_path_id", "Echo path ID", DEC)
field("kh_echo_psn", U24, "kh.echo_psn", "Echo PSN", HEX)
field("kh_rx_count", U16, "kh.rx_count", "rx_count", DEC)
field("kh_ce_count", U16, "kh.ce_count", "ce_count", DEC)
field("kh_rate_hint", U32, "kh.rate_hint", "Rate hint (Mbit/s)", DEC)
field("kh_ack_delay", U16, "kh.ack_delay", "ACK delay (us)", DEC)
field("kh_echo_flags", U8, "kh.echo_flags", "Echo flags", HEX)
field("kh_echo_ce", ProtoField.bool, "kh.echo_ce", "ECHO_CE", 8, nil, 0x01)
field("kh_echo_dup", ProtoField.bool, "kh.echo_dup", "ECHO_DUP", 8, nil, 0x02)
field("kh_echo_pb", ProtoField.bool, "kh.echo_pb", "ECHO_PB", 8, nil, 0x04)
field("kh_echo_seg", ProtoField.bool, "kh.echo_seg", "ECHO_SEG", 8, nil, ECHO_SEG)
field("kh_echo_rsv", U8, "kh.echo_flags_reserved", "Reserved echo flags", HEX, nil, 0xf0)
field("kh_seg_max", U8, "kh.seg_max", "Largest segment (x32 bytes)", DEC)
field("kh_sack_word", U64, "kh.sack.word", "SACK word", HEX)
field("kh_sack_psn", U24, "kh.sack.psn", "SACKed PSN", HEX)
field("kh_sack_count", U16, "kh.sack.count", "PSNs SACKed", DEC)
field("kh_sack_missing", U16, "kh.sack.missing", "PSNs missing below the highest SACKed", DEC)
field("kh_sack_highest", U24, "kh.sack.highest", "Highest SACKed PSN", HEX)
field("kh_sack_ranges", ProtoField.string, "kh.sack.ranges", "SACKed ranges")
field("kh_epsn", U24, "kh.epsn", "Expected PSN (cumulative)", HEX)
-- PBH
field("pbh_rsv0", U8, "pbh.reserved0", "Reserved (byte 0)", HEX)
field("pbh_ack_psn", U24, "pbh.ack_psn", "ACK PSN (cumulative)", HEX)
field("pbh_rsv4", U32, "pbh.reserved4", "Reserved (bytes 4-7)", HEX)
-- NKH
field("nak_code", U8, "nak.code", "NAK code", DEC, nak_codes)
field("nak_rnr_timer", U8, "nak.rnr_timer", "RNR timer code", DEC)
field("nak_rnr_us", U32, "nak.rnr_timer_us", "RNR timer (us)", DEC)
field("nak_rsv", U16, "nak.reserved", "Reserved (bytes 2-3)", HEX)
field("nak_psn_rsv", U8, "nak.psn_reserved", "Reserved (byte 4)", HEX)
field("nak_psn", U24, "nak.psn", "NAK PSN", HEX)
-- DGH
field("dgh_qkey", U32, "dgh.qkey", "Q_Key", HEX)
field("dgh_imm", U32, "dgh.imm", "Immediate data", HEX)
field("dgh_imm_rsv", U32, "dgh.imm_reserved", "Reserved (immediate)", HEX)
-- the rest
field("ext_unknown", ProtoField.bytes, "ext_unknown", "Extension headers of an unknown opcode")
field("payload", ProtoField.bytes, "payload", "Payload")
field("payload_len", U32, "payload_len", "Payload length", DEC)
field("trailing", ProtoField.bytes, "trailing", "Bytes after a header-only packet")
field("ip_ce", ProtoField.bool, "ip_ce", "Arrived CE-marked (IP ECN = 11)")
field("drop_reason", ProtoField.string, "drop_reason", "A receiver drops it and counts")

p.fields = f

-- Expert info: one malformed item per drop counter, and notes
local PI_MAL, PI_SEQ = expert.group.MALFORMED, expert.group.SEQUENCE
local ERR, WARN, NOTE, CHAT = expert.severity.ERROR, expert.severity.WARN,
	expert.severity.NOTE, expert.severity.CHAT
local DROP_NAMES = { "short", "version", "opcode", "hdr_len", "reserved",
	"flags", "qpn", "path", "field", "length" }
local ex = {}
for _, n in ipairs(DROP_NAMES) do
	ex[n] = ProtoExpert.new("metaroce.expert." .. n,
		"rx_drop_" .. n, PI_MAL, ERR)
end
ex.capture = ProtoExpert.new("metaroce.expert.capture_truncated",
	"Capture truncated: fields not captured are not decoded",
	expert.group.UNDECODED, WARN)
ex.retransmit = ProtoExpert.new("metaroce.expert.retransmit",
	"Retransmission", PI_SEQ, NOTE)
ex.nak = ProtoExpert.new("metaroce.expert.nak", "NAK", PI_SEQ, WARN)
ex.sack = ProtoExpert.new("metaroce.expert.sack",
	"Selective acknowledgment: PSNs missing", PI_SEQ, NOTE)
ex.echo_ce = ProtoExpert.new("metaroce.expert.echo_ce",
	"ECN echo: the acknowledged packet arrived CE-marked", PI_SEQ, CHAT)
ex.ip_ce = ProtoExpert.new("metaroce.expert.ip_ce",
	"Arrived Congestion Experienced", PI_SEQ, CHAT)
p.experts = { ex.short, ex.version, ex.opcode, ex.hdr_len, ex.reserved,
	ex.flags, ex.qpn, ex.path, ex.field, ex.length, ex.capture,
	ex.retransmit, ex.nak, ex.sack, ex.echo_ce, ex.ip_ce }

p.prefs.udp_port = Pref.uint("UDP port", DEFAULT_PORT,
	"UDP destination port of MetaRoCE (the driver's udp_port module parameter)")

-- The IP header's ECN field, when the dissector of IP ran before us
local function try_field(name)
	local ok, fe = pcall(Field.new, name)
	if ok then
		return fe
	end
	return nil
end
local fe_ecn4 = try_field("ip.dsfield.ecn")
local fe_ecn6 = try_field("ipv6.tclass.ecn")

---------------------------------------------------------------------------
-- Helpers

-- (b - a) mod 2^24: the increments from a to b
local function psn_fwd(a, b)
	return (b - a) % 0x1000000
end

local function fmt_psn(v)
	return string.format("0x%06x", v)
end

-- The dissection state of one packet: tvb, captured and reported
-- lengths, and the defects found, each with the P-rule number of the
-- spec's "Packet-level validation" that catches it.
local Ctx = {}
Ctx.__index = Ctx

function Ctx:cap(off, len)
	return off + len <= self.caplen
end

function Ctx:u8(off)
	return self.tvb(off, 1):uint()
end

function Ctx:u16(off)
	return self.tvb(off, 2):uint()
end

function Ctx:u32(off)
	return self.tvb(off, 4):uint()
end

function Ctx:u24(off)
	return self.tvb(off + 1, 3):uint()
end

-- hi and lo 32-bit halves of the 64-bit word at off
function Ctx:u64parts(off)
	return self.tvb(off, 4):uint(), self.tvb(off + 4, 4):uint()
end

-- A defect caught by rule P<rule>, reported as rx_drop_<kind>, on item
function Ctx:defect(rule, kind, item, text)
	table.insert(self.defects, { rule = rule, kind = kind,
		item = item or self.top, text = text })
end

-- Add field key over [off, off + len) to tree, if it was captured
function Ctx:add(tree, key, off, len)
	if not self:cap(off, len) then
		self.uncaptured = true
		return nil
	end
	return tree:add(f[key], self.tvb(off, len))
end

-- A reserved field: added always, a defect (P6) if it is not zero
function Ctx:reserved(tree, key, off, len, value, what)
	local item = self:add(tree, key, off, len)
	if item and value ~= 0 then
		self:defect(6, "reserved", item, what .. " is not zero")
	end
	return item
end

---------------------------------------------------------------------------
-- Headers

-- Base Header at 0
function Ctx:bh(tree, op)
	local t = tree:add(p, self.tvb(0, LEN.BH), "Base Header (BH)")
	local info = self.info

	self:add(t, "version", 0, 1)
	self.op_item = self:add(t, "opcode", 1, 1)
	local fi = self:add(t, "flags", 2, 2)
	if fi then
		local flags = info.flags
		local names = {}
		for _, fl in ipairs({ { F_AR, "ACK_REQ" }, { F_SE, "SOLICITED" },
				{ F_FI, "FIRST" }, { F_LA, "LAST" },
				{ F_RT, "RETRANSMIT" }, { F_PB, "PB_ACK" } }) do
			if btest(flags, fl[1]) then
				table.insert(names, fl[2])
			end
		end
		if #names > 0 then
			fi:append_text(" (" .. table.concat(names, ", ") .. ")")
		end
		fi:add(f.f_ar, self.tvb(2, 2))
		fi:add(f.f_se, self.tvb(2, 2))
		fi:add(f.f_fi, self.tvb(2, 2))
		fi:add(f.f_la, self.tvb(2, 2))
		fi:add(f.f_rt, self.tvb(2, 2))
		fi:add(f.f_pb, self.tvb(2, 2))
		local rsv = fi:add(f.f_rsv, self.tvb(2, 2))
		if band(flags, 0xffff - F_DEFINED) ~= 0 then
			self:defect(6, "reserved", rsv, "Reserved flag bits 6..15 set")
		end
		if op and band(flags, 0xffff - op.flags) ~= 0 and
		    band(flags, 0xffff - F_DEFINED) == 0 then
			self:defect(7, "flags", fi, "Flag not allowed for " .. op.name)
		end
	end
	local hw = self:add(t, "hdr_words", 4, 1)
	if hw then
		hw:append_text(string.format(" (%d bytes)", info.hdr_words * 8))
		if op and info.hdr_words * 8 ~= hdr_len(op, info.flags) then
			self:defect(4, "hdr_len", hw, string.format(
				"hdr_words x 8 = %d, but %s%s has %d header bytes",
				info.hdr_words * 8, op.name,
				hdr_len(op, info.flags) ~= op.hdr and " with PB_ACK" or "",
				hdr_len(op, info.flags)))
		end
	end
	local dq = self:add(t, "dqpn", 5, 3)
	local pi = self:add(t, "path_id", 8, 1)
	local sq = self:add(t, "sqpn", 9, 3)
	if dq and sq and op then
		for _, q in ipairs({ { info.dqpn, dq }, { info.sqpn, sq } }) do
			if q[1] == 0 then
				self:defect(8, "qpn", q[2], "QPN 0 is invalid")
			elseif q[1] == QPN_GSI and not op.datagram then
				self:defect(8, "qpn", q[2],
					"QPN 1 (GSI) with a connected opcode")
			end
		end
	end
	if pi and info.path_id >= MAX_PATHS then
		self:defect(9, "path", pi, "Path ID above 63")
	end
	local zero = op and op.zero or 0
	self:reserved(t, "bh_rsv12", 12, 1, info.psn_hi, "BH byte 12")
	local item = self:add(t, "psn", 13, 3)
	if item and btest(zero, Z_PSN) and info.psn ~= 0 then
		self:defect(6, "reserved", item, "PSN unused by " .. op.name ..
			" but not zero")
	end
	if item and op and op.ext[1] == "KH" then
		item:append_text(" (ePSN)")
	end
	item = self:add(t, "path_seq", 16, 4)
	if item and btest(zero, Z_PATH_SEQ) and info.path_seq ~= 0 then
		self:defect(6, "reserved", item, "Path sequence number unused by " ..
			op.name .. " but not zero")
	end
	self:reserved(t, "bh_rsv20", 20, 1, info.msn_hi, "BH byte 20")
	item = self:add(t, "msn", 21, 3)
	if item and btest(zero, Z_MSN) and info.msn ~= 0 then
		self:defect(6, "reserved", item, "MSN unused by " .. op.name ..
			" but not zero")
	end
	self:add(t, "ts", 24, 4)
	if self:cap(28, 4) then
		self:reserved(t, "bh_rsv28", 28, 4, self:u32(28), "BH bytes 28..31")
	end
end

-- Data Header
function Ctx:dh(tree, off, op)
	local t = tree:add(p, self.tvb(off, LEN.DH), "Data Header (DH)")
	local info = self.info

	info.offset = self:u32(off)
	info.msg_len = self:u32(off + 4)
	info.dh_item = self:add(t, "dh_offset", off, 4)
	info.len_item = self:add(t, "dh_msg_len", off + 4, 4)
	local rq_seq = self:u32(off + 8)
	if op.rwqe then
		self:add(t, "dh_rq_seq", off + 8, 4)
	else
		self:reserved(t, "dh_rq_rsv", off + 8, 4, rq_seq,
			"DH rq_seq of " .. op.name)
	end
	local imm = self:u32(off + 12)
	if op.imm then
		self:add(t, "dh_imm", off + 12, 4)
	elseif op.inv then
		self:add(t, "dh_inv", off + 12, 4)
	else
		self:reserved(t, "dh_imm_rsv", off + 12, 4, imm,
			"DH immediate of " .. op.name)
	end
end

-- Memory Header
function Ctx:mh(tree, off)
	local t = tree:add(p, self.tvb(off, LEN.MH), "Memory Header (MH)")
	local info = self.info

	info.va_hi, info.va_lo = self:u64parts(off)
	info.va_item = self:add(t, "mh_va", off, 8)
	self:add(t, "mh_rkey", off + 8, 4)
	self:reserved(t, "mh_rsv", off + 12, 4, self:u32(off + 12),
		"MH bytes 12..15")
end

-- Read Header
function Ctx:rh(tree, off)
	local t = tree:add(p, self.tvb(off, LEN.RH), "Read Header (RH)")
	local info = self.info

	info.sink_hi, info.sink_lo = self:u64parts(off)
	info.sink_item = self:add(t, "rh_sink_va", off, 8)
	self:add(t, "rh_sink_key", off + 8, 4)
	info.msg_len = self:u32(off + 12)
	info.offset = self:u32(off + 16)
	info.rd_length = self:u32(off + 20)
	info.len_item = self:add(t, "rh_msg_len", off + 12, 4)
	self:add(t, "rh_offset", off + 16, 4)
	info.rd_item = self:add(t, "rh_length", off + 20, 4)
end

-- Atomic Header
function Ctx:ath(tree, off, op)
	local t = tree:add(p, self.tvb(off, LEN.ATH), "Atomic Header (ATH)")

	if op.name == "ATOMIC_CMP_SWP" then
		self:add(t, "ath_swap", off, 8)
		self:add(t, "ath_compare", off + 8, 8)
	else
		self:add(t, "ath_add", off, 8)
		local hi, lo = self:u64parts(off + 8)
		self:reserved(t, "ath_rsv", off + 8, 8, hi + lo,
			"ATH compare of FETCH_ADD")
	end
end

-- Atomic Result Header
function Ctx:arh(tree, off)
	local t = tree:add(p, self.tvb(off, LEN.ARH), "Atomic Result Header (ARH)")
	self:add(t, "arh_orig", off, 8)
end

-- The SACK bitmap at off: bit i is bit i % 64 of the big-endian word
-- i / 64, and stands for PSN (ePSN + i) mod 2^24.
function Ctx:sack(tree, off, epsn)
	local t = tree:add(p, self.tvb(off, 32), "SACK bitmap")
	local psns = {}
	local sacked_items = t:add(p, self.tvb(off, 32), "SACKed PSNs")

	for w = 0, 3 do
		local wi = t:add(f.kh_sack_word, self.tvb(off + 8 * w, 8))
		wi:prepend_text(string.format("W%d ", w))
	end
	for i = 0, 255 do
		local boff = off + 8 * math.floor(i / 64) + 7 -
			math.floor((i % 64) / 8)
		local byte = self.tvb(boff, 1):uint()
		if btest(byte, 2 ^ (i % 8)) then
			local psn = (epsn + i) % 0x1000000
			table.insert(psns, i)
			local it = sacked_items:add(f.kh_sack_psn, self.tvb(boff, 1), psn)
			it:append_text(string.format(" (bit %d)", i))
			it:set_generated()
			if i == 0 then
				self:defect(10, "field", it,
					"SACK bit 0 (the ePSN itself) is set")
			end
		end
	end
	local n = #psns
	local c = t:add(f.kh_sack_count, self.tvb(off, 32), n)
	c:set_generated()
	sacked_items:append_text(string.format(": %d", n))
	if n == 0 then
		return
	end
	local hi = psns[n]
	local missing = hi + 1 - n
	-- ranges, in PSNs
	local ranges, first, prev = {}, psns[1], psns[1]
	for k = 2, n + 1 do
		local i = psns[k]
		if i ~= prev + 1 then
			local a = (epsn + first) % 0x1000000
			local b = (epsn + prev) % 0x1000000
			if first == prev then
				table.insert(ranges, fmt_psn(a))
			else
				table.insert(ranges, fmt_psn(a) .. "-" .. fmt_psn(b))
			end
			first = i
		end
		prev = i
	end
	local r = t:add(f.kh_sack_ranges, self.tvb(off, 32),
		table.concat(ranges, ","))
	r:set_generated()
	local h = t:add(f.kh_sack_highest, self.tvb(off, 32),
		(epsn + hi) % 0x1000000)
	h:set_generated()
	local m = t:add(f.kh_sack_missing, self.tvb(off, 32), missing)
	m:set_generated()
	if missing > 0 then
		m:add_proto_expert_info(ex.sack, string.format(
			"%d PSNs missing from ePSN %s to %s", missing,
			fmt_psn(epsn), fmt_psn((epsn + hi) % 0x1000000)))
	end
	self.sack_n = n
end

-- ACK Header
function Ctx:kh(tree, off, _, epsn_off)
	local t = tree:add(p, self.tvb(off, LEN.KH), "ACK Header (KH)")
	-- the cumulative PSN: an ACK's BH.psn, a piggybacked one's PBH
	epsn_off = epsn_off or 13
	local epsn = self:u24(epsn_off - 1)
	local info = self.info
	local echo_ts = self:u32(off)
	local echo_path_seq = self:u32(off + 4)
	local echo_path_id = self:u8(off + 8)
	local echo_psn = self:u24(off + 8)
	local rx_count = self:u16(off + 12)
	local ce_count = self:u16(off + 14)
	local ack_delay = self:u16(off + 20)
	local echo_flags = self:u8(off + 22)
	local seg_max = self:u8(off + 23)

	local e = t:add(f.kh_epsn, self.tvb(epsn_off, 3))
	e:set_generated()
	self:add(t, "kh_echo_ts", off, 4)
	self:add(t, "kh_echo_path_seq", off + 4, 4)
	local epi = self:add(t, "kh_echo_path_id", off + 8, 1)
	self:add(t, "kh_echo_psn", off + 9, 3)
	local rxi = self:add(t, "kh_rx_count", off + 12, 2)
	local cei = self:add(t, "kh_ce_count", off + 14, 2)
	local rh = self:add(t, "kh_rate_hint", off + 16, 4)
	info.rate_hint = self:u32(off + 16)
	if info.rate_hint == 0 then
		rh:append_text(" (no hint)")
	else
		rh:append_text(string.format(" (%.3f Gbit/s)",
			info.rate_hint / 1000))
	end
	self:add(t, "kh_ack_delay", off + 20, 2)
	local efi = self:add(t, "kh_echo_flags", off + 22, 1)
	efi:add(f.kh_echo_ce, self.tvb(off + 22, 1))
	efi:add(f.kh_echo_dup, self.tvb(off + 22, 1))
	efi:add(f.kh_echo_pb, self.tvb(off + 22, 1))
	efi:add(f.kh_echo_seg, self.tvb(off + 22, 1))
	local ersv = efi:add(f.kh_echo_rsv, self.tvb(off + 22, 1))
	if band(echo_flags, 0xf0) ~= 0 then
		self:defect(6, "reserved", ersv, "Reserved echo flags set")
	end
	if btest(echo_flags, 1) then
		efi:add_proto_expert_info(ex.echo_ce)
		info.echo_ce = true
	end
	local smi = self:add(t, "kh_seg_max", off + 23, 1)
	if seg_max ~= 0 then
		smi:append_text(string.format(" (%d bytes)", seg_max * SEG_UNIT))
	end
	if echo_path_id >= MAX_PATHS then
		self:defect(9, "path", epi, "Echo path ID above 63")
	end
	if ce_count > rx_count then
		self:defect(10, "field", cei, "ce_count > rx_count")
	end
	if rx_count == 0 and (echo_ts ~= 0 or echo_path_seq ~= 0 or
	    echo_psn ~= 0 or echo_path_id ~= 0 or echo_flags ~= 0 or
	    ack_delay ~= 0 or seg_max ~= 0) then
		self:defect(10, "field", rxi,
			"rx_count 0 (no triggering packet) with echo fields set")
	end
	if seg_max ~= 0 and not btest(echo_flags, ECHO_SEG) then
		self:defect(10, "field", smi, "seg_max without ECHO_SEG")
	elseif seg_max == 0 and btest(echo_flags, ECHO_SEG) then
		self:defect(10, "field", smi, "ECHO_SEG with seg_max 0")
	end
	self:sack(t, off + 24, epsn)
end

-- Piggyback Header and its KH (PB_ACK)
function Ctx:pbh(tree, off)
	local t = tree:add(p, self.tvb(off, LEN.PBH + LEN.KH),
		"Piggybacked acknowledgment (PBH, KH)")
	self:reserved(t, "pbh_rsv0", off, 1, self:u8(off), "PBH byte 0")
	self:add(t, "pbh_ack_psn", off + 1, 3)
	self:reserved(t, "pbh_rsv4", off + 4, 4, self:u32(off + 4),
		"PBH bytes 4..7")
	self.info.ack_psn = self:u24(off)
	self:kh(t, off + LEN.PBH, nil, off + 1)
end

-- NAK Header
function Ctx:nkh(tree, off)
	local t = tree:add(p, self.tvb(off, LEN.NKH), "NAK Header (NKH)")
	local info = self.info
	local code = self:u8(off)
	local timer = self:u8(off + 1)
	local nak_psn = self:u24(off + 4)

	info.nak_code = code
	info.nak_psn = nak_psn
	local ci = self:add(t, "nak_code", off, 1)
	ci:add_proto_expert_info(ex.nak, "NAK " .. (nak_codes[code] or
		string.format("code %d", code)) .. " for PSN " .. fmt_psn(nak_psn))
	local ti = self:add(t, "nak_rnr_timer", off + 1, 1)
	if RNR_US[timer] then
		local us = t:add(f.nak_rnr_us, self.tvb(off + 1, 1), RNR_US[timer])
		us:set_generated()
		ti:append_text(string.format(" (%.2f ms)", RNR_US[timer] / 1000))
	end
	self:reserved(t, "nak_rsv", off + 2, 2, self:u16(off + 2), "NKH bytes 2..3")
	self:reserved(t, "nak_psn_rsv", off + 4, 1, self:u8(off + 4), "NKH byte 4")
	local pi = self:add(t, "nak_psn", off + 5, 3)

	if not nak_codes[code] then
		self:defect(10, "field", ci, "NAK code not 1..5")
	end
	if timer > 31 then
		self:defect(10, "field", ti, "RNR timer code above 31")
	elseif timer ~= 0 and code ~= 2 then
		self:defect(10, "field", ti, "RNR timer on a NAK other than RNR")
	end
	local d = psn_fwd(info.psn, nak_psn)
	local ok = true
	if code == 1 then
		ok = d >= WINDOW and d < PSN_HALF
	elseif code == 2 then
		ok = d < WINDOW
	elseif nak_codes[code] then
		ok = d == 0
	end
	if not ok then
		self:defect(10, "field", pi, "NAK PSN out of the range code " ..
			code .. " requires (ePSN + " .. d .. ")")
	end
end

-- Datagram Header
function Ctx:dgh(tree, off, op)
	local t = tree:add(p, self.tvb(off, LEN.DGH), "Datagram Header (DGH)")
	self:add(t, "dgh_qkey", off, 4)
	if op.imm then
		self:add(t, "dgh_imm", off + 4, 4)
	else
		self:reserved(t, "dgh_imm_rsv", off + 4, 4, self:u32(off + 4),
			"DGH immediate of UD_SEND")
	end
end

-- [va, va + len) must not pass 2^64; va as hi/lo 32-bit halves
local function range_ok(hi, lo, len)
	return len == 0 or hi ~= 0xffffffff or lo + len <= 0x100000000
end

-- P11 and P12: lengths and FIRST/LAST
function Ctx:lengths(op, tree)
	local info = self.info
	local pay = self.paylen

	if not op.payload and pay > 0 then
		self:defect(11, "length", self.pay_item, string.format(
			"%d bytes after the headers of %s", pay, op.name))
	end
	if pay > MAX_PAYLOAD then
		self:defect(11, "length", self.pay_item, string.format(
			"Payload above %d bytes", MAX_PAYLOAD))
	elseif op.datagram and pay > MAX_DATAGRAM then
		self:defect(11, "length", self.pay_item, string.format(
			"Datagram payload above %d bytes", MAX_DATAGRAM))
	end
	if op.msg then
		if info.msg_len > MAX_MSG_LEN then
			self:defect(11, "length", info.len_item,
				"Message length above 2^31")
		end
		if info.offset + pay > info.msg_len then
			self:defect(11, "length", info.dh_item,
				"offset + payload > message length")
		end
		if pay == 0 and info.msg_len > 0 then
			self:defect(11, "length", info.len_item,
				"No payload in a message of non-zero length")
		end
		if info.va_hi and not range_ok(info.va_hi, info.va_lo, info.msg_len) then
			self:defect(11, "length", info.va_item,
				"address + message length passes 2^64")
		end
		local first = info.offset == 0
		local last = info.offset + pay == info.msg_len
		if first ~= btest(info.flags, F_FI) or
		    last ~= btest(info.flags, F_LA) then
			self:defect(12, "flags", info.dh_item,
				"FIRST/LAST disagree with offset and length")
		end
	end
	if op.name == "RDMA_READ_REQ" then
		if info.msg_len > MAX_MSG_LEN then
			self:defect(11, "length", info.len_item,
				"READ length above 2^31")
		end
		if info.offset + info.rd_length > info.msg_len then
			self:defect(11, "length", info.rd_item,
				"offset + length > READ length")
		end
		if info.rd_length == 0 and info.msg_len > 0 then
			self:defect(11, "length", info.rd_item,
				"Zero requested length of a non-empty READ")
		end
		if not range_ok(info.va_hi, info.va_lo, info.msg_len) then
			self:defect(11, "length", info.va_item,
				"source address + READ length passes 2^64")
		end
		if not range_ok(info.sink_hi, info.sink_lo, info.msg_len) then
			self:defect(11, "length", info.sink_item,
				"sink address + READ length passes 2^64")
		end
	end
	local _ = tree
end

---------------------------------------------------------------------------
-- The dissector

local HDR_FN = { DH = Ctx.dh, MH = Ctx.mh, RH = Ctx.rh, ATH = Ctx.ath,
	ARH = Ctx.arh, KH = Ctx.kh, NKH = Ctx.nkh, DGH = Ctx.dgh }

local function ip_ce()
	for _, fe in ipairs({ fe_ecn4, fe_ecn6 }) do
		if fe then
			local v = fe()
			if v and v.value == 3 then
				return true
			end
		end
	end
	return false
end

local function flag_text(flags)
	local s = {}
	for _, fl in ipairs({ { F_FI, "F" }, { F_LA, "L" }, { F_AR, "A" },
			{ F_SE, "S" }, { F_RT, "R" }, { F_PB, "P" } }) do
		if btest(flags, fl[1]) then
			table.insert(s, fl[2])
		end
	end
	if #s == 0 then
		return ""
	end
	return " [" .. table.concat(s) .. "]"
end

function p.dissector(tvb, pinfo, tree)
	local self = setmetatable({ tvb = tvb, caplen = tvb:len(),
		len = tvb:reported_length_remaining(), defects = {},
		info = {} }, Ctx)
	local info = self.info

	pinfo.cols.protocol = "MetaRoCE"
	local top = tree:add(p, tvb())
	self.top = top

	-- P1
	if self.len < LEN.BH then
		top:add_proto_expert_info(ex.short, string.format(
			"rx_drop_short: %d bytes, a Base Header has 32", self.len))
		local dr = top:add(f.drop_reason, "rx_drop_short")
		dr:set_generated()
		pinfo.cols.info = "MetaRoCE [short packet]"
		return
	end
	if not self:cap(0, LEN.BH) then
		top:add_proto_expert_info(ex.capture)
		pinfo.cols.info = "MetaRoCE [not captured]"
		return
	end

	info.version = self:u8(0)
	info.opcode = self:u8(1)
	info.flags = self:u16(2)
	info.hdr_words = self:u8(4)
	info.dqpn = self:u24(4)
	info.path_id = self:u8(8)
	info.sqpn = self:u24(8)
	info.psn_hi = self:u8(12)
	info.psn = self:u24(12)
	info.path_seq = self:u32(16)
	info.msn_hi = self:u8(20)
	info.msn = self:u24(20)

	-- P2: another version has a Base Header we cannot know
	if info.version ~= VERSION then
		local vi = top:add(f.version, tvb(0, 1))
		vi:add_proto_expert_info(ex.version, string.format(
			"rx_drop_version: version %d, this dissector knows %d",
			info.version, VERSION))
		top:add(f.opcode, tvb(1, 1))
		local dr = top:add(f.drop_reason, "rx_drop_version")
		dr:set_generated()
		pinfo.cols.info = string.format("MetaRoCE version %d (unknown)",
			info.version)
		return
	end

	local op = OPS[info.opcode]
	local opname = op and op.name or (info.opcode >= 0xc0 and
		string.format("EXPERIMENTAL_0x%02x", info.opcode) or
		string.format("RESERVED_0x%02x", info.opcode))
	top:append_text(", " .. opname)

	self:bh(top, op)
	-- P3: decode BH, then show the extension headers hdr_words announces
	local hdr
	if not op then
		self:defect(3, "opcode", self.op_item,
			"Opcode not in the v1 opcode table")
		-- below the BH's 4 words is invalid whatever the opcode (spec,
		-- hdr_words): a header length no opcode can have
		if info.hdr_words < LEN.BH / 8 then
			self:defect(4, "hdr_len", self.op_item, string.format(
				"hdr_words %d is below 4: shorter than the Base Header",
				info.hdr_words))
		end
		hdr = math.max(LEN.BH, info.hdr_words * 8)
		if hdr > LEN.BH then
			self:add(top, "ext_unknown", LEN.BH, math.min(hdr,
				self.len) - LEN.BH)
		end
	else
		hdr = hdr_len(op, info.flags)
		if self.len < hdr then
			-- P5: decode nothing past the end
			self:defect(5, "short", top, string.format(
				"rx_drop_short: %d bytes, %s has %d header bytes",
				self.len, op.name, hdr))
		elseif not self:cap(0, hdr) then
			self.uncaptured = true
		else
			local off = LEN.BH
			for _, h in ipairs(op.ext) do
				HDR_FN[h](self, top, off, op)
				off = off + LEN[h]
			end
			if hdr ~= op.hdr then
				self:pbh(top, off)
			end
		end
	end

	self.paylen = math.max(self.len - hdr, 0)
	if self.len > hdr then
		local plen = self.len - hdr
		local caplen = math.max(math.min(self.caplen - hdr, plen), 0)
		local key = (op and not op.payload) and "trailing" or "payload"
		if caplen > 0 then
			self.pay_item = top:add(f[key], tvb(hdr, caplen))
		end
		local pl = top:add(f.payload_len, tvb(hdr, caplen), plen)
		pl:set_generated()
		self.pay_item = self.pay_item or pl
	end
	if op and self.len >= hdr and self:cap(0, hdr) then
		self:lengths(op, top)
	end
	if self.uncaptured then
		top:add_proto_expert_info(ex.capture)
	end

	-- expert info for every defect, the drop reason for the first rule
	local first
	for _, d in ipairs(self.defects) do
		d.item:add_proto_expert_info(ex[d.kind], "rx_drop_" .. d.kind ..
			" (P" .. d.rule .. "): " .. d.text)
		if not first or d.rule < first.rule then
			first = d
		end
	end
	if first then
		local dr = top:add(f.drop_reason, "rx_drop_" .. first.kind)
		dr:set_generated()
	end

	if btest(info.flags, F_RT) then
		top:add_proto_expert_info(ex.retransmit, opname ==
			"RDMA_READ_REQ" and "READ re-request" or "Retransmission")
	end
	if ip_ce() then
		local ce = top:add(f.ip_ce, true)
		ce:set_generated()
		ce:add_proto_expert_info(ex.ip_ce)
	end

	-- Info column
	local col
	if op and op.ext[1] == "KH" then
		col = string.format("%s QP 0x%06x ePSN %s", opname, info.dqpn,
			fmt_psn(info.psn))
		if info.nak_code then
			col = col .. string.format(" %s PSN %s",
				nak_codes[info.nak_code] or "?", fmt_psn(info.nak_psn))
		end
		if self.sack_n then
			col = col .. string.format(" SACK %d", self.sack_n)
		end
		if info.rate_hint and info.rate_hint > 0 then
			col = col .. string.format(" hint %d Mbit/s", info.rate_hint)
		end
		if info.echo_ce then
			col = col .. " ECE"
		end
	elseif op and op.name == "PROBE" then
		col = string.format("PROBE QP 0x%06x path %d seq %d", info.dqpn,
			info.path_id, info.path_seq)
	else
		col = string.format("%s QP 0x%06x PSN %s path %d%s", opname,
			info.dqpn, fmt_psn(info.psn), info.path_id,
			flag_text(info.flags))
		if op and op.msg and info.msg_len then
			col = col .. string.format(" off %d len %d", info.offset,
				info.msg_len)
		elseif info.rd_length then
			col = col .. string.format(" off %d len %d of %d",
				info.offset, info.rd_length, info.msg_len)
		end
		if info.ack_psn then
			col = col .. string.format(" +ACK ePSN %s", fmt_psn(info.ack_psn))
		end
	end
	if first then
		col = col .. " [drop: rx_drop_" .. first.kind .. "]"
	end
	pinfo.cols.info = col
	return self.len
end

---------------------------------------------------------------------------
-- Registration on the UDP port, which the preference changes

local udp_table = DissectorTable.get("udp.port")
local current_port = DEFAULT_PORT
udp_table:add(current_port, p)

function p.prefs_changed()
	if p.prefs.udp_port ~= current_port then
		udp_table:remove(current_port, p)
		current_port = p.prefs.udp_port
		udp_table:add(current_port, p)
	end
end
