//! A state machine as one `const` table of `(from, event, to)` rows — the
//! shape shared by the version statuses and the build (maskflow-core) and
//! the flow run states (maskflow-flows). The table yields the lookup behind
//! each machine's `apply`, its Mermaid drawing, and a walk that tests use to
//! check every row applies and every other pair is refused. Each machine
//! keeps its own error type and names; this crate knows nothing of them.
//!
//! It must never depend on another Maskflow crate: both layers above use it.

#![deny(missing_docs)]

use std::fmt::Debug;

/// A state machine's legal moves: `from` on `event` gives `to` (a state, or
/// a state with what to do on arriving).
#[derive(Debug, Clone, Copy)]
pub struct Table<S: 'static, E: 'static, T: 'static> {
    rows: &'static [(S, E, T)],
}

/// One arrow of a drawing: the two node names and the label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The node the arrow leaves.
    pub from: String,
    /// The node the arrow reaches.
    pub to: String,
    /// What the arrow says.
    pub label: String,
}

/// What [`Table::walk`] saw: the rows it applied and the pairs refused,
/// with the machine's own error for each (for the test to check).
#[derive(Debug)]
pub struct Walk<S, E, Err> {
    /// Rows applied with the result the table names.
    pub rows: usize,
    /// Every `(state, event)` pair that is not a row, with its refusal.
    pub refused: Vec<(S, E, Err)>,
}

/// A disagreement between a table and the `apply` walked against it.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum WalkError {
    /// Two rows leave the same state on the same event.
    #[error("{0} appears in two rows")]
    Duplicate(String),
    /// A row's state or event is not in the lists walked.
    #[error("the row {0} is outside the states and events walked")]
    Unlisted(String),
    /// `apply` refused or changed a row.
    #[error("the row {row} gave {got}")]
    Row {
        /// The row.
        row: String,
        /// What `apply` returned instead.
        got: String,
    },
    /// `apply` accepted a pair that is not a row.
    #[error("{pair} is not a row, yet apply gave {got}")]
    Accepted {
        /// The pair.
        pair: String,
        /// What `apply` returned.
        got: String,
    },
}

