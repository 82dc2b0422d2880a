//! The PostgreSQL backend: libpq (the PostgreSQL project's own C client, the one sysbench and
//! psql use) through the `pq-sys` bindings, blocking, one connection per worker thread,
//! statements prepared once per connection (ARCHITECTURE.md says why not the `postgres` crate).
//!
//! Every libpq call of iolab is in this file, behind `Pg`, `Res` and `connect`: the rest of the
//! code sees only the `Conn` trait. Per statement nothing is allocated on iolab's side: the
//! prepared statement's name is kept per connection, parameters are passed in binary format from
//! the stack (integers as big-endian int8, strings as their bytes), and the result is read in
//! place and cleared (libpq allocates the result itself, as it does for sysbench).

use super::*;
use pq_sys as pq;
use std::ffi::{CStr, CString, c_char, c_int};

/// The most parameters one workload statement has (`Q::InsertWithId` has 4).
const MAX_PARAMS: usize = 8;
/// OID of PostgreSQL's `int8` (bigint): integer parameters are declared and sent as int8.
const INT8_OID: pq::Oid = 20;
/// SQL texts up to this length are NUL-terminated on the stack, not in a `CString`.
const STACK_SQL: usize = 256;

pub struct Pg {
    c: *mut pq::PGconn,
    /// The server-side name of each prepared statement.
    stmts: std::collections::HashMap<(Q, u32), CString>,
}

// SAFETY: libpq lets a connection be used from any thread as long as no two threads use it at
// the same time (libpq is built thread-safe, PQisthreadsafe); every use goes through `&mut self`
// (or drop), so one thread at a time.
unsafe impl Send for Pg {}

impl Drop for Pg {
    fn drop(&mut self) {
        // SAFETY: `c` came from PQconnectdbParams, is not null and is finished only here.
        unsafe { pq::PQfinish(self.c) }
    }
}

/// A result of libpq, cleared on drop.
struct Res(*mut pq::PGresult);

impl Drop for Res {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: a result of PQexec*/PQprepare, cleared once.
            unsafe { pq::PQclear(self.0) }
        }
    }
}

/// libpq's multi-line messages ("FATAL:  ...\nDETAIL: ...", "... failed: ...\n\tIs the server
/// running ...") as one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A C string of libpq as text (None for null).
///
/// # Safety
/// `p` is null or a NUL-terminated string that lives while the result is used.
unsafe fn text<'a>(p: *const c_char) -> Option<std::borrow::Cow<'a, str>> {
    if p.is_null() {
        None
    } else {
        // SAFETY: per the caller.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy())
    }
}

/// Calls `f` with `s` NUL-terminated: from a stack buffer when it is short (the per-transaction
/// BEGIN/COMMIT/ROLLBACK and the update loop's statement), else from a `CString`.
fn with_c<T>(s: &str, f: impl FnOnce(*const c_char) -> T) -> std::result::Result<T, DbErr> {
    if s.as_bytes().contains(&0) {
        return Err(DbErr::Other("the SQL text contains a NUL byte".into()));
    }
    if s.len() < STACK_SQL {
        let mut buf = [0u8; STACK_SQL];
        buf[..s.len()].copy_from_slice(s.as_bytes());
        Ok(f(buf.as_ptr().cast()))
    } else {
        let c =
            CString::new(s).map_err(|_| DbErr::Other("the SQL text contains a NUL byte".into()))?;
        Ok(f(c.as_ptr()))
    }
}

impl Pg {
    /// The connection's last error message, as one line.
    fn conn_message(&self) -> String {
        // SAFETY: a live connection; the message lives until the next call on it.
        let m = unsafe { text(pq::PQerrorMessage(self.c)) };
        let m = one_line(m.as_deref().unwrap_or(""));
        if m.is_empty() {
            "the connection to the server failed".into()
        } else {
            m
        }
    }

