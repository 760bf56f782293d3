//! The `lichessbot._core` extension module: the search core (`lichessbot-core`) seen from Python.
//!
//! Arrays cross the boundary as numpy arrays without copies: the planes of a batch are written into
//! the caller's float32 `[B, 112, 8, 8]` array, the network's outputs are read from its float32
//! arrays. Long work (gathering a batch, applying outputs) runs with the GIL released. A Rust panic
//! is caught here and raised as `RuntimeError("search core panic: ...")`: it never takes the process
//! down.
//!
//! Rooms: `params` (the search parameters' boundary), `stats` (the search's statistics as frozen
//! values), `encode` (the input encoder and policy map for `eval`, `bench nn` and training).

mod encode;
mod params;
mod stats;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use lichessbot_core::cache::NNCache as CoreCache;
use lichessbot_core::encoding::{COMPACT_SIZE, InputRow};
use lichessbot_core::search::{PLANES_PER_POSITION, Search};
use lichessbot_core::tablebase::Tablebases as CoreTablebases;
use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray2, PyReadwriteArray4};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, PositionError};

use crate::stats::{EdgeValues, NodeInfo, RootEdge, RootNode, SearchCounters};

fn panic_message(err: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = err.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = err.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Run `f`, turning a panic into `RuntimeError`.
pub(crate) fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(e) => Err(PyRuntimeError::new_err(format!("search core panic: {}", panic_message(e)))),
    }
}

/// The NN cache shared by every search of the process: `NNCache(capacity)`; `capacity` 0 disables it.
#[pyclass(name = "NNCache", module = "lichessbot._core", frozen)]
struct PyNNCache {
    inner: Arc<CoreCache>,
}

#[pymethods]
impl PyNNCache {
    #[new]
    fn new(capacity: usize) -> PyNNCache {
        PyNNCache { inner: Arc::new(CoreCache::new(capacity)) }
    }

    /// Drop every entry and reset the counters.
    fn clear(&self) {
        self.inner.clear();
    }

    /// (entries, hits, misses).
    fn stats(&self) -> (usize, u64, u64) {
        self.inner.stats()
    }

    #[getter]
    fn capacity(&self) -> usize {
        self.inner.capacity()
    }

    fn __len__(&self) -> usize {
        self.inner.stats().0
    }
}

/// The Syzygy tables probed inside the search, shared by every search of the process:
/// `Tablebases(dirs, max_pieces=0)` (0: the tables' maximum). Raises ValueError naming the directory
/// that does not exist or holds no tables. A failing probe disables probing; `take_failure()` returns
/// its message once, for the log.
#[pyclass(name = "Tablebases", module = "lichessbot._core", frozen)]
struct PyTablebases {
    inner: Arc<CoreTablebases>,
}

#[pymethods]
impl PyTablebases {
    #[new]
    #[pyo3(signature = (dirs, max_pieces=0))]
    fn new(dirs: Vec<String>, max_pieces: usize) -> PyResult<PyTablebases> {
        guard(|| {
            let inner = CoreTablebases::open(&dirs, max_pieces).map_err(PyValueError::new_err)?;
            Ok(PyTablebases { inner: Arc::new(inner) })
        })
    }

    /// The most pieces a probed position may have.
    #[getter]
    fn max_pieces(&self) -> usize {
        self.inner.max_pieces()
    }

    /// False once a probe failed.
    #[getter]
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    /// Successful probes of every search of the process.
    #[getter]
    fn hits(&self) -> u64 {
        self.inner.hits()
    }

    /// The first probe failure, once; None otherwise.
    fn take_failure(&self) -> Option<String> {
        self.inner.take_failure()
    }

    /// WDL of a position (side to move: -2 loss, -1 blessed loss, 0 draw, 1 cursed win, 2 win)
    /// assuming it was reached by a zeroing move; None when it is not in the tables. For tests.
    fn probe_wdl_after_zeroing(&self, fen: &str) -> PyResult<Option<i32>> {
        let pos = parse_position(fen)?;
        Ok(guard(|| Ok(self.inner.probe_wdl_after_zeroing(&pos)))?.map(|w| w as i32))
    }
}

fn parse_position(fen: &str) -> PyResult<Chess> {
    let setup: Fen = fen.parse().map_err(|e| PyValueError::new_err(format!("invalid FEN {fen:?}: {e}")))?;
    setup
        .into_position(CastlingMode::Standard)
        .or_else(PositionError::ignore_invalid_ep_square)
        .map_err(|e| PyValueError::new_err(format!("illegal position {fen:?}: {e}")))
}

/// One game's search tree: `SearchCore(params: dict, cache: NNCache)`, `params` holding exactly the
/// keys of `lichessbot_core::params::KEYS` (see `params::params_from`). Not thread-safe by itself: the
/// Python `Searcher` drives it from one thread at a time.
#[pyclass(name = "SearchCore", module = "lichessbot._core")]
struct PySearchCore {
    search: Search,
}

