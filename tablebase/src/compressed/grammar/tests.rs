//! The grammar's parallel counting and replacing against plain left-to-right walks of each
//! chunk, on sequences whose runs cross the stretches' and pieces' ends.

use super::*;

/// A sequence of `len` symbols below `symbols`, with runs of 1 to 40.
fn runs(len: usize, symbols: u16, mut seed: u64) -> Vec<u16> {
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut sequence = Vec::with_capacity(len);
    while sequence.len() < len {
        let symbol = (next() % u64::from(symbols)) as u16;
        let run = (1 + next() % 40) as usize;
        sequence.extend(std::iter::repeat_n(symbol, run.min(len - sequence.len())));
    }
    sequence
}

/// Every pair's count, one walk per chunk, as [`most_frequent_pairs`] must count them.
fn counted_plainly(sequence: &[u16], symbols: usize) -> Vec<u32> {
    let mut counts = vec![0u32; symbols * symbols];
    for chunk in sequence.chunks(COUNT_CHUNK).step_by((sequence.len() / COUNTED_SYMBOLS).max(1)) {
        let mut i = 0;
        while i + 1 < chunk.len() {
            let (a, b) = (chunk[i], chunk[i + 1]);
            counts[usize::from(a) * symbols + usize::from(b)] += 1;
            i += if a == b && chunk.get(i + 2) == Some(&a) { 2 } else { 1 };
        }
    }
    counts
}

#[test]
fn pairs_are_counted_as_one_walk_of_each_chunk_would() {
    for (seed, symbols) in [(1, 3usize), (2, 5), (3, 40)] {
        let sequence = runs(2 * COUNT_CHUNK + 12_345, symbols as u16, seed);
        let plain = counted_plainly(&sequence, symbols);
        let mut expected: Vec<(u32, u32)> =
            (0..plain.len()).filter(|&p| plain[p] >= MIN_PAIR_COUNT).map(|p| (p as u32, plain[p])).collect();
        let chunks: Vec<&[u16]> = counted_chunks(sequence.len()).map(|c| &sequence[c]).collect();
        let mut counted = counted_pairs(&chunks, symbols);
        counted.sort_unstable();
        expected.sort_unstable();
        assert!(!expected.is_empty());
        assert_eq!(counted, expected, "seed {seed}");
    }
}

#[test]
fn the_first_pass_made_chunk_by_chunk_is_a_pass_over_the_whole_sequence() {
    // Short enough to be counted whole, and long enough to be counted on a sample.
    for (seed, len) in [(4, 3 * COUNT_CHUNK + 777), (5, 2 * COUNTED_SYMBOLS + 5 * COUNT_CHUNK / 2)] {
        let leaves = 40;
        let whole = runs(len, leaves as u16, seed);
        let lengths = vec![1u64; leaves];
        let chosen = most_frequent_pairs(&whole, &lengths, pairs_per_pass(leaves));
        assert!(chosen.len() > 4, "seed {seed}");
        let mut after = vec![None; leaves];
        for (i, &(a, b)) in chosen.iter().enumerate() {
            after[usize::from(a)] = Some((b, (leaves + i) as u16));
        }
        let mut expected = whole.clone();
        replace_pairs(&mut expected, &after);

        let (mut pairs, mut lengths) = (Vec::new(), lengths);
        let fill = |start: usize, out: &mut [u16]| out.copy_from_slice(&whole[start..start + out.len()]);
        let sequence = first_pass(len, fill, &mut pairs, &mut lengths);
        assert_eq!(pairs, chosen, "seed {seed}");
        assert_eq!(lengths.len(), leaves + chosen.len());
        assert!(sequence == expected, "seed {seed}: the sequences differ");
    }
}

/// The most frequent pairs that share no symbol, from a ranking sorted whole.
fn chosen_plainly(sequence: &[u16], symbols: usize, wanted: usize) -> Vec<(u16, u16)> {
    let counts = counted_plainly(sequence, symbols);
    let mut ranked: Vec<usize> = (0..counts.len()).filter(|&p| counts[p] >= MIN_PAIR_COUNT).collect();
    ranked.sort_by_key(|&p| (std::cmp::Reverse(counts[p]), p));
    let mut taken = vec![false; symbols];
    let mut chosen = Vec::new();
    for p in ranked {
        let (a, b) = (p / symbols, p % symbols);
        if !taken[a] && !taken[b] && chosen.len() < wanted {
            (taken[a], taken[b]) = (true, true);
            chosen.push((a as u16, b as u16));
        }
    }
    chosen
}

