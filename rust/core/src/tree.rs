//! The search tree as two arenas: [`Node`]s (56 bytes) and [`Edge`]s (4 bytes: a packed move and a
//! 16-bit prior), indexed by `u32`. No heap object per node or edge.
//!
//! Layout follows lc0's classic tree (lc0 src/search/classic/node.h): a node owns a contiguous run of
//! edges (its legal moves, sorted by prior once evaluated), and its visited children form a list
//! (`first_child`, `sibling`) in edge order. Values follow lc0: `wl` and `m` are from the view of the
//! player who moved into the node; `d` has no side. Bounds `lower`/`upper` (-1 loss, 0 draw, +1 win,
//! same view) implement sticky endgames (lc0 search.cc `MaybeSetBounds`).
//!
//! There are no parent links: the search keeps the path of every descent.

use shakmaty::{Chess, Move, Position, Role, Square};

/// "No node" in `first_child` / `sibling`.
pub const NONE: u32 = u32::MAX;

/// Where a node is in its expansion (one byte in [`Node`]).
#[repr(u8)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NodeState {
    /// Created by selection, not yet expanded.
    #[default]
    Fresh = 0,
    /// Legal moves stored, waiting for the network (a second visit is a collision).
    Pending = 1,
    /// Edges carry priors (or the node is terminal).
    Expanded = 2,
}

/// Why a node's value is exact (lc0 src/search/classic/node.h `Node::Terminal`; one byte in [`Node`]).
#[repr(u8)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Terminal {
    /// Not terminal.
    #[default]
    NonTerminal = 0,
    /// Game over (mate, stalemate, insufficient material, rule 50, threefold) or proven by bounds.
    EndOfGame = 1,
    /// A two-fold repetition inside the tree, scored as a draw (lc0 TwoFoldDraws).
    TwoFold = 2,
    /// A position found in the Syzygy tables (lc0 `Node::Terminal::Tablebase`), or proven by bounds from one.
    Tablebase = 3,
}

/// One legal move of a node: `mv` packed by [`pack_move`], `p` the prior compressed by [`compress_p`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Edge {
    pub mv: u16,
    pub p: u16,
}

/// One position of the tree. See the module docs for the views of `wl`, `d`, `m`.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    /// Average W - L of the player who moved into this node.
    pub wl: f64,
    /// Sum of the priors of the edges whose child has a completed visit (lc0 `GetVisitedPolicy`).
    pub vp: f64,
    /// Average draw probability.
    pub d: f32,
    /// Average moves left (plies).
    pub m: f32,
    /// The first value seen here (network or terminal), mover's view (VerboseMoveStats "V").
    pub v0: f32,
    /// Completed visits.
    pub n: u32,
    /// Visits in flight (virtual loss on the U denominator).
    pub in_flight: u32,
    pub first_child: u32,
    pub sibling: u32,
    /// First edge in the edge arena.
    pub edges: u32,
    pub num_edges: u8,
    /// Index of the edge of the parent that leads here.
    pub index: u8,
    pub terminal: Terminal,
    pub state: NodeState,
    pub lower: i8,
    pub upper: i8,
    /// For two-fold terminals: plies back to the first occurrence.
    pub cycle: u8,
    /// lc0's repetition count of this position (capped at 255).
    pub reps: u8,
}

impl Node {
    /// lc0 node.cc `MakeTerminal`: exact values and bounds; no edges.
    pub(crate) fn make_terminal(&mut self, wl: f64, d: f32, m: f32) {
        self.terminal = Terminal::EndOfGame;
        self.state = NodeState::Expanded;
        self.num_edges = 0;
        self.wl = wl;
        self.d = d;
        self.m = m;
        self.v0 = wl as f32;
        let b = if wl > 0.0 {
            1
        } else if wl < 0.0 {
            -1
        } else {
            0
        };
        self.lower = b;
        self.upper = b;
    }

    /// lc0 node.cc `MakeNotTerminal` for a terminal without edges (a two-fold draw): an unvisited node
    /// again, to be expanded by the next pick; its place among its siblings and its repetition count stay.
    pub(crate) fn make_not_terminal(&mut self) {
        *self = Node { sibling: self.sibling, reps: self.reps, in_flight: self.in_flight, ..Node::new(self.index) };
    }

    fn new(index: u8) -> Node {
        Node {
            wl: 0.0,
            vp: 0.0,
            d: 0.0,
            m: 0.0,
            v0: 0.0,
            n: 0,
            in_flight: 0,
            first_child: NONE,
            sibling: NONE,
            edges: 0,
            num_edges: 0,
            index,
            terminal: Terminal::NonTerminal,
            state: NodeState::Fresh,
            lower: -1,
            upper: 1,
            cycle: 0,
            reps: 0,
        }
    }
}

