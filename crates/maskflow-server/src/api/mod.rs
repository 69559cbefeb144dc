//! The HTTP API of `maskflow serve` (axum): seed 000's `/api/workflows…`
//! routes, uploads, the event WebSocket and the generated OpenAPI document.
//!
//! [`router`] builds everything from an [`AppState`]; `main` only binds a
//! socket. Each handler calls one [`Service`] method; bad input of any kind
//! is answered `{error, message}` through [`error::AppError`].

pub mod auth;
mod backups;
mod budgets;
mod cancel;
mod deletes;
mod environments;
pub mod error;
mod events;
mod extracts;
mod flows;
mod isolation;
mod llm;
mod outputs;
mod runs;
mod storage;
pub mod ui;
mod workflows;

use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use maskflow_core::Service;
use serde::Serialize;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use error::AppError;

/// Largest JSON body accepted.
pub const JSON_LIMIT: usize = 2 * 1024 * 1024;
/// Largest upload accepted by `POST /api/extracts`.
pub const UPLOAD_LIMIT: usize = 1024 * 1024 * 1024;

/// What every handler shares.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The core service.
    pub service: Service,
    /// The secret every request must carry.
    pub token: String,
    /// The `Origin` values accepted (the server's own).
    pub origins: Vec<String>,
}

impl AppState {
    /// State for a server listening on `127.0.0.1:port`.
    pub fn new(service: Service, token: String, port: u16) -> Self {
        Self {
            service,
            token,
            origins: vec![
                format!("http://127.0.0.1:{port}"),
                format!("http://localhost:{port}"),
            ],
        }
    }
}

/// A JSON body whose rejections use the API's error shape.
#[derive(FromRequest, Debug)]
#[from_request(via(axum::Json), rejection(AppError))]
pub struct ApiJson<T>(pub T);

impl<T: Serialize> IntoResponse for ApiJson<T> {
    fn into_response(self) -> Response {
        Json(self.0).into_response()
    }
}

/// Path parameters whose rejections use the API's error shape.
#[derive(FromRequestParts, Debug)]
#[from_request(via(axum::extract::Path), rejection(AppError))]
pub struct ApiPath<T>(pub T);

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Maskflow API",
        description = "Local HTTP API of `maskflow serve`. Every request needs the token printed at start, as `Authorization: Bearer <token>`."
    ),
    components(schemas(maskflow_core::Event, error::ErrorBody)),
    modifiers(&TokenAuth),
    security(("token" = []))
)]
struct ApiDoc;

struct TokenAuth;

impl utoipa::Modify for TokenAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

fn api_routes() -> OpenApiRouter<AppState> {
    let uploads = OpenApiRouter::new()
        .routes(routes!(extracts::upload))
        .layer(DefaultBodyLimit::max(UPLOAD_LIMIT));
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(workflows::create, workflows::list))
        .routes(routes!(
            workflows::get,
            workflows::update,
            workflows::delete
        ))
        .routes(routes!(workflows::send_message))
        .routes(routes!(cancel::cancel_message))
        .routes(routes!(workflows::approve))
        .routes(routes!(workflows::edit))
        .routes(routes!(workflows::restore))
        .routes(routes!(runs::create, runs::list))
        .routes(routes!(runs::output))
        .routes(routes!(outputs::run_preview))
        .routes(routes!(outputs::test_preview))
        .routes(routes!(outputs::test_output))
        .routes(routes!(runs::gate))
        .routes(routes!(runs::sessions))
        .routes(routes!(workflows::get_version))
        .routes(routes!(llm::get_settings, llm::put_settings))
        .routes(routes!(llm::put_key, llm::delete_key))
        .routes(routes!(llm::get_python, llm::put_python))
        .routes(routes!(isolation::get_isolation, isolation::put_isolation))
        .routes(routes!(budgets::get_budgets, budgets::put_budgets))
        .routes(routes!(storage::get_storage, storage::put_storage))
        .routes(routes!(storage::clear_storage))
        .routes(routes!(environments::list))
        .routes(routes!(environments::remove))
        .routes(routes!(environments::install_uv))
        .routes(routes!(llm::test_provider))
        .routes(routes!(llm::detected))
        .routes(routes!(llm::ledger))
        .routes(routes!(llm::usage))
        .routes(routes!(llm::manual_list))
        .routes(routes!(llm::manual_answer))
        .routes(routes!(llm::manual_dismiss))
        .routes(routes!(flows::list))
        .routes(routes!(flows::definition))
        .routes(routes!(flows::run))
        .routes(routes!(flows::runs))
        .routes(routes!(flows::get_run, flows::patch_run, flows::delete_run))
        .routes(routes!(flows::stop))
        .routes(routes!(flows::gate))
        .routes(routes!(flows::mermaid))
        .routes(routes!(flows::export))
        .routes(routes!(flows::import))
        .routes(routes!(backups::list, backups::create))
        .routes(routes!(backups::put_retention))
        .routes(routes!(backups::restore))
        .routes(routes!(backups::delete))
        .layer(DefaultBodyLimit::max(JSON_LIMIT))
        .merge(uploads)
}

/// The OpenAPI document of every `/api` route, generated from the handlers.
pub fn openapi() -> utoipa::openapi::OpenApi {
    api_routes().split_for_parts().1
}

/// The whole application: API, events, OpenAPI, the page at `/`, behind
/// the token and origin checks.
pub fn router(state: AppState) -> Router {
    let (api, doc) = api_routes().split_for_parts();
    let doc = std::sync::Arc::new(doc);
    api.route(
        "/api/openapi.json",
        get(move || {
            let doc = doc.clone();
            async move { Json(doc.as_ref().clone()) }
        }),
    )
    .route("/api/events", get(events::stream))
    .route(
        "/api/workflows/{id}/versions/{version_id}/sessions/{iteration}/{*path}",
        get(runs::session_file),
    )
    .route("/", get(ui::serve))
    .fallback(ui_or_not_found)
    .layer(axum::middleware::from_fn_with_state(
        state.clone(),
        auth::guard,
    ))
    .with_state(state)
}

/// A UI file (`/assets/…`), else the API's 404.
async fn ui_or_not_found(request: axum::extract::Request) -> Response {
    if request.uri().path().starts_with("/api/") {
        return AppError::not_found("no such route").into_response();
    }
    ui::serve(request).await
}
