"""Type stubs of the Rust search core (rust/py/src, built by maturin as ``lichessbot._core``).

Arrays cross without copies: planes float32 C-contiguous ``[M, 112, 8, 8]``, logits float32 ``[B, 1858]``,
wdl float32 ``[B, 3]``, mlh float32 ``[B]``. The GIL is released in ``set_position``, ``gather``, ``apply``
and the encoders; a panic inside the core is raised as ``RuntimeError("search core panic: ...")``.
Statistics come back as frozen values with named fields, copied out of the tree when asked for.
"""

import numpy as np
import numpy.typing as npt

#: lc0's 1858 policy entries as UCI strings from the mover's view, in policy-index order (castling as
#: king takes rook, e.g. "e1h1"; a knight promotion is the plain move): lc0 src/neural/tables/policy_map.h.
POLICY_MOVES: tuple[str, ...]
#: The lc0 input formats the encoder supports (lc0 proto/net.proto ``NetworkFormat.InputFormat``): classical 1,
#: castling-plane 2, canonical 3, canonical + hectoplies 4, canonical v2 5, armageddon 132 and 133.
INPUT_FORMATS: tuple[int, ...]

class NNCache:
    """The process's NN cache (position hash + repetitions -> priors and values), thread-safe;
    ``capacity`` entries, 0 disables it."""

    def __init__(self, capacity: int) -> None: ...
    def clear(self) -> None: ...
    def stats(self) -> tuple[int, int, int]:
        """(entries, hits, misses)."""
    @property
    def capacity(self) -> int: ...
    def __len__(self) -> int: ...

class Tablebases:
    """Syzygy tables for probes inside the search (shakmaty-syzygy). ValueError for a bad directory."""

    def __init__(self, dirs: list[str], max_pieces: int = 0) -> None: ...
    @property
    def max_pieces(self) -> int: ...
    @property
    def enabled(self) -> bool: ...
    @property
    def hits(self) -> int: ...
    def take_failure(self) -> str | None: ...
    def probe_wdl_after_zeroing(self, fen: str) -> int | None:
        """-2 loss, -1 blessed loss, 0 draw, 1 cursed win, 2 win (side to move); None when not covered."""

class RootEdge:
    """One root edge's statistics (lc0 src/search/classic/search.cc ``GetVerboseStats``); values from the
    root side to move's view."""

    @property
    def edge(self) -> int:
        """Index of the edge at the root (edge order, as ``SearchCore.root_moves()``)."""
    @property
    def n(self) -> int:
        """Visits N."""
    @property
    def p(self) -> float:
        """Prior P (lc0's 16-bit storage)."""
    @property
    def q(self) -> float:
        """W - L + DrawScore * D (0 without visits)."""
    @property
    def u(self) -> float:
        """Exploration term U = cpuct(N) * sqrt(max(N - 1, 1)) * P / (1 + N_i + in_flight_i)."""
    @property
    def d(self) -> float:
        """Draw probability D."""
    @property
    def m(self) -> float:
        """Moves left M (plies)."""
    @property
    def wl(self) -> float:
        """W - L."""
    @property
    def in_flight(self) -> int:
        """Visits in flight (virtual loss)."""
    @property
    def proven(self) -> int | None:
        """+1 proven win, 0 proven draw, -1 proven loss; None when not proven."""
    @property
    def v0(self) -> float | None:
        """The child's first value (None without a visit)."""

class RootNode:
    """The root's statistics; ``wl`` and ``m`` from the view of the player who moved into the root."""

    @property
    def n(self) -> int:
        """Visits N, reused ones included."""
    @property
    def wl(self) -> float: ...
    @property
    def d(self) -> float: ...
    @property
    def m(self) -> float:
        """Moves left M (plies)."""
    @property
    def visited_policy(self) -> float:
        """Sum of the priors of the visited edges."""
    @property
    def in_flight(self) -> int: ...

class SearchCounters:
    """The counters of the current search (since ``set_position``)."""

    @property
    def playouts(self) -> int:
        """Playouts of this search (reused visits not counted)."""
    @property
    def depth_sum(self) -> int:
        """Sum of the playouts' depths, lc0's: the nodes of each playout's path, the root being 1 (lc0's
        depth is ``depth_sum // playouts``)."""
    @property
    def seldepth(self) -> int:
        """Deepest playout, lc0's (the root is 1)."""
    @property
    def nn_evals(self) -> int:
        """Positions sent to the network."""
    @property
    def cache_hits(self) -> int: ...
    @property
    def tbhits(self) -> int:
        """Syzygy probes that made a node terminal."""

