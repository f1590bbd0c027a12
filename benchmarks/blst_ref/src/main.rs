//! Times blst's BLS12-381 base-field product and square the way benchmarks/fq_vs_blst_bench.py
//! times cuzk's: one dependent chain, four chains interleaved, and a chain of squares; and the
//! scalar-field (Fr) product in a chain. Prints one line per shape, "name ns_per_op", the best of
//! `rounds` rounds of `n` operations.
use blst::{blst_fp, blst_fp_from_bendian, blst_fp_mul, blst_fp_sqr, blst_fr, blst_fr_from_uint64, blst_fr_mul};
use std::time::Instant;

fn fp(seed: u8) -> blst_fp {
    let mut bytes = [seed; 48];
    bytes[0] = 1; // below p
    let mut out = blst_fp::default();
    unsafe { blst_fp_from_bendian(&mut out, bytes.as_ptr()) };
    out
}

fn best(rounds: usize, n: u64, mut run: impl FnMut() -> u64) -> f64 {
    let mut best = f64::INFINITY;
    let mut sink = 0u64;
    for _ in 0..rounds {
        let t = Instant::now();
        sink ^= run();
        best = best.min(t.elapsed().as_secs_f64() / n as f64 * 1e9);
    }
    std::hint::black_box(sink);
    best
}

/// x0 through `n` dependent steps `x = step(x)`.
fn chained<T: Copy>(x0: T, n: u64, step: impl Fn(&mut T, &T)) -> T {
    let mut x = x0;
    for _ in 0..n {
        let y = x;
        step(&mut x, &y);
    }
    x
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(4_000_000);
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let (a, b) = (fp(7), fp(3));
    let chain = best(rounds, n, || chained(a, n, |x, y| unsafe { blst_fp_mul(x, y, &b) }).l[0]);
    let four = best(rounds, n, || {
        let mut x = [a, b, a, b];
        for _ in 0..n / 4 {
            for x in x.iter_mut() {
                let y = *x;
                unsafe { blst_fp_mul(x, &y, &b) };
            }
        }
        x[0].l[0] ^ x[1].l[0] ^ x[2].l[0] ^ x[3].l[0]
    });
    let sqr = best(rounds, n, || chained(a, n, |x, y| unsafe { blst_fp_sqr(x, y) }).l[0]);
    let limbs: [[u64; 4]; 2] = [[7, 0x89ab_cdef, 0x1111, 0x0fff], [3, 0x2222, 0x3333, 0x0ffe]]; // below r
    let (mut c, mut d) = (blst_fr::default(), blst_fr::default());
    unsafe {
        blst_fr_from_uint64(&mut c, limbs[0].as_ptr());
        blst_fr_from_uint64(&mut d, limbs[1].as_ptr());
    }
    let fr_chain = best(rounds, n, || chained(c, n, |x, y| unsafe { blst_fr_mul(x, y, &d) }).l[0]);
    println!("mul_chain {chain:.2}");
    println!("mul_4_chains {four:.2}");
    println!("sqr_chain {sqr:.2}");
    println!("fr_mul_chain {fr_chain:.2}");
}