#[test]
fn the_most_frequent_pairs_are_chosen_even_past_many_conflicts() {
    // Symbol 0 between every other symbol: hundreds of frequent pairs with 0 come first
    // and conflict once one is taken; the pairs of the runs of 1, 2, ... come after.
    let symbols = 400;
    let mut sequence = Vec::new();
    for round in 0..20 {
        for _ in 0..3 {
            for x in 1..symbols as u16 {
                sequence.extend([0, x]);
            }
        }
        for x in 1..symbols as u16 / 2 {
            sequence.extend([2 * x, 2 * x + 1, 2 * x, 2 * x + 1]);
        }
        sequence.push(round);
    }
    let chosen = most_frequent_pairs(&sequence, &vec![1; symbols], 8);
    assert_eq!(chosen, chosen_plainly(&sequence, symbols, 8));
    assert_eq!(chosen.len(), 8);
    for (seed, symbols) in [(6, 3usize), (7, 60)] {
        let sequence = runs(COUNT_CHUNK + 4_321, symbols as u16, seed);
        let chosen = most_frequent_pairs(&sequence, &vec![1; symbols], 8);
        assert_eq!(chosen, chosen_plainly(&sequence, symbols, 8), "seed {seed}");
    }
}

#[test]
fn kept_counts_are_each_pass_counted_anew() {
    for (seed, symbols) in [(8, 3u16), (9, 12), (10, 40)] {
        let mut sequence = runs(2 * COUNT_CHUNK + 54_321, symbols, seed);
        // A run longer than a chunk, across two chunks' ends.
        sequence[COUNT_CHUNK / 2..2 * COUNT_CHUNK + 101].fill(1);
        let mut lengths = vec![1u64; usize::from(symbols)];
        let (mut pairs, mut spare) = (Vec::new(), Vec::new());
        let mut counts = PairCounts::of(&sequence, lengths.len());
        for pass in 0..8 {
            let chosen = chosen_pairs(counts.ranked(lengths.len()), &lengths, 4);
            assert_eq!(chosen, most_frequent_pairs(&sequence, &lengths, 4), "seed {seed}, pass {pass}");
            assert!(!chosen.is_empty());
            let after = adopt(&chosen, &mut pairs, &mut lengths);
            let sites = replaced_noting(&sequence, &after, &mut spare);
            let mut in_place = sequence.clone();
            replace_pairs(&mut in_place, &after);
            assert!(spare == in_place, "seed {seed}, pass {pass}: the sequences differ");
            assert!(sites.iter().all(|&s| after[usize::from(sequence[s as usize])].is_some()));
            // Updated whatever the share of sites, so that every pass tests the update.
            counts.update(&sequence, &spare, &sites, lengths.len());
            std::mem::swap(&mut sequence, &mut spare);
            let n = lengths.len();
            let plain = counted_plainly(&sequence, n);
            for (a, b) in (0..n).flat_map(|a| (0..n).map(move |b| (a, b))) {
                let kept = counts.counts[pair_at(a as u16, b as u16) as usize];
                assert_eq!(kept, plain[a * n + b], "seed {seed}, pass {pass}: pair {a} {b}");
            }
        }
    }
}

#[test]
fn followers_are_every_adjacent_pair_counted() {
    for (seed, symbols) in [(4, 3usize), (5, 40)] {
        let sequence = runs(3 * STRETCH_SYMBOLS + 777, symbols as u16, seed);
        let mut plain = vec![vec![0u32; symbols]; symbols];
        sequence.windows(2).for_each(|w| plain[usize::from(w[0])][usize::from(w[1])] += 1);
        let plain: Followers = plain
            .iter()
            .map(|row| row.iter().enumerate().filter(|&(_, &n)| n > 0).map(|(y, &n)| (y as u16, n)).collect())
            .collect();
        assert!(followers(&sequence, symbols) == plain, "seed {seed}");
    }
}

#[test]
fn pairs_are_replaced_as_one_walk_of_each_chunk_would() {
    for (seed, symbols) in [(1, 3u16), (2, 5), (3, 40)] {
        let sequence = runs(2 * COUNT_CHUNK + 12_345, symbols, seed);
        let chosen = most_frequent_pairs(&sequence, &vec![1; usize::from(symbols)], 4);
        assert!(!chosen.is_empty());
        let mut after = vec![None; usize::from(symbols)];
        for (i, &(a, b)) in chosen.iter().enumerate() {
            after[usize::from(a)] = Some((b, symbols + i as u16));
        }
        let mut replaced = sequence.clone();
        replace_pairs(&mut replaced, &after);
        let mut plain = Vec::new();
        for chunk in sequence.chunks(COUNT_CHUNK) {
            let mut i = 0;
            while i < chunk.len() {
                match (after[usize::from(chunk[i])], chunk.get(i + 1)) {
                    (Some((b, s)), Some(&next)) if next == b => {
                        plain.push(s);
                        i += 2;
                    }
                    _ => {
                        plain.push(chunk[i]);
                        i += 1;
                    }
                }
            }
        }
        assert!(replaced == plain, "seed {seed}: replaced differently");
    }
}
