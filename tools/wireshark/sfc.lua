-- Wireshark dissectors for the frames of the sfc simulator's packet captures that Wireshark
-- does not know: sfc's own scheme-packet header (EtherType 0x88B5) for scheme packets
-- without a standard wire form (SFC's BTS, BFC's pause frames, PB-FS's packets, NDP's
-- control packets, CBFC credits), and the HPCC INT header of RoCEv2 frames sent to UDP port
-- 4792, which it decodes before handing the rest (BTH onward) to Wireshark's RoCEv2
-- dissector. (Other data, ACK, NACK and CNP packets are RoCEv2 and PFC frames are IEEE
-- 802.1Qbb: Wireshark decodes those itself.)
--
-- Use: wireshark -X lua_script:tools/wireshark/sfc.lua capture.pcapng
--      tshark -X lua_script:tools/wireshark/sfc.lua -r capture.pcapng
-- or copy this file into Wireshark's personal plugins folder.
--
-- Layout (src/capture/frame.rs), big-endian: version (1 byte, 1), scheme id, kind, flags
-- (bit 0: hop-by-hop), source node (4), destination node (4), flow (4), source port (2),
-- destination port (2), priority, marks, 2 reserved bytes, then the scheme's 32-byte header
-- body as the scheme encodes it (little-endian fields, declared in its folder's wire.rs).

local sfc = Proto("sfc", "sfc simulator scheme packet")

-- Registry ids and names (src/registry.rs; a test checks that the two agree).
local schemes = {
    [0] = "ecn",
    [1] = "sfc",
    [2] = "onramp",
    [3] = "pfc",
    [4] = "pbfs",
    [5] = "tcd",
    [6] = "ndp",
    [7] = "bfc",
    [8] = "cbfc",
    [9] = "red",
}

local f = sfc.fields
f.version = ProtoField.uint8("sfc.version", "Version")
f.scheme = ProtoField.uint8("sfc.scheme", "Scheme", base.DEC, schemes)
f.kind = ProtoField.uint8("sfc.kind", "Kind")
f.hop_by_hop = ProtoField.bool("sfc.hop_by_hop", "Hop-by-hop frame", 8, nil, 0x01)
f.src = ProtoField.uint32("sfc.src", "Source node")
f.dst = ProtoField.uint32("sfc.dst", "Destination node")
f.flow = ProtoField.uint32("sfc.flow", "Flow")
f.sport = ProtoField.uint16("sfc.sport", "Source port")
f.dport = ProtoField.uint16("sfc.dport", "Destination port")
f.prio = ProtoField.uint8("sfc.prio", "Priority")
f.marks = ProtoField.uint8("sfc.marks", "Marks", base.HEX)
f.body = ProtoField.bytes("sfc.body", "Scheme header body")

local HEADER_LEN = 24
local BODY_LEN = 32

function sfc.dissector(buf, pinfo, tree)
    if buf:len() < HEADER_LEN + BODY_LEN then
        return 0
    end
    pinfo.cols.protocol = "SFC"
    local t = tree:add(sfc, buf(0, HEADER_LEN + BODY_LEN))
    t:add(f.version, buf(0, 1))
    t:add(f.scheme, buf(1, 1))
    t:add(f.kind, buf(2, 1))
    t:add(f.hop_by_hop, buf(3, 1))
    t:add(f.src, buf(4, 4))
    t:add(f.dst, buf(8, 4))
    t:add(f.flow, buf(12, 4))
    t:add(f.sport, buf(16, 2))
    t:add(f.dport, buf(18, 2))
    t:add(f.prio, buf(20, 1))
    t:add(f.marks, buf(21, 1))
    t:add(f.body, buf(HEADER_LEN, BODY_LEN))
    local id = buf(1, 1):uint()
    pinfo.cols.info = string.format("%s kind %d, node %d -> %d, flow %d",
        schemes[id] or ("scheme " .. id), buf(2, 1):uint(), buf(4, 4):uint(),
        buf(8, 4):uint(), buf(12, 4):uint())
    return HEADER_LEN + BODY_LEN
end

DissectorTable.get("ethertype"):add(0x88B5, sfc)

-- The HPCC INT header (src/capture/frame.rs): 5 hop words of 8 bytes (big-endian; unused
-- ones zero), then the number of hops (16 bits). A hop word packs, from its least
-- significant bit: line-rate code (3 bits), dequeue time (24 bits, ns modulo 2^24), bytes
-- sent by the port (20 bits, units of 128 B), queue length (17 bits, units of 80 B).
local hpccint = Proto("hpccint", "HPCC INT header")
local INT_SLOTS = 5
local INT_LEN = 8 * INT_SLOTS + 2
local line_rates_gbps = { [0] = 25, [1] = 50, [2] = 100, [3] = 200, [4] = 400, [5] = 10 }

local hf = hpccint.fields
hf.nhop = ProtoField.uint16("hpccint.nhop", "Hops")
hf.hop = ProtoField.uint64("hpccint.hop", "Hop word", base.HEX)
hf.rate_code = ProtoField.uint8("hpccint.rate_code", "Line rate code")
hf.rate = ProtoField.uint32("hpccint.rate_gbps", "Line rate (Gb/s)")
hf.time = ProtoField.uint32("hpccint.time_ns", "Time (ns, modulo 2^24)")
hf.bytes = ProtoField.uint64("hpccint.tx_bytes", "Bytes sent (modulo 2^20 x 128 B)")
hf.qlen = ProtoField.uint32("hpccint.qlen_bytes", "Queue length (bytes)")

-- Wireshark's RoCEv2 dissector (UDP port 4791), for the frame after the INT header.
local rroce = DissectorTable.get("udp.port"):get_dissector(4791)

function hpccint.dissector(buf, pinfo, tree)
    if buf:len() < INT_LEN then
        return 0
    end
    local nhop = buf(INT_LEN - 2, 2):uint()
    local t = tree:add(hpccint, buf(0, INT_LEN))
    t:add(hf.nhop, buf(INT_LEN - 2, 2))
    for k = 0, math.min(nhop, INT_SLOTS) - 1 do
        local r = buf(8 * k, 8)
        local w = r:uint64()
        local h = t:add(hf.hop, r)
        local code = w:band(7):tonumber()
        h:add(hf.rate_code, r, code)
        if line_rates_gbps[code] then
            h:add(hf.rate, r, line_rates_gbps[code])
        end
        h:add(hf.time, r, w:rshift(3):band(0xFFFFFF):tonumber())
        h:add(hf.bytes, r, UInt64(w:rshift(27):band(0xFFFFF):tonumber() * 128))
        h:add(hf.qlen, r, w:rshift(47):band(0x1FFFF):tonumber() * 80)
    end
    local rest = buf(INT_LEN):tvb()
    if rroce then
        rroce:call(rest, pinfo, tree)
    end
    return buf:len()
end

DissectorTable.get("udp.port"):add(4792, hpccint)
