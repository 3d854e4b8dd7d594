//! Loading one task reads only its own YAML of the test file: the task it gives equals the
//! one loaded after the whole file was parsed, for every 8th task of the v1 release.

use tb_dataset::Dataset;

const LIST: &str = "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml";

#[tb_test_support::data_test]
#[test]
fn one_task_loaded_alone_equals_the_whole_file_parse() {
    let root = tb_test_support::data();
    let text = std::fs::read_to_string(root.join(LIST)).unwrap();
    let ids: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(str::to_string)
        .collect();
    assert!(ids.len() > 500, "{} ids", ids.len());
    let whole = Dataset::open(&root).unwrap();
    // Every 8th task (a fresh dataset per task is slow in debug builds).
    for id in ids.iter().step_by(8) {
        // A fresh dataset: the first task of its file, loaded alone.
        let alone = Dataset::open(&root).unwrap().load_task(id).unwrap();
        let file = id.split(':').next().unwrap();
        let all = whole.tasks_in_file(file).unwrap();
        let from_whole = all.iter().find(|t| t.uid == *id).unwrap();
        assert_eq!(&alone, from_whole, "{id}");
        assert_eq!(whole.load_task(id).unwrap(), alone, "{id}");
    }
}

/// Every test function of every official test file, read alone
/// (`parse_test_file_for`), equals its entry in the whole-file parse.
#[tb_test_support::data_test]
#[test]
fn each_function_read_alone_equals_the_whole_file_parse() {
    let dir = tb_test_support::data().join("dataset/test_case");
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "py") {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 12, "{files:?}");
    let mut checked = 0;
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap();
        let whole = tb_dataset::parse_test_file(&path, &src).unwrap();
        for t in &whole.tests {
            let alone = tb_dataset::parse_test_file_for(&path, &src, Some(&t.name)).unwrap();
            assert_eq!(
                alone.tests,
                vec![t.clone()],
                "{}:{}",
                path.display(),
                t.name
            );
            checked += 1;
        }
    }
    assert!(checked > 500, "{checked} functions");
}
