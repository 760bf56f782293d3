//! The `lichessbot._core` extension module: the search core (`lichessbot-core`) seen from Python.
//!
//! Arrays cross the boundary as numpy arrays without copies: the planes of a batch are written into
//! the caller's float32 `[B, 112, 8, 8]` array, the network's outputs are read from its float32
//! arrays. Long work (gathering a batch, applying outputs) runs with the GIL released. A Rust panic
//! is caught here and raised as `RuntimeError("search core panic: ...")`: it never takes the process
//! down.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use lichessbot_core::cache::NNCache as CoreCache;
use lichessbot_core::encoding::{self, Fill};
use lichessbot_core::params::Params;
use lichessbot_core::policy;
use lichessbot_core::position::{PosInfo, replay_game};
use lichessbot_core::search::{PLANES_PER_POSITION, Search};
use lichessbot_core::tablebase::Tablebases as CoreTablebases;
use numpy::{PyArray3, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray4};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position, PositionError};

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
fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
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

macro_rules! getter {
    ($name:ident, $t:ty) => {
        fn $name(d: &Bound<'_, PyDict>, key: &str, default: $t) -> PyResult<$t> {
            match d.get_item(key)? {
                Some(v) if !v.is_none() => v.extract::<$t>().map_err(|e| PyValueError::new_err(format!("{key}: {e}"))),
                _ => Ok(default),
            }
        }
    };
}
getter!(get_f64, f64);
getter!(get_u32, u32);
getter!(get_usize, usize);
getter!(get_bool, bool);
getter!(get_string, String);

fn parse_fill(s: &str) -> PyResult<Fill> {
    match s {
        "fen_only" => Ok(Fill::FenOnly),
        "no" => Ok(Fill::No),
        "always" => Ok(Fill::Always),
        _ => Err(PyValueError::new_err(format!("unknown history fill mode {s:?} (expected fen_only, no, always)"))),
    }
}

fn check_format(f: u32) -> PyResult<u32> {
    if encoding::INPUT_FORMATS.contains(&f) {
        Ok(f)
    } else {
        Err(PyValueError::new_err(format!(
            "unknown lc0 input format {f} (expected one of {:?})",
            encoding::INPUT_FORMATS
        )))
    }
}

/// Search parameters from a dict with the keys of `lichessbot.config.SearchParams` plus
/// `input_format` and `history_fill`; missing keys take lc0's defaults.
fn params_from(d: &Bound<'_, PyDict>) -> PyResult<Params> {
    let def = Params::default();
    let fpu_strategy: String = get_string(d, "fpu_strategy", "reduction".to_string())?;
    let fpu_absolute = fpu_strategy == "absolute";
    let fpu_value: f64 = get_f64(d, "fpu_value", def.fpu_value)?;
    let at_root: String = get_string(d, "fpu_strategy_at_root", "same".to_string())?;
    let (root_fpu_absolute, root_fpu_value) = if at_root == "same" {
        (fpu_absolute, fpu_value)
    } else {
        (at_root == "absolute", get_f64(d, "fpu_value_at_root", 1.0)?)
    };
    let minibatch_size: usize = get_usize(d, "minibatch_size", def.minibatch_size)?;
    if minibatch_size == 0 {
        return Err(PyValueError::new_err("minibatch_size must be >= 1"));
    }
    let fill: String = get_string(d, "history_fill", "fen_only".to_string())?;
    Ok(Params {
        cpuct: get_f64(d, "cpuct", def.cpuct)?,
        cpuct_base: get_f64(d, "cpuct_base", def.cpuct_base)?,
        cpuct_factor: get_f64(d, "cpuct_factor", def.cpuct_factor)?,
        fpu_absolute,
        fpu_value,
        root_fpu_absolute,
        root_fpu_value,
        policy_temperature: get_f64(d, "policy_temperature", def.policy_temperature)?,
        minibatch_size,
        max_out_of_order_evals_factor: get_f64(d, "max_out_of_order_evals_factor", def.max_out_of_order_evals_factor)?,
        max_collision_visits: get_u32(d, "max_collision_visits", def.max_collision_visits)?,
        max_collision_visits_scaling_start: get_u32(
            d,
            "max_collision_visits_scaling_start",
            def.max_collision_visits_scaling_start,
        )?,
        max_collision_visits_scaling_end: get_u32(
            d,
            "max_collision_visits_scaling_end",
            def.max_collision_visits_scaling_end,
        )?,
        max_collision_visits_scaling_power: get_f64(
            d,
            "max_collision_visits_scaling_power",
            def.max_collision_visits_scaling_power,
        )?,
        two_fold_draws: get_bool(d, "two_fold_draws", def.two_fold_draws)?,
        sticky_endgames: get_bool(d, "sticky_endgames", def.sticky_endgames)?,
        draw_score: get_f64(d, "draw_score", def.draw_score)?,
        input_format: check_format(get_u32(d, "input_format", def.input_format)?)?,
        fill: parse_fill(&fill)?,
    })
}

/// One game's search tree: `SearchCore(params: dict, cache: NNCache)`. Not thread-safe by itself:
/// the Python `Searcher` drives it from one thread at a time.
#[pyclass(name = "SearchCore", module = "lichessbot._core")]
struct PySearchCore {
    search: Search,
}

type RootEdgeTuple = (usize, u32, f32, f64, f64, f32, f32, f64, u32, Option<i8>, Option<f32>);

