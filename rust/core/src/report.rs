//! Reading the tree: lc0's ranking of moves (search.cc `GetBestChildrenNoTemperature`), the PV, root
//! statistics, the values of a root move, and lookups for tests and stats.

use shakmaty::uci::UciMove;
use shakmaty::{Chess, Move, Position, Role};

use crate::policy;
use crate::search::{RootEdge, Search};
use crate::tree::*;

impl Search {
    /// Draw score of the side to move at `node` given its depth parity.
    #[inline]
    pub(crate) fn dsc_at(&self, ply: u32) -> f64 {
        if ply.is_multiple_of(2) { self.root_dsc } else { -self.root_dsc }
    }

    pub(crate) fn rank_key(&self, node: u32, ply: u32, i: usize, child: u32) -> (i32, f64, f64, f64, f64) {
        let p = f64::from(decompress_p(self.tree.edges_of(node)[i].p));
        if child == NONE {
            return (1, 0.0, 0.0, 0.0, p);
        }
        let c = &self.tree.nodes[child as usize];
        let n = f64::from(c.n);
        let q = if c.n > 0 { c.wl + self.dsc_at(ply) * f64::from(c.d) } else { 0.0 };
        if c.terminal != Terminal::NonTerminal {
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

    pub(crate) fn children_by_edge(&self, node: u32) -> Vec<u32> {
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

    pub(crate) fn best_edge(&self, node: u32, ply: u32) -> Option<usize> {
        let nd = &self.tree.nodes[node as usize];
        if nd.state != NodeState::Expanded || nd.num_edges == 0 {
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
            let Some(i) = self.best_edge(node, ply) else {
                break;
            };
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
                let proven = (c != NONE && self.tree.nodes[c as usize].terminal != Terminal::NonTerminal).then(|| {
                    let w = self.tree.nodes[c as usize].wl;
                    if w > 0.0 {
                        1
                    } else if w < 0.0 {
                        -1
                    } else {
                        0
                    }
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
    /// `SendUciInfo`), rounded half to even as Python's round; none for a tablebase terminal.
    pub fn edge_values(&self, edge: usize, max_pv: usize) -> (f64, f64, Option<i64>, Vec<String>) {
        let root = &self.tree.nodes[self.root as usize];
        let c = self.tree.child(self.root, edge as u8);
        if c != NONE && self.tree.nodes[c as usize].n > 0 {
            let cn = &self.tree.nodes[c as usize];
            // A tablebase win is not a mate in M: its M is an estimate (a large cp instead, like lc0's Q).
            let proven = cn.terminal != Terminal::NonTerminal && cn.terminal != Terminal::Tablebase;
            let mate = (proven && cn.wl != 0.0).then(|| {
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
            if nd.state != NodeState::Expanded {
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
            if nd.terminal == Terminal::TwoFold {
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
