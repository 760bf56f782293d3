//! lc0's classic PUCT search over the [`Tree`], one batch at a time, driven from outside:
//! [`Search::gather`] selects leaves (virtual loss, collisions, terminals and NN-cache hits backed up
//! at once "out of order") and writes the planes of the leaves that need the network;
//! [`Search::apply`] takes the network's outputs for the oldest gathered batch and backs them up.
//! Up to two batches may be outstanding, so the next gather can overlap the network.
//!
//! Sources: lc0 src/search/classic/search.cc (`PickNodesToExtendTask`, `ExtendNode`,
//! `DoBackupUpdateSingleNode`, `MaybeSetBounds`, `GetBestChildrenNoTemperature`), node.cc
//! (`NodeTree::ResetToPosition`, `MakeTerminal`).

use std::collections::VecDeque;
use std::sync::Arc;

use shakmaty::{CastlingMode, Chess, Color, Move, Position, Role};

use crate::cache::NNCache;
use crate::encoding::{self, InputRow};
use crate::params::Params;
use crate::policy;
use crate::position::{PosInfo, has_mating_material, repetitions};
use crate::softmax::fast_exp;
use crate::tablebase::{Tablebases, node_value};
use crate::tree::*;

/// Floats of one position's planes: 112 planes of 8 x 8.
pub const PLANES_PER_POSITION: usize = 112 * 64;
/// Entries of the policy head.
pub const POLICY_SIZE: usize = 1858;

#[derive(Clone, Copy)]
struct Leaf {
    node: u32,
    path_start: u32,
    path_len: u32,
    transform: u8,
    black: bool,
    key: u64,
}

#[derive(Default)]
pub(crate) struct Batch {
    leaves: Vec<Leaf>,
    paths: Vec<u32>,
}

/// Root statistics of one edge, for stats, stoppers and VerboseMoveStats.
#[derive(Clone, Debug)]
pub struct RootEdge {
    /// Index of the edge at the root (stable while the root stays).
    pub edge: usize,
    pub n: u32,
    pub p: f32,
    /// Q of the root side to move, with draw score (0 without visits).
    pub q: f64,
    /// Exploration term U with the current root visits.
    pub u: f64,
    pub d: f32,
    pub m: f32,
    pub wl: f64,
    pub in_flight: u32,
    /// +1 proven win, 0 proven draw, -1 proven loss (root side's view); None when not proven.
    pub proven: Option<i8>,
    /// The child's first value (None without a visit).
    pub v0: Option<f32>,
}

/// One game's search tree and its batch machinery.
pub struct Search {
    pub params: Params,
    pub tree: Tree,
    /// Root node, NONE before the first position.
    pub root: u32,
    pub(crate) mode: CastlingMode,
    pub(crate) positions: Vec<PosInfo>,
    pub(crate) root_pos: Chess,
    pub(crate) root_key: String,
    pub(crate) root_moves: Vec<u16>,
    pub(crate) anchor: Option<(u32, Vec<u16>)>,
    pub(crate) root_pondered: bool,
    pub(crate) root_dsc: f64,
    pub(crate) cache: Arc<NNCache>,
    pub(crate) pending: VecDeque<Batch>,
    spare: Vec<Batch>,
    // Scratch of one descent and one expansion (reused: no allocation per playout).
    pub(crate) path: Vec<u32>,
    pub(crate) path_pos: Vec<PosInfo>,
    pub(crate) collided: Vec<u32>,
    pub(crate) collided_lens: Vec<u32>,
    pub(crate) priors: Vec<u16>,
    pub(crate) weights: Vec<f32>,
    /// Playouts of the current search (including out-of-order ones).
    pub playouts: u64,
    /// Sum of the depths of those playouts (lc0's depth: the root is 1, see `count`).
    pub depth_sum: u64,
    /// Deepest playout of the current search (lc0's depth: the root is 1).
    pub seldepth: u32,
    /// Positions sent to the network by this search.
    pub nn_evals: u64,
    /// NN-cache hits of this search.
    pub cache_hits: u64,
    /// The process's Syzygy tables (None: no probing in the search).
    pub(crate) tb: Option<Arc<Tablebases>>,
    /// The root is covered by the tables: no probes in this search (lc0 `root_is_in_dtz_`).
    pub(crate) tb_root: bool,
    /// Tablebase hits of this search (nodes made terminal by a probe).
    pub tbhits: u64,
    /// The root moves the search may visit (packed; empty: all), lc0's `searchmoves`.
    pub(crate) search_moves: Vec<u16>,
}

