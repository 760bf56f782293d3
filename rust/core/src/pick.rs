//! lc0's multi-visit picking (lc0 src/search/classic/search.cc `PickNodesToExtendTask`, as of commit
//! 909a408): one pass from the root carries a number of visits down the tree. At each node the
//! visits are split among the children in one loop: the best child by PUCT takes visits until its
//! score would fall below the second best's (the count comes from the PUCT formula, not from
//! repeated descents), its visits in flight are raised by that many, and the loop goes on with the
//! rest; then the pass walks into each child that received visits, depth first, in edge order.
//!
//! What a pass yields ([`Pick`]), as lc0's `NodeToProcess`:
//! - a *visit* (one playout) to a child that had no visit yet, or to a terminal child: the first
//!   visit that reaches it (lc0 `TryStartScoreUpdate` succeeds);
//! - a *collision* of several visits at once (lc0 `NodeToProcess::Collision` with its `multivisit`):
//!   the visits beyond the first that reached an unexpanded or terminal node, or every visit that
//!   reached a node already waiting for the network. Its visits are in flight on the nodes above it,
//!   not on the node itself.
//!
//! So in lc0, and here, only collisions take several visits in one entry: a terminal or an NN-cache
//! hit takes one visit per pass, the others that reached it in that pass being a collision.

use crate::search::{Level, Pick, Search};
use crate::tree::*;

impl Search {
    /// One pass of lc0's multi-visit picking from the root with `limit` visits (lc0 search.cc
    /// `PickNodesToExtendTask`; score = Q + cpuct(N) * sqrt(max(N - 1, 1)) * P / (1 + N_i +
    /// in_flight_i), Q of unvisited edges by FPU, lc0 `GetFpu`). Leaves its results in
    /// `self.picks` (visits in the order they were reached, collisions after the subtree above
    /// them was split), with their paths in `self.pick_paths`; every visit is in flight on the
    /// nodes its pick names. The root must be expanded and have edges.
    ///
    /// The number of visits given to the best child at once is lc0's: with `second` the second
    /// best score and `u_best` the best child's Q (or FPU), P·cpuct·sqrt(N−1)/(second − u_best) −
    /// (N_i + in_flight_i), at least 1 and at most 10^9 (every remaining visit when there is no
    /// second child or when the best's Q alone is above the second's score).
    pub(crate) fn pick(&mut self, limit: u32) {
        self.picks.clear();
        self.pick_paths.clear();
        self.vtp.clear();
        self.levels.clear();
        self.path.clear();
        let root = self.root;
        self.path.push(root);
        // The root holds every visit of the pass in flight (lc0: "Root node is again special").
        self.tree.nodes[root as usize].in_flight += limit;
        let mut max_limit = u32::MAX;
        self.split(root, limit, &mut max_limit);
        while let Some(&lv) = self.levels.last() {
            let mut next = lv.next;
            let mut found = None;
            while next < lv.end {
                let (v, c) = self.vtp[(lv.vtp + next) as usize];
                next += 1;
                if v > 0 {
                    found = Some((v, c));
                    break;
                }
            }
            let top = self.levels.len() - 1;
            self.levels[top].next = next;
            let Some((visits, child)) = found else {
                self.levels.pop();
                self.vtp.truncate(lv.vtp as usize);
                self.path.pop();
                continue;
            };
            let cn = &self.tree.nodes[child as usize];
            if cn.n == 0 || cn.terminal != Terminal::NonTerminal {
                // lc0: "Visits are created elsewhere, just need the collisions here."
                let max_visits = if visits == limit && max_limit > visits { max_limit } else { 0 };
                self.push_pick(child, self.path.len(), visits, true, max_visits);
            } else {
                self.path.push(child);
                self.split(child, visits, &mut max_limit);
            }
        }
    }

    /// Record a pick whose path is the first `len` nodes of `self.path`, plus `leaf` for a visit.
    fn push_pick(&mut self, node: u32, len: usize, visits: u32, collision: bool, max_visits: u32) {
        let start = self.pick_paths.len() as u32;
        self.pick_paths.extend_from_slice(&self.path[..len]);
        if !collision {
            self.pick_paths.push(node);
        }
        let path_len = self.pick_paths.len() as u32 - start;
        self.picks.push(Pick { node, path_start: start, path_len, visits, collision, max_visits });
    }

