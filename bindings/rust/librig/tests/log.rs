//! rig's diagnostics in Rust: RIG_LOAD_TRACE=1's milestones (said at RIG_LOG_DEBUG) reach a closure given
//! to librig::set_log, none below its level, and (feature `log`) the `log` crate's logger under target
//! "rig". rig reads RIG_LOAD_TRACE once per process: this file is a test binary of its own, and sets it
//! before its first rig call.
use librig::{Device, LoadFile, LogLevel, Rule};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A safetensors file of one U8 tensor: enough for a load to say its milestones.
fn write_one_tensor(name: &str) -> PathBuf {
    let header = r#"{"a":{"dtype":"U8","shape":[4096],"data_offsets":[0,4096]}}"#;
    let path = std::env::temp_dir().join(format!("librig-log-{}-{}.safetensors", std::process::id(), name));
    let mut f = File::create(&path).unwrap();
    f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
    f.write_all(header.as_bytes()).unwrap();
    f.write_all(&[5u8; 4096]).unwrap();
    path
}

fn load_once(name: &str) {
    std::env::set_var("RIG_LOAD_TRACE", "1");
    let path = write_one_tensor(name);
    let file = LoadFile::open(&path).unwrap();
    let d = Device::memory("log").unwrap();
    file.load(&[&d], Rule::Each).unwrap().wait().unwrap();
    std::fs::remove_file(path).unwrap();
}

type Heard = Arc<Mutex<Vec<(LogLevel, String)>>>;

fn listen(min_level: LogLevel) -> Heard {
    let heard: Heard = Arc::default();
    let keep = heard.clone();
    librig::set_log(min_level, move |level, message| keep.lock().unwrap().push((level, message.to_string()))).unwrap();
    heard
}

// One test function: the sink is the process's, and the cases must not interleave.
#[test]
fn a_traced_loads_milestones_reach_the_sink_at_its_level_only() {
    let debug = listen(LogLevel::Debug);
    load_once("debug");
    let lines = debug.lock().unwrap().clone();
    assert!(lines.iter().any(|(_, m)| m.starts_with("rig load trace: ") && m.ends_with("ms  planned")), "{:?}", lines);
    assert!(lines.iter().any(|(_, m)| m.ends_with("ms  done")), "{:?}", lines);
    assert!(lines.iter().all(|(l, m)| *l == LogLevel::Debug && !m.ends_with('\n')), "{:?}", lines);

    let warnings = listen(LogLevel::Warning);
    load_once("warning");
    assert_eq!(*warnings.lock().unwrap(), vec![], "a trace is said at Debug, below Warning");
    assert_eq!(debug.lock().unwrap().len(), lines.len(), "the previous sink heard nothing more");

    // a panicking sink is caught at the C boundary: the load still completes
    librig::set_log(LogLevel::Debug, |_, _| panic!("a sink that panics")).unwrap();
    load_once("panic");
    librig::log_to_stderr(LogLevel::Debug).unwrap();

    #[cfg(feature = "log")]
    log_crate::milestones_reach_the_log_crate();
}

#[cfg(feature = "log")]
mod log_crate {
    use std::sync::Mutex;

    static RECORDS: Mutex<Vec<(String, log::Level, String)>> = Mutex::new(Vec::new());

    struct Keep;
    impl log::Log for Keep {
        fn enabled(&self, _: &log::Metadata<'_>) -> bool {
            true
        }
        fn log(&self, record: &log::Record<'_>) {
            RECORDS.lock().unwrap().push((record.target().to_string(), record.level(), record.args().to_string()));
        }
        fn flush(&self) {}
    }

    pub fn milestones_reach_the_log_crate() {
        log::set_logger(&Keep).unwrap();
        log::set_max_level(log::LevelFilter::Warn);
        librig::log_to_log_crate().unwrap();
        super::load_once("log-warn");
        assert_eq!(*RECORDS.lock().unwrap(), vec![], "max_level Warn: rig is asked for no trace");

        log::set_max_level(log::LevelFilter::Debug);
        librig::log_to_log_crate().unwrap();
        super::load_once("log-debug");
        let records = RECORDS.lock().unwrap().clone();
        assert!(records.iter().any(|(_, _, m)| m.ends_with("ms  planned")), "{:?}", records);
        assert!(records.iter().all(|(t, l, m)| t == "rig" && *l == log::Level::Debug && m.starts_with("rig load trace: ")), "{:?}", records);
        librig::log_to_stderr(librig::LogLevel::Debug).unwrap();
    }
}
