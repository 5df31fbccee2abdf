//! `shogi4 solve GAME --cluster local:N` and `--hostfile FILE --process I`: the distributed
//! solve (`shogi4-distributed`). A local cluster is N copies of this program, each one
//! process of the cluster, connected over loopback; this process starts them, passes
//! process 0's output through, and stops them all if one fails.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shogi4_api::cli::ClusterReport;
use shogi4_distributed::{solve, ClusterError, Event, Finished, Job, Topology, UPDATE_BYTES};
use shogi4_engine::Material;

use super::{grouped, outcomes_text};
use crate::error::{CliError, ADDRESS_IN_USE_EXIT};

/// Where this process's part of the cluster runs.
pub enum Role {
    /// Start N processes on this machine (N = 1: this process alone, its workers threads).
    Local(usize),
    /// Be process `process` of the cluster listed in a host file.
    Member {
        /// `host:port` of every process.
        addresses: Vec<String>,
        /// This one's index.
        process: usize,
    },
}

impl Role {
    /// `local:N`.
    pub fn parse_local(spec: &str) -> Result<Role, CliError> {
        let processes =
            spec.strip_prefix("local:").and_then(|n| n.parse::<usize>().ok()).filter(|&n| (1..=64).contains(&n));
        processes.map(Role::Local).ok_or_else(|| {
            CliError::Usage(format!(
                "--cluster {spec:?}: expected local:N with N from 1 to 64 (for several hosts use --hostfile)"
            ))
        })
    }

    /// One `host:port` per line; blank lines and `#` comments skipped.
    pub fn from_hostfile(path: &Path, process: usize) -> Result<Role, CliError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::Usage(format!("--hostfile {}: {e}", path.display())))?;
        let mut addresses = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let valid =
                line.rsplit_once(':').is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
            if !valid {
                return Err(CliError::Usage(format!(
                    "--hostfile {} line {}: {line:?} is not host:port",
                    path.display(),
                    number + 1
                )));
            }
            addresses.push(line.to_string());
        }
        if process >= addresses.len() {
            return Err(CliError::Usage(format!(
                "--process {process}: the host file lists {} processes (0 to {})",
                addresses.len(),
                addresses.len().saturating_sub(1)
            )));
        }
        Ok(Role::Member { addresses, process })
    }
}

/// What every process of the solve is told.
pub struct Options {
    /// Where the table goes.
    pub out: PathBuf,
    /// Worker threads per process.
    pub workers: usize,
    /// `--resume` and the least time between checkpoints.
    pub checkpoints: Option<Duration>,
    /// JSON Lines instead of text.
    pub json: bool,
}

pub fn run(material: &str, place: Role, options: &Options) -> Result<(), CliError> {
    let material: Material = material.parse()?;
    if !(1..=256).contains(&options.workers) {
        return Err(CliError::Usage("--workers: from 1 to 256 per process".into()));
    }
    match place {
        Role::Local(1) => solve_here(material, Topology::Threads(options.workers), options, &mut std::io::stdout()),
        Role::Local(processes) => launch(material, processes, options),
        Role::Member { addresses, process } => {
            shogi4_distributed::stop_when_a_peer_is_lost(
                "Restart every process with --resume to continue from the last checkpoint.",
            );
            let mut stdout = stdout_apart()?;
            let topology = Topology::Member { workers: options.workers, process, addresses };
            solve_here(material, topology, options, &mut stdout)
        }
    }
}

/// Standard output for this command's own report, with file descriptor 1 pointed at standard
/// error: timely's network layer prints its connection messages to standard output, which
/// would otherwise break `--json` output.
fn stdout_apart() -> Result<std::fs::File, CliError> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain descriptor calls; the duplicate is owned by the returned File alone.
    unsafe {
        let kept = libc::dup(1);
        if kept < 0 || libc::dup2(2, 1) < 0 {
            return Err(io_error(std::io::Error::last_os_error()));
        }
        Ok(std::fs::File::from_raw_fd(kept))
    }
}

