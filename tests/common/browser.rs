//! Opening an HTML report in a headless Chromium, as a person would: a screenshot taken, no
//! console message, and the page not blank.

use std::path::Path;

/// The Chromium on this machine, if any.
pub fn chromium() -> Option<&'static str> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
}

/// Chromium's flags for a page opened headless, offline and quiet (add the window size and the
/// output: `--screenshot=`, `--dump-dom`).
pub const HEADLESS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// Opens `html` in `browser` (headless) and asserts it renders: a screenshot is taken, the
/// console says nothing, and the screenshot has more than 50 colors. `what` names it in a
/// failure.
pub fn assert_opens(browser: &str, html: &Path, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let profile = dir.path().join("profile");
    let o = std::process::Command::new(browser)
        .args(HEADLESS)
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(shot.exists(), "{what}: no screenshot: {err}");
    let console: Vec<&str> = err.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "{what}: console messages: {console:?}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let distinct: std::collections::HashSet<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    assert!(
        distinct.len() > 50,
        "{what}: the screenshot is blank ({} colors)",
        distinct.len()
    );
}

/// Opens `page` (a file with a probe script that sets `data-NAME` on `<body>` once loaded) in
/// headless Chromium `width` px wide and returns that attribute's value, or None with what
/// Chromium said on stderr.
pub fn probed_attr(
    browser: &str,
    page: &Path,
    width: u32,
    name: &str,
) -> std::result::Result<String, String> {
    let profile = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(browser)
        .args(HEADLESS)
        .arg("--dump-dom")
        .arg(format!("--window-size={width},1000"))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&o.stdout);
    dom.split(&format!("data-{name}=\""))
        .nth(1)
        .and_then(|r| r.split('"').next())
        .map(str::to_string)
        .ok_or_else(|| String::from_utf8_lossy(&o.stderr).into_owned())
}
