//! The option table itself: names unique, lookup by alias, help text,
//! Markdown reference, and every written default accepted by prepare.

use super::prep;
use iolab_core::options::{self, lookup, options_markdown, OptionKind, OPTIONS};

#[test]
fn table_is_consistent() {
    let mut seen = std::collections::HashSet::new();
    for o in OPTIONS.iter() {
        for n in std::iter::once(&o.name).chain(o.aliases) {
            assert!(seen.insert(*n), "'{n}' appears twice in the table");
            assert!(std::ptr::eq(lookup(n).unwrap(), o));
        }
        assert!(
            !o.help.is_empty() && o.help.ends_with('.'),
            "help of {}",
            o.name
        );
    }
    assert_eq!(lookup("ba").unwrap().name, "blockalign");
    assert_eq!(lookup("timeout").unwrap().name, "runtime");
    assert!(
        lookup("BS").is_none(),
        "names are case-sensitive, as in fio"
    );
    assert!(matches!(
        lookup("thinktime").unwrap().kind,
        OptionKind::Time {
            default_unit_ns: 1000
        }
    ));
}

#[test]
fn every_option_is_accepted_and_documented() {
    let md = options_markdown();
    assert!(md.starts_with("| Option | Aliases | Type | Default | Unit | Description |"));
    for o in OPTIONS.iter() {
        assert!(
            md.contains(&format!("| `{}` |", o.name)),
            "{} missing from the docs",
            o.name
        );
        // Every option (default or not) must be accepted by prepare on its own terms.
        let value = match o.default {
            options::DefaultValue::Value(v) => v,
            options::DefaultValue::Note(_) => continue,
        };
        prep(&["size=1m", &format!("{}={value}", o.name)]);
    }
    assert!(md.contains(
        "Values: io_uring, libaio, psync, sync, pvsync, pvsync2, mmap, null, nbd, cpuio, vsync, posixaio."
    ));
}
