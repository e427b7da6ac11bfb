//! A program using the packaged librig crate against an installed librig. Prints "hello, world".
use librig::{Access, Buffer, Device, Memory, Part};
use std::time::Duration;

fn main() -> Result<(), librig::Error> {
    let text = b"hello, world";
    let a = Device::memory("A")?;
    let src = Buffer::wrap(text)?;
    let x = Buffer::create(&a, text.len(), Memory::Device)?;
    let p = librig::submit(&a, vec![Part::copy(0, 1)], &[(&src.borrow_on(&a)?, Access::Read), (&x, Access::Write)])?;
    librig::wait_point(p, Some(Duration::from_secs(1)))?;
    println!("{} (rig {}, Rust)", String::from_utf8_lossy(&x.to_vec()?), librig::version());
    Ok(())
}
