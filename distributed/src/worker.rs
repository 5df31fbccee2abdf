//! One timely worker's part of a solve: the dataflow that carries updates, notes and table
//! blocks between workers, and the sequence of rounds every worker runs in step.
//!
//! Every worker runs the same rounds in the same order: a round ends with [`Network::round`],
//! which returns once timely's progress tracking shows that everything any worker sent in
//! the round has been delivered and applied, together with every worker's note for the round.
//! All decisions that must agree (resume level, end of a level, checkpoint, end of the solve,
//! a failure anywhere) are taken from those notes, which every worker sees alike.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use shogi4_engine::MaterialIndex;
use shogi4_tablebase::{Statistics, TableWriter};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Exchange, Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

use crate::checkpoint::{self, Identity};
use crate::share::{Partition, Scanned, Share};
use crate::time::Time;
use crate::{ClusterError, Event, Finished, Job, LevelSummary, Topology};

/// What a worker tells every worker at the end of a round.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Note {
    worker: usize,
    /// Slots of the level found (or, in the round after init, wins in 1).
    found: u64,
    edges: u64,
    exchanged: u64,
    network: u64,
    /// This worker has nothing more to send for the current step.
    done: bool,
    /// This worker's clock says a checkpoint is due.
    checkpoint_due: bool,
    /// Levels this worker can resume from (the first round only).
    restorable: Vec<u32>,
    /// Its share's statistics and overflow entries (before the table is written).
    statistics: Option<Statistics>,
    overflow: Vec<(u64, u32)>,
    /// Why this worker failed, if it did: every worker then stops.
    problem: Option<String>,
}

/// A run of a share's value bytes and the slot of the first.
type ValueRun = (u64, Vec<u8>);
type Notes = Rc<RefCell<Vec<(Time, Note)>>>;
type ValueRuns = Rc<RefCell<Vec<ValueRun>>>;

/// The dataflow's inputs and what it delivers, for one worker.
struct Network {
    /// Predecessor updates: slots, each sent to its owner.
    updates: InputHandle<Time, CapacityContainerBuilder<Vec<u64>>>,
    notes: InputHandle<Time, CapacityContainerBuilder<Vec<Note>>>,
    blocks: InputHandle<Time, CapacityContainerBuilder<Vec<ValueRun>>>,
    probe: ProbeHandle<Time>,
    inbox: Notes,
    received_blocks: ValueRuns,
    /// The current level and round.
    time: Time,
}

impl Network {
    /// Builds the dataflow: updates to their slot's owner, applied there; notes to everyone;
    /// table blocks to worker 0. One probe watches all three.
    fn build(worker: &mut Worker, share: Rc<RefCell<Share>>, partition: Partition) -> Network {
        let mut updates = InputHandle::new();
        let mut notes = InputHandle::new();
        let mut blocks = InputHandle::new();
        let probe = ProbeHandle::new();
        let inbox: Notes = Rc::default();
        let received_blocks: ValueRuns = Rc::default();
        let (inbox_in, blocks_in) = (inbox.clone(), received_blocks.clone());
        worker.dataflow::<Time, _, _>(|scope| {
            scope
                .input_from(&mut updates)
                .exchange(move |&slot: &u64| partition.owner(slot) as u64)
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(Pipeline, "Apply", move |_, _| {
                    move |input, _| {
                        input.for_each(|capability, data: &mut Vec<u64>| {
                            // Sent from an input at one time: the stamp is that time alone.
                            let level = capability.least().expect("an input's message has its time").level;
                            let mut share = share.borrow_mut();
                            for &slot in data.iter() {
                                share.apply(slot, level);
                            }
                        })
                    }
                })
                .probe_with(&probe);
            scope
                .input_from(&mut notes)
                .broadcast()
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(Pipeline, "Notes", move |_, _| {
                    move |input, _| {
                        input.for_each(|capability, data: &mut Vec<Note>| {
                            // Notes are sent from an input at its current time: never stampless.
                            let time = capability.least().copied().unwrap_or_default();
                            inbox_in.borrow_mut().extend(data.drain(..).map(|note| (time, note)))
                        })
                    }
                })
                .probe_with(&probe);
            scope
                .input_from(&mut blocks)
                .exchange(|_: &ValueRun| 0)
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(Pipeline, "ValueRuns", move |_, _| {
                    move |input, _| input.for_each(|_, data: &mut Vec<ValueRun>| blocks_in.borrow_mut().append(data))
                })
                .probe_with(&probe);
        });
        Network { updates, notes, blocks, probe, inbox, received_blocks, time: Time::default() }
    }

