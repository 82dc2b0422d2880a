//! `iolab report` (one self-contained HTML file) and `iolab plot`'s charts (one chart as SVG or
//! PNG). Every number shown comes from the same stored documents and renderers as `iolab show`;
//! the findings shown beside them come from `crate::analysis`, run by the command ([`Found`]).

use crate::analysis::explain::Explanation;
use crate::error::Result;
use crate::output::charts::{CSS, Chart, esc};
use crate::output::stored_charts::compare_charts_with_curves;
use crate::store::{Ref, Store};
use std::fmt::Write;

/// All charts for a report target, by name.
pub fn charts_for(store: &Store, refs: &[Ref]) -> Result<Vec<Chart>> {
    match refs {
        [r] => Ok(crate::output::shown::resolve_shown(store, *r)?.charts),
        _ => compare_charts_with_curves(store, &crate::store::compare::compare(store, refs)?),
    }
}

/// What the report shows beside the figures, found by `crate::analysis` (the command runs it):
/// the explanation of the one run or group reported (none for other kinds or a comparison), and
/// `iolab check`'s findings on the first run's environment snapshot.
#[derive(Default)]
pub struct Found {
    pub explain: Option<Explanation>,
    pub check: Vec<crate::analysis::check::Finding>,
}

fn header(store: &Store, id: i64, found: &Found, s: &mut String) -> Result<()> {
    let r = store.run(id)?;
    let doc = store.doc(id)?;
    let sys: Option<crate::system::env::EnvReport> = doc
        .get("system")
        .and_then(|x| serde_json::from_value(x.clone()).ok());
    let _ = write!(
        s,
        "<dl class=\"facts\"><dt>run</dt><dd>{id} ({} {}{})</dd><dt>when</dt><dd>{} UTC</dd><dt>host</dt><dd>{}</dd>",
        esc(&r.tool),
        esc(&r.tool_version),
        r.label
            .as_ref()
            .map(|l| format!(", label {}", esc(l)))
            .unwrap_or_default(),
        esc(&r.start_time),
        esc(&r.host)
    );
    if let Some(sys) = &sys {
        let _ = write!(
            s,
            "<dt>kernel</dt><dd>{}</dd><dt>virtualization</dt><dd>{}</dd>",
            esc(&sys.platform.kernel),
            esc(&sys.platform.virtualization.verdict)
        );
        if let Some(p) = &sys.path {
            let stack: Vec<String> = p
                .stack
                .iter()
                .map(|l| format!("{} {}", l.kind, l.name))
                .collect();
            let _ = write!(
                s,
                "<dt>storage</dt><dd>{} → {} ({}) → {}</dd>",
                esc(&p.path),
                esc(&p.fs.fstype),
                esc(&p.mount_options.join(",")),
                esc(&stack.join(" → "))
            );
            let scheds: Vec<String> = p
                .physical_disks
                .iter()
                .filter_map(|d| crate::system::env::find(sys, d))
                .map(|b| {
                    format!(
                        "{}: {}",
                        b.name,
                        b.scheduler.clone().unwrap_or_else(|| "-".into())
                    )
                })
                .collect();
            let _ = write!(s, "<dt>scheduler</dt><dd>{}</dd>", esc(&scheds.join(", ")));
        }
    }
    s.push_str("</dl>");
    if sys.is_some() {
        let f = &found.check;
        if !f.is_empty() {
            s.push_str(
                "<details open class=\"check\"><summary>iolab check findings for this storage</summary>",
            );
            crate::output::html_parts::check_cards(f, s);
            s.push_str("</details>");
        }
    }
    Ok(())
}

