//! The libraries' modules import each other in one direction: within `search/` and `server/`,
//! no module reaches, through `crate::` and `super::` paths, a module that reaches it back. A
//! tidy test over the sources (comments and each file's `tests` module left out), so that a
//! layer can be read, and tested, with only the layers below it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every module of the crate whose sources are in `src` (`""` for the crate root), with its
/// code: comment lines and the `tests` module left out.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut folders = vec![src.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative: Vec<String> = path
                .strip_prefix(src)
                .unwrap()
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let mut names: Vec<&str> = relative.iter().map(String::as_str).collect();
            if names.last() == Some(&"mod") || matches!(names[..], ["lib"] | ["main"]) {
                names.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests {").next().unwrap();
            let code: Vec<&str> = code.lines().filter(|line| !line.trim_start().starts_with("//")).collect();
            found.insert(names.join("::"), code.join("\n"));
        }
    }
    found
}

/// The paths that follow each `prefix` in `code`, a `{…}` group split into its members.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += i32::from(c == '{') - i32::from(c == '}');
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            paths.extend(group[..end].split(',').map(|p| p.trim().to_string()));
        } else {
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
            paths.push(rest[..end].to_string());
        }
    }
    paths
}

/// Which module each name the crate root re-exports comes from.
fn reexports(root: &str) -> BTreeMap<String, String> {
    let mut from = BTreeMap::new();
    for line in root.lines().filter_map(|l| l.trim().strip_prefix("pub use ")) {
        let line = line.trim_end_matches(';');
        let (module, names) = match line.split_once("::{") {
            Some((module, names)) => (module, names.trim_end_matches('}')),
            None => line.rsplit_once("::").unwrap_or((line, "")),
        };
        for name in names.split(',') {
            from.insert(name.trim().to_string(), module.to_string());
        }
    }
    from
}

/// Each module and the modules it imports.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(src);
    let reexported = reexports(modules.get("").map_or("", String::as_str));
    let mut graph = BTreeMap::new();
    for (name, code) in &modules {
        let parent = name.rsplit_once("::").map_or("", |(parent, _)| parent);
        let mut paths = paths_after(code, "crate::");
        let under_parent = |path: String| if parent.is_empty() { path } else { format!("{parent}::{path}") };
        paths.extend(paths_after(code, "super::").into_iter().map(under_parent));
        let mut targets = BTreeSet::new();
        for path in paths {
            let segments: Vec<&str> = path.split("::").map(str::trim).filter(|s| !s.is_empty()).collect();
            let module = (1..=segments.len())
                .rev()
                .map(|k| segments[..k].join("::"))
                .find(|candidate| modules.contains_key(candidate))
                .or_else(|| segments.first().and_then(|first| reexported.get(*first).cloned()));
            if let Some(module) = module.filter(|m| m != name && !m.is_empty() && !name.starts_with(&format!("{m}::")))
            {
                targets.insert(module);
            }
        }
        graph.insert(name.clone(), targets);
    }
    graph
}

/// The modules that `start` reaches.
fn reached(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut next: Vec<&str> = vec![start];
    while let Some(module) = next.pop() {
        for target in graph.get(module).into_iter().flatten() {
            if seen.insert(target.clone()) {
                next.push(target);
            }
        }
    }
    seen
}

/// Pairs of modules that reach each other, each named once.
fn cycles(src: &Path) -> Vec<(String, String)> {
    let graph = imports(src);
    let mut pairs = Vec::new();
    for (module, targets) in &graph {
        for target in targets {
            if reached(&graph, target).contains(module) {
                pairs.push((module.clone(), target.clone()));
            }
        }
    }
    pairs
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

#[test]
fn search_and_server_modules_import_in_one_direction() {
    for crate_dir in ["search", "server"] {
        let src = repository().join(crate_dir).join("src");
        let graph = imports(&src);
        // The reading works: the layers seen are those the crate has.
        assert!(graph.len() >= 10, "{crate_dir}: {} modules", graph.len());
        assert!(graph.values().map(BTreeSet::len).sum::<usize>() >= 15, "{crate_dir}: {graph:?}");
        assert_eq!(cycles(&src), Vec::<(String, String)>::new(), "{crate_dir}: modules that import each other");
    }
}

#[test]
fn a_module_that_imports_one_importing_it_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    std::fs::create_dir(dir.path().join("routes")).unwrap();
    file("lib.rs", "mod a;\nmod b;\nmod routes;\npub use b::{Thing, Other};\n");
    file("a.rs", "// crate::b in a comment is not an import\nuse crate::Thing;\n");
    file("b.rs", "use crate::{routes::files, a};\n");
    file("routes/mod.rs", "pub mod files;\n");
    file(
        "routes/files.rs",
        "use super::super::c;\nfn f() { crate::a::g() }\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\n",
    );
    let graph = imports(dir.path());
    assert_eq!(graph["a"], BTreeSet::from(["b".to_string()]));
    assert_eq!(graph["b"], BTreeSet::from(["a".to_string(), "routes::files".to_string()]));
    assert_eq!(graph["routes::files"], BTreeSet::from(["a".to_string()]));
    // a → b → a, and a → b → routes::files → a.
    let pair = |x: &str, y: &str| (x.to_string(), y.to_string());
    let expected = vec![pair("a", "b"), pair("b", "a"), pair("b", "routes::files"), pair("routes::files", "a")];
    assert_eq!(cycles(dir.path()), expected);
}
