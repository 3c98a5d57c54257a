//! The one clock: now in seconds or milliseconds since the Unix epoch, and the UTC dates and
//! times answers print.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Nanoseconds since the Unix epoch (unique-enough stamps).
pub fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// `YYYY-MM-DD HH:MM:SS UTC` of a time in milliseconds since the epoch.
pub fn time_of_ms(ms: i64) -> String {
    let seconds = ms.div_euclid(1_000);
    let of_day = seconds.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02} UTC",
        date_of(seconds),
        of_day / 3_600,
        of_day % 3_600 / 60,
        of_day % 60
    )
}

/// RFC 3339 of a time in milliseconds since the epoch, in UTC with milliseconds:
/// `2024-05-01T09:30:00.250+00:00`.
pub fn rfc3339_of_ms(ms: i64) -> String {
    let seconds = ms.div_euclid(1_000);
    let of_day = seconds.rem_euclid(86_400);
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}+00:00",
        date_of(seconds),
        of_day / 3_600,
        of_day % 3_600 / 60,
        of_day % 60,
        ms.rem_euclid(1_000)
    )
}

/// `YYYY-MM-DD` of a time in seconds since the epoch (UTC).
pub fn date_of(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    format!("{:04}-{:02}-{:02}", if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_are_utc_civil() {
        assert_eq!(date_of(0), "1970-01-01");
        assert_eq!(date_of(951_782_400), "2000-02-29");
        assert_eq!(date_of(-86_400), "1969-12-31");
        assert_eq!(time_of_ms(1_700_000_000_123), "2023-11-14 22:13:20 UTC");
        assert_eq!(
            rfc3339_of_ms(1_700_000_000_123),
            "2023-11-14T22:13:20.123+00:00"
        );
        assert_eq!(rfc3339_of_ms(-1), "1969-12-31T23:59:59.999+00:00");
    }

    #[test]
    fn the_clocks_agree() {
        let (s, ms) = (now(), now_ms());
        assert!((ms / 1_000 - s).abs() <= 1, "{s} s vs {ms} ms");
    }
}
