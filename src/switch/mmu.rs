//! Shared-buffer memory management unit of one switch.
//!
//! Accounting is in bytes including all headers (no cells), as HPCC-sim. Every data-class
//! packet (queues 1…N) is charged to the shared pool from admission until it starts
//! transmission (HPCC-sim releases at dequeue, not at end of serialization); the strict-priority
//! control class (queue 0: PFC, CNP, BTS) bypasses the MMU, as in HPCC-sim. Lossless
//! admission (ingress accounting with headroom) belongs to the PFC scheme
//! ([`crate::scheme::pfc`]); the pool is still charged here so occupancy is measured alike.
//!
//! Besides the pool total we keep the bytes per *ingress* (port, queue) — the accounting PFC
//! needs for its XOFF/XON decisions — and per egress (port, queue) in the port itself.

use crate::config::{BufferConfig, BufferMode};

/// Shared-buffer state of one switch.
#[derive(Clone, Debug)]
pub struct Mmu {
    /// Configuration.
    pub cfg: BufferConfig,
    /// Bytes currently charged to the shared pool.
    pub used_bytes: u64,
    /// Highest `used_bytes` ever seen.
    pub peak_bytes: u64,
    /// Bytes charged per ingress (port, queue), index `port * queues + q`.
    pub ingress_bytes: Vec<u64>,
    queues: usize,
}

impl Mmu {
    /// MMU for a switch with `ports` ports of `queues` queues each.
    pub fn new(cfg: BufferConfig, ports: usize, queues: usize) -> Self {
        Mmu {
            cfg,
            used_bytes: 0,
            peak_bytes: 0,
            ingress_bytes: vec![0; ports * queues],
            queues,
        }
    }

    /// Admission test for a `size_bytes` packet to an egress queue currently holding
    /// `egress_q_bytes`. Lossy mode: Dynamic Threshold on the egress queue,
    /// `q + s ≤ α·(B − used)`, and the pool must have room (`used + s ≤ B`). Unlimited: always.
    /// (In lossless mode the PFC scheme decides admission, with its ingress accounting and
    /// headroom, and this is not called.)
    #[inline]
    pub fn admit(&self, egress_q_bytes: u64, size_bytes: u64) -> bool {
        match self.cfg.mode {
            BufferMode::Unlimited | BufferMode::Lossless => true,
            BufferMode::Lossy => {
                let b = self.cfg.size_bytes;
                if self.used_bytes + size_bytes > b {
                    return false;
                }
                let free = (b - self.used_bytes) as f64;
                ((egress_q_bytes + size_bytes) as f64) <= self.cfg.dt_alpha * free
            }
        }
    }

    /// Hint the CPU to load the ingress counter of (`in_port`, `q`) (no effect on state).
    #[inline]
    pub fn prefetch(&self, in_port: u16, q: usize) {
        if let Some(c) = self.ingress_bytes.get(in_port as usize * self.queues + q) {
            crate::engine::prefetch(c as *const u64);
        }
    }

    /// Charge an admitted packet that arrived on `in_port` for queue `q`.
    #[inline]
    pub fn charge(&mut self, in_port: u16, q: usize, size_bytes: u64) {
        self.used_bytes += size_bytes;
        if self.used_bytes > self.peak_bytes {
            self.peak_bytes = self.used_bytes;
        }
        self.ingress_bytes[in_port as usize * self.queues + q] += size_bytes;
    }

    /// Release a packet that starts transmission.
    #[inline]
    pub fn release(&mut self, in_port: u16, q: usize, size_bytes: u64) {
        debug_assert!(self.used_bytes >= size_bytes);
        self.used_bytes -= size_bytes;
        let i = in_port as usize * self.queues + q;
        debug_assert!(self.ingress_bytes[i] >= size_bytes);
        self.ingress_bytes[i] -= size_bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lossy(b: u64, alpha: f64) -> Mmu {
        Mmu::new(
            BufferConfig {
                mode: BufferMode::Lossy,
                size_bytes: b,
                dt_alpha: alpha,
            },
            4,
            8,
        )
    }

    #[test]
    fn lone_queue_takes_half_with_alpha_one() {
        // Fill one queue packet by packet until refused: q = α(B − q) → q = B/2.
        let mut m = lossy(1_000_000, 1.0);
        let mut q = 0;
        while m.admit(q, 1000) {
            m.charge(0, 3, 1000);
            q += 1000;
        }
        assert_eq!(q, 500_000);
        assert_eq!(m.ingress_bytes[3], 500_000);
    }

    #[test]
    fn dt_fixed_point_many_queues() {
        // Round-robin filling of S queues converges to αB/(1+αS) each (within a packet).
        for (alpha, s) in [(1.0, 2usize), (1.0, 4), (0.125, 8), (0.5, 3)] {
            let b = 3_000_000u64;
            let mut m = lossy(b, alpha);
            let mut qs = vec![0u64; s];
            let mut progress = true;
            while progress {
                progress = false;
                for q in qs.iter_mut() {
                    if m.admit(*q, 1000) {
                        m.charge(0, 1, 1000);
                        *q += 1000;
                        progress = true;
                    }
                }
            }
            let expect = alpha * b as f64 / (1.0 + alpha * s as f64);
            for q in qs {
                assert!(
                    (q as f64 - expect).abs() <= 1000.0,
                    "α={alpha} S={s}: {q} vs {expect}"
                );
            }
        }
    }

    #[test]
    fn unlimited_never_drops() {
        let m = Mmu::new(
            BufferConfig {
                mode: BufferMode::Unlimited,
                size_bytes: 1,
                dt_alpha: 1.0,
            },
            1,
            1,
        );
        assert!(m.admit(u64::MAX / 4, 1 << 40));
    }
}