impl Search {
    /// A search with no position yet.
    pub fn new(params: Params, cache: Arc<NNCache>) -> Search {
        Search {
            params,
            tree: Tree::default(),
            root: NONE,
            mode: CastlingMode::Standard,
            positions: Vec::new(),
            root_pos: Chess::default(),
            root_key: String::new(),
            root_moves: Vec::new(),
            search_moves: Vec::new(),
            anchor: None,
            root_pondered: false,
            root_dsc: 0.0,
            cache,
            pending: VecDeque::new(),
            spare: Vec::new(),
            path: Vec::with_capacity(256),
            path_pos: Vec::with_capacity(256),
            collided: Vec::new(),
            collided_lens: Vec::new(),
            priors: Vec::with_capacity(256),
            weights: Vec::with_capacity(256),
            playouts: 0,
            depth_sum: 0,
            seldepth: 0,
            nn_evals: 0,
            cache_hits: 0,
            tb: None,
            tb_root: false,
            tbhits: 0,
        }
    }

    /// Probe `tables` at expansion from the next position on (None: stop probing). The tables are
    /// shared by every search of the process.
    pub fn set_tablebases(&mut self, tables: Option<Arc<Tablebases>>) {
        self.tb = tables;
    }

    /// The tables this search probes, if any.
    pub fn tablebases(&self) -> Option<&Arc<Tablebases>> {
        self.tb.as_ref()
    }

    /// The shared NN cache.
    pub fn cache(&self) -> &Arc<NNCache> {
        &self.cache
    }

    /// Drop the tree (a new game).
    pub fn new_game(&mut self) {
        self.tree.clear();
        self.root = NONE;
        self.root_key.clear();
        self.root_moves.clear();
        self.anchor = None;
        self.root_pondered = false;
        self.pending.clear();
    }

    /// The root position (shakmaty).
    pub fn root_position(&self) -> &Chess {
        &self.root_pos
    }

    /// The castling mode of the game (Chess960 or standard), for UCI move strings.
    pub fn castling_mode(&self) -> CastlingMode {
        self.mode
    }

    /// The root node.
    pub fn root_node(&self) -> &Node {
        &self.tree.nodes[self.root as usize]
    }

    /// True while the root waits for its first evaluation (or was never gathered).
    pub fn root_needs_eval(&self) -> bool {
        self.root != NONE && self.tree.nodes[self.root as usize].state != NodeState::Expanded
    }

    /// Leaves gathered and not yet applied.
    pub fn pending_leaves(&self) -> usize {
        self.pending.iter().map(|b| b.leaves.len()).sum()
    }

    /// Batches gathered and not yet applied.
    pub fn pending_batches(&self) -> usize {
        self.pending.len()
    }

    /// Gather one batch: select leaves until the minibatch is full, collisions or out-of-order
    /// evaluations run out, or `nodes_limit` (root visits, counting the leaves still pending) would
    /// be passed. Writes the planes of the leaves that need the network into `out`, row by row
    /// (`out` is float32 `[>= minibatch, 112, 8, 8]` flattened), and returns how many rows it wrote
    /// (0 is possible: everything was backed up at once). The first call on a new root gathers the
    /// root alone.
    pub fn gather(&mut self, out: &mut [f32], nodes_limit: Option<u64>) -> usize {
        self.gather_into(InputRow::Planes(out), nodes_limit)
    }