    /// Enters level `n` (no lower than the current one): what is sent from now on is of it.
    fn enter_level(&mut self, n: u32) {
        debug_assert!(n >= self.time.level, "levels only grow");
        self.advance_to(Time { level: n, ..self.time });
    }

    fn advance_to(&mut self, time: Time) {
        self.updates.advance_to(time);
        self.notes.advance_to(time);
        self.blocks.advance_to(time);
        self.time = time;
    }

    /// Ends the current round with this worker's `note`: waits until everything sent in the
    /// round has been applied everywhere, and returns every worker's note, in worker order;
    /// an error if any worker reported a problem.
    fn round(&mut self, worker: &mut Worker, note: Note) -> Result<Vec<Note>, ClusterError> {
        self.notes.send(note);
        let now = self.time;
        self.advance_to(Time { round: now.round + 1, ..now });
        let probe = &self.probe;
        worker.step_or_park_while(Some(Duration::from_millis(1)), || probe.less_equal(&now));
        // Faster workers may already have sent notes of the next round.
        let mut inbox = self.inbox.borrow_mut();
        let (this_round, later): (Vec<_>, Vec<_>) = inbox.drain(..).partition(|(time, _)| *time == now);
        *inbox = later;
        drop(inbox);
        let mut notes: Vec<Note> = this_round.into_iter().map(|(_, note)| note).collect();
        notes.sort_by_key(|n| n.worker);
        debug_assert_eq!(notes.len(), worker.peers());
        match notes.iter().find(|n| n.problem.is_some()) {
            Some(failed) => {
                Err(ClusterError::Peer { worker: failed.worker, reason: failed.problem.clone().unwrap_or_default() })
            }
            None => Ok(notes),
        }
    }
}

