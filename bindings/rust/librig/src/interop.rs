//! Interop (rig_interop.h) where Rust programs use it: points as file descriptors (eventfd, sync file,
//! timeline semaphore) for event loops and Vulkan, and native device pointers as buffers.
use super::*;
use std::os::unix::io::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// What interop a device offers (rig_interop_kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interop {
    DevicePointer,
    HostFd,
    SemaphoreFd,
    SyncFd,
}

impl Device {
    /// Whether `kind` works for this device (decided by the device alone). Pure read.
    pub fn supports(&self, kind: Interop) -> Result<bool> {
        let k = match kind {
            Interop::DevicePointer => sys::rig_interop_kind_RIG_INTEROP_DEVICE_POINTER,
            Interop::HostFd => sys::rig_interop_kind_RIG_INTEROP_HOST_FD,
            Interop::SemaphoreFd => sys::rig_interop_kind_RIG_INTEROP_SEMAPHORE_FD,
            Interop::SyncFd => sys::rig_interop_kind_RIG_INTEROP_SYNC_FD,
        };
        Ok(out_handle(|o| unsafe { sys::rig_interop_supported(self.raw, ptr::null_mut(), k, o) })? != 0)
    }

    /// A new point of this device that follows sync file `fd` (`None`: one already signaled). The fd stays
    /// the caller's. Never blocks the host.
    pub fn import_sync_fd(&self, fd: Option<BorrowedFd<'_>>) -> Result<Point> {
        let raw = fd.map_or(-1, |f| f.as_raw_fd());
        out_handle(|o| unsafe { sys::rig_point_import_sync_fd(self.raw, raw, o) }).map(Point)
    }

    /// A new point of this device that follows the timeline semaphore of `fd` reaching `value`. The fd
    /// stays the caller's. Never blocks the host.
    pub fn import_semaphore_fd(&self, fd: BorrowedFd<'_>, value: u64) -> Result<Point> {
        out_handle(|o| unsafe { sys::rig_point_import_semaphore_fd(self.raw, fd.as_raw_fd(), value, o) }).map(Point)
    }
}

impl Point {
    /// A new eventfd that becomes readable once the point is reached (or can never be): for poll, epoll
    /// and io_uring. Waits for nothing (a thread of rig's waits where the point is not yet reached).
    pub fn fd(self) -> Result<OwnedFd> {
        let fd = out_handle(|o| unsafe { sys::rig_point_fd(self.0, o) })?;
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// A new sync file that signals once the point is reached (`None` where it already is: Vulkan's
    /// convention). Commits the point; waits for nothing else. `UNSUPPORTED` off Vulkan.
    pub fn export_sync_fd(self) -> Result<Option<OwnedFd>> {
        let fd = out_handle(|o| unsafe { sys::rig_point_export_sync_fd(self.0, o) })?;
        Ok(if fd < 0 { None } else { Some(unsafe { OwnedFd::from_raw_fd(fd) }) })
    }

    /// The timeline semaphore of the point's device as a new descriptor, and the value that covers the
    /// point. Commits the point; waits for nothing else. `UNSUPPORTED` off Vulkan.
    pub fn export_semaphore_fd(self) -> Result<(OwnedFd, u64)> {
        let mut value = 0u64;
        let fd = out_handle(|o| unsafe { sys::rig_point_export_semaphore_fd(self.0, o, &mut value) })?;
        Ok((unsafe { OwnedFd::from_raw_fd(fd) }, value))
    }
}

struct Release(Box<dyn FnOnce() + Send>);

unsafe extern "C" fn run_release(user: *mut c_void) {
    let release = Box::from_raw(user as *mut Release);
    // rig's thread is no place to unwind: a panicking release is caught here and dropped
    let _ = panic::catch_unwind(AssertUnwindSafe(move || (release.0)()));
}

impl Buffer<'static> {
    /// A buffer of `device` over `length` bytes of its memory at `address` (a CUdeviceptr, a HIP pointer;
    /// host memory for a memory device). `release` runs once the last buffer over it is released and
    /// every use of it is reached. Waits for nothing.
    ///
    /// # Safety
    /// The memory must be `device`'s and stay valid until `release` runs; rig cannot check either.
    pub unsafe fn wrap_device(device: &Device, address: u64, length: usize, release: impl FnOnce() + Send + 'static) -> Result<Buffer<'static>> {
        let user = Box::into_raw(Box::new(Release(Box::new(release)))) as *mut c_void;
        let mut out = ptr::null_mut();
        let st = sys::rig_buffer_wrap_device(device.raw, address, length, Some(run_release), user, &mut out);
        if let Err(e) = check(st) {
            drop(Box::from_raw(user as *mut Release)); // rig calls no release for a wrap that failed
            return Err(e);
        }
        Ok(Buffer::made(out, None))
    }
}

impl Buffer<'_> {
    /// The device address of the first byte as the device's work sees it (host address for memory
    /// devices). Ordered by nothing. `UNSUPPORTED` for Vulkan. Pure read.
    pub fn device_address(&self) -> Result<u64> {
        out_handle(|o| unsafe { sys::rig_buffer_device_address(self.raw, o) })
    }

    /// The allocation's last write as a point (`Point::NONE` if none): what a consumer outside rig
    /// follows. Pure read.
    pub fn last_write(&self) -> Result<Point> {
        out_handle(|o| unsafe { sys::rig_buffer_last_write(self.raw, o) }).map(Point)
    }
}
