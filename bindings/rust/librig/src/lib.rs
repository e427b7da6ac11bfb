//! Order the work of several devices by the memory it uses: the safe face of librig (rig.h).
//!
//! The crate is `librig` (with the raw `librig-sys`): the name `rig` is taken on crates.io. librig is
//! found by `RIG_LIB_DIR` or by pkg-config (`PKG_CONFIG_PATH` naming an installed prefix's `pkgconfig`
//! directory). A program linked against a prefix the dynamic linker does not search gives itself that
//! RUNPATH in its build.rs (a link argument reaches only the package that emits it):
//!
//! ```text
//! let out = std::process::Command::new("pkg-config").args(["--variable=libdir", "rig"]).output().unwrap();
//! println!("cargo:rustc-link-arg=-Wl,-rpath,{}", String::from_utf8_lossy(&out.stdout).trim());
//! ```
//!
//! - Handles release themselves on `Drop` (`rig_*_release`); rig keeps alive what it still needs.
//! - Every call returns [`Result`]; an [`Error`] carries the status and `rig_last_error()`, read right
//!   after the failed call on the same thread.
//! - Host memory lent to rig is borrowed for `'a`: a [`Buffer<'a>`] wrapping `&'a [u8]` (and every view,
//!   borrow and run made from it) cannot outlive the slice, and dropping the last of them waits until rig
//!   has called the wrap's release, i.e. until no work uses the bytes any more.
//! - Callbacks are Rust closures; a panic in one is caught at the C boundary (never unwinding through
//!   librig) and resumed once the rig call that ran it has returned.
//!
//! Not sound against `std::mem::forget` of a wrapping buffer while a GPU still uses the bytes (the
//! same limit as the pre-1.0 scoped threads): forget leaks the wait that keeps the borrow alive.
use librig_sys as sys;
use std::any::Any;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

mod interop;
mod load;
mod logging;
pub use interop::Interop;
#[cfg(feature = "log")]
pub use logging::log_to_log_crate;
pub use logging::{log_to_stderr, set_log, LogLevel};
pub use load::{Dtype, Format, Load, LoadFile, Rule, Shard, Tensor};

/// rig_status. Values are pinned by rig.h; unknown values are kept as they are. Prints as rig names it:
///
/// ```
/// assert_eq!(librig::Status::TIMEOUT.to_string(), "RIG_TIMEOUT");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Status(pub u32);

impl Status {
    pub const OK: Status = Status(sys::rig_status_RIG_OK);
    pub const INVALID_ARGUMENT: Status = Status(sys::rig_status_RIG_INVALID_ARGUMENT);
    pub const INVALID_HANDLE: Status = Status(sys::rig_status_RIG_INVALID_HANDLE);
    pub const UNSUPPORTED: Status = Status(sys::rig_status_RIG_UNSUPPORTED);
    pub const UNMAPPABLE: Status = Status(sys::rig_status_RIG_UNMAPPABLE);
    pub const OUT_OF_MEMORY: Status = Status(sys::rig_status_RIG_OUT_OF_MEMORY);
    pub const LOST: Status = Status(sys::rig_status_RIG_LOST);
    pub const TIMEOUT: Status = Status(sys::rig_status_RIG_TIMEOUT);
    pub const INTERRUPTED: Status = Status(sys::rig_status_RIG_INTERRUPTED);
    pub const DRIVER: Status = Status(sys::rig_status_RIG_DRIVER);
    pub const NOT_FOUND: Status = Status(sys::rig_status_RIG_NOT_FOUND);
    pub const BUSY: Status = Status(sys::rig_status_RIG_BUSY);

    /// "RIG_LOST", as rig names it.
    pub fn name(self) -> &'static str {
        unsafe { static_str(sys::rig_status_name(self.0)) }
    }
}

impl fmt::Display for Status {
    /// rig's name of the status: `RIG_TIMEOUT`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed rig call: its status and rig's words for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

impl Error {
    /// An error to return from a callback (probe ops): rig gets `status`.
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

unsafe fn static_str(p: *const c_char) -> &'static str {
    if p.is_null() {
        ""
    } else {
        CStr::from_ptr(p).to_str().unwrap_or("")
    }
}

unsafe fn owned_str(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// The status as a Result; the message is read at once, before any other rig call on this thread.
fn check(st: sys::rig_status) -> Result<()> {
    if st == sys::rig_status_RIG_OK {
        Ok(())
    } else {
        Err(Error { status: Status(st), message: unsafe { owned_str(sys::rig_last_error()) } })
    }
}

fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(Status::INVALID_ARGUMENT, "a string holds a NUL byte"))
}

/// A panic caught at the C boundary, resumed by the call that ran the callback.
#[derive(Default, Debug)]
struct Caught(Mutex<Option<Box<dyn Any + Send>>>);

impl Caught {
    fn run<R>(&self, fallback: R, f: impl FnOnce() -> R) -> R {
        match panic::catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => r,
            Err(p) => {
                let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
                if slot.is_none() {
                    *slot = Some(p);
                }
                fallback
            }
        }
    }
    fn resume(&self) {
        let p = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(p) = p {
            panic::resume_unwind(p);
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Points and timeouts

/// A point: a value on one device's timeline (rig_point). `Point::NONE` is reached at once.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Point(u64);

impl Point {
    /// The point 0, reached at once.
    pub const NONE: Point = Point(0);
    /// The index of the device whose timeline the point is on (0 for NONE).
    pub fn device_index(self) -> u32 {
        sys::rig_point_device_index(self.0)
    }
    /// The value on that timeline.
    pub fn value(self) -> u64 {
        sys::rig_point_value(self.0)
    }
}

impl fmt::Debug for Point {
    /// `Point(device#INDEX:VALUE)`: the packed integer means nothing to a reader (`{:?}` printed it raw).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Point({self})")
    }
}

impl fmt::Display for Point {
    /// `device#INDEX:VALUE`, or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            f.write_str("none")
        } else {
            write!(f, "device#{}:{}", self.device_index(), self.value())
        }
    }
}

