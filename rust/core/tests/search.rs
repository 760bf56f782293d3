//! The search core driven as Python drives it: gather, a network (here uniform logits and a fixed
//! value), apply.

mod common;

use std::sync::Arc;

use lichessbot_core::cache::NNCache;
use lichessbot_core::params::Params;
use lichessbot_core::search::{PLANES_PER_POSITION, POLICY_SIZE, Search};
use lichessbot_core::tree::{NONE, Terminal, decompress_p};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn search(minibatch: usize, cache: usize) -> Search {
    Search::new(Params { minibatch_size: minibatch, ..common::params() }, Arc::new(NNCache::new(cache)))
}

/// Search until the root has `nodes` visits; every network batch gets uniform logits and W/D/L
/// (0.3, 0.4, 0.3). Returns the number of rows sent to the "network".
fn run(s: &mut Search, nodes: u64) -> usize {
    run_with(s, nodes, &[0f32; POLICY_SIZE])
}

/// As [`run`], with the logits `row` for every position.
fn run_with(s: &mut Search, nodes: u64, row: &[f32]) -> usize {
    let mb = s.params.minibatch_size;
    let mut planes = vec![0f32; mb * PLANES_PER_POSITION];
    let logits: Vec<f32> = (0..mb).flat_map(|_| row.iter().copied()).collect();
    let wdl: Vec<f32> = (0..mb).flat_map(|_| [0.3f32, 0.4, 0.3]).collect();
    let mut rows_total = 0;
    while u64::from(s.root_node().n) < nodes {
        let rows = s.gather(&mut planes, Some(nodes));
        if rows > 0 {
            // The planes of a real position: the side-to-move constant plane 111 is all ones (lc0).
            assert!(planes[111 * 64..112 * 64].iter().all(|&x| x == 1.0));
            s.apply(&logits[..rows * POLICY_SIZE], &wdl[..rows * 3], None).unwrap();
            rows_total += rows;
        }
    }
    rows_total
}

/// The knights out and back, g1f3 g8f6 f3g1 f6g8: the start position again after four plies.
fn knight_shuffle() -> Vec<String> {
    ["g1f3", "g8f6", "f3g1", "f6g8"].iter().map(|m| m.to_string()).collect()
}

/// Logits that give the knights' moves (mover's view: g1f3 and f3g1, black's mirrored) 50 times the prior
/// of any other move at the policy temperature 1.359.
fn knight_logits() -> [f32; POLICY_SIZE] {
    let mut row = [0f32; POLICY_SIZE];
    for uci in ["g1f3", "f3g1"] {
        let i = (0..POLICY_SIZE as u16).find(|&i| lichessbot_core::policy::move_uci(i) == uci).unwrap();
        row[i as usize] = 1.359 * 50f32.ln();
    }
    row
}

#[test]
fn nodes_limit_is_exact_and_uniform_priors_stay_uniform() {
    let mut s = search(16, 0);
    s.set_position(START, &[], false, false).unwrap();
    run(&mut s, 777);
    assert_eq!(s.root_node().n, 777);
    let edges = s.root_edges();
    assert_eq!(edges.len(), 20);
    assert!(edges.iter().all(|e| (e.p - 0.05).abs() < 1e-3));
    assert_eq!(edges.iter().map(|e| e.n).sum::<u32>(), 776);
}

#[test]
fn mate_in_one_is_proven_and_ranked_first() {
    let mut s = search(8, 1000);
    s.set_position("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", &[], false, false).unwrap();
    run(&mut s, 400);
    let best = &s.root_edges()[0];
    assert_eq!(best.proven, Some(1));
    let (wl, _, mate, pv) = s.edge_values(best.edge, 10);
    assert_eq!((wl, mate), (1.0, Some(1)));
    assert_eq!(pv, vec!["d1d8".to_string()]);
}

#[test]
fn a_repetition_begun_before_the_root_is_not_a_two_fold_draw() {
    let shuffle = knight_shuffle();
    // The cycle g1f3 g8f6 f3g1 f6g8 begins before the root: no two-fold draw below it.
    let row = knight_logits();
    let mut s2 = search(8, 0);
    s2.set_position(START, &shuffle[..2], false, false).unwrap();
    run_with(&mut s2, 300, &row);
    let (node, _) = s2.node_at(&shuffle[2..]).expect("the knights go back");
    assert_eq!(s2.tree.nodes[node as usize].terminal, Terminal::NonTerminal, "the first occurrence is before the root");
}

