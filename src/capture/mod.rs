//! Packet capture: the frames crossing chosen links, written as a pcapng file that
//! Wireshark and tshark read (`[capture]` in a scenario, `--capture` on `sfc run` and
//! `sfc hpcc`).
//!
//! A captured link is one pcapng interface (named `nA-nB`, its rate as `if_speed`); both
//! directions go to it, as on a passive tap (the Ethernet addresses tell the direction:
//! [`frame::mac`]). A frame is recorded when its transmission *starts* (its first bit leaves
//! the port), with that time in nanoseconds (`if_tsresol` = 9; the simulator's picoseconds
//! truncated). Frames are real RoCEv2 / 802.1Qbb frames where the packet has a standard
//! form, sfc's own EtherType otherwise ([`frame`]); what a frame cannot carry is in its
//! pcapng comment. The file is streamed as the run goes (memory stays constant) into a
//! hidden temp file renamed into place at the end ([`crate::metrics::output::AtomicWriter`]);
//! a cap on frames and bytes bounds it, and `summary.json`'s `capture` section says whether
//! the cap cut it short.
//!
//! Capture off costs the simulator one predictable branch per packet hop.

pub mod frame;
pub mod pcapng;

use crate::config::CaptureSpec;
use crate::engine::packet::{Header, IntHop, Packet};
use crate::metrics::output::AtomicWriter;
use pcapng::PcapngWriter;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A capture being written.
pub struct Capture {
    w: Option<PcapngWriter<AtomicWriter>>,
    path: PathBuf,
    /// (transmitting node, port) → (interface, link rate in bits per second).
    ports: HashMap<(u32, u16), (u32, u64)>,
    spec: CaptureSpec,
    buf: Vec<u8>,
    comment: String,
    /// Frames written.
    pub packets: u64,
    /// The cap stopped the capture before the run's end (frames were left out).
    pub capped: bool,
    /// The first write error (the capture stops; the run goes on and reports it).
    pub error: Option<String>,
}

/// What a finished capture wrote (`summary.json`'s `capture` section).
#[derive(Clone, Debug, serde::Serialize)]
pub struct CaptureSummary {
    /// The pcapng file's name (in the run's output directory).
    pub file: String,
    /// Frames written.
    pub packets: u64,
    /// File size, bytes.
    pub bytes: u64,
    /// Links captured (one interface each).
    pub links: usize,
    /// The cap (`capture.max_packets` / `capture.max_bytes`) ended the capture early.
    pub capped: bool,
}

impl Capture {
    /// Start a capture of `spec` into `path` (its temp file now; the file itself at
    /// [`Self::finish`]).
    pub fn create(spec: &CaptureSpec, path: &Path) -> Result<Capture, String> {
        let err = |e: std::io::Error| crate::fsutil::describe("the capture file", path, &e);
        let out = AtomicWriter::create(path).map_err(err)?;
        let app = format!("sfc {}", env!("CARGO_PKG_VERSION"));
        let mut w = PcapngWriter::new(out, &app).map_err(err)?;
        let mut ports = HashMap::new();
        for l in &spec.links {
            let name = format!("n{}-n{}", l.a.0, l.b.0);
            let desc = format!(
                "link node {} port {} <-> node {} port {}",
                l.a.0, l.a.1, l.b.0, l.b.1
            );
            let i = w
                .interface(&name, &desc, l.rate_bps, spec.snaplen_bytes)
                .map_err(err)?;
            ports.insert(l.a, (i, l.rate_bps));
            ports.insert(l.b, (i, l.rate_bps));
        }
        Ok(Capture {
            w: Some(w),
            path: path.to_path_buf(),
            ports,
            spec: spec.clone(),
            buf: Vec::with_capacity(4096),
            comment: String::new(),
            packets: 0,
            capped: false,
            error: None,
        })
    }

