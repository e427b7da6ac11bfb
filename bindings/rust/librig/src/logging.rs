//! rig's diagnostics (rig_set_log in rig.h) sent to a Rust closure, or, with the cargo feature `log`, to
//! the `log` crate's logger.
//!
//! rig keeps a sink until the process exits (a line said on another thread while the sink changes may
//! still reach the previous one, and an exit handler may say something), so each closure handed over is
//! leaked on purpose: set a sink once or a few times, not per call.
use crate::{check, sys, Result};
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::panic::{self, AssertUnwindSafe};

/// rig_log_level: how much a diagnostic matters. Ordered, least first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum LogLevel {
    /// A trace asked for by an environment variable (RIG_LOAD_TRACE's milestones).
    Debug,
    /// Reserved by rig: nothing is said at this level yet.
    Info,
    /// Something asked for cannot be done as asked; a validation layer's warning.
    Warning,
    /// A defect found (a validation message counted against the process).
    Error,
}

impl LogLevel {
    fn raw(self) -> sys::rig_log_level {
        match self {
            LogLevel::Debug => sys::rig_log_level_RIG_LOG_DEBUG,
            LogLevel::Info => sys::rig_log_level_RIG_LOG_INFO,
            LogLevel::Warning => sys::rig_log_level_RIG_LOG_WARNING,
            LogLevel::Error => sys::rig_log_level_RIG_LOG_ERROR,
        }
    }

    /// rig's pinned value as a level; a value rig adds later reads as Error, the loudest.
    fn from_raw(level: sys::rig_log_level) -> LogLevel {
        match level {
            sys::rig_log_level_RIG_LOG_DEBUG => LogLevel::Debug,
            sys::rig_log_level_RIG_LOG_INFO => LogLevel::Info,
            sys::rig_log_level_RIG_LOG_WARNING => LogLevel::Warning,
            _ => LogLevel::Error,
        }
    }
}

type Sink = Box<dyn Fn(LogLevel, &str) + Send + Sync>;

/// What rig calls: the leaked sink behind `user`, the message as text (lossy UTF-8). A panic in the sink
/// is caught here and dropped: it must not unwind into rig, and no rig call of the program's is there to
/// resume it in (the line may come from a load's or a driver's thread).
unsafe extern "C" fn hear(user: *mut c_void, level: sys::rig_log_level, message: *const c_char) {
    if user.is_null() || message.is_null() {
        return;
    }
    let sink = &*(user as *const Sink);
    let text = CStr::from_ptr(message).to_string_lossy();
    let _ = panic::catch_unwind(AssertUnwindSafe(|| sink(LogLevel::from_raw(level), &text)));
}

/// Sends every diagnostic of `min_level` or above to `sink(level, message)` from now on (rig_set_log).
/// `sink` runs on whichever thread rig says the line on, possibly while rig holds a lock: it must not
/// call rig and should return quickly. Waits for nothing. The environment variables still decide what
/// is said at all (docs/environment.md).
///
/// ```
/// librig::set_log(librig::LogLevel::Warning, |level, message| eprintln!("rig {:?}: {}", level, message)).unwrap();
/// librig::log_to_stderr(librig::LogLevel::Debug).unwrap(); // the default again
/// ```
pub fn set_log<F>(min_level: LogLevel, sink: F) -> Result<()>
where
    F: Fn(LogLevel, &str) + Send + Sync + 'static,
{
    let sink: Sink = Box::new(sink);
    let user: &'static Sink = Box::leak(Box::new(sink));
    check(unsafe { sys::rig_set_log(Some(hear), user as *const Sink as *mut c_void, min_level.raw()) })
}

/// Restores rig's default: each diagnostic of `min_level` or above as a line on stderr. Waits for nothing.
pub fn log_to_stderr(min_level: LogLevel) -> Result<()> {
    check(unsafe { sys::rig_set_log(None, std::ptr::null_mut(), min_level.raw()) })
}

/// Sends rig's diagnostics to the `log` crate's logger (feature `log`), target "rig": Debug as
/// `log::Level::Debug`, Info as Info, Warning as Warn, Error as Error. rig is asked only for the levels
/// `log::max_level()` lets through now (raise it before calling this to hear more). Waits for nothing.
///
/// ```
/// log::set_max_level(log::LevelFilter::Warn);
/// librig::log_to_log_crate().unwrap(); // rig's warnings and errors reach whatever logger the program set
/// ```
#[cfg(feature = "log")]
pub fn log_to_log_crate() -> Result<()> {
    let least = match log::max_level() {
        log::LevelFilter::Off | log::LevelFilter::Error => LogLevel::Error,
        log::LevelFilter::Warn => LogLevel::Warning,
        log::LevelFilter::Info => LogLevel::Info,
        log::LevelFilter::Debug | log::LevelFilter::Trace => LogLevel::Debug,
    };
    set_log(least, |level, message| {
        let level = match level {
            LogLevel::Debug => log::Level::Debug,
            LogLevel::Info => log::Level::Info,
            LogLevel::Warning => log::Level::Warn,
            LogLevel::Error => log::Level::Error,
        };
        log::log!(target: "rig", level, "{}", message);
    })
}
