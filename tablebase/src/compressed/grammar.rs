//! The grammar (Re-Pair), built offline: the most frequent pairs of adjacent symbols become
//! new symbols, pass after pass, counted and replaced chunk by chunk in parallel.

use rayon::prelude::*;

use super::format::*;

/// Pairs made new symbols in one pass over the sequence, at least; see [`pairs_per_pass`].
pub(super) const PAIRS_PER_PASS: usize = 48;

/// A pass makes one new symbol per this many symbols so far, when that is more than
/// [`PAIRS_PER_PASS`].
pub(super) const SYMBOLS_PER_NEW_PAIR: usize = 24;

/// Symbols per chunk: pairs are counted and replaced within chunks (a pair across two chunks
/// stays apart), and a long sequence is counted on a sample of them.
pub(super) const COUNT_CHUNK: usize = 1 << 20;

/// Symbols per stretch or piece of a chunk, about, when its pairs are counted or replaced in
/// parallel.
pub(super) const STRETCH_SYMBOLS: usize = 1 << 17;

/// First symbols per parallel job at most when counting pairs grouped by their first symbol.
pub(super) const RANKED_FIRSTS: usize = 256;

/// Parallel jobs per thread when counting pairs grouped by their first symbol.
pub(super) const JOBS_PER_THREAD: usize = 8;

/// Symbols counted at most in one pass: a longer sequence is counted on a sample.
pub(super) const COUNTED_SYMBOLS: usize = 1 << 23;

/// A pair becomes a symbol only if it occurs this often (fewer do not pay for their rule).
pub(super) const MIN_PAIR_COUNT: u32 = 8;

/// Per symbol, the symbols that follow it in the sequence, with how often.
pub(super) type Followers = Vec<Vec<(u16, u32)>>;

/// How many pairs the pass that starts with `symbols` symbols makes new symbols: more as the
/// grammar grows. Every pass walks the whole sequence twice (counting, replacing), and late
/// passes change little of it, so fewer, larger passes save most of the grammar's time; the
/// pairs a larger pass takes further down its ranking are about as frequent as those the next
/// passes would have taken. Never more than [`MAX_SYMBOLS`] leaves room for.
pub(super) fn pairs_per_pass(symbols: usize) -> usize {
    PAIRS_PER_PASS.max(symbols / SYMBOLS_PER_NEW_PAIR).min(MAX_SYMBOLS - symbols)
}

/// The `chosen` pairs made new symbols: `pairs` and `lengths` grow by them. Returns, for each
/// symbol before them, the pair it starts as (second symbol, new symbol), as
/// [`replace_pairs`] takes it.
pub(super) fn adopt(
    chosen: &[(u16, u16)],
    pairs: &mut Vec<(u16, u16)>,
    lengths: &mut Vec<u64>,
) -> Vec<Option<(u16, u16)>> {
    let mut after = vec![None; lengths.len()];
    for &(a, b) in chosen {
        after[usize::from(a)] = Some((b, lengths.len() as u16));
        pairs.push((a, b));
        lengths.push(lengths[usize::from(a)] + lengths[usize::from(b)]);
    }
    after
}

/// The chunks of [`COUNT_CHUNK`] symbols of a sequence of `len` whose pairs a pass counts: a
/// long sequence is counted on an evenly spread sample of them, which picks the same frequent
/// pairs at a fraction of the cost.
pub(super) fn counted_chunks(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    chunks(len).step_by(counted_step(len))
}

/// Every how many chunks [`counted_chunks`] takes one.
pub(super) fn counted_step(len: usize) -> usize {
    (len / COUNTED_SYMBOLS).max(1)
}

/// Whether a pass counts every chunk of a sequence of `len`, not a sample: only then can its
/// counts be kept from pass to pass (see `PairCounts`).
pub(super) fn counted_whole(len: usize) -> bool {
    counted_step(len) == 1
}

/// The chunks of [`COUNT_CHUNK`] symbols of a sequence of `len`, within which pairs are
/// counted and replaced.
pub(super) fn chunks(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..len.div_ceil(COUNT_CHUNK)).map(move |c| c * COUNT_CHUNK..((c + 1) * COUNT_CHUNK).min(len))
}

