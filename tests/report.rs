//! `iolab report` and `iolab plot`: structure snapshots on a fixed stored run, chart validity for
//! every report type, PNG output, and a headless-Chromium check of each report type.

use crate::common::*;
use iolab::store::{Ref, Store};
use std::path::{Path, PathBuf};

const FIXTURE: &str = include_str!("fixtures/report/run.json");

/// A store holding the fixed run twice (as runs 1 and 2, the second relabelled).
fn fixture_store(dir: &Path) -> PathBuf {
    let db = dir.join("r.db");
    let mut s = Store::open(&db).unwrap();
    for label in ["fixture", "fixture-b"] {
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["label"] = label.into();
        let doc = iolab::model::run::RunDoc::from_json(&v).unwrap();
        s.save_run(&doc, &v, None, None).unwrap();
    }
    db
}

/// The shape of a report: section headings, figures with their chart titles, axis labels and
/// series counts. Stable for a fixed input.
fn structure(html: &str) -> String {
    let mut out = Vec::new();
    for h in html.split("<h2>").skip(1) {
        out.push(format!("section {}", &h[..h.find("</h2>").unwrap()]));
    }
    for f in html.split("<figure id=\"").skip(1) {
        let id = &f[..f.find('"').unwrap()];
        let title = f
            .split("<title id=")
            .nth(1)
            .and_then(|t| t.split('>').nth(1))
            .and_then(|t| t.split('<').next())
            .unwrap_or("");
        let labels: Vec<&str> = f
            .split("class=\"axis-label\"")
            .skip(1)
            .map(|x| x.split('>').nth(1).unwrap().split('<').next().unwrap())
            .collect();
        let series = f[..f.find("</figure>").unwrap()]
            .matches("<g class=\"series\"")
            .count();
        out.push(format!(
            "figure {id}: {title} | x: {} | y: {} | series: {series}",
            labels[0], labels[1]
        ));
    }
    out.join("\n") + "\n"
}

#[test]
fn run_report_structure_matches_the_snapshot() {
    let d = tempfile::tempdir().unwrap();
    let db = fixture_store(d.path());
    let s = Store::open(&db).unwrap();
    let html = iolab::commands::report_html(&s, &[Ref::Run(1)]).unwrap();
    let got = structure(&html);
    assert_snapshot("report-run.txt", &got);
    // self-contained: one inline script (sorting, copy buttons) and no external references (the
    // SVG namespace is a name, not a fetch)
    let body = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert_eq!(body.matches("<script").count(), 1);
    assert!(
        body.contains("<script>document.querySelectorAll('table.data th')")
            && !body.contains("<script src")
            && !body.contains("http://")
            && !body.contains("https://")
            && !body.contains("<link")
            && !body.contains("url(")
    );
    // the numbers are the ones `iolab show` prints, its tables as HTML tables
    let show = iolab::output::stored_views::render_show(&s, 1).unwrap();
    assert_eq!(
        section_text(&html, "Results").trim_end(),
        show_cells(&show).trim_end(),
        "the report embeds the show output, cell by cell"
    );
    assert!(
        !html.contains("<pre class=\"table\">"),
        "every table of show is an HTML table"
    );
    assert!(
        html.contains("<th class=\"n\" title=\"sort by IOPS\">IOPS</th>")
            && html.contains("<td class=\"n\" data-v=\"9336\">9336</td>"),
        "numbers right-aligned with their value"
    );
    // and a card for each finding `iolab explain` gives: rule, confidence, evidence, why, next
    let e = iolab::commands::explain_ref(&s, Ref::Run(1)).unwrap();
    let ex = html
        .split("<h2>Explanation</h2>")
        .nth(1)
        .and_then(|t| t.split("</section>").next())
        .unwrap();
    let mut n = 0;
    for c in &e.cells {
        for f in &c.findings {
            n += 1;
            for part in [&f.rule, &f.evidence, &f.why, &f.next] {
                assert!(
                    ex.contains(&iolab::output::charts::esc(part)),
                    "{part} not in the cards"
                );
            }
            assert!(ex.contains(&format!(
                "<span class=\"badge {0}\">{0}</span>",
                f.confidence.name()
            )));
            assert!(ex.contains(&format!(
                "data-copy=\"{}\"",
                iolab::output::charts::esc(&f.next)
            )));
        }
    }
    assert!(n > 0, "the fixture has findings");
    assert_eq!(ex.matches("<article class=\"card\">").count(), n);
}

