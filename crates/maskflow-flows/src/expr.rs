//! The condition language of decisions, contracts and graph back edges: a
//! small, safe expression language with a hand-written parser (no eval).
//!
//! Grammar (lowest precedence first):
//!
//! ```text
//! or      := and ("||" and)*
//! and     := unary ("&&" unary)*
//! unary   := "!" unary | compare
//! compare := primary (("===" | "!==" | "==" | "!=" | ">=" | "<=" | ">" | "<") primary)?
//! primary := number | 'string' | "string" | true | false | null | path | "(" or ")" | file
//! file    := ("exists" | "nonEmpty" | "isJson") "(" string ")"
//!          | ("contains" | "matches") "(" string "," string ")"
//! path    := name ("." name | "[" digits "]")*     e.g. output.score, output.files[0].path
//! ```
//!
//! Semantics: a path reads the run context (a missing key is `null`; the
//! `length` of an array or string is its length). `==` and `===` are the same
//! strict JSON equality (no coercion), `!=` and `!==` its negation; `<`, `<=`,
//! `>`, `>=` compare two numbers or two strings and are false for anything
//! else. A value standing alone is true unless it is `null`, `false`, `0` or
//! `""` (JavaScript's truthiness for JSON values). A file check ([`files`])
//! reads a file in the run's working folder; it is true or false, and false
//! where there is no folder to read (outside pre- and postconditions).

use std::path::Path;

use serde_json::Value;

pub mod files;

/// A parse error: where in the expression and what is wrong.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("invalid condition {source_text:?} at character {at}: {message}")]
pub struct ExprError {
    /// The expression.
    pub source_text: String,
    /// Character offset of the problem.
    pub at: usize,
    /// What is wrong.
    pub message: String,
}

/// One segment of a path.
#[derive(Clone, Debug, PartialEq)]
pub enum Segment {
    /// `.name`
    Key(String),
    /// `[3]`
    Index(usize),
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `==` / `===`
    Eq,
    /// `!=` / `!==`
    Ne,
    /// `>=`
    Ge,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `<`
    Lt,
}

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A JSON literal.
    Lit(Value),
    /// A path into the context.
    Path(Vec<Segment>),
    /// `!e`
    Not(Box<Expr>),
    /// `a && b`
    And(Box<Expr>, Box<Expr>),
    /// `a || b`
    Or(Box<Expr>, Box<Expr>),
    /// `a op b`
    Compare(Box<Expr>, Cmp, Box<Expr>),
    /// `exists('out.json')` and the other checks of a file in the run's folder.
    File(files::FileCheck),
}

/// Parses an expression.
pub fn parse(text: &str) -> Result<Expr, ExprError> {
    let mut p = Parser {
        src: text,
        chars: text.chars().collect(),
        pos: 0,
    };
    let e = p.or()?;
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(p.err("unexpected text after the end of the condition"));
    }
    Ok(e)
}

/// Parses a path such as `output.files[0].path` (used by `itemsPath` and templates).
pub fn parse_path(text: &str) -> Result<Vec<Segment>, ExprError> {
    match parse(text)? {
        Expr::Path(p) => Ok(p),
        _ => Err(ExprError {
            source_text: text.to_owned(),
            at: 0,
            message: "expected a path such as output.items".into(),
        }),
    }
}

/// Reads `path` in `ctx` (`None` when missing).
pub fn lookup(ctx: &Value, path: &[Segment]) -> Option<Value> {
    let mut cur = ctx;
    for (i, seg) in path.iter().enumerate() {
        cur = match (seg, cur) {
            (Segment::Key(k), Value::Object(m)) => m.get(k)?,
            (Segment::Key(k), Value::Array(a)) if k == "length" && i + 1 == path.len() => {
                return Some(Value::from(a.len()));
            }
            (Segment::Key(k), Value::String(s)) if k == "length" && i + 1 == path.len() => {
                return Some(Value::from(s.chars().count()));
            }
            (Segment::Index(n), Value::Array(a)) => a.get(*n)?,
            _ => return None,
        };
    }
    Some(cur.clone())
}

/// Whether a value counts as true.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

impl Expr {
    /// Evaluates to a JSON value over `ctx`.
    pub fn value(&self, ctx: &Value) -> Value {
        self.value_in(ctx, None)
    }

    /// Evaluates as a condition over `ctx` (file checks are false).
    pub fn eval(&self, ctx: &Value) -> bool {
        self.eval_in(ctx, None)
    }

