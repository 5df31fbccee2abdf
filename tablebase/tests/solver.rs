//! The solver against the published values and against a naive forward solver; tables are
//! independent of the thread count and pass their audit.

use std::collections::HashMap;

use shogi4_engine::{Color, Material, MaterialIndex, Position};
use shogi4_tablebase::{audit, recorded_checksum, solve, Silent, SolvedTable, Table, Value};

fn solved(name: &str) -> SolvedTable {
    solve(name.parse().unwrap(), &Silent).table
}

/// Percentages to one decimal, as RULES.md prints them.
fn percent(part: u64, whole: u64) -> String {
    format!("{:.1}", 100.0 * part as f64 / whole as f64)
}

#[test]
fn published_values_of_the_small_games() {
    let published = [
        ("KK", 480, "35.0", "0.0", "65.0"),
        ("KKC", 24_480, "75.9", "23.3", "0.7"),
        ("KKF", 24_480, "76.7", "23.3", "0.0"),
        ("KKR", 24_480, "76.2", "23.8", "0.0"),
    ];
    for (name, positions, win, loss, draw) in published {
        let s = solved(name).statistics;
        assert_eq!(s.positions, positions, "{name}");
        assert_eq!(
            (percent(s.wins, positions), percent(s.losses, positions), percent(s.draws, positions)),
            (win.to_string(), loss.to_string(), draw.to_string()),
            "{name}"
        );
    }
    // With only the royals, the side to move wins exactly when the royals touch.
    assert_eq!(solved("KK").statistics.wins, 168);
}

/// Every position of a closed game, both sides to move, from the index and the symmetries.
fn all_positions(index: &MaterialIndex) -> Vec<Position> {
    let mut out = Vec::new();
    for slot in 0..index.slots() {
        let p = index.position_at(slot);
        out.extend([p, p.mirrored(), p.flipped(), p.flipped().mirrored()]);
    }
    out
}

/// A deliberately naive solver: pass `t` decides the positions at distance exactly `t` from
/// the values of pass `t - 1`, forward over the moves, on unfolded positions in a hash map.
fn naive_solve(material: Material) -> HashMap<Position, Value> {
    let positions = all_positions(&MaterialIndex::new(material));
    let mut values: HashMap<Position, Value> = HashMap::new();
    for t in 0.. {
        let mut decided = Vec::new();
        for p in &positions {
            if values.contains_key(p) {
                continue;
            }
            let moves = p.legal_moves();
            let captures = moves.iter().any(|&m| p.captures_royal(m));
            let children: Vec<Option<Value>> = moves
                .iter()
                .filter(|&&m| !p.captures_royal(m))
                .map(|&m| values.get(&p.play_unchecked(m)).copied())
                .collect();
            let value = if t == 1 && captures {
                Some(Value::Win(1))
            } else if t % 2 == 1 && t > 1 && children.contains(&Some(Value::Loss(t - 1))) {
                Some(Value::Win(t))
            } else if t % 2 == 0 && !captures && children.iter().all(|c| matches!(c, Some(Value::Win(_)))) {
                Some(Value::Loss(t))
            } else {
                None
            };
            if let Some(v) = value {
                decided.push((*p, v));
            }
        }
        if decided.is_empty() && t > 1 {
            break;
        }
        values.extend(decided);
    }
    for p in positions {
        values.entry(p).or_insert(Value::Draw);
    }
    values
}

#[test]
fn retrograde_agrees_with_the_naive_solver() {
    for name in ["KK", "KKC", "KKF", "KKR", "KKT"] {
        let material: Material = name.parse().unwrap();
        let table = solved(name);
        let index = MaterialIndex::new(material);
        let naive = naive_solve(material);
        assert_eq!(naive.len() as u64, index.positions());
        let mut mismatches = 0;
        for (position, value) in &naive {
            let fast = table.value(index.index_of(position)).unwrap();
            if fast != *value {
                mismatches += 1;
                if mismatches < 5 {
                    eprintln!("{name} {position}: retrograde {fast}, naive {value}");
                }
            }
        }
        assert_eq!(mismatches, 0, "{name}");
    }
}

