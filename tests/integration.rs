//! Every integration test, in one test binary (one build and one link of the test code
//! instead of one per file: the suite's build took most of CI's time). Each file under tests/
//! is a module here, its tests named `FILE::TEST` as before (`cargo test --test integration
//! run::` runs tests/run.rs's; `cargo test --test integration -- --exact capture::NAME` one).
//! `common` holds what they share.

mod common;

mod architecture;
mod capture;
mod capture_files;
mod check_docs;
mod crashcheck;
mod db;
mod eio;
mod engine_contract;
mod env_fixtures;
mod explain;
mod fingerprint;
mod fio_bsizes;
mod fio_engines;
mod fio_group;
mod fio_groups;
mod fio_latency;
mod fio_logs;
mod fio_noio;
mod fio_offsets;
mod fio_output;
mod fio_regression;
mod fio_shaping;
mod fio_steady;
mod fio_survey;
mod fio_timing;
mod fio_verify_opts;
mod fiojob;
mod fiojob_engine;
mod first_use;
mod fuzz_input;
mod honesty;
mod import_parse;
mod iostat;
mod layouts;
mod like;
mod metrics;
mod mpi;
mod paced;
mod package;
mod prometheus;
mod pts;
mod replay;
mod report;
mod root;
mod root_env;
mod run;
mod safety_target;
mod schemas;
mod signatures;
mod snapshots;
mod steady;
mod store;
mod suites;
mod sweep;
mod verify;
