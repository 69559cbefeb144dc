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
