//! The Rust binding's test (meson: binding-rust): the seed's hello-world ordering program, rig's errors
//! as librig::Error with rig's message, callbacks written in Rust, and probe_with over Rust ops.
use std::time::{Duration, Instant};

use librig::{Access, Buffer, Device, Error, Memory, Part, ProbeOps, ProbeOptions, Refusal, Status, VerdictKind};

#[test]
fn hello_world() {
    let a = Device::memory("A").unwrap();
    let b = Device::memory("B").unwrap();
    let text = *b"hello, world";
    let src = Buffer::wrap(&text).unwrap(); // borrowed: `text` outlives every handle over it
    let x = Buffer::create(&a, 12, Memory::Device).unwrap();
    let y = Buffer::create(&b, 12, Memory::Device).unwrap();
    // A's copy writes x; B's copy reads x through a borrow, so it follows A's: no point is named.
    librig::submit(&a, vec![Part::copy(0, 1)], &[(&src.borrow_on(&a).unwrap(), Access::Read), (&x, Access::Write)]).unwrap();
    librig::submit(&b, vec![Part::copy(0, 1)], &[(&x.borrow_on(&b).unwrap(), Access::Read), (&y, Access::Write)]).unwrap();
    let out = y.to_vec().unwrap();
    println!("{}", String::from_utf8_lossy(&out));
    assert_eq!(&out, b"hello, world");
    assert_eq!((a.submitted().unwrap(), b.submitted().unwrap()), (1, 1));
}

#[test]
fn errors_carry_rigs_message() {
    let a = Device::memory("A").unwrap();
    let x = Buffer::create(&a, 12, Memory::Device).unwrap();
    let e = x.view(8, 8).expect_err("an out-of-range view fails");
    println!("out-of-range view: {}", e);
    assert_eq!(e.status, Status::INVALID_ARGUMENT);
    assert!(e.message.contains("leaves"), "{}", e.message);
    x.release().unwrap();
    // a released handle: the safe API cannot reach one (release consumes the Buffer), so through the
    // raw crate: rig itself answers, with a message
    let mut raw = std::ptr::null_mut();
    assert_eq!(unsafe { librig_sys::rig_memory_device(b"R\0".as_ptr() as *const _, &mut raw) }, 0);
    assert_eq!(unsafe { librig_sys::rig_device_release(raw) }, 0);
    let mut n = 0u64;
    let st = unsafe { librig_sys::rig_device_submitted(raw, &mut n) };
    assert_eq!(Status(st), Status::INVALID_HANDLE);
    let msg = unsafe { std::ffi::CStr::from_ptr(librig_sys::rig_last_error()) }.to_string_lossy().into_owned();
    println!("released buffer: {}", msg);
    assert!(!msg.is_empty());
    let e = Device::memory("").expect_err("an empty name fails");
    assert_eq!(e.status, Status::INVALID_ARGUMENT);
    let ro = Buffer::wrap(b"abcd").unwrap();
    assert_eq!(ro.write_from(0, b"z").unwrap_err().status, Status::INVALID_ARGUMENT);
}

