//! A minimal pcapng writer (the IETF draft "PCAP Next Generation Dump File Format",
//! `draft-ietf-opsawg-pcapng`): one Section Header Block, one Interface Description Block per
//! captured link, then one Enhanced Packet Block per captured frame. Little-endian, every
//! block padded to 32 bits; no per-packet allocation (the caller's frame buffer is written
//! through).

use std::io::{self, Write};

/// Block type of the Section Header Block.
const SHB: u32 = 0x0A0D_0D0A;
/// Block type of an Interface Description Block.
const IDB: u32 = 0x0000_0001;
/// Block type of an Enhanced Packet Block.
const EPB: u32 = 0x0000_0006;
/// Byte-order magic of the section header.
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
/// `LINKTYPE_ETHERNET`: frames start with the Ethernet header (no preamble, no FCS).
pub const LINKTYPE_ETHERNET: u16 = 1;
/// Option codes.
const OPT_ENDOFOPT: u16 = 0;
const OPT_COMMENT: u16 = 1;
const SHB_USERAPPL: u16 = 4;
const IF_NAME: u16 = 2;
const IF_DESCRIPTION: u16 = 3;
const IF_SPEED: u16 = 8;
const IF_TSRESOL: u16 = 9;

/// Timestamp resolution of every interface: 10⁻⁹ s (`if_tsresol` = 9), so a timestamp is
/// the simulated time in nanoseconds.
pub const TSRESOL_EXP: u8 = 9;

/// Bytes `n` rounded up to a multiple of 4.
fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

/// An option's encoded length (code, length, value, padding).
fn opt_len(value: usize) -> usize {
    4 + pad4(value)
}

/// Writes pcapng blocks to `W` (a buffered file, in practice).
pub struct PcapngWriter<W: Write> {
    out: W,
    interfaces: u32,
    /// Bytes written so far.
    pub bytes: u64,
}

impl<W: Write> PcapngWriter<W> {
    /// Start a section: the Section Header Block, naming `app` as the writing application.
    pub fn new(out: W, app: &str) -> io::Result<Self> {
        let mut w = PcapngWriter {
            out,
            interfaces: 0,
            bytes: 0,
        };
        let body = 16 + opt_len(app.len()) + 4;
        let total = (12 + body) as u32;
        let mut b = Vec::with_capacity(total as usize);
        b.extend_from_slice(&SHB.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes()); // major version
        b.extend_from_slice(&0u16.to_le_bytes()); // minor version
        b.extend_from_slice(&(-1i64).to_le_bytes()); // section length: not given
        put_opt(&mut b, SHB_USERAPPL, app.as_bytes());
        put_opt(&mut b, OPT_ENDOFOPT, &[]);
        b.extend_from_slice(&total.to_le_bytes());
        w.write_raw(&b)?;
        Ok(w)
    }

    /// Declare an Ethernet interface (`name`, a description, its line rate in bits per
    /// second); returns its interface id for [`Self::packet`]. `snaplen` 0 = unlimited.
    pub fn interface(
        &mut self,
        name: &str,
        description: &str,
        speed_bps: u64,
        snaplen: u32,
    ) -> io::Result<u32> {
        let body =
            8 + opt_len(name.len()) + opt_len(description.len()) + opt_len(8) + opt_len(1) + 4;
        let total = (12 + body) as u32;
        let mut b = Vec::with_capacity(total as usize);
        b.extend_from_slice(&IDB.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes()); // reserved
        b.extend_from_slice(&snaplen.to_le_bytes());
        put_opt(&mut b, IF_NAME, name.as_bytes());
        put_opt(&mut b, IF_DESCRIPTION, description.as_bytes());
        put_opt(&mut b, IF_SPEED, &speed_bps.to_le_bytes());
        put_opt(&mut b, IF_TSRESOL, &[TSRESOL_EXP]);
        put_opt(&mut b, OPT_ENDOFOPT, &[]);
        b.extend_from_slice(&total.to_le_bytes());
        self.write_raw(&b)?;
        self.interfaces += 1;
        Ok(self.interfaces - 1)
    }