const PAGE_CSS: &str = "body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;background:#fff;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
pre.table{font-size:12px;overflow-x:auto;background:#f6f6f6;padding:.6em;line-height:1.25;max-width:100%;box-sizing:border-box}
pre.text{font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere;margin:.3em 0;line-height:1.35}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dl.facts dt{font-weight:bold}
figure{margin:1.5em 0;page-break-inside:avoid}figure svg{max-width:100%;height:auto}
@media (prefers-color-scheme: dark){body{background:#1e1e1e;color:#e6e6e6}pre.table{background:#2a2a2a}h2{border-color:#555}}
@media print{body{background:#fff;color:#000;max-width:none}pre.table{background:none;border:1px solid #ccc;font-size:9.5px;white-space:pre-wrap;overflow:visible}}";

/// The text of `show` as HTML: each of its tables (box-drawing lines) a `table.data`
/// (`html_parts::table_html`; one that is not a plain grid stays text in `pre.table`, which may
/// scroll inside its own box), the prose between them (warnings, notes) in `pre.text`, which
/// wraps at the page's width: no line of prose is cut.
fn text_blocks(text: &str, s: &mut String) {
    let is_table = |l: &str| l.starts_with(['┌', '│', '╞', '├', '└', '┆', '╭', '╰', '+', '|']);
    let mut block: Vec<&str> = Vec::new();
    let mut table = false;
    let flush = |block: &mut Vec<&str>, table: bool, s: &mut String| {
        if block.is_empty() {
            return;
        }
        if !table {
            let _ = write!(s, "<pre class=\"text\">{}</pre>", esc(&block.join("\n")));
        } else {
            // tables printed one under the other: each from its top line
            let starts: Vec<usize> = (0..block.len())
                .filter(|&i| i == 0 || block[i].starts_with('┌'))
                .chain(std::iter::once(block.len()))
                .collect();
            for w in starts.windows(2) {
                let one = &block[w[0]..w[1]];
                match crate::output::html_parts::parse_table(one) {
                    Some((head, body)) => crate::output::html_parts::table_html(&head, &body, s),
                    None => {
                        let _ = write!(s, "<pre class=\"table\">{}</pre>", esc(&one.join("\n")));
                    }
                }
            }
        }
        block.clear();
    };
    for l in text.lines() {
        if is_table(l) != table {
            flush(&mut block, table, s);
            table = is_table(l);
        }
        block.push(l);
    }
    flush(&mut block, table, s);
}

/// The whole report.
pub fn html(store: &Store, refs: &[Ref], found: &Found) -> Result<String> {
    let mut s = String::new();
    // One reference: exactly what `iolab show` prints for it; several: `iolab compare`.
    let (title, first_run, text, charts) = match refs {
        [r] => {
            let shown = crate::output::shown::resolve_shown(store, *r)?;
            (
                format!("iolab report: {}", shown.title),
                shown.first_run,
                shown.text,
                shown.charts,
            )
        }
        _ => {
            let c = crate::store::compare::compare(store, refs)?;
            (
                format!(
                    "iolab report: {} compared",
                    refs.iter()
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                store.resolve_run_ids(refs[0])?[0],
                crate::output::stored_views::render_compare(&c),
                compare_charts_with_curves(store, &c)?,
            )
        }
    };
    let _ = write!(
        s,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><meta name=\"color-scheme\" content=\"light dark\"><title>{}</title><style>{PAGE_CSS}\n{}\n{CSS}</style></head><body><header><h1>{}</h1>",
        esc(&title),
        crate::output::html_parts::PARTS_CSS,
        esc(&title)
    );
    header(store, first_run, found, &mut s)?;
    s.push_str("</header>");
    s.push_str("<section><h2>Results</h2>");
    text_blocks(&text, &mut s);
    s.push_str("</section>");
    // The explanation of a run or a group of runs (other kinds have none).
    if let [_] = refs
        && let Some(e) = &found.explain
    {
        s.push_str("<section id=\"explain\"><h2>Explanation</h2>");
        crate::output::html_parts::explain_cards(e, &mut s);
        s.push_str("</section>");
    }
    if !charts.is_empty() {
        s.push_str("<section><h2>Charts</h2>");
    }
    for c in &charts {
        let _ = write!(
            s,
            "<figure id=\"{}\">{}<figcaption>{} (chart <code>{}</code>)</figcaption></figure>",
            esc(&c.name),
            c.svg(960, 420),
            esc(&c.title),
            esc(&c.name)
        );
    }
    if !charts.is_empty() {
        s.push_str("</section>");
    }
    let _ = writeln!(
        s,
        "<footer><p>Made by iolab {} from the results store; every figure above is in <code>iolab show</code> / <code>iolab export</code>. Click a column's header to sort its table.</p></footer>{}</body></html>",
        crate::VERSION,
        crate::output::html_parts::SCRIPT
    );
    Ok(s)
}

/// For tests and `plot --list`: the names of the charts of a report target.
pub fn chart_names(store: &Store, refs: &[Ref]) -> Result<Vec<String>> {
    Ok(charts_for(store, refs)?
        .into_iter()
        .map(|c| c.name)
        .collect())
}