/// A timeout in rig's terms: `None` waits without a bound (UINT64_MAX), zero only checks.
fn timeout_ns(timeout: Option<Duration>) -> u64 {
    match timeout {
        None => u64::MAX,
        Some(d) => u64::try_from(d.as_nanos()).unwrap_or(u64::MAX - 1),
    }
}

// ---------------------------------------------------------------------------------------------------
// Devices

/// A device: the host, a memory device, a GPU. Dropping it waits for its work and releases it.
///
/// ```
/// let a = librig::Device::memory("A")?;
/// assert_eq!(a.info()?.kind, librig::DeviceKind::Memory);
/// assert_eq!(a.submitted()?, 0);
/// # Ok::<(), librig::Error>(())
/// ```
#[derive(Debug)]
pub struct Device {
    raw: sys::rig_device,
    owned: bool,
}

unsafe impl Send for Device {}
unsafe impl Sync for Device {}

/// rig_device_info, its strings copied.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub name: String,
    pub framework: String,
    pub model: String,
    pub kind: DeviceKind,
    pub index: u32,
    pub memory_bytes: u64,
    pub integrated: i32,
    pub lost: bool,
}

/// What a device is (rig_device_kind); `Other` for kinds added after this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// The caller's own code: runs no work, never stamped.
    Host,
    /// Host memory; work runs before submit returns.
    Memory,
    /// A driver's GPU: work runs after submit returns.
    Gpu,
    /// A driver's CPU device (Vulkan lavapipe).
    Cpu,
    Other(u32),
}

impl DeviceKind {
    fn from_raw(k: u32) -> DeviceKind {
        match k {
            sys::rig_device_kind_RIG_DEVICE_HOST => DeviceKind::Host,
            sys::rig_device_kind_RIG_DEVICE_MEMORY => DeviceKind::Memory,
            sys::rig_device_kind_RIG_DEVICE_GPU => DeviceKind::Gpu,
            sys::rig_device_kind_RIG_DEVICE_CPU => DeviceKind::Cpu,
            k => DeviceKind::Other(k),
        }
    }
    fn to_raw(self) -> u32 {
        match self {
            DeviceKind::Host => sys::rig_device_kind_RIG_DEVICE_HOST,
            DeviceKind::Memory => sys::rig_device_kind_RIG_DEVICE_MEMORY,
            DeviceKind::Gpu => sys::rig_device_kind_RIG_DEVICE_GPU,
            DeviceKind::Cpu => sys::rig_device_kind_RIG_DEVICE_CPU,
            DeviceKind::Other(k) => k,
        }
    }
}

fn out_handle<T>(f: impl FnOnce(*mut T) -> sys::rig_status) -> Result<T> {
    let mut out = std::mem::MaybeUninit::<T>::zeroed();
    check(f(out.as_mut_ptr()))?;
    Ok(unsafe { out.assume_init() })
}

impl Device {
    /// The host as a device.
    pub fn host() -> Result<Device> {
        Ok(Device { raw: out_handle(|o| unsafe { sys::rig_host(o) })?, owned: false })
    }
    /// A new memory device called `name`.
    pub fn memory(name: &str) -> Result<Device> {
        let n = cstring(name)?;
        Ok(Device { raw: out_handle(|o| unsafe { sys::rig_memory_device(n.as_ptr(), o) })?, owned: true })
    }
    /// A driver's device: "cuda:0", "hip:1", "vulkan:0".
    pub fn open(name: &str) -> Result<Device> {
        let n = cstring(name)?;
        Ok(Device { raw: out_handle(|o| unsafe { sys::rig_device_open(n.as_ptr(), o) })?, owned: true })
    }
    /// Releases now and reports rig's answer (Drop ignores it).
    pub fn release(mut self) -> Result<()> {
        self.owned = false;
        check(unsafe { sys::rig_device_release(self.raw) })
    }
    pub fn info(&self) -> Result<DeviceInfo> {
        let mut info: sys::rig_device_info = unsafe { std::mem::zeroed() };
        info.size = std::mem::size_of::<sys::rig_device_info>();
        check(unsafe { sys::rig_device_get_info(self.raw, &mut info) })?;
        unsafe {
            Ok(DeviceInfo {
                name: owned_str(info.name),
                framework: owned_str(info.framework),
                model: owned_str(info.model),
                kind: DeviceKind::from_raw(info.kind),
                index: info.index,
                memory_bytes: info.memory_bytes,
                integrated: info.integrated,
                lost: info.lost != 0,
            })
        }
    }
    pub fn submitted(&self) -> Result<u64> {
        out_handle(|o| unsafe { sys::rig_device_submitted(self.raw, o) })
    }
    pub fn signaled(&self) -> Result<u64> {
        out_handle(|o| unsafe { sys::rig_device_signaled(self.raw, o) })
    }
    /// Waits until the device reached `value`, committing its held work first; `timeout` None waits
    /// without a bound, zero only checks. `TIMEOUT` when not reached in time, `INVALID_ARGUMENT` for a
    /// value past the submitted one:
    ///
    /// ```
    /// # use std::time::Duration;
    /// let a = librig::Device::memory("A")?;
    /// let e = a.wait(1, Some(Duration::ZERO)).unwrap_err();
    /// assert_eq!(e.status, librig::Status::INVALID_ARGUMENT);
    /// # Ok::<(), librig::Error>(())
    /// ```
    pub fn wait(&self, value: u64, timeout: Option<Duration>) -> Result<()> {
        check(unsafe { sys::rig_device_wait(self.raw, value, timeout_ns(timeout)) })
    }
    /// The point of `value` on this device.
    pub fn point(&self, value: u64) -> Result<Point> {
        out_handle(|o| unsafe { sys::rig_device_point(self.raw, value, o) }).map(Point)
    }
    /// Why the device was lost; None while it is not.
    pub fn lost_reason(&self) -> Result<Option<String>> {
        let why = out_handle(|o| unsafe { sys::rig_device_lost_reason(self.raw, o) })?;
        Ok(if why.is_null() { None } else { Some(unsafe { owned_str(why) }) })
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        if self.owned {
            unsafe { sys::rig_device_release(self.raw) };
        }
    }
}

