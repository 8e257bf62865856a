//! bf16 CUDA autocast through libtorch's C++ API (see [`crate::device::compute`]).
//!
//! `tch` 0.26's `tch::autocast` goes through `at::autocast::{is_enabled, set_enabled}`, which libtorch ≥ 2.4
//! deprecates with a `TORCH_WARN_DEPRECATION` at every call (3,060 warning lines for one smoke `table1` on an H100,
//! 2026-11-26), and it has no setter for the lower-precision type, which libtorch defaults to fp16 on CUDA. This
//! module therefore opens the autocast region itself, with the device-typed functions that replace them
//! (`ATen/autocast_mode.h`), declared here by their Itanium-mangled names in `libtorch_cpu`:
//!
//! ```text
//! prev_enabled = is_autocast_enabled(CUDA); prev_dtype = get_autocast_dtype(CUDA)
//! set_autocast_dtype(CUDA, BFloat16); set_autocast_enabled(CUDA, true); increment_nesting()
//! f()
//! if decrement_nesting() == 0 { clear_cache() }      // autocast's cast cache lives for the outermost region
//! set_autocast_enabled(CUDA, prev_enabled); set_autocast_dtype(CUDA, prev_dtype)
//! ```
//!
//! — what `torch.autocast("cuda", torch.bfloat16)` does on entry and exit. The closing half runs from a drop guard,
//! so a panic inside `f` leaves the thread's autocast state as it found it. Every flag is thread-local CPU state:
//! the binding is tested without a GPU (a CPU tensor never dispatches to the CUDA autocast kernels).
/// `c10::DeviceType::CUDA`.
#[cfg(unix)]
const CUDA: i8 = 1;
/// `c10::ScalarType::BFloat16`.
#[cfg(unix)]
const BFLOAT16: i8 = 15;

#[cfg(unix)]
pub(crate) const AVAILABLE: bool = true;
#[cfg(not(unix))]
pub(crate) const AVAILABLE: bool = false;

#[cfg(unix)]
extern "C" {
    /// `void at::autocast::set_autocast_dtype(c10::DeviceType, c10::ScalarType)` (both `int8_t` enums).
    #[link_name = "_ZN2at8autocast18set_autocast_dtypeEN3c1010DeviceTypeENS1_10ScalarTypeE"]
    fn set_autocast_dtype(device_type: i8, dtype: i8);
    /// `c10::ScalarType at::autocast::get_autocast_dtype(c10::DeviceType)`.
    #[link_name = "_ZN2at8autocast18get_autocast_dtypeEN3c1010DeviceTypeE"]
    fn get_autocast_dtype(device_type: i8) -> i8;
    /// `bool at::autocast::is_autocast_enabled(c10::DeviceType)`.
    #[link_name = "_ZN2at8autocast19is_autocast_enabledEN3c1010DeviceTypeE"]
    fn is_autocast_enabled(device_type: i8) -> bool;
    /// `void at::autocast::set_autocast_enabled(c10::DeviceType, bool)`.
    #[link_name = "_ZN2at8autocast20set_autocast_enabledEN3c1010DeviceTypeEb"]
    fn set_autocast_enabled(device_type: i8, enabled: bool);
    /// `int at::autocast::increment_nesting()`: the depth of nested autocast regions after entering one.
    #[link_name = "_ZN2at8autocast17increment_nestingEv"]
    fn increment_nesting() -> i32;
    /// `int at::autocast::decrement_nesting()`: the depth after leaving one.
    #[link_name = "_ZN2at8autocast17decrement_nestingEv"]
    fn decrement_nesting() -> i32;
    /// `void at::autocast::clear_cache()`: drops the cached low-precision copies of leaf tensors.
    #[link_name = "_ZN2at8autocast11clear_cacheEv"]
    fn clear_cache();
}

