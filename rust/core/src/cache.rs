//! The NN cache: network results keyed by position hash and repetition count, bounded, shared by
//! every search of the process (lc0 src/neural/memcache.cc). Its size is `engine.nn_cache_size` (UCI
//! `NNCacheSize`), 2,000,000 entries by default as lc0 v0.33 (src/neural/shared_params.cc).
//!
//! An entry holds what expansion needs: the priors of the legal moves in move-generation order
//! (compressed as lc0 stores them, [`crate::tree::compress_p`]), W/D/L and moves left. When full,
//! the oldest entry is dropped (first in, first out, as lc0's hash-keyed cache).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// One network result.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Compressed priors, move-generation order, one per legal move.
    pub priors: Box<[u16]>,
    /// Win, draw, loss probabilities of the side to move.
    pub wdl: [f32; 3],
    /// Moves left (plies); 0 without a moves-left head.
    pub m: f32,
}

struct Inner {
    map: HashMap<u64, Entry>,
    order: VecDeque<u64>,
    hits: u64,
    misses: u64,
}

/// A thread-safe bounded map `key -> Entry`; capacity 0 disables it.
pub struct NNCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

impl NNCache {
    /// A cache of at most `capacity` entries.
    pub fn new(capacity: usize) -> NNCache {
        NNCache {
            capacity,
            inner: Mutex::new(Inner { map: HashMap::new(), order: VecDeque::new(), hits: 0, misses: 0 }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves the map consistent (every write is one call).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Copy the entry of `key` into `priors` (length = the number of legal moves) and return its
    /// (wdl, m); None when absent or stored for another number of moves.
    pub fn get(&self, key: u64, priors: &mut [u16]) -> Option<([f32; 3], f32)> {
        if self.capacity == 0 {
            return None;
        }
        let mut g = self.lock();
        let found = match g.map.get(&key) {
            Some(e) if e.priors.len() == priors.len() => {
                priors.copy_from_slice(&e.priors);
                Some((e.wdl, e.m))
            }
            _ => None,
        };
        if found.is_some() {
            g.hits += 1;
        } else {
            g.misses += 1;
        }
        found
    }

    /// Store an entry, dropping the oldest ones beyond the capacity. A key already stored keeps its
    /// first entry (lc0 src/utils/cache.h `HashKeyedCache::Insert`: "Already exists", return): when
    /// two leaves of one batch are the same position (same key) reached with other histories or
    /// rule-50 counters, the first of the batch is what later cache hits see, as in lc0.
    pub fn put(&self, key: u64, priors: &[u16], wdl: [f32; 3], m: f32) {
        if self.capacity == 0 {
            return;
        }
        let mut g = self.lock();
        if g.map.contains_key(&key) {
            return;
        }
        g.map.insert(key, Entry { priors: priors.into(), wdl, m });
        g.order.push_back(key);
        while g.map.len() > self.capacity {
            match g.order.pop_front() {
                Some(old) => {
                    g.map.remove(&old);
                }
                None => break,
            }
        }
    }

    /// Drop every entry and reset the counters (lc0 clears its cache on `ucinewgame`).
    pub fn clear(&self) {
        let mut g = self.lock();
        g.map.clear();
        g.order.clear();
        g.hits = 0;
        g.misses = 0;
    }

    /// (entries, hits, misses).
    pub fn stats(&self) -> (usize, u64, u64) {
        let g = self.lock();
        (g.map.len(), g.hits, g.misses)
    }

    /// The capacity in entries.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_first_in_first_out() {
        let c = NNCache::new(2);
        c.put(1, &[1, 2], [0.5, 0.3, 0.2], 10.0);
        c.put(2, &[3], [0.1, 0.1, 0.8], 0.0);
        c.put(3, &[4], [0.1, 0.1, 0.8], 0.0);
        let mut buf = [0u16; 2];
        assert!(c.get(1, &mut buf).is_none());
        let mut one = [0u16; 1];
        assert!(c.get(2, &mut one).is_some() && one == [3]);
        assert!(c.get(2, &mut buf).is_none(), "another number of moves is a miss");
        assert_eq!(c.stats(), (2, 1, 2));
    }

    #[test]
    fn a_key_keeps_its_first_entry() {
        let c = NNCache::new(4);
        c.put(7, &[1, 2], [0.5, 0.3, 0.2], 0.0);
        c.put(7, &[3, 4], [0.1, 0.1, 0.8], 0.0);
        let mut buf = [0u16; 2];
        assert_eq!(c.get(7, &mut buf), Some(([0.5, 0.3, 0.2], 0.0)));
        assert_eq!(buf, [1, 2]);
        assert_eq!(c.stats().0, 1);
    }

    #[test]
    fn zero_capacity_stores_nothing() {
        let c = NNCache::new(0);
        c.put(1, &[1], [1.0, 0.0, 0.0], 0.0);
        assert!(c.get(1, &mut [0u16; 1]).is_none());
    }
}