    /// As [`Search::gather`], into either input form ([`InputRow`]: the float planes, or the compact
    /// masks and values of `M` positions); the minibatch is capped by the positions the buffers hold.
    pub fn gather_into(&mut self, mut out: InputRow<'_>, nodes_limit: Option<u64>) -> usize {
        let mut batch = self.spare.pop().unwrap_or_default();
        batch.leaves.clear();
        batch.paths.clear();
        let root = self.root;
        if root == NONE {
            return 0;
        }
        let rstate = self.tree.nodes[root as usize].state;
        if rstate == NodeState::Pending {
            self.spare.push(batch);
            return 0;
        }
        if rstate == NodeState::Fresh {
            self.path.clear();
            self.path.push(root);
            self.tree.nodes[root as usize].in_flight += 1;
            let pos = self.root_pos.clone();
            let legal = pos.legal_moves();
            self.tree.alloc_edges(root, legal.iter().map(pack_move));
            self.tree.nodes[root as usize].state = NodeState::Pending;
            let cur = &self.positions[self.positions.len() - 1];
            let transform = encode_history(&self.positions, &[], &self.params, out.row(0));
            batch.leaves.push(Leaf {
                node: root,
                path_start: 0,
                path_len: 1,
                transform,
                black: cur.turn == Color::Black,
                key: cur.cache_key(),
            });
            batch.paths.push(root);
            self.nn_evals += 1;
            self.pending.push_back(batch);
            return 1;
        }
        let p = &self.params;
        let mb = p.minibatch_size.min(out.capacity());
        let mut budget: i64 = match nodes_limit {
            Some(limit) => limit as i64 - i64::from(self.tree.nodes[root as usize].n) - self.pending_leaves() as i64,
            None => i64::MAX,
        };
        let mut collisions = p.collisions_allowed(self.tree.nodes[root as usize].n);
        let mut ooo_left: i64 = ((p.max_out_of_order_evals_factor * mb as f64) as i64).max(1);
        self.collided.clear();
        self.collided_lens.clear();
        while batch.leaves.len() < mb && budget > 0 {
            let (leaf, ply) = self.select();
            let nd = self.tree.nodes[leaf as usize];
            if nd.terminal != Terminal::NonTerminal {
                let depth = self.backup_path(nd.wl, f64::from(nd.d), f64::from(nd.m));
                self.count(depth);
                budget -= 1;
                ooo_left -= 1;
            } else if nd.state == NodeState::Pending {
                // A collision: the leaf already waits for the network. It keeps the one visit in flight it
                // has (lc0 search.cc `PickNodesToExtendTask`: `TryStartScoreUpdate` fails on it and adds
                // nothing), while the collision's visit stays in flight on the nodes above it until the
                // batch is gathered (lc0 `IncrementNInFlight` on the path, `CancelScoreUpdate` after the
                // batch). Counting the collision on the leaf too made its U fall with each collision, so
                // virtual loss spread a large batch over leaves PUCT would not pick yet, where lc0's
                // batch ends on the collision budget (docs/search.md, "Minibatch").
                self.tree.nodes[leaf as usize].in_flight -= 1;
                let above = self.path.len() - 1;
                self.collided.extend_from_slice(&self.path[..above]);
                self.collided_lens.push(above as u32);
                collisions -= 1;
                if collisions <= 0 {
                    break;
                }
                continue;
            } else {
                budget -= 1;
                let row = batch.leaves.len();
                match self.expand(leaf, ply, out.row(row)) {
                    Expansion::Terminal => {
                        let nd = self.tree.nodes[leaf as usize];
                        let depth = self.backup_path(nd.wl, f64::from(nd.d), f64::from(nd.m));
                        self.count(depth);
                        if self.params.sticky_endgames {
                            self.update_bounds(self.path.len() - 2);
                        }
                        ooo_left -= 1;
                    }
                    Expansion::CacheHit(wdl, m) => {
                        self.cache_hits += 1;
                        self.finish_expansion(leaf, wdl, m);
                        ooo_left -= 1;
                    }
                    Expansion::Network(transform, black, key) => {
                        let start = batch.paths.len() as u32;
                        batch.paths.extend_from_slice(&self.path);
                        batch.leaves.push(Leaf {
                            node: leaf,
                            path_start: start,
                            path_len: self.path.len() as u32,
                            transform,
                            black,
                            key,
                        });
                        self.nn_evals += 1;
                        continue;
                    }
                }
            }
            if ooo_left <= 0 {
                break;
            }
        }
        // Collisions: undo their visits in flight.
        let mut at = 0usize;
        for k in 0..self.collided_lens.len() {
            let len = self.collided_lens[k] as usize;
            for j in at..at + len {
                let x = self.collided[j] as usize;
                self.tree.nodes[x].in_flight -= 1;
            }
            at += len;
        }
        let rows = batch.leaves.len();
        if rows > 0 {
            self.pending.push_back(batch);
        } else {
            self.spare.push(batch);
        }
        rows
    }