/// Runs this process's share; process 0 reports on `out`.
fn solve_here(material: Material, topology: Topology, options: &Options, out: &mut dyn Write) -> Result<(), CliError> {
    let mut job = Job::new(material, options.out.clone());
    job.checkpoint_every = options.checkpoints;
    let json = options.json;
    let slots = shogi4_engine::MaterialIndex::new(material).slots();
    let decided = std::sync::atomic::AtomicU64::new(0);
    job.events = Arc::new(move |event| {
        if json {
            return;
        }
        match event {
            Event::Started { peers, resumed_after, .. } => match resumed_after {
                Some(level) => eprintln!("{material}: {peers} workers, resuming after level {level}"),
                None => eprintln!("{material}: {peers} workers, {} slots", grouped(slots)),
            },
            Event::Level(level) => {
                let so_far = decided.fetch_add(level.decided, std::sync::atomic::Ordering::Relaxed) + level.decided;
                eprintln!(
                    "  level {:>3}  {:>14} decided ({:>5.1}% of slots so far)  {:>15} edges  {:>9.1} MB exchanged, \
                     {:>9.1} MB between processes  {} rounds  {:.1} s",
                    level.level,
                    grouped(level.decided),
                    100.0 * so_far as f64 / slots as f64,
                    grouped(level.edges),
                    (level.exchanged * UPDATE_BYTES) as f64 / 1e6,
                    (level.network * UPDATE_BYTES) as f64 / 1e6,
                    level.rounds,
                    level.elapsed
                );
            }
            Event::Checkpointed(level) => eprintln!("  checkpoint after level {level}"),
            Event::Writing => eprintln!("  writing the table"),
        }
    });
    let outcome = solve(job, topology.clone()).map_err(|e| {
        if let ClusterError::AddressInUse(_) = e {
            return CliError::AddressInUse(e.to_string());
        }
        // The library speaks of the cluster's shape; here that is two flags. A refusal may
        // reach this process as its own error or as a peer's reason, which is text.
        let message = e.to_string();
        match message.contains("checkpoint refused") {
            true => CliError::Cluster(format!("{message}; the shape is --cluster (or --hostfile) and --workers")),
            false => CliError::Cluster(message),
        }
    })?;
    if let Some(outcome) = outcome {
        report(material, &topology, &outcome, json, out).map_err(io_error)?;
    }
    Ok(())
}

fn report(
    material: Material,
    topology: &Topology,
    outcome: &Finished,
    json: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let processes = topology.peers() / topology.workers_per_process();
    let per_edge = |updates: u64| (updates * UPDATE_BYTES) as f64 / outcome.edges.max(1) as f64;
    if json {
        let report = ClusterReport {
            material: material.to_string(),
            processes,
            workers: topology.peers(),
            seconds: outcome.seconds,
            edges: outcome.edges,
            edges_per_second: outcome.edges as f64 / outcome.seconds,
            exchanged_bytes_per_edge: per_edge(outcome.exchanged),
            network_bytes_per_edge: per_edge(outcome.network),
            resumed_after: outcome.resumed_after,
            peak_rss_bytes: shogi4_tablebase::peak_rss_bytes(),
            path: outcome.path.display().to_string(),
            outcomes: (&outcome.statistics).into(),
        };
        return writeln!(out, "{}", super::json_line(&report));
    }
    writeln!(out, "{material}: {} positions", grouped(outcome.statistics.positions))?;
    write!(out, "{}", outcomes_text(&outcome.statistics, "  "))?;
    writeln!(
        out,
        "  time        {:.2} s on {processes} processes × {} workers, {} edges, {:.1} M edges/s",
        outcome.seconds,
        topology.workers_per_process(),
        grouped(outcome.edges),
        outcome.edges as f64 / outcome.seconds / 1e6
    )?;
    writeln!(
        out,
        "  exchanged   {:.2} bytes per edge between workers, {:.2} between processes",
        per_edge(outcome.exchanged),
        per_edge(outcome.network)
    )?;
    writeln!(out, "  written     {}", outcome.path.display())
}

/// How many times a local cluster is started on fresh ports when one of its processes finds its
/// port taken.
const LAUNCH_ATTEMPTS: usize = 5;

/// Set in the environment of the processes a local cluster starts: one that finds its port
/// taken then exits with [`ADDRESS_IN_USE_EXIT`] without a word, since the launcher starts the
/// cluster again and speaks for the cluster if it gives up (a `--json` run that succeeds on
/// its second start leaves no problem document behind).
const LAUNCHED: &str = "SHOGI4_CLUSTER_LAUNCHED";

