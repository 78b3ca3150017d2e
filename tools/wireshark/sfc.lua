-- Wireshark dissector for sfc's own scheme-packet header (EtherType 0x88B5), the frames a
-- packet capture of the sfc simulator writes for scheme packets without a standard wire
-- form: SFC's BTS, BFC's pause frames, PB-FS's packets, NDP's control packets, CBFC credits.
-- (Data, ACK, NACK and CNP packets are RoCEv2 and PFC frames are IEEE 802.1Qbb: Wireshark
-- decodes those itself.)
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
