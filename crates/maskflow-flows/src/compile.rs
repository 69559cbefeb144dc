//! Compiles both shapes of a flow into one program the engine runs: a graph of
//! numbered nodes, each with its operation and the node that follows.
//!
//! The list form becomes a graph whose loops are explicit: a `startLoop`
//! node pushes a loop frame and enters the body; the body's last step goes to
//! a hidden loop-end node that counts the iteration and jumps back; `break`
//! pops frames up to its loop and goes to the step after it. List-form
//! decision branches are sub-lists that rejoin after the decision. Each
//! node keeps its seed 004 step path (`[1, 0, 2]`), its index in its own
//! list and that list's length, and its loop depth, for the transcript and
//! for resuming. The graph form maps node for node. Pure: no I/O.

use std::collections::HashMap;

use super::definition::{
    BreakStep, CommandStep, FlowDef, ForeachStep, GateStep, JoinStep, LlmStep, ScriptStep, Step,
    SubflowStep,
};
use super::expr::{self, Expr};

/// Where a gate option leads.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// The step after the gate.
    Continue,
    /// The run ends (completed).
    End,
    /// This node.
    Node(usize),
}

/// A compiled decision branch.
#[derive(Debug, Clone)]
pub struct CompiledBranch {
    /// The condition.
    pub condition: Expr,
    /// Its source text.
    pub source: String,
    /// Where it goes (`None`: the flow ends).
    pub target: Option<usize>,
    /// Most times it may be taken.
    pub max_iterations: Option<u32>,
    /// Key of its counter in the run state.
    pub key: String,
}

/// What a node does.
#[derive(Debug, Clone)]
pub enum Op {
    /// Ask an agent.
    Llm(LlmStep),
    /// Run an agent command.
    Command(CommandStep),
    /// Run a script.
    Script(ScriptStep),
    /// Run another flow.
    Subflow(SubflowStep),
    /// Wait for a person.
    Gate {
        /// The definition.
        step: GateStep,
        /// Per option.
        targets: Vec<Target>,
    },
    /// Fan out.
    Foreach(ForeachStep),
    /// Gather.
    Join(JoinStep),
    /// Exit the loop started at `loop_start` on the agent's answer.
    Break {
        /// The definition.
        step: BreakStep,
        /// The loop's start node.
        loop_start: usize,
    },
    /// Push a loop frame and enter `body`.
    LoopStart {
        /// Safety limit.
        max_iterations: Option<u32>,
        /// First node of the body.
        body: usize,
    },
    /// Count an iteration and jump back to the body of `start`.
    LoopEnd {
        /// The loop's start node.
        start: usize,
    },
    /// Route on the context.
    Decision {
        /// In order.
        branches: Vec<CompiledBranch>,
        /// `None`: no default (the run fails when nothing holds); `Some(None)`: the flow ends.
        default: Option<Option<usize>>,
    },
}

/// A compiled condition with its message.
#[derive(Debug, Clone)]
pub struct Contract {
    /// The expression.
    pub check: Expr,
    /// The message when false.
    pub error: String,
}

/// One node.
#[derive(Debug, Clone)]
pub struct Node {
    /// Seed 004's step path (graph form: `[node index]`).
    pub path: Vec<usize>,
    /// The user's id, when given.
    pub id: Option<String>,
    /// Index in its own step list.
    pub step_index: usize,
    /// Length of that list.
    pub total_steps: usize,
    /// Enclosing loop-start nodes, outermost first.
    pub loops: Vec<usize>,
    /// Label for the transcript.
    pub label: String,
    /// What it does.
    pub op: Op,
    /// The node that follows (`None`: the flow ends).
    pub next: Option<usize>,
    /// Preconditions.
    pub pre: Vec<Contract>,
    /// Postconditions.
    pub post: Vec<Contract>,
    /// False for hidden nodes (loop ends), which cannot be resumed at.
    pub resumable: bool,
}

