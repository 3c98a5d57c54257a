//! What the benchmark examples share: percentiles and `--name value` arguments.

/// The `p` quantile (0–1) of `samples`, nearest rank; sorts them.
pub fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    let rank = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[rank.min(samples.len() - 1)]
}

/// The value after `name` in `args`.
pub fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}