/// The names `Device::open` accepts.
pub fn device_list() -> Result<Vec<String>> {
    let mut count = 0usize;
    check(unsafe { sys::rig_device_list(ptr::null_mut(), 0, &mut count) })?;
    let mut names = vec![ptr::null::<c_char>(); count];
    let mut again = 0usize;
    check(unsafe { sys::rig_device_list(names.as_mut_ptr(), names.len(), &mut again) })?;
    names.truncate(again.min(count));
    Ok(names.into_iter().map(|p| unsafe { owned_str(p) }).collect())
}

/// Waits for a point of any device (`timeout` as [`Device::wait`]).
pub fn wait_point(point: Point, timeout: Option<Duration>) -> Result<()> {
    check(unsafe { sys::rig_wait_point(point.0, timeout_ns(timeout)) })
}

/// Makes every wait in progress, and every later one until `interrupt_waits(false)`, return INTERRUPTED.
pub fn interrupt_waits(on: bool) {
    unsafe { sys::rig_interrupt_waits(on as i32) }
}

// ---------------------------------------------------------------------------------------------------
// Buffers

/// rig_memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    Device = 0,
    Pinned = 1,
    Mapped = 2,
}

/// rig_access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read = 1,
    Write = 2,
    ReadWrite = 3,
}

/// Set once rig has called a wrap's release: the lent bytes are no longer used.
#[derive(Debug)]
struct Released {
    done: Mutex<bool>,
    cv: Condvar,
}

unsafe extern "C" fn on_release(user: *mut c_void) {
    let r = Arc::from_raw(user as *const Released);
    *r.done.lock().unwrap_or_else(|e| e.into_inner()) = true;
    r.cv.notify_all();
}

/// Shared by every handle over lent bytes; dropped with the last of them, after each released its rig
/// handle, it waits for rig's release call, so the borrow `'a` ends only once rig is done with the bytes.
#[derive(Debug)]
struct Lender(Arc<Released>);

impl Drop for Lender {
    fn drop(&mut self) {
        let mut done = self.0.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = self.0.cv.wait(done).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Bytes of one allocation, seen by one device; `'a` is the borrow of lent host memory (`'static` for
/// memory rig allocated).
///
/// ```
/// use librig::{Access, Buffer, Device, Memory, Part};
/// let text = b"hello, world";
/// let (a, b) = (Device::memory("A")?, Device::memory("B")?);
/// let src = Buffer::wrap(text)?; // no copy: rig reads `text` itself
/// let x = Buffer::create(&a, 12, Memory::Device)?;
/// let y = Buffer::create(&b, 12, Memory::Device)?;
/// librig::submit(&a, vec![Part::copy(0, 1)], &[(&src.borrow_on(&a)?, Access::Read), (&x, Access::Write)])?;
/// // B's copy reads x through a borrow, so it follows A's copy: no point is named
/// librig::submit(&b, vec![Part::copy(0, 1)], &[(&x.borrow_on(&b)?, Access::Read), (&y, Access::Write)])?;
/// assert_eq!(y.to_vec()?, text);
/// # Ok::<(), librig::Error>(())
/// ```
#[derive(Debug)]
pub struct Buffer<'a> {
    raw: sys::rig_buffer,
    lender: Option<Arc<Lender>>,
    _borrow: PhantomData<&'a mut [u8]>,
}

unsafe impl Send for Buffer<'_> {}
unsafe impl Sync for Buffer<'_> {}

unsafe extern "C" fn free_vec(user: *mut c_void) {
    drop(Box::from_raw(user as *mut Vec<u8>));
}

impl<'a> Buffer<'a> {
    fn made(raw: sys::rig_buffer, lender: Option<Arc<Lender>>) -> Buffer<'a> {
        Buffer { raw, lender, _borrow: PhantomData }
    }

    /// A new allocation of `length` bytes on `device`.
    pub fn create(device: &Device, length: usize, memory: Memory) -> Result<Buffer<'static>> {
        let raw = out_handle(|o| unsafe { sys::rig_buffer_create(device.raw, length, memory as u32, o) })?;
        Ok(Buffer::made(raw, None))
    }