/// A compiled flow.
#[derive(Debug, Clone)]
pub struct Program {
    /// The nodes.
    pub nodes: Vec<Node>,
    /// The first node (`None`: nothing to do).
    pub start: Option<usize>,
    /// Step path → node.
    pub by_path: HashMap<Vec<usize>, usize>,
}

/// Why a definition could not be compiled (it was not validated first).
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("cannot compile the flow: {0}")]
pub struct CompileError(pub String);

impl Program {
    /// The node at `path`, if it is one a run may resume at.
    pub fn resumable_at(&self, path: &[usize]) -> Option<usize> {
        self.by_path
            .get(path)
            .copied()
            .filter(|&n| self.nodes[n].resumable)
    }
}

/// Where a step sits in its definition: its path, its index among its
/// siblings and how many they are, and the loops around it.
struct Place<'a> {
    path: Vec<usize>,
    index: usize,
    total: usize,
    loops: &'a [usize],
}

struct Builder {
    nodes: Vec<Option<Node>>,
    ids: HashMap<String, usize>,
    gate_fixups: Vec<(usize, usize, String)>,
}

fn contracts(list: &[super::definition::Condition]) -> Result<Vec<Contract>, CompileError> {
    list.iter()
        .map(|c| {
            Ok(Contract {
                check: expr::parse(c.check.as_str()).map_err(|e| CompileError(e.to_string()))?,
                error: c.error.to_string(),
            })
        })
        .collect()
}

fn simple_op(step: &Step) -> Option<Op> {
    Some(match step {
        Step::Llm(s) => Op::Llm(s.clone()),
        Step::Command(s) => Op::Command(s.clone()),
        Step::Script(s) => Op::Script(s.clone()),
        Step::Subflow(s) => Op::Subflow(s.clone()),
        Step::Foreach(s) => Op::Foreach(s.clone()),
        Step::Join(s) => Op::Join(s.clone()),
        _ => return None,
    })
}

impl Builder {
    fn alloc(&mut self) -> usize {
        self.nodes.push(None);
        self.nodes.len() - 1
    }

    fn node(
        &self,
        step: &Step,
        place: Place<'_>,
        op: Op,
        next: Option<usize>,
    ) -> Result<Node, CompileError> {
        let c = step.common();
        Ok(Node {
            path: place.path,
            id: c.id.map(|t| t.to_string()),
            step_index: place.index,
            total_steps: place.total,
            loops: place.loops.to_vec(),
            label: step.display_label(),
            op,
            next,
            pre: contracts(c.preconditions)?,
            post: contracts(c.postconditions)?,
            resumable: true,
        })
    }