    /// Packet `pkt` starts its transmission at `now_ps` on port `port` of `tx_node`, towards
    /// `rx_node`; `mtu_bytes` and the flow's message size (if known) complete its headers.
    /// Recorded if the port is captured, the time is in the window, the flow is wanted and
    /// the cap allows.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub fn tap(
        &mut self,
        now_ps: u64,
        tx_node: u32,
        port: u16,
        rx_node: u32,
        pkt: &Packet,
        int: &[IntHop],
        mtu_bytes: u32,
        flow_size_bytes: Option<u64>,
    ) {
        let Some(&(iface, rate_bps)) = self.ports.get(&(tx_node, port)) else {
            return;
        };
        if now_ps < self.spec.start_ps || now_ps >= self.spec.stop_ps {
            return;
        }
        let of_flow = !matches!(&pkt.hdr, Header::Scheme(s) if s.hop_by_hop);
        if of_flow
            && !self.spec.flows.is_empty()
            && self.spec.flows.binary_search(&pkt.flow).is_err()
        {
            return;
        }
        let Some(w) = self.w.as_mut() else {
            return;
        };
        let ctx = frame::FrameCtx {
            tx_node,
            rx_node,
            mtu_bytes,
            flow_size_bytes,
            link_rate_bps: rate_bps,
            int,
        };
        frame::encode(pkt, &ctx, &mut self.buf);
        let orig = self.buf.len() as u32;
        let keep = match self.spec.snaplen_bytes {
            0 => self.buf.len(),
            s => self.buf.len().min(s as usize),
        };
        describe(pkt, int, &mut self.comment);
        // The block's size with its comment: within the byte cap or not written at all.
        let block = PcapngWriter::<AtomicWriter>::packet_block_bytes(keep, self.comment.len());
        if self.packets >= self.spec.max_packets || w.bytes + block > self.spec.max_bytes {
            self.capped = true;
            self.close();
            return;
        }
        let now_ns = now_ps / 1000;
        if let Err(e) = w.packet(iface, now_ns, &self.buf[..keep], orig, &self.comment) {
            self.error = Some(crate::fsutil::describe("the capture file", &self.path, &e));
            self.w = None;
            return;
        }
        self.packets += 1;
    }

    /// Stop capturing (the cap was reached): later frames are not looked at.
    fn close(&mut self) {
        self.ports.clear();
    }

    /// Flush the file and move it into place.
    pub fn finish(mut self) -> Result<CaptureSummary, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let w = self.w.take().ok_or("the capture file was not written")?;
        let bytes = w.bytes;
        let err = |e: std::io::Error| crate::fsutil::describe("the capture file", &self.path, &e);
        w.finish().map_err(err)?.finish().map_err(err)?;
        Ok(CaptureSummary {
            file: self
                .path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            packets: self.packets,
            bytes,
            links: self.spec.links.len(),
            capped: self.capped,
        })
    }
}

/// The pcapng comment of `pkt` (with INT records `int`): what its frame cannot carry, and
/// the INT records exactly (`int [ts_ps,tx_bytes,qlen_bytes,rate_mbps; …]`; the frame's INT
/// header holds them at HPCC-sim's resolution).
fn describe(pkt: &Packet, int: &[IntHop], out: &mut String) {
    out.clear();
    let _ = write!(out, "flow {} size {} B", pkt.flow, pkt.size);
    match &pkt.hdr {
        Header::Data(d) => {
            let _ = write!(out, " seq {}", d.seq);
            if d.retx {
                out.push_str(" retransmission");
            }
            if d.int_n > 0 {
                let _ = write!(out, " int_hops {}", d.int_n);
            }
        }
        Header::Ack(a) | Header::Nack(a) => {
            let _ = write!(out, " ack_seq {}", a.ack_seq);
            let (start, len) = a.sack();
            if len > 0 {
                let _ = write!(out, " sack [{start}, {})", start + len as u64);
            }
            if a.int_n > 0 {
                let _ = write!(out, " int_hops {}", a.int_n);
            }
        }
        Header::Cnp => {}
        Header::Scheme(s) => {
            let name = crate::registry::scheme_id(s.tag.scheme)
                .map_or("?", crate::registry::scheme_table_name);
            let _ = write!(out, " scheme {name} kind {}", s.tag.kind);
        }
    }
    if !pkt.marks.is_empty() {
        let _ = write!(out, " marks {:#04x}", pkt.marks.0);
    }
    if !int.is_empty() {
        out.push_str(" int [");
        for (k, h) in int.iter().enumerate() {
            let sep = if k == 0 { "" } else { "; " };
            let _ = write!(
                out,
                "{sep}{},{},{},{}",
                h.ts_ps, h.tx_bytes, h.qlen_bytes, h.rate_mbps
            );
        }
        out.push(']');
    }
}