#[pymethods]
impl PySearchCore {
    #[new]
    fn new(params: &Bound<'_, PyDict>, cache: &PyNNCache) -> PyResult<PySearchCore> {
        Ok(PySearchCore { search: Search::new(params::params_from(params)?, cache.inner.clone()) })
    }

    /// Set the position to search (the game from `fen` plus UCI `moves`); returns the reused visits.
    /// Raises ValueError for an invalid FEN, illegal position or illegal move.
    #[pyo3(signature = (fen, moves, chess960=false, ponder=false))]
    fn set_position(
        &mut self,
        py: Python<'_>,
        fen: &str,
        moves: Vec<String>,
        chess960: bool,
        ponder: bool,
    ) -> PyResult<u32> {
        let search = &mut self.search;
        guard(|| py.detach(|| search.set_position(fen, &moves, chess960, ponder)).map_err(PyValueError::new_err))
    }

    /// Let the search visit only `moves` (UCI) at the root; an empty list lifts the restriction. lc0's
    /// `go searchmoves`; cleared by `set_position`. Raises ValueError naming a move that is not legal.
    fn set_search_moves(&mut self, moves: Vec<String>) -> PyResult<()> {
        let search = &mut self.search;
        guard(|| search.set_search_moves(&moves).map_err(PyValueError::new_err))
    }

    /// Probe `tables` (a `Tablebases`, or None for no probing) at expansion from the next position on.
    #[pyo3(signature = (tables=None))]
    fn set_tablebases(&mut self, tables: Option<&PyTablebases>) {
        self.search.set_tablebases(tables.map(|t| t.inner.clone()));
    }

    /// Drop the tree.
    fn new_game(&mut self) {
        self.search.new_game();
    }

    /// True while the root has not been evaluated.
    fn root_needs_eval(&self) -> bool {
        self.search.root_needs_eval()
    }

    /// Gather one batch into `planes` (float32 `[M, 112, 8, 8]`, C-contiguous, M >= minibatch);
    /// returns the rows written. `nodes_limit`: root visits not to pass (None: no limit).
    #[pyo3(signature = (planes, nodes_limit=None))]
    fn gather(
        &mut self,
        py: Python<'_>,
        mut planes: PyReadwriteArray4<'_, f32>,
        nodes_limit: Option<u64>,
    ) -> PyResult<usize> {
        let out = planes
            .as_slice_mut()
            .map_err(|_| PyValueError::new_err("planes must be a C-contiguous float32 [M, 112, 8, 8] array"))?;
        if out.len() < PLANES_PER_POSITION {
            return Err(PyValueError::new_err("planes must hold at least one position"));
        }
        let search = &mut self.search;
        guard(|| Ok(py.detach(|| search.gather(out, nodes_limit))))
    }

    /// Gather one batch in the compact input form into `inputs` (uint8 `[M, 1344]`, C-contiguous,
    /// M >= minibatch): per position 112 masks (little-endian u64: bit `r*8 + f` of plane p set where
    /// the plane holds its value) then 112 values (little-endian f32), lc0's `InputPlane` pairs
    /// (src/neural/network.h); the network's ONNX prologue expands them (lichessbot/neural/compact.py).
    /// Returns the rows written. Raises ValueError for another shape.
    #[pyo3(signature = (inputs, nodes_limit=None))]
    fn gather_compact(
        &mut self,
        py: Python<'_>,
        mut inputs: PyReadwriteArray2<'_, u8>,
        nodes_limit: Option<u64>,
    ) -> PyResult<usize> {
        let out = inputs
            .as_slice_mut()
            .map_err(|_| PyValueError::new_err("inputs must be a C-contiguous uint8 [M, 1344] array"))?;
        if out.len() < COMPACT_SIZE || out.len() % COMPACT_SIZE != 0 {
            return Err(PyValueError::new_err("inputs must be uint8 [M, 1344] with M >= 1"));
        }
        let search = &mut self.search;
        guard(|| Ok(py.detach(|| search.gather_into(InputRow::Compact(out), nodes_limit))))
    }

    /// Back up the network's outputs for the oldest gathered batch: logits float32 `[B, 1858]`, wdl
    /// float32 `[B, 3]`, mlh float32 `[B]` or None. Raises ValueError when nothing is pending or the
    /// arrays are too short.
    #[pyo3(signature = (logits, wdl, mlh=None))]
    fn apply(
        &mut self,
        py: Python<'_>,
        logits: PyReadonlyArray2<'_, f32>,
        wdl: PyReadonlyArray2<'_, f32>,
        mlh: Option<PyReadonlyArray1<'_, f32>>,
    ) -> PyResult<()> {
        let lg = logits.as_slice().map_err(|_| PyValueError::new_err("logits must be C-contiguous float32"))?;
        let w = wdl.as_slice().map_err(|_| PyValueError::new_err("wdl must be C-contiguous float32"))?;
        let m = match &mlh {
            Some(a) => Some(a.as_slice().map_err(|_| PyValueError::new_err("mlh must be C-contiguous float32"))?),
            None => None,
        };
        let search = &mut self.search;
        guard(|| py.detach(|| search.apply(lg, w, m)).map_err(PyValueError::new_err))
    }