/// The CUDA autocast type of this thread (a `c10::ScalarType` code).
#[cfg(unix)]
fn cuda_dtype() -> i8 {
    // SAFETY: reads a thread-local array entry; no preconditions, cannot throw.
    unsafe { get_autocast_dtype(CUDA) }
}

/// Sets this thread's CUDA autocast type.
#[cfg(unix)]
fn set_cuda_dtype(dtype: i8) {
    // SAFETY: writes a thread-local array entry; any `ScalarType` code is accepted, nothing can throw.
    unsafe { set_autocast_dtype(CUDA, dtype) }
}

/// Whether CUDA autocast is on for this thread.
#[cfg(unix)]
fn cuda_enabled() -> bool {
    // SAFETY: reads a thread-local dispatch-key flag; cannot throw.
    unsafe { is_autocast_enabled(CUDA) }
}

/// Turns CUDA autocast on or off for this thread.
#[cfg(unix)]
fn set_cuda_enabled(enabled: bool) {
    // SAFETY: toggles a thread-local dispatch-key flag; cannot throw.
    unsafe { set_autocast_enabled(CUDA, enabled) }
}

/// An open bf16 CUDA autocast region; dropping it (also on unwinding) closes the region and restores the thread's
/// previous autocast flag and type.
#[cfg(unix)]
struct Region {
    enabled: bool,
    dtype: i8,
}

#[cfg(unix)]
impl Region {
    fn open() -> Self {
        let region = Region { enabled: cuda_enabled(), dtype: cuda_dtype() };
        set_cuda_dtype(BFLOAT16);
        set_cuda_enabled(true);
        // SAFETY: a thread-local counter; cannot throw.
        unsafe { increment_nesting() };
        region
    }
}

#[cfg(unix)]
impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: thread-local counter and cache of this thread; cannot throw.
        unsafe {
            if decrement_nesting() == 0 {
                clear_cache();
            }
        }
        set_cuda_enabled(self.enabled);
        set_cuda_dtype(self.dtype);
    }
}

/// Runs `f` under CUDA autocast with bfloat16 as the lower-precision type.
#[cfg(unix)]
pub(crate) fn bf16<T>(f: impl FnOnce() -> T) -> T {
    let _region = Region::open();
    f()
}

#[cfg(not(unix))]
pub(crate) fn bf16<T>(f: impl FnOnce() -> T) -> T {
    f() // unreachable: `Compute::on` refuses bf16 where `AVAILABLE` is false
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use tch::{Kind, Tensor};

    #[test]
    fn the_region_turns_cuda_autocast_on_in_bf16_and_restores_the_thread_state() {
        // Thread-local state of libtorch; no GPU needed. Half = 5.
        let (enabled, dtype) = (cuda_enabled(), cuda_dtype());
        set_cuda_dtype(5);
        assert_eq!(cuda_dtype(), 5);
        let inner = bf16(|| (cuda_enabled(), cuda_dtype(), bf16(|| (cuda_enabled(), cuda_dtype()))));
        assert_eq!(inner, (true, BFLOAT16, (true, BFLOAT16)), "on in bf16, also in a nested region");
        assert_eq!((cuda_enabled(), cuda_dtype()), (enabled, 5), "restored after the region");
        set_cuda_dtype(dtype);
    }

    #[test]
    fn a_panic_inside_the_region_still_restores_the_thread_state() {
        let before = (cuda_enabled(), cuda_dtype());
        let caught = std::panic::catch_unwind(|| bf16(|| panic!("inside the region")));
        assert!(caught.is_err());
        assert_eq!((cuda_enabled(), cuda_dtype()), before);
    }

    #[test]
    fn cpu_tensors_keep_f32_inside_the_cuda_region() {
        let a = Tensor::ones([4, 4], (Kind::Float, tch::Device::Cpu));
        let product = bf16(|| a.matmul(&a));
        assert_eq!(product.kind(), Kind::Float);
        assert_eq!(product.double_value(&[0, 0]), 4.0);
    }
}
