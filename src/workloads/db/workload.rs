//! The transactions of `iolab db`: the sysbench-like tests on `threads` connections (each
//! transaction's statements refilled in place, retried, reconnected), the update loop, the
//! `--report-interval` lines, the connections' figures merged into the document, and the
//! warnings about a database run.

use super::tables::{rand_fill, rand_str};
use super::{DbErr, P, Q, Target, connect};
use crate::error::{Error, Result};
use crate::measure::hist::{IntervalHist, LatHist, SparseHist};
use crate::measure::live::LiveCounters;
use crate::measure::wake::StopSignal;
use crate::model::db::{DbDoc, DbJob, DbPoint, SqliteOpts, Test, TypeResult, UpdateLoop};
use crate::model::lat::LatSummary;
use crate::model::run::Warning;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The latency summary of a histogram (None when empty).
pub fn lat_of(h: &LatHist) -> Option<LatSummary> {
    LatSummary::from_hist(h)
}

/// Warnings about a database run.
pub fn warnings(d: &DbDoc) -> Vec<Warning> {
    let mut w = Vec::new();
    let s = &d.settings;
    let off = |k: &str, bad: &[&str]| {
        s.get(k)
            .is_some_and(|v| bad.contains(&v.to_lowercase().as_str()))
    };
    if off("fsync", &["off"])
        || off("synchronous_commit", &["off"])
        || off("innodb_flush_log_at_trx_commit", &["0", "2"])
        || off("synchronous", &["off", "normal"])
    {
        w.push(Warning::new("commits_not_durable", "the database does not flush every commit to stable storage (fsync / synchronous_commit / innodb_flush_log_at_trx_commit / SQLite synchronous): TPS measures memory, and a crash loses committed transactions"));
    }
    if d.errors > 0 {
        w.push(Warning::new(
            "db_errors",
            format!(
                "{} transactions failed ({} reconnects)",
                d.errors, d.reconnects
            ),
        ));
    }
    if let Some(sys) = &d.system
        && sys.platform.virtualization.verdict != "none seen"
    {
        w.push(Warning::new("virtualized", format!("running in {}: the host may absorb flushes and make commits look impossibly fast (a VM that caches writes reports commit rates its disks cannot do)", sys.platform.virtualization.verdict)));
    }
    w
}

struct ThreadOut {
    lat: LatHist,
    tx: u64,
    queries: u64,
    errors: BTreeMap<String, u64>,
    retries: u64,
    reconnects: u64,
    series: Vec<(u64, u64, SparseHist)>,
    /// When the thread's last transaction ended (before its connection is closed, which for
    /// SQLite in WAL mode checkpoints: not part of the measured interval).
    end: Option<Instant>,
    /// The thread's CPU time (user + system, seconds) over its transaction loop.
    cpu_s: f64,
}

/// The calling thread's user + system CPU time so far, in seconds: the time getrusage(RUSAGE_THREAD)
/// reports, read with clock_gettime(CLOCK_THREAD_CPUTIME_ID), which brings a running thread's
/// figure up to date (getrusage's can lag by up to a scheduler tick for a thread that has not
/// been switched out, e.g. an SQLite loop that never blocks, and then reads 0 for a short run).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// The statements of one transaction. Their parameter vectors and strings are kept from one
/// transaction to the next and refilled in place, so once the first transaction has sized them
/// a transaction allocates nothing.
#[derive(Default)]
struct Stmts {
    v: Vec<(Q, u32, Vec<P>)>,
    n: usize,
}

impl Stmts {
    fn as_slice(&self) -> &[(Q, u32, Vec<P>)] {
        &self.v[..self.n]
    }
    fn clear(&mut self) {
        self.n = 0;
    }
    /// Adds statement `q` on table `t`; its parameters follow with `int` and `text`, in order.
    fn add(&mut self, q: Q, t: u32) -> Params<'_> {
        if self.n == self.v.len() {
            self.v.push((q, t, Vec::with_capacity(4)));
        }
        let s = &mut self.v[self.n];
        self.n += 1;
        s.0 = q;
        s.1 = t;
        Params { v: &mut s.2, i: 0 }
    }
}

