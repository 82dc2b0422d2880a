//! Output: text tables, stored-run rendering, SVG/PNG charts and the HTML report.

pub mod charts;
pub mod document;
pub mod history;
pub mod html;
pub mod table;