    /// The result if it is a success, else its error, classified like the server's SQLSTATE says:
    /// deadlock, serialization failure, lock timeout and unique violation are retried (the last:
    /// read-write's DELETE and INSERT of one id race between connections under READ COMMITTED,
    /// and sysbench's PostgreSQL driver retries it too); a connection that is gone
    /// (or a server shutting it down) is reconnected; anything else is counted as an error.
    fn check(&self, r: Res) -> std::result::Result<Res, DbErr> {
        if r.0.is_null() {
            // no result at all: out of memory or the connection is gone
            return Err(DbErr::Lost(self.conn_message()));
        }
        // SAFETY: a live result.
        let st = unsafe { pq::PQresultStatus(r.0) };
        use pq::ExecStatusType::*;
        if matches!(st, PGRES_COMMAND_OK | PGRES_TUPLES_OK | PGRES_EMPTY_QUERY) {
            return Ok(r);
        }
        // SAFETY: fields of a live result (strings owned by it).
        let (state, primary) = unsafe {
            (
                text(pq::PQresultErrorField(r.0, pq::PG_DIAG_SQLSTATE as c_int)),
                text(pq::PQresultErrorField(
                    r.0,
                    pq::PG_DIAG_MESSAGE_PRIMARY as c_int,
                )),
            )
        };
        let msg = match primary {
            Some(p) => one_line(&p),
            None => self.conn_message(),
        };
        let state = state.as_deref().unwrap_or("");
        if matches!(state, "40P01" | "40001" | "55P03" | "23505") {
            return Err(DbErr::Retry(msg));
        }
        // SAFETY: a live connection.
        let bad = unsafe { pq::PQstatus(self.c) } == pq::ConnStatusType::CONNECTION_BAD;
        // no SQLSTATE: the client's own error (the connection broke, the server went away)
        if bad
            || state.is_empty()
            || ((state.starts_with("57P") || state.starts_with("08"))
                && (msg.contains("terminat") || msg.contains("shutdown")))
        {
            return Err(DbErr::Lost(msg));
        }
        Err(DbErr::Other(msg))
    }

    /// Prepares statement `q` on table `t` with parameters like `params` (integers declared
    /// int8, strings left for the server to infer from their column); returns its name.
    fn prepare(&mut self, q: Q, t: u32, params: &[P]) -> std::result::Result<*const c_char, DbErr> {
        if params.len() > MAX_PARAMS {
            return Err(DbErr::Other(format!(
                "{} parameters (at most {MAX_PARAMS})",
                params.len()
            )));
        }
        let mut types = [0 as pq::Oid; MAX_PARAMS];
        for (ty, p) in types.iter_mut().zip(params) {
            if let P::I(_) = p {
                *ty = INT8_OID;
            }
        }
        let name = CString::new(format!("iolab_{q:?}_{t}")).expect("no NUL in a statement name");
        let r = with_c(&sql(q, &table(t)), |text| {
            // SAFETY: a live connection, NUL-terminated name and text, `params.len()` types.
            Res(unsafe {
                pq::PQprepare(
                    self.c,
                    name.as_ptr(),
                    text,
                    params.len() as c_int,
                    types.as_ptr(),
                )
            })
        })?;
        self.check(r)?;
        // the CString's bytes do not move when the map grows
        Ok(self.stmts.entry((q, t)).or_insert(name).as_ptr())
    }
}