/// The grammar's first pass over the leaves of `slots` slots (`fill(start, out)` writes those
/// of the slots from `start` on into `out`), without holding them all at once: the counted
/// chunks are made first and the pairs chosen from them, then each chunk is made again and
/// replaced before the next batch. The same pairs and the same sequence as a pass over the
/// whole leaf sequence, whose replacements never cross a chunk either; but a 5-piece table's
/// sequence is some 20 GB at two bytes a slot, and about 60% of that after the pass.
/// `pairs` and `lengths` grow by the pairs chosen.
pub(super) fn first_pass(
    slots: usize,
    fill: impl Fn(usize, &mut [u16]) + Sync,
    pairs: &mut Vec<(u16, u16)>,
    lengths: &mut Vec<u64>,
) -> Vec<u16> {
    let made = |range: std::ops::Range<usize>| {
        let mut chunk = vec![0u16; range.len()];
        fill(range.start, &mut chunk);
        chunk
    };
    let chosen = {
        let symbols = lengths.len();
        let counted: Vec<Vec<u16>> = counted_chunks(slots).collect::<Vec<_>>().into_par_iter().map(made).collect();
        let counted: Vec<&[u16]> = counted.iter().map(Vec::as_slice).collect();
        most_frequent_pairs_of(&counted, lengths, pairs_per_pass(symbols))
    };
    let packed = PackedPairs::new(&adopt(&chosen, pairs, lengths));
    /// Chunks made and replaced at once: what is held besides the sequence.
    const BATCH_CHUNKS: usize = 64;
    let chunks: Vec<std::ops::Range<usize>> = chunks(slots).collect();
    // Room for every slot, of which only what is written takes memory.
    let mut sequence = Vec::with_capacity(slots);
    for batch in chunks.chunks(BATCH_CHUNKS) {
        let replaced: Vec<Vec<u16>> = batch
            .par_iter()
            .map(|range| {
                let mut chunk = made(range.clone());
                let kept = replace_in_piece(&mut chunk, &packed, |_| ());
                chunk.truncate(kept);
                chunk
            })
            .collect();
        replaced.iter().for_each(|chunk| sequence.extend_from_slice(chunk));
    }
    sequence
}

/// Up to `wanted` pairs of adjacent symbols, most frequent first, each occurring at least
/// [`MIN_PAIR_COUNT`] times and standing for at most [`MAX_SYMBOL_SLOTS`] slots, no two
/// sharing a symbol (so that replacing them all in one pass counts what was counted). Runs
/// `aaaa` count as two `aa`, not three. `lengths` has the slots of every symbol so far.
pub(super) fn most_frequent_pairs(sequence: &[u16], lengths: &[u64], wanted: usize) -> Vec<(u16, u16)> {
    let chunks: Vec<&[u16]> = counted_chunks(sequence.len()).map(|c| &sequence[c]).collect();
    most_frequent_pairs_of(&chunks, lengths, wanted)
}

/// [`most_frequent_pairs`] of a sequence, from the chunks of it that [`counted_chunks`] names.
pub(super) fn most_frequent_pairs_of(chunks: &[&[u16]], lengths: &[u64], wanted: usize) -> Vec<(u16, u16)> {
    chosen_pairs(counted_pairs(chunks, lengths.len()), lengths, wanted)
}

/// [`most_frequent_pairs`] from `ranked`: every pair (`a·symbols + b`) counted at least
/// [`MIN_PAIR_COUNT`] times, with its count, in any order.
pub(super) fn chosen_pairs(mut ranked: Vec<(u32, u32)>, lengths: &[u64], wanted: usize) -> Vec<(u16, u16)> {
    let symbols = lengths.len();
    let by_count = |&(pair, n): &(u32, u32)| (std::cmp::Reverse(n), pair);
    // The choice rarely reads far down the ranking: the most frequent pairs are put in order
    // first, and the rest only if the choice runs through them.
    let ordered = (wanted * 32).min(ranked.len());
    if ordered < ranked.len() {
        ranked.select_nth_unstable_by_key(ordered, by_count);
    }
    ranked[..ordered].sort_unstable_by_key(by_count);
    let mut taken = vec![false; symbols];
    let mut chosen = Vec::new();
    for i in 0..ranked.len() {
        if i == ordered {
            ranked[ordered..].sort_unstable_by_key(by_count);
        }
        let pair = ranked[i].0 as usize;
        let (a, b) = ((pair / symbols) as u16, (pair % symbols) as u16);
        if taken[usize::from(a)]
            || taken[usize::from(b)]
            || lengths[usize::from(a)] + lengths[usize::from(b)] > MAX_SYMBOL_SLOTS
        {
            continue;
        }
        taken[usize::from(a)] = true;
        taken[usize::from(b)] = true;
        chosen.push((a, b));
        if chosen.len() == wanted {
            break;
        }
    }
    chosen
}

