//! Checkpoints that stay small (issue 18, point 7): a checkpoint row holds
//! either the run's full state or a delta against the checkpoint before it,
//! and [`CheckpointPolicy`] decides which and how many are kept.
//!
//! A delta is JSON in one of three shapes, each undone exactly by [`apply`]:
//!
//! - `{}` — nothing changed;
//! - `{"=": value}` — the value is replaced;
//! - `{"o": {key: delta, …}, "x": [removed key, …]}` — an object's changed
//!   and added keys (an added key's delta is a replacement) and its removed keys;
//! - `{"a": [[index, delta], …], "n": length}` — an array cut or grown to
//!   `length`, with its changed and appended elements.
//!
//! A fan-out adds one item result per step, so each delta holds one result:
//! the bytes written grow with the number of items, not with its square.

use serde_json::{Map, Value, json};

/// Why a delta cannot be applied to its base (a damaged or misordered row).
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("a checkpoint delta does not fit the state before it at {path}: {problem}")]
pub struct DeltaError {
    /// Where in the state, as a JSON pointer (`""` for the root).
    pub path: String,
    /// What is wrong.
    pub problem: String,
}

fn bad(path: &str, problem: impl Into<String>) -> DeltaError {
    DeltaError {
        path: if path.is_empty() {
            "the root".into()
        } else {
            path.into()
        },
        problem: problem.into(),
    }
}

fn replace(v: &Value) -> Value {
    json!({ "=": v })
}

/// What turns `old` into `new`; `None` when they are equal.
pub fn diff(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut changed = Map::new();
            for (k, v) in b {
                match a.get(k) {
                    Some(before) => {
                        if let Some(d) = diff(before, v) {
                            changed.insert(k.clone(), d);
                        }
                    }
                    None => {
                        changed.insert(k.clone(), replace(v));
                    }
                }
            }
            let removed: Vec<Value> = a
                .keys()
                .filter(|k| !b.contains_key(*k))
                .map(|k| Value::String(k.clone()))
                .collect();
            if changed.is_empty() && removed.is_empty() {
                return None;
            }
            let mut d = Map::new();
            if !changed.is_empty() {
                d.insert("o".into(), Value::Object(changed));
            }
            if !removed.is_empty() {
                d.insert("x".into(), Value::Array(removed));
            }
            Some(Value::Object(d))
        }
        (Value::Array(a), Value::Array(b)) if !a.is_empty() => {
            let mut changes = Vec::new();
            for (i, v) in b.iter().enumerate() {
                let d = match a.get(i) {
                    Some(before) => diff(before, v),
                    None => Some(replace(v)),
                };
                if let Some(d) = d {
                    changes.push(json!([i, d]));
                }
            }
            if changes.is_empty() && a.len() == b.len() {
                return None;
            }
            // Every element changed: the whole array is shorter.
            if changes.len() == b.len() {
                return Some(replace(new));
            }
            Some(json!({ "a": changes, "n": b.len() }))
        }
        _ if old == new => None,
        _ => Some(replace(new)),
    }
}

/// Applies `delta` (made by [`diff`]) to `base` in place.
pub fn apply(base: &mut Value, delta: &Value) -> Result<(), DeltaError> {
    apply_at(base, delta, "")
}

