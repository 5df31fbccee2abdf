//! Distributed solves on worker threads of this process give the in-memory solver's tables,
//! byte for byte, for any worker count.

use std::path::Path;

use shogi4_distributed::{solve, Job, Topology};
use shogi4_tablebase::{solve as solve_in_memory, Silent};

fn in_memory(material: &str, dir: &Path) -> Vec<u8> {
    let path = solve_in_memory(material.parse().unwrap(), &Silent).table.write_to_dir(dir).unwrap();
    std::fs::read(path).unwrap()
}

#[test]
fn every_small_game_on_one_to_sixteen_threads() {
    let reference = tempfile::tempdir().unwrap();
    for material in ["KK", "KKC", "KKF", "KKR", "KKT", "KKCF", "KKRT"] {
        let expected = in_memory(material, reference.path());
        for workers in [1, 2, 3, 16] {
            let out = tempfile::tempdir().unwrap();
            let outcome =
                solve(Job::new(material.parse().unwrap(), out.path().to_path_buf()), Topology::Threads(workers))
                    .unwrap()
                    .expect("this process is process 0");
            assert!(std::fs::read(&outcome.path).unwrap() == expected, "{material} on {workers} workers");
            assert_eq!(outcome.exchanged > 0, workers > 1 && material != "KK", "{material} on {workers}");
            assert_eq!(outcome.network, 0, "threads exchange nothing over the network");
        }
    }
}

#[test]
fn tiny_batches_give_the_same_bytes() {
    let reference = tempfile::tempdir().unwrap();
    let expected = in_memory("KKCF", reference.path());
    let out = tempfile::tempdir().unwrap();
    let mut job = Job::new("KKCF".parse().unwrap(), out.path().to_path_buf());
    // Many rounds per level: updates of consecutive levels overlap in flight.
    job.batch = 100;
    let outcome = solve(job, Topology::Threads(4)).unwrap().unwrap();
    assert!(std::fs::read(outcome.path).unwrap() == expected);
}

#[test]
fn checkpoints_are_written_and_removed_once_the_table_is() {
    let reference = tempfile::tempdir().unwrap();
    let expected = in_memory("KKCF", reference.path());
    let out = tempfile::tempdir().unwrap();
    let mut job = Job::new("KKCF".parse().unwrap(), out.path().to_path_buf());
    job.checkpoint_every = Some(std::time::Duration::ZERO);
    let checkpoints = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counted = checkpoints.clone();
    job.events = std::sync::Arc::new(move |event| {
        if let shogi4_distributed::Event::Checkpointed(_) = event {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    let outcome = solve(job, Topology::Threads(3)).unwrap().unwrap();
    assert!(std::fs::read(outcome.path).unwrap() == expected);
    assert!(checkpoints.load(std::sync::atomic::Ordering::Relaxed) > 5);
    let left: Vec<_> = std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("KKCF.s4tb")]);
}

#[test]
fn distances_past_the_inline_limit_go_through_the_overflow_list_alike() {
    // Distances above 5 kept in the overflow list, as those of 254 plies and more are in big
    // games: the written bytes equal the in-memory solver's with the same limit.
    let material = "KKCF".parse().unwrap();
    let reference = shogi4_tablebase::solve_with_inline_limit(material, &Silent, None, 5).unwrap().table;
    assert!(!reference.overflow.is_empty());
    let out = tempfile::tempdir().unwrap();
    let mut job = Job::new(material, out.path().to_path_buf());
    job.max_inline = 5;
    let outcome = solve(job, Topology::Threads(3)).unwrap().unwrap();
    assert!(std::fs::read(outcome.path).unwrap() == reference.to_bytes());
}