    /// Split `limit` visits of the node at the end of `self.path` (which holds them in flight) among
    /// its children (lc0 `PickNodesToExtendTask`, the `while (cur_limit > 0)` loop), record the
    /// first visit to each fresh or terminal child, and push the node's [`Level`].
    ///
    /// lc0 caches each edge's score in arrays and updates the chosen edge's; here each round scans
    /// the edges and children again, which gives the same scores (nothing but the chosen child's
    /// visits in flight changes between rounds) without per-edge arrays: most splits below the root
    /// carry one or two visits.
    fn split(&mut self, node: u32, mut limit: u32, max_limit: &mut u32) {
        let p = &self.params;
        let ply = self.path.len() - 1;
        let nd = self.tree.nodes[node as usize];
        let k = nd.num_edges as usize;
        let vstart = self.vtp.len();
        self.vtp.resize(vstart + k, (0, NONE));
        let dsc = if ply.is_multiple_of(2) { self.root_dsc } else { -self.root_dsc };
        let (absolute, fv) =
            if ply == 0 { (p.root_fpu_absolute, p.root_fpu_value) } else { (p.fpu_absolute, p.fpu_value) };
        let n = nd.n;
        let pm = p.cpuct_at(n) * if n > 2 { f64::from(n - 1).sqrt() } else { 1.0 };
        let fpu = if absolute { fv } else { (-nd.wl + dsc * f64::from(nd.d)) - fv * nd.vp.sqrt() };
        let filter = ply == 0 && !self.search_moves.is_empty();
        let edges = nd.edges as usize..nd.edges as usize + k;
        let mut end = 0u32;
        while limit > 0 {
            let (mut best, mut second) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
            let mut bi = usize::MAX;
            let (mut best_util, mut best_pol, mut best_started, mut best_child) = (0.0, 0.0, 0u32, NONE);
            let mut examined = 0u32;
            let mut can_exit = false;
            let mut c = nd.first_child;
            for (i, e) in self.tree.edges[edges.clone()].iter().enumerate() {
                let (child, started, util) = if c != NONE && self.tree.nodes[c as usize].index as usize == i {
                    let cn = &self.tree.nodes[c as usize];
                    let id = c;
                    c = cn.sibling;
                    (id, cn.n + cn.in_flight, if cn.n > 0 { cn.wl + dsc * f64::from(cn.d) } else { fpu })
                } else {
                    (NONE, 0, fpu)
                };
                if filter && !self.search_moves.contains(&e.mv) {
                    continue; // lc0: root moves outside root_move_filter_
                }
                let pol = f64::from(decompress_p(e.p));
                let s = util + pm * pol / f64::from(1 + started);
                examined += 1;
                if s > best {
                    second = best;
                    best = s;
                    bi = i;
                    (best_util, best_pol, best_started, best_child) = (util, pol, started, child);
                } else if s > second {
                    second = s;
                }
                if can_exit {
                    break;
                }
                if started == 0 {
                    // lc0: "One more loop will get 2 unvisited nodes, which is sufficient to ensure
                    // second best is correct" (edges are sorted by prior).
                    can_exit = true;
                }
            }
            if bi == usize::MAX {
                // No edge may be visited (cannot happen with a valid searchmoves list): the visits
                // left are a collision at this node, which holds them in flight.
                self.push_pick(node, self.path.len(), limit, true, 0);
                break;
            }
            let mut new_visits = if examined >= 2 {
                let mut est = u32::MAX;
                if best_util < second {
                    let n1 = f64::from(best_started + 1);
                    est = (best_pol * pm / (second - best_util) - n1 + 1.0).clamp(1.0, 1e9) as u32;
                }
                *max_limit = (*max_limit).min(est);
                limit.min(est)
            } else {
                limit
            };
            self.vtp[vstart + bi].0 += new_visits;
            limit -= new_visits;
            let child = if best_child != NONE { best_child } else { self.tree.child_or_insert(node, bi as u8) };
            self.vtp[vstart + bi].1 = child;
            let cn = &mut self.tree.nodes[child as usize];
            // lc0 node.cc `TryStartScoreUpdate`: fails on a node without visits already in flight
            // (waiting for the network, or picked earlier in this pass).
            let started = !(cn.n == 0 && cn.in_flight > 0);
            if started {
                cn.in_flight += 1;
                new_visits -= 1;
                if cn.n > 0 && cn.terminal == Terminal::NonTerminal {
                    cn.in_flight += new_visits;
                }
            }
            let leaf = cn.n == 0 || cn.terminal != Terminal::NonTerminal;
            if started && leaf {
                self.vtp[vstart + bi].0 -= 1;
                self.push_pick(child, self.path.len(), 1, false, 0);
            }
            if self.vtp[vstart + bi].0 > 0 {
                end = end.max(bi as u32 + 1);
            }
        }
        self.levels.push(Level { vtp: vstart as u32, end, next: 0 });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::cache::NNCache;
    use crate::params::{Params, Value};
    use crate::search::{PLANES_PER_POSITION, POLICY_SIZE};

    /// The defaults the Python side passes (the integration tests' `tests/data/search_params.txt`),
    /// with `minibatch` leaves per batch.
    fn search(minibatch: usize) -> Search {
        let pairs = include_str!("../tests/data/search_params.txt")
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| {
                let (k, v) = l.split_once(' ').unwrap();
                let value = match v {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    _ => v
                        .parse::<i64>()
                        .map(Value::Int)
                        .or_else(|_| v.parse::<f64>().map(Value::Float))
                        .unwrap_or_else(|_| Value::Str(v.to_string())),
                };
                (k.to_string(), value)
            })
            .collect();
        let params = Params { minibatch_size: minibatch, ..Params::from_values(pairs).unwrap() };
        Search::new(params, Arc::new(NNCache::new(0)))
    }

