//! The SHA-256 of an approved version's input files (issue 31 point 4):
//! hashed from the files on this machine when the version is approved,
//! stored beside it and shown in its view, so anyone can tell later
//! whether a file is still the one the workflow was built and tested on.
//! Hashes stay local: they are never part of an LLM's prompt.

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::{Service, VersionView};
use crate::error::Result;
use crate::store::{self, input_hashes::InputHashRow};

/// One input file of an approved version and its SHA-256.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
pub struct InputHash {
    /// The file's name as the user gave it.
    pub filename: String,
    /// Lower-case hex SHA-256 of its bytes when the version was approved;
    /// `null` when the file could no longer be read then.
    pub sha256: Option<String>,
}

impl From<InputHashRow> for InputHash {
    fn from(r: InputHashRow) -> Self {
        Self {
            filename: r.filename,
            sha256: r.sha256,
        }
    }
}

/// The lower-case hex SHA-256 of the file at `path`, read in blocks.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut block = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut block)?;
        if n == 0 {
            break;
        }
        hasher.update(&block[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

impl Service {
    /// Hashes the input files of `version_id` as they are now (outside any
    /// transaction: a large file takes a while). A file that cannot be read
    /// (moved or deleted since) is recorded without a hash rather than
    /// refusing the approval.
    pub(super) fn hash_inputs(&self, version_id: &str) -> Result<Vec<InputHashRow>> {
        let files = {
            let db = self.db();
            let mut files = Vec::new();
            for id in store::file_ids_of(&db, version_id)? {
                if let Some(f) = store::get_file(&db, &id)? {
                    files.push((f.filename, f.path));
                }
            }
            files
        };
        Ok(files
            .into_iter()
            .map(|(filename, path)| InputHashRow {
                sha256: sha256_file(Path::new(&path)).ok(),
                filename,
            })
            .collect())
    }

    /// Adds the recorded input hashes to a version view.
    pub(super) fn attach_input_hashes(&self, conn: &rusqlite::Connection, view: &mut VersionView) {
        view.input_hashes = store::input_hashes::of(conn, &view.id)
            .unwrap_or_default()
            .into_iter()
            .map(InputHash::from)
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::sha256_file;

    #[test]
    fn hashes_a_file_as_sha256sum_does() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("a.csv");
        std::fs::write(&path, "abc").expect("write");
        assert_eq!(
            sha256_file(&path).expect("hash"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(sha256_file(&dir.path().join("missing.csv")).is_err());
    }
}
