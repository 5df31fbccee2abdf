//! Benchmarks of the solver's inner loops: perft, move and un-move generation, the index.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use shogi4_engine::{perft, Material, MaterialIndex, Position};

fn sample(index: &MaterialIndex, count: u64) -> Vec<Position> {
    let step = index.slots() / count;
    (0..count).map(|i| index.position_at(i * step)).collect()
}

fn benches(c: &mut Criterion) {
    let start = Position::start();
    // The bench asserts what it measures.
    assert_eq!(perft(&start, 6), 769_014);
    let mut group = c.benchmark_group("perft");
    group.sample_size(20);
    group.throughput(Throughput::Elements(769_014));
    group.bench_function("start depth 6", |b| b.iter(|| perft(black_box(&start), 6)));
    group.finish();

    let index = MaterialIndex::new("KKCFRT".parse::<Material>().unwrap());
    let positions = sample(&index, 1_000);
    let mut group = c.benchmark_group("per position (KKCFRT sample)");
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function("legal_moves", |b| b.iter(|| positions.iter().map(|p| p.legal_moves().len()).sum::<usize>()));
    group.bench_function("for_each_unmove", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for p in &positions {
                p.for_each_unmove(|_, _| n += 1);
            }
            n
        })
    });
    group.bench_function("index_of", |b| b.iter(|| positions.iter().map(|p| index.index_of(p)).sum::<u64>()));
    group.bench_function("position_at", |b| {
        b.iter(|| {
            (0..1_000u64)
                .map(|i| index.position_at(i * 524_287).royal(shogi4_engine::Color::First).index())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(engine, benches);
criterion_main!(engine);