    /// Evaluates to a JSON value over `ctx`, file checks reading `folder`.
    pub fn value_in(&self, ctx: &Value, folder: Option<&Path>) -> Value {
        match self {
            Expr::Lit(v) => v.clone(),
            Expr::Path(p) => lookup(ctx, p).unwrap_or(Value::Null),
            _ => Value::Bool(self.eval_in(ctx, folder)),
        }
    }

    /// Evaluates as a condition over `ctx`, file checks reading `folder`
    /// (the run's working folder; none: every file check is false).
    pub fn eval_in(&self, ctx: &Value, folder: Option<&Path>) -> bool {
        match self {
            Expr::Lit(_) | Expr::Path(_) => truthy(&self.value(ctx)),
            Expr::Not(e) => !e.eval_in(ctx, folder),
            Expr::And(a, b) => a.eval_in(ctx, folder) && b.eval_in(ctx, folder),
            Expr::Or(a, b) => a.eval_in(ctx, folder) || b.eval_in(ctx, folder),
            Expr::Compare(a, op, b) => {
                compare(&a.value_in(ctx, folder), *op, &b.value_in(ctx, folder))
            }
            Expr::File(check) => folder.is_some_and(|d| check.holds(d)),
        }
    }

    /// Whether it reads a file anywhere (file checks belong in contracts).
    pub fn reads_files(&self) -> bool {
        match self {
            Expr::File(_) => true,
            Expr::Not(e) => e.reads_files(),
            Expr::And(a, b) | Expr::Or(a, b) | Expr::Compare(a, _, b) => {
                a.reads_files() || b.reads_files()
            }
            Expr::Lit(_) | Expr::Path(_) => false,
        }
    }
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn compare(a: &Value, op: Cmp, b: &Value) -> bool {
    use std::cmp::Ordering;
    let ord = match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => None,
        },
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    };
    match op {
        Cmp::Eq => json_eq(a, b),
        Cmp::Ne => !json_eq(a, b),
        Cmp::Ge => matches!(ord, Some(Ordering::Greater | Ordering::Equal)),
        Cmp::Le => matches!(ord, Some(Ordering::Less | Ordering::Equal)),
        Cmp::Gt => ord == Some(Ordering::Greater),
        Cmp::Lt => ord == Some(Ordering::Less),
    }
}