/// Every pair of adjacent symbols (`a·symbols + b`) that occurs at least [`MIN_PAIR_COUNT`]
/// times in these chunks (each walked apart), with its count, in no particular order.
pub(super) fn counted_pairs(chunks: &[&[u16]], symbols: usize) -> Vec<(u32, u32)> {
    let stretches: Vec<Stretch> = chunks.iter().flat_map(|chunk| Stretch::split(chunk, PairWalk::RunsApart)).collect();
    PairGroups::new(&stretches, symbols).counted(|a, seconds, kept| {
        let frequent = seconds.iter().filter(|&&(_, n)| n >= MIN_PAIR_COUNT);
        kept.extend(frequent.map(|&(b, n)| ((a * symbols + usize::from(b)) as u32, n)));
    })
}

/// Every pair's count in a sequence short enough to be counted whole, as
/// [`most_frequent_pairs`] counts it, kept from pass to pass: a pass changes the sequence only
/// around the pairs it replaces, so after one that replaces few, the counts are brought up to
/// date there (see [`PairCounts::replaced`]) instead of counted again.
///
/// The walk of a chunk counts `⌊L/2⌋` pairs `aa` in a run of `L` symbols `a`, and one pair at
/// every change of symbol. Over the sequence taken whole, without chunks, those counts are a
/// sum over its runs; the chunks' ends cut a few of them off.
pub(super) struct PairCounts {
    /// By pair, `a·MAX_SYMBOLS + b`; only pairs of symbols below `symbols` are ever nonzero,
    /// so only those pages are touched (the rest stay the system's zero pages).
    counts: Vec<u32>,
    /// Symbols when last counted or brought up to date.
    symbols: usize,
    /// The pairs that have reached [`MIN_PAIR_COUNT`], each once (some may have fallen below).
    frequent: Vec<u32>,
    /// Whether a pair is in `frequent`, a bit each.
    listed: Vec<u64>,
}

/// A pass that replaces more than one pair per this many symbols is followed by a count of
/// the whole sequence: bringing the counts up to date around every replaced pair would cost
/// more.
pub(super) const SYMBOLS_PER_UPDATED_SITE: usize = 8;

impl PairCounts {
    /// The counts of `sequence`, of `symbols` symbols, counted whole.
    pub(super) fn of(sequence: &[u16], symbols: usize) -> PairCounts {
        let pairs = MAX_SYMBOLS * MAX_SYMBOLS;
        let mut counts =
            PairCounts { counts: vec![0; pairs], symbols: 0, frequent: Vec::new(), listed: vec![0; pairs / 64] };
        counts.count(sequence, symbols);
        counts
    }

    /// Counts `sequence` anew.
    fn count(&mut self, sequence: &[u16], symbols: usize) {
        debug_assert!(counted_whole(sequence.len()), "counted whole, not on a sample");
        for a in 0..self.symbols {
            self.counts[a * MAX_SYMBOLS..][..self.symbols].fill(0);
        }
        self.symbols = symbols;
        self.listed.fill(0);
        self.frequent.clear();
        let stretches: Vec<Stretch> =
            chunks(sequence.len()).flat_map(|c| Stretch::split(&sequence[c], PairWalk::RunsApart)).collect();
        let every = PairGroups::new(&stretches, symbols).counted(|a, seconds, kept| {
            kept.extend(seconds.iter().map(|&(b, n)| (pair_at(a as u16, b), n)));
        });
        for (pair, n) in every {
            self.counts[pair as usize] = n;
            self.list_if_frequent(pair);
        }
    }

    fn list_if_frequent(&mut self, pair: u32) {
        let (word, bit) = (pair as usize / 64, 1u64 << (pair % 64));
        if self.counts[pair as usize] >= MIN_PAIR_COUNT && self.listed[word] & bit == 0 {
            self.listed[word] |= bit;
            self.frequent.push(pair);
        }
    }