#[test]
fn callbacks() {
    let a = Device::memory("A").unwrap();
    let buf = Buffer::create(&a, 8, Memory::Device).unwrap();
    buf.write(|b| b.copy_from_slice(b"ABCDEFGH")).unwrap();
    let mut seen = Vec::new();
    buf.read(|b| seen.extend_from_slice(b)).unwrap();
    assert_eq!(&seen, b"ABCDEFGH");
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| buf.read(|_| panic!("boom"))));
    assert!(r.is_err(), "a panic in a read callback is resumed by read");

    let mut lent = *b"abcdefgh";
    {
        let src = Buffer::wrap_mut(&mut lent).unwrap();
        let dst = Buffer::create(&a, 8, Memory::Device).unwrap();
        let upper = Part::host_kernel(|slots| {
            let up: Vec<u8> = slots[0].to_vec().to_ascii_uppercase();
            slots[1].copy_from(&up);
        });
        librig::submit(&a, vec![upper], &[(&src.borrow_on(&a).unwrap(), Access::Read), (&dst, Access::Write)]).unwrap();
        assert_eq!(dst.to_vec().unwrap(), b"ABCDEFGH");
        // rig's writes land in the lent bytes
        librig::submit(&a, vec![Part::copy(0, 1)], &[(&dst, Access::Read), (&src.borrow_on(&a).unwrap(), Access::Write)]).unwrap();
        let bad = Part::host_kernel(|slots| slots[0].set(0, 0));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            librig::submit(&a, vec![bad], &[(&src.borrow_on(&a).unwrap(), Access::Read)])
        }));
        assert!(r.is_err(), "a host kernel writing a read slot panics, resumed by submit");
    } // the last handle over `lent` drops here, after rig released it
    assert_eq!(&lent, b"ABCDEFGH");
}

/// A device double whose round trip returns one wrong byte.
struct Double {
    wrong: bool,
    refuse: bool,
    registered: i32,
}

impl ProbeOps for Double {
    fn register_host(&mut self, _: &[u8]) -> librig::Result<()> {
        if self.refuse {
            return Err(Error::new(Status::DRIVER, "driver said no"));
        }
        self.registered += 1;
        Ok(())
    }
    fn unregister_host(&mut self, _: &[u8]) -> librig::Result<()> {
        self.registered -= 1;
        Ok(())
    }
    fn round_trip(&mut self, host: &[u8], into: &mut [u8]) -> librig::Result<()> {
        into.copy_from_slice(host);
        if self.wrong {
            into[0] ^= 0xff;
        }
        Ok(())
    }
    fn upload(&mut self, _: &[u8]) -> librig::Result<()> {
        Ok(())
    }
}

