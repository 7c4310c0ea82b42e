//! Interval arithmetic in integer nanoseconds: unions, their length, intersections.

/// Merges `[start, end)` intervals into a sorted disjoint union (HTA's rule: a new group
/// starts when an interval begins after the running end).
pub fn union(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

pub fn length(u: &[(i64, i64)]) -> i64 {
    u.iter().map(|(s, e)| e - s).sum()
}

/// Length of the intersection of two sorted disjoint unions.
pub fn intersection_length(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let s = a[i].0.max(b[j].0);
        let e = a[i].1.min(b[j].1);
        if e > s {
            total += e - s;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unions() {
        let u = union(vec![(5, 7), (0, 2), (1, 3), (3, 4), (10, 10)]);
        assert_eq!(u, vec![(0, 4), (5, 7), (10, 10)]);
        assert_eq!(length(&u), 6);
        assert_eq!(intersection_length(&u, &[(1, 6), (9, 20)]), 4);
    }
}
