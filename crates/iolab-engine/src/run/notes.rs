//! What the backends said at set-up, told once.
//!
//! Every worker opens its own backend and each may say the same thing (the
//! ring it made, a fallback it took): eight workers of one job would print
//! one line eight times, and three jobs at different queue depths three
//! lines that do not say whose they are. [`attribute`] keeps each distinct
//! line once, in the order first seen; a line every job said stands alone,
//! a line only some jobs said is prefixed with their names.

/// `notes` are `(job index, line)` as the workers gave them; `job_names`
/// are the run's jobs in order.
pub fn attribute(job_names: &[&str], notes: &[(u32, String)]) -> Vec<String> {
    let mut distinct: Vec<(&str, Vec<u32>)> = Vec::new();
    for (job, line) in notes {
        match distinct.iter_mut().find(|(l, _)| l == line) {
            Some((_, jobs)) if !jobs.contains(job) => jobs.push(*job),
            Some(_) => {}
            None => distinct.push((line, vec![*job])),
        }
    }
    distinct
        .into_iter()
        .map(|(line, jobs)| {
            if jobs.len() == job_names.len() {
                return line.to_string();
            }
            let mut names: Vec<&str> = Vec::new();
            for name in jobs.iter().filter_map(|&j| job_names.get(j as usize)) {
                if !names.contains(name) {
                    names.push(name);
                }
            }
            format!("{}: {line}", names.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::attribute;

    fn notes(v: &[(u32, &str)]) -> Vec<(u32, String)> {
        v.iter().map(|(j, l)| (*j, l.to_string())).collect()
    }

    #[test]
    fn each_line_once_and_named_where_jobs_differ() {
        let said = notes(&[
            (0, "ring of 8"),
            (0, "ring of 8"),
            (1, "ring of 32"),
            (1, "ring of 32"),
            (2, "ring of 8"),
            (0, "buffers not registered"),
            (1, "buffers not registered"),
            (2, "buffers not registered"),
        ]);
        assert_eq!(
            attribute(&["a", "b", "c"], &said),
            ["a, c: ring of 8", "b: ring of 32", "buffers not registered"]
        );
    }

    #[test]
    fn one_job_needs_no_names_and_same_names_show_once() {
        let said = notes(&[(0, "ring of 8"), (0, "ring of 8")]);
        assert_eq!(attribute(&["a"], &said), ["ring of 8"]);
        let said = notes(&[(0, "x"), (1, "x")]);
        assert_eq!(attribute(&["a", "a", "b"], &said), ["a: x"]);
        assert!(attribute(&["a"], &[]).is_empty());
    }
}
