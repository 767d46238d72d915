//! Peer driver for bench_base85. One request per stdin line:
//!   `encode <bytes> <iters> <seed>` or `decode <bytes> <iters> <seed>`
//! Encodes/decodes a random buffer of <bytes> binary bytes <iters> times and answers one line:
//!   `<total ns> <checksum>`
//! The checksum (length plus last byte per iteration) keeps the work observable at O(1) cost.
use std::io::{self, BufRead, Write};
use std::time::Instant;

fn random_bytes(n: usize, mut seed: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            // splitmix64, same generator as the C++ harness
            seed = seed.wrapping_add(0x9e3779b97f4a7c15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let mut cache: Option<(usize, u64, Vec<u8>, String)> = None;
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 4 {
            writeln!(out, "error bad request").unwrap();
            out.flush().unwrap();
            continue;
        }
        let (op, n, iters, seed) = (
            f[0],
            f[1].parse::<usize>().unwrap(),
            f[2].parse::<u64>().unwrap(),
            f[3].parse::<u64>().unwrap(),
        );
        if cache.as_ref().map(|c| (c.0, c.1)) != Some((n, seed)) {
            let data = random_bytes(n, seed);
            let text = base85_simd::encode(&data);
            cache = Some((n, seed, data, text));
        }
        let (_, _, data, text) = cache.as_ref().unwrap();
        let mut sum: u64 = 0;
        let start = Instant::now();
        for _ in 0..iters {
            if op == "encode" {
                let s = base85_simd::encode(std::hint::black_box(data));
                sum = sum.wrapping_add(s.len() as u64 + s.as_bytes().last().map_or(0, |&b| b as u64));
                std::hint::black_box(&s);
            } else {
                let v = base85_simd::decode(std::hint::black_box(text)).expect("decode");
                sum = sum.wrapping_add(v.len() as u64 + v.last().map_or(0, |&b| b as u64));
                std::hint::black_box(&v);
            }
        }
        let ns = start.elapsed().as_nanos();
        writeln!(out, "{} {}", ns, sum).unwrap();
        out.flush().unwrap();
    }
}
