//! A program using the packaged librig crate against an installed librig. Prints "hello, world", copied
//! by rig and then loaded back by rig's loader from a safetensors file the program writes.
use librig::{Access, Buffer, Device, LoadFile, Memory, Part, Rule};
use std::time::Duration;

/// Writes `text` as the one U8 tensor of a safetensors file, loads it onto `d`: (dtype, shape, bytes).
fn load_back(d: &Device, text: &[u8]) -> Result<(librig::Dtype, Vec<u64>, Vec<u8>), librig::Error> {
    let header = format!("{{\"text\":{{\"dtype\":\"U8\",\"shape\":[{n}],\"data_offsets\":[0,{n}]}}}}", n = text.len());
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(text);
    let path = std::env::temp_dir().join(format!("rig-hello-{}.safetensors", std::process::id()));
    std::fs::write(&path, file).map_err(|e| librig::Error::new(librig::Status::DRIVER, e.to_string()))?;
    let loaded = (|| {
        let f = LoadFile::open(&path)?;
        let t = f.tensor(0)?;
        let load = f.load(&[d], Rule::Each)?;
        load.wait()?;
        Ok((t.dtype, t.shape, load.buffer(0, 0)?.to_vec()?))
    })();
    let _ = std::fs::remove_file(&path);
    loaded
}

fn main() -> Result<(), librig::Error> {
    let text = b"hello, world";
    let a = Device::memory("A")?;
    let src = Buffer::wrap(text)?;
    let x = Buffer::create(&a, text.len(), Memory::Device)?;
    let p = librig::submit(&a, vec![Part::copy(0, 1)], &[(&src.borrow_on(&a)?, Access::Read), (&x, Access::Write)])?;
    librig::wait_point(p, Some(Duration::from_secs(1)))?;
    let (dtype, shape, loaded) = load_back(&a, &x.to_vec()?)?;
    println!("{} (rig {}, Rust; loaded as {:?} {:?})", String::from_utf8_lossy(&loaded), librig::version(), dtype, shape);
    Ok(())
}