    /// One descent from the root by PUCT with virtual loss (lc0 search.cc `PickNodesToExtendTask`):
    /// score = Q + cpuct(N) * sqrt(max(N - 1, 1)) * P / (1 + N_i + in_flight_i), Q of unvisited edges
    /// by FPU (lc0 `GetFpu`). Leaves the path (root first) in `self.path`, with one visit in flight on
    /// each node. Returns the leaf and its ply.
    fn select(&mut self) -> (u32, u32) {
        let p = &self.params;
        let tree = &mut self.tree;
        self.path.clear();
        let mut node = self.root;
        let mut ply = 0u32;
        let mut dsc = self.root_dsc;
        tree.nodes[node as usize].in_flight += 1;
        self.path.push(node);
        let (mut absolute, mut fv) = (p.root_fpu_absolute, p.root_fpu_value);
        loop {
            let nd = &tree.nodes[node as usize];
            if nd.state != NodeState::Expanded || nd.num_edges == 0 || (ply > 0 && nd.terminal != Terminal::NonTerminal)
            {
                break;
            }
            let n = nd.n;
            let pm = p.cpuct_at(n) * if n > 2 { f64::from(n - 1).sqrt() } else { 1.0 };
            let fpu = if absolute { fv } else { (-nd.wl + dsc * f64::from(nd.d)) - fv * nd.vp.sqrt() };
            let edges = &tree.edges[nd.edges as usize..nd.edges as usize + nd.num_edges as usize];
            let mut c = nd.first_child;
            let mut best = f64::NEG_INFINITY;
            let mut bi = 0usize;
            let filter = ply == 0 && !self.search_moves.is_empty();
            for (i, e) in edges.iter().enumerate() {
                let (ni, fi, q) = if c != NONE && tree.nodes[c as usize].index as usize == i {
                    let cn = &tree.nodes[c as usize];
                    c = cn.sibling;
                    (cn.n, cn.in_flight, cn.wl + dsc * f64::from(cn.d))
                } else {
                    (0, 0, 0.0)
                };
                if filter && !self.search_moves.contains(&e.mv) {
                    continue; // lc0 search.cc PickNodesToExtendTask: root moves outside root_move_filter_
                }
                let s = (if ni > 0 { q } else { fpu }) + pm * f64::from(decompress_p(e.p)) / f64::from(1 + ni + fi);
                if s > best {
                    best = s;
                    bi = i;
                }
                if ni + fi == 0 {
                    break; // edges are sorted by prior: no later unstarted edge can score higher
                }
            }
            let child = tree.child_or_insert(node, bi as u8);
            tree.nodes[child as usize].in_flight += 1;
            self.path.push(child);
            node = child;
            ply += 1;
            dsc = -dsc;
            absolute = p.fpu_absolute;
            fv = p.fpu_value;
        }
        (node, ply)
    }

