//! No import circle between the files of `harness/src`.
//!
//! A file imports another when it names a path into it (`crate::a::b`, `super::b`, in a `use` or
//! inline). Tests (`tests.rs`, files under a `tests/` folder) may reach anything and are left out;
//! so are edges between a module and its own submodules (a parent declares its children, a child
//! may use its parent's items). Every other edge must point one way: a strongly connected group
//! of two or more files is a circle, and the test names its files and the edges that close it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Edges left out, each closing a circle that is known and owned elsewhere: (from, to).
const KNOWN: &[(&str, &str)] = &[];

/// A module path (`["runner", "session"]`; the crate root is empty).
type Module = Vec<String>;

/// Every `.rs` file under `dir`, by module path.
fn modules(root: &Path, dir: &Path, out: &mut BTreeMap<Module, PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            modules(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().with_extension("");
            let mut parts: Module = rel
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            match parts.as_slice() {
                [only] if only == "main" => continue,
                [only] if only == "lib" => parts.clear(),
                _ => {}
            }
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            out.insert(parts, path);
        }
    }
}

/// The source without comments and string literals (so doc links and messages are not edges).
fn code(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push_str("\"\"");
            }
            // A char literal holding a quote, so it does not open a string.
            '\'' if chars.peek() == Some(&'"') => {
                chars.next();
                out.push_str("' '");
            }
            _ => out.push(c),
        }
    }
    out
}

/// The paths of the use tree starting at `s[i..]` (`a::b::{c, d::e}`), and where it ends.
fn tree(s: &[u8], mut i: usize) -> (Vec<Module>, usize) {
    let skip = |i: &mut usize| {
        while *i < s.len() && s[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let mut segments = Module::new();
    let mut paths = Vec::new();
    loop {
        skip(&mut i);
        let start = i;
        while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'_' || s[i] == b'*') {
            i += 1;
        }
        if i > start {
            segments.push(String::from_utf8_lossy(&s[start..i]).into_owned());
        } else if i < s.len() && s[i] == b'{' {
            i += 1;
            loop {
                let (sub, end) = tree(s, i);
                paths.extend(sub.into_iter().map(|p| [segments.clone(), p].concat()));
                i = end;
                skip(&mut i);
                match s.get(i) {
                    Some(b',') => {
                        i += 1;
                        skip(&mut i);
                        if s.get(i) == Some(&b'}') {
                            return (paths, i + 1);
                        }
                    }
                    Some(b'}') => return (paths, i + 1),
                    _ => return (paths, i),
                }
            }
        } else {
            paths.push(segments);
            return (paths, i);
        }
        skip(&mut i);
        if s[i..].starts_with(b"::") {
            i += 2;
        } else {
            paths.push(segments);
            return (paths, i);
        }
    }
}

/// The files each file imports (tests and parent–child edges left out), with the file named.
fn edges(files: &BTreeMap<Module, PathBuf>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, path) in files {
        if module.iter().any(|m| m == "tests") {
            continue;
        }
        let text = code(&std::fs::read_to_string(path).unwrap());
        let s = text.as_bytes();
        for start in 0..s.len() {
            let word = |w: &str| {
                s[start..].starts_with(w.as_bytes())
                    && !(start > 0
                        && (s[start - 1].is_ascii_alphanumeric()
                            || s[start - 1] == b'_'
                            || s[start - 1] == b':'))
            };
            if !(word("crate::") || word("super::")) {
                continue;
            }
            for p in tree(s, start).0 {
                let (mut base, rest): (Module, &[String]) = if p[0] == "crate" {
                    (Module::new(), &p[1..])
                } else {
                    let ups = p.iter().take_while(|s| *s == "super").count();
                    (
                        module[..module.len().saturating_sub(ups)].to_vec(),
                        &p[ups..],
                    )
                };
                for segment in rest {
                    let mut next = base.clone();
                    next.push(segment.clone());
                    if !files.contains_key(&next) {
                        break;
                    }
                    base = next;
                }
                let related = base.starts_with(module) || module.starts_with(&base);
                let known = KNOWN
                    .iter()
                    .any(|&(f, t)| f == name(module) && t == name(&base));
                if !related && !known && !base.iter().any(|m| m == "tests") {
                    edges.entry(module.clone()).or_default().insert(base);
                }
            }
        }
    }
    edges
}

/// The strongly connected groups of two or more files (Tarjan).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        groups: Vec<Vec<Module>>,
    }
    fn visit<'a>(st: &mut State<'a>, v: &'a Module) {
        let n = st.index.len();
        st.index.insert(v, n);
        st.low.insert(v, n);
        st.stack.push(v);
        st.on_stack.insert(v);
        for w in st.edges.get(v).into_iter().flatten() {
            if !st.index.contains_key(w) {
                visit(st, w);
                let low = st.low[v].min(st.low[w]);
                st.low.insert(v, low);
            } else if st.on_stack.contains(w) {
                let low = st.low[v].min(st.index[w]);
                st.low.insert(v, low);
            }
        }
        if st.low[v] == st.index[v] {
            let mut group = Vec::new();
            while let Some(w) = st.stack.pop() {
                st.on_stack.remove(w);
                group.push(w.clone());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                st.groups.push(group);
            }
        }
    }
    let mut st = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for v in edges.keys() {
        if !st.index.contains_key(v) {
            visit(&mut st, v);
        }
    }
    st.groups
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "lib".into()
    } else {
        m.join("/")
    }
}

#[test]
fn no_import_circle_between_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    modules(&root, &root, &mut files);
    let edges = edges(&files);
    let mut report = String::new();
    for group in circles(&edges) {
        let names: Vec<String> = group.iter().map(name).collect();
        report.push_str(&format!("circle: {}\n", names.join(" , ")));
        for from in &group {
            for to in edges[from].iter().filter(|t| group.contains(t)) {
                report.push_str(&format!("  {} -> {}\n", name(from), name(to)));
            }
        }
    }
    assert!(report.is_empty(), "import circles between files:\n{report}");
}

/// The scanner finds a circle where there is one, through `super::` and a use group.
#[test]
fn a_planted_circle_is_found() {
    let s = code("use super::{b::X, c};\nlet x = crate::a::f(\"crate::z\");");
    let paths: Vec<Vec<Module>> = ["use super::", "crate::a"]
        .iter()
        .map(|w| {
            tree(
                s.as_bytes(),
                s.find(w).unwrap() + if w.starts_with("use") { 4 } else { 0 },
            )
            .0
        })
        .collect();
    assert_eq!(
        paths[0],
        vec![vec!["super", "b", "X"], vec!["super", "c"]]
            .into_iter()
            .map(|p| p.into_iter().map(String::from).collect::<Module>())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        paths[1],
        vec![vec!["crate".to_string(), "a".into(), "f".into()]]
    );
    assert!(!s.contains("crate::z"), "string literals are not edges");
    let m = |s: &str| s.split('/').map(String::from).collect::<Module>();
    let edges = BTreeMap::from([
        (m("a"), BTreeSet::from([m("b")])),
        (m("b"), BTreeSet::from([m("c")])),
        (m("c"), BTreeSet::from([m("a")])),
        (m("d"), BTreeSet::from([m("a")])),
    ]);
    assert_eq!(circles(&edges), vec![vec![m("a"), m("b"), m("c")]]);
}