    /// Gather and apply (uniform logits, W/D/L 0.3/0.4/0.3) until the root has `nodes` visits.
    fn run(s: &mut Search, nodes: u64) {
        let mb = s.params.minibatch_size;
        let mut planes = vec![0f32; mb * PLANES_PER_POSITION];
        let logits = vec![0f32; mb * POLICY_SIZE];
        let wdl: Vec<f32> = (0..mb).flat_map(|_| [0.3f32, 0.4, 0.3]).collect();
        while u64::from(s.root_node().n) < nodes {
            let rows = s.gather(&mut planes, Some(nodes));
            if rows > 0 {
                s.apply(&logits[..rows * POLICY_SIZE], &wdl[..rows * 3], None).unwrap();
            }
        }
    }

    #[test]
    fn one_pass_splits_its_visits_among_several_leaves_and_holds_them_all_in_flight() {
        // lc0 `PickNodesToExtendTask`: the visits of one pass go to several leaves at once; each visit is
        // in flight on the root until it is backed up or undone.
        let mut s = search(64);
        s.set_position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", &[], false, false).unwrap();
        run(&mut s, 200);
        s.pick(32);
        assert_eq!(s.tree.nodes[s.root as usize].in_flight, 32);
        let visits: u32 = s.picks.iter().map(|p| p.visits).sum();
        assert_eq!(visits, 32, "every visit of the pass is a visit or in a collision");
        let leaves = s.picks.iter().filter(|p| !p.collision).count();
        assert!(leaves >= 16, "{leaves} leaves in one pass of 32 visits");
        // Every visit's path ends at its leaf, a fresh node holding that one visit.
        for p in s.picks.iter().filter(|p| !p.collision) {
            let path = &s.pick_paths[p.path_start as usize..(p.path_start + p.path_len) as usize];
            assert_eq!((path[0], *path.last().unwrap()), (s.root, p.node));
            assert_eq!(s.tree.nodes[p.node as usize].in_flight, 1);
        }
    }

    #[test]
    fn the_visits_beyond_the_first_to_a_terminal_are_one_collision_of_several_visits() {
        // Ra8 mates. Once the mate is a known terminal its Q (+1) alone beats every other score, so a pass
        // gives it all its visits: lc0 makes the first a visit (`NodeToProcess::Visit`) and the others one
        // collision with their count (`NodeToProcess::Collision`, `multivisit`), held in flight on the root.
        let mut s = search(16);
        s.set_position("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", &[], false, false).unwrap();
        run(&mut s, 100);
        let mate = s.root_edges().into_iter().find(|e| e.proven == Some(1)).expect("Ra8 is proven");
        let child = s.tree.child(s.root, mate.edge as u8);
        s.pick(16);
        let to_mate: Vec<(bool, u32)> =
            s.picks.iter().filter(|p| p.node == child).map(|p| (p.collision, p.visits)).collect();
        assert_eq!(to_mate, vec![(false, 1), (true, 15)]);
        assert_eq!(s.tree.nodes[child as usize].in_flight, 1, "the collision's visits are not on the terminal");
    }
}
