//! How big a context and how many threads: from the model's shape and the
//! machine (pure functions, so they are tested without a model).

/// The smallest context worth loading (a role's instructions alone need it).
pub const MIN_CONTEXT: u32 = 512;

/// The share of the available memory the context's KV cache may take.
const KV_MEMORY_SHARE: u64 = 4;

/// Bytes the KV cache takes per token of context (keys and values, f16,
/// every layer; grouped-query attention stores only `n_head_kv` heads).
pub fn kv_bytes_per_token(n_layer: u32, n_embd: u32, n_head: u32, n_head_kv: u32) -> u64 {
    let head_dim = u64::from(n_embd) / u64::from(n_head.max(1));
    2 * u64::from(n_layer) * head_dim * u64::from(n_head_kv.max(1)) * 2
}

/// The context size: the model's trained context, capped so the KV cache
/// takes at most a quarter of `available_bytes` (when known), rounded down
/// to a multiple of 256 and never below [`MIN_CONTEXT`] (nor above the
/// trained context).
pub fn context_size(n_ctx_train: u32, kv_per_token: u64, available_bytes: Option<u64>) -> u32 {
    let trained = n_ctx_train.max(MIN_CONTEXT);
    let by_memory = match available_bytes {
        Some(bytes) if kv_per_token > 0 => {
            u32::try_from(bytes / KV_MEMORY_SHARE / kv_per_token).unwrap_or(u32::MAX)
        }
        _ => trained,
    };
    let n = trained.min(by_memory) / 256 * 256;
    n.max(MIN_CONTEXT).min(trained)
}

/// CPU threads for generation: the physical cores, taken as half the
/// logical ones (llama.cpp slows down on hyper-threads and on a machine
/// whose every core it takes), at least one.
pub fn default_threads() -> u32 {
    let logical = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    u32::try_from(logical / 2).unwrap_or(1).max(1)
}

/// The memory available now, in bytes (Linux's `MemAvailable`); `None`
/// where it cannot be read.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_is_the_trained_one_unless_memory_is_short() {
        // SmolLM2-135M: 30 layers, 576 wide, 9 heads, 3 KV heads.
        let per = kv_bytes_per_token(30, 576, 9, 3);
        assert_eq!(per, 2 * 30 * 64 * 3 * 2);
        assert_eq!(context_size(8192, per, Some(16 << 30)), 8192);
        assert_eq!(context_size(8192, per, None), 8192);
        // 80 MiB available: a quarter (20 MiB) holds 910 tokens → 768.
        assert_eq!(context_size(8192, per, Some(80 << 20)), 768);
        // Never below the minimum, never above the trained context.
        assert_eq!(context_size(8192, per, Some(1 << 20)), MIN_CONTEXT);
        assert_eq!(context_size(300, per, Some(16 << 30)), MIN_CONTEXT);
        assert_eq!(context_size(2000, per, Some(16 << 30)), 1792);
    }

    #[test]
    fn meminfo_is_read_in_bytes() {
        let text = "MemTotal: 100 kB\nMemAvailable:    2048 kB\n";
        assert_eq!(parse_meminfo(text), Some(2048 * 1024));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
        assert!(default_threads() >= 1);
    }
}