    /// Every pair counted at least [`MIN_PAIR_COUNT`] times, as [`counted_pairs`] lists them.
    pub(super) fn ranked(&mut self, symbols: usize) -> Vec<(u32, u32)> {
        let (counts, listed) = (&self.counts, &mut self.listed);
        self.frequent.retain(|&pair| {
            let frequent = counts[pair as usize] >= MIN_PAIR_COUNT;
            if !frequent {
                listed[pair as usize / 64] &= !(1u64 << (pair % 64));
            }
            frequent
        });
        let ranked = self.frequent.iter().map(|&pair| {
            let (a, b) = (pair as usize / MAX_SYMBOLS, pair as usize % MAX_SYMBOLS);
            ((a * symbols + b) as u32, counts[pair as usize])
        });
        ranked.collect()
    }

    /// The counts of `new`, which a pass made of `old` by replacing the pairs that start at
    /// `sites` (in order), of `symbols` symbols now.
    ///
    /// Only segments around the sites change: each runs between two edges where two different
    /// symbols that no replaced pair touched meet (or an end of the sequence). Such an edge is
    /// a change of symbol before the pass and after it, and a whole walk's counts are the sum
    /// of what it counts between such edges and the pairs across them; so they change by what
    /// each segment counts after the pass less what it counted before. The chunks' ends then
    /// cut other pairs from the new sequence than from the old.
    pub(super) fn replaced(&mut self, old: &[u16], new: &[u16], sites: &[u32], symbols: usize) {
        if sites.len() * SYMBOLS_PER_UPDATED_SITE > new.len() {
            self.count(new, symbols);
        } else {
            self.update(old, new, sites, symbols);
        }
    }

    /// [`PairCounts::replaced`] by bringing the counts up to date around the sites.
    fn update(&mut self, old: &[u16], new: &[u16], sites: &[u32], symbols: usize) {
        self.symbols = symbols;
        let mut changes = segment_changes(old, new, sites);
        cut_by_chunk_ends(old, |a, b, n| changes.push((pair_at(a, b), n)));
        cut_by_chunk_ends(new, |a, b, n| changes.push((pair_at(a, b), -n)));
        // In any order: a count may pass below zero on the way, never at the end.
        for &(pair, n) in &changes {
            let count = &mut self.counts[pair as usize];
            *count = count.wrapping_add_signed(n as i32);
        }
        for &(pair, _) in &changes {
            debug_assert!(self.counts[pair as usize] as usize <= new.len(), "a count below zero");
            self.list_if_frequent(pair);
        }
    }
}

/// The index of the pair `ab` in [`PairCounts`].
pub(super) fn pair_at(a: u16, b: u16) -> u32 {
    (usize::from(a) * MAX_SYMBOLS + usize::from(b)) as u32
}

/// What a walk without chunks counts in `run` (see [`PairCounts`]), pair by pair.
pub(super) fn counted_in(run: &[u16], mut count: impl FnMut(u16, u16, i64)) {
    let mut start = 0;
    while start < run.len() {
        let a = run[start];
        let end = run[start..].iter().position(|&x| x != a).map_or(run.len(), |n| start + n);
        if end - start >= 2 {
            count(a, a, ((end - start) / 2) as i64);
        }
        if end < run.len() {
            count(a, run[end], 1);
        }
        start = end;
    }
}

/// For each chunk's end in `sequence`, what a walk without chunks counts there and the
/// chunks' walks do not: the pair across it, or, inside a run, a pair `aa` when the run's
/// part before it (from the run's start) and its part up to the next chunk's end both have
/// odd lengths. Summed, the parts of a run that crosses several ends lose what they must.
pub(super) fn cut_by_chunk_ends(sequence: &[u16], mut cut: impl FnMut(u16, u16, i64)) {
    for end in (COUNT_CHUNK..sequence.len()).step_by(COUNT_CHUNK) {
        let (a, b) = (sequence[end - 1], sequence[end]);
        if a != b {
            cut(a, b, 1);
            continue;
        }
        let run_start = sequence[..end].iter().rposition(|&x| x != a).map_or(0, |i| i + 1);
        let next_end = (end + COUNT_CHUNK).min(sequence.len());
        let run_end = sequence[end..next_end].iter().position(|&x| x != a).map_or(next_end, |n| end + n);
        let (before, after) = ((end - run_start) as i64, (run_end - end) as i64);
        let lost = (before + after) / 2 - before / 2 - after / 2;
        if lost > 0 {
            cut(a, a, lost);
        }
    }
}

