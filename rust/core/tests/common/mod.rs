//! What the integration tests share: the search parameters the Python side passes by default.

use lichessbot_core::params::{Params, Value};

/// `lichessbot.config.SearchParams()` as the core receives it (input format 1, minibatch 256), read
/// from `tests/data/search_params.txt` (the Python test `tests/test_core.py` checks that file against
/// the declaration, so the defaults are written once, in Python).
pub fn params() -> Params {
    let pairs = include_str!("../data/search_params.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap_or_else(|| panic!("bad line {l:?}"));
            let value = match v {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => v
                    .parse::<i64>()
                    .map(Value::Int)
                    .or_else(|_| v.parse::<f64>().map(Value::Float))
                    .unwrap_or_else(|_| Value::Str(v.to_string())),
            };
            (k.to_string(), value)
        })
        .collect();
    Params::from_values(pairs).expect("tests/data/search_params.txt")
}