/// The parameters of one statement being filled; those past the last one set are dropped.
struct Params<'a> {
    v: &'a mut Vec<P>,
    i: usize,
}

impl Params<'_> {
    fn int(mut self, x: i64) -> Self {
        if self.i < self.v.len() {
            self.v[self.i] = P::I(x);
        } else {
            self.v.push(P::I(x));
        }
        self.i += 1;
        self
    }
    /// A random sysbench-style string of `len` characters.
    fn text(mut self, rng: &mut crate::spec::dist::Rng, len: usize) -> Self {
        match self.v.get_mut(self.i) {
            Some(P::S(s)) => rand_fill(rng, len, s),
            Some(p) => *p = P::S(rand_str(rng, len)),
            None => self.v.push(P::S(rand_str(rng, len))),
        }
        self.i += 1;
        self
    }
}

impl Drop for Params<'_> {
    fn drop(&mut self) {
        self.v.truncate(self.i);
    }
}

/// Statements of one transaction of `test`.
fn transaction(
    test: Test,
    rng: &mut crate::spec::dist::Rng,
    tables: u32,
    size: u64,
    out: &mut Stmts,
) {
    use rand::RngExt;
    out.clear();
    let t = rng.random_range(1..=tables);
    let id = |rng: &mut crate::spec::dist::Rng| rng.random_range(1..=size.max(1)) as i64;
    match test {
        Test::PointSelect => {
            out.add(Q::PointSelect, t).int(id(rng));
        }
        Test::UpdateIndex => {
            out.add(Q::UpdateIndex, t).int(id(rng));
        }
        Test::UpdateNonIndex => {
            let i = id(rng);
            out.add(Q::UpdateNonIndex, t).int(i).text(rng, 119);
        }
        Test::Insert => {
            let k = id(rng);
            out.add(Q::Insert, t).int(k).text(rng, 119).text(rng, 59);
        }
        Test::ReadWrite => {
            for _ in 0..10 {
                let i = id(rng);
                out.add(Q::PointSelect, t).int(i);
            }
            for q in [Q::RangeSimple, Q::RangeSum, Q::RangeOrder, Q::RangeDistinct] {
                let a = rng.random_range(1..=size.saturating_sub(99).max(1)) as i64;
                out.add(q, t).int(a).int(a + 99);
            }
            let i = id(rng);
            out.add(Q::UpdateIndex, t).int(i);
            let i = id(rng);
            out.add(Q::UpdateNonIndex, t).int(i).text(rng, 119);
            let d = id(rng);
            out.add(Q::Delete, t).int(d);
            out.add(Q::InsertWithId, t)
                .int(d)
                .int(id(rng))
                .text(rng, 119)
                .text(rng, 59);
        }
        Test::UpdateLoop => {}
    }
}