/// How the counts of a whole walk change around `sites` (see [`PairCounts::replaced`]), as
/// (pair, change) in any order.
pub(super) fn segment_changes(old: &[u16], new: &[u16], sites: &[u32]) -> Vec<(u32, i64)> {
    let mut touched = vec![0u64; old.len() / 64 + 1];
    for &site in sites {
        for at in [site as usize, site as usize + 1] {
            touched[at / 64] |= 1 << (at % 64);
        }
    }
    let is_touched = |at: usize| touched[at / 64] & (1 << (at % 64)) != 0;
    let is_edge =
        |at: usize| at == 0 || at == old.len() || (!is_touched(at - 1) && !is_touched(at) && old[at - 1] != old[at]);
    // Where a position of `old` that no pair touched stands in `new`.
    let moved = |at: usize| at - sites.partition_point(|&s| (s as usize) < at);
    // Each job takes the segments whose first site is among its own.
    let per_job = sites.len().div_ceil(rayon::current_num_threads() * JOBS_PER_THREAD).max(1);
    (0..sites.len().div_ceil(per_job))
        .into_par_iter()
        .flat_map_iter(|job| {
            let (first, last) = (job * per_job, ((job + 1) * per_job).min(sites.len()));
            let mut changes = Vec::new();
            let mut k = first;
            while k < last {
                let site = sites[k] as usize;
                let start = (0..=site).rev().find(|&at| is_edge(at)).expect("0 is an edge");
                let end = (site + 2..=old.len()).find(|&at| is_edge(at)).expect("the end is an edge");
                let earlier_jobs = k == first && k > 0 && start <= sites[k - 1] as usize;
                if !earlier_jobs {
                    counted_in(&old[start..end], |a, b, n| changes.push((pair_at(a, b), -n)));
                    counted_in(&new[moved(start)..moved(end)], |a, b, n| changes.push((pair_at(a, b), n)));
                }
                k += sites[k..].partition_point(|&s| (s as usize) < end);
            }
            changes
        })
        .collect()
}

/// Per symbol, the symbols that follow it anywhere in the sequence, in symbol order, with
/// how often.
pub(super) fn followers(sequence: &[u16], symbols: usize) -> Followers {
    let stretches = Stretch::split(sequence, PairWalk::Every);
    PairGroups::new(&stretches, symbols).counted(|_, seconds, kept| {
        let mut row = seconds.to_vec();
        row.sort_unstable();
        kept.push(row);
    })
}

/// The pairs of a walk of some stretches, grouped by their first symbol, so that each first
/// symbol's pairs are counted in an array of one row, which stays in the cache. (Counting into
/// one dense array of every pair, its length squared, missed the cache on most increments
/// and took most of a small table's compression.)
pub(super) struct PairGroups {
    /// Per stretch, where each first symbol's group ends (after a leading 0), and the groups:
    /// the second symbols of its pairs.
    stretches: Vec<(Vec<u32>, Vec<u16>)>,
    symbols: usize,
}

impl PairGroups {
    fn new(stretches: &[Stretch], symbols: usize) -> PairGroups {
        let stretches = stretches
            .par_iter()
            .map(|stretch| {
                let mut group_end = vec![0u32; symbols + 1];
                stretch.for_each_pair(|a, _| group_end[usize::from(a) + 1] += 1);
                for a in 0..symbols {
                    group_end[a + 1] += group_end[a];
                }
                let mut seconds = vec![0u16; group_end[symbols] as usize];
                let mut next = group_end.clone();
                stretch.for_each_pair(|a, b| {
                    seconds[next[usize::from(a)] as usize] = b;
                    next[usize::from(a)] += 1;
                });
                (group_end, seconds)
            })
            .collect();
        PairGroups { stretches, symbols }
    }