    fn lend(data: *mut u8, length: usize, access: Access) -> Result<Buffer<'a>> {
        let released = Arc::new(Released { done: Mutex::new(false), cv: Condvar::new() });
        let user = Arc::into_raw(released.clone()) as *mut c_void;
        let st = unsafe {
            let mut out = ptr::null_mut();
            let st = sys::rig_buffer_wrap(data as *mut c_void, length, access as u32, Some(on_release), user, &mut out);
            (st, out)
        };
        if let Err(e) = check(st.0) {
            // rig calls no release for a wrap that failed: take back the count given to it
            unsafe { drop(Arc::from_raw(user as *const Released)) };
            return Err(e);
        }
        Ok(Buffer::made(st.1, Some(Arc::new(Lender(released)))))
    }

    /// A read-only host buffer over `data`, without a copy, for as long as `'a`.
    pub fn wrap(data: &'a [u8]) -> Result<Buffer<'a>> {
        Buffer::lend(data.as_ptr() as *mut u8, data.len(), Access::Read)
    }

    /// A read-write host buffer over `data`, without a copy: rig's work writes into it.
    pub fn wrap_mut(data: &'a mut [u8]) -> Result<Buffer<'a>> {
        Buffer::lend(data.as_mut_ptr(), data.len(), Access::ReadWrite)
    }

    /// A host buffer owning `data`: rig drops the Vec when it no longer uses it.
    pub fn from_vec(data: Vec<u8>) -> Result<Buffer<'static>> {
        let mut boxed = Box::new(data);
        let (p, n) = (boxed.as_mut_ptr(), boxed.len());
        let user = Box::into_raw(boxed) as *mut c_void;
        let mut out = ptr::null_mut();
        let st = unsafe { sys::rig_buffer_wrap(p as *mut c_void, n, Access::ReadWrite as u32, Some(free_vec), user, &mut out) };
        if let Err(e) = check(st) {
            unsafe { free_vec(user) };
            return Err(e);
        }
        Ok(Buffer::made(out, None))
    }

    /// Bytes [offset, offset+length) of this buffer: same allocation and stamps.
    pub fn view(&self, offset: usize, length: usize) -> Result<Buffer<'a>> {
        let raw = out_handle(|o| unsafe { sys::rig_buffer_view(self.raw, offset, length, o) })?;
        Ok(Buffer::made(raw, self.lender.clone()))
    }

    /// This buffer's bytes seen by `device`, sharing their stamps.
    pub fn borrow_on(&self, device: &Device) -> Result<Buffer<'a>> {
        let raw = out_handle(|o| unsafe { sys::rig_buffer_borrow(device.raw, self.raw, o) })?;
        Ok(Buffer::made(raw, self.lender.clone()))
    }

    /// Whether the buffer has no bytes.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The buffer's length in bytes.
    pub fn len(&self) -> Result<usize> {
        out_handle(|o| unsafe { sys::rig_buffer_length(self.raw, o) })
    }

    /// Copies from `offset` into `dst` after the last write (rule 5).
    pub fn read_into(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        check(unsafe { sys::rig_buffer_read_into(self.raw, offset, dst.as_mut_ptr() as *mut c_void, dst.len()) })
    }

    /// Copies `src` in at `offset` after every use (rule 6).
    pub fn write_from(&self, offset: usize, src: &[u8]) -> Result<()> {
        check(unsafe { sys::rig_buffer_write_from(self.raw, offset, src.as_ptr() as *const c_void, src.len()) })
    }

    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut v = vec![0u8; self.len()?];
        self.read_into(0, &mut v)?;
        Ok(v)
    }

    /// Runs `f` over the bytes after the last write (rule 5).
    pub fn read<F: FnMut(&[u8])>(&self, f: F) -> Result<()> {
        struct Call<F> {
            f: F,
            caught: Caught,
        }
        unsafe extern "C" fn tramp<F: FnMut(&[u8])>(user: *mut c_void, bytes: *const c_void, n: usize) {
            let c = &mut *(user as *mut Call<F>);
            let f = &mut c.f;
            let s: &[u8] = if n == 0 { &[] } else { std::slice::from_raw_parts(bytes as *const u8, n) };
            c.caught.run((), || f(s));
        }
        let mut call = Call { f, caught: Caught::default() };
        let st = unsafe { sys::rig_buffer_read(self.raw, Some(tramp::<F>), &mut call as *mut Call<F> as *mut c_void) };
        call.caught.resume();
        check(st)
    }

    /// Runs `f` over the bytes after every use (rule 6); its writes land in the buffer.
    pub fn write<F: FnMut(&mut [u8])>(&self, f: F) -> Result<()> {
        struct Call<F> {
            f: F,
            caught: Caught,
        }
        unsafe extern "C" fn tramp<F: FnMut(&mut [u8])>(user: *mut c_void, bytes: *mut c_void, n: usize) {
            let c = &mut *(user as *mut Call<F>);
            let f = &mut c.f;
            let s: &mut [u8] = if n == 0 { &mut [] } else { std::slice::from_raw_parts_mut(bytes as *mut u8, n) };
            c.caught.run((), || f(s));
        }
        let mut call = Call { f, caught: Caught::default() };
        let st = unsafe { sys::rig_buffer_write(self.raw, Some(tramp::<F>), &mut call as *mut Call<F> as *mut c_void) };
        call.caught.resume();
        check(st)
    }

    /// Releases now and reports rig's answer (Drop ignores it).
    pub fn release(self) -> Result<()> {
        let raw = self.raw;
        let lender = unsafe { ptr::read(&self.lender) };
        std::mem::forget(self);
        let r = check(unsafe { sys::rig_buffer_release(raw) });
        drop(lender);
        r
    }

    /// A host pointer to the bytes, ordered only as of this call (rig.h, rig_buffer_export): reading or
    /// writing through it later follows no work, so doing so is the caller's `unsafe` promise.
    pub fn export(&self) -> Result<*mut u8> {
        let p = out_handle(|o| unsafe { sys::rig_buffer_export(self.raw, o) })?;
        Ok(p as *mut u8)
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        unsafe { sys::rig_buffer_release(self.raw) };
        // then self.lender drops: the last one waits for rig's release of the lent bytes
    }
}

// ---------------------------------------------------------------------------------------------------
// Submissions

/// One slot's bytes in a host kernel: cells, since two slots may share bytes; writable only where the
/// slot's access writes (a read slot may be read-only memory).
#[derive(Debug)]
pub struct Slot<'s> {
    cells: &'s [Cell<u8>],
    writable: bool,
}

impl<'s> Slot<'s> {
    pub fn len(&self) -> usize {
        self.cells.len()
    }
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }
    pub fn get(&self, i: usize) -> u8 {
        self.cells[i].get()
    }
    pub fn to_vec(&self) -> Vec<u8> {
        self.cells.iter().map(Cell::get).collect()
    }
    /// Panics on a slot that does not write.
    pub fn set(&self, i: usize, v: u8) {
        assert!(self.writable, "rig: a host kernel wrote a slot whose access is Read");
        self.cells[i].set(v)
    }
    /// Panics on a slot that does not write.
    pub fn copy_from(&self, src: &[u8]) {
        assert!(self.writable, "rig: a host kernel wrote a slot whose access is Read");
        for (c, v) in self.cells.iter().zip(src) {
            c.set(*v)
        }
    }
}