/// lc0's 16-bit prior (lc0 src/search/classic/node.cc `Edge::SetP`): the float's bits, rounded, with
/// the exponent offset `3 << 28` removed, shifted right by 12. `p` must lie in [0, 1].
#[inline]
pub fn compress_p(p: f32) -> u16 {
    const ROUNDINGS: i32 = (1 << 11) - (3 << 28);
    let tmp = (p.to_bits() as i32).wrapping_add(ROUNDINGS);
    if tmp < 0 { 0 } else { (tmp >> 12) as u16 }
}

/// The prior stored by [`compress_p`] (lc0 node.cc `Edge::GetP`); 0 stays exactly 0 here (lc0 reads
/// it back as 2^-31).
#[inline]
pub fn decompress_p(p: u16) -> f32 {
    if p == 0 { 0.0 } else { f32::from_bits(((p as u32) << 12) | (3 << 28)) }
}

/// A move as 15 bits: from (6), to (6), promotion role (3; 0 none). Castling is stored as the king
/// taking its own rook (shakmaty's `Move::Castle { king, rook }`, lc0's convention).
#[inline]
pub fn pack_move(m: &Move) -> u16 {
    let (from, to) = match *m {
        Move::Castle { king, rook } => (king, rook),
        _ => (m.from().expect("no drops in chess"), m.to()),
    };
    let promo = m.promotion().map_or(0u16, |r| r as u16);
    u16::from(from) | (u16::from(to) << 6) | (promo << 12)
}

/// The from square, to square (king takes rook for castling) and promotion of a packed move.
#[inline]
pub fn unpack_squares(code: u16) -> (Square, Square, Option<Role>) {
    let from = Square::new(u32::from(code & 63));
    let to = Square::new(u32::from((code >> 6) & 63));
    let promo = match (code >> 12) & 7 {
        0 => None,
        r => Role::try_from(r as u8).ok(),
    };
    (from, to, promo)
}

/// The shakmaty move of a packed move, legal in `pos` (the position where it was generated).
#[inline]
pub fn unpack_move(code: u16, pos: &Chess) -> Move {
    let (from, to, promotion) = unpack_squares(code);
    let board = pos.board();
    let role = board.role_at(from).expect("a packed move starts on a piece");
    if role == Role::King && board.by_color(pos.turn()).contains(to) {
        return Move::Castle { king: from, rook: to };
    }
    let capture = board.role_at(to);
    if role == Role::Pawn && from.file() != to.file() && capture.is_none() {
        return Move::EnPassant { from, to };
    }
    Move::Normal { role, from, capture, to, promotion }
}

/// The two arenas.
#[derive(Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