#[test]
fn tree_reuse_keeps_the_subtree_of_the_moves_played() {
    let mut s = search(16, 0);
    s.set_position(START, &[], false, false).unwrap();
    run(&mut s, 2000);
    let best = s.root_edges()[0].edge;
    let (_, _, _, pv) = s.edge_values(best, 2);
    assert_eq!(pv.len(), 2);
    let kept = s.node_at(&pv).map(|(n, _)| s.tree.nodes[n as usize].n).unwrap();
    assert!(kept > 0);
    assert_eq!(s.set_position(START, &pv, false, false).unwrap(), kept);
    assert_eq!(s.tree.nodes.len(), s.tree.count(s.root), "only the kept subtree remains");
    run(&mut s, u64::from(kept) + 100);
    // An unrelated position starts afresh.
    assert_eq!(s.set_position("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", &[], false, false).unwrap(), 0);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let mut s = search(8, 0);
    assert!(s.set_position("not a fen", &[], false, false).unwrap_err().contains("invalid FEN"));
    assert!(s.set_position(START, &["e2e5".to_string()], false, false).unwrap_err().contains("illegal move"));
    assert!(s.set_position("8/8/8/8/8/8/8/8 w - - 0 1", &[], false, false).unwrap_err().contains("illegal position"));
    s.set_position(START, &[], false, false).unwrap();
    assert!(s.apply(&[0.0; POLICY_SIZE], &[0.3, 0.4, 0.3], None).is_err(), "nothing was gathered");
}

#[test]
fn chess960_castling_is_king_takes_rook() {
    let mut s = search(8, 0);
    s.set_position("rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1", &[], true, false).unwrap();
    run(&mut s, 50);
    let moves = s.root_move_strings();
    assert!(moves.contains(&"b1h1".to_string()) && moves.contains(&"b1a1".to_string()), "{moves:?}");
}

#[test]
fn a_ponder_search_keeps_the_old_root_as_an_anchor() {
    let mut s = search(16, 0);
    s.set_position(START, &[], false, false).unwrap();
    run(&mut s, 1500);
    let ours = s.root_move_strings()[s.root_edges()[0].edge].clone();
    let replies = s.node_at(std::slice::from_ref(&ours)).map(|(n, _)| n).unwrap();
    // The two most visited replies: ponder on the first, the opponent plays the second.
    let mut children: Vec<(u32, u8)> = Vec::new();
    let mut c = s.tree.nodes[replies as usize].first_child;
    while c != lichessbot_core::tree::NONE {
        children.push((s.tree.nodes[c as usize].n, s.tree.nodes[c as usize].index));
        c = s.tree.nodes[c as usize].sibling;
    }
    children.sort();
    let missed_n = children[children.len() - 2].0;
    let (_, pos) = s.node_at(std::slice::from_ref(&ours)).unwrap();
    let uci = |i: u8| {
        let e = s.tree.edges_of(replies)[i as usize];
        lichessbot_core::tree::unpack_move(e.mv, &pos).to_uci(shakmaty::CastlingMode::Standard).to_string()
    };
    let (predicted, missed) = (uci(children[children.len() - 1].1), uci(children[children.len() - 2].1));
    s.set_position(START, &[ours.clone(), predicted], false, true).unwrap();
    run(&mut s, 3000);
    assert_eq!(s.set_position(START, &[ours, missed], false, false).unwrap(), missed_n);
}

#[test]
fn v2_canonical_formats_see_the_history_back_to_the_last_zeroing_move() {
    use lichessbot_core::encoding::{Fill, encode};
    use lichessbot_core::position::{PosInfo, replay_game};
    // Knights out and back twice (repetitions), then 6 new reversible plies: format 5 skips those
    // non-repetitions and reaches the repetitions more than 8 plies back.
    let mut line = ["g1f3", "g8f6", "f3g1", "f6g8"].repeat(2);
    line.extend(["b1c3", "b8c6", "c3b5", "c6b4", "b5a3", "b4a6"]);
    let moves: Vec<String> = line.iter().map(|m| m.to_string()).collect();
    let params = Params { minibatch_size: 4, input_format: 5, fill: Fill::FenOnly, ..common::params() };
    let mut s = Search::new(params, Arc::new(NNCache::new(0)));
    s.set_position(START, &moves, false, false).unwrap();
    let mut planes = vec![0f32; 4 * PLANES_PER_POSITION];
    assert_eq!(s.gather(&mut planes, None), 1);
    let (positions, _, _) = replay_game(START, &moves, shakmaty::CastlingMode::Standard).unwrap();
    let all: Vec<&PosInfo> = positions.iter().collect();
    let mut expected = vec![0f32; PLANES_PER_POSITION];
    encode(&all, 5, Fill::FenOnly, &mut expected);
    let mut last8 = vec![0f32; PLANES_PER_POSITION];
    encode(&all[all.len() - 8..], 5, Fill::FenOnly, &mut last8);
    assert_ne!(expected, last8, "the test position needs more than 8 positions of history");
    assert_eq!(&planes[..PLANES_PER_POSITION], &expected[..]);
}

