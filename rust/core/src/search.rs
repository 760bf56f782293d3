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

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Move, Position, PositionError, Role};

use crate::cache::NNCache;
use crate::encoding;
use crate::params::Params;
use crate::policy;
use crate::position::{PosInfo, has_mating_material, repetitions};
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
struct Batch {
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

/// The position and moves of a game, with the packed moves for tree reuse.
struct Game {
    positions: Vec<PosInfo>,
    moves: Vec<u16>,
    root: Chess,
}

/// One game's search tree and its batch machinery.
pub struct Search {
    pub params: Params,
    pub tree: Tree,
    /// Root node, NONE before the first position.
    pub root: u32,
    mode: CastlingMode,
    positions: Vec<PosInfo>,
    root_pos: Chess,
    root_key: String,
    root_moves: Vec<u16>,
    anchor: Option<(u32, Vec<u16>)>,
    root_pondered: bool,
    root_dsc: f64,
    cache: Arc<NNCache>,
    pending: VecDeque<Batch>,
    spare: Vec<Batch>,
    // Scratch of one descent and one expansion (reused: no allocation per playout).
    path: Vec<u32>,
    path_pos: Vec<PosInfo>,
    collided: Vec<u32>,
    collided_lens: Vec<u32>,
    priors: Vec<u16>,
    weights: Vec<f32>,
    /// Playouts of the current search (including out-of-order ones).
    pub playouts: u64,
    /// Sum of the depths of those playouts.
    pub depth_sum: u64,
    /// Deepest playout of the current search.
    pub seldepth: u32,
    /// Positions sent to the network by this search.
    pub nn_evals: u64,
    /// NN-cache hits of this search.
    pub cache_hits: u64,
}

fn parse_error(what: &str, err: impl std::fmt::Display) -> String {
    format!("{what}: {err}")
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
        }
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

    fn replay(fen: &str, moves: &[String], mode: CastlingMode) -> Result<Game, String> {
        let setup: Fen = fen.parse().map_err(|e| parse_error(&format!("invalid FEN {fen:?}"), e))?;
        let ep = setup.as_setup().ep_square;
        let mut pos: Chess = setup
            .into_position(mode)
            .or_else(PositionError::ignore_invalid_ep_square)
            .map_err(|e| parse_error(&format!("illegal position {fen:?}"), e))?;
        let mut positions = Vec::with_capacity(moves.len() + 1);
        positions.push(PosInfo::from_fen_position(&pos, ep));
        let mut packed = Vec::with_capacity(moves.len());
        for (ply, text) in moves.iter().enumerate() {
            let uci: UciMove = text.parse().map_err(|e| parse_error(&format!("invalid move {text:?}"), e))?;
            let mv = uci
                .to_move(&pos)
                .map_err(|_| format!("illegal move {text:?} at ply {} of the game from {fen:?}", ply + 1))?;
            packed.push(pack_move(&mv));
            pos.play_unchecked(mv);
            let mut info = PosInfo::after_move(&pos);
            let (r, _) = repetitions(&info, |i| positions.len().checked_sub(1 + i).map(|j| &positions[j]));
            info.repetitions = r;
            positions.push(info);
        }
        Ok(Game { positions, moves: packed, root: pos })
    }