#[test]
fn the_longest_win_example_is_a_win_of_the_longest_distance() {
    for name in ["KK", "KKC", "KKF", "KKR", "KKT"] {
        let material: Material = name.parse().unwrap();
        let table = Table::new(solved(name).to_bytes()).unwrap();
        let naive = naive_solve(material);
        let longest = naive.values().filter(|v| matches!(v, Value::Win(_))).map(|v| v.dtw().unwrap()).max();
        let found = table.longest_win();
        assert_eq!(found.as_ref().map(|(dtw, _)| *dtw), longest, "{name}");
        if let Some((dtw, position)) = found {
            assert_eq!(naive[&position], Value::Win(dtw), "{name}: {position}");
        }
    }
}

#[test]
fn tables_do_not_depend_on_the_thread_count() {
    let material: Material = "KKCF".parse().unwrap();
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| solve(material, &Silent).table.to_bytes())
    };
    assert!(run(1) == run(2), "KKCF tables differ between 1 and 2 threads");
}

#[test]
fn solved_tables_pass_the_audit() {
    for material in Material::all_up_to(2) {
        let bytes = solve(material, &Silent).table.to_bytes();
        let table = Table::new(bytes).unwrap();
        table.verify_checksum().unwrap();
        let report = audit(&table, &Silent);
        assert_eq!(report.violations, 0, "{material}: {:?}", report.first);
        assert_eq!(report.slots, table.header().slots);
    }
}

#[test]
fn single_corruptions_are_caught_by_the_audit() {
    let solved = solved("KKCF");
    let clean = solved.to_bytes();
    let offset = Table::new(clean.clone()).unwrap().header().values_offset as usize;
    let slots = solved.values.len();
    let mut caught = 0;
    let trials = 200;
    for i in 0..trials {
        let slot = (i * 7_919 + 13) % slots;
        let mut bytes = clean.clone();
        let old = bytes[offset + slot];
        // A different, still well-formed value: another distance, or a draw.
        let new = if old == 0 {
            2
        } else if i % 3 == 0 {
            0
        } else {
            old + 2
        };
        bytes[offset + slot] = new;
        let table = Table::new(bytes).unwrap();
        assert!(table.verify_checksum().is_err(), "checksum misses slot {slot}");
        let report = audit(&table, &Silent);
        if report.violations > 0 {
            caught += 1;
        }
    }
    assert_eq!(caught, trials, "every corrupted value is found by the consistency check alone");
}

#[test]
fn canonical_positions_have_the_first_player_to_move() {
    let index = MaterialIndex::new("KKC".parse().unwrap());
    assert_eq!(index.position_at(0).turn(), Color::First);
}

/// Progress that panics at the `after`-th level, like a crash or a `kill -9` between two
/// levels (the checkpoint of the level before is on disk by then).
struct CrashAt {
    after: u64,
    phase: std::sync::Mutex<String>,
    levels: std::sync::atomic::AtomicU64,
}

impl shogi4_tablebase::Progress for CrashAt {
    fn phase(&self, name: &str, _: u64) {
        *self.phase.lock().unwrap() = name.to_string();
    }
    fn advance(&self, _: u64) {
        if self.phase.lock().unwrap().ends_with("levels")
            && self.levels.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 == self.after
        {
            panic!("simulated crash");
        }
    }
    fn finish_phase(&self) {}
}

