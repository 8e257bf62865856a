//! bf16 CUDA autocast through libtorch's C++ API (see [`crate::device::compute`]): libtorch's CUDA autocast type
//! defaults to fp16 and `tch` 0.26 exposes no setter, so this module declares `at::autocast::{get,set}_autocast_dtype`.
/// `c10::DeviceType::CUDA`.
#[cfg(unix)]
const CUDA: i8 = 1;
/// `c10::ScalarType::BFloat16`.
#[cfg(unix)]
pub(crate) const BFLOAT16: i8 = 15;

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
}

/// The CUDA autocast type of this thread (a `c10::ScalarType` code).
#[cfg(unix)]
pub(crate) fn cuda_dtype() -> i8 {
    // SAFETY: reads a thread-local array entry; no preconditions, cannot throw.
    unsafe { get_autocast_dtype(CUDA) }
}

/// Sets this thread's CUDA autocast type.
#[cfg(unix)]
pub(crate) fn set_cuda_dtype(dtype: i8) {
    // SAFETY: writes a thread-local array entry; any `ScalarType` code is accepted, nothing can throw.
    unsafe { set_autocast_dtype(CUDA, dtype) }
}

/// Restores the previous CUDA autocast type when dropped (also on unwinding).
#[cfg(unix)]
struct Restore(i8);

#[cfg(unix)]
impl Drop for Restore {
    fn drop(&mut self) {
        set_cuda_dtype(self.0);
    }
}

/// Runs `f` under CUDA autocast with bfloat16 as the lower-precision type.
#[cfg(unix)]
pub(crate) fn bf16<T>(f: impl FnOnce() -> T) -> T {
    let _restore = Restore(cuda_dtype());
    set_cuda_dtype(BFLOAT16);
    tch::autocast(true, f)
}

#[cfg(not(unix))]
pub(crate) fn bf16<T>(f: impl FnOnce() -> T) -> T {
    f() // unreachable: `Compute::on` refuses bf16 where `AVAILABLE` is false
}