type KernelFn = dyn FnMut(&[Slot<'_>]) + Send;

struct Kernel {
    f: Mutex<Box<KernelFn>>,
    // (Debug below: a closure has none)
    writable: Vec<bool>,
    caught: Caught,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel").field("writable", &self.writable).finish_non_exhaustive()
    }
}

unsafe extern "C" fn kernel_tramp(user: *mut c_void, spans: *const sys::rig_span, n: usize) {
    let k = &*(user as *const Kernel);
    k.caught.run((), || {
        let spans: &[sys::rig_span] = if n == 0 { &[] } else { std::slice::from_raw_parts(spans, n) };
        let slots: Vec<Slot<'_>> = spans
            .iter()
            .enumerate()
            .map(|(i, s)| Slot {
                cells: if s.length == 0 { &[] } else { std::slice::from_raw_parts(s.data as *const Cell<u8>, s.length) },
                writable: k.writable.get(i).copied().unwrap_or(false),
            })
            .collect();
        let mut f = k.f.lock().unwrap_or_else(|e| e.into_inner());
        (*f)(&slots)
    });
}

/// Device code loaded on one device (rig keeps it while a submission uses it).
#[derive(Debug)]
pub struct Module {
    raw: sys::rig_module,
}

unsafe impl Send for Module {}
unsafe impl Sync for Module {}

/// rig_module_format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleFormat {
    Ptx = 1,
    Cubin = 2,
    SpirV = 3,
    HipCodeObject = 4,
}

impl Module {
    pub fn load(device: &Device, format: ModuleFormat, code: &[u8]) -> Result<Module> {
        let raw = out_handle(|o| unsafe {
            sys::rig_module_load(device.raw, format as u32, code.as_ptr() as *const c_void, code.len(), o)
        })?;
        Ok(Module { raw })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        unsafe { sys::rig_module_release(self.raw) };
    }
}

/// One piece of a submission's work.
///
/// ```
/// let p = librig::Part::copy(0, 1);
/// assert!(format!("{:?}", p).starts_with("Copy"));
/// ```
pub enum Part {
    /// `length` bytes (None: to the end of the source) from slot `src` to slot `dst`.
    Copy { src: u32, dst: u32, src_offset: usize, dst_offset: usize, length: Option<usize> },
    Fill { dst: u32, offset: usize, length: Option<usize>, byte: u8 },
    /// Runs on a memory device over every slot; a panic in it is resumed by the submit that ran it.
    HostKernel(Box<KernelFn>),
    /// `function` of `module` on grid x block threads; its parameters are the device addresses of
    /// `slots`, then the run's scalars.
    Launch { module: Arc<Module>, function: String, grid: [u32; 3], block: [u32; 3], shared_bytes: u32, slots: Vec<u32> },
}

impl fmt::Debug for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Part::Copy { src, dst, src_offset, dst_offset, length } => f
                .debug_struct("Copy")
                .field("src", src)
                .field("dst", dst)
                .field("src_offset", src_offset)
                .field("dst_offset", dst_offset)
                .field("length", length)
                .finish(),
            Part::Fill { dst, offset, length, byte } => {
                f.debug_struct("Fill").field("dst", dst).field("offset", offset).field("length", length).field("byte", byte).finish()
            }
            Part::HostKernel(_) => f.write_str("HostKernel(..)"),
            Part::Launch { module, function, grid, block, shared_bytes, slots } => f
                .debug_struct("Launch")
                .field("module", module)
                .field("function", function)
                .field("grid", grid)
                .field("block", block)
                .field("shared_bytes", shared_bytes)
                .field("slots", slots)
                .finish(),
        }
    }
}

impl Part {
    /// Copies all of slot `src` into slot `dst`.
    pub fn copy(src: u32, dst: u32) -> Part {
        Part::Copy { src, dst, src_offset: 0, dst_offset: 0, length: None }
    }
    pub fn host_kernel(f: impl FnMut(&[Slot<'_>]) + Send + 'static) -> Part {
        Part::HostKernel(Box::new(f))
    }
}

#[derive(Debug)]
struct SubmissionInner {
    raw: sys::rig_submission,
    // rig holds pointers to these: each is boxed so that its address stays put while the Vec grows, and
    // they live while a run can call them
    #[allow(clippy::vec_box)]
    kernels: Vec<Box<Kernel>>,
    _modules: Vec<Arc<Module>>,
}

unsafe impl Send for SubmissionInner {}
unsafe impl Sync for SubmissionInner {}

impl Drop for SubmissionInner {
    fn drop(&mut self) {
        unsafe { sys::rig_submission_release(self.raw) };
    }
}

/// The parts of some work for one device and the access of its slots.
#[derive(Debug)]
pub struct Submission(Arc<SubmissionInner>);

impl Submission {
    pub fn new(device: &Device, parts: Vec<Part>, access: &[Access]) -> Result<Submission> {
        let writable: Vec<bool> = access.iter().map(|a| (*a as u32) & 2 != 0).collect();
        let mut kernels = Vec::new();
        let mut names = Vec::new(); // launch strings and slot lists: rig copies them during make
        let mut slot_lists: Vec<Vec<u32>> = Vec::new();
        let mut modules = Vec::new();
        let mut raw_parts = Vec::with_capacity(parts.len());
        for p in parts {
            let mut r: sys::rig_part = unsafe { std::mem::zeroed() };
            r.size = std::mem::size_of::<sys::rig_part>();
            match p {
                Part::Copy { src, dst, src_offset, dst_offset, length } => {
                    r.kind = sys::rig_part_kind_RIG_PART_COPY;
                    r.src_slot = src;
                    r.dst_slot = dst;
                    r.src_offset = src_offset;
                    r.dst_offset = dst_offset;
                    r.length = length.unwrap_or(sys::RIG_WHOLE);
                }
                Part::Fill { dst, offset, length, byte } => {
                    r.kind = sys::rig_part_kind_RIG_PART_FILL;
                    r.dst_slot = dst;
                    r.dst_offset = offset;
                    r.length = length.unwrap_or(sys::RIG_WHOLE);
                    r.byte = byte;
                }
                Part::HostKernel(f) => {
                    let k = Box::new(Kernel { f: Mutex::new(f), writable: writable.clone(), caught: Caught::default() });
                    r.kind = sys::rig_part_kind_RIG_PART_HOST_KERNEL;
                    r.fn_ = Some(kernel_tramp);
                    r.user = &*k as *const Kernel as *mut c_void;
                    kernels.push(k);
                }
                Part::Launch { module, function, grid, block, shared_bytes, slots } => {
                    let name = cstring(&function)?;
                    r.kind = sys::rig_part_kind_RIG_PART_LAUNCH;
                    r.module = module.raw;
                    r.function = name.as_ptr();
                    r.grid = grid;
                    r.block = block;
                    r.shared_bytes = shared_bytes;
                    r.slots = slots.as_ptr();
                    r.slot_count = slots.len() as u32;
                    names.push(name);
                    slot_lists.push(slots);
                    modules.push(module);
                }
            }
            raw_parts.push(r);
        }
        let acc: Vec<sys::rig_access> = access.iter().map(|a| *a as u32).collect();
        let raw = out_handle(|o| unsafe {
            sys::rig_submission_make(device.raw, raw_parts.as_ptr(), raw_parts.len(), acc.as_ptr(), acc.len(), o)
        })?;
        drop((names, slot_lists));
        Ok(Submission(Arc::new(SubmissionInner { raw, kernels, _modules: modules })))
    }

    /// A run: a buffer table to fill, then submit any number of times.
    pub fn take<'a>(&self) -> Result<Run<'a>> {
        let raw = out_handle(|o| unsafe { sys::rig_run_take(self.0.raw, o) })?;
        Ok(Run { raw, submission: self.0.clone(), lenders: Vec::new(), _borrow: PhantomData })
    }
}

/// A submission taken with a buffer table. It holds what its buffers borrow for `'a`.
#[derive(Debug)]
pub struct Run<'a> {
    raw: sys::rig_run,
    submission: Arc<SubmissionInner>,
    lenders: Vec<Arc<Lender>>,
    _borrow: PhantomData<&'a mut [u8]>,
}

unsafe impl Send for Run<'_> {}

impl<'a> Run<'a> {
    pub fn set_buffer(&mut self, slot: u32, buffer: &Buffer<'a>) -> Result<()> {
        check(unsafe { sys::rig_run_set_buffer(self.raw, slot, buffer.raw) })?;
        if let Some(l) = &buffer.lender {
            self.lenders.push(l.clone());
        }
        Ok(())
    }
    pub fn set_scalars(&mut self, bytes: &[u8]) -> Result<()> {
        check(unsafe { sys::rig_run_set_scalars(self.raw, bytes.as_ptr() as *const c_void, bytes.len()) })
    }
    /// Submits after `waits` and returns the run's point.
    pub fn submit(&mut self, waits: &[Point]) -> Result<Point> {
        let mut point = 0;
        let waits: Vec<sys::rig_point> = waits.iter().map(|p| p.0).collect();
        let st = unsafe { sys::rig_submit(self.raw, waits.as_ptr(), waits.len(), &mut point) };
        for k in &self.submission.kernels {
            k.caught.resume();
        }
        check(st)?;
        Ok(Point(point))
    }
}

impl Drop for Run<'_> {
    fn drop(&mut self) {
        unsafe { sys::rig_run_release(self.raw) };
    }
}