impl Conn for Pg {
    fn exec(&mut self, sql: &str) -> std::result::Result<(), DbErr> {
        // SAFETY: a live connection and a NUL-terminated text.
        let r = with_c(sql, |s| Res(unsafe { pq::PQexec(self.c, s) }))?;
        self.check(r).map(drop)
    }
    fn run(&mut self, q: Q, t: u32, params: &[P]) -> std::result::Result<(), DbErr> {
        let name = match self.stmts.get(&(q, t)) {
            Some(n) => n.as_ptr(),
            None => self.prepare(q, t, params)?,
        };
        let n = params.len();
        if n > MAX_PARAMS {
            return Err(DbErr::Other(format!(
                "{n} parameters (at most {MAX_PARAMS})"
            )));
        }
        // binary parameters from the stack: int8 big-endian, strings as their bytes
        let mut ints = [[0u8; 8]; MAX_PARAMS];
        let mut values = [std::ptr::null::<c_char>(); MAX_PARAMS];
        let mut lengths = [0 as c_int; MAX_PARAMS];
        let formats = [1 as c_int; MAX_PARAMS];
        for (i, p) in params.iter().enumerate() {
            match p {
                P::I(v) => {
                    ints[i] = v.to_be_bytes();
                    lengths[i] = 8;
                }
                P::S(s) => {
                    values[i] = s.as_ptr().cast();
                    lengths[i] = s.len() as c_int;
                }
            }
        }
        for (i, p) in params.iter().enumerate() {
            if let P::I(_) = p {
                values[i] = ints[i].as_ptr().cast();
            }
        }
        // SAFETY: a live connection, the name of a statement prepared on it, `n` parameters
        // whose values (in `ints` and `params`) outlive the call; text results.
        let r = Res(unsafe {
            pq::PQexecPrepared(
                self.c,
                name,
                n as c_int,
                values.as_ptr(),
                lengths.as_ptr(),
                formats.as_ptr(),
                0,
            )
        });
        self.check(r).map(drop)
    }
    fn strings(&mut self, sql: &str) -> std::result::Result<Vec<String>, DbErr> {
        // SAFETY: a live connection and a NUL-terminated text.
        let r = with_c(sql, |s| Res(unsafe { pq::PQexec(self.c, s) }))?;
        let r = self.check(r)?;
        // SAFETY: rows and fields of a live result, indexes within its counts.
        unsafe {
            if pq::PQnfields(r.0) < 1 {
                return Ok(Vec::new());
            }
            Ok((0..pq::PQntuples(r.0))
                .map(|i| {
                    text(pq::PQgetvalue(r.0, i, 0))
                        .map(|s| s.into_owned())
                        .unwrap_or_default()
                })
                .collect())
        }
    }
}

/// Notices (e.g. "table ... does not exist, skipping") are not printed: libpq's default
/// processor would write them to stderr.
unsafe extern "C" fn quiet(_arg: *mut std::ffi::c_void, _message: *const c_char) {}

