//! Syzygy tablebases for the search: one [`Tablebases`] per process, shared by every search through an
//! `Arc` (like the NN cache), probed only when a node is expanded.
//!
//! lc0's rule (src/search/classic/search.cc `ExtendNode`): a non-root node whose position has no
//! castling rights, was reached by a zeroing move (rule-50 ply 0) and has no more pieces than the
//! tables is a terminal with the WDL of the tables; cursed wins and blessed losses count as draws. lc0
//! does not probe inside the search when the root itself was probed by DTZ.
//!
//! A failing probe (a corrupt or unreadable table) disables probing for the rest of the process; the
//! first failure is kept for the caller to log once ([`Tablebases::take_failure`]).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use shakmaty::{Chess, Position};
use shakmaty_syzygy::{SyzygyError, Tablebase, Wdl};

/// The Syzygy tables of the process (WDL and DTZ files of one or more directories).
pub struct Tablebases {
    tables: Tablebase<Chess>,
    /// Probe positions with at most this many pieces (<= the tables' own maximum).
    max_pieces: usize,
    disabled: AtomicBool,
    failure: Mutex<Option<String>>,
    failure_taken: AtomicBool,
    /// Successful probes of every search of the process.
    hits: AtomicU64,
}

impl Tablebases {
    /// Open the tables in `dirs` (files are opened lazily, at the first probe). `max_pieces` 0 means
    /// the tables' maximum; a larger value is lowered to it.
    ///
    /// Errors (as a message naming the path): a directory that does not exist or cannot be listed, a
    /// table whose file size shows it is corrupt, or no table at all in the directories.
    pub fn open(dirs: &[String], max_pieces: usize) -> Result<Tablebases, String> {
        let mut tables = Tablebase::new();
        for dir in dirs {
            if !Path::new(dir).is_dir() {
                return Err(format!("{dir}: not a directory"));
            }
            let added = tables.add_directory(dir).map_err(|e| format!("{dir}: {e}"))?;
            if added == 0 {
                return Err(format!("{dir}: no Syzygy tables (.rtbw/.rtbz) in it"));
            }
        }
        if tables.max_pieces() == 0 {
            return Err("no Syzygy table directories given".into());
        }
        let top = tables.max_pieces();
        let max_pieces = if max_pieces == 0 { top } else { max_pieces.min(top) };
        Ok(Tablebases {
            tables,
            max_pieces,
            disabled: AtomicBool::new(false),
            failure: Mutex::new(None),
            failure_taken: AtomicBool::new(false),
            hits: AtomicU64::new(0),
        })
    }

    /// The most pieces a probed position may have.
    pub fn max_pieces(&self) -> usize {
        self.max_pieces
    }

    /// False once a probe failed (probing is then off for good).
    pub fn enabled(&self) -> bool {
        !self.disabled.load(Ordering::Relaxed)
    }

    /// Successful probes so far, all searches of the process together.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// True when `pos` may be probed: probing on, no castling rights, few enough pieces.
    #[inline]
    pub fn covers(&self, pos: &Chess) -> bool {
        self.enabled() && pos.castles().is_empty() && pos.board().occupied().count() <= self.max_pieces
    }

    /// WDL of `pos` (side to move's view) assuming it was reached by a zeroing move (the halfmove
    /// clock is not looked at). None when `pos` is not covered, a table is missing, or the probe
    /// failed (which disables probing).
    pub fn probe_wdl_after_zeroing(&self, pos: &Chess) -> Option<Wdl> {
        if !self.covers(pos) {
            return None;
        }
        let r = catch_unwind(AssertUnwindSafe(|| self.tables.probe_wdl_after_zeroing(pos)));
        self.done(r)
    }

    /// DTZ of `pos` in plies (side to move's view: > 0 winning, < 0 losing, 0 draw), possibly rounded
    /// by one for long conversions (Syzygy's DTZ tables). None as for [`Self::probe_wdl_after_zeroing`].
    pub fn probe_dtz(&self, pos: &Chess) -> Option<i32> {
        if !self.covers(pos) {
            return None;
        }
        let r = catch_unwind(AssertUnwindSafe(|| self.tables.probe_dtz(pos)));
        self.done(r).map(|d| d.ignore_rounding().0)
    }

    fn done<T>(&self, r: std::thread::Result<Result<T, SyzygyError>>) -> Option<T> {
        match r {
            Ok(Ok(v)) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(v)
            }
            Ok(Err(SyzygyError::MissingTable { .. } | SyzygyError::TooManyPieces | SyzygyError::Castling)) => None,
            Ok(Err(e)) => {
                self.fail(e.to_string());
                None
            }
            Err(_) => {
                self.fail("panic while probing the tables".into());
                None
            }
        }
    }

    fn fail(&self, message: String) {
        self.disabled.store(true, Ordering::Relaxed);
        let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            *f = Some(message);
        }
    }

    /// The first probe failure, once (None before a failure and on later calls).
    pub fn take_failure(&self) -> Option<String> {
        let f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_some() && !self.failure_taken.swap(true, Ordering::Relaxed) { f.clone() } else { None }
    }
}

/// The node value of a tablebase terminal (lc0 search.cc `ExtendNode`): `wdl` is the side to move's;
/// returns (wl, d) from the view of the player who moved into the node. Cursed wins and blessed
/// losses are draws.
pub fn node_value(wdl: Wdl) -> (f64, f32) {
    match wdl {
        Wdl::Win => (-1.0, 0.0),
        Wdl::Loss => (1.0, 0.0),
        _ => (0.0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_value_is_the_movers_view() {
        assert_eq!(node_value(Wdl::Win), (-1.0, 0.0));
        assert_eq!(node_value(Wdl::Loss), (1.0, 0.0));
        assert_eq!(node_value(Wdl::CursedWin), (0.0, 1.0));
        assert_eq!(node_value(Wdl::BlessedLoss), (0.0, 1.0));
    }

    #[test]
    fn open_refuses_a_missing_or_empty_directory() {
        let err = Tablebases::open(&["/nonexistent/syzygy".into()], 0).err().unwrap();
        assert!(err.contains("not a directory"), "{err}");
        let dir = std::env::temp_dir();
        let empty = dir.join(format!("lichessbot-empty-tb-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let err = Tablebases::open(&[empty.to_string_lossy().into_owned()], 0).err().unwrap();
        assert!(err.contains("no Syzygy tables"), "{err}");
        std::fs::remove_dir(&empty).ok();
    }
}
