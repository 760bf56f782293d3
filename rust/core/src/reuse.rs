//! Setting the position: the game replayed, the old tree's subtree kept when the game continues it
//! (lc0 src/search/classic/node.cc `NodeTree::ResetToPosition`, `TrimTreeAtHead`), the ponder anchor,
//! and lc0's check that two-fold draws below a new root still have their cycle in the tree (those that
//! do not are reverted, the rest of the subtree is kept).

use shakmaty::{CastlingMode, Chess, Color, Position};

use crate::position::{PosInfo, replay_game};
use crate::search::Search;
use crate::tree::*;

/// The position and moves of a game, with the packed moves for tree reuse.
struct Game {
    positions: Vec<PosInfo>,
    moves: Vec<u16>,
    root: Chess,
}

impl Search {
    fn replay(fen: &str, moves: &[String], mode: CastlingMode) -> Result<Game, String> {
        let (positions, root, played) = replay_game(fen, moves, mode)?;
        Ok(Game { positions, moves: played.iter().map(pack_move).collect(), root })
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
                self.tree.nodes[node as usize].terminal = Terminal::NonTerminal;
                let root = if self.anchor.is_none() { self.tree.compact(node) } else { node };
                self.revert_stale_two_folds(root);
                root
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
        self.tbhits = 0;
        // lc0 skips probes in the search when its root probe by DTZ succeeded; the root of a covered
        // position is probed by the caller (lichessbot/tablebase.py), so covered means the same here.
        self.tb_root = self.tb.as_ref().is_some_and(|t| t.covers(&self.root_pos));
        self.search_moves.clear();
        Ok(reused)
    }

    /// Let the search visit only `moves` at the root (UCI, python-chess spelling; empty: every move): lc0's
    /// `go searchmoves` (src/search/classic/search.cc `PopulateRootMoveLimit`, and `PickNodesToExtendTask`,
    /// which skips the root's other children). Cleared by [`Search::set_position`].
    ///
    /// Errors: a move that is not legal in the root position, as a message.
    pub fn set_search_moves(&mut self, moves: &[String]) -> Result<(), String> {
        let legal = self.root_pos.legal_moves();
        let mut packed = Vec::with_capacity(moves.len());
        for uci in moves {
            let m = legal
                .iter()
                .find(|m| m.to_uci(self.mode).to_string() == *uci)
                .ok_or_else(|| format!("searchmoves: {uci} is not a legal move here"))?;
            packed.push(pack_move(m));
        }
        self.search_moves = packed;
        Ok(())
    }

    fn descend(&self, old: u32, old_moves: &[u16], moves: &[u16], positions: &[PosInfo]) -> Option<u32> {
        if moves.len() < old_moves.len() || &moves[..old_moves.len()] != old_moves {
            return None;
        }
        let mut node = old;
        for &mv in &moves[old_moves.len()..] {
            let nd = &self.tree.nodes[node as usize];
            if nd.state != NodeState::Expanded || nd.terminal != Terminal::NonTerminal {
                return None;
            }
            let i = self.tree.edges_of(node).iter().position(|e| e.mv == mv)?;
            node = self.tree.child(node, i as u8);
            if node == NONE {
                return None;
            }
        }
        let nd = &self.tree.nodes[node as usize];
        if nd.state != NodeState::Expanded || nd.num_edges == 0 {
            return None;
        }
        if u32::from(nd.reps) != positions.last().map_or(0, |p| p.repetitions.min(255)) {
            return None;
        }
        Some(node)
    }

    /// lc0 search.cc `EnsureNodeTwoFoldCorrectForDepth`, for the whole kept subtree at once when the root
    /// moves down (lc0 does it lazily, as picks pass a node): a two-fold draw whose cycle no longer lies
    /// inside the tree (its depth below the new `root` is less than its cycle, so the first occurrence is
    /// now before the root) becomes an ordinary, unvisited node again, and its visits are taken out of
    /// each node from it up to `root` (node.cc `RevertTerminalVisits` with the draw's value: WL 0, D 1,
    /// M its cycle plus the plies up from it; then `MakeNotTerminal`). The rest of the subtree is kept.
    fn revert_stale_two_folds(&mut self, root: u32) {
        let mut stack = vec![(root, 0usize)];
        let mut path: Vec<u32> = Vec::new();
        while let Some((x, depth)) = stack.pop() {
            path.truncate(depth);
            path.push(x);
            let nd = self.tree.nodes[x as usize];
            if nd.terminal == Terminal::TwoFold && (depth < 4 || depth < usize::from(nd.cycle)) {
                self.revert_two_fold(&path);
                continue;
            }
            let mut c = nd.first_child;
            while c != NONE {
                stack.push((c, depth + 1));
                c = self.tree.nodes[c as usize].sibling;
            }
        }
    }

    /// Take the visits of the two-fold draw at the end of `path` (root first) out of every node of the
    /// path (lc0 node.cc `RevertTerminalVisits`) and make it a fresh node (`MakeNotTerminal`: a two-fold
    /// draw has no edges, so it keeps no visits).
    fn revert_two_fold(&mut self, path: &[u32]) {
        let last = path[path.len() - 1] as usize;
        let Node { wl, d, m, n: t, index, .. } = self.tree.nodes[last];
        let (d, m) = (f64::from(d), f64::from(m));
        for (k, &x) in path.iter().rev().enumerate() {
            let nd = &mut self.tree.nodes[x as usize];
            let n_new = i64::from(nd.n) - i64::from(t);
            if n_new <= 0 {
                nd.wl = 0.0;
                nd.d = 1.0;
                nd.m = 0.0;
                nd.n = 0;
            } else {
                // The draw's WL is 0 whichever side looks at it: no sign to switch (lc0's comment).
                let (tf, nf) = (f64::from(t), n_new as f64);
                nd.wl -= tf * (wl - nd.wl) / nf;
                nd.d = (f64::from(nd.d) - tf * (d - f64::from(nd.d)) / nf) as f32;
                nd.m = (f64::from(nd.m) - tf * (m + k as f64 - f64::from(nd.m)) / nf) as f32;
                nd.n = n_new as u32;
            }
        }
        if t > 0 && path.len() > 1 {
            // Its edge no longer counts in the parent's visited policy (lc0 computes it from the children).
            let parent = path[path.len() - 2] as usize;
            let e = (self.tree.nodes[parent].edges + u32::from(index)) as usize;
            let p = f64::from(decompress_p(self.tree.edges[e].p));
            self.tree.nodes[parent].vp = (self.tree.nodes[parent].vp - p).max(0.0);
        }
        self.tree.nodes[last].make_not_terminal();
    }
}
