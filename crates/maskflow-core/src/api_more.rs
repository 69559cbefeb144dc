//! The API list, continued: [`crate::api_calls!`] hands its entries here
//! and this macro adds the calls written after `api.rs` reached its size
//! limit, in the same grammar, then normalises the whole list. Nothing
//! else: the docs of the grammar are on [`crate::api_calls!`].

/// The rest of the list of calls (see [`crate::api_calls!`]).
#[macro_export]
#[doc(hidden)]
macro_rules! api_calls_more {
    ($callback:ident [ $($list:tt)* ]) => {
        $crate::api_calls! { @normalise $callback
            $($list)*
            // ---- Models of the embedded back end (issue 32).

            /// The installed models, the recommended list (size, memory need,
            /// speed here), downloads in progress and whether this is the first start.
            models_list: get "/api/models", tag "models", json 200,
                path(), query(), body(),
                returns maskflow_core::service::ModelsView,
                errors(),
                blocking |s| s.models();

            /// Starts downloading a recommended model (`name`) or a URL with its
            /// `sha256`; progress, the checksum and the end come as `model_progress`
            /// events. An interrupted download resumes where it stopped.
            models_pull: post "/api/models/pull", tag "models", json 202,
                path(), query(), body(request: maskflow_core::service::PullModel),
                returns maskflow_core::service::ModelsView,
                errors(400 "An unknown name, a URL that is not http(s), or a missing or malformed sha256", 409 "The model is installed or already downloading", 507 "Not enough free disk"),
                blocking |s| s.start_model_pull(request);

            /// Adds a GGUF file from this machine (checked by its header; hard-linked
            /// into the models folder, or copied when on another disk).
            models_add_file: post "/api/models/file", tag "models", json 201,
                path(), query(), body(input: maskflow_core::service::AddModelFile),
                returns maskflow_core::service::ModelsView,
                errors(400 "Not a file, not a GGUF model, or a bad name", 409 "A model of that name is installed"),
                blocking |s| s.add_model_file(input);

            /// Records the first start's choice (local model, cloud API or manual).
            models_first_start: post "/api/models/first-start", tag "models", json 200,
                path(), query(), body(input: maskflow_core::service::FirstStartInput),
                returns maskflow_core::service::ModelsView,
                errors(400 "A malformed body"),
                blocking |s| s.first_start_choice(input);

            /// Stops a download; its partial file stays, and the next pull resumes it.
            models_cancel: post "/api/models/{name}/cancel", tag "models", json 200,
                path("name" name: String), query(), body(),
                returns maskflow_core::service::ModelsView,
                errors(404 "No such download"),
                blocking |s| s.cancel_model_pull(&name);

            /// Uses a model: the `local` back end points at it and answers the builder's roles.
            models_use: post "/api/models/{name}/use", tag "models", json 200,
                path("name" name: String), query(), body(),
                returns maskflow_core::service::ModelsView,
                errors(404 "No such model", 409 "This build has no embedded back end, or the model's file is missing"),
                blocking |s| s.use_model(&name);

            /// Removes a model (or a partial download of one); refused while it is in use.
            models_remove: delete "/api/models/{name}", tag "models", json 200,
                path("name" name: String), query(), body(),
                returns maskflow_core::service::ModelsView,
                errors(404 "No such model", 409 "The model is in use or downloading"),
                blocking |s| s.remove_model(&name);
            // ---- The flow editor (issue 31): a flow's file with its revision, checks and saves.

            /// A flow's file as written, its revision (SHA-256 of the file) and the loader's verdict.
            flows_source: get "/api/flows/{name}/source", tag "flows", json 200,
                path("name" name: String), query(), body(),
                returns maskflow_core::service::FlowSource,
                errors(400 "The name cannot name a flow file, or the file is not UTF-8", 404 "No such flow"),
                blocking |s| s.flow_source(&name);

            /// Checks a draft with the loader's own checks (its messages, or its Mermaid); nothing is written.
            flows_validate: post "/api/flow-editor/validate", tag "flows", json 200,
                path(), query(), body(draft: maskflow_core::service::FlowDraft),
                returns maskflow_core::service::FlowCheck,
                errors(400 "A malformed body"),
                blocking |s| s.flow_validate(draft);

            /// Saves a draft as `flows/{name}.json` through the loader's checks; `baseRevision` is the
            /// revision the editor opened (absent: a new flow).
            flows_save: put "/api/flows/{name}", tag "flows", json 200,
                path("name" name: String), query(), body(save: maskflow_core::service::FlowSave),
                returns maskflow_core::service::FlowSaved,
                errors(400 "The loader refuses the draft (its message), or the name cannot name a flow file", 409 "The file changed or appeared on disk since the editor opened it"),
                blocking |s| s.flow_save(&name, save);

            /// The step types and the agents with their commands, for the editor's pickers.
            flows_editor_options: get "/api/flow-editor/options", tag "flows", json 200,
                path(), query(), body(),
                returns maskflow_core::service::FlowEditorOptions,
                errors(),
                blocking |s| s.flow_editor_options();
            // ---- Outside clients (`maskflow mcp`).

            /// Files an outside (MCP) client asked to see, waiting for the user's
            /// approval, each with the masked extract the client would get.
            client_requests: get "/api/client-requests", tag "clients", json 200,
                path(), query(), body(),
                returns Vec<maskflow_core::service::ClientRequestView>,
                errors(),
                blocking |s| s.client_requests();

            /// Approves a client's request: the client may now get the file's masked extract.
            approve_client_request: post "/api/client-requests/{id}/approve", tag "clients", json 200,
                path("id" id: String), query(), body(),
                returns maskflow_core::service::ClientRequestView,
                errors(404 "No such request", 409 "The request was already decided"),
                blocking |s| s.approve_client_request(&id);

            /// Declines a client's request: the client is told the user declined.
            decline_client_request: post "/api/client-requests/{id}/decline", tag "clients", json 200,
                path("id" id: String), query(), body(),
                returns maskflow_core::service::ClientRequestView,
                errors(404 "No such request", 409 "The request was already decided"),
                blocking |s| s.decline_client_request(&id);

            // ---- Schedules (issue 30): cron expressions and watched folders.

            /// Every schedule, with its last run, last error and next run.
            list_schedules: get "/api/schedules", tag "schedules", json 200,
                path(), query(), body(),
                returns Vec<maskflow_core::service::ScheduleView>,
                errors(),
                blocking |s| s.list_schedules();

            /// Schedules an approved workflow or a flow: a cron expression or a watched folder.
            create_schedule: post "/api/schedules", tag "schedules", json 201,
                path(), query(), body(input: maskflow_core::service::ScheduleInput),
                returns maskflow_core::service::ScheduleView,
                errors(400 "A bad name, cron expression or folder, or a workflow a schedule cannot run", 404 "No such workflow or flow", 409 "The name is taken, or the workflow is not approved"),
                blocking |s| s.create_schedule(input);

            /// Pauses a schedule: it runs nothing until resumed.
            pause_schedule: post "/api/schedules/{id}/pause", tag "schedules", json 200,
                path("id" id: String), query(), body(),
                returns maskflow_core::service::ScheduleView,
                errors(404 "No such schedule"),
                blocking |s| s.pause_schedule(&id);

            /// Resumes a schedule from its next time; the back-off starts over.
            resume_schedule: post "/api/schedules/{id}/resume", tag "schedules", json 200,
                path("id" id: String), query(), body(),
                returns maskflow_core::service::ScheduleView,
                errors(404 "No such schedule"),
                blocking |s| s.resume_schedule(&id);

            /// Removes a schedule (its runs stay in the history); answers the rest.
            delete_schedule: delete "/api/schedules/{id}", tag "schedules", json 200,
                path("id" id: String), query(), body(),
                returns Vec<maskflow_core::service::ScheduleView>,
                errors(404 "No such schedule"),
                blocking |s| s.delete_schedule(&id);
        }
    };
}