    /// Expand the fresh leaf at the end of `self.path` (lc0 search.cc `ExtendNode`): replay the path,
    /// apply the terminal rules (mate, stalemate, insufficient material, rule 50, threefold, with
    /// TwoFoldDraws a repetition whose cycle lies in the tree, and with tables a Syzygy hit), store the legal moves, then look the
    /// NN cache up, or write the planes into `row` for the network.
    fn expand(&mut self, leaf: u32, ply: u32, row: InputRow<'_>) -> Expansion {
        // Replay the path from the root.
        self.path_pos.clear();
        self.path_pos.push(self.positions[self.positions.len() - 1].clone());
        let mut pos = self.root_pos.clone();
        for k in 1..self.path.len() {
            let parent = self.path[k - 1];
            let child = self.path[k];
            let idx = self.tree.nodes[child as usize].index;
            let code = self.tree.edges[(self.tree.nodes[parent as usize].edges + u32::from(idx)) as usize].mv;
            let mv = unpack_move(code, &pos);
            pos.play_unchecked(mv);
            let mut info = PosInfo::after_move(&pos);
            if k + 1 < self.path.len() {
                info.repetitions = u32::from(self.tree.nodes[child as usize].reps);
            } else {
                let game = &self.positions[..self.positions.len() - 1];
                let tree_part = &self.path_pos;
                let (r, cycle) = repetitions(&info, |i| {
                    if i < tree_part.len() {
                        Some(&tree_part[tree_part.len() - 1 - i])
                    } else {
                        game.len().checked_sub(1 + i - tree_part.len()).map(|j| &game[j])
                    }
                });
                info.repetitions = r;
                let nd = &mut self.tree.nodes[child as usize];
                nd.reps = r.min(255) as u8;
                nd.cycle = cycle.min(255) as u8;
            }
            self.path_pos.push(info);
        }
        let info = self.path_pos.last().expect("the path has the root");
        let legal = pos.legal_moves();
        let terminal = if legal.is_empty() {
            Some(if pos.is_check() { (1.0, 0.0, 0.0) } else { (0.0, 1.0, 0.0) })
        } else if !has_mating_material(&info.board) || info.rule50 >= 100 || info.repetitions >= 2 {
            Some((0.0, 1.0, 0.0))
        } else {
            None
        };
        let nd = &mut self.tree.nodes[leaf as usize];
        if let Some((wl, d, m)) = terminal {
            nd.make_terminal(wl, d, m);
            return Expansion::Terminal;
        }
        if self.params.two_fold_draws && info.repetitions == 1 && ply >= 4 && ply >= u32::from(nd.cycle) {
            nd.make_terminal(0.0, 1.0, f32::from(nd.cycle));
            nd.terminal = Terminal::TwoFold;
            // A two-fold draw depends on the path to it: its bounds stay open, so it never proves its
            // parent (lc0 node.cc `MakeTerminal`: `if (type != Terminal::TwoFold) SetBounds(...)`).
            nd.lower = -1;
            nd.upper = 1;
            return Expansion::Terminal;
        }
        // Syzygy (lc0 search.cc `ExtendNode`): after a zeroing move, no castling rights, few pieces.
        if let Some(tb) = &self.tb
            && ply > 0
            && !self.tb_root
            && info.rule50 == 0
            && let Some(wdl) = tb.probe_wdl_after_zeroing(&pos)
        {
            // No network value here: M is the parent's M - 1 (lc0).
            let parent_m = self.tree.nodes[self.path[self.path.len() - 2] as usize].m;
            let (wl, d) = node_value(wdl);
            let nd = &mut self.tree.nodes[leaf as usize];
            nd.make_terminal(wl, d, (parent_m - 1.0).max(0.0));
            nd.terminal = Terminal::Tablebase;
            if wl < 0.0 {
                // A loss for the mover: its edge's prior goes to 0 before the first backup (lc0 node.cc
                // `MakeTerminal` with BLACK_WON: "Terminal losses ... clearing the policy"), so the
                // parent's visited policy (FPU) never counts it.
                let index = nd.index;
                let parent = self.path[self.path.len() - 2];
                let e = (self.tree.nodes[parent as usize].edges + u32::from(index)) as usize;
                self.tree.edges[e].p = 0;
            }
            self.tbhits += 1;
            return Expansion::Terminal;
        }
        let key = info.cache_key();
        let black = info.turn == Color::Black;
        self.tree.alloc_edges(leaf, legal.iter().map(pack_move));
        self.priors.clear();
        self.priors.resize(legal.len(), 0);
        if let Some((wdl, m)) = self.cache.get(key, &mut self.priors) {
            let nd = self.tree.nodes[leaf as usize];
            let edges = &mut self.tree.edges[nd.edges as usize..nd.edges as usize + nd.num_edges as usize];
            for (e, &p) in edges.iter_mut().zip(&self.priors) {
                e.p = p;
            }
            return Expansion::CacheHit(wdl, m);
        }
        self.tree.nodes[leaf as usize].state = NodeState::Pending;
        let game = &self.positions[..self.positions.len() - 1];
        let transform = encode_history(&self.path_pos, game, &self.params, row);
        Expansion::Network(transform, black, key)
    }