    /// Set the position to search: the game from `fen` with the UCI `moves` (python-chess spelling:
    /// e1g1 castling in standard chess, king takes rook in Chess960). Reuses the subtree of the old
    /// tree (or of the ponder anchor) when the game continues it (lc0 node.cc
    /// `NodeTree::ResetToPosition`). A ponder search keeps the previous root as an anchor, so that a
    /// ponder miss can reuse the subtree of the reply really played. Returns the reused visits.
    ///
    /// Errors: an invalid FEN, an illegal position or an illegal move, as a message.
    pub fn set_position(&mut self, fen: &str, moves: &[String], chess960: bool, ponder: bool) -> Result<u32, String> {
        let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
        let game = Search::replay(fen, moves, mode)?;
        let key = format!("{fen}{}", if chess960 { " 960" } else { "" });
        self.pending.clear();
        let mut found = None;
        if key == self.root_key && self.root != NONE {
            let mut candidates = vec![(self.root, self.root_moves.clone())];
            if let Some(a) = &self.anchor {
                candidates.push(a.clone());
            }
            for (old, old_moves) in candidates {
                if let Some(node) = self.descend(old, &old_moves, &game.moves, &game.positions) {
                    found = Some(node);
                    break;
                }
            }
        }
        if !ponder {
            self.anchor = None;
        } else if self.root != NONE && key == self.root_key && !self.root_pondered {
            self.anchor = Some((self.root, self.root_moves.clone()));
        }
        self.root_pondered = ponder;
        let root = match found {
            Some(node) => {
                // lc0 MakeMove: a terminal node that becomes the root is searched again.
                self.tree.nodes[node as usize].terminal = TERMINAL_NONE;
                if self.anchor.is_none() { self.tree.compact(node) } else { node }
            }
            None => {
                if self.anchor.is_none() {
                    self.tree.clear();
                }
                let r = self.tree.new_node(0);
                self.tree.nodes[r as usize].reps = game.positions.last().map_or(0, |p| p.repetitions.min(255) as u8);
                r
            }
        };
        let reused = self.tree.nodes[root as usize].n;
        let ds = self.params.draw_score;
        self.root_dsc = if game.root.turn() == Color::White { ds } else { -ds };
        self.root = root;
        self.root_key = key;
        self.root_moves = game.moves;
        self.positions = game.positions;
        self.root_pos = game.root;
        self.mode = mode;
        self.playouts = 0;
        self.depth_sum = 0;
        self.seldepth = 0;
        self.nn_evals = 0;
        self.cache_hits = 0;
        Ok(reused)
    }

    fn descend(&self, old: u32, old_moves: &[u16], moves: &[u16], positions: &[PosInfo]) -> Option<u32> {
        if moves.len() < old_moves.len() || &moves[..old_moves.len()] != old_moves {
            return None;
        }
        let mut node = old;
        for &mv in &moves[old_moves.len()..] {
            let nd = &self.tree.nodes[node as usize];
            if nd.state != EXPANDED || nd.terminal != TERMINAL_NONE {
                return None;
            }
            let i = self.tree.edges_of(node).iter().position(|e| e.mv == mv)?;
            node = self.tree.child(node, i as u8);
            if node == NONE {
                return None;
            }
        }
        let nd = &self.tree.nodes[node as usize];
        if nd.state != EXPANDED || nd.num_edges == 0 {
            return None;
        }
        if u32::from(nd.reps) != positions.last().map_or(0, |p| p.repetitions.min(255)) {
            return None;
        }
        self.two_folds_valid(node).then_some(node)
    }

    /// False when a two-fold draw below `root` no longer has its whole cycle inside the tree (lc0
    /// search.cc `EnsureNodeTwoFoldCorrectForDepth`); the caller then starts a fresh tree.
    fn two_folds_valid(&self, root: u32) -> bool {
        let mut stack = vec![(root, 0u32)];
        while let Some((x, depth)) = stack.pop() {
            let nd = &self.tree.nodes[x as usize];
            if nd.terminal == TERMINAL_TWOFOLD && (depth < 4 || depth < u32::from(nd.cycle)) {
                return false;
            }
            let mut c = nd.first_child;
            while c != NONE {
                stack.push((c, depth + 1));
                c = self.tree.nodes[c as usize].sibling;
            }
        }
        true
    }

    /// The root node.
    pub fn root_node(&self) -> &Node {
        &self.tree.nodes[self.root as usize]
    }