    fn list(
        &mut self,
        steps: &[Step],
        prefix: &[usize],
        loops: &[usize],
        cont: Option<usize>,
    ) -> Result<Option<usize>, CompileError> {
        let slots: Vec<usize> = steps.iter().map(|_| self.alloc()).collect();
        for (i, step) in steps.iter().enumerate() {
            let me = slots[i];
            let next = slots.get(i + 1).copied().or(cont);
            let mut path = prefix.to_vec();
            path.push(i);
            if let Some(id) = step.common().id {
                self.ids.insert(id.to_string(), me);
            }
            let op = match step {
                Step::StartLoop(s) => {
                    let end = self.alloc();
                    let mut inner = loops.to_vec();
                    inner.push(me);
                    let body = self
                        .list(&s.steps, &path, &inner, Some(end))?
                        .ok_or_else(|| {
                            CompileError(format!("the loop at {path:?} has no steps"))
                        })?;
                    let place = Place {
                        path: path.clone(),
                        index: i,
                        total: steps.len(),
                        loops: &inner,
                    };
                    let mut end_node = self.node(step, place, Op::LoopEnd { start: me }, None)?;
                    end_node.resumable = false;
                    end_node.pre.clear();
                    end_node.post.clear();
                    end_node.label = format!("{} (next iteration)", end_node.label);
                    self.nodes[end] = Some(end_node);
                    Op::LoopStart {
                        max_iterations: s.max_iterations,
                        body,
                    }
                }
                Step::Break(s) => {
                    let loop_start = *loops.last().ok_or_else(|| {
                        CompileError(format!("the break at {path:?} is not inside a loop"))
                    })?;
                    Op::Break {
                        step: s.clone(),
                        loop_start,
                    }
                }
                Step::Decision(s) => {
                    let mut branches = Vec::new();
                    for (b, br) in s.branches.iter().enumerate() {
                        let mut bp = path.clone();
                        bp.push(b);
                        let target = match &br.steps {
                            Some(list) if !list.is_empty() => self.list(list, &bp, loops, next)?,
                            _ => next,
                        };
                        branches.push(CompiledBranch {
                            condition: expr::parse(br.condition.as_str())
                                .map_err(|e| CompileError(e.to_string()))?,
                            source: br.condition.to_string(),
                            target,
                            max_iterations: None,
                            key: format!("{}#{b}", path_key(&path)),
                        });
                    }
                    let default = match &s.default {
                        None => None,
                        Some(d) => {
                            let mut dp = path.clone();
                            dp.push(s.branches.len());
                            Some(match &d.steps {
                                Some(list) if !list.is_empty() => {
                                    self.list(list, &dp, loops, next)?
                                }
                                _ => next,
                            })
                        }
                    };
                    Op::Decision { branches, default }
                }
                Step::Gate(s) => {
                    let mut targets = Vec::new();
                    for (o, opt) in s.options.iter().enumerate() {
                        targets.push(match &opt.next {
                            None => Target::Continue,
                            Some(None) => Target::End,
                            Some(Some(id)) => {
                                self.gate_fixups.push((me, o, id.to_string()));
                                Target::End
                            }
                        });
                    }
                    Op::Gate {
                        step: s.clone(),
                        targets,
                    }
                }
                other => simple_op(other)
                    .ok_or_else(|| CompileError(format!("unexpected step at {path:?}")))?,
            };
            let place = Place {
                path,
                index: i,
                total: steps.len(),
                loops,
            };
            let node = self.node(step, place, op, next)?;
            self.nodes[me] = Some(node);
        }
        Ok(slots.first().copied())
    }

    fn fix_gates(&mut self) -> Result<(), CompileError> {
        for (node, option, id) in std::mem::take(&mut self.gate_fixups) {
            let target = *self
                .ids
                .get(&id)
                .ok_or_else(|| CompileError(format!("no step has the id {id:?}")))?;
            if let Some(Node {
                op: Op::Gate { targets, .. },
                ..
            }) = self.nodes[node].as_mut()
            {
                targets[option] = Target::Node(target);
            }
        }
        Ok(())
    }
}

/// `[1, 0, 2]` → `"1.0.2"`.
pub fn path_key(path: &[usize]) -> String {
    path.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// Compiles a validated definition.
pub fn compile(def: &FlowDef) -> Result<Program, CompileError> {
    let mut b = Builder {
        nodes: Vec::new(),
        ids: HashMap::new(),
        gate_fixups: Vec::new(),
    };
    let start = if let Some(steps) = &def.steps {
        b.list(steps, &[], &[], None)?
    } else if let Some(nodes) = &def.nodes {
        graph(&mut b, def, nodes)?
    } else {
        return Err(CompileError("the flow has neither steps nor nodes".into()));
    };
    b.fix_gates()?;
    let nodes: Vec<Node> = b
        .nodes
        .into_iter()
        .enumerate()
        .map(|(i, n)| n.ok_or_else(|| CompileError(format!("node {i} was never filled"))))
        .collect::<Result<_, _>>()?;
    check_next_stages(&nodes)?;
    let by_path = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.resumable)
        .map(|(i, n)| (n.path.clone(), i))
        .collect();
    Ok(Program {
        nodes,
        start,
        by_path,
    })
}

/// Every stage an agent step lets its agent suggest is a step id of the flow.
fn check_next_stages(nodes: &[Node]) -> Result<(), CompileError> {
    for n in nodes {
        let stages = match &n.op {
            Op::Llm(s) => &s.next_stages,
            Op::Command(s) => &s.next_stages,
            _ => continue,
        };
        for stage in stages {
            let known = nodes
                .iter()
                .any(|m| m.resumable && m.id.as_deref() == Some(stage.as_str()));
            if !known {
                return Err(CompileError(format!(
                    "step {:?} lists the next stage {:?}, but no step has that id",
                    n.label,
                    stage.as_str()
                )));
            }
        }
    }
    Ok(())
}

