//! Micro-benchmark of the event queue alone: a steady state of ~9,000 pending events, one pop
//! and one schedule per step (the simulator's pattern). `cargo bench --bench heap`.
use sfc::engine::{Event, EventQueue};
use sfc::rng::Rng;

fn main() {
    let mut q = EventQueue::new();
    let mut rng = Rng::new(1);
    for i in 0..9000 {
        q.schedule(rng.below(10_000_000), Event::NicWake { node: i });
    }
    let n = 20_000_000u64;
    let t0 = std::time::Instant::now();
    let mut acc = 0u64;
    for _ in 0..n {
        let (t, e) = q.pop().unwrap();
        if let Event::NicWake { node } = e {
            acc = acc.wrapping_add(node as u64);
        }
        q.schedule(t + 1 + rng.below(2_000_000), e);
    }
    let dt = t0.elapsed().as_secs_f64();
    println!("{:.1} ns per pop+schedule ({acc})", dt * 1e9 / n as f64);
}
