//! The parts of `iolab report`'s page that are HTML of their own rather than the text of `show`:
//! its tables as `<table>` elements (sortable, numbers right-aligned with their value for
//! sorting), the explain and check findings as cards, and the page's small inline script (sorting,
//! copy buttons). The text renderers stay the one source of every figure: a table here is the
//! table `show` printed, cell by cell.

use crate::analysis::explain::Explanation;
use crate::output::charts::esc;
use std::fmt::Write;

/// Rows of cells, each cell's text as printed.
pub type Rows = Vec<Vec<String>>;

/// One comfy-table block (`UTF8_FULL_CONDENSED`: `┌`, `│ a ┆ b │`, `╞` under the header, `└`) as
/// its rows of cells: the header rows and the body rows. None when the block is not one such
/// table of equal rows (the caller keeps it as text).
pub fn parse_table(lines: &[&str]) -> Option<(Rows, Rows)> {
    let (mut head, mut body) = (Vec::new(), Vec::new());
    let mut in_body = false;
    let mut width = None;
    for l in lines {
        if l.starts_with('╞') {
            if in_body {
                return None;
            }
            in_body = true;
            continue;
        }
        if l.starts_with(['┌', '└', '├']) {
            continue;
        }
        let inner = l.strip_prefix('│')?.strip_suffix('│')?;
        let cells: Vec<String> = inner.split('┆').map(|c| c.trim().to_string()).collect();
        if *width.get_or_insert(cells.len()) != cells.len() {
            return None;
        }
        if in_body {
            body.push(cells);
        } else {
            head.push(cells);
        }
    }
    if !in_body {
        // no header line: every row is a body row
        body = std::mem::take(&mut head);
    }
    (!body.is_empty() || !head.is_empty()).then_some((head, body))
}

/// A cell's value in its base unit (seconds, bytes, a count) for sorting, when it is a number,
/// with or without one unit: `9336`, `145.87`, `105.3 µs`, `4.72 ms`, `16KiB`, `77.6`, `1,024`.
pub fn cell_value(cell: &str) -> Option<f64> {
    let c = cell.trim().replace(',', "");
    let end = c
        .char_indices()
        .find(|&(i, ch)| {
            !(ch.is_ascii_digit() || ch == '.' || (i == 0 && (ch == '-' || ch == '+')))
        })
        .map_or(c.len(), |(i, _)| i);
    let x: f64 = c[..end].parse().ok()?;
    let unit = c[end..].trim();
    let k = match unit {
        "" | "%" => 1.0,
        "ns" => 1e-9,
        "µs" | "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "B" => 1.0,
        "KiB" | "K" => 1024.0,
        "MiB" | "M" => 1048576.0,
        "GiB" | "G" => 1073741824.0,
        "TiB" | "T" => 1099511627776.0,
        _ => return None,
    };
    Some(x * k)
}

