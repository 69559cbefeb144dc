//! The Tauri commands. Every call in core's list ([`maskflow_core::api_calls!`])
//! becomes an async command of the same name with snake_case arguments;
//! blocking calls run on a blocking thread so the window's thread never
//! waits on the database or the disk. The few calls that only the desktop
//! makes, or makes differently (a native drop, a picked file's bytes, local
//! paths of outputs, a session file), are written by hand below. Errors
//! cross IPC as core's [`ErrorBody`], with the same codes as the HTTP API.

use std::path::PathBuf;

use maskflow_core::api::ErrorBody;
use maskflow_core::service::UploadedFile;
use maskflow_core::{CoreError, Service};
use tauri::State;
use tauri::ipc::{InvokeBody, Request};

/// A call's answer over IPC.
type Reply<T> = Result<T, ErrorBody>;

/// The body of a failed call.
fn error(e: CoreError) -> ErrorBody {
    ErrorBody::from_core(e, "app's log")
}

/// A query struct whose fields are the command's top-level arguments (as
/// they were before the list: `ledger(q, limit, offset)`,
/// `delete_workflow(workflow_id, confirm)`).
pub struct Flat<T>(pub T);

impl<'de, R: tauri::Runtime, T: serde::de::DeserializeOwned> tauri::ipc::CommandArg<'de, R>
    for Flat<T>
{
    fn from_command(
        command: tauri::ipc::CommandItem<'de, R>,
    ) -> Result<Self, tauri::ipc::InvokeError> {
        match command.message.payload() {
            InvokeBody::Json(args) => T::deserialize(args)
                .map(Flat)
                .map_err(|e| tauri::ipc::InvokeError::from(format!("{}: {e}", command.name))),
            InvokeBody::Raw(_) => Err(tauri::ipc::InvokeError::from(format!(
                "{}: the arguments must be JSON",
                command.name
            ))),
        }
    }
}

/// Runs `f` on a blocking thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CoreError> + Send + 'static,
) -> Reply<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| error(CoreError::Corrupt(format!("the call stopped: {e}"))))?
        .map_err(error)
}

/// Runs a call: on a blocking thread, or awaited.
macro_rules! run {
    (blocking $service:ident |$s:ident| $call:expr) => {
        blocking(move || {
            let $s = &$service;
            $call
        })
        .await
    };
    (async $service:ident |$s:ident| $call:expr) => {{
        let $s = &$service;
        let result: Result<_, CoreError> = $call.await;
        result.map_err(error)
    }};
}

/// One command, from one call of the list in its normalised form (see
/// [`maskflow_core::api_calls!`]); the HTTP-only fields are not read.
macro_rules! ipc_call {
    ($name:ident {
        doc [$($doc:literal)*] http $http:tt reply $reply:tt
        path [$( ($pname:literal $parg:ident : $pty:ty) )*]
        query [$( $qarg:ident : $qty:ty )?]
        body [$( $barg:ident : $bty:ty )?]
        returns [$ret:ty] errors $errors:tt
        run [$mode:tt |$s:ident| $call:expr]
    }) => {
        $(#[doc = $doc])*
        #[tauri::command(rename_all = "snake_case")]
        pub async fn $name(
            service: State<'_, Service>,
            $( $parg: $pty, )*
            $( $qarg: Flat<$qty>, )?
            $( $barg: $bty, )?
        ) -> Reply<$ret> {
            let service = service.inner().clone();
            $( let $qarg = $qarg.0; )?
            run!($mode service |$s| $call)
        }
    };
}

/// Generates one command per call, [`CALL_NAMES`] and the invoke handler
/// (with the hand-written commands) from core's list (each call's name, and
/// its fields for [`ipc_call!`]).
macro_rules! ipc_calls {
    ($( $name:ident $call:tt )*) => {
        $( ipc_call! { $name $call } )*

        /// The names of the commands generated from the list, in its order.
        #[cfg(test)]
        const CALL_NAMES: &[&str] = &[$(stringify!($name)),*];

        /// The names of every command [`handler`] registers: the list's, then
        /// the hand-written ones (kept beside `generate_handler!` so the two
        /// cannot drift).
        #[cfg(test)]
        const COMMAND_NAMES: &[&str] = &[
            $(stringify!($name),)*
            "extract_path", "upload_file", "run_output", "test_output", "session_file",
        ];

        /// The invoke handler of every command in [`COMMAND_NAMES`].
        pub fn handler() -> impl Fn(tauri::ipc::Invoke) -> bool + Send + Sync + 'static {
            tauri::generate_handler![
                $($name,)*
                extract_path, upload_file, run_output, test_output, session_file,
            ]
        }
    };
}

maskflow_core::api_calls!(ipc_calls);

// ---- Hand-written: what only the desktop does, or does with local paths.

