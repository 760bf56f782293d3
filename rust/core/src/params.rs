//! Search parameters. Defaults are lc0's UCI defaults (lc0 src/search/classic/params.cc); the Python
//! side (`lichessbot.config.SearchParams`) declares and documents them and passes its values in.

use crate::encoding::Fill;

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

impl Default for Params {
    fn default() -> Params {
        Params {
            cpuct: 1.745,
            cpuct_base: 38739.0,
            cpuct_factor: 3.894,
            fpu_absolute: false,
            fpu_value: 0.330,
            root_fpu_absolute: false,
            root_fpu_value: 0.330,
            policy_temperature: 1.359,
            minibatch_size: 256,
            max_out_of_order_evals_factor: 2.4,
            max_collision_visits: 80000,
            max_collision_visits_scaling_start: 28,
            max_collision_visits_scaling_end: 145000,
            max_collision_visits_scaling_power: 1.25,
            two_fold_draws: true,
            sticky_endgames: true,
            draw_score: 0.0,
            input_format: 1,
            fill: Fill::FenOnly,
        }
    }
}

impl Params {
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
