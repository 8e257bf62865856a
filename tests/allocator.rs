//! `device::allocator::keep_freed_memory`: with glibc's thresholds set, a large tensor allocated and freed again and
//! again reuses its pages; with them at glibc's smallest (the control), every allocation faults its pages in anew.
//! Its own binary without the test harness (`harness = false` in Cargo.toml): the check runs on the process's main
//! thread, whose heap is the one the thresholds govern (a thread's arena deletes a wholly free heap of its own
//! whatever they say), as the binary's training steps do, and nothing else allocates while the faults are counted.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
use crossling::{
    cpu_time::process_minor_faults,
    device::allocator::{keep_freed_memory, MMAP_THRESHOLD},
};
#[cfg(all(target_os = "linux", target_env = "gnu"))]
use tch::{Device, Kind, Tensor};

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// Minor page faults over `rounds` allocations of a filled `[bytes / 4]` f32 tensor, each freed before the next.
fn faults_over(rounds: usize, bytes: usize) -> u64 {
    let before = process_minor_faults().expect("/proc/self/stat gives minor faults on Linux");
    for _ in 0..rounds {
        let t = Tensor::ones([(bytes / 4) as i64], (Kind::Float, Device::Cpu));
        assert_eq!(t.size(), [(bytes / 4) as i64]);
    }
    process_minor_faults().unwrap() - before
}

fn main() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        freed_tensors_reuse_their_pages_once_glibc_keeps_freed_memory();
        println!("freed_tensors_reuse_their_pages_once_glibc_keeps_freed_memory ... ok");
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    println!("freed_tensors_reuse_their_pages: ignored (mallopt's thresholds are glibc's; elsewhere keep_freed_memory does nothing)");
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn freed_tensors_reuse_their_pages_once_glibc_keeps_freed_memory() {
    let bytes = 24 << 20; // a step temporary's size at the cpu presets (the head's logits: 26 MB)
    assert!(bytes < MMAP_THRESHOLD);
    let pages = (bytes / 4096) as u64;
    let rounds = 10;
    // The control: glibc's smallest thresholds, fixed (no dynamic adjustment): every round maps fresh pages.
    unsafe {
        assert_eq!(libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10), 1);
        assert_eq!(libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 10), 1);
    }
    let control = faults_over(rounds, bytes);
    assert!(control >= rounds as u64 * pages / 2, "control: {control} faults over {rounds} rounds of {pages} pages");
    assert!(keep_freed_memory());
    // The first rounds grow the heap (each round's small allocations, such as the tensor's own header, can split the
    // freed block until enough of the heap is free for a whole one); after them the pattern repeats on mapped pages.
    let warm_up = faults_over(2 * rounds, bytes);
    let kept = faults_over(rounds, bytes);
    assert!(
        kept < pages,
        "{kept} faults over {rounds} rounds of {pages} pages (control: {control}, warm-up {warm_up})"
    );
    eprintln!(
        "  page faults over {rounds} rounds of {pages} pages: {control} at glibc's smallest thresholds, {kept} kept"
    );
}
