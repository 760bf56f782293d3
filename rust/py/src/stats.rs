//! The search's statistics as frozen values with named fields (`#[pyclass(frozen, get_all)]`), typed
//! in `lichessbot/_core.pyi`. Values are copied out of the tree when they are asked for: reading one
//! never touches the live tree.

use pyo3::prelude::*;

/// One root edge's statistics (lc0 src/search/classic/search.cc `GetVerboseStats`).
#[pyclass(name = "RootEdge", module = "lichessbot._core", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct RootEdge {
    /// Index of the edge at the root (edge order, stable while the root stays).
    pub edge: usize,
    /// Visits N of the child.
    pub n: u32,
    /// Prior P (lc0's 16-bit storage).
    pub p: f32,
    /// Q of the root side to move: W - L + DrawScore * D (0 without visits).
    pub q: f64,
    /// Exploration term U = cpuct(N) * sqrt(max(N - 1, 1)) * P / (1 + N_i + in_flight_i).
    pub u: f64,
    /// Draw probability D of the child.
    pub d: f32,
    /// Moves left M of the child (plies).
    pub m: f32,
    /// W - L of the child, root side to move's view.
    pub wl: f64,
    /// Visits in flight (virtual loss) through the child.
    pub in_flight: u32,
    /// +1 proven win, 0 proven draw, -1 proven loss (root side's view); None when not proven.
    pub proven: Option<i8>,
    /// The child's first value (None without a visit).
    pub v0: Option<f32>,
}

#[pymethods]
impl RootEdge {
    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}

impl From<lichessbot_core::search::RootEdge> for RootEdge {
    fn from(e: lichessbot_core::search::RootEdge) -> RootEdge {
        RootEdge {
            edge: e.edge,
            n: e.n,
            p: e.p,
            q: e.q,
            u: e.u,
            d: e.d,
            m: e.m,
            wl: e.wl,
            in_flight: e.in_flight,
            proven: e.proven,
            v0: e.v0,
        }
    }
}

/// The root node's statistics. `wl` and `m` are from the view of the player who moved into the root
/// (lc0's node view: the opponent of the side to move).
#[pyclass(name = "RootNode", module = "lichessbot._core", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct RootNode {
    /// Visits N, reused ones included.
    pub n: u32,
    /// W - L from the view of the player who moved into the root.
    pub wl: f64,
    /// Draw probability D.
    pub d: f32,
    /// Moves left M (plies).
    pub m: f32,
    /// Sum of the priors of the visited edges (lc0's visited policy, for FPU reduction).
    pub visited_policy: f64,
    /// Visits in flight (virtual loss).
    pub in_flight: u32,
}

#[pymethods]
impl RootNode {
    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}

/// The counters of the current search (since `set_position`).
#[pyclass(name = "SearchCounters", module = "lichessbot._core", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct SearchCounters {
    /// Playouts of this search (reused visits not counted).
    pub playouts: u64,
    /// Sum of the playouts' depths, lc0's (the nodes of each path, the root being 1): lc0's depth =
    /// depth_sum / playouts (integer division).
    pub depth_sum: u64,
    /// Deepest playout, lc0's (the root is 1).
    pub seldepth: u32,
    /// Positions sent to the network.
    pub nn_evals: u64,
    /// NN cache hits.
    pub cache_hits: u64,
    /// Syzygy probes that made a node terminal (UCI tbhits).
    pub tbhits: u64,
}

#[pymethods]
impl SearchCounters {
    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}

/// The value and principal variation of one root edge, from the root side to move's view.
#[pyclass(name = "EdgeValues", module = "lichessbot._core", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct EdgeValues {
    /// W - L (the root's own value while the edge has no visits).
    pub wl: f64,
    /// Draw probability D.
    pub d: f64,
    /// Moves to mate (> 0: the side to move mates, < 0: is mated) for a proven child; None otherwise
    /// (a tablebase win is not a mate).
    pub mate: Option<i64>,
    /// Principal variation as UCI strings, the edge's move first.
    pub pv: Vec<String>,
}

#[pymethods]
impl EdgeValues {
    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}

/// A node of the tree reached from the root by some moves (for tests and tools).
#[pyclass(name = "NodeInfo", module = "lichessbot._core", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct NodeInfo {
    /// Visits N.
    pub n: u32,
    /// W - L from the view of the player who moved into the node.
    pub wl: f64,
    /// Draw probability D.
    pub d: f32,
    /// Moves left M (plies).
    pub m: f32,
    /// "" (not terminal), "end" (mate, stalemate, draw by rule), "twofold" or "tablebase".
    pub terminal: String,
    /// True once the node has edges.
    pub expanded: bool,
    /// (UCI move, visits) of every child in the tree, in edge order.
    pub children: Vec<(String, u32)>,
}

#[pymethods]
impl NodeInfo {
    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}
