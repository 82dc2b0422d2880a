//! `--cpus LIST[:split]`: the CPUs a job's threads run on (fio's `cpus_allowed`, `cpumask` and
//! `cpus_allowed_policy`), and `--ioprio CLASS[:LEVEL]`: their I/O priority (fio's `prio`,
//! `prioclass`); the worker sets both for itself once, when it starts.

use std::fmt;
use std::str::FromStr;

/// The highest CPU number taken (the kernel's `CPU_SETSIZE` is 1024).
pub const MAX_CPU: u32 = 1023;

/// The CPUs of `--cpus`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpus {
    /// Ascending, each once.
    pub list: Vec<u32>,
    /// fio's `cpus_allowed_policy=split`: thread i runs on the list's (i mod n)th CPU alone;
    /// otherwise every thread may run on any of them (`shared`).
    pub split: bool,
}

impl Cpus {
    /// The CPUs thread `t` may run on.
    pub fn for_thread(&self, t: u32) -> &[u32] {
        if self.split && !self.list.is_empty() {
            let i = t as usize % self.list.len();
            &self.list[i..=i]
        } else {
            &self.list
        }
    }
}

impl fmt::Display for Cpus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // ranges of consecutive CPUs as A-B
        let mut i = 0;
        let mut first = true;
        while i < self.list.len() {
            let mut j = i;
            while j + 1 < self.list.len() && self.list[j + 1] == self.list[j] + 1 {
                j += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if j > i {
                write!(f, "{}-{}", self.list[i], self.list[j])?;
            } else {
                write!(f, "{}", self.list[i])?;
            }
            i = j + 1;
        }
        if self.split {
            f.write_str(":split")?;
        }
        Ok(())
    }
}

impl FromStr for Cpus {
    type Err = String;
    /// `0,5,8-15` (fio's `cpus_allowed`), then `:split` or `:shared`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (list, policy) = s.split_once(':').unwrap_or((s, "shared"));
        let split = match policy {
            "split" => true,
            "shared" => false,
            _ => return Err("the policy after ':' is split or shared".into()),
        };
        let bad = || {
            format!("not a CPU list: use numbers and ranges from 0 to {MAX_CPU}, such as 0,5,8-15")
        };
        let mut cpus = Vec::new();
        for part in list.split(',').map(str::trim) {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (a, b): (u32, u32) = (
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            );
            if a > b || b > MAX_CPU {
                return Err(bad());
            }
            cpus.extend(a..=b);
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(Cpus { list: cpus, split })
    }
}

super::serde_as_text!(Cpus);

/// An I/O priority (ioprio_set(2): class and level, as `ionice`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoPrio {
    /// 1 real-time, 2 best-effort, 3 idle (fio's `prioclass`).
    pub class: u8,
    /// 0 (highest) to 7 (fio's `prio`); none for idle.
    pub level: u8,
}

impl IoPrio {
    /// The value ioprio_set(2) takes: the class above bit 13, the level below.
    pub fn value(self) -> i32 {
        (i32::from(self.class) << 13) | i32::from(self.level)
    }
}

impl fmt::Display for IoPrio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.class {
            1 => write!(f, "rt:{}", self.level),
            3 => f.write_str("idle"),
            _ => write!(f, "be:{}", self.level),
        }
    }
}

impl FromStr for IoPrio {
    type Err = String;
    /// `rt:N`, `be:N` (N from 0, the highest, to 7) or `idle`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (c, l) = s.split_once(':').unwrap_or((s, "0"));
        let class = match c {
            "rt" => 1,
            "be" => 2,
            "idle" => 3,
            _ => {
                return Err(
                    "an I/O priority is rt:N, be:N (N from 0, the highest, to 7) or idle".into(),
                );
            }
        };
        let level = match l.parse::<u8>() {
            Ok(n) if n <= 7 => n,
            _ => return Err("the level of an I/O priority is 0 (the highest) to 7".into()),
        };
        Ok(IoPrio {
            class,
            level: if class == 3 { 0 } else { level },
        })
    }
}

super::serde_as_text!(IoPrio);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_and_print_back_and_split_gives_one_each() {
        let c: Cpus = "8-10,0,5:split".parse().unwrap();
        assert_eq!(c.list, [0, 5, 8, 9, 10]);
        assert_eq!(c.to_string(), "0,5,8-10:split");
        assert_eq!(c.for_thread(1), [5]);
        assert_eq!(c.for_thread(6), [5]);
        let s: Cpus = "0-3".parse().unwrap();
        assert_eq!(s.for_thread(2), [0, 1, 2, 3]);
        assert_eq!(s.to_string(), "0-3");
        assert!("3-1".parse::<Cpus>().is_err());
        assert!("x".parse::<Cpus>().is_err());
        assert!("0:odd".parse::<Cpus>().is_err());
        assert!("2000".parse::<Cpus>().is_err());
    }

    #[test]
    fn io_priorities_read_and_print_as_ionice_names_them() {
        let p: IoPrio = "be:4".parse().unwrap();
        assert_eq!((p.class, p.level, p.value()), (2, 4, (2 << 13) | 4));
        assert_eq!("rt:0".parse::<IoPrio>().unwrap().to_string(), "rt:0");
        assert_eq!("idle".parse::<IoPrio>().unwrap().to_string(), "idle");
        assert!("be:8".parse::<IoPrio>().is_err());
        assert!("low".parse::<IoPrio>().is_err());
    }
}
