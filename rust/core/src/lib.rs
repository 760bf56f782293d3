//! lichessbot's search core: lc0's classic PUCT search over shakmaty's chess rules, lc0's 112-plane
//! input encoding and 1858-move policy map. No Python here: the `lichessbot-py` crate binds it.

pub mod backup;
pub mod cache;
pub mod encoding;
pub mod params;
pub mod policy;
pub mod position;
pub mod report;
pub mod reuse;
pub mod search;
pub mod softmax;
pub mod tablebase;
pub mod tree;