/// Makes, takes and submits in one call; returns the point.
pub fn submit(device: &Device, parts: Vec<Part>, slots: &[(&Buffer<'_>, Access)]) -> Result<Point> {
    let access: Vec<Access> = slots.iter().map(|s| s.1).collect();
    let sub = Submission::new(device, parts, &access)?;
    let mut run = sub.take()?;
    for (i, (b, _)) in slots.iter().enumerate() {
        check(unsafe { sys::rig_run_set_buffer(run.raw, i as u32, b.raw) })?;
    }
    // the buffers outlive this call, so no borrow needs holding beyond it
    run.submit(&[])
}

// ---------------------------------------------------------------------------------------------------
// Verdicts

/// A verdict's kind (rig_verdict_kind); `Other` for kinds added after this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerdictKind {
    Usable,
    NotNeeded,
    Refused,
    TooSlow,
    Inconclusive,
    StillRegistered,
    Other(u32),
}

/// Why a verdict refuses (rig_refusal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    None,
    IntegratedGpu,
    DeviceKindUnknown,
    KernelHazard,
    NotMeasured,
    WrongBytes,
    Other(u32),
}

/// An answer of mapped registration, read whole when made.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub kind: VerdictKind,
    pub refusal: Refusal,
    pub reason: String,
    pub text: String,
    pub cacheable: bool,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn take_verdict(h: sys::rig_verdict) -> Result<Verdict> {
    struct Release(sys::rig_verdict);
    impl Drop for Release {
        fn drop(&mut self) {
            unsafe { sys::rig_verdict_release(self.0) };
        }
    }
    let _r = Release(h);
    let kind = out_handle(|o| unsafe { sys::rig_verdict_get_kind(h, o) })?;
    let refusal = out_handle(|o| unsafe { sys::rig_verdict_refusal(h, o) })?;
    let reason = out_handle(|o| unsafe { sys::rig_verdict_reason(h, o) })?;
    let text = out_handle(|o| unsafe { sys::rig_verdict_to_string(h, o) })?;
    let cacheable = out_handle(|o| unsafe { sys::rig_verdict_cacheable(h, o) })?;
    Ok(Verdict {
        kind: match kind {
            1 => VerdictKind::Usable,
            2 => VerdictKind::NotNeeded,
            3 => VerdictKind::Refused,
            4 => VerdictKind::TooSlow,
            5 => VerdictKind::Inconclusive,
            6 => VerdictKind::StillRegistered,
            k => VerdictKind::Other(k),
        },
        refusal: match refusal {
            0 => Refusal::None,
            1 => Refusal::IntegratedGpu,
            2 => Refusal::DeviceKindUnknown,
            3 => Refusal::KernelHazard,
            4 => Refusal::NotMeasured,
            5 => Refusal::WrongBytes,
            r => Refusal::Other(r),
        },
        reason: unsafe { owned_str(reason) },
        text: unsafe { owned_str(text) },
        cacheable: cacheable != 0,
    })
}

/// The static verdict, or None when the self-test is required.
pub fn static_verdict(device: &Device) -> Result<Option<Verdict>> {
    let h = out_handle(|o| unsafe { sys::rig_static_verdict(device.raw, o) })?;
    if h.is_null() {
        Ok(None)
    } else {
        take_verdict(h).map(Some)
    }
}