/// A change against the baseline as `compare` prints it: `+25.0%`, `-3.1% * p=0.012`
/// (significant: Welch's t-test), `+0.4% ~noise` (within the noise): its percentage and its
/// class (`sig`, `noise`, or `plain` for single runs, which cannot be tested).
pub fn delta(cell: &str) -> Option<(f64, &'static str)> {
    let (num, rest) = cell.split_once('%')?;
    if !num.starts_with(['+', '-']) {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    let class = match rest.trim() {
        "" => "plain",
        "~noise" => "noise",
        r if r.starts_with("* p=") => "sig",
        _ => return None,
    };
    Some((v, class))
}

/// The table as HTML: `table.data` in a `div.table` (which scrolls inside itself should the page
/// be narrower than the table), the header cells sortable, each number right-aligned with its
/// value (`data-v`, base units) for sorting.
pub fn table_html(head: &[Vec<String>], body: &[Vec<String>], s: &mut String) {
    s.push_str("<div class=\"table\"><table class=\"data\">");
    // a column of numbers (every cell that is not empty or `-`) has its header over them
    let numeric = |i: usize| {
        let mut cells = body
            .iter()
            .filter_map(|r| r.get(i))
            .filter(|c| !c.is_empty() && c.as_str() != "-")
            .peekable();
        cells.peek().is_some() && cells.all(|c| cell_value(c).is_some() || delta(c).is_some())
    };
    if !head.is_empty() {
        s.push_str("<thead>");
        for row in head {
            s.push_str("<tr>");
            for (i, c) in row.iter().enumerate() {
                let class = if numeric(i) { " class=\"n\"" } else { "" };
                let _ = write!(s, "<th{class} title=\"sort by {0}\">{0}</th>", esc(c));
            }
            s.push_str("</tr>");
        }
        s.push_str("</thead>");
    }
    s.push_str("<tbody>");
    for row in body {
        s.push_str("<tr>");
        for c in row {
            if let Some((v, class)) = delta(c) {
                let _ = write!(
                    s,
                    "<td class=\"n delta {class}\" data-v=\"{v}\">{}</td>",
                    esc(c)
                );
                continue;
            }
            match cell_value(c) {
                Some(v) => {
                    let _ = write!(s, "<td class=\"n\" data-v=\"{v}\">{}</td>", esc(c));
                }
                None => {
                    let _ = write!(s, "<td>{}</td>", esc(c));
                }
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
}

/// One finding as a card: its rule, a badge (the confidence, or the check's severity), the
/// evidence with its figures, why, and the next command with a copy button.
fn card(
    s: &mut String,
    rule: &str,
    badge: &str,
    kind: &str,
    evidence: &str,
    why: &str,
    next: (&str, &str),
) {
    let _ = write!(
        s,
        "<article class=\"card\"><h4><span class=\"rule\">{}</span> <span class=\"badge {}\">{}</span> <span class=\"kind\">{}</span></h4><p><b>Evidence:</b> {}</p><p><b>Why:</b> {}</p>",
        esc(rule),
        esc(badge),
        esc(badge),
        esc(kind),
        esc(evidence),
        esc(why)
    );
    if !next.1.is_empty() {
        let _ = write!(
            s,
            "<div class=\"next\"><b>{}:</b> <code>{}</code> <button type=\"button\" class=\"copy\" data-copy=\"{}\">copy</button></div>",
            esc(next.0),
            esc(next.1),
            esc(next.1)
        );
    }
    s.push_str("</article>");
}

/// The explanation as cards, one group per explained cell (its mode, setup and run).
pub fn explain_cards(e: &Explanation, s: &mut String) {
    let _ = write!(s, "<p class=\"subject\">explain {}</p>", esc(&e.subject));
    for c in &e.cells {
        let run = c.run_id.map(|i| format!("run {i}, ")).unwrap_or_default();
        let role = c
            .role
            .as_ref()
            .map(|r| format!(" role {r}"))
            .unwrap_or_default();
        let _ = write!(
            s,
            "<h3>{}{} ({run}{})</h3><div class=\"cards\">",
            esc(&c.mode),
            esc(&role),
            esc(&c.setup)
        );
        for f in &c.findings {
            card(
                s,
                &f.rule,
                f.confidence.name(),
                f.layer.name(),
                &f.evidence,
                &f.why,
                ("Next", &f.next),
            );
        }
        s.push_str("</div>");
    }
}

/// `iolab check`'s findings as cards, their severity as the badge.
pub fn check_cards(found: &[crate::analysis::check::Finding], s: &mut String) {
    s.push_str("<div class=\"cards\">");
    for x in found {
        let sev = format!("{:?}", x.severity);
        card(
            s,
            &x.id,
            &sev,
            &x.subject,
            &x.evidence,
            &x.why,
            ("Fix", &x.fix),
        );
    }
    s.push_str("</div>");
}

/// The page's styles for tables and cards (beside `html::PAGE_CSS`).
pub const PARTS_CSS: &str = "div.table{max-width:100%;overflow-x:auto;margin:.4em 0}
table.data{border-collapse:collapse;font-size:12px;font-variant-numeric:tabular-nums}
table.data th,table.data td{border-bottom:1px solid #ddd;padding:.15em .5em;text-align:left;vertical-align:top}
table.data th{cursor:pointer;background:#f0f0f0;position:sticky;top:0}
table.data th[data-dir=asc]::after{content:' \\25b2'}table.data th[data-dir=desc]::after{content:' \\25bc'}
table.data td.n{text-align:right;white-space:nowrap}table.data th.n{text-align:right}
table.data tbody tr:nth-child(even){background:#fafafa}
td.delta.sig{font-weight:bold;background:#fde8b0}td.delta.noise{color:#888}
div.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,420px),1fr));gap:.8em}
article.card{border:1px solid #ccc;border-radius:6px;padding:.6em .8em;font-size:13px;overflow-wrap:anywhere;min-width:0}
article.card h4{margin:0 0 .4em 0;font-size:14px}article.card p{margin:.3em 0}
span.badge{display:inline-block;border-radius:10px;padding:0 .6em;font-size:11px;color:#fff;background:#777}
span.badge.high,span.badge.Critical{background:#b00}span.badge.medium,span.badge.Warn{background:#c70}span.badge.low,span.badge.Info{background:#468}
span.kind{color:#666;font-size:12px}
div.next code{white-space:pre-wrap;overflow-wrap:anywhere;background:#f3f3f3;padding:0 .2em}
button.copy{font-size:11px;margin-left:.4em;cursor:pointer}
@media (prefers-color-scheme: dark){td.delta.sig{background:#5a4300}table.data th{background:#333}table.data th,table.data td{border-color:#444}table.data tbody tr:nth-child(even){background:#262626}article.card{border-color:#555}div.next code{background:#2a2a2a}span.kind{color:#aaa}}
@media print{@page{size:A4;margin:12mm}div.table{overflow:visible}table.data{font-size:9px}table.data th{position:static}tr,article.card{break-inside:avoid}button.copy{display:none}div.cards{display:block}article.card{margin:.4em 0}}";

/// The page's script: any table sorted by a click on a header (numbers by their value, again for
/// the other order), and a copy button copying its command. The page reads the same without it.
pub const SCRIPT: &str = "<script>document.querySelectorAll('table.data th').forEach(function(th){th.addEventListener('click',function(){var t=th.closest('table'),b=t.tBodies[0],i=th.cellIndex,asc=th.getAttribute('data-dir')!=='asc';t.querySelectorAll('th').forEach(function(h){h.removeAttribute('data-dir')});th.setAttribute('data-dir',asc?'asc':'desc');var key=function(r){var c=r.cells[i];if(!c)return '';var v=c.getAttribute('data-v');return v===null?c.textContent:parseFloat(v)};Array.from(b.rows).sort(function(x,y){var a=key(x),z=key(y),d=(typeof a==='number'&&typeof z==='number')?a-z:String(a).localeCompare(String(z));return asc?d:-d}).forEach(function(r){b.appendChild(r)})})});document.addEventListener('click',function(e){var b=e.target.closest&&e.target.closest('button.copy');if(b&&navigator.clipboard){navigator.clipboard.writeText(b.getAttribute('data-copy')).then(function(){b.textContent='copied'},function(){})}});</script>";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_show_table_becomes_its_rows_of_cells() {
        let t = [
            "┌───────┬─────┬───────┐",
            "│ mode  ┆ op  ┆  IOPS │",
            "╞═══════╪═════╪═══════╡",
            "│ rndrd ┆ read┆  9336 │",
            "│       ┆ fsync ┆   156 │",
            "└───────┴─────┴───────┘",
        ];
        let (head, body) = parse_table(&t).unwrap();
        assert_eq!(head, [["mode", "op", "IOPS"]]);
        assert_eq!(body, [["rndrd", "read", "9336"], ["", "fsync", "156"]]);
        // rows of other widths, or a second header line: not one table
        assert!(parse_table(&["│ a ┆ b │", "│ c │"]).is_none());
        assert!(parse_table(&["│ a │", "╞══╡", "│ b │", "╞══╡"]).is_none());
        assert!(parse_table(&["+---+", "| a |"]).is_none());
    }

    #[test]
    fn compare_deltas_are_marked_by_significance() {
        assert_eq!(delta("+25.0%"), Some((25.0, "plain")));
        assert_eq!(delta("-3.1% * p=0.012"), Some((-3.1, "sig")));
        assert_eq!(delta("+0.4% ~noise"), Some((0.4, "noise")));
        assert_eq!(delta("25.0%"), None);
        assert_eq!(delta("77.6"), None);
        assert_eq!(delta("-"), None);
        let mut s = String::new();
        table_html(
            &[vec!["Δ% vs 1".into()]],
            &[vec!["-3.1% * p=0.012".into()]],
            &mut s,
        );
        assert!(
            s.contains("<td class=\"n delta sig\" data-v=\"-3.1\">-3.1% * p=0.012</td>"),
            "{s}"
        );
    }

    #[test]
    fn cells_sort_by_their_value_in_base_units() {
        assert_eq!(cell_value("9336"), Some(9336.0));
        assert_eq!(cell_value("105.3 µs"), Some(105.3e-6));
        assert_eq!(cell_value("4.72 ms"), Some(4.72e-3));
        assert!(cell_value("4.72 ms").unwrap() > cell_value("851.5 µs").unwrap());
        assert_eq!(cell_value("16KiB"), Some(16384.0));
        assert_eq!(cell_value("1,024"), Some(1024.0));
        assert_eq!(cell_value("-"), None);
        assert_eq!(cell_value("rndrd"), None);
        assert_eq!(cell_value("5/16"), None);
        assert_eq!(cell_value("33.8/34.3/26.3/5.6"), None);
        assert_eq!(cell_value("2 files"), None);
    }
}
