//! The handlers of every call in core's list ([`maskflow_core::api_calls!`]),
//! generated with their OpenAPI entries: path parameters, the query and the
//! JSON body go to the one service call; blocking calls run on tokio's
//! blocking threads. The few routes that are not plain JSON (uploads,
//! downloads, session files, events) are written by hand beside this.

use axum::extract::{FromRequestParts, OptionalFromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{AppError, HttpError};
use super::{ApiJson, AppState};

/// The path parameters of a route as a tuple (`()` for a route without any).
#[derive(Debug)]
pub struct PathArgs<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send + 'static> FromRequestParts<S> for PathArgs<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        match <Path<T> as OptionalFromRequestParts<S>>::from_request_parts(parts, state).await {
            Ok(Some(Path(args))) => Ok(Self(args)),
            // A route without parameters: only `()` fits.
            Ok(None) => {
                T::deserialize(serde::de::value::UnitDeserializer::<serde::de::value::Error>::new())
                    .map(Self)
                    .map_err(|e| AppError::internal(format!("path parameters: {e}")))
            }
            Err(rejection) => Err(AppError::from(rejection)),
        }
    }
}

/// A query string whose rejections use the API's error shape.
#[derive(axum::extract::FromRequestParts, Debug)]
#[from_request(via(axum::extract::Query), rejection(AppError))]
pub struct ApiQuery<T>(pub T);

/// The answer of a `json` call.
fn json<T: Serialize>(status: u16, value: T) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    (status, ApiJson(value)).into_response()
}

/// The answer of an `empty` call.
fn empty(status: u16, _: ()) -> Response {
    StatusCode::from_u16(status)
        .unwrap_or(StatusCode::NO_CONTENT)
        .into_response()
}

/// The answer of a `text` call.
fn text(_status: u16, value: String) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], value).into_response()
}

/// The answer of a two-step `delete` call.
fn delete(_status: u16, reply: maskflow_core::service::DeleteReply) -> Response {
    super::deletes::respond(reply)
}

/// Runs a call: on a blocking thread, or awaited.
macro_rules! run {
    (blocking $service:ident |$s:ident| $call:expr) => {
        tokio::task::spawn_blocking(move || -> Result<_, maskflow_core::CoreError> {
            let $s = &$service;
            $call
        })
        .await
        .map_err(AppError::internal)??
    };
    (async $service:ident |$s:ident| $call:expr) => {{
        let $s = &$service;
        let result: Result<_, maskflow_core::CoreError> = $call.await;
        result?
    }};
}

/// One handler, from one call of the list in its normalised form (see
/// [`maskflow_core::api_calls!`]); the reply kind picks its answer and
/// OpenAPI success entry.
macro_rules! http_call {
    ($name:ident {
        doc $doc:tt http $http:tt reply [$reply:ident $status:literal]
        path $path:tt query $query:tt body $body:tt returns [$ret:ty]
        errors [$( ($ecode:literal $edesc:literal) )*] run $run:tt
    }) => {
        http_call!(@$reply $status [$ret]
            [$( (status = $ecode, description = $edesc, body = HttpError) ),*]
            [$name $doc $http $path $query $body $run]);
    };
    (@json $status:tt [$ret:ty] [$($err:tt)*] $call:tt) => {
        http_call!(@emit json $status
            [(status = $status, description = "Done", body = $ret), $($err)*] [$ret] $call);
    };
    (@empty $status:tt [$ret:ty] [$($err:tt)*] $call:tt) => {
        http_call!(@emit empty $status [(status = $status, description = "Done"), $($err)*] [$ret] $call);
    };
    (@text $status:tt [$ret:ty] [$($err:tt)*] $call:tt) => {
        http_call!(@emit text $status
            [(status = $status, description = "Done", body = String, content_type = "text/plain"), $($err)*]
            [$ret] $call);
    };
    (@delete $status:tt [$ret:ty] [$($err:tt)*] $call:tt) => {
        http_call!(@emit delete $status
            [(status = $status, description = "Deleted; `would_delete` holds what was removed", body = $ret),
             (status = 409, description = "`confirmation_required` (with `would_delete`, `confirm_token`, `expires_at`), or a conflict", body = $ret),
             $($err)*]
            [$ret] $call);
    };
    (@emit $reply:ident $status:tt [$($resp:tt)*] [$ret:ty] [
        $name:ident [$($doc:literal)*] [$method:ident $path:literal $tag:literal]
        [$( ($pname:literal $parg:ident : $pty:ty) )*] [$( $qarg:ident : $qty:ty )?] [$( $barg:ident : $bty:ty )?]
        [$mode:tt |$s:ident| $call:expr]
    ]) => {
        $(#[doc = $doc])*
        #[utoipa::path($method, path = $path, tag = $tag,
            params($( ($pname = $pty, Path), )* $( $qty )?),
            $( request_body = $bty, )?
            responses($($resp)*))]
        pub async fn $name(
            State(state): State<AppState>,
            PathArgs(($($parg,)*)): PathArgs<($($pty,)*)>,
            $( ApiQuery($qarg): ApiQuery<$qty>, )?
            $( ApiJson($barg): ApiJson<$bty>, )?
        ) -> Result<Response, AppError> {
            let service = state.service.clone();
            let value: $ret = run!($mode service |$s| $call);
            Ok($reply($status, value))
        }
    };
}

/// Generates the handlers, [`CALL_NAMES`] and [`routes`] from core's list
/// (each call's name, and its fields for [`http_call!`]).
macro_rules! http_calls {
    ($( $name:ident $call:tt )*) => {
        $( http_call! { $name $call } )*

        /// The names of the calls served here, in the list's order.
        pub const CALL_NAMES: &[&str] = &[$(stringify!($name)),*];

        /// Every generated route.
        pub fn routes() -> OpenApiRouter<AppState> {
            OpenApiRouter::new()$(.routes(routes!($name)))*
        }
    };
}

maskflow_core::api_calls!(http_calls);