#[pymethods]
impl PySearchCore {
    #[new]
    fn new(params: &Bound<'_, PyDict>, cache: &PyNNCache) -> PyResult<PySearchCore> {
        Ok(PySearchCore { search: Search::new(params_from(params)?, cache.inner.clone()) })
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

    /// (N, wl, d, m, visited policy, in flight) of the root; wl and m from the view of the player who
    /// moved into the root (lc0's node view).
    fn root_info(&self) -> (u32, f64, f32, f32, f64, u32) {
        let r = self.search.root_node();
        (r.n, r.wl, r.d, r.m, r.vp, r.in_flight)
    }

    /// Root edges best first: (edge, n, p, q, u, d, m, wl, in_flight, proven, v0) each.
    fn root_edges(&self) -> Vec<RootEdgeTuple> {
        self.search
            .root_edges()
            .into_iter()
            .map(|e| (e.edge, e.n, e.p, e.q, e.u, e.d, e.m, e.wl, e.in_flight, e.proven, e.v0))
            .collect()
    }

    /// UCI strings of the root edges in edge order (python-chess spelling).
    fn root_moves(&self) -> Vec<String> {
        self.search.root_move_strings()
    }

    /// lc0 policy index of each root edge (edge order; no transform).
    fn root_nn_indices(&self) -> Vec<i32> {
        self.search.root_nn_indices()
    }

    /// (wl, d, mate, pv) of root edge `edge` from the root side to move's view.
    #[pyo3(signature = (edge, max_pv=100))]
    fn edge_values(&self, edge: usize, max_pv: usize) -> (f64, f64, Option<i64>, Vec<String>) {
        self.search.edge_values(edge, max_pv)
    }

    /// (playouts, depth_sum, seldepth, nn_evals, cache_hits, tbhits) of the current search.
    fn counters(&self) -> (u64, u64, u32, u64, u64, u64) {
        let s = &self.search;
        (s.playouts, s.depth_sum, s.seldepth, s.nn_evals, s.cache_hits, s.tbhits)
    }

    /// (nodes, edges) in the arenas.
    fn tree_size(&self) -> (usize, usize) {
        (self.search.tree.nodes.len(), self.search.tree.edges.len())
    }

    /// The node reached from the root by UCI `moves`: a dict with n, wl, d, m, terminal ("" / "end" /
    /// "twofold" / "tablebase"), expanded, and children {uci: visits}; None when not in the tree.
    fn node_info<'py>(&self, py: Python<'py>, moves: Vec<String>) -> PyResult<Option<Bound<'py, PyDict>>> {
        use lichessbot_core::tree::{EXPANDED, TERMINAL_END, TERMINAL_TABLEBASE, TERMINAL_TWOFOLD, unpack_move};
        let Some((node, pos)) = self.search.node_at(&moves) else {
            return Ok(None);
        };
        let tree = &self.search.tree;
        let nd = &tree.nodes[node as usize];
        let d = PyDict::new(py);
        d.set_item("n", nd.n)?;
        d.set_item("wl", nd.wl)?;
        d.set_item("d", nd.d)?;
        d.set_item("m", nd.m)?;
        let term = match nd.terminal {
            TERMINAL_END => "end",
            TERMINAL_TWOFOLD => "twofold",
            TERMINAL_TABLEBASE => "tablebase",
            _ => "",
        };
        d.set_item("terminal", term)?;
        d.set_item("expanded", nd.state == EXPANDED && nd.num_edges > 0)?;
        let children = PyDict::new(py);
        let mode = self.search.castling_mode();
        for (i, e) in tree.edges_of(node).iter().enumerate() {
            let c = tree.child(node, i as u8);
            if c != lichessbot_core::tree::NONE {
                children.set_item(unpack_move(e.mv, &pos).to_uci(mode).to_string(), tree.nodes[c as usize].n)?;
            }
        }
        d.set_item("children", children)?;
        Ok(Some(d))
    }

    /// Two-fold draws scored inside the tree below the root.
    fn count_twofold(&self) -> usize {
        self.search.count_twofold()
    }
}

fn game_positions(fen: &str, moves: &[String], chess960: bool) -> PyResult<(Vec<PosInfo>, Chess)> {
    let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let (positions, pos, _) = replay_game(fen, moves, mode).map_err(PyValueError::new_err)?;
    Ok((positions, pos))
}

/// The lc0 input planes of the last position of a game: float32 `[112, 8, 8]`, and the policy index
/// of every legal move there as {uci: index} (with the canonical transform of the input format).
/// Raises ValueError for a bad FEN, move, input format or fill mode.
#[pyfunction]
#[pyo3(signature = (fen, moves, chess960=false, input_format=1, fill="fen_only"))]
#[allow(clippy::type_complexity)]
fn encode_game<'py>(
    py: Python<'py>,
    fen: &str,
    moves: Vec<String>,
    chess960: bool,
    input_format: u32,
    fill: &str,
) -> PyResult<(Bound<'py, PyArray3<f32>>, Vec<(String, u16)>)> {
    let fill = parse_fill(fill)?;
    let input_format = check_format(input_format)?;
    let (positions, pos) = game_positions(fen, &moves, chess960)?;
    let start = positions.len().saturating_sub(8);
    let hist: Vec<&PosInfo> = positions[start..].iter().collect();
    let mut out = vec![0f32; PLANES_PER_POSITION];
    let transform = encoding::encode(&hist, input_format, fill, &mut out);
    let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let moves = pos
        .legal_moves()
        .iter()
        .filter_map(|m| policy::nn_index(m, pos.turn(), transform).map(|i| (m.to_uci(mode).to_string(), i)))
        .collect();
    let arr = numpy::PyArray1::from_vec(py, out).reshape([112, 8, 8])?;
    Ok((arr, moves))
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
    m.add_function(wrap_pyfunction!(encode_game, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    Ok(())
}
