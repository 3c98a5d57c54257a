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

/// Days since the epoch of a civil date (Howard Hinnant's algorithm, the inverse of
/// [`date_of`]).
fn days_of(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Milliseconds since the epoch of an RFC 3339 time as code hosts write them
/// (`2011-04-10T20:09:31Z`, `2017-04-29T08:46:00.000+02:00`); `None` when it is not one.
pub fn ms_of_rfc3339(text: &str) -> Option<i64> {
    let t = text.trim().as_bytes();
    let number = |from: usize, len: usize| -> Option<i64> {
        let digits = t.get(from..from + len)?;
        digits
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| std::str::from_utf8(digits).ok()?.parse().ok())?
    };
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if separators.iter().any(|&(at, c)| t.get(at) != Some(&c))
        || !matches!(t.get(10), Some(b'T' | b't' | b' '))
    {
        return None;
    }
    let (year, month, day) = (number(0, 4)?, number(5, 2)?, number(8, 2)?);
    let (hour, minute, second) = (number(11, 2)?, number(14, 2)?, number(17, 2)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut at = 19;
    let mut millis = 0;
    if t.get(at) == Some(&b'.') {
        let digits = t[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 {
            return None;
        }
        let kept = digits.min(3);
        millis = number(at + 1, kept)? * 10_i64.pow(3 - kept as u32);
        at += 1 + digits;
    }
    let offset = match t.get(at..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let minutes = number(at + 1, 2)? * 60 + number(at + 4, 2)?;
            if *sign == b'-' { -minutes } else { minutes }
        }
        _ => return None,
    };
    let seconds =
        days_of(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second - offset * 60;
    Some(seconds * 1_000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_host_times_parse_to_milliseconds() {
        assert_eq!(ms_of_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            ms_of_rfc3339("2023-11-14T22:13:20Z"),
            Some(1_700_000_000_000)
        );
        assert_eq!(
            ms_of_rfc3339("2023-11-14T23:13:20.123+01:00"),
            Some(1_700_000_000_123)
        );
        assert_eq!(
            ms_of_rfc3339("2000-02-29T00:00:00.5Z"),
            Some(951_782_400_500)
        );
        assert_eq!(ms_of_rfc3339("1969-12-31T00:00:00Z"), Some(-86_400_000));
        for bad in [
            "",
            "2023-11-14",
            "2023-13-01T00:00:00Z",
            "2023-11-14T22:13:20",
            "2023-11-14T22:13:20+0100",
            "20231114T221320Z",
        ] {
            assert_eq!(ms_of_rfc3339(bad), None, "{bad}");
        }
        let ms = 1_234_567_890_123;
        assert_eq!(ms_of_rfc3339(&rfc3339_of_ms(ms)), Some(ms));
    }

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
