//! Charts as SVG, written by hand: titled axes with units, readable ticks, a legend; colors from
//! CSS so they follow light and dark mode and print well. [`png`] rasterizes with resvg.

use std::fmt::Write;

/// One named line or set of bars.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    /// (x, y); for bar charts x is the category index
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Line,
    /// grouped bars: one group per category, one bar per series
    Bars,
}

/// A chart, before it is drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// the name `iolab plot --chart` uses
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub kind: Kind,
    pub x_log: bool,
    pub y_log: bool,
    /// bar charts: the category names
    pub categories: Vec<String>,
    pub series: Vec<Series>,
    /// horizontal reference lines (label, y), e.g. a target
    pub hlines: Vec<(String, f64)>,
    /// highlighted points (label, x, y), e.g. the point a search found
    pub markers: Vec<(String, f64, f64)>,
    /// bar charts: a text above each bar ([series][category]), e.g. "+15.4%"
    pub bar_labels: Vec<Vec<Option<String>>>,
    /// bar charts: half-width of an error bar ([series][category]): noise marks
    pub errors: Vec<Vec<Option<f64>>>,
    /// custom x tick labels (value, text), e.g. percentiles
    pub x_ticks: Option<Vec<(f64, String)>>,
}

/// The most points of one line that carry a hover target.
const HOVER_POINTS: usize = 1000;

impl Chart {
    /// An x value as the axis names it: its tick's text where the ticks are custom (p99.9 on
    /// a percentile axis), else the number.
    fn x_text(&self, x: f64) -> String {
        self.x_ticks
            .as_ref()
            .and_then(|t| t.iter().find(|(v, _)| (v - x).abs() < 1e-9))
            .map_or_else(|| fmt_num(x), |(_, t)| t.clone())
    }