/// Whether `error` ends this process silently: a taken port in a process that a local cluster
/// started (see [`LAUNCHED`]).
pub fn left_to_launcher(error: &CliError) -> bool {
    matches!(error, CliError::AddressInUse(_)) && std::env::var_os(LAUNCHED).is_some()
}

/// Starts `processes` copies of this program as one cluster on loopback, and waits for them.
fn launch(material: Material, processes: usize, options: &Options) -> Result<(), CliError> {
    std::fs::create_dir_all(&options.out).map_err(io_error)?;
    let mut attempt = 1;
    loop {
        match launch_once(material, processes, options)? {
            Ended::Done => return Ok(()),
            // The ports are free when picked but released before the processes bind them, and
            // another program may take one in between; nothing has started then.
            Ended::AddressInUse if attempt < LAUNCH_ATTEMPTS => {
                attempt += 1;
                // A `--json` run's standard error carries problem documents only.
                if !options.json {
                    eprintln!("shogi4: a port of the cluster was taken meanwhile; starting it again on new ports");
                }
            }
            Ended::AddressInUse => {
                return Err(CliError::Cluster(format!(
                    "the cluster's ports were taken by other programs {LAUNCH_ATTEMPTS} times in a row"
                )))
            }
            Ended::Failed { process, status } => {
                return Err(CliError::Cluster(format!(
                    "process {process} of the cluster failed ({status}); the others were stopped. Run again with \
                     --resume to continue from the last checkpoint"
                )))
            }
        }
    }
}

/// How a launched cluster ended.
enum Ended {
    Done,
    /// A process found its port taken at the start.
    AddressInUse,
    Failed {
        process: usize,
        status: ExitStatus,
    },
}

/// One start of the cluster on ports free a moment before.
fn launch_once(material: Material, processes: usize, options: &Options) -> Result<Ended, CliError> {
    let addresses = free_ports(processes)?.into_iter().map(|port| format!("127.0.0.1:{port}")).collect::<Vec<_>>();
    // Outside the output directory: a launcher killed by a signal leaves it behind.
    let hostfile = std::env::temp_dir().join(format!("shogi4-{material}-hosts-{}", std::process::id()));
    std::fs::write(&hostfile, addresses.join("\n") + "\n").map_err(io_error)?;
    let exe = std::env::current_exe().map_err(io_error)?;
    let mut children = Vec::with_capacity(processes);
    for process in 0..processes {
        let mut command = Command::new(&exe);
        command
            .args(["solve", &material.to_string(), "--out"])
            .arg(&options.out)
            .args(["--workers", &options.workers.to_string(), "--hostfile"])
            .arg(&hostfile)
            .args(["--process", &process.to_string()]);
        if let Some(every) = options.checkpoints {
            command.args(["--resume", "--checkpoint-secs", &every.as_secs().to_string()]);
        }
        if options.json {
            command.arg("--json");
        }
        // Process 0 speaks for the cluster; the others only report errors.
        if process > 0 {
            command.stdout(Stdio::null());
        }
        command.env(LAUNCHED, "1");
        die_with_parent(&mut command);
        children.push(command.spawn().map_err(io_error)?);
    }
    let ended = wait_all(&mut children);
    let _ = std::fs::remove_file(&hostfile);
    Ok(ended)
}

/// `count` ports free on loopback a moment ago, picked at random below the kernel's ephemeral
/// range: the kernel never hands those out on its own, so between the pick and the moment a
/// process listens, no connection of this cluster (or any program) gets one as its source
/// port, and a process connecting to a peer not yet listening cannot reach itself (TCP's
/// simultaneous open on one port). Only a program binding that very port by number can take
/// it meanwhile, which the launcher mends by starting again.
fn free_ports(count: usize) -> Result<Vec<u16>, CliError> {
    const LOWEST: u16 = 10_000;
    let span = u64::from(lowest_ephemeral_port().saturating_sub(LOWEST)).max(1);
    // Each listener is held until all are picked, so that no port is picked twice.
    let mut held: Vec<(u16, TcpListener)> = Vec::with_capacity(count);
    for _ in 0..count * 100 {
        let random = std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0);
        let port = LOWEST + (random % span) as u16;
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", port)) {
            held.push((port, listener));
            if held.len() == count {
                return Ok(held.into_iter().map(|(port, _)| port).collect());
            }
        }
    }
    Err(CliError::Cluster(format!("found only {} of {count} free ports on loopback", held.len())))
}

