//! `POST /api/extracts`: multipart upload of one or more files (parts named
//! `file`), each stored under the data folder and run through the extractor.

use axum::extract::State;
use axum::extract::multipart::{Multipart, MultipartRejection};
use axum::http::{HeaderMap, header};
use maskflow_core::CoreError;
use maskflow_core::service::UploadedFile;
use tokio::io::AsyncWriteExt;

use super::error::{AppError, HttpError};
use super::{ApiJson, AppState};

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
        (status = 413, description = "Too large", body = HttpError),
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
    if let Some(length) = length {
        state.service.ensure_space(length, "this upload")?;
    }
    let mut multipart = multipart?;
    let mut out = Vec::new();
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