/// A question the static table asks of a device (rig_device_fact).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fact {
    /// Is it an integrated GPU (sharing the host's memory)?
    Integrated,
    /// Does its pageable-memory access go through the host's page tables?
    PageableUsesHostPageTables,
    /// A fact added after this crate.
    Other(u32),
}

/// The static table for a bare framework name (rig_static_verdict_for); `facts` answers its questions
/// (1 yes, 0 no, -1 could not be read; None: every fact unknown). None when the self-test is required.
pub fn static_verdict_for(framework: &str, kind: DeviceKind, facts: Option<&mut dyn FnMut(Fact) -> i32>) -> Result<Option<Verdict>> {
    struct Facts<'f> {
        f: &'f mut dyn FnMut(Fact) -> i32,
        caught: Caught,
    }
    unsafe extern "C" fn tramp(user: *mut c_void, fact: sys::rig_device_fact) -> i32 {
        let c = &mut *(user as *mut Facts<'_>);
        let f = &mut c.f;
        let fact = match fact {
            sys::rig_device_fact_RIG_FACT_INTEGRATED => Fact::Integrated,
            sys::rig_device_fact_RIG_FACT_PAGEABLE_USES_HOST_PAGE_TABLES => Fact::PageableUsesHostPageTables,
            other => Fact::Other(other),
        };
        c.caught.run(-1, || match f(fact) {
            a @ (0 | 1) => a,
            _ => -1,
        })
    }
    let name = cstring(framework)?;
    let mut out = ptr::null_mut();
    let st = match facts {
        Some(f) => {
            let mut call = Facts { f, caught: Caught::default() };
            let st = unsafe {
                sys::rig_static_verdict_for(name.as_ptr(), kind.to_raw(), Some(tramp), &mut call as *mut Facts<'_> as *mut c_void, &mut out)
            };
            call.caught.resume();
            st
        }
        None => unsafe { sys::rig_static_verdict_for(name.as_ptr(), kind.to_raw(), None, ptr::null_mut(), &mut out) },
    };
    check(st)?;
    if out.is_null() {
        Ok(None)
    } else {
        take_verdict(out).map(Some)
    }
}

/// Registers `host` with the device's driver through rig's range table.
///
/// # Safety
/// The bytes stay registered after this call: they must stay mapped until `host_unregister` succeeds
/// (and, where it fails, for the rest of the process).
pub unsafe fn host_register(device: &Device, host: &[u8], access: Access) -> Result<()> {
    check(sys::rig_host_register(device.raw, host.as_ptr() as *mut c_void, host.len(), access as u32))
}

/// Unregisters the range that starts at `host`.
pub fn host_unregister(device: &Device, host: &[u8]) -> Result<()> {
    check(unsafe { sys::rig_host_unregister(device.raw, host.as_ptr() as *mut c_void) })
}

/// Whether any registration overlaps `host`.
pub fn host_is_registered(host: &[u8]) -> Result<bool> {
    let r = out_handle(|o| unsafe { sys::rig_host_is_registered(host.as_ptr() as *const c_void, host.len(), o) })?;
    Ok(r != 0)
}

/// The ways the self-test talks to a device, written in Rust (a backend or a test's double). An `Err`
/// makes the verdict Inconclusive, except OUT_OF_MEMORY and INTERRUPTED, which the probe returns.
pub trait ProbeOps {
    fn register_host(&mut self, host: &[u8]) -> Result<()>;
    fn unregister_host(&mut self, host: &[u8]) -> Result<()>;
    /// Host memory for the staged copy (page-locked where the backend can).
    fn alloc_host(&mut self, length: usize) -> Result<Box<[u8]>> {
        Ok(vec![0u8; length].into_boxed_slice())
    }
    fn free_host(&mut self, host: Box<[u8]>) -> Result<()> {
        drop(host);
        Ok(())
    }
    /// Copies `host` to the device, then back into `into`.
    fn round_trip(&mut self, host: &[u8], into: &mut [u8]) -> Result<()>;
    /// The host-to-device half alone.
    fn upload(&mut self, host: &[u8]) -> Result<()>;
    /// A clock in ns for the probe; None (the default) lets rig use its own.
    fn now_ns(&mut self) -> Option<u64> {
        None
    }
}

/// The probe's options; the default is rig's.
#[derive(Default)]
pub struct ProbeOptions<'l> {
    pub min_relative_speed: f64,
    pub log: Option<&'l mut dyn FnMut(&str)>,
}

impl fmt::Debug for ProbeOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProbeOptions")
            .field("min_relative_speed", &self.min_relative_speed)
            .field("log", &self.log.as_ref().map(|_| "FnMut(&str)"))
            .finish()
    }
}

struct ProbeCall<'o, 'l> {
    ops: Option<&'o mut dyn ProbeOps>,
    log: Option<&'l mut dyn FnMut(&str)>,
    allocs: HashMap<usize, *mut [u8]>, // memory alloc_host gave, held as raw until free_host
    caught: Caught,
}

impl ProbeCall<'_, '_> {
    unsafe fn from<'x>(user: *mut c_void) -> &'x mut ProbeCall<'x, 'x> {
        &mut *(user as *mut ProbeCall<'x, 'x>)
    }
    fn status(&mut self, op: &str, r: Result<()>) -> sys::rig_status {
        match r {
            Ok(()) => sys::rig_status_RIG_OK,
            Err(e) => {
                if e.status != Status::OUT_OF_MEMORY && e.status != Status::INTERRUPTED {
                    if let Some(log) = self.log.as_mut() {
                        log(&format!("{} returned {}", op, e));
                    }
                }
                if e.status == Status::OK {
                    sys::rig_status_RIG_DRIVER
                } else {
                    e.status.0
                }
            }
        }
    }
}

unsafe fn bytes<'x>(p: *const c_void, n: usize) -> &'x [u8] {
    if n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p as *const u8, n)
    }
}

