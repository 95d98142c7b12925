//! Student's t inverse CDF.
//!
//! Implemented here rather than taken from `statrs`: we need one function, `statrs` would
//! bring a linear-algebra and random-number stack into every crate that reports an
//! interval, and the maths is short and checked below against scipy. The CDF is the
//! regularised incomplete beta function (continued fraction, modified Lentz), the
//! quantile is found by Newton's method safeguarded by bisection.

use std::f64::consts::PI;

/// Above this many degrees of freedom t is treated as having this many: the quantile then
/// differs from the normal one by less than 1e-7 relative, and the continued fraction
/// stays short.
const MAX_DF: f64 = 1e7;

/// The `p` quantile of Student's t distribution with `df` degrees of freedom (lower tail:
/// P(T <= t) = p). Two-sided 95% intervals use `t_quantile(0.975, df)`.
///
/// `df` may be fractional (Welch–Satterthwaite). Returns NaN when `p` is not in (0, 1) or
/// `df` is not positive. Accurate to about 1e-12 relative.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p.is_nan() || p <= 0.0 || p >= 1.0 || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if p < 0.5 {
        return -upper_quantile(p, df);
    }
    // 1 - p is exact for p >= 0.5.
    upper_quantile(1.0 - p, df)
}

/// The t >= 0 whose upper tail P(T > t) is q, for 0 < q <= 0.5.
fn upper_quantile(q: f64, df: f64) -> f64 {
    if q >= 0.5 {
        return 0.0;
    }
    if (df - 1.0).abs() < f64::EPSILON {
        // Cauchy.
        return (PI * (0.5 - q)).tan();
    }
    if (df - 2.0).abs() < f64::EPSILON {
        let p = 1.0 - q;
        return (2.0 * p - 1.0) / (2.0 * p * q).sqrt();
    }
    let df = df.min(MAX_DF);
    let mut hi = 1.0_f64;
    while upper_tail(hi, df) > q {
        hi *= 2.0;
        if hi.is_infinite() {
            return f64::INFINITY;
        }
    }
    let mut lo = 0.0_f64;
    let mut t = hi / 2.0;
    for _ in 0..200 {
        let f = upper_tail(t, df) - q;
        if f > 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        // d(upper_tail)/dt = -pdf, so Newton's step is t + f / pdf.
        let newton = t + f / density(t, df);
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - t).abs() <= 1e-15 * t.max(1.0) {
            return next;
        }
        t = next;
    }
    t
}

/// P(T > t) for t >= 0: 0.5 * I_x(df/2, 1/2) with x = df / (df + t²).
fn upper_tail(t: f64, df: f64) -> f64 {
    0.5 * inc_beta(df / (df + t * t), 0.5 * df, 0.5)
}

/// Probability density of t.
fn density(t: f64, df: f64) -> f64 {
    let ln = ln_gamma(0.5 * (df + 1.0))
        - ln_gamma(0.5 * df)
        - 0.5 * (df * PI).ln()
        - 0.5 * (df + 1.0) * (t * t / df).ln_1p();
    ln.exp()
}

/// Regularised incomplete beta I_x(a, b), 0 <= x <= 1.
fn inc_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (-x).ln_1p();
    let front = ln_front.exp();
    // The continued fraction converges fast for x < (a+1)/(a+b+2); use the symmetry
    // I_x(a, b) = 1 - I_{1-x}(b, a) on the other side.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(x, a, b) / a
    } else {
        1.0 - front * beta_cf(1.0 - x, b, a) / b
    }
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let clamp = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / clamp(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..20_000 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / clamp(1.0 + even * d);
        c = clamp(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / clamp(1.0 + odd * d);
        c = clamp(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms; about 1e-15 relative).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1-x) = π / sin(πx).
        return (PI / (PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rel: f64) -> bool {
        (got - want).abs() <= rel * want.abs()
    }

    #[test]
    fn quantiles_match_scipy() {
        // Expected values: scipy 1.17.1, scipy.stats.t.ppf(p, df).
        let cases = [
            (0.975, 1.0, 12.706_204_736_174_694),
            (0.995, 1.0, 63.656_741_162_871_526),
            (0.975, 2.0, 4.302_652_729_749_462),
            (0.975, 5.0, 2.570_581_835_636_314_6),
            (0.995, 5.0, 4.032_142_983_555_228),
            (0.975, 22.0, 2.073_873_067_904_025_4),
            (0.995, 22.0, 2.818_756_060_600_142_3),
            (0.975, 1000.0, 1.962_339_080_826_408_3),
            (0.995, 1000.0, 2.580_754_698_065_951),
            (0.975, 3.7, 2.867_520_707_191_189_5),
            (0.975, 0.5, 164.557_673_480_488_18),
            (0.05, 5.0, -2.015_048_373_333_024),
            (0.05, 22.0, -1.717_144_374_380_242_8),
            (0.05, 1000.0, -1.646_378_817_285_464_8),
        ];
        for (p, df, want) in cases {
            let got = t_quantile(p, df);
            assert!(
                close(got, want, 1e-10),
                "t_quantile({p}, {df}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn symmetric_centred_and_normal_in_the_limit() {
        assert!(t_quantile(0.5, 7.0).abs() < 1e-15);
        assert!(close(t_quantile(0.1, 9.0), -t_quantile(0.9, 9.0), 1e-14));
        // Normal 97.5% quantile 1.959963984540054: the df clamp keeps us within 1e-6.
        assert!(close(t_quantile(0.975, 1e12), 1.959_963_984_540_054, 1e-6));
    }

    #[test]
    fn invalid_arguments_give_nan() {
        for (p, df) in [
            (0.0, 5.0),
            (1.0, 5.0),
            (-0.1, 5.0),
            (f64::NAN, 5.0),
            (0.9, 0.0),
            (0.9, -1.0),
            (0.9, f64::NAN),
        ] {
            assert!(t_quantile(p, df).is_nan(), "t_quantile({p}, {df})");
        }
    }

    #[test]
    fn ln_gamma_known_values() {
        // ln Γ(1) = ln Γ(2) = 0, Γ(0.5) = √π, Γ(10) = 9!.
        assert!(ln_gamma(1.0).abs() < 1e-14);
        assert!(ln_gamma(2.0).abs() < 1e-14);
        assert!(close(ln_gamma(0.5), 0.5 * PI.ln(), 1e-14));
        assert!(close(ln_gamma(10.0), 362_880.0_f64.ln(), 1e-14));
    }
}
