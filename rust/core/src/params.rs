//! Search parameters. The core has no defaults of its own: every parameter is declared once, with its
//! range, default and source, by `lichessbot.config.SearchParams` (Python), and the core takes every one
//! of [`KEYS`] from its caller ([`Params::from_values`]), refusing a missing or unknown key.

use crate::encoding::{Fill, INPUT_FORMATS};

/// The parameters of one search (see `lichessbot.config.SearchParams` for each meaning).
#[derive(Clone, Debug)]
pub struct Params {
    pub cpuct: f64,
    pub cpuct_base: f64,
    pub cpuct_factor: f64,
    pub fpu_absolute: bool,
    pub fpu_value: f64,
    pub root_fpu_absolute: bool,
    pub root_fpu_value: f64,
    pub policy_temperature: f64,
    pub minibatch_size: usize,
    pub max_out_of_order_evals_factor: f64,
    pub max_collision_visits: u32,
    pub max_collision_visits_scaling_start: u32,
    pub max_collision_visits_scaling_end: u32,
    pub max_collision_visits_scaling_power: f64,
    pub two_fold_draws: bool,
    pub sticky_endgames: bool,
    /// DrawScore from white's view.
    pub draw_score: f64,
    /// lc0 input format of the network (1, 2, 3, 4, 5, 132, 133).
    pub input_format: u32,
    /// lc0 HistoryFill.
    pub fill: Fill,
}

/// One parameter's value as it crosses the boundary.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

/// The keys [`Params::from_values`] takes, each required: the fields of `lichessbot.config.SearchParams`
/// that the core reads (the Python face keeps the root move sampling ones), plus the network's
/// `input_format` and the resolved `minibatch_size`.
pub const KEYS: [&str; 19] = [
    "cpuct",
    "cpuct_base",
    "cpuct_factor",
    "fpu_strategy",
    "fpu_value",
    "fpu_strategy_at_root",
    "fpu_value_at_root",
    "policy_temperature",
    "minibatch_size",
    "max_out_of_order_evals_factor",
    "max_collision_visits",
    "max_collision_visits_scaling_start",
    "max_collision_visits_scaling_end",
    "max_collision_visits_scaling_power",
    "two_fold_draws",
    "sticky_endgames",
    "draw_score",
    "input_format",
    "history_fill",
];

/// The values given for [`KEYS`], read one by one with the error naming the key.
struct Given(Vec<(String, Value)>);

impl Given {
    fn get(&self, key: &str) -> Result<&Value, String> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v).ok_or_else(|| format!("missing search parameter {key:?}"))
    }

    fn float(&self, key: &str) -> Result<f64, String> {
        match self.get(key)? {
            Value::Float(x) => Ok(*x),
            Value::Int(i) => Ok(*i as f64),
            v => Err(format!("search parameter {key:?} must be a number, got {v:?}")),
        }
    }

    fn int<T: TryFrom<i64>>(&self, key: &str) -> Result<T, String> {
        match self.get(key)? {
            Value::Int(i) => T::try_from(*i).map_err(|_| format!("search parameter {key:?} is out of range: {i}")),
            v => Err(format!("search parameter {key:?} must be an integer, got {v:?}")),
        }
    }

    fn boolean(&self, key: &str) -> Result<bool, String> {
        match self.get(key)? {
            Value::Bool(b) => Ok(*b),
            v => Err(format!("search parameter {key:?} must be true or false, got {v:?}")),
        }
    }

    fn text<'a>(&'a self, key: &str, allowed: &[&str]) -> Result<&'a str, String> {
        match self.get(key)? {
            Value::Str(s) if allowed.contains(&s.as_str()) => Ok(s),
            v => Err(format!("search parameter {key:?} must be one of {allowed:?}, got {v:?}")),
        }
    }
}