impl<S, E, T> Table<S, E, T>
where
    S: Copy + PartialEq + Debug,
    E: Copy + PartialEq + Debug,
    T: Copy + PartialEq + Debug,
{
    /// The table of `rows`.
    pub const fn new(rows: &'static [(S, E, T)]) -> Self {
        Table { rows }
    }

    /// Every row, in order.
    pub fn rows(&self) -> &'static [(S, E, T)] {
        self.rows
    }

    /// Where `event` takes `from`, or `None` when no row allows it.
    pub fn apply(&self, from: S, event: E) -> Option<T> {
        self.rows
            .iter()
            .find(|(f, e, _)| *f == from && *e == event)
            .map(|(_, _, to)| *to)
    }

    /// The table as a Mermaid state diagram: the `start` lines (e.g.
    /// `[*] --> running`) and then one arrow per row, named by `edge`.
    pub fn mermaid(&self, start: &[String], edge: impl Fn(&S, &E, &T) -> Edge) -> String {
        let mut out = String::from("stateDiagram-v2\n");
        for line in start {
            out.push_str(&format!("    {line}\n"));
        }
        for (from, event, to) in self.rows {
            let Edge { from, to, label } = edge(from, event, to);
            out.push_str(&format!("    {from} --> {to}: {label}\n"));
        }
        out
    }

    /// Walks every pair of `states` × `events` through `apply` (the
    /// machine's own): each row must give its `to`, every other pair must be
    /// refused, no pair may be listed twice, and every row must lie inside
    /// the lists. For the machine's tests.
    pub fn walk<Err: Debug>(
        &self,
        states: &[S],
        events: &[E],
        apply: impl Fn(S, E) -> Result<T, Err>,
    ) -> Result<Walk<S, E, Err>, WalkError> {
        for (i, (f, e, _)) in self.rows.iter().enumerate() {
            if self.rows[..i].iter().any(|(f2, e2, _)| f2 == f && e2 == e) {
                return Err(WalkError::Duplicate(format!("({f:?}, {e:?})")));
            }
            if !states.contains(f) || !events.contains(e) {
                return Err(WalkError::Unlisted(format!("{:?}", self.rows[i])));
            }
        }
        let mut walk = Walk {
            rows: 0,
            refused: Vec::new(),
        };
        for &from in states {
            for &event in events {
                match (self.apply(from, event), apply(from, event)) {
                    (Some(to), Ok(got)) if got == to => walk.rows += 1,
                    (Some(to), got) => {
                        return Err(WalkError::Row {
                            row: format!("({from:?}, {event:?}, {to:?})"),
                            got: format!("{got:?}"),
                        });
                    }
                    (None, Err(e)) => walk.refused.push((from, event, e)),
                    (None, Ok(got)) => {
                        return Err(WalkError::Accepted {
                            pair: format!("({from:?}, {event:?})"),
                            got: format!("{got:?}"),
                        });
                    }
                }
            }
        }
        Ok(walk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Light {
        Off,
        On,
    }
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Press {
        Switch,
        Unplug,
    }

    const ROWS: &[(Light, Press, Light)] = &[
        (Light::Off, Press::Switch, Light::On),
        (Light::On, Press::Switch, Light::Off),
        (Light::On, Press::Unplug, Light::Off),
    ];
    const TABLE: Table<Light, Press, Light> = Table::new(ROWS);
    const STATES: [Light; 2] = [Light::Off, Light::On];
    const EVENTS: [Press; 2] = [Press::Switch, Press::Unplug];

    fn apply(from: Light, event: Press) -> Result<Light, String> {
        TABLE
            .apply(from, event)
            .ok_or(format!("{from:?}/{event:?}"))
    }

    #[test]
    fn the_walk_counts_rows_and_collects_refusals() {
        let walk = TABLE.walk(&STATES, &EVENTS, apply).expect("walk");
        assert_eq!(walk.rows, ROWS.len());
        assert_eq!(
            walk.refused,
            [(Light::Off, Press::Unplug, "Off/Unplug".to_owned())]
        );
    }

    #[test]
    fn the_walk_finds_an_apply_that_disagrees_with_the_table() {
        let lenient = |_: Light, _: Press| -> Result<Light, String> { Ok(Light::Off) };
        assert!(matches!(
            TABLE.walk(&STATES, &EVENTS, lenient),
            Err(WalkError::Row { .. })
        ));
        let always_off = |from: Light, event: Press| -> Result<Light, String> {
            Ok(TABLE.apply(from, event).unwrap_or(Light::Off))
        };
        assert!(matches!(
            TABLE.walk(&STATES, &EVENTS, always_off),
            Err(WalkError::Accepted { .. })
        ));
        assert!(matches!(
            TABLE.walk(&[Light::Off], &EVENTS, apply),
            Err(WalkError::Unlisted(_))
        ));
        const TWICE: Table<Light, Press, Light> = Table::new(&[
            (Light::Off, Press::Switch, Light::On),
            (Light::Off, Press::Switch, Light::Off),
        ]);
        assert!(matches!(
            TWICE.walk(&STATES, &EVENTS, apply),
            Err(WalkError::Duplicate(_))
        ));
    }

    #[test]
    fn the_drawing_has_the_start_lines_and_one_arrow_per_row() {
        let m = TABLE.mermaid(&["[*] --> Off".into()], |f, e, t| Edge {
            from: format!("{f:?}"),
            to: format!("{t:?}"),
            label: format!("{e:?}"),
        });
        assert_eq!(
            m,
            "stateDiagram-v2\n    [*] --> Off\n    Off --> On: Switch\n    On --> Off: Switch\n    On --> Off: Unplug\n"
        );
    }
}