/// Connects to the PostgreSQL server. The URL goes to libpq as it is; what it leaves out is
/// filled in as before: no TLS (`sslmode=disable`) and a 5 s connect timeout.
pub fn connect(t: &Target) -> Result<Pg> {
    let fail =
        |what: String| Error::failed(format!("{} at {}: {what}", t.backend.name(), t.endpoint()));
    let usage = |what: &str| Error::usage(format!("--url {}: {what}", redact(&t.url)));
    let url = CString::new(t.url.as_str()).map_err(|_| usage("contains a NUL byte"))?;
    // Parse first: a bad URL is a usage error, and what it sets is not overridden.
    let (mut has_sslmode, mut has_timeout) = (false, false);
    // libpq checks the port only when it connects: a bad one is a usage error here
    let mut bad_port = None;
    {
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: a NUL-terminated string; the options and message are freed below.
        let opts = unsafe { pq::PQconninfoParse(url.as_ptr(), &mut err) };
        if opts.is_null() {
            // SAFETY: null or libpq's message, freed after copying.
            let msg = unsafe { text(err) }
                .map(|m| one_line(&m))
                .unwrap_or_else(|| "out of memory".into());
            if !err.is_null() {
                // SAFETY: allocated by libpq for us.
                unsafe { pq::PQfreemem(err.cast()) }
            }
            return Err(usage(&msg));
        }
        let mut o = opts;
        // SAFETY: the array ends with an entry whose keyword is null.
        unsafe {
            while !(*o).keyword.is_null() {
                if !(*o).val.is_null() {
                    match CStr::from_ptr((*o).keyword).to_bytes() {
                        b"sslmode" => has_sslmode = true,
                        b"connect_timeout" => has_timeout = true,
                        b"port" => {
                            let v = CStr::from_ptr((*o).val).to_string_lossy();
                            if v.split(',')
                                .any(|p| !p.is_empty() && p.parse::<u16>().is_err())
                            {
                                bad_port = Some(v.into_owned());
                            }
                        }
                        _ => {}
                    }
                }
                o = o.add(1);
            }
            pq::PQconninfoFree(opts);
        }
    }
    if let Some(p) = bad_port {
        return Err(usage(&format!(
            "port \"{p}\" is not a port number (1-65535)"
        )));
    }
    let timeout = CString::new(CONNECT_TIMEOUT.as_secs().to_string()).expect("digits");
    let mut keys: Vec<*const c_char> = vec![c"dbname".as_ptr()];
    let mut vals: Vec<*const c_char> = vec![url.as_ptr()];
    if !has_sslmode {
        keys.push(c"sslmode".as_ptr());
        vals.push(c"disable".as_ptr());
    }
    if !has_timeout {
        keys.push(c"connect_timeout".as_ptr());
        vals.push(timeout.as_ptr());
    }
    keys.push(std::ptr::null());
    vals.push(std::ptr::null());
    // SAFETY: null-terminated arrays of NUL-terminated strings that outlive the call;
    // expand_dbname = 1: the first dbname is the URL.
    let c = unsafe { pq::PQconnectdbParams(keys.as_ptr(), vals.as_ptr(), 1) };
    if c.is_null() {
        return Err(fail("cannot connect: out of memory".into()));
    }
    let pg = Pg {
        c,
        stmts: Default::default(),
    };
    // SAFETY: a connection object (closed by Pg's drop whatever its state).
    if unsafe { pq::PQstatus(c) } != pq::ConnStatusType::CONNECTION_OK {
        return Err(fail(format!("cannot connect: {}", connect_message(&pg))));
    }
    // SAFETY: a live connection; the processor ignores its arguments.
    unsafe { pq::PQsetNoticeProcessor(c, Some(quiet), std::ptr::null_mut()) };
    Ok(pg)
}

/// libpq's connect failure without its repetitions: `connection to server at "h", port p
/// failed: FATAL:  msg` becomes `msg` (the caller names the server); several attempts (a host
/// name with several addresses) are kept whole, on one line.
fn connect_message(pg: &Pg) -> String {
    connect_line(&pg.conn_message())
}

fn connect_line(m: &str) -> String {
    let m = one_line(m);
    let tail = match m.strip_prefix("connection to server ") {
        Some(rest) if !rest.contains("connection to server ") => {
            rest.split_once(" failed: ").map(|x| x.1).unwrap_or(&m)
        }
        _ => &m,
    };
    tail.strip_prefix("FATAL: ").unwrap_or(tail).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_failures_are_one_line_without_libpq_s_repetitions() {
        assert_eq!(
            connect_line(
                "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n"
            ),
            "Connection refused Is the server running on that host and accepting TCP/IP connections?"
        );
        assert_eq!(
            connect_line(
                "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  password authentication failed for user \"iolab\"\n"
            ),
            "password authentication failed for user \"iolab\""
        );
        // two addresses tried: both kept, one line
        let two = "connection to server at \"localhost\" (::1), port 1 failed: Connection refused\n\tIs the server running?\nconnection to server at \"localhost\" (127.0.0.1), port 1 failed: Connection refused\n";
        let l = connect_line(two);
        assert_eq!(l.lines().count(), 1);
        assert!(l.contains("(::1)") && l.contains("(127.0.0.1)"), "{l}");
    }

    #[test]
    fn short_sql_is_passed_from_the_stack_and_nul_bytes_are_refused() {
        let got = with_c("COMMIT", |p| {
            // SAFETY: with_c passes a NUL-terminated string
            unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
        })
        .unwrap();
        assert_eq!(got, "COMMIT");
        let long = "x".repeat(STACK_SQL + 10);
        let n = with_c(&long, |p| unsafe { CStr::from_ptr(p) }.to_bytes().len()).unwrap();
        assert_eq!(n, long.len());
        assert!(with_c("SELECT 1\0", |_| ()).is_err());
    }
}