impl Params {
    /// The parameters from `(key, value)` pairs: every key of [`KEYS`] exactly once, nothing else.
    ///
    /// Errors (a message naming the key): an unknown, repeated or missing key, a value of the wrong
    /// type, `minibatch_size` 0, `policy_temperature` <= 0, an input format outside
    /// [`INPUT_FORMATS`], an unknown FPU strategy or history fill.
    pub fn from_values(values: Vec<(String, Value)>) -> Result<Params, String> {
        for (i, (k, _)) in values.iter().enumerate() {
            if !KEYS.contains(&k.as_str()) {
                return Err(format!("unknown search parameter {k:?} (the core takes {})", KEYS.join(", ")));
            }
            if values[..i].iter().any(|(e, _)| e == k) {
                return Err(format!("search parameter {k:?} given twice"));
            }
        }
        let g = Given(values);
        let fpu_absolute = g.text("fpu_strategy", &["reduction", "absolute"])? == "absolute";
        let fpu_value = g.float("fpu_value")?;
        let (root_fpu_absolute, root_fpu_value) =
            match g.text("fpu_strategy_at_root", &["same", "reduction", "absolute"])? {
                "same" => (fpu_absolute, fpu_value),
                s => (s == "absolute", g.float("fpu_value_at_root")?),
            };
        // Read (and so type-checked) even when unused, as every other key.
        g.float("fpu_value_at_root")?;
        let minibatch_size: usize = g.int("minibatch_size")?;
        if minibatch_size == 0 {
            return Err("search parameter \"minibatch_size\" must be >= 1".into());
        }
        let policy_temperature = g.float("policy_temperature")?;
        if policy_temperature.is_nan() || policy_temperature <= 0.0 {
            return Err(format!("search parameter \"policy_temperature\" must be > 0, got {policy_temperature}"));
        }
        let input_format: u32 = g.int("input_format")?;
        if !INPUT_FORMATS.contains(&input_format) {
            return Err(format!("unknown lc0 input format {input_format} (expected one of {INPUT_FORMATS:?})"));
        }
        let fill = g.text("history_fill", &["fen_only", "no", "always"])?.parse::<Fill>()?;
        Ok(Params {
            cpuct: g.float("cpuct")?,
            cpuct_base: g.float("cpuct_base")?,
            cpuct_factor: g.float("cpuct_factor")?,
            fpu_absolute,
            fpu_value,
            root_fpu_absolute,
            root_fpu_value,
            policy_temperature,
            minibatch_size,
            max_out_of_order_evals_factor: g.float("max_out_of_order_evals_factor")?,
            max_collision_visits: g.int("max_collision_visits")?,
            max_collision_visits_scaling_start: g.int("max_collision_visits_scaling_start")?,
            max_collision_visits_scaling_end: g.int("max_collision_visits_scaling_end")?,
            max_collision_visits_scaling_power: g.float("max_collision_visits_scaling_power")?,
            two_fold_draws: g.boolean("two_fold_draws")?,
            sticky_endgames: g.boolean("sticky_endgames")?,
            draw_score: g.float("draw_score")?,
            input_format,
            fill,
        })
    }

    /// cpuct(N) = CPuct + CPuctFactor * ln((N + CPuctBase) / CPuctBase) (lc0 search.cc `ComputeCpuct`).
    #[inline]
    pub fn cpuct_at(&self, n: u32) -> f64 {
        self.cpuct + self.cpuct_factor * ((f64::from(n) + self.cpuct_base) / self.cpuct_base).ln()
    }