    /// One frame seen on interface `iface` at `ts_ns` nanoseconds: `data` is what was
    /// captured (at most the snap length), `orig_len` the frame's length on the wire;
    /// `comment`, if not empty, is attached as the packet's comment.
    pub fn packet(
        &mut self,
        iface: u32,
        ts_ns: u64,
        data: &[u8],
        orig_len: u32,
        comment: &str,
    ) -> io::Result<()> {
        let opts = Self::packet_block_bytes(0, comment.len()) as usize - 32;
        let total = Self::packet_block_bytes(data.len(), comment.len()) as u32;
        let mut head = [0u8; 28];
        head[0..4].copy_from_slice(&EPB.to_le_bytes());
        head[4..8].copy_from_slice(&total.to_le_bytes());
        head[8..12].copy_from_slice(&iface.to_le_bytes());
        head[12..16].copy_from_slice(&((ts_ns >> 32) as u32).to_le_bytes());
        head[16..20].copy_from_slice(&(ts_ns as u32).to_le_bytes());
        head[20..24].copy_from_slice(&(data.len() as u32).to_le_bytes());
        head[24..28].copy_from_slice(&orig_len.to_le_bytes());
        self.write_raw(&head)?;
        self.write_raw(data)?;
        self.write_raw(&[0u8; 3][..pad4(data.len()) - data.len()])?;
        if !comment.is_empty() {
            let mut b = Vec::with_capacity(opts);
            put_opt(&mut b, OPT_COMMENT, comment.as_bytes());
            put_opt(&mut b, OPT_ENDOFOPT, &[]);
            self.write_raw(&b)?;
        }
        self.write_raw(&total.to_le_bytes())
    }

    /// The bytes [`Self::packet`] adds to the file for a frame of `data_len` captured bytes
    /// with a comment of `comment_len` bytes (0: no comment, no options).
    pub fn packet_block_bytes(data_len: usize, comment_len: usize) -> u64 {
        let opts = if comment_len == 0 {
            0
        } else {
            opt_len(comment_len) + 4
        };
        (32 + pad4(data_len) + opts) as u64
    }

    /// Flush and return the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }

    fn write_raw(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)?;
        self.bytes += b.len() as u64;
        Ok(())
    }
}

/// Append option `code` with `value` (padded to 32 bits).
fn put_opt(b: &mut Vec<u8>, code: u16, value: &[u8]) {
    b.extend_from_slice(&code.to_le_bytes());
    b.extend_from_slice(&(value.len() as u16).to_le_bytes());
    b.extend_from_slice(value);
    b.resize(b.len() + pad4(value.len()) - value.len(), 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    /// Every block's leading and trailing lengths agree, are multiples of 4, and the blocks
    /// tile the file exactly.
    #[test]
    fn blocks_tile_the_file_with_matching_lengths() {
        let mut w = PcapngWriter::new(Vec::new(), "sfc test").unwrap();
        let i = w.interface("n0:p0", "a link", 100_000_000_000, 0).unwrap();
        assert_eq!(i, 0);
        w.packet(i, 1_234_567_890_123, &[1, 2, 3, 4, 5], 60, "")
            .unwrap();
        w.packet(i, 7, &[9; 8], 8, "a comment").unwrap();
        let bytes = w.bytes;
        let b = w.finish().unwrap();
        assert_eq!(b.len() as u64, bytes);
        let mut at = 0;
        let mut types = Vec::new();
        while at < b.len() {
            let len = u32_at(&b, at + 4) as usize;
            assert_eq!(len % 4, 0);
            assert_eq!(u32_at(&b, at + len - 4) as usize, len);
            types.push(u32_at(&b, at));
            at += len;
        }
        assert_eq!(at, b.len());
        assert_eq!(types, vec![SHB, IDB, EPB, EPB]);
        // The first EPB: interface 0, the timestamp split high/low, 5 captured of 60.
        let shb = u32_at(&b, 4) as usize;
        let epb = shb + u32_at(&b, shb + 4) as usize;
        assert_eq!(u32_at(&b, epb + 8), 0);
        let ts = ((u32_at(&b, epb + 12) as u64) << 32) | u32_at(&b, epb + 16) as u64;
        assert_eq!(ts, 1_234_567_890_123);
        assert_eq!(u32_at(&b, epb + 20), 5);
        assert_eq!(u32_at(&b, epb + 24), 60);
        assert_eq!(
            u32_at(&b, epb + 4) as u64,
            PcapngWriter::<Vec<u8>>::packet_block_bytes(5, 0)
        );
        // The second EPB, with its comment: the size the cap check counts.
        let epb2 = epb + u32_at(&b, epb + 4) as usize;
        assert_eq!(
            u32_at(&b, epb2 + 4) as u64,
            PcapngWriter::<Vec<u8>>::packet_block_bytes(8, "a comment".len())
        );
    }
}
