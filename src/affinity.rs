//! CPU affinity: the CPUs this process may run on, pinning the calling thread (and so every
//! thread and process it starts later), and the CPU set a worker is pinned to before exec.

/// The CPUs the calling thread may run on (its `sched_getaffinity` mask), ascending; every
/// configured CPU when the mask cannot be read.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let ok =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    let max = libc::CPU_SETSIZE as usize;
    if ok != 0 {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
        return (0..n).collect();
    }
    // SAFETY: CPU_ISSET reads within the set's bounds.
    (0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Pins the calling thread to `cpus`. Threads and processes it starts afterwards inherit the
/// mask, which is how the lab's services (their runtime threads, PostgreSQL's processes) and
/// the driver's own threads land where the placement put them.
pub fn pin_this_thread(cpus: &[usize]) -> std::io::Result<()> {
    let set = cpu_set(cpus);
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Pins every thread this process has now to `cpus` (threads started later inherit the mask
/// of the thread that starts them); the first error names the thread.
pub fn pin_all_threads(cpus: &[usize]) -> std::io::Result<()> {
    let set = cpu_set(cpus);
    for tid in crate::procfs::tasks(std::process::id() as i32) {
        // SAFETY: `set` is a valid cpu_set_t of the size passed; a tid of this process.
        if unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) }
            != 0
        {
            let e = std::io::Error::last_os_error();
            // A thread that ended since the listing is not an error.
            if e.raw_os_error() != Some(libc::ESRCH) {
                return Err(std::io::Error::new(e.kind(), format!("thread {tid}: {e}")));
            }
        }
    }
    Ok(())
}

/// What a spawned child does between fork and exec (call it from `pre_exec`): die with its
/// parent (`PR_SET_PDEATHSIG`), and move to `pin` when given. Only async-signal-safe calls;
/// the set is built before the fork ([`cpu_set`]).
pub fn in_child(pin: Option<&libc::cpu_set_t>) -> std::io::Result<()> {
    // SAFETY: prctl and sched_setaffinity are async-signal-safe; `set` is a valid cpu_set_t.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if let Some(set) = pin {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// A CPU list as written on a command line (`1,3`; empty: none).
pub fn parse_cpus(text: &str) -> anyhow::Result<Vec<usize>> {
    text.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|c| {
            c.parse()
                .map_err(|_| anyhow::anyhow!("{c:?} is not a CPU number"))
        })
        .collect()
}

/// The CPU list [`parse_cpus`] reads.
pub fn format_cpus(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The CPU set for `sched_setaffinity`, built before fork (the child only makes the syscall).
pub fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: CPU_SET bounds-checks against the set's size.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_a_thread_narrows_its_mask_and_a_new_thread_inherits_it() {
        let all = allowed_cpus();
        assert!(!all.is_empty());
        let first = all[0];
        let seen = std::thread::spawn(move || {
            pin_this_thread(&[first]).unwrap();
            let mine = allowed_cpus();
            let child = std::thread::spawn(allowed_cpus).join().unwrap();
            (mine, child)
        })
        .join()
        .unwrap();
        assert_eq!(seen, (vec![first], vec![first]));
        // The test thread itself was not touched.
        assert_eq!(allowed_cpus(), all);
    }
}