    /// Priors are in the leaf's edges (move-generation order): sort them, back the value up.
    fn finish_expansion(&mut self, leaf: u32, wdl: [f32; 3], m: f32) {
        let nd = self.tree.nodes[leaf as usize];
        sort_edges(&mut self.tree.edges[nd.edges as usize..nd.edges as usize + nd.num_edges as usize]);
        let q = f64::from(wdl[0]) - f64::from(wdl[2]);
        let x = &mut self.tree.nodes[leaf as usize];
        x.state = NodeState::Expanded;
        x.v0 = (-q) as f32;
        let depth = self.backup_path(-q, f64::from(wdl[1]), f64::from(m));
        self.count(depth);
    }

    /// Apply the network's outputs to the oldest pending batch: `logits` float32 `[B, 1858]`, `wdl`
    /// float32 `[B, 3]` (side to move), `mlh` float32 `[B]` (plies) or None, flattened, B = the rows
    /// that [`Search::gather`] returned. Priors: softmax of the legal moves' logits at the policy
    /// temperature (lc0 src/neural/wrapper.cc `SoftmaxPolicy`, with lc0's `FastExp`), stored in the NN
    /// cache.
    ///
    /// Errors when nothing is pending or the arrays are too short.
    pub fn apply(&mut self, logits: &[f32], wdl: &[f32], mlh: Option<&[f32]>) -> Result<(), String> {
        let Some(mut batch) = self.pending.pop_front() else {
            return Err("no gathered batch is waiting for network outputs".into());
        };
        let b = batch.leaves.len();
        if logits.len() < b * POLICY_SIZE || wdl.len() < b * 3 || mlh.is_some_and(|x| x.len() < b) {
            self.pending.push_front(batch);
            return Err(format!("network outputs for {b} positions expected"));
        }
        let inv_temp = 1.0f32 / self.params.policy_temperature as f32;
        for (row, leaf) in batch.leaves.iter().enumerate() {
            let nd = self.tree.nodes[leaf.node as usize];
            let turn = if leaf.black { Color::Black } else { Color::White };
            let lg = &logits[row * POLICY_SIZE..(row + 1) * POLICY_SIZE];
            let edges = &mut self.tree.edges[nd.edges as usize..nd.edges as usize + nd.num_edges as usize];
            // lc0 src/neural/wrapper.cc `SoftmaxPolicy`: float32, FastExp((logit - max) / T), normalised
            // (the total is summed in f64 so that it does not depend on the order of the moves).
            self.weights.clear();
            let mut max = f32::NEG_INFINITY;
            for e in edges.iter() {
                let (from, to, promotion) = unpack_squares(e.mv);
                let mv = Move::Normal { role: Role::Pawn, from, capture: None, to, promotion };
                let idx = policy::nn_index(&mv, turn, leaf.transform).map_or(0, usize::from);
                let x = lg[idx];
                max = max.max(x);
                self.weights.push(x);
            }
            let mut total = 0.0f64;
            for w in self.weights.iter_mut() {
                *w = fast_exp((*w - max) * inv_temp);
                total += f64::from(*w);
            }
            let scale = if total > 0.0 { (1.0 / total) as f32 } else { 1.0 };
            self.priors.clear();
            for (e, w) in edges.iter_mut().zip(&self.weights) {
                e.p = compress_p(*w * scale);
                self.priors.push(e.p);
            }
            let v = [wdl[row * 3], wdl[row * 3 + 1], wdl[row * 3 + 2]];
            let m = mlh.map_or(0.0, |x| x[row]);
            self.cache.put(leaf.key, &self.priors, v, m);
            let start = leaf.path_start as usize;
            self.path.clear();
            self.path.extend_from_slice(&batch.paths[start..start + leaf.path_len as usize]);
            self.finish_expansion(leaf.node, v, m);
        }
        batch.leaves.clear();
        batch.paths.clear();
        self.spare.push(batch);
        Ok(())
    }