    /// The first symbols cut into runs of about equal numbers of pairs, one parallel job each:
    /// a few symbols hold most pairs in the early passes, when there are too few symbols for
    /// runs of equal length to keep every core busy.
    fn jobs(&self) -> Vec<std::ops::Range<usize>> {
        let pairs_of =
            |a: usize| -> usize { self.stretches.iter().map(|(end, _)| (end[a + 1] - end[a]) as usize).sum() };
        let pairs: Vec<usize> = (0..self.symbols).map(pairs_of).collect();
        let per_job = (pairs.iter().sum::<usize>() / (rayon::current_num_threads() * JOBS_PER_THREAD)).max(1);
        let mut jobs = Vec::new();
        let (mut start, mut taken) = (0, 0);
        for (a, &n) in pairs.iter().enumerate() {
            taken += n;
            if taken >= per_job || a + 1 - start == RANKED_FIRSTS {
                jobs.push(start..a + 1);
                (start, taken) = (a + 1, 0);
            }
        }
        if start < self.symbols {
            jobs.push(start..self.symbols);
        }
        jobs
    }

    /// What `keep` adds to the list for each first symbol's counted pairs (each second symbol
    /// once, with its count, in the order first met), first symbol after first symbol.
    fn counted<T: Send>(&self, keep: impl Fn(usize, &[(u16, u32)], &mut Vec<T>) + Sync) -> Vec<T> {
        self.jobs()
            .into_par_iter()
            .flat_map_iter(|firsts| {
                let mut row = vec![0u32; self.symbols];
                let (mut seconds, mut kept) = (Vec::new(), Vec::new());
                for a in firsts {
                    let groups =
                        || self.stretches.iter().map(|(end, seconds)| &seconds[end[a] as usize..end[a + 1] as usize]);
                    for group in groups() {
                        group.iter().for_each(|&b| row[usize::from(b)] += 1);
                    }
                    seconds.clear();
                    for group in groups() {
                        for &b in group {
                            let n = std::mem::take(&mut row[usize::from(b)]);
                            if n > 0 {
                                seconds.push((b, n));
                            }
                        }
                    }
                    keep(a, &seconds, &mut kept);
                }
                kept
            })
            .collect()
    }
}

/// Which pairs a walk of a stretch visits.
#[derive(Clone, Copy)]
pub(super) enum PairWalk {
    /// Every pair of adjacent symbols.
    Every,
    /// As the grammar replaces them: within a run, pairs do not overlap (`aaaa` is two `aa`).
    RunsApart,
}

/// Part of a sequence whose pairs can be counted apart from the rest: it starts at the
/// sequence's start or where the symbol changes, so a walk of the whole sequence visits the
/// same pairs in it.
pub(super) struct Stretch<'a> {
    sequence: &'a [u16],
    start: usize,
    end: usize,
    walk: PairWalk,
}