class EdgeValues:
    """Value and principal variation of one root edge, root side to move's view."""

    @property
    def wl(self) -> float:
        """W - L (the root's own value while the edge has no visits)."""
    @property
    def d(self) -> float: ...
    @property
    def mate(self) -> int | None:
        """Moves to mate (> 0: the side to move mates) for a proven child; None otherwise."""
    @property
    def pv(self) -> list[str]:
        """Principal variation as UCI strings, the edge's move first."""

class NodeInfo:
    """A node reached from the root (for tests and tools); ``wl`` and ``m`` from the view of the player
    who moved into it."""

    @property
    def n(self) -> int: ...
    @property
    def wl(self) -> float: ...
    @property
    def d(self) -> float: ...
    @property
    def m(self) -> float: ...
    @property
    def terminal(self) -> str:
        """"" (not terminal), "end", "twofold" or "tablebase"."""
    @property
    def expanded(self) -> bool: ...
    @property
    def children(self) -> list[tuple[str, int]]:
        """(UCI move, visits) of every child in the tree, in edge order."""

class SearchCore:
    """One game's PUCT tree and search. ``params`` holds exactly the keys the core reads (built by
    ``lichessbot.search.searcher.core_params`` from ``lichessbot.config.SearchParams``); a missing,
    unknown or mistyped key is a ValueError naming it."""

    def __init__(self, params: dict[str, float | int | bool | str], cache: NNCache) -> None: ...
    def set_position(self, fen: str, moves: list[str], chess960: bool = False, ponder: bool = False) -> int:
        """Nodes reused from the previous tree. ValueError for a bad FEN or an illegal move."""
    def set_search_moves(self, moves: list[str]) -> None:
        """Visit only ``moves`` (UCI) at the root ([] lifts it): lc0's ``go searchmoves``; cleared by
        :meth:`set_position`. Raises ValueError naming a move that is not legal."""
    def set_tablebases(self, tables: Tablebases | None = None) -> None: ...
    def new_game(self) -> None: ...
    def root_needs_eval(self) -> bool: ...
    def gather(self, planes: npt.NDArray[np.float32], nodes_limit: int | None = None) -> int:
        """Rows of ``planes`` written (leaves to evaluate)."""
    def gather_compact(self, inputs: npt.NDArray[np.uint8], nodes_limit: int | None = None) -> int:
        """As :meth:`gather`, into ``inputs`` uint8 [M, 1344] in the compact form (lc0's InputPlane
        pairs: 112 little-endian u64 masks, then 112 little-endian f32 values per position; see
        lichessbot/neural/compact.py). Raises ValueError for another shape."""
    def apply(self, logits: npt.NDArray[np.float32], wdl: npt.NDArray[np.float32],
              mlh: npt.NDArray[np.float32] | None = None) -> None: ...
    def pending_leaves(self) -> int: ...
    def root_info(self) -> RootNode: ...
    def root_edges(self) -> list[RootEdge]:
        """Every root edge, best first (lc0's ranking)."""
    def root_moves(self) -> list[str]:
        """UCI strings of the root edges in edge order."""
    def root_nn_indices(self) -> list[int]: ...
    def edge_values(self, edge: int, max_pv: int = 100) -> EdgeValues: ...
    def counters(self) -> SearchCounters: ...
    def tree_size(self) -> tuple[int, int]:
        """(nodes, edges) in the arenas."""
    def node_info(self, moves: list[str]) -> NodeInfo | None: ...
    def count_twofold(self) -> int: ...

def encode_positions(
    games: list[tuple[str, list[str]]], *, input_format: int, history_fill: str, chess960: bool = False,
) -> tuple[npt.NDArray[np.float32], list[list[tuple[str, int]]]]:
    """Planes float32 ``[B, 112, 8, 8]`` of the last position of each (FEN, UCI moves) game, and per game its
    legal moves as (UCI, lc0 policy index) with the input format's canonical transform. ValueError naming
    the game for a bad FEN or move; ValueError for an unknown input format or history fill."""

def encode_plies(
    fen: str, moves: list[str], *, input_format: int, history_fill: str, chess960: bool = False,
) -> tuple[npt.NDArray[np.float32], list[list[tuple[str, int]]]]:
    """Planes float32 ``[len(moves) + 1, 112, 8, 8]`` of every position of one game (each with the history
    before it) and per position its legal moves as (UCI, lc0 policy index). ValueError as ``encode_positions``."""

def _panic_for_tests() -> None: ...
