//! Property tests of templates: parsing and printing give the same template
//! or the same pieces back, and a template over a context that resolves
//! nothing renders as written.

use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::expr::{Expr, Segment};

/// Text without braces, so that pieces stay apart when printed.
fn text() -> impl Strategy<Value = Piece> {
    "[a-z .,:\n]{1,8}".prop_map(Piece::Text)
}

/// A hole holding a path as the expression printer writes it, maybe padded.
fn hole() -> impl Strategy<Value = Piece> {
    (
        prop::collection::vec("[a-z_][a-z0-9_]{0,4}", 1..4),
        0usize..3,
        " {0,2}",
        " {0,2}",
    )
        .prop_map(|(keys, index, before, after)| {
            let mut path: Vec<Segment> = keys.into_iter().map(Segment::Key).collect();
            path.push(Segment::Index(index));
            Piece::Hole(format!("{before}{}{after}", Expr::Path(path)))
        })
}

/// Pieces as `parse` yields them: no two texts side by side.
fn pieces() -> impl Strategy<Value = Vec<Piece>> {
    prop::collection::vec(prop_oneof![text(), hole()], 0..8).prop_map(|ps| {
        let mut out: Vec<Piece> = Vec::new();
        for p in ps {
            match (out.last_mut(), p) {
                (Some(Piece::Text(t)), Piece::Text(more)) => t.push_str(&more),
                (_, p) => out.push(p),
            }
        }
        out
    })
}

proptest! {
    #[test]
    fn parse_of_print_is_identity(ps in pieces()) {
        prop_assert_eq!(parse(&print(&ps)), ps);
    }

    #[test]
    fn print_of_parse_gives_the_template_back(t in "[a-z{} .]{0,24}") {
        prop_assert_eq!(print(&parse(&t)), t);
    }

    #[test]
    fn nothing_resolves_so_the_template_renders_as_written(t in "[a-z{} .\\[\\]0-9]{0,24}") {
        prop_assert_eq!(render(&t, &json!({})), t);
    }
}
