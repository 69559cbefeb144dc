//! `POST /api/extracts`: multipart upload of one or more files (parts named
//! `file`), each stored under the data folder and run through the extractor.

use axum::extract::State;
use axum::extract::multipart::{Multipart, MultipartRejection};
use axum::http::{HeaderMap, StatusCode, header};
use maskflow_core::CoreError;
use maskflow_core::service::UploadedFile;
use tokio::io::AsyncWriteExt;

use super::error::{AppError, HttpError};
use super::{ApiJson, AppState};

/// What a multipart body may hold beyond its files' bytes (boundaries and
/// part headers) before its stated length counts as over the cap.
const MULTIPART_FRAMING: u64 = 64 << 10;

/// 413: the upload (of `stated` bytes, when its length was stated) is over
/// the cap of `limit` bytes.
fn too_large(stated: Option<u64>, limit: u64) -> AppError {
    let size = stated.map_or_else(String::new, |b| format!(" ({})", size_text(b)));
    AppError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        format!(
            "the upload{size} is over the largest upload of {} MiB; raise \"Largest upload\" \
             in Settings → Storage, or add the file in the desktop window or on the command \
             line (`maskflow build`, `maskflow extract`), which read it where it is",
            limit >> 20
        ),
    )
}

/// "3.2 GB" (decimal, as file managers show sizes).
fn size_text(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // a size shown to one decimal
    let b = bytes as f64;
    match bytes {
        0..1_000_000 => format!("{:.0} KB", b / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b / 1e6),
        _ => format!("{:.1} GB", b / 1e9),
    }
}

/// The form of an upload (for the OpenAPI document).
#[derive(utoipa::ToSchema, Debug)]
#[allow(dead_code)]
pub struct UploadForm {
    /// One or more files.
    #[schema(value_type = Vec<String>, format = Binary)]
    file: Vec<String>,
}

/// Uploads files and returns each one's id and masked extract.
#[utoipa::path(post, path = "/api/extracts", tag = "extracts",
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "One entry per file, in order", body = Vec<UploadedFile>),
        (status = 400, description = "Not a multipart upload, a part not named `file`, or a file Maskflow cannot read", body = HttpError),
        (status = 413, description = "Over the largest upload (a setting: `upload_limit_mib` of `PUT /api/settings/storage`)", body = HttpError),
        (status = 507, description = "The disk of the data folder has no room for the upload", body = HttpError),
    ))]
pub async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<ApiJson<Vec<UploadedFile>>, AppError> {
    // The whole request's length is known before a byte is written: a disk
    // without room for it is refused up front (and a disk that fills while
    // writing is reported the same way, the partial copy removed).
    let length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    // The cap is a setting (Settings → Storage), read per upload; a body
    // whose length is not stated is counted as it comes.
    let limit = state.service.upload_limit_mib().saturating_mul(1 << 20);
    if let Some(length) = length {
        if length > limit.saturating_add(MULTIPART_FRAMING) {
            return Err(too_large(Some(length), limit));
        }
        state.service.ensure_space(length, "this upload")?;
    }
    let mut multipart = multipart?;
    let mut out = Vec::new();
    let mut received = 0u64;
    while let Some(mut field) = multipart.next_field().await? {
        if field.name() != Some("file") {
            return Err(AppError::invalid(
                "every part of the upload must be named `file`",
            ));
        }
        let filename = field.file_name().unwrap_or("upload").to_owned();
        let (file_id, path) = state.service.new_upload(&filename)?;
        let written: Result<(), AppError> = async {
            let failed =
                |e| AppError::from(CoreError::io(format!("storing the upload {filename}"), e));
            let mut file = tokio::fs::File::create(&path).await.map_err(failed)?;
            while let Some(chunk) = field.chunk().await? {
                received = received.saturating_add(chunk.len() as u64);
                if received > limit {
                    return Err(too_large(None, limit));
                }
                file.write_all(&chunk).await.map_err(failed)?;
            }
            file.flush().await.map_err(failed)?;
            Ok(())
        }
        .await;
        if let Err(e) = written {
            if let Some(dir) = path.parent() {
                let _ = tokio::fs::remove_dir_all(dir).await;
            }
            return Err(e);
        }
        out.push(state.service.add_upload(&file_id, &filename, path).await?);
    }
    if out.is_empty() {
        return Err(AppError::invalid("the upload has no part named `file`"));
    }
    Ok(ApiJson(out))
}