#[test]
fn a_child_proven_while_leaves_below_it_are_in_flight_keeps_its_exact_value() {
    // Black to move and every move allows a mate in one: with a minibatch of 256 and four root moves,
    // each child is proven (by its mating grandchild) while other leaves below it wait for the
    // network in the same batch. lc0 search.cc `DoBackupUpdateSingleNode` backs those leaves up with
    // the terminal's value from that node on; averaging them in would make the proven loss look like
    // -0.95 and draw every later visit.
    let mut s = search(256, 0);
    s.set_position("8/8/1K6/7p/1Qp5/8/2R5/6k1 b - - 0 1", &[], false, false).unwrap();
    run(&mut s, 1600);
    let edges = s.root_edges();
    assert_eq!(edges.len(), 4);
    for e in &edges {
        assert_eq!(e.proven, Some(-1), "edge {} ({} visits) is a proven loss", e.edge, e.n);
        assert_eq!(e.wl, -1.0, "edge {} ({} visits) keeps the value of a loss", e.edge, e.n);
    }
}

#[test]
fn a_two_fold_draw_leaves_its_bounds_open() {
    // g1f3 g8f6 f3g1 f6g8 repeats the root inside the tree (ply 4, cycle 4): a two-fold draw with value
    // 0, but, unlike a draw by the rules, not a certainty that could prove its parent (lc0 node.cc
    // `MakeTerminal` sets no bounds for `Terminal::TwoFold`).
    let row = knight_logits();
    let mut s = search(8, 0);
    s.set_position(START, &[], false, false).unwrap();
    run_with(&mut s, 400, &row);
    let shuffle = knight_shuffle();
    let (node, _) = s.node_at(&shuffle).expect("the knights go back");
    let nd = &s.tree.nodes[node as usize];
    assert_eq!((nd.terminal, nd.wl), (Terminal::TwoFold, 0.0), "a two-fold draw");
    assert_eq!((nd.lower, nd.upper), (-1, 1), "its bounds stay open");
}

