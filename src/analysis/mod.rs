//! Analysis: documents in, findings out. Two rule tables with one rule shape ([`rule::Rule`]):
//! `iolab check` judges an environment report ([`check`]), `iolab explain` a run document, a
//! group's or a sweep's ([`explain`]). Nothing here reads the live system, the store or prints:
//! commands read the documents, `output` renders the findings.

pub mod check;
pub mod explain;
pub mod rule;
