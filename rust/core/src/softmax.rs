//! lc0's fast exponential (lc0 src/utils/fastmath.h), used by the policy softmax as lc0 uses it.

/// lc0's fast 2^a (lc0 src/utils/fastmath.h `FastExp2`): a quadratic minimax fit of the fraction put
/// into the float's exponent; relative error about 0.2 %.
#[inline]
pub fn fast_exp2(a: f32) -> f32 {
    let exp: i32 = if a < 0.0 {
        if a < -126.0 {
            return 0.0;
        }
        (a - 1.0) as i32
    } else {
        a as i32
    };
    let mut out = a - exp as f32;
    out = 1.0 + out * (0.660_233_9 + 0.339_766_06 * out);
    f32::from_bits((out.to_bits() as i32).wrapping_add(((exp as u32) << 23) as i32) as u32)
}

/// lc0's fast e^a (lc0 src/utils/fastmath.h `FastExp`).
#[inline]
pub fn fast_exp(a: f32) -> f32 {
    fast_exp2(std::f32::consts::LOG2_E * a) // lc0's 1.442695040f: the same float
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_exp_is_lc0s_approximation() {
        assert_eq!(fast_exp(0.0), 1.0);
        assert_eq!(fast_exp2(1.0), 2.0);
        assert_eq!(fast_exp2(-3.0), 0.125);
        assert_eq!(fast_exp2(-200.0), 0.0);
        for k in -100..100 {
            let x = k as f32 * 0.137;
            let rel = (fast_exp(x) as f64 / (x as f64).exp() - 1.0).abs();
            assert!(rel < 0.003, "{x}: {rel}");
        }
        // Monotone, so the order of priors survives.
        let mut last = 0.0;
        for k in -1000..0 {
            let y = fast_exp(k as f32 * 0.01);
            assert!(y >= last);
            last = y;
        }
    }
}
