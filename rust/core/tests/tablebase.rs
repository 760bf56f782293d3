//! Syzygy probes inside the search, with the seven 3-4-piece tables of tests/data/syzygy (the
//! repository's; tests/data/syzygy/SOURCE.md).

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use lichessbot_core::cache::NNCache;
use lichessbot_core::params::Params;
use lichessbot_core::search::{PLANES_PER_POSITION, POLICY_SIZE, Search};
use lichessbot_core::tablebase::Tablebases;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};

fn tables() -> Arc<Tablebases> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/syzygy");
    Arc::new(Tablebases::open(&[dir.to_string_lossy().into_owned()], 0).unwrap())
}

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

fn position(fen: &str) -> Chess {
    fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
}

#[test]
fn a_capture_into_the_tables_is_a_tablebase_terminal() {
    let tb = tables();
    assert_eq!(tb.max_pieces(), 4);
    let mut s = Search::new(Params { minibatch_size: 8, ..common::params() }, Arc::new(NNCache::new(0)));
    s.set_tablebases(Some(tb.clone()));
    // Five pieces; Qxd8+ reaches KQP v K (a win), and many captures reach four pieces.
    s.set_position("3rk3/8/8/8/8/8/4P3/3QK3 w - - 0 1", &[], false, false).unwrap();
    run(&mut s, 600);
    assert!(s.tbhits > 0);
    let best = &s.root_edges()[0];
    let (wl, _, mate, pv) = s.edge_values(best.edge, 4);
    assert_eq!(pv[0], "d1d8");
    assert_eq!((best.proven, wl, mate), (Some(1), 1.0, None));
}

#[test]
fn no_probes_when_the_root_is_in_the_tables() {
    let tb = tables();
    let mut s = Search::new(Params { minibatch_size: 8, ..common::params() }, Arc::new(NNCache::new(0)));
    s.set_tablebases(Some(tb));
    s.set_position("3rk3/8/8/8/8/8/8/3QK3 w - - 0 1", &[], false, false).unwrap();
    run(&mut s, 200);
    assert_eq!(s.tbhits, 0);
}

#[test]
fn probes_give_the_side_to_moves_wdl_and_dtz() {
    let tb = tables();
    use shakmaty_syzygy::Wdl;
    // KQ v K, white to move: a win; black to move: a loss.
    assert_eq!(tb.probe_wdl_after_zeroing(&position("4k3/8/8/8/8/8/8/3QK3 w - - 0 1")), Some(Wdl::Win));
    assert_eq!(tb.probe_wdl_after_zeroing(&position("4k3/8/8/8/8/8/8/3QK3 b - - 0 1")), Some(Wdl::Loss));
    assert!(tb.probe_dtz(&position("4k3/8/8/8/8/8/8/3QK3 w - - 0 1")).unwrap() > 0);
    // Castling rights and five pieces are not probed.
    assert_eq!(tb.probe_wdl_after_zeroing(&position("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1")), None);
    assert_eq!(tb.probe_wdl_after_zeroing(&position("3rk3/8/8/8/8/8/4P3/3QK3 w - - 0 1")), None);
    assert!(tb.enabled() && tb.take_failure().is_none());
}

#[test]
fn a_move_into_a_lost_table_position_gets_prior_zero() {
    // Kxa2 leaves K vs K+Q+P with black to move: a table win for black, a loss for white's move. lc0
    // node.cc `MakeTerminal` (BLACK_WON) clears that edge's prior at once, so it adds nothing to the
    // root's visited policy (FPU) and its U term is gone.
    let mut s = Search::new(Params { minibatch_size: 8, ..common::params() }, Arc::new(NNCache::new(0)));
    s.set_tablebases(Some(tables()));
    s.set_position("4k2q/8/8/8/7p/8/p7/1K6 w - - 0 1", &[], false, false).unwrap();
    run(&mut s, 200);
    assert!(s.tbhits > 0);
    let edges = s.root_edges();
    let moves = s.root_move_strings();
    let kxa2 = edges.iter().find(|e| moves[e.edge] == "b1a2").expect("Kxa2 is legal");
    assert_eq!((kxa2.proven, kxa2.p), (Some(-1), 0.0));
    let others: f64 = edges.iter().filter(|e| e.n > 0 && e.edge != kxa2.edge).map(|e| f64::from(e.p)).sum();
    assert!((s.root_node().vp - others).abs() < 1e-6, "visited policy {} vs {}", s.root_node().vp, others);
}
