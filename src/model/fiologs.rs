//! What a job run from a fio job file logs in fio's own log files (`write_bw_log`, ...): plain
//! data, set by the job file's translation (`cli::fiojob`), recorded and written by `measure::fiolog`
//! and `engine::fiolog` (docs/fio-jobs.md, Log files).

/// The most memory the per-I/O log records of one phase may take (all its jobs and threads):
/// 1 GiB (33.5 million I/Os at 32 bytes), less on a machine with less than 4 GiB available.
pub const DEFAULT_RECORD_BYTES: u64 = 1 << 30;

/// The fio log files a job writes, with fio's names and entries (fio's `iolog.c`/`stat.c`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FioLogs {
    /// `write_bw_log`: the file name's prefix (`PREFIX_bw.N.log`).
    pub bw: Option<String>,
    /// `write_lat_log`: the prefix of the `_lat`, `_slat` and `_clat` logs.
    pub lat: Option<String>,
    /// `write_iops_log`: the prefix of the `_iops` log.
    pub iops: Option<String>,
    /// `write_hist_log`: the prefix of the `_clat_hist` log.
    pub hist: Option<String>,
    /// `write_iolog`: the file the job's I/O log is appended to (fio's iolog version 3).
    pub iolog: Option<String>,
    /// `log_hist_msec`: the histogram log's interval (0: the file is written empty, as fio's).
    pub hist_msec: u64,
    /// `log_hist_coarseness` (0-6): each step halves the number of bins.
    pub hist_coarseness: u32,
    /// `log_avg_msec`: 0, one entry per I/O; else one per window and direction.
    pub avg_msec: u64,
    /// `log_max_value`: a window's largest value instead of its mean.
    pub max_value: bool,
    /// `log_offset`: the offset column.
    pub offset: bool,
    /// `log_prio`: the priority column as fio's ioprio value in hex (iolab's I/O run at the
    /// default priority: `0x0000`) instead of 0/1 (real-time class or not).
    pub prio: bool,
    /// `log_unix_epoch` or `log_alternate_epoch`: times are ms since this clock's epoch
    /// (`log_alternate_epoch_clock_id`, 0: the real-time clock) instead of since the measured
    /// window began.
    pub epoch_clock: Option<i32>,
    /// The most memory the job's per-I/O records may take (all its threads); 0: the default
    /// share ([`crate::model::fiologs::DEFAULT_RECORD_BYTES`]).
    pub max_record_bytes: u64,
    /// `per_job_logs`: `PREFIX_KIND.N.log`, N fio's thread number; else `PREFIX_KIND.log`.
    pub per_job: bool,
    /// fio's thread number of the job's first thread (1-based over the job files; each
    /// `numjobs` clone has its own).
    pub first_thread: u32,
    /// The files of this job that continue those an earlier job of the run wrote (the same
    /// names, without `per_job_logs`): its lines are appended, as fio appends.
    pub append: Vec<String>,
}

impl FioLogs {
    /// Whether the job writes a log of one line per I/O or window (bandwidth, latency, IOPS,
    /// histograms), beside or instead of its I/O log.
    pub fn stat_logs(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }
}
