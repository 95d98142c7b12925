//! The tool's own work per block, piece by piece: what the rr requester does for each
//! block (two clock reads, a request header written, the response header read, one
//! histogram record), what the responder does (a request header read, a response
//! header written), and what only `--verify` or test setup adds (the block checksum,
//! the payload fill, done once per test). `coalescing decision` is the stream
//! receiver's per-read choice of a wait. Figures in BENCHMARKS.md §6.
//!
//! Run: `cargo bench -p mtuperf-engine --bench per_block`; CI only builds it
//! (`cargo bench --no-run`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mtuperf_engine::hotpath::{
    coalesce_wait_ns, fnv_update, incompressible, new_histogram, record, request_header,
    response_header,
};
use mtuperf_proto::dgram::{checksum, Header, HEADER_LEN};

fn per_block(c: &mut Criterion) {
    let t0 = Instant::now();
    c.bench_function("timestamp: Instant elapsed since Go (ns)", |b| {
        b.iter(|| black_box(t0.elapsed().as_nanos() as u64));
    });

    let mut hist = new_histogram();
    let mut v = 12_345u64;
    c.bench_function("histogram record (HDR, 3 digits, 1 ns-100 s)", |b| {
        b.iter(|| {
            // Values spread over 10 µs to 1 ms, as block latencies are.
            v = v.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            record(&mut hist, black_box(10_000 + (v >> 44)));
        });
    });

    let mut buf = vec![0u8; HEADER_LEN + 128];
    let mut seq = 0u64;
    c.bench_function("request header encode", |b| {
        b.iter(|| {
            seq += 1;
            request_header(black_box(&mut buf), 3, 0xfeed, seq, seq * 7, 128);
        });
    });
    request_header(&mut buf, 3, 0xfeed, 1, 7, 128);
    c.bench_function("header decode", |b| {
        b.iter(|| black_box(Header::read(black_box(&buf))));
    });
    let req = Header::read(&buf).unwrap_or_else(|e| panic!("{e}"));
    let mut tx = vec![0u8; HEADER_LEN + 8192];
    c.bench_function("response header encode", |b| {
        b.iter(|| response_header(black_box(&mut tx), &req, 0x1234_5678, 8192));
    });

    let mut g = c.benchmark_group("--verify and setup (not per block by default)");
    for size in [1024usize, 8192] {
        let block = incompressible(size, 7);
        g.throughput(Throughput::Bytes(size as u64));
        g.bench_function(format!("checksum verify {size} B"), |b| {
            b.iter(|| black_box(checksum(black_box(&block))));
        });
        g.bench_function(format!("checksum in TCP pieces {size} B"), |b| {
            b.iter(|| {
                let (a, z) = block.split_at(size / 3);
                black_box(fnv_update(fnv_update(0x811c_9dc5, a), z))
            });
        });
        g.bench_function(format!("payload fill {size} B (once per test)"), |b| {
            b.iter(|| black_box(incompressible(size, 7)));
        });
    }
    g.finish();

    let mut bytes = 1u64;
    c.bench_function("coalescing decision (stream receiver, per read)", |b| {
        b.iter(|| {
            bytes += 65_536;
            black_box(coalesce_wait_ns(
                50_000,
                212_992,
                black_box(bytes),
                200_000_000,
                3_000,
            ))
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    targets = per_block
}
criterion_main!(benches);