#[allow(clippy::too_many_arguments)]
fn worker(
    target: &Target,
    job: &DbJob,
    thread: u32,
    quota: Option<u64>,
    start: Instant,
    deadline: Option<Instant>,
    stop: &AtomicBool,
    live: Option<&LiveCounters>,
) -> std::result::Result<ThreadOut, String> {
    let so = job.sqlite.clone().unwrap_or(SqliteOpts {
        journal_mode: "wal".into(),
        synchronous: "full".into(),
        page_size: 4096,
    });
    let mut conn = connect(target, &so).map_err(|e| e.msg)?;
    let mut rng = crate::spec::dist::thread_rng(job.seed, thread);
    let mut o = ThreadOut {
        lat: LatHist::new(),
        tx: 0,
        queries: 0,
        errors: BTreeMap::new(),
        retries: 0,
        reconnects: 0,
        series: Vec::new(),
        end: None,
        cpu_s: 0.0,
    };
    let mut cur = IntervalHist::default();
    let (mut cur_tx, mut cur_q, mut cur_sec) = (0u64, 0u64, 0u64);
    let explicit = job.trx == "explicit";
    let mut stmts = Stmts::default();
    let mut done = 0u64;
    let cpu0 = thread_cpu_s();
    loop {
        let now = Instant::now();
        if stop.load(Ordering::Relaxed)
            || deadline.is_some_and(|d| now >= d)
            || quota.is_some_and(|q| done >= q)
        {
            break;
        }
        transaction(job.test, &mut rng, job.tables, job.table_size, &mut stmts);
        let t0 = Instant::now();
        let mut attempt = 0;
        let outcome = loop {
            let r = (|| -> std::result::Result<u64, DbErr> {
                let mut n = 0;
                if explicit {
                    conn.begin()?;
                }
                for (q, t, p) in stmts.as_slice() {
                    conn.run(*q, *t, p)?;
                    n += 1;
                }
                if explicit {
                    conn.exec("COMMIT")?;
                }
                Ok(n)
            })();
            match r {
                Err(DbErr::Retry(_)) if attempt < 10 => {
                    let _ = conn.exec("ROLLBACK");
                    attempt += 1;
                    o.retries += 1;
                    // back off a little, more each time, so the other side can finish
                    std::thread::sleep(Duration::from_micros(200 << attempt.min(6)));
                }
                other => break other,
            }
        };
        let t1 = Instant::now();
        done += 1;
        match outcome {
            Ok(n) => {
                let ns = (t1 - t0).as_nanos() as u64;
                let sec = t1.saturating_duration_since(start).as_secs();
                while cur_sec < sec {
                    o.series.push((cur_tx, cur_q, cur.take_sparse()));
                    cur_tx = 0;
                    cur_q = 0;
                    cur_sec += 1;
                }
                o.lat.record(ns);
                cur.record(ns);
                if let Some(l) = live {
                    l.publish(0, n, ns);
                }
                o.tx += 1;
                o.queries += n;
                cur_tx += 1;
                cur_q += n;
            }
            Err(DbErr::Lost(m)) => {
                *o.errors.entry(format!("connection lost: {m}")).or_default() += 1;
                // reconnect until it works or the run ends
                loop {
                    if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d)
                    {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                    if let Ok(c) = connect(target, &so) {
                        conn = c;
                        o.reconnects += 1;
                        break;
                    }
                }
            }
            Err(e) => {
                if explicit {
                    let _ = conn.exec("ROLLBACK");
                }
                *o.errors.entry(e.to_string()).or_default() += 1;
            }
        }
    }
    o.series.push((cur_tx, cur_q, cur.take_sparse()));
    o.end = Some(Instant::now());
    o.cpu_s = (thread_cpu_s() - cpu0).max(0.0);
    Ok(o)
}