impl<'a> Stretch<'a> {
    /// The sequence in stretches of about [`STRETCH_SYMBOLS`] symbols, each ending where the
    /// symbol changes (a walk never leaps from within a run over that change).
    fn split(sequence: &'a [u16], walk: PairWalk) -> Vec<Stretch<'a>> {
        let mut start = 0;
        piece_ends(sequence.len(), |end| sequence[end - 1] != sequence[end])
            .into_iter()
            .map(|end| Stretch { sequence, start: std::mem::replace(&mut start, end), end, walk })
            .collect()
    }

    /// Calls `visit` with every pair of the walk that starts in the stretch.
    fn for_each_pair(&self, mut visit: impl FnMut(u16, u16)) {
        let sequence = self.sequence;
        let mut i = self.start;
        while i < self.end && i + 1 < sequence.len() {
            let (a, b) = (sequence[i], sequence[i + 1]);
            visit(a, b);
            i += match self.walk {
                PairWalk::RunsApart if a == b && sequence.get(i + 2) == Some(&a) => 2,
                _ => 1,
            };
        }
    }
}

/// Where `len` symbols are cut into pieces of about [`STRETCH_SYMBOLS`] for parallel work:
/// each piece's end, moved on from its nominal place to the first where `may_end(end)` (a
/// piece ending before symbol `end`) holds, or to `len`.
pub(super) fn piece_ends(len: usize, may_end: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut start = 0;
    while start < len {
        let mut end = (start + STRETCH_SYMBOLS).min(len);
        while end < len && !may_end(end) {
            end += 1;
        }
        ends.push(end);
        start = end;
    }
    ends
}

/// The sequence with every chosen pair replaced by its symbol, left to right within chunks
/// of [`COUNT_CHUNK`] symbols (a pair across two chunks stays apart); `after[a]` is the pair
/// that starts with `a` (no two chosen pairs share a symbol), as (second, new symbol).
pub(super) fn replace_pairs(sequence: &mut Vec<u16>, after: &[Option<(u16, u16)>]) {
    let ends = replacement_pieces(sequence, after);
    let packed = PackedPairs::new(after);
    let kept: Vec<usize> =
        cut_at(sequence, &ends).into_par_iter().map(|piece| replace_in_piece(piece, &packed, |_| ())).collect();
    close_gaps(sequence, &ends, &kept);
}

/// [`replace_pairs`] of `source` into `out` (its old content dropped); returns where each
/// replaced pair started in `source`, in order.
pub(super) fn replaced_noting(source: &[u16], after: &[Option<(u16, u16)>], out: &mut Vec<u16>) -> Vec<u32> {
    let ends = replacement_pieces(source, after);
    let packed = PackedPairs::new(after);
    out.clear();
    out.resize(source.len(), 0);
    let (kept, sites): (Vec<usize>, Vec<Vec<u32>>) = cut_at(out, &ends)
        .into_par_iter()
        .enumerate()
        .map(|(i, piece)| {
            let start = if i == 0 { 0 } else { ends[i - 1] };
            // Copied a piece at a time, so that the replacement finds it in the cache.
            piece.copy_from_slice(&source[start..start + piece.len()]);
            let mut sites = Vec::new();
            let kept = replace_in_piece(piece, &packed, |at| sites.push((start + at) as u32));
            (kept, sites)
        })
        .unzip();
    close_gaps(out, &ends, &kept);
    sites.concat()
}

/// Where [`replace_pairs`] cuts a sequence into parallel pieces of about [`STRETCH_SYMBOLS`]
/// symbols within its chunks, each ending after a symbol that starts no chosen pair: a walk
/// of the whole chunk cannot take that symbol and the next one together, so it replaces each
/// piece as the piece's own walk does.
pub(super) fn replacement_pieces(sequence: &[u16], after: &[Option<(u16, u16)>]) -> Vec<usize> {
    let mut ends = Vec::new();
    for (c, chunk) in sequence.chunks(COUNT_CHUNK).enumerate() {
        let chunk_ends = piece_ends(chunk.len(), |end| after[usize::from(chunk[end - 1])].is_none());
        ends.extend(chunk_ends.into_iter().map(|end| c * COUNT_CHUNK + end));
    }
    ends
}

/// Closes the gaps that pieces ending at `ends` left behind, each having kept its first
/// `kept` symbols.
pub(super) fn close_gaps(sequence: &mut Vec<u16>, ends: &[usize], kept: &[usize]) {
    let (mut start, mut written) = (0, 0);
    for (&end, &kept) in ends.iter().zip(kept) {
        sequence.copy_within(start..start + kept, written);
        written += kept;
        start = end;
    }
    sequence.truncate(written);
}

/// The chosen pairs as the replacement reads them: per symbol, the second symbol of the pair
/// it starts above the new symbol, or all ones where it starts none (no symbol is `0xffff`),
/// so that one comparison with the next symbol decides (about a quarter faster than `Option`
/// pairs tested in two steps, the same bytes: `docs/measurements.md`, "Figures once kept in
/// doc comments").
pub(super) struct PackedPairs(Vec<u32>);

impl PackedPairs {
    fn new(after: &[Option<(u16, u16)>]) -> PackedPairs {
        PackedPairs(after.iter().map(|a| a.map_or(u32::MAX, |(b, s)| u32::from(b) << 16 | u32::from(s))).collect())
    }
}

/// Replaces the chosen pairs of `piece` in place, left to right; returns how many symbols
/// remain (at its start). `note` is told where each replaced pair started.
pub(super) fn replace_in_piece(piece: &mut [u16], after: &PackedPairs, mut note: impl FnMut(usize)) -> usize {
    let (mut read, mut write) = (0, 0);
    while read + 1 < piece.len() {
        let symbol = piece[read];
        let pair = after.0[usize::from(symbol)];
        if (pair >> 16) as u16 == piece[read + 1] {
            note(read);
            piece[write] = pair as u16;
            read += 2;
        } else {
            piece[write] = symbol;
            read += 1;
        }
        write += 1;
    }
    if read < piece.len() {
        piece[write] = piece[read];
        write += 1;
    }
    write
}

#[cfg(test)]
mod tests;
