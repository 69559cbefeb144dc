//! Reading a GGUF file's header: the magic `GGUF`, its version and the
//! metadata a model manager needs (architecture, name, layers, attention
//! heads, context length), so a file that is not a model is refused before
//! it is kept or handed to the local back end. Only the header is read; the
//! tensors are not touched.

use std::collections::HashMap;
use std::io::{BufReader, Read};
use std::path::Path;

/// The first four bytes of every GGUF file.
pub const MAGIC: &[u8; 4] = b"GGUF";
/// Longest metadata string accepted (a chat template is a few KiB; 16 MiB
/// bounds a hostile length field).
const MAX_STRING: u64 = 16 << 20;
/// Most metadata entries accepted.
const MAX_ENTRIES: u64 = 1 << 20;
/// Most elements of a metadata array (a vocabulary is ~150k tokens).
const MAX_ARRAY: u64 = 1 << 24;

/// Why a file is not a usable GGUF model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GgufError {
    /// The file could not be read.
    #[error("could not read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file does not start with `GGUF`.
    #[error("{path} is not a GGUF model file (it does not start with the bytes GGUF)")]
    NotGguf {
        /// The file.
        path: String,
    },
    /// The header is damaged or of an unknown version.
    #[error("{path} has a damaged GGUF header: {reason}")]
    Damaged {
        /// The file.
        path: String,
        /// What is wrong, with the byte offset where known.
        reason: String,
    },
}

/// What the header says about the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GgufInfo {
    /// The GGUF version (2 or 3).
    pub version: u32,
    /// Tensors in the file.
    pub tensors: u64,
    /// `general.architecture`, e.g. `llama`, `qwen2`.
    pub architecture: Option<String>,
    /// `general.name`.
    pub name: Option<String>,
    /// Transformer blocks (`<arch>.block_count`).
    pub layers: Option<u64>,
    /// The context the model was trained for (`<arch>.context_length`).
    pub context_length: Option<u64>,
    /// Hidden size (`<arch>.embedding_length`).
    pub embedding: Option<u64>,
    /// Attention heads (`<arch>.attention.head_count`).
    pub heads: Option<u64>,
    /// Key/value heads (`<arch>.attention.head_count_kv`; the heads when absent).
    pub heads_kv: Option<u64>,
    /// Width of one key head (`<arch>.attention.key_length`; embedding / heads when absent).
    pub key_length: Option<u64>,
    /// Width of one value head (`<arch>.attention.value_length`; as the key when absent).
    pub value_length: Option<u64>,
}

impl GgufInfo {
    /// Bytes of KV cache per token of context (f16 keys and values), when
    /// the header says enough to tell.
    pub fn kv_bytes_per_token(&self) -> Option<u64> {
        let layers = self.layers?;
        let heads = self.heads?;
        let heads_kv = self.heads_kv.unwrap_or(heads);
        let key = self
            .key_length
            .or_else(|| self.embedding.and_then(|e| e.checked_div(heads)))?;
        let value = self.value_length.unwrap_or(key);
        Some(layers * heads_kv * (key + value) * 2)
    }
}

/// A metadata value as far as this reader keeps it.
enum Value {
    Int(u64),
    Text(String),
    Other,
}

struct Reader<R> {
    inner: R,
    offset: u64,
    path: String,
}