fn apply_at(base: &mut Value, delta: &Value, path: &str) -> Result<(), DeltaError> {
    let Value::Object(d) = delta else {
        return Err(bad(path, "the delta is not an object"));
    };
    if d.is_empty() {
        return Ok(());
    }
    if let Some(v) = d.get("=") {
        *base = v.clone();
        return Ok(());
    }
    if d.contains_key("o") || d.contains_key("x") {
        let Value::Object(target) = base else {
            return Err(bad(
                path,
                "the delta changes keys of something not an object",
            ));
        };
        if let Some(changed) = d.get("o") {
            let Value::Object(changed) = changed else {
                return Err(bad(path, "its changed keys are not an object"));
            };
            for (k, sub) in changed {
                let at = format!("{path}/{k}");
                match target.get_mut(k) {
                    Some(slot) => apply_at(slot, sub, &at)?,
                    None => {
                        let Some(v) = sub.get("=") else {
                            return Err(bad(&at, "a new key comes without its value"));
                        };
                        target.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        if let Some(removed) = d.get("x") {
            let Value::Array(removed) = removed else {
                return Err(bad(path, "its removed keys are not a list"));
            };
            for k in removed {
                let Some(k) = k.as_str() else {
                    return Err(bad(path, "a removed key is not a string"));
                };
                target.remove(k);
            }
        }
        return Ok(());
    }
    if let (Some(changes), Some(n)) = (d.get("a"), d.get("n")) {
        let Value::Array(target) = base else {
            return Err(bad(
                path,
                "the delta changes elements of something not a list",
            ));
        };
        let (Value::Array(changes), Some(n)) = (changes, n.as_u64()) else {
            return Err(bad(path, "its element changes or length are malformed"));
        };
        let n = usize::try_from(n).map_err(|_| bad(path, "its length is too large"))?;
        target.truncate(n);
        for change in changes {
            let (Some(i), Some(sub)) = (
                change.get(0).and_then(Value::as_u64),
                change
                    .get(1)
                    .filter(|_| change.as_array().is_some_and(|c| c.len() == 2)),
            ) else {
                return Err(bad(path, "an element change is not [index, delta]"));
            };
            let i = usize::try_from(i).map_err(|_| bad(path, "an index is too large"))?;
            let at = format!("{path}/{i}");
            if i < target.len() {
                apply_at(&mut target[i], sub, &at)?;
            } else if i == target.len() && i < n {
                let Some(v) = sub.get("=") else {
                    return Err(bad(&at, "an appended element comes without its value"));
                };
                target.push(v.clone());
            } else {
                return Err(bad(&at, "the index is past the end of the list"));
            }
        }
        if target.len() != n {
            return Err(bad(path, "the list does not reach its stated length"));
        }
        return Ok(());
    }
    Err(bad(
        path,
        "the delta has none of \"=\", \"o\", \"x\" or \"a\"/\"n\"",
    ))
}

/// How checkpoints are written and pruned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointPolicy {
    /// Most deltas between two full snapshots (bounds the rows a load reads).
    /// A full snapshot is also written as soon as the deltas since the last
    /// one add up to its size, so a growing state costs O(n) bytes in all.
    pub full_every: u32,
    /// Full snapshots a run in progress keeps with the deltas after them;
    /// older checkpoints are pruned when a new full one is written, and a
    /// finished (completed or failed) run keeps only its final state.
    /// 0 keeps every checkpoint.
    pub keep_full_snapshots: u32,
}

impl Default for CheckpointPolicy {
    fn default() -> Self {
        CheckpointPolicy {
            full_every: 256,
            keep_full_snapshots: 2,
        }
    }
}

/// What the writer remembers of a run's last checkpoint, to write the next
/// one as a delta.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chain {
    /// The last checkpoint row's id (0: none known; the next one is full).
    pub last_id: i64,
    /// The state it holds.
    pub state: Value,
    /// Bytes of the last full snapshot.
    pub full_bytes: usize,
    /// Bytes of the deltas written since.
    pub delta_bytes: usize,
    /// How many deltas were written since.
    pub deltas: u32,
}

/// What the next checkpoint is.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// The full state, as JSON text.
    Full(String),
    /// A delta against the last checkpoint, as JSON text.
    Delta(String),
}

impl Chain {
    /// Decides the next checkpoint of `state`, whose last known row is
    /// `stored_last` (`None`: the run has none). A chain that does not end at
    /// that row (another writer, a resume) starts again with a full snapshot.
    pub fn next(
        &self,
        state: &Value,
        stored_last: Option<i64>,
        policy: &CheckpointPolicy,
        finished: bool,
    ) -> Next {
        let continues = self.last_id > 0 && stored_last == Some(self.last_id);
        if continues && !finished && self.deltas < policy.full_every {
            let delta = diff(&self.state, state).unwrap_or_else(|| json!({}));
            let text = delta.to_string();
            if self.delta_bytes + text.len() <= self.full_bytes {
                return Next::Delta(text);
            }
        }
        Next::Full(state.to_string())
    }

    /// Records the row written for `state`.
    pub fn wrote(&mut self, id: i64, state: Value, next: &Next) {
        match next {
            Next::Full(text) => {
                self.full_bytes = text.len();
                self.delta_bytes = 0;
                self.deltas = 0;
            }
            Next::Delta(text) => {
                self.delta_bytes += text.len();
                self.deltas += 1;
            }
        }
        self.last_id = id;
        self.state = state;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "[a-z=ox]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("[a-z=ox0-9]{1,3}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Any sequence of states is rebuilt exactly from the first one and
        /// the deltas between them, read back from their text.
        #[test]
        fn a_chain_of_deltas_rebuilds_every_state(states in prop::collection::vec(arb_json(), 1..12)) {
            let mut rebuilt = states[0].clone();
            for pair in states.windows(2) {
                match diff(&pair[0], &pair[1]) {
                    Some(d) => {
                        let text = d.to_string();
                        let read: Value = serde_json::from_str(&text).expect("delta text");
                        apply(&mut rebuilt, &read).expect("apply");
                    }
                    None => prop_assert_eq!(&pair[0], &pair[1]),
                }
                prop_assert_eq!(&rebuilt, &pair[1]);
            }
        }

        /// A small change of a large state gives a small delta: its size
        /// depends on the change, not on the 200 items beside it.
        #[test]
        fn a_change_of_one_key_stays_small(base in arb_json(), value in arb_json()) {
            let mut big = json!({"items": (0..200).map(|i| json!({"i": i})).collect::<Vec<_>>(), "x": base});
            let before = big.clone();
            big["x"] = value.clone();
            if let Some(d) = diff(&before, &big) {
                let change = base.to_string().len() + value.to_string().len();
                prop_assert!(d.to_string().len() <= 2 * change + 40);
            }
        }
    }

    #[test]
    fn keys_and_elements_come_and_go_and_nulls_stay() {
        let cases = [
            (json!({"a": 1, "b": null}), json!({"b": null, "c": [1, 2]})),
            (json!([1, 2, 3]), json!([1])),
            (json!([1, 2]), json!([1, 2, {"x": null}])),
            (json!([]), json!([[]])),
            (json!({"a": {"b": 1}}), json!({"a": [1]})),
            (json!(null), json!({"a": 1})),
            (json!({"a": 1}), json!({})),
        ];
        for (old, new) in cases {
            let d = diff(&old, &new).expect("a change");
            let mut v = old.clone();
            apply(&mut v, &d).expect("apply");
            assert_eq!(v, new, "{old} → {new} with {d}");
        }
        assert_eq!(diff(&json!({"a": [1]}), &json!({"a": [1]})), None);
    }

    #[test]
    fn a_delta_that_does_not_fit_is_an_error_naming_where() {
        let err = apply(&mut json!({"a": 1}), &json!({"o": {"a": {"o": {}}}})).expect_err("a");
        assert_eq!(err.path, "/a");
        assert!(err.to_string().contains("not an object"), "{err}");
        assert!(apply(&mut json!([1]), &json!({"a": [[5, {"=": 1}]], "n": 6})).is_err());
        assert!(apply(&mut json!({}), &json!({"o": {"k": {"o": {}}}})).is_err());
        assert!(apply(&mut json!({}), &json!(3)).is_err());
        assert!(apply(&mut json!({}), &json!({"q": 1})).is_err());
    }

    #[test]
    fn the_chain_writes_deltas_until_they_outweigh_the_full_state() {
        let policy = CheckpointPolicy {
            full_every: 1000,
            keep_full_snapshots: 2,
        };
        let mut chain = Chain::default();
        let mut state = json!({"results": {}, "input": "x".repeat(200)});
        let mut fulls = 0;
        let mut bytes = 0;
        for i in 0..1000i64 {
            state["results"][i.to_string()] = json!({"ok": true, "output": i});
            let next = chain.next(
                &state,
                Some(chain.last_id).filter(|&l| l > 0),
                &policy,
                false,
            );
            match &next {
                Next::Full(t) => {
                    fulls += 1;
                    bytes += t.len();
                }
                Next::Delta(t) => bytes += t.len(),
            }
            chain.wrote(i + 1, state.clone(), &next);
        }
        let final_bytes = state.to_string().len();
        // Full snapshots double in size: few of them, and O(n) bytes in all.
        assert!(fulls <= 12, "{fulls} full snapshots");
        assert!(
            bytes <= 6 * final_bytes,
            "{bytes} bytes for a {final_bytes}-byte state"
        );
        // A stale chain (another row was written) starts with a full snapshot.
        assert!(matches!(
            chain.next(&state, Some(-5), &policy, false),
            Next::Full(_)
        ));
        assert!(matches!(
            chain.next(&state, Some(chain.last_id), &policy, true),
            Next::Full(_)
        ));
    }
}