#[test]
fn tree_reuse_keeps_the_tree_and_reverts_two_folds_whose_cycle_began_before_the_new_root() {
    // Searched from the start position, g1f3 g8f6 f3g1 f6g8 is a two-fold draw (cycle 4 in the tree). After
    // g1f3 g8f6 are played, its cycle begins before the new root: lc0 search.cc
    // `EnsureNodeTwoFoldCorrectForDepth` makes it an ordinary node again and takes its visits out of every
    // ancestor up to the new root (node.cc `RevertTerminalVisits`); the rest of the subtree is kept.
    let row = knight_logits();
    let mut s = search(8, 0);
    s.set_position(START, &[], false, false).unwrap();
    run_with(&mut s, 2000, &row);
    let shuffle = knight_shuffle();
    let (node, _) = s.node_at(&shuffle).expect("the knights go back");
    let draw_visits = s.tree.nodes[node as usize].n;
    assert_eq!(s.tree.nodes[node as usize].terminal, Terminal::TwoFold, "a two-fold draw");
    assert!(draw_visits > 0);
    let (kept_node, _) = s.node_at(&shuffle[..2]).unwrap();
    let kept = s.tree.nodes[kept_node as usize].n;

    let reused = s.set_position(START, &shuffle[..2], false, false).unwrap();
    assert_eq!(reused, kept - draw_visits, "the subtree is kept, less the draw's visits");
    let (node, _) = s.node_at(&shuffle[2..]).expect("still in the tree");
    let nd = s.tree.nodes[node as usize];
    assert_eq!((nd.terminal, nd.n), (Terminal::NonTerminal, 0), "no longer a draw, and unvisited");
    // Every expanded node keeps what its visits say: N = 1 + the children's N (its own evaluation and the
    // playouts through it), N * D = 0.4 (the evaluation's D, see `run`) + the children's N * D, N * M = the
    // children's N * (M + 1) (the evaluation's M is 0 without a moves-left head; each ply up adds one, lc0
    // search.cc `DoBackupUpdateSingleNode`), and the visited policy = the priors of the children with visits
    // (lc0 `GetVisitedPolicy`).
    let mut stack = vec![s.root];
    while let Some(x) = stack.pop() {
        let nd = s.tree.nodes[x as usize];
        let (mut n, mut nd_sum, mut nm_sum, mut vp) = (0u32, 0f64, 0f64, 0f64);
        let mut c = nd.first_child;
        while c != NONE {
            let ch = s.tree.nodes[c as usize];
            n += ch.n;
            nd_sum += f64::from(ch.n) * f64::from(ch.d);
            nm_sum += f64::from(ch.n) * (f64::from(ch.m) + 1.0);
            if ch.n > 0 {
                vp += f64::from(decompress_p(s.tree.edges[(nd.edges + u32::from(ch.index)) as usize].p));
            }
            stack.push(c);
            c = ch.sibling;
        }
        if nd.n > 0 && nd.terminal == Terminal::NonTerminal && nd.num_edges > 0 {
            assert_eq!(nd.n, 1 + n, "N of node {x}");
            let want = 0.4 + nd_sum;
            assert!((f64::from(nd.n) * f64::from(nd.d) - want).abs() < 1e-3 * want, "N * D of node {x}");
            let nm = f64::from(nd.n) * f64::from(nd.m);
            assert!((nm - nm_sum).abs() < 1e-3 * nm_sum.max(1.0), "N * M of node {x}: {nm} against {nm_sum}");
            assert!((nd.vp - vp).abs() < 1e-6, "visited policy of node {x}: {} against {vp}", nd.vp);
        }
    }
    // The searched position goes on from there, and the node is searched again.
    run_with(&mut s, u64::from(reused) + 400, &row);
    assert!(s.tree.nodes[s.node_at(&shuffle[2..]).unwrap().0 as usize].n > 0);
}

/// Search until the root has `nodes` visits with the logits `row` for every position and a value
/// that differs from position to position: W/D/L drawn from a hash of the position's input planes
/// (deterministic, so two searches of the same tree see the same values).
fn run_hashed_values(s: &mut Search, nodes: u64, row: &[f32]) {
    let mb = s.params.minibatch_size;
    let mut planes = vec![0f32; mb * PLANES_PER_POSITION];
    let logits: Vec<f32> = (0..mb).flat_map(|_| row.iter().copied()).collect();
    while u64::from(s.root_node().n) < nodes {
        let rows = s.gather(&mut planes, Some(nodes));
        if rows > 0 {
            let mut wdl = Vec::with_capacity(rows * 3);
            for r in 0..rows {
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for &x in &planes[r * PLANES_PER_POSITION..(r + 1) * PLANES_PER_POSITION] {
                    h = (h ^ u64::from(x.to_bits())).wrapping_mul(0x100_0000_01b3);
                }
                let w = 0.1 + 0.6 * ((h >> 11) as f64 / (1u64 << 53) as f64) as f32;
                wdl.extend_from_slice(&[w, 0.2, 0.8 - w]);
            }
            s.apply(&logits[..rows * POLICY_SIZE], &wdl, None).unwrap();
        }
    }
}

#[test]
fn a_collision_adds_no_visit_in_flight_to_the_leaf_so_the_batch_ends_on_the_collision_budget() {
    // lc0 search.cc `PickNodesToExtendTask`: a leaf already waiting for the network (a collision) takes no
    // further visit in flight (`TryStartScoreUpdate` fails), so PUCT keeps choosing it while it is the
    // best and the batch ends when the collision budget is spent. When each collision also lowered the
    // leaf's U, virtual loss spread the batch over leaves PUCT would not pick yet. A tree of 800 visits
    // (one playout at a time; knight moves 50 times likelier; values by hash), then one batch of up to
    // 256: 39 leaves, where counting the collisions on the leaf gathered 63.
    let mut s = search(1, 0);
    s.set_position(START, &[], false, false).unwrap();
    run_hashed_values(&mut s, 800, &knight_logits());
    s.params.minibatch_size = 256;
    let mut planes = vec![0f32; 256 * PLANES_PER_POSITION];
    let rows = s.gather(&mut planes, None);
    assert_eq!(rows, 39);
}
