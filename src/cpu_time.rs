//! CPU time of this process: user + system seconds over all its threads, from Linux's `/proc/self/stat` (fields 14
//! `utime` and 15 `stime`, in clock ticks of `USER_HZ` = 1/100 s, the unit the kernel fixes for this interface;
//! proc(5)). Unlike wall time it does not count the time the process waited for a core or was stopped (`SIGSTOP`),
//! so it measures what a job costs on a shared machine. `None` where the file does not exist (not Linux).
//! The same line gives the process's minor page faults (field 10, `minflt`), which
//! [`crate::device::allocator`]'s test counts.

/// CPU seconds (user + system, all threads) this process has used so far (see the module docs).
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_stat(&stat)
}

/// Minor page faults (field 10 `minflt`: faults served without reading from disk) of this process so far.
pub fn process_minor_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    stat_fields(&stat)?.get(7)?.parse().ok()
}

/// The fields of a `/proc/PID/stat` line after the command name (field 2), which is parenthesised and may hold
/// spaces or parentheses, so they are counted after its last `)`: there `state` (field 3) is index 0.
fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    Some(stat.rsplit_once(')')?.1.split_whitespace().collect())
}

/// `utime + stime` of a `/proc/PID/stat` line, in seconds (fields 14 and 15; [`stat_fields`]).
fn parse_stat(stat: &str) -> Option<f64> {
    let fields = stat_fields(stat)?;
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
    Some((ticks(11)? + ticks(12)?) as f64 / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_utime_and_stime_after_an_odd_command_name() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
        let line = "4129 (crossling (job) x) R 4128 4128 4100 0 -1 4194304 100 0 0 0 12345 655 0 0 20 0 1 0";
        assert_eq!(parse_stat(line), Some(130.0));
        assert_eq!(parse_stat("4129 (x) R 1 2"), None, "a line cut short has no time");
        assert_eq!(parse_stat("no parenthesis"), None);
        assert_eq!(stat_fields(line).unwrap()[7], "100", "minflt, field 10");
    }

    #[test]
    fn this_process_uses_cpu_time() {
        let Some(before) = process_cpu_seconds() else {
            eprintln!("no /proc/self/stat here: nothing to measure");
            return;
        };
        // Spin until the counter moves (a loaded machine may give this thread little of the wall time), for at most
        // 30 s of wall time: the CPU time must grow with the work and never go back.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        let mut now = before;
        while now - before < 0.2 && start.elapsed().as_secs() < 30 {
            for _ in 0..1_000_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            }
            let next = process_cpu_seconds().expect("read once, readable again");
            assert!(next >= now, "CPU time went back from {now} to {next}");
            now = next;
        }
        std::hint::black_box(x);
        assert!(
            now - before >= 0.2,
            "{:.1} s of spinning took {:.2} CPU s",
            start.elapsed().as_secs_f64(),
            now - before
        );
    }
}