impl<R: Read> Reader<R> {
    fn damaged(&self, reason: impl Into<String>) -> GgufError {
        GgufError::Damaged {
            path: self.path.clone(),
            reason: format!("{} (at byte {})", reason.into(), self.offset),
        }
    }

    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], GgufError> {
        let mut buf = [0u8; N];
        self.inner.read_exact(&mut buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                self.damaged("the header ends early")
            } else {
                GgufError::Read {
                    path: self.path.clone(),
                    source: e,
                }
            }
        })?;
        self.offset += N as u64;
        Ok(buf)
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.bytes()?))
    }

    fn skip(&mut self, n: u64) -> Result<(), GgufError> {
        let copied =
            std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink()).map_err(|e| {
                GgufError::Read {
                    path: self.path.clone(),
                    source: e,
                }
            })?;
        self.offset += copied;
        if copied != n {
            return Err(self.damaged("the header ends early"));
        }
        Ok(())
    }

    fn string(&mut self, keep: bool) -> Result<Option<String>, GgufError> {
        let len = self.u64()?;
        if len > MAX_STRING {
            return Err(self.damaged(format!("a string claims {len} bytes")));
        }
        if !keep {
            self.skip(len)?;
            return Ok(None);
        }
        let mut buf = Vec::new();
        (&mut self.inner)
            .take(len)
            .read_to_end(&mut buf)
            .map_err(|e| GgufError::Read {
                path: self.path.clone(),
                source: e,
            })?;
        self.offset += buf.len() as u64;
        if buf.len() as u64 != len {
            return Err(self.damaged("the header ends early"));
        }
        Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
    }

    /// Reads one value of type `ty`; strings are kept only when `keep`.
    fn value(&mut self, ty: u32, keep: bool) -> Result<Value, GgufError> {
        Ok(match ty {
            0 | 1 | 7 => Value::Int(u64::from(self.bytes::<1>()?[0])),
            2 | 3 => Value::Int(u64::from(u16::from_le_bytes(self.bytes()?))),
            4 | 5 => Value::Int(u64::from(self.u32()?)),
            6 => {
                self.u32()?;
                Value::Other
            }
            10 | 11 => Value::Int(self.u64()?),
            12 => {
                self.u64()?;
                Value::Other
            }
            8 => match self.string(keep)? {
                Some(s) => Value::Text(s),
                None => Value::Other,
            },
            9 => {
                let inner = self.u32()?;
                let n = self.u64()?;
                if n > MAX_ARRAY || inner == 9 {
                    return Err(self.damaged(format!("an array of {n} elements of type {inner}")));
                }
                for _ in 0..n {
                    self.value(inner, false)?;
                }
                Value::Other
            }
            other => return Err(self.damaged(format!("unknown value type {other}"))),
        })
    }
}

/// Reads the header of the GGUF file at `path`.
pub fn read(path: &Path) -> Result<GgufInfo, GgufError> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| GgufError::Read {
        path: shown.clone(),
        source: e,
    })?;
    let mut r = Reader {
        inner: BufReader::with_capacity(1 << 16, file),
        offset: 0,
        path: shown.clone(),
    };
    let magic: [u8; 4] = match r.bytes() {
        Ok(m) => m,
        Err(GgufError::Damaged { .. }) => return Err(GgufError::NotGguf { path: shown }),
        Err(e) => return Err(e),
    };
    if &magic != MAGIC {
        return Err(GgufError::NotGguf { path: shown });
    }
    let version = r.u32()?;
    if !(2..=3).contains(&version) {
        return Err(r.damaged(format!(
            "GGUF version {version} is not supported (2 or 3 are)"
        )));
    }
    let tensors = r.u64()?;
    let entries = r.u64()?;
    if entries > MAX_ENTRIES {
        return Err(r.damaged(format!("it claims {entries} metadata entries")));
    }
    let mut ints: HashMap<String, u64> = HashMap::new();
    let mut texts: HashMap<String, String> = HashMap::new();
    for _ in 0..entries {
        let key = r.string(true)?.unwrap_or_default();
        let ty = r.u32()?;
        // Only the general.* strings are kept: the rest (a chat template,
        // the vocabulary) can be large and is not needed here.
        match r.value(ty, key.starts_with("general."))? {
            Value::Int(v) => {
                ints.insert(key, v);
            }
            Value::Text(s) => {
                texts.insert(key, s);
            }
            Value::Other => {}
        }
    }
    let architecture = texts.get("general.architecture").cloned();
    let arch = architecture.clone().unwrap_or_default();
    let int = |suffix: &str| ints.get(&format!("{arch}.{suffix}")).copied();
    Ok(GgufInfo {
        version,
        tensors,
        name: texts.get("general.name").cloned(),
        layers: int("block_count"),
        context_length: int("context_length"),
        embedding: int("embedding_length"),
        heads: int("attention.head_count"),
        heads_kv: int("attention.head_count_kv"),
        key_length: int("attention.key_length"),
        value_length: int("attention.value_length"),
        architecture,
    })
}

