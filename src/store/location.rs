//! Where a store lives: `--db` / `IOLAB_DB` read as a path or a URL (`sqlite://`, `postgres://`;
//! other schemes refused), the default path, and URLs with their password masked for messages.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

/// The URL schemes `--db` / `IOLAB_DB` take, as error messages name them.
pub const SCHEMES: &str = "postgres://user:pass@host:port/db (or postgresql://), sqlite:///path/file.db, or a plain file path";

impl Location {
    /// Reads a `--db` value (`source` names where it came from: `--db` or `IOLAB_DB`). Anything
    /// that parses as a URL (`scheme:/...`) is a URL: `postgres://`/`postgresql://` or
    /// `sqlite://PATH`; any other scheme is a usage error naming the supported ones, so a URL
    /// never becomes a file named after it.
    pub fn parse(value: &std::ffi::OsStr, source: &str) -> Result<Location> {
        let Some(s) = value.to_str() else {
            return Ok(Location::Sqlite(PathBuf::from(value)));
        };
        let Some(scheme) = url_scheme(s) else {
            return Ok(Location::Sqlite(PathBuf::from(s)));
        };
        match scheme.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => {
                // Parsed by the client's own URL rules, so a bad one is refused here, clearly.
                s.parse::<postgres::Config>().map_err(|e| {
                    Error::usage(format!(
                        "{source} {}: not a PostgreSQL URL the client can use ({e}); use {SCHEMES}",
                        mask_password(s)
                    ))
                })?;
                Ok(Location::Postgres(s.to_string()))
            }
            "sqlite" => {
                let rest = &s[scheme.len() + 1..];
                let path = rest.strip_prefix("//").unwrap_or(rest);
                if path.is_empty() {
                    return Err(Error::usage(format!(
                        "{source} {s}: no file path after sqlite://; use {SCHEMES}"
                    )));
                }
                // sqlite://relative would name a file in the working directory nobody meant
                if !path.starts_with('/') {
                    return Err(Error::usage(format!(
                        "{source} {s}: sqlite:// takes an absolute path (sqlite:///path/file.db, three slashes); a relative path is given plainly, without sqlite://"
                    )));
                }
                Ok(Location::Sqlite(PathBuf::from(path)))
            }
            _ => Err(Error::usage(format!(
                "{source} {}: a URL of scheme {scheme}://, which iolab cannot store results in; use {SCHEMES}",
                mask_password(s)
            ))),
        }
    }

    /// The SQLite file, when the store is one.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            Location::Sqlite(p) => Some(p),
            Location::Postgres(_) => None,
        }
    }
}

impl std::fmt::Display for Location {
    /// The path, or the URL with its password masked (it goes into messages and documents).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres(u) => write!(f, "{}", mask_password(u)),
        }
    }
}

/// `scheme` of a value that starts like a URL (`scheme:/`), per RFC 3986's scheme characters.
pub(super) fn url_scheme(s: &str) -> Option<&str> {
    let (scheme, rest) = s.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && rest.starts_with('/'))
    .then_some(scheme)
}

/// A URL with the password of its user info replaced by `***`.
pub fn mask_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (auth, tail) = rest.split_at(auth_end);
    match auth.rsplit_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split_once(':').map(|x| x.0).unwrap_or(user);
            format!("{scheme}://{name}:***@{host}{tail}")
        }
        _ => url.to_string(),
    }
}

/// Where the store lives: `--db`, else `$IOLAB_DB`, else `$XDG_DATA_HOME/iolab/results.db`,
/// else `~/.local/share/iolab/results.db`. A URL of a scheme iolab cannot use is a usage error.
pub fn resolve_location(flag: Option<&Path>) -> Result<Location> {
    if let Some(p) = flag {
        return Location::parse(p.as_os_str(), "--db");
    }
    if let Some(p) = std::env::var_os("IOLAB_DB").filter(|s| !s.is_empty()) {
        return Location::parse(&p, "IOLAB_DB");
    }
    Ok(Location::Sqlite(default_path()))
}

/// `$XDG_DATA_HOME/iolab/results.db`, else `~/.local/share/iolab/results.db`.
fn default_path() -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
                .join(".local/share")
        });
    base.join("iolab/results.db")
}
