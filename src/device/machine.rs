//! The machine a record was computed on, for its provenance: the CPU's model name (Linux `/proc/cpuinfo`, the
//! first `model name` line) and the logical CPUs this process may use. Float results can differ between CPU models
//! with the same code, data, seed and thread count (the BLAS library picks its kernels by instruction set), so a
//! record names the CPU beside its thread count.

/// `MODEL, N logical CPUs`, e.g. `AMD EPYC 9R14 96-Core Processor, 2 logical CPUs`; `unknown CPU` where the model
/// name cannot be read.
pub fn cpu_description() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|t| model_name(&t));
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    format!("{}, {cpus} logical CPU{}", model.as_deref().unwrap_or("unknown CPU"), if cpus == 1 { "" } else { "s" })
}

/// The first `model name` of a `/proc/cpuinfo` text, whitespace collapsed.
fn model_name(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == "model name").then(|| value.split_whitespace().collect::<Vec<_>>().join(" "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_model_name_is_read_and_collapsed() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC  9R14 96-Core Processor\n\n\
                    processor\t: 1\nmodel name\t: other\n";
        assert_eq!(model_name(text).as_deref(), Some("AMD EPYC 9R14 96-Core Processor"));
        assert_eq!(model_name("processor\t: 0\n"), None);
        assert!(cpu_description().contains("logical CPU"));
    }
}