    /// True while the root waits for its first evaluation (or was never gathered).
    pub fn root_needs_eval(&self) -> bool {
        self.root != NONE && self.tree.nodes[self.root as usize].state != EXPANDED
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
        let mut batch = self.spare.pop().unwrap_or_default();
        batch.leaves.clear();
        batch.paths.clear();
        let root = self.root;
        if root == NONE {
            return 0;
        }
        let rstate = self.tree.nodes[root as usize].state;
        if rstate == PENDING {
            self.spare.push(batch);
            return 0;
        }
        if rstate == FRESH {
            self.path.clear();
            self.path.push(root);
            self.tree.nodes[root as usize].in_flight += 1;
            let pos = self.root_pos.clone();
            let legal = pos.legal_moves();
            self.tree.alloc_edges(root, legal.iter().map(pack_move));
            self.tree.nodes[root as usize].state = PENDING;
            let hist_len = self.positions.len().min(8);
            let hist: Vec<&PosInfo> = self.positions[self.positions.len() - hist_len..].iter().collect();
            let cur = &self.positions[self.positions.len() - 1];
            let transform =
                encoding::encode(&hist, self.params.input_format, self.params.fill, &mut out[..PLANES_PER_POSITION]);
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
        let mb = p.minibatch_size.min(out.len() / PLANES_PER_POSITION);
        let mut budget: i64 = match nodes_limit {
            Some(limit) => {
                limit as i64 - i64::from(self.tree.nodes[root as usize].n) - self.pending_leaves() as i64
            }
            None => i64::MAX,
        };
        let mut collisions = p.collisions_allowed(self.tree.nodes[root as usize].n);
        let mut ooo_left: i64 = ((p.max_out_of_order_evals_factor * mb as f64) as i64).max(1);
        self.collided.clear();
        self.collided_lens.clear();
        while batch.leaves.len() < mb && budget > 0 {
            let (leaf, ply) = self.select();
            let nd = self.tree.nodes[leaf as usize];
            if nd.terminal != TERMINAL_NONE {
                let depth = self.backup_path(nd.wl, f64::from(nd.d), f64::from(nd.m));
                self.count(depth);
                budget -= 1;
                ooo_left -= 1;
            } else if nd.state == PENDING {
                self.collided.extend_from_slice(&self.path);
                self.collided_lens.push(self.path.len() as u32);
                collisions -= 1;
                if collisions <= 0 {
                    break;
                }
                continue;
            } else {
                budget -= 1;
                let row = batch.leaves.len();
                match self.expand(leaf, ply, &mut out[row * PLANES_PER_POSITION..(row + 1) * PLANES_PER_POSITION]) {
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
            if nd.state != EXPANDED || nd.num_edges == 0 || (ply > 0 && nd.terminal != TERMINAL_NONE) {
                break;
            }
            let n = nd.n;
            let pm = p.cpuct_at(n) * if n > 2 { f64::from(n - 1).sqrt() } else { 1.0 };
            let fpu = if absolute { fv } else { (-nd.wl + dsc * f64::from(nd.d)) - fv * nd.vp.sqrt() };
            let edges = &tree.edges[nd.edges as usize..nd.edges as usize + nd.num_edges as usize];
            let mut c = nd.first_child;
            let mut best = -1e9f64;
            let mut bi = 0usize;
            for (i, e) in edges.iter().enumerate() {
                let (ni, fi, q) = if c != NONE && tree.nodes[c as usize].index as usize == i {
                    let cn = &tree.nodes[c as usize];
                    c = cn.sibling;
                    (cn.n, cn.in_flight, cn.wl + dsc * f64::from(cn.d))
                } else {
                    (0, 0, 0.0)
                };
                let s = (if ni > 0 { q } else { fpu })
                    + pm * f64::from(decompress_p(e.p)) / f64::from(1 + ni + fi);
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
    /// apply the terminal rules (mate, stalemate, insufficient material, rule 50, threefold, and with
    /// TwoFoldDraws a repetition whose cycle lies in the tree), store the legal moves, then look the
    /// NN cache up, or write the planes into `row` for the network.
    fn expand(&mut self, leaf: u32, ply: u32, row: &mut [f32]) -> Expansion {
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
            make_terminal(nd, wl, d, m);
            return Expansion::Terminal;
        }
        if self.params.two_fold_draws && info.repetitions == 1 && ply >= 4 && ply >= u32::from(nd.cycle) {
            make_terminal(nd, 0.0, 1.0, f32::from(nd.cycle));
            nd.terminal = TERMINAL_TWOFOLD;
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
        self.tree.nodes[leaf as usize].state = PENDING;
        // History: the path (newest last), then the game before the root; the last 8.
        let mut hist: [&PosInfo; 8] = [info; 8];
        let mut count = 0usize;
        for x in self.path_pos.iter().rev() {
            if count == 8 {
                break;
            }
            hist[count] = x;
            count += 1;
        }
        let game = &self.positions[..self.positions.len() - 1];
        for x in game.iter().rev() {
            if count == 8 {
                break;
            }
            hist[count] = x;
            count += 1;
        }
        hist[..count].reverse();
        let transform = encoding::encode(&hist[..count], self.params.input_format, self.params.fill, row);
        Expansion::Network(transform, black, key)
    }

    /// Priors are in the leaf's edges (move-generation order): sort them, back the value up.
    fn finish_expansion(&mut self, leaf: u32, wdl: [f32; 3], m: f32) {
        let nd = self.tree.nodes[leaf as usize];
        sort_edges(&mut self.tree.edges[nd.edges as usize..nd.edges as usize + nd.num_edges as usize]);
        let q = f64::from(wdl[0]) - f64::from(wdl[2]);
        let x = &mut self.tree.nodes[leaf as usize];
        x.state = EXPANDED;
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

    fn count(&mut self, depth: u32) {
        self.playouts += 1;
        self.depth_sum += u64::from(depth);
        self.seldepth = self.seldepth.max(depth);
    }

    /// Back one visit up `self.path` from its leaf: (v, d, m) in the view of the player who moved
    /// into the leaf; one visit in flight undone per node (lc0 search.cc `DoBackupUpdateSingleNode`:
    /// wl += (v - wl) / (N + 1), likewise d and m; v = -v and m += 1 one level up). Returns the
    /// depth (edges) of the leaf.
    fn backup_path(&mut self, mut v: f64, d: f64, mut m: f64) -> u32 {
        let nodes = &mut self.tree.nodes;
        for k in (0..self.path.len()).rev() {
            let x = self.path[k] as usize;
            let nd = &mut nodes[x];
            let n1 = nd.n + 1;
            let f = f64::from(n1);
            nd.wl += (v - nd.wl) / f;
            nd.d = (f64::from(nd.d) + (d - f64::from(nd.d)) / f) as f32;
            nd.m = (f64::from(nd.m) + (m - f64::from(nd.m)) / f) as f32;
            nd.n = n1;
            nd.in_flight -= 1;
            if n1 == 1 && k > 0 {
                let idx = nd.index;
                let parent = &nodes[self.path[k - 1] as usize];
                let p = decompress_p(self.tree.edges[(parent.edges + u32::from(idx)) as usize].p);
                nodes[self.path[k - 1] as usize].vp += f64::from(p);
            }
            v = -v;
            m += 1.0;
        }
        (self.path.len() - 1) as u32
    }

    /// Certainty propagation from `self.path[k]` (the parent of a newly proven child) upwards (lc0
    /// search.cc `MaybeSetBounds`): over the children (edges without a child count as (-1, +1)) the
    /// max lower and max upper bound; this node's bounds become (-max_upper, -max_lower). When they
    /// meet, the node is proven: M is 1 + the shortest winning child's M (a loss for the mover) or 1 +
    /// the longest child's M; the change of value is carried into the ancestors (`AdjustForTerminal`)
    /// and the edge to a loss gets prior 0 (node.cc `MakeTerminal`). The root is never proven.
    fn update_bounds(&mut self, mut k: usize) {
        loop {
            let x = self.path[k];
            let nd = self.tree.nodes[x as usize];
            if nd.state != EXPANDED || nd.num_edges == 0 {
                return;
            }
            let (mut max_lo, mut max_up) = (-1i8, -1i8);
            let mut children = 0usize;
            let mut c = nd.first_child;
            while c != NONE {
                let cn = &self.tree.nodes[c as usize];
                max_lo = max_lo.max(cn.lower);
                max_up = max_up.max(cn.upper);
                children += 1;
                c = cn.sibling;
            }
            if children < nd.num_edges as usize {
                max_up = 1;
            }
            let (lo, up) = (-max_up, -max_lo);
            if lo == nd.lower && up == nd.upper {
                return;
            }
            {
                let w = &mut self.tree.nodes[x as usize];
                w.lower = lo;
                w.upper = up;
            }
            if k == 0 || lo != up || nd.terminal != TERMINAL_NONE {
                return;
            }
            let mut best_m: Option<f32> = None;
            let mut c = nd.first_child;
            while c != NONE {
                let cn = &self.tree.nodes[c as usize];
                if lo < 0 {
                    if cn.lower == 1 {
                        best_m = Some(best_m.map_or(cn.m, |b| b.min(cn.m)));
                    }
                } else {
                    best_m = Some(best_m.map_or(cn.m, |b| b.max(cn.m)));
                }
                c = cn.sibling;
            }
            let m = 1.0 + f64::from(best_m.unwrap_or(0.0));
            self.adjust_for_terminal(k, f64::from(lo), if lo == 0 { 1.0 } else { 0.0 }, m);
            self.tree.nodes[x as usize].terminal = TERMINAL_END;
            if lo < 0 {
                let parent = self.path[k - 1];
                let e = (self.tree.nodes[parent as usize].edges + u32::from(nd.index)) as usize;
                let p = decompress_p(self.tree.edges[e].p);
                self.tree.nodes[parent as usize].vp -= f64::from(p);
                self.tree.edges[e].p = 0;
            }
            k -= 1;
        }
    }

    /// Replace the averages of `self.path[k]` by exact values and shift every ancestor's averages to
    /// match (lc0 node.cc `AdjustForTerminal`).
    fn adjust_for_terminal(&mut self, k: usize, wl: f64, d: f64, m: f64) {
        let x = self.path[k] as usize;
        let nd = &mut self.tree.nodes[x];
        let n = f64::from(nd.n);
        let mut dwl = (wl - nd.wl) * n;
        let dd = (d - f64::from(nd.d)) * n;
        let dm = (m - f64::from(nd.m)) * n;
        nd.wl = wl;
        nd.d = d as f32;
        nd.m = m as f32;
        for j in (0..k).rev() {
            let pn = &mut self.tree.nodes[self.path[j] as usize];
            dwl = -dwl;
            if pn.n > 0 {
                let f = f64::from(pn.n);
                pn.wl += dwl / f;
                pn.d = (f64::from(pn.d) + dd / f) as f32;
                pn.m = (f64::from(pn.m) + dm / f) as f32;
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Reading the tree.

    /// Draw score of the side to move at `node` given its depth parity.
    #[inline]
    fn dsc_at(&self, ply: u32) -> f64 {
        if ply % 2 == 0 { self.root_dsc } else { -self.root_dsc }
    }

    fn rank_key(&self, node: u32, ply: u32, i: usize, child: u32) -> (i32, f64, f64, f64, f64) {
        let p = f64::from(decompress_p(self.tree.edges_of(node)[i].p));
        if child == NONE {
            return (1, 0.0, 0.0, 0.0, p);
        }
        let c = &self.tree.nodes[child as usize];
        let n = f64::from(c.n);
        let q = if c.n > 0 { c.wl + self.dsc_at(ply) * f64::from(c.d) } else { 0.0 };
        if c.terminal != TERMINAL_NONE {
            if c.wl > 0.0 {
                return (2, -f64::from(c.m), 0.0, 0.0, p);
            }
            if c.wl < 0.0 {
                return (0, f64::from(c.m), 0.0, 0.0, p);
            }
            return (1, n, -f64::from(c.m), q, p);
        }
        (1, n, 0.0, q, p)
    }

    fn children_by_edge(&self, node: u32) -> Vec<u32> {
        let nd = &self.tree.nodes[node as usize];
        let mut out = vec![NONE; nd.num_edges as usize];
        let mut c = nd.first_child;
        while c != NONE {
            let cn = &self.tree.nodes[c as usize];
            out[cn.index as usize] = c;
            c = cn.sibling;
        }
        out
    }

    /// Edge indices of an expanded node, best first by lc0's ranking (lc0 search.cc
    /// `GetBestChildrenNoTemperature`): proven win (shorter first) > others by visits, then Q, then
    /// prior > proven loss (longer first). Ties keep edge order.
    pub fn ranked_edges(&self, node: u32, ply: u32) -> Vec<usize> {
        let children = self.children_by_edge(node);
        let keys: Vec<_> = (0..children.len()).map(|i| self.rank_key(node, ply, i, children[i])).collect();
        let mut order: Vec<usize> = (0..children.len()).collect();
        order.sort_by(|&a, &b| keys[b].partial_cmp(&keys[a]).unwrap_or(std::cmp::Ordering::Equal));
        order
    }

    fn best_edge(&self, node: u32, ply: u32) -> Option<usize> {
        let nd = &self.tree.nodes[node as usize];
        if nd.state != EXPANDED || nd.num_edges == 0 {
            return None;
        }
        let children = self.children_by_edge(node);
        let mut best = 0usize;
        let mut best_key = self.rank_key(node, ply, 0, children[0]);
        for (i, &c) in children.iter().enumerate().skip(1) {
            let k = self.rank_key(node, ply, i, c);
            if k > best_key {
                best = i;
                best_key = k;
            }
        }
        Some(best)
    }

    /// The principal variation below root edge `edge` (that edge's move first), as UCI strings
    /// (python-chess spelling), at most `max_len` moves: best edges while the child has visits.
    pub fn pv(&self, edge: usize, max_len: usize) -> Vec<String> {
        let mut pos = self.root_pos.clone();
        let root = self.root;
        let first = self.tree.edges_of(root)[edge].mv;
        let mv = unpack_move(first, &pos);
        let mut out = vec![mv.to_uci(self.mode).to_string()];
        pos.play_unchecked(mv);
        let mut node = self.tree.child(root, edge as u8);
        let mut ply = 1u32;
        // Below the root move: the best edge of each node; the first one even without visits (its
        // prior makes it the expected reply), later ones only with visits.
        let mut below = 0usize;
        while node != NONE && out.len() < max_len {
            let Some(i) = self.best_edge(node, ply) else { break };
            let child = self.tree.child(node, i as u8);
            let visited = child != NONE && self.tree.nodes[child as usize].n > 0;
            if !visited && below > 0 {
                break;
            }
            let mv = unpack_move(self.tree.edges_of(node)[i].mv, &pos);
            out.push(mv.to_uci(self.mode).to_string());
            below += 1;
            if child == NONE {
                break;
            }
            pos.play_unchecked(mv);
            node = child;
            ply += 1;
        }
        out
    }

    /// UCI strings (python-chess spelling) of the root edges, in edge order.
    pub fn root_move_strings(&self) -> Vec<String> {
        self.tree
            .edges_of(self.root)
            .iter()
            .map(|e| unpack_move(e.mv, &self.root_pos).to_uci(self.mode).to_string())
            .collect()
    }

    /// lc0 policy indices of the root edges (no transform), for VerboseMoveStats.
    pub fn root_nn_indices(&self) -> Vec<i32> {
        let turn = self.root_pos.turn();
        self.tree
            .edges_of(self.root)
            .iter()
            .map(|e| {
                let (from, to, promotion) = unpack_squares(e.mv);
                let mv = Move::Normal { role: Role::Pawn, from, capture: None, to, promotion };
                policy::nn_index(&mv, turn, 0).map_or(-1, i32::from)
            })
            .collect()
    }

    /// Statistics of every root edge, best first (lc0 ranking). Values from the root side to move's
    /// view; U = cpuct(N) * sqrt(max(N - 1, 1)) * P / (1 + N_i + in_flight_i).
    pub fn root_edges(&self) -> Vec<RootEdge> {
        let root = self.root;
        let rn = self.tree.nodes[root as usize].n;
        let pm = self.params.cpuct_at(rn) * f64::from(rn.saturating_sub(1).max(1)).sqrt();
        let children = self.children_by_edge(root);
        let edges = self.tree.edges_of(root);
        self.ranked_edges(root, 0)
            .into_iter()
            .map(|i| {
                let p = decompress_p(edges[i].p);
                let c = children[i];
                let (n, fi) = if c == NONE {
                    (0, 0)
                } else {
                    let cn = &self.tree.nodes[c as usize];
                    (cn.n, cn.in_flight)
                };
                let cn = (c != NONE && n > 0).then(|| &self.tree.nodes[c as usize]);
                let proven = (c != NONE && self.tree.nodes[c as usize].terminal != TERMINAL_NONE).then(|| {
                    let w = self.tree.nodes[c as usize].wl;
                    if w > 0.0 { 1 } else if w < 0.0 { -1 } else { 0 }
                });
                RootEdge {
                    edge: i,
                    n,
                    p,
                    q: cn.map_or(0.0, |x| x.wl + self.root_dsc * f64::from(x.d)),
                    u: pm * f64::from(p) / f64::from(1 + n + fi),
                    d: cn.map_or(0.0, |x| x.d),
                    m: cn.map_or(0.0, |x| x.m),
                    wl: cn.map_or(0.0, |x| x.wl),
                    in_flight: fi,
                    proven,
                    v0: cn.map(|x| x.v0),
                }
            })
            .collect()
    }

    /// (wl, d, mate, pv) of root edge `edge`, root side to move's view; the root's own value when the
    /// edge has no visits yet. mate: sign(wl) * (round(M) / 2 + 1) for a proven child (lc0 search.cc
    /// `SendUciInfo`), rounded half to even as Python's round.
    pub fn edge_values(&self, edge: usize, max_pv: usize) -> (f64, f64, Option<i64>, Vec<String>) {
        let root = &self.tree.nodes[self.root as usize];
        let c = self.tree.child(self.root, edge as u8);
        if c != NONE && self.tree.nodes[c as usize].n > 0 {
            let cn = &self.tree.nodes[c as usize];
            let mate = (cn.terminal != TERMINAL_NONE && cn.wl != 0.0).then(|| {
                let k = (f64::from(cn.m).round_ties_even() / 2.0 + 1.0) as i64;
                if cn.wl > 0.0 { k } else { -k }
            });
            return (cn.wl, f64::from(cn.d), mate, self.pv(edge, max_pv));
        }
        (-root.wl, f64::from(root.d), None, self.pv(edge, 1))
    }

    /// The node reached from the root by `moves` (UCI strings, python-chess spelling), with its
    /// position; None when a move is illegal or its child was never visited.
    pub fn node_at(&self, moves: &[String]) -> Option<(u32, Chess)> {
        let mut pos = self.root_pos.clone();
        let mut node = self.root;
        for text in moves {
            let uci: UciMove = text.parse().ok()?;
            let mv = uci.to_move(&pos).ok()?;
            let code = pack_move(&mv);
            let nd = &self.tree.nodes[node as usize];
            if nd.state != EXPANDED {
                return None;
            }
            let i = self.tree.edges_of(node).iter().position(|e| e.mv == code)?;
            node = self.tree.child(node, i as u8);
            if node == NONE {
                return None;
            }
            pos.play_unchecked(mv);
        }
        Some((node, pos))
    }

    /// The number of two-fold terminals in the tree below the root (for tests and stats).
    pub fn count_twofold(&self) -> usize {
        let mut total = 0;
        let mut stack = vec![self.root];
        while let Some(x) = stack.pop() {
            let nd = &self.tree.nodes[x as usize];
            if nd.terminal == TERMINAL_TWOFOLD {
                total += 1;
            }
            let mut c = nd.first_child;
            while c != NONE {
                stack.push(c);
                c = self.tree.nodes[c as usize].sibling;
            }
        }
        total
    }
}

enum Expansion {
    Terminal,
    CacheHit([f32; 3], f32),
    Network(u8, bool, u64),
}

/// lc0 node.cc `MakeTerminal`: exact values and bounds; no edges.
fn make_terminal(nd: &mut Node, wl: f64, d: f32, m: f32) {
    nd.terminal = TERMINAL_END;
    nd.state = EXPANDED;
    nd.num_edges = 0;
    nd.wl = wl;
    nd.d = d;
    nd.m = m;
    nd.v0 = wl as f32;
    let b = if wl > 0.0 { 1 } else if wl < 0.0 { -1 } else { 0 };
    nd.lower = b;
    nd.upper = b;
}

/// lc0's fast 2^a (lc0 src/utils/fastmath.h `FastExp2`): a quadratic minimax fit of the fraction put
/// into the float's exponent; relative error about 0.2 %.
#[inline]
pub fn fast_exp2(a: f32) -> f32 {
    let exp: i32 = if a < 0.0 {
        if a < -126.0 {
            return 0.0;
        }
        (a - 1.0) as i32
    } else {
        a as i32
    };
    let mut out = a - exp as f32;
    out = 1.0 + out * (0.660_233_9 + 0.339_766_06 * out);
    f32::from_bits((out.to_bits() as i32).wrapping_add(((exp as u32) << 23) as i32) as u32)
}

/// lc0's fast e^a (lc0 src/utils/fastmath.h `FastExp`).
#[inline]
pub fn fast_exp(a: f32) -> f32 {
    fast_exp2(1.442_695_04 * a)
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
