//! The UI's typed client, `ui/src/generated/api.ts`, written from the one
//! list of calls ([`crate::api_calls!`]): each call's method, path, where
//! each argument goes and its TypeScript types (from [`crate::api::calls`]). `ts_export`'s drift check
//! compares it with the committed file like the other generated types.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::api::{Call, calls};

/// A TypeScript type as the client writes it: ts-rs' name, with JSON as `unknown`.
fn ts_type(name: &str) -> String {
    name.replace("JsonValue", "unknown")
}

/// A call's arguments: the path and body arguments by name, and the query's
/// fields at the top level (as a Tauri command takes them).
fn args_ts(named: &[String], query: Option<&str>) -> String {
    let named = if named.is_empty() {
        "{}".to_owned()
    } else {
        format!("{{ {} }}", named.join("; "))
    };
    match query {
        Some(query) if named == "{}" => ts_type(query),
        Some(query) => format!("{named} & {}", ts_type(query)),
        None => named,
    }
}

/// The type names a TypeScript type refers to (to import them).
fn referenced(ts: &str, known: &BTreeSet<String>, into: &mut BTreeSet<String>) {
    for word in ts.split(|c: char| !c.is_alphanumeric() && c != '_') {
        if known.contains(word) {
            into.insert(word.to_owned());
        }
    }
}

/// The text of `api.ts`; `known` holds the exported type names (`index.ts`).
pub(crate) fn client_ts(known: &BTreeSet<String>) -> String {
    let calls: Vec<Call> = calls();
    let mut imports = BTreeSet::new();
    let mut specs = String::new();
    let mut types = String::new();
    for c in &calls {
        let params: Vec<String> = c
            .path_params
            .iter()
            .map(|p| format!("[\"{}\", \"{}\"]", p.url, p.arg))
            .collect();
        let opt = |v: Option<&str>| v.map_or("null".to_owned(), |a| format!("\"{a}\""));
        let _ = writeln!(
            specs,
            "  {}: {{ method: \"{}\", path: \"{}\", pathParams: [{}], query: {}, body: {}, reply: \"{}\" }},",
            c.name,
            c.method.to_uppercase(),
            c.path,
            params.join(", "),
            c.query.is_some(),
            opt(c.body.as_ref().map(|b| b.arg)),
            c.reply,
        );
        let mut args: Vec<String> = c
            .path_params
            .iter()
            .map(|p| format!("{}: {}", p.arg, ts_type(&p.ts)))
            .collect();
        args.extend(
            c.body
                .iter()
                .map(|b| format!("{}: {}", b.arg, ts_type(&b.ts))),
        );
        let result = if c.returns == "null" {
            "void".to_owned()
        } else {
            ts_type(&c.returns)
        };
        for ty in c
            .path_params
            .iter()
            .chain(c.query.iter())
            .chain(c.body.iter())
            .map(|p| &p.ts)
            .chain([&c.returns])
        {
            referenced(ty, known, &mut imports);
        }
        for line in &c.doc {
            let _ = writeln!(types, "  /**{line} */");
        }
        let _ = writeln!(
            types,
            "  {}: {{ args: {}; result: {result} }};",
            c.name,
            args_ts(&args, c.query.as_ref().map(|q| q.ts.as_str()))
        );
    }
    let mut out = String::from(
        "// Generated from the list of calls in crates/maskflow-core/src/api.rs by\n\
         // crates/maskflow-core/src/service/api_client.rs; do not edit.\n",
    );
    let names: Vec<&str> = imports.iter().map(String::as_str).collect();
    let _ = writeln!(
        out,
        "import type {{ {} }} from \"./index\";\n",
        names.join(", ")
    );
    out.push_str(
        "/** How a call reaches the HTTP API; the Tauri command has the call's name\n \
         * and takes `args` as they are. */\n\
         export interface CallSpec {\n  \
         method: \"GET\" | \"POST\" | \"PUT\" | \"PATCH\" | \"DELETE\";\n  \
         path: string;\n  \
         /** `[name in the path, argument]`, in order. */\n  \
         pathParams: readonly (readonly [string, string])[];\n  \
         /** Whether the arguments that are neither in the path nor the body go in the query string. */\n  \
         query: boolean;\n  \
         /** The argument sent as the JSON body. */\n  \
         body: string | null;\n  \
         /** `json`, `empty` (no body), `text` or `delete` (two steps: 409 until confirmed). */\n  \
         reply: \"json\" | \"empty\" | \"text\" | \"delete\";\n}\n\n",
    );
    out.push_str("/** Every call both shells serve. */\nexport const calls = {\n");
    out.push_str(&specs);
    out.push_str("} as const satisfies Record<string, CallSpec>;\n\n");
    out.push_str("/** Each call's arguments (by their Tauri names) and result. */\nexport interface Calls {\n");
    out.push_str(&types);
    out.push_str("}\n\n/** A call's name. */\nexport type CallName = keyof Calls;\n");
    out
}
