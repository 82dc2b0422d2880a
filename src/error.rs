//! Errors that end a command, each with its documented exit code (docs/exit-codes.md).

use std::fmt;

/// Exit codes. 0 is success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// A run or command failed while working (I/O setup failed, ENOSPC during prepare, ...).
    Failed = 1,
    /// Bad input: an invalid flag value, a missing or unusable path. Nothing was written.
    Usage = 2,
    /// A run completed (and was printed and saved) but some I/O operations failed.
    IoErrors = 3,
    /// A run completed and was printed, but could not be saved to the results store.
    NotSaved = 4,
    /// Interrupted by Ctrl-C / SIGINT / SIGTERM; what was measured so far was printed.
    Interrupted = 130,
}

/// An error with the exit code it should produce.
#[derive(Debug)]
pub struct Error {
    pub exit: Exit,
    pub msg: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

impl Error {
    pub fn usage(msg: impl Into<String>) -> Self {
        Error {
            exit: Exit::Usage,
            msg: msg.into(),
        }
    }
    pub fn failed(msg: impl Into<String>) -> Self {
        Error {
            exit: Exit::Failed,
            msg: msg.into(),
        }
    }
    pub fn interrupted(msg: impl Into<String>) -> Self {
        Error {
            exit: Exit::Interrupted,
            msg: msg.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
