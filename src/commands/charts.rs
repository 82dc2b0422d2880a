use super::*;

pub fn report(a: &cli::ReportArgs) -> Result<i32> {
    let s = open_store(&a.db)?;
    let refs = cli::parse_refs(&a.ids)?;
    let html = crate::output::html::html(&s, &refs)?;
    write_atomically(&a.output, html.as_bytes(), "--output")?;
    eprintln!("wrote {}", a.output.display());
    Ok(0)
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