    /// Collision visits allowed in one batch for a tree of `n` visits (lc0 search.cc
    /// `CalculateCollisionsLeft`): 1 up to ScalingStart, MaxCollisionVisits from ScalingEnd, a power
    /// ramp between (rounded half to even, as the Python search did).
    pub fn collisions_allowed(&self, n: u32) -> i64 {
        let (lo, hi) = (self.max_collision_visits_scaling_start, self.max_collision_visits_scaling_end);
        if n <= lo {
            return 1;
        }
        if n >= hi {
            return i64::from(self.max_collision_visits);
        }
        let frac = f64::from(n - lo) / f64::from(hi - lo);
        let v = 1.0 + f64::from(self.max_collision_visits - 1) * frac.powf(self.max_collision_visits_scaling_power);
        v.round_ties_even() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arbitrary values (not lc0's defaults: those are declared in Python only) for every key.
    fn all() -> Vec<(String, Value)> {
        KEYS.iter()
            .map(|k| {
                let v = match *k {
                    "fpu_strategy" => Value::Str("absolute".into()),
                    "fpu_strategy_at_root" => Value::Str("same".into()),
                    "history_fill" => Value::Str("always".into()),
                    "two_fold_draws" | "sticky_endgames" => Value::Bool(false),
                    "minibatch_size" | "max_collision_visits" | "max_collision_visits_scaling_start" => Value::Int(3),
                    "max_collision_visits_scaling_end" => Value::Int(30),
                    "input_format" => Value::Int(5),
                    _ => Value::Float(0.5),
                };
                (k.to_string(), v)
            })
            .collect()
    }

    fn with(key: &str, value: Value) -> Vec<(String, Value)> {
        all().into_iter().map(|(k, v)| if k == key { (k, value.clone()) } else { (k, v) }).collect()
    }

    #[test]
    fn every_key_is_read_and_same_at_root_copies_the_fpu() {
        let p = Params::from_values(all()).unwrap();
        assert!(p.fpu_absolute && p.root_fpu_absolute && !p.two_fold_draws);
        assert_eq!((p.minibatch_size, p.input_format, p.fill), (3, 5, Fill::Always));
        assert_eq!((p.fpu_value, p.root_fpu_value, p.cpuct), (0.5, 0.5, 0.5));
        let p = Params::from_values(with("fpu_strategy_at_root", Value::Str("reduction".into()))).unwrap();
        assert!(p.fpu_absolute && !p.root_fpu_absolute);
    }

    #[test]
    fn unknown_missing_repeated_and_mistyped_keys_are_refused_by_name() {
        let mut v = all();
        v.push(("cpuctt".into(), Value::Float(1.0)));
        assert!(Params::from_values(v).unwrap_err().starts_with("unknown search parameter \"cpuctt\""));
        let v: Vec<_> = all().into_iter().filter(|(k, _)| k != "draw_score").collect();
        assert_eq!(Params::from_values(v).unwrap_err(), "missing search parameter \"draw_score\"");
        let mut v = all();
        v.push(("cpuct".into(), Value::Float(1.0)));
        assert_eq!(Params::from_values(v).unwrap_err(), "search parameter \"cpuct\" given twice");
        let err = Params::from_values(with("two_fold_draws", Value::Int(1))).unwrap_err();
        assert!(err.contains("\"two_fold_draws\" must be true or false"), "{err}");
        let err = Params::from_values(with("minibatch_size", Value::Float(8.0))).unwrap_err();
        assert!(err.contains("\"minibatch_size\" must be an integer"), "{err}");
        let err = Params::from_values(with("max_collision_visits", Value::Int(-1))).unwrap_err();
        assert!(err.contains("out of range"), "{err}");
    }

    #[test]
    fn values_the_search_cannot_use_are_refused() {
        assert!(Params::from_values(with("minibatch_size", Value::Int(0))).unwrap_err().contains(">= 1"));
        assert!(Params::from_values(with("policy_temperature", Value::Float(0.0))).unwrap_err().contains("> 0"));
        assert!(Params::from_values(with("input_format", Value::Int(7))).unwrap_err().contains("input format 7"));
        let err = Params::from_values(with("history_fill", Value::Str("sometimes".into()))).unwrap_err();
        assert!(err.contains("\"history_fill\" must be one of"), "{err}");
        let err = Params::from_values(with("fpu_strategy", Value::Str("same".into()))).unwrap_err();
        assert!(err.contains("\"fpu_strategy\" must be one of"), "{err}");
    }
}