fn graph(b: &mut Builder, def: &FlowDef, steps: &[Step]) -> Result<Option<usize>, CompileError> {
    for (i, s) in steps.iter().enumerate() {
        b.alloc();
        if let Some(id) = s.common().id {
            b.ids.insert(id.to_string(), i);
        }
    }
    let find = |ids: &HashMap<String, usize>, id: &str| -> Result<usize, CompileError> {
        ids.get(id)
            .copied()
            .ok_or_else(|| CompileError(format!("no node has the id {id:?}")))
    };
    for (i, step) in steps.iter().enumerate() {
        let next = match step.common().next {
            Some(n) => Some(find(&b.ids, n.as_str())?),
            None => None,
        };
        let key = step
            .common()
            .id
            .map(|t| t.to_string())
            .unwrap_or_else(|| i.to_string());
        let op = match step {
            Step::Decision(s) => {
                let mut branches = Vec::new();
                for (bi, br) in s.branches.iter().enumerate() {
                    let target = match &br.next {
                        Some(n) => Some(find(&b.ids, n.as_str())?),
                        None => None,
                    };
                    branches.push(CompiledBranch {
                        condition: expr::parse(br.condition.as_str())
                            .map_err(|e| CompileError(e.to_string()))?,
                        source: br.condition.to_string(),
                        target,
                        max_iterations: br.max_iterations,
                        key: format!("{key}#{bi}"),
                    });
                }
                let default = match &s.default {
                    None => None,
                    Some(d) => Some(match &d.next {
                        Some(n) => Some(find(&b.ids, n.as_str())?),
                        None => None,
                    }),
                };
                Op::Decision { branches, default }
            }
            Step::Gate(s) => {
                let mut targets = Vec::new();
                for opt in &s.options {
                    targets.push(match &opt.next {
                        None => Target::Continue,
                        Some(None) => Target::End,
                        Some(Some(id)) => Target::Node(find(&b.ids, id.as_str())?),
                    });
                }
                Op::Gate {
                    step: s.clone(),
                    targets,
                }
            }
            other => simple_op(other)
                .ok_or_else(|| CompileError(format!("node {key} cannot appear in a graph")))?,
        };
        let place = Place {
            path: vec![i],
            index: i,
            total: steps.len(),
            loops: &[],
        };
        let node = b.node(step, place, op, next)?;
        b.nodes[i] = Some(node);
    }
    Ok(Some(match &def.start {
        Some(s) => find(&b.ids, s.as_str())?,
        None => 0,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::parse;

    #[test]
    fn the_seed_example_compiles_to_a_loop_with_its_paths() {
        let def = parse(include_str!(
            "../../../tests/fixtures/flows/seed004/flows/seed_example.json"
        ))
        .expect("seed");
        let p = compile(&def).expect("compiles");
        let start = p.start.expect("start");
        let Op::LoopStart { body, .. } = p.nodes[start].op else {
            panic!("loop first")
        };
        assert_eq!(p.nodes[body].path, vec![0, 0]);
        assert_eq!(p.nodes[body].loops, vec![start]);
        assert_eq!(
            (p.nodes[body].step_index, p.nodes[body].total_steps),
            (0, 3)
        );
        let brk = p.resumable_at(&[0, 2]).expect("break");
        let Op::Break { loop_start, .. } = p.nodes[brk].op else {
            panic!("break")
        };
        assert_eq!(loop_start, start);
        let end = p.nodes[brk].next.expect("loop end");
        assert!(matches!(p.nodes[end].op, Op::LoopEnd { start: s } if s == start));
        assert!(p.resumable_at(&[0, 3]).is_none());
        assert!(p.resumable_at(&[1]).is_none());
        assert_eq!(p.nodes[start].next, None);
    }
}
