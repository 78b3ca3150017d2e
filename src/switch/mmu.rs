//! Shared-buffer memory management unit of one switch.
//!
//! Accounting is in bytes including all headers (no cells), as HPCC-sim. Every data-class
//! packet (queues 1…N) is charged to the shared pool from admission until it starts
//! transmission (HPCC-sim releases at dequeue, not at end of serialization); the strict-priority
//! control class (queue 0: PFC, CNP, BTS) bypasses the MMU, as in HPCC-sim. Lossless
//! admission (ingress accounting with headroom) belongs to the PFC scheme
//! ([`crate::scheme::pfc`]); the pool is still charged here so occupancy is measured alike.
//!
//! The pool total is all the MMU keeps: the bytes per egress (port, queue) live in the port
//! itself, and the per-ingress (port, queue) accounting lossless admission needs for its
//! XOFF/XON decisions lives in the PFC scheme, which owns it. (A second, unread per-ingress
//! count here cost a cache line per hop: it was removed, the outputs unchanged.)

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
}

impl Mmu {
    /// MMU with the buffer configuration `cfg`, empty.
    pub fn new(cfg: BufferConfig) -> Self {
        Mmu {
            cfg,
            used_bytes: 0,
            peak_bytes: 0,
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

    /// Charge an admitted packet of `size_bytes` to the pool.
    #[inline]
    pub fn charge(&mut self, size_bytes: u64) {
        self.used_bytes += size_bytes;
        self.peak_bytes = self.peak_bytes.max(self.used_bytes);
    }

    /// Release `size_bytes` from the pool (a packet starts transmission, or a scheme took a
    /// queued packet out of its queue).
    #[inline]
    pub fn release(&mut self, size_bytes: u64) {
        debug_assert!(self.used_bytes >= size_bytes);
        self.used_bytes -= size_bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lossy(b: u64, alpha: f64) -> Mmu {
        Mmu::new(BufferConfig {
            mode: BufferMode::Lossy,
            size_bytes: b,
            dt_alpha: alpha,
        })
    }

    #[test]
    fn lone_queue_takes_half_with_alpha_one() {
        // Fill one queue packet by packet until refused: q = α(B − q) → q = B/2.
        let mut m = lossy(1_000_000, 1.0);
        let mut q = 0;
        while m.admit(q, 1000) {
            m.charge(1000);
            q += 1000;
        }
        assert_eq!(q, 500_000);
        assert_eq!(m.used_bytes, 500_000);
        assert_eq!(m.peak_bytes, 500_000);
        m.release(1000);
        assert_eq!((m.used_bytes, m.peak_bytes), (499_000, 500_000));
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
                        m.charge(1000);
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
        let m = Mmu::new(BufferConfig {
            mode: BufferMode::Unlimited,
            size_bytes: 1,
            dt_alpha: 1.0,
        });
        assert!(m.admit(u64::MAX / 4, 1 << 40));
    }
}