/// Runs `job` on this process's workers.
pub(crate) fn run(job: Job, topology: Topology) -> Result<Option<Finished>, ClusterError> {
    if let Topology::Member { process, addresses, .. } = &topology {
        check_free(&addresses[*process])?;
    }
    let communication = match &topology {
        Topology::Threads(workers) => timely::CommunicationConfig::Process((*workers).max(1)),
        Topology::Member { workers, process, addresses } => timely::CommunicationConfig::Cluster {
            threads: *workers,
            process: *process,
            addresses: addresses.clone(),
            report: false,
            zerocopy: false,
        },
    };
    let config = timely::Config { communication, worker: timely::WorkerConfig::default() };
    let place = Place { process: topology.process(), per_process: topology.workers_per_process().max(1) };
    let guards =
        timely::execute(config, move |worker| solve_worker(worker, &job, place)).map_err(ClusterError::Dataflow)?;
    let mut outcome = None;
    let mut failure = None;
    for result in guards.join() {
        match result {
            Ok(Ok(Some(o))) => outcome = Some(o),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => {
                // The worker that failed says why; the others only name it.
                if failure.is_none() || matches!(failure, Some(ClusterError::Peer { .. })) {
                    failure = Some(e);
                }
            }
            Err(panic) => failure = Some(ClusterError::Dataflow(format!("a worker stopped: {panic}"))),
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(outcome),
    }
}

/// Fails with [`ClusterError::AddressInUse`] if `address` cannot be listened on because another
/// program holds it. Timely binds the address itself and reports a failure only as text; a
/// launcher that picked free ports a moment before needs to tell this case from the others,
/// since it is the one it can mend by starting again on new ports.
fn check_free(address: &str) -> Result<(), ClusterError> {
    match std::net::TcpListener::bind(address) {
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(ClusterError::AddressInUse(address.to_string())),
        // Any other failure is timely's to report, with its own words.
        _ => Ok(()),
    }
}

/// Where this process's workers sit in the cluster.
#[derive(Clone, Copy)]
struct Place {
    process: usize,
    per_process: usize,
}

fn solve_worker(worker: &mut Worker, job: &Job, place: Place) -> Result<Option<Finished>, ClusterError> {
    let mut run = Run::new(worker, job, place);
    let resumed_after = run.agree_on_resume()?;
    let start = run.init(resumed_after)?;
    report(&run, Event::Started { peers: run.peers, slots: run.index.slots(), resumed_after });
    let mut totals = Totals { edges: start.edges, ..Totals::default() };
    let mut n = resumed_after.map_or(0, |level| level + 1);
    loop {
        let (summary, checkpoint_due) = run.level(n, start.all_wins_in_one)?;
        totals.edges += summary.edges;
        totals.exchanged += summary.exchanged;
        totals.network += summary.network;
        report(&run, Event::Level(summary));
        // Levels above 1 are only ever created by the level before them.
        if summary.decided == 0 && n >= 1 {
            break;
        }
        // Level 1 is a formality (its count comes from init), so the first checkpoint that a
        // resume can use follows it, as in the in-memory solver.
        if checkpoint_due && n >= 1 {
            run.checkpoint(n, start.wins_in_one)?;
            report(&run, Event::Checkpointed(n));
        }
        n += 1;
    }
    run.write_table(totals, resumed_after)
}

/// Reports an event, from worker 0 only.
fn report(run: &Run, event: Event) {
    if run.me == 0 {
        (run.job.events)(&event)
    }
}

/// Counts summed over the levels.
#[derive(Default)]
struct Totals {
    edges: u64,
    exchanged: u64,
    network: u64,
}

/// What init (or the restored shares) leaves for the levels.
struct Started {
    /// This worker's wins in 1.
    wins_in_one: u64,
    /// Every worker's.
    all_wins_in_one: u64,
    /// Edges counted by init, everywhere.
    edges: u64,
}

/// One worker's solve, phase by phase; each phase ends in rounds that every worker runs in
/// step, and a failure anywhere is carried in the next round's note, so that every worker
/// stops together.
struct Run<'w, 'j> {
    worker: &'w mut Worker,
    job: &'j Job,
    place: Place,
    me: usize,
    peers: usize,
    index: MaterialIndex,
    partition: Partition,
    share: Rc<RefCell<Share>>,
    network: Network,
    dir: std::path::PathBuf,
    started: Instant,
    /// A failure to report in the next note.
    problem: Option<String>,
    last_checkpoint: Instant,
    last_write: Duration,
    batch: Vec<u64>,
}

impl<'w, 'j> Run<'w, 'j> {
    fn new(worker: &'w mut Worker, job: &'j Job, place: Place) -> Run<'w, 'j> {
        let started = Instant::now();
        let (me, peers) = (worker.index(), worker.peers());
        let index = MaterialIndex::new(job.material);
        let partition = Partition::new(index.slots(), peers);
        let share = Rc::new(RefCell::new(Share::new(partition.range(me), job.max_inline)));
        let network = Network::build(worker, share.clone(), partition);
        let dir = checkpoint::dir_of(&job.out, job.material);
        let batch = Vec::with_capacity(job.batch + 2048);
        Run {
            worker,
            job,
            place,
            me,
            peers,
            index,
            partition,
            share,
            network,
            dir,
            started,
            problem: None,
            last_checkpoint: Instant::now(),
            last_write: Duration::ZERO,
            batch,
        }
    }

    fn identity(&self) -> Identity<'_> {
        Identity { index: &self.index, peers: self.peers, worker: self.me }
    }

    /// This worker's process's workers.
    fn local_workers(&self) -> std::ops::Range<usize> {
        self.place.process * self.place.per_process..(self.place.process + 1) * self.place.per_process
    }

    /// This round's note, carrying the failure to report if there is one.
    fn note(&mut self) -> Note {
        Note { worker: self.me, problem: self.problem.take(), ..Note::default() }
    }

    fn round(&mut self, note: Note) -> Result<Vec<Note>, ClusterError> {
        self.network.round(self.worker, note)
    }

    /// The resume level: the last one every worker can restore.
    fn agree_on_resume(&mut self) -> Result<Option<u32>, ClusterError> {
        let mut first = self.note();
        if self.job.checkpoint_every.is_some() {
            match self.identity().restorable(&self.dir, self.place.process) {
                Ok(levels) => first.restorable = levels,
                Err(e) => first.problem = Some(e.to_string()),
            }
        }
        let notes = self.round(first)?;
        Ok(notes[0].restorable.iter().copied().filter(|level| notes.iter().all(|n| n.restorable.contains(level))).max())
    }

    /// Init, or the shares restored after level `resumed_after`.
    fn init(&mut self, resumed_after: Option<u32>) -> Result<Started, ClusterError> {
        let mut after_init = self.note();
        let wins_in_one = match resumed_after {
            Some(level) => match self.identity().read(&self.dir, &mut self.share.borrow_mut(), level) {
                Ok(wins) => wins,
                Err(e) => {
                    after_init.problem = Some(e.to_string());
                    0
                }
            },
            None => {
                let counts = self.share.borrow_mut().init(&self.index);
                after_init.edges = counts.edges;
                counts.wins_in_one
            }
        };
        after_init.found = wins_in_one;
        let notes = self.round(after_init)?;
        let all_wins_in_one = notes.iter().map(|n| n.found).sum();
        Ok(Started { wins_in_one, all_wins_in_one, edges: notes.iter().map(|n| n.edges).sum() })
    }

    /// Level `n`: rounds of scanning and sending updates until every worker is done; its
    /// summary, and whether any worker's clock says a checkpoint is due.
    fn level(&mut self, n: u32, all_wins_in_one: u64) -> Result<(LevelSummary, bool), ClusterError> {
        let mut summary = LevelSummary { level: n, ..LevelSummary::default() };
        self.network.enter_level(n);
        let (mut next, mut done) = (0, false);
        let process_of = |w: usize, per_process: usize| w / per_process;
        loop {
            let mut scanned = Scanned { done: true, ..Scanned::default() };
            let mut mine = self.note();
            if n == 1 {
                // Wins in 1 only count down, and init did that; the level is a formality.
                scanned.found = if self.me == 0 { all_wins_in_one } else { 0 };
            } else if !done {
                scanned = self.share.borrow().scan(&self.index, n, &mut next, self.job.batch, &mut self.batch);
                for &slot in &self.batch {
                    let owner = self.partition.owner(slot);
                    mine.exchanged += u64::from(owner != self.me);
                    mine.network += u64::from(process_of(owner, self.place.per_process) != self.place.process);
                }
                self.network.updates.send_batch(&mut self.batch);
                self.batch.clear();
            }
            done = scanned.done;
            mine.found = scanned.found;
            mine.edges = scanned.edges;
            mine.done = done;
            // Zero means after every level; otherwise at most every `every`, and never sooner
            // than 20 times the last write took (so checkpoints cost at most a twentieth).
            let (since, last_write) = (self.last_checkpoint.elapsed(), self.last_write);
            mine.checkpoint_due =
                self.job.checkpoint_every.is_some_and(|every| every.is_zero() || since >= every.max(20 * last_write));
            let notes = self.round(mine)?;
            summary.rounds += 1;
            for n in &notes {
                summary.decided += n.found;
                summary.edges += n.edges;
                summary.exchanged += n.exchanged;
                summary.network += n.network;
            }
            if notes.iter().all(|n| n.done) {
                summary.elapsed = self.started.elapsed().as_secs_f64();
                return Ok((summary, notes.iter().any(|n| n.checkpoint_due)));
            }
        }
    }

    /// Every worker writes its share after level `n`; past the round, all of them are on disk,
    /// and each process's leader commits its manifest.
    fn checkpoint(&mut self, n: u32, wins_in_one: u64) -> Result<(), ClusterError> {
        let writing = Instant::now();
        let mut written = self.note();
        if let Err(e) = self.identity().write(&self.dir, &self.share.borrow(), n, wins_in_one) {
            written.problem = Some(e.to_string());
        }
        self.last_write = writing.elapsed();
        self.round(written)?;
        let local = self.local_workers();
        if self.me == local.start {
            let committed = checkpoint::commit(&self.dir, self.place.process, local, self.job.material, self.peers, n);
            self.problem = committed.err().map(|e| e.to_string());
        }
        // Every process has committed its checkpoint once this round ends, so a resume that
        // begins after `Event::Checkpointed(n)` restores level `n` (or a later one).
        let committed = self.note();
        self.round(committed)?;
        self.last_checkpoint = Instant::now();
        Ok(())
    }

    /// The table: statistics and overflow entries to everyone, then the shares' bytes to
    /// worker 0, which writes them at their slots; then, once everyone knows it is written,
    /// the checkpoints go.
    fn write_table(&mut self, totals: Totals, resumed_after: Option<u32>) -> Result<Option<Finished>, ClusterError> {
        let mut closing = self.note();
        {
            let mut share = self.share.borrow_mut();
            share.settle();
            closing.statistics = Some(Statistics::of_values(&share.state, &share.overflow));
            closing.overflow = share.overflow.clone();
        }
        let notes = self.round(closing)?;
        report(self, Event::Writing);
        let mut writer = None;
        if self.me == 0 {
            let mut statistics = Statistics::default();
            let mut overflow = Vec::new();
            for n in notes {
                statistics.merge(&n.statistics.unwrap_or_default());
                overflow.extend(n.overflow);
            }
            overflow.sort_unstable();
            match TableWriter::create(&self.job.out, self.job.material, self.index.slots(), &statistics, &overflow) {
                Ok(w) => writer = Some((w, statistics)),
                Err(e) => self.problem = Some(e.to_string()),
            }
        }
        let block = ((16 << 20) / self.peers).clamp(64 << 10, 4 << 20);
        let mut sent = 0;
        loop {
            let mut mine = self.note();
            {
                let share = self.share.borrow();
                let end = (sent + block).min(share.state.len());
                if sent < end {
                    self.network.blocks.send((share.range.start + sent as u64, share.state[sent..end].to_vec()));
                }
                sent = end;
                mine.done = sent == share.state.len();
            }
            let notes = self.round(mine)?;
            if let Some((w, _)) = writer.as_mut() {
                for (slot, bytes) in self.network.received_blocks.borrow_mut().drain(..) {
                    if let Err(e) = w.write_values(slot, &bytes) {
                        self.problem.get_or_insert(e.to_string());
                    }
                }
            }
            if notes.iter().all(|n| n.done) {
                break;
            }
        }
        let mut outcome = None;
        if let Some((w, statistics)) = writer {
            match w.finish() {
                Ok(path) => {
                    outcome = Some(Finished {
                        path,
                        statistics,
                        seconds: self.started.elapsed().as_secs_f64(),
                        edges: totals.edges,
                        exchanged: totals.exchanged,
                        network: totals.network,
                        resumed_after,
                    })
                }
                Err(e) => self.problem = Some(e.to_string()),
            }
        }
        // Whether the table is written, for everyone: only then do the checkpoints go.
        let last = self.note();
        self.round(last)?;
        let local = self.local_workers();
        if self.me == local.start && self.job.checkpoint_every.is_some() {
            checkpoint::remove(&self.dir, self.place.process, local, self.peers);
        }
        Ok(outcome)
    }
}
