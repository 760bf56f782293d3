//! Backup (lc0 search.cc `DoBackupUpdateSingleNode`) and certainty propagation (`MaybeSetBounds`,
//! node.cc `MakeTerminal`, `AdjustForTerminal`) over the path of one descent.

use crate::search::Search;
use crate::tree::*;

impl Search {
    /// Back one visit up `self.path` from its leaf: (v, d, m) in the view of the player who moved
    /// into the leaf; one visit in flight undone per node (lc0 search.cc `DoBackupUpdateSingleNode`:
    /// wl += (v - wl) / (N + 1), likewise d and m; v = -v and m += 1 one level up). Returns the
    /// depth (edges) of the leaf.
    ///
    /// A node on the path that became terminal while this visit was in flight (proven by another
    /// leaf of the same batch) keeps its exact value, and the rest of the path is backed up with
    /// it: lc0 `DoBackupUpdateSingleNode` ("Current node might have become terminal from some other
    /// descendant, so backup the rest of the way with more accurate values": v, d, m = the node's
    /// WL, D, M when `n->IsTerminal()`).
    pub(crate) fn backup_path(&mut self, mut v: f64, mut d: f64, mut m: f64) -> u32 {
        let nodes = &mut self.tree.nodes;
        for k in (0..self.path.len()).rev() {
            let x = self.path[k] as usize;
            let nd = &mut nodes[x];
            if nd.terminal != Terminal::NonTerminal {
                v = nd.wl;
                d = f64::from(nd.d);
                m = f64::from(nd.m);
            }
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
    pub(crate) fn update_bounds(&mut self, mut k: usize) {
        loop {
            let x = self.path[k];
            let nd = self.tree.nodes[x as usize];
            if nd.state != NodeState::Expanded || nd.num_edges == 0 {
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
            if k == 0 || lo != up || nd.terminal != Terminal::NonTerminal {
                return;
            }
            let mut best_m: Option<f32> = None;
            let mut from_tb = false;
            let mut c = nd.first_child;
            while c != NONE {
                let cn = &self.tree.nodes[c as usize];
                from_tb |= cn.terminal == Terminal::Tablebase;
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
            // lc0 marks a node proven through a tablebase child as a tablebase terminal too.
            self.tree.nodes[x as usize].terminal = if from_tb { Terminal::Tablebase } else { Terminal::EndOfGame };
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
    pub(crate) fn adjust_for_terminal(&mut self, k: usize, wl: f64, d: f64, m: f64) {
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
}