    /// Leaves gathered and waiting for the network.
    fn pending_leaves(&self) -> usize {
        self.search.pending_leaves()
    }

    /// The root's statistics (wl and m from the view of the player who moved into the root).
    fn root_info(&self) -> RootNode {
        let r = self.search.root_node();
        RootNode { n: r.n, wl: r.wl, d: r.d, m: r.m, visited_policy: r.vp, in_flight: r.in_flight }
    }

    /// Statistics of every root edge, best first (lc0's ranking).
    fn root_edges(&self) -> Vec<RootEdge> {
        self.search.root_edges().into_iter().map(RootEdge::from).collect()
    }

    /// UCI strings of the root edges in edge order (python-chess spelling).
    fn root_moves(&self) -> Vec<String> {
        self.search.root_move_strings()
    }

    /// lc0 policy index of each root edge (edge order; no transform).
    fn root_nn_indices(&self) -> Vec<i32> {
        self.search.root_nn_indices()
    }

    /// Value, mate and PV (at most `max_pv` moves) of root edge `edge`, root side to move's view.
    #[pyo3(signature = (edge, max_pv=100))]
    fn edge_values(&self, edge: usize, max_pv: usize) -> EdgeValues {
        let (wl, d, mate, pv) = self.search.edge_values(edge, max_pv);
        EdgeValues { wl, d, mate, pv }
    }

    /// The counters of the current search.
    fn counters(&self) -> SearchCounters {
        let s = &self.search;
        SearchCounters {
            playouts: s.playouts,
            depth_sum: s.depth_sum,
            seldepth: s.seldepth,
            nn_evals: s.nn_evals,
            cache_hits: s.cache_hits,
            tbhits: s.tbhits,
        }
    }

    /// (nodes, edges) in the arenas.
    fn tree_size(&self) -> (usize, usize) {
        (self.search.tree.nodes.len(), self.search.tree.edges.len())
    }

    /// The node reached from the root by UCI `moves`; None when it is not in the tree.
    fn node_info(&self, moves: Vec<String>) -> Option<NodeInfo> {
        use lichessbot_core::tree::{NONE, NodeState, Terminal, unpack_move};
        let (node, pos) = self.search.node_at(&moves)?;
        let tree = &self.search.tree;
        let nd = &tree.nodes[node as usize];
        let terminal = match nd.terminal {
            Terminal::EndOfGame => "end",
            Terminal::TwoFold => "twofold",
            Terminal::Tablebase => "tablebase",
            Terminal::NonTerminal => "",
        };
        let mode = self.search.castling_mode();
        let children = tree
            .edges_of(node)
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                let c = tree.child(node, i as u8);
                (c != NONE).then(|| (unpack_move(e.mv, &pos).to_uci(mode).to_string(), tree.nodes[c as usize].n))
            })
            .collect();
        Some(NodeInfo {
            n: nd.n,
            wl: nd.wl,
            d: nd.d,
            m: nd.m,
            terminal: terminal.to_string(),
            expanded: nd.state == NodeState::Expanded && nd.num_edges > 0,
            children,
        })
    }

    /// Two-fold draws scored inside the tree below the root.
    fn count_twofold(&self) -> usize {
        self.search.count_twofold()
    }
}

/// Panic inside the boundary guard (for tests: a panic must surface as RuntimeError, not kill Python).
#[pyfunction]
fn _panic_for_tests() -> PyResult<()> {
    guard(|| panic!("deliberate panic for the tests"))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNNCache>()?;
    m.add_class::<PySearchCore>()?;
    m.add_class::<PyTablebases>()?;
    m.add_class::<RootEdge>()?;
    m.add_class::<RootNode>()?;
    m.add_class::<SearchCounters>()?;
    m.add_class::<EdgeValues>()?;
    m.add_class::<NodeInfo>()?;
    m.add_function(wrap_pyfunction!(encode::encode_positions, m)?)?;
    m.add_function(wrap_pyfunction!(encode::encode_plies, m)?)?;
    m.add("POLICY_MOVES", PyTuple::new(m.py(), encode::policy_moves())?)?;
    m.add("INPUT_FORMATS", PyTuple::new(m.py(), lichessbot_core::encoding::INPUT_FORMATS)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    Ok(())
}
