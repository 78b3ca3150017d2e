//! Micro-benchmark of the event queue alone, in the simulator's pattern: a steady state of
//! pending events at a given density, one pop and one schedule per step, most events
//! scheduled about one link delay (1 µs) ahead. `cargo bench --bench heap`.
use sfc::engine::{Event, EventQueue};
use sfc::rng::Rng;

fn run(pending: u32, spread_ps: u64, delay_ps: u64) -> f64 {
    let mut q = EventQueue::for_horizon(2 * delay_ps);
    let mut rng = Rng::new(1);
    for i in 0..pending {
        q.schedule(
            delay_ps + rng.below(spread_ps),
            Event::Arrive {
                node: i,
                port: 0,
                pkt: i,
                egress: 0,
                seq: 0,
            },
        );
    }
    let n = 20_000_000u64;
    let t0 = std::time::Instant::now();
    let mut acc = 0u64;
    for _ in 0..n {
        let (t, e) = q.pop().unwrap();
        if let Event::Arrive { node, .. } = e {
            acc = acc.wrapping_add(node as u64);
        }
        q.schedule(t + delay_ps + rng.below(spread_ps), e);
    }
    let dt = t0.elapsed().as_secs_f64();
    std::hint::black_box(acc);
    dt * 1e9 / n as f64
}

fn main() {
    for (pending, label) in [
        (4_000, "64 hosts"),
        (30_000, "320 hosts"),
        (66_000, "1024 hosts"),
    ] {
        let ns = run(pending, 100_000, 1_000_000);
        println!(
            "{label:>10}: {pending:>6} pending, 1 µs + U(0, 100 ns) ahead: {ns:.1} ns per pop+schedule"
        );
    }
}