unsafe extern "C" fn op_register(user: *mut c_void, host: *mut c_void, n: usize) -> sys::rig_status {
    let c = ProbeCall::from(user);
    let r = c.caught.run(Err(Error::new(Status::DRIVER, "panicked")), || c.ops.as_mut().unwrap().register_host(bytes(host, n)));
    c.status("register_host", r)
}
unsafe extern "C" fn op_unregister(user: *mut c_void, host: *mut c_void, n: usize) -> sys::rig_status {
    let c = ProbeCall::from(user);
    let r = c.caught.run(Err(Error::new(Status::DRIVER, "panicked")), || c.ops.as_mut().unwrap().unregister_host(bytes(host, n)));
    c.status("unregister_host", r)
}
unsafe extern "C" fn op_alloc(user: *mut c_void, n: usize, host: *mut *mut c_void) -> sys::rig_status {
    let c = ProbeCall::from(user);
    let r = c.caught.run(Err(Error::new(Status::DRIVER, "panicked")), || {
        let mem = c.ops.as_mut().unwrap().alloc_host(n)?;
        if mem.len() < n {
            return Err(Error::new(Status::DRIVER, format!("alloc_host({}) gave {} bytes", n, mem.len())));
        }
        let raw = Box::into_raw(mem);
        let p = raw as *mut u8;
        c.allocs.insert(p as usize, raw);
        *host = p as *mut c_void;
        Ok(())
    });
    c.status("alloc_host", r)
}
unsafe extern "C" fn op_free(user: *mut c_void, host: *mut c_void, _n: usize) -> sys::rig_status {
    let c = ProbeCall::from(user);
    let r = c.caught.run(Err(Error::new(Status::DRIVER, "panicked")), || match c.allocs.remove(&(host as usize)) {
        Some(raw) => c.ops.as_mut().unwrap().free_host(Box::from_raw(raw)),
        None => Err(Error::new(Status::INVALID_ARGUMENT, "free_host of memory alloc_host did not give")),
    });
    c.status("free_host", r)
}
unsafe extern "C" fn op_round_trip(user: *mut c_void, host: *const c_void, into: *mut c_void, n: usize) -> sys::rig_status {
    let c = ProbeCall::from(user);
    let r = c.caught.run(Err(Error::new(Status::DRIVER, "panicked")), || {
        let into: &mut [u8] = if n == 0 { &mut [] } else { std::slice::from_raw_parts_mut(into as *mut u8, n) };
        c.ops.as_mut().unwrap().round_trip(bytes(host, n), into)
    });
    c.status("round_trip", r)
}
unsafe extern "C" fn op_upload(user: *mut c_void, host: *const c_void, n: usize) -> sys::rig_status {
    let c = ProbeCall::from(user);
    let r = c.caught.run(Err(Error::new(Status::DRIVER, "panicked")), || c.ops.as_mut().unwrap().upload(bytes(host, n)));
    c.status("upload", r)
}
unsafe extern "C" fn op_now(user: *mut c_void) -> u64 {
    let c = ProbeCall::from(user);
    c.caught.run(0, || c.ops.as_mut().unwrap().now_ns().unwrap_or(0))
}
unsafe extern "C" fn log_tramp(user: *mut c_void, message: *const c_char) {
    let c = ProbeCall::from(user);
    let m = owned_str(message);
    c.caught.run((), || {
        if let Some(log) = c.log.as_mut() {
            log(&m)
        }
    });
}

fn probe_options(call: &mut ProbeCall<'_, '_>, min_relative_speed: f64) -> sys::rig_probe_options {
    sys::rig_probe_options {
        size: std::mem::size_of::<sys::rig_probe_options>(),
        min_relative_speed,
        log: if call.log.is_some() { Some(log_tramp) } else { None },
        log_user: call as *mut ProbeCall<'_, '_> as *mut c_void,
    }
}

fn same_length(map: &[u8], reference: &[u8]) -> Result<()> {
    if map.len() != reference.len() {
        return Err(Error::new(Status::INVALID_ARGUMENT, "map and reference lengths differ"));
    }
    Ok(())
}

/// The self-test over ops written in Rust.
pub fn probe_with(ops: &mut dyn ProbeOps, map: &[u8], reference: &[u8], options: ProbeOptions<'_>) -> Result<Verdict> {
    same_length(map, reference)?;
    let clock = ops.now_ns().is_some();
    let mut call = ProbeCall { ops: Some(ops), log: options.log, allocs: HashMap::new(), caught: Caught::default() };
    let user = &mut call as *mut ProbeCall<'_, '_> as *mut c_void;
    let c_ops = sys::rig_probe_ops {
        size: std::mem::size_of::<sys::rig_probe_ops>(),
        user,
        register_host: Some(op_register),
        unregister_host: Some(op_unregister),
        alloc_host: Some(op_alloc),
        free_host: Some(op_free),
        round_trip: Some(op_round_trip),
        upload: Some(op_upload),
        now_ns: if clock { Some(op_now) } else { None },
    };
    let opts = probe_options(&mut call, options.min_relative_speed);
    let mut out = ptr::null_mut();
    let st = unsafe {
        sys::rig_probe_with(&c_ops, map.as_ptr() as *const c_void, reference.as_ptr() as *const c_void, map.len(), &opts, &mut out)
    };
    for (_, raw) in call.allocs.drain() {
        drop(unsafe { Box::from_raw(raw) }); // what the probe failed to free
    }
    call.caught.resume();
    check(st)?;
    take_verdict(out)
}

/// The capability on a rig device: the static verdict, then the self-test where it asks for one.
pub fn probe(device: &Device, map: &[u8], reference: &[u8], options: ProbeOptions<'_>) -> Result<Verdict> {
    same_length(map, reference)?;
    let mut call = ProbeCall { ops: None, log: options.log, allocs: HashMap::new(), caught: Caught::default() };
    let opts = probe_options(&mut call, options.min_relative_speed);
    let mut out = ptr::null_mut();
    let st = unsafe {
        sys::rig_probe(device.raw, map.as_ptr() as *const c_void, reference.as_ptr() as *const c_void, map.len(), &opts, &mut out)
    };
    call.caught.resume();
    check(st)?;
    take_verdict(out)
}

/// rig's run-time version, "MAJOR.MINOR.PATCH".
pub fn version() -> &'static str {
    unsafe { static_str(sys::rig_version_string()) }
}