/// Extracts a file given by its path (a native drop): nothing is copied.
#[tauri::command(rename_all = "snake_case")]
pub async fn extract_path(s: State<'_, Service>, path: PathBuf) -> Reply<UploadedFile> {
    s.add_local_file(path).await.map_err(error)
}

/// Extracts a file picked in the window: its bytes are the raw request body
/// and its name the `x-filename` header (percent-encoded).
#[tauri::command(rename_all = "snake_case")]
pub async fn upload_file(s: State<'_, Service>, request: Request<'_>) -> Reply<UploadedFile> {
    let (InvokeBody::Raw(bytes), Some(name)) =
        (request.body(), request.headers().get("x-filename"))
    else {
        return Err(ErrorBody::new(
            "invalid_request",
            "upload_file needs the file's bytes and an x-filename header",
        ));
    };
    let name = percent_decode(name.to_str().unwrap_or("upload"));
    s.add_upload_bytes(&name, bytes).await.map_err(error)
}

/// Where one output file of a run lies on this machine.
#[tauri::command(rename_all = "snake_case")]
pub async fn run_output(s: State<'_, Service>, run_id: String, name: String) -> Reply<PathBuf> {
    let s = s.inner().clone();
    blocking(move || s.run_output(&run_id, &name)).await
}

/// The local path of an output of a version's latest test run.
#[tauri::command(rename_all = "snake_case")]
pub async fn test_output(
    s: State<'_, Service>,
    workflow_id: String,
    version_id: String,
    name: String,
) -> Reply<String> {
    let s = s.inner().clone();
    blocking(move || {
        Ok(s.test_output(&workflow_id, &version_id, &name)?
            .display()
            .to_string())
    })
    .await
}

/// One file of a build session folder, as text.
#[tauri::command(rename_all = "snake_case")]
pub async fn session_file(
    s: State<'_, Service>,
    workflow_id: String,
    version_id: String,
    iteration: u32,
    path: String,
) -> Reply<String> {
    let s = s.inner().clone();
    blocking(move || s.session_file(&workflow_id, &version_id, iteration, &path)).await
}

/// Decodes `%XX` escapes (what `encodeURIComponent` writes); invalid escapes stay.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{CALL_NAMES, COMMAND_NAMES, percent_decode};

    #[test]
    fn percent_decoding_restores_what_encode_uri_component_wrote() {
        assert_eq!(percent_decode("sales%20q1%C3%A9.csv"), "sales q1é.csv");
        assert_eq!(percent_decode("100%.csv"), "100%.csv");
        assert_eq!(percent_decode("a%zz"), "a%zz");
    }

    /// The names of core's list, read independently of the commands.
    fn listed_calls() -> Vec<&'static str> {
        maskflow_core::api::calls().iter().map(|c| c.name).collect()
    }

    #[test]
    fn every_call_of_the_list_is_a_registered_command() {
        let listed: Vec<&str> = listed_calls();
        assert!(listed.len() > 40, "{listed:?}");
        for name in &listed {
            assert!(
                COMMAND_NAMES.contains(name),
                "{name} is in core's list but not a registered command"
            );
        }
        assert_eq!(CALL_NAMES, listed.as_slice());
        let mut unique = COMMAND_NAMES.to_vec();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(
            unique.len(),
            COMMAND_NAMES.len(),
            "a command is registered twice"
        );
    }

    /// The command names a text lists as `"name",` entries.
    fn quoted_names(text: &str) -> Vec<String> {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix('"')?.strip_suffix("\","))
            .map(str::to_owned)
            .collect()
    }

    /// With an app manifest Tauri denies every command the window's
    /// capability does not allow, so a call missing from `build.rs` or
    /// `tauri.conf.json` works over HTTP and fails in the desktop window.
    #[test]
    fn every_command_has_a_permission_that_the_window_is_given() {
        let built = quoted_names(include_str!("../build.rs"));
        let mut expected: Vec<String> = COMMAND_NAMES.iter().map(|n| (*n).to_owned()).collect();
        expected.sort_unstable();
        let mut listed = built.clone();
        listed.sort_unstable();
        assert_eq!(
            listed, expected,
            "src-tauri/build.rs: run scripts/desktop-permissions.py"
        );
        let conf: serde_json::Value =
            serde_json::from_str(include_str!("../../tauri.conf.json")).expect("tauri.conf.json");
        let capability = &conf["app"]["security"]["capabilities"][0];
        assert_eq!(capability["windows"], serde_json::json!(["main"]));
        let allowed: Vec<&str> = capability["permissions"]
            .as_array()
            .expect("permissions")
            .iter()
            .filter_map(|p| p.as_str()?.strip_prefix("allow-"))
            .collect();
        for name in &expected {
            let permission = name.replace('_', "-");
            assert!(
                allowed.contains(&permission.as_str()),
                "the main window is not allowed {name}: run scripts/desktop-permissions.py"
            );
        }
        assert_eq!(
            allowed.len(),
            expected.len(),
            "no permission for a command that does not exist"
        );
    }
}