/// `show`'s text as the report holds it: each table row its cells joined by ` | ` (the border
/// lines gone), the other lines as they are.
fn show_cells(show: &str) -> String {
    show.lines()
        .filter(|l| !l.starts_with(['┌', '╞', '└', '├']))
        .map(
            |l| match l.strip_prefix('│').and_then(|r| r.strip_suffix('│')) {
                Some(row) => row
                    .split('┆')
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(" | "),
                None => l.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

fn every_chart_is_complete(charts: &[iolab::output::charts::Chart], what: &str) {
    assert!(!charts.is_empty(), "{what}: no charts");
    for c in charts {
        c.check().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            c.series.iter().any(|s| !s.points.is_empty()
                && s.points.iter().all(|p| p.0.is_finite() && p.1.is_finite())),
            "{what} {}",
            c.name
        );
        let svg = c.svg(900, 400);
        assert!(
            svg.contains(&format!(">{}</title>", c.title)),
            "{what} {}: title",
            c.name
        );
        assert!(
            svg.contains(&format!(">{}</text>", c.x_label))
                && svg.contains(&format!(">{}</text>", c.y_label)),
            "{what} {}: axis labels",
            c.name
        );
    }
}

/// A store with one of each report type: a run (1), its copy (2), a sweep, a db run.
fn all_types(dir: &Path) -> (PathBuf, Vec<(&'static str, Vec<String>)>) {
    let db = fixture_store(dir);
    let data = dir.join("data");
    std::fs::create_dir(&data).unwrap();
    let dstr = data.to_str().unwrap();
    let r = iolab_db(
        &db,
        &[
            "sweep",
            "--threads",
            "1,2",
            "--mode",
            "rndrd,rndwr",
            "--engine",
            "null",
            "--dir",
            dstr,
            "--files",
            "1",
            "--size",
            "1M",
            "--time",
            "0.2",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let g = r.json()["group"].as_str().unwrap().to_string();
    let r = iolab_db(
        &db,
        &[
            "saturate",
            "--target",
            "p99<=50ms",
            "--over",
            "rate=1000..100000000",
            "--max-steps",
            "4",
            "--mode",
            "rndrd",
            "--engine",
            "null",
            "--dir",
            dstr,
            "--files",
            "1",
            "--size",
            "1M",
            "--time",
            "0.2",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sat = r.json()["group"].as_str().unwrap().to_string();
    let r = iolab_db(
        &db,
        &[
            "db",
            "--test",
            "update-loop",
            "--iterations",
            "200",
            "--dir",
            dstr,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let dbid = r
        .stderr
        .split("saved as run ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    (
        db,
        vec![
            ("run", vec!["1".into()]),
            ("compare", vec!["1".into(), "2".into()]),
            ("sweep", vec![g]),
            ("saturate", vec![sat]),
            ("db", vec![dbid]),
        ],
    )
}

#[test]
fn every_report_type_has_complete_charts_and_pngs_of_the_requested_size() {
    let d = tempfile::tempdir().unwrap();
    let (db, types) = all_types(d.path());
    let s = Store::open(&db).unwrap();
    for (what, ids) in &types {
        let refs = iolab::cli::parse_refs(ids).unwrap();
        let charts = iolab::output::html::charts_for(&s, &refs).unwrap();
        every_chart_is_complete(&charts, what);
        let chart = |name: &str| {
            charts
                .iter()
                .find(|c| c.name == name)
                .unwrap_or_else(|| panic!("{what}: no chart {name}"))
        };
        let series = |name: &str| -> Vec<String> {
            chart(name).series.iter().map(|x| x.name.clone()).collect()
        };
        match *what {
            // the sweep: p50, p99 and p99.9 beside IOPS, per combination of the other axis
            "sweep" => {
                let s = series("sweep-threads-latency");
                for p in ["p50", "p99", "p99.9"] {
                    assert!(s.iter().any(|n| n.ends_with(&format!(" {p}"))), "{s:?}");
                }
            }
            // a comparison: both sides' percentile curves on one chart, from the histograms
            // (a curve of at least p50..p99 and the maximum)
            "compare" => {
                let c = chart("compare-latency-percentiles");
                let s = series("compare-latency-percentiles");
                assert!(
                    s.iter().any(|n| n.starts_with("1 ")) && s.iter().any(|n| n.starts_with("2 ")),
                    "{s:?}"
                );
                assert!(
                    c.series.iter().all(|x| x.points.len() >= 4
                        && x.points
                            .windows(2)
                            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)),
                    "{:?}",
                    c.series
                );
            }
            // a run: iolab's per-second I/O beside the device's r/s and w/s on one chart
            "run" => {
                let s = series("device-iops");
                assert!(
                    s.iter().any(|n| n.contains("iolab"))
                        && s.iter().any(|n| n.ends_with("r/s") || n.ends_with("w/s")),
                    "{s:?}"
                );
            }
            _ => {}
        }
        let mut a = vec!["report"];
        a.extend(ids.iter().map(|x| x.as_str()));
        let out = d.path().join(format!("{what}.html"));
        a.extend(["-o", out.to_str().unwrap()]);
        let r = iolab_db(&db, &a);
        assert_eq!(r.code, 0, "{what}: {}", r.stderr);
        assert!(std::fs::read_to_string(&out).unwrap().contains("<svg"));
    }
    // plot: --list, svg, png of the requested size, bad names
    let l = iolab_db(&db, &["plot", "1", "--list"]);
    assert!(
        l.stdout.contains("latency-percentiles") && l.stdout.contains("timeseries-iops"),
        "{}",
        l.stdout
    );
    let png = d.path().join("c.png");
    let r = iolab_db(
        &db,
        &[
            "plot",
            "1",
            "--chart",
            "iops",
            "-o",
            png.to_str().unwrap(),
            "--width",
            "640",
            "--height",
            "300",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    assert_eq!((reader.info().width, reader.info().height), (640, 300));
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    let distinct: std::collections::HashSet<&[u8]> = buf.chunks(4).collect();
    assert!(distinct.len() > 10, "the PNG has content");
    let svg = d.path().join("c.svg");
    assert_eq!(
        iolab_db(
            &db,
            &[
                "plot",
                "1",
                "2",
                "--chart",
                "compare-iops",
                "-o",
                svg.to_str().unwrap()
            ]
        )
        .code,
        0
    );
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    let r = iolab_db(&db, &["plot", "1", "--chart", "nope"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("latency-percentiles"), "{}", r.stderr);
    let r = iolab_db(&db, &["plot", "1", "--chart", "iops", "-o", "x.gif"]);
    assert_eq!(r.code, 2);
}

#[test]
fn reports_open_in_a_browser_without_errors() {
    let Some(browser) = crate::common::browser::chromium() else {
        return skip(
            "reports_open_in_a_browser_without_errors",
            "chromium is not installed (scripts/setup.sh installs it)",
        );
    };
    let d = tempfile::tempdir().unwrap();
    let (db, types) = all_types(d.path());
    for (what, ids) in &types {
        let html = d.path().join(format!("{what}.html"));
        let mut a = vec!["report"];
        a.extend(ids.iter().map(|x| x.as_str()));
        a.extend(["-o", html.to_str().unwrap()]);
        assert_eq!(iolab_db(&db, &a).code, 0);
        crate::common::browser::assert_opens(browser, &html, what);
    }
}

/// The numbers of one SVG attribute, e.g. `num(el, "x1")`.
fn num(el: &str, name: &str) -> f64 {
    let k = format!(" {name}=\"");
    let el = format!(" {el}");
    let i = el.find(&k).unwrap_or_else(|| panic!("no {name} in {el}")) + k.len();
    el[i..i + el[i..].find('"').unwrap()].parse().unwrap()
}

/// The straight segments of an SVG path of absolute M, L, H, V and Z commands.
fn segments(d: &str) -> Vec<((f64, f64), (f64, f64))> {
    let mut toks: Vec<String> = Vec::new();
    for c in d.chars() {
        if c.is_ascii_alphabetic() {
            toks.push(c.to_string());
            toks.push(String::new());
        } else if c == ' ' || c == ',' {
            toks.push(String::new());
        } else {
            toks.last_mut().unwrap().push(c);
        }
    }
    let toks: Vec<&str> = toks
        .iter()
        .map(|t| t.as_str())
        .filter(|t| !t.is_empty())
        .collect();
    let (mut out, mut cur, mut start, mut i) = (Vec::new(), (0.0, 0.0), (0.0, 0.0), 0);
    let n = |i: usize| -> f64 { toks[i].parse().unwrap() };
    while i < toks.len() {
        let next = match toks[i] {
            "M" => {
                cur = (n(i + 1), n(i + 2));
                start = cur;
                i += 3;
                continue;
            }
            "L" => {
                i += 3;
                (n(i - 2), n(i - 1))
            }
            "H" => {
                i += 2;
                (n(i - 1), cur.1)
            }
            "V" => {
                i += 2;
                (cur.0, n(i - 1))
            }
            "Z" => {
                i += 1;
                start
            }
            other => panic!("path command {other} in {d}"),
        };
        out.push((cur, next));
        cur = next;
    }
    out
}

#[test]
fn compare_chart_whiskers_stay_inside_the_plot_and_off_the_legend() {
    use iolab::store::compare::{Cmp, Comparison, Row, Side, Stat};
    let side = |r: &str| Side {
        reference: r.into(),
        run_ids: vec![1, 2],
        tool: "iolab".into(),
        label: None,
        start_time: "2025-01-01T00:00:00Z".into(),
    };
    let cmp = |mean: f64, ci: f64, verdict: &str| Cmp {
        stat: Some(Stat {
            n: 2,
            mean,
            stddev: ci / 12.706 * 2f64.sqrt(),
            ci95: Some(ci),
            cv_pct: 100.0 * ci / 12.706 * 2f64.sqrt() / mean,
        }),
        delta_pct: (verdict != "baseline").then_some(5.0),
        p_value: None,
        verdict: verdict.into(),
    };
    // 95% CIs far wider than the means (n = 2): the low ends reach far below zero
    let c = Comparison {
        schema: "iolab-compare/1".into(),
        sides: vec![side("g1"), side("g2"), side("g3")],
        rows: ["rndrd read", "rndwr write", "seqwr write"]
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let m = 1000.0 * (i + 1) as f64;
                Row {
                    cell: cell.split(' ').next().unwrap().into(),
                    op: cell.split(' ').nth(1).unwrap().into(),
                    metric: "iops".into(),
                    unit: "1/s".into(),
                    sides: vec![
                        cmp(m, m * 6.0, "baseline"),
                        cmp(m * 1.05, m * 3.0, "within noise"),
                        cmp(m * 0.9, m * 0.05, "within noise"),
                    ],
                }
            })
            .collect(),
        not_comparable: Vec::new(),
        changes: Vec::new(),
    };
    let charts = iolab::output::stored_charts::compare_charts(&c);
    let ch = charts.iter().find(|c| c.name == "compare-iops").unwrap();
    for (w, h) in [(960, 420), (640, 300), (900, 400)] {
        let svg = ch.svg(w, h);
        // the plot rectangle, from the two axis lines
        let axes: Vec<&str> = svg
            .split("<line class=\"axis\"")
            .skip(1)
            .map(|x| &x[..x.find("/>").unwrap()])
            .collect();
        let (left, top, bottom) = (num(axes[0], "x1"), num(axes[0], "y1"), num(axes[0], "y2"));
        let right = num(axes[1], "x2");
        // the legend box: its swatches and their names (about 7 px per character)
        let mut legend = (
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        );
        for part in svg.split("<rect ").skip(1) {
            let el = &part[..part.find('>').unwrap()];
            if !el.contains("width=\"12\" height=\"12\"") {
                continue;
            }
            let (x, y) = (num(el, "x"), num(el, "y"));
            let text = &part[part.find("<text").unwrap()..];
            let tel = &text[..text.find('>').unwrap()];
            let name = &text[text.find('>').unwrap() + 1..text.find("</text>").unwrap()];
            let (tx, ty) = (num(tel, "x"), num(tel, "y"));
            legend.0 = legend.0.min(x);
            legend.1 = legend.1.min(y.min(ty - 12.0));
            legend.2 = legend.2.max(tx + 7.0 * name.chars().count() as f64);
            legend.3 = legend.3.max((y + 12.0).max(ty + 3.0));
        }
        assert!(legend.0.is_finite(), "{w}x{h}: a legend: {svg}");
        // every whisker: the paths inside the series groups (bars are rects, labels texts)
        let mut whiskers = 0;
        for g in svg.split("<g class=\"series\"").skip(1) {
            let g = &g[..g.find("</g>").unwrap()];
            for p in g.split("<path").skip(1) {
                let el = &p[..p.find('>').unwrap()];
                let d = &el[el.find(" d=\"").unwrap() + 4..];
                let d = &d[..d.find('"').unwrap()];
                whiskers += 1;
                for (a, b) in segments(d) {
                    for (x, y) in [a, b] {
                        assert!(
                            x >= left - 0.05
                                && x <= right + 0.05
                                && y >= top - 0.05
                                && y <= bottom + 0.05,
                            "{w}x{h}: whisker point ({x}, {y}) outside the plot ({left}..{right}, {top}..{bottom}): {el}"
                        );
                    }
                    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
                    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
                    assert!(
                        x1 < legend.0 || x0 > legend.2 || y1 < legend.1 || y0 > legend.3,
                        "{w}x{h}: whisker {el} crosses the legend {legend:?}"
                    );
                }
            }
        }
        assert_eq!(whiskers, 9, "{w}x{h}: one whisker per bar");
        assert!(
            svg.contains("whisker clipped") && svg.contains("95% CI clipped"),
            "{w}x{h}: a cut whisker is marked"
        );
    }
}

#[test]
fn labels_and_tags_with_quotes_and_angle_brackets_are_escaped_in_the_report() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let mut s = Store::open(&db).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
    v["label"] = "Qq\"Zz<Ww>'Yy&".into();
    v["tags"] = serde_json::json!({"Kk\"<": "Vv\"<Xx>'"});
    let doc = iolab::model::run::RunDoc::from_json(&v).unwrap();
    s.save_run(&doc, &v, None, None).unwrap();
    let html = iolab::commands::report_html(&s, &[Ref::Run(1)]).unwrap();
    assert!(
        html.contains("label Qq&quot;Zz&lt;Ww&gt;&#39;Yy&amp;"),
        "the label is escaped, quotes included"
    );
    assert!(
        html.contains("Kk&quot;&lt;=Vv&quot;&lt;Xx&gt;&#39;"),
        "the tag is escaped, quotes included"
    );
    for raw in ["Qq\"", "Zz<", "Ww>'", "Kk\"", "Vv\"", "<Xx>"] {
        assert!(!html.contains(raw), "{raw} appears unescaped");
    }
    // the one escaping function
    assert_eq!(
        iolab::output::charts::esc("<a href=\"x\">'&'</a>"),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
}

// --- `iolab report ID` embeds what `iolab show ID` prints, for every stored kind ---

/// Undoes the report's HTML escaping (`&`, `<`, `>`; quotes for safety).
/// The text of a report's section `h2` (Results): its `pre` blocks (prose, a table kept as text)
/// unescaped line by line, and each row of its HTML tables as its cells joined by ` | `, in the
/// page's order: [`show_cells`] of what `iolab show` printed.
fn section_text(html: &str, h2: &str) -> String {
    let Some(mut sec) = html
        .split(&format!("<h2>{h2}</h2>"))
        .nth(1)
        .and_then(|t| t.split("</section>").next())
    else {
        return format!("(no {h2} section)");
    };
    let mut out: Vec<String> = Vec::new();
    loop {
        let pre = sec.find("<pre class=\"");
        let table = sec.find("<table class=\"data\">");
        match (pre, table) {
            (Some(p), t) if t.is_none_or(|t| p < t) => {
                let rest = &sec[p..];
                let body = rest.split_once("\">").unwrap().1;
                let (text, after) = body.split_once("</pre>").unwrap();
                out.push(unescape(text));
                sec = after;
            }
            (_, Some(t)) => {
                let (table, after) = sec[t..].split_once("</table>").unwrap();
                for row in table.split("<tr>").skip(1) {
                    let row = row.split("</tr>").next().unwrap().replace("</th>", "</td>");
                    // each cell's content after its opening tag; the piece after the last is empty
                    let pieces: Vec<&str> = row.split("</td>").collect();
                    let cells: Vec<String> = pieces[..pieces.len() - 1]
                        .iter()
                        .map(|c| unescape(c.rsplit_once('>').unwrap().1))
                        .collect();
                    out.push(cells.join(" | "));
                }
                sec = after;
            }
            _ => break,
        }
    }
    out.join("\n")
}

fn unescape(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// A store and a data directory in a temporary directory.
struct Kind {
    d: tempfile::TempDir,
    /// The store on the test PostgreSQL server instead of a file.
    pg: Option<PgDb>,
}

impl Kind {
    fn new() -> Kind {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("data")).unwrap();
        Kind { d, pg: None }
    }
    /// A store of its own on the test PostgreSQL server; None (and a SKIP line) without one.
    fn pg(test: &str) -> Option<Kind> {
        let Some(pg) = PgDb::new() else {
            skip(
                test,
                "IOLAB_TEST_PG_URL is not set (scripts/test.sh starts the server as root)",
            );
            return None;
        };
        let k = Kind::new();
        Some(Kind { pg: Some(pg), ..k })
    }
    fn db(&self) -> PathBuf {
        match &self.pg {
            Some(pg) => PathBuf::from(pg.url()),
            None => self.d.path().join("r.db"),
        }
    }
    fn data(&self) -> String {
        self.d.path().join("data").to_str().unwrap().to_string()
    }
    /// Runs iolab on this store; asserts exit 0.
    fn ok(&self, args: &[&str]) -> Run {
        let r = iolab_db(&self.db(), args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r
    }
    /// The id in `saved as run N` / `saved as group gN` on stderr.
    fn saved(&self, args: &[&str]) -> String {
        let r = self.ok(args);
        let id = r
            .stderr
            .split("saved as ")
            .nth(1)
            .unwrap_or_else(|| panic!("{args:?}: no `saved as` in {}", r.stderr));
        let id = id.trim_start_matches("run ").trim_start_matches("group ");
        id.split([' ', '\n']).next().unwrap().to_string()
    }
    /// The group of a --json sweep or saturate.
    fn group(&self, args: &[&str]) -> String {
        self.ok(args).json()["group"].as_str().unwrap().to_string()
    }
    /// `iolab show ID` must appear, after undoing the HTML escaping, in `iolab report ID`.
    fn report_embeds_show(&self, id: &str) {
        let show = self.ok(&["show", id]).stdout;
        assert!(!show.trim().is_empty(), "show {id} printed nothing");
        let out = self.d.path().join("report.html");
        self.ok(&["report", id, "-o", out.to_str().unwrap()]);
        let results = section_text(&std::fs::read_to_string(&out).unwrap(), "Results");
        assert!(
            results.trim_end() == show_cells(&show).trim_end(),
            "`iolab show {id}` is not in `iolab report {id}`\n--- show:\n{show}\n--- report (Results):\n{results}"
        );
    }
}

#[test]
fn report_embeds_show_of_a_file_run() {
    file_run_report(Kind::new());
}

/// `report` and `show` read a PostgreSQL store the same way.
#[test]
fn report_embeds_show_of_a_file_run_on_a_postgres_store() {
    if let Some(k) = Kind::pg("report_embeds_show_of_a_file_run_on_a_postgres_store") {
        file_run_report(k);
    }
}

fn file_run_report(k: Kind) {
    let id = k.saved(&[
        "run",
        "--dir",
        &k.data(),
        "--files",
        "1",
        "--size",
        "1M",
        "--mode",
        "rndrd",
        "--ops",
        "50",
    ]);
    k.report_embeds_show(&id);
}

#[test]
fn report_embeds_show_of_a_repeat_group() {
    let k = Kind::new();
    let g = k.saved(&[
        "run",
        "--dir",
        &k.data(),
        "--files",
        "1",
        "--size",
        "1M",
        "--mode",
        "rndrd",
        "--engine",
        "null",
        "--time",
        "0.1",
        "--repeat",
        "2",
    ]);
    assert!(g.starts_with('g'), "{g}");
    k.report_embeds_show(&g);
}

#[test]
fn report_embeds_show_of_a_crashcheck_write_and_verify() {
    let k = Kind::new();
    let j = k.d.path().join("run.journal");
    let j = j.to_str().unwrap();
    // the run's key in the test's directory, not the user's state directory
    let key = k.d.path().join("run.key");
    let key = key.to_str().unwrap();
    let w = k.saved(&[
        "crashcheck",
        "write",
        "--dir",
        &k.data(),
        "--journal",
        j,
        "--key-file",
        key,
        "--size",
        "1M",
        "--count",
        "20",
    ]);
    k.report_embeds_show(&w);
    let v = k.saved(&[
        "crashcheck",
        "verify",
        "--dir",
        &k.data(),
        "--journal",
        j,
        "--key-file",
        key,
    ]);
    k.report_embeds_show(&v);
}

#[test]
fn report_embeds_show_of_a_verify_dir() {
    let k = Kind::new();
    k.ok(&[
        "run",
        "--dir",
        &k.data(),
        "--files",
        "1",
        "--size",
        "1M",
        "--bs",
        "16k",
        "--mode",
        "seqwr",
        "--ops",
        "64",
        "--verify",
        "--keep",
        "--no-save",
        "-q",
    ]);
    let v = k.saved(&["verify", "--dir", &k.data()]);
    k.report_embeds_show(&v);
}

#[test]
fn report_embeds_show_of_a_db_run_on_sqlite() {
    let k = Kind::new();
    let id = k.saved(&[
        "db",
        "--dir",
        &k.data(),
        "--table-size",
        "100",
        "--transactions",
        "20",
    ]);
    k.report_embeds_show(&id);
}

#[test]
fn report_embeds_show_of_an_iozone_run() {
    let k = Kind::new();
    let id = k.saved(&[
        "suite",
        "iozone",
        "--dir",
        &k.data(),
        "--min-file",
        "64k",
        "--max-file",
        "128k",
        "--min-rec",
        "4k",
        "--max-rec",
        "8k",
        "-q",
    ]);
    k.report_embeds_show(&id);
}

#[test]
fn report_embeds_show_of_a_bonnie_run() {
    let k = Kind::new();
    let id = k.saved(&[
        "suite",
        "bonnie",
        "--force",
        "--dir",
        &k.data(),
        "--size",
        "8M",
        "--files",
        "1",
    ]);
    k.report_embeds_show(&id);
}

#[test]
fn report_embeds_show_of_a_zones_run() {
    let k = Kind::new();
    let f = k.d.path().join("disk.img");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    let id = k.saved(&[
        "zones",
        f.to_str().unwrap(),
        "--zones",
        "4",
        "--per-zone",
        "256k",
        "--bs",
        "64k",
    ]);
    k.report_embeds_show(&id);
}

#[test]
fn report_embeds_show_of_a_sweep() {
    let k = Kind::new();
    let g = k.group(&[
        "sweep",
        "--threads",
        "1,2",
        "--mode",
        "rndrd,rndwr",
        "--engine",
        "null",
        "--dir",
        &k.data(),
        "--files",
        "1",
        "--size",
        "1M",
        "--time",
        "0.1",
        "--json",
    ]);
    k.report_embeds_show(&g);
}

#[test]
fn report_embeds_show_of_a_saturation() {
    let k = Kind::new();
    let g = k.group(&[
        "saturate",
        "--target",
        "p99<=50ms",
        "--over",
        "rate=1000..100000000",
        "--max-steps",
        "3",
        "--mode",
        "rndrd",
        "--engine",
        "null",
        "--dir",
        &k.data(),
        "--files",
        "1",
        "--size",
        "1M",
        "--time",
        "0.1",
        "--json",
    ]);
    k.report_embeds_show(&g);
}

fn import_fixture(name: &str) {
    let k = Kind::new();
    let f = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name);
    let out = k.ok(&["import", f.to_str().unwrap()]).stdout;
    let id = out
        .split(" as run ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or_else(|| panic!("no `as run N` in {out}"));
    k.report_embeds_show(id);
}

#[test]
fn report_embeds_show_of_a_fio_import() {
    import_fixture("fio-randrw-jsonplus.json");
}

#[test]
fn report_embeds_show_of_a_sysbench_import() {
    import_fixture("sysbench-rndrw.txt");
}

/// The device figures print: two tables (rates; await, queue, %util, CPU) instead of one of 17
/// columns that was about 190 characters wide, wider than a printed page.
#[test]
fn device_tables_fit_a_printed_page() {
    let v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
    let doc = iolab::model::run::RunDoc::from_json(&v).unwrap();
    let text = iolab::output::table::render(&doc);
    let i = text.find("device figures").expect("device section");
    let section = &text[i..];
    for h in [
        "r/s",
        "f/s",
        "r_await",
        "aqu-sz",
        "%util",
        "cpu %usr/%sys/%iowait/%idle",
    ] {
        assert!(section.contains(h), "{h}");
    }
    let widest = section
        .lines()
        .filter(|l| l.starts_with(['┌', '│', '╞', '└']))
        .map(|l| l.chars().count())
        .max()
        .unwrap();
    assert!(
        widest <= 120,
        "a device table line is {widest} characters wide:\n{section}"
    );
    // and the report prints its text wrapped, small enough for a page
    let html = {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open(&d.path().join("r.db")).unwrap();
        s.save_run(&doc, &v, None, None).unwrap();
        iolab::commands::report_html(&s, &[Ref::Run(1)]).unwrap()
    };
    let print = &html[html.find("@media print").expect("print CSS")..];
    assert!(print.contains("white-space:pre-wrap"), "{print}");
}

/// Every report type in a real browser at 1400 and 800 px wide: the page is no wider than the
/// window and no table scrolls inside its own box (nothing scrolls sideways), no line of prose
/// (warnings, notes, explain lines) is cut; every chart is drawn (at least 100 px each way,
/// inside the window, with lines, bars or points). A copy of each report gets a script that
/// measures the laid-out page and writes the figures into the DOM Chromium dumps.
#[test]
fn reports_fit_the_window_at_1400_and_800_px() {
    let Some(browser) = crate::common::browser::chromium() else {
        return skip(
            "reports_fit_the_window_at_1400_and_800_px",
            "chromium is not installed (scripts/setup.sh installs it)",
        );
    };
    let d = tempfile::tempdir().unwrap();
    let (db, types) = all_types(d.path());
    // prose cut: an element wider inside than its box, or a line of a `pre` that does not wrap,
    // not a table's (box-drawing) line, wider than the `pre` (measured in its own font)
    const PROBE: &str = "<script>addEventListener('load',()=>{const box=/^[\\u250c\\u2502\\u255e\\u251c\\u2514\\u2506\\u256d\\u2570+|]/;const cut=[...document.querySelectorAll('p,li,dd,dt,figcaption,h1,h2')].filter(e=>e.scrollWidth>e.clientWidth+1).map(e=>e.tagName);document.querySelectorAll('pre').forEach(p=>{const cs=getComputedStyle(p);if(cs.whiteSpace==='pre-wrap')return;const m=document.createElement('span');m.style.cssText='position:absolute;visibility:hidden;white-space:pre;font:'+cs.font;document.body.appendChild(m);p.textContent.split('\\n').forEach(l=>{if(box.test(l))return;m.textContent=l;if(m.offsetWidth>p.clientWidth)cut.push('line '+l.slice(0,30));});m.remove();});document.querySelectorAll('table').forEach(t=>{const p=t.parentElement;if(p.scrollWidth>p.clientWidth+1||t.getBoundingClientRect().right>innerWidth+1)cut.push('table '+(t.querySelector('th')||t).textContent.slice(0,30));});const svgs=[...document.querySelectorAll('figure svg')];const bad=svgs.filter(s=>{const r=s.getBoundingClientRect();return r.width<100||r.height<100||r.right>innerWidth+1||!s.querySelector('path[stroke],rect[fill],circle')}).length;document.body.setAttribute('data-fit',document.documentElement.scrollWidth+' '+innerWidth+' '+svgs.length+' '+bad+' '+cut.length+' '+cut.join(';').replace(/\"/g,''));});</script>";
    for (what, ids) in &types {
        let html = d.path().join(format!("{what}.html"));
        let mut a = vec!["report"];
        a.extend(ids.iter().map(|x| x.as_str()));
        a.extend(["-o", html.to_str().unwrap()]);
        assert_eq!(iolab_db(&db, &a).code, 0);
        let page = std::fs::read_to_string(&html)
            .unwrap()
            .replace("</body>", &format!("{PROBE}</body>"));
        let probed = d.path().join(format!("{what}-probed.html"));
        std::fs::write(&probed, page).unwrap();
        for width in [1400, 800] {
            let fit = crate::common::browser::probed_attr(browser, &probed, width, "fit")
                .unwrap_or_else(|_| panic!("{what} at {width}: no measurement in the DOM"));
            let f: Vec<&str> = fit.splitn(6, ' ').collect();
            let n = |i: usize| -> u32 { f[i].parse().unwrap() };
            let (page_w, window_w, charts, bad, cut) = (n(0), n(1), n(2), n(3), n(4));
            // every chart drawn: at least 100 px each way, inside the window, with marks
            assert!(charts > 0, "{what} at {width} px: no chart");
            assert_eq!(
                bad, 0,
                "{what} at {width} px: {bad} of {charts} charts empty, too small or cut"
            );
            assert!(
                page_w <= window_w,
                "{what} at {width} px: the page is {page_w} px wide, the window {window_w}"
            );
            assert_eq!(
                cut,
                0,
                "{what} at {width} px: cut: {}",
                f.get(5).unwrap_or(&"")
            );
        }
    }
}

/// In a real browser, a click on a table's header sorts its rows by that column's values (IOPS:
/// 156 fsyncs, 9336 reads, 15735 writes), a second click the other way; the order show printed
/// is the page's without a click.
#[test]
fn report_tables_sort_by_a_click_on_a_header() {
    let Some(browser) = crate::common::browser::chromium() else {
        return skip(
            "report_tables_sort_by_a_click_on_a_header",
            "chromium is not installed (scripts/setup.sh installs it)",
        );
    };
    let d = tempfile::tempdir().unwrap();
    let db = fixture_store(d.path());
    let s = Store::open(&db).unwrap();
    let html = iolab::commands::report_html(&s, &[Ref::Run(1)]).unwrap();
    // the IOPS column of the first table, before any click, after one and after two
    const PROBE: &str = "<script>addEventListener('load',()=>{const t=document.querySelector('table.data');const th=[...t.tHead.rows[0].cells].find(c=>c.textContent==='IOPS');const col=()=>[...t.tBodies[0].rows].map(r=>r.cells[th.cellIndex].textContent).join(',');const out=[col()];th.click();out.push(col());th.click();out.push(col());document.body.setAttribute('data-sorted',out.join(' '));});</script>";
    let page = d.path().join("sort.html");
    std::fs::write(&page, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let sorted = crate::common::browser::probed_attr(browser, &page, 1400, "sorted")
        .unwrap_or_else(|e| panic!("no sort measured: {e}"));
    assert_eq!(sorted, "9336,15735,156 156,9336,15735 15735,9336,156");
}