    pub fn new(name: &str, title: &str, x_label: &str, y_label: &str, kind: Kind) -> Chart {
        Chart {
            name: name.into(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            kind,
            x_log: false,
            y_log: false,
            categories: Vec::new(),
            series: Vec::new(),
            hlines: Vec::new(),
            markers: Vec::new(),
            bar_labels: Vec::new(),
            errors: Vec::new(),
            x_ticks: None,
        }
    }

    /// A chart is drawable when it has a title, axis labels and at least one series with finite
    /// values (positive ones on log axes).
    pub fn check(&self) -> Result<(), String> {
        if self.title.is_empty() || self.x_label.is_empty() || self.y_label.is_empty() {
            return Err(format!("{}: title and axis labels are required", self.name));
        }
        let ok = |p: &(f64, f64)| {
            p.0.is_finite()
                && p.1.is_finite()
                && (!self.x_log || p.0 > 0.0)
                && (!self.y_log || p.1 > 0.0)
        };
        if !self
            .series
            .iter()
            .any(|s| !s.points.is_empty() && s.points.iter().all(ok))
        {
            return Err(format!("{}: no series with finite values", self.name));
        }
        Ok(())
    }
}

pub const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Dash patterns for line series: the 11th series and on repeat the colours with another dash,
/// so up to 40 series stay distinct (a chart of every mode × operation has 15-17).
pub const DASHES: [&str; 4] = ["", "7 3", "2 3", "9 3 2 3"];

/// The colour and dash pattern of series `i`.
pub fn series_style(i: usize) -> (&'static str, &'static str) {
    (
        PALETTE[i % PALETTE.len()],
        DASHES[(i / PALETTE.len()) % DASHES.len()],
    )
}

/// CSS for charts: light by default, dark when the reader prefers it, black on white in print.
pub const CSS: &str = ".iolab-chart{font-family:DejaVu Sans,Helvetica,Arial,sans-serif}
.iolab-chart text{fill:#222}
.iolab-chart .axis{stroke:#222;stroke-width:1}
.iolab-chart .grid{stroke:#ddd;stroke-width:1}
.iolab-chart .bg{fill:#fff}
@media (prefers-color-scheme: dark){.iolab-chart text{fill:#e6e6e6}.iolab-chart .axis{stroke:#e6e6e6}.iolab-chart .grid{stroke:#444}.iolab-chart .bg{fill:#1e1e1e}}
@media print{.iolab-chart text{fill:#000}.iolab-chart .axis{stroke:#000}.iolab-chart .grid{stroke:#ccc}.iolab-chart .bg{fill:#fff}}";

/// Escapes text for HTML and SVG, in element content and in quoted attribute values alike:
/// `&`, `<`, `>`, `"` and `'`. The one escaping function of the charts and the report.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number for a tick label: 1.5k, 20M, 0.25.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let (d, suf) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if d == d.trunc() {
        format!("{d:.0}")
    } else if d.abs() >= 10.0 {
        format!("{d:.1}")
    } else if d.abs() >= 0.1 {
        format!("{d:.2}")
    } else if d.abs() >= 0.001 {
        format!("{d:.3}")
    } else {
        // small values (a null engine's latencies in ms): three significant digits, so a
        // 0.0001 tick does not read "0"
        let digits = (-d.abs().log10().floor()) as usize + 2;
        format!("{d:.digits$}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{suf}")
}

/// About five "nice" ticks (1, 2, 5 × 10ⁿ) covering lo..hi.
pub fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut v = Vec::new();
    while t <= hi + step * 1e-9 {
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    v
}

fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (a..=b).map(|e| 10f64.powi(e)).collect()
}

struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    px0: f64,
    px1: f64,
}

impl Scale {
    fn map(&self, v: f64) -> f64 {
        let (a, b, x) = if self.log {
            (self.lo.log10(), self.hi.log10(), v.max(1e-300).log10())
        } else {
            (self.lo, self.hi, v)
        };
        let f = if b > a { (x - a) / (b - a) } else { 0.5 };
        self.px0 + f * (self.px1 - self.px0)
    }
}

fn range(vals: impl Iterator<Item = f64>, log: bool, zero: bool) -> (f64, f64) {
    let v: Vec<f64> = vals
        .filter(|x| x.is_finite() && (!log || *x > 0.0))
        .collect();
    if v.is_empty() {
        return (if log { 1.0 } else { 0.0 }, 1.0);
    }
    let (mut lo, mut hi) = (
        v.iter().cloned().fold(f64::INFINITY, f64::min),
        v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    );
    if log {
        lo = 10f64.powf(lo.log10().floor());
        hi = 10f64.powf(hi.log10().ceil());
        if hi <= lo {
            hi = lo * 10.0;
        }
    } else {
        if zero {
            lo = lo.min(0.0);
        }
        if hi == lo {
            hi = lo + 1.0;
        }
        let t = nice_ticks(lo, hi);
        let step = if t.len() > 1 {
            t[1] - t[0]
        } else {
            (hi - lo) / 5.0
        };
        hi = (hi / step).ceil() * step;
        if !zero {
            lo = (lo / step).floor() * step;
        }
    }
    (lo, hi)
}

impl Chart {
    /// The chart as a standalone SVG document of `w` × `h` pixels.
    pub fn svg(&self, w: u32, h: u32) -> String {
        let (w, h) = (w as f64, h as f64);
        let legend_rows = if self.series.len() > 1 {
            self.series.len().div_ceil(4)
        } else {
            0
        };
        let (left, right, top, bottom) = (72.0, 24.0, 40.0, 52.0 + 18.0 * legend_rows as f64);
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" class="iolab-chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-labelledby="t-{n}"><title id="t-{n}">{t}</title><style>{css}</style><rect class="bg" x="0" y="0" width="{w}" height="{h}" fill="#fff"/>"##,
            n = esc(&self.name),
            t = esc(&self.title),
            css = CSS
        );
        let _ = write!(
            s,
            r##"<text class="title" fill="#222" x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"##,
            w / 2.0,
            esc(&self.title)
        );
        let plot_w = w - left - right;
        let plot_h = h - top - bottom;
        // y range
        let mut ys: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .collect();
        for (si, e) in self.errors.iter().enumerate() {
            for (ci, x) in e.iter().enumerate() {
                if let (Some(x), Some(p)) = (
                    x,
                    self.series
                        .get(si)
                        .and_then(|s| s.points.iter().find(|p| p.0 as usize == ci)),
                ) {
                    ys.push(p.1 + x);
                }
            }
        }
        ys.extend(self.hlines.iter().map(|l| l.1));
        ys.extend(self.markers.iter().map(|m| m.2));
        let (ylo, yhi) = range(
            ys.into_iter(),
            self.y_log,
            self.kind == Kind::Bars || !self.y_log,
        );
        let yhi = if self.kind == Kind::Bars && !self.y_log {
            yhi * 1.12
        } else {
            yhi
        };
        let ys = Scale {
            lo: ylo,
            hi: yhi,
            log: self.y_log,
            px0: top + plot_h,
            px1: top,
        };
        // x range
        let xs = match self.kind {
            Kind::Bars => Scale {
                lo: -0.5,
                hi: self.categories.len().max(1) as f64 - 0.5,
                log: false,
                px0: left,
                px1: left + plot_w,
            },
            Kind::Line => {
                let (lo, hi) = range(
                    self.series
                        .iter()
                        .flat_map(|s| s.points.iter().map(|p| p.0)),
                    self.x_log,
                    false,
                );
                Scale {
                    lo,
                    hi,
                    log: self.x_log,
                    px0: left,
                    px1: left + plot_w,
                }
            }
        };
        // grid and y ticks
        let yt = if self.y_log {
            log_ticks(ylo, yhi)
        } else {
            nice_ticks(ylo, yhi)
        };
        for t in yt.iter().filter(|t| **t >= ylo && **t <= yhi) {
            let y = ys.map(*t);
            let _ = write!(
                s,
                r##"<line class="grid" stroke="#ddd" x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/><text fill="#222" x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"##,
                left + plot_w,
                left - 6.0,
                y + 4.0,
                fmt_num(*t)
            );
        }
        // x ticks
        match self.kind {
            Kind::Bars => {
                for (i, c) in self.categories.iter().enumerate() {
                    let x = xs.map(i as f64);
                    let _ = write!(
                        s,
                        r##"<text fill="#222" x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"##,
                        top + plot_h + 16.0,
                        esc(c)
                    );
                }
            }
            Kind::Line => {
                let ticks: Vec<(f64, String)> = match &self.x_ticks {
                    Some(t) => t.clone(),
                    None => (if self.x_log {
                        log_ticks(xs.lo, xs.hi)
                    } else {
                        nice_ticks(xs.lo, xs.hi)
                    })
                    .into_iter()
                    .map(|t| (t, fmt_num(t)))
                    .collect(),
                };
                // a tolerance, so a tick at the very end of the range (p99.99) is drawn
                let eps = (xs.hi - xs.lo).abs() * 1e-9;
                for (t, label) in ticks
                    .iter()
                    .filter(|(t, _)| *t >= xs.lo - eps && *t <= xs.hi + eps)
                {
                    let x = xs.map(*t);
                    // labels at the edges are anchored inward, so none is cut by the frame
                    let anchor = if x > left + plot_w - 24.0 {
                        "end"
                    } else if x < left + 24.0 {
                        "start"
                    } else {
                        "middle"
                    };
                    let _ = write!(
                        s,
                        r##"<line class="grid" stroke="#ddd" x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{:.1}"/><text fill="#222" x="{x:.1}" y="{:.1}" text-anchor="{anchor}" font-size="11">{}</text>"##,
                        top + plot_h,
                        top + plot_h + 16.0,
                        esc(label)
                    );
                }
            }
        }
        // axes and their titles
        let _ = write!(
            s,
            r##"<line class="axis" stroke="#222" x1="{left}" y1="{top}" x2="{left}" y2="{:.1}"/><line class="axis" stroke="#222" x1="{left}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/>"##,
            top + plot_h,
            top + plot_h,
            left + plot_w,
            top + plot_h
        );
        let _ = write!(
            s,
            r##"<text class="axis-label" fill="#222" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"##,
            left + plot_w / 2.0,
            top + plot_h + 36.0,
            esc(&self.x_label)
        );
        let _ = write!(
            s,
            r##"<text class="axis-label" fill="#222" x="16" y="{:.1}" text-anchor="middle" font-size="12" transform="rotate(-90 16 {:.1})">{}</text>"##,
            top + plot_h / 2.0,
            top + plot_h / 2.0,
            esc(&self.y_label)
        );
        // data
        let n = self.series.len().max(1) as f64;
        for (si, ser) in self.series.iter().enumerate() {
            let (color, dash) = series_style(si);
            let _ = write!(s, r##"<g class="series" data-name="{}">"##, esc(&ser.name));
            match self.kind {
                Kind::Bars => {
                    let group_w = plot_w / self.categories.len().max(1) as f64 * 0.8;
                    let bw = group_w / n;
                    for &(x, y) in &ser.points {
                        let cx = xs.map(x) - group_w / 2.0 + bw * si as f64;
                        let y0 = ys.map(if self.y_log { ylo } else { 0.0f64.max(ylo) });
                        let y1 = ys.map(y);
                        let _ = write!(
                            s,
                            r##"<rect x="{cx:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}"><title>{}: {}</title></rect>"##,
                            y1.min(y0),
                            (bw - 2.0).max(1.0),
                            (y0 - y1).abs(),
                            esc(&ser.name),
                            fmt_num(y)
                        );
                        let ci = x as usize;
                        if let Some(Some(e)) = self.errors.get(si).and_then(|v| v.get(ci)) {
                            let mx = cx + (bw - 2.0) / 2.0;
                            s.push_str(&whisker(
                                mx,
                                ys.map(y - e),
                                ys.map(y + e),
                                top,
                                top + plot_h,
                            ));
                        }
                        if let Some(Some(label)) = self.bar_labels.get(si).and_then(|v| v.get(ci)) {
                            let _ = write!(
                                s,
                                r##"<text fill="#222" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"##,
                                cx + (bw - 2.0) / 2.0,
                                y1.min(y0) - 4.0,
                                esc(label)
                            );
                        }
                    }
                }
                Kind::Line => {
                    let mut d = String::new();
                    for (i, &(x, y)) in ser
                        .points
                        .iter()
                        .filter(|p| p.0.is_finite() && p.1.is_finite())
                        .enumerate()
                    {
                        let _ = write!(
                            d,
                            "{}{:.1} {:.1}",
                            if i == 0 { "M" } else { "L" },
                            xs.map(x),
                            ys.map(y)
                        );
                    }
                    let _ = write!(
                        s,
                        r##"<path d="{d}" fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"##
                    );
                    // every point tells its exact figure on hover: drawn when there are few,
                    // an invisible target on the line when there are many (at most
                    // HOVER_POINTS a series, evenly taken, so a long series stays small)
                    let n = ser.points.len();
                    let (r, opacity) = if n <= 40 {
                        (3, "")
                    } else {
                        (4, r#" fill-opacity="0""#)
                    };
                    let step = n.div_ceil(HOVER_POINTS).max(1);
                    for &(x, y) in ser
                        .points
                        .iter()
                        .step_by(step)
                        .filter(|p| p.0.is_finite() && p.1.is_finite())
                    {
                        let _ = write!(
                            s,
                            r##"<circle cx="{:.1}" cy="{:.1}" r="{r}" fill="{color}"{opacity}><title>{}: {} → {}</title></circle>"##,
                            xs.map(x),
                            ys.map(y),
                            esc(&ser.name),
                            self.x_text(x),
                            fmt_num(y)
                        );
                    }
                }
            }
            s.push_str("</g>");
        }
        for (label, y) in &self.hlines {
            let py = ys.map(*y);
            let _ = write!(
                s,
                r##"<line x1="{left}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#e15759" stroke-dasharray="6 4" stroke-width="1.5"/><text fill="#222" x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"##,
                left + plot_w,
                left + plot_w - 4.0,
                py - 5.0,
                esc(label)
            );
        }
        for (label, x, y) in &self.markers {
            let (px, py) = (xs.map(*x), ys.map(*y));
            // labels near the right edge go to the left of the point
            let (tx, anchor) = if px > left + plot_w * 0.7 {
                (px - 10.0, "end")
            } else {
                (px + 10.0, "start")
            };
            let _ = write!(
                s,
                r##"<circle cx="{px:.1}" cy="{py:.1}" r="7" fill="none" stroke="#59a14f" stroke-width="3"/><text fill="#222" x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" font-size="11">{}</text>"##,
                py - 10.0,
                esc(label)
            );
        }
        // legend
        if self.series.len() > 1 {
            let ly = h - 14.0 - 18.0 * (legend_rows as f64 - 1.0);
            let cw = plot_w / 4.0;
            for (i, ser) in self.series.iter().enumerate() {
                let (lx, lyy) = (left + cw * (i % 4) as f64, ly + 18.0 * (i / 4) as f64);
                let (color, dash) = series_style(i);
                if self.kind == Kind::Line {
                    // a line sample, so the dash pattern shows in the legend too
                    let _ = write!(
                        s,
                        r##"<line x1="{lx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="3" stroke-dasharray="{dash}"/>"##,
                        lyy - 4.0,
                        lx + 13.0,
                        lyy - 4.0
                    );
                } else {
                    let _ = write!(
                        s,
                        r##"<rect x="{lx:.1}" y="{:.1}" width="12" height="12" fill="{color}"/>"##,
                        lyy - 10.0
                    );
                }
                let _ = write!(
                    s,
                    r##"<text fill="#222" x="{:.1}" y="{lyy:.1}" font-size="11">{}</text>"##,
                    lx + 16.0,
                    esc(&ser.name)
                );
            }
        }
        s.push_str("</svg>");
        s
    }
}

/// An error bar at `mx` from `ya` (the low end) to `yb` (the high end), in pixels, kept inside the
/// plot's `top..bottom`. The axis range covers the high ends, but a bar chart starts at zero (or
/// a log axis at its lowest decade), so a wide interval can reach below it; such an end is cut at
/// the plot edge and drawn as an open arrowhead instead of a cap, and the whisker says so in its
/// tooltip, so it never runs into the tick labels or the legend below the plot.
fn whisker(mx: f64, ya: f64, yb: f64, top: f64, bottom: f64) -> String {
    // a NaN end (an undefined interval) is treated as beyond the plot
    let clamp = |y: f64| {
        if y.is_nan() {
            bottom
        } else {
            y.clamp(top, bottom)
        }
    };
    let (lo, hi) = (clamp(ya), clamp(yb));
    let (lo_cut, hi_cut) = (lo != ya, hi != yb);
    let mut d = format!("M{mx:.1} {lo:.1}V{hi:.1}");
    for (y, cut, dir) in [(lo, lo_cut, -1.0), (hi, hi_cut, 1.0)] {
        if cut {
            // an arrowhead pointing out of the plot, its tip on the edge
            let _ = write!(
                d,
                "M{:.1} {:.1}L{mx:.1} {y:.1}L{:.1} {:.1}",
                mx - 4.0,
                y + 6.0 * dir,
                mx + 4.0,
                y + 6.0 * dir
            );
        } else {
            let _ = write!(d, "M{:.1} {y:.1}H{:.1}", mx - 4.0, mx + 4.0);
        }
    }
    let note = match (lo_cut, hi_cut) {
        (false, false) => String::new(),
        (true, false) => "<title>95% CI clipped: its low end is below the axis</title>".into(),
        (false, true) => "<title>95% CI clipped: its high end is above the axis</title>".into(),
        (true, true) => "<title>95% CI clipped at both ends of the axis</title>".into(),
    };
    format!(
        r##"<path class="axis whisker{}" stroke="#222" fill="none" d="{d}">{note}</path>"##,
        if lo_cut || hi_cut { " clipped" } else { "" }
    )
}

/// Rasterizes an SVG to a PNG of the SVG's own size.
pub fn png(svg: &str) -> Result<Vec<u8>, String> {
    let mut opt = resvg::usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| e.to_string())?;
    let size = tree.size().to_int_size();
    let mut pix =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("empty image")?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pix.as_mut(),
    );
    pix.encode_png().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 17 series (every mode × operation of the default profile) are all told apart, in the
    /// lines and in the legend; a custom tick at the end of the range is drawn and anchored
    /// inward (p99.99 of the percentile chart), and p95 has its label.
    #[test]
    fn many_series_stay_distinct_and_edge_ticks_are_drawn_inside() {
        let styles: std::collections::BTreeSet<(&str, &str)> = (0..40).map(series_style).collect();
        assert_eq!(styles.len(), 40, "40 distinct colour × dash pairs");
        let mut c = Chart::new("lat", "t", "percentile", "ms", Kind::Line);
        c.x_ticks = Some(vec![
            (0.3, "p50".into()),
            (1.3, "p95".into()),
            (4.0, "p99.99".into()),
        ]);
        for i in 0..17 {
            c.series.push(Series {
                name: format!("s{i}"),
                points: vec![(0.3, 1.0 + i as f64), (4.0, 10.0 + i as f64)],
            });
        }
        let svg = c.svg(960, 420);
        let paths: Vec<(String, String)> = svg
            .split("<path ")
            .skip(1)
            .map(|p| {
                let attr = |k: &str| {
                    let i = p.find(&format!(" {k}=\"")).unwrap() + k.len() + 3;
                    p[i..i + p[i..].find('"').unwrap()].to_string()
                };
                (attr("stroke"), attr("stroke-dasharray"))
            })
            .collect();
        assert_eq!(paths.len(), 17);
        let distinct: std::collections::BTreeSet<_> = paths.iter().collect();
        assert_eq!(
            distinct.len(),
            17,
            "every line has its own colour and dash: {paths:?}"
        );
        assert!(
            svg.matches("<line x1=").count() >= 17,
            "a line sample per legend entry"
        );
        for (label, anchor) in [("p50", "middle"), ("p95", "middle"), ("p99.99", "end")] {
            assert!(
                svg.contains(&format!(
                    "text-anchor=\"{anchor}\" font-size=\"11\">{label}<"
                )),
                "{label} drawn, anchored {anchor}"
            );
        }
    }

    #[test]
    fn small_tick_values_keep_their_digits() {
        assert_eq!(fmt_num(0.0001), "0.0001");
        assert_eq!(fmt_num(0.00025), "0.00025");
        assert_eq!(fmt_num(0.001), "0.001");
        assert_eq!(fmt_num(0.0), "0");
    }

    #[test]
    fn ticks_are_nice() {
        assert_eq!(
            nice_ticks(0.0, 100.0),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(nice_ticks(0.0, 7.0), vec![0.0, 2.0, 4.0, 6.0]);
        assert_eq!(
            log_ticks(0.05, 300.0),
            vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
        );
        assert_eq!(fmt_num(1500.0), "1500");
        assert_eq!(fmt_num(15000.0), "15k");
        assert_eq!(fmt_num(2_500_000.0), "2.5M");
        assert_eq!(fmt_num(0.25), "0.25");
    }

    #[test]
    fn an_svg_has_its_title_axes_and_series_and_renders_to_png() {
        let mut c = Chart::new("t", "IOPS by mode", "mode", "IOPS (1/s)", Kind::Bars);
        c.categories = vec!["rndrd".into(), "rndwr".into()];
        c.series = vec![
            Series {
                name: "base".into(),
                points: vec![(0.0, 909.0), (1.0, 500.0)],
            },
            Series {
                name: "new".into(),
                points: vec![(0.0, 1049.0), (1.0, 480.0)],
            },
        ];
        c.bar_labels = vec![
            vec![None, None],
            vec![Some("+15.4%".into()), Some("-4.0%".into())],
        ];
        c.check().unwrap();
        let svg = c.svg(640, 360);
        assert!(svg.contains("<title id=\"t-t\">IOPS by mode</title>"));
        assert!(svg.contains(">mode</text>") && svg.contains(">IOPS (1/s)</text>"));
        assert_eq!(svg.matches("<g class=\"series\"").count(), 2);
        assert!(svg.contains("+15.4%"));
        let p = png(&svg).unwrap();
        assert_eq!(&p[1..4], b"PNG");
        let w = u32::from_be_bytes([p[16], p[17], p[18], p[19]]);
        let h = u32::from_be_bytes([p[20], p[21], p[22], p[23]]);
        assert_eq!((w, h), (640, 360));
        let mut empty = Chart::new("e", "x", "a", "b", Kind::Line);
        empty.series = vec![Series {
            name: "nan".into(),
            points: vec![(1.0, f64::NAN)],
        }];
        assert!(empty.check().is_err());
    }
}
