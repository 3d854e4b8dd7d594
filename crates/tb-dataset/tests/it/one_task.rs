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