/// The kernel's lowest ephemeral port (Linux's default when its setting cannot be read).
fn lowest_ephemeral_port() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768)
}

/// Waits for every process; when one fails, gives the others a few seconds to stop on their
/// own (they notice the lost connection), then kills them. A process whose port was taken
/// stops the others at once: they would wait for it for ever. A taken port seen at any time
/// means a new start, even after another process failed first: a process that reached a
/// port meant for this cluster but held by another program loses its connection before the
/// process whose port it was finds it taken.
fn wait_all(children: &mut [Child]) -> Ended {
    let mut failed: Option<(usize, ExitStatus)> = None;
    let mut failed_at = None;
    let mut any_port_taken = false;
    let mut running: Vec<usize> = (0..children.len()).collect();
    while !running.is_empty() {
        running.retain(|&i| match children[i].try_wait() {
            Ok(Some(status)) => {
                any_port_taken |= port_taken(status);
                if !status.success() && failed.is_none() {
                    failed = Some((i, status));
                    failed_at = Some(Instant::now());
                }
                false
            }
            Ok(None) => true,
            Err(_) => false,
        });
        if any_port_taken || failed_at.is_some_and(|t| t.elapsed() > Duration::from_secs(10)) {
            for &i in &running {
                let _ = children[i].kill();
                let _ = children[i].wait();
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    match failed {
        _ if any_port_taken => Ended::AddressInUse,
        Some((process, status)) => Ended::Failed { process, status },
        None => Ended::Done,
    }
}

fn port_taken(status: ExitStatus) -> bool {
    status.code() == Some(i32::from(ADDRESS_IN_USE_EXIT))
}

/// The kernel kills the child when this process dies, even by `kill -9`: a cluster never
/// outlives the command that started it.
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs between fork and exec and calls only prctl, which is
    // async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn io_error(e: std::io::Error) -> CliError {
    CliError::Cluster(format!("starting the cluster: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> Child {
        Command::new("sh").args(["-c", script]).spawn().unwrap()
    }

    #[test]
    fn a_cluster_gets_distinct_free_ports_that_the_kernel_never_picks_itself() {
        let ephemeral = lowest_ephemeral_port();
        let ports = free_ports(64).unwrap();
        let distinct: std::collections::BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), 64, "{ports:?}");
        assert!(ports.iter().all(|&port| (10_000..ephemeral).contains(&port)), "{ports:?}");
        // A kernel-picked port is ephemeral, so never one of these.
        let picked = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        assert!(picked >= ephemeral, "{picked}");
    }

    #[test]
    fn a_taken_port_stops_the_others_at_once_and_asks_for_a_new_start() {
        let started = Instant::now();
        let mut children = [shell("sleep 60"), shell(&format!("exit {ADDRESS_IN_USE_EXIT}")), shell("sleep 60")];
        assert!(matches!(wait_all(&mut children), Ended::AddressInUse));
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        for child in &mut children {
            assert!(child.try_wait().unwrap().is_some(), "every process has ended");
        }
    }

    #[test]
    fn a_taken_port_after_another_failure_still_asks_for_a_new_start() {
        let mut children =
            [shell("exit 1"), shell(&format!("sleep 0.5; exit {ADDRESS_IN_USE_EXIT}")), shell("sleep 60")];
        assert!(matches!(wait_all(&mut children), Ended::AddressInUse));
    }

    #[test]
    fn another_failure_names_the_process_and_success_is_success() {
        let mut children = [shell("exit 0"), shell("exit 3")];
        assert!(matches!(wait_all(&mut children), Ended::Failed { process: 1, .. }));
        let mut children = [shell("exit 0"), shell("sleep 0.2")];
        assert!(matches!(wait_all(&mut children), Ended::Done));
    }
}