    /// Count one playout whose leaf is `edges` edges below the root. Its depth is lc0's: the nodes of its
    /// path, the root being 1 (lc0 search.cc `PickNodesToExtendTask`: "Depth starts with 1 at root"; the
    /// root's own visit has depth 1, a child of the root 2), so `depth_sum / playouts` is lc0's `depth`
    /// and `seldepth` lc0's `seldepth`.
    fn count(&mut self, edges: u32) {
        let depth = edges + 1;
        self.playouts += 1;
        self.depth_sum += u64::from(depth);
        self.seldepth = self.seldepth.max(depth);
    }
}

enum Expansion {
    Terminal,
    CacheHit([f32; 3], f32),
    Network(u8, bool, u64),
}

/// Sort edges by prior, highest first, keeping move-generation order among equals (lc0 search.cc
/// `SortEdges`); insertion sort: no allocation, and n <= 218.
fn sort_edges(edges: &mut [Edge]) {
    for i in 1..edges.len() {
        let e = edges[i];
        let mut j = i;
        while j > 0 && edges[j - 1].p < e.p {
            edges[j] = edges[j - 1];
            j -= 1;
        }
        edges[j] = e;
    }
}

/// Encode the position at the end of `newest` (its history continuing back into `older`; both oldest
/// first) into `row` (float32 `[112 * 64]`); returns the transform. The encoder needs the last 8
/// positions, or for the v2 canonical formats (5, 133, which skip non-repetitions: lc0
/// src/neural/encoder.cc `EncodePositionForNN`) everything back to the last zeroing move, rule50 + 1
/// positions. Up to 8 positions live on the stack; only a v2 format with a long rule50 allocates.
fn encode_history<'a>(newest: &'a [PosInfo], older: &'a [PosInfo], params: &Params, row: InputRow<'_>) -> u8 {
    let cur = newest.last().expect("a history has its current position");
    let need = if matches!(params.input_format, 5 | 133) { cur.rule50 as usize + 1 } else { 8 };
    let fill = |hist: &mut [&'a PosInfo]| -> usize {
        let mut count = 0;
        for x in newest.iter().rev().chain(older.iter().rev()).take(hist.len()) {
            hist[count] = x;
            count += 1;
        }
        hist[..count].reverse();
        count
    };
    if need <= 8 {
        let mut hist: [&PosInfo; 8] = [cur; 8];
        let n = fill(&mut hist[..need]);
        encoding::encode_into(&hist[..n], params.input_format, params.fill, row)
    } else {
        let mut hist = vec![cur; need];
        let n = fill(&mut hist);
        encoding::encode_into(&hist[..n], params.input_format, params.fill, row)
    }
}