impl Tree {
    /// A new, unlinked node; returns its index.
    #[inline]
    pub fn new_node(&mut self, index: u8) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(Node::new(index));
        id
    }

    /// Drop everything.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.edges.clear();
    }

    /// The edges of `node`.
    #[inline]
    pub fn edges_of(&self, node: u32) -> &[Edge] {
        let nd = &self.nodes[node as usize];
        &self.edges[nd.edges as usize..nd.edges as usize + nd.num_edges as usize]
    }

    /// Walk `node`'s children (kept in edge order) for edge `i`: (the child before the place of `i`,
    /// the child of `i` or NONE).
    #[inline]
    fn locate(&self, node: u32, i: u8) -> (u32, u32) {
        let mut prev = NONE;
        let mut c = self.nodes[node as usize].first_child;
        while c != NONE {
            let cn = &self.nodes[c as usize];
            if cn.index == i {
                return (prev, c);
            }
            if cn.index > i {
                break;
            }
            prev = c;
            c = cn.sibling;
        }
        (prev, NONE)
    }

    /// The child reached by edge `i` of `node`, or NONE.
    pub fn child(&self, node: u32, i: u8) -> u32 {
        self.locate(node, i).1
    }

    /// The child of `node` through edge `i`, created (and linked in edge order) if needed.
    pub fn child_or_insert(&mut self, node: u32, i: u8) -> u32 {
        let (prev, found) = self.locate(node, i);
        if found != NONE {
            return found;
        }
        let c = if prev == NONE { self.nodes[node as usize].first_child } else { self.nodes[prev as usize].sibling };
        let id = self.new_node(i);
        self.nodes[id as usize].sibling = c;
        if prev == NONE {
            self.nodes[node as usize].first_child = id;
        } else {
            self.nodes[prev as usize].sibling = id;
        }
        id
    }

    /// Allocate `n` edges at the end of the edge arena for `node`.
    #[inline]
    pub fn alloc_edges(&mut self, node: u32, moves: impl Iterator<Item = u16>) {
        let start = self.edges.len() as u32;
        self.edges.extend(moves.map(|mv| Edge { mv, p: 0 }));
        let nd = &mut self.nodes[node as usize];
        nd.edges = start;
        nd.num_edges = (self.edges.len() as u32 - start) as u8;
    }

    /// Number of nodes in the subtree of `root`.
    pub fn count(&self, root: u32) -> usize {
        let mut total = 0;
        let mut stack = vec![root];
        while let Some(x) = stack.pop() {
            total += 1;
            let mut c = self.nodes[x as usize].first_child;
            while c != NONE {
                stack.push(c);
                c = self.nodes[c as usize].sibling;
            }
        }
        total
    }

    /// Keep only the subtree of `root`: copy it into fresh arenas (depth first) and drop the rest,
    /// as lc0 frees the rest of the tree on a new root (lc0 node.cc `NodeTree::TrimTreeAtHead`).
    /// Returns the new index of `root` (always 0).
    pub fn compact(&mut self, root: u32) -> u32 {
        let count = self.count(root);
        let mut nodes = Vec::with_capacity(count);
        let mut edges = Vec::new();
        // (old index, new index) pairs still to copy the children of.
        let mut stack: Vec<(u32, u32)> = Vec::new();
        let copy = |old: u32, nodes: &mut Vec<Node>, edges: &mut Vec<Edge>| -> u32 {
            let mut nd = self.nodes[old as usize];
            let start = edges.len() as u32;
            edges.extend_from_slice(&self.edges[nd.edges as usize..nd.edges as usize + nd.num_edges as usize]);
            nd.edges = start;
            nd.first_child = NONE;
            nd.sibling = NONE;
            nodes.push(nd);
            (nodes.len() - 1) as u32
        };
        let new_root = copy(root, &mut nodes, &mut edges);
        stack.push((root, new_root));
        while let Some((old, new)) = stack.pop() {
            let mut prev = NONE;
            let mut c = self.nodes[old as usize].first_child;
            while c != NONE {
                let nc = copy(c, &mut nodes, &mut edges);
                if prev == NONE {
                    nodes[new as usize].first_child = nc;
                } else {
                    nodes[prev as usize].sibling = nc;
                }
                prev = nc;
                stack.push((c, nc));
                c = self.nodes[c as usize].sibling;
            }
        }
        self.nodes = nodes;
        self.edges = edges;
        new_root
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    #[test]
    fn prior_compression_is_lc0s() {
        assert_eq!(decompress_p(compress_p(0.0)), 0.0);
        assert_eq!(decompress_p(compress_p(1.0)), 1.0);
        assert_eq!(decompress_p(compress_p(0.5)), 0.5);
        for &p in &[0.123_456_f32, 0.01, 0.000_3, 0.77] {
            let q = decompress_p(compress_p(p));
            assert!((q - p).abs() <= p * 2f32.powi(-11), "{p} -> {q}");
        }
        // Monotone: a larger prior never compresses to a smaller code.
        let mut last = 0;
        for k in 0..10_000 {
            let c = compress_p(k as f32 / 10_000.0);
            assert!(c >= last);
            last = c;
        }
    }

    #[test]
    fn packed_moves_round_trip_in_a_position() {
        let fen: Fen = "r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1".parse().unwrap();
        let pos: Chess = fen.into_position(CastlingMode::Standard).unwrap();
        let moves = pos.legal_moves();
        assert!(moves.iter().any(|m| matches!(m, Move::EnPassant { .. })));
        assert!(moves.iter().any(|m| matches!(m, Move::Castle { .. })));
        assert!(moves.iter().any(|m| m.promotion().is_some()));
        for m in &moves {
            assert_eq!(&unpack_move(pack_move(m), &pos), m);
        }
    }

    #[test]
    fn children_stay_in_edge_order_and_compaction_keeps_a_subtree() {
        let mut t = Tree::default();
        let root = t.new_node(0);
        t.alloc_edges(root, [1u16, 2, 3, 4].into_iter());
        let c2 = t.child_or_insert(root, 2);
        let c0 = t.child_or_insert(root, 0);
        let c3 = t.child_or_insert(root, 3);
        assert_eq!(t.child_or_insert(root, 2), c2);
        assert_eq!((t.child(root, 0), t.child(root, 1), t.child(root, 3)), (c0, NONE, c3));
        t.alloc_edges(c2, [7u16, 8].into_iter());
        let g = t.child_or_insert(c2, 1);
        t.nodes[g as usize].n = 5;
        let r = t.compact(c2);
        assert_eq!(t.nodes.len(), 2);
        assert_eq!(t.edges_of(r).iter().map(|e| e.mv).collect::<Vec<_>>(), vec![7, 8]);
        assert_eq!(t.nodes[t.child(r, 1) as usize].n, 5);
    }
}