struct Parser<'a> {
    src: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, message: impl Into<String>) -> ExprError {
        ExprError {
            source_text: self.src.to_owned(),
            at: self.pos,
            message: message.into(),
        }
    }

    fn skip_ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        self.skip_ws();
        let n = s.chars().count();
        if self.pos + n <= self.chars.len()
            && self.chars[self.pos..self.pos + n]
                .iter()
                .copied()
                .eq(s.chars())
        {
            self.pos += n;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.and()?;
        while self.eat("||") {
            let right = self.and()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.unary()?;
        while self.eat("&&") {
            let right = self.unary()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        self.skip_ws();
        if self.chars.get(self.pos) == Some(&'!') && self.chars.get(self.pos + 1) != Some(&'=') {
            self.pos += 1;
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        self.compare()
    }

    fn compare(&mut self) -> Result<Expr, ExprError> {
        let left = self.primary()?;
        // Longest operators first.
        for (s, op) in [
            ("===", Cmp::Eq),
            ("!==", Cmp::Ne),
            ("==", Cmp::Eq),
            ("!=", Cmp::Ne),
            (">=", Cmp::Ge),
            ("<=", Cmp::Le),
            (">", Cmp::Gt),
            ("<", Cmp::Lt),
        ] {
            if self.eat(s) {
                let right = self.primary()?;
                return Ok(Expr::Compare(Box::new(left), op, Box::new(right)));
            }
        }
        Ok(left)
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        self.skip_ws();
        let Some(&c) = self.chars.get(self.pos) else {
            return Err(self.err("expected a value or a path, found the end"));
        };
        if c == '(' {
            self.pos += 1;
            let e = self.or()?;
            if !self.eat(")") {
                return Err(self.err("expected ')'"));
            }
            return Ok(e);
        }
        if c == '\'' || c == '"' {
            return self.string(c);
        }
        if c.is_ascii_digit()
            || (c == '-'
                && self
                    .chars
                    .get(self.pos + 1)
                    .is_some_and(char::is_ascii_digit))
        {
            let start = self.pos;
            self.pos += 1;
            while self
                .chars
                .get(self.pos)
                .is_some_and(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E'))
            {
                self.pos += 1;
            }
            let text: String = self.chars[start..self.pos].iter().collect();
            let v: Value = serde_json::from_str(&text).map_err(|_| ExprError {
                source_text: self.src.to_owned(),
                at: start,
                message: format!("{text:?} is not a number"),
            })?;
            return Ok(Expr::Lit(v));
        }
        if c.is_alphabetic() || c == '_' || c == '$' {
            let start = self.pos;
            let name = self.name();
            if self.chars.get(self.pos) == Some(&'(') {
                return self.file_check(start, &name);
            }
            match name.as_str() {
                "true" => return Ok(Expr::Lit(Value::Bool(true))),
                "false" => return Ok(Expr::Lit(Value::Bool(false))),
                "null" => return Ok(Expr::Lit(Value::Null)),
                _ => {}
            }
            let mut path = vec![Segment::Key(name)];
            loop {
                match self.chars.get(self.pos) {
                    Some('.') => {
                        self.pos += 1;
                        if !self
                            .chars
                            .get(self.pos)
                            .is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                        {
                            return Err(self.err("expected a name after '.'"));
                        }
                        path.push(Segment::Key(self.name()));
                    }
                    Some('[') => {
                        self.pos += 1;
                        let start = self.pos;
                        while self.chars.get(self.pos).is_some_and(char::is_ascii_digit) {
                            self.pos += 1;
                        }
                        let digits: String = self.chars[start..self.pos].iter().collect();
                        let n = digits
                            .parse::<usize>()
                            .map_err(|_| self.err("expected an index such as [0]"))?;
                        if self.chars.get(self.pos) != Some(&']') {
                            return Err(self.err("expected ']'"));
                        }
                        self.pos += 1;
                        path.push(Segment::Index(n));
                    }
                    _ => break,
                }
            }
            return Ok(Expr::Path(path));
        }
        Err(self.err(format!("unexpected {c:?}")))
    }

    /// `name(` has been read: a file check's quoted arguments and `)`.
    fn file_check(&mut self, start: usize, name: &str) -> Result<Expr, ExprError> {
        let Some(test) = files::FileTest::named(name) else {
            return Err(ExprError {
                source_text: self.src.to_owned(),
                at: start,
                message: format!(
                    "{name:?} is not a function; the file checks are exists, nonEmpty, isJson, contains and matches"
                ),
            });
        };
        self.pos += 1;
        let mut args = Vec::new();
        loop {
            self.skip_ws();
            match self.chars.get(self.pos) {
                Some(')') if args.is_empty() => {}
                Some(&q) if q == '\'' || q == '"' => match self.string(q)? {
                    Expr::Lit(Value::String(s)) => args.push(s),
                    _ => return Err(self.err("expected a quoted string")),
                },
                _ => return Err(self.err(format!("{name}() takes quoted strings"))),
            }
            if self.eat(",") {
                continue;
            }
            if self.eat(")") {
                break;
            }
            return Err(self.err("expected ',' or ')'"));
        }
        files::FileCheck::new(test, args)
            .map(Expr::File)
            .map_err(|message| ExprError {
                source_text: self.src.to_owned(),
                at: start,
                message,
            })
    }

    fn name(&mut self) -> String {
        let start = self.pos;
        while self
            .chars
            .get(self.pos)
            .is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '$' || *c == '-')
        {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn string(&mut self, quote: char) -> Result<Expr, ExprError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            match self.chars.get(self.pos) {
                None => {
                    return Err(ExprError {
                        source_text: self.src.to_owned(),
                        at: start,
                        message: "unterminated string".into(),
                    });
                }
                Some('\\') => {
                    let Some(&next) = self.chars.get(self.pos + 1) else {
                        return Err(self.err("unterminated escape"));
                    };
                    out.push(match next {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                    self.pos += 2;
                }
                Some(&c) if c == quote => {
                    self.pos += 1;
                    return Ok(Expr::Lit(Value::String(out)));
                }
                Some(&c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }
}

/// Prints an expression in the syntax `parse` reads, with only the
/// parentheses the precedence needs: `parse(&e.to_string()) == Ok(e)` for
/// every expression the parser can produce (literals other than arrays and
/// objects, paths that start with a name).
impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expr::Lit(Value::String(s)) => {
                f.write_str("'")?;
                for c in s.chars() {
                    match c {
                        '\\' => f.write_str("\\\\")?,
                        '\'' => f.write_str("\\'")?,
                        '\n' => f.write_str("\\n")?,
                        '\t' => f.write_str("\\t")?,
                        c => write!(f, "{c}")?,
                    }
                }
                f.write_str("'")
            }
            Expr::Lit(v) => write!(f, "{v}"),
            Expr::Path(path) => {
                for (i, seg) in path.iter().enumerate() {
                    match seg {
                        Segment::Key(k) if i == 0 => f.write_str(k)?,
                        Segment::Key(k) => write!(f, ".{k}")?,
                        Segment::Index(n) => write!(f, "[{n}]")?,
                    }
                }
                Ok(())
            }
            // `!` binds tighter than `&&` but takes a whole comparison.
            Expr::Not(e) => match **e {
                Expr::And(..) | Expr::Or(..) => write!(f, "!({e})"),
                _ => write!(f, "!{e}"),
            },
            Expr::And(a, b) => {
                let left_paren = matches!(**a, Expr::Or(..));
                let right_paren = matches!(**b, Expr::And(..) | Expr::Or(..));
                write_side(f, a, left_paren)?;
                f.write_str(" && ")?;
                write_side(f, b, right_paren)
            }
            Expr::Or(a, b) => {
                write_side(f, a, false)?;
                f.write_str(" || ")?;
                write_side(f, b, matches!(**b, Expr::Or(..)))
            }
            Expr::File(check) => {
                write!(f, "{}(", check.test.name())?;
                let args = std::iter::once(&check.path).chain(check.argument.as_ref());
                for (i, a) in args.enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", Expr::Lit(Value::String(a.clone())))?;
                }
                f.write_str(")")
            }
            // Each side of a comparison is a primary: a literal, a path or
            // a parenthesised expression.
            Expr::Compare(a, op, b) => {
                let primary = |e: &Expr| matches!(e, Expr::Lit(_) | Expr::Path(_) | Expr::File(_));
                write_side(f, a, !primary(a))?;
                write!(f, " {op} ")?;
                write_side(f, b, !primary(b))
            }
        }
    }
}

fn write_side(f: &mut std::fmt::Formatter<'_>, e: &Expr, paren: bool) -> std::fmt::Result {
    if paren {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

/// Prints the operator (`==` and `!=` for the strict equalities, which the
/// language reads the same as `===` and `!==`).
impl std::fmt::Display for Cmp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Ge => ">=",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Lt => "<",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(e: &str, ctx: &Value) -> bool {
        parse(e).expect("parses").eval(ctx)
    }

    #[test]
    fn comparisons_follow_the_documented_rules() {
        let ctx = json!({"output": {"score": 85, "status": "approved", "items": [1, 2], "ok": true, "zero": 0, "name": "b"}});
        assert!(check("output.score >= 80", &ctx));
        assert!(!check("output.score >= 90", &ctx));
        assert!(check("output.score > 84.5 && output.score < 86", &ctx));
        assert!(check("output.score <= 85", &ctx));
        assert!(check("output.status === 'approved'", &ctx));
        assert!(check("output.status == \"approved\"", &ctx));
        assert!(check("output.status !== 'rejected'", &ctx));
        assert!(check("output.status != 'rejected'", &ctx));
        assert!(check("output.items.length > 0", &ctx));
        assert!(check("output.items[1] === 2", &ctx));
        assert!(check("output.ok", &ctx));
        assert!(!check("output.zero", &ctx));
        assert!(!check("output.missing", &ctx));
        assert!(check("!output.missing", &ctx));
        assert!(check("output.missing === null", &ctx));
        assert!(check("output.missing || output.ok", &ctx));
        assert!(!check("!(output.ok && output.score >= 80)", &ctx));
        assert!(check("output.name > 'a'", &ctx));
        // No coercion: a string is not a number.
        assert!(!check("output.status > 1", &ctx));
        assert!(!check("output.score === '85'", &ctx));
        assert!(check("output.score === 85.0", &ctx));
    }

    #[test]
    fn bad_conditions_say_where_and_what() {
        for bad in [
            "output.score >=",
            "output.",
            "(a",
            "a b",
            "'x",
            "a[x]",
            "",
            "1e",
            "&& a",
        ] {
            let e = parse(bad).expect_err(bad);
            assert!(!e.message.is_empty(), "{bad}");
            assert!(e.to_string().contains("invalid condition"));
        }
        assert_eq!(parse("a b").expect_err("trailing").at, 2);
    }

    #[test]
    fn paths_parse_and_read() {
        let p = parse_path("output.files[1].path").expect("path");
        assert_eq!(
            lookup(&json!({"output": {"files": [{}, {"path": "x"}]}}), &p),
            Some(json!("x"))
        );
        assert!(parse_path("a > 1").is_err());
    }
}

#[cfg(test)]
mod proptests;
