use super::*;

pub fn report(a: &cli::ReportArgs) -> Result<i32> {
    let s = open_store(&a.db)?;
    let refs = cli::parse_refs(&a.ids)?;
    let html = report_html(&s, &refs)?;
    write_atomically(&a.output, html.as_bytes(), "--output")?;
    eprintln!("wrote {}", a.output.display());
    Ok(0)
}

/// The HTML report of `refs`: what `analysis` finds (the explanation of one run or group, the
/// check findings on the first run's environment) read and found here, rendered by
/// `output::html`.
pub fn report_html(s: &Store, refs: &[store::Ref]) -> Result<String> {
    let first = refs
        .first()
        .and_then(|r| s.resolve_run_ids(*r).ok())
        .and_then(|ids| ids.first().copied());
    let sys: Option<crate::model::env::EnvReport> =
        first.and_then(|id| s.doc(id).ok()).and_then(|d| {
            d.get("system")
                .and_then(|x| serde_json::from_value(x.clone()).ok())
        });
    let found = crate::output::html::Found {
        explain: match refs {
            [r] => super::stored::explain_ref(s, *r).ok(),
            _ => None,
        },
        check: sys
            .map(|e| crate::analysis::check::check(&e))
            .unwrap_or_default(),
    };
    crate::output::html::html(s, refs, &found)
}

pub fn plot(a: &cli::PlotArgs) -> Result<i32> {
    let s = open_store(&a.db)?;
    let refs = cli::parse_refs(&a.ids)?;
    let charts = crate::output::html::charts_for(&s, &refs)?;
    if a.list {
        for c in &charts {
            print_out(&format!("{:<22} {}\n", c.name, c.title));
        }
        return Ok(0);
    }
    let names: Vec<&str> = charts.iter().map(|c| c.name.as_str()).collect();
    let name = a
        .chart
        .as_deref()
        .ok_or_else(|| Error::usage(format!("--chart: name one of {}", names.join(", "))))?;
    let c = charts.iter().find(|c| c.name == name).ok_or_else(|| {
        Error::usage(format!(
            "--chart {name}: not a chart of {}; use one of {}",
            a.ids.join(" "),
            names.join(", ")
        ))
    })?;
    if !(100..=10000).contains(&a.width) || !(100..=10000).contains(&a.height) {
        return Err(Error::usage("--width/--height: use 100 to 10000 pixels"));
    }
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| format!("{name}.svg").into());
    let svg = c.svg(a.width, a.height);
    let bytes = match out.extension().and_then(|e| e.to_str()) {
        Some("svg") => svg.into_bytes(),
        Some("png") => {
            crate::output::charts::png(&svg).map_err(|e| Error::failed(format!("png: {e}")))?
        }
        _ => {
            return Err(Error::usage(format!(
                "--output {}: use a .svg or .png file name",
                out.display()
            )));
        }
    };
    write_atomically(&out, &bytes, "--output")?;
    eprintln!("wrote {}", out.display());
    Ok(0)
}
