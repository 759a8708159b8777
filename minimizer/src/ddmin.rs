//! Delta debugging (Zeller & Hildebrandt, TSE 2002), generalised: find a small subset of
//! `items` for which `keep` still holds. `keep(items)` must hold on entry. The result is
//! 1-minimal: removing any single element makes `keep` false (for a deterministic `keep`).

pub fn ddmin<T: Clone>(items: Vec<T>, keep: &mut dyn FnMut(&[T]) -> bool) -> Vec<T> {
    let mut c = items;
    if c.is_empty() {
        return c;
    }
    if keep(&[]) {
        return Vec::new();
    }
    let mut n = 2usize;
    while c.len() >= 2 {
        let chunk = c.len().div_ceil(n);
        let parts: Vec<Vec<T>> = c.chunks(chunk).map(|p| p.to_vec()).collect();
        let mut reduced = false;
        for p in &parts {
            if keep(p) {
                c = p.clone();
                n = 2;
                reduced = true;
                break;
            }
        }
        if !reduced && parts.len() > 2 {
            for k in 0..parts.len() {
                let comp: Vec<T> = parts
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != k)
                    .flat_map(|(_, p)| p.iter().cloned())
                    .collect();
                if keep(&comp) {
                    c = comp;
                    n = (n - 1).max(2);
                    reduced = true;
                    break;
                }
            }
        }
        if !reduced {
            if n >= c.len() {
                break;
            }
            n = (2 * n).min(c.len());
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::ddmin;

    #[test]
    fn finds_the_needed_elements() {
        let items: Vec<u32> = (0..40).collect();
        let mut calls = 0;
        let r = ddmin(items, &mut |s| {
            calls += 1;
            s.contains(&7) && s.contains(&31)
        });
        assert_eq!(r, vec![7, 31]);
        assert!(calls < 60, "{calls}");
        let r = ddmin((0..10).collect(), &mut |s: &[u32]| s.contains(&3));
        assert_eq!(r, vec![3]);
        let r = ddmin((0..10).collect(), &mut |_: &[u32]| true);
        assert!(r.is_empty());
    }
}