/// The update loop (the classic "is my commit really durable" test): one row, `iterations` autocommitted UPDATEs of it, each timed.
pub fn update_loop(
    target: &Target,
    so: &SqliteOpts,
    iterations: u64,
    stop: &AtomicBool,
    report: Option<Duration>,
) -> Result<(UpdateLoop, LatHist)> {
    let now = || {
        chrono::Local::now()
            .format("%a %b %e %H:%M:%S %Y")
            .to_string()
    };
    let start_time = now();
    let t_start = Instant::now();
    let mut c = connect(target, so)?;
    let fail = |e: DbErr| Error::failed(format!("update-loop: {e}"));
    let _ = c.exec("DROP TABLE iolab_update_loop");
    c.exec("CREATE TABLE iolab_update_loop (id INTEGER PRIMARY KEY, counter BIGINT NOT NULL, note VARCHAR(100) NOT NULL)").map_err(fail)?;
    c.exec("INSERT INTO iolab_update_loop (id, counter, note) VALUES (1, 0, 'iolab update loop')")
        .map_err(fail)?;
    let init = t_start.elapsed().as_secs_f64();
    let mut timings = Vec::with_capacity(iterations as usize);
    let mut h = LatHist::new();
    let loop_start = Instant::now();
    let live = report.map(|_| LiveCounters::default());
    let done = StopSignal::new();
    let looped = std::thread::scope(|s| {
        if let (Some(every), Some(l)) = (report, &live) {
            let done = &done;
            s.spawn(move || report_lines(Test::UpdateLoop, 1, &[l], every, loop_start, done));
        }
        let r = (|| {
            for _ in 0..iterations {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let t0 = Instant::now();
                c.exec("UPDATE iolab_update_loop SET counter = counter + 1 WHERE id = 1")
                    .map_err(fail)?;
                let d = t0.elapsed();
                let ns = d.as_nanos() as u64;
                h.record(ns);
                timings.push(d.as_secs_f64());
                if let Some(l) = &live {
                    l.publish(0, 1, ns);
                }
            }
            Ok(())
        })();
        done.set();
        r
    });
    looped?;
    let benchmark_loop = loop_start.elapsed().as_secs_f64();
    let fin_start = Instant::now();
    c.exec("DROP TABLE iolab_update_loop").map_err(fail)?;
    drop(c);
    let fin = fin_start.elapsed().as_secs_f64();
    let total = t_start.elapsed().as_secs_f64();
    let n = timings.len();
    let sum: f64 = timings.iter().sum();
    let mut sorted = timings.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let median = if n == 0 {
        0.0
    } else if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    let mean = if n > 0 { sum / n as f64 } else { 0.0 };
    let sd = if n > 1 {
        (timings.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let pct = |p: f64| {
        if n == 0 {
            0.0
        } else {
            sorted[(((p / 100.0) * n as f64).ceil() as usize).clamp(1, n) - 1]
        }
    };
    Ok((
        UpdateLoop {
            start_time,
            finish_time: now(),
            iterations: n as u64,
            total_time_s: total,
            initialisation_time_s: init,
            finalisation_time_s: fin,
            benchmark_loop_s: benchmark_loop,
            benchmark_sum_s: sum,
            min_s: sorted.first().copied().unwrap_or(0.0),
            average_s: mean,
            max_s: sorted.last().copied().unwrap_or(0.0),
            median_s: median,
            stddev_s: sd,
            p95_s: pct(95.0),
            p99_s: pct(99.0),
            timings_s: timings,
        },
        h,
    ))
}

/// What a distributed run's side channel reads while the transactions run: each connection's
/// live counters (written by its worker alone with relaxed stores, as `--report-interval`'s), so
/// rank 0 notices a rank whose transactions stop completing (docs/distributed.md).
pub type Watch<'a> = &'a dyn Fn(Vec<std::sync::Arc<LiveCounters>>);

/// Runs the sysbench-like tests with `threads` connections; tables must be prepared.
pub fn run_oltp(
    target: &Target,
    job: &DbJob,
    stop: &AtomicBool,
    report: Option<Duration>,
    watch: Option<Watch>,
) -> Result<(f64, Vec<ThreadOutPub>)> {
    let start = Instant::now();
    let deadline = job.time_s.map(|t| start + Duration::from_secs_f64(t));
    let live: Vec<std::sync::Arc<LiveCounters>> = if report.is_some() || watch.is_some() {
        (0..job.threads)
            .map(|_| std::sync::Arc::new(LiveCounters::default()))
            .collect()
    } else {
        Vec::new()
    };
    if let Some(w) = watch {
        w(live.clone());
    }
    let finished = AtomicUsize::new(0);
    // set by the last worker to finish: wakes the report line at once
    let all_done = StopSignal::new();
    let mut not_started: Option<String> = None;
    let outs: Vec<std::result::Result<ThreadOut, String>> = std::thread::scope(|s| {
        let mut hs = Vec::new();
        for t in 0..job.threads {
            let quota = job
                .transactions
                .map(|n| n / job.threads as u64 + u64::from((t as u64) < n % job.threads as u64));
            let (live, finished, all_done) =
                (live.get(t as usize).map(|l| &**l), &finished, &all_done);
            // named, so a connection's thread can be told apart (top -H, the tests)
            let spawned = std::thread::Builder::new()
                .name(format!("iolab-db{t}"))
                .spawn_scoped(s, move || {
                    let r = worker(target, job, t, quota, start, deadline, stop, live);
                    if finished.fetch_add(1, Ordering::Release) + 1 == job.threads as usize {
                        all_done.set();
                    }
                    r
                });
            match spawned {
                Ok(h) => hs.push(h),
                Err(e) => {
                    // A thread limit reached: the started threads stop, and the run fails.
                    not_started = Some(format!(
                        "--threads {}: thread {} could not start ({e}); use fewer --threads or raise the limit (ulimit -u, kernel.threads-max, the cgroup's pids.max)",
                        job.threads,
                        t + 1
                    ));
                    stop.store(true, Ordering::Release);
                    break;
                }
            }
        }
        if let Some(every) = report
            && not_started.is_none()
        {
            let threads: Vec<&LiveCounters> = live.iter().map(|l| &**l).collect();
            report_lines(job.test, job.threads, &threads, every, start, &all_done);
        }
        hs.into_iter()
            .map(|h| h.join().expect("db worker panicked"))
            .collect()
    });
    if let Some(why) = not_started {
        return Err(Error::failed(why));
    }
    let joined = Instant::now();
    let mut v = Vec::new();
    for o in outs {
        let o = o.map_err(Error::failed)?;
        v.push(ThreadOutPub(o));
    }
    // the measured time ends with the last transaction, not after the connections closed
    let end = v.iter().filter_map(|o| o.0.end).max().unwrap_or(joined);
    Ok((end.saturating_duration_since(start).as_secs_f64(), v))
}

/// `--report-interval`: one line per interval on stderr until `done` is set:
/// `[ 2s ] read-write 4t  tx: 123.4 TPS 2221.2 QPS p99 4.52 ms`.
fn report_lines(
    test: Test,
    threads: u32,
    live: &[&LiveCounters],
    every: Duration,
    start: Instant,
    done: &StopSignal,
) {
    crate::measure::live::report_every(live, every, start, start, done, &mut |stamp, d| {
        crate::measure::live::print_line(&format!(
            "{stamp} {} {threads}t  tx: {:.1} TPS {:.1} QPS p99 {} ms",
            test.name(),
            d.rate(0),
            d.amount_rate(0),
            crate::measure::live::fmt_ms(d.percentile(0, 99.0))
        ))
    });
}

/// Opaque per-thread results (merged by [`build_doc`]).
pub struct ThreadOutPub(ThreadOut);

/// A last, partial per-second interval shorter than this (seconds) is not plotted (the same
/// rule as file runs and the device series).
pub use crate::measure::stats::SHORTEST_LAST_S;

/// Merges the threads into the document's figures.
pub fn merge_into(doc: &mut DbDoc, outs: Vec<ThreadOutPub>, dur: f64) {
    let mut lat = LatHist::new();
    let secs = outs.iter().map(|o| o.0.series.len()).max().unwrap_or(0);
    let mut series: Vec<(u64, u64, Vec<SparseHist>)> =
        (0..secs).map(|_| (0, 0, Vec::new())).collect();
    let mut cpu_s = 0.0;
    for ThreadOutPub(o) in outs {
        cpu_s += o.cpu_s;
        lat.merge(&o.lat);
        doc.transactions += o.tx;
        doc.queries += o.queries;
        doc.retries += o.retries;
        doc.reconnects += o.reconnects;
        for (k, v) in o.errors {
            doc.errors += v;
            *doc.error_messages.entry(k).or_default() += v;
        }
        for (i, (tx, q, h)) in o.series.into_iter().enumerate() {
            series[i].0 += tx;
            series[i].1 += q;
            series[i].2.push(h);
        }
    }
    doc.duration_s = dur;
    doc.client_cpu_s = Some(cpu_s);
    doc.client_cpu_us_per_tx =
        (doc.transactions > 0).then(|| cpu_s * 1e6 / doc.transactions as f64);
    doc.tps = doc.transactions as f64 / dur.max(1e-9);
    doc.qps = doc.queries as f64 / dur.max(1e-9);
    // the last interval is partial: its rates are per its real length, and one shorter than
    // SHORTEST_LAST_S is left out (a few transactions over a few ms are noise, not a rate)
    if series.len() > 1 && dur - ((series.len() - 1) as f64) < SHORTEST_LAST_S {
        series.pop();
    }
    let n = series.len();
    doc.timeseries = series
        .iter()
        .enumerate()
        .map(|(i, (tx, q, hs))| {
            let d = if i + 1 == n {
                (dur - i as f64).clamp(1e-3, 1.0)
            } else {
                1.0
            };
            let parts: Vec<&SparseHist> = hs.iter().collect();
            let p = SparseHist::merged_percentiles(&parts, &[50.0, 99.0]);
            DbPoint {
                t_s: i as f64,
                tps: *tx as f64 / d,
                qps: *q as f64 / d,
                p50_ns: p[0],
                p99_ns: p[1],
            }
        })
        .filter(|p| p.tps > 0.0 || p.t_s < dur)
        .collect();
    doc.types.insert(
        tx_type(doc.job.test).into(),
        TypeResult {
            transactions: doc.transactions,
            tps: doc.tps,
            lat_ns: LatSummary::from_hist(&lat),
        },
    );
    doc.hist = Some(lat);
}

/// The name of a test's transaction type.
pub fn tx_type(t: Test) -> &'static str {
    match t {
        Test::UpdateLoop => "update",
        Test::PointSelect => "point-select",
        Test::UpdateIndex => "update-index",
        Test::UpdateNonIndex => "update-non-index",
        Test::Insert => "insert",
        Test::ReadWrite => "read-write",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_is_sysbench_shaped() {
        let mut rng = crate::spec::dist::thread_rng(1, 0);
        let mut s = Stmts::default();
        transaction(Test::ReadWrite, &mut rng, 4, 1000, &mut s);
        let v = s.as_slice();
        assert_eq!(v.len(), 18);
        assert_eq!(v.iter().filter(|x| x.0 == Q::PointSelect).count(), 10);
        // the insert reuses the deleted id, so the table keeps its size
        let del = v.iter().find(|x| x.0 == Q::Delete).unwrap();
        let ins = v.iter().find(|x| x.0 == Q::InsertWithId).unwrap();
        assert!(matches!((&del.2[0], &ins.2[0]), (P::I(a), P::I(b)) if a == b));
        assert!(v.iter().all(|x| x.1 == v[0].1), "one table per transaction");
    }

    #[test]
    fn a_transaction_refills_the_last_one_s_parameters_in_place() {
        fn buffers(s: &Stmts) -> (Vec<*const P>, Vec<*const u8>) {
            let v = s.as_slice();
            let strs = v.iter().flat_map(|x| x.2.iter()).filter_map(|p| match p {
                P::S(s) => Some(s.as_ptr()),
                P::I(_) => None,
            });
            (v.iter().map(|x| x.2.as_ptr()).collect(), strs.collect())
        }
        let mut rng = crate::spec::dist::thread_rng(1, 0);
        let mut s = Stmts::default();
        transaction(Test::ReadWrite, &mut rng, 4, 1000, &mut s);
        let (first, before) = (format!("{:?}", s.as_slice()), buffers(&s));
        assert_eq!(before.1.len(), 3);
        transaction(Test::ReadWrite, &mut rng, 4, 1000, &mut s);
        assert_ne!(first, format!("{:?}", s.as_slice()), "new values");
        assert_eq!(
            before,
            buffers(&s),
            "the same vectors and strings, refilled"
        );
        // the same statements as from fresh buffers with the same seed
        let (mut a, mut b) = (
            crate::spec::dist::thread_rng(7, 1),
            crate::spec::dist::thread_rng(7, 1),
        );
        transaction(Test::Insert, &mut a, 4, 1000, &mut s);
        let mut fresh = Stmts::default();
        transaction(Test::Insert, &mut b, 4, 1000, &mut fresh);
        assert_eq!(
            format!("{:?}", s.as_slice()),
            format!("{:?}", fresh.as_slice())
        );
        assert_eq!(s.as_slice().len(), 1);
        assert_eq!(s.as_slice()[0].2.len(), 3);
    }
}
