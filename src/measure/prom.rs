//! The Prometheus series of a run (`--metrics-listen`, docs/metrics.md): a collector that sums
//! the threads' live counters at each scrape and writes them with `prometheus-client`.
//!
//! The latency histogram is classic (`_bucket{le}`), with bounds taken from the log-linear
//! interval histogram the threads publish (16 buckets per power of two, each at most 6.25 %
//! wide): a power of two of nanoseconds is always a bound, and so is each edge of every bucket
//! that holds an operation. `histogram_quantile` interpolates inside one such bucket, so it lands
//! within that bucket's width of the true quantile (docs/metrics.md says why classic buckets
//! rather than native histograms).

use crate::measure::hist::{INTERVAL_BUCKETS, interval_bucket};
use crate::measure::iostat::DeviceCounts;
use crate::measure::live::{KINDS, LiveCounters, Totals};
use crate::model::device::Sample;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Operation names by kind index (read, write, fsync, trim).
pub const OP_NAMES: [&str; KINDS] = ["read", "write", "fsync", "trim"];

/// One job of a measured phase as the export names it: a cell's mode, or a role.
#[derive(Debug, Clone)]
pub struct PhaseUnit {
    pub mode: String,
    pub role: Option<String>,
    /// The kinds of operation it does (indexes into [`OP_NAMES`]).
    pub kinds: Vec<usize>,
    /// Its settings, the labels of `iolab_run_info` (name, value), in a fixed order.
    pub settings: Vec<(&'static str, String)>,
}

/// One unit of a cell as the scrapes see it.
#[derive(Debug)]
pub(super) struct CellUnit {
    pub(super) cell: usize,
    pub(super) unit: PhaseUnit,
    pub(super) threads: Vec<Arc<LiveCounters>>,
    /// When the cell's measured window began (the end of its ramp), in Unix seconds.
    pub(super) start_s: f64,
}

/// The cells of the run so far, for the scrapes: each unit with its threads' counters.
#[derive(Debug, Default)]
pub(super) struct Cells {
    pub(super) units: Vec<CellUnit>,
    /// The latest device interval of the phase that is running (cell, mode), none between cells.
    pub(super) device: Option<(usize, String, Sample)>,
    /// Each cell's device counts (cell, mode, per device), from the start of its measured
    /// window to the sampler's latest reading; kept, frozen, after the cell.
    pub(super) device_counts: Vec<(usize, String, BTreeMap<String, DeviceCounts>)>,
}

/// The power-of-two bounds of every histogram, in ns: 2^10 (1.0 µs) to 2^35 (34 s).
const POW2_FROM: u32 = 10;
const POW2_TO: u32 = 35;

/// The largest latency (ns) interval-histogram bucket `i` holds: the next bucket's smallest
/// value less one (buckets are contiguous), u64::MAX from the bucket of u64::MAX on.
fn bucket_top_ns(i: usize) -> u64 {
    let next = i + 1;
    let start: u128 = if next < 16 {
        next as u128
    } else {
        ((16 | (next & 15)) as u128) << ((next >> 4) - 1).min(100)
    };
    u64::try_from(start - 1).unwrap_or(u64::MAX)
}

/// The classic buckets (`le` in seconds, the count in that bucket alone: the encoder writes
/// them cumulative, then +Inf) of interval-histogram bucket counts. The bounds are the largest
/// latency of the buckets just below each power of two of ns from 2^10 to 2^35, and of each
/// non-empty bucket and the one before it: every count sits under its own bucket's top, so
/// `count(le)` is exactly the operations of at most `le`, and a quantile interpolated between
/// two bounds is within the one interval bucket (at most 6.25 % wide) that holds it.
pub fn le_buckets(lat: &[u64]) -> Vec<(f64, u64)> {
    let mut bound = vec![false; INTERVAL_BUCKETS];
    for k in POW2_FROM..=POW2_TO {
        bound[interval_bucket(1u64 << k) - 1] = true;
    }
    for (i, &n) in lat.iter().enumerate().take(INTERVAL_BUCKETS) {
        if n > 0 {
            bound[i] = true;
            if i > 0 {
                bound[i - 1] = true;
            }
        }
    }
    let mut out = Vec::new();
    let mut pending = 0u64;
    for (i, &n) in lat.iter().enumerate().take(INTERVAL_BUCKETS) {
        pending += n;
        if bound[i] {
            out.push((bucket_top_ns(i) as f64 / 1e9, pending));
            pending = 0;
        }
    }
    out.push((f64::INFINITY, pending));
    out
}

/// Encodes the run's series on each scrape.
#[derive(Debug)]
pub(super) struct RunCollector {
    pub(super) run_id: String,
    pub(super) host: String,
    /// When the run began (its `run_id`), in Unix seconds.
    pub(super) start_s: f64,
    pub(super) cells: Arc<std::sync::Mutex<Cells>>,
}

type Labels = Vec<(&'static str, String)>;

impl RunCollector {
    fn labels(&self, cell: usize, mode: &str, role: Option<&str>) -> Labels {
        let mut l = vec![
            ("run_id", self.run_id.clone()),
            ("host", self.host.clone()),
            ("cell", cell.to_string()),
            ("mode", mode.to_string()),
        ];
        if let Some(r) = role {
            l.push(("role", r.to_string()));
        }
        l
    }
}

/// A counter value as the encoder takes it.
#[derive(Debug)]
struct Count(u64);

impl EncodeMetric for Count {
    fn encode(&self, mut encoder: MetricEncoder) -> std::result::Result<(), std::fmt::Error> {
        encoder.encode_counter::<NoLabelSet, _, u64>(&self.0, None)
    }
    fn metric_type(&self) -> MetricType {
        MetricType::Counter
    }
}

type Fmt = std::result::Result<(), std::fmt::Error>;

/// One counter family: `rows` (labels, value).
fn counters(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    rows: impl IntoIterator<Item = (Labels, u64)>,
) -> Fmt {
    let mut m = enc.encode_descriptor(name, help, unit.as_ref(), MetricType::Counter)?;
    for (l, v) in rows {
        Count(v).encode(m.encode_family(&l)?)?;
    }
    Ok(())
}

/// One gauge family: `rows` (labels, value).
fn gauges(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    rows: impl IntoIterator<Item = (Labels, f64)>,
) -> Fmt {
    let mut m = enc.encode_descriptor(name, help, unit.as_ref(), MetricType::Gauge)?;
    for (l, v) in rows {
        m.encode_family(&l)?.encode_gauge(&v)?;
    }
    Ok(())
}

impl prometheus_client::collector::Collector for RunCollector {
    fn encode(&self, mut enc: DescriptorEncoder) -> Fmt {
        let cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        let run = || vec![("run_id", self.run_id.clone()), ("host", self.host.clone())];
        gauges(
            &mut enc,
            "iolab_run_start_time",
            "When the run began, in seconds since the Unix epoch (as process_start_time_seconds)",
            Some(Unit::Seconds),
            [(run(), self.start_s)],
        )?;
        let unit_labels = |u: &CellUnit| self.labels(u.cell, &u.unit.mode, u.unit.role.as_deref());
        {
            let mut m = enc.encode_descriptor(
                "iolab_run",
                "The settings of each cell's job (value 1)",
                None,
                MetricType::Info,
            )?;
            for u in &cells.units {
                let mut l = unit_labels(u);
                l.extend(u.unit.settings.iter().cloned());
                m.encode_info(&l)?;
            }
        }
        gauges(
            &mut enc,
            "iolab_cell_start_time",
            "When the cell's measured window began (the end of its ramp), in seconds since the Unix epoch",
            Some(Unit::Seconds),
            cells.units.iter().map(|u| (unit_labels(u), u.start_s)),
        )?;
        // Every unit × kind, summed now over its threads.
        let mut rows: Vec<(Labels, Totals)> = Vec::new();
        for u in &cells.units {
            for &k in &u.unit.kinds {
                let mut l = unit_labels(u);
                l.push(("op", OP_NAMES[k].to_string()));
                rows.push((l, Totals::take(u.threads.iter().map(|t| &**t), k)));
            }
        }
        counters(
            &mut enc,
            "iolab_ops",
            "Operations completed (reads, writes, fsyncs, trims), from the start of the cell, ramp included",
            None,
            rows.iter().map(|(l, t)| (l.clone(), t.ops)),
        )?;
        counters(
            &mut enc,
            "iolab_bytes",
            "Bytes read, written or trimmed, from the start of the cell, ramp included",
            None,
            rows.iter()
                .filter(|(l, _)| l.last().is_some_and(|o| o.1 != "fsync"))
                .map(|(l, t)| (l.clone(), t.amount)),
        )?;
        counters(
            &mut enc,
            "iolab_errors",
            "Operations that failed in the cell's measured window (the run document's errors)",
            None,
            cells.units.iter().map(|u| {
                (
                    unit_labels(u),
                    LiveCounters::errors(u.threads.iter().map(|t| &**t)),
                )
            }),
        )?;
        {
            let mut m = enc.encode_descriptor(
                "iolab_latency",
                "Latency of each completed operation (bounds: each power of two of ns, and the edges of every 1/16-octave bucket that holds an operation)",
                Some(&Unit::Seconds),
                MetricType::Histogram,
            )?;
            for (l, t) in &rows {
                m.encode_family(l)?.encode_histogram::<NoLabelSet>(
                    t.lat_sum_ns as f64 / 1e9,
                    t.ops,
                    &le_buckets(&t.lat),
                    None,
                )?;
            }
        }
        self.device_counters(&mut enc, &cells)?;
        self.device_gauges(&mut enc, &cells)
    }
}

impl RunCollector {
    /// The device counters of every cell so far (none without a watched device).
    fn device_counters(&self, enc: &mut DescriptorEncoder, cells: &Cells) -> Fmt {
        if cells.device_counts.is_empty() {
            return Ok(());
        }
        type Pick = fn(&DeviceCounts) -> Option<u64>;
        let families: [(&str, &str, Option<Unit>, Pick); 7] = [
            (
                "iolab_device_reads",
                "Reads the device completed (/proc/diskstats), from the start of the cell's measured window",
                None,
                |c| Some(c.reads),
            ),
            (
                "iolab_device_writes",
                "Writes the device completed (/proc/diskstats), from the start of the cell's measured window",
                None,
                |c| Some(c.writes),
            ),
            (
                "iolab_device_read",
                "Bytes the device read (sectors × 512), from the start of the cell's measured window",
                Some(Unit::Bytes),
                |c| Some(c.read_bytes),
            ),
            (
                "iolab_device_written",
                "Bytes the device wrote (sectors × 512), from the start of the cell's measured window",
                Some(Unit::Bytes),
                |c| Some(c.write_bytes),
            ),
            (
                "iolab_device_discards",
                "Discards the device completed (kernels from 4.18), from the start of the cell's measured window",
                None,
                |c| c.discards,
            ),
            (
                "iolab_device_discarded",
                "Bytes the device discarded (kernels from 4.18), from the start of the cell's measured window",
                Some(Unit::Bytes),
                |c| c.discard_bytes,
            ),
            (
                "iolab_device_flushes",
                "Flushes the device completed (kernels from 5.5), from the start of the cell's measured window",
                None,
                |c| c.flushes,
            ),
        ];
        for (name, help, unit, pick) in families {
            let rows: Vec<(Labels, u64)> = cells
                .device_counts
                .iter()
                .flat_map(|(cell, mode, devs)| {
                    devs.iter().filter_map(move |(dev, c)| {
                        let mut l = self.labels(*cell, mode, None);
                        l.push(("device", dev.clone()));
                        pick(c).map(|v| (l, v))
                    })
                })
                .collect();
            if !rows.is_empty() {
                counters(enc, name, help, unit, rows)?;
            }
        }
        Ok(())
    }

    /// The device sampler's latest interval of the running cell (none between cells).
    fn device_gauges(&self, enc: &mut DescriptorEncoder, cells: &Cells) -> Fmt {
        let Some((cell, mode, s)) = &cells.device else {
            return Ok(());
        };
        type Pick = fn(&crate::model::device::Iostat) -> f64;
        let families: [(&str, &str, Option<Unit>, Pick); 8] = [
            (
                "iolab_device_reads_per_second",
                "Reads completed per second by the device (iostat r/s), latest interval",
                None,
                |x| x.r_s,
            ),
            (
                "iolab_device_writes_per_second",
                "Writes completed per second by the device (iostat w/s), latest interval",
                None,
                |x| x.w_s,
            ),
            (
                "iolab_device_read_bytes_per_second",
                "Bytes read per second by the device (iostat rkB/s × 1024), latest interval",
                None,
                |x| x.rkb_s * 1024.0,
            ),
            (
                "iolab_device_write_bytes_per_second",
                "Bytes written per second by the device (iostat wkB/s × 1024), latest interval",
                None,
                |x| x.wkb_s * 1024.0,
            ),
            (
                "iolab_device_read_await",
                "Mean read time at the device (iostat r_await), latest interval",
                Some(Unit::Seconds),
                |x| x.r_await_ms / 1e3,
            ),
            (
                "iolab_device_write_await",
                "Mean write time at the device (iostat w_await), latest interval",
                Some(Unit::Seconds),
                |x| x.w_await_ms / 1e3,
            ),
            (
                "iolab_device_queue_depth",
                "Mean requests queued or in service (iostat aqu-sz), latest interval",
                None,
                |x| x.aqu_sz,
            ),
            (
                "iolab_device_util_ratio",
                "Share of the interval the device was busy (iostat %util / 100), latest interval",
                None,
                |x| x.util_pct / 100.0,
            ),
        ];
        for (name, help, unit, pick) in families {
            gauges(
                enc,
                name,
                help,
                unit,
                s.devices.iter().map(|(dev, x)| {
                    let mut l = self.labels(*cell, mode, None);
                    l.push(("device", dev.clone()));
                    (l, pick(x))
                }),
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::hist::interval_bucket_value;

    #[test]
    fn bucket_tops_are_the_next_buckets_start_less_one() {
        let last = interval_bucket(u64::MAX);
        for i in 0..last {
            let top = bucket_top_ns(i);
            assert_eq!(interval_bucket(top), i, "bucket {i}: top {top}");
            assert_eq!(interval_bucket(top + 1), i + 1, "bucket {i}: top {top}");
        }
        assert_eq!(bucket_top_ns(last), u64::MAX);
        assert_eq!(bucket_top_ns(INTERVAL_BUCKETS - 1), u64::MAX);
        // the power-of-two bounds: 2^k - 1 ns
        assert_eq!(bucket_top_ns(interval_bucket(1 << 17) - 1), (1 << 17) - 1);
    }

    #[test]
    fn classic_buckets_hold_each_operation_once_under_its_own_bucket() {
        let mut lat = vec![0u64; INTERVAL_BUCKETS];
        lat[interval_bucket(80_000)] += 3;
        lat[interval_bucket(2_000_000)] += 2;
        lat[interval_bucket(100_000_000_000)] += 1; // 100 s: past the powers of two
        let b = le_buckets(&lat);
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 6);
        assert_eq!(b.last().unwrap(), &(f64::INFINITY, 0));
        // ascending, every power of two of ns from 2^10 to 2^35 there (less one ns)
        assert!(b.windows(2).all(|w| w[0].0 < w[1].0));
        for k in POW2_FROM..=POW2_TO {
            let le = ((1u64 << k) - 1) as f64 / 1e9;
            assert!(b.iter().any(|x| x.0 == le), "2^{k}");
        }
        // each count under the top of its own bucket, with the bucket's bottom the bound before
        for (v, n) in [(80_000u64, 3), (2_000_000, 2), (100_000_000_000, 1)] {
            let i = interval_bucket(v);
            let at = b
                .iter()
                .position(|x| x.0 == bucket_top_ns(i) as f64 / 1e9)
                .unwrap();
            assert_eq!(b[at].1, n, "{v}");
            assert_eq!(b[at - 1].0, bucket_top_ns(i - 1) as f64 / 1e9, "{v}");
            assert!(interval_bucket_value(i) as f64 / 1e9 <= b[at].0);
        }
        // nothing: the powers of two and +Inf, all 0
        let none = le_buckets(&vec![0; INTERVAL_BUCKETS]);
        assert_eq!(none.len(), (POW2_TO - POW2_FROM + 2) as usize);
        assert!(none.iter().all(|x| x.1 == 0));
    }

    /// Prometheus's histogram_quantile (linear inside the bucket that holds the rank) over
    /// these buckets lands within one interval bucket of the exact quantile; over the fixed
    /// bounds of before (100 µs, then 250 µs) it was 45 % off (issue 27).
    #[test]
    fn an_interpolated_quantile_is_within_its_bucket() {
        // 10,000 latencies from 80 to 180 µs, denser at the low end
        let xs: Vec<u64> = (0..10_000u64)
            .map(|i| 80_000 + i * i / 1_000 + i % 97)
            .collect();
        let mut lat = vec![0u64; INTERVAL_BUCKETS];
        for &x in &xs {
            lat[interval_bucket(x)] += 1;
        }
        let mut sorted = xs.clone();
        sorted.sort_unstable();
        let exact = sorted[(0.99 * sorted.len() as f64).ceil() as usize - 1] as f64 / 1e9;
        let b = le_buckets(&lat);
        let rank = 0.99 * xs.len() as f64;
        let (mut cum, mut lo) = (0.0, 0.0);
        let mut est = f64::NAN;
        for &(le, n) in &b {
            if cum + n as f64 >= rank {
                est = lo + (le - lo) * (rank - cum) / n as f64;
                break;
            }
            cum += n as f64;
            lo = le;
        }
        let off = (est - exact).abs() / exact;
        assert!(off < 0.0625, "exact {exact}, interpolated {est}: {off}");
    }
}