/// Page-aligned bytes, as a file mapping is (the probe checks the map's alignment).
struct Aligned {
    ptr: *mut u8,
    len: usize,
    layout: std::alloc::Layout,
}
impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = std::alloc::Layout::from_size_align(len, 65536).unwrap();
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        Aligned { ptr, len, layout }
    }
    fn bytes(&mut self) -> &mut [u8] {
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}
impl Drop for Aligned {
    fn drop(&mut self) {
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

#[test]
fn probe_with_a_wrong_bytes_double() {
    let mut map = Aligned::new(256 << 10);
    let mut seed = 0x2545f4914f6cdd1du64; // xorshift: windows that differ, no crate needed
    for b in map.bytes().iter_mut() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        *b = seed as u8;
    }
    let reference = map.bytes().to_vec();
    let map = map.bytes();
    let mut lines = Vec::new();
    let mut log = |l: &str| lines.push(l.to_string());
    let mut ops = Double { wrong: true, refuse: false, registered: 0 };
    let v = librig::probe_with(&mut ops, map, &reference, ProbeOptions { min_relative_speed: 0.0, log: Some(&mut log) }).unwrap();
    println!("verdict: {}", v);
    assert_eq!((v.kind, v.refusal), (VerdictKind::Refused, Refusal::WrongBytes));
    assert!(v.cacheable);
    assert_eq!(ops.registered, 0, "the probe released what it registered");
    let v = librig::probe_with(&mut Double { wrong: false, refuse: false, registered: 0 }, map, &reference, ProbeOptions::default()).unwrap();
    assert_ne!(v.kind, VerdictKind::Refused, "{}", v);
    let mut lines = Vec::new();
    let mut log = |l: &str| lines.push(l.to_string());
    let v = librig::probe_with(&mut Double { wrong: false, refuse: true, registered: 0 }, map, &reference,
        ProbeOptions { min_relative_speed: 0.0, log: Some(&mut log) }).unwrap();
    assert_eq!(v.kind, VerdictKind::Inconclusive, "{}", v);
    assert!(lines.iter().any(|l| l.contains("driver said no")), "{:?}", lines);
    let e = librig::probe_with(&mut Double { wrong: true, refuse: false, registered: 0 }, map, &reference[1..], ProbeOptions::default()).unwrap_err();
    assert_eq!(e.status, Status::INVALID_ARGUMENT);
}

#[test]
fn the_rest_of_the_api() {
    let names = librig::device_list().unwrap();
    println!("devices rig can open here: {:?}", names);
    let mut asked = Vec::new();
    let mut facts = |f: librig::Fact| {
        asked.push(f);
        if f == librig::Fact::Integrated { 1 } else { 0 }
    };
    let v = librig::static_verdict_for("CUDA", librig::DeviceKind::Gpu, Some(&mut facts)).unwrap().unwrap();
    assert_eq!((v.kind, v.refusal), (VerdictKind::Refused, Refusal::IntegratedGpu), "{}", v);
    assert!(!asked.is_empty(), "the table asked its fact");
    let v = librig::static_verdict_for("Vulkan", librig::DeviceKind::Gpu, None).unwrap().unwrap();
    assert_eq!(v.refusal, Refusal::KernelHazard);
    let a = Device::memory("A").unwrap();
    assert_eq!(a.info().unwrap().name, "A");
    assert_eq!(a.lost_reason().unwrap(), None);
    let x = Buffer::create(&a, 4, Memory::Device).unwrap();
    librig::submit(&a, vec![Part::Fill { dst: 0, offset: 0, length: None, byte: 7 }], &[(&x, Access::Write)]).unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![7; 4]);
    let p = a.point(1).unwrap();
    assert_eq!((p.device_index() != 0, p.value()), (true, 1), "{}", p);
    librig::wait_point(p, None).unwrap();
    librig::wait_point(librig::Point::NONE, Some(Duration::ZERO)).unwrap();
    let e = librig::Module::load(&a, librig::ModuleFormat::Ptx, b"// no code").expect_err("memory devices load no module");
    println!("module on a memory device: {}", e);
    assert_eq!(e.status, Status::UNSUPPORTED);
    // librig exports no hook to lose a device (rig_testing.h is for rig's own tests): a live one has no reason.
    assert_eq!(a.lost_reason().unwrap().as_deref(), None);
}

/// Waits with a Duration time out: a copy on the CUDA double (RIG_CUDA_LIBRARY, a fake libcuda whose
/// stream sleeps FAKECUDA_COPY_DELAY_US before a copy; meson's binding-rust sets both) stays unreached
/// for a while. Memory devices run their work inline, so no wait on one can time out.
#[test]
fn waits_time_out_after_their_duration() {
    if std::env::var_os("RIG_CUDA_LIBRARY").is_none() || std::env::var_os("FAKECUDA_COPY_DELAY_US").is_none() {
        println!("SKIP: no CUDA double with a copy delay (RIG_CUDA_LIBRARY, FAKECUDA_COPY_DELAY_US) to time out on");
        return;
    }
    let d = Device::open("cuda:0").unwrap();
    let x = Buffer::create(&d, 4096, Memory::Device).unwrap();
    let y = Buffer::create(&d, 4096, Memory::Device).unwrap();
    let p = librig::submit(&d, vec![Part::copy(0, 1)], &[(&x, Access::Read), (&y, Access::Write)]).unwrap();
    let start = Instant::now();
    let e = d.wait(p.value(), Some(Duration::from_millis(20))).unwrap_err();
    assert_eq!(e.status, Status::TIMEOUT, "{}", e);
    assert!(start.elapsed() >= Duration::from_millis(20), "timed out after {:?}", start.elapsed());
    println!("a held copy, waited 20ms: {}", e);
    assert_eq!(librig::wait_point(p, Some(Duration::ZERO)).unwrap_err().status, Status::TIMEOUT);
    librig::wait_point(p, None).unwrap();
    d.wait(p.value(), Some(Duration::ZERO)).unwrap();
}
