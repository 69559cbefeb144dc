//! The HTTP API of `maskflow serve` (axum): seed 000's `/api/workflows…`
//! routes, uploads, the event WebSocket and the generated OpenAPI document.
//!
//! [`router`] builds everything from an [`AppState`]; `main` only binds a
//! socket. The handlers of the JSON calls are generated from core's list
//! ([`calls`]); uploads, downloads, session files and events are written
//! by hand. Bad input of any kind is answered with core's `ErrorBody`
//! through [`error::AppError`].

pub mod auth;
pub mod calls;
mod deletes;
pub mod error;
mod events;
mod extracts;
mod files;
pub mod ui;

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

/// What every handler shares.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The core service.
    pub service: Service,
    /// The secret every request must carry.
    pub token: String,
    /// The host names and origins the server answers to (its own).
    pub reach: auth::Reach,
}

impl AppState {
    /// State for a server listening on `127.0.0.1:port`.
    pub fn new(service: Service, token: String, port: u16) -> Self {
        Self {
            service,
            token,
            reach: auth::Reach::loopback(port),
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
        description = "Local HTTP API of `maskflow serve`. Every request needs the token printed at start (the URL's `#token=…`), as `Authorization: Bearer <token>`; the `/api/events` WebSocket also takes it as the subprotocol `maskflow.bearer.<token>`. No cookie is read. A request addressed to a host other than `127.0.0.1:PORT`, `localhost:PORT` or `[::1]:PORT` gets 421; a change sent from another web site's page gets 403."
    ),
    components(schemas(maskflow_core::Event, error::HttpError)),
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
        // Its cap is the user's setting, checked by the handler.
        .layer(DefaultBodyLimit::disable());
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(calls::routes())
        .routes(routes!(files::run_output))
        .routes(routes!(files::test_output))
        .layer(DefaultBodyLimit::max(JSON_LIMIT))
        .merge(uploads)
}

/// The OpenAPI document of every `/api` route, generated from the handlers.
pub fn openapi() -> utoipa::openapi::OpenApi {
    described(api_routes().split_for_parts().1)
}

/// What a path parameter holds, by the route it is on and its name; the
/// list of calls names parameters, this says what they are for readers of
/// the OpenAPI document.
fn parameter_description(path: &str, name: &str) -> Option<&'static str> {
    Some(match name {
        "version_id" => "Version id (`wv_…`)",
        "conversationId" => "Flow run id (`flow_…`), the run's conversation id",
        "run_id" => "Run id (`run_…`)",
        "stageId" => "A step's id in the flow (seed 003's stage id)",
        "kind" => {
            "What to clear: `uploads`, `run_outputs`, `sessions`, `environments` or `backups`"
        }
        "name" if path.starts_with("/api/flows/") => {
            "Flow name: its file in the data folder's `flows/`, without `.json`"
        }
        "name" if path.starts_with("/api/agents/") => {
            "Agent name: its file in the data folder's `agents/`, without `.json`"
        }
        "name" => "The output file's name, as the run's outputs list it",
        "id" if path.starts_with("/api/workflows/") => "Workflow id (`wf_…`)",
        "id" if path.starts_with("/api/backups/") => "Backup id, as `GET /api/backups` lists it",
        "id" if path.starts_with("/api/environments/") => {
            "Python environment id, as `GET /api/environments` lists it"
        }
        "id" if path.starts_with("/api/manual/") => {
            "Manual prompt id, from its `manual_prompt` event"
        }
        "id" if path.starts_with("/api/providers/") => "Back end id, as Settings lists it",
        "id" if path.starts_with("/api/client-requests/") => {
            "Client request id (`creq_…`), as `GET /api/client-requests` lists it"
        }
        "id" if path.starts_with("/api/schedules/") => "Schedule id (`sch_…`) or name",
        _ => return None,
    })
}

/// `doc` with every undescribed path parameter described.
fn described(mut doc: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    use utoipa::openapi::path::ParameterIn;
    for (path, item) in doc.paths.paths.iter_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for op in operations.into_iter().flatten() {
            for p in op.parameters.iter_mut().flatten() {
                let utoipa::openapi::RefOr::T(p) = p else {
                    continue;
                };
                if p.parameter_in == ParameterIn::Path && p.description.is_none() {
                    p.description = parameter_description(path, &p.name).map(str::to_owned);
                }
            }
        }
    }
    doc
}

/// The whole application: API, events, OpenAPI, the page at `/`, behind
/// the host, origin and token checks ([`auth::guard`]).
pub fn router(state: AppState) -> Router {
    let (api, doc) = api_routes().split_for_parts();
    let doc = std::sync::Arc::new(described(doc));
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
        get(files::session_file),
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