#[test]
fn an_interrupted_solve_resumes_to_the_same_bytes() {
    use shogi4_tablebase::{solve_resumable, Checkpoints};
    let crash = |after| CrashAt { after, phase: Default::default(), levels: Default::default() };
    for name in ["KKCF", "KKRT"] {
        let material: Material = name.parse().unwrap();
        let straight = solved(name).to_bytes();
        let dir = tempfile::tempdir().unwrap();
        let checkpoints = Checkpoints::in_dir(dir.path(), material, std::time::Duration::ZERO);
        // Crashed twice (the second time in a resumed run), then finished.
        for after in [4, 9] {
            let run = std::panic::catch_unwind(|| solve_resumable(material, &crash(after), Some(&checkpoints)));
            assert!(run.is_err(), "{name}: the crash happened");
            assert!(checkpoints.path.exists(), "{name}: a checkpoint was left");
        }
        let resumed = solve_resumable(material, &Silent, Some(&checkpoints)).unwrap();
        assert!(resumed.table.to_bytes() == straight, "{name}: resumed table differs");
        // Another game's checkpoint under this name is refused, not resumed from.
        let other = Checkpoints::in_dir(dir.path(), "KKCR".parse().unwrap(), std::time::Duration::ZERO);
        std::fs::rename(&checkpoints.path, &other.path).unwrap();
        let refused = solve_resumable("KKCR".parse().unwrap(), &Silent, Some(&other)).unwrap_err();
        assert!(refused.to_string().contains(&format!("{name}'s, not KKCR's")), "{refused}");
    }
}

/// Distances of 254 plies and more take another path (a 255 byte, the exact distance in the
/// overflow list, levels driven from that list). No small game is that long, so the solver is
/// run with the byte's limit lowered: every value must still come out the same, through a
/// checkpoint and resume too.
#[test]
fn long_distances_through_the_overflow_list_are_exact() {
    use shogi4_tablebase::{solve_with_inline_limit, Checkpoints, OVERFLOW_CODE};
    for (name, limit) in [("KKCF", 9), ("KKCT", 2), ("KKFR", 20)] {
        let material: Material = name.parse().unwrap();
        let standard = solved(name);
        let low = solve_with_inline_limit(material, &Silent, None, limit).unwrap().table;
        let escapes = low.values.iter().filter(|&&b| b == OVERFLOW_CODE).count();
        assert!(escapes > 1000, "{name}: only {escapes} distances above {limit}");
        assert_eq!(escapes, low.overflow.len(), "{name}: one entry per 255 byte");
        assert!(low.overflow.windows(2).all(|w| w[0].0 < w[1].0), "{name}: entries sorted by slot");
        assert!(low.overflow.iter().all(|&(_, dtw)| dtw > limit));
        // Decoded here rather than by `SolvedTable::value`, which (rightly) insists that an
        // overflow entry is longer than a byte can hold.
        let long: HashMap<u64, u32> = low.overflow.iter().copied().collect();
        for (slot, &code) in low.values.iter().enumerate() {
            let value =
                if code == OVERFLOW_CODE { Value::from_dtw(long[&(slot as u64)]) } else { Value::decode_inline(code) };
            assert_eq!(Ok(value), standard.value(slot as u64), "{name} slot {slot}");
        }
        assert_eq!(low.statistics, standard.statistics, "{name}");

        // Crashed in the middle of the long levels, then resumed: the same values.
        let dir = tempfile::tempdir().unwrap();
        let checkpoints = Checkpoints::in_dir(dir.path(), material, std::time::Duration::ZERO);
        let crash = CrashAt { after: u64::from(limit) + 6, phase: Default::default(), levels: Default::default() };
        let run = std::panic::catch_unwind(|| solve_with_inline_limit(material, &crash, Some(&checkpoints), limit));
        assert!(run.is_err() && checkpoints.path.exists(), "{name}: crashed with a checkpoint");
        let resumed = solve_with_inline_limit(material, &Silent, Some(&checkpoints), limit).unwrap().table;
        assert!(resumed.values == low.values && resumed.overflow == low.overflow, "{name}: resumed differs");
    }
}

#[test]
fn solved_tables_are_byte_identical_to_the_recorded_ones() {
    assert!(Material::all_up_to(4).into_iter().all(|m| recorded_checksum(m).is_some()), "every game up to 4 pieces");
    // Every game up to 2 pieces and one 3-piece game here; the CLI's tests solve every game
    // up to 3 pieces on clusters against the same checksums.
    let mut materials = Material::all_up_to(2);
    materials.push("KKCFR".parse().unwrap());
    for material in materials {
        let bytes = solve(material, &Silent).table.to_bytes();
        let table = Table::new(bytes).unwrap();
        table.verify_checksum().unwrap();
        assert_eq!(Some(table.header().checksum), recorded_checksum(material), "{material}");
    }
}
