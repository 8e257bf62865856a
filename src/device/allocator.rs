//! glibc's `malloc` told to keep freed memory, so that libtorch's per-step temporaries reuse pages instead of
//! faulting in fresh ones at every step.
//!
//! A training step on the CPU allocates and frees the same large temporaries every step (at the `cpu` presets the
//! MLM head's logits and their gradients: 819 masked positions × 8,000 = 26 MB each). glibc serves a request above
//! `M_MMAP_THRESHOLD` with its own `mmap` and returns it with `munmap` on `free`, and it gives the top of the heap back
//! to the kernel (`M_TRIM_THRESHOLD`) whenever more than that is free there. Either way the next step's allocation
//! lands on pages the kernel must map and zero again: one page fault per 4 KiB. By default both thresholds move
//! with the largest chunk freed so far (`mallopt(3)`: "dynamic mmap threshold"; the trim threshold is twice the mmap
//! one), and a step whose temporaries add up to more than that trims and re-faults every step. Measured in this
//! repository (2026-12-01, `perf record` on `bench train --shape cpu --threads 1 --no-reference`): 14 % of the
//! process's samples in the kernel (page faults, zeroing pages, cgroup accounting), 2.4 % with the thresholds set as
//! [`keep_freed_memory`] sets them.
//!
//! [`keep_freed_memory`] fixes `M_MMAP_THRESHOLD` at [`MMAP_THRESHOLD`] and `M_TRIM_THRESHOLD` at
//! [`TRIM_THRESHOLD`] (which also turns the dynamic adjustment off): a process keeps up to that much freed memory at
//! the top of its heap for reuse. That heap is the main thread's, where the binary's training steps run; a thread's
//! own arena deletes a heap of its (64 MiB at most) once it is wholly free, whatever the thresholds. It changes where
//! memory comes from, never what is computed. The binary calls it at start ([`configure`]); a library user may (it
//! is process-wide, so the library does not do it on its own). Elsewhere than on glibc it does nothing.

/// The environment variable that, set to `glibc`, leaves glibc's own thresholds ([`configure`]): for measuring what
/// [`keep_freed_memory`] buys (`bench train` run with and without it), not for use.
pub const ENV: &str = "CROSSLING_MALLOC";

/// What the binary calls at start: [`keep_freed_memory`], unless [`ENV`] is `glibc`. Returns whether the
/// thresholds were set.
pub fn configure() -> bool {
    match std::env::var(ENV).as_deref() {
        Ok("glibc") => false,
        _ => keep_freed_memory(),
    }
}

/// Requests below this many bytes come from the heap, not from `mmap` of their own (glibc's default: 128 KiB,
/// rising with frees to at most 32 MiB).
pub const MMAP_THRESHOLD: usize = 256 << 20;

/// Free memory at the top of the heap beyond this many bytes goes back to the kernel (glibc's default: 128 KiB,
/// twice the dynamic mmap threshold once that has moved).
pub const TRIM_THRESHOLD: usize = 1 << 30;

/// Set glibc's two thresholds (see the module docs). Returns whether both were accepted; `false` off glibc, where
/// nothing is changed.
pub fn keep_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets malloc's tunables; it is safe to call at any time, from any thread.
        unsafe {
            let mmap = libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
            let trim = libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD as libc::c_int);
            mmap == 1 && trim == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
