//! The host half of BFC: a NIC keeps the latest pause filter its ToR sent and the arbiter
//! skips every flow whose VFID matches it (the NIC has a queue per flow, paper §3.6); a new
//! filter restarts the arbiter.

use super::{bloom_contains, vfid};
use crate::engine::arena::PAYLOAD_WORDS;
use crate::engine::packet::{Packet, WireHeader};
use crate::scheme::bfc::wire::BfcHdr;
use crate::scheme::{FlowKey, HostAction, HostCtx, HostHooks};

/// BFC at the NICs: the latest filter of every host (indexed by host).
#[derive(Clone, Debug)]
pub struct BfcHost {
    /// Latest filter bits per host.
    pub bits: Vec<[u64; 16]>,
    /// (bits, hashes) of each host's filter; bits 0 = nothing received or all clear.
    pub shape: Vec<(u32, u32)>,
    /// VFID space.
    pub vfid_table: u32,
    /// Pause frames received by NICs.
    pub frames_received: u64,
}

impl BfcHost {
    /// For `hosts` hosts and a VFID space of `vfid_table`.
    pub fn new(hosts: usize, vfid_table: u32) -> Self {
        BfcHost {
            bits: vec![[0; 16]; hosts],
            shape: vec![(0, 0); hosts],
            vfid_table,
            frames_received: 0,
        }
    }
}

impl HostHooks for BfcHost {
    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        BfcHdr::is(pkt)
    }

    fn on_frame(
        &mut self,
        ctx: &mut HostCtx<'_>,
        pkt: &Packet,
        payload: Option<&[u64; PAYLOAD_WORDS]>,
    ) {
        let (Some(h), Some(words)) = (BfcHdr::of(pkt), payload) else {
            return;
        };
        let Some(slot) = self.bits.get_mut(ctx.host) else {
            return;
        };
        *slot = *words;
        let any = words.iter().any(|&w| w != 0);
        self.shape[ctx.host] = if any {
            (h.bits as u32, h.hashes as u32)
        } else {
            (0, 0)
        };
        self.frames_received += 1;
        ctx.out.push(HostAction::Kick);
    }

    fn gates_sends(&self) -> bool {
        true
    }

    #[inline]
    fn may_send(&self, host: usize, f: &FlowKey) -> bool {
        match self.shape.get(host) {
            Some(&(m, k)) if m > 0 => !bloom_contains(
                &self.bits[host],
                m,
                k,
                vfid(f.src, f.dst, f.sport, f.dport, self.vfid_table),
            ),
            _ => true,
        }
    }
}