/// A minimal GGUF header with the given metadata (tests and fixtures).
#[cfg(test)]
pub(crate) fn fake_header(arch: &str, ints: &[(&str, u32)]) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    }
    let mut out = MAGIC.to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    out.extend((ints.len() as u64 + 2).to_le_bytes());
    string(&mut out, "general.architecture");
    out.extend(8u32.to_le_bytes());
    string(&mut out, arch);
    // An array of strings, as the vocabulary is: skipped, not kept.
    string(&mut out, "tokenizer.ggml.tokens");
    out.extend(9u32.to_le_bytes());
    out.extend(8u32.to_le_bytes());
    out.extend(2u64.to_le_bytes());
    string(&mut out, "<s>");
    string(&mut out, "</s>");
    for (key, v) in ints {
        string(&mut out, &format!("{arch}.{key}"));
        out.extend(4u32.to_le_bytes());
        out.extend(v.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("m.gguf");
        std::fs::write(&path, bytes).expect("write");
        (dir, path)
    }

    #[test]
    fn a_header_gives_the_numbers_the_memory_estimate_needs() {
        let bytes = fake_header(
            "llama",
            &[
                ("block_count", 30),
                ("embedding_length", 576),
                ("attention.head_count", 9),
                ("attention.head_count_kv", 3),
                ("context_length", 8192),
            ],
        );
        let (_d, path) = write(&bytes);
        let info = read(&path).expect("read");
        assert_eq!(info.architecture.as_deref(), Some("llama"));
        assert_eq!(info.layers, Some(30));
        assert_eq!(info.context_length, Some(8192));
        // 30 layers × 3 KV heads × (64 + 64) × 2 bytes.
        assert_eq!(info.kv_bytes_per_token(), Some(30 * 3 * 128 * 2));
    }

    #[test]
    fn other_files_and_damaged_headers_are_refused_by_name() {
        let (_d, path) = write(b"PK\x03\x04 not a model");
        let e = read(&path).expect_err("zip");
        assert!(matches!(e, GgufError::NotGguf { .. }), "{e}");
        assert!(e.to_string().contains("m.gguf"), "{e}");
        let (_d, path) = write(b"GG");
        assert!(matches!(read(&path), Err(GgufError::NotGguf { .. })));
        let mut bytes = fake_header("llama", &[("block_count", 30)]);
        bytes.truncate(bytes.len() - 3);
        let (_d, path) = write(&bytes);
        let e = read(&path).expect_err("cut");
        assert!(e.to_string().contains("ends early"), "{e}");
        let mut bytes = MAGIC.to_vec();
        bytes.extend(9u32.to_le_bytes());
        let (_d, path) = write(&bytes);
        assert!(
            read(&path)
                .expect_err("v9")
                .to_string()
                .contains("version 9")
        );
        // A hostile length is refused, not allocated.
        let mut bytes = MAGIC.to_vec();
        bytes.extend(3u32.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        bytes.extend(1u64.to_le_bytes());
        bytes.extend(u64::MAX.to_le_bytes());
        let (_d, path) = write(&bytes);
        assert!(read(&path).expect_err("len").to_string().contains("claims"));
    }

    #[test]
    fn the_real_test_model_reads_when_present() {
        // As the real-server tests find it: MASKFLOW_TEST_GGUF, else ~/.cache/maskflow-test.
        let path = std::env::var_os("MASKFLOW_TEST_GGUF")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| {
                    Path::new(&h).join(".cache/maskflow-test/SmolLM2-135M-Instruct.Q4_1.gguf")
                })
            })
            .unwrap_or_default();
        if !path.exists() {
            eprintln!("skipped: no test model at {}", path.display());
            return;
        }
        let info = read(&path).expect("read");
        assert_eq!(info.architecture.as_deref(), Some("llama"));
        assert_eq!(info.layers, Some(30));
        assert!(info.kv_bytes_per_token().is_some());
    }
}
